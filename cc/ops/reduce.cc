// Reductions over a set of axes: reduce_sum, reduce_mean, reduce_max, reduce_min,
// reduce_prod. Kernel: cc/kernels/reduce.h.
#include <algorithm>

#include "cc/kernels/reduce.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using trace::DType;
using trace::TensorType;

struct ReduceStep final : Step {
  kernels::ReduceOp op = kernels::ReduceOp::kSum;
  std::vector<int64_t> in_shape, axes;
  void Run(const RunContext& c) override {
    bool reduced[64] = {};
    for (int64_t a : axes) reduced[a] = true;
    CheckKernel(kernels::ReduceAxes(op, dtype, In(c, 0), static_cast<int>(in_shape.size()),
                                    in_shape.data(), reduced, Out(c), Pool(c)),
                "reduce");
  }
};

class ReduceDef final : public TypedOpDef<ReduceAttrs> {
 public:
  ReduceDef(OpKind k, OperandRule rule, kernels::ReduceOp op)
      : TypedOpDef(k, 1), rule_(rule), op_(op) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::ReduceOptions; }

 protected:
  TensorType InferTyped(InferContext& c, ReduceAttrs& a) const override {
    const Shape& x = c.in(0).shape;
    DType t = c.in(0).dtype;
    c.RequireRule(t, rule_, false);
    if (a.axes.empty()) {
      for (size_t i = 0; i < x.size(); ++i) a.axes.push_back(static_cast<int64_t>(i));
    }
    c.NormAxes(&a.axes, x.size());
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
      bool reduced = std::binary_search(a.axes.begin(), a.axes.end(), static_cast<int64_t>(i));
      if (!reduced) {
        out.push_back(x[i]);
      } else if (a.keepdims) {
        out.push_back(c.scope()->Constant(1));
      }
    }
    return TensorType{t, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ReduceAttrs& a) const override {
    return fb::CreateReduceOptions(*w.b, w.b->CreateVector(a.axes), a.keepdims).Union();
  }
  void Read(const OptionsReader& r, const void* opt, ReduceAttrs* a) const override {
    const fb::ReduceOptions* o = static_cast<const fb::ReduceOptions*>(opt);
    a->axes = r.ints(o->axes());
    a->keepdims = o->keepdims();
    if (a->axes.empty() && !r.operands.empty() && !r.operands[0]->shape.empty())
      r.Bad("lists no axes");
  }
  std::string Text(const AttrPrinter& p, const ReduceAttrs& a) const override {
    return " axes=" + p.Ints(a.axes) + " keepdims=" + (a.keepdims ? "true" : "false");
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const ReduceAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    if (x.size() > 64) throw Error(Code::kUnsupported, "runtime: reductions support rank <= 64");
    ReduceStep& s = b.AddStep<ReduceStep>(n.dtype, {n.operands[0]}, n.value);
    s.op = op_;
    s.in_shape = x;
    s.axes = a.axes;
    s.threaded = PlanBuilder::Product(x) >= PlanBuilder::kThreadElements;
  }

 private:
  OperandRule rule_;
  kernels::ReduceOp op_;
};

}  // namespace

#define SHP_REDUCE_DEF(Name, FB, code, text, C, rule, kop)                                \
  const OpDef& Def##Name() {                                                              \
    static const ReduceDef d(OpKind::k##Name, OperandRule::rule, kernels::ReduceOp::kop); \
    return d;                                                                             \
  }
SHP_REDUCE_OPS(SHP_REDUCE_DEF)
#undef SHP_REDUCE_DEF

}  // namespace ops
}  // namespace shp
