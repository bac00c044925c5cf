// size-gate: file: one elimination, in phases (substitution, sign counts, the combination
// step in two forms, the caps) that share this file's private helpers (Spend, Popcount,
// FindRow, the column bookkeeping); split, they would need a header of internals.
#include "cc/dim/fm.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "cc/dim/int_math.h"

namespace shp {
namespace dim {
namespace fm {

using I128 = __int128;

Norm NormalizeFlat(int64_t* coef, size_t n, int64_t* c0, bool eq) {
  int64_t g = 0;
  for (size_t j = 0; j < n; ++j) {
    const int64_t x = coef[j];
    if (x == 0) continue;
    // A unit coefficient makes the gcd 1 (most rows have one): no division.
    if (x == 1 || x == -1) return Norm::kOk;
    g = g == 0 ? (x > 0 ? x : x == INT64_MIN ? Gcd64(0, x) : -x) : Gcd64(g, x);
    if (g == 1) return Norm::kOk;
  }
  if (g == 0) return (eq ? *c0 == 0 : *c0 >= 0) ? Norm::kTrivial : Norm::kInfeasible;
  if (eq && *c0 % g != 0) return Norm::kInfeasible;
  for (size_t j = 0; j < n; ++j) coef[j] /= g;
  int64_t q = *c0 / g;
  if (*c0 % g != 0 && *c0 < 0) --q;  // floor: integer tightening
  *c0 = q;
  return Norm::kOk;
}

void RowSet::Add(const int64_t* coef, int64_t k, uint64_t org, uint64_t a, uint64_t b) {
  if (2 * (m_->size() + 1) > slots_.size()) Grow();
  size_t mask = slots_.size() - 1;
  size_t i = Hash(coef) & mask;
  while (slots_[i] >= 0) {
    size_t r = static_cast<size_t>(slots_[i]);
    if (std::equal(coef, coef + m_->n, m_->Row(r))) {
      if (k < m_->c0[r]) {
        m_->c0[r] = k;
        m_->origin[r] = org;
        m_->h0[r] = a;
        m_->h1[r] = b;
      }
      return;
    }
    i = (i + 1) & mask;
  }
  slots_[i] = static_cast<int32_t>(m_->size());
  m_->Push(coef, k, org, a, b, false);
}

size_t RowSet::Hash(const int64_t* coef) const {
  size_t h = 1469598103934665603ULL;
  for (size_t j = 0; j < m_->n; ++j) h = (h ^ static_cast<size_t>(coef[j])) * 1099511628211ULL;
  return h ^ (h >> 29);
}

void RowSet::Grow() {
  slots_.assign(slots_.size() * 2, -1);
  size_t mask = slots_.size() - 1;
  for (size_t r = 0; r < m_->size(); ++r) {
    size_t i = Hash(m_->Row(r)) & mask;
    while (slots_[i] >= 0) i = (i + 1) & mask;
    slots_[i] = static_cast<int32_t>(r);
  }
}

Matrix ToMatrix(const std::vector<Row>& rows, size_t n) {
  Matrix m;
  m.n = n;
  m.Reserve(rows.size());
  for (const Row& r : rows) m.Push(r.c.data(), r.c0, r.origin, 0, 0, r.eq);
  return m;
}

namespace {

// The row -r >= -c0 (the other half of the equality r == -c0) into *out; false when a
// coefficient or the constant is INT64_MIN, whose negation does not fit: normalizing does not
// rule it out (2*K*b - 2^63*f - 3*g == 0 has gcd 1), and dropping that half is sound.
// Bits set in x, in registers (__builtin_popcountll is a library call without -mpopcnt).
int Popcount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}
// r -= mult * e over n coefficients; false if an entry leaves int64 (the caller then drops
// the row, whatever r holds). In int64 first, branch-free; only if that overflows somewhere is
// it redone in 128 bits, where mult * e[j] may pass int64 and r[j] bring it back.
bool SubtractMultiple(int64_t* r, const int64_t* e, size_t n, I128 mult) {
  if (mult >= INT64_MIN && mult <= INT64_MAX) {
    const int64_t m = static_cast<int64_t>(mult);
    bool overflow = false;
    for (size_t j = 0; j < n; ++j) {
      int64_t x;
      overflow |= __builtin_mul_overflow(m, e[j], &x);
      overflow |= __builtin_sub_overflow(r[j], x, &r[j]);
    }
    if (!overflow) return true;
    // The builtins store the results modulo 2^64: adding m * e back (mod 2^64) restores r.
    for (size_t j = 0; j < n; ++j) {
      r[j] = static_cast<int64_t>(static_cast<uint64_t>(r[j]) +
                                  static_cast<uint64_t>(m) * static_cast<uint64_t>(e[j]));
    }
  }
  for (size_t j = 0; j < n; ++j) {
    const I128 v = static_cast<I128>(r[j]) - mult * e[j];
    if (v > INT64_MAX || v < INT64_MIN) return false;
    r[j] = static_cast<int64_t>(v);
  }
  return true;
}
bool NegatedRow(const int64_t* r, size_t n, int64_t c0, std::vector<int64_t>* out) {
  if (c0 == INT64_MIN) return false;
  out->assign(r, r + n);
  for (int64_t& x : *out) {
    if (x == INT64_MIN) return false;
    x = -x;
  }
  return true;
}

// Drops every row that involves a column not kept and splits equalities into two
// inequalities: what Eliminate returns when its work runs out (dropping rows is sound).
void KeepOnly(Matrix* m, const std::vector<uint8_t>& keep, Scratch* scratch) {
  const size_t n = m->n;
  Matrix& next = scratch->next;
  next.n = n;
  next.Clear();
  for (size_t i = 0; i < m->size(); ++i) {
    const int64_t* r = m->Row(i);
    bool other = false;
    for (size_t j = 0; j < n; ++j) other |= r[j] != 0 && !keep[j];
    if (other) continue;
    next.Push(r, m->c0[i], m->origin[i], m->h0[i], m->h1[i], false);
    std::vector<int64_t>& neg = scratch->eq_row;
    if (m->eq[i] && NegatedRow(r, n, m->c0[i], &neg)) {  // the other half
      next.Push(neg.data(), -m->c0[i], m->origin[i], m->h0[i], m->h1[i], false);
    }
  }
  std::swap(*m, next);
}

// Rows of at most this many columns get their dead columns dropped (DropColumns).
constexpr size_t kMaxCompactCols = 256;

// Drops the columns with dead[j] from every row, in place (a row's kept coefficients only
// move towards the front), keeping the order of the others; `live` (the original index of
// each column), `done` and `keep` lose the same entries.
void DropColumns(Matrix* m, const std::vector<uint8_t>& dead, std::vector<int32_t>* live,
                 std::vector<uint8_t>* done, std::vector<uint8_t>* keep) {
  const size_t n = m->n;
  int32_t from[kMaxCompactCols];  // the kept columns (Eliminate compacts only narrow rows)
  size_t nk = 0;
  for (size_t j = 0; j < n; ++j) {
    if (!dead[j]) from[nk++] = static_cast<int32_t>(j);
  }
  int64_t* c = m->c.data();
  size_t out = 0;
  for (size_t i = 0, rows = m->size(); i < rows; ++i) {
    const int64_t* r = c + i * n;
    for (size_t k = 0; k < nk; ++k) c[out + k] = r[from[k]];
    out += nk;
  }
  size_t k = 0;
  for (size_t j = 0; j < n; ++j) {
    if (dead[j]) continue;
    (*live)[k] = (*live)[j];
    (*done)[k] = (*done)[j];
    (*keep)[k] = (*keep)[j];
    ++k;
  }
  live->resize(k);
  done->resize(k);
  keep->resize(k);
  m->c.resize(out);
  m->n = k;
}

// The inverse of DropColumns: back to n columns, the dropped ones 0.
void RestoreColumns(Matrix* m, const std::vector<int32_t>& live, size_t n, Scratch* scratch) {
  if (m->n == n) return;
  std::vector<int64_t>& wide = scratch->tmp;  // free once the elimination is over
  wide.assign(m->size() * n, 0);
  for (size_t i = 0, rows = m->size(); i < rows; ++i) {
    const int64_t* r = m->Row(i);
    int64_t* w = wide.data() + i * n;
    for (size_t k = 0; k < live.size(); ++k) w[live[k]] = r[k];
  }
  std::swap(m->c, wide);
  m->n = n;
}

// Eliminate's body over the live columns (see Eliminate below).
bool EliminateLive(Matrix* m, std::vector<uint8_t>* keep_cols, std::vector<uint8_t>* done_cols,
                   std::vector<int32_t>* live, uint64_t* bad_origin, Scratch* scratch, long* work,
                   long scan);

// Takes `cost` from the work left; false (and the work at or below 0) if it does not fit.
bool Spend(long* work, long cost) {
  if (!work) return true;
  if (*work < cost) {
    *work = std::min(*work, 0L);
    return false;
  }
  *work -= cost;
  return true;
}

// Eliminate with scratch->kept set (one flag per column of m).
bool EliminateKept(Matrix* m, uint64_t* bad_origin, Scratch* scratch, long* work) {
  const size_t n0 = m->n;
  // Columns that are 0 in every row are dropped as the elimination goes (a step leaves the
  // column it eliminated 0 everywhere), so that later steps touch only the live ones, and
  // put back (as 0) on return. Order is kept, so every choice is the one the full width
  // would make; work is still counted at the full width, so budgets cut at the same point.
  const long scan = static_cast<long>(n0);  // the cost of touching one row
  std::vector<int32_t>& live = scratch->live;
  live.resize(n0);
  for (size_t j = 0; j < n0; ++j) live[j] = static_cast<int32_t>(j);
  scratch->done = scratch->kept;
  const bool ok =
      EliminateLive(m, &scratch->kept, &scratch->done, &live, bad_origin, scratch, work, scan);
  scratch->weight.clear();
  RestoreColumns(m, live, n0, scratch);
  return ok;
}

}  // namespace

bool EliminateNarrow(Matrix* m, const int32_t* cols, size_t width, int keep, uint64_t* bad_origin,
                     Scratch* scratch, long* work) {
  const size_t n0 = m->n;
  std::vector<int32_t>& live = scratch->live;
  live.assign(cols, cols + n0);
  scratch->kept.assign(n0, 0);
  for (size_t j = 0; j < n0; ++j) scratch->kept[j] = cols[j] == keep;
  scratch->done = scratch->kept;
  const bool ok = EliminateLive(m, &scratch->kept, &scratch->done, &live, bad_origin, scratch, work,
                                static_cast<long>(width));
  scratch->weight.clear();
  RestoreColumns(m, live, width, scratch);
  return ok;
}

bool Eliminate(Matrix* m, int keep, uint64_t* bad_origin, Scratch* scratch, long* work) {
  scratch->kept.assign(m->n, 0);
  if (keep >= 0) scratch->kept[static_cast<size_t>(keep)] = 1;
  return EliminateKept(m, bad_origin, scratch, work);
}

bool Eliminate(Matrix* m, const std::vector<bool>& keep, uint64_t* bad_origin, Scratch* scratch,
               long* work) {
  scratch->kept.assign(keep.begin(), keep.end());
  return EliminateKept(m, bad_origin, scratch, work);
}

namespace {

// Substitutes the equality row `er` (coefficient +-1 on column `col`) into every other row
// and drops it. `normalized`: every row is normalized already (by an earlier substitution).
// False if a row turned out contradictory (its origin in *bad_origin).
bool SubstituteEquality(Matrix* m, int er, int col, bool normalized, uint64_t* bad_origin,
                        Scratch* scratch) {
  const size_t n = m->n;
  std::vector<int64_t>& e = scratch->eq_row;
  e.assign(m->Row(er), m->Row(er) + n);
  int64_t e0 = m->c0[er];
  uint64_t eo = m->origin[er], ea = m->h0[er], eb = m->h1[er];
  // In place: row i moves to `out` (<= i) when it stays. A row the substitution leaves
  // alone stays as it is: after the first step every row is normalized (and not trivial).
  size_t out = 0;
  for (size_t i = 0, rows = m->size(); i < rows; ++i) {
    if (static_cast<int>(i) == er) continue;
    int64_t* r = m->Row(i);
    int64_t k = m->c0[i];
    uint64_t org = m->origin[i], a = m->h0[i], b = m->h1[i];
    const bool touched = r[col] != 0;
    if (touched) {
      const I128 mult =
          static_cast<I128>(r[col]) * e[col];  // r - mult*e cancels `col` (e[col] is +-1)
      const bool ok = SubtractMultiple(r, e.data(), n, mult);
      I128 v0 = static_cast<I128>(k) - mult * e0;
      if (!ok || v0 > INT64_MAX || v0 < INT64_MIN) continue;  // dropping a row is sound
      k = static_cast<int64_t>(v0);
      org |= eo;
      a |= ea;
      b |= eb;
    }
    if (touched || !normalized) {
      Norm norm = NormalizeFlat(r, n, &k, m->eq[i]);
      if (norm == Norm::kInfeasible) {
        *bad_origin = org;
        return false;
      }
      if (norm != Norm::kOk) continue;
    }
    if (out != i) std::copy(r, r + n, m->Row(out));
    m->c0[out] = k;
    m->origin[out] = org;
    m->h0[out] = a;
    m->h1[out] = b;
    m->eq[out] = m->eq[i];
    if (!scratch->weight.empty()) scratch->weight[out] = scratch->weight[i];
    ++out;
  }
  m->Truncate(out);
  if (!scratch->weight.empty()) scratch->weight.resize(out);
  return true;
}

// The rows of `m` with their multiplicities (Scratch::weight).
long RowsWeighted(const Matrix& m, const Scratch& scratch) {
  if (scratch.weight.empty()) return static_cast<long>(m.size());
  long rows = 0;
  for (uint32_t w : scratch.weight) rows += w;
  return rows;
}

// How an elimination phase ended.
enum class Phase { kGoOn, kOutOfWork, kInfeasible };

// Equalities first: substituting a column with a unit coefficient is exact over the
// integers (FM on the two halves of an equality would lose divisibility facts). Then the
// remaining equalities become two inequalities.
Phase SubstituteEqualities(Matrix* m, std::vector<uint8_t>* done_cols, uint64_t* bad_origin,
                           Scratch* scratch, long* work, long scan, int* eliminated) {
  const size_t n = m->n;
  std::vector<uint8_t>& done = *done_cols;
  bool normalized = scratch->normalized_input;  // every row normalized (by the first
                                                // substitution, or given so)
  while (true) {
    int er = -1, col = -1;
    for (size_t i = 0; i < m->size() && er < 0; ++i) {
      if (!m->eq[i]) continue;
      const int64_t* r = m->Row(i);
      for (size_t j = 0; j < n; ++j) {
        if (!done[j] && (r[j] == 1 || r[j] == -1)) {
          er = static_cast<int>(i);
          col = static_cast<int>(j);
          break;
        }
      }
    }
    if (er < 0) break;
    if (!Spend(work, RowsWeighted(*m, *scratch) * scan)) return Phase::kOutOfWork;
    done[col] = true;
    ++*eliminated;
    if (!SubstituteEquality(m, er, col, normalized, bad_origin, scratch)) {
      return Phase::kInfeasible;
    }
    normalized = true;
  }
  // Remaining equalities become two inequalities.
  for (size_t i = 0, rows = m->size(); i < rows; ++i) {
    if (!m->eq[i]) continue;
    m->eq[i] = 0;
    std::vector<int64_t>& neg = scratch->eq_row;  // free once the substitutions are done
    if (!NegatedRow(m->Row(i), n, m->c0[i], &neg)) continue;  // keep one half only
    m->Push(neg.data(), -m->c0[i], m->origin[i], m->h0[i], m->h1[i], false);
    if (!scratch->weight.empty()) scratch->weight.push_back(scratch->weight[i]);
  }
  return Phase::kGoOn;
}

// Counts the rows with a positive and a negative coefficient in each column (scratch->npos,
// scratch->nneg), in one pass over the rows, in their layout.
void CountSigns(const Matrix& m, size_t n, Scratch* scratch) {
  std::vector<long>& npos = scratch->npos;
  std::vector<long>& nneg = scratch->nneg;
  npos.assign(n, 0);
  nneg.assign(n, 0);
  // Through restrict pointers: the counts never alias the rows (same type), so they need
  // not be reloaded and stored around every coefficient.
  long* __restrict np = npos.data();
  long* __restrict nn = nneg.data();
  const int64_t* __restrict c = m.c.data();
  if (!scratch->weight.empty()) {  // rows standing for several (before the first step)
    const uint32_t* __restrict wt = scratch->weight.data();
    for (size_t i = 0, rows = m.size(); i < rows; ++i) {
      const int64_t* r = c + i * n;
      const long w = wt[i];
      for (size_t j = 0; j < n; ++j) {
        np[j] += (r[j] > 0) * w;
        nn[j] += (r[j] < 0) * w;
      }
    }
    return;
  }
  for (size_t i = 0, rows = m.size(); i < rows; ++i) {
    const int64_t* r = c + i * n;
    for (size_t j = 0; j < n; ++j) {
      np[j] += r[j] > 0;
      nn[j] += r[j] < 0;
    }
  }
}

// Drops the columns that are 0 everywhere now (the last step's, at least), with their sign
// counts; *n becomes the matrix's width.
void DropDeadColumns(Matrix* m, std::vector<uint8_t>* keep, std::vector<uint8_t>* done,
                     std::vector<int32_t>* live, Scratch* scratch, size_t* n) {
  std::vector<long>& npos = scratch->npos;
  std::vector<long>& nneg = scratch->nneg;
  std::vector<uint8_t>& dead = scratch->dead;
  dead.assign(*n, 0);
  bool any = false;
  for (size_t j = 0; j < *n; ++j) {
    dead[j] = npos[j] + nneg[j] == 0;
    any |= dead[j] != 0;
  }
  if (any && *n <= kMaxCompactCols) {
    size_t k = 0;
    for (size_t j = 0; j < *n; ++j) {
      if (dead[j]) continue;
      npos[k] = npos[j];
      nneg[k] = nneg[j];
      ++k;
    }
    DropColumns(m, dead, live, done, keep);
    *n = m->n;
    scratch->next.n = *n;
  }
}

// The column whose elimination creates the fewest rows, or -1 (marks the columns that no
// row mentions done).
int PickColumn(size_t n, const Scratch& scratch, std::vector<uint8_t>* done) {
  int best = -1;
  long best_cost = 0;
  for (size_t j = 0; j < n; ++j) {
    if ((*done)[j]) continue;
    const long np = scratch.npos[j], nn = scratch.nneg[j];
    if (np + nn == 0) {
      (*done)[j] = true;
      continue;
    }
    long cost = np * nn - np - nn;
    if (best < 0 || cost < best_cost) {
      best = static_cast<int>(j);
      best_cost = cost;
    }
  }
  return best;
}

// Column `best` has one sign only: no combinations, the rows over it just go. The others
// are distinct already, so the row set would keep each as it is: drop them in place.
void DropOneSignColumn(Matrix* m, int best, size_t n) {
  size_t out = 0;
  const size_t b = static_cast<size_t>(best);
  int64_t* c = m->c.data();
  for (size_t i = 0, rows = m->size(); i < rows; ++i) {
    const int64_t* r = c + i * n;
    if (r[b] != 0) continue;
    int64_t* w = c + out * (n - 1);  // never past r: copying forward is safe
    for (size_t j = 0; j < b; ++j) w[j] = r[j];
    for (size_t j = b + 1; j < n; ++j) w[j - 1] = r[j];
    m->c0[out] = m->c0[i];
    m->origin[out] = m->origin[i];
    m->h0[out] = m->h0[i];
    m->h1[out] = m->h1[i];
    ++out;
  }
  m->n = n - 1;
  m->Truncate(out);
  m->eq.assign(out, 0);
}

// One Fourier–Motzkin step on column `best` of the n columns of `m`: the rows without it and
// the combinations of a row with a positive and one with a negative coefficient there, into
// scratch->next (without column `best`), within *budget combinations and the work left.
// False if a combination is contradictory (its origin in *bad_origin).
bool CombineOn(Matrix* m, int best, size_t n, int eliminated, long* budget, uint64_t* bad_origin,
               Scratch* scratch, long* work, long scan) {
  Matrix& next = scratch->next;
  std::vector<int64_t>& tmp = scratch->tmp;
  next.Clear();
  next.n = n - 1;  // column `best` is 0 in every row of the step
  RowSet set(&next, &scratch->slots);
  std::vector<int64_t>& narrow = scratch->eq_row;  // free once the substitutions are done
  narrow.resize(n);
  std::vector<size_t>& pos = scratch->pos;
  std::vector<size_t>& neg = scratch->neg;
  pos.clear();
  neg.clear();
  for (size_t i = 0; i < m->size(); ++i) {
    int64_t x = m->Row(i)[best];
    if (x > 0) {
      pos.push_back(i);
    } else if (x < 0) {
      neg.push_back(i);
    } else {
      // The row without column `best` (the rows of the step drop it: all 0 there).
      const int64_t* r = m->Row(i);
      std::copy(r, r + best, narrow.data());
      std::copy(r + best + 1, r + n, narrow.data() + best);
      set.Add(narrow.data(), m->c0[i], m->origin[i], m->h0[i], m->h1[i]);
    }
  }
  // Combinations this step may try with the work left (skipping the rest is sound, as
  // for kMaxCombinations: no row over `best` survives the step either way).
  long allowed = work ? *work / scan : kMaxCombinations;
  long tried = 0;
  // Rows standing for several (Scratch::weight): each pair is tried once and counted for
  // the pairs of their duplicates (whose rows the set would merge into this pair's); the
  // caller made sure the limits are not reached here.
  const uint32_t* wt = scratch->weight.empty() ? nullptr : scratch->weight.data();
  for (size_t pi : pos) {
    const int64_t* p = m->Row(pi);
    for (size_t ni : neg) {
      if (wt) {
        const long w = static_cast<long>(wt[pi]) * wt[ni];
        *budget -= w - 1;
        tried += w - 1;
      }
      if (--*budget < 0 || tried >= allowed) break;
      ++tried;
      uint64_t a = m->h0[pi] | m->h0[ni], b = m->h1[pi] | m->h1[ni];
      if (Popcount(a) + Popcount(b) > eliminated + 1) continue;  // redundant
      const int64_t* q = m->Row(ni);
      const int64_t pb = p[best], qb = q[best];
      int64_t g = pb == 1 || qb == -1 ? 1 : Gcd64(pb, qb);
      // q[best] / g fits (g >= 1); only its negation may not (INT64_MIN / 1).
      const I128 mp_wide = -static_cast<I128>(q[best] / g);
      if (mp_wide > INT64_MAX) continue;  // dropping a combination is sound
      int64_t mp = static_cast<int64_t>(mp_wide),
              mn = p[best] / g;  // mp*p + mn*q cancels column `best`
      bool overflow = false;
      for (size_t j = 0; j < n; ++j) {  // branch-free: overflow is checked once at the end
        int64_t x, y;
        overflow |= __builtin_mul_overflow(mp, p[j], &x);
        overflow |= __builtin_mul_overflow(mn, q[j], &y);
        overflow |= __builtin_add_overflow(x, y, &tmp[j]);
      }
      const bool ok = !overflow;
      I128 v0 = static_cast<I128>(mp) * m->c0[pi] + static_cast<I128>(mn) * m->c0[ni];
      if (!ok || v0 > INT64_MAX || v0 < INT64_MIN) continue;  // dropping a row is sound
      int64_t k = static_cast<int64_t>(v0);
      tmp[best] = 0;
      uint64_t org = m->origin[pi] | m->origin[ni];
      Norm norm = NormalizeFlat(tmp.data(), n, &k, false);
      if (norm == Norm::kInfeasible) {
        *bad_origin = org;
        return false;
      }
      if (norm == Norm::kOk) {
        std::copy(tmp.begin() + best + 1, tmp.begin() + static_cast<std::ptrdiff_t>(n),
                  tmp.begin() + best);
        set.Add(tmp.data(), k, org, a, b);
      }
    }
  }
  scratch->weight.clear();  // the row set merged the duplicates
  if (work) {
    *work -= tried * scan;
    if (tried >= allowed && tried < static_cast<long>(pos.size() * neg.size())) {
      *work = std::min(*work, 0L);  // cut short: the result is degraded
    }
  }
  return true;
}

// Steps on at most this many rows, with at most this many combinations, run in place
// (CombineInPlace); larger ones through the row set.
constexpr size_t kInPlaceRows = 48;
constexpr size_t kInPlaceCombinations = 64;

// The index of a row of m (n columns) among rows [0, end) with the coefficients `coef`, or -1.
// A linear search: the steps it serves have few rows, and most candidates differ early.
long FindRow(const Matrix& m, size_t end, const int64_t* coef) {
  const size_t n = m.n;
  const int64_t* c = m.c.data();
  for (size_t i = 0; i < end; ++i) {
    const int64_t* r = c + i * n;
    size_t j = 0;
    while (j < n && r[j] == coef[j]) ++j;
    if (j == n) return static_cast<long>(i);
  }
  return -1;
}

// CombineInPlace's first half: the rows over column `best` of m (n columns) go to
// scratch->next (pos then neg, their weights to scratch->pn_weight; their signs leave the
// counts when `track`), and the rows without it move to the front of m, narrowed (equal ones
// merged unless `distinct`).
void SetAsideAndCompact(Matrix* m, size_t b, size_t n, bool distinct, bool track,
                        Scratch* scratch) {
  const size_t rows = m->size();
  long* np_count = scratch->npos.data();
  long* nn_count = scratch->nneg.data();
  std::vector<size_t>& pos = scratch->pos;
  std::vector<size_t>& neg = scratch->neg;
  pos.clear();
  neg.clear();
  for (size_t i = 0; i < rows; ++i) {
    const int64_t x = m->Row(i)[b];
    if (x > 0) {
      pos.push_back(i);
    } else if (x < 0) {
      neg.push_back(i);
    }
  }
  // The rows over `best` (and their weights) aside, as they were; index k of pn is the k-th
  // of pos then neg.
  Matrix& pn = scratch->next;
  pn.n = n;
  pn.Clear();
  std::vector<uint32_t>& pw = scratch->pn_weight;
  pw.clear();
  const bool weighted = !scratch->weight.empty();
  for (const std::vector<size_t>* side : {&pos, &neg}) {
    for (size_t i : *side) {
      pn.Copy(*m, i);
      if (weighted) pw.push_back(scratch->weight[i]);
      if (track) {
        const int64_t* r = m->Row(i);
        for (size_t j = 0; j < n; ++j) {
          np_count[j] -= r[j] > 0;
          nn_count[j] -= r[j] < 0;
        }
      }
    }
  }
  // The rows that stay, narrowed, to the front.
  const size_t w = n - 1;
  int64_t* c = m->c.data();
  size_t out = 0;
  for (size_t i = 0; i < rows; ++i) {
    const int64_t* r = c + i * n;
    if (r[b] != 0) continue;
    int64_t* to = c + out * w;  // never past r: copying forward is safe
    for (size_t j = 0; j < b; ++j) to[j] = r[j];
    for (size_t j = b + 1; j < n; ++j) to[j - 1] = r[j];
    const int64_t k = m->c0[i];
    if (!distinct) {
      m->n = w;
      const long at = FindRow(*m, out, to);
      if (at >= 0) {
        const size_t a = static_cast<size_t>(at);
        if (k < m->c0[a]) {
          m->c0[a] = k;
          m->origin[a] = m->origin[i];
          m->h0[a] = m->h0[i];
          m->h1[a] = m->h1[i];
        }
        continue;
      }
    }
    m->c0[out] = k;
    m->origin[out] = m->origin[i];
    m->h0[out] = m->h0[i];
    m->h1[out] = m->h1[i];
    ++out;
  }
  m->n = w;
  m->Truncate(out);
  std::fill(m->eq.begin(), m->eq.end(), 0);
}

// CombineOn for small steps, in `m` itself and with the same result: the rows without
// column `best` move to the front (without it), keeping their order, then the combinations
// follow; a row whose coefficients an earlier row has only tightens that row's constant
// (taking its origin and history), exactly as the row set does. `distinct`: the rows are
// pairwise distinct already, so the rows that stay need no search. On a contradiction m is
// left empty.
bool CombineInPlace(Matrix* m, int best, size_t n, int eliminated, long* budget, bool distinct,
                    uint64_t* bad_origin, Scratch* scratch, long* work, long scan, bool* counted) {
  const size_t b = static_cast<size_t>(best);
  // The sign counts of the step's matrix (scratch->npos/nneg, n columns) kept up to date for
  // the next one: the rows over `best` go, the new rows come, a merge changes no sign. Only
  // when no duplicates can merge among the staying rows (and no row counts for several).
  const bool track = distinct && scratch->weight.empty();
  long* np_count = scratch->npos.data();
  long* nn_count = scratch->nneg.data();
  SetAsideAndCompact(m, b, n, distinct, track, scratch);
  std::vector<size_t>& pos = scratch->pos;
  std::vector<size_t>& neg = scratch->neg;
  Matrix& pn = scratch->next;
  std::vector<uint32_t>& pw = scratch->pn_weight;
  const bool weighted = !scratch->weight.empty();
  const size_t w = n - 1;
  // The combinations, as CombineOn makes them.
  std::vector<int64_t>& tmp = scratch->tmp;
  long allowed = work ? *work / scan : kMaxCombinations;
  long tried = 0;
  const size_t np = pos.size(), nn = neg.size();
  for (size_t x = 0; x < np; ++x) {
    const int64_t* p = pn.Row(x);
    for (size_t y = np; y < np + nn; ++y) {
      if (weighted) {
        const long wt = static_cast<long>(pw[x]) * pw[y];
        *budget -= wt - 1;
        tried += wt - 1;
      }
      if (--*budget < 0 || tried >= allowed) break;
      ++tried;
      uint64_t ha = pn.h0[x] | pn.h0[y], hb = pn.h1[x] | pn.h1[y];
      if (Popcount(ha) + Popcount(hb) > eliminated + 1) continue;  // redundant
      const int64_t* q = pn.Row(y);
      const int64_t pb = p[b], qb = q[b];
      int64_t g = pb == 1 || qb == -1 ? 1 : Gcd64(pb, qb);
      const I128 mp_wide = -static_cast<I128>(qb / g);
      if (mp_wide > INT64_MAX) continue;  // dropping a combination is sound
      const int64_t mp = static_cast<int64_t>(mp_wide), mn = pb / g;
      bool overflow = false;
      for (size_t j = 0; j < n; ++j) {
        int64_t u, v;
        overflow |= __builtin_mul_overflow(mp, p[j], &u);
        overflow |= __builtin_mul_overflow(mn, q[j], &v);
        overflow |= __builtin_add_overflow(u, v, &tmp[j]);
      }
      I128 v0 = static_cast<I128>(mp) * pn.c0[x] + static_cast<I128>(mn) * pn.c0[y];
      if (overflow || v0 > INT64_MAX || v0 < INT64_MIN) continue;  // dropping a row is sound
      int64_t k = static_cast<int64_t>(v0);
      tmp[b] = 0;
      const uint64_t org = pn.origin[x] | pn.origin[y];
      const Norm norm = NormalizeFlat(tmp.data(), n, &k, false);
      if (norm == Norm::kInfeasible) {
        *bad_origin = org;
        m->Truncate(0);
        scratch->weight.clear();
        return false;
      }
      if (norm != Norm::kOk) continue;
      std::copy(tmp.begin() + best + 1, tmp.begin() + static_cast<std::ptrdiff_t>(n),
                tmp.begin() + best);
      const long at = FindRow(*m, m->size(), tmp.data());
      if (at >= 0) {
        const size_t a = static_cast<size_t>(at);
        if (k < m->c0[a]) {
          m->c0[a] = k;
          m->origin[a] = org;
          m->h0[a] = ha;
          m->h1[a] = hb;
        }
      } else {
        m->Push(tmp.data(), k, org, ha, hb, false);
        if (track) {
          for (size_t j = 0; j < w; ++j) {
            const size_t jj = j < b ? j : j + 1;
            np_count[jj] += tmp[j] > 0;
            nn_count[jj] += tmp[j] < 0;
          }
        }
      }
    }
  }
  if (track) {  // column `best` goes
    scratch->npos.erase(scratch->npos.begin() + best);
    scratch->nneg.erase(scratch->nneg.begin() + best);
  }
  *counted = track;
  scratch->weight.clear();  // merged like the row set merges them
  if (work) {
    *work -= tried * scan;
    if (tried >= allowed && tried < static_cast<long>(np * nn)) {
      *work = std::min(*work, 0L);  // cut short: the result is degraded
    }
  }
  return true;
}

// Past kMaxRows, keeps the simplest rows of `next` (n columns); dropping rows only weakens
// the result.
void KeepSparsest(Matrix* next, size_t n) {
  if (next->size() <= kMaxRows) return;
  std::vector<std::pair<long, size_t>> order;
  for (size_t i = 0; i < next->size(); ++i) {
    long nz = 0;
    for (size_t j = 0; j < n; ++j) nz += next->Row(i)[j] != 0;
    order.emplace_back(nz, i);
  }
  std::stable_sort(order.begin(), order.end());
  Matrix kept;
  kept.n = n;
  for (size_t i = 0; i < kMaxRows; ++i) kept.Copy(*next, order[i].second);
  std::swap(*next, kept);
}

bool EliminateLive(Matrix* m, std::vector<uint8_t>* keep_cols, std::vector<uint8_t>* done_cols,
                   std::vector<int32_t>* live, uint64_t* bad_origin, Scratch* scratch, long* work,
                   long scan) {
  size_t n = m->n;
  std::vector<uint8_t>& keep = *keep_cols;
  std::vector<uint8_t>& done = *done_cols;
  // Chernikov's rule: after k eliminations, a row combined from more than k + 1 input rows
  // is redundant. Rows past the 128th get no history bit and are never dropped by it.
  const std::vector<uint32_t>& weight = scratch->weight;
  for (size_t i = 0, at = 0; i < m->size(); ++i) {  // `at`: its position with the duplicates
    m->h0[i] = at < 64 ? 1ULL << at : 0;
    m->h1[i] = (at >= 64 && at < 128) ? 1ULL << (at - 64) : 0;
    at += weight.empty() ? 1 : weight[i];
  }
  int eliminated = 0;
  long budget = kMaxCombinations;
  Matrix& next = scratch->next;
  next.n = n;
  next.Clear();
  switch (SubstituteEqualities(m, &done, bad_origin, scratch, work, scan, &eliminated)) {
    case Phase::kOutOfWork:
      KeepOnly(m, keep, scratch);
      return true;
    case Phase::kInfeasible:
      return false;
    case Phase::kGoOn:
      break;
  }
  scratch->tmp.assign(n, 0);
  // The rows have distinct coefficient vectors (true after a step through the row set;
  // dropping columns that are 0 in every row, or rows, keeps it so).
  bool distinct = false;
  bool counted = false;  // scratch->npos/nneg hold the signs of m (the last step kept them)
  while (true) {
    if (!Spend(work, RowsWeighted(*m, *scratch) * scan)) {
      KeepOnly(m, keep, scratch);
      return true;
    }
    // Pick the column whose elimination creates the fewest rows.
    if (!counted) CountSigns(*m, n, scratch);
    counted = false;
    DropDeadColumns(m, &keep, &done, live, scratch, &n);
    const int best = PickColumn(n, *scratch, &done);
    if (best < 0) break;
    done[best] = true;
    ++eliminated;
    if (distinct && (scratch->npos[best] == 0 || scratch->nneg[best] == 0) &&
        m->size() <= kMaxRows) {
      DropOneSignColumn(m, best, n);
      live->erase(live->begin() + best);
      done.erase(done.begin() + best);
      keep.erase(keep.begin() + best);
      --n;
      m->n = n;
      next.n = n;
      continue;
    }
    const bool small =
        m->size() <= kInPlaceRows &&
        static_cast<size_t>(scratch->npos[best]) * scratch->nneg[best] <= kInPlaceCombinations;
    if (small) {
      const bool ok = CombineInPlace(m, best, n, eliminated, &budget, distinct, bad_origin, scratch,
                                     work, scan, &counted);
      live->erase(live->begin() + best);
      done.erase(done.begin() + best);
      keep.erase(keep.begin() + best);
      --n;
      if (!ok) return false;
      distinct = true;  // every row that stayed or came is one per coefficient vector
      next.n = n;
      continue;
    }
    distinct = true;  // the row set below keeps one row per coefficient vector
    if (!CombineOn(m, best, n, eliminated, &budget, bad_origin, scratch, work, scan)) {
      return false;
    }
    live->erase(live->begin() + best);
    done.erase(done.begin() + best);
    keep.erase(keep.begin() + best);
    --n;
    KeepSparsest(&next, n);
    m->Swap(&next);
  }
  return true;
}

}  // namespace

}  // namespace fm
}  // namespace dim
}  // namespace shp
