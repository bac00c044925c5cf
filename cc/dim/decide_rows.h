// Turning facts into rows (see decide.h): the System of one query, whose columns are
// monomials, and the linear forms it is assembled from. Internal to the decision procedure.
#ifndef SHAPEPOLY_CC_DIM_DECIDE_ROWS_H_
#define SHAPEPOLY_CC_DIM_DECIDE_ROWS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cc/dim/decide.h"
#include "cc/dim/detail/compiled_pair.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

// Columns of one system at most (the query's z comes on top); a row that would need more
// is dropped.
constexpr size_t kMaxCols = 64;

struct Decider::System {
  const System* base = nullptr;  // cached facts part: its columns come first, same indices
  std::vector<const Mono*> cols;
  std::unordered_map<const Mono*, int> col_of;  // columns not in `base`
  std::vector<Row> rows;
  bool infeasible = false;
  uint64_t infeasible_origin = 0;
  // The cached base only (Project): the root of each column in the components that its rows
  // link (every root a column of the base), and one column of each row (-1: none), so that a
  // query unites only its own rows.
  bool links_ready = false;
  std::vector<int> link_root;
  std::vector<int> row_col;
  // ... and for each row, the first earlier row equal to it (coefficients, constant and
  // kind), or -1: Project leaves such duplicates out of its elimination (fm::Scratch::weight).
  std::vector<int> dup_of;

  int ColOf(const Mono* m) {
    int found = Find(m);
    if (found >= 0) return found;
    if (cols.size() >= kMaxCols) return -1;
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

// The candidate recession rays of a scope's facts (decide_rays.cc): kMaxRays at most (one
// per variable and direction it is unbounded in).
constexpr size_t kMaxRays = 8;
struct Decider::Rays {
  size_t count = 0;
  size_t vars = 0;  // the scope's variables when built (the points have a value for each)
  // The two points of each ray (a value per variable): the column's change between them is
  // the ray's value there.
  std::vector<int64_t> at0[kMaxRays], at1[kMaxRays];
  std::vector<int64_t> base_slope;  // base column j, ray k: [j * kMaxRays + k]
  bool base_ok[kMaxRays] = {};      // every base row holds along ray k
  std::unordered_map<const Mono*, std::vector<int64_t>> slope;  // columns past the base's
};

// The witness search's state for a scope's facts (decide_witness.cc), built on first use.
struct Decider::Witness {
  size_t vars = 0;  // the scope's variables when built
  std::vector<detail::CompiledPair> facts;
  std::vector<std::vector<int32_t>> fact_vars;
  std::vector<Interval> box;   // each variable's derived bounds (within its declared range)
  std::vector<int64_t> start;  // where every search starts
  std::vector<int64_t> point;  // the search's valuation
  std::vector<int64_t> slots;  // CompiledPair scratch
  std::vector<uint8_t> in_query;
  detail::CompiledPair query;       // the query being witnessed
  std::vector<int32_t> query_vars;  // ... and its variables
  std::vector<int64_t> cands;
  std::vector<int64_t> found[2];  // the last Witnessed query's witnesses (lower, upper side)
  std::vector<int64_t> valid;     // a valuation where every fact holds (valid_state 1)
  int valid_state = 0;            // 0: not searched yet, 1: found, -1: none found
  std::vector<int> case_of;       // Settled: the case a valuation falls in
  // Unbounded families valid + t*r (t >= 1) on which every fact holds (decide_witness.cc):
  // r, and the points of t = 1 and t = 2; built on first use.
  bool families_built = false;
  std::vector<std::vector<int64_t>> families, family_p1, family_p2;
  bool usable = false;  // facts within kMaxWitnessFacts and each one compiled
};

// The terms of a Lin in order. Nearly every form has at most kInline terms, kept in place: a
// query assembles dozens of forms, and a vector each was most of its allocations.
class LinTerms {
 public:
  using value_type = std::pair<const Mono*, int64_t>;
  static constexpr size_t kInline = 4;

  LinTerms() = default;
  LinTerms(const LinTerms&) = default;
  LinTerms& operator=(const LinTerms&) = default;
  LinTerms(LinTerms&& o) noexcept : size_(o.size_), heap_(std::move(o.heap_)) {
    std::copy(o.inline_, o.inline_ + kInline, inline_);
    o.size_ = 0;
    o.heap_.clear();
  }
  LinTerms& operator=(LinTerms&& o) noexcept {
    if (this != &o) {
      std::copy(o.inline_, o.inline_ + kInline, inline_);
      size_ = o.size_;
      heap_ = std::move(o.heap_);
      o.size_ = 0;
      o.heap_.clear();
    }
    return *this;
  }

  void emplace_back(const Mono* m, int64_t c) {
    if (size_ < kInline) {
      inline_[size_++] = {m, c};
      return;
    }
    if (size_ == kInline) heap_.assign(inline_, inline_ + kInline);  // all move to the heap
    heap_.emplace_back(m, c);
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  value_type* begin() { return size_ <= kInline ? inline_ : heap_.data(); }
  value_type* end() { return begin() + size_; }
  const value_type* begin() const { return size_ <= kInline ? inline_ : heap_.data(); }
  const value_type* end() const { return begin() + size_; }
  value_type& operator[](size_t i) { return begin()[i]; }
  const value_type& operator[](size_t i) const { return begin()[i]; }

 private:
  value_type inline_[kInline];  // the terms while size_ <= kInline
  size_t size_ = 0;
  std::vector<value_type> heap_;  // all the terms once size_ > kInline
};

// A linear form over monomials being assembled; `ok` turns false on overflow.
struct Lin {
  LinTerms terms;
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

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DECIDE_ROWS_H_
