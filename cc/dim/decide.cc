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

Decider::Decider(Scope* scope) : s_(scope) {}
Decider::~Decider() = default;

void Decider::Reset() {
  prepared_ = false;
  base_.reset();
  var_bounds_.clear();
  atom_iv_.clear();
  mono_iv_.clear();
  bounds_cache_.clear();
}

Interval Decider::Project(const Expr* e) {
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
  // Reused across queries (only within Eliminate, which never reenters Project).
  static thread_local fm::Scratch scratch;
  if (!fm::Eliminate(&m, static_cast<int>(n), &bad, &scratch)) {
    return {kNegInf, kPosInf};  // contradictory facts: say nothing
  }
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
  std::vector<bool> in_facts(var_bounds_.size(), false);
  for (const Fact& f : s_->facts()) {
    for (int32_t v : s_->VarsOf(f.lhs)) in_facts[v] = true;
    for (int32_t v : s_->VarsOf(f.rhs)) in_facts[v] = true;
  }
  std::vector<Interval> derived = var_bounds_;
  for (size_t v = 0; v < var_bounds_.size(); ++v) {
    if (!in_facts[v]) continue;
    const Expr* ve = s_->MonoExpr(
        s_->InternMono(
            {Factor{s_->InternAtom(AtomKind::kVar, static_cast<int32_t>(v), nullptr, nullptr), 1}}),
        1);
    Interval p = Project(ve);
    derived[v].lo = std::max(derived[v].lo, p.lo);
    derived[v].hi = std::min(derived[v].hi, p.hi);
  }
  var_bounds_ = derived;
  atom_iv_.clear();
  mono_iv_.clear();
  base_.reset();  // rebuilt with the derived bounds
  preparing_ = false;
  prepared_ = true;
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
    Interval p = Project(e);
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
  Reset();
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
    if (failure.empty() && !fm::Eliminate(&m, -1, &bad, &scratch)) failure = DescribeOrigin(bad);
  } catch (...) {
    preparing_ = false;
    Reset();
    throw;
  }
  preparing_ = false;
  Reset();
  if (!failure.empty()) throw Error(Code::kUnsatisfiable, "unsatisfiable constraints: " + failure);
}

}  // namespace dim
}  // namespace shp
