// The rows every system starts from: the facts themselves and the interval bound of each
// column.
#include "cc/dim/fm.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {
namespace rules {

// FactRow: a fact, as the driver normalized it (lin >= 0, or lin == 0 for an equality).
// Sound: the facts hold at every valuation decisions are about. Facts with != are not
// linear; the driver gives them to no rule (ignoring a fact is sound).
// Needs: the fact's form, whose monomials the driver has made columns.
void FactRow(Decider::RuleContext* cx, const FactForm& f) {
  if (f.eq) {
    cx->AddEq(f.lin, f.origin);
  } else {
    cx->AddGe(f.lin, f.origin);
  }
}

// ColumnInterval: lo <= m <= hi for the interval bounds of the monomial m (decide_interval:
// interval arithmetic over the atoms, from the variables' declared or derived ranges).
// Sound: interval arithmetic rounds outward; an infinite side gives no row.
// Needs: every column, after the closure (the last stage), and the decider's intervals.
void ColumnInterval(Decider::RuleContext* cx, const Mono* m) {
  Interval iv = cx->MonoInterval(m);
  if (iv.lo != kNegInf) {
    Lin r;
    r.Add(m, 1);
    r.Add(cx->s->UnitMono(), -iv.lo);  // iv.lo > kNegInf, so no overflow
    cx->AddGe(std::move(r), fm::kImplicit);
  }
  if (iv.hi != kPosInf) {
    Lin r;
    r.Add(m, -1);
    r.Add(cx->s->UnitMono(), iv.hi);
    cx->AddGe(std::move(r), fm::kImplicit);
  }
}

}  // namespace rules
}  // namespace dim
}  // namespace shp
