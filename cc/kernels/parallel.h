// A small fixed-size thread pool for the kernels. Plain C++ (no Highway).
#ifndef SHAPEPOLY_CC_KERNELS_PARALLEL_H_
#define SHAPEPOLY_CC_KERNELS_PARALLEL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace shp {
namespace kernels {

// A borrowed callable fn(begin, end) for ParallelFor: two pointers, never an allocation (a
// std::function allocates when a lambda captures more than two references, on every kernel
// call). It refers to the callable, which must outlive it: pass lambdas straight to the call.
class RangeFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same<std::decay_t<F>, RangeFn>::value>>
  RangeFn(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert implicitly
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_(&Call<std::remove_reference_t<F>>) {}
  void operator()(int64_t begin, int64_t end) const { call_(obj_, begin, end); }

 private:
  template <typename F>
  static void Call(void* obj, int64_t begin, int64_t end) {
    (*static_cast<F*>(obj))(begin, end);
  }
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};

// The most threads a pool may have (the runtime and the C API reject larger requests): more
// would not speed up any kernel, and each costs a stack.
constexpr int kMaxThreads = 256;

// A fixed set of worker threads (num_threads - 1 of them; the calling thread is the last one).
//
// ParallelFor splits [0, n) into at most num_threads() contiguous chunks of at least `grain`
// items each and runs fn(begin, end) on them; the caller's thread takes one chunk. It returns
// when all chunks are done. n < 2*grain, or num_threads() == 1, runs fn(0, n) inline on the
// caller's thread (n <= 0 calls nothing). The chunk boundaries depend only on n, grain and
// num_threads(), never on timing, so kernels whose chunks write disjoint outputs are
// deterministic.
//
// Thread-safety: ParallelFor may be called from several threads at once (calls are serialized
// on the pool); it is NOT reentrant: fn must not call ParallelFor on the same pool (it would
// deadlock). If fn throws, the first exception is rethrown on the caller's thread after all
// chunks have finished. Kernels accept `ThreadPool*` == nullptr meaning single-threaded.
class ThreadPool {
 public:
  // num_threads <= kMaxThreads (smaller than 1 is treated as 1); 1 means no worker threads.
  // Throws shp::Error: kInvalidArgument above kMaxThreads; kOutOfMemory when the system
  // refuses a thread (or its memory), naming how many were asked and created. The workers
  // created so far are then stopped and joined before the throw: nothing is left behind.
  explicit ThreadPool(int num_threads);
  // Joins the workers. No ParallelFor may be running.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The number of threads that execute chunks, including the caller's thread.
  int num_threads() const;

  // See the class comment. grain < 1 is treated as 1.
  void ParallelFor(int64_t n, int64_t grain, RangeFn fn);

  // Runs fn(i, i + 1) for every i in [0, n), each index claimed by whichever thread is free
  // (the caller's included), in increasing order of claims: for work split into more items than
  // threads, so that a thread that finishes early or a worker that starts late (a loaded
  // machine) does not leave the other waiting. Which thread runs an item depends on timing, so
  // items must write disjoint outputs. n == 1 or num_threads() == 1 runs everything on the
  // caller's thread. Otherwise as ParallelFor (not reentrant, exceptions).
  void ParallelForEach(int64_t n, RangeFn fn);

  // The number of hardware threads (std::thread::hardware_concurrency(), at least 1).
  static int HardwareConcurrency();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// For tests only: makes the k-th worker thread created from now on (k >= 1, counted over every
// pool) fail as if the system refused it (std::system_error, EAGAIN); k = 0 disables it.
void FailThreadCreationForTesting(int k);

// Per-thread scratch memory of the kernels, one buffer per slot.
enum ThreadScratchSlot : int {
  kScratchMatmulA,
  kScratchMatmulB,
  kScratchElementwise,
  kScratchElementwiseRegs,
  kScratchRows,    // f16/bf16 rows widened to f32 (softmax, layer_norm, reductions)
  kScratchReduce,  // a reduction's partial results, on the calling thread
  kNumThreadScratchSlots
};

// A buffer of at least `bytes` bytes, 64-byte aligned, for `slot` of the calling thread: kept
// for the thread's lifetime (so repeated calls pay no allocation) and freed when the thread
// exits; grown on demand, without keeping its contents. Throws std::bad_alloc. Kernels use it
// instead of a thread_local with a destructor, whose registration glibc turns into a process
// abort when memory runs out.
void* ThreadScratch(int slot, size_t bytes);

// Runs fn over [0, n) on `pool` (see ThreadPool::ParallelFor), or inline as fn(0, n) when pool
// is nullptr. n <= 0 calls nothing.
void ParallelFor(ThreadPool* pool, int64_t n, int64_t grain, RangeFn fn);

// ThreadPool::ParallelForEach on `pool`, or fn(i, i + 1) for each i in order on the caller's
// thread when pool is nullptr. n <= 0 calls nothing.
void ParallelForEach(ThreadPool* pool, int64_t n, RangeFn fn);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_PARALLEL_H_
