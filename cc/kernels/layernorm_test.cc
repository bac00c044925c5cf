// Tests of layer-norm on every compiled Highway target (dispatch forced to each).
#include "cc/kernels/layernorm.h"

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

// Row `r` of layer-norm in long double, the reference both tests compare with.
template <class T>
std::vector<long double> ReferenceRow(const std::vector<T>& x, int64_t r, int64_t cols,
                                      const T* scale, const T* bias, double eps) {
  long double mean = 0, var = 0;
  for (int64_t j = 0; j < cols; ++j) mean += x[static_cast<size_t>(r * cols + j)];
  mean /= cols;
  for (int64_t j = 0; j < cols; ++j) {
    const long double dv = x[static_cast<size_t>(r * cols + j)] - mean;
    var += dv * dv;
  }
  var /= cols;
  const long double rstd = 1.0L / std::sqrt(var + eps);
  std::vector<long double> want(static_cast<size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) {
    long double w = (x[static_cast<size_t>(r * cols + j)] - mean) * rstd;
    if (scale != nullptr) w *= scale[j];
    if (bias != nullptr) w += bias[j];
    want[static_cast<size_t>(j)] = w;
  }
  return want;
}

template <class T>
void CheckRandom(bool use_scale, bool use_bias, double offset, ThreadPool* pool) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-1, 1);
  const DType dt = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  for (int iter = 0; iter < 60; ++iter) {
    const int64_t rows = rng() % 5;
    const int64_t cols =
        iter < 40 ? static_cast<int64_t>(rng() % 70) : static_cast<int64_t>(rng() % 3000);
    std::vector<T> x(static_cast<size_t>(rows * cols)), g(static_cast<size_t>(cols)),
        b(static_cast<size_t>(cols));
    for (auto& v : x) v = static_cast<T>(offset + u(rng));
    for (auto& v : g) v = static_cast<T>(1 + u(rng));
    for (auto& v : b) v = static_cast<T>(u(rng));
    const double eps = 1e-5;
    std::vector<T> got(x.size() + 1, T(3));
    LayerNorm(dt, x.data(), rows, cols, use_scale ? g.data() : nullptr,
              use_bias ? b.data() : nullptr, eps, got.data(), pool);
    ASSERT_EQ(T(3), got.back());
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<long double> ref = ReferenceRow(x, r, cols, use_scale ? g.data() : nullptr,
                                                        use_bias ? b.data() : nullptr, eps);
      for (int64_t j = 0; j < cols; ++j) {
        const long double want = ref[static_cast<size_t>(j)];
        // The input itself is rounded to T: with a large offset, x - mean carries the input's
        // absolute rounding, amplified by rstd.
        const double tol =
            sizeof(T) == 4 ? 2e-5 * (1 + std::fabs(offset)) : 1e-11 * (1 + std::fabs(offset));
        EXPECT_NEAR(static_cast<double>(want),
                    static_cast<double>(got[static_cast<size_t>(r * cols + j)]), tol)
            << "iter " << iter << " r " << r << " j " << j << " cols " << cols;
      }
    }
  }
}

HWY_BEFORE_TEST(LayerNormTest);

TEST_P(LayerNormTest, MatchesReference) {
  for (int mask = 0; mask < 4; ++mask) {
    CheckRandom<float>(mask & 1, mask & 2, 0.0, nullptr);
    CheckRandom<double>(mask & 1, mask & 2, 0.0, nullptr);
  }
}

// IEEE propagation (layernorm.h: a NaN or inf in a row makes that row NaN): specials in x
// poison exactly their rows; a NaN in scale or bias poisons its column; an infinite bias or
// scale gives +-inf in its column (NaN where the row is already NaN). Other elements match a
// long double reference. Columns hit the SIMD body and tails (1, 7, 33, 300, 1025).
template <class T>
void CheckSpecials(ThreadPool* pool) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  const DType dt = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t cols : {1, 7, 33, 300, 1025}) {
    const int64_t rows = 6;
    std::vector<T> x(static_cast<size_t>(rows * cols)), g(static_cast<size_t>(cols)),
        b(static_cast<size_t>(cols));
    for (auto& v : x) v = static_cast<T>(u(rng));
    for (auto& v : g) v = static_cast<T>(1 + u(rng));
    for (auto& v : b) v = static_cast<T>(u(rng));
    // Row 1: NaN, row 3: +inf, row 4: -inf and +inf (in the last, tail, column).
    x[static_cast<size_t>(1 * cols + rng() % cols)] = nan;
    x[static_cast<size_t>(3 * cols + rng() % cols)] = inf;
    x[static_cast<size_t>(4 * cols)] = -inf;
    x[static_cast<size_t>(4 * cols + cols - 1)] = inf;
    if (cols >= 4) {
      g[1] = nan;
      b[2] = inf;
      g[3] = -inf;
    }
    for (bool affine : {false, true}) {
      const T* scale = affine ? g.data() : nullptr;
      const T* bias = affine ? b.data() : nullptr;
      const double eps = 1e-5;
      std::vector<T> got(x.size(), T(3));
      LayerNorm(dt, x.data(), rows, cols, scale, bias, eps, got.data(), pool);
      int failures = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<long double> ref = ReferenceRow(x, r, cols, scale, bias, eps);
        for (int64_t j = 0; j < cols; ++j) {
          const long double want = ref[static_cast<size_t>(j)];
          const T v = got[static_cast<size_t>(r * cols + j)];
          bool ok;
          if (std::isnan(want)) {
            ok = std::isnan(v);
          } else if (std::isinf(want)) {
            ok = static_cast<long double>(v) == want;
          } else {
            ok = std::fabs(static_cast<double>(want) - static_cast<double>(v)) <=
                 (sizeof(T) == 4 ? 2e-5 : 1e-11);
          }
          if (!ok && ++failures <= 5) {
            ADD_FAILURE() << "cols " << cols << (affine ? " affine" : "") << " at (" << r << ","
                          << j << "): got " << v << ", want " << static_cast<double>(want);
          }
        }
        // The poisoned rows are NaN everywhere, the others nowhere outside the NaN columns.
        const bool poisoned = r == 1 || r == 3 || r == 4;
        EXPECT_EQ(poisoned, std::isnan(got[static_cast<size_t>(r * cols + cols - 1)]) != 0)
            << "cols " << cols << " row " << r;
      }
      EXPECT_EQ(0, failures);
    }
  }
}

TEST_P(LayerNormTest, NaNAndInfPropagateAsIEEE) {
  ThreadPool pool(2);
  CheckSpecials<float>(nullptr);
  CheckSpecials<double>(nullptr);
  CheckSpecials<float>(&pool);
}

TEST_P(LayerNormTest, StableWithLargeMean) {
  // Mean 1e4, spread 1: a one-pass E[x^2] - E[x]^2 in float would lose everything.
  CheckRandom<float>(true, true, 1e4, nullptr);
  CheckRandom<double>(true, true, 1e4, nullptr);
  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 10000.0f + (i % 2 ? 1.0f : -1.0f);
  std::vector<float> y(x.size());
  LayerNorm(DType::kF32, x.data(), 1, 1024, nullptr, nullptr, 0.0, y.data(), nullptr);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(i % 2 ? 1.0f : -1.0f, y[i], 1e-5f);
  // Constant row: variance 0, output 0 (no NaN).
  std::vector<float> c(33, 7.0f);
  LayerNorm(DType::kF32, c.data(), 1, 33, nullptr, nullptr, 1e-5, c.data(), nullptr);
  for (float v : c) EXPECT_EQ(0.0f, v);
}

TEST_P(LayerNormTest, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-3, 3);
  const int64_t rows = 500, cols = 333;
  std::vector<float> x(static_cast<size_t>(rows * cols)), g(static_cast<size_t>(cols), 1.5f),
      b(static_cast<size_t>(cols), 0.25f);
  for (auto& v : x) v = u(rng);
  std::vector<float> ref(x.size()), got(x.size());
  LayerNorm(DType::kF32, x.data(), rows, cols, g.data(), b.data(), 1e-5, ref.data(), nullptr);
  for (int t : {1, 2, 4}) {
    ThreadPool pool(t);
    LayerNorm(DType::kF32, x.data(), rows, cols, g.data(), b.data(), 1e-5, got.data(), &pool);
    EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), x.size() * sizeof(float)));
  }
  CheckRandom<float>(true, false, 0.0, nullptr);
}

TEST(LayerNorm, RejectsBadArguments) {
  int64_t i = 0;
  EXPECT_FALSE(LayerNorm(DType::kI64, &i, 1, 1, nullptr, nullptr, 1e-5, &i, nullptr));
  EXPECT_EQ(0, i);  // nothing written
  float f = 0;
  EXPECT_FALSE(LayerNorm(DType::kF32, &f, 1, -1, nullptr, nullptr, 1e-5, &f, nullptr));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
