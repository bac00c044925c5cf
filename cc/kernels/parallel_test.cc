// Tests of the kernels' thread pool.
#include "cc/kernels/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "gtest/gtest.h"

namespace shp {
namespace kernels {
namespace {

// Records the chunks of one ParallelFor call.
std::vector<std::pair<int64_t, int64_t>> Chunks(ThreadPool* pool, int64_t n, int64_t grain) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  ParallelFor(pool, n, grain, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mu);
    chunks.emplace_back(b, e);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST(ThreadPool, CoversRangeExactlyOnceWithBoundedChunks) {
  for (int threads : {1, 2, 3, 4, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(threads, pool.num_threads());
    for (int64_t n : {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 100, 1001, 65537}) {
      for (int64_t grain : {-3, 0, 1, 2, 4, 8, 1000}) {
        const auto chunks = Chunks(&pool, n, grain);
        if (n == 0) {
          EXPECT_TRUE(chunks.empty());
          continue;
        }
        const int64_t g = grain < 1 ? 1 : grain;
        ASSERT_FALSE(chunks.empty());
        EXPECT_LE(static_cast<int64_t>(chunks.size()), threads);
        if (n < 2 * g || threads == 1) {
          EXPECT_EQ(1u, chunks.size());
        }
        int64_t pos = 0;
        for (const auto& c : chunks) {
          EXPECT_EQ(pos, c.first);
          EXPECT_LT(c.first, c.second);
          if (chunks.size() > 1) {
            EXPECT_GE(c.second - c.first, g);
          }
          pos = c.second;
        }
        EXPECT_EQ(n, pos) << "threads " << threads << " n " << n << " grain " << grain;
      }
    }
  }
}

// ParallelForEach calls fn(i, i + 1) exactly once per index, on the pool or inline.
TEST(ThreadPool, ParallelForEachRunsEveryIndexOnce) {
  ThreadPool pool2(2), pool3(3), pool1(1);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool1, &pool2, &pool3}) {
    for (int64_t n : {-1, 0, 1, 2, 3, 7, 100}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(std::max<int64_t>(n, 0)));
      std::atomic<int> bad{0};
      ParallelForEach(pool, n, [&](int64_t b, int64_t e) {
        if (b < 0 || e != b + 1 || b >= n) {
          bad.fetch_add(1);
          return;
        }
        hits[static_cast<size_t>(b)].fetch_add(1);
      });
      EXPECT_EQ(0, bad.load()) << "n " << n;
      for (size_t i = 0; i < hits.size(); ++i)
        EXPECT_EQ(1, hits[i].load()) << "n " << n << " i " << i;
    }
  }
}

// Items are claimed as threads free up: a slow first item does not hold back the others, which
// the other thread takes, and an exception in one item is rethrown after all have run.
TEST(ThreadPool, ParallelForEachBalancesAndRethrows) {
  ThreadPool pool(2);
  std::mutex mu;
  std::vector<std::thread::id> ran(8);
  pool.ParallelForEach(8, [&](int64_t b, int64_t) {
    if (b == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard<std::mutex> lock(mu);
    ran[static_cast<size_t>(b)] = std::this_thread::get_id();
  });
  // Item 0 slept 100 ms: its thread cannot also have run all of the 7 others after it.
  EXPECT_LT(std::count(ran.begin() + 1, ran.end(), ran[0]), 7);
  std::atomic<int> count{0};
  EXPECT_THROW(pool.ParallelForEach(6,
                                    [&](int64_t b, int64_t) {
                                      count.fetch_add(1);
                                      if (b == 2) throw std::runtime_error("item 2");
                                    }),
               std::runtime_error);
  EXPECT_EQ(6, count.load());
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(4);
  std::mutex mu;
  std::vector<std::thread::id> ids;
  pool.ParallelFor(4, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard<std::mutex> lock(mu);
    ids.push_back(std::this_thread::get_id());
  });
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(4u, ids.size());
  EXPECT_GE(std::unique(ids.begin(), ids.end()) - ids.begin(), 2);
}

TEST(ThreadPool, NullPoolRunsInline) {
  const auto chunks = Chunks(nullptr, 1000, 1);
  ASSERT_EQ(1u, chunks.size());
  EXPECT_EQ(0, chunks[0].first);
  EXPECT_EQ(1000, chunks[0].second);
  EXPECT_TRUE(Chunks(nullptr, 0, 1).empty());
}

TEST(ThreadPool, ManyCallsAndConcurrentCallers) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep) {
        std::atomic<int64_t> sum{0};
        pool.ParallelFor(1000, 10, [&](int64_t b, int64_t e) {
          int64_t s = 0;
          for (int64_t i = b; i < e; ++i) s += i;
          sum += s;
        });
        EXPECT_EQ(999 * 1000 / 2, sum.load());
        total += 1;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(800, total.load());
}

TEST(ThreadPool, RethrowsFirstExceptionAndStaysUsable) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.ParallelFor(100, 1,
                                [](int64_t b, int64_t) {
                                  if (b == 0) throw std::runtime_error("boom");
                                }),
               std::runtime_error);
  std::atomic<int64_t> count{0};
  pool.ParallelFor(100, 1, [&](int64_t b, int64_t e) { count += e - b; });
  EXPECT_EQ(100, count.load());
}

// The threads of this process (the "Threads:" line of /proc/self/status).
int ProcessThreads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  ADD_FAILURE() << "no Threads: line in /proc/self/status";
  return -1;
}

TEST(ThreadPool, RefusesMoreThanTheCap) {
  const Error e = testing::Catch([] { ThreadPool pool(kMaxThreads + 1); });
  EXPECT_EQ(Code::kInvalidArgument, e.code());
  EXPECT_TRUE(testing::Contains(e.message(), "at most 256 threads, got 257")) << e.message();
  ThreadPool pool(kMaxThreads);
  EXPECT_EQ(kMaxThreads, pool.num_threads());
  EXPECT_EQ(kMaxThreads, static_cast<int>(Chunks(&pool, 1000, 1).size()));
}

// The k-th thread creation fails, for every k: an out-of-memory error that says it was threads
// and how many, no thread left behind, and the next pool (fewer threads, or as many once the
// system gives them) works.
TEST(ThreadPool, ThreadCreationFailureUnwindsCleanly) {
  const int baseline = ProcessThreads();
  for (int threads : {2, 3, 8, 17}) {
    for (int k = 1; k < threads; ++k) {
      SCOPED_TRACE("threads " + std::to_string(threads) + ", failing creation " +
                   std::to_string(k));
      FailThreadCreationForTesting(k);
      const Error e = testing::Catch([&] { ThreadPool pool(threads); });
      FailThreadCreationForTesting(0);
      EXPECT_EQ(Code::kOutOfMemory, e.code());
      EXPECT_TRUE(testing::Contains(
          e.message(), "could not create threads: asked for " + std::to_string(threads)));
      EXPECT_TRUE(testing::Contains(e.message(), "created " + std::to_string(k - 1) + " workers"));
      EXPECT_EQ(baseline, ProcessThreads());
      for (int retry : {k, threads}) {
        ThreadPool pool(retry);
        const auto chunks = Chunks(&pool, 100, 1);
        EXPECT_EQ(retry, static_cast<int>(chunks.size()));
      }
      EXPECT_EQ(baseline, ProcessThreads());
    }
  }
}

TEST(ThreadPool, InjectedFailureCountsOverPools) {
  FailThreadCreationForTesting(3);
  ThreadPool first(3);  // creations 1 and 2
  const Error e = testing::Catch([] { ThreadPool second(3); });
  FailThreadCreationForTesting(0);
  EXPECT_EQ(Code::kOutOfMemory, e.code());
  EXPECT_TRUE(testing::Contains(e.message(), "created 0 workers")) << e.message();
  EXPECT_EQ(3, static_cast<int>(Chunks(&first, 100, 1).size()));
}

TEST(ThreadPool, HardwareConcurrencyIsPositive) { EXPECT_GE(ThreadPool::HardwareConcurrency(), 1); }

}  // namespace
}  // namespace kernels
}  // namespace shp
