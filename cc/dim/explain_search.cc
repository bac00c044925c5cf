// The valuation search (detail/search.h): witnesses of undecided comparisons, FindValuation
// and SatisfiesFacts (explain.h).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/detail/search.h"
#include "cc/dim/eval.h"
#include "cc/dim/explain.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace {

using detail::Cond;

bool Holds(const Expr* l, Cmp op, const Expr* r, const std::vector<int64_t>& v) {
  try {
    return CmpHolds(Evaluate(l, v), op, Evaluate(r, v));
  } catch (const Error&) {
    return false;  // undefined there (division by zero, overflow): not a witness
  }
}

// l - r at `v` in 128 bits; false when either side has no value there.
bool Gap(const Cond& c, const std::vector<int64_t>& v, int64_t* slots, __int128* g) {
  int64_t l, r;
  if (!c.program.Run(v.data(), slots, &l, &r)) return false;
  *g = static_cast<__int128>(l) - r;
  return true;
}

int64_t Clamp(__int128 x, int64_t lo, int64_t hi) {
  if (x < lo) return lo;
  if (x > hi) return hi;
  return static_cast<int64_t>(x);
}

}  // namespace

bool SatisfiesFacts(const Scope& s, const std::vector<int64_t>& values,
                    const std::vector<Condition>& extra) {
  const std::vector<Variable>& vars = s.variables();
  if (values.size() != vars.size()) return false;
  for (size_t v = 0; v < vars.size(); ++v) {
    if (values[v] < vars[v].lo || values[v] > vars[v].hi) return false;
  }
  for (const Fact& f : s.facts()) {
    if (!Holds(f.lhs, f.op, f.rhs, values)) return false;
  }
  for (const Condition& c : extra) {
    if (!Holds(c.lhs, c.op, c.rhs, values)) return false;
  }
  return true;
}

namespace detail {

Cond MakeCond(const Expr* l, Cmp op, const Expr* r) {
  Cond c{l, op, r, {}, {}, 0};
  c.program.Compile(l, r);
  c.vars = c.program.Vars();
  c.holds =
      static_cast<uint8_t>(CmpHolds(0, op, 1) | CmpHolds(0, op, 0) << 1 | CmpHolds(1, op, 0) << 2);
  return c;
}

std::vector<Cond> FactConds(const Scope& s) {
  std::vector<Cond> out;
  out.reserve(s.facts().size());
  for (const Fact& f : s.facts()) out.push_back(MakeCond(f.lhs, f.op, f.rhs));
  return out;
}

namespace {

// The conditions of a search indexed by variable, the box and the local search over it
// (FindValuation with a budget of condition evaluations; see Search below).
class WalkSearch {
 public:
  WalkSearch(Scope* s, const std::vector<Condition>& extra, long budget,
             const std::vector<Cond>* facts)
      : s_(s), extra_(extra), vars_(s->variables()), n_(vars_.size()), budget_(budget) {
    if (facts == nullptr) {
      own_facts_ = FactConds(*s);
      facts = &own_facts_;
    }
    own_.reserve(extra.size());
    for (const Condition& c : extra) own_.push_back(MakeCond(c.lhs, c.op, c.rhs));
    IndexConditions(facts);
    // The search box: the declared ranges, narrowed by the bounds the facts imply (every
    // valuation satisfying the facts lies inside them) once the first starting points
    // failed: a bound query per variable costs more than most searches.
    lo_.resize(n_);
    hi_.resize(n_);
    for (size_t v = 0; v < n_; ++v) {
      lo_[v] = vars_[v].lo;
      hi_[v] = vars_[v].hi;
    }
  }

  // `use_bounds`: narrow the box by the scope's bound queries (Bounds) after the first
  // starts. `shrink`: move the valuation found towards small values (witnesses that are
  // shown).
  bool Run(const std::vector<int64_t>* start, bool use_bounds, bool shrink,
           std::vector<int64_t>* values);

 private:
  // Moves of one variable: the candidate values, those that repair the condition, all tried.
  struct Move {
    size_t var;
    int64_t value;
  };
  // of_var_[v]: the conditions that read variable v (in one array, by variable).
  struct Span {
    const size_t* first;
    const size_t* last;
    const size_t* begin() const { return first; }
    const size_t* end() const { return last; }
    bool empty() const { return first == last; }
  };

  void IndexConditions(const std::vector<Cond>* facts);
  bool Narrow();
  int64_t Base(size_t v) const {
    return lo_[v] != kNegInf ? lo_[v] : hi_[v] != kPosInf ? std::min<int64_t>(hi_[v], 0) : 0;
  }
  bool Holds(const Cond& c, const std::vector<int64_t>& v) {
    --budget_;
    int64_t l, r;
    return c.program.Run(v.data(), slots_.data(), &l, &r) && c.Holds(l, r);
  }
  void StartPoint(int attempt, const std::vector<int64_t>* start);
  void Shrink();
  // A move of a variable of the violated `c` (false: no candidate at all).
  bool ChooseMove(const Cond& c, Move* best);
  // The candidates of `tier` for each variable of `c`; true when one repairs `c` and, in
  // tier 0, leaves no condition of its variable violated (then *best).
  bool TryCandidates(const Cond& c, int tier, Move* best);
  // Min-conflicts among the moves that repair `c` (true: take *best now).
  bool MinConflicts(int tier, Move* best);

  Scope* s_;
  const std::vector<Condition>& extra_;
  const std::vector<Variable>& vars_;
  const size_t n_;
  long budget_;
  std::vector<Cond> own_facts_, own_;
  std::vector<const Cond*> conds_;
  std::vector<int64_t> slots_;
  std::vector<size_t> start_of_, cond_of_;
  std::vector<Span> of_var_;
  std::vector<int64_t> lo_, hi_;
  std::mt19937_64 rng_;
  std::vector<int64_t> val_;
  std::vector<Move> fixing_, all_;
  std::vector<__int128> cand_;
  std::vector<char> ok_;
  std::vector<size_t> violated_;
};

void WalkSearch::IndexConditions(const std::vector<Cond>* facts) {
  conds_.reserve(facts->size() + own_.size());
  size_t max_slots = 0;
  for (const std::vector<Cond>* list : {facts, static_cast<const std::vector<Cond>*>(&own_)}) {
    for (const Cond& c : *list) {
      conds_.push_back(&c);
      max_slots = std::max(max_slots, c.program.slots());
    }
  }
  slots_.resize(max_slots);
  start_of_.assign(n_ + 1, 0);
  for (const Cond* c : conds_) {
    for (int32_t v : c->vars) ++start_of_[static_cast<size_t>(v) + 1];
  }
  for (size_t v = 0; v < n_; ++v) start_of_[v + 1] += start_of_[v];
  cond_of_.resize(start_of_[n_]);
  {
    std::vector<size_t> fill(start_of_.begin(), start_of_.end() - 1);
    for (size_t i = 0; i < conds_.size(); ++i) {
      for (int32_t v : conds_[i]->vars) cond_of_[fill[static_cast<size_t>(v)]++] = i;
    }
  }
  of_var_.resize(n_);
  for (size_t v = 0; v < n_; ++v) {
    of_var_[v] = {cond_of_.data() + start_of_[v], cond_of_.data() + start_of_[v + 1]};
  }
}

bool WalkSearch::Narrow() {
  for (size_t v = 0; v < n_; ++v) {
    if (of_var_[v].empty()) continue;
    try {
      const Interval iv = s_->Bounds(s_->Var(vars_[v].name, /*mark_used=*/false));
      lo_[v] = std::max(lo_[v], iv.lo);
      hi_[v] = std::min(hi_[v], iv.hi);
    } catch (const Error&) {
    }
    if (lo_[v] > hi_[v]) return false;  // the facts admit no value
  }
  return true;
}

void WalkSearch::StartPoint(int attempt, const std::vector<int64_t>* start) {
  // Starting points: the given one, the hints, the low corner, then random points whose
  // spread grows.
  for (size_t v = 0; v < n_; ++v) val_[v] = Base(v);
  if (attempt == 0 && start != nullptr && start->size() == n_) {
    for (size_t v = 0; v < n_; ++v) val_[v] = Clamp((*start)[v], lo_[v], hi_[v]);
  } else if (attempt == 1) {
    for (size_t v = 0; v < n_; ++v) {
      int64_t h;
      if (s_->HintOf(static_cast<int32_t>(v), &h)) val_[v] = Clamp(h, lo_[v], hi_[v]);
    }
  } else if (attempt >= 3) {
    static const int64_t kSpread[] = {4, 16, 64, 256, 4096, int64_t{1} << 20};
    const int64_t spread = kSpread[(attempt - 3) % 6];
    for (size_t v = 0; v < n_; ++v) {
      if (of_var_[v].empty()) continue;
      const __int128 from = lo_[v] != kNegInf   ? __int128{lo_[v]}
                            : hi_[v] != kPosInf ? __int128{hi_[v]} - spread
                                                : -(spread / 2);
      val_[v] = Clamp(from + static_cast<int64_t>(rng_() % static_cast<uint64_t>(spread + 1)),
                      lo_[v], hi_[v]);
    }
  }
}

void WalkSearch::Shrink() {
  // Move each variable as close to the low end of its box as the conditions allow
  // (bisection, every point checked), so witnesses show small values.
  for (size_t v = 0; v < n_ && budget_ > 0; ++v) {
    const int64_t target = Base(v), cur = val_[v];
    if (of_var_[v].empty() || cur == target) continue;
    auto ok_at = [&](int64_t x) {
      val_[v] = x;
      bool ok = true;
      for (size_t i : of_var_[v]) ok = ok && Holds(*conds_[i], val_);
      return ok;
    };
    int64_t good = cur, bad = target;
    if (ok_at(target)) {
      good = target;
    } else {
      while (budget_ > 0 && (good > bad ? good - bad : bad - good) > 1) {
        const int64_t mid = bad + (good - bad) / 2;
        (ok_at(mid) ? good : bad) = mid;
      }
    }
    val_[v] = good;
  }
}

bool WalkSearch::TryCandidates(const Cond& c, int tier, Move* best) {
  for (int32_t vi : c.vars) {
    const size_t v = static_cast<size_t>(vi);
    const int64_t cur = val_[v];
    cand_.clear();
    if (tier == 0) {
      __int128 g0, g1;
      if (cur < kPosInf && Gap(c, val_, slots_.data(), &g0)) {
        val_[v] = cur + 1;
        const bool defined = Gap(c, val_, slots_.data(), &g1);
        val_[v] = cur;
        const __int128 slope = g1 - g0;
        if (defined && slope != 0) {
          const __int128 q = -g0 / slope;
          for (__int128 d : {0, 1, -1}) cand_.push_back(__int128{cur} + q + d);
        }
      }
      for (int64_t d : {1, -1, 2, -2}) cand_.push_back(__int128{cur} + d);
      if (lo_[v] != kNegInf) cand_.push_back(lo_[v]);
      if (hi_[v] != kPosInf) cand_.push_back(hi_[v]);
    } else {
      // Steps up to a few times the value's magnitude (so a walk can still double it
      // every move): most conditions are repaired near where the walk stands.
      const uint64_t mag = cur < 0 ? 0 - static_cast<uint64_t>(cur) : static_cast<uint64_t>(cur);
      const int top = std::min(40, std::max(8, 66 - __builtin_clzll(mag | 1)));
      for (int k = 2; k <= top; ++k) {
        cand_.push_back(__int128{cur} + (int64_t{1} << k));
        cand_.push_back(__int128{cur} - (int64_t{1} << k));
      }
    }
    bool perfect = false;
    for (__int128 x : cand_) {
      if (x < lo_[v] || x > hi_[v] || x == cur) continue;
      val_[v] = static_cast<int64_t>(x);
      all_.push_back({v, val_[v]});
      if (Holds(c, val_)) {
        fixing_.push_back({v, val_[v]});
        // In tier 0 a repair that leaves no condition of v violated ends the search.
        bool clean = tier == 0;
        for (size_t i : of_var_[v]) {
          if (!clean) break;
          clean = conds_[i] == &c || Holds(*conds_[i], val_);
        }
        if (clean) {
          *best = {v, val_[v]};
          perfect = true;
        }
      }
      val_[v] = cur;
      if (perfect) break;
    }
    if (perfect) return true;
  }
  return false;
}

bool WalkSearch::MinConflicts(int tier, Move* best) {
  // Min-conflicts among the moves that repair `c`; sometimes a random move instead, so
  // that the walk leaves a plateau.
  long best_score = 0;
  bool have = false;
  size_t ties = 0;
  for (const Move& m : fixing_) {
    long score = 0;  // minus the conditions of the variable the move leaves violated
    const int64_t cur = val_[m.var];
    val_[m.var] = m.value;
    for (size_t i : of_var_[m.var]) score -= Holds(*conds_[i], val_) ? 0 : 1;
    val_[m.var] = cur;
    if (!have || score > best_score) {
      have = true;
      best_score = score;
      *best = m;
      ties = 1;
    } else if (score == best_score && rng_() % ++ties == 0) {
      *best = m;
    }
  }
  bool perfect = have && best_score == 0;
  if (!perfect && tier == 1 && have && rng_() % 8 != 0) perfect = true;
  return perfect;
}

bool WalkSearch::ChooseMove(const Cond& c, Move* best) {
  // Moves of one variable of `c`: steps of +-2^k, the ends of its box, and the integer
  // Newton step from the slope of l - r (exact for conditions linear in it).
  // Two tiers: the Newton step, +-1, +-2 and the box's ends first; a repair among them
  // that keeps every other condition of its variable true is taken at once (most
  // repairs), otherwise every step of +-2^k is weighed too.
  fixing_.clear();
  all_.clear();
  bool perfect = false;
  *best = Move{0, 0};
  for (int tier = 0; tier < 2 && !perfect; ++tier) {
    if (TryCandidates(c, tier, best)) {
      perfect = true;
      break;
    }
    perfect = MinConflicts(tier, best);
  }
  if (all_.empty()) return false;
  if (!perfect) *best = all_[rng_() % all_.size()];
  return true;
}

bool WalkSearch::Run(const std::vector<int64_t>* start, bool use_bounds, bool shrink,
                     std::vector<int64_t>* values) {
  // A copy of one seeded engine (seeding costs as much as a short search).
  static const std::mt19937_64 kSeeded(0x5eedULL);
  rng_ = kSeeded;
  val_.assign(n_, 0);
  fixing_.reserve(64);
  all_.reserve(64);
  cand_.reserve(96);
  violated_.reserve(conds_.size());
  for (int attempt = 0; attempt < kMaxStarts && budget_ > 0; ++attempt) {
    if (attempt == 3 && use_bounds && !Narrow()) return false;
    StartPoint(attempt, start);
    const int steps = 20 + 2 * static_cast<int>(conds_.size());
    // ok_[i]: condition i holds at val_; after a move only its variable's conditions change.
    ok_.resize(conds_.size());
    for (size_t i = 0; i < conds_.size(); ++i) ok_[i] = Holds(*conds_[i], val_);
    for (int step = 0; step < steps && budget_ > 0; ++step) {
      violated_.clear();
      for (size_t i = 0; i < conds_.size(); ++i) {
        if (!ok_[i]) violated_.push_back(i);
      }
      if (violated_.empty()) {
        if (shrink) Shrink();
        if (!SatisfiesFacts(*s_, val_, extra_)) break;  // every move was checked: cannot happen
        *values = val_;
        return true;
      }
      const Cond& c = *conds_[violated_[rng_() % violated_.size()]];
      if (c.vars.empty()) return false;  // a constant condition that is false
      Move best{0, 0};
      if (!ChooseMove(c, &best)) break;
      val_[best.var] = best.value;
      for (size_t i : of_var_[best.var]) ok_[i] = Holds(*conds_[i], val_);
    }
  }
  return false;
}

}  // namespace

bool Search(Scope* s, const std::vector<Condition>& extra, const std::vector<int64_t>* start,
            long budget, bool use_bounds, bool shrink, std::vector<int64_t>* values,
            const std::vector<Cond>* facts) {
  WalkSearch search(s, extra, budget, facts);
  return search.Run(start, use_bounds, shrink, values);
}

}  // namespace detail

bool FindValuation(Scope* s, const std::vector<Condition>& extra, const std::vector<int64_t>* start,
                   std::vector<int64_t>* values) {
  return detail::Search(s, extra, start, detail::kEvalBudget, /*use_bounds=*/true, /*shrink=*/true,
                        values);
}

}  // namespace dim
}  // namespace shp
