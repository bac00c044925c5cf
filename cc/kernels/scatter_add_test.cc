// Tests of the scatter-add kernel against a naive reference (the same additions in the order
// of the index positions, so floats compare bit for bit): every numeric dtype, int32 and int64
// indices, negative and repeated indices, out-of-range indices (skipped, the first one
// reported, never written: guard bytes around the output and exactly-sized heap inputs for
// ASan), in place, threads (the result does not depend on the split), the transpose identity
// <scatter_add(0, i, u), x> == <u, take(x, i)>, and rejected arguments.
#include "cc/kernels/scatter_add.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cc/kernels/gather.h"
#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"

namespace shp {
namespace kernels {
namespace {

constexpr size_t kGuard = 32;
constexpr uint8_t kSentinel = 0x3C;

uint32_t Next(uint32_t* s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

// Values of T: small integers, or floats with many significant bits (so that the order of the
// additions shows in the last bits).
template <typename T>
std::vector<T> RandomValues(size_t n, uint32_t seed) {
  std::vector<T> v(n);
  uint32_t s = seed * 2654435761u + 7u;
  for (T& x : v) {
    if (std::is_integral<T>::value) {
      x = static_cast<T>(static_cast<int64_t>(Next(&s) % 2001) - 1000);
    } else {
      x = static_cast<T>((static_cast<double>(Next(&s)) / (1 << 24) - 0.5) * 1000.0 / 3.0);
    }
  }
  return v;
}

std::vector<int64_t> RandomIndices(size_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::vector<int64_t> v(n);
  uint32_t s = seed * 747796405u + 1u;
  for (int64_t& x : v) {
    x = hi < lo ? 0 : lo + static_cast<int64_t>(Next(&s) % static_cast<uint32_t>(hi - lo + 1));
  }
  return v;
}

std::vector<uint8_t> Encode(const std::vector<int64_t>& idx, IndexType type) {
  const size_t w = type == IndexType::kI32 ? 4 : 8;
  std::vector<uint8_t> out(idx.size() * w + 1);
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

template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

struct Case {
  int64_t outer, n, inner, num;
};

// Runs one scatter and compares it with the reference; `in_place` scatters into the base.
template <typename T>
void Check(const Case& c, const std::vector<int64_t>& idx, IndexType type, ThreadPool* pool,
           bool in_place, uint32_t seed) {
  const size_t base_n = static_cast<size_t>(c.outer * c.n * c.inner);
  const size_t upd_n = static_cast<size_t>(c.outer * c.num * c.inner);
  const std::vector<T> base = RandomValues<T>(base_n, seed);
  const std::vector<T> upd = RandomValues<T>(upd_n, seed + 1000);
  std::unique_ptr<T[]> upd_heap(new T[upd_n + 1]);  // exact size (+1 so non-null)
  if (upd_n > 0) std::memcpy(upd_heap.get(), upd.data(), upd_n * sizeof(T));
  std::vector<T> want = base;
  int64_t first_bad = -1;
  for (int64_t j = 0; j < c.num; ++j) {
    int64_t k = idx[static_cast<size_t>(j)];
    if (k < -c.n || k >= c.n) {
      if (first_bad < 0) first_bad = j;
      continue;
    }
    if (k < 0) k += c.n;
    for (int64_t o = 0; o < c.outer; ++o) {
      for (int64_t i = 0; i < c.inner; ++i) {
        T& w = want[static_cast<size_t>((o * c.n + k) * c.inner + i)];
        w = WrapAdd(w, upd[static_cast<size_t>((o * c.num + j) * c.inner + i)]);
      }
    }
  }
  const std::vector<uint8_t> enc = Encode(idx, type);
  const size_t bytes = base_n * sizeof(T);
  std::vector<uint8_t> out(bytes + 2 * kGuard, kSentinel);
  std::unique_ptr<T[]> base_heap(new T[base_n + 1]);
  if (base_n > 0) std::memcpy(base_heap.get(), base.data(), bytes);
  T* dst = in_place ? base_heap.get() : reinterpret_cast<T*>(out.data() + kGuard);
  BadIndex bad;
  const bool ok = ScatterAdd(base_heap.get(), c.outer, c.n, c.inner, enc.data(), type, c.num,
                             upd_heap.get(), DTypeOf<T>(), dst, pool, &bad);
  const std::string what = std::string(DTypeName(DTypeOf<T>())) +
                           " outer=" + std::to_string(c.outer) + " n=" + std::to_string(c.n) +
                           " inner=" + std::to_string(c.inner) + " num=" + std::to_string(c.num) +
                           (in_place ? " in place" : "") + (pool ? " threads" : "");
  ASSERT_TRUE(ok) << what;
  EXPECT_EQ(first_bad, bad.position) << what;
  if (first_bad >= 0) {
    EXPECT_EQ(idx[static_cast<size_t>(first_bad)], bad.index) << what;
  }
  if (base_n > 0) {
    EXPECT_EQ(0, std::memcmp(want.data(), dst, bytes)) << what;
  }
  for (size_t g = 0; g < kGuard; ++g) {
    ASSERT_EQ(kSentinel, out[g]) << what;
    ASSERT_EQ(kSentinel, out[out.size() - 1 - g]) << what;
  }
  if (in_place) {
    for (size_t b = kGuard; b < out.size() - kGuard; ++b) ASSERT_EQ(kSentinel, out[b]) << what;
  }
}

const Case kCases[] = {{1, 5, 1, 3},        {3, 7, 4, 5},      {2, 1, 3, 4},       {4, 6, 1, 0},
                       {0, 6, 2, 3},        {2, 0, 2, 3},      {5, 9, 0, 2},       {300, 40, 8, 30},
                       {1, 1000, 300, 200}, {700, 50, 1, 300}, {1, 3, 5000, 1000}, {2, 4, 4097, 7}};

template <typename T>
void CheckAllCases() {
  ThreadPool pool(3);
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    for (IndexType type : {IndexType::kI32, IndexType::kI64}) {
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        for (bool in_place : {false, true}) {
          // Valid indices (negative ones and many repeats: num may exceed n).
          std::vector<int64_t> idx = RandomIndices(static_cast<size_t>(c.num), -c.n, c.n - 1, seed);
          Check<T>(c, idx, type, p, in_place, seed++);
          if (c.num >= 2) {  // out of range on both sides: skipped, the first one reported
            idx[static_cast<size_t>(c.num / 2)] = c.n + 5;
            idx[static_cast<size_t>(c.num - 1)] = -c.n - 1;
            Check<T>(c, idx, type, p, in_place, seed++);
          }
        }
      }
    }
  }
}

TEST(ScatterAddTest, MatchesReferenceF32) { CheckAllCases<float>(); }
TEST(ScatterAddTest, MatchesReferenceF64) { CheckAllCases<double>(); }
TEST(ScatterAddTest, MatchesReferenceI32) { CheckAllCases<int32_t>(); }
TEST(ScatterAddTest, MatchesReferenceI64) { CheckAllCases<int64_t>(); }

// Repeated indices sum in the order of the index positions, whatever the threads: with values
// whose sum depends on the order (1e8 + 1 - 1e8 in f32), every thread count gives the
// sequential result.
TEST(ScatterAddTest, RepeatedIndicesSumInIndexOrder) {
  const int64_t inner = 3 * 4096;
  const float vals[] = {1e8f, 1.0f, -1e8f, 1.0f};
  const int64_t idx[] = {1, 1, 1, 1};
  std::vector<float> upd(4 * inner);
  for (int64_t j = 0; j < 4; ++j) {
    for (int64_t i = 0; i < inner; ++i) upd[static_cast<size_t>(j * inner + i)] = vals[j];
  }
  float seq = 0.0f;
  for (float v : vals) seq += v;
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    std::vector<float> base(2 * inner, 0.0f), out(2 * inner, -1.0f);
    ASSERT_TRUE(ScatterAdd(base.data(), 1, 2, inner, idx, IndexType::kI64, 4, upd.data(),
                           DType::kF32, out.data(), &pool, nullptr));
    for (int64_t i = 0; i < inner; ++i) {
      ASSERT_EQ(0.0f, out[static_cast<size_t>(i)]) << threads;
      ASSERT_EQ(seq, out[static_cast<size_t>(inner + i)]) << threads;
    }
  }
}

// The transpose of take: <scatter_add(0, i, u), x> == <u, take(x, i)> (exact in f64 with
// small integer values).
TEST(ScatterAddTest, IsTheTransposeOfTake) {
  const int64_t outer = 3, n = 5, inner = 2, num = 7;
  const std::vector<int64_t> idx = {4, 0, 4, -1, 2, 2, 1};
  std::vector<double> x(outer * n * inner), u(outer * num * inner);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 7) - 3;
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<double>(i % 5) - 2;
  std::vector<double> zeros(x.size(), 0.0), scattered(x.size()), taken(u.size());
  ASSERT_TRUE(ScatterAdd(zeros.data(), outer, n, inner, idx.data(), IndexType::kI64, num, u.data(),
                         DType::kF64, scattered.data(), nullptr, nullptr));
  ASSERT_TRUE(Take(x.data(), outer, n, inner, idx.data(), IndexType::kI64, num, sizeof(double),
                   taken.data(), nullptr, nullptr));
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < x.size(); ++i) lhs += scattered[i] * x[i];
  for (size_t i = 0; i < u.size(); ++i) rhs += u[i] * taken[i];
  EXPECT_EQ(lhs, rhs);
}

TEST(ScatterAddTest, IntegersWrapAndExtremeIndices) {
  const int32_t base[2] = {std::numeric_limits<int32_t>::max(), 0};
  const int32_t upd[3] = {1, 5, 7};
  const int64_t idx[3] = {0, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max()};
  int32_t out[2];
  BadIndex bad;
  ASSERT_TRUE(
      ScatterAdd(base, 1, 2, 1, idx, IndexType::kI64, 3, upd, DType::kI32, out, nullptr, &bad));
  EXPECT_EQ(std::numeric_limits<int32_t>::min(), out[0]);
  EXPECT_EQ(0, out[1]);
  EXPECT_EQ(1, bad.position);
  EXPECT_EQ(std::numeric_limits<int64_t>::min(), bad.index);
}

TEST(ScatterAddTest, RejectsInvalidArguments) {
  float base[4] = {1, 2, 3, 4}, out[4] = {9, 9, 9, 9};
  const float upd[2] = {1, 1};
  const int64_t idx[2] = {0, 1};
  auto run = [&](int64_t outer, int64_t n, int64_t inner, int64_t num, IndexType t, DType d,
                 void* dst) {
    return ScatterAdd(base, outer, n, inner, idx, t, num, upd, d, dst, nullptr, nullptr);
  };
  EXPECT_FALSE(run(-1, 2, 1, 2, IndexType::kI64, DType::kF32, out));
  EXPECT_FALSE(run(1, -2, 1, 2, IndexType::kI64, DType::kF32, out));
  EXPECT_FALSE(run(1, 2, -1, 2, IndexType::kI64, DType::kF32, out));
  EXPECT_FALSE(run(1, 2, 1, -2, IndexType::kI64, DType::kF32, out));
  EXPECT_FALSE(run(1, 2, 1, 2, static_cast<IndexType>(7), DType::kF32, out));
  EXPECT_FALSE(run(1, 2, 1, 2, IndexType::kI64, DType::kBool, out));
  EXPECT_FALSE(run(1, 2, 1, 2, IndexType::kI64, static_cast<DType>(99), out));
  EXPECT_FALSE(run(1, 2, 1, 2, IndexType::kI64, DType::kF32, base + 1));  // partial overlap
  EXPECT_FALSE(run(int64_t{1} << 40, int64_t{1} << 40, 1, 2, IndexType::kI64, DType::kF32, out));
  for (float v : out) EXPECT_EQ(9.0f, v);  // nothing written
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<float>(i + 1), base[i]);
  // Nothing to read or write: null pointers are fine.
  EXPECT_TRUE(ScatterAdd(nullptr, 0, 3, 2, nullptr, IndexType::kI32, 0, nullptr, DType::kF64,
                         nullptr, nullptr, nullptr));
  BadIndex bad;
  EXPECT_TRUE(ScatterAdd(nullptr, 2, 0, 2, idx, IndexType::kI64, 2, upd, DType::kF32, nullptr,
                         nullptr, &bad));
  EXPECT_EQ(0, bad.position);  // every index is out of range of an empty axis
}

}  // namespace
}  // namespace kernels
}  // namespace shp
