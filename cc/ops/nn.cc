// Ops along one axis: softmax, layer_norm, cumsum. Kernels: cc/kernels/softmax.h,
// layernorm.h, cumsum.h (each reads x as [outer][axis][inner]).
#include <algorithm>
#include <cmath>

#include "cc/kernels/cumsum.h"
#include "cc/kernels/layernorm.h"
#include "cc/kernels/softmax.h"
#include "cc/kernels/transpose.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using trace::DType;
using trace::TensorType;

// The operand of a one-axis op: rank >= 1, a dtype of `rule`; normalizes the axis.
TensorType AlongAxis(InferContext& c, int64_t* axis, OperandRule rule) {
  c.RequireRule(c.in(0).dtype, rule, false);
  if (c.in(0).shape.empty()) c.Invalid("the operand must have rank >= 1");
  *axis = c.NormAxis(*axis, c.in(0).shape.size(), "axis");
  return c.in(0);
}

// x viewed as [outer][axis][inner].
struct AxisStep : Step {
  int64_t outer = 0, n = 0, inner = 0;
};

void SetExtents(AxisStep* s, const std::vector<int64_t>& x, size_t ax) {
  s->outer = PlanBuilder::Product(x, 0, ax);
  s->n = x[ax];
  s->inner = PlanBuilder::Product(x, ax + 1, x.size());
}

struct SoftmaxStep final : AxisStep {
  void Run(const RunContext& c) override {
    CheckKernel(kernels::Softmax(dtype, In(c, 0), outer, n, inner, Out(c), Pool(c)), "softmax");
  }
};

struct CumSumStep final : AxisStep {
  void Run(const RunContext& c) override {
    CheckKernel(kernels::CumSum(dtype, In(c, 0), outer, n, inner, Out(c), Pool(c)), "cumsum");
  }
};

// ---- Derivatives.

// y * (v - sum(v * y)) along the axis, for y = softmax(x): the JVP (v a tangent) and, the
// Jacobian being symmetric, the VJP (v the cotangent).
Value SoftmaxPartial(AdBuilder& b, const AdNode& n, Value v) {
  const int64_t axis = std::get<AxisAttrs>(n.attrs).axis;
  Value y = n.result;
  return b.Mul(y, b.Sub(v, b.ReduceSum(b.Mul(v, y), {axis}, /*keepdims=*/true)));
}

// cumsum's transpose: the sums from the end, reverse(cumsum(reverse(v))).
Value ReverseCumSum(AdBuilder& b, const AdNode& n, Value v) {
  const ReverseAttrs r{{std::get<AxisAttrs>(n.attrs).axis}};
  Value c = b.Apply(OpKind::kCumSum, n.attrs, {b.Apply(OpKind::kReverse, r, {v})});
  return b.Apply(OpKind::kReverse, r, {c});
}

template <class S, OpKind kKind, OperandRule kRule>
class OneAxisDef final : public AxisOpDef {
  // The rules below (and the cost) know these two ops only: a third needs its own.
  static_assert(kKind == OpKind::kSoftmax || kKind == OpKind::kCumSum,
                "OneAxisDef's derivative rules cover softmax and cumsum only");

 public:
  OneAxisDef() : AxisOpDef(kKind, 1) {}
  // softmax: max, subtract, exp, sum and divide per element; cumsum: one add.
  const dim::Expr* Flops(const CostContext& c) const override {
    return c.PerElement(kKind == OpKind::kSoftmax ? 5 : 1, *c.result);
  }
  const char* flops_rule() const override {
    return kKind == OpKind::kSoftmax ? "5 per element (max, subtract, exp, sum, divide)"
                                     : "1 per element";
  }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    if (kKind == OpKind::kSoftmax) return SoftmaxPartial(b, n, t[0]);
    return b.Apply(kKind, n.attrs, {t[0]});  // cumsum is linear
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    if (kKind == OpKind::kSoftmax) return {SoftmaxPartial(b, n, ct)};
    return {ReverseCumSum(b, n, ct)};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    return b.Apply(kKind, AxisAttrs{std::get<AxisAttrs>(n.attrs).axis + 1}, {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, AxisAttrs& a) const override {
    return AlongAxis(c, &a.axis, kRule);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const AxisAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    S& s = b.AddStep<S>(n.dtype, {n.operands[0]}, n.value);
    SetExtents(&s, x, static_cast<size_t>(a.axis));
    s.threaded = PlanBuilder::Product(b.shape(n.value)) >= PlanBuilder::kThreadElements;
  }
};

// ---- layer_norm: the kernel normalizes the last axis; another axis is moved last and back ----

struct LayerNormStep final : Step {
  int64_t rows = 0, n = 0;
  double epsilon = 0;
  void Run(const RunContext& c) override {
    if (n > 0)
      CheckKernel(
          kernels::LayerNorm(dtype, In(c, 0), rows, n, nullptr, nullptr, epsilon, Out(c), Pool(c)),
          "layer_norm");
  }
};

// y = (x - mean(x)) * r with r = 1 / sqrt(var(x) + epsilon) (population variance) along the
// axis. Then dy = r * (v - mean(v) - y * mean(y * v)) for a tangent v; the map is symmetric, so
// the same expression with v = ct is the VJP. r is recomputed from x (it is not an output).
Value LayerNormPartial(AdBuilder& b, const AdNode& n, Value v) {
  const LayerNormAttrs& a = std::get<LayerNormAttrs>(n.attrs);
  const std::vector<int64_t> axis{a.axis};
  auto mean = [&](Value z) {
    return b.Apply(OpKind::kReduceMean, ReduceAttrs{axis, /*keepdims=*/true}, {z});
  };
  Value x = n.operands[0], y = n.result;
  Value centered = b.Sub(x, mean(x));
  Value var = mean(b.Mul(centered, centered));
  Value r = b.Unary(OpKind::kRsqrt, b.Add(var, b.ScalarLike(x, a.epsilon)));
  return b.Mul(r, b.Sub(b.Sub(v, mean(v)), b.Mul(y, mean(b.Mul(y, v)))));
}

class LayerNormDef final : public TypedOpDef<LayerNormAttrs> {
 public:
  LayerNormDef() : TypedOpDef(OpKind::kLayerNorm, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::LayerNormOptions; }
  const dim::Expr* Flops(const CostContext& c) const override { return c.PerElement(5, *c.result); }
  const char* flops_rule() const override {
    return "5 per element (mean, subtract, square-accumulate as 2, scale)";
  }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return LayerNormPartial(b, n, t[0]);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    return {LayerNormPartial(b, n, ct)};
  }
  void CheckExecutable(const NodeView& n, const std::vector<size_t>&, size_t rank) const override {
    // Another axis than the last is moved last and back by transposes.
    if (static_cast<size_t>(std::get<LayerNormAttrs>(n.attrs).axis) + 1 != rank) {
      PlanBuilder::CheckRank(rank, kernels::kMaxTransposeRank, "layer_norm");
    }
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    LayerNormAttrs a = std::get<LayerNormAttrs>(n.attrs);
    ++a.axis;
    return b.Apply(OpKind::kLayerNorm, a, {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, LayerNormAttrs& a) const override {
    if (!(a.epsilon >= 0) || !std::isfinite(a.epsilon)) {
      c.Invalid("epsilon must be finite and >= 0, got " + std::to_string(a.epsilon));
    }
    return AlongAxis(c, &a.axis, OperandRule::kFloat);
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const LayerNormAttrs& a) const override {
    return fb::CreateLayerNormOptions(*w.b, a.axis, a.epsilon).Union();
  }
  void Read(const OptionsReader&, const void* opt, LayerNormAttrs* a) const override {
    const fb::LayerNormOptions* o = static_cast<const fb::LayerNormOptions*>(opt);
    a->axis = o->axis();
    a->epsilon = o->epsilon();
  }
  std::string Text(const AttrPrinter& p, const LayerNormAttrs& a) const override {
    return " axis=" + std::to_string(a.axis) + " epsilon=" + p.Double(a.epsilon);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const LayerNormAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    size_t ax = static_cast<size_t>(a.axis);
    const bool threaded = PlanBuilder::Product(b.shape(n.value)) >= PlanBuilder::kThreadElements;
    if (ax + 1 == x.size()) {
      LayerNormStep& s = b.AddStep<LayerNormStep>(n.dtype, {n.operands[0]}, n.value);
      s.rows = PlanBuilder::Product(x, 0, ax);
      s.n = x[ax];
      s.epsilon = a.epsilon;
      s.threaded = threaded;
      return;
    }
    PlanBuilder::CheckRank(x.size(), kernels::kMaxTransposeRank, "layer_norm");
    std::vector<int64_t> perm, back(x.size()), moved;
    for (size_t i = 0; i < x.size(); ++i) {
      if (i != ax) perm.push_back(static_cast<int64_t>(i));
    }
    perm.push_back(static_cast<int64_t>(ax));
    for (size_t i = 0; i < perm.size(); ++i) {
      back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
      moved.push_back(x[static_cast<size_t>(perm[i])]);
    }
    int32_t tmp = b.NewTempLike(n.value);
    PlanTranspose(b, n.dtype, n.operands[0], x, perm, tmp, threaded);
    LayerNormStep& s = b.AddStep<LayerNormStep>(n.dtype, {tmp}, tmp);
    s.rows = x[ax] == 0 ? 0 : PlanBuilder::Product(x) / std::max<int64_t>(1, x[ax]);
    s.n = x[ax];
    s.epsilon = a.epsilon;
    s.threaded = threaded;
    PlanTranspose(b, n.dtype, tmp, moved, back, n.value, threaded);
  }
};

}  // namespace

using SoftmaxDef = OneAxisDef<SoftmaxStep, OpKind::kSoftmax, OperandRule::kFloat>;
using CumSumDef = OneAxisDef<CumSumStep, OpKind::kCumSum, OperandRule::kNumeric>;
SHP_DEFINE_OP(Softmax, SoftmaxDef)
SHP_DEFINE_OP(CumSum, CumSumDef)
SHP_DEFINE_OP(LayerNorm, LayerNormDef)

}  // namespace ops
}  // namespace shp
