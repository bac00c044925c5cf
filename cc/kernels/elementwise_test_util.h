// Shared helpers of the elementwise tests (elementwise_*test.cc): running one op over a 1-d
// array, ulp distances to exact long double values, special inputs, and the counters printed at
// the end of the run.
#ifndef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_TEST_UTIL_H_
#define SHAPEPOLY_CC_KERNELS_ELEMENTWISE_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

const float kInfF = std::numeric_limits<float>::infinity();
const float kNaNF = std::numeric_limits<float>::quiet_NaN();

template <class T>
std::vector<T> RandomVec(size_t n, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

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

inline const char* UnaryName(UnaryOp op) {
  static const char* const kNames[] = {
      "neg", "abs",  "exp",      "log",   "log1p", "expm1", "sqrt",  "rsqrt", "sin",
      "cos", "tanh", "logistic", "floor", "ceil",  "round", "sign",  "not",   "erf",
      "tan", "sinh", "cosh",     "asin",  "acos",  "atan",  "asinh", "acosh", "atanh"};
  return kNames[static_cast<int>(op)];
}

inline const char* BinaryName(BinaryOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "floordiv", "pow", "max",
                                       "min", "rem", "and", "or",  "xor",      "fmod"};
  return kNames[static_cast<int>(op)];
}

// Values that hit every special case and the edges of the SIMD ranges of elementwise_ops-inl.h
// (exp/expm1 f32 [-87, 88] f64 [-708, 709], sin/cos +-39000, logistic f32 -80 f64 -700, log's
// smallest normal), and numbers whose rounding is a tie.
template <class T>
std::vector<T> Specials() {
  using L = std::numeric_limits<T>;
  const T v[] = {L::quiet_NaN(),
                 -L::quiet_NaN(),
                 L::infinity(),
                 -L::infinity(),
                 T(0),
                 -T(0),
                 L::denorm_min(),
                 -L::denorm_min(),
                 L::min() - L::denorm_min(),
                 L::min(),
                 -L::min(),
                 L::max(),
                 -L::max(),
                 T(1),
                 T(-1),
                 T(0.5),
                 T(-0.5),
                 T(1.5),
                 T(-1.5),
                 T(2.5),
                 T(-2.5),
                 T(0.49999997),
                 L::epsilon(),
                 T(1) - L::epsilon() / 2,
                 T(-1) + L::epsilon() / 2,
                 T(-1) - L::epsilon(),
                 T(-87),
                 T(-87.5),
                 T(88),
                 T(88.72),
                 T(89),
                 T(-103.5),
                 T(-104),
                 T(-708),
                 T(-708.5),
                 T(709),
                 T(709.8),
                 T(-745),
                 T(-746),
                 T(-80),
                 T(-80.5),
                 T(-700),
                 T(-700.5),
                 T(39000),
                 T(-39000),
                 T(39001),
                 T(-39001),
                 T(1e6),
                 T(3.14159265358979),
                 T(1e-10),
                 T(-1e-10),
                 T(20),
                 T(-20),
                 T(8388609),
                 T(4503599627370497.0)};
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

inline std::vector<int64_t> Sizes() {
  std::vector<int64_t> s;
  // 0, 1, lanes - 1, lanes + 1, ... (<= 16 lanes)
  for (int64_t n = 0; n <= 40; ++n) s.push_back(n);
  for (int64_t n : {63, 64, 65, 1023, 1024, 1025, 3001, 20011}) s.push_back(n);  // tiles of 1024
  return s;
}

// Largest ulp error seen per (target, dtype, op), printed at the end of the run.
inline std::map<std::string, double>& MaxUlps() {
  static std::map<std::string, double> m;
  return m;
}

// Element results compared with an independent reference (all targets), printed at the end.
inline int64_t& ReferenceChecks() {
  static int64_t n = 0;
  return n;
}

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_ELEMENTWISE_TEST_UTIL_H_
