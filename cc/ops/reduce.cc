// Reductions over a set of axes: reduce_sum, reduce_mean, reduce_max, reduce_min,
// reduce_prod. Kernel: cc/kernels/reduce.h.
#include <algorithm>

#include "cc/kernels/reduce.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Expr;
using trace::DType;
using trace::TensorType;

// ---- Derivatives (JAX's rules; max/min split the cotangent equally among ties).

bool Reduced(const ReduceAttrs& a, size_t axis) {
  return std::binary_search(a.axes.begin(), a.axes.end(), static_cast<int64_t>(axis));
}

// x transposed by `perm`, or x itself when `perm` is the identity.
Value Permute(AdBuilder& b, Value x, const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return b.Transpose(x, perm);
  }
  return x;
}

// The result's shape with keepdims: x's shape with 1 on the reduced axes.
Shape KeptShape(AdBuilder& b, const ReduceAttrs& a, const Shape& x) {
  Shape kept = x;
  for (int64_t ax : a.axes) kept[static_cast<size_t>(ax)] = b.dims()->Constant(1);
  return kept;
}

// `v` (of the result's shape) in keepdims form, broadcast to x's shape.
Value Expand(AdBuilder& b, const ReduceAttrs& a, Value v, const Shape& x) {
  const Shape kept = KeptShape(b, a, x);
  if (b.type(v).shape != kept) v = b.Reshape(v, kept);
  return kept == x ? v : b.BroadcastTo(v, x);
}

// The number of reduced elements as a scalar of `dtype` (a dim_value when symbolic).
Value Count(AdBuilder& b, const ReduceAttrs& a, const Shape& x, DType dtype) {
  dim::Scope* s = b.dims();
  const Expr* count = s->Constant(1);
  for (int64_t ax : a.axes) count = s->Mul(count, x[static_cast<size_t>(ax)]);
  if (count->IsConstant()) return b.Scalar(dtype, static_cast<double>(count->ConstantTerm()));
  return b.Convert(b.Apply(OpKind::kDimValue, DimValueAttrs{count}, {}), dtype);
}

// reduce_max/min: the weight of each element of x in the result, 1 / (number of ties) where
// it equals the result along its reduced axes, else 0.
Value TieWeights(AdBuilder& b, const AdNode& n) {
  const ReduceAttrs& a = std::get<ReduceAttrs>(n.attrs);
  Value x = n.operands[0];
  const TensorType& xt = b.type(x);
  Value y = n.result;
  const Shape kept = KeptShape(b, a, xt.shape);
  if (b.type(y).shape != kept) y = b.Reshape(y, kept);
  Value hit = b.Convert(b.Binary(OpKind::kEq, x, y), xt.dtype);
  return b.Div(hit, b.ReduceSum(hit, a.axes, /*keepdims=*/true));
}

// reduce_prod: d y / d x_i = the product of the other reduced elements, computed without
// dividing by x_i (exact where some x_i == 0): the reduced axes are moved last and merged
// into one of size r, each row of r elements is broadcast to an r x r matrix whose diagonal
// is set to 1, and the matrix's rows are multiplied out. This costs O(r^2) time and memory
// per reduced row (r = the number of reduced elements). Returns the partials in that layout
// ([kept..., r]) and the permutation that moved the reduced axes last.
Value ProdPartials(AdBuilder& b, const AdNode& n, std::vector<int64_t>* perm) {
  dim::Scope* s = b.dims();
  const ReduceAttrs& a = std::get<ReduceAttrs>(n.attrs);
  Value x = n.operands[0];
  const Shape& xs = b.type(x).shape;
  Shape rows;  // [kept...]
  const Expr* r = s->Constant(1);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (Reduced(a, i)) continue;
    perm->push_back(static_cast<int64_t>(i));
    rows.push_back(xs[i]);
  }
  for (int64_t ax : a.axes) {
    perm->push_back(ax);
    r = s->Mul(r, xs[static_cast<size_t>(ax)]);
  }
  Value moved = Permute(b, x, *perm);
  Shape row_vector = rows, matrix = rows;
  row_vector.push_back(s->Constant(1));
  row_vector.push_back(r);
  matrix.push_back(r);
  matrix.push_back(r);
  Value m = b.BroadcastTo(b.Reshape(moved, row_vector), matrix);
  Value i = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, {r, r}, 0}, {});
  Value j = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, {r, r}, 1}, {});
  m = b.Select(b.Binary(OpKind::kEq, i, j), b.ScalarLike(x, 1), m);
  return b.Apply(OpKind::kReduceProd, ReduceAttrs{{static_cast<int64_t>(matrix.size()) - 1}, false},
                 {m});
}

// The switches over the op below list every op (no `default:`), so that a new reduction
// without a rule does not compile (-Wswitch); other families' labels come from op_list.h.
#define SHP_AD_CASE(Name, ...) case OpKind::k##Name:
#define SHP_NOT_A_REDUCTION    \
  SHP_UNARY_OPS(SHP_AD_CASE)   \
  SHP_BINARY_OPS(SHP_AD_CASE)  \
  SHP_COMPARE_OPS(SHP_AD_CASE) \
  SHP_OTHER_OPS(SHP_AD_CASE)

// An op that is not a reduction reached a reduction's rule (ReduceDef is only made for them).
[[noreturn]] void NotAReduction(OpKind op, const char* rule) {
  throw Error(Code::kInternal, std::string("autodiff: the reduction ") + rule +
                                   " rule called for the operation " + OpName(op));
}

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
  const dim::Expr* Flops(const CostContext& c) const override {
    return c.PerElement(1, *c.operands[0]);
  }
  const char* flops_rule() const override { return "1 per operand element"; }

  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    const ReduceAttrs& a = std::get<ReduceAttrs>(n.attrs);
    switch (n.op) {
      case OpKind::kReduceSum:
      case OpKind::kReduceMean:
        return b.Apply(n.op, a, {t[0]});
      case OpKind::kReduceMax:
      case OpKind::kReduceMin:
        return b.ReduceSum(b.Mul(t[0], TieWeights(b, n)), a.axes, a.keepdims);
      case OpKind::kReduceProd: {  // sum of partial * tangent over the reduced elements
        std::vector<int64_t> perm;
        Value p = ProdPartials(b, n, &perm);
        Value tm = b.Reshape(Permute(b, t[0], perm), b.type(p).shape);
        Value dy =
            b.ReduceSum(b.Mul(p, tm), {static_cast<int64_t>(perm.size() - a.axes.size())}, false);
        return b.Reshape(dy, b.type(n.result).shape);
      }
        // Not reductions: only ReduceDef calls this.
        SHP_NOT_A_REDUCTION
        break;
    }
    NotAReduction(n.op, "JVP");
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    const ReduceAttrs& a = std::get<ReduceAttrs>(n.attrs);
    const TensorType& x = b.type(n.operands[0]);
    switch (n.op) {
      case OpKind::kReduceSum:
        return {Expand(b, a, ct, x.shape)};
      case OpKind::kReduceMean:
        return {Expand(b, a, b.Div(ct, Count(b, a, x.shape, x.dtype)), x.shape)};
      case OpKind::kReduceMax:
      case OpKind::kReduceMin:
        return {b.Mul(Expand(b, a, ct, x.shape), TieWeights(b, n))};
      case OpKind::kReduceProd: {  // ct * partials, moved back to x's layout
        std::vector<int64_t> perm;
        Value p = ProdPartials(b, n, &perm);
        Shape column = b.type(p).shape;
        column.back() = b.dims()->Constant(1);
        Value g = b.Mul(b.Reshape(ct, column), p);
        Shape moved;
        for (int64_t ax : perm) moved.push_back(x.shape[static_cast<size_t>(ax)]);
        std::vector<int64_t> inverse(perm.size());
        for (size_t i = 0; i < perm.size(); ++i)
          inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
        return {Permute(b, b.Reshape(g, moved), inverse)};
      }
        // Not reductions: only ReduceDef calls this.
        SHP_NOT_A_REDUCTION
        break;
    }
    NotAReduction(n.op, "VJP");
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    const ReduceAttrs& a = std::get<ReduceAttrs>(n.attrs);
    return b.Apply(n.op, ReduceAttrs{ShiftAxes(a.axes), a.keepdims}, {n.batched[0]});
  }

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

#undef SHP_NOT_A_REDUCTION
#undef SHP_AD_CASE

#define SHP_REDUCE_DEF(Name, FB, code, text, C, rule, kop)                                \
  const OpDef& Def##Name() {                                                              \
    static const ReduceDef d(OpKind::k##Name, OperandRule::rule, kernels::ReduceOp::kop); \
    return d;                                                                             \
  }
SHP_REDUCE_OPS(SHP_REDUCE_DEF)
#undef SHP_REDUCE_DEF

}  // namespace ops
}  // namespace shp
