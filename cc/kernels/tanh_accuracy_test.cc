// Accuracy of the f32 tanh, exp and logistic kernels (VTanhF32, Highway's Exp and VLogisticF32 in
// elementwise_ops-inl.h) over the f32 inputs, on every Highway target compiled in and supported
// by this CPU. Two targets run this file:
//   elementwise_tanh_test (regular): every 4099th bit pattern (1,047,804 inputs spread over
//     every exponent and both signs) plus the special values;
//   elementwise_tanh_exhaustive_test (size enormous, tag manual): all 2^32 bit patterns.
// Also: a large tanh chain is bit-identical across thread counts.
// The references are computed in double (glibc: < 1 ulp of double, ~2^-29 ulp of f32), and the
// bound is the documented 2 ulp of each kernel (elementwise.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/elementwise_test_util.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

constexpr double kMaxUlps = 2.0;

struct Worst {
  double ulps = 0;
  float x = 0;
  float got = 0;
  uint64_t failures = 0;  // above kMaxUlps, wrong NaN, or a zero with the wrong sign
};

// |got - want| in ulps of f32 at want (a finite double), as UlpError<float> but without long
// double arithmetic (the exhaustive run makes 2^32 of these); NaN meets NaN only.
double UlpErrorF32(float got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : 1e30;
  uint64_t bits = 0;
  memcpy(&bits, &want, 8);
  const int e = std::max(static_cast<int>((bits >> 52) & 0x7ff) - 1023, -126);  // f32 binade
  const uint64_t ulp_bits = static_cast<uint64_t>(e - 23 + 1023) << 52;
  double ulp = 0;
  memcpy(&ulp, &ulp_bits, 8);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

// The exact value of op at x, in double.
double Reference(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kExp:
      return std::exp(x);
    case UnaryOp::kLogistic: {
      // Both forms avoid 1 + e^(-x) overflowing; each is exact to double rounding.
      if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
      const double e = std::exp(x);
      return e / (1.0 + e);
    }
    default:
      ADD_FAILURE() << "no reference for op " << static_cast<int>(op);
      return 0;
  }
}

const char* OpName(UnaryOp op) {
  return op == UnaryOp::kTanh ? "tanh" : op == UnaryOp::kExp ? "exp" : "logistic";
}

// Error in ulps of got against want, where want may lie beyond the f32 range: a value that
// rounds to +-inf in f32 must come out as that infinity.
double ErrorF32(float got, double want) {
  const float want_f = static_cast<float>(want);
  if (std::isinf(want_f)) return got == want_f ? 0 : 1e30;
  return UlpErrorF32(got, want);
}

// Error of op over the bit patterns first, first + step, ... below end (chunks of 2^20
// inputs; chunks spread over `pool`).
Worst CheckPatterns(UnaryOp op, uint64_t first, uint64_t end, uint64_t step, ThreadPool* pool) {
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  const uint64_t count = (end - first + step - 1) / step;
  const int64_t chunks = static_cast<int64_t>((count + kChunk - 1) / kChunk);
  std::mutex mu;
  Worst all;
  ParallelFor(pool, chunks, 1, [&](int64_t c0, int64_t c1) {
    Worst w;
    std::vector<float> x;
    double want_abs = 0;
    for (int64_t c = c0; c < c1; ++c) {
      const uint64_t k0 = static_cast<uint64_t>(c) * kChunk;
      const uint64_t k1 = std::min(count, k0 + kChunk);
      x.resize(k1 - k0);
      for (uint64_t k = k0; k < k1; ++k) {
        // Index j = first + k * step stands for magnitude j / 2 with the sign bit j % 2, so
        // the two signs of a magnitude are neighbours when step == 1; it is a bijection on the
        // 2^32 patterns.
        const uint64_t j = first + k * step;
        const uint32_t bits = static_cast<uint32_t>((j >> 1) | ((j & 1) << 31));
        memcpy(&x[k - k0], &bits, 4);
      }
      // One call per chunk, single-threaded (the pool runs chunks).
      const std::vector<float> got = RunUnary(op, x);
      for (size_t i = 0; i < x.size(); ++i) {
        double want;
        if (op == UnaryOp::kTanh) {
          // tanh is odd (and so is double tanh): each magnitude's reference serves both signs.
          if (i == 0 || std::fabs(x[i]) != std::fabs(x[i - 1])) {
            want_abs = std::tanh(std::fabs(static_cast<double>(x[i])));
          }
          want = std::signbit(x[i]) ? -want_abs : want_abs;
        } else {
          want = Reference(op, static_cast<double>(x[i]));
        }
        const double err = ErrorF32(got[i], want);
        const bool bad =
            !(err <= kMaxUlps) || (want == 0 && std::signbit(got[i]) != std::signbit(want));
        if (bad) ++w.failures;
        if (bad && w.failures <= 3) {
          ADD_FAILURE() << SimdTargetName() << " " << OpName(op) << "(" << x[i] << ") = " << got[i]
                        << ", want " << want << " (" << err << " ulp)";
        }
        if (std::isfinite(err) && err > w.ulps) w = Worst{err, x[i], got[i], w.failures};
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    if (w.ulps > all.ulps) {
      all.ulps = w.ulps;
      all.x = w.x;
      all.got = w.got;
    }
    all.failures += w.failures;
  });
  return all;
}

void Print(UnaryOp op, const char* what, const Worst& w) {
  std::printf("%s f32 %s, %s: max %.4f ulp at x = %.9g (got %.9g), %llu above %.1f ulp\n",
              SimdTargetName(), OpName(op), what, w.ulps, static_cast<double>(w.x),
              static_cast<double>(w.got), static_cast<unsigned long long>(w.failures), kMaxUlps);
}

void CheckSample(UnaryOp op) {
  ThreadPool pool(2);
  const Worst w = CheckPatterns(op, 0, uint64_t{1} << 32, 4099, &pool);
  Print(op, "every 4099th bit pattern", w);
  EXPECT_EQ(0u, w.failures);
  EXPECT_LE(w.ulps, kMaxUlps);
}

void CheckAll(UnaryOp op) {
  ThreadPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const Worst w = CheckPatterns(op, 0, uint64_t{1} << 32, 1, &pool);
  Print(op, "all 2^32 inputs", w);
  EXPECT_EQ(0u, w.failures);
  EXPECT_LE(w.ulps, kMaxUlps);
}

HWY_BEFORE_TEST(TanhAccuracyTest);

TEST_P(TanhAccuracyTest, StratifiedSampleWithinTwoUlps) { CheckSample(UnaryOp::kTanh); }
TEST_P(TanhAccuracyTest, ExpStratifiedSampleWithinTwoUlps) { CheckSample(UnaryOp::kExp); }
TEST_P(TanhAccuracyTest, LogisticStratifiedSampleWithinTwoUlps) { CheckSample(UnaryOp::kLogistic); }

TEST_P(TanhAccuracyTest, SpecialValuesAndRegionEdges) {
  const float kSmall = 0.5625f;  // where the kernel switches from the polynomial to exp
  std::vector<float> x = {0.0f,
                          -0.0f,
                          kInfF,
                          -kInfF,
                          kNaNF,
                          9.0f,
                          -9.0f,
                          1e-30f,
                          -1e-45f,
                          std::numeric_limits<float>::max(),
                          std::nextafter(kSmall, 0.0f),
                          kSmall,
                          std::nextafter(kSmall, 1.0f)};
  const std::vector<float> got = RunUnary(UnaryOp::kTanh, x);
  EXPECT_EQ(0.0f, got[0]);
  EXPECT_FALSE(std::signbit(got[0]));
  EXPECT_EQ(0.0f, got[1]);
  EXPECT_TRUE(std::signbit(got[1]));
  EXPECT_EQ(1.0f, got[2]);
  EXPECT_EQ(-1.0f, got[3]);
  EXPECT_TRUE(std::isnan(got[4]));
  for (size_t i = 5; i < x.size(); ++i) {
    EXPECT_LE(UlpError(got[i], static_cast<LD>(std::tanh(static_cast<double>(x[i])))), kMaxUlps)
        << "tanh(" << x[i] << ") = " << got[i];
  }
}

// tanh(a*x + b) * c over a large array (many tiles, split across threads) gives the same bits
// with 1, 2 and 3 threads.
TEST_P(TanhAccuracyTest, LargeChainIsBitIdenticalAcrossThreadCounts) {
  constexpr size_t kN = (size_t{1} << 20) + 77;
  std::mt19937 rng(7);
  std::vector<std::vector<float>> v;
  for (int i = 0; i < 4; ++i) v.push_back(RandomVec<float>(kN, rng, -3, 3));
  ElementwiseProgram p;
  const int ia = p.Input(0, DType::kF32), ix = p.Input(1, DType::kF32);
  const int ib = p.Input(2, DType::kF32), ic = p.Input(3, DType::kF32);
  p.AddOutput(p.Binary(
      BinaryOp::kMul,
      p.Unary(UnaryOp::kTanh, p.Binary(BinaryOp::kAdd, p.Binary(BinaryOp::kMul, ia, ix), ib)), ic));
  const int64_t shape[1] = {static_cast<int64_t>(kN)};
  ElementwiseInput in[4] = {{v[0].data(), nullptr},
                            {v[1].data(), nullptr},
                            {v[2].data(), nullptr},
                            {v[3].data(), nullptr}};
  std::vector<float> want(kN);
  void* outs[1] = {want.data()};
  ASSERT_TRUE(EvalElementwise(p, 1, shape, in, 4, outs, 1, nullptr));
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    std::vector<float> got(kN, -7.0f);
    outs[0] = got.data();
    ASSERT_TRUE(EvalElementwise(p, 1, shape, in, 4, outs, 1, &pool));
    EXPECT_EQ(0, memcmp(want.data(), got.data(), kN * sizeof(float))) << threads << " threads";
  }
}

// Where exp and logistic switch from the SIMD path to libm (RangeOf in elementwise_ops-inl.h),
// at the ends of the f32 range, and the special values.
TEST_P(TanhAccuracyTest, ExpAndLogisticSpecialValuesAndRangeEdges) {
  const std::vector<float> x = {0.0f,
                                -0.0f,
                                kInfF,
                                -kInfF,
                                kNaNF,
                                -87.0f,
                                88.0f,
                                -80.0f,
                                -87.5f,
                                88.5f,
                                88.8f,
                                -104.f,
                                -150.f,
                                1e-30f,
                                -1e-45f,
                                std::nextafter(-80.0f, 0.0f),
                                std::nextafter(-80.0f, -81.0f),
                                std::numeric_limits<float>::max(),
                                -std::numeric_limits<float>::max()};
  const std::vector<float> e = RunUnary(UnaryOp::kExp, x);
  const std::vector<float> s = RunUnary(UnaryOp::kLogistic, x);
  EXPECT_EQ(1.0f, e[0]);
  EXPECT_EQ(1.0f, e[1]);
  EXPECT_EQ(kInfF, e[2]);
  EXPECT_EQ(0.0f, e[3]);
  EXPECT_TRUE(std::isnan(e[4]));
  EXPECT_EQ(0.5f, s[0]);
  EXPECT_EQ(0.5f, s[1]);
  EXPECT_EQ(1.0f, s[2]);
  EXPECT_EQ(0.0f, s[3]);
  EXPECT_TRUE(std::isnan(s[4]));
  for (size_t i = 5; i < x.size(); ++i) {
    const double xd = static_cast<double>(x[i]);
    EXPECT_LE(ErrorF32(e[i], Reference(UnaryOp::kExp, xd)), kMaxUlps)
        << "exp(" << x[i] << ") = " << e[i];
    EXPECT_LE(ErrorF32(s[i], Reference(UnaryOp::kLogistic, xd)), kMaxUlps)
        << "logistic(" << x[i] << ") = " << s[i];
  }
}

TEST_P(TanhAccuracyTest, ExhaustiveAllFloatInputs) { CheckAll(UnaryOp::kTanh); }
TEST_P(TanhAccuracyTest, ExpExhaustiveAllFloatInputs) { CheckAll(UnaryOp::kExp); }
TEST_P(TanhAccuracyTest, LogisticExhaustiveAllFloatInputs) { CheckAll(UnaryOp::kLogistic); }

}  // namespace
}  // namespace kernels
}  // namespace shp
