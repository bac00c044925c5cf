// Polynomials in one variable with 128-bit integer coefficients, for certificates over
// integer ranges: the Taylor shift q(x0 + t) = sum e[j] t^j, whose coefficients being all
// >= 0 (<= 0) shows q >= 0 (<= 0) for every x >= x0 (Horner's scheme; overflow is refused,
// never wrapped). Internal to the dim engine (decide_facts.cc, normal_form_maxmin.cc).
#ifndef SHAPEPOLY_CC_DIM_POLY1_H_
#define SHAPEPOLY_CC_DIM_POLY1_H_

#include <vector>

namespace shp {
namespace dim {
namespace poly1 {

// q(x) = sum c[k] x^k.
using Poly = std::vector<__int128>;

// a * b when |a * b| < 2^125 (so that sums of a few still fit); false otherwise.
inline bool MulChecked(__int128 a, __int128 b, __int128* out) {
  constexpr __int128 kCap = static_cast<__int128>(1) << 125;
  if (__builtin_mul_overflow(a, b, out)) return false;
  return *out<kCap&& * out> - kCap;
}

// The coefficients e of q(x0 + t) = sum e[j] t^j; false on overflow.
inline bool Shifted(const Poly& q, __int128 x0, Poly* e) {
  const size_t n = q.size();
  *e = q;
  for (size_t i = 0; i + 1 < n; ++i) {  // repeated synthetic division by (t + x0)
    for (size_t k = n - 1; k-- > i;) {
      __int128 m;
      if (!MulChecked((*e)[k + 1], x0, &m) || __builtin_add_overflow((*e)[k], m, &(*e)[k]))
        return false;
    }
  }
  return true;
}

// True when q(x) >= 0 for every x >= x0, shown by the Taylor shift's coefficients all >= 0.
inline bool NonNegativeFrom(const Poly& q, __int128 x0) {
  Poly e;
  if (!Shifted(q, x0, &e)) return false;
  for (__int128 c : e) {
    if (c < 0) return false;
  }
  return true;
}

}  // namespace poly1
}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_POLY1_H_
