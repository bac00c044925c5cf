// Congruence rules (issue 14): facts mod(x, k_i) == 0 make x a multiple of L = lcm(k_i), so
// of every d that divides L: mod(x, 3) == 0 and mod(x, 5) == 0 give mod(x, 15) == 0 (the
// nested form, mod(floordiv(x, 3), 5) == 0, FM combines from the atoms' rows).
#include <algorithm>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/fm.h"
#include "cc/dim/int_math.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {
namespace {

// Whether a fact mod(x, d) == 0 is itself among the facts.
bool ExactFact(const Decider::RuleContext* cx, const Expr* x, int64_t d) {
  for (const auto& dv : cx->divisibility) {
    if (dv.first == x && dv.second == d) return true;
  }
  return false;
}

}  // namespace

bool DividesBy(Decider::RuleContext* cx, const Expr* x, int64_t d) {
  if (!cx->divisibility_ready) {
    cx->divisibility_ready = true;
    for (const Fact& f : cx->s->facts()) {
      if (f.op != Cmp::kEq) continue;
      const Expr* side = f.rhs->IsConstant() && f.rhs->ConstantTerm() == 0   ? f.lhs
                         : f.lhs->IsConstant() && f.lhs->ConstantTerm() == 0 ? f.rhs
                                                                             : nullptr;
      if (!side || side->terms.size() != 1) continue;
      const Mono* m = side->terms[0].mono;
      if (m->factors.size() != 1 || m->factors[0].exp != 1) continue;
      const Atom* md = m->factors[0].atom;
      if (md->kind != AtomKind::kMod || !md->b->IsConstant()) continue;
      cx->divisibility.emplace_back(md->a, md->b->ConstantTerm());
    }
  }
  int64_t l = 1;
  for (const auto& dv : cx->divisibility) {
    if (x == nullptr || dv.first != x) continue;
    const int64_t g = Gcd64(l, dv.second);
    if (__builtin_mul_overflow(l / g, dv.second, &l)) return false;
    if (l % d == 0) return true;
  }
  return false;
}

namespace rules {

// CongruenceModulus: the combined modulus L of the facts mod(x, k_i) == 0 as a column
// floordiv(x, L) of the facts' system, so that the variables' bounds see it (mod(s, 3) ==
// 0 and mod(s, 5) == 0 give s >= 15 through s == 15*floordiv(s, 15)). Adds a column, no
// row: the column's atom rules (rules/divmod.cc, CongruenceRemainder) add the rows.
// Sound: a column alone constrains nothing.
// Needs: the facts' base system only (no cached base); runs once per Build.
void CongruenceModulus(Decider::RuleContext* cx) {
  if (cx->sys->base) return;
  Scope* s = cx->s;
  const auto& divisibility = cx->divisibility;
  DividesBy(cx, nullptr, 1);  // gathers the facts
  for (size_t i = 0; i < divisibility.size(); ++i) {
    int64_t l = 1, most = 0;
    bool ok = true;
    for (size_t j = 0; j < divisibility.size() && ok; ++j) {
      if (divisibility[j].first != divisibility[i].first) continue;
      if (j < i) ok = false;  // done at the first fact of this x
      const int64_t k = divisibility[j].second;
      most = std::max(most, k);
      if (__builtin_mul_overflow(l / Gcd64(l, k), k, &l)) ok = false;
    }
    if (!ok || l <= most || l > (int64_t{1} << 40)) continue;  // nothing combined
    try {
      cx->sys->ColOf(s->InternMono({Factor{
          s->InternAtom(AtomKind::kFloorDiv, -1, divisibility[i].first, s->Constant(l)), 1}}));
    } catch (const Error&) {  // past the atoms' size or depth limits: no column
    }
  }
}

// CongruenceRemainder: for a floordiv/mod atom of x == y + c by a constant d, where the
// facts make y a multiple of d: x - d*floordiv(x, d) == mod(c, d).
// Sound: y == d*j for an integer j, so x - d*floordiv(x, d) == mod(y + c, d) == mod(c, d).
// Not for a fact mod(x, d) == 0 itself: FM has it from the fact and the atom's rows, and a
// duplicate row only costs elimination work.
// Needs: a floordiv/mod column with a constant divisor >= 1, the facts' congruences.
void CongruenceRemainder(Decider::RuleContext* cx, const Mono* m) {
  const Atom* at = ColumnAtom(m);
  if (!PositiveWhereDefined(cx->DivisorInterval(at))) return;
  if (!at->b->IsConstant() || at->a->IsConstant()) return;
  const int64_t d = at->b->ConstantTerm(), c = at->a->ConstantTerm();
  std::vector<Term> yt;
  for (const Term& t : at->a->terms) {
    if (!t.mono->factors.empty()) yt.push_back(t);
  }
  if (DividesBy(cx, c == 0 ? at->a : cx->s->MakeExpr(std::move(yt)), d) &&
      !(c == 0 && ExactFact(cx, at->a, d))) {
    Lin eq = cx->Remainder(at);
    eq.Add(cx->s->UnitMono(), -ModInt(c, d));
    cx->AddEq(eq, fm::kImplicit);
  }
}

}  // namespace rules
}  // namespace dim
}  // namespace shp
