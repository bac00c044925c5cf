// The memory planner: every value a step writes gets storage; an output's root is computed
// in place in the caller's output; other buffers share one arena by liveness (first write to
// last read), placed first-fit at 64-byte aligned offsets in step order.
#include <algorithm>

#include "cc/ops/steps.h"
#include "cc/runtime/plan.h"

namespace shp {
namespace runtime {

void Plan::AssignStorage() {
  const Graph& g = g_;
  const program::Program& p = g.p;
  // The slot whose storage each slot uses: aliases (views) point to earlier slots, so one pass
  // resolves chains of any length. Slots added below (output copies) are never aliases.
  std::vector<int32_t> alias_root(loc.size());
  for (size_t s = 0; s < loc.size(); ++s) {
    alias_root[s] = loc[s].kind == SlotLoc::kAlias ? alias_root[static_cast<size_t>(loc[s].index)]
                                                   : static_cast<int32_t>(s);
  }
  auto root = [&](int32_t s) {
    return static_cast<size_t>(s) < alias_root.size() ? alias_root[static_cast<size_t>(s)] : s;
  };
  // Values written by a step get storage; an output's root is computed in place in the output.
  std::vector<bool> written(loc.size(), false);
  for (const auto& s : steps) written[static_cast<size_t>(s->out)] = true;
  for (size_t v = g.num_inputs; v < g.num_values; ++v) {
    if (written[v] && loc[v].kind == SlotLoc::kNone) loc[v].kind = SlotLoc::kArena;
  }
  std::vector<bool> taken(loc.size(), false);
  for (size_t j = 0; j < p.outputs().size(); ++j) {
    int32_t v = p.outputs()[j].value;
    output_values.push_back(static_cast<size_t>(v));
    int32_t r = root(v);
    size_t ru = static_cast<size_t>(r);
    if (loc[ru].kind == SlotLoc::kArena && static_cast<size_t>(r) < g.num_values && !taken[ru]) {
      taken[ru] = true;
      loc[ru] = SlotLoc{SlotLoc::kOutput, static_cast<int64_t>(j), nullptr};
      continue;
    }
    int32_t dst = NewTemp(slot_bytes[static_cast<size_t>(v)]);
    loc[static_cast<size_t>(dst)] = SlotLoc{SlotLoc::kOutput, static_cast<int64_t>(j), nullptr};
    ops::CopyStep& s = AddStep<ops::CopyStep>(p.value_type(v).dtype, {v}, dst);
    s.bytes = slot_bytes[static_cast<size_t>(v)];
  }
  // Liveness: first write and last read of each arena root.
  std::vector<int64_t> first(loc.size(), -1), last(loc.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    size_t o = static_cast<size_t>(root(steps[i]->out));
    if (first[o] < 0) first[o] = static_cast<int64_t>(i);
    last[o] = std::max(last[o], static_cast<int64_t>(i));
    for (int32_t in : steps[i]->in) {
      size_t r = static_cast<size_t>(root(in));
      last[r] = std::max(last[r], static_cast<int64_t>(i));
    }
  }
  // Greedy first-fit offsets (64-byte aligned) over the live buffers, in step order.
  struct Live {
    int64_t off, size;
    size_t slot;
  };
  std::vector<Live> live;  // sorted by offset
  int64_t top = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    size_t o = static_cast<size_t>(root(steps[i]->out));
    if (loc[o].kind == SlotLoc::kArena && first[o] == static_cast<int64_t>(i)) {
      int64_t size = (slot_bytes[o] + 63) / 64 * 64;
      int64_t off = 0;
      size_t pos = 0;
      for (; pos < live.size(); ++pos) {
        if (live[pos].off - off >= size) break;
        off = live[pos].off + live[pos].size;
      }
      live.insert(live.begin() + static_cast<std::ptrdiff_t>(pos), Live{off, size, o});
      loc[o].index = off;
      top = std::max(top, off + size);
    }
    live.erase(
        std::remove_if(live.begin(), live.end(),
                       [&](const Live& l) { return last[l.slot] <= static_cast<int64_t>(i); }),
        live.end());
  }
  arena_bytes = static_cast<size_t>(top);
}

}  // namespace runtime
}  // namespace shp
