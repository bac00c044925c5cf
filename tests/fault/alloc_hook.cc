// See alloc_hook.h. Every replacement counts once and then calls the real allocator directly
// (never another replaced function), so each allocation is counted exactly once.
#include "tests/fault/alloc_hook.h"

#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <stddef.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

// SHP_FAULT_SANITIZED: set by the BUILD file for sanitizer builds (which compile this file
// without instrumentation, so the compiler's own feature macros are off here).
#if !defined(SHP_FAULT_SANITIZED) && defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SHP_FAULT_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#ifndef SHP_FAULT_SANITIZED
#define SHP_FAULT_SANITIZED 1
#endif
#endif

// The real allocators: glibc's own entry points. Under a sanitizer the C functions are left to
// its runtime (which allocates through them itself, e.g. when a thread starts, and must not see
// them fail): only operator new is replaced and fails, forwarding to the sanitizer's malloc.
#if !defined(SHP_FAULT_SANITIZED)
extern "C" {
void* __libc_malloc(size_t n);
void* __libc_calloc(size_t count, size_t n);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t align, size_t n);
void* __libc_valloc(size_t n);
void* __libc_pvalloc(size_t n);
void __libc_free(void* p);
}
#endif

namespace {

#if defined(SHP_FAULT_SANITIZED)
void* RealMalloc(size_t n) { return std::malloc(n); }
void* RealMemalign(size_t a, size_t n) { return memalign(a, n); }
void RealFree(void* p) { std::free(p); }
#else
void* RealMalloc(size_t n) { return __libc_malloc(n); }
void* RealCalloc(size_t c, size_t n) { return __libc_calloc(c, n); }
void* RealRealloc(void* p, size_t n) { return __libc_realloc(p, n); }
void* RealMemalign(size_t a, size_t n) { return __libc_memalign(a, n); }
// glibc 2.36's aligned_alloc is memalign; posix_memalign adds its argument checks.
void* RealAlignedAlloc(size_t a, size_t n) {
  if (a == 0 || (a & (a - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return __libc_memalign(a, n);
}
int RealPosixMemalign(void** out, size_t a, size_t n) {
  if (a % sizeof(void*) != 0 || (a & (a - 1)) != 0 || a == 0) return EINVAL;
  void* p = __libc_memalign(a, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
void* RealValloc(size_t n) { return __libc_valloc(n); }
void* RealPvalloc(size_t n) { return __libc_pvalloc(n); }
void RealFree(void* p) { __libc_free(p); }
#endif

std::atomic<bool> g_armed{false};
std::atomic<bool> g_fired{false};
std::atomic<uint64_t> g_count{0};
std::atomic<uint64_t> g_fail_at{0};
// SHP_FAULT_BACKTRACE=1 in the environment: the injected failure prints a backtrace to stderr
// (symbolize the addresses with addr2line), to find where an unclean failure came from.
bool g_backtrace = false;

void PrintBacktrace() {
  void* frames[64];
  const int n = backtrace(frames, 64);  // warmed up by Arm: does not allocate here
  static const char kHeader[] = "alloc_hook: injected allocation failure at\n";
  if (write(2, kHeader, sizeof kHeader - 1) < 0) return;
  backtrace_symbols_fd(frames, n, 2);
}

// Counts one allocation; true if it is the one to fail.
bool InjectFailure() {
  if (!g_armed.load(std::memory_order_acquire)) return false;
  const uint64_t n = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != g_fail_at.load(std::memory_order_relaxed)) return false;
  g_fired.store(true, std::memory_order_relaxed);
  if (g_backtrace) PrintBacktrace();
  return true;
}

void* NewImpl(size_t n) {
  if (InjectFailure()) throw std::bad_alloc();
  for (;;) {
    void* p = RealMalloc(n == 0 ? 1 : n);
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* NewAlignedImpl(size_t n, std::align_val_t align) {
  if (InjectFailure()) throw std::bad_alloc();
  size_t a = static_cast<size_t>(align);
  if (a < sizeof(void*)) a = sizeof(void*);
  for (;;) {
    void* p = RealMemalign(a, n == 0 ? 1 : n);
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

namespace shp_fault {

void Arm(uint64_t fail_at) {
  static const bool backtrace_wanted = [] {
    const char* v = std::getenv("SHP_FAULT_BACKTRACE");
    if (v == nullptr || *v == '\0' || *v == '0') return false;
    void* frame[1];
    backtrace(frame, 1);  // loads the unwinder now, not inside an allocation
    return true;
  }();
  g_backtrace = backtrace_wanted;
  g_fired.store(false, std::memory_order_relaxed);
  g_count.store(0, std::memory_order_relaxed);
  g_fail_at.store(fail_at, std::memory_order_relaxed);
  g_armed.store(true, std::memory_order_release);
}

uint64_t Disarm() {
  g_armed.store(false, std::memory_order_release);
  return g_count.load(std::memory_order_relaxed);
}

void Resume() { g_armed.store(true, std::memory_order_release); }

uint64_t Count() { return g_count.load(std::memory_order_relaxed); }

bool Fired() { return g_fired.load(std::memory_order_relaxed); }

bool Armed() { return g_armed.load(std::memory_order_acquire); }

}  // namespace shp_fault

// ---- The C allocation functions --------------------------------------------------------------

#if !defined(SHP_FAULT_SANITIZED)
extern "C" {

void* malloc(size_t n) {
  if (InjectFailure()) {
    errno = ENOMEM;
    return nullptr;
  }
  return RealMalloc(n);
}

void* calloc(size_t count, size_t n) {
  if (InjectFailure()) {
    errno = ENOMEM;
    return nullptr;
  }
  return RealCalloc(count, n);
}

void* realloc(void* p, size_t n) {
  if (InjectFailure()) {  // the old block stays valid, as on a real failure
    errno = ENOMEM;
    return nullptr;
  }
  return RealRealloc(p, n);
}

void* reallocarray(void* p, size_t count, size_t n) {
  size_t bytes;
  if (__builtin_mul_overflow(count, n, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, bytes);
}

void* aligned_alloc(size_t align, size_t n) {
  if (InjectFailure()) {
    errno = ENOMEM;
    return nullptr;
  }
  return RealAlignedAlloc(align, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  if (InjectFailure()) return ENOMEM;
  return RealPosixMemalign(out, align, n);
}

void* memalign(size_t align, size_t n) {
  if (InjectFailure()) {
    errno = ENOMEM;
    return nullptr;
  }
  return RealMemalign(align, n);
}

void* valloc(size_t n) {
  if (InjectFailure()) {
    errno = ENOMEM;
    return nullptr;
  }
  return RealValloc(n);
}

void* pvalloc(size_t n) {
  if (InjectFailure()) {
    errno = ENOMEM;
    return nullptr;
  }
  return RealPvalloc(n);
}

}  // extern "C"
#endif  // !SHP_FAULT_SANITIZED

// ---- The replaceable global operator new/delete ----------------------------------------------

void* operator new(size_t n) { return NewImpl(n); }
void* operator new[](size_t n) { return NewImpl(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return NewImpl(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return NewImpl(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(size_t n, std::align_val_t a) { return NewAlignedImpl(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return NewAlignedImpl(n, a); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return NewAlignedImpl(n, a);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return NewAlignedImpl(n, a);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

void operator delete(void* p) noexcept { RealFree(p); }
void operator delete[](void* p) noexcept { RealFree(p); }
void operator delete(void* p, size_t) noexcept { RealFree(p); }
void operator delete[](void* p, size_t) noexcept { RealFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { RealFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { RealFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { RealFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { RealFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { RealFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { RealFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { RealFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { RealFree(p); }
