// Cheap reasoning over the facts alone, without elimination (see decide.h): bound
// propagation over the facts linear in variables (Propagate, used by Prepare where a
// projection ran out of work) and a greedy search for a valuation that satisfies every fact
// (FindWitness, which spares CheckSatisfiable its elimination).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/decide.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/poly1.h"

namespace shp {
namespace dim {
namespace {

// Floor and ceiling of a / b for b != 0.
__int128 FloorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__int128 CeilDiv128(__int128 a, __int128 b) { return -FloorDiv128(-a, b); }

}  // namespace

void Decider::Propagate(std::vector<Interval>* b) const {
  using I128 = __int128;
  // Each fact linear in variables as sum(c_i * x_i) + c0 >= 0 (== 0: both signs).
  struct LinRow {
    std::vector<std::pair<int32_t, int64_t>> terms;
    I128 c0;
  };
  std::vector<LinRow> rows;
  for (const Fact& f : s_->facts()) {
    if (f.op == Cmp::kNe) continue;
    const bool lhs_big = f.op == Cmp::kGe || f.op == Cmp::kGt || f.op == Cmp::kEq;
    LinRow r{{}, f.op == Cmp::kGt || f.op == Cmp::kLt ? -1 : 0};
    bool linear = true;
    for (int k = 0; k < 2; ++k) {  // by position: lhs and rhs may be the same expression
      const Expr* side = k == 0 ? f.lhs : f.rhs;
      const I128 sign = (k == 0) == lhs_big ? 1 : -1;
      for (const Term& t : side->terms) {
        if (t.mono->factors.empty()) {
          r.c0 += sign * t.coeff;
          continue;
        }
        const Factor& x = t.mono->factors[0];
        if (t.mono->factors.size() != 1 || x.exp != 1 || x.atom->kind != AtomKind::kVar ||
            t.coeff == kNegInf) {
          linear = false;
          break;
        }
        r.terms.emplace_back(x.atom->var, static_cast<int64_t>(sign * t.coeff));
      }
    }
    if (!linear || r.terms.empty()) continue;
    rows.push_back(r);
    if (f.op == Cmp::kEq) {
      for (auto& t : r.terms) t.second = -t.second;
      r.c0 = -r.c0;
      rows.push_back(r);
    }
  }
  std::vector<Interval> out = *b;
  // The largest value of c * x over x's interval; `inf` if unbounded.
  auto term_max = [&out](int32_t v, int64_t c, bool* inf) -> I128 {
    const int64_t at = c > 0 ? out[v].hi : out[v].lo;
    *inf = at == kPosInf || at == kNegInf;
    return *inf ? 0 : static_cast<I128>(c) * at;
  };
  // A bounded number of rounds keeps it cheap (each round only tightens, so stopping
  // anywhere is sound); cycles through unbounded variables would otherwise creep.
  for (int round = 0; round < 16; ++round) {
    bool changed = false;
    for (const LinRow& r : rows) {
      // c_j x_j >= -c0 - sum_{i != j} max(c_i x_i)
      I128 sum = r.c0;
      int infinite = 0;
      bool overflow = false;
      for (const auto& t : r.terms) {
        bool inf;
        I128 m = term_max(t.first, t.second, &inf);
        infinite += inf;
        overflow |= __builtin_add_overflow(sum, m, &sum);
      }
      if (overflow || infinite > 1) continue;
      for (const auto& t : r.terms) {
        bool inf;
        I128 m = term_max(t.first, t.second, &inf);
        if (infinite == 1 && !inf) continue;  // the other unbounded term leaves x_j free
        I128 rest, need;                      // need = -(c0 + sum_{i != j} max(c_i x_i))
        if (__builtin_sub_overflow(sum, m, &rest) || __builtin_sub_overflow(0, rest, &need)) {
          continue;
        }
        Interval& x = out[t.first];
        if (t.second > 0) {  // x_j >= ceil(need / c_j)
          I128 lo = CeilDiv128(need, t.second);
          if (lo > x.lo && lo <= INT64_MAX) {
            x.lo = static_cast<int64_t>(lo);
            changed = true;
          }
        } else {  // x_j <= floor(need / c_j)
          I128 hi = FloorDiv128(need, t.second);
          if (hi < x.hi && hi >= INT64_MIN) {
            x.hi = static_cast<int64_t>(hi);
            changed = true;
          }
        }
        if (x.lo > x.hi) return;  // contradictory facts: keep the projections' bounds
      }
    }
    if (!changed) break;
  }
  *b = out;
}

namespace {

using poly1::MulChecked;
using poly1::Poly;
using poly1::Shifted;

// True when q(x) < 0 for every x in [x0, x0 + span] (span < 0: unbounded), certified by the
// Taylor shift at x0: q(x0 + t) <= e0 + sum of the positive e[j] * span^j for t in [0, span].
bool NegativeFrom(const Poly& q, __int128 x0, __int128 span) {
  Poly e;
  if (!Shifted(q, x0, &e)) return false;
  __int128 top = e[0];
  __int128 p = 1;
  for (size_t j = 1; j < e.size(); ++j) {
    if (span >= 0 && !MulChecked(p, span, &p)) return false;
    if (e[j] <= 0) continue;
    if (span < 0) return false;  // grows without bound
    __int128 m;
    if (!MulChecked(e[j], p, &m) || __builtin_add_overflow(top, m, &top)) return false;
  }
  return top < 0;
}

// The fact as q(v) >= 0 for one variable v, when it is a polynomial of degree >= 2 in v alone
// (== gives both q and -q; != nothing).
std::vector<Poly> AsPolynomialFacts(const Fact& f, int32_t* var) {
  if (f.op == Cmp::kNe) return {};
  const bool lhs_big = f.op == Cmp::kGe || f.op == Cmp::kGt || f.op == Cmp::kEq;
  Poly q(1, f.op == Cmp::kGt || f.op == Cmp::kLt ? -1 : 0);
  *var = -1;
  for (int k = 0; k < 2; ++k) {
    const Expr* side = k == 0 ? f.lhs : f.rhs;
    const __int128 sign = (k == 0) == lhs_big ? 1 : -1;
    for (const Term& t : side->terms) {
      size_t deg = 0;
      if (!t.mono->factors.empty()) {
        const Factor& x = t.mono->factors[0];
        if (t.mono->factors.size() != 1 || x.atom->kind != AtomKind::kVar || x.exp < 1 ||
            x.exp > 16 || (*var >= 0 && *var != x.atom->var) || t.coeff == kNegInf) {
          return {};
        }
        *var = x.atom->var;
        deg = static_cast<size_t>(x.exp);
      }
      if (q.size() <= deg) q.resize(deg + 1, 0);
      q[deg] += sign * t.coeff;
    }
  }
  while (q.size() > 1 && q.back() == 0) q.pop_back();
  if (*var < 0 || q.size() < 3) return {};
  if (f.op != Cmp::kEq) return {q};
  Poly neg(q);
  for (__int128& c : neg) c = -c;
  return {q, neg};
}

// Tightens x by q(x) >= 0 (PolynomialBounds); true if it moved a bound. Bounds that would
// make x empty are left alone (contradictory facts are the projections' business).
bool TightenByPolynomial(const Poly& q, Interval* xp) {
  using I128 = __int128;
  constexpr I128 kLimit = static_cast<I128>(1) << 62;
  Interval& x = *xp;
  if (x.lo > x.hi || x.lo == kNegInf || x.lo >= kLimit) return false;
  bool moved = false;
  const I128 lo = x.lo;
  // Upper bound: the smallest x0 past which q < 0 throughout (doubling, then bisection; each
  // answer is certified by NegativeFrom itself, so its monotonicity is not needed).
  const I128 hi = x.hi == kPosInf ? -1 : static_cast<I128>(x.hi);
  auto past = [&](I128 x0) { return NegativeFrom(q, x0, hi < 0 ? -1 : hi - x0); };
  I128 good = -1;
  for (I128 step = 1; lo + step < kLimit && (hi < 0 || lo + step <= hi); step *= 2) {
    if (past(lo + step)) {
      good = lo + step;
      break;
    }
  }
  if (good >= 0 && !past(lo)) {
    I128 bad = lo;
    while (good - bad > 1) {
      const I128 mid = bad + (good - bad) / 2;
      (past(mid) ? good : bad) = mid;
    }
    if (good - 1 < x.hi) {
      x.hi = static_cast<int64_t>(good - 1);
      moved = true;
    }
  }
  // Lower bound: the largest x0 such that q < 0 on [lo, x0] (certified the same way).
  const I128 top = x.hi == kPosInf ? kLimit : std::min<I128>(x.hi, kLimit);
  auto below = [&](I128 x0) { return NegativeFrom(q, lo, x0 - lo); };
  if (!below(lo)) return moved;
  I128 ok = lo, no = top + 1;
  for (I128 step = 1; lo + step <= top; step *= 2) {
    if (!below(lo + step)) {
      no = lo + step;
      break;
    }
    ok = lo + step;
  }
  while (no - ok > 1) {
    const I128 mid = ok + (no - ok) / 2;
    (below(mid) ? ok : no) = mid;
  }
  if (ok + 1 > top) return moved;  // contradictory (or beyond 2^62): left as it is
  x.lo = static_cast<int64_t>(ok + 1);
  return true;
}

// The coefficient of variable v in e when v occurs only in terms c*v (not in products,
// powers or atoms); false otherwise.
bool LinearCoeff(const Scope& s, const Expr* e, int32_t v, int64_t* c) {
  for (const Term& t : e->terms) {
    for (const Factor& f : t.mono->factors) {
      if (f.atom->kind == AtomKind::kVar) {
        if (f.atom->var != v) continue;
        if (t.mono->factors.size() != 1 || f.exp != 1) return false;
        if (__builtin_add_overflow(*c, t.coeff, c)) return false;
      } else {
        for (const Expr* x : {f.atom->a, f.atom->b}) {
          for (int32_t u : s.VarsOf(x)) {
            if (u == v) return false;
          }
        }
      }
    }
  }
  return true;
}

// The smallest step > 0 for a variable of coefficient c (in lhs - rhs) that makes
// `lhs - rhs op 0` hold from the difference g, or 0 when raising it cannot do it in one step.
__int128 LinearStep(__int128 g, __int128 c, Cmp op) {
  auto ceil_div = [](__int128 a, __int128 b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  switch (op) {
    case Cmp::kGe:
      return c > 0 && g < 0 ? ceil_div(-g, c) : 0;
    case Cmp::kGt:
      return c > 0 && g < 1 ? ceil_div(1 - g, c) : 0;
    case Cmp::kLe:
      return c < 0 && g > 0 ? ceil_div(g, -c) : 0;
    case Cmp::kLt:
      return c < 0 && g > -1 ? ceil_div(g + 1, -c) : 0;
    case Cmp::kEq:
      if (c > 0 && g < 0 && (-g) % c == 0) return -g / c;
      if (c < 0 && g > 0 && g % -c == 0) return g / -c;
      return 0;
    default:
      return 0;
  }
}

// Appends s.VarsOf(e) to *out; a polynomial in variables without allocating.
void AppendVarsOf(const Scope& s, const Expr* e, std::vector<int32_t>* out) {
  const size_t begin = out->size();
  for (const Term& t : e->terms) {
    for (const Factor& f : t.mono->factors) {
      if (f.atom->kind != AtomKind::kVar) {
        out->resize(begin);
        for (int32_t v : s.VarsOf(e)) out->push_back(v);
        return;
      }
      out->push_back(f.atom->var);
    }
  }
  std::sort(out->begin() + begin, out->end());
  out->erase(std::unique(out->begin() + begin, out->end()), out->end());
}

}  // namespace

bool Decider::PolynomialBounds(std::vector<Interval>* b) const {
  bool changed = false;
  for (const Fact& f : s_->facts()) {
    int32_t v;
    for (const Poly& q : AsPolynomialFacts(f, &v)) {
      // Each round's certificate is crude (the Taylor shift's positive terms at the far end
      // of the span), so a round from the tightened bounds can certify more: a few rounds.
      for (int round = 0; round < 32 && TightenByPolynomial(q, &(*b)[static_cast<size_t>(v)]);
           ++round) {
        changed = true;
      }
    }
  }
  return changed;
}

bool Decider::FindWitness() const {
  const std::vector<Variable>& vars = s_->variables();
  const std::vector<Fact>& facts = s_->facts();
  std::vector<int64_t> val(vars.size());
  const std::vector<bool> known(vars.size(), true);
  for (size_t v = 0; v < vars.size(); ++v) {
    val[v] = vars[v].lo != kNegInf ? vars[v].lo : std::min<int64_t>(0, vars[v].hi);
  }
  // 1 if `f` holds at `val`, 0 if not, -1 if it cannot be evaluated (overflow, division by 0);
  // *g: lhs - rhs.
  __int128 g = 0;
  auto holds = [&](const Fact& f) {
    int64_t l, r;
    try {
      l = s_->Evaluate(f.lhs, val, known);
      r = s_->Evaluate(f.rhs, val, known);
    } catch (const Error&) {
      return -1;
    }
    g = static_cast<__int128>(l) - r;
    return int{CmpHolds(l, f.op, r)};
  };
  int budget = 400;         // evaluations; the search only ever raises values, so it terminates
  std::vector<int32_t> fv;  // the variables of the fact being repaired (one buffer for all)
  for (int round = 0; round < 8; ++round) {
    bool all = true;
    for (const Fact& f : facts) {
      int h = holds(f);
      if (h == 1) continue;
      if (h < 0) return false;
      all = false;
      // Repair by raising one variable of the fact: +1 ... +16, then doubling steps.
      fv.clear();
      AppendVarsOf(*s_, f.lhs, &fv);
      AppendVarsOf(*s_, f.rhs, &fv);
      bool fixed = false;
      const __int128 g0 = g;
      for (int32_t v : fv) {
        // Linear in v: the one step that makes it hold (most constraints: x >= e, x == e).
        int64_t cl = 0, cr = 0;
        if (LinearCoeff(*s_, f.lhs, v, &cl) && LinearCoeff(*s_, f.rhs, v, &cr)) {
          const __int128 step = LinearStep(g0, static_cast<__int128>(cl) - cr, f.op);
          if (step > 0 && step <= (__int128{1} << 40) && val[v] + step <= vars[v].hi) {
            const int64_t old = val[v];
            val[v] = static_cast<int64_t>(val[v] + step);
            if (--budget < 0) return false;
            fixed = holds(f) == 1;
            if (fixed) break;
            val[v] = old;
          }
        }
      }
      for (size_t i = 0; i < fv.size() && !fixed; ++i) {
        const int32_t v = fv[i];
        const int64_t old = val[v];
        for (int64_t step = 1; !fixed; step = step < 16 ? step + 1 : step * 2) {
          if (--budget < 0) return false;
          if (__builtin_add_overflow(old, step, &val[v]) || val[v] > vars[v].hi ||
              step > (int64_t{1} << 40))
            break;
          fixed = holds(f) == 1;
        }
        if (fixed) break;
        val[v] = old;
      }
      if (!fixed) return false;
    }
    if (all) return true;  // every fact holds at `val`
  }
  return false;
}

}  // namespace dim
}  // namespace shp
