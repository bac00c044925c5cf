// Symbolic shape (and dtype) inference for every operation.
//
// The same rules serve the tracer (which records shape assertions when an operation's
// semantics allow it, e.g. reshape divisibility) and the program verifier (which re-checks
// a loaded program: there every needed fact must already be provable, because the
// program carries its assertions).
//
// Errors (shp::Error), all prefixed with the operation's name:
//   kShapeMismatch   the shapes are provably incompatible ("add: incompatible shapes for
//                    broadcasting: (v,) and (4,)", "matmul: contracting dimensions differ:
//                    4 vs v");
//   kInconclusive    a needed comparison is UNKNOWN; the message names the comparison, the
//                    scope's constraints and the fixes;
//   kDtypeMismatch   operand dtypes that the operation does not accept;
//   kInvalidArgument bad attributes (axes out of range, wrong operand count, ...).
#ifndef SHAPEPOLY_CC_TRACE_INFER_H_
#define SHAPEPOLY_CC_TRACE_INFER_H_

#include <vector>

#include "cc/dim/scope.h"
#include "cc/trace/ops.h"
#include "cc/trace/trace.h"

namespace shp {
namespace trace {

enum class InferMode {
  kTrace,   // record a shape assertion where the operation allows it
  kVerify,  // never record: a fact that would be asserted must already be provable
};

// Infers the result type of `op` on operands of types `operands`. Normalizes `attrs` in
// place (negative axes become non-negative, reduction axes are sorted and made explicit,
// the reshape axis to infer is located), so that equal operations have equal attributes.
// Every dim in `operands` and `attrs` must belong to `scope`.
TensorType InferType(dim::Scope* scope, OpKind op, Attrs* attrs, const std::vector<TensorType>& operands,
                     InferMode mode);

// The number of operands `op` takes; -1 for "one or more" (concatenate).
int ExpectedOperandCount(OpKind op);

}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_TRACE_INFER_H_
