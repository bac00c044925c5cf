#include "cc/dim/decide.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <unordered_map>

#include "cc/base/error.h"

namespace shp {
namespace dim {
namespace {

// ---- Extended integers for interval arithmetic: int128 with +-kInf ----
using I128 = __int128;
constexpr I128 kInf = (static_cast<I128>(1) << 120);

I128 Ext(int64_t v) {
  if (v == kNegInf) return -kInf;
  if (v == kPosInf) return kInf;
  return v;
}
// Back to int64 so that the result stays a sound lower / upper bound.
int64_t LoOf(I128 v) {
  if (v <= static_cast<I128>(kNegInf)) return kNegInf;
  if (v >= static_cast<I128>(kPosInf)) return kPosInf - 1;
  return static_cast<int64_t>(v);
}
int64_t HiOf(I128 v) {
  if (v >= static_cast<I128>(kPosInf)) return kPosInf;
  if (v <= static_cast<I128>(kNegInf)) return kNegInf + 1;
  return static_cast<int64_t>(v);
}
I128 MulExt(I128 a, I128 b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  if (a == kInf || a == -kInf || b == kInf || b == -kInf) return neg ? -kInf : kInf;
  // Saturate when |a*b| > kInf, tested by division: |a|, |b| <= kInf = 2^120, so the product
  // itself can overflow int128 (2^104 * 2^40 did: powers reach 2^104 with a factor below 2^62).
  I128 ua = a < 0 ? -a : a, ub = b < 0 ? -b : b;
  if (ua < (static_cast<I128>(1) << 60) && ub < (static_cast<I128>(1) << 60)) return a * b;  // < kInf
  if (ua > kInf / ub) return neg ? -kInf : kInf;
  return a * b;
}

struct ExtIv {
  I128 lo, hi;
};

ExtIv ToExt(Interval iv) { return {Ext(iv.lo), Ext(iv.hi)}; }
Interval FromExt(ExtIv e) { return {LoOf(e.lo), HiOf(e.hi)}; }

ExtIv IvMul(ExtIv x, ExtIv y) {
  I128 c[4] = {MulExt(x.lo, y.lo), MulExt(x.lo, y.hi), MulExt(x.hi, y.lo), MulExt(x.hi, y.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

ExtIv IvPow(ExtIv x, int32_t k) {
  auto pw = [k](I128 v) {
    if (v == 1 || v == -1) return (v < 0 && (k % 2)) ? I128{-1} : I128{1};  // k can be 2^20
    I128 r = 1;
    for (int32_t i = 0; i < k && r != 0; ++i) {
      r = MulExt(r, v);
      if (r == kInf || r == -kInf) {
        bool neg = v < 0 && (k % 2);
        return neg ? -kInf : kInf;
      }
    }
    return r;
  };
  if (k % 2 == 1) return {pw(x.lo), pw(x.hi)};
  if (x.lo >= 0) return {pw(x.lo), pw(x.hi)};
  if (x.hi <= 0) return {pw(x.hi), pw(x.lo)};
  I128 m = std::max(-x.lo, x.hi);
  return {0, pw(m)};
}

I128 FloorDivExt(I128 x, I128 d) {  // d > 0
  if (x == kInf || x == -kInf) return x;
  if (d == kInf) return x >= 0 ? 0 : -1;
  I128 q = x / d;
  if (x % d != 0 && x < 0) --q;
  return q;
}

// gcd(|a|, |b|) in uint64, so that INT64_MIN is no trap (negating it gave gcds of -1 and
// then INT64_MIN / -1). A gcd of 2^63 (a, b in {0, INT64_MIN}) is returned as 2^62, still
// a common divisor, so every caller gets a positive int64 (0 only for gcd(0, 0)).
int64_t Gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > static_cast<uint64_t>(INT64_MAX) ? int64_t{1} << 62 : static_cast<int64_t>(x);
}

constexpr uint64_t kImplicit = 1ULL << 63;
constexpr size_t kMaxCols = 64;
constexpr size_t kMaxRows = 600;
// Row combinations one elimination may try in all: bounds the work on hostile constraint
// sets (skipping a combination only weakens the result).
constexpr long kMaxCombinations = 200000;

}  // namespace

// ---- Interval arithmetic ----

void Decider::Reset() {
  prepared_ = false;
  base_.reset();
  var_bounds_.clear();
  atom_iv_.clear();
  mono_iv_.clear();
  bounds_cache_.clear();
}

Interval Decider::AtomInterval(const Atom* a) {
  auto it = atom_iv_.find(a);
  if (it != atom_iv_.end()) return it->second;
  Interval r;
  switch (a->kind) {
    case AtomKind::kVar: {
      const Variable& v = s_->variables()[a->var];
      r = a->var < static_cast<int32_t>(var_bounds_.size()) ? var_bounds_[a->var] : Interval{v.lo, v.hi};
      break;
    }
    case AtomKind::kFloorDiv:
    case AtomKind::kMod: {
      ExtIv x = ToExt(IntervalOf(a->a));
      ExtIv d = ToExt(IntervalOf(a->b));
      if (d.lo < 1) break;  // divisor sign unknown (cannot happen for atoms built by Scope)
      if (a->kind == AtomKind::kFloorDiv) {
        bool undefined = (x.lo == -kInf && d.hi == kInf) || (x.hi == kInf && d.hi == kInf);
        I128 c[4] = {FloorDivExt(x.lo, d.lo), FloorDivExt(x.lo, d.hi), FloorDivExt(x.hi, d.lo),
                     FloorDivExt(x.hi, d.hi)};
        ExtIv e{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
        if (undefined) {
          if (x.lo == -kInf) e.lo = -kInf;
          if (x.hi == kInf) e.hi = kInf;
        }
        r = FromExt(e);
      } else {
        ExtIv e{0, d.hi == kInf ? kInf : d.hi - 1};
        if (x.lo >= 0 && x.hi < e.hi) e.hi = x.hi;
        r = FromExt(e);
      }
      break;
    }
    case AtomKind::kMax:
    case AtomKind::kMin: {
      Interval x = IntervalOf(a->a), y = IntervalOf(a->b);
      if (a->kind == AtomKind::kMax) {
        r = {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
      } else {
        r = {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
      }
      break;
    }
  }
  atom_iv_[a] = r;
  return r;
}

Interval Decider::MonoInterval(const Mono* m) {
  if (m->factors.empty()) return {1, 1};
  auto it = mono_iv_.find(m);
  if (it != mono_iv_.end()) return it->second;
  ExtIv acc{1, 1};
  for (const Factor& f : m->factors) acc = IvMul(acc, IvPow(ToExt(AtomInterval(f.atom)), f.exp));
  Interval r = FromExt(acc);
  mono_iv_[m] = r;
  return r;
}

Interval Decider::IntervalOf(const Expr* e) {
  if (!preparing_) Prepare();
  // Exact sums: a finite term bound is a product of two int64 values (|x| <= 2^126), so
  // large finite values are never confused with infinity (clamping them to +-kInf made
  // +inf + -inf = 0 and +inf + finite = +inf, both unsound). A side that is infinite, or
  // whose sum leaves int128, is unbounded.
  I128 lo = 0, hi = 0;
  bool lo_inf = false, hi_inf = false;
  for (const Term& t : e->terms) {
    Interval m = MonoInterval(t.mono);
    const bool pos = t.coeff > 0;
    const int64_t for_lo = pos ? m.lo : m.hi, for_hi = pos ? m.hi : m.lo;
    if (for_lo == kNegInf || for_lo == kPosInf ||
        __builtin_add_overflow(lo, static_cast<I128>(t.coeff) * for_lo, &lo)) {
      lo_inf = true;
    }
    if (for_hi == kNegInf || for_hi == kPosInf ||
        __builtin_add_overflow(hi, static_cast<I128>(t.coeff) * for_hi, &hi)) {
      hi_inf = true;
    }
  }
  return {lo_inf ? kNegInf : LoOf(lo), hi_inf ? kPosInf : HiOf(hi)};
}

// ---- Fourier–Motzkin system ----

struct Decider::System {
  const System* base = nullptr;  // cached facts part: its columns come first, same indices
  std::vector<const Mono*> cols;
  std::unordered_map<const Mono*, int> col_of;  // columns not in `base`
  std::vector<Row> rows;
  bool overfull = false;
  bool infeasible = false;
  uint64_t infeasible_origin = 0;

  int ColOf(const Mono* m) {
    int found = Find(m);
    if (found >= 0) return found;
    if (cols.size() >= kMaxCols) {
      overfull = true;
      return -1;
    }
    int c = static_cast<int>(cols.size());
    cols.push_back(m);
    col_of.emplace(m, c);
    return c;
  }
  int Find(const Mono* m) const {
    if (base) {
      auto b = base->col_of.find(m);
      if (b != base->col_of.end()) return b->second;
    }
    auto it = col_of.find(m);
    return it == col_of.end() ? -1 : it->second;
  }
};

Decider::Decider(Scope* scope) : s_(scope) {}
Decider::~Decider() = default;

namespace {

// A linear form over monomials being assembled; `ok` turns false on overflow.
struct Lin {
  std::vector<std::pair<const Mono*, int64_t>> terms;
  int64_t c0 = 0;
  bool ok = true;

  void Add(const Mono* m, int64_t c) {
    if (c == 0) return;
    if (m->factors.empty()) {
      if (__builtin_add_overflow(c0, c, &c0)) ok = false;
      return;
    }
    terms.emplace_back(m, c);
  }
  void Negate() {
    for (auto& t : terms) {
      if (t.second == kNegInf) {
        ok = false;  // -INT64_MIN is no int64 (and negating it is UB)
        continue;
      }
      t.second = -t.second;
    }
    if (c0 == kNegInf) ok = false;
    c0 = ok ? -c0 : 0;
  }
  void AddExpr(const Expr* e, int64_t scale) {
    for (const Term& t : e->terms) {
      int64_t c;
      if (__builtin_mul_overflow(t.coeff, scale, &c)) {
        ok = false;
        return;
      }
      Add(t.mono, c);
    }
  }
};

enum class Norm { kOk, kTrivial, kInfeasible };

// Rows stored flat (one coefficient block per row) so that Fourier–Motzkin steps do not
// allocate per row.
struct Matrix {
  size_t n = 0;                // columns
  std::vector<int64_t> c;      // size() * n coefficients
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
  void Push(const int64_t* coef, int64_t k, uint64_t org, uint64_t a, uint64_t b, bool e) {
    size_t at = c.size();
    c.resize(at + n);
    std::copy(coef, coef + n, c.begin() + static_cast<std::ptrdiff_t>(at));
    c0.push_back(k);
    origin.push_back(org);
    h0.push_back(a);
    h1.push_back(b);
    eq.push_back(e);
  }
  void Copy(const Matrix& m, size_t i) { Push(m.Row(i), m.c0[i], m.origin[i], m.h0[i], m.h1[i], m.eq[i]); }
  // Appends a row with fewer columns (the missing ones are 0).
  void PushWidened(const Decider::Row& r) {
    c.insert(c.end(), r.c.begin(), r.c.end());
    c.resize(c.size() + (n - r.c.size()), 0);
    c0.push_back(r.c0);
    origin.push_back(r.origin);
    h0.push_back(0);
    h1.push_back(0);
    eq.push_back(r.eq);
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

// Divides by the gcd of the coefficients; inequalities round the constant down (integer
// tightening), equalities whose constant is not divisible have no integer solution.
Norm NormalizeFlat(int64_t* coef, size_t n, int64_t* c0, bool eq) {
  int64_t g = 0;
  for (size_t j = 0; j < n; ++j) {
    if (coef[j] == 0) continue;
    g = Gcd64(g, coef[j]);
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

Norm Normalize(Decider::Row* r) { return NormalizeFlat(r->c.data(), r->c.size(), &r->c0, r->eq); }

// Open-addressing set of rows of a Matrix (by coefficients), to keep one row per
// coefficient vector: the one with the tightest (smallest) constant.
class RowSet {
 public:
  RowSet(Matrix* m, std::vector<int32_t>* slots) : m_(m), slots_(*slots) { slots_.assign(64, -1); }
  // Adds row (coef, k, ...) unless an equal-coefficient row exists; then keeps the tighter.
  void Add(const int64_t* coef, int64_t k, uint64_t org, uint64_t a, uint64_t b) {
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

 private:
  size_t Hash(const int64_t* coef) const {
    size_t h = 1469598103934665603ULL;
    for (size_t j = 0; j < m_->n; ++j) h = (h ^ static_cast<size_t>(coef[j])) * 1099511628211ULL;
    return h ^ (h >> 29);
  }
  void Grow() {
    slots_.assign(slots_.size() * 2, -1);
    size_t mask = slots_.size() - 1;
    for (size_t r = 0; r < m_->size(); ++r) {
      size_t i = Hash(m_->Row(r)) & mask;
      while (slots_[i] >= 0) i = (i + 1) & mask;
      slots_[i] = static_cast<int32_t>(r);
    }
  }
  Matrix* m_;
  std::vector<int32_t>& slots_;
};

// Buffers reused across eliminations (capacity kept), so a query allocates almost nothing.
struct Scratch {
  Matrix next;
  std::vector<int32_t> slots;
  std::vector<size_t> pos, neg;
  std::vector<int64_t> tmp, eq_row;
};

// Eliminates every column except `keep` (-1: all). Returns false if infeasible, with the
// origin of the contradiction in *bad_origin. On return `m` holds only inequalities.
bool Eliminate(Matrix* m, int keep, uint64_t* bad_origin, Scratch* scratch) {
  const size_t n = m->n;
  std::vector<bool> done(n, false);
  if (keep >= 0) done[keep] = true;
  // Chernikov's rule: after k eliminations, a row combined from more than k + 1 input rows
  // is redundant. Rows past the 128th get no history bit and are never dropped by it.
  for (size_t i = 0; i < m->size(); ++i) {
    m->h0[i] = i < 64 ? 1ULL << i : 0;
    m->h1[i] = (i >= 64 && i < 128) ? 1ULL << (i - 64) : 0;
  }
  int eliminated = 0;
  long budget = kMaxCombinations;
  Matrix& next = scratch->next;
  next.n = n;
  next.Clear();
  // Equalities first: substituting a column with a unit coefficient is exact over the
  // integers (FM on the two halves of an equality would lose divisibility facts).
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
    done[col] = true;
    ++eliminated;
    std::vector<int64_t>& e = scratch->eq_row;
    e.assign(m->Row(er), m->Row(er) + n);
    int64_t e0 = m->c0[er];
    uint64_t eo = m->origin[er], ea = m->h0[er], eb = m->h1[er];
    next.Clear();
    for (size_t i = 0; i < m->size(); ++i) {
      if (static_cast<int>(i) == er) continue;
      int64_t* r = m->Row(i);
      int64_t k = m->c0[i];
      uint64_t org = m->origin[i], a = m->h0[i], b = m->h1[i];
      if (r[col] != 0) {
        const I128 mult = static_cast<I128>(r[col]) * e[col];  // r - mult*e cancels `col` (e[col] is +-1)
        bool ok = true;
        for (size_t j = 0; j < n && ok; ++j) {
          I128 v = static_cast<I128>(r[j]) - mult * e[j];
          if (v > INT64_MAX || v < INT64_MIN) ok = false;
          r[j] = static_cast<int64_t>(v);
        }
        I128 v0 = static_cast<I128>(k) - mult * e0;
        if (!ok || v0 > INT64_MAX || v0 < INT64_MIN) continue;  // dropping a row is sound
        k = static_cast<int64_t>(v0);
        org |= eo;
        a |= ea;
        b |= eb;
      }
      Norm norm = NormalizeFlat(r, n, &k, m->eq[i]);
      if (norm == Norm::kInfeasible) {
        *bad_origin = org;
        return false;
      }
      if (norm == Norm::kOk) next.Push(r, k, org, a, b, m->eq[i]);
    }
    std::swap(*m, next);
  }
  // Remaining equalities become two inequalities.
  for (size_t i = 0, rows = m->size(); i < rows; ++i) {
    if (!m->eq[i]) continue;
    m->eq[i] = 0;
    if (m->c0[i] == INT64_MIN) continue;  // keep one half only
    std::vector<int64_t> neg(m->Row(i), m->Row(i) + n);
    for (int64_t& x : neg) x = -x;  // normalized coefficients: no INT64_MIN
    m->Push(neg.data(), -m->c0[i], m->origin[i], m->h0[i], m->h1[i], false);
  }
  std::vector<int64_t>& tmp = scratch->tmp;
  tmp.assign(n, 0);
  while (true) {
    // Pick the column whose elimination creates the fewest rows.
    int best = -1;
    long best_cost = 0;
    for (size_t j = 0; j < n; ++j) {
      if (done[j]) continue;
      long np = 0, nn = 0;
      for (size_t i = 0; i < m->size(); ++i) {
        int64_t x = m->Row(i)[j];
        np += x > 0;
        nn += x < 0;
      }
      if (np + nn == 0) {
        done[j] = true;
        continue;
      }
      long cost = np * nn - np - nn;
      if (best < 0 || cost < best_cost) {
        best = static_cast<int>(j);
        best_cost = cost;
      }
    }
    if (best < 0) break;
    done[best] = true;
    ++eliminated;
    next.Clear();
    RowSet set(&next, &scratch->slots);
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
        set.Add(m->Row(i), m->c0[i], m->origin[i], m->h0[i], m->h1[i]);
      }
    }
    for (size_t pi : pos) {
      const int64_t* p = m->Row(pi);
      for (size_t ni : neg) {
        if (--budget < 0) break;
        uint64_t a = m->h0[pi] | m->h0[ni], b = m->h1[pi] | m->h1[ni];
        if (__builtin_popcountll(a) + __builtin_popcountll(b) > eliminated + 1) continue;  // redundant
        const int64_t* q = m->Row(ni);
        int64_t g = Gcd64(p[best], q[best]);
        const I128 mp_wide = -static_cast<I128>(q[best]) / g;  // q[best] may be INT64_MIN
        if (mp_wide > INT64_MAX) continue;                      // dropping a combination is sound
        int64_t mp = static_cast<int64_t>(mp_wide), mn = p[best] / g;  // mp*p + mn*q cancels column `best`
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
        if (norm == Norm::kOk) set.Add(tmp.data(), k, org, a, b);
      }
    }
    if (next.size() > kMaxRows) {
      // Keep the simplest rows; dropping rows only weakens the result.
      std::vector<std::pair<long, size_t>> order;
      for (size_t i = 0; i < next.size(); ++i) {
        long nz = 0;
        for (size_t j = 0; j < n; ++j) nz += next.Row(i)[j] != 0;
        order.emplace_back(nz, i);
      }
      std::stable_sort(order.begin(), order.end());
      Matrix kept;
      kept.n = n;
      for (size_t i = 0; i < kMaxRows; ++i) kept.Copy(next, order[i].second);
      std::swap(next, kept);
    }
    std::swap(*m, next);
  }
  return true;
}

// Packs rows into a Matrix.
Matrix ToMatrix(std::vector<Decider::Row>* rows, size_t n) {
  Matrix m;
  m.n = n;
  m.Reserve(rows->size());
  for (const Decider::Row& r : *rows) m.Push(r.c.data(), r.c0, r.origin, 0, 0, r.eq);
  return m;
}

}  // namespace

void Decider::Build(System* sys, const Expr* query) {
  // Linear facts as forms over monomials: fact i is `d >= 0` or `d == 0`.
  struct PendingRow {
    Lin lin;
    uint64_t origin;
    bool eq;
  };
  std::vector<PendingRow> pending;
  auto add_ge = [&](Lin lin, uint64_t origin) { pending.push_back({std::move(lin), origin, false}); };
  auto add_eq = [&](const Lin& lin, uint64_t origin) { pending.push_back({lin, origin, true}); };

  // With a cached base (facts, their closure and interval rows), only the query's new
  // columns need work here.
  const size_t start = sys->base ? sys->base->cols.size() : 0;
  if (sys->base) sys->cols = sys->base->cols;
  if (query) {
    for (const Term& t : query->terms) {
      if (!t.mono->factors.empty()) sys->ColOf(t.mono);
    }
  }
  const std::vector<Fact>& facts = s_->facts();
  for (size_t i = 0; i < (sys->base ? 0 : facts.size()); ++i) {
    const Fact& f = facts[i];
    if (f.op == Cmp::kNe) continue;  // not linear; ignoring a fact is sound
    uint64_t origin = i < 62 ? (1ULL << i) : (1ULL << 62);
    Lin lin;
    // Normalize to lin >= 0 (or == 0).
    bool lhs_big = f.op == Cmp::kGe || f.op == Cmp::kGt || f.op == Cmp::kEq;
    lin.AddExpr(f.lhs, lhs_big ? 1 : -1);
    lin.AddExpr(f.rhs, lhs_big ? -1 : 1);
    if (f.op == Cmp::kGt || f.op == Cmp::kLt) lin.Add(s_->UnitMono(), -1);
    for (auto& t : lin.terms) sys->ColOf(t.first);
    if (f.op == Cmp::kEq) {
      add_eq(lin, origin);
    } else {
      add_ge(std::move(lin), origin);
    }
  }

  // Closure: implicit facts of atoms and product relaxations, for every (new) column.
  for (size_t ci = start; ci < sys->cols.size(); ++ci) {
    const Mono* m = sys->cols[ci];
    if (m->factors.size() == 1 && m->factors[0].exp == 1) {
      const Atom* at = m->factors[0].atom;
      switch (at->kind) {
        case AtomKind::kVar:
          break;
        case AtomKind::kFloorDiv:
        case AtomKind::kMod: {
          Interval d = IntervalOf(at->b);
          if (d.lo < 1) break;
          const Atom* fd = at->kind == AtomKind::kFloorDiv ? at : s_->InternAtom(AtomKind::kFloorDiv, -1, at->a, at->b);
          const Atom* md = at->kind == AtomKind::kMod ? at : s_->FindAtom(AtomKind::kMod, at->a, at->b);
          const Mono* fm = s_->InternMono({Factor{fd, 1}});
          // x - d*f  (as a form), used in: 0 <= x - d*f <= d - 1 and mod == x - d*f.
          Lin r;
          r.AddExpr(at->a, 1);
          for (const Term& t : at->b->terms) {
            int64_t c;
            if (__builtin_mul_overflow(t.coeff, -1, &c)) r.ok = false;
            r.Add(s_->MonoMul(t.mono, fm), c);
          }
          for (auto& t : r.terms) sys->ColOf(t.first);
          Lin upper = r;  // d - 1 - (x - d*f) >= 0
          upper.Negate();
          upper.AddExpr(at->b, 1);
          upper.Add(s_->UnitMono(), -1);
          for (auto& t : upper.terms) sys->ColOf(t.first);
          add_ge(r, kImplicit);
          add_ge(upper, kImplicit);
          if (md) {
            Lin eq = r;  // mod - (x - d*f) == 0
            eq.Negate();
            const Mono* mm = s_->InternMono({Factor{md, 1}});
            eq.Add(mm, 1);
            sys->ColOf(mm);
            add_eq(eq, kImplicit);
          }
          break;
        }
        case AtomKind::kMax:
        case AtomKind::kMin: {
          int sign = at->kind == AtomKind::kMax ? 1 : -1;
          for (const Expr* operand : {at->a, at->b}) {  // max - x >= 0, x - min >= 0
            Lin r;
            r.Add(m, sign);
            r.AddExpr(operand, -sign);
            for (auto& t : r.terms) sys->ColOf(t.first);
            add_ge(std::move(r), kImplicit);
          }
          const Atom* other = s_->FindAtom(at->kind == AtomKind::kMax ? AtomKind::kMin : AtomKind::kMax, at->a, at->b);
          if (other && at->kind == AtomKind::kMax) {  // max + min == a + b
            Lin r;
            r.Add(m, 1);
            const Mono* om = s_->InternMono({Factor{other, 1}});
            r.Add(om, 1);
            r.AddExpr(at->a, -1);
            r.AddExpr(at->b, -1);
            for (auto& t : r.terms) sys->ColOf(t.first);
            add_eq(r, kImplicit);
          }
          break;
        }
      }
    } else if (m->degree >= 2) {
      // McCormick: t = u*v with u one atom factor and v the cofactor.
      for (size_t fi = 0; fi < m->factors.size(); ++fi) {
        const Atom* u_atom = m->factors[fi].atom;
        std::vector<Factor> rest = m->factors;
        if (--rest[fi].exp == 0) rest.erase(rest.begin() + fi);
        const Mono* u = s_->InternMono({Factor{u_atom, 1}});
        const Mono* v = s_->InternMono(rest);
        Interval U = AtomInterval(u_atom), V = MonoInterval(v);
        // (u - ul)(v - vl) >= 0, (u - ul)(vh - v) >= 0, (uh - u)(v - vl) >= 0, (uh - u)(vh - v) >= 0
        struct Corner {
          int64_t ub;
          int su;  // +1: (u - ub), -1: (ub - u)
          int64_t vb;
          int sv;
        };
        Corner corners[4] = {{U.lo, 1, V.lo, 1}, {U.lo, 1, V.hi, -1}, {U.hi, -1, V.lo, 1}, {U.hi, -1, V.hi, -1}};
        for (const Corner& c : corners) {
          if (c.ub == kNegInf || c.ub == kPosInf || c.vb == kNegInf || c.vb == kPosInf) continue;
          // su*sv*t - su*sv*vb*u - su*sv*ub*v + su*sv*ub*vb >= 0
          int64_t s = c.su * c.sv;
          Lin r;
          int64_t cu, cv, cc;
          if (__builtin_mul_overflow(-s, c.vb, &cu) || __builtin_mul_overflow(-s, c.ub, &cv) ||
              __builtin_mul_overflow(s * c.ub, c.vb, &cc)) {
            continue;
          }
          r.Add(m, s);
          r.Add(u, cu);
          r.Add(v, cv);
          r.Add(s_->UnitMono(), cc);
          if (!r.ok) continue;
          sys->ColOf(u);
          if (!v->factors.empty()) sys->ColOf(v);
          add_ge(std::move(r), kImplicit);
        }
      }
    }
  }

  // Interval bounds of every (new) column.
  for (size_t ci = start; ci < sys->cols.size(); ++ci) {
    const Mono* m = sys->cols[ci];
    Interval iv = MonoInterval(m);
    if (iv.lo != kNegInf) {
      Lin r;
      r.Add(m, 1);
      r.Add(s_->UnitMono(), -iv.lo);  // iv.lo > kNegInf, so no overflow
      add_ge(std::move(r), kImplicit);
    }
    if (iv.hi != kPosInf) {
      Lin r;
      r.Add(m, -1);
      r.Add(s_->UnitMono(), iv.hi);
      add_ge(std::move(r), kImplicit);
    }
  }

  size_t ncols = sys->cols.size() + 1;  // last column: z (the query)
  if (sys->base) {  // the base's rows stay in the base (Project reads them from there)
    sys->infeasible = sys->base->infeasible;
    sys->infeasible_origin = sys->base->infeasible_origin;
  }
  for (PendingRow& p : pending) {
    if (!p.lin.ok) continue;
    Row row;
    row.c.assign(ncols, 0);
    row.c0 = p.lin.c0;
    row.origin = p.origin;
    row.eq = p.eq;
    bool ok = true;
    for (auto& t : p.lin.terms) {
      int j = sys->Find(t.first);
      if (j < 0 || __builtin_add_overflow(row.c[j], t.second, &row.c[j])) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    Norm n = Normalize(&row);
    if (n == Norm::kOk) {
      sys->rows.push_back(std::move(row));
    } else if (n == Norm::kInfeasible) {
      sys->infeasible = true;  // e.g. a constant contradiction: remember it to report it
      sys->infeasible_origin |= row.origin;
    }
  }
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
  Row q;  // z - e == 0
  q.c.assign(ncols, 0);
  q.c[n] = 1;
  q.c0 = -e->ConstantTerm();
  q.origin = kImplicit;
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
  Matrix m;
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
  static thread_local Scratch scratch;
  if (!Eliminate(&m, static_cast<int>(n), &bad, &scratch)) {
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
    const Expr* ve = s_->MonoExpr(s_->InternMono({Factor{s_->InternAtom(AtomKind::kVar, static_cast<int32_t>(v),
                                                                             nullptr, nullptr),
                                                          1}}),
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
  bool single_var = (e->terms.size() == 1 || (e->terms.size() == 2 && e->terms[1].mono->factors.empty())) &&
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
    bool in = i < 62 ? (origin >> i) & 1 : (origin >> 62) & 1;
    if (!in) continue;
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
    ranges += var.name + " in [" + (var.lo == kNegInf ? std::string("-inf") : std::to_string(var.lo)) + ", " +
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
    switch (f.op) {
      case Cmp::kEq: return int{l == r};
      case Cmp::kNe: return int{l != r};
      case Cmp::kLt: return int{l < r};
      case Cmp::kLe: return int{l <= r};
      case Cmp::kGt: return int{l > r};
      case Cmp::kGe: return int{l >= r};
    }
    return -1;
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
          if (__builtin_add_overflow(old, step, &val[v]) || val[v] > vars[v].hi || step > (int64_t{1} << 40)) break;
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
    Matrix m = ToMatrix(&rows, sys.cols.size() + 1);
    Scratch scratch;
    if (failure.empty() && !Eliminate(&m, -1, &bad, &scratch)) failure = DescribeOrigin(bad);
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
