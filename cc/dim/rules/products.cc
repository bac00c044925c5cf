// Rules for products of columns: equalities multiplied by a monomial (issue 14 part 2) and
// McCormick relaxations of a product of bounded factors.
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/fm.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {

const Mono* MonoDiv(Scope* s, const Mono* t, const Mono* l) {
  std::vector<Factor> out;
  size_t j = 0;
  for (const Factor& f : t->factors) {
    if (j < l->factors.size() && l->factors[j].atom == f.atom) {
      if (l->factors[j].exp > f.exp) return nullptr;
      if (f.exp > l->factors[j].exp) out.push_back(Factor{f.atom, f.exp - l->factors[j].exp});
      ++j;
    } else {
      out.push_back(f);
    }
  }
  if (j != l->factors.size()) return nullptr;
  return s->InternMono(std::move(out));
}

namespace {

// At most this many equality products (and square rows) per Build, of at most this degree:
// they add columns, and each column costs its closure rows.
constexpr size_t kMaxEqProducts = 16;
constexpr int32_t kMaxProductDegree = 6;

// mod - (x - d*floordiv(x, d)) == 0 for the mod atom md.
void ModEqualityForm(Scope* s, const Atom* md, Lin* eq) {
  const Atom* fd = s->InternAtom(AtomKind::kFloorDiv, -1, md->a, md->b);
  const Mono* fm = s->InternMono({Factor{fd, 1}});
  eq->Add(s->InternMono({Factor{md, 1}}), 1);
  eq->AddExpr(md->a, -1);
  for (const Term& t : md->b->terms) {
    if (t.coeff == kNegInf) eq->ok = false;
    if (eq->ok) eq->Add(s->MonoMul(t.mono, fm), t.coeff);
  }
}

// Adds the equality of the mod atom md to the forms products multiply (once; only for a
// divisor >= 1 where defined).
void AddModForm(Decider::RuleContext* cx, const Atom* md) {
  for (const Atom* a : cx->eq_atoms) {
    if (a == md) return;
  }
  if (!PositiveWhereDefined(cx->IntervalOf(md->b))) return;
  Lin eq;
  try {
    ModEqualityForm(cx->s, md, &eq);
  } catch (const Error&) {
    return;
  }
  if (!eq.ok) return;
  cx->eq_atoms.push_back(md);
  cx->eq_forms.push_back(std::move(eq));
}

// Gathers the equalities of the facts and of the mod columns so far (once per Build).
void ReadyEqForms(Decider::RuleContext* cx) {
  if (cx->eq_forms_ready) return;
  cx->eq_forms_ready = true;
  for (const Fact& f : cx->s->facts()) {
    if (f.op != Cmp::kEq) continue;
    Lin lin;
    lin.AddExpr(f.lhs, 1);
    lin.AddExpr(f.rhs, -1);
    if (lin.ok && !lin.terms.empty()) cx->eq_forms.push_back(std::move(lin));
  }
  for (const Mono* m : cx->sys->cols) {
    if (m->factors.size() == 1 && m->factors[0].exp == 1 &&
        m->factors[0].atom->kind == AtomKind::kMod) {
      AddModForm(cx, m->factors[0].atom);
    }
  }
}

// (t/l)*L == 0 for each gathered equality L == 0 with a monomial l that divides t.
void MultiplyEqualities(Decider::RuleContext* cx, const Mono* t) {
  if (t->degree > kMaxProductDegree) return;
  ReadyEqForms(cx);
  const std::vector<Lin>& eq_forms = cx->eq_forms;
  for (size_t k = 0; k < eq_forms.size() && cx->products < kMaxEqProducts; ++k) {
    for (size_t li = 0; li < eq_forms[k].terms.size(); ++li) {
      const Mono* l = eq_forms[k].terms[li].first;
      const Mono* q = l->degree < t->degree ? MonoDiv(cx->s, t, l) : nullptr;
      if (!q || q->factors.empty()) continue;
      bool done = false;
      for (const auto& d : cx->multiplied) done |= d.first == k && d.second == q;
      if (done) continue;
      cx->multiplied.emplace_back(k, q);
      Lin p;
      try {  // MonoMul refuses exponents past kMaxExponent: then no row
        for (const auto& lt : eq_forms[k].terms) p.Add(cx->s->MonoMul(lt.first, q), lt.second);
      } catch (const Error&) {
        continue;
      }
      p.Add(q, eq_forms[k].c0);
      if (!p.ok) continue;
      ++cx->products;
      cx->ColsOf(p);
      cx->AddEq(p, fm::kImplicit);
    }
  }
}

}  // namespace

namespace rules {

// ModFormForProducts: once EqualityProducts has gathered its equalities, a mod column that
// appears later hands over its equality mod(x, d) == x - d*floordiv(x, d) too. Adds no row.
// Sound: adds nothing by itself (see EqualityProducts).
// Needs: a floordiv/mod column whose divisor is >= 1 where defined.
void ModFormForProducts(Decider::RuleContext* cx, const Mono* m) {
  const Atom* at = ColumnAtom(m);
  if (!PositiveWhereDefined(cx->DivisorInterval(at))) return;
  const Atom* md = at->kind == AtomKind::kMod ? at : cx->s->FindAtom(AtomKind::kMod, at->a, at->b);
  if (md && cx->eq_forms_ready) AddModForm(cx, md);
}

// EqualityProducts: equalities L == 0 of the facts and of mod atoms (mod(x, d) == x -
// d*floordiv(x, d)), gathered when a product column first needs them: a column t that a
// monomial l of L divides gets (t/l)*L == 0 (issue 14: p*q == r gives p*p*q == p*r; mod(n, 8)
// == 0 gives n*m == 8*floordiv(n, 8)*m through m*mod(n, 8) == 0). At most kMaxEqProducts
// rows per Build, for columns of degree <= kMaxProductDegree.
// Sound: valid wherever L == 0 holds (a product of zero is zero).
// Needs: a product column; the facts, the mod columns so far.
void EqualityProducts(Decider::RuleContext* cx, const Mono* m) {
  if (cx->products < kMaxEqProducts && (!cx->eq_forms_ready || !cx->eq_forms.empty())) {
    MultiplyEqualities(cx, m);
  }
}

// McCormick: t = u*v with u one atom factor of the product column t and v the cofactor, and
// u in [ul, uh], v in [vl, vh]: (u - ul)(v - vl) >= 0, (u - ul)(vh - v) >= 0,
// (uh - u)(v - vl) >= 0 and (uh - u)(vh - v) >= 0, expanded (the product becomes t).
// Sound: each is a product of two non-negative factors; an infinite bound gives no row.
// Needs: a product column, the decider's atom and monomial intervals.
void McCormick(Decider::RuleContext* cx, const Mono* m) {
  Scope* s = cx->s;
  for (size_t fi = 0; fi < m->factors.size(); ++fi) {
    const Atom* u_atom = m->factors[fi].atom;
    std::vector<Factor> rest = m->factors;
    if (--rest[fi].exp == 0) rest.erase(rest.begin() + fi);
    const Mono* u = s->InternMono({Factor{u_atom, 1}});
    const Mono* v = s->InternMono(rest);
    Interval U = cx->AtomInterval(u_atom), V = cx->MonoInterval(v);
    struct Corner {
      int64_t ub;
      int su;  // +1: (u - ub), -1: (ub - u)
      int64_t vb;
      int sv;
    };
    Corner corners[4] = {
        {U.lo, 1, V.lo, 1}, {U.lo, 1, V.hi, -1}, {U.hi, -1, V.lo, 1}, {U.hi, -1, V.hi, -1}};
    for (const Corner& c : corners) {
      if (c.ub == kNegInf || c.ub == kPosInf || c.vb == kNegInf || c.vb == kPosInf) continue;
      // su*sv*t - su*sv*vb*u - su*sv*ub*v + su*sv*ub*vb >= 0
      int64_t sg = c.su * c.sv;
      Lin r;
      int64_t cu, cv, cc;
      if (__builtin_mul_overflow(-sg, c.vb, &cu) || __builtin_mul_overflow(-sg, c.ub, &cv) ||
          __builtin_mul_overflow(sg * c.ub, c.vb, &cc)) {
        continue;
      }
      r.Add(m, sg);
      r.Add(u, cu);
      r.Add(v, cv);
      r.Add(s->UnitMono(), cc);
      if (!r.ok) continue;
      cx->sys->ColOf(u);
      if (!v->factors.empty()) cx->sys->ColOf(v);
      cx->AddGe(std::move(r), fm::kImplicit);
    }
  }
}

}  // namespace rules
}  // namespace dim
}  // namespace shp
