// The memory planner: every value a step writes gets storage; an output's root is computed
// in place in the caller's output; other buffers share one arena by liveness (first write to
// last read), at 64-byte aligned offsets: placed first-fit in step order, or in registers
// (AssignRegisters) when that layout is smaller, so the arena never exceeds the registers'
// total, which is what the symbolic peak-memory cost computes.
//
// The arena's memory (ScratchArena, arena.h) is at the end of this file.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cc/ops/steps.h"
#include "cc/runtime/arena.h"
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
  for (const auto& s : steps) written[static_cast<size_t>(s->out)] = true;
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
    size_t o = static_cast<size_t>(root(steps[i]->out));
    if (first[o] < 0) first[o] = static_cast<int64_t>(i);
    last[o] = std::max(last[o], static_cast<int64_t>(i));
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
  // The arena buffers in order of first write (each step writes one slot, so births differ).
  arena_buffers.clear();
  for (size_t i = 0; i < steps.size(); ++i) {
    size_t o = static_cast<size_t>(root(steps[i]->out));
    if (loc[o].kind == SlotLoc::kArena && first[o] == static_cast<int64_t>(i))
      arena_buffers.push_back(ArenaBuffer{static_cast<int32_t>(o), first[o], last[o]});
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

// ---- ScratchArena ----

// The sanitizers watch heap blocks: there the arena stays on the heap.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SHP_ARENA_ON_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SHP_ARENA_ON_HEAP 1
#endif
#endif
#ifndef SHP_ARENA_ON_HEAP
#define SHP_ARENA_ON_HEAP 0
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it (EINVAL) and fault lazily
#endif

namespace {

// Address space (not memory) held by an arena for growth in place: a growth then costs one
// mprotect instead of a mremap that moves the block (~3 us against ~8 us here), and the
// kernel charges only what is committed.
constexpr size_t kMinReservedBytes = size_t{64} << 20;

size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t RoundUp(size_t x, size_t m) { return (x + m - 1) / m * m; }

// A PROT_NONE range of `len` bytes starting at a multiple of `align` (a power of two, or 0 for
// page alignment), advised for huge pages when aligned to them; null if refused.
uint8_t* MapRange(size_t len, size_t align) {
  const size_t extra = align > PageBytes() ? align : 0;
  void* m =
      mmap(nullptr, len + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  uint8_t* p = static_cast<uint8_t*>(m);
  if (extra == 0) return p;
  uint8_t* a = reinterpret_cast<uint8_t*>(RoundUp(reinterpret_cast<uintptr_t>(p), align));
  if (a > p) munmap(p, static_cast<size_t>(a - p));
  uint8_t* end = p + len + extra;
  if (end > a + len) munmap(a + len, static_cast<size_t>(end - (a + len)));
  madvise(a, len, MADV_HUGEPAGE);  // best effort: small pages otherwise
  return a;
}

}  // namespace

size_t ScratchArena::HugePageBytes() {
  static const size_t bytes = [] {
    // e.g. "always [madvise] never": advised memory gets huge pages unless "[never]".
    char mode[128] = {0};
    FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == nullptr) return size_t{0};
    const size_t n = std::fread(mode, 1, sizeof mode - 1, f);
    std::fclose(f);
    mode[n] = '\0';
    if (std::strstr(mode, "[always]") == nullptr && std::strstr(mode, "[madvise]") == nullptr)
      return size_t{0};
    unsigned long long huge = 0;
    f = std::fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    if (f == nullptr) return size_t{0};
    if (std::fscanf(f, "%llu", &huge) != 1) huge = 0;
    std::fclose(f);
    const size_t page = PageBytes();
    // A power of two, a multiple of the page size; larger ones (512 MiB on some arm64 kernels)
    // would hold far more than an arena needs.
    if (huge < page || (huge & (huge - 1)) != 0 || huge > (size_t{1} << 30)) return size_t{0};
    return static_cast<size_t>(huge);
  }();
  return bytes;
}

ScratchArena::~ScratchArena() {
  if (base_ == nullptr) return;
  if (SHP_ARENA_ON_HEAP) {
    std::free(base_);
  } else {
    munmap(base_, reserved_);
  }
}

uint8_t* ScratchArena::Grow(size_t bytes) {
  if (bytes > (SIZE_MAX >> 2)) throw std::bad_alloc();  // (no rounding below overflows)
  if (SHP_ARENA_ON_HEAP) {
    const size_t size = std::max<size_t>(64, RoundUp(bytes, 64));
    void* mem = std::aligned_alloc(64, size);
    if (mem == nullptr) throw std::bad_alloc();
    std::free(base_);
    base_ = static_cast<uint8_t*>(mem);
    size_ = reserved_ = size;
    return base_;
  }
  size_t need = std::max(PageBytes(), RoundUp(bytes, PageBytes()));
  // Large blocks in whole huge pages (at most twice the bytes needed).
  const size_t huge = HugePageBytes();
  const bool in_huge = huge != 0 && need >= std::max(kHugeBlockBytes, huge / 2);
  if (in_huge) need = RoundUp(need, huge);
  // A new range when the reserved one is too small, or when a block to be held in huge pages
  // has small pages in its last huge page's span (the kernel does not merge them on a fault).
  const bool new_range = base_ == nullptr || need > reserved_ || (in_huge && size_ % huge != 0);
  uint8_t* base = base_;
  size_t reserved = reserved_, size = size_;
  if (new_range) {
    reserved = RoundUp(std::max(kMinReservedBytes, 2 * need), huge != 0 ? huge : PageBytes());
    base = MapRange(reserved, huge);
    if (base == nullptr) {  // e.g. a limit on address space: only what is needed
      reserved = need;
      base = MapRange(reserved, huge);
      if (base == nullptr) throw std::bad_alloc();
    }
    size = 0;
  }
  // Commit [size, need): readable and writable, then its pages faulted in by one call.
  if (mprotect(base + size, need - size, PROT_READ | PROT_WRITE) != 0) {
    if (new_range) munmap(base, reserved);  // the old block stays valid
    throw std::bad_alloc();
  }
  madvise(base + size, need - size, MADV_POPULATE_WRITE);  // best effort: faults lazily otherwise
  if (new_range && base_ != nullptr) munmap(base_, reserved_);
  base_ = base;
  reserved_ = reserved;
  size_ = need;
  return base_;
}

}  // namespace runtime
}  // namespace shp
