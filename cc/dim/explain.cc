// Witnesses and verified fixes of undecided comparisons (explain.h); the valuation search
// they use is in explain_search.cc.
#include "cc/dim/explain.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/detail/search.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/eval.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

namespace {

using detail::Cond;
using detail::FactConds;
using detail::kEvalBudget;
using detail::kRefuteBudget;
using detail::Search;

// Budgets of the fixes: the scope copies that verifying them may build, and the variables
// whose ranges are tried.
constexpr int kMaxCopies = 10;
constexpr size_t kMaxRangeVars = 3;

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
