// Ops that make values from nothing but attributes (constant, iota, dim_value), take, which
// gathers along an axis with one index list, and take_along_axis, which gathers along an axis
// with an index per result position. Kernels: cc/kernels/gather.h (Take, TakeAlongAxis); iota
// is a plain loop.
#include <string>
#include <vector>

#include "cc/kernels/gather.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using trace::DType;
using trace::TensorType;

// Ops without operands: zero derivatives (the transformations never ask, since no operand
// carries a tangent or needs a cotangent; stated so that no op lacks a rule).
template <class A>
class SourceOpDef : public TypedOpDef<A> {
 public:
  explicit SourceOpDef(OpKind kind) : TypedOpDef<A>(kind, 0) {}
  Value Jvp(AdBuilder&, const AdNode&, const std::vector<Value>&) const override { return nullptr; }
  std::vector<Value> Vjp(AdBuilder&, const AdNode&, Value,
                         const std::vector<bool>&) const override {
    return {};
  }
};

// ---- constant: the bytes are a program buffer (checked by the loader) ----

class ConstantDef final : public SourceOpDef<ConstantAttrs> {
 public:
  ConstantDef() : SourceOpDef(OpKind::kConstant) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::ConstantOptions; }

 protected:
  TensorType InferTyped(InferContext& c, ConstantAttrs&) const override {
    c.Invalid("a constant has no inferred type");
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ConstantAttrs& a) const override {
    return fb::CreateConstantOptions(*w.b, static_cast<uint32_t>(a.buffer)).Union();
  }
  void Read(const OptionsReader&, const void* o, ConstantAttrs* a) const override {
    a->buffer = static_cast<int32_t>(static_cast<const fb::ConstantOptions*>(o)->buffer());
  }
  std::string Text(const AttrPrinter&, const ConstantAttrs& a) const override {
    return " buffer=" + std::to_string(a.buffer);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const ConstantAttrs& a) const override {
    b.SetConstant(n.value, b.buffer(a.buffer).data());
  }
};

// ---- iota ----

struct IotaStep final : Step {
  int64_t outer = 0, n = 0, inner = 0;
  template <typename T>
  void Fill(uint8_t* po) const {
    T* out = reinterpret_cast<T*>(po);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        T* row = out + (o * n + j) * inner;
        for (int64_t i = 0; i < inner; ++i) row[i] = static_cast<T>(j);
      }
    }
  }
  void Run(const RunContext& c) override {
    switch (dtype) {
      case DType::kF32:
        return Fill<float>(Out(c));
      case DType::kF64:
        return Fill<double>(Out(c));
      case DType::kI32:
        return Fill<int32_t>(Out(c));
      case DType::kI64:
        return Fill<int64_t>(Out(c));
      default:
        break;
    }
    throw Error(Code::kInternal, std::string("runtime: iota on ") + trace::DTypeName(dtype));
  }
};

class IotaDef final : public SourceOpDef<IotaAttrs> {
 public:
  IotaDef() : SourceOpDef(OpKind::kIota) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::IotaOptions; }

 protected:
  TensorType InferTyped(InferContext& c, IotaAttrs& a) const override {
    c.RequireDType(a.dtype,
                   trace::IsValidDType(static_cast<int32_t>(a.dtype)) && trace::IsNumeric(a.dtype),
                   "a numeric dtype");
    const Shape& sh = a.shape;
    if (sh.empty()) c.Invalid("the shape must have rank >= 1");
    for (size_t i = 0; i < sh.size(); ++i) {
      if (sh[i] == nullptr) c.Invalid("dimension " + std::to_string(i) + " is missing");
      c.CheckSize(sh[i], "dimension " + std::to_string(i));
    }
    a.axis = c.NormAxis(a.axis, sh.size(), "axis");
    return TensorType{a.dtype, sh};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const IotaAttrs& a) const override {
    return fb::CreateIotaOptions(*w.b, w.b->CreateVector(w.Shape(a.shape)), a.axis).Union();
  }
  void Read(const OptionsReader& r, const void* opt, IotaAttrs* a) const override {
    const fb::IotaOptions* o = static_cast<const fb::IotaOptions*>(opt);
    a->shape = r.shape(o->shape());
    a->axis = o->axis();
    a->dtype = r.node_dtype;
  }
  std::string Text(const AttrPrinter& p, const IotaAttrs& a) const override {
    return " shape=" + p.Dims(a.shape) + " axis=" + std::to_string(a.axis);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const IotaAttrs& a) const override {
    const std::vector<int64_t>& out = b.shape(n.value);
    size_t ax = static_cast<size_t>(a.axis);
    IotaStep& s = b.AddStep<IotaStep>(n.dtype, {}, n.value);
    s.outer = PlanBuilder::Product(out, 0, ax);
    s.n = out[ax];
    s.inner = PlanBuilder::Product(out, ax + 1, out.size());
  }
};

// ---- dim_value: a plan scalar ----

class DimValueDef final : public SourceOpDef<DimValueAttrs> {
 public:
  DimValueDef() : SourceOpDef(OpKind::kDimValue) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::DimValueOptions; }

 protected:
  TensorType InferTyped(InferContext& c, DimValueAttrs& a) const override {
    if (a.dim == nullptr) c.Invalid("takes exactly one dimension expression");
    return TensorType{DType::kI64, {}};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const DimValueAttrs& a) const override {
    return fb::CreateDimValueOptions(*w.b, w.dim(a.dim)).Union();
  }
  void Read(const OptionsReader& r, const void* o, DimValueAttrs* a) const override {
    a->dim = r.dim(static_cast<const fb::DimValueOptions*>(o)->dim());
  }
  std::string Text(const AttrPrinter& p, const DimValueAttrs& a) const override {
    return " dim=" + p.dim(a.dim);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const DimValueAttrs& a) const override {
    b.SetScalar(n.value, b.Eval(a.dim));
  }
};

// ---- take ----

template <typename I>
void CheckIndices(const void* data, int64_t count, int64_t n) {
  const I* idx = static_cast<const I*>(data);
  for (int64_t i = 0; i < count; ++i) {
    if (idx[i] < 0 || static_cast<int64_t>(idx[i]) >= n) {
      throw Error(Code::kInvalidArgument,
                  "take: index " + std::to_string(static_cast<int64_t>(idx[i])) + " (position " +
                      std::to_string(i) + " of the indices) is outside [0, " + std::to_string(n) +
                      ")");
    }
  }
}

struct TakeStep final : Step {
  int64_t outer = 0, n = 0, inner = 0, count = 0;
  bool i64 = false;  // the indices' dtype: i64 (else i32)
  void Run(const RunContext& c) override {
    if (i64) {
      CheckIndices<int64_t>(In(c, 1), count, n);
    } else {
      CheckIndices<int32_t>(In(c, 1), count, n);
    }
    kernels::BadIndex bad;  // indices were checked above: never set
    CheckKernel(kernels::Take(In(c, 0), outer, n, inner, In(c, 1),
                              i64 ? kernels::IndexType::kI64 : kernels::IndexType::kI32, count,
                              ElementSize(), Out(c), Pool(c), &bad),
                "take");
  }
};

class TakeDef final : public AxisOpDef {
 public:
  TakeDef() : AxisOpDef(OpKind::kTake, 2) {}
  // Linear in x: the tangent gathered by the same indices (which carry no derivative).
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Apply(OpKind::kTake, n.attrs, {t[0], n.operands[1]});
  }
  // The transpose: ct added into zeros of x's shape at the gathered positions (scatter_add),
  // so that repeated indices accumulate.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    Value zeros = b.Zeros(b.type(n.operands[0]));
    return {b.Apply(OpKind::kScatterAdd, n.attrs, {zeros, n.operands[1], ct}), nullptr};
  }

  // x batched: the axis shifts. Indices batched: x's positions of every element gathered at
  // once, the batch axis moved to the front; both: x's batch merged into the axis
  // (batch.h).
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    const size_t axis = static_cast<size_t>(std::get<AxisAttrs>(n.attrs).axis);
    if (!n.is_batched(1)) {
      return b.Apply(OpKind::kTake, AxisAttrs{static_cast<int64_t>(axis) + 1},
                     {n.batched[0], n.operands[1]});
    }
    if (!n.is_batched(0)) {
      Value y = b.Apply(OpKind::kTake, n.attrs, {n.operands[0], n.batched[1]});
      return MoveAxisToFront(b, y, axis);
    }
    const Shape& x = b.type(n.operands[0]).shape;
    const size_t k = b.type(n.operands[1]).shape.size();
    Value merged = MergeBatchIntoAxis(b, n, n.batched[0], axis);
    Value idx = MergedIndices(b, n, n.batched[1], x[axis]);
    Value y = b.Apply(OpKind::kTake, AxisAttrs{0}, {merged, idx});  // [size, idx, x[:axis], rest]
    if (axis == 0) return y;
    std::vector<int64_t> perm{0};
    for (size_t i = 0; i < axis; ++i) perm.push_back(static_cast<int64_t>(1 + k + i));
    for (size_t i = 0; i < k; ++i) perm.push_back(static_cast<int64_t>(1 + i));
    for (size_t i = 1 + k + axis; i < b.type(y).shape.size(); ++i)
      perm.push_back(static_cast<int64_t>(i));
    return b.Transpose(y, perm);
  }

 protected:
  TensorType InferTyped(InferContext& c, AxisAttrs& a) const override {
    const Shape& x = c.in(0).shape;
    const Shape& idx = c.in(1).shape;
    c.RequireDType(c.in(1).dtype, trace::IsInteger(c.in(1).dtype), "integer indices");
    if (x.empty()) c.Invalid("the operand must have rank >= 1");
    a.axis = c.NormAxis(a.axis, x.size(), "axis");
    size_t ax = static_cast<size_t>(a.axis);
    Shape out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(ax));
    out.insert(out.end(), idx.begin(), idx.end());
    out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.end());
    return TensorType{c.in(0).dtype, out};
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const AxisAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    size_t ax = static_cast<size_t>(a.axis);
    TakeStep& s = b.AddStep<TakeStep>(n.dtype, {n.operands[0], n.operands[1]}, n.value);
    s.outer = PlanBuilder::Product(x, 0, ax);
    s.n = x[ax];
    s.inner = PlanBuilder::Product(x, ax + 1, x.size());
    s.count = PlanBuilder::Product(b.shape(n.operands[1]));
    s.i64 = b.dtype(n.operands[1]) == DType::kI64;
    s.threaded = PlanBuilder::Product(b.shape(n.value)) >= PlanBuilder::kThreadElements;
  }
};

// ---- take_along_axis ----
//
// np.take_along_axis(x, indices, axis) (PyTorch gather, ONNX GatherElements). x has rank
// r >= 1 and any dtype; indices are i32 or i64 of rank r, every dimension but `axis` provably
// equal to x's; the result has the indices' shape and x's dtype:
//   result[p0, .., j, .., p(r-1)] = x[p0, .., indices[p0, .., j, .., p(r-1)], .., p(r-1)].
// An index i of the axis of extent n is valid in [-n, n): a negative one counts from the end
// (i + n), as NumPy and ONNX do. Any other index fails the run (kInvalidArgument naming the
// value, its flat position in the indices and the axis, as take does); the kernel never
// reads out of bounds. Zero-size axes and results are allowed (n == 0 with a non-empty result
// has no valid index). Data movement: no arithmetic cost.

struct TakeAlongAxisStep final : Step {
  // x viewed as [outer, n, inner], the indices and the result as [outer, count, inner].
  int64_t outer = 0, n = 0, inner = 0, count = 0;
  int64_t axis = 0;
  bool i64 = false;  // the indices' dtype: i64 (else i32)
  void Run(const RunContext& c) override {
    kernels::BadIndex bad;
    CheckKernel(kernels::TakeAlongAxis(In(c, 0), outer, n, inner, In(c, 1),
                                       i64 ? kernels::IndexType::kI64 : kernels::IndexType::kI32,
                                       count, ElementSize(), Out(c), Pool(c), &bad),
                "take_along_axis");
    if (bad.position >= 0) {
      throw Error(Code::kInvalidArgument, "take_along_axis: index " + std::to_string(bad.index) +
                                              " (position " + std::to_string(bad.position) +
                                              " of the indices) is outside [" + std::to_string(-n) +
                                              ", " + std::to_string(n) + ") on axis " +
                                              std::to_string(axis));
    }
  }
};

class TakeAlongAxisDef final : public AxisOpDef {
 public:
  TakeAlongAxisDef() : AxisOpDef(OpKind::kTakeAlongAxis, 2) {}
  // Linear in x: the tangent gathered at the same indices (which carry no derivative).
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Apply(OpKind::kTakeAlongAxis, n.attrs, {t[0], n.operands[1]});
  }
  // The transpose: ct added into zeros of x's shape at the gathered positions, as a
  // scatter_add of x's flat positions (repeated indices accumulate).
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    const TensorType& x = b.type(n.operands[0]);
    dim::Scope* s = b.dims();
    const Expr* size = s->Constant(1);
    for (const Expr* d : x.shape) size = s->Mul(size, d);
    const Value pos = FlatPositions(b, n);
    const Value zeros = b.Zeros(TensorType{x.dtype, {size}});
    const Value upd = b.Reshape(ct, b.type(pos).shape);
    const Value sum = b.Apply(OpKind::kScatterAdd, AxisAttrs{0}, {zeros, pos, upd});
    return {b.Reshape(sum, x.shape), nullptr};
  }
  // Both operands with the batch axis first (an unbatched one broadcast), the axis shifted.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    return BatchWithAttrs(b, n, AxisAttrs{std::get<AxisAttrs>(n.attrs).axis + 1});
  }

 protected:
  TensorType InferTyped(InferContext& c, AxisAttrs& a) const override {
    const Shape& x = c.in(0).shape;
    const Shape& idx = c.in(1).shape;
    const DType id = c.in(1).dtype;
    c.RequireDType(id, id == DType::kI32 || id == DType::kI64, "i32 or i64 indices");
    if (x.empty()) c.Invalid("the operand must have rank >= 1");
    if (idx.size() != x.size()) {
      c.Mismatch("the indices " + c.Str(idx) + " must have the rank of the operand " + c.Str(x) +
                 " (" + std::to_string(x.size()) + ")");
    }
    a.axis = c.NormAxis(a.axis, x.size(), "axis");
    const size_t ax = static_cast<size_t>(a.axis);
    for (size_t j = 0; j < x.size(); ++j) {
      if (j == ax) continue;
      if (!c.Decide(x[j], Cmp::kEq, idx[j],
                    "axis " + std::to_string(j) + " of the operand and the indices")) {
        c.Mismatch("the indices " + c.Str(idx) + " and the operand " + c.Str(x) +
                   " differ on axis " + std::to_string(j) + " (" + c.Str(idx[j]) + " vs " +
                   c.Str(x[j]) + "); only axis " + std::to_string(ax) + " may differ");
      }
    }
    Shape out = x;
    out[ax] = idx[ax];
    return TensorType{c.in(0).dtype, out};
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const AxisAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    const size_t ax = static_cast<size_t>(a.axis);
    TakeAlongAxisStep& s =
        b.AddStep<TakeAlongAxisStep>(n.dtype, {n.operands[0], n.operands[1]}, n.value);
    s.outer = PlanBuilder::Product(x, 0, ax);
    s.n = x[ax];
    s.inner = PlanBuilder::Product(x, ax + 1, x.size());
    s.count = b.shape(n.operands[1])[ax];
    s.axis = a.axis;
    s.i64 = b.dtype(n.operands[1]) == DType::kI64;
    s.threaded = PlanBuilder::Product(b.shape(n.value)) >= PlanBuilder::kThreadElements;
  }

 private:
  // The gathered elements' positions in x flattened, in the indices' shape (i64):
  // (o * n + k) * inner + i over the indices viewed as [outer, count, inner], k the index
  // made non-negative. An index outside [-n, n) gets position -1, so that the scatter_add
  // refuses it even where the gather itself is not part of the program.
  static Value FlatPositions(AdBuilder& b, const AdNode& n) {
    const size_t ax = static_cast<size_t>(std::get<AxisAttrs>(n.attrs).axis);
    dim::Scope* s = b.dims();
    const Shape& xs = b.type(n.operands[0]).shape;
    const Shape& is = b.type(n.operands[1]).shape;
    // The view from the indices' own shape (equal to x's off the axis), x's inner stride.
    const Expr* outer = s->Constant(1);
    const Expr* inner = s->Constant(1);
    const Expr* stride = s->Constant(1);
    for (size_t j = 0; j < xs.size(); ++j) {
      if (j < ax) outer = s->Mul(outer, is[j]);
      if (j > ax) inner = s->Mul(inner, is[j]);
      if (j > ax) stride = s->Mul(stride, xs[j]);
    }
    const Shape view = {outer, is[ax], inner};
    auto dim_value = [&](const Expr* e) {
      return b.Apply(OpKind::kDimValue, DimValueAttrs{e}, {});
    };
    Value idx = b.Reshape(n.operands[1], view);
    if (b.type(idx).dtype != DType::kI64) idx = b.Convert(idx, DType::kI64);
    const Value len = dim_value(xs[ax]);
    const Value zero = dim_value(s->Constant(0));
    const Value k = b.Select(b.Binary(OpKind::kLt, idx, zero), b.Add(idx, len), idx);
    const Value bad =
        b.Binary(OpKind::kOr, b.Binary(OpKind::kLt, k, zero), b.Binary(OpKind::kGe, k, len));
    const Value row = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, view, 0}, {});
    const Value col = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, view, 2}, {});
    const Value pos = b.Add(b.Mul(b.Add(b.Mul(row, len), k), dim_value(stride)), col);
    return b.Select(bad, dim_value(s->Constant(-1)), pos);
  }
};

}  // namespace

SHP_DEFINE_OP(Constant, ConstantDef)
SHP_DEFINE_OP(Iota, IotaDef)
SHP_DEFINE_OP(DimValue, DimValueDef)
SHP_DEFINE_OP(Take, TakeDef)
SHP_DEFINE_OP(TakeAlongAxis, TakeAlongAxisDef)

}  // namespace ops
}  // namespace shp
