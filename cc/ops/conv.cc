// conv: XLA's ConvGeneralDilated in NCHW layout with 1 to 3 spatial axes. x [N, C, *in],
// w [O, C/groups, *kernel] -> [N, O, *out], per spatial axis
//   out = floordiv((in - 1) * lhs_dilation + 1 + pad_low + pad_high
//                  - ((kernel - 1) * rhs_dilation + 1), stride) + 1.
// Pads are dims and may be negative (cropping). With lhs_dilation > 1 the input size must be
// >= 1 (the dilated size (in - 1) * lhs_dilation + 1 is wrong for 0): checked like the output
// size, provably at trace time or as a run-time assertion. Kernel: cc/kernels/conv.h.
#include <algorithm>
#include <mutex>
#include <string>

#include "cc/kernels/conv.h"
#include "cc/kernels/matmul_prepacked.h"
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

std::string SpatialAxis(size_t i) {
  return "spatial axis " + std::to_string(i) + " (axis " + std::to_string(i + 2) + ")";
}

// A fact the op needs: TRUE passes, FALSE fails naming it, UNKNOWN becomes a shape assertion
// the runtime checks before running (kConstraintViolation with `what`) while tracing, and is
// kInconclusive when verifying a loaded program (which must carry the assertion).
void Require(InferContext& c, const Expr* a, Cmp op, const Expr* b, const std::string& what) {
  dim::Scope* s = c.scope();
  const Truth t = a == b ? Truth::kTrue : s->Compare(a, op, b);
  if (t == Truth::kTrue) return;
  if (t == Truth::kFalse) c.Mismatch(what);
  if (c.mode() == InferMode::kVerify) {
    c.Inconclusive(a, op, b, what + "; the program lacks this assertion");
  }
  s->Check(a, op, b, c.Name() + ": " + what);
}

// A per-axis attribute: empty means all `dflt`; else one entry per spatial axis, each >= 1.
void NormInts(InferContext& c, std::vector<int64_t>* v, size_t ns, const char* name) {
  if (v->empty()) v->assign(ns, 1);
  if (v->size() != ns) {
    c.Invalid(std::string(name) + " has " + std::to_string(v->size()) +
              " entries, expected one per spatial axis (" + std::to_string(ns) + ")");
  }
  for (size_t i = 0; i < ns; ++i) {
    if ((*v)[i] < 1) {
      c.Invalid(std::string(name) + "[" + std::to_string(i) + "] must be >= 1, got " +
                std::to_string((*v)[i]));
    }
  }
}

void NormPads(InferContext& c, Shape* v, size_t ns, const char* name) {
  if (v->empty()) v->assign(ns, c.scope()->Constant(0));
  if (v->size() != ns) {
    c.Invalid(std::string(name) + " has " + std::to_string(v->size()) +
              " entries, expected one per spatial axis (" + std::to_string(ns) + ")");
  }
  for (size_t i = 0; i < ns; ++i) {
    if ((*v)[i] == nullptr) c.Invalid(std::string(name) + "[" + std::to_string(i) + "] is null");
  }
}

struct ConvScratchStep final : Step {
  // Gives the im2col column buffer (this step's output) its life in the arena: it is first
  // written here and last read by the conv step that follows. Nothing to compute.
  void Run(const RunContext&) override {}
};

// The weights of an f32 one-group conv that are a constant or a parameter's stored default,
// packed for kernels::ConvF32Packed (the channels-last product on small output planes) by the
// first plan that takes that path, then shared by every plan: convs that only run on large
// planes never pack a copy of their weights.
struct PackedConvWeights final : Prepared {
  const float* w = nullptr;
  // A default's bytes: the packing holds w only in runs that bind w to them (PackedB in
  // linalg.cc). Null for a constant.
  const void* source = nullptr;
  const kernels::PackedMatrixF32& Get(const kernels::ConvParams& p) const {
    std::call_once(once, [&] { packed = kernels::PackConvWeightsF32(p, w); });
    return packed;
  }
  // For the direct NCHWc kernel (kernels::ConvNchwcF32), packed on the SIMD target of the first
  // plan that takes it (empty if that target has no such kernel).
  const kernels::PackedConvNchwcF32& GetNchwc(const kernels::ConvParams& p) const {
    std::call_once(nchwc_once, [&] { nchwc = kernels::PackConvNchwcF32(p, w); });
    return nchwc;
  }

 private:
  mutable std::once_flag once;
  mutable kernels::PackedMatrixF32 packed;
  mutable std::once_flag nchwc_once;
  mutable kernels::PackedConvNchwcF32 nchwc;
};

struct ConvStep final : Step {
  kernels::ConvParams p;
  int64_t scratch_elements = 0;  // in[2] is the column buffer when > 0
  int bias_in = -1;              // f32, fused (see PlanTyped): the index in `in` of the bias
  int residual_in = -1;          // f32, fused: the index in `in` of the residual added after it
  bool relu = false;             // f32, fused: max(., 0) after the bias (and residual)
  // f32 on a small plane with packed weights: the channels-last product (same bits), into the
  // buffer in[product_in] of product_elements, when the run's w is the packed one.
  const kernels::PackedMatrixF32* packed_w = nullptr;
  const void* packed_source = nullptr;
  int product_in = -1;
  int64_t product_elements = 0;
  // f32 where the direct NCHWc kernel is faster (kernels::ConvNchwcTakes), with packed weights:
  // that kernel when the run's w is the packed one (not the same bits as ConvF32: within f32
  // rounding of it, and the same for any thread count).
  const kernels::PackedConvNchwcF32* nchwc_w = nullptr;
  void Run(const RunContext& c) override {
    // The column buffer is arena memory this step owns while it runs.
    uint8_t* scratch = scratch_elements > 0 ? const_cast<uint8_t*>(In(c, 2)) : nullptr;
    bool ok = false;
    if (dtype == DType::kF32) {
      kernels::ConvEpilogue ep;
      if (bias_in >= 0) ep.bias = reinterpret_cast<const float*>(In(c, bias_in));
      if (residual_in >= 0) {
        ep.residual = reinterpret_cast<const float*>(In(c, static_cast<size_t>(residual_in)));
      }
      ep.relu = relu;
      // False only if the packing was made on another SIMD target: then the plain kernel.
      if (nchwc_w != nullptr && (packed_source == nullptr || packed_source == In(c, 1)) &&
          kernels::ConvNchwcF32(p, reinterpret_cast<const float*>(In(c, 0)), *nchwc_w,
                                reinterpret_cast<float*>(Out(c)), ep, Pool(c))) {
        return;
      }
      if (packed_w != nullptr && (packed_source == nullptr || packed_source == In(c, 1)) &&
          kernels::ConvF32Packed(p, reinterpret_cast<const float*>(In(c, 0)), *packed_w,
                                 reinterpret_cast<float*>(Out(c)),
                                 reinterpret_cast<float*>(scratch), scratch_elements,
                                 reinterpret_cast<float*>(
                                     const_cast<uint8_t*>(In(c, static_cast<size_t>(product_in)))),
                                 product_elements, ep, Pool(c))) {
        return;
      }
      ok = kernels::ConvF32(p, reinterpret_cast<const float*>(In(c, 0)),
                            reinterpret_cast<const float*>(In(c, 1)),
                            reinterpret_cast<float*>(Out(c)), reinterpret_cast<float*>(scratch),
                            scratch_elements, ep, Pool(c));
    } else if (dtype == DType::kF64) {
      ok = kernels::ConvF64(p, reinterpret_cast<const double*>(In(c, 0)),
                            reinterpret_cast<const double*>(In(c, 1)),
                            reinterpret_cast<double*>(Out(c)), reinterpret_cast<double*>(scratch),
                            scratch_elements, Pool(c));
    }
    CheckKernel(ok, "conv");
  }
};

// ---- Derivatives (all through conv itself: it is bilinear) ----

std::vector<int64_t> Iota(size_t n, int64_t from) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + static_cast<int64_t>(i);
  return v;
}

// Axes 0 and 1 swapped, the spatial axes kept.
std::vector<int64_t> SwapFirstTwo(size_t rank) {
  std::vector<int64_t> perm = Iota(rank, 0);
  std::swap(perm[0], perm[1]);
  return perm;
}

// d x: the cotangent convolved with the kernel flipped on its spatial axes, its channel axes
// swapped within each group; the cotangent dilated by the strides, read with stride
// lhs_dilation (only the positions where x's elements sit), padded so the result is x's shape.
Value ConvInputGrad(AdBuilder& b, const AdNode& n, Value ct) {
  const ConvAttrs& a = std::get<ConvAttrs>(n.attrs);
  dim::Scope* s = b.dims();
  const Shape& xs = b.type(n.operands[0]).shape;
  const Shape& ws = b.type(n.operands[1]).shape;
  const Shape& ys = b.type(ct).shape;
  const size_t rank = xs.size(), ns = rank - 2;
  const int64_t g = a.groups;
  Value w = n.operands[1];
  if (g == 1) {
    w = b.Transpose(w, SwapFirstTwo(rank));
  } else {
    const Expr* og = s->FloorDiv(ws[0], s->Constant(g));
    Shape split{s->Constant(g), og, ws[1]};
    split.insert(split.end(), ws.begin() + 2, ws.end());
    std::vector<int64_t> perm{0, 2, 1};
    for (size_t i = 0; i < ns; ++i) perm.push_back(static_cast<int64_t>(3 + i));
    Shape merged{xs[1], og};
    merged.insert(merged.end(), ws.begin() + 2, ws.end());
    w = b.Reshape(b.Transpose(b.Reshape(w, split), perm), merged);
  }
  w = b.Apply(OpKind::kReverse, ReverseAttrs{Iota(ns, 2)}, {w});
  ConvAttrs t;
  t.strides = a.lhs_dilation;
  t.lhs_dilation = a.strides;
  t.rhs_dilation = a.rhs_dilation;
  t.groups = g;
  for (size_t i = 0; i < ns; ++i) {
    const Expr* k1 = s->Sub(ws[2 + i], s->Constant(1));
    const Expr* h1 = s->Sub(xs[2 + i], s->Constant(1));
    const Expr* o1 = s->Sub(ys[2 + i], s->Constant(1));
    t.pad_low.push_back(s->Sub(s->Scale(k1, a.rhs_dilation[i]), a.pad_low[i]));
    t.pad_high.push_back(
        s->Add(s->Sub(s->Scale(h1, a.lhs_dilation[i]), s->Scale(o1, a.strides[i])), a.pad_low[i]));
  }
  return b.Apply(OpKind::kConv, t, {ct, w});
}

// d w: x and the cotangent with the batch axis as the contracted (channel) axis: x as
// [C/G, G*N, *in] (batch = x's channels within a group), the cotangent as the kernel
// [O, N, *out] dilated by the strides, `groups` pairing each group's channels.
Value ConvKernelGrad(AdBuilder& b, const AdNode& n, Value ct) {
  const ConvAttrs& a = std::get<ConvAttrs>(n.attrs);
  dim::Scope* s = b.dims();
  const Shape& xs = b.type(n.operands[0]).shape;
  const Shape& ws = b.type(n.operands[1]).shape;
  const Shape& ys = b.type(ct).shape;
  const size_t rank = xs.size(), ns = rank - 2;
  const int64_t g = a.groups;
  Value x = n.operands[0], c = ct;
  if (g == 1) {
    x = b.Transpose(x, SwapFirstTwo(rank));
    c = b.Transpose(c, SwapFirstTwo(rank));
  } else {
    const Expr* G = s->Constant(g);
    const Expr* og = s->FloorDiv(ys[1], G);
    std::vector<int64_t> perm{2, 1, 0};  // [N, G, *, ...] -> [*, G, N, ...]
    for (size_t i = 0; i < ns; ++i) perm.push_back(static_cast<int64_t>(3 + i));
    Shape xsplit{xs[0], G, ws[1]};
    xsplit.insert(xsplit.end(), xs.begin() + 2, xs.end());
    Shape xmerged{ws[1], s->Mul(G, xs[0])};
    xmerged.insert(xmerged.end(), xs.begin() + 2, xs.end());
    x = b.Reshape(b.Transpose(b.Reshape(x, xsplit), perm), xmerged);
    Shape csplit{ys[0], G, og};
    csplit.insert(csplit.end(), ys.begin() + 2, ys.end());
    std::vector<int64_t> cperm{1, 2, 0};  // [N, G, Og, ...] -> [G, Og, N, ...]
    for (size_t i = 0; i < ns; ++i) cperm.push_back(static_cast<int64_t>(3 + i));
    Shape cmerged{ys[1], ys[0]};
    cmerged.insert(cmerged.end(), ys.begin() + 2, ys.end());
    c = b.Reshape(b.Transpose(b.Reshape(c, csplit), cperm), cmerged);
  }
  ConvAttrs t;
  t.strides = a.rhs_dilation;
  t.lhs_dilation = a.lhs_dilation;
  t.rhs_dilation = a.strides;
  t.groups = g;
  for (size_t i = 0; i < ns; ++i) {
    const Expr* k1 = s->Sub(ws[2 + i], s->Constant(1));
    const Expr* h1 = s->Sub(xs[2 + i], s->Constant(1));
    const Expr* o1 = s->Sub(ys[2 + i], s->Constant(1));
    t.pad_low.push_back(a.pad_low[i]);
    t.pad_high.push_back(
        s->Sub(s->Sub(s->Add(s->Scale(k1, a.rhs_dilation[i]), s->Scale(o1, a.strides[i])),
                      s->Scale(h1, a.lhs_dilation[i])),
               a.pad_low[i]));
  }
  // [C/G, O, *kernel] -> [O, C/G, *kernel].
  return b.Transpose(b.Apply(OpKind::kConv, t, {x, c}), SwapFirstTwo(rank));
}

class ConvDef final : public TypedOpDef<ConvAttrs> {
 public:
  ConvDef() : TypedOpDef(OpKind::kConv, 2) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::ConvOptions; }
  const dim::Expr* Flops(const CostContext& c) const override {
    const Shape& w = c.operands[1]->shape;
    const Expr* f = c.scope->Mul(c.PerElement(2, *c.result), w[1]);
    for (size_t i = 2; i < w.size(); ++i) f = c.scope->Mul(f, w[i]);
    return f;
  }
  const char* flops_rule() const override {
    return "2 * result elements * C/groups * product of the kernel's spatial dims";
  }

  // Bilinear: conv(dx, w) + conv(x, dw).
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    Value d = nullptr;
    if (t[0] != nullptr) d = b.Apply(OpKind::kConv, n.attrs, {t[0], n.operands[1]});
    if (t[1] != nullptr) d = b.AddZ(d, b.Apply(OpKind::kConv, n.attrs, {n.operands[0], t[1]}));
    return d;
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    std::vector<Value> out(2, nullptr);
    if (need[0]) out[0] = ConvInputGrad(b, n, ct);
    if (need[1]) out[1] = ConvKernelGrad(b, n, ct);
    return out;
  }

  // x's batch merged into its N axis; per-element weights would need a group per element,
  // which a symbolic batch size cannot give.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    if (n.is_batched(1)) {
      NotBatchable(n.op, "its weights (operand 1) are batched; only x (operand 0) can be");
    }
    Shape merged = b.type(n.operands[0]).shape;
    merged[0] = b.dims()->Mul(n.size, merged[0]);
    Value y = b.Apply(OpKind::kConv, n.attrs, {b.Reshape(n.batched[0], merged), n.operands[1]});
    return b.Reshape(y, WithBatchAxis(n, b.type(n.result).shape));
  }

 protected:
  TensorType InferTyped(InferContext& c, ConvAttrs& a) const override {
    const TensorType& xt = c.in(0);
    const TensorType& wt = c.in(1);
    c.SameDType(xt.dtype, wt.dtype);
    c.RequireDType(xt.dtype, xt.dtype == DType::kF32 || xt.dtype == DType::kF64,
                   "f32 or f64 operands");
    const Shape& x = xt.shape;
    const Shape& w = wt.shape;
    if (x.size() < 3 || x.size() > 5) {
      c.Invalid("x must have rank 3, 4 or 5 ([N, C, *spatial] with 1 to 3 spatial axes), got " +
                c.Str(x));
    }
    if (w.size() != x.size()) {
      c.Invalid("w must have the rank of x ([O, C/groups, *kernel]), got x " + c.Str(x) +
                " and w " + c.Str(w));
    }
    const size_t ns = x.size() - 2;
    NormInts(c, &a.strides, ns, "strides");
    NormInts(c, &a.lhs_dilation, ns, "lhs_dilation");
    NormInts(c, &a.rhs_dilation, ns, "rhs_dilation");
    NormPads(c, &a.pad_low, ns, "pad_low");
    NormPads(c, &a.pad_high, ns, "pad_high");
    if (a.groups < 1) c.Invalid("groups must be >= 1, got " + std::to_string(a.groups));
    dim::Scope* s = c.scope();
    const Expr* zero = s->Constant(0);
    const Expr* one = s->Constant(1);
    const Expr* g = s->Constant(a.groups);
    const std::string gs = std::to_string(a.groups);
    if (!c.Decide(s->Mod(x[1], g), Cmp::kEq, zero, "divisibility of x's channels by groups")) {
      c.Mismatch("x's channel count " + c.Str(x[1]) + " (axis 1 of " + c.Str(x) +
                 ") is not divisible by groups = " + gs);
    }
    if (!c.Decide(s->Mod(w[0], g), Cmp::kEq, zero, "divisibility of w's output channels")) {
      c.Mismatch("w's output channel count " + c.Str(w[0]) + " (axis 0 of " + c.Str(w) +
                 ") is not divisible by groups = " + gs);
    }
    const Expr* cg = s->FloorDiv(x[1], g);
    if (!c.Decide(w[1], Cmp::kEq, cg, "w's axis 1 against x's channels per group")) {
      c.Mismatch("w's axis 1 must be x's channels per group " + c.Str(cg) + " (C = " + c.Str(x[1]) +
                 ", groups = " + gs + "), got " + c.Str(w[1]) + " (x " + c.Str(x) + ", w " +
                 c.Str(w) + ")");
    }
    Shape out{x[0], w[0]};
    for (size_t i = 0; i < ns; ++i) {
      const Expr* h = x[2 + i];
      const Expr* k = w[2 + i];
      Require(c, k, Cmp::kGe, one,
              "the kernel size " + c.Str(k) + " of " + SpatialAxis(i) + " must be >= 1");
      if (a.lhs_dilation[i] > 1) {
        // (h - 1) * lhs_dilation + 1 is the dilated size only for h >= 1.
        Require(c, h, Cmp::kGe, one,
                "the input size " + c.Str(h) + " of " + SpatialAxis(i) +
                    " must be >= 1 with lhs_dilation " + std::to_string(a.lhs_dilation[i]));
      }
      const Expr* dilated = s->Add(s->Scale(s->Sub(h, one), a.lhs_dilation[i]), one);
      const Expr* window = s->Add(s->Scale(s->Sub(k, one), a.rhs_dilation[i]), one);
      const Expr* span = s->Sub(s->Add(s->Add(dilated, a.pad_low[i]), a.pad_high[i]), window);
      const Expr* o = s->Add(s->FloorDiv(span, s->Constant(a.strides[i])), one);
      Require(c, o, Cmp::kGe, one,
              "the output size " + c.Str(o) + " of " + SpatialAxis(i) + " must be >= 1 (input " +
                  c.Str(h) + ", kernel " + c.Str(k) + ")");
      out.push_back(o);
    }
    return TensorType{xt.dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ConvAttrs& a) const override {
    flatbuffers::FlatBufferBuilder& b = *w.b;
    // One vector at a time, last first: file bytes must not depend on argument evaluation order.
    auto pad_high = b.CreateVector(w.Shape(a.pad_high));
    auto pad_low = b.CreateVector(w.Shape(a.pad_low));
    auto rhs = b.CreateVector(a.rhs_dilation);
    auto lhs = b.CreateVector(a.lhs_dilation);
    auto strides = b.CreateVector(a.strides);
    return fb::CreateConvOptions(b, strides, lhs, rhs, pad_low, pad_high, a.groups).Union();
  }
  void Read(const OptionsReader& r, const void* opt, ConvAttrs* a) const override {
    const fb::ConvOptions* o = static_cast<const fb::ConvOptions*>(opt);
    a->strides = r.ints(o->strides());
    a->lhs_dilation = r.ints(o->lhs_dilation());
    a->rhs_dilation = r.ints(o->rhs_dilation());
    a->pad_low = r.shape(o->pad_low());
    a->pad_high = r.shape(o->pad_high());
    a->groups = o->groups();
  }
  std::string Text(const AttrPrinter& p, const ConvAttrs& a) const override {
    return " strides=" + p.Ints(a.strides) + " lhs_dilation=" + p.Ints(a.lhs_dilation) +
           " rhs_dilation=" + p.Ints(a.rhs_dilation) + " pad_low=" + p.Dims(a.pad_low) +
           " pad_high=" + p.Dims(a.pad_high) + " groups=" + std::to_string(a.groups);
  }

  // f32, one group, w a constant or a parameter's default of a constant shape: kept for the
  // plans to pack (PackedConvWeights).
  std::unique_ptr<Prepared> Prepare(const PrepareContext& c, const NodeView& n) const override {
    if (n.dtype != DType::kF32 || std::get<ConvAttrs>(n.attrs).groups != 1) return nullptr;
    const int32_t wv = n.operands[1];
    const std::string* bytes = c.constant_bytes(wv);
    const void* source = nullptr;
    if (bytes == nullptr && c.default_bytes) {
      bytes = c.default_bytes(wv);
      source = bytes == nullptr ? nullptr : bytes->data();
    }
    if (bytes == nullptr) return nullptr;
    size_t numel = 1;
    for (const Expr* d : c.type(wv).shape) {
      if (!d->IsConstant() || d->ConstantTerm() < 0 ||
          __builtin_mul_overflow(numel, static_cast<size_t>(d->ConstantTerm()), &numel)) {
        return nullptr;
      }
    }
    if (numel == 0 || bytes->size() / sizeof(float) < numel) return nullptr;
    std::unique_ptr<PackedConvWeights> pw(new PackedConvWeights());
    pw->w = reinterpret_cast<const float*>(bytes->data());
    pw->source = source;
    return std::unique_ptr<Prepared>(pw.release());
  }

  // n.operands is {x, w}, or as the runtime fuses a conv with what follows it (ConvFusion,
  // cc/runtime/plan.h; f32 only): {x, w, bias} for y + bias[o] broadcast over every axis but
  // the channel axis, {x, w, bias, residual} for that + residual (of y's shape), and either
  // followed by max's zero operand (a scalar, not read) for max(., 0); n.value is then the
  // fused result, of y's shape. The kernel's epilogue computes them bit for bit as the
  // separate ops.
  void PlanTyped(PlanBuilder& pb, const NodeView& n, const ConvAttrs& a) const override {
    using PB = PlanBuilder;
    // Fused operands after x and w: the bias, then a residual (y's rank), then max's zero (a
    // scalar).
    const size_t fused = n.operands.size() - 2;
    const bool residual = fused >= 2 && pb.shape(n.operands[3]).size() == pb.shape(n.value).size();
    const bool relu = fused >= 2 && pb.shape(n.operands.back()).empty();
    if (fused > 3 || (fused > 0 && n.dtype != DType::kF32) ||
        (fused > 0 && fused != size_t{1} + residual + relu)) {
      throw Error(Code::kInternal, "runtime: conv: no fused epilogue for these operands");
    }
    const std::vector<int64_t>& x = pb.shape(n.operands[0]);
    const std::vector<int64_t>& w = pb.shape(n.operands[1]);
    const std::vector<int64_t>& y = pb.shape(n.value);
    const size_t ns = x.size() - 2;
    kernels::ConvParams p;
    p.spatial_rank = static_cast<int>(ns);
    p.batch = x[0];
    p.in_channels = x[1];
    p.out_channels = w[0];
    p.groups = a.groups;
    for (size_t i = 0; i < ns; ++i) {
      if (y[2 + i] < 1) {
        throw Error(Code::kConstraintViolation,
                    "conv: the output size of " + SpatialAxis(i) + " is " +
                        std::to_string(y[2 + i]) + ", it must be >= 1 (input " +
                        std::to_string(x[2 + i]) + ", kernel " + std::to_string(w[2 + i]) + ")");
      }
      p.in[i] = x[2 + i];
      p.kernel[i] = w[2 + i];
      p.out[i] = y[2 + i];
      p.stride[i] = a.strides[i];
      p.lhs_dilation[i] = a.lhs_dilation[i];
      p.rhs_dilation[i] = a.rhs_dilation[i];
      p.pad_low[i] = pb.Eval(a.pad_low[i]);
    }
    if (!kernels::ValidConvParams(p)) {
      throw Error(Code::kInvalidArgument, "runtime: conv: the shapes x " + Ints(x) + ", w " +
                                              Ints(w) + " give no valid convolution");
    }
    // The column buffer: an arena temporary as large as the largest of x, y and w. Deep layers
    // on small maps (512 -> 512 channels, 3x3, at 7x7) have x and y far smaller than one column
    // tile of 9*512 rows; sized by them, they fell back to the direct kernel at ~2% of the
    // matmul's speed. w has the column count times O elements, always room for tiles.
    int32_t like = pb.bytes(n.operands[0]) >= pb.bytes(n.value) ? n.operands[0] : n.value;
    if (pb.bytes(n.operands[1]) > pb.bytes(like)) like = n.operands[1];
    const int64_t esize = static_cast<int64_t>(trace::DTypeSize(n.dtype));
    const int64_t scratch = pb.bytes(like) / esize;
    std::vector<int32_t> in{n.operands[0], n.operands[1]};
    const kernels::ConvMethod method =
        kernels::ChooseConvMethod(p, scratch, n.dtype == DType::kF64);
    // The column buffer, or for the NCHWc kernel the buffer ConvF32 packs w into when the run's
    // w is not the packed one.
    const bool im2col =
        method == kernels::ConvMethod::kIm2col || method == kernels::ConvMethod::kNchwc;
    if (im2col) {
      const int32_t tmp = pb.NewTempLike(like);
      pb.AddStep<ConvScratchStep>(n.dtype, {}, tmp);
      in.push_back(tmp);
    }
    // The channels-last product: its columns fit the column buffer (rows x P <= rows x O, w's
    // size), its product [P, O] a buffer like y (N >= 1 images of P x O).
    const auto* pw = static_cast<const PackedConvWeights*>(n.prepared);
    const kernels::PackedMatrixF32* packed_w = nullptr;
    const kernels::PackedConvNchwcF32* nchwc_w = nullptr;
    // The direct NCHWc kernel where ConvF32 would run it too (the same bits): with the weights
    // packed once instead of on every call.
    if (pw != nullptr && n.dtype == DType::kF32 && p.batch > 0 &&
        method == kernels::ConvMethod::kNchwc) {
      const kernels::PackedConvNchwcF32& nw = pw->GetNchwc(p);
      if (!nw.empty()) nchwc_w = &nw;
    }
    int product_in = -1;
    if (pw != nullptr && n.dtype == DType::kF32 && p.batch > 0 && nchwc_w == nullptr &&
        kernels::ConvChannelsTakes(p, scratch)) {
      packed_w = &pw->Get(p);
      const int32_t product = pb.NewTempLike(n.value);
      pb.AddStep<ConvScratchStep>(n.dtype, {}, product);
      product_in = static_cast<int>(in.size());
      in.push_back(product);
    }
    if (fused > 0) in.push_back(n.operands[2]);
    if (residual) in.push_back(n.operands[3]);
    ConvStep& s = pb.AddStep<ConvStep>(n.dtype, in, n.value);
    s.p = p;
    s.scratch_elements = im2col ? scratch : 0;
    if (nchwc_w != nullptr) {
      s.nchwc_w = nchwc_w;
      s.packed_source = pw->source;
    }
    if (packed_w != nullptr) {
      s.packed_w = packed_w;
      s.packed_source = pw->source;
      s.product_in = product_in;
      s.product_elements = pb.bytes(product_in >= 0 ? in[static_cast<size_t>(product_in)] : 0) /
                           static_cast<int64_t>(sizeof(float));
    }
    if (fused > 0) s.bias_in = static_cast<int>(in.size()) - (residual ? 2 : 1);
    if (residual) s.residual_in = static_cast<int>(in.size()) - 1;
    s.relu = relu;
    int64_t work = PB::Product(y);
    for (size_t i = 1; i < w.size(); ++i) work = PB::Mul(work, w[i]);
    s.threaded = work >= PB::kThreadElements;
  }

 private:
  static std::string Ints(const std::vector<int64_t>& v) { return AttrPrinter::Ints(v); }
};

}  // namespace

SHP_DEFINE_OP(Conv, ConvDef)

}  // namespace ops
}  // namespace shp
