// Batching rules (issue 44): what an op definition needs to state how it runs on a batch of
// operands, for the vmap transformation (cc/vmap). The transformation replays a program,
// gives every value that depends on a batched input a leading batch axis, and calls the op's
// rule (OpDef::Batch) for every node with a batched operand. Rules emit operations through the
// same builder as the derivative rules (ad.h), so shapes are inferred and checked as when
// tracing.
//
// Convention: a batched value has its batch axis first (axis 0), of size `BatchNode::size` (a
// dim expression: the new variable). Unbatched operands are the same for every batch element.
// A rule returns the batched result, its batch axis first.
#ifndef SHAPEPOLY_CC_OPS_BATCH_H_
#define SHAPEPOLY_CC_OPS_BATCH_H_

#include <cstdint>
#include <vector>

#include "cc/ops/ad.h"

namespace shp {
namespace ops {

// The node a rule batches.
struct BatchNode {
  OpKind op;
  const Attrs& attrs;
  // The per-example operands and result (the program as traced): their types are those of
  // one batch element. A rule may use an unbatched operand itself, and a batched operand's
  // per-example value only for its type.
  const std::vector<Value>& operands;
  Value result;
  // Operand i with its batch axis first, or nullptr when operand i is not batched.
  const std::vector<Value>& batched;
  const dim::Expr* size;  // the batch size

  bool is_batched(size_t i) const { return batched[i] != nullptr; }
};

// [size] + shape.
Shape WithBatchAxis(const BatchNode& n, const Shape& shape);
// Axes of one element shifted past the batch axis (each + 1).
std::vector<int64_t> ShiftAxes(const std::vector<int64_t>& axes);
// Operand i with its batch axis first: the batched value, or the unbatched operand broadcast
// along a new leading axis.
Value BatchedOperand(AdBuilder& b, const BatchNode& n, size_t i);
// A batched value with 1s inserted after its batch axis up to `rank` + 1 axes, so that NumPy
// broadcasting against unbatched values of rank <= `rank` lines the element axes up.
Value PadBatchedRank(AdBuilder& b, Value x, size_t rank);
// `x` with axis `from` moved to the front (the others keep their order).
Value MoveAxisToFront(AdBuilder& b, Value x, size_t from);
// The rule of the elementwise ops with NumPy broadcasting (unary, binary, compare, select,
// convert): batched operands padded to the result's rank, the op applied as it is.
Value BatchElementwise(AdBuilder& b, const BatchNode& n);
// The rule of ops whose attributes are unchanged by a leading axis (trilu) or that only need
// their axes shifted: applies `op` with `attrs` to the batched operands (every operand
// batched: unbatched ones broadcast).
Value BatchWithAttrs(AdBuilder& b, const BatchNode& n, Attrs attrs);
// Gathers and scatters with batched indices (take, scatter_add) run on the batch merged into
// the indexed axis. `x` batched, `axis` an element axis: x as [size * n, x[:axis],
// x[axis+1:]] (n = x's dimension `axis`).
Value MergeBatchIntoAxis(AdBuilder& b, const BatchNode& n, Value x, size_t axis);
// The inverse: a [size * n, x[:axis], x[axis+1:]] value back to [size] + `element_shape`.
Value SplitBatchFromAxis(AdBuilder& b, const BatchNode& n, Value merged, size_t axis,
                         const Shape& element_shape);
// Batched indices into an axis of size `len` as indices into the merged axis (i64): element e's
// index i becomes e * len + i; an index outside [0, len) stays outside [0, size * len), so
// the op still refuses it (with the shifted value in its message).
Value MergedIndices(AdBuilder& b, const BatchNode& n, Value indices, const dim::Expr* len);
// kUnsupported: `op` cannot be batched because of `why` (names the op).
[[noreturn]] void NotBatchable(OpKind op, const std::string& why);

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_BATCH_H_
