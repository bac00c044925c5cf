// The valuation search behind witnesses and FindValuation (explain_search.cc): conditions
// compiled for evaluation and a budgeted local search over the variables' box. Internal to
// the explanations (explain.cc).
#ifndef SHAPEPOLY_CC_DIM_DETAIL_SEARCH_H_
#define SHAPEPOLY_CC_DIM_DETAIL_SEARCH_H_

#include <cstdint>
#include <vector>

#include "cc/dim/detail/compiled_pair.h"
#include "cc/dim/explain.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace detail {

// Budgets of the searches: condition evaluations per valuation search, and starting points.
constexpr long kEvalBudget = 40000;
constexpr long kRefuteBudget = 3000;  // ... when looking for a counterexample to a fix
constexpr int kMaxStarts = 16;

// A comparison l op r compiled for evaluation.
struct Cond {
  const Expr* lhs;
  Cmp op;
  const Expr* rhs;
  std::vector<int32_t> vars;
  CompiledPair program;
  uint8_t holds;  // bit i: whether op holds when l < r (i = 0), l == r (1), l > r (2)
  bool Holds(int64_t l, int64_t r) const { return (holds >> (l < r ? 0 : l == r ? 1 : 2)) & 1; }
};

Cond MakeCond(const Expr* l, Cmp op, const Expr* r);
// The facts of `s` as conditions (compiled once for the searches of one explanation).
std::vector<Cond> FactConds(const Scope& s);

// FindValuation with a budget of condition evaluations.
// `use_bounds`: narrow the box by the scope's bound queries (Bounds) after the first starts.
// `shrink`: move the valuation found towards small values (witnesses that are shown).
// `facts`: the facts of s as conditions (null: compiled here).
bool Search(Scope* s, const std::vector<Condition>& extra, const std::vector<int64_t>* start,
            long budget, bool use_bounds, bool shrink, std::vector<int64_t>* values,
            const std::vector<Cond>* facts = nullptr);

}  // namespace detail
}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DETAIL_SEARCH_H_
