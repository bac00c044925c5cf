// The query driver of the decision procedure (see decide.h): deriving the variables' bounds
// (Prepare), bounds of expressions (Bounds, Project) and satisfiability of the facts.
#include "cc/dim/decide.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <numeric>
#include <string>
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

// Floor and ceiling of a / b for b != 0.
__int128 FloorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__int128 CeilDiv128(__int128 a, __int128 b) { return -FloorDiv128(-a, b); }

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

Interval Decider::Project(const Expr* e, long* work) {
  System sys;
  QuerySystem(e, &sys);
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
  m.PushWidened(picked.data(), picked.size());
  // 2^k cases, each an elimination of (about) this system: split at most k atoms with
  // 2^k * rows <= kSplitRows, one up to kMaxSplitSystemRows rows, none past it.
  size_t max_atoms = 1;
  while (max_atoms < kMaxSplitAtoms && (m.size() << (max_atoms + 1)) <= kSplitRows) ++max_atoms;
  if (!t_no_splits && m.size() <= kMaxSplitSystemRows) {
    const std::vector<const Atom*> atoms =
        SplitAtoms(sys, e, max_atoms, [&](int col) { return find(col) == zroot; });
    if (!atoms.empty() && SplitMayHelp(e, atoms)) {
      std::vector<CaseSplit> splits = CaseRows(sys, atoms);
      if (!splits.empty()) return ProjectByCases(&m, n, std::move(splits), work);
    }
  }
  uint64_t bad = 0;
  const long before = *work;
  const bool feasible = fm::Eliminate(&m, static_cast<int>(n), &bad, &buf_->scratch, work);
  ++stats_.eliminations;
  stats_.work += before - std::max(*work, 0L);
  if (*work <= 0) ++stats_.degraded;
  if (!feasible) return {kNegInf, kPosInf};  // contradictory facts: say nothing
  return BoundsOfZ(m, n);
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

std::vector<const Atom*> Decider::SplitAtoms(const System& sys, const Expr* e, size_t max_atoms,
                                             const std::function<bool(int)>& connected) {
  // Candidates: max/min atoms that are columns connected to z; those of the query first,
  // then by structure (not by column index: the choice must not depend on the order in
  // which facts were given).
  std::vector<std::pair<int, const Atom*>> found;  // (not in the query, atom)
  for (size_t j = 0; j < sys.cols.size(); ++j) {
    const Mono* mono = sys.cols[j];
    if (mono->factors.size() != 1 || mono->factors[0].exp != 1) continue;
    const Atom* at = mono->factors[0].atom;
    if (at->kind != AtomKind::kMax && at->kind != AtomKind::kMin) continue;
    if (!connected(static_cast<int>(j))) continue;
    bool in_query = false;
    for (const Term& t : e->terms) in_query |= t.mono == mono;
    found.emplace_back(in_query ? 0 : 1, at);
  }
  if (found.empty()) return {};
  std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    return CompareAtoms(x.second, y.second) < 0;
  });
  std::vector<const Atom*> out;
  for (size_t i = 0; i < found.size() && i < max_atoms; ++i) out.push_back(found[i].second);
  return out;
}

std::vector<Decider::CaseSplit> Decider::CaseRows(const System& sys,
                                                  const std::vector<const Atom*>& atoms) {
  std::vector<CaseSplit> out;
  const size_t ncols = sys.cols.size() + 1;
  for (const Atom* at : atoms) {
    const int col = sys.Find(s_->InternMono({Factor{at, 1}}));
    CaseSplit cs;
    bool ok = col >= 0;
    // Case w (operand w wins): atom - w == 0, and w - other >= 0 (max) or other - w >= 0.
    for (int w = 0; w < 2 && ok; ++w) {
      const Expr* win = w == 0 ? at->a : at->b;
      const Expr* lose = w == 0 ? at->b : at->a;
      Lin eq, ge;
      eq.Add(sys.cols[static_cast<size_t>(col)], 1);
      eq.AddExpr(win, -1);
      const int sign = at->kind == AtomKind::kMax ? 1 : -1;
      ge.AddExpr(win, sign);
      ge.AddExpr(lose, -sign);
      for (int k = 0; k < 2 && ok; ++k) {
        const Lin& lin = k == 0 ? eq : ge;
        Row row;
        row.c.assign(ncols, 0);
        row.c0 = lin.c0;
        row.origin = fm::kImplicit;
        row.eq = k == 0;
        ok = lin.ok;
        for (const auto& t : lin.terms) {
          const int j = sys.Find(t.first);
          if (!ok || j < 0 || __builtin_add_overflow(row.c[j], t.second, &row.c[j])) {
            ok = false;
            break;
          }
        }
        cs.rows[w][k] = std::move(row);
      }
    }
    cs.atom = at;
    // The case where the narrower operand wins first: it leaves the rest of the query the
    // most freedom, so a comparison that no case can decide is seen to straddle 0 sooner
    // (sign_only queries stop there).
    const Interval ia = IntervalOf(at->a), ib = IntervalOf(at->b);
    auto width = [](Interval iv) {
      return iv.lo == kNegInf || iv.hi == kPosInf
                 ? static_cast<unsigned __int128>(~static_cast<uint64_t>(0)) + 1
                 : static_cast<unsigned __int128>(static_cast<__int128>(iv.hi) - iv.lo);
    };
    if (width(ib) < width(ia)) std::swap(cs.rows[0], cs.rows[1]);
    if (ok) out.push_back(std::move(cs));
  }
  return out;
}

bool Decider::SplitMayHelp(const Expr* e, const std::vector<const Atom*>& atoms) {
  // An atom that is only a term of the query (in no fact, no product, no other atom's
  // operand) is tight on one side without the split: max(a, b) with a positive coefficient
  // is as low as max(a, b) when the projection lowers it, since nothing else holds it up
  // (its upper side is loose). A loose side gains from the split only when the rest of the
  // query does not make it infinite anyway (4*d + max(b, 8) with d unbounded) and the atom
  // is not independent of everything else in the query. A heuristic: either answer is
  // sound; it saves the cases where they would not change the answer.
  std::vector<const Mono*> own;
  own.reserve(atoms.size());
  for (const Atom* at : atoms) {
    const Mono* m = s_->InternMono({Factor{at, 1}});
    if (base_ && base_->col_of.count(m)) return true;  // a fact mentions it
    own.push_back(m);
  }
  // Walk the query once: each atom must be one of its terms and appear nowhere else (in a
  // product, inside another atom).
  std::vector<int64_t> coeff(atoms.size(), 0);
  std::vector<const Expr*> stack, seen;
  stack.reserve(16);  // a query and its atoms' operands: one allocation each, not doublings
  seen.reserve(16);
  stack.push_back(e);
  while (!stack.empty()) {
    const Expr* x = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), x) != seen.end()) continue;
    if (seen.size() == 256) return true;  // a large query: split rather than search on
    seen.push_back(x);
    for (const Term& t : x->terms) {
      for (const Factor& f : t.mono->factors) {
        for (size_t i = 0; i < atoms.size(); ++i) {
          if (f.atom != atoms[i]) continue;
          if (x != e || t.mono != own[i]) return true;
          coeff[i] = t.coeff;
        }
        if (f.atom->kind != AtomKind::kVar) {
          stack.push_back(f.atom->a);
          stack.push_back(f.atom->b);
        }
      }
    }
  }
  for (int64_t c : coeff) {
    if (c == 0) return true;
  }
  std::vector<Term> rest;
  rest.reserve(e->terms.size());
  for (const Term& t : e->terms) {
    if (std::find(own.begin(), own.end(), t.mono) == own.end()) rest.push_back(t);
  }
  // The fact components (variables linked through facts) of the variables under some
  // terms; a variable in no fact (or newer than the last Prepare) is a component of its own.
  auto components = [this](const std::vector<const Expr*>& roots) {
    std::vector<int32_t> out;
    out.reserve(8);  // a few variables: one allocation, not doublings
    std::vector<const Expr*> todo = roots;
    while (!todo.empty()) {
      const Expr* x = todo.back();
      todo.pop_back();
      for (const Term& t : x->terms) {
        for (const Factor& f : t.mono->factors) {
          if (f.atom->kind == AtomKind::kVar) {
            const int32_t v = f.atom->var;
            out.push_back(static_cast<size_t>(v) < component_.size() ? component_[v] : -1 - v);
          } else {
            todo.push_back(f.atom->a);
            todo.push_back(f.atom->b);
          }
        }
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  auto meet = [](const std::vector<int32_t>& x, const std::vector<int32_t>& y) {
    for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
      if (x[i] == y[j]) return true;
      x[i] < y[j] ? ++i : ++j;
    }
    return false;
  };
  std::vector<int32_t> rest_comps;
  rest_comps.reserve(8);
  {
    std::vector<const Expr*> roots;
    for (const Term& t : rest) {
      for (const Factor& f : t.mono->factors) {
        if (f.atom->kind == AtomKind::kVar) {
          const int32_t v = f.atom->var;
          rest_comps.push_back(static_cast<size_t>(v) < component_.size() ? component_[v] : -1 - v);
        } else {
          roots.push_back(f.atom->a);
          roots.push_back(f.atom->b);
        }
      }
    }
    for (int32_t c : components(roots)) rest_comps.push_back(c);
    std::sort(rest_comps.begin(), rest_comps.end());
    rest_comps.erase(std::unique(rest_comps.begin(), rest_comps.end()), rest_comps.end());
  }
  std::vector<std::vector<int32_t>> atom_comps;
  atom_comps.reserve(atoms.size());
  std::vector<int32_t> all_atom_comps;
  for (const Atom* at : atoms) {
    atom_comps.push_back(components({at->a, at->b}));
    all_atom_comps.insert(all_atom_comps.end(), atom_comps.back().begin(), atom_comps.back().end());
  }
  std::sort(all_atom_comps.begin(), all_atom_comps.end());
  // Infinite anyway: the rest of the query, independent of every atom, is unbounded on
  // that side.
  bool hopeless_hi = false, hopeless_lo = false;
  if (!meet(rest_comps, all_atom_comps)) {
    const Interval r = IntervalOf(s_->MakeExpr(std::move(rest)));
    hopeless_hi = r.hi == kPosInf;
    hopeless_lo = r.lo == kNegInf;
  }
  bool need_hi = false, need_lo = false;
  for (size_t i = 0; i < atoms.size(); ++i) {
    const bool up = (atoms[i]->kind == AtomKind::kMax) == (coeff[i] > 0);  // loose side: hi
    if (up ? hopeless_hi : hopeless_lo) continue;
    // The components of the rest of the query and of the other atoms.
    std::vector<int32_t> others = rest_comps;
    for (size_t j = 0; j < atoms.size(); ++j) {
      if (j != i) others.insert(others.end(), atom_comps[j].begin(), atom_comps[j].end());
    }
    std::sort(others.begin(), others.end());
    // Independent of the rest of the query and of the other atoms: then its interval bound
    // (a row of every projection) already gives what the cases would.
    if (!meet(atom_comps[i], others)) continue;
    // Infinite anyway: an operand that takes the atom along with it (max(h, w) with h
    // unbounded above) and shares no component with the rest or the other atoms.
    bool hopeless = false;
    for (const Expr* operand : {atoms[i]->a, atoms[i]->b}) {
      const Interval o = IntervalOf(operand);
      const bool inf =
          atoms[i]->kind == AtomKind::kMax ? (up && o.hi == kPosInf) : (!up && o.lo == kNegInf);
      if (inf && !meet(components({operand}), others)) hopeless = true;
    }
    if (hopeless) {
      (up ? hopeless_hi : hopeless_lo) = true;
    } else {
      (up ? need_hi : need_lo) = true;
    }
  }
  return (need_hi && !hopeless_hi) || (need_lo && !hopeless_lo);
}

bool Decider::SubstituteCaseColumns(fm::Matrix* m, size_t z, std::vector<CaseSplit>* splits,
                                    std::vector<bool>* keep) {
  using I128 = __int128;
  const size_t n = m->n;
  auto mark = [&] {
    keep->assign(n, false);
    (*keep)[z] = true;
    for (const CaseSplit& cs : *splits) {
      for (const auto& side : cs.rows) {
        for (const Row& r : side) {
          for (size_t j = 0; j < n; ++j) (*keep)[j] = (*keep)[j] || r.c[j] != 0;
        }
      }
    }
  };
  mark();
  // Like the elimination's first step, but for the columns the cases mention, carrying the
  // case rows along: an equality with a unit coefficient on such a column replaces it
  // everywhere (exact over the integers; the elimination would do the same to the other
  // columns). Bounded by the number of equalities.
  for (size_t round = 0; round < m->size(); ++round) {
    size_t er = m->size();
    size_t col = n;
    for (size_t i = 0; i < m->size() && er == m->size(); ++i) {
      if (!m->eq[i]) continue;
      const int64_t* r = m->Row(i);
      for (size_t j = 0; j < n; ++j) {
        if (j != z && (*keep)[j] && (r[j] == 1 || r[j] == -1)) {
          er = i;
          col = j;
          break;
        }
      }
    }
    if (er == m->size()) return true;
    const std::vector<int64_t> e(m->Row(er), m->Row(er) + n);
    const int64_t e0 = m->c0[er];
    // Subtracts the multiple of e that cancels `col` from (c, c0); false on overflow.
    auto reduce = [&](int64_t* c, int64_t* c0) {
      if (c[col] == 0) return true;
      const I128 mult = static_cast<I128>(c[col]) * e[col];  // e[col] is +-1
      for (size_t j = 0; j < n; ++j) {
        const I128 v = static_cast<I128>(c[j]) - mult * e[j];
        if (v > INT64_MAX || v < INT64_MIN) return false;
        c[j] = static_cast<int64_t>(v);
      }
      const I128 v0 = static_cast<I128>(*c0) - mult * e0;
      if (v0 > INT64_MAX || v0 < INT64_MIN) return false;
      *c0 = static_cast<int64_t>(v0);
      return true;
    };
    // In place: row i moves to `out` (<= i) when it stays.
    size_t out = 0;
    const uint64_t eo = m->origin[er];
    for (size_t i = 0; i < m->size(); ++i) {
      if (i == er) continue;
      int64_t* c = m->Row(i);
      int64_t c0 = m->c0[i];
      const bool touched = c[col] != 0;
      if (!reduce(c, &c0)) continue;  // dropping a row is sound
      if (touched || round == 0) {    // after the first round, untouched rows are normalized
        const fm::Norm norm = fm::NormalizeFlat(c, n, &c0, m->eq[i]);
        if (norm == fm::Norm::kInfeasible) return false;
        if (norm != fm::Norm::kOk) continue;
      }
      if (out != i) std::copy(c, c + n, m->Row(out));
      m->c0[out] = c0;
      m->origin[out] = touched ? m->origin[i] | eo : m->origin[i];
      m->h0[out] = m->h1[out] = 0;
      m->eq[out] = m->eq[i];
      ++out;
    }
    m->Truncate(out);
    for (CaseSplit& cs : *splits) {
      for (auto& side : cs.rows) {
        for (Row& r : side) {
          if (!reduce(r.c.data(), &r.c0)) {  // a case row dropped: that case only widens
            std::fill(r.c.begin(), r.c.end(), 0);
            r.c0 = 0;
          }
        }
      }
    }
    mark();
  }
  return true;
}

Interval Decider::ProjectByCases(fm::Matrix* m, size_t z, std::vector<CaseSplit> splits,
                                 long* work) {
  // Project onto z and the columns the cases mention first (shared by every case, when
  // that loses nothing; see below), then add each case's rows and project onto z. The
  // answer is the hull over the cases that are feasible: every valuation is in some case,
  // and each case's projection is sound.
  std::vector<bool> keep;
  if (!SubstituteCaseColumns(m, z, &splits, &keep)) {
    return {kNegInf, kPosInf};  // contradictory facts: say nothing
  }
  // The shared projection is exact over the reals, but it turns an equality that links a
  // kept column to a column with a coefficient other than +-1 (`max(n, 4) - 8*floordiv(...)
  // == mod(...)`) into two inequalities, losing its divisibility. Then each case
  // eliminates everything itself.
  bool shared = true;
  for (size_t i = 0; i < m->size() && shared; ++i) {
    // (The query's row z - e == 0 keeps z in the plain projection too: no loss there.)
    if (!m->eq[i] || m->Row(i)[z] != 0) continue;
    const int64_t* r = m->Row(i);
    bool touches_kept = false, wide_other = false;
    for (size_t j = 0; j < m->n; ++j) {
      if (r[j] == 0) continue;
      if (keep[j]) {
        touches_kept = true;
      } else {
        wide_other = wide_other || (r[j] != 1 && r[j] != -1);
      }
    }
    shared = !(touches_kept && wide_other);
  }
  uint64_t bad = 0;
  long before = *work;
  bool feasible = true;
  if (shared) {
    feasible = fm::Eliminate(m, keep, &bad, &buf_->scratch, work);
    ++stats_.eliminations;
    stats_.work += before - std::max(*work, 0L);
    if (*work <= 0) ++stats_.degraded;
  }
  if (!feasible) return {kNegInf, kPosInf};  // contradictory facts: say nothing
  const size_t ncases = size_t{1} << splits.size();
  long left = std::max(*work, 0L);
  Interval hull{kPosInf, kNegInf};  // empty
  bool any = false;
  fm::Matrix& c = buf_->cases;
  for (size_t k = 0; k < ncases; ++k) {
    long case_work = left / static_cast<long>(ncases - k);
    left -= case_work;
    c = *m;
    bool possible = true;
    for (size_t i = 0; i < splits.size() && possible; ++i) {
      for (const Row& r : splits[i].rows[(k >> i) & 1]) {
        Row row = r;
        const fm::Norm norm = fm::Normalize(&row);
        if (norm == fm::Norm::kInfeasible) possible = false;
        if (norm == fm::Norm::kOk) c.PushWidened(row);
      }
    }
    if (!possible) continue;  // the case's condition is false by itself
    before = case_work;
    feasible = fm::Eliminate(&c, static_cast<int>(z), &bad, &buf_->scratch, &case_work);
    ++stats_.eliminations;
    stats_.work += before - std::max(case_work, 0L);
    if (case_work <= 0) ++stats_.degraded;
    left += std::max(case_work, 0L);
    if (!feasible) continue;  // no integer valuation falls in this case
    const Interval iv = BoundsOfZ(c, z);
    hull.lo = std::min(hull.lo, iv.lo);
    hull.hi = std::max(hull.hi, iv.hi);
    any = true;
    if (sign_only_ && !preparing_ && hull.lo < 0 && hull.hi > 0) {
      // Values of both signs already: no comparison with 0 can be decided, whatever the
      // other cases give. Stop; the caller gets no bound from the projection.
      cut_short_ = true;
      *work = left;
      return {kNegInf, kPosInf};
    }
  }
  *work = left;
  if (!any) return {kNegInf, kPosInf};  // every case contradictory: the facts are
  return hull;
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
  if (degraded || seeded_) {
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
    Interval p = Project(e, &work);
    sign_only_ = false;
    if (cut_short_) return iv;  // sound, but not the best bounds: not cached
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

namespace {

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
