// take_weighted against a plain reference of its definition (a multiply then an add per term,
// in increasing t), bit for bit, on every compiled Highway target this CPU runs: f32 and f64,
// int32 and int64 tables, rows (inner > 1, lengths around the vector widths) and gathers
// (inner == 1, m around the vector widths and past a work block), k = 0 .. 5, sizes 0 and 1,
// 1-3 threads, invalid indices (clamped, reported at the first position), refused arguments.
#include "cc/kernels/take_weighted.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

struct Case {
  int64_t outer, n, inner, m, k;
};

template <class T>
std::vector<T> Reference(const std::vector<T>& x, const Case& c, const std::vector<int64_t>& idx,
                         const std::vector<T>& w) {
  std::vector<T> y(static_cast<size_t>(c.outer * c.m * c.inner), T(0));
  for (int64_t o = 0; o < c.outer; ++o) {
    for (int64_t j = 0; j < c.m; ++j) {
      for (int64_t i = 0; i < c.inner; ++i) {
        T acc = 0;
        for (int64_t t = 0; t < c.k; ++t) {
          int64_t v = idx[static_cast<size_t>(j * c.k + t)];
          v = v < 0 ? 0 : (v >= c.n ? c.n - 1 : v);
          volatile T p = w[static_cast<size_t>(j * c.k + t)] *
                         x[static_cast<size_t>((o * c.n + v) * c.inner + i)];
          acc = t == 0 ? T(p) : T(acc + p);
        }
        y[static_cast<size_t>((o * c.m + j) * c.inner + i)] = acc;
      }
    }
  }
  return y;
}

template <class T>
void Check(const Case& c, IndexType type, ThreadPool* pool, std::mt19937& rng,
           const std::vector<int64_t>* forced, const std::string& what) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<T> x(static_cast<size_t>(c.outer * c.n * c.inner));
  for (T& v : x) v = static_cast<T>(u(rng));
  std::vector<T> w(static_cast<size_t>(c.m * c.k));
  for (T& v : w) v = static_cast<T>(u(rng));
  std::vector<int64_t> idx(static_cast<size_t>(c.m * c.k));
  for (int64_t& v : idx) v = c.n > 0 ? static_cast<int64_t>(rng() % c.n) : 0;
  if (forced != nullptr) idx = *forced;
  std::vector<int32_t> idx32(idx.begin(), idx.end());
  const void* ip = type == IndexType::kI64 ? static_cast<const void*>(idx.data())
                                           : static_cast<const void*>(idx32.data());
  const size_t total = static_cast<size_t>(c.outer * c.m * c.inner);
  std::vector<T> y(total + 16, T(77));  // guard after the output
  BadIndex bad;
  bad.position = 123;
  const DType dt = sizeof(T) == 8 ? DType::kF64 : DType::kF32;
  ASSERT_TRUE(TakeWeighted(dt, x.data(), c.outer, c.n, c.inner, ip, type, w.data(), c.m, c.k,
                           y.data(), pool, &bad))
      << what;
  BadIndex want;
  for (size_t p = 0; p < idx.size(); ++p) {
    if (idx[p] < 0 || idx[p] >= c.n) {
      want = BadIndex{static_cast<int64_t>(p), idx[p]};
      break;
    }
  }
  EXPECT_EQ(want.position, bad.position) << what;
  EXPECT_EQ(want.index, bad.index) << what;
  if (c.n == 0) {
    for (size_t p = 0; p < total; ++p) ASSERT_EQ(T(0), y[p]) << what;
  } else {
    const std::vector<T> ref = Reference(x, c, idx, w);
    for (size_t p = 0; p < total; ++p) {
      ASSERT_EQ(0, std::memcmp(&ref[p], &y[p], sizeof(T)))
          << what << " at " << p << ": " << y[p] << " vs " << ref[p];
    }
  }
  for (size_t p = total; p < y.size(); ++p) ASSERT_EQ(T(77), y[p]) << what << " guard";
}

const Case kCases[] = {
    {1, 5, 1, 7, 2},      {3, 4, 17, 9, 2},   {2, 6, 33, 5, 1},    {1, 9, 16, 4, 4},
    {2, 3, 1, 37, 4},     {1, 70, 1, 129, 2}, {4, 8, 3, 11, 3},    {1, 1, 1, 1, 1},
    {1, 1, 8, 1, 5},      {2, 5, 7, 6, 0},    {0, 5, 4, 3, 2},     {2, 5, 0, 3, 2},
    {2, 5, 4, 0, 2},      {3, 0, 5, 4, 2},    {2, 50, 1, 2500, 2}, {1, 300, 1, 1500, 1},
    {64, 56, 56, 112, 2}, {5, 7, 2, 13, 5},   {1, 2, 1, 5, 3},     {3, 17, 64, 31, 4},
};

template <class T>
void CheckAll() {
  ThreadPool pool2(2), pool3(3);
  std::mt19937 rng(5);
  for (const Case& c : kCases) {
    for (IndexType type : {IndexType::kI32, IndexType::kI64}) {
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
        std::string what = "case " + std::to_string(c.outer) + "," + std::to_string(c.n) + "," +
                           std::to_string(c.inner) + "," + std::to_string(c.m) + "," +
                           std::to_string(c.k);
        Check<T>(c, type, p, rng, nullptr, what);
        if (testing::Test::HasFatalFailure()) return;
        const size_t terms = static_cast<size_t>(c.m * c.k);
        if (terms >= 3) {
          std::vector<int64_t> idx(terms);
          for (int64_t& v : idx) v = c.n > 0 ? static_cast<int64_t>(rng() % c.n) : 0;
          idx[terms - 1] = c.n;  // just past the end
          idx[terms / 3] = -1;   // negative: no wrap
          idx[2 * terms / 3] = c.n + 100;
          Check<T>(c, type, p, rng, &idx, what + " bad");
          if (testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

HWY_BEFORE_TEST(TakeWeightedTest);

TEST_P(TakeWeightedTest, MatchesReferenceF32) { CheckAll<float>(); }
TEST_P(TakeWeightedTest, MatchesReferenceF64) { CheckAll<double>(); }

// Results do not depend on the thread count on a case big enough to split (both layouts).
TEST_P(TakeWeightedTest, ThreadsGiveTheSameBits) {
  std::mt19937 rng(9);
  for (const Case& c : {Case{64, 56, 56, 112, 2}, Case{64 * 112, 56, 1, 112, 4}}) {
    std::vector<float> x(static_cast<size_t>(c.outer * c.n * c.inner));
    for (float& v : x) v = static_cast<float>(rng() % 1000) / 7.0f;
    std::vector<float> w(static_cast<size_t>(c.m * c.k));
    for (float& v : w) v = static_cast<float>(rng() % 100) / 13.0f - 3.0f;
    std::vector<int64_t> idx(static_cast<size_t>(c.m * c.k));
    for (int64_t& v : idx) v = static_cast<int64_t>(rng() % c.n);
    const size_t total = static_cast<size_t>(c.outer * c.m * c.inner);
    std::vector<float> y1(total), y2(total), y3(total);
    ThreadPool p2(2), p3(3);
    ASSERT_TRUE(TakeWeighted(DType::kF32, x.data(), c.outer, c.n, c.inner, idx.data(),
                             IndexType::kI64, w.data(), c.m, c.k, y1.data(), nullptr, nullptr));
    ASSERT_TRUE(TakeWeighted(DType::kF32, x.data(), c.outer, c.n, c.inner, idx.data(),
                             IndexType::kI64, w.data(), c.m, c.k, y2.data(), &p2, nullptr));
    ASSERT_TRUE(TakeWeighted(DType::kF32, x.data(), c.outer, c.n, c.inner, idx.data(),
                             IndexType::kI64, w.data(), c.m, c.k, y3.data(), &p3, nullptr));
    EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), total * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(y1.data(), y3.data(), total * sizeof(float)));
  }
}

TEST(TakeWeightedArgs, Refused) {
  const float x[3] = {1, 2, 3}, w[2] = {1, 1};
  const int64_t idx[2] = {0, 1};
  float y[3] = {};
  EXPECT_FALSE(
      TakeWeighted(DType::kI32, x, 1, 3, 1, idx, IndexType::kI64, w, 1, 2, y, nullptr, nullptr));
  EXPECT_FALSE(
      TakeWeighted(DType::kF32, x, -1, 3, 1, idx, IndexType::kI64, w, 1, 2, y, nullptr, nullptr));
  EXPECT_FALSE(TakeWeighted(DType::kF32, x, 1, 3, 1, idx, static_cast<IndexType>(5), w, 1, 2, y,
                            nullptr, nullptr));
  EXPECT_FALSE(TakeWeighted(DType::kF32, x, 1, 3, 1, nullptr, IndexType::kI64, w, 1, 2, y, nullptr,
                            nullptr));
  EXPECT_FALSE(TakeWeighted(DType::kF32, x, 1, 3, 1, idx, IndexType::kI64, w, 1, 2, nullptr,
                            nullptr, nullptr));
  // k = 0: zeros; a NaN weight times anything is NaN (no term is skipped).
  float z[2] = {5, 5};
  EXPECT_TRUE(TakeWeighted(DType::kF32, x, 1, 3, 1, nullptr, IndexType::kI64, nullptr, 2, 0, z,
                           nullptr, nullptr));
  EXPECT_EQ(0.0f, z[0]);
  EXPECT_EQ(0.0f, z[1]);
  const float wn[2] = {0.0f, NAN};
  EXPECT_TRUE(
      TakeWeighted(DType::kF32, x, 1, 3, 1, idx, IndexType::kI64, wn, 1, 2, y, nullptr, nullptr));
  EXPECT_TRUE(std::isnan(y[0]));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
