// Turning facts into rows (see decide.h): the System of one query, whose columns are
// monomials, and the linear forms it is assembled from. Internal to the decision procedure.
#ifndef SHAPEPOLY_CC_DIM_DECIDE_ROWS_H_
#define SHAPEPOLY_CC_DIM_DECIDE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cc/dim/decide.h"
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

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DECIDE_ROWS_H_
