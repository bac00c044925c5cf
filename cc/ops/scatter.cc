// scatter_add: the transpose of take. The result has the base's type; the slice of the updates
// at every index position is added into the base along the axis at the position the index
// names, repeated indices accumulating (np.add.at on a copy of the base). Kernel:
// cc/kernels/scatter_add.h (sums in the order of the index positions: reproducible).
#include <string>
#include <vector>

#include "cc/kernels/scatter_add.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using trace::DType;
using trace::TensorType;

// The index rule of take: every index in [0, n), checked before anything is written.
template <typename I>
void CheckIndices(const void* data, int64_t count, int64_t n) {
  const I* idx = static_cast<const I*>(data);
  for (int64_t i = 0; i < count; ++i) {
    if (idx[i] < 0 || static_cast<int64_t>(idx[i]) >= n) {
      throw Error(Code::kInvalidArgument,
                  "scatter_add: index " + std::to_string(static_cast<int64_t>(idx[i])) +
                      " (position " + std::to_string(i) + " of the indices) is outside [0, " +
                      std::to_string(n) + ")");
    }
  }
}

struct ScatterAddStep final : Step {
  int64_t outer = 0, n = 0, inner = 0, count = 0;
  bool i64 = false;  // the indices' dtype: i64 (else i32)
  void Run(const RunContext& c) override {
    if (i64) {
      CheckIndices<int64_t>(In(c, 1), count, n);
    } else {
      CheckIndices<int32_t>(In(c, 1), count, n);
    }
    kernels::BadIndex bad;  // indices were checked above: never set
    CheckKernel(kernels::ScatterAdd(In(c, 0), outer, n, inner, In(c, 1),
                                    i64 ? kernels::IndexType::kI64 : kernels::IndexType::kI32,
                                    count, In(c, 2), dtype, Out(c), Pool(c), &bad),
                "scatter_add");
  }
};

class ScatterAddDef final : public AxisOpDef {
 public:
  ScatterAddDef() : AxisOpDef(OpKind::kScatterAdd, 3) {}
  const dim::Expr* Flops(const CostContext& c) const override {
    return c.PerElement(1, *c.operands[2]);
  }
  const char* flops_rule() const override { return "1 per element of the updates"; }

  // Linear in (base, updates): the tangent scatters the updates' tangent into the base's.
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    if (t[2] == nullptr) return t[0];  // scattering zeros adds nothing
    Value base = t[0] != nullptr ? t[0] : b.Zeros(b.type(n.operands[0]));
    return b.Apply(OpKind::kScatterAdd, n.attrs, {base, n.operands[1], t[2]});
  }
  // The base's cotangent is ct itself; the updates' is ct gathered back (take).
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    std::vector<Value> out(3, nullptr);
    if (need[0]) out[0] = ct;
    if (need[2]) out[2] = b.Apply(OpKind::kTake, n.attrs, {ct, n.operands[1]});
    return out;
  }

  // Indices unbatched: base and updates batched, the axis shifted. Indices batched: the base's
  // batch merged into the axis (batch.h), the updates laid out as take of the merged base.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    const size_t axis = static_cast<size_t>(std::get<AxisAttrs>(n.attrs).axis);
    Value base = BatchedOperand(b, n, 0), upd = BatchedOperand(b, n, 2);
    if (!n.is_batched(1)) {
      return b.Apply(OpKind::kScatterAdd, AxisAttrs{static_cast<int64_t>(axis) + 1},
                     {base, n.operands[1], upd});
    }
    const Shape& x = b.type(n.operands[0]).shape;
    const size_t k = b.type(n.operands[1]).shape.size();
    Value merged = MergeBatchIntoAxis(b, n, base, axis);
    Value idx = MergedIndices(b, n, n.batched[1], x[axis]);
    if (axis > 0) {  // [size, x[:axis], idx, rest] -> [size, idx, x[:axis], rest]
      std::vector<int64_t> perm{0};
      for (size_t i = 0; i < k; ++i) perm.push_back(static_cast<int64_t>(1 + axis + i));
      for (size_t i = 0; i < axis; ++i) perm.push_back(static_cast<int64_t>(1 + i));
      for (size_t i = 1 + axis + k; i < b.type(upd).shape.size(); ++i)
        perm.push_back(static_cast<int64_t>(i));
      upd = b.Transpose(upd, perm);
    }
    Value y = b.Apply(OpKind::kScatterAdd, AxisAttrs{0}, {merged, idx, upd});
    return SplitBatchFromAxis(b, n, y, axis, x);
  }

 protected:
  TensorType InferTyped(InferContext& c, AxisAttrs& a) const override {
    const TensorType& base = c.in(0);
    const Shape& x = base.shape;
    const Shape& idx = c.in(1).shape;
    const Shape& upd = c.in(2).shape;
    c.RequireDType(base.dtype, trace::IsNumeric(base.dtype), "a numeric base");
    c.RequireDType(c.in(1).dtype, trace::IsInteger(c.in(1).dtype), "integer indices");
    c.SameDType(base.dtype, c.in(2).dtype);
    if (x.empty()) c.Invalid("the base must have rank >= 1");
    a.axis = c.NormAxis(a.axis, x.size(), "axis");
    const size_t ax = static_cast<size_t>(a.axis);
    // The updates have the shape take(base, indices, axis) would have.
    Shape want(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(ax));
    want.insert(want.end(), idx.begin(), idx.end());
    want.insert(want.end(), x.begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.end());
    const std::string rule =
        "the updates must have the shape of take(base, indices, axis=" + std::to_string(ax) +
        ") = " + c.Str(want) + " (base " + c.Str(x) + ", indices " + c.Str(idx) + "), got " +
        c.Str(upd);
    if (upd.size() != want.size()) {
      c.Mismatch(rule + ": rank " + std::to_string(upd.size()) + " instead of " +
                 std::to_string(want.size()));
    }
    for (size_t j = 0; j < want.size(); ++j) {
      // Where the expected dimension comes from: the base's axes around `axis`, or the indices.
      std::string from;
      if (j < ax) {
        from = "axis " + std::to_string(j) + " of the base";
      } else if (j < ax + idx.size()) {
        from = "axis " + std::to_string(j - ax) + " of the indices";
      } else {
        from = "axis " + std::to_string(j - idx.size() + 1) + " of the base";
      }
      const std::string where = "axis " + std::to_string(j) + " of the updates";
      if (!c.Decide(upd[j], Cmp::kEq, want[j], where + " and " + from)) {
        c.Mismatch(rule + ": " + where + " is " + c.Str(upd[j]) + ", " + from + " is " +
                   c.Str(want[j]));
      }
    }
    return base;
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const AxisAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    const size_t ax = static_cast<size_t>(a.axis);
    ScatterAddStep& s =
        b.AddStep<ScatterAddStep>(n.dtype, {n.operands[0], n.operands[1], n.operands[2]}, n.value);
    s.outer = PlanBuilder::Product(x, 0, ax);
    s.n = x[ax];
    s.inner = PlanBuilder::Product(x, ax + 1, x.size());
    s.count = PlanBuilder::Product(b.shape(n.operands[1]));
    s.i64 = b.dtype(n.operands[1]) == DType::kI64;
    s.threaded = PlanBuilder::Product(x) >= PlanBuilder::kThreadElements ||
                 PlanBuilder::Product(b.shape(n.operands[2])) >= PlanBuilder::kThreadElements;
  }
};

}  // namespace

SHP_DEFINE_OP(ScatterAdd, ScatterAddDef)

}  // namespace ops
}  // namespace shp
