// Tests of softmax on every compiled Highway target (dispatch forced to each).
#include "cc/kernels/softmax.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

// long double reference of softmax along the middle axis (numpy formula).
template <class T>
std::vector<long double> Reference(const std::vector<T>& x, int64_t outer, int64_t axis,
                                   int64_t inner) {
  std::vector<long double> out(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      long double mx = -INFINITY;
      bool nan = false;
      for (int64_t k = 0; k < axis; ++k) {
        const long double v = x[static_cast<size_t>((o * axis + k) * inner + j)];
        if (std::isnan(v)) nan = true;
        mx = std::max(mx, v);
      }
      long double sum = 0;
      for (int64_t k = 0; k < axis; ++k) {
        sum += std::exp(
            static_cast<long double>(x[static_cast<size_t>((o * axis + k) * inner + j)]) - mx);
      }
      for (int64_t k = 0; k < axis; ++k) {
        const size_t i = static_cast<size_t>((o * axis + k) * inner + j);
        out[i] = nan ? NAN : std::exp(static_cast<long double>(x[i]) - mx) / sum;
      }
    }
  }
  return out;
}

template <class T>
void CheckRandom(ThreadPool* pool) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-20, 20);
  for (int iter = 0; iter < 80; ++iter) {
    const int64_t outer = rng() % 6;
    const int64_t axis =
        iter < 60 ? static_cast<int64_t>(rng() % 80) : static_cast<int64_t>(rng() % 1500);
    const int64_t inner =
        iter % 3 == 0 ? 1 + static_cast<int64_t>(rng() % (iter < 60 ? 40 : 5)) : 1;
    std::vector<T> x(static_cast<size_t>(outer * axis * inner));
    for (auto& v : x) v = static_cast<T>(u(rng));
    if (iter % 7 == 3 && !x.empty()) x[rng() % x.size()] = -std::numeric_limits<T>::infinity();
    if (iter % 11 == 5 && !x.empty()) x[rng() % x.size()] = std::numeric_limits<T>::quiet_NaN();
    if (iter % 13 == 6 && !x.empty()) x[rng() % x.size()] = std::numeric_limits<T>::infinity();
    const std::vector<long double> want = Reference(x, outer, axis, inner);
    std::vector<T> got(x.size() + 1, T(5));
    Softmax(DTypeOf<T>(), x.data(), outer, axis, inner, got.data(), pool);
    ASSERT_EQ(T(5), got.back());
    const double tol = sizeof(T) == 4 ? 3e-6 : 1e-13;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "iter " << iter << " i " << i;
      } else {
        EXPECT_NEAR(static_cast<double>(want[i]), static_cast<double>(got[i]),
                    tol * static_cast<double>(want[i]) + 1e-38)
            << "iter " << iter << " i " << i << " axis " << axis << " inner " << inner;
      }
    }
    // In place gives the same bits.
    std::vector<T> inplace = x;
    Softmax(DTypeOf<T>(), inplace.data(), outer, axis, inner, inplace.data(), pool);
    if (!x.empty()) {
      EXPECT_EQ(0, std::memcmp(inplace.data(), got.data(), x.size() * sizeof(T)));
    }
  }
}

HWY_BEFORE_TEST(SoftmaxTest);

TEST_P(SoftmaxTest, MatchesReferenceF32) { CheckRandom<float>(nullptr); }
TEST_P(SoftmaxTest, MatchesReferenceF64) { CheckRandom<double>(nullptr); }

TEST_P(SoftmaxTest, IsStableForLargeInputsAndSumsToOne) {
  std::vector<float> x = {1000.0f, 1001.0f, 1002.0f, -1000.0f};
  std::vector<float> y(4);
  Softmax(DType::kF32, x.data(), 1, 4, 1, y.data(), nullptr);
  EXPECT_NEAR(0.0900306, y[0], 1e-6);
  EXPECT_NEAR(0.2447285, y[1], 1e-6);
  EXPECT_NEAR(0.6652410, y[2], 1e-6);
  EXPECT_EQ(0.0f, y[3]);
  std::vector<float> row(1000, -3.0f);
  Softmax(DType::kF32, row.data(), 1, 1000, 1, row.data(), nullptr);
  for (float v : row) EXPECT_NEAR(1e-3, v, 1e-9);
}

// Causal-mask rows (row r keeps its first r + 1 entries, the rest -inf) take the vector path:
// masked entries are exactly 0, the others match the reference, every length and tail.
TEST_P(SoftmaxTest, MaskedRowsWithMinusInfinity) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-8, 8);
  for (int64_t n : {1, 2, 15, 16, 17, 31, 33, 256, 1000}) {
    std::vector<float> x(static_cast<size_t>(n * n));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        x[static_cast<size_t>(r * n + c)] = c <= r ? u(rng) : -INFINITY;
      }
    }
    const std::vector<long double> want = Reference(x, n, n, 1);
    std::vector<float> got(x.size());
    Softmax(DType::kF32, x.data(), n, n, 1, got.data(), nullptr);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        const size_t i = static_cast<size_t>(r * n + c);
        if (c > r) {
          ASSERT_EQ(0.0f, got[i]) << "n " << n << " row " << r << " col " << c;
        } else {
          ASSERT_NEAR(static_cast<double>(want[i]), got[i], 3e-6 * static_cast<double>(want[i]))
              << "n " << n << " row " << r << " col " << c;
        }
      }
    }
  }
}

TEST_P(SoftmaxTest, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-5, 5);
  for (int64_t inner : {1, 7}) {
    const int64_t outer = 300, axis = 257;
    std::vector<float> x(static_cast<size_t>(outer * axis * inner));
    for (auto& v : x) v = u(rng);
    std::vector<float> ref(x.size()), got(x.size());
    Softmax(DType::kF32, x.data(), outer, axis, inner, ref.data(), nullptr);
    for (int t : {1, 2, 3}) {
      ThreadPool pool(t);
      Softmax(DType::kF32, x.data(), outer, axis, inner, got.data(), &pool);
      EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), x.size() * sizeof(float)));
    }
  }
}

TEST(Softmax, RejectsBadArguments) {
  int32_t i = 0;
  EXPECT_FALSE(Softmax(DType::kI32, &i, 1, 1, 1, &i, nullptr));
  EXPECT_EQ(0, i);  // nothing written
  float f = 0;
  EXPECT_FALSE(Softmax(DType::kF32, &f, -1, 1, 1, &f, nullptr));
  EXPECT_FALSE(Softmax(DType::kF32, nullptr, 1, 1, 1, &f, nullptr));
  EXPECT_EQ(0.0f, f);
  EXPECT_TRUE(Softmax(DType::kF32, nullptr, 0, 5, 1, nullptr, nullptr));  // empty: no access
}

}  // namespace
}  // namespace kernels
}  // namespace shp
