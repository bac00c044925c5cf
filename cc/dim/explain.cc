// Witnesses and verified fixes of undecided comparisons (explain.h).
#include "cc/dim/explain.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/detail/compiled_pair.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/eval.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

namespace {

// Budgets of the searches: condition evaluations per valuation search, starting points, and
// the scope copies that verifying fixes may build.
constexpr long kEvalBudget = 40000;
constexpr long kRefuteBudget = 3000;  // ... when looking for a counterexample to a fix
constexpr int kMaxStarts = 16;
constexpr int kMaxCopies = 10;
constexpr size_t kMaxRangeVars = 3;

struct Cond {
  const Expr* lhs;
  Cmp op;
  const Expr* rhs;
  std::vector<int32_t> vars;
  detail::CompiledPair program;
  uint8_t holds;  // bit i: whether op holds when l < r (i = 0), l == r (1), l > r (2)
  bool Holds(int64_t l, int64_t r) const { return (holds >> (l < r ? 0 : l == r ? 1 : 2)) & 1; }
};

Cond MakeCond(const Expr* l, Cmp op, const Expr* r) {
  Cond c{l, op, r, {}, {}, 0};
  c.program.Compile(l, r);
  c.vars = c.program.Vars();
  c.holds =
      static_cast<uint8_t>(CmpHolds(0, op, 1) | CmpHolds(0, op, 0) << 1 | CmpHolds(1, op, 0) << 2);
  return c;
}

// The facts of `s` as conditions (compiled once for the searches of one explanation).
std::vector<Cond> FactConds(const Scope& s) {
  std::vector<Cond> out;
  out.reserve(s.facts().size());
  for (const Fact& f : s.facts()) out.push_back(MakeCond(f.lhs, f.op, f.rhs));
  return out;
}

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

// The values of `to`'s variables taken by name from `values` of `from`'s (1 where absent).
std::vector<int64_t> MapByName(const Scope& from, const std::vector<int64_t>& values,
                               const Scope& to) {
  std::vector<int64_t> out;
  for (const Variable& v : to.variables()) {
    const int32_t i = from.FindVar(v.name);
    out.push_back(i >= 0 && static_cast<size_t>(i) < values.size() ? values[static_cast<size_t>(i)]
                                                                   : 1);
  }
  return out;
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

// FindValuation with a budget of condition evaluations.
// `use_bounds`: narrow the box by the scope's bound queries (Bounds) after the first starts.
// `shrink`: move the valuation found towards small values (witnesses that are shown).
bool Search(Scope* s, const std::vector<Condition>& extra, const std::vector<int64_t>* start,
            long budget, bool use_bounds, bool shrink, std::vector<int64_t>* values,
            const std::vector<Cond>* facts = nullptr) {
  WalkSearch search(s, extra, budget, facts);
  return search.Run(start, use_bounds, shrink, values);
}

}  // namespace

bool FindValuation(Scope* s, const std::vector<Condition>& extra, const std::vector<int64_t>* start,
                   std::vector<int64_t>* values) {
  return Search(s, extra, start, kEvalBudget, /*use_bounds=*/true, /*shrink=*/true, values);
}

std::unique_ptr<Scope> CopyScope(const Scope& s, const std::vector<std::string>& extra_constraints,
                                 const std::vector<Scope::Declaration>& overrides) {
  std::vector<std::string> constraints;
  for (const Fact& f : s.facts()) {
    if (!f.is_assertion && !f.is_derived) constraints.push_back(f.text);
  }
  constraints.insert(constraints.end(), extra_constraints.begin(), extra_constraints.end());
  std::vector<Scope::Declaration> decls;
  for (const Variable& v : s.variables()) {
    if (v.declared) decls.push_back({v.name, v.lo, v.hi});
  }
  for (const Scope::Declaration& o : overrides) {
    auto it = std::find_if(decls.begin(), decls.end(),
                           [&](const Scope::Declaration& d) { return d.name == o.name; });
    if (it != decls.end()) {
      *it = o;
    } else {
      decls.push_back(o);
    }
  }
  std::unique_ptr<Scope> c = Scope::Create(constraints, decls);
  for (const Fact& f : s.facts()) {
    if (!f.is_assertion && !f.is_derived) continue;
    const Expr* l = c->Parse(s.ToString(f.lhs));
    const Expr* r = c->Parse(s.ToString(f.rhs));
    if (f.is_derived) {
      c->AddDerived(l, f.op, r);
    } else {
      c->AddGuard(l, f.op, r, f.message, f.origin);
    }
  }
  return c;
}

bool SeedCopy(const Scope& s, const std::vector<Interval>& derived,
              const std::vector<Scope::Declaration>& overrides, Scope* copy) {
  for (const Scope::Declaration& o : overrides) {
    const int32_t v = s.FindVar(o.name);
    if (v < 0) return false;
    const Variable& var = s.variables()[static_cast<size_t>(v)];
    if (o.lo < var.lo || o.hi > var.hi) return false;  // a wider range: the bounds may not hold
  }
  std::vector<Interval> seed;
  for (const Variable& v : copy->variables()) {
    const int32_t i = s.FindVar(v.name);
    seed.push_back(i >= 0 && static_cast<size_t>(i) < derived.size()
                       ? derived[static_cast<size_t>(i)]
                       : Interval{kNegInf, kPosInf});
  }
  copy->SeedVarBounds(std::move(seed));
  return true;
}

std::string WitnessText(const ErrorWitness& w) {
  std::string t;
  for (size_t i = 0; i < w.names.size() && i < w.values.size(); ++i) {
    t += (i ? ", " : "") + w.names[i] + " = " + std::to_string(w.values[i]);
  }
  return t;
}

namespace {

// The variables a witness shows: those of the query (`query_vars`) and every variable
// sharing a fact with them, directly or through others (the rest do not change the answer).
std::vector<size_t> ShownVars(size_t n, const std::vector<Cond>& facts,
                              const std::vector<int32_t>& query_vars) {
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](const std::vector<int32_t>& vs) {
    for (size_t i = 1; i < vs.size(); ++i) {
      parent[find(static_cast<size_t>(vs[i]))] = find(static_cast<size_t>(vs[0]));
    }
  };
  for (const Cond& c : facts) unite(c.vars);
  unite(query_vars);
  std::vector<size_t> shown;
  if (!query_vars.empty()) {
    const size_t root = find(static_cast<size_t>(query_vars[0]));
    for (size_t v = 0; v < n; ++v) {
      if (find(v) == root) shown.push_back(v);
    }
  }
  return shown;
}

// Fixes of an undecided comparison a op b, each applied to a copy of the facts: listed when
// the copy decides the comparison as true and a valuation satisfying the copy's facts is
// found. A copy only adds facts and narrows ranges, so the variables' bounds the scope
// derived hold in it: seeded with them, the copy skips deriving its own (most of a copy's
// cost). Seeded answers may be weaker, never wrong: a copy that does not decide it seeded
// decides again after deriving its own bounds, so no fix is lost.
class FixSearch {
 public:
  FixSearch(Scope* s, const Expr* a, Cmp op, const Expr* b, const std::vector<Cond>& facts,
            const std::vector<int64_t> (&sides)[2], const bool (&found)[2],
            std::vector<std::string>* fixes)
      : s_(s),
        a_(a),
        b_(b),
        op_(op),
        sa_(s->ToString(a)),
        sb_(s->ToString(b)),
        text_(sa_ + " " + CmpSymbol(op) + " " + sb_),
        facts_(facts),
        sides_(sides),
        found_(found),
        fixes_(fixes),
        derived_(s->VarBounds()) {}

  // A constraint and the same fact asserted by shp_scope_check are one fact to the engine:
  // one copy verifies both forms.
  void ConstraintFix() {
    if (TryCopy({text_}, {})) {
      fixes_->push_back("add the constraint '" + text_ +
                        "' when creating the scope, or assert it first: shp_scope_check(scope, " +
                        sa_ + ", " + CmpCName(op_) + ", " + sb_ + ")");
    }
  }
  void RangeFixes(const std::vector<int32_t>& query_vars);
  void SpecFixes();

 private:
  bool Verified(Scope* c, bool seeded, bool added);
  bool TryCopy(const std::vector<std::string>& extra,
               const std::vector<Scope::Declaration>& overrides) {
    if (copies_ >= kMaxCopies) return false;
    ++copies_;
    try {
      std::unique_ptr<Scope> c = CopyScope(*s_, extra, overrides);
      return Verified(c.get(), SeedCopy(*s_, derived_, overrides, c.get()), !extra.empty());
    } catch (const Error&) {
      return false;  // the change contradicts the facts, or the copy cannot be built
    }
  }
  void RangeFix(size_t v);

  Scope* s_;
  const Expr* a_;
  const Expr* b_;
  const Cmp op_;
  const std::string sa_, sb_, text_;
  const std::vector<Cond>& facts_;
  const std::vector<int64_t> (&sides_)[2];
  const bool (&found_)[2];
  std::vector<std::string>* fixes_;
  const std::vector<Interval> derived_;
  int copies_ = 0;
};

// The comparison in copy c: the sides of the constraint the copy added for it (`added`,
// parsed when the copy was built), else sa and sb parsed in c. Seeded and undecided, c
// derives its own bounds and decides again (the same expressions stay valid).
bool FixSearch::Verified(Scope* c, bool seeded, bool added) {
  const Expr* ca = nullptr;
  const Expr* cb = nullptr;
  for (const Fact& f : c->facts()) {
    if (added && !f.is_assertion && !f.is_derived && f.op == op_ && f.text == text_) {
      ca = f.lhs;
      cb = f.rhs;
    }
  }
  const bool parsed = ca == nullptr;
  if (parsed) {
    ca = c->Parse(sa_);
    cb = c->Parse(sb_);
  }
  Truth t = c->Compare(ca, op_, cb);
  if (t != Truth::kTrue && seeded) {
    c->Unseed();
    t = c->Compare(ca, op_, cb);
  }
  if (t != Truth::kTrue && !parsed) t = c->Compare(c->Parse(sa_), op_, c->Parse(sb_));
  if (t != Truth::kTrue) return false;
  std::vector<int64_t> start = MapByName(*s_, found_[1] ? sides_[1] : sides_[0], *c);
  // The witness mapped into the copy usually satisfies its facts already (always for the
  // comparison added as a constraint); else a search from it (the copy's own bound queries
  // would cost more).
  if (SatisfiesFacts(*c, start)) return true;
  std::vector<int64_t> v;
  return Search(c, {}, &start, kEvalBudget, /*use_bounds=*/false, /*shrink=*/false, &v);
}

// A declared range of one variable: the witnesses show on which side of the false
// witness's value the comparison held; the tightest range found is narrowed by bisection.
void FixSearch::RangeFixes(const std::vector<int32_t>& query_vars) {
  if (!found_[0] || !found_[1]) return;
  size_t tried = 0;
  for (int32_t vi : query_vars) {
    const size_t v = static_cast<size_t>(vi);
    const Variable& var = s_->variables()[v];
    const int64_t t = sides_[1][v], f = sides_[0][v];
    if (t == f || var.unbacked || tried >= kMaxRangeVars) continue;
    ++tried;
    RangeFix(v);
  }
}

void FixSearch::RangeFix(size_t v) {
  const Variable& var = s_->variables()[v];
  const int64_t t = sides_[1][v], f = sides_[0][v];
  const Expr* a = a_;
  const Expr* b = b_;
  const Cmp op = op_;
  auto range = [&](int64_t edge) {
    return t > f ? Scope::Declaration{var.name, edge, var.hi}
                 : Scope::Declaration{var.name, var.lo, edge};
  };
  // A valuation in the range that makes the comparison false proves that the range
  // cannot decide it: a cheap search for one spares building a copy.
  const Expr* ve = s_->Var(var.name, /*mark_used=*/false);
  auto decides = [&](int64_t edge) {
    // From the false witness moved to the range's edge.
    std::vector<int64_t> counter, from = sides_[0];
    from[v] = edge;
    if (Search(s_,
               {Condition{ve, t > f ? Cmp::kGe : Cmp::kLe, s_->Constant(edge)},
                Condition{a, NegateCmp(op), b}},
               &from, kRefuteBudget, /*use_bounds=*/true, /*shrink=*/false, &counter, &facts_)) {
      return false;
    }
    return TryCopy({}, {range(edge)});
  };
  if (!decides(t)) {
    // v == c needs v pinned: the range [c, c].
    std::vector<int64_t> counter;
    if (op == Cmp::kEq && ((a == ve && b->IsConstant()) || (b == ve && a->IsConstant())) &&
        !Search(s_, {Condition{ve, Cmp::kEq, s_->Constant(t)}, Condition{a, NegateCmp(op), b}},
                &sides_[0], kRefuteBudget, /*use_bounds=*/true, /*shrink=*/false, &counter,
                &facts_) &&
        TryCopy({}, {Scope::Declaration{var.name, t, t}})) {
      fixes_->push_back("declare '" + var.name + "' with the range [" + BoundText(t) + ", " +
                        BoundText(t) + "] (shp_scope_declare before it is used)");
    }
    return;
  }
  // Good at t; bad at f. Bisect towards f for the widest range that still decides it.
  int64_t good = t, bad = f;
  for (int k = 0; k < 6 && (good - bad > 1 || bad - good > 1); ++k) {
    const int64_t mid = bad + (good - bad) / 2;
    if (decides(mid)) {
      good = mid;
    } else {
      bad = mid;
    }
  }
  const Scope::Declaration d = range(good);
  fixes_->push_back("declare '" + var.name + "' with the range [" + BoundText(d.lo) + ", " +
                    BoundText(d.hi) + "] (shp_scope_declare before it is used)");
}

// max/min in the specification: the dimensions then agree by construction. Verified on the
// scope itself (the facts do not change).
void FixSearch::SpecFixes() {
  Scope* s = s_;
  const Expr* a = a_;
  const Expr* b = b_;
  const Cmp op = op_;
  try {
    const bool var_a = !a->IsConstant(), var_b = !b->IsConstant();
    if (op == Cmp::kEq && var_a && var_b) {
      const Expr* m = s->Max(a, b);
      if (s->Compare(m, op, m) == Truth::kTrue) {
        fixes_->push_back("write max(" + sa_ + ", " + sb_ +
                          ") for both dimensions in the specification");
      }
    } else if (op == Cmp::kLe || op == Cmp::kLt || op == Cmp::kGe || op == Cmp::kGt) {
      const bool small_a = op == Cmp::kLe || op == Cmp::kLt;  // a must be the smaller
      const int64_t gap = op == Cmp::kLt || op == Cmp::kGt ? 1 : 0;
      if (var_a) {
        const Expr* bound = s->Sub(b, s->Constant(small_a ? gap : -gap));
        const Expr* na = small_a ? s->Min(a, bound) : s->Max(a, bound);
        if (s->Compare(na, op, b) == Truth::kTrue) {
          fixes_->push_back("write " + s->ToString(na) + " for " + sa_ + " in the specification");
        }
      }
      if (var_b) {
        const Expr* bound = s->Add(a, s->Constant(small_a ? gap : -gap));
        const Expr* nb = small_a ? s->Max(b, bound) : s->Min(b, bound);
        if (s->Compare(a, op, nb) == Truth::kTrue) {
          fixes_->push_back("write " + s->ToString(nb) + " for " + sb_ + " in the specification");
        }
      }
    }
  } catch (const Error&) {
    // building the max/min failed (overflow, depth): no such fix
  }
}

// The text of an explanation: its witnesses and fixes.
std::string ExplanationText(const ErrorDetail& detail, const bool (&found)[2]) {
  std::string out;
  std::string w_true, w_false;
  for (const ErrorWitness& w : detail.witnesses) (w.holds ? w_true : w_false) = WitnessText(w);
  out += " Witnesses (each satisfies every constraint, check and range, checked by evaluation): ";
  out += found[1] ? w_true + " makes it true" : "no valuation making it true was found";
  out += "; ";
  out += found[0] ? w_false + " makes it false" : "no valuation making it false was found";
  out += (found[0] && found[1]) ? "." : " (the search gave up within its budget).";
  const std::vector<std::string>& fixes = detail.fixes;
  if (fixes.empty()) {
    out += " No fix could be verified to decide it.";
  } else {
    out += " Verified fixes (each decides it as true and keeps the facts satisfiable): ";
    for (size_t i = 0; i < fixes.size(); ++i) {
      out += (i ? "; " : "") + std::string("(") + std::to_string(i + 1) + ") " + fixes[i];
    }
    out += ".";
  }
  return out;
}

Explanation Explain(Scope* s, const Expr* a, Cmp op, const Expr* b, bool in_spec) {
  const size_t n = s->variables().size();
  const std::vector<Cond> facts = FactConds(*s);  // compiled once for the searches on s
  std::vector<int32_t> query_vars = s->VarsOf(a);
  for (int32_t v : s->VarsOf(b)) query_vars.push_back(v);
  std::sort(query_vars.begin(), query_vars.end());
  query_vars.erase(std::unique(query_vars.begin(), query_vars.end()), query_vars.end());
  const std::vector<size_t> shown = ShownVars(n, facts, query_vars);

  auto detail = std::make_shared<ErrorDetail>();
  std::vector<int64_t> sides[2];
  bool found[2] = {false, false};
  for (int side = 1; side >= 0; --side) {  // true first; the false search starts from it
    const Cmp want = side ? op : NegateCmp(op);
    const std::vector<int64_t>* start = side == 0 && found[1] ? &sides[1] : nullptr;
    found[side] = Search(s, {Condition{a, want, b}}, start, kEvalBudget, /*use_bounds=*/true,
                         /*shrink=*/true, &sides[side], &facts) &&
                  SatisfiesFacts(*s, sides[side], {Condition{a, want, b}});
    if (!found[side]) continue;
    ErrorWitness w;
    w.holds = side == 1;
    for (size_t v : shown) {
      w.names.push_back(s->variables()[v].name);
      w.values.push_back(sides[side][v]);
    }
    detail->witnesses.push_back(std::move(w));
  }

  FixSearch fix(s, a, op, b, facts, sides, found, &detail->fixes);
  fix.ConstraintFix();
  fix.RangeFixes(query_vars);
  if (in_spec && (found[0] || found[1])) fix.SpecFixes();
  std::string out = ExplanationText(*detail, found);
  return Explanation{std::move(detail), std::move(out)};
}

}  // namespace

Explanation ExplainUndecided(Scope* s, const Expr* a, Cmp op, const Expr* b, bool in_spec) {
  try {
    return Explain(s, a, op, b, in_spec);
  } catch (const Error& e) {
    // The explanation must never replace the error it explains.
    return Explanation{std::make_shared<ErrorDetail>(),
                       " (No witnesses or fixes: explaining it failed: " + e.message() + ")"};
  }
}

}  // namespace dim
}  // namespace shp
