// The case analysis of max/min atoms (see decide.h): a projection splits the atoms connected
// to its query into the operand that wins, max(a, b) = a where a >= b, and takes the hull of
// the cases' bounds. Every valuation falls in some case and each case only adds valid rows,
// so the hull is sound; a case whose rows are contradictory has no valuation and is left
// out. Called by Project (decide.cc) on the matrix of a query's connected rows.
#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/decide.h"
#include "cc/dim/decide_rows.h"
#include "cc/dim/fm.h"

namespace shp {
namespace dim {

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
      cs.win[w] = win;
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
    if (width(ib) < width(ia)) {
      std::swap(cs.rows[0], cs.rows[1]);
      std::swap(cs.win[0], cs.win[1]);
    }
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
  std::vector<uint8_t>& kept = buf_->case_keep;  // bytes while working, *keep on return
  auto mark = [&] {
    kept.assign(n, 0);
    kept[z] = 1;
    for (const CaseSplit& cs : *splits) {
      for (const auto& side : cs.rows) {
        for (const Row& r : side) {
          const int64_t* c = r.c.data();
          for (size_t j = 0; j < n; ++j) kept[j] |= c[j] != 0;
        }
      }
    }
  };
  auto done = [&] {
    keep->assign(kept.begin(), kept.end());
    return true;
  };
  mark();
  buf_->case_row.resize(n);
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
        if (j != z && kept[j] && (r[j] == 1 || r[j] == -1)) {
          er = i;
          col = j;
          break;
        }
      }
    }
    if (er == m->size()) return done();
    std::vector<int64_t>& e = buf_->case_eq;
    e.assign(m->Row(er), m->Row(er) + n);
    const int64_t e0 = m->c0[er];
    // Subtracts the multiple of e that cancels `col` from (c, c0); false on overflow.
    auto reduce = [&](int64_t* c, int64_t* c0) {
      if (c[col] == 0) return true;
      const I128 mult = static_cast<I128>(c[col]) * e[col];  // e[col] is +-1
      // In int64 with overflow flags first; where a product or difference leaves int64 (the
      // result may still fit), all over again in 128 bits from the row as it was.
      bool fits = mult >= INT64_MIN && mult <= INT64_MAX;
      if (fits) {
        const int64_t m64 = static_cast<int64_t>(mult);
        int64_t* w = buf_->case_row.data();
        bool overflow = false;
        for (size_t j = 0; j < n; ++j) {
          int64_t x;
          overflow |= __builtin_mul_overflow(m64, e[j], &x);
          overflow |= __builtin_sub_overflow(c[j], x, &w[j]);
        }
        if (!overflow) {
          std::copy(w, w + n, c);
        } else {
          fits = false;
        }
      }
      if (!fits) {
        for (size_t j = 0; j < n; ++j) {
          const I128 v = static_cast<I128>(c[j]) - mult * e[j];
          if (v > INT64_MAX || v < INT64_MIN) return false;
          c[j] = static_cast<int64_t>(v);
        }
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
  return done();
}

Interval Decider::ProjectByCases(fm::Matrix* m, size_t z, std::vector<CaseSplit> splits,
                                 long* work) {
  // Project onto z and the columns the cases mention first (shared by every case, when
  // that loses nothing; see below), then add each case's rows and project onto z. The
  // answer is the hull over the cases that are feasible: every valuation is in some case,
  // and each case's projection is sound.
  std::vector<bool> keep;
  if (!SubstituteCaseColumns(m, z, &splits, &keep)) {
    return Contradictory(0);
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
    // Normalized rows: the picked ones (MakeRows; z - e has z's coefficient 1), each
    // substitution above normalizing what it touched (and every row in its first round).
    buf_->scratch.normalized_input = true;
    feasible = fm::Eliminate(m, keep, &bad, &buf_->scratch, work);
    buf_->scratch.normalized_input = false;
    ++stats_.eliminations;
    stats_.work += before - std::max(*work, 0L);
    if (*work <= 0) ++stats_.degraded;
  }
  if (!feasible) return Contradictory(bad);
  const size_t ncases = size_t{1} << splits.size();
  long left = std::max(*work, 0L);
  Interval hull{kPosInf, kNegInf};  // empty
  bool any = false;
  uint64_t origins = 0;  // of the cases' contradictions
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
    // Normalized rows: what the shared step left (its rows are), and the case rows.
    buf_->scratch.normalized_input = true;
    feasible = fm::Eliminate(&c, static_cast<int>(z), &bad, &buf_->scratch, &case_work);
    buf_->scratch.normalized_input = false;
    ++stats_.eliminations;
    stats_.work += before - std::max(case_work, 0L);
    if (case_work <= 0) ++stats_.degraded;
    left += std::max(case_work, 0L);
    if (!feasible) {  // no integer valuation falls in this case
      origins |= bad;
      continue;
    }
    const Interval iv = BoundsOfZ(c, z);
    if (iv.lo > iv.hi) continue;  // z's rows contradict each other: no valuation either
    hull.lo = std::min(hull.lo, iv.lo);
    hull.hi = std::max(hull.hi, iv.hi);
    any = true;
    if (has_target_ && !sign_only_ && !preparing_ && (witnessed_lo_ || hull.lo <= target_.lo) &&
        (witnessed_hi_ || hull.hi >= target_.hi)) {
      // The hull holds the interval bounds that Bounds intersects it with: the other cases
      // can only widen it, which would not change the answer. Stop. (A witnessed side is
      // the interval bound whatever the cases give: decide_witness.cc.)
      *work = left;
      if (witnessed_lo_) hull.lo = kNegInf;
      if (witnessed_hi_) hull.hi = kPosInf;
      return hull;
    }
    if (sign_only_ && !preparing_ && hull.lo < 0 && hull.hi > 0) {
      // Values of both signs already: no comparison with 0 can be decided, whatever the
      // other cases give. Stop; the caller gets no bound from the projection.
      cut_short_ = true;
      *work = left;
      return {kNegInf, kPosInf};
    }
  }
  *work = left;
  if (!any) return Contradictory(origins);  // every case contradictory: so are the facts
  return hull;
}

}  // namespace dim
}  // namespace shp
