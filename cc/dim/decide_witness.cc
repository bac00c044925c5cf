// Witnesses of interval bounds (see decide.h, "Shortcuts"): a valuation within the declared
// ranges that satisfies every fact and gives a query the value of a side of its interval
// bounds shows that no sound bound is tighter on that side, so Bounds answers that side
// without an elimination.
//
// Why the answer is the same: Bounds returns the interval bounds intersected with the
// projection's and with the bounds that facts state about the query itself. Each of those is
// sound, so at the witness x each lower bound is at most e(x) = iv.lo: their maximum is iv.lo,
// whatever the projection would have given. The search only proposes points; every point is
// checked exactly (each fact and the query evaluated as Evaluate does, through
// detail::CompiledPair, which has no value where Evaluate would fail), so how it searches
// matters for speed only, never for the answer.
//
// Unbounded sides (Unbounded): a family of valuations x(t) = x0 + t*r, t = 1, 2, ..., from
// one where every fact holds, on which every fact and the query are affine in t by their
// structure (a monomial with one moving factor to the first power, floordiv and mod by a
// constant that divides their operand's slope, max and min with one operand winning at t = 1
// and by its slope), every fact holds (at t = 1 and by its slope) and the query grows without
// bound: no sound bound exists on that side. With the witnesses of the finite sides, Bounds
// then needs no projection at all.
//
// The search: start from a valuation where every fact holds (each variable's derived lower
// bound, or upper, or 0, repaired once per scope), move the query's variables one at a time to the
// candidate values that bring the query closest to the target (each variable's bounds and a few
// values inside them, and the other query variables' bounds: min(s, d) reaches s's upper bound only
// where d does too), then repair the facts that fail by moving variables the query does not
// mention. Bounded by kMaxEvals evaluations per side.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/decide.h"
#include "cc/dim/decide_rows.h"
#include "cc/dim/detail/compiled_pair.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/eval.h"

namespace shp {
namespace dim {

namespace {

// Evaluations of the query and of facts that one side's search may spend.
constexpr int kMaxEvals = 400;
// Values tried next to each end of a variable's bounds (residues of small divisors).
constexpr int64_t kNearEnd = 3;
// Rounds over the query's variables.
constexpr int kPasses = 3;
// Scopes with more facts than this get no witness search (each point checks every fact).
constexpr size_t kMaxWitnessFacts = 64;

// Test-only: no witnesses on this thread (SetWitnessesForTesting).
thread_local bool t_no_witnesses = false;

using I128 = __int128;

// Unbounded families (Decider::Unbounded): the step of a family, divisible by every small
// divisor (floordiv and mod by them stay affine along it), families per scope at most, and
// the nesting and size of the expressions analyzed (deeper or larger: not affine).
constexpr int64_t kFamilyStep = 720720;  // lcm(1..16)
constexpr size_t kMaxFamilies = 16;
constexpr int kMaxAffineDepth = 16;
constexpr uint32_t kMaxAffineSize = 256;

// An expression's values at the points p1 = x0 + r and p2 = x0 + 2*r of a family
// x(t) = x0 + t*r, and whether it is affine in t on the whole family t >= 1 (then its value
// is v1 + (t - 1)*(v2 - v1) there, by its structure: proven, not sampled).
struct AffineValue {
  bool ok;
  int64_t v1, v2;
};
constexpr AffineValue kNotAffine{false, 0, 0};

bool FitsInt64(I128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

AffineValue AffineOf(const Expr* e, const int64_t* p1, const int64_t* p2, int depth);

AffineValue AffineAtomOf(const Atom* a, const int64_t* p1, const int64_t* p2, int depth) {
  if (a->kind == AtomKind::kVar) return {true, p1[a->var], p2[a->var]};
  if (depth >= kMaxAffineDepth || a->expanded_size > kMaxAffineSize) return kNotAffine;
  const AffineValue x = AffineOf(a->a, p1, p2, depth + 1);
  const AffineValue y = AffineOf(a->b, p1, p2, depth + 1);
  if (!x.ok || !y.ok) return kNotAffine;
  switch (a->kind) {
    case AtomKind::kFloorDiv:
    case AtomKind::kMod: {
      // A constant divisor d that divides the operand's slope m*d: floordiv(x1 + (t-1)*m*d, d)
      // is floordiv(x1, d) + (t-1)*m, and mod(..., d) is mod(x1, d) throughout.
      const int64_t d = y.v1;
      if (y.v2 != d || d == 0 || (d == -1 && (x.v1 == INT64_MIN || x.v2 == INT64_MIN))) {
        return kNotAffine;
      }
      if ((static_cast<I128>(x.v2) - x.v1) % d != 0) return kNotAffine;
      if (a->kind == AtomKind::kFloorDiv) {
        return {true, FloorDivInt(x.v1, d), FloorDivInt(x.v2, d)};
      }
      const int64_t m = ModInt(x.v1, d);
      return {true, m, m};
    }
    case AtomKind::kMax:
    case AtomKind::kMin: {
      // One operand wins on the whole family: at t = 1 and by its slope.
      const I128 sx = static_cast<I128>(x.v2) - x.v1, sy = static_cast<I128>(y.v2) - y.v1;
      const bool max = a->kind == AtomKind::kMax;
      if (max ? (x.v1 >= y.v1 && sx >= sy) : (x.v1 <= y.v1 && sx <= sy)) return x;
      if (max ? (y.v1 >= x.v1 && sy >= sx) : (y.v1 <= x.v1 && sy <= sx)) return y;
      return kNotAffine;
    }
    default:
      return kNotAffine;
  }
}

AffineValue AffineOf(const Expr* e, const int64_t* p1, const int64_t* p2, int depth) {
  I128 s1 = 0, s2 = 0;
  for (const Term& t : e->terms) {
    // A monomial is affine when at most one of its factors moves, to the first power.
    I128 m1 = t.coeff, m2 = t.coeff;
    bool moving = false;
    for (const Factor& f : t.mono->factors) {
      const AffineValue v = AffineAtomOf(f.atom, p1, p2, depth);
      if (!v.ok) return kNotAffine;
      if (v.v1 != v.v2) {
        if (moving || f.exp != 1) return kNotAffine;
        moving = true;
      }
      for (int32_t k = 0; k < f.exp; ++k) {
        m1 *= v.v1;
        m2 *= v.v2;
        if (!FitsInt64(m1) || !FitsInt64(m2)) return kNotAffine;
      }
    }
    s1 += m1;
    s2 += m2;
    if (!FitsInt64(s1) || !FitsInt64(s2)) return kNotAffine;
  }
  return {true, static_cast<int64_t>(s1), static_cast<int64_t>(s2)};
}

// Whether lhs op rhs holds on the whole family, from the two sides' affine values.
bool HoldsOnFamily(const AffineValue& l, Cmp op, const AffineValue& r) {
  if (!l.ok || !r.ok) return false;
  const I128 g = static_cast<I128>(l.v1) - r.v1;
  const I128 slope = (static_cast<I128>(l.v2) - r.v2) - g;
  switch (op) {
    case Cmp::kGe:
      return g >= 0 && slope >= 0;
    case Cmp::kGt:
      return g > 0 && slope >= 0;
    case Cmp::kLe:
      return g <= 0 && slope <= 0;
    case Cmp::kLt:
      return g < 0 && slope <= 0;
    case Cmp::kEq:
      return g == 0 && slope == 0;
    case Cmp::kNe:
      return (g > 0 && slope >= 0) || (g < 0 && slope <= 0);
  }
  return false;
}

}  // namespace

void SetWitnessesForTesting(bool enabled) { t_no_witnesses = !enabled; }

// For the first fact that fails at the witness point, moves one of its variables that
// in_query does not mark up, then down, by 1..16 and then doubling steps within its bounds,
// until it holds; over again until all hold. *evals counts the evaluations (at most
// kMaxEvals).
bool Decider::RepairPoint(int* evals) {
  Witness* w = witness_.get();
  const Scope* s = s_;
  const std::vector<Fact>& facts = s->facts();
  std::vector<int64_t>& x = w->point;
  int64_t* slots = w->slots.data();
  auto holds = [&](size_t i) {
    if (w->valid_state == 1) {  // a fact holds where its variables are as at the valid point
      bool same = true;
      for (int32_t v : w->fact_vars[i]) same = same && x[v] == w->valid[v];
      if (same) return true;
    }
    int64_t l, r;
    return ++*evals <= kMaxEvals && w->facts[i].Run(x.data(), slots, &l, &r) &&
           CmpHolds(l, facts[i].op, r);
  };
  for (int round = 0; round < 16; ++round) {
    size_t bad = facts.size();
    for (size_t i = 0; i < facts.size() && bad == facts.size(); ++i) {
      if (!holds(i)) bad = i;
    }
    if (bad == facts.size()) {
      const std::vector<Variable>& vars = s->variables();
      for (size_t v = 0; v < w->vars; ++v) {
        if (x[v] < vars[v].lo || x[v] > vars[v].hi) return false;
      }
      return true;
    }
    if (*evals > kMaxEvals) return false;
    bool fixed = false;
    for (int32_t u : w->fact_vars[bad]) {
      const size_t v = static_cast<size_t>(u);
      if (v >= w->vars || w->in_query[v]) continue;
      const int64_t old = x[v];
      for (int dir = 1; dir >= -1 && !fixed; dir -= 2) {
        for (int64_t step = 1; step <= (int64_t{1} << 40) && !fixed;
             step = step < 16 ? step + 1 : step * 2) {
          int64_t y;
          if (__builtin_add_overflow(old, dir * step, &y) || y < w->box[v].lo || y > w->box[v].hi) {
            break;
          }
          x[v] = y;
          fixed = holds(bad);
        }
      }
      if (fixed) break;
      x[v] = old;
    }
    if (!fixed) return false;
  }
  return false;
}

void Decider::ResetWitness() {
  witness_.reset();
  bounds_without_witness_ = 0;
}

void Decider::BuildWitness() {
  witness_.reset(new Witness());
  Witness& W = *witness_;
  const std::vector<Variable>& vars = s_->variables();
  const std::vector<Fact>& facts = s_->facts();
  W.vars = vars.size();
  if (facts.size() > kMaxWitnessFacts) return;
  W.box.resize(W.vars);
  W.start.resize(W.vars);
  const std::vector<Interval>& vb = VarBounds();
  for (size_t v = 0; v < W.vars; ++v) {
    Interval b{vars[v].lo, vars[v].hi};
    if (v < vb.size()) {
      b.lo = std::max(b.lo, vb[v].lo);
      b.hi = std::min(b.hi, vb[v].hi);
    }
    if (b.lo > b.hi) return;  // (no valuation: nothing to witness)
    W.box[v] = b;
    W.start[v] = b.lo != kNegInf ? b.lo : b.hi != kPosInf ? b.hi : 0;
  }
  size_t slots = 0;
  W.facts.resize(facts.size());
  W.fact_vars.resize(facts.size());
  for (size_t i = 0; i < facts.size(); ++i) {
    W.facts[i].Compile(facts[i].lhs, facts[i].rhs);
    W.fact_vars[i] = W.facts[i].Vars();
    slots = std::max(slots, W.facts[i].slots());
  }
  W.slots.resize(slots);
  W.in_query.assign(W.vars, 0);
  W.usable = true;
  // A valuation where every fact holds: the searches start there (what they do not move
  // needs no check).
  W.point = W.start;
  int evals = 0;
  W.valid_state = RepairPoint(&evals) ? 1 : -1;  // (in_query all 0: any variable may move)
  if (W.valid_state == 1) W.valid = W.point;
}

bool Decider::FamilyPoints(const std::vector<int64_t>& r, std::vector<int64_t>* p1,
                           std::vector<int64_t>* p2) const {
  const Witness& W = *witness_;
  const std::vector<Variable>& vars = s_->variables();
  p1->resize(W.vars);
  p2->resize(W.vars);
  for (size_t v = 0; v < W.vars; ++v) {
    int64_t r2;
    if (__builtin_mul_overflow(r[v], 2, &r2) ||
        __builtin_add_overflow(W.valid[v], r[v], &(*p1)[v]) ||
        __builtin_add_overflow(W.valid[v], r2, &(*p2)[v])) {
      return false;
    }
    // Within the declared range on the whole family: at t = 1, and unbounded the way it moves.
    if ((*p1)[v] < vars[v].lo || (*p1)[v] > vars[v].hi || (r[v] > 0 && vars[v].hi != kPosInf) ||
        (r[v] < 0 && vars[v].lo != kNegInf)) {
      return false;
    }
  }
  return true;
}

void Decider::BuildFamilies() {
  Witness& W = *witness_;
  W.families_built = true;
  if (W.valid_state != 1) return;
  const std::vector<Fact>& facts = s_->facts();
  std::vector<int64_t> r(W.vars), p1, p2, q1, q2;
  // Fact i on the family of the points a1, a2: false if it is not affine there; else whether
  // it holds on the whole family, and the slope of lhs - rhs.
  auto fact_on = [&](size_t i, const std::vector<int64_t>& a1, const std::vector<int64_t>& a2,
                     bool* holds, I128* slope) {
    const AffineValue l = AffineOf(facts[i].lhs, a1.data(), a2.data(), 0);
    const AffineValue rr = AffineOf(facts[i].rhs, a1.data(), a2.data(), 0);
    if (!l.ok || !rr.ok) return false;
    *holds = HoldsOnFamily(l, facts[i].op, rr);
    *slope = (static_cast<I128>(l.v2) - rr.v2) - (static_cast<I128>(l.v1) - rr.v1);
    return true;
  };
  // One family per variable and direction its bounds leave open, moving others along where a
  // fact needs it (d >= h + 8 and n >= 2*h: raising h raises d once and n twice).
  for (size_t x = 0; x < W.vars && W.families.size() < kMaxFamilies; ++x) {
    for (int dir = 1; dir >= -1 && W.families.size() < kMaxFamilies; dir -= 2) {
      if (dir > 0 ? W.box[x].hi != kPosInf : W.box[x].lo != kNegInf) continue;
      std::fill(r.begin(), r.end(), 0);
      r[x] = dir * kFamilyStep;
      bool ok = false;
      for (int fix = 0; fix < 8; ++fix) {
        if (!FamilyPoints(r, &p1, &p2)) break;
        size_t bad = facts.size();
        bool stuck = false;  // a fact that is not affine on the family
        I128 slope = 0;
        for (size_t i = 0; i < facts.size() && bad == facts.size() && !stuck; ++i) {
          bool holds;
          stuck = !fact_on(i, p1, p2, &holds, &slope);
          if (!stuck && !holds) bad = i;
        }
        if (stuck) break;
        if (bad == facts.size()) {
          ok = true;
          break;
        }
        // Move a variable of that fact one more step where its slope grows the way it must
        // (lhs - rhs up for >=, down for <=).
        const Cmp op = facts[bad].op;
        const int want = op == Cmp::kGe || op == Cmp::kGt   ? 1
                         : op == Cmp::kLe || op == Cmp::kLt ? -1
                                                            : 0;
        bool moved = false;
        for (size_t k = 0; k < W.fact_vars[bad].size() && want != 0 && !moved; ++k) {
          const size_t w = static_cast<size_t>(W.fact_vars[bad][k]);
          if (w == x || w >= W.vars) continue;
          for (int du = 1; du >= -1 && !moved; du -= 2) {
            if ((du > 0 ? W.box[w].hi != kPosInf : W.box[w].lo != kNegInf) ||
                (r[w] != 0 && (r[w] > 0) != (du > 0))) {
              continue;
            }
            r[w] += du * kFamilyStep;
            bool holds2;
            I128 slope2;
            moved = FamilyPoints(r, &q1, &q2) && fact_on(bad, q1, q2, &holds2, &slope2) &&
                    (holds2 || (want > 0 ? slope2 > slope : slope2 < slope));
            if (!moved) r[w] -= du * kFamilyStep;
          }
        }
        if (!moved) break;
      }
      if (ok) {
        W.families.push_back(r);
        W.family_p1.push_back(p1);
        W.family_p2.push_back(p2);
      }
    }
  }
}

bool Decider::WitnessReady() {
  // Not for a scope that asks one or two questions (explain.cc's copies): compiling the facts
  // would cost more than the eliminations it spares.
  if (t_no_witnesses || (!witness_ && ++bounds_without_witness_ < 3)) return false;
  if (!witness_ || witness_->vars != s_->variables().size()) BuildWitness();
  return witness_->usable;
}

bool Decider::Unbounded(const Expr* e, bool up) {
  Witness& W = *witness_;
  if (!W.families_built) BuildFamilies();
  for (size_t k = 0; k < W.families.size(); ++k) {
    const AffineValue v = AffineOf(e, W.family_p1[k].data(), W.family_p2[k].data(), 0);
    if (v.ok && (up ? v.v2 > v.v1 : v.v2 < v.v1)) return true;
  }
  return false;
}

bool Decider::Witnessed(const Expr* e, Interval iv) {
  Witness& W = *witness_;
  detail::CompiledPair& query = W.query;
  query.Compile(e, e);
  std::vector<int32_t>& qv = W.query_vars;
  query.Vars(&qv);
  for (int32_t v : qv) {
    if (static_cast<size_t>(v) >= W.vars) return false;
  }
  if (W.slots.size() < query.slots()) W.slots.resize(query.slots());
  int64_t* slots = W.slots.data();
  std::vector<int64_t>& x = W.point;
  int evals = 0;
  // The query's value at x, or false (no value there, or out of evaluations).
  auto value = [&](int64_t* out) {
    int64_t unused;
    return ++evals <= kMaxEvals && query.Run(x.data(), slots, out, &unused);
  };
  for (int32_t v : qv) W.in_query[v] = 1;
  bool all = true;
  for (int side = 0; side < 2 && all; ++side) {
    const bool low = side == 0;
    const int64_t target = low ? iv.lo : iv.hi;
    if (target == (low ? kNegInf : kPosInf)) continue;
    all = false;
    evals = 0;
    x = W.valid_state == 1 ? W.valid : W.start;
    int64_t cur;
    bool has = value(&cur);
    // Closer to the target: lower for the lower side. Within the box the query never passes
    // its interval bounds, so reaching the target ends the search.
    auto better = [low](int64_t a, int64_t b) { return low ? a < b : a > b; };
    // Pass 0 tries each variable's ends, the later passes also the values near them and the
    // other variables' ends; a pass that changes nothing ends the search.
    for (int pass = 0; pass < kPasses && !(has && cur == target); ++pass) {
      bool changed = false;
      for (int32_t v : qv) {
        if (has && cur == target) break;
        const Interval b = W.box[static_cast<size_t>(v)];
        std::vector<int64_t>& c = W.cands;
        c.clear();
        auto add = [&c, b](int64_t y) {
          if (y == kNegInf || y == kPosInf || y < b.lo || y > b.hi) return;
          if (std::find(c.begin(), c.end(), y) == c.end()) c.push_back(y);
        };
        add(b.lo);
        add(b.hi);
        if (pass > 0) {
          for (int64_t k = 1; k < kNearEnd; ++k) {
            if (b.lo != kNegInf) add(b.lo + k);
            if (b.hi != kPosInf) add(b.hi - k);
          }
          for (int32_t u : qv) {
            if (u == v) continue;
            add(W.box[static_cast<size_t>(u)].lo);
            add(W.box[static_cast<size_t>(u)].hi);
          }
        }
        const int64_t old = x[static_cast<size_t>(v)];
        int64_t best = old;
        for (int64_t y : c) {
          if (y == old) continue;
          x[static_cast<size_t>(v)] = y;
          int64_t val;
          if (value(&val) && (!has || better(val, cur))) {
            cur = val;
            has = true;
            best = y;
            changed = true;
          }
        }
        x[static_cast<size_t>(v)] = best;
      }
      if (!changed && pass > 0) break;
    }
    if (!has || cur != target) break;
    // Make the facts hold by moving the variables the query does not mention (its value stays
    // the target), then check the witness once more as a whole.
    all = RepairPoint(&evals);
    int64_t final_value, unused;
    all = all && query.Run(x.data(), slots, &final_value, &unused) && final_value == target;
    if (all) W.found[side] = x;
  }
  for (int32_t v : qv) W.in_query[v] = 0;
  return all;
}

bool Decider::Settled(const Expr* e, const System& sys, const Row& q,
                      const std::vector<CaseSplit>* splits, bool up, bool down) {
  if (!has_target_ || preparing_) return false;
  up = up || witnessed_hi_;
  down = down || witnessed_lo_;
  if (up && down) return true;
  // The rays held for every case's rows, or there are no cases: nothing more to find.
  if (!splits || splits->empty()) return false;
  // One case suffices for a side if some valuation where the facts hold and e is defined
  // falls in it: that case's rows all hold there, so its elimination finds no contradiction
  // and, with a ray of its rows, bounds z on neither side; the hull takes it in.
  if (t_no_witnesses || !witness_ || !witness_->usable ||
      witness_->vars != s_->variables().size()) {
    return false;
  }
  Witness& W = *witness_;
  const std::vector<int64_t>* x = nullptr;
  if (witnessed_lo_) {
    x = &W.found[0];
  } else if (witnessed_hi_) {
    x = &W.found[1];
  } else {
    if (W.valid_state != 1) return false;
    x = &W.valid;
  }
  std::vector<int>& only = W.case_of;
  only.assign(splits->size(), -1);
  try {
    if (!witnessed_lo_ && !witnessed_hi_) Evaluate(e, *x);  // throws where e is undefined
    for (size_t i = 0; i < splits->size(); ++i) {
      const CaseSplit& cs = (*splits)[i];
      const int64_t w0 = Evaluate(cs.win[0], *x), w1 = Evaluate(cs.win[1], *x);
      // Case 0's operand wins at x: w0 >= w1 for max, w0 <= w1 for min.
      const bool zero = cs.atom->kind == AtomKind::kMax ? w0 >= w1 : w0 <= w1;
      only[i] = zero ? 0 : 1;
    }
  } catch (const Error&) {
    return false;
  }
  UnboundedSides(sys, q, splits, &only, &up, &down);
  return up && down;
}

}  // namespace dim
}  // namespace shp
