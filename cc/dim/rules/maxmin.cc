// The implicit facts of max/min atoms. (The case analysis that splits an atom into its
// operands, max(a, b) = a where a >= b, is in decide_cases.cc: it runs on a projection,
// not on rows.)
#include "cc/dim/fm.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {
namespace rules {

// MaxMinOperands: max(a, b) - a >= 0 and max(a, b) - b >= 0; a - min(a, b) >= 0 and
// b - min(a, b) >= 0.
// Sound: the definition of max and min.
// Needs: a max/min column.
void MaxMinOperands(Decider::RuleContext* cx, const Mono* m) {
  const Atom* at = ColumnAtom(m);
  int sign = at->kind == AtomKind::kMax ? 1 : -1;
  for (const Expr* operand : {at->a, at->b}) {  // max - x >= 0, x - min >= 0
    Lin r;
    r.Add(m, sign);
    r.AddExpr(operand, -sign);
    cx->ColsOf(r);
    cx->AddGe(std::move(r), fm::kImplicit);
  }
}

// MaxPlusMin: max(a, b) + min(a, b) == a + b, for a max column whose min atom of the same
// operands exists in the scope.
// Sound: one of them is a and the other b.
// Needs: a max column (the min column's turn adds nothing, so the row comes once).
void MaxPlusMin(Decider::RuleContext* cx, const Mono* m) {
  const Atom* at = ColumnAtom(m);
  const Atom* other =
      cx->s->FindAtom(at->kind == AtomKind::kMax ? AtomKind::kMin : AtomKind::kMax, at->a, at->b);
  if (!other || at->kind != AtomKind::kMax) return;
  Lin r;
  r.Add(m, 1);
  const Mono* om = cx->s->InternMono({Factor{other, 1}});
  r.Add(om, 1);
  r.AddExpr(at->a, -1);
  r.AddExpr(at->b, -1);
  cx->ColsOf(r);
  cx->AddEq(r, fm::kImplicit);
}

}  // namespace rules
}  // namespace dim
}  // namespace shp
