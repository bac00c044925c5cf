// Answers that explain themselves (issue 14): for a comparison the decision procedure leaves
// undecided, two witnesses (concrete valuations that satisfy every fact and range, one making
// the comparison true and one making it false) and the fixes that decide it, each verified
// before it is shown; for a constraint violated at run time, the smallest change of one
// input dimension that satisfies it (solve.cc).
//
// Verification, never trust:
// * A witness is a valuation of every variable of the scope. It is shown only after
//   evaluating (eval.h) every fact (constraints, assertions, guards, derived facts), every
//   variable's range, and the comparison itself at it. A fact that cannot be evaluated there
//   (division by zero, overflow) counts as violated.
// * A fix is listed only when a copy of the facts with the fix applied (a fresh Scope built
//   from the constraint texts, the declared ranges and the other facts, CopyScope; seeded
//   with the scope's derived variable bounds, SeedCopy, and unseeded when it does not decide
//   the comparison so) decides the comparison as true, and a valuation checked by evaluation
//   (the witness that made it true, or one the witness search finds from it) satisfies that
//   copy's facts: the fix never leaves the facts unsatisfiable (PyTorch #148568 suggested a
//   max= whose range produced a new guard). A constraint and the same fact asserted with
//   shp_scope_check are one fact to the engine: one copy verifies both forms. A range
//   candidate that a witness search refutes (a valuation inside the range making the
//   comparison false, searched from the false witness moved into the range) is dropped
//   before a copy is built. max/min in the spec is verified on the scope itself (the facts do
//   not change).
// * Candidates: the comparison as a constraint or check; for each variable of the comparison
//   (at most three) the one-sided declared range on the true witness's side, widened by
//   bisection towards the false witness's value while it still decides, or for v == c the
//   pin [c, c]; in a specification, max(a, b) for both sides of ==, min/max for <, <=, >, >=.
// * The searches are bounded (evaluations, copies): when one gives up, the explanation says
//   so and shows what was found. The search is deterministic (a fixed seed), so the same
//   question gives the same explanation.
#ifndef SHAPEPOLY_CC_DIM_EXPLAIN_H_
#define SHAPEPOLY_CC_DIM_EXPLAIN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

// A comparison l op r that a valuation must satisfy.
struct Condition {
  const Expr* lhs;
  Cmp op;
  const Expr* rhs;
};

// Whether `values` (one per variable of `s`) lies in every variable's range and satisfies
// every fact of `s` and every condition of `extra`, by evaluation.
bool SatisfiesFacts(const Scope& s, const std::vector<int64_t>& values,
                    const std::vector<Condition>& extra = {});

// Searches for values of all variables of `s` that satisfy every fact, range and `extra`
// condition (a bounded local search from the hints, the ranges' ends and seeded random
// points, repairing one violated condition at a time). `start` (may be null) is tried first.
// True with *values set (verified by SatisfiesFacts) or false when the budget ran out.
bool FindValuation(Scope* s, const std::vector<Condition>& extra, const std::vector<int64_t>* start,
                   std::vector<int64_t>* values);

// A fresh Scope with the facts of `s`: its constraint texts plus `extra_constraints`, its
// declared ranges (a declaration in `overrides` replaces the one of the same name or adds
// one), its assertions and guards, and its derived facts. Throws what building it throws
// (kUnsatisfiable when the changes contradict the facts).
std::unique_ptr<Scope> CopyScope(const Scope& s, const std::vector<std::string>& extra_constraints,
                                 const std::vector<Scope::Declaration>& overrides);

// Seeds `copy` (CopyScope of `s` with these `overrides`) with `derived`, the variables'
// bounds of `s` (Scope::VarBounds): a copy only adds facts, so they hold in it as long as
// every override narrows a range `s` declares (false, and nothing seeded, otherwise). The
// copy then skips deriving its own bounds; its answers stay sound and may be weaker
// (Scope::Unseed derives them afresh).
bool SeedCopy(const Scope& s, const std::vector<Interval>& derived,
              const std::vector<Scope::Declaration>& overrides, Scope* copy);

// The witnesses and verified fixes of an undecided `a op b` (Compare gave kUnknown), and the
// text that shows them in a message: " Witnesses (...): n = 3 makes it true; n = 1 makes it
// false. Verified fixes: ...". `in_spec`: the comparison compares dimensions of a
// specification (tracing), so writing max/min in the spec is offered as a fix too. Never
// throws shp::Error: if explaining fails, the detail is empty and the text says why.
struct Explanation {
  std::shared_ptr<const ErrorDetail> detail;
  std::string text;
};
Explanation ExplainUndecided(Scope* s, const Expr* a, Cmp op, const Expr* b, bool in_spec);

// "n = 3, m = 5" for the variables a witness shows.
std::string WitnessText(const ErrorWitness& w);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_EXPLAIN_H_
