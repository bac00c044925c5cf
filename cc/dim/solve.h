// Solving dimension variables from concrete shapes, and checking everything a call must
// satisfy, in this order: rank, constant dims, remainders, ranges, solvability,
// consistency between arguments, constraints and assertions. Messages name the argument
// and axis, the specifications, and the values found so far.
#ifndef SHAPEPOLY_CC_DIM_SOLVE_H_
#define SHAPEPOLY_CC_DIM_SOLVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/dim/scope.h"

namespace shp {
namespace dim {

struct SolveArg {
  std::string label;              // "args[0]" or "input 'x'": used in messages
  std::vector<const Expr*> dims;  // the symbolic shape
  std::vector<int64_t> shape;     // the concrete shape
  bool named = false;             // messages say "input 'x': axis 1" instead of "args[0].shape[1]"
};

struct Solution {
  std::vector<int64_t> values;  // indexed by variable
  std::vector<bool> known;
};

struct SolveOptions {
  // Who states the shapes in messages: "the specification requires 784" / "the program requires
  // 784".
  std::string requirer = "the specification";
  // Variables whose values are given (e.g. explicit integer inputs of a program); may be empty.
  const Solution* preset = nullptr;
  // Check the scope's constraints and assertions whose variables are all known.
  bool check_facts = true;
};

// Throws shp::Error: kShapeMismatch (rank, constant dims, remainders, inconsistencies),
// kConstraintViolation (ranges, constraints, assertions), kUnsolvable, kOverflow.
Solution Solve(Scope* scope, const std::vector<SolveArg>& args, const SolveOptions& options);

// The variable that one dimension `e == value` determines once the variables marked in
// `known` (indexed by variable) are known, or -1: the cases Solve handles, i.e. `e` is
// linear in one unknown variable, a product with known factors, a perfect power of it, or a
// max/min with a known operand whose other operand is such a form. Whenever it names a
// variable, Solve determines that variable from such a dimension (or reports why the value
// does not fit). Reads only immutable expressions (no Scope cache).
int32_t SolvableVar(const Scope& s, const Expr* e, const std::vector<bool>& known);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_SOLVE_H_
