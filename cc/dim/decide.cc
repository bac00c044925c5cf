// The query driver of the decision procedure (see decide.h): deriving the variables' bounds
// (Prepare), bounds of expressions (Bounds, Project, NeverZero) and satisfiability of the
// facts (CheckSatisfiable). The rows come from the rule table (decide_rows.cc, rules/), the
// case analysis of max/min from decide_cases.cc, propagation and witnesses from
// decide_facts.cc.
#include "cc/dim/decide.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/decide_rows.h"
#include "cc/dim/fm.h"
#include "cc/dim/int_math.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

namespace {

// Test-only budgets of this thread (SetWorkBudgetsForTesting); 0: the defaults.
thread_local long t_query_work = 0;
thread_local long t_prepare_work = 0;
// Test-only: no case analysis of max/min on this thread (SetCaseSplitsForTesting).
thread_local bool t_no_splits = false;

long QueryWork() { return t_query_work > 0 ? t_query_work : kQueryWork; }
long PrepareWork() { return t_prepare_work > 0 ? t_prepare_work : kPrepareWork; }

// A hash of a row's coefficients (trailing zeros ignored: rows of the base are narrower),
// constant and kind.
uint64_t RowHash(const fm::Row& r) {
  size_t end = r.c.size();
  while (end > 0 && r.c[end - 1] == 0) --end;
  uint64_t h = 1469598103934665603ULL ^ static_cast<uint64_t>(r.c0) ^ (r.eq ? 0x9e37ULL : 0);
  for (size_t j = 0; j < end; ++j) h = (h ^ static_cast<uint64_t>(r.c[j])) * 1099511628211ULL;
  return h ^ (h >> 29);
}

// Whether two rows are equal (coefficients past the shorter one's end 0).
bool SameRow(const fm::Row& a, const fm::Row& b) {
  if (a.c0 != b.c0 || a.eq != b.eq) return false;
  const size_t n = std::min(a.c.size(), b.c.size());
  if (!std::equal(a.c.begin(), a.c.begin() + static_cast<std::ptrdiff_t>(n), b.c.begin())) {
    return false;
  }
  for (size_t j = n; j < a.c.size(); ++j) {
    if (a.c[j] != 0) return false;
  }
  for (size_t j = n; j < b.c.size(); ++j) {
    if (b.c[j] != 0) return false;
  }
  return true;
}

// *m := `rows`, column j of a row at column slot[j] of m's `width` (slot[j] >= 0 wherever a
// row has a coefficient).
void FillNarrow(const std::vector<const fm::Row*>& rows, const std::vector<int32_t>& slot,
                size_t width, fm::Matrix* m) {
  const size_t nrows = rows.size();
  m->n = width;
  m->c.assign(nrows * width, 0);
  m->c0.resize(nrows);
  m->origin.resize(nrows);
  m->h0.assign(nrows, 0);
  m->h1.assign(nrows, 0);
  m->eq.resize(nrows);
  for (size_t i = 0; i < nrows; ++i) {
    const fm::Row& r = *rows[i];
    int64_t* out = m->Row(i);
    const int64_t* c = r.c.data();
    for (size_t j = 0, w = r.c.size(); j < w; ++j) {
      if (c[j] != 0) out[slot[j]] = c[j];
    }
    m->c0[i] = r.c0;
    m->origin[i] = r.origin;
    m->eq[i] = r.eq;
  }
}

// For each of rows[0..count), the first earlier row equal to it, or -1. A linear search for
// a query's few rows; a table for a base's many.
void FindDuplicates(const fm::Row* const* rows, size_t count, std::vector<uint64_t>* hashes,
                    std::vector<int>* dup_of) {
  hashes->resize(count);
  dup_of->assign(count, -1);
  if (count > 32) {
    std::unordered_multimap<uint64_t, int> first;  // hash -> rows without an earlier equal
    first.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const uint64_t h = RowHash(*rows[i]);
      auto range = first.equal_range(h);
      for (auto it = range.first; it != range.second; ++it) {
        if (SameRow(*rows[it->second], *rows[i])) {
          (*dup_of)[i] = it->second;
          break;
        }
      }
      if ((*dup_of)[i] < 0) first.emplace(h, static_cast<int>(i));
    }
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint64_t h = RowHash(*rows[i]);
    (*hashes)[i] = h;
    for (size_t k = 0; k < i; ++k) {
      if ((*hashes)[k] == h && (*dup_of)[k] < 0 && SameRow(*rows[k], *rows[i])) {
        (*dup_of)[i] = static_cast<int>(k);
        break;
      }
    }
  }
}
}  // namespace

void SetCaseSplitsForTesting(bool enabled) { t_no_splits = !enabled; }

void SetWorkBudgetsForTesting(long query_work, long prepare_work) {
  t_query_work = query_work > 0 ? query_work : 0;
  t_prepare_work = prepare_work > 0 ? prepare_work : 0;
}

Decider::Decider(Scope* scope) : s_(scope), buf_(new Buffers()) {}
Decider::~Decider() = default;

void Decider::Reset(bool appended) {
  if (!appended) {
    derived_.valid = false;
    seeded_ = false;
    seed_.clear();
  }
  prepared_ = false;
  base_.reset();
  ResetRays();
  ResetWitness();
  var_bounds_.clear();
  atom_iv_.clear();
  mono_iv_.clear();
  bounds_cache_.clear();
}

void Decider::QuerySystem(const Expr* e, System* sys) {
  if (!base_) {
    base_.reset(new System());
    Build(base_.get(), nullptr);
  }
  sys->base = base_.get();
  Build(sys, e);
}

void Decider::LeaveOutCopies(size_t ncols, long work) {
  // Rows equal to an earlier one (a fact and the interval row it gives, a rule's row found
  // twice) go in once, with their multiplicity: the elimination then does what it does with
  // all of them, on fewer rows (fm::Scratch::weight), and leaves the same rows for z (or,
  // when it combines no rows, the same ones without the copies). Only where its work cannot
  // run out before its first combination step, which merges them: 2 * (rows + 1)^2 *
  // columns bounds what the substitutions and that step cost (each row at most split in
  // two); and where every row has a history bit (Chernikov's rule) either way.
  const std::vector<const Row*>& picked = buf_->picked;
  const std::vector<Row>& base_rows = base_->rows;
  const size_t all_rows = picked.size();
  if (all_rows <= 128 && 2 * static_cast<long>((all_rows + 1) * (all_rows + 1) * ncols) <= work &&
      all_rows * all_rows <= static_cast<size_t>(fm::kMaxCombinations)) {
    std::vector<int>& at = buf_->dup_at;  // a base row's index in m (when m has it)
    at.assign(base_rows.size(), -1);
    std::vector<uint32_t>& weight = buf_->scratch.weight;
    weight.clear();
    std::vector<const Row*>& kept = buf_->kept;
    kept.clear();
    size_t i = 0;
    for (size_t b = 0; b < base_rows.size() && i < all_rows; ++b) {
      if (picked[i] != &base_rows[b]) continue;
      ++i;
      const int d = base_->dup_of[b];
      if (d >= 0 && at[static_cast<size_t>(d)] >= 0) {
        ++weight[static_cast<size_t>(at[static_cast<size_t>(d)])];
        continue;
      }
      at[b] = static_cast<int>(kept.size());
      kept.push_back(picked[i - 1]);
      weight.push_back(1);
    }
    std::vector<int>& own_dup = buf_->own_dup;
    FindDuplicates(picked.data() + i, all_rows - i, &buf_->hashes, &own_dup);
    std::vector<int>& own_at = buf_->own_at;
    own_at.assign(all_rows - i, -1);
    for (size_t k = 0; k < all_rows - i; ++k) {
      const int d = own_dup[k];
      if (d >= 0 && own_at[static_cast<size_t>(d)] >= 0) {
        ++weight[static_cast<size_t>(own_at[static_cast<size_t>(d)])];
        continue;
      }
      own_at[k] = static_cast<int>(kept.size());
      kept.push_back(picked[i + k]);
      weight.push_back(1);
    }
    if (kept.size() == all_rows) weight.clear();
  } else {
    buf_->kept.assign(picked.begin(), picked.end());
    buf_->scratch.weight.clear();
  }
}

void Decider::NarrowMatrix(size_t ncols, fm::Matrix* out) {
  // Only the columns some row has (the others are 0 everywhere; the elimination would drop
  // them after its first pass): the same steps on narrower rows (fm::EliminateNarrow). Not
  // for large systems, whose wide rows a plain copy moves faster than a scatter.
  const std::vector<const Row*>& rows_in = buf_->kept;
  std::vector<int32_t>& cols = buf_->cols;
  fm::Matrix& m = *out;
  std::vector<int32_t>& slot = buf_->slot;
  cols.clear();
  if (rows_in.size() <= 128) {
    slot.assign(ncols, -1);
    for (const Row* r : rows_in) {
      const int64_t* c = r->c.data();
      for (size_t j = 0, w = r->c.size(); j < w; ++j) {
        if (c[j] != 0) slot[j] = 0;
      }
    }
    for (size_t j = 0; j < ncols; ++j) {
      if (slot[j] == 0) {
        slot[j] = static_cast<int32_t>(cols.size());
        cols.push_back(static_cast<int32_t>(j));
      }
    }
    FillNarrow(rows_in, slot, cols.size(), &m);
  } else {
    m.Reserve(rows_in.size());
    m.PushWidened(rows_in.data(), rows_in.size());
  }
}

Interval Decider::Project(const Expr* e, long* work) {
  System sys;
  QuerySystem(e, &sys);
  size_t n = sys.cols.size();
  size_t ncols = n + 1;
  // z - e >= 0 and e - z >= 0
  if (e->ConstantTerm() == kNegInf) return {kNegInf, kPosInf};
  if (sys.infeasible) return Contradictory(sys.infeasible_origin);
  Row q;  // z - e == 0
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
  std::vector<int> parent;
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
  const size_t nbase = base_->cols.size();  // the query's columns extend the base's
  if (!base_->links_ready) {                // once per base: the components of its rows
    parent.resize(nbase);
    std::iota(parent.begin(), parent.end(), 0);
    base_->row_col.clear();
    for (const Row& r : base_rows) {
      unite(r);
      int col = -1;
      for (size_t j = 0; j < r.c.size() && col < 0; ++j) {
        if (r.c[j]) col = static_cast<int>(j);
      }
      base_->row_col.push_back(col);
    }
    base_->link_root.resize(nbase);
    for (size_t j = 0; j < nbase; ++j) base_->link_root[j] = find(static_cast<int>(j));
    std::vector<const Row*> all;
    all.reserve(base_rows.size());
    for (const Row& r : base_rows) all.push_back(&r);
    std::vector<uint64_t> hashes;
    FindDuplicates(all.data(), all.size(), &hashes, &base_->dup_of);
    base_->links_ready = true;
  }
  parent.resize(ncols);
  std::copy(base_->link_root.begin(), base_->link_root.end(), parent.begin());
  std::iota(parent.begin() + static_cast<std::ptrdiff_t>(nbase), parent.end(),
            static_cast<int>(nbase));
  for (const Row& r : sys.rows) unite(r);
  int zroot = find(static_cast<int>(n));
  auto connected = [&](const Row& r) {
    for (size_t j = 0; j < r.c.size(); ++j) {
      if (r.c[j] && find(static_cast<int>(j)) == zroot) return true;
    }
    return false;
  };
  // The matrices keep their capacity across queries (Build, above, may have run a nested
  // projection through Prepare, but that one is over before this one fills them).
  fm::Matrix& m = buf_->proj;
  m.n = ncols;
  m.Clear();
  m.Reserve(base_rows.size() + sys.rows.size());
  std::vector<const Row*>& picked = buf_->picked;
  picked.clear();
  for (size_t i = 0; i < base_rows.size(); ++i) {  // a row's columns share one component
    const int col = base_->row_col[i];
    if (col >= 0 && find(col) == zroot) picked.push_back(&base_rows[i]);
  }
  for (const Row& r : sys.rows) {
    if (connected(r)) picked.push_back(&r);
  }
  // 2^k cases, each an elimination of (about) this system: split at most k atoms with
  // 2^k * rows <= kSplitRows, one up to kMaxSplitSystemRows rows, none past it.
  size_t max_atoms = 1;
  while (max_atoms < kMaxSplitAtoms && (picked.size() << (max_atoms + 1)) <= kSplitRows) {
    ++max_atoms;
  }
  if (!t_no_splits && picked.size() <= kMaxSplitSystemRows) {
    const std::vector<const Atom*> atoms =
        SplitAtoms(sys, e, max_atoms, [&](int col) { return find(col) == zroot; });
    if (!atoms.empty() && SplitMayHelp(e, atoms)) {
      std::vector<CaseSplit> splits = CaseRows(sys, atoms);
      if (!splits.empty()) {
        bool up = false, down = false;
        UnboundedSides(sys, sys.rows.back(), &splits, nullptr, &up, &down);
        if (up && down) {
          // Every case unbounded both ways (or contradictory): the hull is everything. A
          // sign_only query stops at the first case, as ProjectByCases would.
          if (sign_only_) cut_short_ = true;
          return {kNegInf, kPosInf};
        }
        // Sides witnessed or unbounded along rays: the hull cannot change what Bounds answers.
        if (Settled(e, sys, sys.rows.back(), &splits, up, down)) return {kNegInf, kPosInf};
        m.PushWidened(picked.data(), picked.size());
        return ProjectByCases(&m, n, std::move(splits), work);
      }
    }
  }
  bool up = false, down = false;
  UnboundedSides(sys, sys.rows.back(), nullptr, nullptr, &up, &down);
  if (up && down) return {kNegInf, kPosInf};
  if (Settled(e, sys, sys.rows.back(), nullptr, up, down)) return {kNegInf, kPosInf};
  LeaveOutCopies(ncols, *work);
  NarrowMatrix(ncols, &m);
  const std::vector<int32_t>& cols = buf_->cols;
  uint64_t bad = 0;
  const long before = *work;
  // Every row here is normalized (the rules' rows by MakeRows; z - e has z's coefficient 1).
  buf_->scratch.normalized_input = true;
  const bool feasible = cols.empty()
                            ? fm::Eliminate(&m, static_cast<int>(n), &bad, &buf_->scratch, work)
                            : fm::EliminateNarrow(&m, cols.data(), ncols, static_cast<int>(n), &bad,
                                                  &buf_->scratch, work);
  buf_->scratch.normalized_input = false;
  ++stats_.eliminations;
  stats_.work += before - std::max(*work, 0L);
  if (*work <= 0) ++stats_.degraded;
  if (!feasible) return Contradictory(bad);
  const Interval iv = BoundsOfZ(m, n);
  if (iv.lo > iv.hi) return Contradictory(0);  // z's rows contradict each other
  return iv;
}

bool Decider::NeverZero(const Expr* e) {
  if (e->IsConstant()) return e->ConstantTerm() != 0;
  if (e->ConstantTerm() == kNegInf) return false;
  {  // the gcd of the coefficients does not divide the constant: 3*a + 6*b - 20
    int64_t g = 0;
    for (const Term& t : e->terms) {
      if (!t.mono->factors.empty()) g = Gcd64(g, t.coeff);
    }
    if (g > 1 && e->ConstantTerm() % g != 0) return true;
  }
  Prepare();
  VarBounds();
  System sys;
  QuerySystem(e, &sys);
  if (sys.infeasible) return false;  // contradictory facts: say nothing
  const size_t n = sys.cols.size();
  Row q;  // e == 0
  q.c.assign(n, 0);
  q.c0 = e->ConstantTerm();
  q.origin = fm::kImplicit;
  q.eq = true;
  for (const Term& t : e->terms) {
    if (t.mono->factors.empty()) continue;
    int j = sys.Find(t.mono);
    if (j < 0 || t.coeff == kNegInf) return false;
    q.c[j] = t.coeff;
  }
  sys.rows.push_back(q);
  // Integer elimination of every column: with e == 0 added, no integer valuation (FM's
  // tightening rounds each row's constant after dividing by its coefficients' gcd, which
  // finds parity: w == 2*x + 1 and w == 10 leave 2*x == 9).
  fm::Matrix m;
  m.n = n;
  m.Reserve(base_->rows.size() + sys.rows.size());
  for (const Row& r : base_->rows) m.PushWidened(r);
  for (const Row& r : sys.rows) m.PushWidened(r);
  uint64_t bad = 0;
  long work = QueryWork();
  const bool feasible = fm::Eliminate(&m, -1, &bad, &buf_->scratch, &work);
  ++stats_.eliminations;
  stats_.work += QueryWork() - std::max(work, 0L);
  if (work <= 0) ++stats_.degraded;  // rows dropped: a contradiction among the rest still is one
  return !feasible;
}

Interval Decider::BoundsOfZ(const fm::Matrix& m, size_t z) {
  Interval iv;
  for (size_t i = 0; i < m.size(); ++i) {
    int64_t a = m.Row(i)[z];
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
    if (seeded_) {
      if (v < seed_.size()) {
        derived[v].lo = std::max(derived[v].lo, seed_[v].lo);
        derived[v].hi = std::min(derived[v].hi, seed_[v].hi);
      }
    } else if (!touched[find(static_cast<int32_t>(v))] && v < derived_.bounds.size()) {
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
  // Facts of degree >= 2 in one variable: the projections treat their powers as separate
  // unknowns (4*s^3 <= c bounds s by c / 4 only); bounds certified on the polynomial itself.
  // (Part of the rule FactPolynomialBounds, whose rows cover powers and quadratics.)
  const bool polynomial =
      !RuleSkippedForTesting("FactPolynomialBounds") && PolynomialBounds(&derived);
  if (degraded || seeded_ || polynomial) {
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
  component_.resize(nv);
  for (size_t v = 0; v < nv; ++v) component_[v] = find(static_cast<int32_t>(v));
  atom_iv_.clear();
  mono_iv_.clear();
  base_.reset();  // rebuilt with the derived bounds
  ResetRays();
  ResetWitness();
  preparing_ = false;
  prepared_ = true;
}

void Decider::Seed(std::vector<Interval> bounds) {
  Reset(/*appended=*/true);
  seeded_ = true;
  seed_ = std::move(bounds);
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

Interval Decider::Bounds(const Expr* e, bool sign_only) {
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
    sign_only_ = sign_only;
    cut_short_ = false;
    has_target_ = true;
    target_ = iv;
    // Interval bounds attained at witnesses on every finite side: the projection cannot
    // tighten them (decide_witness.cc). The infinite sides unbounded on a family of
    // valuations where the facts hold: no projection at all; otherwise Project answers
    // without eliminating when rays show them unbounded.
    Interval p{kNegInf, kPosInf};
    witnessed_lo_ = witnessed_hi_ = false;
    bool settled = false;
    if (WitnessReady()) {
      if ((iv.lo != kNegInf || iv.hi != kPosInf) && Witnessed(e, iv)) {
        witnessed_lo_ = iv.lo != kNegInf;
        witnessed_hi_ = iv.hi != kPosInf;
      }
      settled = (iv.lo == kNegInf ? Unbounded(e, /*up=*/false) : witnessed_lo_) &&
                (iv.hi == kPosInf ? Unbounded(e, /*up=*/true) : witnessed_hi_);
    }
    if (!settled) p = Project(e, &work);
    witnessed_lo_ = witnessed_hi_ = false;
    has_target_ = false;
    sign_only_ = false;
    if (cut_short_) return iv;  // sound, but not the best bounds: not cached
    if (p.lo <= p.hi) {  // (lo > hi only if the facts are contradictory: then keep intervals)
      iv.lo = std::max(iv.lo, p.lo);
      iv.hi = std::min(iv.hi, p.hi);
    }
    // A fact that bounds e itself (e >= c, c >= e, e == c): the projection may lose it (its
    // rows over products with symbolic divisors are relaxed), the fact cannot. (Part of the
    // rule FactRow, the fact's own row.)
    const std::vector<Fact>& facts = s_->facts();
    const size_t stated_facts = RuleSkippedForTesting("FactRow") ? 0 : facts.size();
    for (size_t i = 0; i < stated_facts; ++i) {
      const Fact& f = facts[i];
      const bool left = f.lhs == e && f.rhs->IsConstant();
      if (f.op == Cmp::kNe || !(left || (f.rhs == e && f.lhs->IsConstant()))) continue;
      const int64_t c = (left ? f.rhs : f.lhs)->ConstantTerm();
      // As e op' c with the operands in that order.
      Cmp op = f.op;
      if (!left)
        op = op == Cmp::kGe   ? Cmp::kLe
             : op == Cmp::kGt ? Cmp::kLt
             : op == Cmp::kLe ? Cmp::kGe
             : op == Cmp::kLt ? Cmp::kGt
                              : op;
      Interval stated = iv;
      if (op == Cmp::kGe || op == Cmp::kEq) stated.lo = std::max(stated.lo, c);
      if (op == Cmp::kGt && c < kPosInf) stated.lo = std::max(stated.lo, c + 1);
      if (op == Cmp::kLe || op == Cmp::kEq) stated.hi = std::min(stated.hi, c);
      if (op == Cmp::kLt && c > kNegInf) stated.hi = std::min(stated.hi, c - 1);
      if (stated.lo <= stated.hi) iv = stated;
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
  // The elimination relaxes each max/min atom to a column between its operands; the
  // projections of Prepare split them into cases (and their rules see each variable), and
  // when one finds a contradiction, in every case, so are the facts (min(a, b) <= 2, a >= 8,
  // b >= 3).
  if (failure.empty() && FactsHaveMaxMin()) {
    contradiction_found_ = false;
    contradiction_origin_ = 0;
    try {
      Prepare();              // (kept for the queries when the facts are satisfiable)
    } catch (const Error&) {  // e.g. an overflow: no contradiction shown, the queries retry
      contradiction_found_ = false;
      Reset(/*appended=*/false);
    }
    if (contradiction_found_) {
      uint64_t all = 0;
      for (size_t i = 0; i < s_->facts().size(); ++i) all |= fm::FactOrigin(i);
      failure = DescribeOrigin(contradiction_origin_ & all ? contradiction_origin_ : all);
      Reset(/*appended=*/false);  // bounds derived from contradictory facts are not kept
    }
    contradiction_found_ = false;
  }
  if (!failure.empty()) throw Error(Code::kUnsatisfiable, "unsatisfiable constraints: " + failure);
}

Interval Decider::Contradictory(uint64_t origin) {
  contradiction_found_ = true;
  contradiction_origin_ |= origin;
  return {kNegInf, kPosInf};
}

bool Decider::FactsHaveMaxMin() const {
  std::vector<const Expr*> stack;
  for (const Fact& f : s_->facts()) {
    stack.push_back(f.lhs);
    stack.push_back(f.rhs);
  }
  size_t visited = 0;
  while (!stack.empty() && ++visited < 100000) {
    const Expr* e = stack.back();
    stack.pop_back();
    for (const Term& t : e->terms) {
      for (const Factor& x : t.mono->factors) {
        const Atom* at = x.atom;
        if (at->kind == AtomKind::kMax || at->kind == AtomKind::kMin) return true;
        if (at->a) stack.push_back(at->a);
        if (at->b) stack.push_back(at->b);
      }
    }
  }
  return false;
}

}  // namespace dim
}  // namespace shp
