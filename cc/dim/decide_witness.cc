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

bool Decider::Witnessed(const Expr* e, Interval iv) {
  // Not for a scope that asks one or two questions (explain.cc's copies): compiling the facts
  // would cost more than the eliminations it spares.
  if (t_no_witnesses || (!witness_ && ++bounds_without_witness_ < 3)) return false;
  if (!witness_ || witness_->vars != s_->variables().size()) BuildWitness();
  Witness& W = *witness_;
  if (!W.usable) return false;
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
