// Extended-integer interval arithmetic for the decision procedure: int128 values with
// +-kInf standing for unbounded. Every int64 bound (and every product of two) is exact here,
// so only results beyond 2^120 saturate, and always outward (a saturated bound is still a
// sound bound). Header-only: these are the innermost loops of interval evaluation.
#ifndef SHAPEPOLY_CC_DIM_INTERVAL128_H_
#define SHAPEPOLY_CC_DIM_INTERVAL128_H_

#include <algorithm>
#include <cstdint>

#include "cc/dim/scope.h"

namespace shp {
namespace dim {

using I128 = __int128;
constexpr I128 kInf = (static_cast<I128>(1) << 120);

inline I128 Ext(int64_t v) {
  if (v == kNegInf) return -kInf;
  if (v == kPosInf) return kInf;
  return v;
}
// Back to int64 so that the result stays a sound lower / upper bound.
inline int64_t LoOf(I128 v) {
  if (v <= static_cast<I128>(kNegInf)) return kNegInf;
  if (v >= static_cast<I128>(kPosInf)) return kPosInf - 1;
  return static_cast<int64_t>(v);
}
inline int64_t HiOf(I128 v) {
  if (v >= static_cast<I128>(kPosInf)) return kPosInf;
  if (v <= static_cast<I128>(kNegInf)) return kNegInf + 1;
  return static_cast<int64_t>(v);
}
inline I128 MulExt(I128 a, I128 b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  if (a == kInf || a == -kInf || b == kInf || b == -kInf) return neg ? -kInf : kInf;
  // Saturate when |a*b| > kInf, tested by division: |a|, |b| <= kInf = 2^120, so the product
  // itself can overflow int128 (2^104 * 2^40 did: powers reach 2^104 with a factor below 2^62).
  I128 ua = a < 0 ? -a : a, ub = b < 0 ? -b : b;
  if (ua < (static_cast<I128>(1) << 60) && ub < (static_cast<I128>(1) << 60))
    return a * b;  // < kInf
  if (ua > kInf / ub) return neg ? -kInf : kInf;
  return a * b;
}

struct ExtIv {
  I128 lo, hi;
};

inline ExtIv ToExt(Interval iv) { return {Ext(iv.lo), Ext(iv.hi)}; }
inline Interval FromExt(ExtIv e) { return {LoOf(e.lo), HiOf(e.hi)}; }

inline ExtIv IvMul(ExtIv x, ExtIv y) {
  I128 c[4] = {MulExt(x.lo, y.lo), MulExt(x.lo, y.hi), MulExt(x.hi, y.lo), MulExt(x.hi, y.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

inline ExtIv IvPow(ExtIv x, int32_t k) {
  auto pw = [k](I128 v) {
    if (v == 1 || v == -1) return (v < 0 && (k % 2)) ? I128{-1} : I128{1};  // k can be 2^20
    I128 r = 1;
    for (int32_t i = 0; i < k && r != 0; ++i) {
      r = MulExt(r, v);
      if (r == kInf || r == -kInf) {
        bool neg = v < 0 && (k % 2);
        return neg ? -kInf : kInf;
      }
    }
    return r;
  };
  if (k % 2 == 1) return {pw(x.lo), pw(x.hi)};
  if (x.lo >= 0) return {pw(x.lo), pw(x.hi)};
  if (x.hi <= 0) return {pw(x.hi), pw(x.lo)};
  I128 m = std::max(-x.lo, x.hi);
  return {0, pw(m)};
}

inline I128 FloorDivExt(I128 x, I128 d) {  // d > 0
  if (x == kInf || x == -kInf) return x;
  if (d == kInf) return x >= 0 ? 0 : -1;
  I128 q = x / d;
  if (x % d != 0 && x < 0) --q;
  return q;
}

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_INTERVAL128_H_
