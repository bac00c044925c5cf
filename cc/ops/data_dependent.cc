// Ops whose result size comes from the data (nonzero, boolean_mask, size_from_value). Each
// produces an unbacked variable (dim::Scope::NewUnbacked) with the bounds it guarantees as
// derived facts. The runtime reads the variable's value from the operands' data
// (UnbackedValue) before it plans the node and the rest of the program (a new stage).
// Kernels: cc/kernels/select.h.
#include <cstring>
#include <string>

#include "cc/kernels/select.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using trace::DType;
using trace::TensorType;

// The unbacked variable of `a`: made while tracing when absent; otherwise it must be one
// (a loaded or replayed program, whose loader marked its variables).
const Expr* SizeVar(InferContext& c, UnbackedAttrs& a, int64_t lo, int64_t hi, const Expr* upper,
                    const std::string& origin) {
  dim::Scope* s = c.scope();
  if (a.size == nullptr) {
    if (c.mode() != InferMode::kTrace) c.Invalid("has no data-dependent size variable");
    a.size = s->NewUnbacked(a.name, lo, hi, upper, origin);
    return a.size;
  }
  if (a.size->AsVar() < 0 || !s->IsUnbacked(a.size->AsVar())) {
    c.Invalid("its size " + c.Str(a.size) + " must be an unbacked (data-dependent) variable");
  }
  return a.size;
}

std::string ShapeWords(InferContext& c, const TensorType& t) {
  return std::string("a ") + c.Str(t.shape) + " " + trace::DTypeName(t.dtype) + " tensor";
}

template <class A>
class UnbackedOpDef : public TypedOpDef<A> {
 public:
  UnbackedOpDef(OpKind kind, int arity) : TypedOpDef<A>(kind, arity) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::UnbackedOptions; }
  const dim::Expr* UnbackedSize(const Attrs& a) const override { return std::get<A>(a).size; }
  // One size for the whole batch cannot hold each element's own count.
  Value Batch(AdBuilder&, const BatchNode& n) const override {
    NotBatchable(n.op, "its result size depends on each batch element's values");
  }

 protected:
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const A& a) const override {
    return fb::CreateUnbackedOptions(*w.b, w.dim(a.size), a.axis).Union();
  }
  void Read(const OptionsReader& r, const void* opt, A* a) const override {
    const fb::UnbackedOptions* o = static_cast<const fb::UnbackedOptions*>(opt);
    a->size = r.dim(o->size());
    a->axis = o->axis();
  }
  std::string Text(const AttrPrinter& p, const A& a) const override {
    return " size=" + p.dim(a.size);
  }
};

// ---- nonzero ----

struct NonzeroStep final : Step {
  std::vector<int64_t> shape;
  int64_t count = 0;
  DType x_dtype = DType::kF32;
  void Run(const RunContext& c) override {
    CheckKernel(kernels::Nonzero(x_dtype, In(c, 0), shape.data(), static_cast<int>(shape.size()),
                                 count, reinterpret_cast<int64_t*>(Out(c)), Pool(c)),
                "nonzero");
  }
};

// The number of nonzero elements of one operand (nonzero's x, boolean_mask's mask).
int64_t Count(const OpDef::OperandData& d, kernels::ThreadPool* pool, const char* what) {
  int64_t n = 0;
  CheckKernel(kernels::CountNonzero(d.dtype, d.data, PlanBuilder::Product(*d.shape), pool, &n),
              what);
  return n;
}

class NonzeroDef final : public UnbackedOpDef<UnbackedAttrs> {
 public:
  NonzeroDef() : UnbackedOpDef(OpKind::kNonzero, 1) {}
  // An integer result: no derivatives (the transformations never ask for one).
  int64_t UnbackedValue(const NodeView&, const std::vector<OperandData>& in,
                        kernels::ThreadPool* pool) const override {
    return Count(in[0], pool, "nonzero");
  }
  // At most one row per element of x.
  const Expr* UnbackedBound(InferContext& c) const override { return c.Product(c.in(0).shape); }

 protected:
  TensorType InferTyped(InferContext& c, UnbackedAttrs& a) const override {
    const TensorType& x = c.in(0);
    const Expr* u =
        SizeVar(c, a, 0, dim::kPosInf, UnbackedBound(c), "nonzero of " + ShapeWords(c, x));
    a.axis = 0;
    return TensorType{DType::kI64, {u, c.scope()->Constant(static_cast<int64_t>(x.shape.size()))}};
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const UnbackedAttrs& a) const override {
    const int32_t x = n.operands[0];
    PlanBuilder::CheckRank(b.shape(x).size(), 32, "nonzero");
    NonzeroStep& s = b.AddStep<NonzeroStep>(DType::kI64, {x}, n.value);
    s.shape = b.shape(x);
    s.count = b.Eval(a.size);
    s.x_dtype = b.dtype(x);
    s.threaded = PlanBuilder::Product(s.shape) >= PlanBuilder::kThreadElements;
  }
};

// ---- boolean_mask ----

struct MaskSelectStep final : Step {
  int64_t outer = 0, m = 0, inner = 0, count = 0;
  void Run(const RunContext& c) override {
    CheckKernel(kernels::MaskSelect(In(c, 0), outer, m, inner, ElementSize(), In(c, 1), count,
                                    Out(c), Pool(c)),
                "boolean_mask");
  }
};

class BooleanMaskDef final : public UnbackedOpDef<UnbackedAttrs> {
 public:
  BooleanMaskDef() : UnbackedOpDef(OpKind::kBooleanMask, 2) {}
  int64_t UnbackedValue(const NodeView&, const std::vector<OperandData>& in,
                        kernels::ThreadPool* pool) const override {
    return Count(in[1], pool, "boolean_mask");
  }
  // At most one slice per element of the mask.
  const Expr* UnbackedBound(InferContext& c) const override { return c.Product(c.in(1).shape); }
  // Linear in x: the tangent masked the same way. The same size variable: a second node
  // that produces it from the same mask, so it has the same value.
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Apply(OpKind::kBooleanMask, n.attrs, {t[0], n.operands[1]});
  }
  // The transpose scatters each selected slice of ct back to its place, zeros elsewhere,
  // without a scatter: the mask flattened to m entries, each true entry's rank among the
  // true ones (a cumsum) indexes ct, and each false entry indexes one zero slice appended to
  // ct (index u); a take along the axis then reads x's layout, and a reshape restores the
  // mask's axes.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    const UnbackedAttrs& a = std::get<UnbackedAttrs>(n.attrs);
    dim::Scope* s = b.dims();
    const Shape& xs = b.type(n.operands[0]).shape;
    const Shape& ms = b.type(n.operands[1]).shape;
    const size_t ax = static_cast<size_t>(a.axis);
    const dim::Expr* m = s->Constant(1);
    for (const dim::Expr* d : ms) m = s->Mul(m, d);
    const Value flat = b.Reshape(n.operands[1], {m});
    const Value one = b.Convert(b.Scalar(DType::kF64, 1.0), DType::kI64);
    const Value rank =
        b.Sub(b.Apply(OpKind::kCumSum, AxisAttrs{0}, {b.Convert(flat, DType::kI64)}), one);
    const Value zero_slot =
        b.BroadcastTo(b.Apply(OpKind::kDimValue, DimValueAttrs{a.size}, {}), {m});
    const Value idx = b.Select(flat, rank, zero_slot);
    const Shape& cs = b.type(ct).shape;
    Shape low(cs.size(), s->Constant(0)), high(cs.size(), s->Constant(0));
    high[ax] = s->Constant(1);
    const Value padded = b.Apply(OpKind::kPad, PadAttrs{low, high, 0.0}, {ct});
    const Value taken = b.Apply(OpKind::kTake, AxisAttrs{a.axis}, {padded, idx});
    return {b.Reshape(taken, xs), nullptr};
  }

 protected:
  TensorType InferTyped(InferContext& c, UnbackedAttrs& a) const override {
    const TensorType& x = c.in(0);
    const TensorType& mask = c.in(1);
    c.RequireDType(mask.dtype, mask.dtype == DType::kBool, "a bool mask");
    const size_t k = mask.shape.size();
    if (k == 0) c.Invalid("the mask must have rank >= 1");
    if (x.shape.size() < k) {
      c.Invalid("the mask has rank " + std::to_string(k) + " but x has rank " +
                std::to_string(x.shape.size()));
    }
    a.axis = c.NormAxis(a.axis, x.shape.size(), "axis");
    const size_t ax = static_cast<size_t>(a.axis);
    if (ax + k > x.shape.size()) {
      c.Invalid("the mask of rank " + std::to_string(k) + " at axis " + std::to_string(ax) +
                " covers axes beyond x's rank " + std::to_string(x.shape.size()));
    }
    for (size_t i = 0; i < k; ++i) {
      const std::string what = "mask axis " + std::to_string(i) + " and x axis " +
                               std::to_string(ax + i) + " must be equal";
      if (!c.Decide(mask.shape[i], Cmp::kEq, x.shape[ax + i], what)) {
        c.Mismatch("the mask's shape " + c.Str(mask.shape) + " differs from x's axes " +
                   std::to_string(ax) + ".." + std::to_string(ax + k - 1) + " of " +
                   c.Str(x.shape) + " (axis " + std::to_string(i) + ": " + c.Str(mask.shape[i]) +
                   " vs " + c.Str(x.shape[ax + i]) + ")");
      }
    }
    const Expr* u = SizeVar(c, a, 0, dim::kPosInf, UnbackedBound(c),
                            "boolean_mask of " + ShapeWords(c, x) + " by a " + c.Str(mask.shape) +
                                " mask at axis " + std::to_string(ax));
    Shape out(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(ax));
    out.push_back(u);
    out.insert(out.end(), x.shape.begin() + static_cast<std::ptrdiff_t>(ax + k), x.shape.end());
    return TensorType{x.dtype, out};
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const UnbackedAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    const std::vector<int64_t>& mask = b.shape(n.operands[1]);
    const size_t ax = static_cast<size_t>(a.axis);
    MaskSelectStep& s = b.AddStep<MaskSelectStep>(n.dtype, {n.operands[0], n.operands[1]}, n.value);
    s.outer = PlanBuilder::Product(x, 0, ax);
    s.m = PlanBuilder::Product(mask);
    s.inner = PlanBuilder::Product(x, ax + mask.size(), x.size());
    s.count = b.Eval(a.size);
    s.threaded = PlanBuilder::Product(b.shape(n.value)) >= PlanBuilder::kThreadElements;
  }
};

// ---- size_from_value: the value is a plan scalar once known ----

class SizeFromValueDef final : public UnbackedOpDef<UnbackedAttrs> {
 public:
  SizeFromValueDef() : UnbackedOpDef(OpKind::kSizeFromValue, 1) {}
  int64_t UnbackedValue(const NodeView&, const std::vector<OperandData>& in,
                        kernels::ThreadPool*) const override {
    int64_t v;
    std::memcpy(&v, in[0].data, sizeof v);
    return v;
  }

 protected:
  TensorType InferTyped(InferContext& c, UnbackedAttrs& a) const override {
    const TensorType& v = c.in(0);
    c.RequireDType(v.dtype, v.dtype == DType::kI64, "an i64 scalar");
    if (!v.shape.empty()) {
      c.Mismatch("the value must be a scalar (rank 0), got shape " + c.Str(v.shape));
    }
    if (a.size == nullptr) {
      if (a.min < 0) {
        c.Invalid("the declared minimum " + std::to_string(a.min) +
                  " is negative (a size is >= 0)");
      }
      if (a.max < a.min) {
        c.Invalid("the declared range [" + std::to_string(a.min) + ", " + std::to_string(a.max) +
                  "] is empty");
      }
    }
    SizeVar(c, a, a.min, a.max, nullptr, "size_from_value of a computed i64 scalar");
    a.axis = 0;
    return TensorType{DType::kI64, {}};
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const UnbackedAttrs& a) const override {
    b.SetScalar(n.value, b.Eval(a.size));
  }
};

}  // namespace

SHP_DEFINE_OP(Nonzero, NonzeroDef)
SHP_DEFINE_OP(BooleanMask, BooleanMaskDef)
SHP_DEFINE_OP(SizeFromValue, SizeFromValueDef)

}  // namespace ops
}  // namespace shp
