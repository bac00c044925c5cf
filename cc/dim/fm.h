// The Fourier–Motzkin core of the decision procedure: integer rows `c·x + c0 >= 0` (or
// `== 0`), a flat matrix of them, a set that keeps one row per coefficient vector, and the
// elimination of columns with integer tightening. It knows nothing of expressions: the
// columns are whatever the caller says (decide.cc: monomials, and the query z last).
//
// Soundness: every row produced is a non-negative integer combination of input rows,
// divided by the gcd of its coefficients with the constant rounded down (valid over the
// integers). Rows are dropped (overflow, the caps below, Chernikov's redundancy rule) but
// never invented, so a dropped row only makes the projection weaker, never wrong.
#ifndef SHAPEPOLY_CC_DIM_FM_H_
#define SHAPEPOLY_CC_DIM_FM_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace shp {
namespace dim {
namespace fm {

// Origin of a row: bit i (i < 62) = fact i of the scope; bit 62 = a fact at index >= 62;
// bit 63 = implicit (a property of an atom, an interval bound, a product relaxation). An
// infeasible combination reports the OR of its rows' origins, so that the error names the
// facts involved; it is never used for soundness.
constexpr uint64_t kLateFact = 1ULL << 62;
constexpr uint64_t kImplicit = 1ULL << 63;
inline uint64_t FactOrigin(size_t i) { return i < 62 ? (1ULL << i) : kLateFact; }

// An elimination keeps at most this many rows (the sparsest) after each step.
constexpr size_t kMaxRows = 600;
// Row combinations one elimination may try in all: bounds the work on hostile constraint
// sets (skipping a combination only weakens the result).
constexpr long kMaxCombinations = 200000;

struct Row {
  std::vector<int64_t> c;  // one coefficient per column
  int64_t c0;              // sum(c[i] * col[i]) + c0 >= 0  (== 0 when eq)
  uint64_t origin;         // see FactOrigin / kImplicit
  bool eq = false;
};

enum class Norm { kOk, kTrivial, kInfeasible };

// Divides by the gcd of the coefficients; inequalities round the constant down (integer
// tightening), equalities whose constant is not divisible have no integer solution. A row
// without coefficients is kTrivial (it holds) or kInfeasible.
Norm NormalizeFlat(int64_t* coef, size_t n, int64_t* c0, bool eq);
inline Norm Normalize(Row* r) { return NormalizeFlat(r->c.data(), r->c.size(), &r->c0, r->eq); }

// Rows stored flat (one coefficient block per row) so that Fourier–Motzkin steps do not
// allocate per row. h0/h1: the row-history bitmask of Chernikov's rule (which of the first
// 128 input rows a row was combined from; set by Eliminate).
struct Matrix {
  size_t n = 0;            // columns
  std::vector<int64_t> c;  // size() * n coefficients
  std::vector<int64_t> c0;
  std::vector<uint64_t> origin, h0, h1;
  std::vector<uint8_t> eq;

  size_t size() const { return c0.size(); }
  int64_t* Row(size_t i) { return c.data() + i * n; }
  const int64_t* Row(size_t i) const { return c.data() + i * n; }
  void Clear() {
    c.clear();
    c0.clear();
    origin.clear();
    h0.clear();
    h1.clear();
    eq.clear();
  }
  // Keeps the first `rows` rows (after an in-place filter moved the kept ones to the front).
  void Truncate(size_t rows) {
    c.resize(rows * n);
    c0.resize(rows);
    origin.resize(rows);
    h0.resize(rows);
    h1.resize(rows);
    eq.resize(rows);
  }
  void Push(const int64_t* coef, int64_t k, uint64_t org, uint64_t a, uint64_t b, bool e) {
    c.insert(c.end(), coef, coef + n);  // no zero fill before the copy
    c0.push_back(k);
    origin.push_back(org);
    h0.push_back(a);
    h1.push_back(b);
    eq.push_back(e);
  }
  // Member by member (std::swap would move through a temporary).
  void Swap(Matrix* o) {
    std::swap(n, o->n);
    c.swap(o->c);
    c0.swap(o->c0);
    origin.swap(o->origin);
    h0.swap(o->h0);
    h1.swap(o->h1);
    eq.swap(o->eq);
  }
  void Copy(const Matrix& m, size_t i) {
    Push(m.Row(i), m.c0[i], m.origin[i], m.h0[i], m.h1[i], m.eq[i]);
  }
  // Appends a row with fewer columns (the missing ones are 0).
  void PushWidened(const fm::Row& r) {
    c.insert(c.end(), r.c.begin(), r.c.end());
    c.resize(c.size() + (n - r.c.size()), 0);
    c0.push_back(r.c0);
    origin.push_back(r.origin);
    h0.push_back(0);
    h1.push_back(0);
    eq.push_back(r.eq);
  }
  // Appends rows[0..count) at once, each with fewer columns (the missing ones are 0): one
  // resize per array instead of a push per row and array.
  void PushWidened(const fm::Row* const* rows, size_t count) {
    const size_t first = size();
    c.resize((first + count) * n, 0);
    c0.resize(first + count);
    origin.resize(first + count);
    h0.resize(first + count, 0);
    h1.resize(first + count, 0);
    eq.resize(first + count);
    for (size_t k = 0; k < count; ++k) {
      const fm::Row& r = *rows[k];
      std::copy(r.c.begin(), r.c.end(), c.begin() + static_cast<std::ptrdiff_t>((first + k) * n));
      c0[first + k] = r.c0;
      origin[first + k] = r.origin;
      eq[first + k] = r.eq;
    }
  }
  void Reserve(size_t rows) {
    c.reserve(rows * n);
    c0.reserve(rows);
    origin.reserve(rows);
    h0.reserve(rows);
    h1.reserve(rows);
    eq.reserve(rows);
  }
};

// Packs rows of n columns into a Matrix.
Matrix ToMatrix(const std::vector<Row>& rows, size_t n);

// Open-addressing set of rows of a Matrix (by coefficients), to keep one row per
// coefficient vector: the one with the tightest (smallest) constant. Only inequalities.
class RowSet {
 public:
  // Starts empty: `m` must be empty; `slots` is storage reused across sets.
  RowSet(Matrix* m, std::vector<int32_t>* slots) : m_(m), slots_(*slots) {
    // Every byte 0xff makes every slot -1 (empty): one memset, not a store per slot.
    slots_.resize(64);
    std::memset(slots_.data(), 0xff, slots_.size() * sizeof(int32_t));
  }
  // Adds row (coef, k, ...) unless an equal-coefficient row exists; then keeps the tighter.
  void Add(const int64_t* coef, int64_t k, uint64_t org, uint64_t a, uint64_t b);

 private:
  size_t Hash(const int64_t* coef) const;
  void Grow();
  Matrix* m_;
  std::vector<int32_t>& slots_;
};

// Buffers reused across eliminations (capacity kept), so a query allocates almost nothing.
struct Scratch {
  Matrix next;
  std::vector<int32_t> slots;
  std::vector<size_t> pos, neg;
  std::vector<int64_t> tmp, eq_row;
  std::vector<long> npos, nneg;     // signs per column (the choice of the next column)
  std::vector<uint8_t> dead;        // columns 0 in every row (dropped while eliminating)
  std::vector<uint8_t> kept, done;  // per live column: to keep, eliminated (or kept)
  std::vector<int32_t> live;        // the caller's index of each live column
  // Set by a caller whose rows are all normalized (Normalize gives kOk and changes nothing):
  // the first equality substitution then normalizes only the rows it touches.
  bool normalized_input = false;
  // Row multiplicities (empty: every row once), set by a caller that left out exact
  // duplicates of its rows (decide.cc's Project): row i stands for weight[i] equal rows.
  // Until the first combination step merges them (its row set keeps one row per coefficient
  // vector, with the first one's history and origin), the duplicates only count: in the work
  // spent, the signs of the column choice and the combinations tried; so the elimination does
  // exactly what it does with the duplicates present, provided the work cannot run out
  // before that step (the caller's check). Chernikov's history bits go by the position the
  // row would have had. Cleared by the elimination.
  std::vector<uint32_t> weight;
  std::vector<uint32_t> pn_weight;  // a small step's rows over its column, set aside
};

// Eliminates every column except `keep` (-1: all): equalities first, by exact substitution
// of a column with a unit coefficient, then the rest as pairs of inequalities, then columns
// one at a time (the one creating the fewest rows first) combining every positive with
// every negative row. Returns false if the rows have no integer solution, with the OR of
// the origins of the contradiction in *bad_origin. On return `m` holds only inequalities,
// over `keep` alone. The row histories h0/h1 of `m` are (re)set here.
//
// `work` (may be null: no limit) is the work left to the caller's query, in coefficients
// touched: a substitution or a column choice costs rows x columns, a combination one row.
// Eliminate subtracts what it does. When the next step would not fit, it stops: the rows
// that still involve a column other than `keep` are dropped (sound: the projection only gets
// wider) and *work is left at or below 0, which tells the caller the result is degraded.
// Counting work instead of time keeps the answers the same on every machine.
bool Eliminate(Matrix* m, int keep, uint64_t* bad_origin, Scratch* scratch, long* work = nullptr);
// Eliminate(m, keep, ...) for the columns of a wider system that its rows use: column k of
// `m` is column cols[k] (increasing) of a system of `width` columns whose other columns are 0
// in every row, and `keep` is one of the cols[k]. The same steps and answer as Eliminate on
// the wide rows (work counted at `width`), without carrying the columns no row has; on
// return `m` has `width` columns again.
bool EliminateNarrow(Matrix* m, const int32_t* cols, size_t width, int keep, uint64_t* bad_origin,
                     Scratch* scratch, long* work = nullptr);
// The same, keeping every column j with keep[j] (keep.size() == m->n): on return `m` holds
// only inequalities over the kept columns (the case analysis of max/min in decide_cases.cc
// projects onto the atoms and their operands first, then splits).
bool Eliminate(Matrix* m, const std::vector<bool>& keep, uint64_t* bad_origin, Scratch* scratch,
               long* work = nullptr);

}  // namespace fm
}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_FM_H_
