// TopK against a reference: a stable sort of (key, index) pairs per row, NaN the greatest.
#include "cc/kernels/top_k.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {
namespace {

// Reference order: NaN ranks above every number; ties by index (a stable sort).
template <typename T>
void Reference(const std::vector<T>& x, int64_t outer, int64_t n, int64_t inner, int64_t k,
               bool largest, std::vector<T>* vals, std::vector<int64_t>* idx) {
  vals->assign(static_cast<size_t>(outer * k * inner), T{});
  idx->assign(vals->size(), -1);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) order[static_cast<size_t>(j)] = j;
      auto at = [&](int64_t j) { return x[static_cast<size_t>((o * n + j) * inner + i)]; };
      auto rank = [&](int64_t j) {  // (is NaN, value) compared lexicographically
        const T v = at(j);
        return std::make_pair(std::isnan(static_cast<double>(v)) ? 1 : 0,
                              std::isnan(static_cast<double>(v)) ? 0.0 : static_cast<double>(v));
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return largest ? rank(a) > rank(b) : rank(a) < rank(b);
      });
      for (int64_t j = 0; j < k; ++j) {
        const size_t d = static_cast<size_t>((o * k + j) * inner + i);
        (*idx)[d] = order[static_cast<size_t>(j)];
        (*vals)[d] = at(order[static_cast<size_t>(j)]);
      }
    }
  }
}

template <typename T>
void Check(DType dt, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest,
           ThreadPool* pool, std::mt19937* rng, bool specials) {
  std::vector<T> x(static_cast<size_t>(outer * n * inner));
  std::uniform_int_distribution<int> small(-3, 3);  // many ties
  for (T& v : x) v = static_cast<T>(small(*rng));
  if constexpr (std::is_floating_point<T>::value) {
    if (specials) {
      const T s[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                     -std::numeric_limits<T>::infinity(), T(-0.0), T(0.0)};
      for (T& v : x) {
        if ((*rng)() % 3 == 0) v = s[(*rng)() % 5];
      }
    }
  }
  std::vector<T> want_v, got_v(static_cast<size_t>(outer * k * inner));
  std::vector<int64_t> want_i, got_i(got_v.size());
  Reference(x, outer, n, inner, k, largest, &want_v, &want_i);
  ASSERT_TRUE(TopK(dt, x.data(), outer, n, inner, k, largest, got_v.data(), got_i.data(), pool));
  ASSERT_EQ(got_i, want_i) << outer << "x" << n << "x" << inner << " k=" << k;
  ASSERT_EQ(std::memcmp(got_v.data(), want_v.data(), got_v.size() * sizeof(T)), 0);
  // Either result alone gives the same.
  std::vector<int64_t> only_i(got_i.size());
  ASSERT_TRUE(TopK(dt, x.data(), outer, n, inner, k, largest, nullptr, only_i.data(), pool));
  EXPECT_EQ(only_i, want_i);
}

TEST(TopK, MatchesStableSortOnEveryDtype) {
  std::mt19937 rng(7);
  ThreadPool pool(4);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
    for (bool largest : {true, false}) {
      for (auto dims : std::vector<std::vector<int64_t>>{{1, 1, 1, 1},
                                                         {2, 5, 3, 2},
                                                         {3, 17, 1, 17},
                                                         {1, 9, 4, 0},
                                                         {4, 64, 5, 7},
                                                         {2, 300, 130, 3},
                                                         {0, 4, 2, 2},
                                                         {2, 0, 3, 0}}) {
        const int64_t o = dims[0], n = dims[1], in = dims[2], k = dims[3];
        Check<float>(DType::kF32, o, n, in, k, largest, p, &rng, true);
        Check<double>(DType::kF64, o, n, in, k, largest, p, &rng, true);
        Check<int32_t>(DType::kI32, o, n, in, k, largest, p, &rng, false);
        Check<int64_t>(DType::kI64, o, n, in, k, largest, p, &rng, false);
      }
    }
  }
}

TEST(TopK, NanIsGreatestAndZerosAreEqual) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1.0f, nan, -0.0f, 0.0f, nan, 5.0f};
  std::vector<float> v(6);
  std::vector<int64_t> i(6);
  ASSERT_TRUE(TopK(DType::kF32, x.data(), 1, 6, 1, 6, true, v.data(), i.data(), nullptr));
  EXPECT_EQ(i, (std::vector<int64_t>{1, 4, 5, 0, 2, 3}));
  ASSERT_TRUE(TopK(DType::kF32, x.data(), 1, 6, 1, 6, false, v.data(), i.data(), nullptr));
  EXPECT_EQ(i, (std::vector<int64_t>{2, 3, 0, 5, 1, 4}));
}

TEST(TopK, RejectsBadArguments) {
  const int32_t x[2] = {1, 2};
  int64_t i[2];
  EXPECT_FALSE(TopK(DType::kI32, x, 1, 2, 1, 3, true, nullptr, i, nullptr));  // k > n
  EXPECT_FALSE(TopK(DType::kI32, x, 1, 2, 1, -1, true, nullptr, i, nullptr));
  EXPECT_FALSE(TopK(DType::kBool, x, 1, 2, 1, 1, true, nullptr, i, nullptr));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
