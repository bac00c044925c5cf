// The implicit facts of floordiv/mod atoms: with f = floordiv(x, d) and d >= 1,
// 0 <= x - d*f <= d - 1 and mod(x, d) == x - d*f.
#include "cc/dim/fm.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {

const Lin& Decider::RuleContext::Remainder(const Atom* at) {
  if (remainder_atom_ == at) return remainder_;
  const Atom* fd =
      at->kind == AtomKind::kFloorDiv ? at : s->InternAtom(AtomKind::kFloorDiv, -1, at->a, at->b);
  const Mono* fm = s->InternMono({Factor{fd, 1}});
  // x - d*f  (as a form), used in: 0 <= x - d*f <= d - 1 and mod == x - d*f.
  Lin r;
  r.AddExpr(at->a, 1);
  for (const Term& t : at->b->terms) {
    int64_t c;
    if (__builtin_mul_overflow(t.coeff, -1, &c)) r.ok = false;
    r.Add(s->MonoMul(t.mono, fm), c);
  }
  ColsOf(r);
  remainder_ = std::move(r);
  remainder_atom_ = at;
  return remainder_;
}

namespace rules {

// DivModWhereDefined: a floordiv/mod atom whose divisor may be 0 (issue 14) equals, where
// it is defined, the value Scope recorded when its numerator is a multiple of its divisor
// (Scope::where_defined_).
// Sound: decisions about an atom are claimed only where it is defined (decide.h).
// Needs: a floordiv/mod column; runs whatever the divisor's sign.
void DivModWhereDefined(Decider::RuleContext* cx, const Mono* m) {
  const Expr* alt = cx->WhereDefined(ColumnAtom(m));
  if (!alt) return;
  Lin eq;
  eq.Add(m, 1);
  eq.AddExpr(alt, -1);
  if (eq.ok) {
    cx->ColsOf(eq);
    cx->AddEq(eq, fm::kImplicit);
  }
}

// DivisorPositive: d >= 1 for the symbolic divisor d of a floordiv/mod atom when d is never
// negative but may be 0.
// Sound: the atom is undefined where d == 0, and decisions about it hold where it is
// defined only; such rows only enter systems that mention the atom (decide.h).
// Needs: a floordiv/mod column, the divisor's interval (no row for one of unknown sign).
void DivisorPositive(Decider::RuleContext* cx, const Mono* m) {
  const Atom* at = ColumnAtom(m);
  const Interval d = cx->DivisorInterval(at);
  if (!PositiveWhereDefined(d)) return;
  if (d.lo < 1 && !at->b->IsConstant()) {  // the divisor itself: d >= 1 where defined
    Lin pos;
    pos.AddExpr(at->b, 1);
    pos.Add(cx->s->UnitMono(), -1);
    cx->ColsOf(pos);
    cx->AddGe(std::move(pos), fm::kImplicit);
  }
}

// DivModRange: 0 <= x - d*floordiv(x, d) <= d - 1 (floor division's remainder).
// Sound: Python floor semantics with d >= 1 (where defined, see DivisorPositive).
// Needs: a floordiv/mod column whose divisor is >= 1 where defined; interns floordiv(x, d)
// for a mod atom.
void DivModRange(Decider::RuleContext* cx, const Mono* m) {
  const Atom* at = ColumnAtom(m);
  if (!PositiveWhereDefined(cx->DivisorInterval(at))) return;
  const Lin& r = cx->Remainder(at);
  Lin upper = r;  // d - 1 - (x - d*f) >= 0
  upper.Negate();
  upper.AddExpr(at->b, 1);
  upper.Add(cx->s->UnitMono(), -1);
  cx->ColsOf(upper);
  cx->AddGe(r, fm::kImplicit);
  cx->AddGe(upper, fm::kImplicit);
}

// ModEquality: mod(x, d) == x - d*floordiv(x, d), for a mod atom or a floordiv atom whose
// mod atom exists in the scope.
// Sound: the definition of mod under floor semantics, d >= 1 where defined.
// Needs: a floordiv/mod column whose divisor is >= 1 where defined.
void ModEquality(Decider::RuleContext* cx, const Mono* m) {
  const Atom* at = ColumnAtom(m);
  if (!PositiveWhereDefined(cx->DivisorInterval(at))) return;
  const Atom* md = at->kind == AtomKind::kMod ? at : cx->s->FindAtom(AtomKind::kMod, at->a, at->b);
  if (!md) return;
  Lin eq = cx->Remainder(at);  // mod - (x - d*f) == 0
  eq.Negate();
  const Mono* mm = cx->s->InternMono({Factor{md, 1}});
  eq.Add(mm, 1);
  cx->sys->ColOf(mm);
  cx->AddEq(eq, fm::kImplicit);
}

}  // namespace rules
}  // namespace dim
}  // namespace shp
