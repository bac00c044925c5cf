// Turning facts into rows: the facts themselves, the implicit facts of atoms, McCormick
// relaxations of products and the interval bound of every column (see decide.h).
#include "cc/dim/decide_rows.h"

#include <vector>

#include "cc/dim/fm.h"

namespace shp {
namespace dim {

void Decider::Build(System* sys, const Expr* query) {
  // Linear facts as forms over monomials: fact i is `d >= 0` or `d == 0`.
  struct PendingRow {
    Lin lin;
    uint64_t origin;
    bool eq;
  };
  std::vector<PendingRow> pending;
  auto add_ge = [&](Lin lin, uint64_t origin) {
    pending.push_back({std::move(lin), origin, false});
  };
  auto add_eq = [&](const Lin& lin, uint64_t origin) { pending.push_back({lin, origin, true}); };

  // With a cached base (facts, their closure and interval rows), only the query's new
  // columns need work here.
  const size_t start = sys->base ? sys->base->cols.size() : 0;
  if (sys->base) sys->cols = sys->base->cols;
  if (query) {
    for (const Term& t : query->terms) {
      if (!t.mono->factors.empty()) sys->ColOf(t.mono);
    }
  }
  const std::vector<Fact>& facts = s_->facts();
  for (size_t i = 0; i < (sys->base ? 0 : facts.size()); ++i) {
    const Fact& f = facts[i];
    if (f.op == Cmp::kNe) continue;  // not linear; ignoring a fact is sound
    uint64_t origin = fm::FactOrigin(i);
    Lin lin;
    // Normalize to lin >= 0 (or == 0).
    bool lhs_big = f.op == Cmp::kGe || f.op == Cmp::kGt || f.op == Cmp::kEq;
    lin.AddExpr(f.lhs, lhs_big ? 1 : -1);
    lin.AddExpr(f.rhs, lhs_big ? -1 : 1);
    if (f.op == Cmp::kGt || f.op == Cmp::kLt) lin.Add(s_->UnitMono(), -1);
    for (auto& t : lin.terms) sys->ColOf(t.first);
    if (f.op == Cmp::kEq) {
      add_eq(lin, origin);
    } else {
      add_ge(std::move(lin), origin);
    }
  }

  // Closure: implicit facts of atoms and product relaxations, for every (new) column.
  for (size_t ci = start; ci < sys->cols.size(); ++ci) {
    const Mono* m = sys->cols[ci];
    if (m->factors.size() == 1 && m->factors[0].exp == 1) {
      const Atom* at = m->factors[0].atom;
      switch (at->kind) {
        case AtomKind::kVar:
          break;
        case AtomKind::kFloorDiv:
        case AtomKind::kMod: {
          Interval d = IntervalOf(at->b);
          if (d.lo < 1) break;
          const Atom* fd = at->kind == AtomKind::kFloorDiv
                               ? at
                               : s_->InternAtom(AtomKind::kFloorDiv, -1, at->a, at->b);
          const Atom* md =
              at->kind == AtomKind::kMod ? at : s_->FindAtom(AtomKind::kMod, at->a, at->b);
          const Mono* fm = s_->InternMono({Factor{fd, 1}});
          // x - d*f  (as a form), used in: 0 <= x - d*f <= d - 1 and mod == x - d*f.
          Lin r;
          r.AddExpr(at->a, 1);
          for (const Term& t : at->b->terms) {
            int64_t c;
            if (__builtin_mul_overflow(t.coeff, -1, &c)) r.ok = false;
            r.Add(s_->MonoMul(t.mono, fm), c);
          }
          for (auto& t : r.terms) sys->ColOf(t.first);
          Lin upper = r;  // d - 1 - (x - d*f) >= 0
          upper.Negate();
          upper.AddExpr(at->b, 1);
          upper.Add(s_->UnitMono(), -1);
          for (auto& t : upper.terms) sys->ColOf(t.first);
          add_ge(r, fm::kImplicit);
          add_ge(upper, fm::kImplicit);
          if (md) {
            Lin eq = r;  // mod - (x - d*f) == 0
            eq.Negate();
            const Mono* mm = s_->InternMono({Factor{md, 1}});
            eq.Add(mm, 1);
            sys->ColOf(mm);
            add_eq(eq, fm::kImplicit);
          }
          break;
        }
        case AtomKind::kMax:
        case AtomKind::kMin: {
          int sign = at->kind == AtomKind::kMax ? 1 : -1;
          for (const Expr* operand : {at->a, at->b}) {  // max - x >= 0, x - min >= 0
            Lin r;
            r.Add(m, sign);
            r.AddExpr(operand, -sign);
            for (auto& t : r.terms) sys->ColOf(t.first);
            add_ge(std::move(r), fm::kImplicit);
          }
          const Atom* other = s_->FindAtom(
              at->kind == AtomKind::kMax ? AtomKind::kMin : AtomKind::kMax, at->a, at->b);
          if (other && at->kind == AtomKind::kMax) {  // max + min == a + b
            Lin r;
            r.Add(m, 1);
            const Mono* om = s_->InternMono({Factor{other, 1}});
            r.Add(om, 1);
            r.AddExpr(at->a, -1);
            r.AddExpr(at->b, -1);
            for (auto& t : r.terms) sys->ColOf(t.first);
            add_eq(r, fm::kImplicit);
          }
          break;
        }
      }
    } else if (m->degree >= 2) {
      // McCormick: t = u*v with u one atom factor and v the cofactor.
      for (size_t fi = 0; fi < m->factors.size(); ++fi) {
        const Atom* u_atom = m->factors[fi].atom;
        std::vector<Factor> rest = m->factors;
        if (--rest[fi].exp == 0) rest.erase(rest.begin() + fi);
        const Mono* u = s_->InternMono({Factor{u_atom, 1}});
        const Mono* v = s_->InternMono(rest);
        Interval U = AtomInterval(u_atom), V = MonoInterval(v);
        // (u - ul)(v - vl) >= 0, (u - ul)(vh - v) >= 0, (uh - u)(v - vl) >= 0, (uh - u)(vh - v) >=
        // 0
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
          int64_t s = c.su * c.sv;
          Lin r;
          int64_t cu, cv, cc;
          if (__builtin_mul_overflow(-s, c.vb, &cu) || __builtin_mul_overflow(-s, c.ub, &cv) ||
              __builtin_mul_overflow(s * c.ub, c.vb, &cc)) {
            continue;
          }
          r.Add(m, s);
          r.Add(u, cu);
          r.Add(v, cv);
          r.Add(s_->UnitMono(), cc);
          if (!r.ok) continue;
          sys->ColOf(u);
          if (!v->factors.empty()) sys->ColOf(v);
          add_ge(std::move(r), fm::kImplicit);
        }
      }
    }
  }

  // Interval bounds of every (new) column.
  for (size_t ci = start; ci < sys->cols.size(); ++ci) {
    const Mono* m = sys->cols[ci];
    Interval iv = MonoInterval(m);
    if (iv.lo != kNegInf) {
      Lin r;
      r.Add(m, 1);
      r.Add(s_->UnitMono(), -iv.lo);  // iv.lo > kNegInf, so no overflow
      add_ge(std::move(r), fm::kImplicit);
    }
    if (iv.hi != kPosInf) {
      Lin r;
      r.Add(m, -1);
      r.Add(s_->UnitMono(), iv.hi);
      add_ge(std::move(r), fm::kImplicit);
    }
  }

  size_t ncols = sys->cols.size() + 1;  // last column: z (the query)
  if (sys->base) {  // the base's rows stay in the base (Project reads them from there)
    sys->infeasible = sys->base->infeasible;
    sys->infeasible_origin = sys->base->infeasible_origin;
  }
  for (PendingRow& p : pending) {
    if (!p.lin.ok) continue;
    Row row;
    row.c.assign(ncols, 0);
    row.c0 = p.lin.c0;
    row.origin = p.origin;
    row.eq = p.eq;
    bool ok = true;
    for (auto& t : p.lin.terms) {
      int j = sys->Find(t.first);
      if (j < 0 || __builtin_add_overflow(row.c[j], t.second, &row.c[j])) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    fm::Norm n = fm::Normalize(&row);
    if (n == fm::Norm::kOk) {
      sys->rows.push_back(std::move(row));
    } else if (n == fm::Norm::kInfeasible) {
      sys->infeasible = true;  // e.g. a constant contradiction: remember it to report it
      sys->infeasible_origin |= row.origin;
    }
  }
}

}  // namespace dim
}  // namespace shp
