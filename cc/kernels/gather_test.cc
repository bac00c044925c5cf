// Tests of the gather kernels (Take, TakeAlongAxis) against naive references: int32 and int64
// indices, negative indices, out-of-range indices (clamped, reported at the first position,
// never read out of bounds: the input is copied into an exactly-sized heap buffer so ASan
// would catch an overread), element sizes 1..16, threads, guard bytes around the output.
#include "cc/kernels/gather.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

constexpr size_t kGuard = 32;
constexpr uint8_t kSentinel = 0x3C;

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t s = seed * 2654435761u + 5u;
  for (uint8_t& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<uint8_t>(s >> 24);
  }
  return v;
}

// Indices in [lo, hi] (pseudo-random), with value `bad` forced at positions `bad_at`.
std::vector<int64_t> RandomIndices(size_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::vector<int64_t> v(n);
  uint32_t s = seed * 747796405u + 1u;
  for (int64_t& x : v) {
    s = s * 1664525u + 1013904223u;
    x = hi < lo ? 0 : lo + static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(hi - lo + 1));
  }
  return v;
}

// Expected element: resolved index, or -1 for zero-fill (n == 0).
int64_t Expected(int64_t i, int64_t n, bool* bad) {
  if (i < -n || i >= n) {
    *bad = true;
    if (n == 0) return -1;
    return i < 0 ? 0 : n - 1;
  }
  return i < 0 ? i + n : i;
}

// Index buffer of the requested type.
std::vector<uint8_t> Encode(const std::vector<int64_t>& idx, IndexType type) {
  const size_t w = type == IndexType::kI32 ? 4 : 8;
  std::vector<uint8_t> out(idx.size() * w);
  for (size_t j = 0; j < idx.size(); ++j) {
    if (type == IndexType::kI32) {
      const int32_t v = static_cast<int32_t>(idx[j]);
      std::memcpy(&out[j * w], &v, w);
    } else {
      std::memcpy(&out[j * w], &idx[j], w);
    }
  }
  return out;
}

struct Case {
  int64_t outer, n, inner, num;
};

// The outcome of one gather: true, the first invalid index reported (or none), the expected
// bytes written, and the guard bytes around the output untouched.
void ExpectResult(bool ok, const BadIndex& bad, int64_t first_bad, const std::vector<int64_t>& idx,
                  const std::vector<uint8_t>& want, const std::vector<uint8_t>& out,
                  const std::string& what) {
  EXPECT_TRUE(ok) << what;
  EXPECT_EQ(first_bad, bad.position) << what;
  if (first_bad >= 0) {
    EXPECT_EQ(idx[first_bad], bad.index) << what;
  }
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin() + kGuard)) << what;
  for (size_t g = 0; g < kGuard; ++g) {
    ASSERT_EQ(kSentinel, out[g]) << what;
    ASSERT_EQ(kSentinel, out[out.size() - 1 - g]) << what;
  }
}

void CheckTake(const Case& c, const std::vector<int64_t>& idx, IndexType type, int64_t es,
               ThreadPool* pool, uint32_t seed) {
  const size_t in_bytes = static_cast<size_t>(c.outer * c.n * c.inner * es);
  std::unique_ptr<uint8_t[]> in(new uint8_t[in_bytes + 1]);  // exact size (+1 so non-null)
  const std::vector<uint8_t> data = RandomBytes(in_bytes, seed);
  if (in_bytes > 0) std::memcpy(in.get(), data.data(), in_bytes);
  const std::vector<uint8_t> enc = Encode(idx, type);
  const size_t out_bytes = static_cast<size_t>(c.outer * c.num * c.inner * es);
  std::vector<uint8_t> want(out_bytes, 0);
  int64_t first_bad = -1;
  for (int64_t j = 0; j < c.num; ++j) {
    bool bad = false;
    const int64_t k = Expected(idx[j], c.n, &bad);
    if (bad && first_bad < 0) first_bad = j;
    for (int64_t o = 0; o < c.outer; ++o) {
      if (k < 0 || c.inner == 0) continue;
      std::memcpy(&want[((o * c.num + j) * c.inner) * es], &data[((o * c.n + k) * c.inner) * es],
                  static_cast<size_t>(c.inner * es));
    }
  }
  std::vector<uint8_t> out(out_bytes + 2 * kGuard, kSentinel);
  BadIndex bad;
  const bool ok = Take(in.get(), c.outer, c.n, c.inner, enc.data(), type, c.num, es,
                       out.data() + kGuard, pool, &bad);
  const std::string what = "take outer=" + std::to_string(c.outer) + " n=" + std::to_string(c.n) +
                           " inner=" + std::to_string(c.inner) + " num=" + std::to_string(c.num) +
                           " es=" + std::to_string(es);
  ExpectResult(ok, bad, first_bad, idx, want, out, what);
}

void CheckTakeAlongAxis(const Case& c, const std::vector<int64_t>& idx, IndexType type, int64_t es,
                        ThreadPool* pool, uint32_t seed) {
  const size_t in_bytes = static_cast<size_t>(c.outer * c.n * c.inner * es);
  std::unique_ptr<uint8_t[]> in(new uint8_t[in_bytes + 1]);
  const std::vector<uint8_t> data = RandomBytes(in_bytes, seed);
  if (in_bytes > 0) std::memcpy(in.get(), data.data(), in_bytes);
  const std::vector<uint8_t> enc = Encode(idx, type);
  const int64_t total = c.outer * c.num * c.inner;
  std::vector<uint8_t> want(static_cast<size_t>(total * es), 0);
  int64_t first_bad = -1;
  for (int64_t pos = 0; pos < total; ++pos) {
    const int64_t o = pos / (c.num * c.inner);
    const int64_t i = pos % c.inner;
    bool bad = false;
    const int64_t k = Expected(idx[pos], c.n, &bad);
    if (bad && first_bad < 0) first_bad = pos;
    if (k >= 0) {
      std::memcpy(&want[pos * es], &data[((o * c.n + k) * c.inner + i) * es],
                  static_cast<size_t>(es));
    }
  }
  std::vector<uint8_t> out(want.size() + 2 * kGuard, kSentinel);
  BadIndex bad;
  const bool ok = TakeAlongAxis(in.get(), c.outer, c.n, c.inner, enc.data(), type, c.num, es,
                                out.data() + kGuard, pool, &bad);
  const std::string what = "take_along_axis outer=" + std::to_string(c.outer) +
                           " n=" + std::to_string(c.n) + " inner=" + std::to_string(c.inner) +
                           " num=" + std::to_string(c.num) + " es=" + std::to_string(es);
  ExpectResult(ok, bad, first_bad, idx, want, out, what);
}

const Case kCases[] = {{1, 5, 1, 3},        {3, 7, 4, 5},     {2, 1, 3, 4}, {4, 6, 1, 0},
                       {0, 6, 2, 3},        {2, 0, 2, 3},     {5, 9, 0, 2}, {300, 40, 8, 30},
                       {1, 1000, 300, 200}, {700, 50, 1, 300}};

TEST(TakeTest, MatchesReference) {
  ThreadPool pool(3);
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    for (IndexType type : {IndexType::kI32, IndexType::kI64}) {
      for (int64_t es : {1, 2, 3, 4, 8, 16}) {
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          // Valid indices, including negative ones.
          std::vector<int64_t> idx = RandomIndices(static_cast<size_t>(c.num), -c.n, c.n - 1, seed);
          CheckTake(c, idx, type, es, p, seed++);
          // Out-of-range on both sides.
          if (c.num >= 2) {
            idx[c.num / 2] = c.n + 5;
            idx[c.num - 1] = -c.n - 1;
            CheckTake(c, idx, type, es, p, seed++);
          }
        }
      }
    }
  }
}

// Runs of 4-byte elements are SIMD gathers (every compiled target the CPU has, below): lengths
// around the vector widths (4, 8, 16 lanes), an invalid index in a vector or its tail.
const Case kVectorCases[] = {{3, 17, 1, 33}, {2, 5, 37, 3},  {1, 9, 16, 2}, {4, 3, 1, 16},
                             {2, 70, 1, 47}, {1, 4, 129, 5}, {5, 2, 15, 1}, {1, 100, 1, 64}};

HWY_BEFORE_TEST(TakeAlongAxisTest);

TEST_P(TakeAlongAxisTest, MatchesReference) {
  ThreadPool pool(2);
  uint32_t seed = 1;
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  cases.insert(cases.end(), std::begin(kVectorCases), std::end(kVectorCases));
  for (const Case& c : cases) {
    for (IndexType type : {IndexType::kI32, IndexType::kI64}) {
      for (int64_t es : {1, 2, 3, 4, 8, 16}) {
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          const size_t total = static_cast<size_t>(c.outer * c.num * c.inner);
          std::vector<int64_t> idx = RandomIndices(total, -c.n, c.n - 1, seed);
          CheckTakeAlongAxis(c, idx, type, es, p, seed++);
          if (total >= 3) {
            idx[total - 1] = c.n;         // just past the end
            idx[total / 3] = -c.n - 100;  // far before the start
            idx[2 * total / 3] = c.n + 1;
            CheckTakeAlongAxis(c, idx, type, es, p, seed++);
          }
        }
      }
    }
  }
}

TEST(TakeTest, ExtremeIndicesAndInvalidArguments) {
  const float in[3] = {1.0f, 2.0f, 3.0f};
  float out[3] = {};
  const int64_t idx64[3] = {INT64_MIN, INT64_MAX, -3};
  BadIndex bad;
  EXPECT_TRUE(Take(in, 1, 3, 1, idx64, IndexType::kI64, 3, sizeof(float), out, nullptr, &bad));
  EXPECT_EQ(0, bad.position);
  EXPECT_EQ(INT64_MIN, bad.index);
  EXPECT_EQ(1.0f, out[0]);  // clamped to 0
  EXPECT_EQ(3.0f, out[1]);  // clamped to n - 1
  EXPECT_EQ(1.0f, out[2]);  // -3 + 3
  EXPECT_FALSE(Take(in, -1, 3, 1, idx64, IndexType::kI64, 3, 4, out, nullptr, nullptr));
  EXPECT_FALSE(Take(in, 1, 3, 1, idx64, IndexType::kI64, 3, 0, out, nullptr, nullptr));
  EXPECT_FALSE(Take(in, 1, 3, 1, idx64, static_cast<IndexType>(7), 3, 4, out, nullptr, nullptr));
  EXPECT_FALSE(TakeAlongAxis(in, 1, 3, -1, idx64, IndexType::kI64, 3, 4, out, nullptr, nullptr));
  bad.position = 5;
  EXPECT_TRUE(Take(nullptr, 1, 3, 1, nullptr, IndexType::kI32, 0, 4, nullptr, nullptr, &bad));
  EXPECT_EQ(-1, bad.position);
}

}  // namespace
}  // namespace kernels
}  // namespace shp
