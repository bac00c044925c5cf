// Internal to cc/runtime: the scratch memory the plans' arena buffers live in (memory.cc).
#ifndef SHAPEPOLY_CC_RUNTIME_ARENA_H_
#define SHAPEPOLY_CC_RUNTIME_ARENA_H_

#include <cstddef>
#include <cstdint>

namespace shp {
namespace runtime {

// One block, grown to the largest plan's arena and never shrunk, so a runtime's plans of every
// shape share it. Its pages are faulted in when it grows (not one fault per page during the
// first run on a larger shape). Its contents are not kept across a growth: a run writes every
// arena buffer before reading it.
//
// Without a sanitizer the block sits at the start of a larger reserved address range, so a
// growth only commits and faults in the new pages (no copy, no move); blocks of
// kHugeBlockBytes and more are committed in whole transparent huge pages where the kernel
// offers them (one fault per 2 MiB instead of 512). With a sanitizer it is a heap block (the
// sanitizers watch heap blocks).
class ScratchArena final {
 public:
  // From this size on, a block is committed in whole huge pages (at most 2x its size: the
  // last huge page may be mostly unused).
  static constexpr size_t kHugeBlockBytes = size_t{1} << 20;

  ScratchArena() = default;
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;
  ~ScratchArena();

  // At least `bytes` bytes, 64-byte aligned, their pages faulted in; the same block as before
  // when it is large enough. Throws std::bad_alloc (the old block then stays valid).
  uint8_t* Reserve(size_t bytes) { return bytes <= size_ && base_ ? base_ : Grow(bytes); }

  // The usable bytes of the current block (0 before the first Reserve).
  size_t size() const { return size_; }
  // The address space held for growth in place (size() with a sanitizer).
  size_t reserved() const { return reserved_; }

  // The transparent huge page size when the kernel offers such pages for advised memory
  // (enabled "always" or "madvise"), else 0. Read once.
  static size_t HugePageBytes();

 private:
  uint8_t* Grow(size_t bytes);

  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  size_t reserved_ = 0;
};

}  // namespace runtime
}  // namespace shp

#endif  // SHAPEPOLY_CC_RUNTIME_ARENA_H_
