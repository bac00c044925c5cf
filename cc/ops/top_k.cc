// top_k_values and top_k_indices: the two results of one top-k selection along an axis (ONNX
// TopK). A node has one result, so the selection is two ops with the same attributes and
// kernel (each node runs it). The values' derivatives go through the indices: the tangent is
// gathered at them and the cotangent scattered (added) back, both on flat positions, since
// take and scatter_add index one axis with an index tensor of any shape (no take_along).
// Kernel: cc/kernels/top_k.h (stable ties, NaN the greatest value).
#include <string>
#include <vector>

#include "cc/kernels/top_k.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using dim::Truth;
using trace::DType;
using trace::TensorType;

// A size the op needs: TRUE passes, FALSE fails, UNKNOWN becomes a run-time assertion while
// tracing (as reshape's divisibility); over a data-dependent size the caller must state it
// first (shp_scope_check), since it would fail only on some data.
void Require(InferContext& c, const Expr* a, Cmp op, const Expr* b, const std::string& what) {
  dim::Scope* s = c.scope();
  const Truth t = a == b ? Truth::kTrue : s->Compare(a, op, b);
  if (t == Truth::kTrue) return;
  if (t == Truth::kFalse) c.Mismatch(what);
  s->ThrowIfDataDependent(a, op, b, c.Name() + ": " + what);
  if (c.mode() == InferMode::kVerify) {
    c.Inconclusive(a, op, b, what + "; the program lacks this assertion");
  }
  s->Check(a, op, b, c.Name() + ": " + what);
}

struct TopKStep final : Step {
  int64_t outer = 0, n = 0, inner = 0, k = 0;
  bool largest = true, indices = false;
  DType x_dtype = DType::kF32;
  void Run(const RunContext& c) override {
    void* values = indices ? nullptr : Out(c);
    int64_t* idx = indices ? reinterpret_cast<int64_t*>(Out(c)) : nullptr;
    CheckKernel(kernels::TopK(x_dtype, In(c, 0), outer, n, inner, k, largest, values, idx, Pool(c)),
                "top_k");
  }
};

template <bool kIndices>
class TopKDef final : public TypedOpDef<TopKAttrs> {
 public:
  TopKDef() : TypedOpDef(kIndices ? OpKind::kTopKIndices : OpKind::kTopKValues, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::TopKOptions; }
  // Comparisons: one per element of x (a partial sort costs more, but no dim has a log).
  const Expr* Flops(const CostContext& c) const override { return c.PerElement(1, *c.operands[0]); }
  const char* flops_rule() const override { return "1 per operand element"; }

  // Linear in x at fixed indices. top_k_indices has no rules (an i64 result: never asked).
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    if (kIndices) return OpDef::Jvp(b, n, t);
    const Flat f = FlatPositions(b, n);
    const Value taken = b.Apply(OpKind::kTake, AxisAttrs{0}, {b.Reshape(t[0], {f.size}), f.pos});
    return b.Reshape(taken, b.type(n.result).shape);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    if (kIndices) return OpDef::Vjp(b, n, ct, need);
    const Flat f = FlatPositions(b, n);
    const TensorType& x = b.type(n.operands[0]);
    const Value zeros = b.Zeros(TensorType{x.dtype, {f.size}});
    const Value upd = b.Reshape(ct, b.type(f.pos).shape);
    const Value sum = b.Apply(OpKind::kScatterAdd, AxisAttrs{0}, {zeros, f.pos, upd});
    return {b.Reshape(sum, x.shape)};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    TopKAttrs a = std::get<TopKAttrs>(n.attrs);
    ++a.axis;
    return b.Apply(n.op, a, {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, TopKAttrs& a) const override {
    const TensorType& x = c.in(0);
    c.RequireDType(x.dtype, trace::IsNumeric(x.dtype), "a numeric operand (f32, f64, i32, i64)");
    if (x.shape.empty()) c.Invalid("needs an operand of rank >= 1");
    if (a.k == nullptr) c.Invalid("takes exactly one dimension expression k");
    a.axis = c.NormAxis(a.axis, x.shape.size(), "axis");
    const Expr* d = x.shape[static_cast<size_t>(a.axis)];
    dim::Scope* s = c.scope();
    Require(c, a.k, Cmp::kGe, s->Constant(0), "k " + c.Str(a.k) + " must be >= 0");
    Require(c, a.k, Cmp::kLe, d,
            "k " + c.Str(a.k) + " must be <= the size " + c.Str(d) + " of axis " +
                std::to_string(a.axis) + " of " + c.Str(x.shape));
    Shape out = x.shape;
    out[static_cast<size_t>(a.axis)] = a.k;
    return TensorType{kIndices ? DType::kI64 : x.dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const TopKAttrs& a) const override {
    return fb::CreateTopKOptions(*w.b, w.dim(a.k), a.axis, a.largest, a.sorted).Union();
  }
  void Read(const OptionsReader& r, const void* opt, TopKAttrs* a) const override {
    const fb::TopKOptions* o = static_cast<const fb::TopKOptions*>(opt);
    a->k = r.dim(o->k());
    a->axis = o->axis();
    a->largest = o->largest();
    a->sorted = o->sorted();
  }
  std::string Text(const AttrPrinter& p, const TopKAttrs& a) const override {
    return " k=" + p.dim(a.k) + " axis=" + std::to_string(a.axis) +
           " largest=" + (a.largest ? "true" : "false") +
           " sorted=" + (a.sorted ? "true" : "false");
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const TopKAttrs& a) const override {
    const int32_t x = n.operands[0];
    const std::vector<int64_t>& xs = b.shape(x);
    const size_t ax = static_cast<size_t>(a.axis);
    TopKStep& s = b.AddStep<TopKStep>(n.dtype, {x}, n.value);
    s.outer = PlanBuilder::Product(xs, 0, ax);
    s.n = xs[ax];
    s.inner = PlanBuilder::Product(xs, ax + 1, xs.size());
    s.k = b.shape(n.value)[ax];
    s.largest = a.largest;
    s.indices = kIndices;
    s.x_dtype = b.dtype(x);
    s.threaded = PlanBuilder::Product(xs) >= PlanBuilder::kThreadElements;
  }

 private:
  // The selected elements' positions in x flattened: (o * n + index) * inner + i over the
  // result viewed as [outer, k, inner], and x's element count.
  struct Flat {
    Value pos;
    const Expr* size;
  };
  static Flat FlatPositions(AdBuilder& b, const AdNode& n) {
    const TopKAttrs& a = std::get<TopKAttrs>(n.attrs);
    dim::Scope* s = b.dims();
    const Shape& xs = b.type(n.operands[0]).shape;
    const size_t ax = static_cast<size_t>(a.axis);
    const Expr* outer = s->Constant(1);
    const Expr* inner = s->Constant(1);
    for (size_t j = 0; j < xs.size(); ++j) {
      if (j < ax) outer = s->Mul(outer, xs[j]);
      if (j > ax) inner = s->Mul(inner, xs[j]);
    }
    const Shape view = {outer, a.k, inner};
    const Value idx = b.Reshape(b.Apply(OpKind::kTopKIndices, n.attrs, {n.operands[0]}), view);
    auto dim_value = [&](const Expr* e) {
      return b.Apply(OpKind::kDimValue, DimValueAttrs{e}, {});
    };
    const Value row = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, view, 0}, {});
    const Value col = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, view, 2}, {});
    const Value pos =
        b.Add(b.Mul(b.Add(b.Mul(row, dim_value(xs[ax])), idx), dim_value(inner)), col);
    return Flat{pos, s->Mul(s->Mul(outer, xs[ax]), inner)};
  }
};

}  // namespace

SHP_DEFINE_OP(TopKValues, TopKDef<false>)
SHP_DEFINE_OP(TopKIndices, TopKDef<true>)

}  // namespace ops
}  // namespace shp
