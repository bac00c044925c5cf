// Evaluation of built expressions against concrete variable values, and the variables an
// expression uses. Both only read the (immutable) expressions: they take no lock, touch no
// Scope cache, and may run on any number of threads while the scope is not being modified.
#ifndef SHAPEPOLY_CC_DIM_EVAL_H_
#define SHAPEPOLY_CC_DIM_EVAL_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "cc/dim/expr.h"

namespace shp {
namespace dim {

// The value of `e` when variable i has the value vars[i] (every variable of `e` must have
// one). Throws shp::Error kDivisionByZero ("runtime: a dimension divides by zero") when a
// divisor evaluates to 0 and kOverflow when a product ("runtime: an array size overflows
// int64") or a sum ("runtime: a dimension overflows int64") leaves int64, checking terms,
// factors and operands in their normal-form order. An expression whose terms overflow but
// whose value fits (an expanded power: (((a - 2)^3)^3)^3 at a = 4 is 2^27) is evaluated again
// in 128 bits and gives its value; the error stands only if that fails too.
int64_t Evaluate(const Expr* e, const std::vector<int64_t>& vars);

// Sound bounds of `e` when variable i lies in [vars[i].first, vars[i].second] (INT64_MIN /
// INT64_MAX: unbounded), by interval arithmetic: every value `e` takes on such a valuation
// (where it is defined) lies in the result. A divisor whose range contains 0 makes its
// floordiv/mod unbounded. Lock-free like Evaluate.
std::pair<int64_t, int64_t> EvaluateBounds(const Expr* e,
                                           const std::vector<std::pair<int64_t, int64_t>>& vars);

struct VarRef {
  int32_t index;     // in the expression's scope
  const char* name;  // owned by the scope
};

// Appends every variable `e` uses that `out` does not hold yet (so repeated calls collect a
// set), in no promised order. A null `e` adds nothing.
void CollectVars(const Expr* e, std::vector<VarRef>* out);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_EVAL_H_
