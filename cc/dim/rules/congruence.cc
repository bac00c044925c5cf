// Congruence rules (issue 14): facts mod(x, k_i) == 0 make x a multiple of L = lcm(k_i), so
// of every d that divides L: mod(x, 3) == 0 and mod(x, 5) == 0 give mod(x, 15) == 0 (the
// nested form, mod(floordiv(x, 3), 5) == 0, FM combines from the atoms' rows).
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/fm.h"
#include "cc/dim/int_math.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {
namespace {

// A quasi-period of an expression in one variable x: e(x + period) == e(x) + shift for
// every x (ok false when the expression has none that the walk can show).
struct QuasiPeriod {
  int64_t period = 1, shift = 0;
  bool ok = true;
};

constexpr int64_t kMaxPeriod = int64_t{1} << 20;

// a and b brought to the lcm of their periods (their shifts scaled with it).
bool Common(QuasiPeriod* a, QuasiPeriod b) {
  if (!a->ok || !b.ok) return false;
  const int64_t g = Gcd64(a->period, b.period);
  int64_t l;
  if (__builtin_mul_overflow(a->period / g, b.period, &l) || l > kMaxPeriod) return false;
  if (__builtin_mul_overflow(a->shift, l / a->period, &a->shift) ||
      __builtin_mul_overflow(b.shift, l / b.period, &b.shift)) {
    return false;
  }
  a->period = l;
  return true;
}

// Whether a and b have the same shift over a common period (a + (-b) quasi-periodic with
// shift 0, e.g. both sides of a fact).
bool SameShift(QuasiPeriod a, const QuasiPeriod& b) {
  int64_t bs;
  return Common(&a, b) && !__builtin_mul_overflow(b.shift, a.period / b.period, &bs) &&
         a.shift == bs;
}

QuasiPeriod PeriodOf(const Expr* e, int32_t x, int depth);

// Of an atom: x itself, floordiv/mod by a nonzero constant, max/min of quasi-periodic parts.
QuasiPeriod AtomPeriod(const Atom* at, int32_t x, int depth) {
  QuasiPeriod q;
  switch (at->kind) {
    case AtomKind::kVar:
      q.ok = at->var == x;
      q.shift = 1;
      return q;
    case AtomKind::kFloorDiv:
    case AtomKind::kMod: {
      if (!at->b->IsConstant() || at->b->ConstantTerm() == 0 || at->b->ConstantTerm() == kNegInf) {
        return QuasiPeriod{1, 0, false};
      }
      const int64_t d = at->b->ConstantTerm();
      q = PeriodOf(at->a, x, depth + 1);
      if (!q.ok) return q;
      // k periods of the numerator shift it by a multiple of d: floor((y + k*s) / d) ==
      // floor(y / d) + k*s / d for every y.
      const int64_t k = (d < 0 ? -d : d) / Gcd64(q.shift, d);
      if (__builtin_mul_overflow(q.period, k, &q.period) || q.period > kMaxPeriod ||
          __builtin_mul_overflow(q.shift, k, &q.shift)) {
        return QuasiPeriod{1, 0, false};
      }
      q.shift = at->kind == AtomKind::kMod ? 0 : q.shift / d;
      return q;
    }
    case AtomKind::kMax:
    case AtomKind::kMin: {
      q = PeriodOf(at->a, x, depth + 1);
      const QuasiPeriod r = PeriodOf(at->b, x, depth + 1);
      q.ok = SameShift(q, r) && Common(&q, r);
      return q;
    }
    default:
      return QuasiPeriod{1, 0, false};
  }
}

QuasiPeriod PeriodOf(const Expr* e, int32_t x, int depth) {
  QuasiPeriod q;
  if (depth > 16) return QuasiPeriod{1, 0, false};
  for (const Term& t : e->terms) {
    if (t.mono->factors.empty()) continue;
    if (t.mono->factors.size() != 1 || t.mono->factors[0].exp != 1 || t.coeff == kNegInf)
      return QuasiPeriod{1, 0, false};
    QuasiPeriod a = AtomPeriod(t.mono->factors[0].atom, x, depth);
    if (!Common(&q, a) || __builtin_mul_overflow(a.shift, q.period / a.period, &a.shift) ||
        __builtin_mul_overflow(a.shift, t.coeff, &a.shift) ||
        __builtin_add_overflow(q.shift, a.shift, &q.shift)) {
      return QuasiPeriod{1, 0, false};
    }
  }
  return q;
}

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

// CongruenceResidues: the residues of one variable x that its periodic facts allow. A fact in
// x alone built from +, constant multiples, floordiv/mod by constants and max/min has a
// quasi-period P (f(x + P) == f(x) + s); with s == 0 its truth depends on x mod P only. The
// residues r in [0, L) (L: the lcm of those facts' periods, at most kMaxResidues) with a
// value of x in its declared range where every such fact holds are the only ones possible;
// their common congruence x == r0 (mod g) (g: the gcd of L and their differences) becomes
// the row x - g*floordiv(x, g) == r0, and no residue at all a contradiction. Chains of
// congruences on nested floors: mod(s, 2) == 0, mod(floordiv(s, 2), 8) == 0 and
// mod(floordiv(s, 16) + 2, 4) == 0 give s == 32 (mod 64).
// Sound: each fact holds at x iff at the representative of x mod L (its shift is 0 over a
// multiple of its period), so every valuation's residue is in the set, and every residue in
// it is r0 mod g.
// Needs: the facts' base system only; runs once per Build of it, at most 2^16 evaluations.
void CongruenceResidues(Decider::RuleContext* cx) {
  if (cx->sys->base) return;
  constexpr int64_t kMaxResidues = 4096;
  Scope* s = cx->s;
  const std::vector<Fact>& facts = s->facts();
  // The facts of one variable alone, by variable (in order of their first fact).
  std::vector<std::pair<int32_t, std::vector<size_t>>> groups;
  std::unordered_map<int32_t, size_t> group_of;
  for (size_t i = 0; i < facts.size(); ++i) {
    if (facts[i].op == Cmp::kNe) continue;
    std::vector<int32_t> vars = s->VarsOf(facts[i].lhs);
    for (int32_t v : s->VarsOf(facts[i].rhs)) vars.push_back(v);
    std::sort(vars.begin(), vars.end());
    vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
    if (vars.size() != 1) continue;
    auto at = group_of.emplace(vars[0], groups.size());
    if (at.second) groups.push_back({vars[0], {}});
    groups[at.first->second].second.push_back(i);
  }
  long budget = 1 << 16;  // fact evaluations per Build, over all variables
  for (const auto& group : groups) {
    const int32_t x = group.first;
    // Its periodic facts.
    std::vector<size_t> periodic;
    uint64_t origin = 0;
    int64_t l = 1;
    for (size_t j : group.second) {
      QuasiPeriod a = PeriodOf(facts[j].lhs, x, 0);
      const QuasiPeriod b = PeriodOf(facts[j].rhs, x, 0);
      if (!SameShift(a, b) || !Common(&a, b) || a.period == 1) continue;
      QuasiPeriod all{l, 0, true};
      if (!Common(&all, a) || all.period > kMaxResidues) continue;
      l = all.period;
      periodic.push_back(j);
      origin |= fm::FactOrigin(j);
    }
    if (periodic.empty()) continue;
    budget -= l * static_cast<long>(periodic.size());
    if (budget < 0) break;  // out of work: no more rows (sound, only weaker)
    const Variable& var = s->variables()[static_cast<size_t>(x)];
    std::vector<int64_t> vals(s->variables().size(), 0);
    std::vector<bool> known(vals.size(), false);
    known[static_cast<size_t>(x)] = true;
    std::vector<int64_t> residues;
    bool failed = false;
    for (int64_t r = 0; r < l && !failed; ++r) {
      // The value of x nearest its lower bound (or upper, or 0) with residue r.
      __int128 at = r;
      if (var.lo != kNegInf) {
        at = static_cast<__int128>(var.lo) + ModInt(r - ModInt(var.lo, l), l);
      } else if (var.hi != kPosInf) {
        at = static_cast<__int128>(var.hi) - ModInt(ModInt(var.hi, l) - r, l);
      }
      if (at < var.lo || at > var.hi) continue;
      vals[static_cast<size_t>(x)] = static_cast<int64_t>(at);
      bool holds = true;
      for (size_t j : periodic) {
        try {
          holds = CmpHolds(s->Evaluate(facts[j].lhs, vals, known), facts[j].op,
                           s->Evaluate(facts[j].rhs, vals, known));
        } catch (const Error&) {
          failed = true;  // overflow: no conclusion
        }
        if (!holds || failed) break;
      }
      if (holds) residues.push_back(r);
    }
    if (failed) continue;
    if (residues.empty()) {  // no residue satisfies the facts: contradictory
      Lin contradiction;
      contradiction.Add(s->UnitMono(), -1);
      cx->AddGe(std::move(contradiction), origin);
      continue;
    }
    int64_t g = l;
    for (int64_t r : residues) g = Gcd64(g, r - residues[0]);
    const int64_t r0 = ModInt(residues[0], g);
    if (g <= 1 || (r0 == 0 && periodic.size() == 1)) continue;  // nothing the facts do not say
    try {
      const Atom* xa = s->InternAtom(AtomKind::kVar, x, nullptr, nullptr);
      const Mono* xm = s->InternMono({Factor{xa, 1}});
      const Mono* qm = s->InternMono(
          {Factor{s->InternAtom(AtomKind::kFloorDiv, -1, s->MonoExpr(xm, 1), s->Constant(g)), 1}});
      Lin eq;  // x - g*floordiv(x, g) - r0 == 0
      eq.Add(xm, 1);
      eq.Add(qm, -g);
      eq.Add(s->UnitMono(), -r0);
      cx->ColsOf(eq);
      cx->AddEq(eq, origin);
    } catch (const Error&) {  // past the atoms' size or depth limits: no row
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
