// Differentiation of control flow (cond, while_loop, scan), internal to cc/autodiff. An
// operation's subprograms are transformed as programs (Jvp, Vjp of autodiff.h, recursively),
// and the derivative is an operation of the same kind over them:
//   jvp:  cond of the branches' jvps; while_loop and scan carrying (value, tangent) pairs;
//   vjp:  cond of the branches' vjps; scan as JAX transposes it: a forward scan that also
//         stacks the carry entering each step (the residuals), then a scan in the other
//         direction over them running the body's vjp, carrying the carry's cotangent and the
//         constants' accumulated cotangents, stacking the xs' cotangents;
//   while_loop: with max_trips, the vjp of the scan of max_trips steps it equals (each step
//         runs the body where the condition holds); without, kUnsupported (its trip count is
//         data-dependent), saying so.
// The nodes of one operation (one per result) are handled together, at its first node.
#ifndef SHAPEPOLY_CC_AUTODIFF_CONTROL_FLOW_AD_H_
#define SHAPEPOLY_CC_AUTODIFF_CONTROL_FLOW_AD_H_

#include <vector>

#include "cc/trace/trace.h"

namespace shp {
namespace autodiff {

// The nodes of the operation that values[v] (a control-flow node) belongs to, in order: v is
// at or after the first of them (they are recorded consecutively).
std::vector<size_t> OperationNodes(const std::vector<const trace::Tensor*>& values, size_t v);

// The tangent of every result of the operation whose first node is `y` (by result index;
// nullptr: zero), given its operands' tangents (nullptr: zero).
std::vector<const trace::Tensor*> ControlFlowJvp(trace::Trace& t, const trace::Tensor* y,
                                                 const std::vector<const trace::Tensor*>& tangents);

// The cotangents of the operands of the operation whose first node is `y` (nullptr: zero, or
// not needed), given the cotangent of each result (by result index; nullptr: zero).
std::vector<const trace::Tensor*> ControlFlowVjp(trace::Trace& t, const trace::Tensor* y,
                                                 const std::vector<const trace::Tensor*>& cts,
                                                 const std::vector<bool>& need);

}  // namespace autodiff
}  // namespace shp

#endif  // SHAPEPOLY_CC_AUTODIFF_CONTROL_FLOW_AD_H_
