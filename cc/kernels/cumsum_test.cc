// Tests of the cumulative sum on every compiled Highway target (dispatch forced to each).
#include "cc/kernels/cumsum.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

template <class T>
void CheckRandom(ThreadPool* pool) {
  std::mt19937 rng(31);
  for (int iter = 0; iter < 80; ++iter) {
    const int64_t outer = rng() % 5;
    int64_t axis = rng() % (iter < 60 ? 50 : 3000);
    const int64_t inner = iter % 2 ? 1 : 1 + static_cast<int64_t>(rng() % (iter < 70 ? 40 : 1100));
    if (iter >= 60 && inner > 1) axis = 1 + axis % 7;
    std::vector<T> x(static_cast<size_t>(outer * axis * inner));
    for (auto& v : x) {
      if (std::is_floating_point<T>::value)
        v = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(rng));
      else
        v = static_cast<T>(static_cast<int64_t>(rng()) * (sizeof(T) == 8 ? 1234567 : 1));  // wraps
    }
    std::vector<T> got(x.size() + 1, T(9));
    CumSum(DTypeOf<T>(), x.data(), outer, axis, inner, got.data(), pool);
    ASSERT_EQ(T(9), got.back());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        long double accf = 0;
        uint64_t acci = 0;
        for (int64_t k = 0; k < axis; ++k) {
          const size_t i = static_cast<size_t>((o * axis + k) * inner + j);
          if (std::is_floating_point<T>::value) {
            accf += x[i];
            EXPECT_NEAR(
                static_cast<double>(accf), static_cast<double>(got[i]),
                std::fabs(static_cast<double>(accf)) * (sizeof(T) == 4 ? 6e-8 : 1e-15) + 1e-12);
          } else {
            acci += static_cast<uint64_t>(static_cast<int64_t>(x[i]));
            EXPECT_EQ(static_cast<T>(acci), got[i]);
          }
        }
      }
    }
  }
}

HWY_BEFORE_TEST(CumSumTest);

TEST_P(CumSumTest, MatchesReference) {
  CheckRandom<float>(nullptr);
  CheckRandom<double>(nullptr);
  CheckRandom<int32_t>(nullptr);
  CheckRandom<int64_t>(nullptr);
}

// IEEE propagation along the axis: a NaN at (o, k, j) makes out[o][k' >= k][j] NaN and
// nothing else; +inf makes the rest of its column +inf until a -inf meets it (NaN from
// there). Shapes hit the row path (inner == 1), the SIMD column path and its tails
// (inner = 17, 1100), with threads. The reference is a long double running sum.
template <class T>
void CheckSpecials(ThreadPool* pool) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  std::mt19937 rng(41);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t shapes[][3] = {{1, 1, 1}, {1, 37, 1}, {3, 50, 1}, {2, 20, 17}, {2, 9, 1100}};
  for (const auto& s : shapes) {
    const int64_t outer = s[0], axis = s[1], inner = s[2];
    std::vector<T> x(static_cast<size_t>(outer * axis * inner));
    for (auto& v : x) v = static_cast<T>(u(rng));
    for (int r = 0; r < 6; ++r) {
      const T special[] = {nan, inf, -inf};
      x[rng() % x.size()] = special[r % 3];
    }
    // One column with +inf then -inf later: +inf, then NaN.
    if (axis >= 3) {
      const int64_t j = inner - 1;
      x[static_cast<size_t>((1 * inner) + j)] = inf;
      x[static_cast<size_t>((axis - 1) * inner + j)] = -inf;
    }
    std::vector<T> got(x.size(), T(5));
    CumSum(DTypeOf<T>(), x.data(), outer, axis, inner, got.data(), pool);
    int failures = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        long double acc = 0;
        for (int64_t k = 0; k < axis; ++k) {
          const size_t i = static_cast<size_t>((o * axis + k) * inner + j);
          acc += x[i];
          bool ok;
          if (std::isnan(acc)) {
            ok = std::isnan(got[i]);
          } else if (std::isinf(acc)) {
            ok = static_cast<long double>(got[i]) == acc;
          } else {
            ok = std::fabs(static_cast<double>(acc) - static_cast<double>(got[i])) <=
                 std::fabs(static_cast<double>(acc)) * (sizeof(T) == 4 ? 6e-8 : 1e-15) + 1e-12;
          }
          if (!ok && ++failures <= 5) {
            ADD_FAILURE() << "shape " << outer << "x" << axis << "x" << inner << " at (" << o << ","
                          << k << "," << j << "): got " << got[i] << ", want "
                          << static_cast<double>(acc);
          }
        }
      }
    }
    EXPECT_EQ(0, failures);
  }
}

TEST_P(CumSumTest, NaNAndInfPropagateAsIEEE) {
  ThreadPool pool(3);
  CheckSpecials<float>(nullptr);
  CheckSpecials<double>(nullptr);
  CheckSpecials<float>(&pool);
  CheckSpecials<double>(&pool);
  // Documented accumulation: f32 sums run in double and each output is rounded once, so a
  // prefix beyond FLT_MAX is +inf while later prefixes come back into range; f64 overflow
  // is final (inf - x = inf).
  const float f[] = {3e38f, 3e38f, -3e38f};
  float fo[3];
  CumSum(DType::kF32, f, 1, 3, 1, fo, nullptr);
  EXPECT_EQ(3e38f, fo[0]);
  EXPECT_EQ(std::numeric_limits<float>::infinity(), fo[1]);
  EXPECT_EQ(3e38f, fo[2]);
  // The same in the column path (inner > 1: vectors of double accumulators).
  const float f2[] = {3e38f, -3e38f, 3e38f, -3e38f, -3e38f, 3e38f};
  float fo2[6];
  CumSum(DType::kF32, f2, 1, 3, 2, fo2, nullptr);
  EXPECT_EQ(3e38f, fo2[0]);
  EXPECT_EQ(-3e38f, fo2[1]);
  EXPECT_EQ(std::numeric_limits<float>::infinity(), fo2[2]);
  EXPECT_EQ(-std::numeric_limits<float>::infinity(), fo2[3]);
  EXPECT_EQ(3e38f, fo2[4]);
  EXPECT_EQ(-3e38f, fo2[5]);
  const double d[] = {1e308, 1e308, -1e308};
  double dout[3];
  CumSum(DType::kF64, d, 1, 3, 1, dout, nullptr);
  EXPECT_EQ(1e308, dout[0]);
  EXPECT_EQ(std::numeric_limits<double>::infinity(), dout[1]);
  EXPECT_EQ(std::numeric_limits<double>::infinity(), dout[2]);
}

TEST_P(CumSumTest, F32AccumulatesInDouble) {
  std::vector<float> x(3, 1.0f);
  x[0] = 16777216.0f;  // 2^24: a float running sum would stay at 2^24
  std::vector<float> y(3);
  CumSum(DType::kF32, x.data(), 1, 3, 1, y.data(), nullptr);
  EXPECT_EQ(16777216.0f, y[0]);
  EXPECT_EQ(16777218.0f, y[2]);
}

TEST_P(CumSumTest, ThreadCountDoesNotChangeResultsAndInPlace) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t inner : {1, 3000}) {
    const int64_t outer = inner == 1 ? 64 : 8, axis = inner == 1 ? 5000 : 100;
    std::vector<float> x(static_cast<size_t>(outer * axis * inner));
    for (auto& v : x) v = u(rng);
    std::vector<float> ref(x.size()), got(x.size());
    CumSum(DType::kF32, x.data(), outer, axis, inner, ref.data(), nullptr);
    for (int t : {2, 3}) {
      ThreadPool pool(t);
      CumSum(DType::kF32, x.data(), outer, axis, inner, got.data(), &pool);
      EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), x.size() * sizeof(float)));
    }
    CumSum(DType::kF32, x.data(), outer, axis, inner, x.data(), nullptr);
    EXPECT_EQ(0, std::memcmp(ref.data(), x.data(), x.size() * sizeof(float)));
  }
}

TEST(CumSum, RejectsBool) {
  uint8_t b = 1;
  EXPECT_FALSE(CumSum(DType::kBool, &b, 1, 1, 1, &b, nullptr));
  EXPECT_EQ(1, b);  // nothing written
}

}  // namespace
}  // namespace kernels
}  // namespace shp
