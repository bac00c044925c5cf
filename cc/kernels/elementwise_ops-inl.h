// Per-target array operations of the elementwise kernels (and SIMD helpers shared with softmax):
// one op over n contiguous elements. A Highway "-inl.h" header: re-included once per target
// through foreach_target.h (via elementwise-inl.h), so it has a per-target include guard and is
// a Bazel textual header.
// size-gate: file: one per-target table of every elementwise op (the fused evaluator and softmax
// include it whole); splitting it by op family would re-include the shared tail helpers.
//
// Every function processes n elements of contiguous arrays; the last (n mod lanes) elements go
// through a vector-sized stack buffer padded with ones, so nothing past x[n-1] is ever read or
// written and the tail uses exactly the same arithmetic as the body. Operands of array
// functions may alias their output exactly (in-place) but must not partially overlap.

#include "cc/kernels/elementwise_scalar.h"
#include "cc/kernels/narrow.h"

// ---- Per-target code ----
#if defined(SHAPEPOLY_CC_KERNELS_ELEMENTWISE_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_OPS_INL_H_
#undef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_OPS_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_ELEMENTWISE_OPS_INL_H_
#endif

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Upper bound on the lanes of a vector of T on this target (for stack buffers).
template <class T>
constexpr size_t MaxLanesOf() {
  return HWY_MAX_BYTES / sizeof(T) > 0 ? HWY_MAX_BYTES / sizeof(T) : 1;
}

// Input range [lo, hi] on which Highway's polynomial for `op` is documented to be valid (with
// margins for overflow/underflow). When `check` is set, lanes outside it (including NaN) are
// recomputed with the scalar <cmath> reference; otherwise the SIMD result is IEEE-exact or
// correct for all inputs (neg, abs, sqrt, floor, ...).
template <class T>
struct SimdRange {
  bool check = false;
  T lo = T(0), hi = T(0);
};

template <class T>
HWY_INLINE SimdRange<T> RangeOf(UnaryOp op) {
  const bool f32 = sizeof(T) == 4;
  const T max = std::numeric_limits<T>::max();
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kExpm1:
      return {true, f32 ? T(-87) : T(-708), f32 ? T(88) : T(709)};
    case UnaryOp::kLog:
      return {true, std::numeric_limits<T>::min(), max};
    case UnaryOp::kLog1p:
      return {true, T(0), max};
    case UnaryOp::kSin:
    case UnaryOp::kCos:
      return {true, T(-39000), T(39000)};
    case UnaryOp::kTanh:
      return {true, -max, max};
    case UnaryOp::kLogistic:
      return {true, f32 ? T(-80) : T(-700), max};
    case UnaryOp::kErf:
      return {true, -max, max};  // NaN and +-inf go to libm
    case UnaryOp::kSinh:         // Highway's Sinh: f32 [-88.72, 88.72], f64 [-709, 709]
    case UnaryOp::kCosh:         // CoshOf: e^|x| finite
      return {true, f32 ? T(-88) : T(-709), f32 ? T(88) : T(709)};
    case UnaryOp::kAsin:
    case UnaryOp::kAcos:
      return {true, T(-1), T(1)};  // outside: NaN from libm
    case UnaryOp::kAtan:
    case UnaryOp::kAsinh:
      return {true, -max, max};
    case UnaryOp::kAcosh:
      return {true, T(1), max};
    case UnaryOp::kAtanh: {  // the open interval (-1, 1); +-1 give +-inf from libm
      const T below_one = T(1) - std::numeric_limits<T>::epsilon() / 2;
      return {true, -below_one, below_one};
    }
    default:
      return {false, T(0), T(0)};
  }
}

// Functors (not lambdas, so they surely carry the target attributes).
struct VLogistic {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V v) const {
    using T = hn::TFromD<D>;
    const V one = hn::Set(d, T(1));
    // Lanes with x < lo are recomputed in scalar; the clamp only keeps Exp in range.
    const V e = hn::Exp(d, hn::Max(hn::Neg(v), hn::Set(d, T(sizeof(T) == 4 ? -80 : -700))));
    return hn::Div(one, hn::Add(one, e));
  }
};

// e^y = 2^q (1 + p) for f32 lanes y in [-88, 88] (the callers clamp): q = round(y / ln2),
// r = y - q ln2 (ln2 in two parts, Cody-Waite), p = e^r - 1 = r + r^2 Q(r) with Q a degree-4
// minimax fit (relative error 3.1e-9). Returns p and sets *two_q = 2^q. Shared by VTanhF32 and
// VLogisticF32, whose maximum errors (measured over every f32 input) rest on it.
//
// q is rounded by adding 1.5 * 2^23 (the sum's low mantissa bits are then 2^22 + q, so 2^q's
// exponent field is a shift of those bits): cheaper than Round plus ConvertTo, whose AVX2 form
// also fixes up overflowing lanes (|q| <= 127 here).
template <class D, class V>
HWY_INLINE V ExpReducedF32(D d, V y, V* two_q) {
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, 12582912.0f);  // 1.5 * 2^23
  const V shifted = hn::MulAdd(y, hn::Set(d, 1.44269504088896341f), magic);
  const V qf = hn::Sub(shifted, magic);
  V r = hn::MulAdd(qf, hn::Set(d, -0.693145751953125f), y);
  r = hn::MulAdd(qf, hn::Set(d, -1.428606765330187045e-6f), r);
  V q = hn::MulAdd(r, hn::Set(d, 0.001381461275741458f), hn::Set(d, 0.008368710055947304f));
  q = hn::MulAdd(r, q, hn::Set(d, 0.04166838899254799f));
  q = hn::MulAdd(r, q, hn::Set(d, 0.1666652113199234f));
  q = hn::MulAdd(r, q, hn::Set(d, 0.4999999403953552f));
  // (2^22 + q + 127 + 0x4B000000) << 23 keeps only (q + 127) << 23: the rest shifts out.
  *two_q = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, shifted), hn::Set(di, 127))));
  return hn::MulAdd(hn::Mul(r, r), q, r);
}

// logistic of f32 lanes, 1 / (1 + e^-x), within 2 ulp of the exact value over every f32 input
// (elementwise_tanh_exhaustive_test; VLogistic, Highway's Exp then a division, reaches 2.48 ulp:
// the rounding of e^-x and of 1 + e^-x both pass to the result). With e = e^(-|x|) <= 1:
//   x >= 0: 1 / (1 + e);   x < 0: e / (1 + e).
// e = 2^q (1 + p) with p = e^r - 1 from VTanhF32's reduction and polynomial, and e, 1 + e and
// the numerator are kept as unevaluated sums hi + lo (exact two-sums: |2^q| >= |2^q p| and
// 1 >= e), so the quotient is rounded once and then corrected by (n_lo - q0 d_lo) / d_hi (an
// approximate reciprocal is enough: the correction is below 2^-22 of the result). |x| is
// clamped to 80: e^-80 is normal, and 1 / (1 + e^-80) rounds to 1. Lanes below -80, NaN and
// +-inf go to libm (RangeOf).
struct VLogisticF32 {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V one = hn::Set(d, 1.0f);
    const V y = hn::Neg(hn::Min(hn::Abs(x), hn::Set(d, 80.0f)));
    V a = hn::Zero(d);
    const V p = ExpReducedF32(d, y, &a);  // e^y = a (1 + p)
    const V b = hn::Mul(a, p);            // exact: a is a power of two
    const V e = hn::Add(a, b);
    const V e_lo = hn::Add(hn::Sub(a, e), b);
    const V d_hi = hn::Add(one, e);
    const V d_lo = hn::Add(hn::Add(hn::Sub(one, d_hi), e), e_lo);
    const auto negative = hn::Lt(x, hn::Zero(d));
    const V n_hi = hn::IfThenElse(negative, e, one);
    const V n_lo = hn::IfThenElseZero(negative, e_lo);
    const V q0 = hn::Div(n_hi, d_hi);
    const V corr = hn::NegMulAdd(q0, d_lo, n_lo);  // n_lo - q0 d_lo
    return hn::MulAdd(corr, hn::ApproximateReciprocal(d_hi), q0);
  }
};

template <class D, class V>
HWY_INLINE V LogisticOf(D d, V v) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    return VLogisticF32()(d, v);
  } else {
    return VLogistic()(d, v);  // f64: Highway's Exp and a division
  }
}

// tanh of f32 lanes: ~1.6x faster than Highway's Tanh (Expm1 then a division; 4 ulp) and within
// 2 ulp of the exact value over every f32 input (elementwise_tanh_exhaustive_test: 1.42 ulp on
// AVX2, 1.41 on SSE4/SSSE3, the worst just above kSmall). Two regions, both computed and
// blended per lane:
//   |x| <  kSmall: x + x^3 P(x^2), P a degree-4 minimax fit (relative error 1.3e-9);
//   |x| >= kSmall: 1 - 2 / (e^(2|x|) + 1), where the result is >= 0.5 so the subtraction loses
//                  nothing; e^y = 2^q e^r with |r| <= ln2/2 and e^r = 1 + r + r^2 Q(r), Q a
//                  degree-4 minimax fit (relative error 3.1e-9). |x| is clamped to 9 first:
//                  tanh(9) rounds to 1 in f32 and e^18 stays far from overflow.
// The sign is put back last (tanh is odd; -0 stays -0). NaN and infinities are not handled here
// (the range check of UnaryVec sends them to libm).
struct VTanhF32 {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V sign = hn::And(hn::SignBit(d), x);
    const V ax = hn::Xor(x, sign);
    // Small region.
    const V u = hn::Mul(ax, ax);
    V p = hn::MulAdd(u, hn::Set(d, -0.0061798132956027985f), hn::Set(d, 0.021007461473345757f));
    p = hn::MulAdd(u, p, hn::Set(d, -0.053837429732084274f));
    p = hn::MulAdd(u, p, hn::Set(d, 0.1333245187997818f));
    p = hn::MulAdd(u, p, hn::Set(d, -0.3333331346511841f));
    const V small = hn::MulAdd(hn::Mul(ax, u), p, ax);
    // Large region: e = e^(2 min(|x|, 9)).
    const V y = hn::Add(hn::Min(ax, hn::Set(d, 9.0f)), hn::Min(ax, hn::Set(d, 9.0f)));
    V two_q = hn::Zero(d);
    const V er = hn::Add(ExpReducedF32(d, y, &two_q), hn::Set(d, 1.0f));  // e^y = two_q er
    const V one = hn::Set(d, 1.0f);
    const V e = hn::Mul(er, two_q);
    const V large = hn::Sub(one, hn::Div(hn::Set(d, 2.0f), hn::Add(e, one)));
    return hn::Or(hn::IfThenElse(hn::Lt(ax, hn::Set(d, kSmall)), small, large), sign);
  }
  static constexpr float kSmall = 0.5625f;
};

template <class D, class V>
HWY_INLINE V TanhOf(D d, V v) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    return VTanhF32()(d, v);
  } else {
    return hn::Tanh(d, v);  // f64: Highway's (4 ulp)
  }
}

// erf of f32 lanes, within 2 ulp of the exact value (elementwise_erf_test: every 61st f32 bit
// pattern). The coefficients are the kernels' own fits (weighted least squares iterated toward
// minimax against 40-digit mpmath values), in two regions blended per lane:
//   |x| <  1: x + x P(x^2), P ~ erf(x)/x - 1 (degree 6, absolute error 1.2e-9); adding x last
//             keeps the large part exact;
//   |x| >= 1: 1 - e^(-x^2) t Q(t), t = 1/|x|, Q ~ x e^(x^2) erfc(x) (degree 9 in t, relative
//             error 4.9e-9). x^2 is split as hi + lo (lo by a fused multiply-add) and
//             e^(-x^2) = e^(-hi) (1 - lo), so the rounding of x^2 does not pass to the result.
//             |x| is clamped to 4 first, where erfc < 1.6e-8 makes the result round to 1.
// The sign is put back last (erf is odd; -0 stays -0). NaN and infinities go to libm (RangeOf).
struct VErfF32 {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    const V sign = hn::And(hn::SignBit(d), x);
    const V ax = hn::Xor(x, sign);
    // Small region.
    const V u = hn::Mul(ax, ax);
    V p = hn::MulAdd(u, hn::Set(d, 7.889285188866779e-05f), hn::Set(d, -0.0008020895184017718f));
    p = hn::MulAdd(u, p, hn::Set(d, 0.005189542192965746f));
    p = hn::MulAdd(u, p, hn::Set(d, -0.02685444802045822f));
    p = hn::MulAdd(u, p, hn::Set(d, 0.11283600330352783f));
    p = hn::MulAdd(u, p, hn::Set(d, -0.3761262595653534f));
    p = hn::MulAdd(u, p, hn::Set(d, 0.12837916612625122f));
    const V small = hn::MulAdd(ax, p, ax);
    // Large region.
    const V one = hn::Set(d, 1.0f);
    const V c = hn::Min(hn::Max(ax, one), hn::Set(d, 4.0f));
    const V t = hn::Div(one, c);
    V q = hn::MulAdd(t, hn::Set(d, -0.04649628326296806f), hn::Set(d, 0.31634023785591125f));
    q = hn::MulAdd(t, q, hn::Set(d, -0.9528623819351196f));
    q = hn::MulAdd(t, q, hn::Set(d, 1.6511398553848267f));
    q = hn::MulAdd(t, q, hn::Set(d, -1.756693959236145f));
    q = hn::MulAdd(t, q, hn::Set(d, 1.059004306793213f));
    q = hn::MulAdd(t, q, hn::Set(d, -0.14333875477313995f));
    q = hn::MulAdd(t, q, hn::Set(d, -0.26221269369125366f));
    q = hn::MulAdd(t, q, hn::Set(d, -0.0015356000512838364f));
    q = hn::MulAdd(t, q, hn::Set(d, 0.5642388463020325f));
    const V hi = hn::Mul(c, c);
    const V lo = hn::MulSub(c, c, hi);
    const V e = hn::Exp(d, hn::Neg(hi));
    const V erfc = hn::Mul(hn::NegMulAdd(e, lo, e), hn::Mul(t, q));
    const V large = hn::Sub(one, erfc);
    return hn::Or(hn::IfThenElse(hn::Lt(ax, one), small, large), sign);
  }
};

// <cmath>'s f(x) lane by lane, for the ops without a SIMD approximation.
template <class D, class V, class F>
HWY_INLINE V PerLane(D d, V v, F f) {
  using T = hn::TFromD<D>;
  HWY_ALIGN T buf[MaxLanesOf<T>()];
  hn::Store(v, d, buf);
  for (size_t j = 0; j < hn::Lanes(d); ++j) buf[j] = f(buf[j]);
  return hn::Load(d, buf);
}

// f32: VErfF32. f64: <cmath>'s erf lane by lane (no SIMD f64 approximation yet).
template <class D, class V>
HWY_INLINE V ErfOf(D d, V v) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 4) {
    return VErfF32()(d, v);
  } else {
    return PerLane(d, v, [](T x) { return std::erf(x); });
  }
}

// Highway's Sinh, except below 2^-12 (f32) or 2^-26 (f64), where sinh(x) = x (1 + x^2/6 + ...)
// rounds to x: Highway's halving turns sinh of the smallest subnormals into 0.
template <class D, class V>
HWY_INLINE V SinhOf(D d, V v) {
  using T = hn::TFromD<D>;
  const V tiny = hn::Set(d, sizeof(T) == 4 ? T(1.0 / 4096) : T(1.0 / 67108864));
  return hn::IfThenElse(hn::Lt(hn::Abs(v), tiny), v, hn::Sinh(d, v));
}

// cosh = e^|x| / 2 + 1 / (2 e^|x|): both terms positive, so the result keeps Exp's accuracy
// plus two roundings. |x| beyond RangeOf (e^|x| overflows) goes to libm.
template <class D, class V>
HWY_INLINE V CoshOf(D d, V v) {
  using T = hn::TFromD<D>;
  const V half = hn::Set(d, T(0.5));
  const V e = hn::Exp(d, hn::Abs(v));
  return hn::MulAdd(half, e, hn::Div(half, e));
}

template <class D, class V>
HWY_INLINE V ApplyUnary(D d, UnaryOp op, V v) {
  using T = hn::TFromD<D>;
  switch (op) {
    case UnaryOp::kNeg:
      return hn::Neg(v);
    case UnaryOp::kAbs:
      return hn::Abs(v);
    case UnaryOp::kExp:
      return hn::Exp(d, v);
    case UnaryOp::kLog:
      return hn::Log(d, v);
    case UnaryOp::kLog1p:
      return hn::Log1p(d, v);
    case UnaryOp::kExpm1:
      return hn::Expm1(d, v);
    case UnaryOp::kSqrt:
      return hn::Sqrt(v);
    case UnaryOp::kRsqrt:
      return hn::Div(hn::Set(d, T(1)), hn::Sqrt(v));
    case UnaryOp::kSin:
      return hn::Sin(d, v);
    case UnaryOp::kCos:
      return hn::Cos(d, v);
    case UnaryOp::kTanh:
      return TanhOf(d, v);
    case UnaryOp::kLogistic:
      return LogisticOf(d, v);
    case UnaryOp::kErf:
      return ErfOf(d, v);
    case UnaryOp::kTan:  // Highway has no Tan; sin / cos would lose accuracy near the poles
      return PerLane(d, v, [](T x) { return std::tan(x); });
    case UnaryOp::kSinh:
      return SinhOf(d, v);
    case UnaryOp::kCosh:
      return CoshOf(d, v);
    case UnaryOp::kAsin:
      return hn::Asin(d, v);
    case UnaryOp::kAcos:
      return hn::Acos(d, v);
    case UnaryOp::kAtan:
      return hn::Atan(d, v);
    case UnaryOp::kAsinh:
      return hn::Asinh(d, v);
    case UnaryOp::kAcosh:
      return hn::Acosh(d, v);
    case UnaryOp::kAtanh:
      return hn::Atanh(d, v);
    // CopySign keeps the sign of zero results (round(-0.4) == -0.0, as in numpy); some
    // targets' Floor/Ceil/Round lose it. It never changes a non-zero result's sign.
    case UnaryOp::kFloor:
      return hn::CopySign(hn::Floor(v), v);
    case UnaryOp::kCeil:
      return hn::CopySign(hn::Ceil(v), v);
    case UnaryOp::kRound:
      return hn::CopySign(hn::Round(v), v);
    case UnaryOp::kSign: {
      const V zero = hn::Zero(d);
      return hn::IfThenElse(hn::Gt(v, zero), hn::Set(d, T(1)),
                            hn::IfThenElse(hn::Lt(v, zero), hn::Set(d, T(-1)), v));
    }
    case UnaryOp::kNot:
      break;
  }
  return v;
}

// f(v) for one vector of a unary float op, with the out-of-range fix-up.
template <class D, class F, class V>
HWY_INLINE V UnaryOfVec(D d, F f, const SimdRange<hn::TFromD<D>>& range, V v) {
  using T = hn::TFromD<D>;
  V r = f(d, v);
  if (range.check) {
    const auto ok = hn::And(hn::Ge(v, hn::Set(d, range.lo)), hn::Le(v, hn::Set(d, range.hi)));
    if (HWY_UNLIKELY(!hn::AllTrue(d, ok))) {
      HWY_ALIGN T xs[MaxLanesOf<T>()];
      HWY_ALIGN T rs[MaxLanesOf<T>()];
      HWY_ALIGN T ms[MaxLanesOf<T>()];
      hn::Store(v, d, xs);
      hn::Store(r, d, rs);
      hn::Store(hn::VecFromMask(d, ok), d, ms);
      const size_t N = hn::Lanes(d);
      for (size_t j = 0; j < N; ++j) {
        uint64_t bits = 0;
        memcpy(&bits, &ms[j], sizeof(T));
        if (bits == 0) rs[j] = f.Scalar(xs[j]);
      }
      r = hn::Load(d, rs);
    }
  }
  return r;
}

// One vector of a unary float op with the out-of-range fix-up.
template <class D, class F>
HWY_INLINE void UnaryVec(D d, F f, const SimdRange<hn::TFromD<D>>& range, const hn::TFromD<D>* src,
                         hn::TFromD<D>* dst) {
  hn::StoreU(UnaryOfVec(d, f, range, hn::LoadU(d, src)), d, dst);
}

// Maps a unary functor f (f(d, v) vector op; f.Scalar(x) scalar op for fix-ups) over n elems.
template <class T, class F>
HWY_INLINE void MapUnary(F f, const SimdRange<T>& range, const T* x, T* out, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) UnaryVec(d, f, range, x + i, out + i);
  if (i < n) {
    HWY_ALIGN T buf[MaxLanesOf<T>()];
    for (size_t j = 0; j < N; ++j) buf[j] = j < n - i ? x[i + j] : T(1);
    UnaryVec(d, f, range, buf, buf);
    for (size_t j = 0; j < n - i; ++j) out[i + j] = buf[j];
  }
}

// Adapts a compile-time UnaryOp to the functor interface of MapUnary (one instantiation per
// op keeps the inner loop free of the op switch).
template <UnaryOp kOp>
struct UnaryFnT {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V v) const {
    return ApplyUnary(d, kOp, v);
  }
  template <class T>
  HWY_INLINE T Scalar(T x) const {
    return ew_scalar::FloatUnary(kOp, x);
  }
};

template <class T>
HWY_NOINLINE void FloatUnaryArray(UnaryOp op, const T* x, T* out, size_t n) {
  switch (op) {
#define SHP_EW_CASE(OP)                                                       \
  case UnaryOp::OP:                                                           \
    MapUnary<T>(UnaryFnT<UnaryOp::OP>(), RangeOf<T>(UnaryOp::OP), x, out, n); \
    return;
    SHP_EW_CASE(kNeg)
    SHP_EW_CASE(kAbs)
    SHP_EW_CASE(kExp)
    SHP_EW_CASE(kLog)
    SHP_EW_CASE(kLog1p)
    SHP_EW_CASE(kExpm1)
    SHP_EW_CASE(kSqrt)
    SHP_EW_CASE(kRsqrt)
    SHP_EW_CASE(kSin)
    SHP_EW_CASE(kCos)
    SHP_EW_CASE(kTanh)
    SHP_EW_CASE(kLogistic)
    SHP_EW_CASE(kFloor)
    SHP_EW_CASE(kCeil)
    SHP_EW_CASE(kRound)
    SHP_EW_CASE(kSign)
    SHP_EW_CASE(kErf)
    SHP_EW_CASE(kTan)
    SHP_EW_CASE(kSinh)
    SHP_EW_CASE(kCosh)
    SHP_EW_CASE(kAsin)
    SHP_EW_CASE(kAcos)
    SHP_EW_CASE(kAtan)
    SHP_EW_CASE(kAsinh)
    SHP_EW_CASE(kAcosh)
    SHP_EW_CASE(kAtanh)
#undef SHP_EW_CASE
    case UnaryOp::kNot:
      return;  // rejected by the program builder
  }
}

// The fused unary pass (ElementwiseProgram::unary_muladd / fused_unary): out = f(y) * m with
// y = a * b + c when kMulAdd (else y = a) and the final product only when kMul, over n
// elements, with the vector Mul and Add of FloatMulAddArray and FloatBinarySimd (the same
// results as the separate passes) and MapUnary's range fix-up. out may alias any operand
// exactly (each vector is loaded before it is stored).
template <class T, bool kMulAdd, bool kMul, class F>
HWY_INLINE void MapUnaryFused(F f, const SimdRange<T>& range, const T* a, const T* b, const T* c,
                              const T* m, T* out, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  auto one_vec = [&](const T* pa, const T* pb, const T* pc, const T* pm, T* po) {
    auto y = hn::LoadU(d, pa);
    if constexpr (kMulAdd) y = hn::Add(hn::Mul(y, hn::LoadU(d, pb)), hn::LoadU(d, pc));
    auto r = UnaryOfVec(d, f, range, y);
    if constexpr (kMul) r = hn::Mul(r, hn::LoadU(d, pm));
    hn::StoreU(r, d, po);
  };
  size_t i = 0;
  // Unused operands are null: no pointer arithmetic on them (undefined behaviour, UBSan).
  for (; i + N <= n; i += N) {
    one_vec(a + i, kMulAdd ? b + i : nullptr, kMulAdd ? c + i : nullptr, kMul ? m + i : nullptr,
            out + i);
  }
  if (i < n) {  // tail through buffers padded with ones (as MapUnary and the binary passes)
    HWY_ALIGN T ba[MaxLanesOf<T>()];
    HWY_ALIGN T bb[MaxLanesOf<T>()];
    HWY_ALIGN T bc[MaxLanesOf<T>()];
    HWY_ALIGN T bm[MaxLanesOf<T>()];
    for (size_t j = 0; j < N; ++j) {
      const bool in = j < n - i;
      ba[j] = in ? a[i + j] : T(1);
      bb[j] = kMulAdd && in ? b[i + j] : T(1);
      bc[j] = kMulAdd && in ? c[i + j] : T(1);
      bm[j] = kMul && in ? m[i + j] : T(1);
    }
    one_vec(ba, bb, bc, bm, ba);
    for (size_t j = 0; j < n - i; ++j) out[i + j] = ba[j];
  }
}

template <class T, bool kMulAdd, bool kMul>
HWY_NOINLINE void FusedUnaryArrayT(UnaryOp op, const T* a, const T* b, const T* c, const T* m,
                                   T* out, size_t n) {
  switch (op) {
#define SHP_EW_FUSED_CASE(OP)                                                                     \
  case UnaryOp::OP:                                                                               \
    MapUnaryFused<T, kMulAdd, kMul>(UnaryFnT<UnaryOp::OP>(), RangeOf<T>(UnaryOp::OP), a, b, c, m, \
                                    out, n);                                                      \
    return;
    SHP_EW_FUSED_CASE(kTanh)
    SHP_EW_FUSED_CASE(kExp)
    SHP_EW_FUSED_CASE(kLogistic)
#undef SHP_EW_FUSED_CASE
    default:
      return;  // the program builder fuses only the ops above
  }
}

// The fused unary pass on float dtype t: y = a * b + c if b != nullptr (else y = a), then
// out = op(y) * m if m != nullptr (else op(y)).
inline void FusedUnaryAny(UnaryOp op, DType t, const void* a, const void* b, const void* c,
                          const void* m, void* out, size_t n) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    const T* pc = static_cast<const T*>(c);
    const T* pm = static_cast<const T*>(m);
    T* po = static_cast<T*>(out);
    if (b != nullptr && m != nullptr) {
      FusedUnaryArrayT<T, true, true>(op, pa, pb, pc, pm, po, n);
    } else if (b != nullptr) {
      FusedUnaryArrayT<T, true, false>(op, pa, pb, pc, pm, po, n);
    } else {
      FusedUnaryArrayT<T, false, true>(op, pa, pb, pc, pm, po, n);
    }
  };
  if (t == DType::kF32) {
    run(float());
  } else {
    run(double());
  }
}

// Binary float ops (SIMD) with scalar-identical tails.
template <class D, class V>
HWY_INLINE V ApplyBinary(D d, BinaryOp op, V a, V b) {
  (void)d;
  switch (op) {
    case BinaryOp::kAdd:
      return hn::Add(a, b);
    case BinaryOp::kSub:
      return hn::Sub(a, b);
    case BinaryOp::kMul:
      return hn::Mul(a, b);
    case BinaryOp::kDiv:
      return hn::Div(a, b);
    case BinaryOp::kMax:
    case BinaryOp::kMin: {
      const V m = op == BinaryOp::kMax ? hn::Max(a, b) : hn::Min(a, b);
      return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), m);
    }
    default:
      break;
  }
  return a;
}

template <class T, BinaryOp kOp>
HWY_NOINLINE void FloatBinarySimd(const T* a, const T* b, T* out, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(ApplyBinary(d, kOp, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  }
  if (i < n) {
    HWY_ALIGN T ba[MaxLanesOf<T>()];
    HWY_ALIGN T bb[MaxLanesOf<T>()];
    for (size_t j = 0; j < N; ++j) {
      ba[j] = j < n - i ? a[i + j] : T(1);
      bb[j] = j < n - i ? b[i + j] : T(1);
    }
    hn::Store(ApplyBinary(d, kOp, hn::Load(d, ba), hn::Load(d, bb)), d, ba);
    for (size_t j = 0; j < n - i; ++j) out[i + j] = ba[j];
  }
}

template <class T>
HWY_NOINLINE void FloatBinaryArray(BinaryOp op, const T* a, const T* b, T* out, size_t n) {
  switch (op) {
    case BinaryOp::kAdd:
      return FloatBinarySimd<T, BinaryOp::kAdd>(a, b, out, n);
    case BinaryOp::kSub:
      return FloatBinarySimd<T, BinaryOp::kSub>(a, b, out, n);
    case BinaryOp::kMul:
      return FloatBinarySimd<T, BinaryOp::kMul>(a, b, out, n);
    case BinaryOp::kDiv:
      return FloatBinarySimd<T, BinaryOp::kDiv>(a, b, out, n);
    case BinaryOp::kMax:
      return FloatBinarySimd<T, BinaryOp::kMax>(a, b, out, n);
    case BinaryOp::kMin:
      return FloatBinarySimd<T, BinaryOp::kMin>(a, b, out, n);
    case BinaryOp::kPow:
      for (size_t i = 0; i < n; ++i) out[i] = std::pow(a[i], b[i]);
      return;
    case BinaryOp::kRem:
      for (size_t i = 0; i < n; ++i) out[i] = ew_scalar::FloatRem(a[i], b[i]);
      return;
    case BinaryOp::kFloorDiv:
      for (size_t i = 0; i < n; ++i) out[i] = ew_scalar::FloatFloorDiv(a[i], b[i]);
      return;
    case BinaryOp::kFmod:  // Highway has no exact remainder: libm's fmod is exact
      for (size_t i = 0; i < n; ++i) out[i] = std::fmod(a[i], b[i]);
      return;
    default:
      return;  // rejected by the program builder
  }
}

// out = x*y + z for floats in one pass (two roundings, exactly like a Mul then an Add, so the
// result is bit-identical to the unfused chain; only the temporary array is saved).
template <class T>
HWY_NOINLINE void FloatMulAddArray(const T* x, const T* y, const T* z, T* out, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto p = hn::Mul(hn::LoadU(d, x + i), hn::LoadU(d, y + i));
    hn::StoreU(hn::Add(p, hn::LoadU(d, z + i)), d, out + i);
  }
  if (i < n) {  // tail through padded buffers: the same vector Mul and Add (no contraction)
    HWY_ALIGN T bx[MaxLanesOf<T>()];
    HWY_ALIGN T by[MaxLanesOf<T>()];
    HWY_ALIGN T bz[MaxLanesOf<T>()];
    for (size_t j = 0; j < N; ++j) {
      bx[j] = j < n - i ? x[i + j] : T(1);
      by[j] = j < n - i ? y[i + j] : T(1);
      bz[j] = j < n - i ? z[i + j] : T(1);
    }
    const auto p = hn::Mul(hn::Load(d, bx), hn::Load(d, by));
    hn::Store(hn::Add(p, hn::Load(d, bz)), d, bx);
    for (size_t j = 0; j < n - i; ++j) out[i + j] = bx[j];
  }
}

HWY_INLINE void MulAddAny(DType t, const void* x, const void* y, const void* z, void* out,
                          size_t n) {
  if (t == DType::kF32) {
    FloatMulAddArray(static_cast<const float*>(x), static_cast<const float*>(y),
                     static_cast<const float*>(z), static_cast<float*>(out), n);
  } else {
    FloatMulAddArray(static_cast<const double*>(x), static_cast<const double*>(y),
                     static_cast<const double*>(z), static_cast<double*>(out), n);
  }
}

// ---- Integer and bool ops (scalar loops; the compiler vectorizes the simple ones) ----
template <class T>
HWY_NOINLINE void IntUnaryArray(UnaryOp op, const T* x, T* out, size_t n) {
  switch (op) {
    case UnaryOp::kNeg:
      for (size_t i = 0; i < n; ++i) out[i] = ew_scalar::WrapSub<T>(0, x[i]);
      return;
    case UnaryOp::kAbs:
      for (size_t i = 0; i < n; ++i) out[i] = x[i] < 0 ? ew_scalar::WrapSub<T>(0, x[i]) : x[i];
      return;
    case UnaryOp::kSign:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>((x[i] > 0) - (x[i] < 0));
      return;
    case UnaryOp::kNot:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>(~x[i]);
      return;
    default:  // floor, ceil, round: identity
      if (out != x) memcpy(out, x, n * sizeof(T));
      return;
  }
}

template <class T>
HWY_NOINLINE void IntBinaryArray(BinaryOp op, const T* a, const T* b, T* out, size_t n) {
  using namespace ew_scalar;  // NOLINT
  switch (op) {
    case BinaryOp::kAdd:
      for (size_t i = 0; i < n; ++i) out[i] = WrapAdd(a[i], b[i]);
      return;
    case BinaryOp::kSub:
      for (size_t i = 0; i < n; ++i) out[i] = WrapSub(a[i], b[i]);
      return;
    case BinaryOp::kMul:
      for (size_t i = 0; i < n; ++i) out[i] = WrapMul(a[i], b[i]);
      return;
    case BinaryOp::kDiv:
      for (size_t i = 0; i < n; ++i) out[i] = IntDiv(a[i], b[i]);
      return;
    case BinaryOp::kFloorDiv:
      for (size_t i = 0; i < n; ++i) out[i] = IntFloorDiv(a[i], b[i]);
      return;
    case BinaryOp::kPow:
      for (size_t i = 0; i < n; ++i) out[i] = IntPow(a[i], b[i]);
      return;
    case BinaryOp::kMax:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] > b[i] ? a[i] : b[i];
      return;
    case BinaryOp::kMin:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] < b[i] ? a[i] : b[i];
      return;
    case BinaryOp::kRem:
      for (size_t i = 0; i < n; ++i) out[i] = IntRem(a[i], b[i]);
      return;
    case BinaryOp::kAnd:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] & b[i];
      return;
    case BinaryOp::kOr:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] | b[i];
      return;
    case BinaryOp::kXor:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] ^ b[i];
      return;
    case BinaryOp::kFmod:
      for (size_t i = 0; i < n; ++i) out[i] = IntFmod(a[i], b[i]);
      return;
  }
}

HWY_INLINE void BoolBinaryArray(BinaryOp op, const uint8_t* a, const uint8_t* b, uint8_t* out,
                                size_t n) {
  switch (op) {
    case BinaryOp::kAnd:
    case BinaryOp::kMin:
      for (size_t i = 0; i < n; ++i) out[i] = (a[i] != 0) & (b[i] != 0);
      return;
    case BinaryOp::kOr:
    case BinaryOp::kMax:
      for (size_t i = 0; i < n; ++i) out[i] = (a[i] != 0) | (b[i] != 0);
      return;
    case BinaryOp::kXor:
      for (size_t i = 0; i < n; ++i) out[i] = (a[i] != 0) ^ (b[i] != 0);
      return;
    default:
      return;  // rejected by the program builder
  }
}

// f32 compares in vectors, from element 0; returns the elements done (whole vectors). A mask
// lane becomes the byte 0 or 1. != is the negation of == (true for NaN, as C++'s), not
// Highway's ordered Ne; the others are ordered (false for NaN), as C++'s.
HWY_INLINE size_t CompareF32Vectors(CompareOp op, const float* a, const float* b, uint8_t* out,
                                    size_t n) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, a + i), y = hn::LoadU(d, b + i);
    hn::Mask<decltype(d)> m;
    switch (op) {
      case CompareOp::kEq:
        m = hn::Eq(x, y);
        break;
      case CompareOp::kNe:
        m = hn::Not(hn::Eq(x, y));
        break;
      case CompareOp::kLt:
        m = hn::Lt(x, y);
        break;
      case CompareOp::kLe:
        m = hn::Le(x, y);
        break;
      case CompareOp::kGt:
        m = hn::Gt(x, y);
        break;
      case CompareOp::kGe:
        m = hn::Ge(x, y);
        break;
    }
    const auto ones = hn::And(hn::BitCast(di, hn::VecFromMask(d, m)), hn::Set(di, 1));
    hn::StoreU(hn::DemoteTo(d8, ones), d8, out + i);
  }
  return i;
}

template <class T>
HWY_NOINLINE void CompareArray(CompareOp op, const T* a, const T* b, uint8_t* out, size_t n) {
  size_t i = 0;
  if constexpr (std::is_same<T, float>::value) i = CompareF32Vectors(op, a, b, out, n);
  switch (op) {
    case CompareOp::kEq:
      for (; i < n; ++i) out[i] = a[i] == b[i];
      return;
    case CompareOp::kNe:
      for (; i < n; ++i) out[i] = a[i] != b[i];
      return;
    case CompareOp::kLt:
      for (; i < n; ++i) out[i] = a[i] < b[i];
      return;
    case CompareOp::kLe:
      for (; i < n; ++i) out[i] = a[i] <= b[i];
      return;
    case CompareOp::kGt:
      for (; i < n; ++i) out[i] = a[i] > b[i];
      return;
    case CompareOp::kGe:
      for (; i < n; ++i) out[i] = a[i] >= b[i];
      return;
  }
}

// out may be a or b (registers reused in place): each vector is loaded before it is stored.
template <class T>
HWY_NOINLINE void SelectArray(const uint8_t* c, const T* a, const T* b, T* out, size_t n) {
  size_t i = 0;
  if constexpr (std::is_same<T, uint32_t>::value) {
    // 4-byte elements (f32, i32: a ReLU's VJP) in vectors: the bytes of c widened to lanes.
    const hn::ScalableTag<uint32_t> d;
    const hn::Rebind<uint8_t, decltype(d)> d8;
    const size_t N = hn::Lanes(d);
    for (; i + N <= n; i += N) {
      const auto m = hn::Ne(hn::PromoteTo(d, hn::LoadU(d8, c + i)), hn::Zero(d));
      hn::StoreU(hn::IfThenElse(m, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
    }
  }
  for (; i < n; ++i) out[i] = c[i] != 0 ? a[i] : b[i];
}

// Conversion of one element (see ElementwiseProgram for the rules). Bool is uint8_t and is
// handled by the callers (ConvertArray) since it shares its C++ type with nothing else.
template <class To, class From>
HWY_INLINE To ConvertOne(From x) {
  if (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    return static_cast<To>(
        ew_scalar::FloatToInt<
            typename std::conditional<std::is_integral<To>::value, To, int64_t>::type>(x));
  }
  if (std::is_integral<From>::value && std::is_integral<To>::value) {
    using U = typename std::make_unsigned<
        typename std::conditional<std::is_integral<To>::value, To, int64_t>::type>::type;
    return static_cast<To>(static_cast<U>(x));
  }
  return static_cast<To>(x);
}

template <class From, class To>
HWY_NOINLINE void ConvertLoop(const From* x, To* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = ConvertOne<To, From>(x[i]);
}

template <class From>
HWY_INLINE void ConvertFrom(const From* x, DType to, void* out, size_t n) {
  switch (to) {
    case DType::kF32:
      return ConvertLoop(x, static_cast<float*>(out), n);
    case DType::kF64:
      return ConvertLoop(x, static_cast<double*>(out), n);
    case DType::kI32:
      return ConvertLoop(x, static_cast<int32_t*>(out), n);
    case DType::kI64:
      return ConvertLoop(x, static_cast<int64_t*>(out), n);
    case DType::kBool: {
      uint8_t* o = static_cast<uint8_t*>(out);
      for (size_t i = 0; i < n; ++i) o[i] = x[i] != From(0);
      return;
    }
    default:  // the narrow types: ConvertArray handles them
      return;
  }
}

// ---- f16 and bf16 <-> f32 with vectors (the scalar forms in narrow.h define the results; the
// vector forms give the same bits, narrow_test.cc) ----

// f16 -> f32 (exact): F16C's vcvtph2ps on AVX2 and AVX-512 targets, narrow.h elsewhere (Highway
// 1.0's emulation of PromoteTo has no F16C to lean on and is not needed for correctness).
HWY_INLINE void F16ToF32(const uint16_t* x, float* out, size_t n) {
  size_t i = 0;
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const size_t N = hn::Lanes(df);
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(x + i))), df,
               out + i);
  }
#endif
  for (; i < n; ++i) out[i] = HalfBitsToFloat(x[i]);
}

// f32 -> f16, rounded to nearest even: vcvtps2ph with its rounding-mode immediate 0 on AVX2 and
// AVX-512 targets (Highway 1.0's emulated DemoteTo truncates, so the others use narrow.h).
HWY_INLINE void F32ToF16(const float* x, uint16_t* out, size_t n) {
  size_t i = 0;
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const size_t N = hn::Lanes(df);
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, x + i)), dh,
               reinterpret_cast<hwy::float16_t*>(out + i));
  }
#endif
  for (; i < n; ++i) out[i] = FloatToHalfBits(x[i]);
}

// bf16 -> f32 (exact: the bits shifted up), every target.
HWY_INLINE void BF16ToF32(const uint16_t* x, float* out, size_t n) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  const hn::Rebind<float, decltype(du)> df;
  const size_t N = hn::Lanes(du);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto bits = hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, x + i)));
    hn::StoreU(hn::BitCast(df, bits), df, out + i);
  }
  for (; i < n; ++i) out[i] = BF16BitsToFloat(x[i]);
}

// f32 -> bf16, rounded to nearest even (Highway 1.0's DemoteTo truncates), NaN kept quiet; every
// target. The same integer steps as FloatToBF16Bits.
HWY_INLINE void F32ToBF16(const float* x, uint16_t* out, size_t n) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Rebind<int32_t, decltype(du)> di;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  const size_t N = hn::Lanes(du);
  const auto abs_mask = hn::Set(du, 0x7fffffffu);
  const auto inf = hn::Set(di, 0x7f800000);
  const auto half = hn::Set(du, 0x7fffu), one = hn::Set(du, 1u), quiet = hn::Set(du, 0x40u);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto u = hn::LoadU(du, reinterpret_cast<const uint32_t*>(x + i));
    const auto is_nan = hn::RebindMask(du, hn::Gt(hn::BitCast(di, hn::And(u, abs_mask)), inf));
    const auto rounded = hn::Add(u, hn::Add(half, hn::And(hn::ShiftRight<16>(u), one)));
    const auto r =
        hn::IfThenElse(is_nan, hn::Or(hn::ShiftRight<16>(u), quiet), hn::ShiftRight<16>(rounded));
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, r)), d16, out + i);  // r <= 0xffff
  }
  for (; i < n; ++i) out[i] = FloatToBF16Bits(x[i]);
}

// i8, u8, i16, u16 -> i32 (sign- or zero-extended): the narrow integers' loads.
template <class T>
HWY_INLINE void NarrowIntToI32(const T* x, int32_t* out, size_t n) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<T, decltype(di)> dn;
  const size_t N = hn::Lanes(di);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::PromoteTo(di, hn::LoadU(dn, x + i)), di, out + i);
  for (; i < n; ++i) out[i] = static_cast<int32_t>(x[i]);
}

// i32 -> i8, u8, i16, u16, wrapping (the low bits: TruncateTo, not DemoteTo's saturation).
template <class T>
HWY_INLINE void I32ToNarrowInt(const int32_t* x, T* out, size_t n) {
  using U = typename std::make_unsigned<T>::type;
  const hn::ScalableTag<uint32_t> du;
  const hn::Rebind<U, decltype(du)> dn;
  const size_t N = hn::Lanes(du);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(du, reinterpret_cast<const uint32_t*>(x + i));
    hn::StoreU(hn::TruncateTo(dn, v), dn, reinterpret_cast<U*>(out + i));
  }
  for (; i < n; ++i) out[i] = static_cast<T>(static_cast<U>(static_cast<uint32_t>(x[i])));
}

// i8, u8, i16, u16 -> f32 (exact; image pixels, quantized values).
template <class T>
HWY_INLINE void NarrowIntToF32(const T* x, float* out, size_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<T, decltype(df)> dn;
  const size_t N = hn::Lanes(df);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dn, x + i))), df, out + i);
  }
  for (; i < n; ++i) out[i] = static_cast<float>(x[i]);
}

// f32 -> i8, u8, i16, u16 by the conversion rule (truncation toward zero, saturation, NaN -> 0):
// clamping to [min, max] first gives the same value as saturating after the truncation.
template <class T>
HWY_INLINE void F32ToNarrowInt(const float* x, T* out, size_t n, DType to) {
  using U = typename std::make_unsigned<T>::type;
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<uint32_t, decltype(df)> du;
  const hn::Rebind<U, decltype(df)> dn;
  const size_t N = hn::Lanes(df);
  const auto lo = hn::Set(df, static_cast<float>(std::numeric_limits<T>::min()));
  const auto hi = hn::Set(df, static_cast<float>(std::numeric_limits<T>::max()));
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(df, x + i);
    const auto clamped = hn::Min(hn::Max(v, lo), hi);
    const auto t = hn::IfThenZeroElse(hn::RebindMask(di, hn::IsNaN(v)), hn::ConvertTo(di, clamped));
    hn::StoreU(hn::TruncateTo(dn, hn::BitCast(du, t)), dn, reinterpret_cast<U*>(out + i));
  }
  if (i < n) ConvertElements(DType::kF32, x + i, to, out + i, n - i);
}

// Calls f(T{}) with the C++ type of i8, u8, i16 or u16 (the narrow integers computed in i32);
// false for other types.
template <class F>
HWY_INLINE bool WithSmallInt(DType t, F&& f) {
  switch (t) {
    case DType::kI8:
      return f(int8_t{}), true;
    case DType::kU8:
      return f(uint8_t{}), true;
    case DType::kI16:
      return f(int16_t{}), true;
    case DType::kU16:
      return f(uint16_t{}), true;
    default:
      return false;
  }
}

// The narrow integer conversions with vectors (to and from f32 and i32); false for other pairs.
HWY_INLINE bool NarrowIntArray(DType from, const void* x, DType to, void* out, size_t n) {
  if (to == DType::kF32 || to == DType::kI32) {
    return WithSmallInt(from, [&](auto tag) {
      const auto* v = static_cast<const decltype(tag)*>(x);
      if (to == DType::kF32) return NarrowIntToF32(v, static_cast<float*>(out), n);
      NarrowIntToI32(v, static_cast<int32_t*>(out), n);
    });
  }
  if (from == DType::kF32) {
    return WithSmallInt(to, [&](auto tag) {
      F32ToNarrowInt(static_cast<const float*>(x), static_cast<decltype(tag)*>(out), n, to);
    });
  }
  if (from != DType::kI32) return false;
  return WithSmallInt(to, [&](auto tag) {
    I32ToNarrowInt(static_cast<const int32_t*>(x), static_cast<decltype(tag)*>(out), n);
  });
}

HWY_INLINE void ConvertArray(DType from, const void* x, DType to, void* out, size_t n) {
  if (IsNarrow(from) || IsNarrow(to)) {
    if (NarrowIntArray(from, x, to, out, n)) return;
    const uint16_t* h = static_cast<const uint16_t*>(x);
    if (from == DType::kF16 && to == DType::kF32) return F16ToF32(h, static_cast<float*>(out), n);
    if (from == DType::kBF16 && to == DType::kF32) return BF16ToF32(h, static_cast<float*>(out), n);
    const float* f = static_cast<const float*>(x);
    if (from == DType::kF32 && to == DType::kF16)
      return F32ToF16(f, static_cast<uint16_t*>(out), n);
    if (from == DType::kF32 && to == DType::kBF16) {
      return F32ToBF16(f, static_cast<uint16_t*>(out), n);
    }
    ConvertElements(from, x, to, out, n);  // narrow.h
    return;
  }
  switch (from) {
    case DType::kF32:
      return ConvertFrom(static_cast<const float*>(x), to, out, n);
    case DType::kF64:
      return ConvertFrom(static_cast<const double*>(x), to, out, n);
    case DType::kI32:
      return ConvertFrom(static_cast<const int32_t*>(x), to, out, n);
    case DType::kI64:
      return ConvertFrom(static_cast<const int64_t*>(x), to, out, n);
    case DType::kBool: {
      // Normalize to 0/1 first (any non-zero byte is true), then convert as an int.
      const uint8_t* b = static_cast<const uint8_t*>(x);
      switch (to) {
        case DType::kF32:
          for (size_t i = 0; i < n; ++i) static_cast<float*>(out)[i] = b[i] != 0 ? 1.f : 0.f;
          return;
        case DType::kF64:
          for (size_t i = 0; i < n; ++i) static_cast<double*>(out)[i] = b[i] != 0 ? 1.0 : 0.0;
          return;
        case DType::kI32:
          for (size_t i = 0; i < n; ++i) static_cast<int32_t*>(out)[i] = b[i] != 0;
          return;
        case DType::kI64:
          for (size_t i = 0; i < n; ++i) static_cast<int64_t*>(out)[i] = b[i] != 0;
          return;
        case DType::kBool:
          for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(out)[i] = b[i] != 0;
          return;
        default:
          return;
      }
      return;
    }
    default:
      return;
  }
}

// ---- Type-erased entry points used by the evaluator ----
HWY_INLINE void UnaryArray(UnaryOp op, DType t, const void* x, void* out, size_t n) {
  switch (t) {
    case DType::kF32:
      return FloatUnaryArray(op, static_cast<const float*>(x), static_cast<float*>(out), n);
    case DType::kF64:
      return FloatUnaryArray(op, static_cast<const double*>(x), static_cast<double*>(out), n);
    case DType::kI32:
      return IntUnaryArray(op, static_cast<const int32_t*>(x), static_cast<int32_t*>(out), n);
    case DType::kI64:
      return IntUnaryArray(op, static_cast<const int64_t*>(x), static_cast<int64_t*>(out), n);
    case DType::kBool: {  // only kNot
      const uint8_t* b = static_cast<const uint8_t*>(x);
      uint8_t* o = static_cast<uint8_t*>(out);
      for (size_t i = 0; i < n; ++i) o[i] = b[i] == 0;
      return;
    }
    default:  // the narrow types: ElementwiseProgram::Unary refuses them
      return;
  }
}

HWY_INLINE void BinaryArray(BinaryOp op, DType t, const void* a, const void* b, void* out,
                            size_t n) {
  switch (t) {
    case DType::kF32:
      return FloatBinaryArray(op, static_cast<const float*>(a), static_cast<const float*>(b),
                              static_cast<float*>(out), n);
    case DType::kF64:
      return FloatBinaryArray(op, static_cast<const double*>(a), static_cast<const double*>(b),
                              static_cast<double*>(out), n);
    case DType::kI32:
      return IntBinaryArray(op, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b),
                            static_cast<int32_t*>(out), n);
    case DType::kI64:
      return IntBinaryArray(op, static_cast<const int64_t*>(a), static_cast<const int64_t*>(b),
                            static_cast<int64_t*>(out), n);
    case DType::kBool:
      return BoolBinaryArray(op, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b),
                             static_cast<uint8_t*>(out), n);
    default:  // the narrow types: ElementwiseProgram::Binary refuses them
      return;
  }
}

HWY_INLINE void CompareAny(CompareOp op, DType t, const void* a, const void* b, uint8_t* out,
                           size_t n) {
  switch (t) {
    case DType::kF32:
      return CompareArray(op, static_cast<const float*>(a), static_cast<const float*>(b), out, n);
    case DType::kF64:
      return CompareArray(op, static_cast<const double*>(a), static_cast<const double*>(b), out, n);
    case DType::kI32:
      return CompareArray(op, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), out,
                          n);
    case DType::kI64:
      return CompareArray(op, static_cast<const int64_t*>(a), static_cast<const int64_t*>(b), out,
                          n);
    case DType::kBool: {
      // Compare truth values (any non-zero byte is true).
      const uint8_t* x = static_cast<const uint8_t*>(a);
      const uint8_t* y = static_cast<const uint8_t*>(b);
      for (size_t i = 0; i < n; ++i) {
        const int p = x[i] != 0, q = y[i] != 0;
        bool r = false;
        switch (op) {
          case CompareOp::kEq:
            r = p == q;
            break;
          case CompareOp::kNe:
            r = p != q;
            break;
          case CompareOp::kLt:
            r = p < q;
            break;
          case CompareOp::kLe:
            r = p <= q;
            break;
          case CompareOp::kGt:
            r = p > q;
            break;
          case CompareOp::kGe:
            r = p >= q;
            break;
        }
        out[i] = r;
      }
      return;
    }
    default:  // the narrow types: ElementwiseProgram::Compare refuses them
      return;
  }
}

HWY_INLINE void SelectAny(DType t, const uint8_t* c, const void* a, const void* b, void* out,
                          size_t n) {
  switch (t) {
    case DType::kF32:
    case DType::kI32:
      return SelectArray(c, static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b),
                         static_cast<uint32_t*>(out), n);
    case DType::kF64:
    case DType::kI64:
      return SelectArray(c, static_cast<const uint64_t*>(a), static_cast<const uint64_t*>(b),
                         static_cast<uint64_t*>(out), n);
    case DType::kBool: {
      const uint8_t* x = static_cast<const uint8_t*>(a);
      const uint8_t* y = static_cast<const uint8_t*>(b);
      uint8_t* o = static_cast<uint8_t*>(out);
      for (size_t i = 0; i < n; ++i) o[i] = (c[i] != 0 ? x[i] : y[i]) != 0;
      return;
    }
    // The narrow types: their bits, by element size.
    case DType::kI8:
    case DType::kU8:
      return SelectArray(c, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b),
                         static_cast<uint8_t*>(out), n);
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
    case DType::kU16:
      return SelectArray(c, static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b),
                         static_cast<uint16_t*>(out), n);
    case DType::kU32:
      return SelectArray(c, static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b),
                         static_cast<uint32_t*>(out), n);
    case DType::kU64:
      return SelectArray(c, static_cast<const uint64_t*>(a), static_cast<const uint64_t*>(b),
                         static_cast<uint64_t*>(out), n);
  }
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
