// ScratchArena (arena.h): the plans' scratch block in a reserved address range, grown in place
// and pre-faulted, in huge pages where the kernel offers them; on the heap under sanitizers.
#include "cc/runtime/arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace shp {
namespace runtime {

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
