// A test-only allocation-failure hook (issue 17, "Fault injection"). Linking alloc_hook.cc into
// a test executable replaces the global operator new/new[] (every variant) and interposes
// malloc, calloc, realloc, reallocarray, aligned_alloc, posix_memalign, memalign, valloc and
// pvalloc for the whole process, the shared libshapepoly.so, zlib and Highway included. While
// armed it counts the allocations of every thread and makes exactly the k-th one fail:
// operator new throws std::bad_alloc (the nothrow forms return NULL), the C functions return
// NULL with errno = ENOMEM. Under ASan/TSan (SHP_FAULT_SANITIZED) only operator new is
// replaced, forwarding to the sanitizer's malloc, so the sanitizers keep checking every block:
// their runtime allocates through the C functions itself and must not see them fail.
#ifndef SHAPEPOLY_TESTS_FAULT_ALLOC_HOOK_H_
#define SHAPEPOLY_TESTS_FAULT_ALLOC_HOOK_H_

#include <cstdint>

namespace shp_fault {

// Starts counting allocations from 0; the `fail_at`-th one from now on fails (0: none fails,
// only count). Not reentrant: one arming at a time.
void Arm(uint64_t fail_at);

// Stops counting and failing (a pause: the count is kept). Returns the number of allocations
// counted since Arm.
uint64_t Disarm();

// Counts (and fails the k-th allocation of Arm) again after Disarm, the count going on.
void Resume();

// The number of allocations counted since Arm.
uint64_t Count();

// Whether the armed failure has happened since the last Arm.
bool Fired();

// Whether the hook is armed now.
bool Armed();

}  // namespace shp_fault

#endif  // SHAPEPOLY_TESTS_FAULT_ALLOC_HOOK_H_
