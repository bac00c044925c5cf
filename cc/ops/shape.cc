// Ops that move elements without arithmetic: reshape, transpose, concatenate, slice, pad,
// reverse. Kernels: cc/kernels/transpose.h and cc/kernels/copy.h (reverse is a slice with
// negative strides).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cc/kernels/copy.h"
#include "cc/kernels/narrow.h"
#include "cc/kernels/elementwise_scalar.h"
#include "cc/kernels/transpose.h"
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

// ---- reshape: a view of its operand (no step) ----

class ReshapeDef final : public TypedOpDef<ReshapeAttrs> {
 public:
  ReshapeDef() : TypedOpDef(OpKind::kReshape, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::ReshapeOptions; }
  // Linear: the tangent takes the result's (explicit) shape, the cotangent the operand's.
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Reshape(t[0], b.type(n.result).shape);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    return {b.Reshape(ct, b.type(n.operands[0]).shape)};
  }

  // The batch axis kept in front of the per-element result shape.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    return b.Reshape(n.batched[0], WithBatchAxis(n, b.type(n.result).shape));
  }

 protected:
  TensorType InferTyped(InferContext& c, ReshapeAttrs& a) const override {
    dim::Scope* s = c.scope();
    const Shape& x = c.in(0).shape;
    Shape to = a.shape;
    int64_t infer = -1;
    for (size_t i = 0; i < to.size(); ++i) {
      if (to[i] != nullptr) {
        c.CheckSize(to[i], "target dimension " + std::to_string(i));
        continue;
      }
      if (infer >= 0)
        c.Invalid("at most one target dimension can be inferred, got " + c.SpecStr(to));
      infer = static_cast<int64_t>(i);
    }
    a.infer_axis = infer;
    const Expr* total = c.Product(x);
    const Expr* known = c.Product(to);
    if (infer < 0) {
      // (Equal expressions first: the context text is built only for a comparison to decide.)
      if (total != known &&
          !c.Decide(total, Cmp::kEq, known,
                    "the sizes when reshaping " + c.Str(x) + " to " + c.Str(to))) {
        c.Mismatch("cannot reshape " + c.Str(x) + " to " + c.Str(to) + ": the sizes " +
                   c.Str(total) + " and " + c.Str(known) + " differ");
      }
      return TensorType{c.in(0).dtype, to};
    }
    const Truth positive = s->Compare(known, Cmp::kGe, s->Constant(1));
    if (positive == Truth::kUnknown && c.mode() == InferMode::kTrace &&
        s->guard_policy() == dim::GuardPolicy::kFromHints) {
      // As PyTorch infers -1 for a symbolic size: guard the known product >= 1 on the hints
      // (a compiled function cannot declare ranges; a size 0 later fails the guard).
      c.GuardOnHints(known, Cmp::kGe, s->Constant(1),
                     "the product of the other dimensions, to infer the -1 of " + c.SpecStr(to));
    } else if (positive != Truth::kTrue) {
      c.Fail(s->Compare(known, Cmp::kEq, s->Constant(0)) == Truth::kTrue ? Code::kInvalidArgument
                                                                         : Code::kInconclusive,
             "cannot infer a dimension of " + c.SpecStr(to) + " when reshaping " + c.Str(x) +
                 ": the product " + c.Str(known) +
                 " of the other dimensions may be 0 under the constraints " +
                 s->ConstraintsToString() +
                 " (add a constraint or declare the ranges so that it is provably >= 1)");
    }
    const Expr* rem = s->Mod(total, known);
    Truth divisible =
        rem == s->Constant(0) ? Truth::kTrue : s->Compare(rem, Cmp::kEq, s->Constant(0));
    if (divisible == Truth::kFalse) {
      c.Mismatch("cannot reshape " + c.Str(x) + " to " + c.SpecStr(to) + ": the size " +
                 c.Str(total) + " is not divisible by " + c.Str(known));
    }
    if (divisible == Truth::kUnknown) {
      // Over a data-dependent size, an assertion would fail only at run time, on some data:
      // ask for the fact instead (the message names the check that states it).
      s->ThrowIfDataDependent(
          rem, Cmp::kEq, s->Constant(0),
          "reshape: divisibility when reshaping " + c.Str(x) + " to " + c.SpecStr(to));
      if (c.mode() == InferMode::kVerify) {
        c.Inconclusive(rem, Cmp::kEq, s->Constant(0),
                       "divisibility when reshaping " + c.Str(x) + " to " + c.SpecStr(to) +
                           "; the program lacks this assertion");
      }
      s->Check(rem, Cmp::kEq, s->Constant(0),
               "reshape: the size " + c.Str(total) + " of the operand " + c.Str(x) +
                   " must be divisible by " + c.Str(known) + " to reshape it to " + c.SpecStr(to));
    }
    to[static_cast<size_t>(infer)] = s->FloorDiv(total, known);
    return TensorType{c.in(0).dtype, to};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ReshapeAttrs& a) const override {
    return fb::CreateReshapeOptions(*w.b, w.b->CreateVector(w.Shape(a.shape)),
                                    static_cast<int32_t>(a.infer_axis))
        .Union();
  }
  void Read(const OptionsReader& r, const void* opt, ReshapeAttrs* a) const override {
    const fb::ReshapeOptions* o = static_cast<const fb::ReshapeOptions*>(opt);
    a->shape = r.shape(o->shape());
    if (o->infer_axis() >= 0) {
      if (static_cast<size_t>(o->infer_axis()) > a->shape.size()) r.Bad("has a bad infer_axis");
      a->shape.insert(a->shape.begin() + o->infer_axis(), nullptr);
    } else if (o->infer_axis() != -1) {
      r.Bad("has a bad infer_axis");
    }
    a->infer_axis = o->infer_axis();
  }
  std::string Text(const AttrPrinter& p, const ReshapeAttrs& a) const override {
    return " shape=" + p.Dims(a.shape);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const ReshapeAttrs&) const override {
    b.SetAlias(n.value, n.operands[0]);
  }
};

// ---- transpose ----

class TransposeDef final : public TypedOpDef<TransposeAttrs> {
 public:
  TransposeDef() : TypedOpDef(OpKind::kTranspose, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::TransposeOptions; }
  void CheckExecutable(const NodeView&, const std::vector<size_t>&, size_t rank) const override {
    PlanBuilder::CheckRank(rank, kernels::kMaxTransposeRank, "transpose");
  }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Transpose(t[0], std::get<TransposeAttrs>(n.attrs).permutation);
  }
  // The cotangent goes back through the inverse permutation.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    const std::vector<int64_t>& perm = std::get<TransposeAttrs>(n.attrs).permutation;
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return {b.Transpose(ct, inverse)};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    std::vector<int64_t> perm{0};
    for (int64_t p : ShiftAxes(std::get<TransposeAttrs>(n.attrs).permutation)) perm.push_back(p);
    return b.Transpose(n.batched[0], perm);
  }

 protected:
  TensorType InferTyped(InferContext& c, TransposeAttrs& a) const override {
    const Shape& x = c.in(0).shape;
    std::vector<int64_t>& perm = a.permutation;
    if (perm.size() != x.size()) {
      c.Invalid("the permutation has " + std::to_string(perm.size()) +
                " entries but the operand has rank " + std::to_string(x.size()));
    }
    std::vector<bool> seen(x.size(), false);
    Shape out;
    for (int64_t& p : perm) {
      p = c.NormAxis(p, x.size(), "permutation entry");
      if (seen[static_cast<size_t>(p)])
        c.Invalid("the permutation repeats axis " + std::to_string(p));
      seen[static_cast<size_t>(p)] = true;
      out.push_back(x[static_cast<size_t>(p)]);
    }
    return TensorType{c.in(0).dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const TransposeAttrs& a) const override {
    return fb::CreateTransposeOptions(*w.b, w.b->CreateVector(a.permutation)).Union();
  }
  void Read(const OptionsReader& r, const void* o, TransposeAttrs* a) const override {
    a->permutation = r.ints(static_cast<const fb::TransposeOptions*>(o)->permutation());
  }
  std::string Text(const AttrPrinter& p, const TransposeAttrs& a) const override {
    return " permutation=" + p.Ints(a.permutation);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const TransposeAttrs& a) const override {
    const std::vector<int64_t>& out = b.shape(n.value);
    PlanBuilder::CheckRank(out.size(), kernels::kMaxTransposeRank, "transpose");
    PlanTranspose(b, n.dtype, n.operands[0], b.shape(n.operands[0]), a.permutation, n.value,
                  PlanBuilder::Product(out) >= PlanBuilder::kThreadElements);
  }
};

// ---- concatenate ----

struct ConcatStep final : Step {
  std::vector<int64_t> out_shape, extents;
  int axis = 0;
  std::vector<const void*> ptrs;  // filled per run
  void Run(const RunContext& c) override {
    for (size_t k = 0; k < in.size(); ++k) ptrs[k] = In(c, k);
    CheckKernel(kernels::Concatenate(ptrs.data(), extents.data(), static_cast<int>(ptrs.size()),
                                     out_shape.data(), static_cast<int>(out_shape.size()), axis,
                                     ElementSize(), Out(c), Pool(c)),
                "concatenate");
  }
};

class ConcatenateDef final : public AxisOpDef {
 public:
  ConcatenateDef() : AxisOpDef(OpKind::kConcatenate, -1) {}
  void CheckExecutable(const NodeView&, const std::vector<size_t>&, size_t rank) const override {
    PlanBuilder::CheckRank(rank, kernels::kMaxCopyRank, "concatenate");
  }
  // The tangents concatenated; an operand without one contributes zeros of its shape (the
  // transformations call this only when some operand has a tangent).
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    std::vector<Value> parts;
    for (size_t i = 0; i < t.size(); ++i)
      parts.push_back(t[i] != nullptr ? t[i] : b.Zeros(b.type(n.operands[i])));
    return b.Apply(OpKind::kConcatenate, n.attrs, parts);
  }
  // Operand i's cotangent is the slice of `ct` at its offset along the axis.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    dim::Scope* s = b.dims();
    const size_t ax = static_cast<size_t>(std::get<AxisAttrs>(n.attrs).axis);
    const Shape& out = b.type(ct).shape;
    std::vector<Value> cts(n.operands.size(), nullptr);
    const Expr* offset = s->Constant(0);
    for (size_t i = 0; i < n.operands.size(); ++i) {
      const Expr* next = s->Add(offset, b.type(n.operands[i]).shape[ax]);
      if (need[i]) {
        SliceAttrs a{Shape(out.size(), s->Constant(0)), out, std::vector<int64_t>(out.size(), 1)};
        a.start[ax] = offset;
        a.limit[ax] = next;
        cts[i] = b.Apply(OpKind::kSlice, a, {ct});
      }
      offset = next;
    }
    return cts;
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    return BatchWithAttrs(b, n, AxisAttrs{std::get<AxisAttrs>(n.attrs).axis + 1});
  }

 protected:
  TensorType InferTyped(InferContext& c, AxisAttrs& a) const override {
    const Shape& first = c.in(0).shape;
    if (first.empty()) c.Invalid("cannot concatenate rank-0 tensors");
    a.axis = c.NormAxis(a.axis, first.size(), "axis");
    size_t ax = static_cast<size_t>(a.axis);
    const Expr* sum = first[ax];
    for (size_t i = 1; i < c.num_in(); ++i) {
      const Shape& sh = c.in(i).shape;
      c.SameDType(c.in(0).dtype, c.in(i).dtype);
      if (sh.size() != first.size())
        c.Mismatch("operands have different ranks: " + c.Str(first) + " and " + c.Str(sh));
      for (size_t j = 0; j < sh.size(); ++j) {
        if (j == ax) continue;
        if (!c.Decide(first[j], Cmp::kEq, sh[j],
                      "axis " + std::to_string(j) + " of operands 0 and " + std::to_string(i))) {
          c.Mismatch("shapes " + c.Str(first) + " and " + c.Str(sh) + " differ on axis " +
                     std::to_string(j) + " (" + c.Str(first[j]) + " vs " + c.Str(sh[j]) +
                     "); only axis " + std::to_string(ax) + " may differ");
        }
      }
      sum = c.scope()->Add(sum, sh[ax]);
    }
    Shape out = first;
    out[ax] = sum;
    return TensorType{c.in(0).dtype, out};
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const AxisAttrs& a) const override {
    const std::vector<int64_t>& out = b.shape(n.value);
    PlanBuilder::CheckRank(out.size(), kernels::kMaxCopyRank, "concatenate");
    ConcatStep& s = b.AddStep<ConcatStep>(n.dtype, n.operands, n.value);
    s.out_shape = out;
    s.axis = static_cast<int>(a.axis);
    for (int32_t o : n.operands) s.extents.push_back(b.shape(o)[static_cast<size_t>(a.axis)]);
    s.ptrs.resize(n.operands.size());
    s.threaded = PlanBuilder::Product(out) >= PlanBuilder::kThreadElements;
  }
};

// ---- slice (and reverse: a slice with stride -1 on the reversed axes) ----

struct SliceStep final : Step {
  std::vector<int64_t> in_shape, start, strides, out_shape;
  void Run(const RunContext& c) override {
    CheckKernel(
        kernels::Slice(In(c, 0), in_shape.data(), static_cast<int>(in_shape.size()), start.data(),
                       strides.data(), out_shape.data(), ElementSize(), Out(c), Pool(c)),
        "slice");
  }
};

class SliceDef final : public TypedOpDef<SliceAttrs> {
 public:
  SliceDef() : TypedOpDef(OpKind::kSlice, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::SliceOptions; }
  void CheckExecutable(const NodeView&, const std::vector<size_t>&, size_t rank) const override {
    PlanBuilder::CheckRank(rank, kernels::kMaxCopyRank, "slice");
  }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Apply(OpKind::kSlice, n.attrs, {t[0]});
  }
  // The cotangent padded back with zeros to the operand's shape. A strided axis is first
  // dilated with existing ops: each element gets stride - 1 zeros after it (a new axis of size
  // 1 after it, padded high to the stride, merged into m * stride), and the result is cut to
  // limit - start; then one pad puts start zeros before and dim - limit after every axis.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    dim::Scope* s = b.dims();
    const SliceAttrs& a = std::get<SliceAttrs>(n.attrs);
    const Shape& x = b.type(n.operands[0]).shape;
    const Expr* zero = s->Constant(0);
    const size_t rank = x.size();
    if (std::any_of(a.strides.begin(), a.strides.end(), [](int64_t st) { return st > 1; })) {
      const Shape& m = b.type(ct).shape;
      Shape split, merged;
      PadAttrs dilate;
      for (size_t i = 0; i < rank; ++i) {
        split.push_back(m[i]);
        merged.push_back(m[i]);
        dilate.low.push_back(zero);
        dilate.high.push_back(zero);
        if (a.strides[i] == 1) continue;
        split.push_back(s->Constant(1));
        dilate.low.push_back(zero);
        dilate.high.push_back(s->Constant(a.strides[i] - 1));
        merged.back() = s->Scale(m[i], a.strides[i]);
      }
      Value d = b.Apply(OpKind::kPad, dilate, {b.Reshape(ct, split)});
      d = b.Reshape(d, merged);
      SliceAttrs cut{Shape(rank, zero), merged, std::vector<int64_t>(rank, 1)};
      for (size_t i = 0; i < rank; ++i) {
        if (a.strides[i] > 1) cut.limit[i] = s->Sub(a.limit[i], a.start[i]);
      }
      ct = b.Apply(OpKind::kSlice, cut, {d});
    }
    PadAttrs back;
    bool identity = true;
    for (size_t i = 0; i < rank; ++i) {
      back.low.push_back(a.start[i]);
      back.high.push_back(s->Sub(x[i], a.limit[i]));
      identity = identity && back.low[i] == zero && back.high[i] == zero;
    }
    return {identity ? ct : b.Apply(OpKind::kPad, back, {ct})};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    const SliceAttrs& a = std::get<SliceAttrs>(n.attrs);
    SliceAttrs s{WithBatchAxis(n, a.start), WithBatchAxis(n, a.limit), {1}};
    s.start[0] = b.dims()->Constant(0);
    s.strides.insert(s.strides.end(), a.strides.begin(), a.strides.end());
    return b.Apply(OpKind::kSlice, std::move(s), {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, SliceAttrs& a) const override {
    dim::Scope* s = c.scope();
    const Shape& x = c.in(0).shape;
    if (a.start.size() != x.size() || a.limit.size() != x.size() || a.strides.size() != x.size()) {
      c.Invalid("start, limit and strides need one entry per axis (" + std::to_string(x.size()) +
                ")");
    }
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
      const Expr* st = a.start[i];
      const Expr* li = a.limit[i];
      int64_t stride = a.strides[i];
      if (st == nullptr || li == nullptr)
        c.Invalid("start or limit of axis " + std::to_string(i) + " is missing");
      if (stride < 1)
        c.Invalid("stride " + std::to_string(stride) + " of axis " + std::to_string(i) +
                  " is not >= 1");
      std::string ax = "axis " + std::to_string(i) + " of " + c.Str(x);
      const Expr* zero = s->Constant(0);
      if (!c.Decide(st, Cmp::kGe, zero, "start of " + ax))
        c.Mismatch("start " + c.Str(st) + " of " + ax + " is negative");
      if (!c.Decide(st, Cmp::kLe, li, "start and limit of " + ax)) {
        c.Mismatch("start " + c.Str(st) + " of " + ax + " exceeds the limit " + c.Str(li));
      }
      if (!c.Decide(li, Cmp::kLe, x[i], "limit of " + ax)) {
        c.Mismatch("limit " + c.Str(li) + " of " + ax + " exceeds the dimension " + c.Str(x[i]));
      }
      const Expr* len = s->Sub(li, st);
      out.push_back(stride == 1
                        ? len
                        : s->FloorDiv(s->Add(len, s->Constant(stride - 1)), s->Constant(stride)));
    }
    return TensorType{c.in(0).dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const SliceAttrs& a) const override {
    // One vector at a time, last first: file bytes must not depend on argument evaluation order.
    auto strides = w.b->CreateVector(a.strides);
    auto limit = w.b->CreateVector(w.Shape(a.limit));
    auto start = w.b->CreateVector(w.Shape(a.start));
    return fb::CreateSliceOptions(*w.b, start, limit, strides).Union();
  }
  void Read(const OptionsReader& r, const void* opt, SliceAttrs* a) const override {
    const fb::SliceOptions* o = static_cast<const fb::SliceOptions*>(opt);
    a->start = r.shape(o->start());
    a->limit = r.shape(o->limit());
    a->strides = r.ints(o->strides());
  }
  std::string Text(const AttrPrinter& p, const SliceAttrs& a) const override {
    return " start=" + p.Dims(a.start) + " limit=" + p.Dims(a.limit) +
           " strides=" + p.Ints(a.strides);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const SliceAttrs& a) const override {
    const std::vector<int64_t>& out = b.shape(n.value);
    PlanBuilder::CheckRank(out.size(), kernels::kMaxCopyRank, "slice");
    SliceStep& s = b.AddStep<SliceStep>(n.dtype, {n.operands[0]}, n.value);
    s.in_shape = b.shape(n.operands[0]);
    s.out_shape = out;
    for (const Expr* e : a.start) s.start.push_back(b.Eval(e));
    s.strides = a.strides;
    s.threaded = PlanBuilder::Product(out) >= PlanBuilder::kThreadElements;
  }
};

class ReverseDef final : public TypedOpDef<ReverseAttrs> {
 public:
  ReverseDef() : TypedOpDef(OpKind::kReverse, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::ReverseOptions; }
  void CheckExecutable(const NodeView&, const std::vector<size_t>&, size_t rank) const override {
    PlanBuilder::CheckRank(rank, kernels::kMaxCopyRank, "reverse");
  }
  // Its own transpose.
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Apply(OpKind::kReverse, n.attrs, {t[0]});
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    return {b.Apply(OpKind::kReverse, n.attrs, {ct})};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    return b.Apply(OpKind::kReverse, ReverseAttrs{ShiftAxes(std::get<ReverseAttrs>(n.attrs).axes)},
                   {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, ReverseAttrs& a) const override {
    c.NormAxes(&a.axes, c.in(0).shape.size());
    return c.in(0);
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ReverseAttrs& a) const override {
    return fb::CreateReverseOptions(*w.b, w.b->CreateVector(a.axes)).Union();
  }
  void Read(const OptionsReader& r, const void* o, ReverseAttrs* a) const override {
    a->axes = r.ints(static_cast<const fb::ReverseOptions*>(o)->axes());
  }
  std::string Text(const AttrPrinter& p, const ReverseAttrs& a) const override {
    return " axes=" + p.Ints(a.axes);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const ReverseAttrs& a) const override {
    const std::vector<int64_t>& shape = b.shape(n.value);
    PlanBuilder::CheckRank(shape.size(), kernels::kMaxCopyRank, "reverse");
    SliceStep& s = b.AddStep<SliceStep>(n.dtype, {n.operands[0]}, n.value);
    s.in_shape = shape;
    s.out_shape = shape;
    s.start.assign(shape.size(), 0);
    s.strides.assign(shape.size(), 1);
    for (int64_t ax : a.axes) {
      size_t i = static_cast<size_t>(ax);
      s.start[i] = shape[i] > 0 ? shape[i] - 1 : 0;
      s.strides[i] = -1;
    }
    s.threaded = PlanBuilder::Product(shape) >= PlanBuilder::kThreadElements;
  }
};

// ---- trilu: the upper or lower triangle of the matrices in the last two axes ----

struct TriluStep final : Step {
  int64_t batch = 0, rows = 0, cols = 0, k = 0;
  bool upper = true;
  void Run(const RunContext& c) override {
    CheckKernel(
        kernels::Trilu(In(c, 0), batch, rows, cols, k, upper, ElementSize(), Out(c), Pool(c)),
        "trilu");
  }
};

class TriluDef final : public TypedOpDef<TriluAttrs> {
 public:
  TriluDef() : TypedOpDef(OpKind::kTrilu, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::TriluOptions; }
  // Linear (a mask): its own transpose.
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.Apply(OpKind::kTrilu, n.attrs, {t[0]});
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    return {b.Apply(OpKind::kTrilu, n.attrs, {ct})};
  }

  // The last two axes stay the last two.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    return b.Apply(OpKind::kTrilu, n.attrs, {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, TriluAttrs&) const override {
    const size_t rank = c.in(0).shape.size();
    if (rank < 2)
      c.Invalid("needs an operand of rank >= 2 (matrices), got rank " + std::to_string(rank));
    return c.in(0);
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const TriluAttrs& a) const override {
    return fb::CreateTriluOptions(*w.b, a.k, a.upper).Union();
  }
  void Read(const OptionsReader&, const void* o, TriluAttrs* a) const override {
    const auto* t = static_cast<const fb::TriluOptions*>(o);
    a->k = t->k();
    a->upper = t->upper();
  }
  std::string Text(const AttrPrinter&, const TriluAttrs& a) const override {
    return " k=" + std::to_string(a.k) + " upper=" + (a.upper ? "true" : "false");
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const TriluAttrs& a) const override {
    const std::vector<int64_t>& shape = b.shape(n.value);
    TriluStep& s = b.AddStep<TriluStep>(n.dtype, {n.operands[0]}, n.value);
    s.rows = shape[shape.size() - 2];
    s.cols = shape.back();
    s.batch = PlanBuilder::Product(shape) / std::max<int64_t>(1, s.rows * s.cols);
    if (s.rows * s.cols == 0) s.batch = 0;
    s.k = a.k;
    s.upper = a.upper;
    s.threaded = PlanBuilder::Product(shape) >= PlanBuilder::kThreadElements;
  }
};

// ---- pad ----

struct PadStep final : Step {
  std::vector<int64_t> in_shape, low, high;
  uint64_t pad_bits = 0;  // the padding value's bytes in the element type
  void Run(const RunContext& c) override {
    CheckKernel(kernels::Pad(In(c, 0), in_shape.data(), static_cast<int>(in_shape.size()),
                             low.data(), high.data(), &pad_bits, ElementSize(), Out(c), Pool(c)),
                "pad");
  }
};

class PadDef final : public TypedOpDef<PadAttrs> {
 public:
  PadDef() : TypedOpDef(OpKind::kPad, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::PadOptions; }
  void CheckExecutable(const NodeView&, const std::vector<size_t>&, size_t rank) const override {
    PlanBuilder::CheckRank(rank, kernels::kMaxCopyRank, "pad");
  }
  // The padding value is an attribute: the padded elements have a zero tangent.
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    PadAttrs a = std::get<PadAttrs>(n.attrs);
    a.value = 0.0;
    return b.Apply(OpKind::kPad, a, {t[0]});
  }
  // The cotangent of the operand is the slice [low, low + dim) of `ct` on every axis.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    const PadAttrs& a = std::get<PadAttrs>(n.attrs);
    const Shape& x = b.type(n.operands[0]).shape;
    SliceAttrs s{a.low, {}, std::vector<int64_t>(x.size(), 1)};
    for (size_t i = 0; i < x.size(); ++i) s.limit.push_back(b.dims()->Add(a.low[i], x[i]));
    return {b.Apply(OpKind::kSlice, s, {ct})};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    PadAttrs a = std::get<PadAttrs>(n.attrs);
    a.low.insert(a.low.begin(), b.dims()->Constant(0));
    a.high.insert(a.high.begin(), b.dims()->Constant(0));
    return b.Apply(OpKind::kPad, std::move(a), {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, PadAttrs& a) const override {
    const Shape& x = c.in(0).shape;
    if (a.low.size() != x.size() || a.high.size() != x.size()) {
      c.Invalid("low and high padding need one entry per axis (" + std::to_string(x.size()) + ")");
    }
    if (!std::isfinite(a.value) && trace::IsInteger(c.in(0).dtype))
      c.Invalid("the padding value is not finite");
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
      const Expr* lo = a.low[i];
      const Expr* hi = a.high[i];
      if (lo == nullptr || hi == nullptr)
        c.Invalid("padding of axis " + std::to_string(i) + " is missing");
      const Expr* zero = c.scope()->Constant(0);
      std::string ax = "axis " + std::to_string(i);
      if (!c.Decide(lo, Cmp::kGe, zero, "low padding of " + ax)) {
        c.Mismatch("low padding " + c.Str(lo) + " of " + ax + " is negative");
      }
      if (!c.Decide(hi, Cmp::kGe, zero, "high padding of " + ax)) {
        c.Mismatch("high padding " + c.Str(hi) + " of " + ax + " is negative");
      }
      out.push_back(c.scope()->Add(c.scope()->Add(lo, x[i]), hi));
    }
    return TensorType{c.in(0).dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const PadAttrs& a) const override {
    // One vector at a time, last first: file bytes must not depend on argument evaluation order.
    auto high = w.b->CreateVector(w.Shape(a.high));
    auto low = w.b->CreateVector(w.Shape(a.low));
    return fb::CreatePadOptions(*w.b, low, high, a.value).Union();
  }
  void Read(const OptionsReader& r, const void* opt, PadAttrs* a) const override {
    const fb::PadOptions* o = static_cast<const fb::PadOptions*>(opt);
    a->low = r.shape(o->low());
    a->high = r.shape(o->high());
    a->value = o->value();
  }
  std::string Text(const AttrPrinter& p, const PadAttrs& a) const override {
    return " low=" + p.Dims(a.low) + " high=" + p.Dims(a.high) + " value=" + p.Double(a.value);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const PadAttrs& a) const override {
    const std::vector<int64_t>& out = b.shape(n.value);
    PlanBuilder::CheckRank(out.size(), kernels::kMaxCopyRank, "pad");
    PadStep& s = b.AddStep<PadStep>(n.dtype, {n.operands[0]}, n.value);
    s.in_shape = b.shape(n.operands[0]);
    for (const Expr* e : a.low) s.low.push_back(b.Eval(e));
    for (const Expr* e : a.high) s.high.push_back(b.Eval(e));
    // As the convert op does (saturating, NaN -> 0 for integers; rounded once for floats).
    kernels::StoreScalar(n.dtype, a.value, &s.pad_bits);
    s.threaded = PlanBuilder::Product(out) >= PlanBuilder::kThreadElements;
  }
};

}  // namespace

SHP_DEFINE_OP(Reshape, ReshapeDef)
SHP_DEFINE_OP(Transpose, TransposeDef)
SHP_DEFINE_OP(Concatenate, ConcatenateDef)
SHP_DEFINE_OP(Slice, SliceDef)
SHP_DEFINE_OP(Pad, PadDef)
SHP_DEFINE_OP(Reverse, ReverseDef)
SHP_DEFINE_OP(Trilu, TriluDef)

}  // namespace ops
}  // namespace shp
