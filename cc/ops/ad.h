// Differentiation rules (issue 10): what an op definition needs to state its JVP and VJP
// rules, and the builder they emit operations into. The program transformations of
// cc/autodiff replay a program into a trace and call these rules for every node; the rules
// never see the trace itself, only AdBuilder (cc/ops sits below cc/trace).
//
// Values are the tensors of the trace being built, opaque here. In tangents and cotangents
// nullptr is a symbolic zero: it is never materialized, and a rule returns nullptr for a zero
// result.
#ifndef SHAPEPOLY_CC_OPS_AD_H_
#define SHAPEPOLY_CC_OPS_AD_H_

#include <cstdint>
#include <vector>

#include "cc/dim/scope.h"
#include "cc/ops/attrs.h"
#include "cc/ops/op_kind.h"
#include "cc/ir/tensor_type.h"

namespace shp {
namespace trace {
struct Tensor;
}  // namespace trace

namespace ops {

using Value = const trace::Tensor*;

// Records operations for the rules. Implemented over a trace by cc/autodiff; every helper
// below goes through Apply, so shapes are inferred and checked as when tracing.
class AdBuilder {
 public:
  virtual ~AdBuilder() = default;
  virtual dim::Scope* dims() = 0;
  virtual const trace::TensorType& type(Value v) = 0;
  // Records `op` with `attrs` on `operands` (attributes normalized, as trace::Trace::Apply).
  virtual Value Apply(OpKind op, Attrs attrs, const std::vector<Value>& operands) = 0;
  // A rank-0 constant of `dtype` (floating point) holding `value`.
  virtual Value Scalar(trace::DType dtype, double value) = 0;

  Value Unary(OpKind op, Value x) { return Apply(op, NoAttrs{}, {x}); }
  Value Binary(OpKind op, Value a, Value b) { return Apply(op, NoAttrs{}, {a, b}); }
  Value Add(Value a, Value b) { return Binary(OpKind::kAdd, a, b); }
  Value Sub(Value a, Value b) { return Binary(OpKind::kSub, a, b); }
  Value Mul(Value a, Value b) { return Binary(OpKind::kMul, a, b); }
  Value Div(Value a, Value b) { return Binary(OpKind::kDiv, a, b); }
  Value Neg(Value x) { return Unary(OpKind::kNeg, x); }
  // A rank-0 constant of x's dtype.
  Value ScalarLike(Value x, double value) { return Scalar(type(x).dtype, value); }
  Value Select(Value pred, Value on_true, Value on_false) {
    return Apply(OpKind::kSelect, NoAttrs{}, {pred, on_true, on_false});
  }
  Value Convert(Value x, trace::DType dtype) {
    return Apply(OpKind::kConvert, ConvertAttrs{dtype}, {x});
  }
  Value BroadcastTo(Value x, const Shape& shape) {
    return Apply(OpKind::kBroadcastTo, ShapeAttrs{shape}, {x});
  }
  Value ReduceSum(Value x, const std::vector<int64_t>& axes, bool keepdims) {
    return Apply(OpKind::kReduceSum, ReduceAttrs{axes, keepdims}, {x});
  }
  Value Reshape(Value x, const Shape& shape) {
    return Apply(OpKind::kReshape, ReshapeAttrs{shape, -1}, {x});
  }
  Value Transpose(Value x, const std::vector<int64_t>& permutation) {
    return Apply(OpKind::kTranspose, TransposeAttrs{permutation}, {x});
  }
  // Zeros of `t` (only where a value must exist: an output whose derivative is zero).
  Value Zeros(const trace::TensorType& t) { return BroadcastTo(Scalar(t.dtype, 0.0), t.shape); }

  // Symbolic-zero arithmetic: nullptr is 0.
  Value AddZ(Value a, Value b) { return a == nullptr ? b : b == nullptr ? a : Add(a, b); }
  // `ct` of a result broadcast from `shape` (NumPy rules), summed back to `shape`: leading
  // axes, and axes where `shape` has a 1 that the result does not provably have.
  Value SumToShape(Value ct, const Shape& shape);
};

// The node a rule differentiates: its op, attributes, primal operands and primal result.
struct AdNode {
  OpKind op;
  const Attrs& attrs;
  const std::vector<Value>& operands;
  Value result;
};

// Whether values of `dtype` carry derivatives (floating point).
bool IsDifferentiable(trace::DType dtype);

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_AD_H_
