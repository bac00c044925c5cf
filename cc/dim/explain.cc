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

// FindValuation with a budget of condition evaluations.
// `use_bounds`: narrow the box by the scope's bound queries (Bounds) after the first starts.
// `shrink`: move the valuation found towards small values (witnesses that are shown).
bool Search(Scope* s, const std::vector<Condition>& extra, const std::vector<int64_t>* start,
            long budget, bool use_bounds, bool shrink, std::vector<int64_t>* values,
            const std::vector<Cond>* facts = nullptr) {
  const std::vector<Variable>& vars = s->variables();
  const size_t n = vars.size();
  std::vector<Cond> own_facts;
  if (facts == nullptr) {
    own_facts = FactConds(*s);
    facts = &own_facts;
  }
  std::vector<Cond> own;
  own.reserve(extra.size());
  for (const Condition& c : extra) own.push_back(MakeCond(c.lhs, c.op, c.rhs));
  std::vector<const Cond*> conds;
  conds.reserve(facts->size() + own.size());
  size_t max_slots = 0;
  for (const std::vector<Cond>* list : {facts, static_cast<const std::vector<Cond>*>(&own)}) {
    for (const Cond& c : *list) {
      conds.push_back(&c);
      max_slots = std::max(max_slots, c.program.slots());
    }
  }
  std::vector<int64_t> slots(max_slots);
  // of_var[v]: the conditions that read variable v (in one array, by variable).
  struct Span {
    const size_t* first;
    const size_t* last;
    const size_t* begin() const { return first; }
    const size_t* end() const { return last; }
    bool empty() const { return first == last; }
  };
  std::vector<size_t> start_of(n + 1, 0), cond_of;
  for (const Cond* c : conds) {
    for (int32_t v : c->vars) ++start_of[static_cast<size_t>(v) + 1];
  }
  for (size_t v = 0; v < n; ++v) start_of[v + 1] += start_of[v];
  cond_of.resize(start_of[n]);
  {
    std::vector<size_t> fill(start_of.begin(), start_of.end() - 1);
    for (size_t i = 0; i < conds.size(); ++i) {
      for (int32_t v : conds[i]->vars) cond_of[fill[static_cast<size_t>(v)]++] = i;
    }
  }
  std::vector<Span> of_var(n);
  for (size_t v = 0; v < n; ++v) {
    of_var[v] = {cond_of.data() + start_of[v], cond_of.data() + start_of[v + 1]};
  }
  // The search box: the declared ranges, narrowed by the bounds the facts imply (every
  // valuation satisfying the facts lies inside them) once the first starting points failed:
  // a bound query per variable costs more than most searches.
  std::vector<int64_t> lo(n), hi(n);
  for (size_t v = 0; v < n; ++v) {
    lo[v] = vars[v].lo;
    hi[v] = vars[v].hi;
  }
  auto narrow = [&]() {
    for (size_t v = 0; v < n; ++v) {
      if (of_var[v].empty()) continue;
      try {
        const Interval iv = s->Bounds(s->Var(vars[v].name, /*mark_used=*/false));
        lo[v] = std::max(lo[v], iv.lo);
        hi[v] = std::min(hi[v], iv.hi);
      } catch (const Error&) {
      }
      if (lo[v] > hi[v]) return false;  // the facts admit no value
    }
    return true;
  };
  auto base = [&](size_t v) {
    return lo[v] != kNegInf ? lo[v] : hi[v] != kPosInf ? std::min<int64_t>(hi[v], 0) : 0;
  };
  // A copy of one seeded engine (seeding costs as much as a short search).
  static const std::mt19937_64 kSeeded(0x5eedULL);
  std::mt19937_64 rng = kSeeded;
  auto holds = [&](const Cond& c, const std::vector<int64_t>& v) {
    --budget;
    int64_t l, r;
    return c.program.Run(v.data(), slots.data(), &l, &r) && c.Holds(l, r);
  };
  std::vector<int64_t> val(n);
  // Moves of one variable: the candidate values, those that repair the condition, all tried.
  struct Move {
    size_t var;
    int64_t value;
  };
  std::vector<Move> fixing, all;
  std::vector<__int128> cand;
  std::vector<char> ok;
  std::vector<size_t> violated;
  fixing.reserve(64);
  all.reserve(64);
  cand.reserve(96);
  violated.reserve(conds.size());
  for (int attempt = 0; attempt < kMaxStarts && budget > 0; ++attempt) {
    // Starting points: the given one, the hints, the low corner, then random points whose
    // spread grows.
    if (attempt == 3 && use_bounds && !narrow()) return false;
    for (size_t v = 0; v < n; ++v) val[v] = base(v);
    if (attempt == 0 && start != nullptr && start->size() == n) {
      for (size_t v = 0; v < n; ++v) val[v] = Clamp((*start)[v], lo[v], hi[v]);
    } else if (attempt == 1) {
      for (size_t v = 0; v < n; ++v) {
        int64_t h;
        if (s->HintOf(static_cast<int32_t>(v), &h)) val[v] = Clamp(h, lo[v], hi[v]);
      }
    } else if (attempt >= 3) {
      static const int64_t kSpread[] = {4, 16, 64, 256, 4096, int64_t{1} << 20};
      const int64_t spread = kSpread[(attempt - 3) % 6];
      for (size_t v = 0; v < n; ++v) {
        if (of_var[v].empty()) continue;
        const __int128 from = lo[v] != kNegInf   ? __int128{lo[v]}
                              : hi[v] != kPosInf ? __int128{hi[v]} - spread
                                                 : -(spread / 2);
        val[v] = Clamp(from + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread + 1)),
                       lo[v], hi[v]);
      }
    }
    const int steps = 20 + 2 * static_cast<int>(conds.size());
    // ok[i]: condition i holds at val; after a move only its variable's conditions change.
    ok.resize(conds.size());
    for (size_t i = 0; i < conds.size(); ++i) ok[i] = holds(*conds[i], val);
    for (int step = 0; step < steps && budget > 0; ++step) {
      violated.clear();
      for (size_t i = 0; i < conds.size(); ++i) {
        if (!ok[i]) violated.push_back(i);
      }
      if (violated.empty()) {
        // Shrink: move each variable as close to the low end of its box as the conditions
        // allow (bisection, every point checked), so witnesses show small values.
        for (size_t v = 0; shrink && v < n && budget > 0; ++v) {
          const int64_t target = base(v), cur = val[v];
          if (of_var[v].empty() || cur == target) continue;
          auto ok_at = [&](int64_t x) {
            val[v] = x;
            bool ok = true;
            for (size_t i : of_var[v]) ok = ok && holds(*conds[i], val);
            return ok;
          };
          int64_t good = cur, bad = target;
          if (ok_at(target)) {
            good = target;
          } else {
            while (budget > 0 && (good > bad ? good - bad : bad - good) > 1) {
              const int64_t mid = bad + (good - bad) / 2;
              (ok_at(mid) ? good : bad) = mid;
            }
          }
          val[v] = good;
        }
        if (!SatisfiesFacts(*s, val, extra)) break;  // every move was checked: cannot happen
        *values = val;
        return true;
      }
      const Cond& c = *conds[violated[rng() % violated.size()]];
      if (c.vars.empty()) return false;  // a constant condition that is false
      // Moves of one variable of `c`: steps of +-2^k, the ends of its box, and the integer
      // Newton step from the slope of l - r (exact for conditions linear in it).
      // Two tiers: the Newton step, +-1, +-2 and the box's ends first; a repair among them
      // that keeps every other condition of its variable true is taken at once (most
      // repairs), otherwise every step of +-2^k is weighed too.
      fixing.clear();
      all.clear();
      bool perfect = false;
      Move best{0, 0};
      for (int tier = 0; tier < 2 && !perfect; ++tier) {
        for (int32_t vi : c.vars) {
          const size_t v = static_cast<size_t>(vi);
          const int64_t cur = val[v];
          cand.clear();
          if (tier == 0) {
            __int128 g0, g1;
            if (cur < kPosInf && Gap(c, val, slots.data(), &g0)) {
              val[v] = cur + 1;
              const bool defined = Gap(c, val, slots.data(), &g1);
              val[v] = cur;
              const __int128 slope = g1 - g0;
              if (defined && slope != 0) {
                const __int128 q = -g0 / slope;
                for (__int128 d : {0, 1, -1}) cand.push_back(__int128{cur} + q + d);
              }
            }
            for (int64_t d : {1, -1, 2, -2}) cand.push_back(__int128{cur} + d);
            if (lo[v] != kNegInf) cand.push_back(lo[v]);
            if (hi[v] != kPosInf) cand.push_back(hi[v]);
          } else {
            // Steps up to a few times the value's magnitude (so a walk can still double it
            // every move): most conditions are repaired near where the walk stands.
            const uint64_t mag =
                cur < 0 ? 0 - static_cast<uint64_t>(cur) : static_cast<uint64_t>(cur);
            const int top = std::min(40, std::max(8, 66 - __builtin_clzll(mag | 1)));
            for (int k = 2; k <= top; ++k) {
              cand.push_back(__int128{cur} + (int64_t{1} << k));
              cand.push_back(__int128{cur} - (int64_t{1} << k));
            }
          }
          for (__int128 x : cand) {
            if (x < lo[v] || x > hi[v] || x == cur) continue;
            val[v] = static_cast<int64_t>(x);
            all.push_back({v, val[v]});
            if (holds(c, val)) {
              fixing.push_back({v, val[v]});
              // In tier 0 a repair that leaves no condition of v violated ends the search.
              bool clean = tier == 0;
              for (size_t i : of_var[v]) {
                if (!clean) break;
                clean = conds[i] == &c || holds(*conds[i], val);
              }
              if (clean) {
                best = {v, val[v]};
                perfect = true;
              }
            }
            val[v] = cur;
            if (perfect) break;
          }
          if (perfect) break;
        }
        if (perfect) break;
        // Min-conflicts among the moves that repair `c`; sometimes a random move instead, so
        // that the walk leaves a plateau.
        long best_score = 0;
        bool have = false;
        size_t ties = 0;
        for (const Move& m : fixing) {
          long score = 0;  // minus the conditions of the variable the move leaves violated
          const int64_t cur = val[m.var];
          val[m.var] = m.value;
          for (size_t i : of_var[m.var]) score -= holds(*conds[i], val) ? 0 : 1;
          val[m.var] = cur;
          if (!have || score > best_score) {
            have = true;
            best_score = score;
            best = m;
            ties = 1;
          } else if (score == best_score && rng() % ++ties == 0) {
            best = m;
          }
        }
        perfect = have && best_score == 0;
        if (!perfect && tier == 1 && have && rng() % 8 != 0) perfect = true;
      }
      if (all.empty()) break;
      if (!perfect) best = all[rng() % all.size()];
      val[best.var] = best.value;
      for (size_t i : of_var[best.var]) ok[i] = holds(*conds[i], val);
    }
  }
  return false;
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

Explanation Explain(Scope* s, const Expr* a, Cmp op, const Expr* b, bool in_spec) {
  const std::string sa = s->ToString(a), sb = s->ToString(b);
  const std::string text = sa + " " + CmpSymbol(op) + " " + sb;
  const size_t n = s->variables().size();
  // The variables a witness shows: those of a and b and every variable sharing a fact with
  // them, directly or through others (the rest do not change the answer).
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
  const std::vector<Cond> facts = FactConds(*s);  // compiled once for the searches on s
  for (const Cond& c : facts) unite(c.vars);
  std::vector<int32_t> query_vars = s->VarsOf(a);
  for (int32_t v : s->VarsOf(b)) query_vars.push_back(v);
  std::sort(query_vars.begin(), query_vars.end());
  query_vars.erase(std::unique(query_vars.begin(), query_vars.end()), query_vars.end());
  unite(query_vars);
  std::vector<size_t> shown;
  if (!query_vars.empty()) {
    const size_t root = find(static_cast<size_t>(query_vars[0]));
    for (size_t v = 0; v < n; ++v) {
      if (find(v) == root) shown.push_back(v);
    }
  }

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

  // Fixes, each applied to a copy of the facts: listed when the copy decides the comparison
  // as true and a valuation satisfying the copy's facts is found.
  // A copy only adds facts and narrows ranges, so the variables' bounds the scope derived
  // hold in it: seeded with them, the copy skips deriving its own (most of a copy's cost).
  // Seeded answers may be weaker, never wrong: a copy that does not decide it seeded
  // decides again after deriving its own bounds, so no fix is lost.
  const std::vector<Interval> derived = s->VarBounds();
  int copies = 0;
  // The comparison in copy c: the sides of the constraint the copy added for it (`added`,
  // parsed when the copy was built), else sa and sb parsed in c. Seeded and undecided, c
  // derives its own bounds and decides again (the same expressions stay valid).
  auto verified = [&](Scope* c, bool seeded, bool added) -> bool {
    const Expr* ca = nullptr;
    const Expr* cb = nullptr;
    for (const Fact& f : c->facts()) {
      if (added && !f.is_assertion && !f.is_derived && f.op == op && f.text == text) {
        ca = f.lhs;
        cb = f.rhs;
      }
    }
    const bool parsed = ca == nullptr;
    if (parsed) {
      ca = c->Parse(sa);
      cb = c->Parse(sb);
    }
    Truth t = c->Compare(ca, op, cb);
    if (t != Truth::kTrue && seeded) {
      c->Unseed();
      t = c->Compare(ca, op, cb);
    }
    if (t != Truth::kTrue && !parsed) t = c->Compare(c->Parse(sa), op, c->Parse(sb));
    if (t != Truth::kTrue) return false;
    std::vector<int64_t> start = MapByName(*s, found[1] ? sides[1] : sides[0], *c);
    // The witness mapped into the copy usually satisfies its facts already (always for the
    // comparison added as a constraint); else a search from it (the copy's own bound queries
    // would cost more).
    if (SatisfiesFacts(*c, start)) return true;
    std::vector<int64_t> v;
    return Search(c, {}, &start, kEvalBudget, /*use_bounds=*/false, /*shrink=*/false, &v);
  };
  auto try_copy = [&](const std::vector<std::string>& extra,
                      const std::vector<Scope::Declaration>& overrides) {
    if (copies >= kMaxCopies) return false;
    ++copies;
    try {
      std::unique_ptr<Scope> c = CopyScope(*s, extra, overrides);
      return verified(c.get(), SeedCopy(*s, derived, overrides, c.get()), !extra.empty());
    } catch (const Error&) {
      return false;  // the change contradicts the facts, or the copy cannot be built
    }
  };
  std::vector<std::string>& fixes = detail->fixes;
  // A constraint and the same fact asserted by shp_scope_check are one fact to the engine:
  // one copy verifies both forms.
  if (try_copy({text}, {})) {
    fixes.push_back("add the constraint '" + text +
                    "' when creating the scope, or assert it first: shp_scope_check(scope, " + sa +
                    ", " + CmpCName(op) + ", " + sb + ")");
  }
  // A declared range of one variable: the witnesses show on which side of the false
  // witness's value the comparison held; the tightest range found is narrowed by bisection.
  if (found[0] && found[1]) {
    size_t tried = 0;
    for (int32_t vi : query_vars) {
      const size_t v = static_cast<size_t>(vi);
      const Variable& var = s->variables()[v];
      const int64_t t = sides[1][v], f = sides[0][v];
      if (t == f || var.unbacked || tried >= kMaxRangeVars) continue;
      ++tried;
      auto range = [&](int64_t edge) {
        return t > f ? Scope::Declaration{var.name, edge, var.hi}
                     : Scope::Declaration{var.name, var.lo, edge};
      };
      // A valuation in the range that makes the comparison false proves that the range
      // cannot decide it: a cheap search for one spares building a copy.
      const Expr* ve = s->Var(var.name, /*mark_used=*/false);
      auto decides = [&](int64_t edge) {
        // From the false witness moved to the range's edge.
        std::vector<int64_t> counter, from = sides[0];
        from[v] = edge;
        if (Search(s,
                   {Condition{ve, t > f ? Cmp::kGe : Cmp::kLe, s->Constant(edge)},
                    Condition{a, NegateCmp(op), b}},
                   &from, kRefuteBudget, /*use_bounds=*/true, /*shrink=*/false, &counter, &facts)) {
          return false;
        }
        return try_copy({}, {range(edge)});
      };
      if (!decides(t)) {
        // v == c needs v pinned: the range [c, c].
        std::vector<int64_t> counter;
        if (op == Cmp::kEq && ((a == ve && b->IsConstant()) || (b == ve && a->IsConstant())) &&
            !Search(s, {Condition{ve, Cmp::kEq, s->Constant(t)}, Condition{a, NegateCmp(op), b}},
                    &sides[0], kRefuteBudget, /*use_bounds=*/true, /*shrink=*/false, &counter,
                    &facts) &&
            try_copy({}, {Scope::Declaration{var.name, t, t}})) {
          fixes.push_back("declare '" + var.name + "' with the range [" + BoundText(t) + ", " +
                          BoundText(t) + "] (shp_scope_declare before it is used)");
        }
        continue;
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
      fixes.push_back("declare '" + var.name + "' with the range [" + BoundText(d.lo) + ", " +
                      BoundText(d.hi) + "] (shp_scope_declare before it is used)");
    }
  }
  // max/min in the specification: the dimensions then agree by construction. Verified on the
  // scope itself (the facts do not change).
  if (in_spec && (found[0] || found[1])) {
    try {
      const bool var_a = !a->IsConstant(), var_b = !b->IsConstant();
      if (op == Cmp::kEq && var_a && var_b) {
        const Expr* m = s->Max(a, b);
        if (s->Compare(m, op, m) == Truth::kTrue) {
          fixes.push_back("write max(" + sa + ", " + sb +
                          ") for both dimensions in the specification");
        }
      } else if (op == Cmp::kLe || op == Cmp::kLt || op == Cmp::kGe || op == Cmp::kGt) {
        const bool small_a = op == Cmp::kLe || op == Cmp::kLt;  // a must be the smaller
        const int64_t gap = op == Cmp::kLt || op == Cmp::kGt ? 1 : 0;
        if (var_a) {
          const Expr* bound = s->Sub(b, s->Constant(small_a ? gap : -gap));
          const Expr* na = small_a ? s->Min(a, bound) : s->Max(a, bound);
          if (s->Compare(na, op, b) == Truth::kTrue) {
            fixes.push_back("write " + s->ToString(na) + " for " + sa + " in the specification");
          }
        }
        if (var_b) {
          const Expr* bound = s->Add(a, s->Constant(small_a ? gap : -gap));
          const Expr* nb = small_a ? s->Max(b, bound) : s->Min(b, bound);
          if (s->Compare(a, op, nb) == Truth::kTrue) {
            fixes.push_back("write " + s->ToString(nb) + " for " + sb + " in the specification");
          }
        }
      }
    } catch (const Error&) {
      // building the max/min failed (overflow, depth): no such fix
    }
  }

  std::string out;
  std::string w_true, w_false;
  for (const ErrorWitness& w : detail->witnesses) (w.holds ? w_true : w_false) = WitnessText(w);
  out += " Witnesses (each satisfies every constraint, check and range, checked by evaluation): ";
  out += found[1] ? w_true + " makes it true" : "no valuation making it true was found";
  out += "; ";
  out += found[0] ? w_false + " makes it false" : "no valuation making it false was found";
  out += (found[0] && found[1]) ? "." : " (the search gave up within its budget).";
  if (fixes.empty()) {
    out += " No fix could be verified to decide it.";
  } else {
    out += " Verified fixes (each decides it as true and keeps the facts satisfiable): ";
    for (size_t i = 0; i < fixes.size(); ++i) {
      out += (i ? "; " : "") + std::string("(") + std::to_string(i + 1) + ") " + fixes[i];
    }
    out += ".";
  }
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
