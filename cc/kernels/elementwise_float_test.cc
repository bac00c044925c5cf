// Float ops of the fused elementwise kernels against exact long double values and numpy's own
// results. Every TEST_P runs once per Highway target compiled into the library and supported by
// this CPU (the dispatch is forced to each in turn).
#include "cc/kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"
#include "cc/kernels/elementwise_test_util.h"

namespace shp {
namespace kernels {
namespace {

HWY_BEFORE_TEST(ElementwiseFloatTest);

// Round half to even, written out (not nearbyint, which the kernels' scalar code uses).
LD RoundHalfEven(LD x) {
  if (!std::isfinite(x)) return x;
  const LD f = std::floor(x);
  const LD frac = x - f;  // exact: x and floor(x) are values of one float format
  LD r = f;
  if (frac > 0.5L || (frac == 0.5L && std::fmod(f, LD(2)) != 0)) r = f + 1;
  return r == 0 ? std::copysign(LD(0), x) : r;
}

LD ExactUnary(UnaryOp op, LD x) {
  switch (op) {
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kAbs:
      return std::fabs(x);
    case UnaryOp::kExp:
      return std::exp(x);
    case UnaryOp::kLog:
      return std::log(x);
    case UnaryOp::kLog1p:
      return std::log1p(x);
    case UnaryOp::kExpm1:
      return std::expm1(x);
    case UnaryOp::kSqrt:
      return std::sqrt(x);
    case UnaryOp::kRsqrt:
      return 1 / std::sqrt(x);
    case UnaryOp::kSin:
      return std::sin(x);
    case UnaryOp::kCos:
      return std::cos(x);
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kLogistic:
      return 1 / (1 + std::exp(-x));
    case UnaryOp::kFloor:
      return std::floor(x);
    case UnaryOp::kCeil:
      return std::ceil(x);
    case UnaryOp::kRound:
      return RoundHalfEven(x);
    case UnaryOp::kSign:
      return x > 0 ? 1 : (x < 0 ? -1 : x);
    case UnaryOp::kErf:
      return std::erf(x);
    case UnaryOp::kTan:
      return std::tan(x);
    case UnaryOp::kSinh:
      return std::sinh(x);
    case UnaryOp::kCosh:
      return std::cosh(x);
    case UnaryOp::kAsin:
      return std::asin(x);
    case UnaryOp::kAcos:
      return std::acos(x);
    case UnaryOp::kAtan:
      return std::atan(x);
    case UnaryOp::kAsinh:
      return std::asinh(x);
    case UnaryOp::kAcosh:
      return std::acosh(x);
    case UnaryOp::kAtanh:
      return std::atanh(x);
    case UnaryOp::kNot:
      break;
  }
  return std::numeric_limits<LD>::quiet_NaN();
}

// Accuracy of each float unary op, in ulps of the exact value. 0.5 = correctly rounded (exact
// or one IEEE operation). rsqrt is two IEEE roundings: the relative error 2^-p of sqrt passes
// to 1/sqrt, up to 1 ulp of the result, plus 0.5 for the division: 1.5. The SIMD polynomials
// have Highway's documented bounds (hwy/contrib/math/math-inl.h: Exp 1, Expm1 4, Log 4, Log1p
// 2, Sin/Cos 3, Tanh 4), which Highway measures against libm's result; libm is itself up to
// ~0.5 ulp from the exact value, hence + 0.5. f32 tanh is the kernels' own (VTanhF32, 1.42 ulp
// over all f32 inputs; tanh_accuracy_test.cc holds it to 2), inside the same 4.5 here.
// logistic = 1 / (1 + Exp(-x)): Exp's 1.5 plus the two roundings of the add and the division.
// Lanes outside the SIMD ranges use libm (< 1 ulp in glibc). Worst errors measured on 4M
// random inputs per op (AVX2, f32 / f64):
// exp 1.002 / 1.006, expm1 3.47 / 3.97, log 0.89 / 0.90, log1p 2.47 / 2.43, sin 2.41 / 2.60,
// cos 2.35 / 2.66, tanh 1.11 / 2.29, logistic 2.43 / 2.33, rsqrt 1.48 / 1.49.
// tan..atanh: tan is libm's tanf/tan per lane (glibc's tanf is not correctly rounded); the
// others Highway's (documented vs libm: Asin/Acos 2, Atan/Asinh/Acosh/Atanh 3, Sinh 4 ulp),
// cosh Exp plus two roundings (CoshOf). Worst measured over every 61st f32 bit pattern plus
// 2^18 points of each op's region (the test samples every 2039th), f32 / f64, the same on
// AVX2, SSE4 and SSSE3 (SCALAR sampled at every 1021st): tan 1.39 / 0.55, sinh 3.15 / 2.66,
// cosh 1.78 / 1.60, asin 2.38 / 2.29, acos 1.25 / 1.16, atan 2.63 / 1.72, asinh 3.08 / 2.40,
// acosh 2.66 / 2.21, atanh 3.20 / 2.49.
double TrigUlps(UnaryOp op) {
  switch (op) {
    case UnaryOp::kTan:
    case UnaryOp::kAcos:
      return 1.5;
    case UnaryOp::kCosh:
      return 2;
    case UnaryOp::kAsin:
      return 2.5;
    case UnaryOp::kAtan:
    case UnaryOp::kAcosh:
      return 3;
    case UnaryOp::kSinh:
    case UnaryOp::kAsinh:
    case UnaryOp::kAtanh:
      return 3.5;
    default:
      return 0.5;
  }
}

double UnaryUlps(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp:
      return 1.5;
    case UnaryOp::kExpm1:
      return 4.5;
    case UnaryOp::kLog:
      return 4.5;
    case UnaryOp::kLog1p:
      return 2.5;
    case UnaryOp::kSin:
    case UnaryOp::kCos:
      return 3.5;
    case UnaryOp::kTanh:
      return 4.5;
    case UnaryOp::kLogistic:
      return 3;
    case UnaryOp::kRsqrt:
      return 1.5;
    case UnaryOp::kNeg:
    case UnaryOp::kAbs:
    case UnaryOp::kSqrt:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
    case UnaryOp::kSign:
    case UnaryOp::kNot:
      return 0.5;
    case UnaryOp::kErf:  // f32: the kernels' own (2 ulp, ErfDenseSweepAndSpecials); f64: libm
      return 2;
    default:
      return TrigUlps(op);
  }
}

// Whether a zero result must carry the exact value's sign (IEEE 754 / C99 Annex F, as numpy
// and libm give it: -(+0) = -0, sqrt(-0) = -0, tanh(-0) = -0, exp(-inf) = +0, ...). Not
// checked: sin(-0) and expm1(-0), which Highway's Sin and Expm1 return as +0 (a known
// deviation from IEEE's -0; the kernels document IEEE only outside the SIMD ranges).
bool ZeroSignIsSpecified(UnaryOp op) { return op != UnaryOp::kSin && op != UnaryOp::kExpm1; }

const UnaryOp kFloatUnary[] = {
    UnaryOp::kNeg,   UnaryOp::kAbs,      UnaryOp::kExp,   UnaryOp::kLog,   UnaryOp::kLog1p,
    UnaryOp::kExpm1, UnaryOp::kSqrt,     UnaryOp::kRsqrt, UnaryOp::kSin,   UnaryOp::kCos,
    UnaryOp::kTanh,  UnaryOp::kLogistic, UnaryOp::kFloor, UnaryOp::kCeil,  UnaryOp::kRound,
    UnaryOp::kSign,  UnaryOp::kErf,      UnaryOp::kTan,   UnaryOp::kSinh,  UnaryOp::kCosh,
    UnaryOp::kAsin,  UnaryOp::kAcos,     UnaryOp::kAtan,  UnaryOp::kAsinh, UnaryOp::kAcosh,
    UnaryOp::kAtanh};

// Dense sampling domain of each op: around the SIMD valid range and past it on both sides.
template <class T>
std::pair<double, double> UnaryDomain(UnaryOp op) {
  const bool f32 = sizeof(T) == 4;
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kExpm1:
      return f32 ? std::make_pair(-110.0, 95.0) : std::make_pair(-760.0, 715.0);
    case UnaryOp::kLog:
      return {0.0, 1e4};
    case UnaryOp::kLog1p:
      return {-1.0, 20.0};
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
      return {-1.0, 1e4};
    case UnaryOp::kSin:
    case UnaryOp::kCos:
      return {-40000.0, 40000.0};
    case UnaryOp::kTanh:
      return {-25.0, 25.0};
    case UnaryOp::kErf:
      return {-6.0, 6.0};
    case UnaryOp::kTan:
      return {-10.0, 10.0};
    case UnaryOp::kSinh:
    case UnaryOp::kCosh:
      return f32 ? std::make_pair(-95.0, 95.0) : std::make_pair(-715.0, 715.0);
    case UnaryOp::kAsin:
    case UnaryOp::kAcos:
    case UnaryOp::kAtanh:
      return {-1.1, 1.1};
    case UnaryOp::kAcosh:
      return {0.5, 20.0};
    case UnaryOp::kAtan:
    case UnaryOp::kAsinh:
      return {-20.0, 20.0};
    case UnaryOp::kLogistic:
      return f32 ? std::make_pair(-110.0, 110.0) : std::make_pair(-760.0, 760.0);
    default:
      return {-1e3, 1e3};
  }
}

// n inputs for `op`: a quarter any bit pattern, a quarter special values (rotating with n, so
// each lands in vector bodies and in tails), half uniform in the op's domain (and for sin/cos
// half of those in [-8, 8], where the results cross zero at small magnitudes).
template <class T>
std::vector<T> UnaryInputs(UnaryOp op, size_t n, std::mt19937_64& rng) {
  const std::vector<T> sp = Specials<T>();
  const std::pair<double, double> dom = UnaryDomain<T>(op);
  std::uniform_real_distribution<double> u(dom.first, dom.second);
  std::uniform_real_distribution<double> small(-8, 8);
  std::vector<T> x(n);
  for (size_t i = 0; i < n; ++i) {
    switch ((i * 7 + n) % 4) {
      case 0:
        x[i] = RandomBits<T>(rng);
        break;
      case 1:
        x[i] = sp[(i + n) % sp.size()];
        break;
      case 2:
        x[i] = static_cast<T>(op == UnaryOp::kSin || op == UnaryOp::kCos ? small(rng) : u(rng));
        break;
      default:
        x[i] = static_cast<T>(u(rng));
        break;
    }
  }
  return x;
}

template <class T>
void CheckFloatUnaryAgainstExact() {
  const char* dt = sizeof(T) == 4 ? "f32" : "f64";
  std::mt19937_64 rng(42);
  for (UnaryOp op : kFloatUnary) {
    const double tol = UnaryUlps(op) + 1e-3;  // slack for the long double reference's own rounding
    double worst = 0;
    int failures = 0;
    for (int64_t n : Sizes()) {
      const std::vector<T> x = UnaryInputs<T>(op, static_cast<size_t>(n), rng);
      const std::vector<T> got = RunUnary(op, x);
      for (size_t i = 0; i < x.size(); ++i) {
        const LD want = ExactUnary(op, x[i]);
        ++ReferenceChecks();
        const LD err = UlpError(got[i], want);
        bool ok = err <= tol;
        if (ok && want == 0 && ZeroSignIsSpecified(op))
          ok = std::signbit(got[i]) == std::signbit(want);
        if (std::isfinite(err)) worst = std::max(worst, static_cast<double>(err));
        if (!ok && ++failures <= 5) {
          ADD_FAILURE() << SimdTargetName() << " " << dt << " " << UnaryName(op) << "("
                        << std::setprecision(21) << x[i] << ") = " << got[i] << ", exact "
                        << static_cast<double>(want) << " (" << static_cast<double>(err)
                        << " ulp > " << tol << "), n=" << n << " i=" << i;
        }
      }
    }
    EXPECT_EQ(0, failures) << dt << " " << UnaryName(op);
    double& m = MaxUlps()[std::string(SimdTargetName()) + " " + dt + " " + UnaryName(op)];
    m = std::max(m, worst);
  }
}

class PrintMaxUlps : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("Largest ulp error of the float ops per target (vs long double):\n");
    for (const auto& kv : MaxUlps()) std::printf("  %-24s %.3f\n", kv.first.c_str(), kv.second);
    std::printf("Element results checked against independent references: %lld\n",
                static_cast<long long>(ReferenceChecks()));
  }
};
const ::testing::Environment* const kPrintMaxUlps =
    ::testing::AddGlobalTestEnvironment(new PrintMaxUlps);

TEST_P(ElementwiseFloatTest, FloatUnaryMatchesExactValues) {
  CheckFloatUnaryAgainstExact<float>();
  CheckFloatUnaryAgainstExact<double>();
}

TEST_P(ElementwiseFloatTest, RoundIsHalfToEvenAndSignKeepsZeroAndNaN) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.7f, -3.7f, 0.0f};
  const std::vector<float> r = RunUnary(UnaryOp::kRound, x);
  const float want[] = {0, 2, 2, -0.0f, -2, -2, 4, -4, 0};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(want[i], r[i]) << x[i];
  EXPECT_TRUE(std::signbit(r[3]));
  const std::vector<float> s = RunUnary(UnaryOp::kSign, std::vector<float>{-3, 0, -0.0f, 5, kNaNF});
  EXPECT_EQ(-1, s[0]);
  EXPECT_EQ(0, s[1]);
  EXPECT_TRUE(std::signbit(s[2]));
  EXPECT_EQ(1, s[3]);
  EXPECT_TRUE(std::isnan(s[4]));
  const std::vector<float> e =
      RunUnary(UnaryOp::kExp, std::vector<float>{-200, 200, kNaNF, -kInfF});
  EXPECT_EQ(0.0f, e[0]);
  EXPECT_EQ(kInfF, e[1]);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(0.0f, e[3]);
  const std::vector<float> l = RunUnary(UnaryOp::kLogistic, std::vector<float>{-200, 200, 0});
  EXPECT_GE(l[0], 0.0f);
  EXPECT_LT(l[0], 1e-30f);
  EXPECT_EQ(1.0f, l[1]);
  EXPECT_EQ(0.5f, l[2]);
}

// erf: f32 on every 127th bit pattern (both signs, every exponent) and every 7th pattern of
// [0.5, 4.5) (both regions of VErfF32, their seam at 1 and the saturation at 4), within 2 ulp
// of the exact value and odd to the bit; f64 on 1M points of [-7, 7]; then the special values.
TEST_P(ElementwiseFloatTest, ErfDenseSweepAndSpecials) {
  std::vector<float> x;
  for (uint64_t j = 0; j < (uint64_t{1} << 32); j += 127) {
    const uint32_t bits = static_cast<uint32_t>(j);
    float v;
    memcpy(&v, &bits, 4);
    if (!std::isnan(v)) x.push_back(v);
  }
  for (uint32_t b = 0x3f000000u; b < 0x40900000u; b += 7) {
    float v;
    memcpy(&v, &b, 4);
    x.push_back(v);
    x.push_back(-v);
  }
  const std::vector<float> got = RunUnary(UnaryOp::kErf, x);
  double worst = 0;
  float worst_x = 0;
  int failures = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double err = static_cast<double>(UlpError(got[i], std::erf(static_cast<LD>(x[i]))));
    if (err > worst) {
      worst = err;
      worst_x = x[i];
    }
    if (err > 2 && ++failures <= 5) {
      ADD_FAILURE() << SimdTargetName() << " erf(" << std::setprecision(9) << x[i]
                    << ") = " << got[i] << " (" << err << " ulp)";
    }
  }
  EXPECT_EQ(0, failures);
  std::printf("%s f32 erf: %zu inputs, max %.3f ulp at %.9g\n", SimdTargetName(), x.size(), worst,
              worst_x);
  for (size_t i = x.size() - 2 * ((0x40900000u - 0x3f000000u + 6) / 7); i < x.size(); i += 2) {
    ASSERT_EQ(got[i], -got[i + 1]) << x[i];
  }

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-7, 7);
  std::vector<double> xd(1000000);
  for (double& v : xd) v = u(rng);
  const std::vector<double> gd = RunUnary(UnaryOp::kErf, xd);
  double worst_rel = 0;
  for (size_t i = 0; i < xd.size(); ++i) {
    const LD want = std::erf(static_cast<LD>(xd[i]));
    worst_rel = std::max(worst_rel, static_cast<double>(std::fabs((gd[i] - want) / want)));
  }
  EXPECT_LE(worst_rel, 1e-15);
  std::printf("%s f64 erf: max relative error %.3g\n", SimdTargetName(), worst_rel);

  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> sx = {0.0f, -0.0f, kInfF, -kInfF, kNaNF,  1e-30f, -1e-30f,
                                 tiny, 5.0f,  4.0f,  10.f,   -1e30f, 1.0f,   -1.0f};
  const std::vector<float> s = RunUnary(UnaryOp::kErf, sx);
  EXPECT_EQ(0.0f, s[0]);
  EXPECT_FALSE(std::signbit(s[0]));
  EXPECT_EQ(0.0f, s[1]);
  EXPECT_TRUE(std::signbit(s[1]));
  EXPECT_EQ(1.0f, s[2]);
  EXPECT_EQ(-1.0f, s[3]);
  EXPECT_TRUE(std::isnan(s[4]));
  EXPECT_LE(UlpError(s[5], LD(1e-30f) * 2 / std::sqrt(std::acos(LD(-1)))), 1);
  EXPECT_EQ(-s[5], s[6]);
  EXPECT_GE(s[7], tiny);  // 2/sqrt(pi) * the smallest subnormal: a subnormal, never 0
  EXPECT_EQ(1.0f, s[8]);
  EXPECT_EQ(1.0f, s[9]);
  EXPECT_EQ(1.0f, s[10]);
  EXPECT_EQ(-1.0f, s[11]);
  EXPECT_EQ(static_cast<float>(std::erf(1.0)), s[12]);
  EXPECT_EQ(-s[12], s[13]);
  const std::vector<double> d =
      RunUnary(UnaryOp::kErf, std::vector<double>{-0.0, HUGE_VAL, std::nan("")});
  EXPECT_TRUE(std::signbit(d[0]));
  EXPECT_EQ(1.0, d[1]);
  EXPECT_TRUE(std::isnan(d[2]));
}

// tan..atanh: the dense region of each op (f64's sinh/cosh region is scaled to f64's range).
struct TrigRegion {
  UnaryOp op;
  double lo, hi;
};
const TrigRegion kTrigRegions[] = {
    {UnaryOp::kTan, -6, 6},     {UnaryOp::kSinh, -90, 90}, {UnaryOp::kCosh, -90, 90},
    {UnaryOp::kAsin, -1, 1},    {UnaryOp::kAcos, -1, 1},   {UnaryOp::kAtan, -30, 30},
    {UnaryOp::kAsinh, -30, 30}, {UnaryOp::kAcosh, 1, 30},  {UnaryOp::kAtanh, -1, 1}};

// Worst ulp error of op over x against the exact value (a zero result must have the exact
// value's sign, a NaN must meet a NaN); adds a failure for each of the first few beyond tol.
template <class T>
double TrigWorst(UnaryOp op, const std::vector<T>& x, double tol, T* worst_x) {
  const std::vector<T> got = RunUnary(op, x);
  double worst = 0;
  int failures = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const LD want = ExactUnary(op, static_cast<LD>(x[i]));
    double err = static_cast<double>(UlpError(got[i], want));
    if (want == 0 && std::signbit(got[i]) != std::signbit(want)) err = HUGE_VAL;
    if (err > worst) {
      worst = err;
      *worst_x = x[i];
    }
    if (err > tol && ++failures <= 5) {
      ADD_FAILURE() << SimdTargetName() << " " << (sizeof(T) == 4 ? "f32 " : "f64 ")
                    << UnaryName(op) << "(" << std::setprecision(21) << x[i] << ") = " << got[i]
                    << ", exact " << static_cast<double>(want) << " (" << err << " ulp)";
    }
  }
  return worst;
}

// tan..atanh: f32 on every 2039th bit pattern (both signs, every exponent, subnormals, NaN,
// out-of-domain values) and 2^18 points of the op's region; f64 on 2^17 points of the region
// and 2^17 random bit patterns; each within TrigUlps of the exact value.
TEST_P(ElementwiseFloatTest, TrigHyperbolicSweep) {
  std::vector<float> bits;
  for (uint64_t j = 0; j < (uint64_t{1} << 32); j += 2039) {
    const uint32_t b = static_cast<uint32_t>(j);
    float v;
    memcpy(&v, &b, 4);
    bits.push_back(v);
  }
  std::mt19937_64 rng(11);
  for (const TrigRegion& r : kTrigRegions) {
    const double tol = TrigUlps(r.op) + 1e-3;
    std::vector<float> x = bits;
    std::uniform_real_distribution<double> u(r.lo, r.hi);
    for (int i = 0; i < (1 << 18); ++i) x.push_back(static_cast<float>(u(rng)));
    float wx = 0;
    const double w32 = TrigWorst(r.op, x, tol, &wx);
    std::printf("%s f32 %s: %zu inputs, max %.3f ulp at %.9g\n", SimdTargetName(), UnaryName(r.op),
                x.size(), w32, wx);
    const bool big = r.op == UnaryOp::kSinh || r.op == UnaryOp::kCosh;
    std::uniform_real_distribution<double> ud(big ? r.lo * 7.9 : r.lo, big ? r.hi * 7.9 : r.hi);
    std::vector<double> xd;
    for (int i = 0; i < (1 << 17); ++i) xd.push_back(ud(rng));
    for (int i = 0; i < (1 << 17); ++i) xd.push_back(RandomBits<double>(rng));
    double wd = 0;
    const double w64 = TrigWorst(r.op, xd, tol, &wd);
    std::printf("%s f64 %s: max %.3f ulp at %.17g\n", SimdTargetName(), UnaryName(r.op), w64, wd);
  }
}

// The special values and domain edges of tan..atanh, as C99 Annex F gives them.
template <class T>
void CheckTrigSpecials() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), nan = L::quiet_NaN(), eps = L::epsilon();
  const T pi = static_cast<T>(3.14159265358979323846L), half_pi = pi / 2;
  const std::vector<T> x = {T(0),   -T(0), inf,        -inf,        nan,
                            T(1),   T(-1), T(1) + eps, T(-1) - eps, T(1) - eps / 2,
                            T(0.5), T(-2), L::max(),   -L::max(),   L::denorm_min()};
  auto run = [&](UnaryOp op) { return RunUnary(op, x); };
  auto same = [](T a, T b) {  // equal with the same sign, or both NaN
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
  };
  // The odd functions keep the sign of zero and give the smallest subnormal back.
  for (UnaryOp op : {UnaryOp::kTan, UnaryOp::kSinh, UnaryOp::kAsin, UnaryOp::kAtan, UnaryOp::kAsinh,
                     UnaryOp::kAtanh}) {
    const std::vector<T> r = run(op);
    EXPECT_TRUE(same(T(0), r[0])) << UnaryName(op);
    EXPECT_TRUE(same(-T(0), r[1])) << UnaryName(op);
    EXPECT_TRUE(std::isnan(r[4])) << UnaryName(op);
    EXPECT_EQ(L::denorm_min(), r[14]) << UnaryName(op);
  }
  std::vector<T> r = run(UnaryOp::kTan);
  EXPECT_TRUE(std::isnan(r[2]) && std::isnan(r[3]));
  r = run(UnaryOp::kSinh);
  EXPECT_TRUE(same(inf, r[2]) && same(-inf, r[3]) && same(inf, r[12]) && same(-inf, r[13]));
  r = run(UnaryOp::kCosh);
  EXPECT_TRUE(same(T(1), r[0]) && same(T(1), r[1]) && same(inf, r[2]) && same(inf, r[3]));
  EXPECT_TRUE(std::isnan(r[4]) && same(inf, r[12]) && same(inf, r[13]) && same(T(1), r[14]));
  r = run(UnaryOp::kAsin);
  EXPECT_TRUE(same(half_pi, r[5]) && same(-half_pi, r[6]));
  for (int i : {2, 3, 7, 8, 11, 12, 13}) EXPECT_TRUE(std::isnan(r[i])) << "asin(" << x[i] << ")";
  r = run(UnaryOp::kAcos);
  EXPECT_TRUE(same(half_pi, r[0]) && same(half_pi, r[1]) && same(T(0), r[5]) && same(pi, r[6]));
  for (int i : {2, 3, 4, 7, 8, 11, 12, 13}) EXPECT_TRUE(std::isnan(r[i])) << "acos(" << x[i] << ")";
  r = run(UnaryOp::kAtan);
  EXPECT_TRUE(same(half_pi, r[2]) && same(-half_pi, r[3]));
  EXPECT_TRUE(same(half_pi, r[12]) && same(-half_pi, r[13]));
  r = run(UnaryOp::kAsinh);
  EXPECT_TRUE(same(inf, r[2]) && same(-inf, r[3]));
  EXPECT_LE(UlpError(r[12], std::asinh(static_cast<LD>(L::max()))), TrigUlps(UnaryOp::kAsinh));
  EXPECT_EQ(-r[12], r[13]);
  r = run(UnaryOp::kAcosh);
  EXPECT_TRUE(same(T(0), r[5]) && same(inf, r[2]));
  EXPECT_LE(UlpError(r[12], std::acosh(static_cast<LD>(L::max()))), TrigUlps(UnaryOp::kAcosh));
  for (int i : {0, 1, 3, 4, 6, 8, 9, 10, 11, 13, 14}) {
    EXPECT_TRUE(std::isnan(r[i])) << "acosh(" << x[i] << ")";
  }
  r = run(UnaryOp::kAtanh);
  EXPECT_TRUE(same(inf, r[5]) && same(-inf, r[6]));
  EXPECT_LE(UlpError(r[9], std::atanh(static_cast<LD>(x[9]))), TrigUlps(UnaryOp::kAtanh));
  for (int i : {2, 3, 7, 8, 11, 12, 13}) EXPECT_TRUE(std::isnan(r[i])) << "atanh(" << x[i] << ")";
}

TEST_P(ElementwiseFloatTest, TrigHyperbolicSpecialValues) {
  CheckTrigSpecials<float>();
  CheckTrigSpecials<double>();
}

// numpy.remainder: a - b * floor(a / b), exactly, then rounded once. fmod is exact; when its
// sign differs from b's the true result is fmod + b (one IEEE addition of two T values).
template <class T>
LD ExactRemainder(T a, T b) {
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || b == 0) {
    return std::numeric_limits<LD>::quiet_NaN();
  }
  const T r = static_cast<T>(std::fmod(static_cast<LD>(a), static_cast<LD>(b)));
  if (r == 0) return std::copysign(LD(0), b);
  if (std::signbit(r) != std::signbit(b)) return static_cast<T>(r + b);
  return r;
}

// numpy.floor_divide: the floor of the exact quotient (x // 0 = x / 0), derived exactly for
// |quotient| < 2^62: (a - fmod(a, b)) / b is an integer that long double division recovers
// after rounding to nearest; one less when the remainder's sign differs from b's. numpy's
// conventions at infinities (npy_divmod): inf // y is NaN, x // +-inf is -1 when x and y have
// opposite signs (x != 0), else a zero. `*quotient` receives a / b (in long double).
template <class T>
LD ExactFloorDiv(T a, T b, LD* quotient) {
  const LD nan = std::numeric_limits<LD>::quiet_NaN();
  *quotient = static_cast<LD>(a) / static_cast<LD>(b);
  if (b == 0) return *quotient;
  if (std::isnan(a) || std::isnan(b) || std::isinf(a)) return nan;
  const bool negative = std::signbit(a) != std::signbit(b);
  if (std::isinf(b)) return negative && a != 0 ? LD(-1) : std::copysign(LD(0), negative ? -1 : 1);
  if (std::fabs(*quotient) >= std::ldexp(LD(1), 62)) return std::floor(*quotient);
  const LD r = std::fmod(static_cast<LD>(a), static_cast<LD>(b));
  LD t = std::nearbyint((static_cast<LD>(a) - r) / static_cast<LD>(b));
  if (r != 0 && std::signbit(r) != std::signbit(b)) t -= 1;
  return t == 0 ? std::copysign(LD(0), negative ? -1 : 1) : t;
}

// numpy's floor_divide (npy_divmod, which the kernel follows) rounds a - fmod(a, b) and the
// division to T, so once |a / b| >= 2^(digits - 2) (2^22 f32, 2^51 f64) its result can be
// one integer off the exact floor: up to 2 ulps there. FloorDivFromNumpy pins those bits.
template <class T>
bool LargeQuotient(LD quotient) {
  return std::fabs(quotient) >= std::ldexp(LD(1), std::numeric_limits<T>::digits - 2);
}

// C remainder (fmod): a - b * trunc(a / b) is exactly representable, and long double fmod
// computes it exactly; the sign of a zero result is the dividend's.
template <class T>
LD ExactFmod(T a, T b) {
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || b == 0) {
    return std::numeric_limits<LD>::quiet_NaN();
  }
  if (std::isinf(b)) return a;
  return std::fmod(static_cast<LD>(a), static_cast<LD>(b));
}

// Documented accuracy of the float binary ops (ulps). +-*/ are single IEEE operations
// (correctly rounded: <= 0.5); pow is libm's pow (glibc: < 1 ulp); max, min, remainder and
// fmod are exact; floor_divide is exact below quotients of 2^(digits - 2) (see LargeQuotient).
double BinaryUlps(BinaryOp op) {
  switch (op) {
    case BinaryOp::kPow:
      return 1;
    case BinaryOp::kMax:
    case BinaryOp::kMin:
    case BinaryOp::kRem:
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFmod:
      return 0;
    default:
      return 0.5;
  }
}

template <class T>
LD ExactBinary(BinaryOp op, T a, T b, bool* large) {
  *large = false;
  const LD x = a, y = b;
  switch (op) {
    case BinaryOp::kAdd:
      return x + y;  // exact, or rounded 2^-11 ulp of f64 below the result
    case BinaryOp::kSub:
      return x - y;
    case BinaryOp::kMul:
      return x * y;
    case BinaryOp::kDiv:
      return x / y;
    case BinaryOp::kPow:
      return std::pow(x, y);
    case BinaryOp::kMax:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<LD>::quiet_NaN() : std::max(x, y);
    case BinaryOp::kMin:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<LD>::quiet_NaN() : std::min(x, y);
    case BinaryOp::kRem:
      return ExactRemainder(a, b);
    case BinaryOp::kFmod:
      return ExactFmod(a, b);
    case BinaryOp::kFloorDiv: {
      LD q = 0;
      const LD f = ExactFloorDiv(a, b, &q);
      *large = std::isfinite(q) && LargeQuotient<T>(q);
      return f;
    }
    default:
      return std::numeric_limits<LD>::quiet_NaN();
  }
}

const BinaryOp kFloatBinary[] = {
    BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,      BinaryOp::kPow,
    BinaryOp::kMax, BinaryOp::kMin, BinaryOp::kRem, BinaryOp::kFloorDiv, BinaryOp::kFmod};

// n operand pairs: a quarter any bit patterns, a quarter pairs of special values (a different
// pair at each position; CheckFloatBinarySpecialPairs covers every pair), half in a moderate
// range (for pow, b an integer half the time so negative bases are defined; for remainder
// and floor_divide, integers half the time so exact multiples and ties occur).
template <class T>
void BinaryInputs(BinaryOp op, size_t n, std::mt19937_64& rng, std::vector<T>* a,
                  std::vector<T>* b) {
  const std::vector<T> sp = Specials<T>();
  std::uniform_real_distribution<double> u(-10, 10), wide(-1e4, 1e4);
  std::uniform_int_distribution<int> small_int(-12, 12);
  a->resize(n);
  b->resize(n);
  for (size_t i = 0; i < n; ++i) {
    T& x = (*a)[i];
    T& y = (*b)[i];
    switch ((i * 5 + n) % 4) {
      case 0:
        x = RandomBits<T>(rng);
        y = RandomBits<T>(rng);
        break;
      case 1:
        x = sp[rng() % sp.size()];
        y = sp[rng() % sp.size()];
        break;
      case 2:
        x = static_cast<T>(u(rng));
        y = static_cast<T>(u(rng));
        break;
      default:
        if (op == BinaryOp::kPow) {
          x = static_cast<T>(u(rng));
          y = static_cast<T>(small_int(rng));
        } else if (op == BinaryOp::kRem || op == BinaryOp::kFloorDiv || op == BinaryOp::kFmod) {
          x = static_cast<T>(std::nearbyint(wide(rng)));
          y = static_cast<T>(small_int(rng));
        } else {
          x = static_cast<T>(wide(rng));
          y = static_cast<T>(u(rng));
        }
        break;
    }
  }
}

// Checks got[i] = op(a[i], b[i]) against the exact values; returns the number of failures.
template <class T>
int CheckBinaryResults(BinaryOp op, const std::vector<T>& a, const std::vector<T>& b,
                       const std::vector<T>& got, double* worst) {
  const char* dt = sizeof(T) == 4 ? "f32" : "f64";
  const double tol = BinaryUlps(op) + 1e-3;
  int failures = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool large = false;
    const LD want = ExactBinary(op, a[i], b[i], &large);
    ++ReferenceChecks();
    const LD err = UlpError(got[i], want);
    bool ok = err <= (large ? 2.0 : tol);
    // Signed zeros are specified for everything but max/min of +-0 (numpy returns either).
    if (ok && want == 0 && op != BinaryOp::kMax && op != BinaryOp::kMin) {
      ok = std::signbit(got[i]) == std::signbit(want);
    }
    if (std::isfinite(err) && !large) *worst = std::max(*worst, static_cast<double>(err));
    if (!ok && ++failures <= 5) {
      ADD_FAILURE() << SimdTargetName() << " " << dt << " " << BinaryName(op) << "("
                    << std::setprecision(21) << a[i] << ", " << b[i] << ") = " << got[i]
                    << ", exact " << static_cast<double>(want) << " (" << static_cast<double>(err)
                    << " ulp > " << tol << "), n=" << a.size() << " i=" << i;
    }
  }
  return failures;
}

template <class T>
void CheckFloatBinaryAgainstExact() {
  const char* dt = sizeof(T) == 4 ? "f32" : "f64";
  std::mt19937_64 rng(7);
  const std::vector<T> sp = Specials<T>();
  for (BinaryOp op : kFloatBinary) {
    double worst = 0;
    int failures = 0;
    std::vector<T> a, b;
    for (int64_t n : Sizes()) {
      BinaryInputs<T>(op, static_cast<size_t>(n), rng, &a, &b);
      failures += CheckBinaryResults(op, a, b, RunBinary(op, a, b), &worst);
    }
    // Every ordered pair of special values, once (an odd count: the last vector is a tail).
    a.clear();
    b.clear();
    for (T x : sp) {
      for (T y : sp) {
        a.push_back(x);
        b.push_back(y);
      }
    }
    failures += CheckBinaryResults(op, a, b, RunBinary(op, a, b), &worst);
    EXPECT_EQ(0, failures) << dt << " " << BinaryName(op);
    double& m = MaxUlps()[std::string(SimdTargetName()) + " " + dt + " " + BinaryName(op)];
    m = std::max(m, worst);
  }
}

TEST_P(ElementwiseFloatTest, FloatBinaryMatchesExactValues) {
  CheckFloatBinaryAgainstExact<float>();
  CheckFloatBinaryAgainstExact<double>();
}

// numpy's own results (testdata/numpy_divmod.txt, from gen_numpy_divmod.py) for floor_divide,
// remainder, maximum and minimum, which elementwise.h documents as numpy's: bit for bit,
// signs of zeros included; NaN meets any NaN.
template <class T, class Bits>
void CheckAgainstNumpyTable(const char* dtype) {
  std::ifstream in("cc/kernels/testdata/numpy_divmod.txt");
  ASSERT_TRUE(in.good()) << "missing data file cc/kernels/testdata/numpy_divmod.txt";
  std::vector<T> cols[6];
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string dt;
    ls >> dt;
    if (dt != dtype) continue;
    for (auto& col : cols) {
      unsigned long long bits = 0;
      ls >> std::hex >> bits;
      const Bits narrow = static_cast<Bits>(bits);
      T v;
      std::memcpy(&v, &narrow, sizeof(T));
      col.push_back(v);
    }
    ASSERT_FALSE(ls.fail()) << line;
  }
  ASSERT_GT(cols[0].size(), 1000u) << dtype;
  const BinaryOp ops[] = {BinaryOp::kFloorDiv, BinaryOp::kRem, BinaryOp::kMax, BinaryOp::kMin};
  for (int k = 0; k < 4; ++k) {
    const std::vector<T> got = RunBinary(ops[k], cols[0], cols[1]);
    const std::vector<T>& want = cols[2 + k];
    int failures = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ++ReferenceChecks();
      const bool ok =
          std::isnan(want[i]) ? std::isnan(got[i]) : std::memcmp(&got[i], &want[i], sizeof(T)) == 0;
      if (!ok && ++failures <= 5) {
        ADD_FAILURE() << SimdTargetName() << " " << dtype << " " << BinaryName(ops[k]) << "("
                      << std::setprecision(21) << cols[0][i] << ", " << cols[1][i]
                      << ") = " << got[i] << ", numpy " << want[i];
      }
    }
    EXPECT_EQ(0, failures) << dtype << " " << BinaryName(ops[k]) << " of " << got.size();
  }
}

TEST_P(ElementwiseFloatTest, FloorDivRemainderMaxMinMatchNumpy) {
  CheckAgainstNumpyTable<float, uint32_t>("f32");
  CheckAgainstNumpyTable<double, uint64_t>("f64");
}

TEST_P(ElementwiseFloatTest, NumpyRemainderAndFloorDivide) {
  // numpy: np.remainder(-7., 3.) == 2, np.remainder(7., -3.) == -2, (-7.)//3 == -3.
  EXPECT_EQ(2.0f, RunBinary(BinaryOp::kRem, std::vector<float>{-7}, std::vector<float>{3})[0]);
  EXPECT_EQ(-2.0f, RunBinary(BinaryOp::kRem, std::vector<float>{7}, std::vector<float>{-3})[0]);
  EXPECT_EQ(-3.0f,
            RunBinary(BinaryOp::kFloorDiv, std::vector<float>{-7}, std::vector<float>{3})[0]);
  EXPECT_EQ(2, RunBinary(BinaryOp::kRem, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
  EXPECT_EQ(-2, RunBinary(BinaryOp::kRem, std::vector<int32_t>{7}, std::vector<int32_t>{-3})[0]);
  EXPECT_EQ(-3,
            RunBinary(BinaryOp::kFloorDiv, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
  EXPECT_EQ(-2, RunBinary(BinaryOp::kDiv, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
}

// C remainder (the runtime's `rem`): the sign of the dividend, unlike numpy.remainder.
template <class T>
void CheckFmodEdges() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> a = {-7, 7, -7, 7, T(-0.0), -3, 3, 5, -5, inf, -inf, 5, -5, nan, 5, T(5.5)};
  const std::vector<T> b = {3, -3, -3, 3, 3, 3, -3, 0, T(-0.0), 2, 2, inf, -inf, 2, nan, 2};
  const std::vector<T> got = RunBinary(BinaryOp::kFmod, a, b);
  const T want[] = {-1,  1,   -1,  1, T(-0.0), T(-0.0), T(0.0), nan,
                    nan, nan, nan, 5, -5,      nan,     nan,    T(1.5)};
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << a[i] << " fmod " << b[i] << " = " << got[i];
    } else {
      EXPECT_EQ(want[i], got[i]) << a[i] << " fmod " << b[i];
      EXPECT_EQ(std::signbit(want[i]), std::signbit(got[i])) << a[i] << " fmod " << b[i];
    }
  }
}

template <class T>
void CheckIntFmodEdges() {
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  const std::vector<T> a = {-7, 7, -7, 7, 5, mn, mn, mx, mn, 0, -1};
  const std::vector<T> b = {3, -3, -3, 3, 0, -1, 0, -1, 2, -5, mn};
  const T want[] = {-1, 1, -1, 1, 0, 0, 0, 0, 0, 0, -1};
  const std::vector<T> got = RunBinary(BinaryOp::kFmod, a, b);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(want[i], got[i]) << a[i] << " fmod " << b[i];
}

TEST_P(ElementwiseFloatTest, FmodIsTheCRemainder) {
  CheckFmodEdges<float>();
  CheckFmodEdges<double>();
  CheckIntFmodEdges<int32_t>();
  CheckIntFmodEdges<int64_t>();
  // NumPy broadcasting: a [2, 3] dividend by a [3] divisor (stride 0 along the rows).
  ElementwiseProgram p;
  p.AddOutput(p.Binary(BinaryOp::kFmod, p.Input(0, DType::kI32), p.Input(1, DType::kI32)));
  const int32_t x[6] = {-7, 7, 8, -9, 0, 10};
  const int32_t y[3] = {3, -4, 0};
  const int64_t shape[2] = {2, 3}, ystrides[2] = {0, 1};
  int32_t out[6] = {};
  ElementwiseInput in[2] = {{x, nullptr}, {y, ystrides}};
  void* outs[1] = {out};
  EvalElementwise(p, 2, shape, in, 2, outs, 1, nullptr);
  const int32_t want[6] = {-1, 3, 0, 0, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(want[i], out[i]) << i;
  ElementwiseProgram q;
  const int bb = q.Input(0, DType::kBool);
  EXPECT_THROW(q.Binary(BinaryOp::kFmod, bb, bb), std::invalid_argument);
}

}  // namespace
}  // namespace kernels
}  // namespace shp
