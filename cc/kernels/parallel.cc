#include "cc/kernels/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace shp {
namespace kernels {

// One job at a time ("generation"): the caller publishes fn/n/chunks under mu, bumps the
// generation and wakes every worker; workers and the caller claim chunk indices from an atomic
// counter; the caller waits until every worker has reported back for this generation.
// Both sides spin briefly before blocking: kernels are often called back to back (one per
// op of a program), and waking a blocked thread costs more than a short op.
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

  // The current job (written under mu before the generation bump, read after it).
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
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
};

ThreadPool::ThreadPool(int num_threads) : impl_(new Impl) {
  impl_->num_threads = std::max(1, num_threads);
  impl_->workers.reserve(static_cast<size_t>(impl_->num_threads - 1));
  for (int i = 1; i < impl_->num_threads; ++i) {
    impl_->workers.emplace_back([this] { impl_->WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop.store(true, std::memory_order_release);
  }
  impl_->work_cv.notify_all();
  for (std::thread& t : impl_->workers) t.join();
}

int ThreadPool::num_threads() const { return impl_->num_threads; }

int ThreadPool::HardwareConcurrency() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t chunks = std::min<int64_t>(impl_->num_threads, n / grain);
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  Impl& s = *impl_;
  std::lock_guard<std::mutex> call_lock(s.call_mu);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.fn = &fn;
    s.n = n;
    s.chunks = chunks;
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

void ParallelFor(ThreadPool* pool, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool == nullptr) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, grain, fn);
}

}  // namespace kernels
}  // namespace shp
