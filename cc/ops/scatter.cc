// scatter_add: the transpose of take. The result has the base's type; the slice of the updates
// at every index position is added into the base along the axis at the position the index
// names, repeated indices accumulating (np.add.at on a copy of the base). Kernel:
// cc/kernels/scatter_add.h (sums in the order of the index positions: reproducible).
//
// scatter: the same layout with a reduction (ScatterAttrs::reduction, kernels::ScatterReduction):
// replace (among repeated indices the update at the last position wins), add, mul, max, min
// (NaN on either side gives NaN). Derivatives: replace (the update that wins gets the
// cotangent, the elements it hits none), add (as scatter_add), max/min (the cotangent shared
// equally by the base element and the updates equal to the result, NaN counting as equal to a
// NaN result); mul is refused (kUnsupported).
#include <string>
#include <vector>

#include "cc/kernels/scatter_add.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using trace::DType;
using trace::TensorType;

// The index rule of take: every index in [0, n), checked before anything is written. `what`
// names the op; `tail` follows the range in the message.
template <typename I>
void CheckIndices(const void* data, int64_t count, int64_t n, const char* what,
                  const std::string& tail = "") {
  const I* idx = static_cast<const I*>(data);
  for (int64_t i = 0; i < count; ++i) {
    if (idx[i] < 0 || static_cast<int64_t>(idx[i]) >= n) {
      throw Error(Code::kInvalidArgument,
                  std::string(what) + ": index " + std::to_string(static_cast<int64_t>(idx[i])) +
                      " (position " + std::to_string(i) + " of the indices) is outside [0, " +
                      std::to_string(n) + ")" + tail);
    }
  }
}

const char* const kReductionNames[kernels::kNumScatterReductions] = {"replace", "add", "mul", "max",
                                                                     "min"};

// The reduction's name ("reduction 7" for a value outside the enum).
std::string ReductionName(int64_t r) {
  if (r >= 0 && r < kernels::kNumScatterReductions) return kReductionNames[r];
  return "reduction " + std::to_string(r);
}

// The type of a scatter (scatter_add, scatter): base, indices, updates; normalizes *axis.
TensorType InferScatter(InferContext& c, int64_t* axis) {
  const TensorType& base = c.in(0);
  const Shape& x = base.shape;
  const Shape& idx = c.in(1).shape;
  const Shape& upd = c.in(2).shape;
  c.RequireDType(base.dtype, trace::IsNumeric(base.dtype), "a numeric base");
  c.RequireDType(c.in(1).dtype, trace::IsInteger(c.in(1).dtype), "integer indices");
  c.SameDType(base.dtype, c.in(2).dtype);
  if (x.empty()) c.Invalid("the base must have rank >= 1");
  *axis = c.NormAxis(*axis, x.size(), "axis");
  const size_t ax = static_cast<size_t>(*axis);
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

// The batching rule of a scatter whose attributes with another axis are attrs(axis). Indices
// unbatched: base and updates batched, the axis shifted. Indices batched: the base's batch
// merged into the axis (batch.h), the updates laid out as take of the merged base (positions
// keep their order within each batch member: repeated indices combine in the same order).
template <class AttrsWithAxis>
Value BatchScatter(AdBuilder& b, const BatchNode& n, int64_t attrs_axis,
                   const AttrsWithAxis& attrs) {
  const size_t axis = static_cast<size_t>(attrs_axis);
  Value base = BatchedOperand(b, n, 0), upd = BatchedOperand(b, n, 2);
  if (!n.is_batched(1)) {
    return b.Apply(n.op, attrs(static_cast<int64_t>(axis) + 1), {base, n.operands[1], upd});
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
  Value y = b.Apply(n.op, attrs(0), {merged, idx, upd});
  return SplitBatchFromAxis(b, n, y, axis, x);
}

struct ScatterAddStep final : Step {
  int64_t outer = 0, n = 0, inner = 0, count = 0;
  bool i64 = false;  // the indices' dtype: i64 (else i32)
  void Run(const RunContext& c) override {
    if (i64) {
      CheckIndices<int64_t>(In(c, 1), count, n, "scatter_add");
    } else {
      CheckIndices<int32_t>(In(c, 1), count, n, "scatter_add");
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
    return BatchScatter(b, n, std::get<AxisAttrs>(n.attrs).axis,
                        [&](int64_t axis) { return Attrs(AxisAttrs{axis}); });
  }

 protected:
  TensorType InferTyped(InferContext& c, AxisAttrs& a) const override {
    return InferScatter(c, &a.axis);
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

struct ScatterStep final : Step {
  int64_t outer = 0, n = 0, inner = 0, count = 0, axis = 0;
  kernels::ScatterReduction reduction = kernels::ScatterReduction::kReplace;
  bool i64 = false;  // the indices' dtype: i64 (else i32)
  void Run(const RunContext& c) override {
    const std::string what = "scatter (" + ReductionName(static_cast<int64_t>(reduction)) + ")";
    const std::string tail = " on axis " + std::to_string(axis);
    if (i64) {
      CheckIndices<int64_t>(In(c, 1), count, n, what.c_str(), tail);
    } else {
      CheckIndices<int32_t>(In(c, 1), count, n, what.c_str(), tail);
    }
    kernels::BadIndex bad;  // indices were checked above: never set
    CheckKernel(kernels::Scatter(In(c, 0), outer, n, inner, In(c, 1),
                                 i64 ? kernels::IndexType::kI64 : kernels::IndexType::kI32, count,
                                 In(c, 2), dtype, reduction, Out(c), Pool(c), &bad),
                "scatter");
  }
};

class ScatterDef final : public TypedOpDef<ScatterAttrs> {
 public:
  ScatterDef() : TypedOpDef(OpKind::kScatter, 3) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::ScatterOptions; }

  const dim::Expr* Flops(const CostContext& c) const override {
    const int64_t r = std::get<ScatterAttrs>(*c.attrs).reduction;
    return c.PerElement(r == kReplace ? 0 : 1, *c.operands[2]);
  }
  const char* flops_rule() const override {
    return "1 per element of the updates (replace: 0, data movement)";
  }

  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    const ScatterAttrs& a = std::get<ScatterAttrs>(n.attrs);
    const Value idx = n.operands[1];
    switch (a.reduction) {
      case kReplace: {  // linear in (base, updates) jointly: the hits take the update's tangent
        const Value tb = t[0] != nullptr ? t[0] : b.Zeros(b.type(n.operands[0]));
        const Value tu = t[2] != nullptr ? t[2] : b.Zeros(b.type(n.operands[2]));
        return b.Apply(OpKind::kScatter, n.attrs, {tb, idx, tu});
      }
      case kAdd: {
        if (t[2] == nullptr) return t[0];
        const Value tb = t[0] != nullptr ? t[0] : b.Zeros(b.type(n.operands[0]));
        return b.Apply(OpKind::kScatter, n.attrs, {tb, idx, t[2]});
      }
      case kMax:
      case kMin: {  // the tangents of the elements equal to the result, averaged
        const Winners w = Extremal(b, n);
        Value sum = t[0] != nullptr ? b.Mul(t[0], w.base) : nullptr;
        if (t[2] != nullptr) {
          const Value zeros = b.Zeros(b.type(n.operands[0]));
          sum =
              b.AddZ(sum, b.Apply(OpKind::kScatter, AddAttrs(a), {zeros, idx, b.Mul(t[2], w.upd)}));
        }
        return b.Div(sum, w.count);
      }
      default:
        Refuse(a);
    }
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    const ScatterAttrs& a = std::get<ScatterAttrs>(n.attrs);
    const Value idx = n.operands[1];
    const Attrs take = AxisAttrs{a.axis};
    std::vector<Value> out(3, nullptr);
    switch (a.reduction) {
      case kReplace: {
        // The base's cotangent where no index hits; an update's where it wins (the last
        // position among repeats): the position each base element took, gathered back.
        if (need[0]) {
          out[0] = b.Apply(OpKind::kScatter, n.attrs, {ct, idx, b.Zeros(b.type(n.operands[2]))});
        }
        if (need[2]) {
          const Value pos = UpdatePositions(b, n);
          const TensorType& bt = b.type(n.operands[0]);
          const Value none = b.BroadcastTo(
              b.Apply(OpKind::kDimValue, DimValueAttrs{b.dims()->Constant(-1)}, {}), bt.shape);
          const Value took = b.Apply(OpKind::kScatter, n.attrs, {none, idx, pos});
          const Value won = b.Binary(OpKind::kEq, b.Apply(OpKind::kTake, take, {took, idx}), pos);
          const Value g = b.Apply(OpKind::kTake, take, {ct, idx});
          out[2] = b.Select(won, g, b.Zeros(b.type(g)));
        }
        return out;
      }
      case kAdd:
        if (need[0]) out[0] = ct;
        if (need[2]) out[2] = b.Apply(OpKind::kTake, take, {ct, idx});
        return out;
      case kMax:
      case kMin: {
        const Winners w = Extremal(b, n);
        const Value share = b.Div(ct, w.count);
        if (need[0]) out[0] = b.Mul(share, w.base);
        if (need[2]) out[2] = b.Mul(b.Apply(OpKind::kTake, take, {share, idx}), w.upd);
        return out;
      }
      default:
        Refuse(a);
    }
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    const ScatterAttrs& a = std::get<ScatterAttrs>(n.attrs);
    return BatchScatter(b, n, a.axis, [&](int64_t axis) {
      return Attrs(ScatterAttrs{axis, a.reduction});
    });
  }

 protected:
  TensorType InferTyped(InferContext& c, ScatterAttrs& a) const override {
    if (a.reduction < 0 || a.reduction >= kernels::kNumScatterReductions) {
      c.Invalid("reduction " + std::to_string(a.reduction) +
                " is not one of replace (0), add (1), mul (2), max (3), min (4)");
    }
    return InferScatter(c, &a.axis);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const ScatterAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    const size_t ax = static_cast<size_t>(a.axis);
    ScatterStep& s =
        b.AddStep<ScatterStep>(n.dtype, {n.operands[0], n.operands[1], n.operands[2]}, n.value);
    s.outer = PlanBuilder::Product(x, 0, ax);
    s.n = x[ax];
    s.inner = PlanBuilder::Product(x, ax + 1, x.size());
    s.count = PlanBuilder::Product(b.shape(n.operands[1]));
    s.axis = a.axis;
    s.reduction = static_cast<kernels::ScatterReduction>(a.reduction);
    s.i64 = b.dtype(n.operands[1]) == DType::kI64;
    s.threaded = PlanBuilder::Product(x) >= PlanBuilder::kThreadElements ||
                 PlanBuilder::Product(b.shape(n.operands[2])) >= PlanBuilder::kThreadElements;
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ScatterAttrs& a) const override {
    return fb::CreateScatterOptions(*w.b, a.axis, static_cast<fb::ScatterReduction>(a.reduction))
        .Union();
  }
  void Read(const OptionsReader&, const void* o, ScatterAttrs* a) const override {
    const auto* t = static_cast<const fb::ScatterOptions*>(o);
    a->axis = t->axis();
    a->reduction = static_cast<int64_t>(t->reduction());  // checked by InferTyped
  }
  std::string Text(const AttrPrinter&, const ScatterAttrs& a) const override {
    return " axis=" + std::to_string(a.axis) + " reduction=" + ReductionName(a.reduction);
  }

 private:
  static constexpr int64_t kReplace = static_cast<int64_t>(kernels::ScatterReduction::kReplace);
  static constexpr int64_t kAdd = static_cast<int64_t>(kernels::ScatterReduction::kAdd);
  static constexpr int64_t kMax = static_cast<int64_t>(kernels::ScatterReduction::kMax);
  static constexpr int64_t kMin = static_cast<int64_t>(kernels::ScatterReduction::kMin);

  static Attrs AddAttrs(const ScatterAttrs& a) { return ScatterAttrs{a.axis, kAdd}; }

  [[noreturn]] static void Refuse(const ScatterAttrs& a) {
    throw Error(Code::kUnsupported, "scatter: the derivative of reduction " +
                                        ReductionName(a.reduction) +
                                        " is not supported (replace, add, max and min are)");
  }

  // For each element of the updates, its index position j (i64, the updates' shape): the
  // updates viewed as [outer, positions, inner] counted along the middle axis.
  static Value UpdatePositions(AdBuilder& b, const AdNode& n) {
    dim::Scope* s = b.dims();
    const size_t ax = static_cast<size_t>(std::get<ScatterAttrs>(n.attrs).axis);
    const Shape& x = b.type(n.operands[0]).shape;
    const Shape& is = b.type(n.operands[1]).shape;
    const Shape& us = b.type(n.operands[2]).shape;
    const Expr* outer = s->Constant(1);
    const Expr* count = s->Constant(1);
    const Expr* inner = s->Constant(1);
    for (size_t j = 0; j < ax; ++j) outer = s->Mul(outer, x[j]);
    for (const Expr* d : is) count = s->Mul(count, d);
    for (size_t j = ax + 1; j < x.size(); ++j) inner = s->Mul(inner, x[j]);
    const Value pos = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, {outer, count, inner}, 1}, {});
    return b.Reshape(pos, us);
  }

  // max/min: which elements equal the result (1, else 0, in the dtype; a NaN input counts as
  // equal, the result then being NaN) and how many per result element (>= 1: the result is the
  // base element or an update, or NaN from one).
  struct Winners {
    Value base, upd, count;
  };
  static Winners Extremal(AdBuilder& b, const AdNode& n) {
    const ScatterAttrs& a = std::get<ScatterAttrs>(n.attrs);
    const DType dt = b.type(n.result).dtype;
    const Value idx = n.operands[1];
    auto equal = [&](Value v, Value r) {
      const Value eq =
          b.Binary(OpKind::kOr, b.Binary(OpKind::kEq, v, r), b.Binary(OpKind::kNe, v, v));
      return b.Convert(eq, dt);
    };
    Winners w;
    w.base = equal(n.operands[0], n.result);
    w.upd = equal(n.operands[2], b.Apply(OpKind::kTake, AxisAttrs{a.axis}, {n.result, idx}));
    w.count = b.Add(
        w.base, b.Apply(OpKind::kScatter, AddAttrs(a), {b.Zeros(b.type(n.result)), idx, w.upd}));
    return w;
  }
};

}  // namespace

SHP_DEFINE_OP(ScatterAdd, ScatterAddDef)
SHP_DEFINE_OP(Scatter, ScatterDef)

}  // namespace ops
}  // namespace shp
