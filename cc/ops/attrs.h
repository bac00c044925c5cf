// Typed attributes: one struct per kind of attribute set, as the schema has one options table
// per kind. An op's attributes are the alternative of `Attrs` its definition names
// (OpDef::attrs_index); every other field of a node is the same for every op. Defaults are
// what an op that was given nothing uses, so two equal operations compare equal.
#ifndef SHAPEPOLY_CC_OPS_ATTRS_H_
#define SHAPEPOLY_CC_OPS_ATTRS_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cc/dim/expr.h"
#include "cc/ops/op_kind.h"
#include "cc/trace/dtype.h"

namespace shp {
namespace ops {

using Shape = std::vector<const dim::Expr*>;

struct NoAttrs {};
struct ConstantAttrs {  // constant: index of the bytes in the trace's or program's buffers
  int32_t buffer = -1;
};
struct ConvertAttrs {  // convert
  trace::DType dtype = trace::DType::kF32;
};
struct ShapeAttrs {  // broadcast_to: the target shape
  Shape shape;
};
struct ReshapeAttrs {  // reshape: the target shape; shape[infer_axis] is nullptr (or -1: none)
  Shape shape;
  int64_t infer_axis = -1;
};
struct TransposeAttrs {  // transpose
  std::vector<int64_t> permutation;
};
struct AxisAttrs {  // concatenate, softmax, cumsum, take, scatter_add (normalized to >= 0)
  int64_t axis = 0;
};
struct SliceAttrs {  // slice: symbolic start and limit, constant strides >= 1
  Shape start, limit;
  std::vector<int64_t> strides;
};
struct PadAttrs {  // pad: low and high padding >= 0, the padding value
  Shape low, high;
  double value = 0.0;
};
struct ReduceAttrs {  // reduce_*: axes (sorted, unique, explicit after inference)
  std::vector<int64_t> axes;
  bool keepdims = false;
};
struct DotDims {  // dot_general: the axes of lhs and rhs
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};
struct IotaAttrs {  // iota: dtype, shape, the axis that counts
  trace::DType dtype = trace::DType::kF32;
  Shape shape;
  int64_t axis = 0;
};
struct LayerNormAttrs {  // layer_norm
  int64_t axis = 0;
  double epsilon = 0.0;
};
struct DimValueAttrs {  // dim_value: the dimension expression
  const dim::Expr* dim = nullptr;
};
struct ReverseAttrs {  // reverse: the axes to flip (sorted, unique after inference)
  std::vector<int64_t> axes;
};

// conv: one entry per spatial axis (explicit after inference); pads are dims of any sign
// (negative crops).
struct ConvAttrs {
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
  Shape pad_low, pad_high;
  int64_t groups = 1;
};

// reduce_window: the reduction (kReduceSum, kReduceMax or kReduceMin) and one entry per axis
// (explicit after inference: strides and dilations default to 1, pads to 0); pads are dims of
// any sign (negative crops).
struct WindowAttrs {
  OpKind reduction = OpKind::kReduceSum;
  std::vector<int64_t> window, strides, window_dilation, base_dilation;
  Shape pad_low, pad_high;
};

// nonzero, boolean_mask, size_from_value: the unbacked variable the node produces (a variable
// expression; null before inference, which makes it), boolean_mask's first masked axis, and,
// at trace time only, the requested name and size_from_value's declared range.
struct UnbackedAttrs {
  const dim::Expr* size = nullptr;
  int64_t axis = 0;
  std::string name;  // "" : u0, u1, ...
  int64_t min = 0, max = INT64_MAX;
};

using Attrs =
    std::variant<NoAttrs, ConstantAttrs, ConvertAttrs, ShapeAttrs, ReshapeAttrs, TransposeAttrs,
                 AxisAttrs, SliceAttrs, PadAttrs, ReduceAttrs, DotDims, IotaAttrs, LayerNormAttrs,
                 DimValueAttrs, ReverseAttrs, ConvAttrs, WindowAttrs, UnbackedAttrs>;

// Calls f(const dim::Expr*&) on every dimension expression of `a`, in the order the
// serialized form lists them (nullptr entries included: a reshape's inferred axis).
template <class F>
void ForEachDim(Attrs& a, F&& f) {
  if (auto* x = std::get_if<ShapeAttrs>(&a)) {
    for (const dim::Expr*& e : x->shape) f(e);
  } else if (auto* r = std::get_if<ReshapeAttrs>(&a)) {
    for (const dim::Expr*& e : r->shape) f(e);
  } else if (auto* s = std::get_if<SliceAttrs>(&a)) {
    for (const dim::Expr*& e : s->start) f(e);
    for (const dim::Expr*& e : s->limit) f(e);
  } else if (auto* p = std::get_if<PadAttrs>(&a)) {
    for (const dim::Expr*& e : p->low) f(e);
    for (const dim::Expr*& e : p->high) f(e);
  } else if (auto* i = std::get_if<IotaAttrs>(&a)) {
    for (const dim::Expr*& e : i->shape) f(e);
  } else if (auto* d = std::get_if<DimValueAttrs>(&a)) {
    f(d->dim);
  } else if (auto* cv = std::get_if<ConvAttrs>(&a)) {
    for (const dim::Expr*& e : cv->pad_low) f(e);
    for (const dim::Expr*& e : cv->pad_high) f(e);
  } else if (auto* u = std::get_if<UnbackedAttrs>(&a)) {
    if (u->size != nullptr) f(u->size);
  } else if (auto* rw = std::get_if<WindowAttrs>(&a)) {
    for (const dim::Expr*& e : rw->pad_low) f(e);
    for (const dim::Expr*& e : rw->pad_high) f(e);
  }
}

// The same, read-only.
template <class F>
void ForEachDim(const Attrs& a, F&& f) {
  ForEachDim(const_cast<Attrs&>(a),
             [&](const dim::Expr*& e) { f(static_cast<const dim::Expr*>(e)); });
}

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_ATTRS_H_
