// Helpers shared by the dim engine's unit tests.
#ifndef SHAPEPOLY_CC_DIM_TEST_UTIL_H_
#define SHAPEPOLY_CC_DIM_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

inline std::string Norm(Scope* s, const std::string& text) { return s->ToString(s->Parse(text)); }

inline Truth Cmp3(Scope* s, const std::string& a, Cmp op, const std::string& b) {
  return s->Compare(s->Parse(a), op, s->Parse(b));
}

using ::shp::testing::Catch;

// A scope without constraints whose variables are `names`, created in that order (so
// variable i is names[i]).
inline std::unique_ptr<Scope> ScopeWithVars(const std::vector<std::string>& names) {
  auto s = Scope::Create({});
  for (const std::string& n : names) s->Var(n);
  return s;
}

// A random expression over the variables `names` (built through the scope's operators, so
// in normal form): sums, products, small powers, floordiv/mod by nonzero constants or by
// variables (whose default range [1, inf) excludes 0), max and min. Operations the engine
// refuses (overflow, size) fall back to one operand.
inline const Expr* RandomExpr(Scope* s, std::mt19937_64* rng, const std::vector<std::string>& names,
                              int depth) {
  auto pick = [rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(*rng); };
  if (depth <= 0 || pick(0, 3) == 0) {
    if (pick(0, 2) == 0) return s->Constant(pick(-3, 6));
    return s->Var(names[static_cast<size_t>(pick(0, static_cast<int>(names.size()) - 1))]);
  }
  const Expr* a = RandomExpr(s, rng, names, depth - 1);
  const Expr* b = RandomExpr(s, rng, names, depth - 1);
  try {
    switch (pick(0, 8)) {
      case 0:
        return s->Add(a, b);
      case 1:
        return s->Sub(a, b);
      case 2:
        return s->Mul(a, b);
      case 3:
        return s->Scale(a, pick(-3, 4));
      case 4:
        return s->Pow(a, pick(0, 3));
      case 5:
        return s->FloorDiv(a, b->IsConstant() ? s->Constant(pick(1, 4)) : b);
      case 6:
        return s->Mod(a, b->IsConstant() ? s->Constant(pick(-4, -1)) : b);
      case 7:
        return s->Max(a, b);
      default:
        return s->Min(a, b);
    }
  } catch (const Error&) {
    return a;
  }
}

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_TEST_UTIL_H_
