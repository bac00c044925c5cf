// Tests of the fused elementwise kernels. Every TEST_P runs once per Highway target compiled
// into the library and supported by this CPU (the dispatch is forced to each in turn).
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

namespace shp {
namespace kernels {
namespace {

const float kInfF = std::numeric_limits<float>::infinity();
const float kNaNF = std::numeric_limits<float>::quiet_NaN();

template <class T>
std::vector<T> RandomVec(size_t n, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

template <class T>
DType DTypeOf();
template <> DType DTypeOf<float>() { return DType::kF32; }
template <> DType DTypeOf<double>() { return DType::kF64; }
template <> DType DTypeOf<int32_t>() { return DType::kI32; }
template <> DType DTypeOf<int64_t>() { return DType::kI64; }

// Runs out = op(x) for a 1-d x.
template <class T>
std::vector<T> RunUnary(UnaryOp op, const std::vector<T>& x, ThreadPool* pool = nullptr) {
  ElementwiseProgram p;
  p.AddOutput(p.Unary(op, p.Input(0, DTypeOf<T>())));
  std::vector<T> out(x.size(), T(-7));
  const int64_t shape[1] = {static_cast<int64_t>(x.size())};
  ElementwiseInput in{x.data(), nullptr};
  void* outs[1] = {out.data()};
  EvalElementwise(p, 1, shape, &in, 1, outs, 1, pool);
  return out;
}

template <class T>
std::vector<T> RunBinary(BinaryOp op, const std::vector<T>& a, const std::vector<T>& b) {
  ElementwiseProgram p;
  p.AddOutput(p.Binary(op, p.Input(0, DTypeOf<T>()), p.Input(1, DTypeOf<T>())));
  std::vector<T> out(a.size(), T(-7));
  const int64_t shape[1] = {static_cast<int64_t>(a.size())};
  ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
  void* outs[1] = {out.data()};
  EvalElementwise(p, 1, shape, in, 2, outs, 1, nullptr);
  return out;
}

// ---- Independent references --------------------------------------------------------------
// Nothing below uses elementwise_scalar.h (the kernels' own scalar code, which also serves as
// their fix-up path): a wrong formula shared by the SIMD and scalar code must fail here.
// Float references are exact values computed in long double (64-bit significand on x86-64, 11
// bits more than f64, with glibc's long double libm), then compared in ulps of the result type.

using LD = long double;

// Spacing of T at the exact finite value x (the subnormal spacing below the normal range).
template <class T>
LD UlpOf(LD x) {
  x = std::fabs(x);
  if (x < std::numeric_limits<T>::min()) return std::numeric_limits<T>::denorm_min();
  if (x > std::numeric_limits<T>::max()) x = std::numeric_limits<T>::max();
  int e = 0;
  std::frexp(x, &e);  // x = m * 2^e, 0.5 <= m < 1
  return std::ldexp(LD(1), e - std::numeric_limits<T>::digits);
}

// Error of `got` against the exact `want`, in ulps of T at want. NaN must meet NaN, an exact
// infinity must be met exactly; a finite exact value beyond T's range is compared with
// 2^max_exponent (one step past the largest finite value), and so is an infinite `got`, so an
// overflow to inf next to a correct FLT_MAX is 1 ulp, not infinitely far.
template <class T>
LD UlpError(T got, LD want) {
  const LD kInfL = std::numeric_limits<LD>::infinity();
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : kInfL;
  if (std::isinf(want)) return static_cast<LD>(got) == want ? 0 : kInfL;
  const LD past = std::ldexp(LD(1), std::numeric_limits<T>::max_exponent);
  LD g = got;
  if (std::isinf(g)) g = std::copysign(past, g);
  const LD w = std::fabs(want) > past ? std::copysign(past, want) : want;
  return std::fabs(g - w) / UlpOf<T>(w);
}

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
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kExp: return std::exp(x);
    case UnaryOp::kLog: return std::log(x);
    case UnaryOp::kLog1p: return std::log1p(x);
    case UnaryOp::kExpm1: return std::expm1(x);
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kRsqrt: return 1 / std::sqrt(x);
    case UnaryOp::kSin: return std::sin(x);
    case UnaryOp::kCos: return std::cos(x);
    case UnaryOp::kTanh: return std::tanh(x);
    case UnaryOp::kLogistic: return 1 / (1 + std::exp(-x));
    case UnaryOp::kFloor: return std::floor(x);
    case UnaryOp::kCeil: return std::ceil(x);
    case UnaryOp::kRound: return RoundHalfEven(x);
    case UnaryOp::kSign: return x > 0 ? 1 : (x < 0 ? -1 : x);
    case UnaryOp::kNot: break;
  }
  return std::numeric_limits<LD>::quiet_NaN();
}

// Accuracy of each float unary op, in ulps of the exact value. 0.5 = correctly rounded (exact
// or one IEEE operation). rsqrt is two IEEE roundings: the relative error 2^-p of sqrt passes
// to 1/sqrt, up to 1 ulp of the result, plus 0.5 for the division: 1.5. The SIMD polynomials
// have Highway's documented bounds (hwy/contrib/math/math-inl.h: Exp 1, Expm1 4, Log 4, Log1p
// 2, Sin/Cos 3, Tanh 4), which Highway measures against libm's result; libm is itself up to
// ~0.5 ulp from the exact value, hence + 0.5. logistic = 1 / (1 + Exp(-x)): Exp's 1.5 plus
// the two roundings of the add and the division. Lanes outside the SIMD ranges use libm
// (< 1 ulp in glibc). Worst errors measured on 4M random inputs per op (AVX2, f32 / f64):
// exp 1.002 / 1.006, expm1 3.47 / 3.97, log 0.89 / 0.90, log1p 2.47 / 2.43, sin 2.41 / 2.60,
// cos 2.35 / 2.66, tanh 2.77 / 3.14, logistic 2.43 / 2.33, rsqrt 1.48 / 1.49.
double UnaryUlps(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp: return 1.5;
    case UnaryOp::kExpm1: return 4.5;
    case UnaryOp::kLog: return 4.5;
    case UnaryOp::kLog1p: return 2.5;
    case UnaryOp::kSin:
    case UnaryOp::kCos: return 3.5;
    case UnaryOp::kTanh: return 4.5;
    case UnaryOp::kLogistic: return 3;
    case UnaryOp::kRsqrt: return 1.5;
    default: return 0.5;
  }
}

// Whether a zero result must carry the exact value's sign (IEEE 754 / C99 Annex F, as numpy
// and libm give it: -(+0) = -0, sqrt(-0) = -0, tanh(-0) = -0, exp(-inf) = +0, ...). Not
// checked: sin(-0) and expm1(-0), which Highway's Sin and Expm1 return as +0 (a known
// deviation from IEEE's -0; the kernels document IEEE only outside the SIMD ranges).
bool ZeroSignIsSpecified(UnaryOp op) { return op != UnaryOp::kSin && op != UnaryOp::kExpm1; }

const char* UnaryName(UnaryOp op) {
  static const char* const kNames[] = {"neg", "abs", "exp", "log", "log1p", "expm1",
                                       "sqrt", "rsqrt", "sin", "cos", "tanh", "logistic",
                                       "floor", "ceil", "round", "sign", "not"};
  return kNames[static_cast<int>(op)];
}

const UnaryOp kFloatUnary[] = {
    UnaryOp::kNeg,  UnaryOp::kAbs,   UnaryOp::kExp,  UnaryOp::kLog,      UnaryOp::kLog1p,
    UnaryOp::kExpm1, UnaryOp::kSqrt, UnaryOp::kRsqrt, UnaryOp::kSin,     UnaryOp::kCos,
    UnaryOp::kTanh, UnaryOp::kLogistic, UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kRound,
    UnaryOp::kSign};

// Values that hit every special case and the edges of the SIMD ranges of elementwise-inl.h
// (exp/expm1 f32 [-87, 88] f64 [-708, 709], sin/cos +-39000, logistic f32 -80 f64 -700,
// log's smallest normal), and numbers whose rounding is a tie.
template <class T>
std::vector<T> Specials() {
  using L = std::numeric_limits<T>;
  const T v[] = {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0),
                 L::denorm_min(), -L::denorm_min(), L::min() - L::denorm_min(), L::min(),
                 -L::min(), L::max(), -L::max(), T(1), T(-1), T(0.5), T(-0.5), T(1.5), T(-1.5),
                 T(2.5), T(-2.5), T(0.49999997), L::epsilon(), T(1) - L::epsilon() / 2,
                 T(-1) + L::epsilon() / 2, T(-1) - L::epsilon(), T(-87), T(-87.5), T(88),
                 T(88.72), T(89), T(-103.5), T(-104), T(-708), T(-708.5), T(709), T(709.8),
                 T(-745), T(-746), T(-80), T(-80.5), T(-700), T(-700.5), T(39000), T(-39000),
                 T(39001), T(-39001), T(1e6), T(3.14159265358979), T(1e-10), T(-1e-10), T(20),
                 T(-20), T(8388609), T(4503599627370497.0)};
  return std::vector<T>(std::begin(v), std::end(v));
}

// Any bit pattern of T: every exponent (subnormals, inf, NaN payloads) and both signs.
template <class T>
T RandomBits(std::mt19937_64& rng) {
  const uint64_t bits = rng();
  T x;
  std::memcpy(&x, &bits, sizeof(T));
  return x;
}

// Dense sampling domain of each op: around the SIMD valid range and past it on both sides.
template <class T>
std::pair<double, double> UnaryDomain(UnaryOp op) {
  const bool f32 = sizeof(T) == 4;
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kExpm1: return f32 ? std::make_pair(-110.0, 95.0) : std::make_pair(-760.0, 715.0);
    case UnaryOp::kLog: return {0.0, 1e4};
    case UnaryOp::kLog1p: return {-1.0, 20.0};
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt: return {-1.0, 1e4};
    case UnaryOp::kSin:
    case UnaryOp::kCos: return {-40000.0, 40000.0};
    case UnaryOp::kTanh: return {-25.0, 25.0};
    case UnaryOp::kLogistic: return f32 ? std::make_pair(-110.0, 110.0) : std::make_pair(-760.0, 760.0);
    default: return {-1e3, 1e3};
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
      case 0: x[i] = RandomBits<T>(rng); break;
      case 1: x[i] = sp[(i + n) % sp.size()]; break;
      case 2: x[i] = static_cast<T>(op == UnaryOp::kSin || op == UnaryOp::kCos ? small(rng) : u(rng)); break;
      default: x[i] = static_cast<T>(u(rng)); break;
    }
  }
  return x;
}

std::vector<int64_t> Sizes() {
  std::vector<int64_t> s;
  for (int64_t n = 0; n <= 40; ++n) s.push_back(n);  // 0, 1, lanes - 1, lanes + 1, ... (<= 16 lanes)
  for (int64_t n : {63, 64, 65, 1023, 1024, 1025, 3001, 20011}) s.push_back(n);  // tiles of 1024
  return s;
}

// Largest ulp error seen per (target, dtype, op), printed at the end of the run.
std::map<std::string, double>& MaxUlps() {
  static std::map<std::string, double> m;
  return m;
}

// Element results compared with an independent reference (all targets), printed at the end.
int64_t& ReferenceChecks() {
  static int64_t n = 0;
  return n;
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
        if (ok && want == 0 && ZeroSignIsSpecified(op)) ok = std::signbit(got[i]) == std::signbit(want);
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

HWY_BEFORE_TEST(ElementwiseTest);

TEST_P(ElementwiseTest, DispatchesToForcedTarget) {
  EXPECT_STREQ(hwy::TargetName(GetParam()), SimdTargetName());
}

TEST_P(ElementwiseTest, FloatUnaryMatchesExactValues) {
  CheckFloatUnaryAgainstExact<float>();
  CheckFloatUnaryAgainstExact<double>();
}

TEST_P(ElementwiseTest, RoundIsHalfToEvenAndSignKeepsZeroAndNaN) {
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
  const std::vector<float> e = RunUnary(UnaryOp::kExp, std::vector<float>{-200, 200, kNaNF, -kInfF});
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

const char* BinaryName(BinaryOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "floordiv", "pow", "max",
                                       "min", "rem", "and", "or",  "xor", "fmod"};
  return kNames[static_cast<int>(op)];
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
    case BinaryOp::kPow: return 1;
    case BinaryOp::kMax: case BinaryOp::kMin: case BinaryOp::kRem: case BinaryOp::kFloorDiv:
    case BinaryOp::kFmod:
      return 0;
    default: return 0.5;
  }
}

template <class T>
LD ExactBinary(BinaryOp op, T a, T b, bool* large) {
  *large = false;
  const LD x = a, y = b;
  switch (op) {
    case BinaryOp::kAdd: return x + y;  // exact, or rounded 2^-11 ulp of f64 below the result
    case BinaryOp::kSub: return x - y;
    case BinaryOp::kMul: return x * y;
    case BinaryOp::kDiv: return x / y;
    case BinaryOp::kPow: return std::pow(x, y);
    case BinaryOp::kMax:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<LD>::quiet_NaN() : std::max(x, y);
    case BinaryOp::kMin:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<LD>::quiet_NaN() : std::min(x, y);
    case BinaryOp::kRem: return ExactRemainder(a, b);
    case BinaryOp::kFmod: return ExactFmod(a, b);
    case BinaryOp::kFloorDiv: {
      LD q = 0;
      const LD f = ExactFloorDiv(a, b, &q);
      *large = std::isfinite(q) && LargeQuotient<T>(q);
      return f;
    }
    default: return std::numeric_limits<LD>::quiet_NaN();
  }
}

const BinaryOp kFloatBinary[] = {BinaryOp::kAdd, BinaryOp::kSub,      BinaryOp::kMul,
                                 BinaryOp::kDiv, BinaryOp::kPow,      BinaryOp::kMax,
                                 BinaryOp::kMin, BinaryOp::kRem,      BinaryOp::kFloorDiv,
                                 BinaryOp::kFmod};

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
      case 0: x = RandomBits<T>(rng); y = RandomBits<T>(rng); break;
      case 1: x = sp[rng() % sp.size()]; y = sp[rng() % sp.size()]; break;
      case 2: x = static_cast<T>(u(rng)); y = static_cast<T>(u(rng)); break;
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
                    << ", exact " << static_cast<double>(want) << " ("
                    << static_cast<double>(err) << " ulp > " << tol << "), n=" << a.size()
                    << " i=" << i;
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

TEST_P(ElementwiseTest, FloatBinaryMatchesExactValues) {
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
      const bool ok = std::isnan(want[i]) ? std::isnan(got[i])
                                          : std::memcmp(&got[i], &want[i], sizeof(T)) == 0;
      if (!ok && ++failures <= 5) {
        ADD_FAILURE() << SimdTargetName() << " " << dtype << " " << BinaryName(ops[k]) << "("
                      << std::setprecision(21) << cols[0][i] << ", " << cols[1][i] << ") = "
                      << got[i] << ", numpy " << want[i];
      }
    }
    EXPECT_EQ(0, failures) << dtype << " " << BinaryName(ops[k]) << " of " << got.size();
  }
}

TEST_P(ElementwiseTest, FloorDivRemainderMaxMinMatchNumpy) {
  CheckAgainstNumpyTable<float, uint32_t>("f32");
  CheckAgainstNumpyTable<double, uint64_t>("f64");
}

TEST_P(ElementwiseTest, NumpyRemainderAndFloorDivide) {
  // numpy: np.remainder(-7., 3.) == 2, np.remainder(7., -3.) == -2, (-7.)//3 == -3.
  EXPECT_EQ(2.0f, RunBinary(BinaryOp::kRem, std::vector<float>{-7}, std::vector<float>{3})[0]);
  EXPECT_EQ(-2.0f, RunBinary(BinaryOp::kRem, std::vector<float>{7}, std::vector<float>{-3})[0]);
  EXPECT_EQ(-3.0f, RunBinary(BinaryOp::kFloorDiv, std::vector<float>{-7}, std::vector<float>{3})[0]);
  EXPECT_EQ(2, RunBinary(BinaryOp::kRem, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
  EXPECT_EQ(-2, RunBinary(BinaryOp::kRem, std::vector<int32_t>{7}, std::vector<int32_t>{-3})[0]);
  EXPECT_EQ(-3, RunBinary(BinaryOp::kFloorDiv, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
  EXPECT_EQ(-2, RunBinary(BinaryOp::kDiv, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
}

// C remainder (the runtime's `rem`): the sign of the dividend, unlike numpy.remainder.
template <class T>
void CheckFmodEdges() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> a = {-7, 7, -7, 7, T(-0.0), -3, 3, 5, -5, inf, -inf, 5, -5, nan, 5, T(5.5)};
  const std::vector<T> b = {3, -3, -3, 3, 3, 3, -3, 0, T(-0.0), 2, 2, inf, -inf, 2, nan, 2};
  const std::vector<T> got = RunBinary(BinaryOp::kFmod, a, b);
  const T want[] = {-1, 1, -1, 1, T(-0.0), T(-0.0), T(0.0), nan, nan, nan, nan, 5, -5, nan, nan,
                    T(1.5)};
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

TEST_P(ElementwiseTest, FmodIsTheCRemainder) {
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

// ---- Integer ops: references in 128-bit arithmetic, wrapped to the type's width ----------

using I128 = __int128;

template <class T>
T Wrap(I128 v) {  // v modulo 2^bits, as T (two's complement)
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v)));
}

// floor(a / b) for b != 0, from the sign rule rather than a truncating division's remainder.
I128 FloorQuotient(I128 a, I128 b) {
  if (b < 0) {
    a = -a;
    b = -b;
  }
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// a^e modulo 2^bits by left-to-right binary exponentiation (the kernel squares right to
// left); cross-checked against plain repeated multiplication for small exponents below.
template <class T>
T WrapPow(T a, T e) {
  using U = typename std::make_unsigned<T>::type;
  U r = 1;
  for (int bit = std::numeric_limits<U>::digits - 1; bit >= 0; --bit) {
    r = static_cast<U>(r * r);
    if ((static_cast<U>(e) >> bit) & 1) r = static_cast<U>(r * static_cast<U>(a));
  }
  return static_cast<T>(r);
}

// The documented integer semantics (elementwise.h), from the mathematical definitions.
template <class T>
T IntReference(BinaryOp op, T a, T b) {
  const I128 x = a, y = b;
  switch (op) {
    case BinaryOp::kAdd: return Wrap<T>(x + y);
    case BinaryOp::kSub: return Wrap<T>(x - y);
    case BinaryOp::kMul: return Wrap<T>(x * y);  // |x * y| <= 2^126: no 128-bit overflow
    case BinaryOp::kDiv: return y == 0 ? T(0) : Wrap<T>(x / y);  // C division truncates
    case BinaryOp::kFloorDiv: return y == 0 ? T(0) : Wrap<T>(FloorQuotient(x, y));
    case BinaryOp::kRem: return y == 0 ? T(0) : Wrap<T>(x - y * FloorQuotient(x, y));
    case BinaryOp::kFmod: return y == 0 ? T(0) : Wrap<T>(x - y * (x / y));  // truncating
    case BinaryOp::kPow:
      if (b >= 0) return WrapPow(a, b);
      // Negative exponents: C truncation of 1 / a^|b|.
      if (a == 1) return 1;
      if (a == -1) return b % 2 == 0 ? T(1) : T(-1);
      return 0;
    case BinaryOp::kMax: return a > b ? a : b;
    case BinaryOp::kMin: return a < b ? a : b;
    case BinaryOp::kAnd: return a & b;
    case BinaryOp::kOr: return a | b;
    case BinaryOp::kXor: return a ^ b;
  }
  return 0;
}

template <class T>
T IntUnaryReference(UnaryOp op, T x) {
  switch (op) {
    case UnaryOp::kNeg: return Wrap<T>(-I128(x));
    case UnaryOp::kAbs: return Wrap<T>(x < 0 ? -I128(x) : I128(x));
    case UnaryOp::kSign: return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
    case UnaryOp::kNot: return static_cast<T>(-I128(x) - 1);  // ~x == -x - 1
    default: return x;  // floor, ceil, round of an integer
  }
}

template <class T>
std::vector<T> IntEdges() {
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  return {mn, static_cast<T>(mn + 1), mx, static_cast<T>(mx - 1), 0, 1, -1, 2, -2, 3, -3, 7,
          -7, 31, 32, 63, 64, static_cast<T>(mn / 2), static_cast<T>(mx / 2 + 1)};
}

template <class T>
void CheckIntOpsAgainstReference() {
  const char* dt = sizeof(T) == 4 ? "i32" : "i64";
  const std::vector<T> edges = IntEdges<T>();
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> small(-50, 50);
  const BinaryOp ops[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                          BinaryOp::kFloorDiv, BinaryOp::kPow, BinaryOp::kMax, BinaryOp::kMin,
                          BinaryOp::kRem, BinaryOp::kAnd, BinaryOp::kOr, BinaryOp::kXor,
                          BinaryOp::kFmod};
  std::vector<int64_t> sizes = Sizes();
  sizes.push_back(-1);  // marker: every ordered pair of edge values
  for (int64_t n : sizes) {
    std::vector<T> a, b;
    if (n < 0) {
      for (T x : edges) {
        for (T y : edges) {
          a.push_back(x);
          b.push_back(y);
        }
      }
    } else {
      a.resize(static_cast<size_t>(n));
      b.resize(static_cast<size_t>(n));
      for (size_t i = 0; i < a.size(); ++i) {
        switch ((i * 3 + static_cast<size_t>(n)) % 4) {
          case 0: a[i] = static_cast<T>(rng()); b[i] = static_cast<T>(rng()); break;
          case 1: a[i] = edges[rng() % edges.size()]; b[i] = edges[rng() % edges.size()]; break;
          case 2: a[i] = static_cast<T>(small(rng)); b[i] = static_cast<T>(small(rng)); break;
          default: a[i] = static_cast<T>(rng()); b[i] = static_cast<T>(small(rng) % 4); break;
        }
      }
    }
    for (BinaryOp op : ops) {
      const std::vector<T> got = RunBinary(op, a, b);
      int failures = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        const T want = IntReference(op, a[i], b[i]);
        ++ReferenceChecks();
        if (got[i] != want && ++failures <= 3) {
          ADD_FAILURE() << SimdTargetName() << " " << dt << " " << BinaryName(op) << "("
                        << a[i] << ", " << b[i] << ") = " << got[i] << ", want " << want
                        << ", n=" << a.size();
        }
      }
      EXPECT_EQ(0, failures) << dt << " " << BinaryName(op) << " n=" << a.size();
    }
    for (UnaryOp op : {UnaryOp::kNeg, UnaryOp::kAbs, UnaryOp::kSign, UnaryOp::kNot,
                       UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kRound}) {
      const std::vector<T> got = RunUnary(op, a);
      for (size_t i = 0; i < a.size(); ++i) {
        ++ReferenceChecks();
        ASSERT_EQ(IntUnaryReference(op, a[i]), got[i])
            << dt << " " << UnaryName(op) << "(" << a[i] << ") n=" << a.size();
      }
    }
  }
  // The reference's exponentiation agrees with repeated multiplication.
  for (T x : edges) {
    for (T e = 0; e <= 70; ++e) {
      using U = typename std::make_unsigned<T>::type;
      U r = 1;
      for (T k = 0; k < e; ++k) r = static_cast<U>(r * static_cast<U>(x));
      ASSERT_EQ(static_cast<T>(r), WrapPow(x, e)) << x << "^" << e;
    }
  }
  // The documented values at C's traps, spelled out.
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  EXPECT_EQ(0, RunBinary(BinaryOp::kDiv, std::vector<T>{5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kRem, std::vector<T>{-5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kFloorDiv, std::vector<T>{mn}, std::vector<T>{0})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kDiv, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kFloorDiv, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kRem, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kFmod, std::vector<T>{-5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kFmod, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kAdd, std::vector<T>{mx}, std::vector<T>{1})[0]);
  EXPECT_EQ(1024, RunBinary(BinaryOp::kPow, std::vector<T>{2}, std::vector<T>{10})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kPow, std::vector<T>{2}, std::vector<T>{-1})[0]);
  EXPECT_EQ(-1, RunBinary(BinaryOp::kPow, std::vector<T>{-1}, std::vector<T>{-3})[0]);
  EXPECT_EQ(mn, RunUnary(UnaryOp::kNeg, std::vector<T>{mn})[0]);
  EXPECT_EQ(mn, RunUnary(UnaryOp::kAbs, std::vector<T>{mn})[0]);
}

TEST_P(ElementwiseTest, IntOpsMatchReferenceEverywhere) {
  CheckIntOpsAgainstReference<int32_t>();
  CheckIntOpsAgainstReference<int64_t>();
}

// Bool ops and comparisons of every dtype over the sizes, against C++'s own operators (bools
// are bytes: any non-zero byte is true, results are 0/1).
template <class T>
void CheckCompareAgainstReference(std::mt19937_64& rng) {
  std::vector<T> sp;
  if constexpr (std::is_floating_point<T>::value) sp = Specials<T>();
  for (int64_t n : Sizes()) {
    std::vector<T> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (size_t i = 0; i < a.size(); ++i) {
      if constexpr (std::is_floating_point<T>::value) {
        a[i] = sp[rng() % sp.size()];
        b[i] = rng() % 3 == 0 ? a[i] : sp[rng() % sp.size()];
      } else {
        a[i] = static_cast<T>(rng() % 5);
        b[i] = rng() % 3 == 0 ? a[i] : static_cast<T>(rng());
      }
    }
    for (CompareOp op : {CompareOp::kEq, CompareOp::kNe, CompareOp::kLt, CompareOp::kLe,
                         CompareOp::kGt, CompareOp::kGe}) {
      ElementwiseProgram p;
      p.AddOutput(p.Compare(op, p.Input(0, DTypeOf<T>()), p.Input(1, DTypeOf<T>())));
      std::vector<uint8_t> out(a.size(), 9);
      const int64_t shape[1] = {n};
      ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
      void* outs[1] = {out.data()};
      EvalElementwise(p, 1, shape, in, 2, outs, 1, nullptr);
      for (size_t i = 0; i < a.size(); ++i) {
        const bool want[] = {a[i] == b[i], a[i] != b[i], a[i] < b[i],
                             a[i] <= b[i], a[i] > b[i],  a[i] >= b[i]};
        ++ReferenceChecks();
        ASSERT_EQ(want[static_cast<int>(op)] ? 1 : 0, out[i])
            << "compare " << static_cast<int>(op) << " " << a[i] << " " << b[i] << " n=" << n;
      }
    }
  }
}

TEST_P(ElementwiseTest, CompareAndBoolOpsMatchReference) {
  std::mt19937_64 rng(11);
  CheckCompareAgainstReference<float>(rng);
  CheckCompareAgainstReference<double>(rng);
  CheckCompareAgainstReference<int32_t>(rng);
  CheckCompareAgainstReference<int64_t>(rng);
  for (int64_t n : Sizes()) {
    std::vector<uint8_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    const uint8_t bytes[] = {0, 1, 2, 255};
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = bytes[rng() % 4];
      b[i] = bytes[rng() % 4];
    }
    ElementwiseProgram p;
    const int x = p.Input(0, DType::kBool), y = p.Input(1, DType::kBool);
    const BinaryOp ops[] = {BinaryOp::kAnd, BinaryOp::kOr, BinaryOp::kXor, BinaryOp::kMax,
                            BinaryOp::kMin};
    for (BinaryOp op : ops) p.AddOutput(p.Binary(op, x, y));
    p.AddOutput(p.Unary(UnaryOp::kNot, x));
    p.AddOutput(p.Compare(CompareOp::kLt, x, y));
    std::vector<std::vector<uint8_t>> o(7, std::vector<uint8_t>(a.size(), 9));
    void* outs[7];
    for (int k = 0; k < 7; ++k) outs[k] = o[static_cast<size_t>(k)].data();
    const int64_t shape[1] = {n};
    ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
    EvalElementwise(p, 1, shape, in, 2, outs, 7, nullptr);
    for (size_t i = 0; i < a.size(); ++i) {
      const bool p1 = a[i] != 0, q1 = b[i] != 0;
      const bool want[7] = {p1 && q1, p1 || q1, p1 != q1, p1 || q1, p1 && q1, !p1, !p1 && q1};
      for (int k = 0; k < 7; ++k) {
        ++ReferenceChecks();
        ASSERT_EQ(want[k] ? 1 : 0, o[static_cast<size_t>(k)][i])
            << "bool output " << k << " of " << int{a[i]} << ", " << int{b[i]} << " n=" << n;
      }
    }
  }
}

TEST_P(ElementwiseTest, CompareSelectAndBool) {
  const std::vector<float> a = {1, 2, kNaNF, 4, -1};
  const std::vector<float> b = {1, 3, kNaNF, 3, -1};
  for (CompareOp op : {CompareOp::kEq, CompareOp::kNe, CompareOp::kLt, CompareOp::kLe,
                       CompareOp::kGt, CompareOp::kGe}) {
    ElementwiseProgram p;
    const int x = p.Input(0, DType::kF32), y = p.Input(1, DType::kF32);
    const int c = p.Compare(op, x, y);
    p.AddOutput(c);
    p.AddOutput(p.Select(c, x, y));
    p.AddOutput(p.Unary(UnaryOp::kNot, c));
    std::vector<uint8_t> out_c(5), out_n(5);
    std::vector<float> out_s(5);
    const int64_t shape[1] = {5};
    ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
    void* outs[3] = {out_c.data(), out_s.data(), out_n.data()};
    EvalElementwise(p, 1, shape, in, 2, outs, 3, nullptr);
    for (size_t i = 0; i < 5; ++i) {
      bool want = false;
      switch (op) {
        case CompareOp::kEq: want = a[i] == b[i]; break;
        case CompareOp::kNe: want = a[i] != b[i]; break;
        case CompareOp::kLt: want = a[i] < b[i]; break;
        case CompareOp::kLe: want = a[i] <= b[i]; break;
        case CompareOp::kGt: want = a[i] > b[i]; break;
        case CompareOp::kGe: want = a[i] >= b[i]; break;
      }
      EXPECT_EQ(want ? 1 : 0, out_c[i]);
      EXPECT_EQ(want ? 0 : 1, out_n[i]);
      const float ws = want ? a[i] : b[i];
      EXPECT_TRUE(ws == out_s[i] || (std::isnan(ws) && std::isnan(out_s[i])));
    }
  }
  // Bool logic; any non-zero input byte counts as true, outputs are 0/1.
  const std::vector<uint8_t> p = {0, 0, 7, 1}, q = {0, 1, 0, 255};
  ElementwiseProgram prog;
  const int x = prog.Input(0, DType::kBool), y = prog.Input(1, DType::kBool);
  prog.AddOutput(prog.Binary(BinaryOp::kAnd, x, y));
  prog.AddOutput(prog.Binary(BinaryOp::kOr, x, y));
  prog.AddOutput(prog.Binary(BinaryOp::kXor, x, y));
  prog.AddOutput(prog.Compare(CompareOp::kEq, x, y));
  std::vector<uint8_t> o[4];
  void* outs[4];
  for (int k = 0; k < 4; ++k) {
    o[k].assign(4, 9);
    outs[k] = o[k].data();
  }
  const int64_t shape[1] = {4};
  ElementwiseInput in[2] = {{p.data(), nullptr}, {q.data(), nullptr}};
  EvalElementwise(prog, 1, shape, in, 2, outs, 4, nullptr);
  EXPECT_EQ((std::vector<uint8_t>{0, 0, 0, 1}), o[0]);
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1, 1}), o[1]);
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1, 0}), o[2]);
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 0, 1}), o[3]);
}

// ---- Conversions and select over the sizes, against the documented rules ----------------

// Reference conversion of one value, from the rules of elementwise.h (float -> int truncates
// toward zero and saturates, NaN -> 0; int -> narrower int wraps; f64 -> f32 rounds to
// nearest, beyond FLT_MAX + half an ulp to +-inf; anything -> bool is x != 0; bool -> 0 / 1).
template <class To, class From>
To ConvertReference(From x) {
  if constexpr (std::is_same<To, uint8_t>::value) {
    return static_cast<To>(x != From(0));  // to bool
  } else if constexpr (std::is_same<From, uint8_t>::value) {
    return static_cast<To>(x != 0 ? 1 : 0);  // from bool (any non-zero byte is true)
  } else if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    const LD v = static_cast<LD>(x);
    const LD limit = std::ldexp(LD(1), std::numeric_limits<To>::digits);  // 2^(bits - 1)
    if (std::isnan(v)) return 0;
    if (v >= limit) return std::numeric_limits<To>::max();
    if (v < -limit) return std::numeric_limits<To>::min();
    return static_cast<To>(std::trunc(v));
  } else if constexpr (std::is_integral<From>::value && std::is_integral<To>::value) {
    return static_cast<To>(static_cast<uint64_t>(static_cast<int64_t>(x)));  // modulo 2^bits
  } else {
    if (sizeof(To) == 4 && sizeof(From) == 8 && std::is_floating_point<From>::value) {
      const LD overflow = std::ldexp(LD(1), 128) - std::ldexp(LD(1), 103);  // FLT_MAX + ulp / 2
      const LD v = static_cast<LD>(x);
      if (std::isfinite(v) && std::fabs(v) >= overflow) {
        return static_cast<To>(std::copysign(std::numeric_limits<LD>::infinity(), v));
      }
    }
    return static_cast<To>(x);  // exact, or one IEEE rounding (int -> float, f64 -> f32)
  }
}

template <class T>
std::vector<T> ConvertInputs(size_t n, std::mt19937_64& rng) {
  std::vector<T> x(n);
  if constexpr (std::is_same<T, uint8_t>::value) {
    const uint8_t bytes[] = {0, 1, 2, 255};
    for (auto& v : x) v = static_cast<T>(bytes[rng() % 4]);
  } else if constexpr (std::is_floating_point<T>::value) {
    const std::vector<T> sp = Specials<T>();
    const T edges[] = {T(2147483647.0), T(2147483648.0), T(-2147483648.0), T(-2147483904.0),
                       T(9.2233720368547758e18), T(-9.2233720368547758e18), T(1.9), T(-1.9)};
    for (size_t i = 0; i < n; ++i) {
      switch (i % 3) {
        case 0: x[i] = RandomBits<T>(rng); break;
        case 1: x[i] = sp[rng() % sp.size()]; break;
        default: x[i] = edges[rng() % 8]; break;
      }
    }
  } else {
    const std::vector<T> e = IntEdges<T>();
    for (size_t i = 0; i < n; ++i) x[i] = i % 2 ? static_cast<T>(rng()) : e[rng() % e.size()];
  }
  return x;
}

template <class T>
DType DTypeOfAny() {
  if constexpr (std::is_same<T, uint8_t>::value) {
    return DType::kBool;
  } else {
    return DTypeOf<T>();
  }
}

// Equal bits, or both NaN.
template <class T>
bool SameValue(T got, T want) {
  if (std::is_floating_point<T>::value && got != got && want != want) return true;
  return std::memcmp(&got, &want, sizeof(T)) == 0;
}

template <class From, class To>
void CheckConvert(std::mt19937_64& rng) {
  for (int64_t n : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 1023, 1025, 4099}) {
    const std::vector<From> x = ConvertInputs<From>(static_cast<size_t>(n), rng);
    ElementwiseProgram p;
    p.AddOutput(p.Convert(p.Input(0, DTypeOfAny<From>()), DTypeOfAny<To>()));
    std::vector<To> got(x.size(), To(7));
    const int64_t shape[1] = {n};
    ElementwiseInput in{x.data(), nullptr};
    void* outs[1] = {got.data()};
    EvalElementwise(p, 1, shape, &in, 1, outs, 1, nullptr);
    for (size_t i = 0; i < x.size(); ++i) {
      const To want = ConvertReference<To>(x[i]);
      ++ReferenceChecks();
      ASSERT_TRUE(SameValue(got[i], want))
          << "convert " << static_cast<int>(DTypeOfAny<From>()) << " -> "
          << static_cast<int>(DTypeOfAny<To>()) << " of " << std::setprecision(21)
          << +x[i] << ": got " << +got[i] << ", want " << +want << " n=" << n;
    }
  }
}

template <class From>
void CheckConvertFrom(std::mt19937_64& rng) {
  CheckConvert<From, float>(rng);
  CheckConvert<From, double>(rng);
  CheckConvert<From, int32_t>(rng);
  CheckConvert<From, int64_t>(rng);
  CheckConvert<From, uint8_t>(rng);
}

TEST_P(ElementwiseTest, ConversionsMatchDocumentedRules) {
  std::mt19937_64 rng(29);
  CheckConvertFrom<float>(rng);
  CheckConvertFrom<double>(rng);
  CheckConvertFrom<int32_t>(rng);
  CheckConvertFrom<int64_t>(rng);
  CheckConvertFrom<uint8_t>(rng);
}

template <class T>
void CheckSelect(std::mt19937_64& rng) {
  for (int64_t n : {0, 1, 5, 8, 17, 1025}) {
    const std::vector<T> a = ConvertInputs<T>(static_cast<size_t>(n), rng);
    const std::vector<T> b = ConvertInputs<T>(static_cast<size_t>(n), rng);
    const std::vector<uint8_t> c = ConvertInputs<uint8_t>(static_cast<size_t>(n), rng);
    ElementwiseProgram p;
    p.AddOutput(p.Select(p.Input(0, DType::kBool), p.Input(1, DTypeOfAny<T>()), p.Input(2, DTypeOfAny<T>())));
    std::vector<T> got(a.size(), T(7));
    const int64_t shape[1] = {n};
    ElementwiseInput in[3] = {{c.data(), nullptr}, {a.data(), nullptr}, {b.data(), nullptr}};
    void* outs[1] = {got.data()};
    EvalElementwise(p, 1, shape, in, 3, outs, 1, nullptr);
    for (size_t i = 0; i < a.size(); ++i) {
      // A bool result is normalized to 0/1 like every bool output.
      T want = c[i] != 0 ? a[i] : b[i];
      if constexpr (std::is_same<T, uint8_t>::value) want = static_cast<T>(want != 0);
      ++ReferenceChecks();
      ASSERT_TRUE(SameValue(got[i], want)) << "select n=" << n << " i=" << i;
    }
  }
}

TEST_P(ElementwiseTest, SelectMatchesReference) {
  std::mt19937_64 rng(31);
  CheckSelect<float>(rng);
  CheckSelect<double>(rng);
  CheckSelect<int32_t>(rng);
  CheckSelect<int64_t>(rng);
  CheckSelect<uint8_t>(rng);
}

TEST_P(ElementwiseTest, ConversionsSaturateAndTruncate) {
  const std::vector<float> x = {1.9f,  -1.9f, kNaNF, 3e9f, -3e9f, kInfF, -kInfF,
                                0.0f, 2147483520.0f, -2147483648.0f};
  ElementwiseProgram p;
  const int in = p.Input(0, DType::kF32);
  p.AddOutput(p.Convert(in, DType::kI32));
  p.AddOutput(p.Convert(in, DType::kI64));
  p.AddOutput(p.Convert(in, DType::kBool));
  p.AddOutput(p.Convert(p.Convert(in, DType::kF64), DType::kF32));
  std::vector<int32_t> i32(x.size());
  std::vector<int64_t> i64(x.size());
  std::vector<uint8_t> b(x.size());
  std::vector<float> f(x.size());
  void* outs[4] = {i32.data(), i64.data(), b.data(), f.data()};
  const int64_t shape[1] = {static_cast<int64_t>(x.size())};
  ElementwiseInput input{x.data(), nullptr};
  EvalElementwise(p, 1, shape, &input, 1, outs, 4, nullptr);
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  EXPECT_EQ((std::vector<int32_t>{1, -1, 0, mx, mn, mx, mn, 0, 2147483520, mn}), i32);
  EXPECT_EQ((std::vector<int64_t>{1, -1, 0, 3000000000LL, -3000000000LL,
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(), 0, 2147483520LL,
                                  -2147483648LL}),
            i64);
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 0, 1, 1}), b);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_TRUE(f[i] == x[i] || (std::isnan(x[i]) && std::isnan(f[i])));
  }
  // i64 -> i32 wraps; bool -> f32; constants.
  ElementwiseProgram q;
  const int v = q.Input(0, DType::kI64);
  q.AddOutput(q.Convert(v, DType::kI32));
  q.AddOutput(q.Binary(BinaryOp::kAdd, q.Convert(q.Convert(v, DType::kBool), DType::kF32),
                       q.Constant(DType::kF32, 0.5)));
  const std::vector<int64_t> w = {(1LL << 32) + 5, -1, 0};
  std::vector<int32_t> o1(3);
  std::vector<float> o2(3);
  void* outs2[2] = {o1.data(), o2.data()};
  const int64_t shape2[1] = {3};
  ElementwiseInput input2{w.data(), nullptr};
  EvalElementwise(q, 1, shape2, &input2, 1, outs2, 2, nullptr);
  EXPECT_EQ((std::vector<int32_t>{5, -1, 0}), o1);
  EXPECT_EQ((std::vector<float>{1.5f, 1.5f, 0.5f}), o2);
}

// Random n-d shapes with broadcasting (stride 0), transposed and padded strides: the fused
// chain tanh(a*x + b) * c against a per-element reference.
TEST_P(ElementwiseTest, BroadcastingAndStridesMatchReference) {
  std::mt19937 rng(123);
  for (int iter = 0; iter < 150; ++iter) {
    const int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> shape(static_cast<size_t>(rank));
    int64_t total = 1;
    for (auto& e : shape) {
      const uint32_t k = rng() % 10;
      e = k == 0 ? (rng() % 4 == 0 ? 0 : 1) : static_cast<int64_t>(rng() % (iter < 100 ? 9 : 70));
      total *= e;
    }
    // At most 2^20 elements (still ~1000 tiles): the per-element reference dominates the time.
    while (total > (1 << 20)) {
      int64_t& largest = *std::max_element(shape.begin(), shape.end());
      total = total / largest * (largest / 2);
      largest /= 2;
    }
    // Four inputs; each dim is broadcast (stride 0) with probability 1/3; layouts are a
    // random permutation of the non-broadcast dims with padding.
    std::vector<std::vector<float>> data(4);
    std::vector<std::vector<int64_t>> strides(4, std::vector<int64_t>(static_cast<size_t>(rank)));
    for (int k = 0; k < 4; ++k) {
      std::vector<int> order(static_cast<size_t>(rank));
      for (int d = 0; d < rank; ++d) order[static_cast<size_t>(d)] = d;
      if (rng() % 2) std::shuffle(order.begin(), order.end(), rng);
      int64_t s = 1 + static_cast<int64_t>(rng() % 2);
      for (int j = rank - 1; j >= 0; --j) {
        const int d = order[static_cast<size_t>(j)];
        if (rng() % 3 == 0) {
          strides[k][static_cast<size_t>(d)] = 0;
        } else {
          strides[k][static_cast<size_t>(d)] = s;
          s *= std::max<int64_t>(1, shape[static_cast<size_t>(d)]) + static_cast<int64_t>(rng() % 2);
        }
      }
      data[k] = RandomVec<float>(static_cast<size_t>(s), rng, -2, 2);
    }
    ElementwiseProgram p;
    const int a = p.Input(0, DType::kF32), x = p.Input(1, DType::kF32);
    const int b = p.Input(2, DType::kF32), c = p.Input(3, DType::kF32);
    p.AddOutput(p.Binary(BinaryOp::kMul,
                         p.Unary(UnaryOp::kTanh,
                                 p.Binary(BinaryOp::kAdd, p.Binary(BinaryOp::kMul, a, x), b)),
                         c));
    ElementwiseInput in[4];
    for (int k = 0; k < 4; ++k) in[k] = {data[k].data(), strides[k].data()};
    std::vector<float> out(static_cast<size_t>(total) + 1, -99.0f);
    void* outs[1] = {out.data()};
    EvalElementwise(p, rank, shape.data(), in, 4, outs, 1, nullptr);
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t f = 0; f < total; ++f) {
      int64_t rest = f;
      for (int d = rank - 1; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
        rest /= shape[static_cast<size_t>(d)];
      }
      float v[4];
      for (int k = 0; k < 4; ++k) {
        int64_t off = 0;
        for (int d = 0; d < rank; ++d) off += idx[static_cast<size_t>(d)] * strides[k][static_cast<size_t>(d)];
        v[k] = data[k][static_cast<size_t>(off)];
      }
      const float want = std::tanh(v[0] * v[1] + v[2]) * v[3];
      ASSERT_NEAR(want, out[static_cast<size_t>(f)], 1e-5f) << "iter " << iter << " f " << f;
    }
    EXPECT_EQ(-99.0f, out[static_cast<size_t>(total)]) << "wrote past the end";
  }
}

TEST_P(ElementwiseTest, InPlaceMultipleOutputsAndConstants) {
  std::mt19937 rng(5);
  std::vector<double> x = RandomVec<double>(5000, rng, -1, 1);
  const std::vector<double> x0 = x;
  ElementwiseProgram p;
  const int in = p.Input(0, DType::kF64);
  const int two = p.Constant(DType::kF64, 2.0);
  const int y = p.Binary(BinaryOp::kMul, in, two);
  p.AddOutput(y);                                         // -> x (in place)
  p.AddOutput(p.Binary(BinaryOp::kAdd, in, y));           // 3x
  p.AddOutput(in);                                        // copy of the input
  std::vector<double> o1(x.size()), o2(x.size());
  void* outs[3] = {x.data(), o1.data(), o2.data()};
  const int64_t shape[2] = {50, 100};
  ElementwiseInput input{x.data(), nullptr};
  EvalElementwise(p, 2, shape, &input, 1, outs, 3, nullptr);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(2 * x0[i], x[i]);
    EXPECT_EQ(x0[i] + 2 * x0[i], o1[i]);
    EXPECT_EQ(x0[i], o2[i]);
  }
}

TEST_P(ElementwiseTest, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(9);
  const int64_t rows = 700, cols = 1001;
  std::vector<float> x = RandomVec<float>(static_cast<size_t>(rows * cols), rng, -5, 5);
  std::vector<float> bias = RandomVec<float>(static_cast<size_t>(cols), rng, -1, 1);
  ElementwiseProgram p;
  p.AddOutput(p.Unary(UnaryOp::kLogistic,
                      p.Binary(BinaryOp::kAdd, p.Input(0, DType::kF32), p.Input(1, DType::kF32))));
  const int64_t shape[2] = {rows, cols};
  const int64_t bias_strides[2] = {0, 1};
  ElementwiseInput in[2] = {{x.data(), nullptr}, {bias.data(), bias_strides}};
  std::vector<float> ref(x.size());
  void* outs[1] = {ref.data()};
  EvalElementwise(p, 2, shape, in, 2, outs, 1, nullptr);
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    std::vector<float> got(x.size());
    void* o[1] = {got.data()};
    EvalElementwise(p, 2, shape, in, 2, o, 1, &pool);
    EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), got.size() * sizeof(float)))
        << threads << " threads";
  }
  for (size_t i = 0; i < ref.size(); i += 997) {
    const float v = x[i] + bias[i % static_cast<size_t>(cols)];
    EXPECT_NEAR(1.0f / (1.0f + std::exp(-v)), ref[i], 1e-6f);
  }
}

// The fused multiply-add pass gives exactly the bits of a separate Mul then Add (the second
// program keeps the product as an output, which disables the fusion), including in place.
TEST_P(ElementwiseTest, FusedMulAddIsBitExactAndInPlaceIsSafe) {
  std::mt19937 rng(17);
  for (int64_t n : {0, 1, 5, 17, 1023, 1024, 1025, 5000}) {
    std::vector<float> a = RandomVec<float>(static_cast<size_t>(n), rng, -3, 3);
    std::vector<float> b = RandomVec<float>(static_cast<size_t>(n), rng, -3, 3);
    std::vector<float> c = RandomVec<float>(static_cast<size_t>(n), rng, -3, 3);
    const int64_t shape[1] = {n};
    ElementwiseInput in[3] = {{a.data(), nullptr}, {b.data(), nullptr}, {c.data(), nullptr}};
    ElementwiseProgram fused;
    fused.AddOutput(fused.Binary(BinaryOp::kAdd, fused.Input(2, DType::kF32),
                                 fused.Binary(BinaryOp::kMul, fused.Input(0, DType::kF32),
                                              fused.Input(1, DType::kF32))));
    ElementwiseProgram plain;
    const int m = plain.Binary(BinaryOp::kMul, plain.Input(0, DType::kF32), plain.Input(1, DType::kF32));
    plain.AddOutput(m);
    plain.AddOutput(plain.Binary(BinaryOp::kAdd, plain.Input(2, DType::kF32), m));
    std::vector<float> o1(static_cast<size_t>(n)), prod(static_cast<size_t>(n)), o2(static_cast<size_t>(n));
    void* outs1[1] = {o1.data()};
    void* outs2[2] = {prod.data(), o2.data()};
    EvalElementwise(fused, 1, shape, in, 3, outs1, 1, nullptr);
    EvalElementwise(plain, 1, shape, in, 3, outs2, 2, nullptr);
    for (size_t i = 0; i < o1.size(); ++i) {
      const float p = a[i] * b[i];
      EXPECT_EQ(p, prod[i]);
      EXPECT_EQ(c[i] + p, o1[i]);
      EXPECT_EQ(o1[i], o2[i]);
    }
    // In place: c = c + a*b written over c.
    void* outs3[1] = {c.data()};
    EvalElementwise(fused, 1, shape, in, 3, outs3, 1, nullptr);
    if (n > 0) {
      EXPECT_EQ(0, std::memcmp(c.data(), o1.data(), o1.size() * sizeof(float)));
    }
  }
}

TEST(ElementwiseProgram, RejectsInvalidPrograms) {
  ElementwiseProgram p;
  const int f = p.Input(0, DType::kF32);
  const int i = p.Input(1, DType::kI32);
  const int b = p.Input(2, DType::kBool);
  EXPECT_THROW(p.Binary(BinaryOp::kAdd, f, i), std::invalid_argument);
  EXPECT_THROW(p.Unary(UnaryOp::kExp, i), std::invalid_argument);
  EXPECT_THROW(p.Unary(UnaryOp::kNot, f), std::invalid_argument);
  EXPECT_THROW(p.Binary(BinaryOp::kAnd, f, f), std::invalid_argument);
  EXPECT_THROW(p.Binary(BinaryOp::kAdd, b, b), std::invalid_argument);
  EXPECT_THROW(p.Select(f, f, f), std::invalid_argument);
  EXPECT_THROW(p.Select(b, f, i), std::invalid_argument);
  EXPECT_THROW(p.Unary(UnaryOp::kNeg, 99), std::invalid_argument);
  EXPECT_THROW(p.Input(-1, DType::kF32), std::invalid_argument);
  EXPECT_EQ(3, p.num_registers());
  EXPECT_EQ(3, p.num_inputs());
  try {
    p.Binary(BinaryOp::kAdd, f, i);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("f32 and i32")) << e.what();
  }
  // Wrong counts at evaluation time.
  p.AddOutput(f);
  const int64_t shape[1] = {1};
  float v = 1;
  ElementwiseInput in{&v, nullptr};
  void* outs[1] = {&v};
  EXPECT_THROW(EvalElementwise(p, 1, shape, &in, 1, outs, 1, nullptr), std::invalid_argument);
}

TEST(ElementwiseProgram, SlotsAreReused) {
  ElementwiseProgram p;
  int x = p.Input(0, DType::kF32);
  int y = x;
  for (int k = 0; k < 20; ++k) y = p.Unary(UnaryOp::kNeg, y);
  p.AddOutput(y);
  EXPECT_LE(p.num_slots(), 3);  // input + two alternating temporaries
}

}  // namespace
}  // namespace kernels
}  // namespace shp
