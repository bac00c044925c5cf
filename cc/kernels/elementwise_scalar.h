// Scalar semantics of the elementwise ops (the reference for tests and the fix-up path of the
// SIMD code). Plain C++, header-only. See elementwise.h for the documented semantics.
#ifndef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_SCALAR_H_
#define SHAPEPOLY_CC_KERNELS_ELEMENTWISE_SCALAR_H_
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "cc/kernels/elementwise.h"

namespace shp {
namespace kernels {
namespace ew_scalar {

// Scalar reference of every float unary op (also the fix-up path of the SIMD code).
template <class T>
inline T FloatUnary(UnaryOp op, T x) {
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
      return T(1) / std::sqrt(x);
    case UnaryOp::kSin:
      return std::sin(x);
    case UnaryOp::kCos:
      return std::cos(x);
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kLogistic: {
      if (x >= 0) return T(1) / (T(1) + std::exp(-x));
      const T e = std::exp(x);
      return e / (T(1) + e);
    }
    case UnaryOp::kFloor:
      return std::floor(x);
    case UnaryOp::kCeil:
      return std::ceil(x);
    case UnaryOp::kRound:
      return std::nearbyint(x);  // default rounding mode: half to even
    case UnaryOp::kSign:
      return x > 0 ? T(1) : (x < 0 ? T(-1) : x);
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
  return std::numeric_limits<T>::quiet_NaN();
}

template <class T>
inline T WrapAdd(T a, T b) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
inline T WrapSub(T a, T b) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
inline T WrapMul(T a, T b) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

template <class T>
inline T IntDiv(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return WrapSub<T>(0, a);  // INT_MIN / -1 wraps to INT_MIN
  return a / b;
}
template <class T>
inline T IntFloorDiv(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return WrapSub<T>(0, a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
template <class T>
inline T IntRem(T a, T b) {
  if (b == 0 || b == -1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// C remainder (kFmod): sign of the dividend; x fmod 0 == 0 and INT_MIN fmod -1 == 0.
template <class T>
inline T IntFmod(T a, T b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}
template <class T>
inline T IntPow(T a, T b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? T(-1) : T(1);
    return 0;
  }
  using U = typename std::make_unsigned<T>::type;
  U result = 1;
  U base = static_cast<U>(a);
  uint64_t e = static_cast<uint64_t>(b);
  while (e != 0) {
    if (e & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
    e >>= 1;
  }
  return static_cast<T>(result);
}

// numpy.remainder / numpy.floor_divide for floats (npy_divmod).
template <class T>
inline T FloatRem(T a, T b) {
  T mod = std::fmod(a, b);
  if (b == 0) return mod;  // NaN
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(T(0), b);
  }
  return mod;
}
template <class T>
inline T FloatFloorDiv(T a, T b) {
  if (b == 0) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
  if (div != 0) {
    T floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
    return floordiv;
  }
  return std::copysign(T(0), a / b);
}

template <class T>
inline T FloatMax(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  return a > b ? a : b;
}
template <class T>
inline T FloatMin(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  return a < b ? a : b;
}

// Saturating float -> int conversion (truncation toward zero, NaN -> 0).
template <class I, class F>
inline I FloatToInt(F x) {
  if (!(x == x)) return 0;
  // 2^(bits-1) is exactly representable in F.
  const F limit = static_cast<F>(std::numeric_limits<I>::max()) + F(1) >= F(0)
                      ? std::ldexp(F(1), std::numeric_limits<I>::digits)
                      : F(0);
  if (x >= limit) return std::numeric_limits<I>::max();
  if (x < -limit) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}

}  // namespace ew_scalar
}  // namespace kernels
}  // namespace shp
#endif  // SHAPEPOLY_CC_KERNELS_ELEMENTWISE_SCALAR_H_
