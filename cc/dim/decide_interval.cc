// Interval bounds of atoms, monomials and expressions (see decide.h for when they use the
// derived variable bounds and when only the declared ranges).
#include <algorithm>

#include "cc/dim/decide.h"
#include "cc/dim/interval128.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

Interval Decider::AtomInterval(const Atom* a) {
  auto it = atom_iv_.find(a);
  if (it != atom_iv_.end()) return it->second;
  Interval r;
  switch (a->kind) {
    case AtomKind::kVar: {
      const Variable& v = s_->variables()[a->var];
      r = a->var < static_cast<int32_t>(var_bounds_.size()) ? var_bounds_[a->var]
                                                            : Interval{v.lo, v.hi};
      break;
    }
    case AtomKind::kFloorDiv:
    case AtomKind::kMod: {
      ExtIv x = ToExt(IntervalOf(a->a));
      ExtIv d = ToExt(IntervalOf(a->b));
      // A divisor that may be 0 but is never negative is >= 1 wherever the atom is defined
      // (decisions hold there only); one of unknown sign leaves the atom unbounded.
      if (d.lo == 0 && d.hi >= 1) d.lo = 1;
      if (d.lo < 1) break;
      if (a->kind == AtomKind::kFloorDiv) {
        bool undefined = (x.lo == -kInf && d.hi == kInf) || (x.hi == kInf && d.hi == kInf);
        I128 c[4] = {FloorDivExt(x.lo, d.lo), FloorDivExt(x.lo, d.hi), FloorDivExt(x.hi, d.lo),
                     FloorDivExt(x.hi, d.hi)};
        ExtIv e{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
        if (undefined) {
          if (x.lo == -kInf) e.lo = -kInf;
          if (x.hi == kInf) e.hi = kInf;
        }
        r = FromExt(e);
      } else {
        ExtIv e{0, d.hi == kInf ? kInf : d.hi - 1};
        if (x.lo >= 0 && x.hi < e.hi) e.hi = x.hi;
        r = FromExt(e);
      }
      break;
    }
    case AtomKind::kMax:
    case AtomKind::kMin: {
      Interval x = IntervalOf(a->a), y = IntervalOf(a->b);
      if (a->kind == AtomKind::kMax) {
        r = {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
      } else {
        r = {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
      }
      break;
    }
  }
  atom_iv_[a] = r;
  return r;
}

Interval Decider::MonoInterval(const Mono* m) {
  if (m->factors.empty()) return {1, 1};
  auto it = mono_iv_.find(m);
  if (it != mono_iv_.end()) return it->second;
  ExtIv acc{1, 1};
  for (const Factor& f : m->factors) acc = IvMul(acc, IvPow(ToExt(AtomInterval(f.atom)), f.exp));
  Interval r = FromExt(acc);
  mono_iv_[m] = r;
  return r;
}

Interval Decider::IntervalOf(const Expr* e) {
  if (!preparing_) Prepare();
  // Exact sums: a finite term bound is a product of two int64 values (|x| <= 2^126), so
  // large finite values are never confused with infinity (clamping them to +-kInf made
  // +inf + -inf = 0 and +inf + finite = +inf, both unsound). A side that is infinite, or
  // whose sum leaves int128, is unbounded.
  I128 lo = 0, hi = 0;
  bool lo_inf = false, hi_inf = false;
  for (const Term& t : e->terms) {
    Interval m = MonoInterval(t.mono);
    const bool pos = t.coeff > 0;
    const int64_t for_lo = pos ? m.lo : m.hi, for_hi = pos ? m.hi : m.lo;
    if (for_lo == kNegInf || for_lo == kPosInf ||
        __builtin_add_overflow(lo, static_cast<I128>(t.coeff) * for_lo, &lo)) {
      lo_inf = true;
    }
    if (for_hi == kNegInf || for_hi == kPosInf ||
        __builtin_add_overflow(hi, static_cast<I128>(t.coeff) * for_hi, &hi)) {
      hi_inf = true;
    }
  }
  return {lo_inf ? kNegInf : LoOf(lo), hi_inf ? kPosInf : HiOf(hi)};
}

}  // namespace dim
}  // namespace shp
