// Polynomial rules: integer facts about powers and squares that FM, which sees x, x^2 and
// x^k as unrelated columns, cannot find (issue 14 part 2).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/fm.h"
#include "cc/dim/int_math.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {
namespace {

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
    if (t.mono->factors.empty()) continue;
    const int64_t c = t.coeff / g;
    // -INT64_MIN does not exist: no square found (the fuzzer's overflow).
    if (*sign < 0 && c == std::numeric_limits<int64_t>::min()) return nullptr;
    tt.push_back(Term{t.mono, *sign * c});
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

// sign*x >= b, as the row sign*x - b >= 0.
void AddVarBound(Decider::RuleContext* cx, const Mono* xm, int sign, int64_t b, uint64_t origin) {
  Lin r;
  r.Add(xm, sign);
  r.Add(cx->s->UnitMono(), -b);
  cx->sys->ColOf(xm);
  cx->AddGe(std::move(r), origin | fm::kImplicit);
}

// A fact c*x^k + c0 >= 0 (or == 0) with k >= 3 bounds x by the integer k-th root: n^3 <=
// 1000 gives n <= 10 (x^k is monotone for odd k, and for even k on x >= 0 or in |x|).
void PowerRows(Decider::RuleContext* cx, const Atom* x, int32_t k, int64_t c, int64_t c0,
               uint64_t origin) {
  if (k > 62 || c == 0 || c == kNegInf || c0 == kNegInf) return;
  const Mono* xm = cx->s->InternMono({Factor{x, 1}});
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
  if (c < 0) {  // x^k <= y
    const int64_t y = FloorDivInt(c0, -c);
    if (y < 0) return;
    const int64_t root = floor_root(y);
    AddVarBound(cx, xm, -1, -root, origin);                 // x <= root
    if (k % 2 == 0) AddVarBound(cx, xm, 1, -root, origin);  // x >= -root
    return;
  }
  // x^k >= d: the smallest r >= 0 with r^k >= d.
  if (c0 >= 0) return;
  const int64_t d = -FloorDivInt(c0, c);  // ceil(-c0 / c) >= 1
  const int64_t root = floor_root(d - 1) + 1;
  if (k % 2 == 1 || cx->IntervalOf(cx->s->MonoExpr(xm, 1)).lo > -root) {
    AddVarBound(cx, xm, 1, root, origin);  // x >= root
  }
}

// A fact that is a quadratic in one variable x, c2*x^2 + c1*x + c0 >= 0 (or == 0), bounds
// x (issue 14: n^2 <= 10^6 gives n <= 1000). FM sees x^2 as a column of its own, so the
// rows that tie it to x are added here: with c2 < 0 the solutions lie between the roots,
// and the secant (x - t)(x - t - 1) >= 0 (true at every integer x) at the integer t just
// inside a root cuts x at t. With c2 > 0 and x's lower bound between the roots, p < 0 from
// that bound up to the integer t just below the upper root, so x >= t + 1.
void QuadraticRows(Decider::RuleContext* cx, const Lin& fact, bool eq, uint64_t origin) {
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
  Scope* s = cx->s;
  const Mono* xm = s->InternMono({Factor{x, 1}});
  const Mono* x2 = s->InternMono({Factor{x, 2}});
  auto holds = [&](int64_t v) {  // p(v) >= 0, exactly
    __int128 p;
    return EvalQuadratic(c2, c1, c0, v, &p) && p >= 0;
  };
  auto secant = [&](int64_t t) {  // x^2 - (2t + 1) x + t(t + 1) >= 0
    Lin r;
    r.Add(x2, 1);
    r.Add(xm, -(2 * t + 1));
    r.Add(s->UnitMono(), t * (t + 1));
    cx->sys->ColOf(xm);
    cx->AddGe(std::move(r), origin | fm::kImplicit);
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
  const int64_t low = cx->IntervalOf(s->MonoExpr(xm, 1)).lo;
  if (low == kNegInf || static_cast<long double>(low) <= lo_root - 1) return;
  int64_t t = static_cast<int64_t>(std::ceil(hi_root)) - 1;
  for (int k = 0; k < 4 && t >= low && holds(t); ++k) --t;
  if (t < low || holds(t) || holds(low)) return;
  AddVarBound(cx, xm, 1, t + 1, origin);  // x - (t + 1) >= 0
}

}  // namespace

namespace rules {

// FactPolynomialBounds: a fact polynomial in one variable x bounds x itself: a power
// c*x^k + c0 (k >= 3) by the integer k-th root, a quadratic c2*x^2 + c1*x + c0 through the
// integer secants (x - t)(x - t - 1) >= 0 at its roots (see QuadraticRows).
// Sound: the roots are only rounded inward after checking p exactly (int128) at the integers
// around them, and a secant row holds at every integer x.
// Needs: the fact's form (run before FactRow adds the fact itself), the decider's interval
// of x (its lower bound, for the even powers and convex quadratics).
void FactPolynomialBounds(Decider::RuleContext* cx, const FactForm& f) {
  const Lin& fact = f.lin;
  if (!fact.ok) return;
  if (fact.terms.size() == 1 && fact.terms[0].first->factors.size() == 1 &&
      fact.terms[0].first->factors[0].atom->kind == AtomKind::kVar &&
      fact.terms[0].first->factors[0].exp >= 3) {
    const Factor& x = fact.terms[0].first->factors[0];
    PowerRows(cx, x.atom, x.exp, fact.terms[0].second, fact.c0, f.origin);
    if (f.eq && fact.terms[0].second != kNegInf && fact.c0 != kNegInf) {
      PowerRows(cx, x.atom, x.exp, -fact.terms[0].second, -fact.c0, f.origin);
    }
    return;
  }
  if (fact.terms.empty() || fact.terms.size() > 2) return;
  QuadraticRows(cx, fact, f.eq, f.origin);
}

// QuerySquare: q^2 >= 0 for the polynomial q whose square leads the query (issue 14:
// (n - 7)^2 >= 0, (a - b)^2 + 1 >= 1).
// Sound: a square is never negative.
// Needs: the query (none for the facts' base system); runs once per Build.
void QuerySquare(Decider::RuleContext* cx) {
  const Expr* query = cx->query;
  if (!query || query->terms.size() < 2 || Degree(query) < 2) return;
  try {  // the scope's arithmetic may overflow (large coefficients): then no row
    int sign = 1;
    const Expr* q = SquareRootPart(cx->s, query, &sign);
    if (q && Degree(q) >= 1 && q->terms.size() >= 2) {
      Lin r;
      r.AddExpr(cx->s->Mul(q, q), 1);
      if (r.ok) {
        cx->ColsOf(r);
        cx->AddGe(std::move(r), fm::kImplicit);
      }
    }
  } catch (const Error&) {
  }
}

// EvenPowers: x*x*c >= x*c and x*x*c >= -x*c for every integer x when c >= 0 (x(x - 1) >= 0
// and x(x + 1) >= 0): even powers are non-negative and grow with the base (issue 14: v ==
// w*w*w with w >= 0 gives v >= w^2 >= w).
// Sound: x(x - 1) >= 0 and x(x + 1) >= 0 hold at every integer x, and c >= 0 by its
// interval.
// Needs: a product column, the decider's monomial intervals.
void EvenPowers(Decider::RuleContext* cx, const Mono* m) {
  for (size_t fi = 0; fi < m->factors.size(); ++fi) {
    if (m->factors[fi].exp < 2) continue;
    if (cx->MonoInterval(LowerExp(cx->s, m, fi, 2)).lo < 0) continue;
    const Mono* lower = LowerExp(cx->s, m, fi, 1);
    for (int sgn : {-1, 1}) {
      Lin r;
      r.Add(m, 1);
      r.Add(lower, sgn);
      cx->sys->ColOf(lower);
      cx->AddGe(std::move(r), fm::kImplicit);
    }
  }
}

}  // namespace rules
}  // namespace dim
}  // namespace shp
