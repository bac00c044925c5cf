// The query driver of the decision procedure (see decide.h): deriving the variables' bounds
// (Prepare), bounds of expressions (Bounds, Project) and satisfiability of the facts.
#include "cc/dim/decide.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/decide_rows.h"
#include "cc/dim/fm.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

namespace {

// Test-only budgets of this thread (SetWorkBudgetsForTesting); 0: the defaults.
thread_local long t_query_work = 0;
thread_local long t_prepare_work = 0;

long QueryWork() { return t_query_work > 0 ? t_query_work : kQueryWork; }
long PrepareWork() { return t_prepare_work > 0 ? t_prepare_work : kPrepareWork; }

// Floor and ceiling of a / b for b != 0.
__int128 FloorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__int128 CeilDiv128(__int128 a, __int128 b) { return -FloorDiv128(-a, b); }

}  // namespace

void SetWorkBudgetsForTesting(long query_work, long prepare_work) {
  t_query_work = query_work > 0 ? query_work : 0;
  t_prepare_work = prepare_work > 0 ? prepare_work : 0;
}

Decider::Decider(Scope* scope) : s_(scope) {}
Decider::~Decider() = default;

void Decider::Reset(bool appended) {
  if (!appended) derived_.valid = false;
  prepared_ = false;
  base_.reset();
  var_bounds_.clear();
  atom_iv_.clear();
  mono_iv_.clear();
  bounds_cache_.clear();
}

Interval Decider::Project(const Expr* e, long* work) {
  if (!base_) {
    base_.reset(new System());
    Build(base_.get(), nullptr);
  }
  System sys;
  sys.base = base_.get();
  Build(&sys, e);
  size_t n = sys.cols.size();
  size_t ncols = n + 1;
  // z - e >= 0 and e - z >= 0
  if (e->ConstantTerm() == kNegInf) return {kNegInf, kPosInf};
  if (sys.infeasible) return {kNegInf, kPosInf};  // contradictory facts: say nothing
  Row q;                                          // z - e == 0
  q.c.assign(ncols, 0);
  q.c[n] = 1;
  q.c0 = -e->ConstantTerm();
  q.origin = fm::kImplicit;
  q.eq = true;
  for (const Term& t : e->terms) {
    if (t.mono->factors.empty()) continue;
    int j = sys.Find(t.mono);
    if (j < 0 || t.coeff == kNegInf) return {kNegInf, kPosInf};
    q.c[j] = -t.coeff;
  }
  sys.rows.push_back(q);

  // Keep only rows connected to z: the rest cannot constrain it. Rows come from the cached
  // base (fewer columns: the rest are 0) and from this query.
  const std::vector<Row>& base_rows = base_->rows;
  std::vector<int> parent(ncols);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&parent](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](const Row& r) {
    int first = -1;
    for (size_t j = 0; j < r.c.size(); ++j) {
      if (!r.c[j]) continue;
      if (first < 0) {
        first = find(static_cast<int>(j));
      } else {
        parent[find(static_cast<int>(j))] = first;
      }
    }
  };
  for (const Row& r : base_rows) unite(r);
  for (const Row& r : sys.rows) unite(r);
  int zroot = find(static_cast<int>(n));
  auto connected = [&](const Row& r) {
    for (size_t j = 0; j < r.c.size(); ++j) {
      if (r.c[j] && find(static_cast<int>(j)) == zroot) return true;
    }
    return false;
  };
  fm::Matrix m;
  m.n = ncols;
  m.Reserve(base_rows.size() + sys.rows.size());
  for (const Row& r : base_rows) {
    if (connected(r)) m.PushWidened(r);
  }
  for (const Row& r : sys.rows) {
    if (connected(r)) m.PushWidened(r);
  }
  uint64_t bad = 0;
  const long before = *work;
  const bool feasible = fm::Eliminate(&m, static_cast<int>(n), &bad, &scratch_, work);
  ++stats_.eliminations;
  stats_.work += before - std::max(*work, 0L);
  if (*work <= 0) ++stats_.degraded;
  if (!feasible) return {kNegInf, kPosInf};  // contradictory facts: say nothing
  Interval iv;
  for (size_t i = 0; i < m.size(); ++i) {
    int64_t a = m.Row(i)[n];
    if (a == 1) {  // z + c0 >= 0
      if (m.c0[i] != kNegInf) iv.lo = std::max(iv.lo, -m.c0[i]);
    } else if (a == -1) {  // -z + c0 >= 0
      iv.hi = std::min(iv.hi, m.c0[i]);
    }
  }
  return iv;
}

void Decider::Prepare() {
  if (prepared_ || preparing_) return;
  preparing_ = true;
  var_bounds_.clear();
  for (const Variable& v : s_->variables()) var_bounds_.push_back({v.lo, v.hi});
  atom_iv_.clear();
  mono_iv_.clear();
  // Derive each constrained variable's bounds from the facts (declared ranges first).
  const std::vector<Fact>& facts = s_->facts();
  const size_t nv = var_bounds_.size();
  std::vector<bool> in_facts(nv, false);
  // Variables that share a fact are in one component (union-find): a projection only uses
  // rows connected to its variable, so it depends on the facts of its component alone.
  std::vector<int32_t> parent(nv);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&parent](int32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<std::vector<int32_t>> fact_vars(facts.size());
  for (size_t i = 0; i < facts.size(); ++i) {
    fact_vars[i] = s_->VarsOf(facts[i].lhs);
    for (int32_t v : s_->VarsOf(facts[i].rhs)) fact_vars[i].push_back(v);
    for (int32_t v : fact_vars[i]) {
      in_facts[v] = true;
      parent[find(v)] = find(fact_vars[i][0]);
    }
  }
  // Facts added since the last Prepare (Check): only their components need projecting again.
  const bool reuse = derived_.valid && derived_.num_facts <= facts.size();
  std::vector<bool> touched(nv, !reuse);
  if (reuse) {
    for (size_t i = derived_.num_facts; i < facts.size(); ++i) {
      for (int32_t v : fact_vars[i]) touched[find(v)] = true;
    }
  }
  std::vector<Interval> derived = var_bounds_;
  std::vector<size_t> to_project;
  for (size_t v = 0; v < nv; ++v) {
    if (!in_facts[v]) continue;
    if (!touched[find(static_cast<int32_t>(v))] && v < derived_.bounds.size()) {
      derived[v] = derived_.bounds[v];
    } else {
      to_project.push_back(v);
    }
  }
  // Each projection gets an even share of the work left, so that running out leaves no
  // variable without a projection (what one leaves unused goes to the next ones).
  long left = PrepareWork();
  bool degraded = reuse && derived_.degraded;
  for (size_t i = 0; i < to_project.size(); ++i) {
    const size_t v = to_project[i];
    long work = left / static_cast<long>(to_project.size() - i);
    left -= work;
    const Expr* ve = s_->MonoExpr(
        s_->InternMono(
            {Factor{s_->InternAtom(AtomKind::kVar, static_cast<int32_t>(v), nullptr, nullptr), 1}}),
        1);
    Interval p = Project(ve, &work);
    if (work <= 0) degraded = true;
    left += std::max(work, 0L);
    derived[v].lo = std::max(derived[v].lo, p.lo);
    derived[v].hi = std::min(derived[v].hi, p.hi);
  }
  if (degraded) {
    // Bounds derived under fewer facts still hold; propagation is cheap and sound.
    if (reuse) {
      for (size_t v = 0; v < std::min(nv, derived_.bounds.size()); ++v) {
        derived[v].lo = std::max(derived[v].lo, derived_.bounds[v].lo);
        derived[v].hi = std::min(derived[v].hi, derived_.bounds[v].hi);
      }
    }
    Propagate(&derived);
  }
  var_bounds_ = derived;
  derived_ = {true, degraded, facts.size(), derived};
  atom_iv_.clear();
  mono_iv_.clear();
  base_.reset();  // rebuilt with the derived bounds
  preparing_ = false;
  prepared_ = true;
}

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

const std::vector<Interval>& Decider::VarBounds() {
  Prepare();
  if (var_bounds_.size() < s_->variables().size()) {  // variables created since
    for (size_t v = var_bounds_.size(); v < s_->variables().size(); ++v) {
      var_bounds_.push_back({s_->variables()[v].lo, s_->variables()[v].hi});
    }
  }
  return var_bounds_;
}

Interval Decider::Bounds(const Expr* e) {
  if (e->IsConstant()) {
    int64_t c = e->ConstantTerm();
    return {c, c};
  }
  Prepare();
  VarBounds();
  auto it = bounds_cache_.find(e);
  if (it != bounds_cache_.end()) return it->second;
  Interval iv = IntervalOf(e);
  // A single variable (times a constant, plus a constant) is already exact: the variable's
  // bounds were projected from the facts in Prepare.
  const Mono* lead = e->terms[0].mono;
  bool single_var =
      (e->terms.size() == 1 || (e->terms.size() == 2 && e->terms[1].mono->factors.empty())) &&
      lead->factors.size() == 1 && lead->factors[0].exp == 1 &&
      lead->factors[0].atom->kind == AtomKind::kVar;
  if (!single_var) {
    long work = QueryWork();
    Interval p = Project(e, &work);
    if (p.lo <= p.hi) {  // (lo > hi only if the facts are contradictory: then keep intervals)
      iv.lo = std::max(iv.lo, p.lo);
      iv.hi = std::min(iv.hi, p.hi);
    }
  }
  bounds_cache_.emplace(e, iv);
  return iv;
}

std::string Decider::DescribeOrigin(uint64_t origin) const {
  const std::vector<Fact>& facts = s_->facts();
  std::string named;
  std::vector<int32_t> vars;
  for (size_t i = 0; i < facts.size(); ++i) {
    if (!(origin & fm::FactOrigin(i))) continue;
    if (!named.empty()) named += ", ";
    named += facts[i].text;
    for (int32_t v : s_->VarsOf(facts[i].lhs)) vars.push_back(v);
    for (int32_t v : s_->VarsOf(facts[i].rhs)) vars.push_back(v);
  }
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  std::string ranges;
  for (int32_t v : vars) {
    const Variable& var = s_->variables()[v];
    if (!ranges.empty()) ranges += ", ";
    ranges += var.name + " in [" +
              (var.lo == kNegInf ? std::string("-inf") : std::to_string(var.lo)) + ", " +
              (var.hi == kPosInf ? std::string("+inf") : std::to_string(var.hi)) + "]" +
              (var.declared ? "" : " (default)");
  }
  return "{" + named + "}" + (ranges.empty() ? "" : " with the variable ranges " + ranges);
}

bool Decider::FindWitness() const {
  const std::vector<Variable>& vars = s_->variables();
  const std::vector<Fact>& facts = s_->facts();
  std::vector<int64_t> val(vars.size());
  const std::vector<bool> known(vars.size(), true);
  for (size_t v = 0; v < vars.size(); ++v) {
    val[v] = vars[v].lo != kNegInf ? vars[v].lo : std::min<int64_t>(0, vars[v].hi);
  }
  // 1 if `f` holds at `val`, 0 if not, -1 if it cannot be evaluated (overflow, division by 0).
  auto holds = [&](const Fact& f) {
    int64_t l, r;
    try {
      l = s_->Evaluate(f.lhs, val, known);
      r = s_->Evaluate(f.rhs, val, known);
    } catch (const Error&) {
      return -1;
    }
    return int{CmpHolds(l, f.op, r)};
  };
  int budget = 400;  // evaluations; the search only ever raises values, so it terminates
  for (int round = 0; round < 8; ++round) {
    bool all = true;
    for (const Fact& f : facts) {
      int h = holds(f);
      if (h == 1) continue;
      if (h < 0) return false;
      all = false;
      // Repair by raising one variable of the fact: +1 ... +16, then doubling steps.
      std::vector<int32_t> fv = s_->VarsOf(f.lhs);
      for (int32_t v : s_->VarsOf(f.rhs)) fv.push_back(v);
      bool fixed = false;
      for (int32_t v : fv) {
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

void Decider::CheckSatisfiable() {
  Reset(/*appended=*/true);  // the facts are what they were: keep derived_
  if (FindWitness()) return;
  // Use only the declared ranges (not bounds derived from the facts themselves) so that
  // the contradiction can be traced to the facts involved.
  preparing_ = true;
  var_bounds_.clear();
  for (const Variable& v : s_->variables()) var_bounds_.push_back({v.lo, v.hi});
  System sys;
  std::string failure;
  try {
    Build(&sys, nullptr);
    uint64_t bad = 0;
    std::vector<Row> rows = std::move(sys.rows);
    if (sys.infeasible) failure = DescribeOrigin(sys.infeasible_origin);
    fm::Matrix m = fm::ToMatrix(rows, sys.cols.size() + 1);
    fm::Scratch scratch;
    long work = QueryWork();  // out of work: no contradiction found, none reported
    if (failure.empty()) {
      const bool feasible = fm::Eliminate(&m, -1, &bad, &scratch, &work);
      ++stats_.eliminations;
      stats_.work += QueryWork() - std::max(work, 0L);
      if (work <= 0) ++stats_.degraded;
      if (!feasible) failure = DescribeOrigin(bad);
    }
  } catch (...) {
    preparing_ = false;
    Reset(/*appended=*/true);
    throw;
  }
  preparing_ = false;
  Reset(/*appended=*/true);
  if (!failure.empty()) throw Error(Code::kUnsatisfiable, "unsatisfiable constraints: " + failure);
}

}  // namespace dim
}  // namespace shp
