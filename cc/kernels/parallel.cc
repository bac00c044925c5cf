#include "cc/kernels/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cc/base/error.h"

namespace shp {
namespace kernels {

// One job at a time ("generation"): the caller publishes fn/n/chunks under mu, bumps the
// generation and wakes every worker; workers and the caller claim chunk indices from an atomic
// counter; the caller waits until every worker has reported back for this generation.
// Both sides spin briefly before blocking: kernels are often called back to back (one per
// op of a program), and waking a blocked thread costs more than a short op.
namespace {
// The smallest buffer a scratch slot gets, and what a worker holds from its start in the slots
// whose requested size varies with the rows a thread happens to take (row kernels,
// reductions): a cached run then allocates nothing, whichever thread takes which block.
constexpr size_t kMinScratchBytes = size_t{64} << 10;
void PrewarmThreadScratch();
}  // namespace

struct ThreadPool::Impl {
  int num_threads = 1;
  std::vector<std::thread> workers;

  std::mutex call_mu;  // serializes ParallelFor calls from different external threads

  std::mutex mu;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> generation{0};  // written under mu (so blocked waiters see it)
  std::atomic<int> pending{0};          // workers that have not finished the current generation
  std::atomic<int> started{0};  // workers whose scratch is allocated (the constructor waits)

  // The current job (written under mu before the generation bump, read after it).
  const RangeFn* fn = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  std::exception_ptr error;  // first exception thrown by fn, guarded by mu

  void RunChunks() {
    const int64_t q = n / chunks;
    const int64_t r = n % chunks;
    for (;;) {
      const int64_t c = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      const int64_t begin = c * q + std::min(c, r);
      const int64_t end = begin + q + (c < r ? 1 : 0);
      try {
        (*fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    }
  }

  // Spins up to kSpin rounds for `ready()`; true if it became ready.
  template <typename F>
  static bool SpinFor(F ready) {
    constexpr int kSpin = 4000;
    for (int i = 0; i < kSpin; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if ((i & 255) == 255) std::this_thread::yield();
    }
    return ready();
  }

  void WorkerLoop() {
    PrewarmThreadScratch();
    started.fetch_add(1, std::memory_order_release);
    uint64_t seen = 0;
    for (;;) {
      auto ready = [&] {
        return stop.load(std::memory_order_acquire) ||
               generation.load(std::memory_order_acquire) != seen;
      };
      if (!SpinFor(ready)) {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, ready);
      }
      if (stop.load(std::memory_order_acquire)) return;
      {
        // Reading the job under mu pairs with the caller's writes under mu.
        std::lock_guard<std::mutex> lock(mu);
        seen = generation.load(std::memory_order_relaxed);
      }
      RunChunks();
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu);
        done_cv.notify_one();
      }
    }
  }

  // Runs job over [0, n_items) split into n_chunks contiguous chunks (2 <= n_chunks <= n_items)
  // on the workers and the caller; returns when all are done, rethrowing the first exception.
  void Run(int64_t n_items, int64_t n_chunks, const RangeFn& job);

  // Stops and joins every worker (no job may be running).
  void StopWorkers() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop.store(true, std::memory_order_release);
    }
    work_cv.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
  }
};

namespace {

// Worker creations left before the injected failure (FailThreadCreationForTesting); 0: none.
std::atomic<int> fail_countdown{0};

// Throws as std::thread does when the system refuses a thread, if the test hook says so.
void MaybeInjectThreadFailure() {
  int left = fail_countdown.load(std::memory_order_relaxed);
  while (left > 0) {
    if (fail_countdown.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
      if (left == 1) {
        throw std::system_error(EAGAIN, std::generic_category(), "injected thread failure");
      }
      return;
    }
  }
}

// ---- ThreadScratch ----
// The buffers hang off a pthread key whose destructor frees them when the thread exits. A
// failure to register them is std::bad_alloc (glibc aborts instead when a thread_local's
// destructor cannot be registered). The thread_local pointer is trivially destructible, so it
// registers nothing.
struct ScratchBuffers {
  void* data[kNumThreadScratchSlots];
  size_t size[kNumThreadScratchSlots];
};

void FreeScratchBuffers(void* p) {
  ScratchBuffers* b = static_cast<ScratchBuffers*>(p);
  for (void* d : b->data) std::free(d);
  std::free(b);
}

struct ScratchKey {
  pthread_key_t key;
  int error;
  ScratchKey() : error(pthread_key_create(&key, FreeScratchBuffers)) {}
};

// initial-exec: one %fs-relative load instead of a __tls_get_addr call on every kernel call
// (the library may be dlopen'ed: 8 bytes of static TLS fit glibc's reserve for that).
thread_local ScratchBuffers* t_scratch __attribute__((tls_model("initial-exec"))) = nullptr;

ScratchBuffers* MyScratchBuffers() {
  if (t_scratch != nullptr) return t_scratch;
  static ScratchKey scratch_key;  // never destroyed before the threads that use it exit
  if (scratch_key.error != 0) throw std::bad_alloc();
  ScratchBuffers* b = static_cast<ScratchBuffers*>(std::calloc(1, sizeof(ScratchBuffers)));
  if (b == nullptr) throw std::bad_alloc();
  if (pthread_setspecific(scratch_key.key, b) != 0) {
    std::free(b);
    throw std::bad_alloc();
  }
  t_scratch = b;
  return b;
}

}  // namespace

void* ThreadScratch(int slot, size_t bytes) {
  ScratchBuffers* b = MyScratchBuffers();
  const size_t s = static_cast<size_t>(slot);
  if (b->size[s] < bytes || b->data[s] == nullptr) {
    const size_t rounded = (std::max<size_t>(bytes, kMinScratchBytes) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) throw std::bad_alloc();
    std::free(b->data[s]);
    b->data[s] = p;
    b->size[s] = rounded;
  }
  return b->data[s];
}

namespace {
void PrewarmThreadScratch() {
  try {
    ThreadScratch(kScratchRows, kMinScratchBytes);
    ThreadScratch(kScratchReduce, kMinScratchBytes);
  } catch (const std::bad_alloc&) {  // then the kernels allocate on first use, as before
  }
}
}  // namespace

void FailThreadCreationForTesting(int k) {
  fail_countdown.store(std::max(0, k), std::memory_order_relaxed);
}

ThreadPool::ThreadPool(int num_threads) : impl_(new Impl) {
  if (num_threads > kMaxThreads) {
    throw Error(Code::kInvalidArgument, "thread pool: at most " + std::to_string(kMaxThreads) +
                                            " threads, got " + std::to_string(num_threads));
  }
  Impl* s = impl_.get();
  s->num_threads = std::max(1, num_threads);
  // A refused thread (std::system_error) or its memory (std::bad_alloc) must not escape with
  // joinable workers in the vector (std::terminate): stop and join those created, then report.
  int error = 0;  // no allocation in the handlers: the workers must be joined first
  try {
    s->workers.reserve(static_cast<size_t>(s->num_threads - 1));
    for (int i = 1; i < s->num_threads; ++i) {
      MaybeInjectThreadFailure();
      s->workers.emplace_back([s] { s->WorkerLoop(); });
    }
    // Every worker holds its scratch before the pool is used (no allocation in a later run).
    while (s->started.load(std::memory_order_acquire) < s->num_threads - 1)
      std::this_thread::yield();
    return;
  } catch (const std::system_error& e) {
    error = e.code().value();
  } catch (const std::bad_alloc&) {
    error = ENOMEM;
  }
  const size_t created = s->workers.size();
  s->StopWorkers();
  throw Error(Code::kOutOfMemory, "could not create threads: asked for " +
                                      std::to_string(s->num_threads) + " (the caller's and " +
                                      std::to_string(s->num_threads - 1) + " workers), created " +
                                      std::to_string(created) + " workers (" +
                                      std::strerror(error) + "); ask for fewer threads");
}

ThreadPool::~ThreadPool() { impl_->StopWorkers(); }

int ThreadPool::num_threads() const { return impl_->num_threads; }

int ThreadPool::HardwareConcurrency() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain, RangeFn fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t chunks = std::min<int64_t>(impl_->num_threads, n / grain);
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  impl_->Run(n, chunks, fn);
}

void ThreadPool::ParallelForEach(int64_t n, RangeFn fn) {
  if (n <= 0) return;
  if (n == 1 || impl_->num_threads == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, i + 1);
    return;
  }
  impl_->Run(n, n, fn);
}

void ThreadPool::Impl::Run(int64_t n_items, int64_t n_chunks, const RangeFn& job) {
  Impl& s = *this;
  std::lock_guard<std::mutex> call_lock(s.call_mu);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.fn = &job;
    s.n = n_items;
    s.chunks = n_chunks;
    s.next_chunk.store(0, std::memory_order_relaxed);
    s.error = nullptr;
    s.pending.store(static_cast<int>(s.workers.size()), std::memory_order_relaxed);
    s.generation.fetch_add(1, std::memory_order_release);
  }
  s.work_cv.notify_all();
  s.RunChunks();
  std::exception_ptr error;
  auto done = [&] { return s.pending.load(std::memory_order_acquire) == 0; };
  Impl::SpinFor(done);
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.done_cv.wait(lock, done);
    s.fn = nullptr;
    error = s.error;
    s.error = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

void ParallelForEach(ThreadPool* pool, int64_t n, RangeFn fn) {
  if (n <= 0) return;
  if (pool == nullptr) {
    for (int64_t i = 0; i < n; ++i) fn(i, i + 1);
    return;
  }
  pool->ParallelForEach(n, fn);
}

void ParallelFor(ThreadPool* pool, int64_t n, int64_t grain, RangeFn fn) {
  if (n <= 0) return;
  if (pool == nullptr) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, grain, fn);
}

}  // namespace kernels
}  // namespace shp
