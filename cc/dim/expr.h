// Symbolic dimension expressions: the public handle.
//
// An Expr is built only by its Scope (scope.h), which interns it: structurally equal
// expressions are the same pointer, whichever way they were built (parser or operators).
// Expressions are immutable and live as long as their Scope. Beyond the accessors below, use
// the Scope (printing, comparing, bounds), eval.h (values, variables), solve.h (solvable
// variables), dag.h and rebuild.h (export and import).
//
// The normal form behind the handle (a sum of coefficient * monomial terms; monomials are
// products of atoms: variables, floordiv/mod/max/min) is private to cc/dim: its types are
// complete only in cc/dim/detail/normal_form.h, which only cc/dim/*.cc include, as MLIR keeps
// AffineExprStorage private. Code outside cc/dim cannot read the representation, so it can
// change without touching the rest of the library.
#ifndef SHAPEPOLY_CC_DIM_EXPR_H_
#define SHAPEPOLY_CC_DIM_EXPR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shp {
namespace dim {

class Scope;
struct Term;  // detail/normal_form.h

struct Expr {
  Scope* scope;  // the scope that built (and owns) this expression

  bool IsConstant() const { return is_constant; }
  // The constant term (the whole value when IsConstant()).
  int64_t ConstantTerm() const { return constant_term; }
  // The variable index when this expression is exactly one variable, else -1.
  int32_t AsVar() const { return as_var; }

  // ---- Representation: only cc/dim/*.cc use these (see detail/normal_form.h) ----
  std::vector<Term> terms;  // sorted by CompareMonos (descending); constant term last
  size_t hash;
  int64_t constant_term;  // cached by Scope::MakeExpr
  int32_t as_var;
  bool is_constant;
};

// The number of terms of `e`'s normal form (0 for the constant 0), and the highest degree
// of its monomials (0 for a constant). Loaders and fuzzers cap work with them.
size_t NumTerms(const Expr* e);
int32_t Degree(const Expr* e);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_EXPR_H_
