// Turning facts into rows: the facts themselves, the implicit facts of atoms, McCormick
// relaxations of products and the interval bound of every column (see decide.h).
#include "cc/dim/decide_rows.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/fm.h"
#include "cc/dim/int_math.h"

namespace shp {
namespace dim {
namespace {

// floordiv/mod rows need a divisor >= 1. One that may be 0 but is never negative is >= 1
// wherever its atom is defined, where alone decisions about the atom are claimed.
bool PositiveWhereDefined(const Interval& d) { return d.lo >= 0 && d.hi >= 1; }

// At most this many equality products (and square rows) per Build, of at most this degree:
// they add columns, and each column costs its closure rows.
constexpr size_t kMaxEqProducts = 16;
constexpr int32_t kMaxProductDegree = 6;

// t / l when the monomial l divides t, else nullptr.
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

// `m` with the exponent of factor `fi` lowered by `by` (the factor dropped at 0).
const Mono* LowerExp(Scope* s, const Mono* m, size_t fi, int32_t by) {
  std::vector<Factor> out = m->factors;
  out[fi].exp -= by;
  if (out[fi].exp == 0) out.erase(out.begin() + static_cast<std::ptrdiff_t>(fi));
  return s->InternMono(std::move(out));
}

// Integer square root of the perfect square y >= 0 (false if y is none).
bool ExactSqrt(int64_t y, int64_t* root) {
  if (y < 0) return false;
  int64_t r = static_cast<int64_t>(std::sqrt(static_cast<long double>(y)));
  while (r > 0 && static_cast<__int128>(r) * r > y) --r;
  while (static_cast<__int128>(r + 1) * (r + 1) <= y) ++r;
  if (static_cast<__int128>(r) * r != y) return false;
  *root = r;
  return true;
}

// A polynomial q whose square is the leading part of `e` (up to a positive constant): e ==
// g*q^2 + rest, where the square root is taken term by term from the highest monomial (the
// usual algorithm; it stops at the first term that does not divide). `sign` is -1 when it is
// -e that has the root. Null when the leading term is no square. Any q is sound: g*q^2 >= 0
// holds for every valuation; the closer q^2 is to e, the more the row says.
const Expr* SquareRootPart(Scope* s, const Expr* e, int* sign) {
  if (e->terms.empty() || e->terms.size() > 16) return nullptr;
  const Term& lead = e->terms[0];
  if (lead.mono->factors.empty() || lead.mono->degree > 4) return nullptr;
  for (const Factor& f : lead.mono->factors) {
    if (f.exp % 2) return nullptr;
  }
  *sign = lead.coeff > 0 ? 1 : -1;
  int64_t g = 0;
  for (const Term& t : e->terms) {
    if (!t.mono->factors.empty()) g = Gcd64(g, t.coeff);
  }
  if (g <= 0 || lead.coeff == kNegInf) return nullptr;
  int64_t k;
  if (!ExactSqrt((lead.coeff < 0 ? -lead.coeff : lead.coeff) / g, &k)) return nullptr;
  std::vector<Factor> half = lead.mono->factors;
  for (Factor& f : half) f.exp /= 2;
  const Mono* lead_q = s->InternMono(half);
  // target = sign * (e - constant) / g
  std::vector<Term> tt;
  for (const Term& t : e->terms) {
    if (!t.mono->factors.empty()) tt.push_back(Term{t.mono, *sign * (t.coeff / g)});
  }
  const Expr* target = s->MakeExpr(std::move(tt));
  const Expr* q = s->MonoExpr(lead_q, k);
  for (int step = 0; step < 6; ++step) {
    const Expr* rest = s->Sub(target, s->Mul(q, q));
    const Term* next = nullptr;
    for (const Term& t : rest->terms) {
      if (!t.mono->factors.empty()) {
        next = &t;
        break;
      }
    }
    if (!next) break;
    // next = 2*k*lead_q * (c*m) with m below lead_q: m = next / lead_q, c = coeff / (2k).
    const Mono* m = MonoDiv(s, next->mono, lead_q);
    if (!m || CompareMonos(m, lead_q) <= 0 || next->coeff % (2 * k) != 0) break;
    q = s->Add(q, s->MonoExpr(m, next->coeff / (2 * k)));
  }
  return q;
}

// p(x) = c2*x^2 + c1*x + c0 in int128; false when it leaves int128.
bool EvalQuadratic(int64_t c2, int64_t c1, int64_t c0, int64_t x, __int128* out) {
  __int128 xx, a, b;
  if (__builtin_mul_overflow(static_cast<__int128>(x), static_cast<__int128>(x), &xx) ||
      __builtin_mul_overflow(xx, static_cast<__int128>(c2), &a) ||
      __builtin_mul_overflow(static_cast<__int128>(x), static_cast<__int128>(c1), &b) ||
      __builtin_add_overflow(a, b, &a) || __builtin_add_overflow(a, static_cast<__int128>(c0), out))
    return false;
  return true;
}

}  // namespace

void Decider::Build(System* sys, const Expr* query) {
  // Linear facts as forms over monomials: fact i is `d >= 0` or `d == 0`.
  struct PendingRow {
    Lin lin;
    uint64_t origin;
    bool eq;
  };
  std::vector<PendingRow> pending;
  pending.reserve(16);  // a query's own rows are few: one allocation, not doublings
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
  // A fact that is a quadratic in one variable x, c2*x^2 + c1*x + c0 >= 0 (or == 0), bounds
  // x (issue 14: n^2 <= 10^6 gives n <= 1000). FM sees x^2 as a column of its own, so the
  // rows that tie it to x are added here: with c2 < 0 the solutions lie between the roots,
  // and the secant (x - t)(x - t - 1) >= 0 (true at every integer x) at the integer t just
  // inside a root cuts x at t. With c2 > 0 and x's lower bound between the roots, p < 0 from
  // that bound up to the integer t just below the upper root, so x >= t + 1.
  // A fact c*x^k + c0 >= 0 (or == 0) with k >= 3 bounds x by the integer k-th root: n^3 <=
  // 1000 gives n <= 10 (x^k is monotone for odd k, and for even k on x >= 0 or in |x|).
  auto power_rows = [&](const Atom* x, int32_t k, int64_t c, int64_t c0, uint64_t origin) {
    if (k > 62 || c == 0 || c == kNegInf || c0 == kNegInf) return;
    const Mono* xm = s_->InternMono({Factor{x, 1}});
    auto pow_le = [k](int64_t r, int64_t y) {  // r^k <= y, for r >= 0
      __int128 p = 1;
      for (int32_t i = 0; i < k; ++i) {
        p *= r;
        if (p > y) return false;
      }
      return true;
    };
    auto floor_root = [&](int64_t y) {  // the largest r >= 0 with r^k <= y (y >= 0)
      int64_t r = static_cast<int64_t>(std::pow(static_cast<long double>(y), 1.0L / k));
      while (r > 0 && !pow_le(r, y)) --r;
      while (pow_le(r + 1, y)) ++r;
      return r;
    };
    auto bound = [&](int sign, int64_t b) {  // sign*x >= b  ->  sign*x - b >= 0
      Lin r;
      r.Add(xm, sign);
      r.Add(s_->UnitMono(), -b);
      sys->ColOf(xm);
      add_ge(std::move(r), origin | fm::kImplicit);
    };
    if (c < 0) {  // x^k <= y
      const int64_t y = FloorDivInt(c0, -c);
      if (y < 0) return;
      const int64_t root = floor_root(y);
      bound(-1, -root);                 // x <= root
      if (k % 2 == 0) bound(1, -root);  // x >= -root
      return;
    }
    // x^k >= d: the smallest r >= 0 with r^k >= d.
    if (c0 >= 0) return;
    const int64_t d = -FloorDivInt(c0, c);  // ceil(-c0 / c) >= 1
    const int64_t root = floor_root(d - 1) + 1;
    if (k % 2 == 1 || IntervalOf(s_->MonoExpr(xm, 1)).lo > -root) bound(1, root);  // x >= root
  };

  auto quadratic_rows = [&](const Lin& fact, bool eq, uint64_t origin) {
    if (fact.terms.size() == 1 && fact.terms[0].first->factors.size() == 1 &&
        fact.terms[0].first->factors[0].atom->kind == AtomKind::kVar &&
        fact.terms[0].first->factors[0].exp >= 3) {
      const Factor& f = fact.terms[0].first->factors[0];
      power_rows(f.atom, f.exp, fact.terms[0].second, fact.c0, origin);
      if (eq && fact.terms[0].second != kNegInf && fact.c0 != kNegInf) {
        power_rows(f.atom, f.exp, -fact.terms[0].second, -fact.c0, origin);
      }
      return;
    }
    if (fact.terms.empty() || fact.terms.size() > 2) return;
    const Atom* x = nullptr;
    int64_t c2 = 0, c1 = 0;
    for (const auto& t : fact.terms) {
      const Mono* m = t.first;
      if (m->factors.size() != 1 || m->factors[0].atom->kind != AtomKind::kVar) return;
      if (x && x != m->factors[0].atom) return;
      x = m->factors[0].atom;
      if (m->factors[0].exp == 2) {
        c2 = t.second;
      } else if (m->factors[0].exp == 1) {
        c1 = t.second;
      } else {
        return;
      }
    }
    int64_t c0 = fact.c0;
    if (c2 == 0 || c2 == kNegInf || c1 == kNegInf || c0 == kNegInf) return;
    if (eq && c2 > 0) {
      c2 = -c2;
      c1 = -c1;
      c0 = -c0;
    }
    const long double a = c2, b = c1, c = c0;
    const long double disc = b * b - 4 * a * c;
    if (disc < 0) return;  // no real root: FM (or the satisfiability check) sees the rest
    const long double r1 = (-b + std::sqrt(disc)) / (2 * a), r2 = (-b - std::sqrt(disc)) / (2 * a);
    const long double lo_root = std::min(r1, r2), hi_root = std::max(r1, r2);
    constexpr long double kLimit = 1e9;  // t*(t + 1) and 2t + 1 stay far inside int64
    if (!(std::fabs(lo_root) < kLimit && std::fabs(hi_root) < kLimit)) return;
    const Mono* xm = s_->InternMono({Factor{x, 1}});
    const Mono* x2 = s_->InternMono({Factor{x, 2}});
    auto holds = [&](int64_t v) {  // p(v) >= 0, exactly
      __int128 p;
      return EvalQuadratic(c2, c1, c0, v, &p) && p >= 0;
    };
    auto secant = [&](int64_t t) {  // x^2 - (2t + 1) x + t(t + 1) >= 0
      Lin r;
      r.Add(x2, 1);
      r.Add(xm, -(2 * t + 1));
      r.Add(s_->UnitMono(), t * (t + 1));
      sys->ColOf(xm);
      add_ge(std::move(r), origin | fm::kImplicit);
    };
    if (c2 < 0) {
      // The largest integer solution t_hi and the smallest t_lo (exact, around the roots).
      // (Any t gives a valid row; these steps only correct the rounding of the roots.)
      int64_t hi = static_cast<int64_t>(std::floor(hi_root));
      for (int k = 0; k < 4 && holds(hi + 1); ++k) ++hi;
      for (int k = 0; k < 4 && !holds(hi); ++k) --hi;
      int64_t lo = static_cast<int64_t>(std::ceil(lo_root));
      for (int k = 0; k < 4 && holds(lo - 1); ++k) --lo;
      for (int k = 0; k < 4 && !holds(lo); ++k) ++lo;
      secant(hi);      // with p >= 0: x <= hi
      secant(lo - 1);  // x >= lo
      return;
    }
    if (eq) return;
    // c2 > 0: p >= 0 outside the roots. From the lower bound L of x: when p(L) < 0 and
    // p(t) < 0 (convex: negative on [L, t]), every solution is >= t + 1.
    const int64_t low = IntervalOf(s_->MonoExpr(xm, 1)).lo;
    if (low == kNegInf || static_cast<long double>(low) <= lo_root - 1) return;
    int64_t t = static_cast<int64_t>(std::ceil(hi_root)) - 1;
    for (int k = 0; k < 4 && t >= low && holds(t); ++k) --t;
    if (t < low || holds(t) || holds(low)) return;
    Lin r;  // x - (t + 1) >= 0
    r.Add(xm, 1);
    r.Add(s_->UnitMono(), -(t + 1));
    sys->ColOf(xm);
    add_ge(std::move(r), origin | fm::kImplicit);
  };

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
    if (lin.ok) quadratic_rows(lin, f.op == Cmp::kEq, origin);
    if (f.op == Cmp::kEq) {
      add_eq(lin, origin);
    } else {
      add_ge(std::move(lin), origin);
    }
  }

  // Congruences (issue 14): facts mod(x, k_i) == 0 make x a multiple of L = lcm(k_i), so
  // of every d that divides L: mod(x, 3) == 0 and mod(x, 5) == 0 give mod(x, 15) == 0 (the
  // nested form, mod(floordiv(x, 3), 5) == 0, FM combines from the atoms' rows).
  std::vector<std::pair<const Expr*, int64_t>> divisibility;
  bool divisibility_ready = false;
  auto divides_by = [&](const Expr* x, int64_t d) {
    if (!divisibility_ready) {
      divisibility_ready = true;
      for (const Fact& f : s_->facts()) {
        if (f.op != Cmp::kEq) continue;
        const Expr* side = f.rhs->IsConstant() && f.rhs->ConstantTerm() == 0   ? f.lhs
                           : f.lhs->IsConstant() && f.lhs->ConstantTerm() == 0 ? f.rhs
                                                                               : nullptr;
        if (!side || side->terms.size() != 1) continue;
        const Mono* m = side->terms[0].mono;
        if (m->factors.size() != 1 || m->factors[0].exp != 1) continue;
        const Atom* md = m->factors[0].atom;
        if (md->kind != AtomKind::kMod || !md->b->IsConstant()) continue;
        divisibility.emplace_back(md->a, md->b->ConstantTerm());
      }
    }
    int64_t l = 1;
    for (const auto& dv : divisibility) {
      if (x == nullptr || dv.first != x) continue;
      const int64_t g = Gcd64(l, dv.second);
      if (__builtin_mul_overflow(l / g, dv.second, &l)) return false;
      if (l % d == 0) return true;
    }
    return false;
  };

  auto exact_fact = [&](const Expr* x, int64_t d) {
    for (const auto& dv : divisibility) {
      if (dv.first == x && dv.second == d) return true;
    }
    return false;
  };

  // The combined modulus as a column of the facts' system, so that the variables' bounds see
  // it (mod(s, 3) == 0 and mod(s, 5) == 0 give s >= 15 through s == 15*floordiv(s, 15)).
  if (!sys->base) {
    divides_by(nullptr, 1);  // gathers the facts
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
        sys->ColOf(s_->InternMono({Factor{
            s_->InternAtom(AtomKind::kFloorDiv, -1, divisibility[i].first, s_->Constant(l)), 1}}));
      } catch (const Error&) {  // past the atoms' size or depth limits: no column
      }
    }
  }

  // Equalities L == 0 of the facts and of mod atoms (mod(x, d) == x - d*floordiv(x, d)),
  // gathered when a product column first needs them: a column t that a monomial l of L
  // divides gets (t/l)*L == 0 (issue 14: p*q == r gives p*p*q == p*r; mod(n, 8) == 0 gives
  // n*m == 8*floordiv(n, 8)*m through m*mod(n, 8) == 0). Valid wherever L == 0 holds.
  std::vector<Lin> eq_forms;
  std::vector<const Atom*> eq_atoms;  // mod atoms whose equality is in eq_forms
  bool eq_forms_ready = false;
  size_t products = 0;
  std::vector<std::pair<size_t, const Mono*>> multiplied;  // (form, multiplier) done
  auto mod_equality = [&](const Atom* md, Lin* eq) {       // mod - (x - d*floordiv(x, d)) == 0
    const Atom* fd = s_->InternAtom(AtomKind::kFloorDiv, -1, md->a, md->b);
    const Mono* fm = s_->InternMono({Factor{fd, 1}});
    eq->Add(s_->InternMono({Factor{md, 1}}), 1);
    eq->AddExpr(md->a, -1);
    for (const Term& t : md->b->terms) {
      if (t.coeff == kNegInf) eq->ok = false;
      if (eq->ok) eq->Add(s_->MonoMul(t.mono, fm), t.coeff);
    }
  };
  auto add_mod_form = [&](const Atom* md) {
    for (const Atom* a : eq_atoms) {
      if (a == md) return;
    }
    if (!PositiveWhereDefined(IntervalOf(md->b))) return;
    Lin eq;
    try {
      mod_equality(md, &eq);
    } catch (const Error&) {
      return;
    }
    if (!eq.ok) return;
    eq_atoms.push_back(md);
    eq_forms.push_back(std::move(eq));
  };
  auto ready_eq_forms = [&]() {
    if (eq_forms_ready) return;
    eq_forms_ready = true;
    for (const Fact& f : facts) {
      if (f.op != Cmp::kEq) continue;
      Lin lin;
      lin.AddExpr(f.lhs, 1);
      lin.AddExpr(f.rhs, -1);
      if (lin.ok && !lin.terms.empty()) eq_forms.push_back(std::move(lin));
    }
    for (const Mono* m : sys->cols) {
      if (m->factors.size() == 1 && m->factors[0].exp == 1 &&
          m->factors[0].atom->kind == AtomKind::kMod) {
        add_mod_form(m->factors[0].atom);
      }
    }
  };
  auto multiply_equalities = [&](const Mono* t) {
    if (t->degree > kMaxProductDegree) return;
    ready_eq_forms();
    for (size_t k = 0; k < eq_forms.size() && products < kMaxEqProducts; ++k) {
      for (size_t li = 0; li < eq_forms[k].terms.size(); ++li) {
        const Mono* l = eq_forms[k].terms[li].first;
        const Mono* q = l->degree < t->degree ? MonoDiv(s_, t, l) : nullptr;
        if (!q || q->factors.empty()) continue;
        bool done = false;
        for (const auto& d : multiplied) done |= d.first == k && d.second == q;
        if (done) continue;
        multiplied.emplace_back(k, q);
        Lin p;
        try {  // MonoMul refuses exponents past kMaxExponent: then no row
          for (const auto& lt : eq_forms[k].terms) p.Add(s_->MonoMul(lt.first, q), lt.second);
        } catch (const Error&) {
          continue;
        }
        p.Add(q, eq_forms[k].c0);
        if (!p.ok) continue;
        ++products;
        for (auto& pt : p.terms) sys->ColOf(pt.first);
        add_eq(p, fm::kImplicit);
      }
    }
  };

  // The query's square part (issue 14: (n - 7)^2 >= 0, (a - b)^2 + 1 >= 1): q^2 >= 0 for the
  // polynomial q whose square leads the query.
  if (query && query->terms.size() >= 2 && Degree(query) >= 2) {
    try {  // the scope's arithmetic may overflow (large coefficients): then no row
      int sign = 1;
      const Expr* q = SquareRootPart(s_, query, &sign);
      if (q && Degree(q) >= 1 && q->terms.size() >= 2) {
        Lin r;
        r.AddExpr(s_->Mul(q, q), 1);
        if (r.ok) {
          for (auto& t : r.terms) sys->ColOf(t.first);
          add_ge(std::move(r), fm::kImplicit);
        }
      }
    } catch (const Error&) {
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
          // A divisor that may be 0 (issue 14): the atom's value where it is defined, when
          // its numerator is a multiple of its divisor (Scope::where_defined_).
          auto alt = s_->where_defined_.find(at);
          if (alt != s_->where_defined_.end()) {
            Lin eq;
            eq.Add(m, 1);
            eq.AddExpr(alt->second, -1);
            if (eq.ok) {
              for (auto& t : eq.terms) sys->ColOf(t.first);
              add_eq(eq, fm::kImplicit);
            }
          }
          // Also for a divisor that may be 0 (>= 0): the rows hold wherever the atom is
          // defined, and decisions about it are claimed there only (decide.h).
          const Interval d = IntervalOf(at->b);
          if (!PositiveWhereDefined(d)) break;
          if (d.lo < 1 && !at->b->IsConstant()) {  // the divisor itself: d >= 1 where defined
            Lin pos;
            pos.AddExpr(at->b, 1);
            pos.Add(s_->UnitMono(), -1);
            for (auto& t : pos.terms) sys->ColOf(t.first);
            add_ge(std::move(pos), fm::kImplicit);
          }
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
          if (at->b->IsConstant() && !at->a->IsConstant()) {
            // x == y + c with y a multiple of d: x - d*floordiv(x, d) == mod(c, d).
            const int64_t d = at->b->ConstantTerm(), c = at->a->ConstantTerm();
            std::vector<Term> yt;
            for (const Term& t : at->a->terms) {
              if (!t.mono->factors.empty()) yt.push_back(t);
            }
            // (Not for a fact mod(x, d) == 0 itself: FM has it from the fact and the
            // atom's rows, and a duplicate row only costs elimination work.)
            if (divides_by(c == 0 ? at->a : s_->MakeExpr(std::move(yt)), d) &&
                !(c == 0 && exact_fact(at->a, d))) {
              Lin eq = r;
              eq.Add(s_->UnitMono(), -ModInt(c, d));
              add_eq(eq, fm::kImplicit);
            }
          }
          if (md && eq_forms_ready) add_mod_form(md);
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
      // x*x*c >= x*c and x*x*c >= -x*c for every integer x when c >= 0 (x(x - 1) >= 0 and
      // x(x + 1) >= 0): even powers are non-negative and grow with the base (issue 14: v ==
      // w*w*w with w >= 0 gives v >= w^2 >= w).
      for (size_t fi = 0; fi < m->factors.size(); ++fi) {
        if (m->factors[fi].exp < 2) continue;
        if (MonoInterval(LowerExp(s_, m, fi, 2)).lo < 0) continue;
        const Mono* lower = LowerExp(s_, m, fi, 1);
        for (int sgn : {-1, 1}) {
          Lin r;
          r.Add(m, 1);
          r.Add(lower, sgn);
          sys->ColOf(lower);
          add_ge(std::move(r), fm::kImplicit);
        }
      }
      if (products < kMaxEqProducts && (!eq_forms_ready || !eq_forms.empty())) {
        multiply_equalities(m);
      }
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
  sys->rows.reserve(sys->rows.size() + pending.size());
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
