// The memory planner: every value a step writes gets storage; an output's root is computed
// in place in the caller's output; other buffers share one arena by liveness (first write to
// last read), at 64-byte aligned offsets: placed first-fit in step order, or in registers
// (AssignRegisters) when that layout is smaller, so the arena never exceeds the registers'
// total, which is what the symbolic peak-memory cost computes.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cc/ops/steps.h"
#include "cc/runtime/plan.h"

namespace shp {
namespace runtime {

using PB = ops::PlanBuilder;

namespace {
int64_t AlignedBytes(int64_t bytes) { return PB::Mul(PB::Add(bytes, 63) / 64, 64); }
}  // namespace

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
  for (const auto& s : steps) {
    written[static_cast<size_t>(s->out)] = true;
    for (int32_t o : s->more_out) written[static_cast<size_t>(o)] = true;
  }
  for (size_t v = g.num_inputs; v < g.num_values; ++v) {
    if (written[v] && loc[v].kind == SlotLoc::kNone) loc[v].kind = SlotLoc::kArena;
  }
  std::vector<bool> taken(loc.size(), false);
  // Only the last stage (or a whole plan) writes the outputs; earlier stages keep theirs live.
  const bool writes_outputs = stage_ < 0 || static_cast<size_t>(stage_) + 1 == g.num_stages();
  for (size_t j = 0; writes_outputs && j < p.outputs().size(); ++j) {
    int32_t v = p.outputs()[j].value;
    output_values.push_back(static_cast<size_t>(v));
    int32_t r = root(v);
    size_t ru = static_cast<size_t>(r);
    if (loc[ru].kind == SlotLoc::kArena && static_cast<size_t>(r) < g.num_values && !taken[ru]) {
      taken[ru] = true;
      loc[ru] = SlotLoc{SlotLoc::kOutput, static_cast<int64_t>(j), nullptr};
      continue;
    }
    int32_t dst = NewTempLike(v);
    loc[static_cast<size_t>(dst)] = SlotLoc{SlotLoc::kOutput, static_cast<int64_t>(j), nullptr};
    ops::CopyStep& s = AddStep<ops::CopyStep>(p.value_type(v).dtype, {v}, dst);
    s.bytes = slot_bytes[static_cast<size_t>(v)];
  }
  // Liveness: first write and last read of each arena root.
  std::vector<int64_t> first(loc.size(), -1), last(loc.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    auto wrote = [&](int32_t slot) {
      size_t o = static_cast<size_t>(root(slot));
      if (first[o] < 0) first[o] = static_cast<int64_t>(i);
      last[o] = std::max(last[o], static_cast<int64_t>(i));
    };
    wrote(steps[i]->out);
    for (int32_t o : steps[i]->more_out) wrote(o);
    for (int32_t in : steps[i]->in) {
      size_t r = static_cast<size_t>(root(in));
      last[r] = std::max(last[r], static_cast<int64_t>(i));
    }
  }
  // A staged plan: values that later stages read (or outputs, before the last stage) live to
  // the end of this stage.
  if (stage_ >= 0) {
    const int64_t end = static_cast<int64_t>(steps.size());
    for (size_t v = g.num_inputs; v < end_value_; ++v) {
      // (In the last stage no later stage reads anything, and outputs are written in place.)
      if (g.last_use_stage[v] <= stage_ || writes_outputs) continue;
      const size_t r = static_cast<size_t>(root(static_cast<int32_t>(v)));
      if (first[r] >= 0) last[r] = end;
    }
  }
  // The arena buffers in order of first write (a control-flow step writes several slots).
  arena_buffers.clear();
  for (size_t i = 0; i < steps.size(); ++i) {
    auto born = [&](int32_t slot) {
      size_t o = static_cast<size_t>(root(slot));
      if (loc[o].kind == SlotLoc::kArena && first[o] == static_cast<int64_t>(i))
        arena_buffers.push_back(ArenaBuffer{static_cast<int32_t>(o), first[o], last[o]});
    };
    born(steps[i]->out);
    for (int32_t o : steps[i]->more_out) born(o);
  }
  // 1. Greedy first-fit offsets over the live buffers, in step order.
  struct Live {
    int64_t off, size;
    size_t slot;
  };
  std::vector<Live> live;  // sorted by offset
  std::vector<int64_t> first_fit(arena_buffers.size());
  int64_t top = 0;
  for (size_t k = 0; k < arena_buffers.size(); ++k) {
    const ArenaBuffer& b = arena_buffers[k];
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](const Live& l) { return last[l.slot] < b.first; }),
               live.end());
    int64_t size = AlignedBytes(slot_bytes[static_cast<size_t>(b.slot)]);
    int64_t off = 0;
    size_t pos = 0;
    for (; pos < live.size(); ++pos) {
      if (live[pos].off - off >= size) break;
      off = live[pos].off + live[pos].size;
    }
    live.insert(live.begin() + static_cast<std::ptrdiff_t>(pos),
                Live{off, size, static_cast<size_t>(b.slot)});
    first_fit[k] = off;
    top = std::max(top, off + size);
  }
  // 2. Registers: buffers share a region when their lives do not overlap; the arena is the sum
  // of the regions' largest buffers. This layout depends on the shapes only through the sizes,
  // so the symbolic peak-memory cost (cost.cc) is its formula: the arena never exceeds it.
  arena_register = AssignRegisters(arena_buffers);
  std::vector<int64_t> region(arena_buffers.empty()
                                  ? 0
                                  : 1 + static_cast<size_t>(*std::max_element(
                                            arena_register.begin(), arena_register.end())),
                              0);
  for (size_t k = 0; k < arena_buffers.size(); ++k) {
    int64_t& r = region[static_cast<size_t>(arena_register[k])];
    r = std::max(r, AlignedBytes(slot_bytes[static_cast<size_t>(arena_buffers[k].slot)]));
  }
  std::vector<int64_t> region_off(region.size(), 0);
  int64_t regions_total = 0;
  for (size_t r = 0; r < region.size(); ++r) {
    region_off[r] = regions_total;
    regions_total = PB::Add(regions_total, region[r]);
  }
  // The smaller layout wins (first-fit usually).
  const bool use_regions = regions_total < top;
  for (size_t k = 0; k < arena_buffers.size(); ++k) {
    loc[static_cast<size_t>(arena_buffers[k].slot)].index =
        use_regions ? region_off[static_cast<size_t>(arena_register[k])] : first_fit[k];
  }
  arena_bytes = static_cast<size_t>(use_regions ? regions_total : top);
}

std::vector<int32_t> AssignRegisters(const std::vector<ArenaBuffer>& buffers) {
  std::vector<int32_t> reg(buffers.size());
  std::vector<int64_t> busy_until;  // per register: the last step of its latest buffer
  for (size_t k = 0; k < buffers.size(); ++k) {
    size_t r = 0;
    while (r < busy_until.size() && busy_until[r] >= buffers[k].first) ++r;
    if (r == busy_until.size()) busy_until.push_back(0);
    busy_until[r] = buffers[k].last;
    reg[k] = static_cast<int32_t>(r);
  }
  return reg;
}

}  // namespace runtime
}  // namespace shp
