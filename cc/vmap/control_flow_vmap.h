// Batching of control flow (cond, while_loop, scan), internal to cc/vmap. Their subprograms are
// batched as programs (Vmap, recursively, with the same batch variable), and the batched
// operation is one of the same kind over them:
//   cond, predicate not batched: cond of the batched branches (every result batched);
//   cond, predicate batched: both batched branches run, a select per element picks the
//         results (as JAX does: both branches are computed, so both must be valid to run);
//   while_loop: every carry batched; the loop runs while any element's condition holds and
//         each step keeps the carry of the elements whose condition fails (select), so every
//         element ends where it would alone; max_trips carries over;
//   scan: every carry and every xs batched (the batch axis first, the scanned axis one later),
//         the body batched; ys come out stacked as the element's with the batch axis first.
#ifndef SHAPEPOLY_CC_VMAP_CONTROL_FLOW_VMAP_H_
#define SHAPEPOLY_CC_VMAP_CONTROL_FLOW_VMAP_H_

#include <string>
#include <vector>

#include "cc/trace/trace.h"

namespace shp {
namespace vmap {

// The batched results (batch axis first) of the control-flow operation whose first node is
// `y`, by result index, given its operands batched (batch axis first) or nullptr (not
// batched; y's own operand is used). `size` is the batch variable, named `name`.
std::vector<const trace::Tensor*> BatchControlFlow(trace::Trace& t, const trace::Tensor* y,
                                                   const std::vector<const trace::Tensor*>& batched,
                                                   const dim::Expr* size, const std::string& name);

}  // namespace vmap
}  // namespace shp

#endif  // SHAPEPOLY_CC_VMAP_CONTROL_FLOW_VMAP_H_
