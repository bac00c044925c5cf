// Matrix products: matmul (NumPy semantics, batch broadcasting) and dot_general (XLA
// dimension numbers). Kernels: cc/kernels/matmul.h, matmul_prepacked.h; dot_general
// transposes an operand first when its axes are not in a layout the matmul kernel reads.
#include <algorithm>

#include "cc/kernels/matmul.h"
#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/transpose.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using trace::DType;
using trace::TensorType;

// The right operand of an f32 matmul that is a rank-2 constant or a parameter's stored default,
// packed once per runtime for the matmul micro-kernel; plans of every shape share it.
struct PackedB final : Prepared {
  PackedB(kernels::PackedMatrixF32 m, const void* src) : packed(std::move(m)), source(src) {}
  kernels::PackedMatrixF32 packed;
  // A default's bytes: the packed panels hold B only in a run that binds B to them (a run may
  // pass its own array for a parameter). Null for a constant: always B.
  const void* source;
};

struct MatmulStep final : Step {
  kernels::MatmulParams mm;
  const kernels::PackedMatrixF32* packed = nullptr;  // B pre-packed (else null)
  const void* packed_source = nullptr;               // PackedB::source
  void Run(const RunContext& c) override {
    const uint8_t* a = In(c, 0);
    const uint8_t* b = In(c, 1);
    uint8_t* out = Out(c);
    bool ok = false;
    switch (dtype) {
      case DType::kF32:
        // A pre-packed B (a constant, or the default this run binds); false only if it was
        // packed for another SIMD target.
        if (packed != nullptr && (packed_source == nullptr || packed_source == b) &&
            kernels::MatmulF32Prepacked(mm, reinterpret_cast<const float*>(a), *packed,
                                        reinterpret_cast<float*>(out), Pool(c))) {
          ok = true;
          break;
        }
        ok = kernels::MatmulF32(mm, reinterpret_cast<const float*>(a),
                                reinterpret_cast<const float*>(b), reinterpret_cast<float*>(out),
                                Pool(c));
        break;
      case DType::kF64:
        ok = kernels::MatmulF64(mm, reinterpret_cast<const double*>(a),
                                reinterpret_cast<const double*>(b), reinterpret_cast<double*>(out),
                                Pool(c));
        break;
      case DType::kI32:
        ok = kernels::MatmulI32(mm, reinterpret_cast<const int32_t*>(a),
                                reinterpret_cast<const int32_t*>(b),
                                reinterpret_cast<int32_t*>(out), Pool(c));
        break;
      case DType::kI64:
        ok = kernels::MatmulI64(mm, reinterpret_cast<const int64_t*>(a),
                                reinterpret_cast<const int64_t*>(b),
                                reinterpret_cast<int64_t*>(out), Pool(c));
        break;
      default:  // bool and the narrow types (computed in their compute type)
        break;
    }
    CheckKernel(ok, "matmul");
  }
};

// x with its last two axes swapped.
Value SwapLast(AdBuilder& b, Value x) {
  std::vector<int64_t> perm(b.type(x).shape.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 2], perm.back());
  return b.Transpose(x, perm);
}

// The inverse of the permutation `src` (src[p] is the axis that lands at position p).
std::vector<int64_t> Inverse(const std::vector<int64_t>& src) {
  std::vector<int64_t> inv(src.size());
  for (size_t p = 0; p < src.size(); ++p)
    inv[static_cast<size_t>(src[p])] = static_cast<int64_t>(p);
  return inv;
}

// x transposed by `perm`, or x itself when `perm` is the identity.
Value Permute(AdBuilder& b, Value x, const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return b.Transpose(x, perm);
  }
  return x;
}

class MatMulDef final : public OpDef {
 public:
  MatMulDef() : OpDef(OpKind::kMatMul, 2, 0) {}
  Attrs DefaultAttrs() const override { return NoAttrs{}; }
  // Each result element is a dot product over a's last axis.
  const dim::Expr* Flops(const CostContext& c) const override {
    return c.scope->Mul(c.PerElement(2, *c.result), c.operands[0]->shape.back());
  }
  const char* flops_rule() const override {
    return "2 * result elements * contracted size (a multiply-add per term)";
  }

  // Bilinear: ta @ b + a @ tb (each has the result's shape).
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    Value d = nullptr;
    if (t[0] != nullptr) d = b.Binary(OpKind::kMatMul, t[0], n.operands[1]);
    if (t[1] != nullptr) d = b.AddZ(d, b.Binary(OpKind::kMatMul, n.operands[0], t[1]));
    return d;
  }
  // A 1-D operand is promoted to a matrix ([1, k] on the left, [k, 1] on the right) and the
  // cotangent to the promoted result's shape; then d a = ct @ b^T and d b = a^T @ ct, summed
  // over the batch axes the operand was broadcast along, and reshaped back.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    dim::Scope* s = b.dims();
    const Shape& as = b.type(n.operands[0]).shape;
    const Shape& bs = b.type(n.operands[1]).shape;
    Value a2 = n.operands[0], b2 = n.operands[1];
    Shape c2 = b.type(ct).shape;
    if (as.size() == 1) {
      a2 = b.Reshape(a2, {s->Constant(1), as[0]});
      c2.insert(c2.end() - (bs.size() == 1 ? 0 : 1), s->Constant(1));
    }
    if (bs.size() == 1) {
      b2 = b.Reshape(b2, {bs[0], s->Constant(1)});
      c2.push_back(s->Constant(1));
    }
    Value ct2 = c2 == b.type(ct).shape ? ct : b.Reshape(ct, c2);
    std::vector<Value> out(2, nullptr);
    if (need[0]) {
      Value d = b.Binary(OpKind::kMatMul, ct2, SwapLast(b, b2));
      d = b.SumToShape(d, b.type(a2).shape);
      out[0] = as.size() == 1 ? b.Reshape(d, as) : d;
    }
    if (need[1]) {
      Value d = b.Binary(OpKind::kMatMul, SwapLast(b, a2), ct2);
      d = b.SumToShape(d, b.type(b2).shape);
      out[1] = bs.size() == 1 ? b.Reshape(d, bs) : d;
    }
    return out;
  }
  TensorType Infer(InferContext& c, Attrs*) const override {
    const Shape& a = c.in(0).shape;
    const Shape& b = c.in(1).shape;
    c.SameDType(c.in(0).dtype, c.in(1).dtype);
    if (!trace::IsNumeric(c.in(0).dtype)) c.RequireDType(c.in(0).dtype, false, "numeric operands");
    if (a.empty() || b.empty())
      c.Invalid("operands must have rank >= 1, got " + c.Str(a) + " and " + c.Str(b));
    const Expr* k1 = a.back();
    const Expr* k2 = b.size() == 1 ? b[0] : b[b.size() - 2];
    // (Equal expressions first: the context text is built only for a comparison to decide.)
    if (k1 != k2 && !c.Decide(k1, Cmp::kEq, k2,
                              "the contracting dimensions of " + c.Str(a) + " and " + c.Str(b))) {
      c.Mismatch("contracting dimensions differ: " + c.Str(k1) + " vs " + c.Str(k2) + " (shapes " +
                 c.Str(a) + " and " + c.Str(b) + ")");
    }
    Shape ba(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
    Shape bb(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
    Shape out = c.Broadcast({&ba, &bb}, "broadcasting the batch dimensions of");
    if (a.size() >= 2) out.push_back(a[a.size() - 2]);
    if (b.size() >= 2) out.push_back(b.back());
    return TensorType{c.in(0).dtype, out};
  }

  void CheckExecutable(const NodeView&, const std::vector<size_t>& in, size_t) const override {
    const size_t batch = std::max(in[0] == 1 ? 0 : in[0] - 2, in[1] == 1 ? 0 : in[1] - 2);
    if (batch > static_cast<size_t>(kernels::kMaxMatmulBatchRank)) {
      throw Error(Code::kUnsupported, "runtime: matmul supports at most 8 batch axes");
    }
  }

  std::unique_ptr<Prepared> Prepare(const PrepareContext& c, const NodeView& n) const override {
    if (n.dtype != DType::kF32) return nullptr;
    const std::string* bytes = c.constant_bytes(n.operands[1]);
    const void* source = nullptr;
    if (bytes == nullptr && c.default_bytes) {
      bytes = c.default_bytes(n.operands[1]);
      source = bytes == nullptr ? nullptr : bytes->data();
    }
    const TensorType& bt = c.type(n.operands[1]);
    if (bytes == nullptr || bt.shape.size() != 2 || !bt.shape[0]->IsConstant() ||
        !bt.shape[1]->IsConstant()) {
      return nullptr;
    }
    const int64_t k = bt.shape[0]->ConstantTerm(), cols = bt.shape[1]->ConstantTerm();
    if (k <= 0 || cols <= 0 ||
        bytes->size() / sizeof(float) / static_cast<size_t>(k) < static_cast<size_t>(cols)) {
      return nullptr;
    }
    const float* data = reinterpret_cast<const float*>(bytes->data());
    return std::unique_ptr<Prepared>(
        new PackedB(kernels::PackedMatrixF32::Pack(data, k, cols, cols, 1), source));
  }

  void Plan(PlanBuilder& pb, const NodeView& n) const override {
    const std::vector<int64_t>& a = pb.shape(n.operands[0]);
    const std::vector<int64_t>& b = pb.shape(n.operands[1]);
    const std::vector<int64_t>& out = pb.shape(n.value);
    kernels::MatmulParams mm;
    bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    mm.m = a_vec ? 1 : a[a.size() - 2];
    mm.k = a.back();
    mm.n = b_vec ? 1 : b.back();
    mm.a_row_stride = mm.k;
    mm.a_col_stride = 1;
    mm.b_row_stride = b_vec ? 1 : mm.n;
    mm.b_col_stride = 1;
    mm.c_row_stride = mm.n;
    size_t ab = a_vec ? 0 : a.size() - 2, bb = b_vec ? 0 : b.size() - 2;
    size_t batch = std::max(ab, bb);
    if (batch > static_cast<size_t>(kernels::kMaxMatmulBatchRank)) {
      throw Error(Code::kUnsupported, "runtime: matmul supports at most 8 batch axes");
    }
    std::vector<int64_t> bshape(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(batch));
    std::vector<int64_t> ash(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(ab));
    std::vector<int64_t> bsh(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(bb));
    std::vector<int64_t> as = PlanBuilder::BroadcastStrides(ash, bshape);
    std::vector<int64_t> bs = PlanBuilder::BroadcastStrides(bsh, bshape);
    std::vector<int64_t> cs = PlanBuilder::Strides(bshape);
    int64_t amat = PlanBuilder::Mul(mm.m, mm.k), bmat = PlanBuilder::Mul(mm.k, mm.n);
    int64_t cmat = PlanBuilder::Mul(mm.m, mm.n);
    for (size_t d = 0; d < batch; ++d) {
      kernels::AddMatmulBatchDim(&mm, bshape[d], as[d] * amat, bs[d] * bmat, cs[d] * cmat);
    }
    MatmulStep& s = pb.AddStep<MatmulStep>(n.dtype, {n.operands[0], n.operands[1]}, n.value);
    s.mm = mm;
    // B is a rank-2 constant: never batched.
    if (!b_vec && n.prepared != nullptr) {
      s.packed = &static_cast<const PackedB*>(n.prepared)->packed;
      s.packed_source = static_cast<const PackedB*>(n.prepared)->source;
    }
    s.threaded = PlanBuilder::Mul(PlanBuilder::Product(out), mm.k) >= PlanBuilder::kThreadElements;
  }
  // Else a batched operand gets 1s for the other's batch axes, so that NumPy broadcasting lines
  // the element axes up (a 1-D one first becomes the matrix matmul promotes it to); the
  // result is reshaped to [size] + the element's result shape.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    dim::Scope* s = b.dims();
    const Shape& as = b.type(n.operands[0]).shape;
    const Shape& bs = b.type(n.operands[1]).shape;
    const size_t matrix_rank = std::max<size_t>({as.size(), bs.size(), 2});
    const Shape want = WithBatchAxis(n, b.type(n.result).shape);
    if (n.is_batched(0) && !n.is_batched(1) && bs.size() <= 2) {
      // Shared weights: the batch joins a's rows, one GEMM for the whole batch.
      const dim::Expr* rows = n.size;
      for (size_t i = 0; i + 1 < as.size(); ++i) rows = s->Mul(rows, as[i]);
      const Shape flat{rows, as.back()};
      Value x = b.type(n.batched[0]).shape == flat ? n.batched[0] : b.Reshape(n.batched[0], flat);
      Value r = b.Binary(OpKind::kMatMul, x, n.operands[1]);
      return b.type(r).shape == want ? r : b.Reshape(r, want);
    }
    Value x = n.operands[0], y = n.operands[1];
    if (n.is_batched(0)) {
      x = n.batched[0];
      if (as.size() == 1) x = b.Reshape(x, {n.size, s->Constant(1), as[0]});
      x = PadBatchedRank(b, x, matrix_rank);
    }
    if (n.is_batched(1)) {
      y = n.batched[1];
      if (bs.size() == 1) y = b.Reshape(y, {n.size, bs[0], s->Constant(1)});
      y = PadBatchedRank(b, y, matrix_rank);
    }
    Value r = b.Binary(OpKind::kMatMul, x, y);
    return b.type(r).shape == want ? r : b.Reshape(r, want);
  }
};

// The axis orders dot_general's operands are read in: lhs as [batch, free, contracting]
// ("direct") or [batch, contracting, free] ("swapped", read with swapped strides), rhs as
// [batch, contracting, free] or [batch, free, contracting]; anything else is transposed first.
struct DotOrders {
  DotOrders(const DotDims& d, size_t lhs_rank, size_t rhs_rank)
      : lhs_free(Free(lhs_rank, d.lhs_batch, d.lhs_contracting)),
        rhs_free(Free(rhs_rank, d.rhs_batch, d.rhs_contracting)),
        lhs_direct(Cat(d.lhs_batch, lhs_free, d.lhs_contracting)),
        lhs_swapped(Cat(d.lhs_batch, d.lhs_contracting, lhs_free)),
        rhs_direct(Cat(d.rhs_batch, d.rhs_contracting, rhs_free)),
        rhs_swapped(Cat(d.rhs_batch, rhs_free, d.rhs_contracting)) {}

  static std::vector<int64_t> Free(size_t rank, const std::vector<int64_t>& x,
                                   const std::vector<int64_t>& y) {
    std::vector<int64_t> f;
    for (size_t i = 0; i < rank; ++i) {
      int64_t ii = static_cast<int64_t>(i);
      if (std::find(x.begin(), x.end(), ii) == x.end() &&
          std::find(y.begin(), y.end(), ii) == y.end()) {
        f.push_back(ii);
      }
    }
    return f;
  }
  static std::vector<int64_t> Cat(std::vector<int64_t> x, const std::vector<int64_t>& y,
                                  const std::vector<int64_t>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  }

  std::vector<int64_t> lhs_free, rhs_free;
  std::vector<int64_t> lhs_direct, lhs_swapped, rhs_direct, rhs_swapped;
};

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

class DotGeneralDef final : public TypedOpDef<DotDims> {
 public:
  DotGeneralDef() : TypedOpDef(OpKind::kDotGeneral, 2) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::DotGeneralOptions; }
  const dim::Expr* Flops(const CostContext& c) const override {
    const dim::Expr* f = c.PerElement(2, *c.result);
    for (int64_t x : std::get<DotDims>(*c.attrs).lhs_contracting)
      f = c.scope->Mul(f, c.operands[0]->shape[static_cast<size_t>(x)]);
    return f;
  }
  const char* flops_rule() const override {
    return "2 * result elements * product of the contracting dims";
  }

  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    Value d = nullptr;
    if (t[0] != nullptr) d = b.Apply(OpKind::kDotGeneral, n.attrs, {t[0], n.operands[1]});
    if (t[1] != nullptr)
      d = b.AddZ(d, b.Apply(OpKind::kDotGeneral, n.attrs, {n.operands[0], t[1]}));
    return d;
  }
  // The result is [batch, lhs free, rhs free]. d lhs contracts ct's rhs-free axes with rhs's
  // free axes (batch with batch), giving [batch, lhs free, rhs contracting in rhs order]; d rhs
  // contracts lhs's free axes with ct's lhs-free axes, giving [batch, lhs contracting in lhs
  // order, rhs free]. Each is then transposed to its operand's layout.
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    const DotDims& d = std::get<DotDims>(n.attrs);
    const DotOrders o(d, b.type(n.operands[0]).shape.size(), b.type(n.operands[1]).shape.size());
    const size_t nb = d.lhs_batch.size(), nlf = o.lhs_free.size(), nrf = o.rhs_free.size();
    std::vector<int64_t> ct_batch, ct_lhs_free, ct_rhs_free;
    for (size_t i = 0; i < nb; ++i) ct_batch.push_back(static_cast<int64_t>(i));
    for (size_t i = 0; i < nlf; ++i) ct_lhs_free.push_back(static_cast<int64_t>(nb + i));
    for (size_t i = 0; i < nrf; ++i) ct_rhs_free.push_back(static_cast<int64_t>(nb + nlf + i));
    // The contracting axes of one side in the increasing order of the other side's axes.
    auto by_other = [](const std::vector<int64_t>& mine, const std::vector<int64_t>& other) {
      std::vector<size_t> k(mine.size());
      for (size_t i = 0; i < k.size(); ++i) k[i] = i;
      std::sort(k.begin(), k.end(), [&](size_t x, size_t y) { return other[x] < other[y]; });
      std::vector<int64_t> r;
      for (size_t i : k) r.push_back(mine[i]);
      return r;
    };
    std::vector<Value> out(2, nullptr);
    if (need[0]) {
      Value g =
          b.Apply(OpKind::kDotGeneral, DotDims{ct_batch, d.rhs_batch, ct_rhs_free, o.rhs_free},
                  {ct, n.operands[1]});
      std::vector<int64_t> src =
          DotOrders::Cat(d.lhs_batch, o.lhs_free, by_other(d.lhs_contracting, d.rhs_contracting));
      out[0] = Permute(b, g, Inverse(src));
    }
    if (need[1]) {
      Value g =
          b.Apply(OpKind::kDotGeneral, DotDims{d.lhs_batch, ct_batch, o.lhs_free, ct_lhs_free},
                  {n.operands[0], ct});
      std::vector<int64_t> src =
          DotOrders::Cat(d.rhs_batch, by_other(d.rhs_contracting, d.lhs_contracting), o.rhs_free);
      out[1] = Permute(b, g, Inverse(src));
    }
    return out;
  }
  void CheckExecutable(const NodeView& n, const std::vector<size_t>& in, size_t) const override {
    const DotOrders o(std::get<DotDims>(n.attrs), in[0], in[1]);
    if (!IsIdentity(o.lhs_direct) && !IsIdentity(o.lhs_swapped)) {
      PlanBuilder::CheckRank(in[0], kernels::kMaxTransposeRank, "dot_general");
    }
    if (!IsIdentity(o.rhs_direct) && !IsIdentity(o.rhs_swapped)) {
      PlanBuilder::CheckRank(in[1], kernels::kMaxTransposeRank, "dot_general");
    }
  }

  // Both batched: the batch axis becomes the first batch axis. One batched: it is that side's
  // first free axis, moved to the front of the result ([batch, lhs free, rhs free]).
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    const DotDims& d = std::get<DotDims>(n.attrs);
    auto lead = [](std::vector<int64_t> axes) {
      axes.insert(axes.begin(), -1);
      return ShiftAxes(axes);
    };
    const size_t nb = d.lhs_batch.size();
    if (n.is_batched(0) && n.is_batched(1)) {
      return b.Apply(OpKind::kDotGeneral,
                     DotDims{lead(d.lhs_batch), lead(d.rhs_batch), ShiftAxes(d.lhs_contracting),
                             ShiftAxes(d.rhs_contracting)},
                     {n.batched[0], n.batched[1]});
    }
    if (n.is_batched(0)) {
      Value y = b.Apply(OpKind::kDotGeneral,
                        DotDims{ShiftAxes(d.lhs_batch), d.rhs_batch, ShiftAxes(d.lhs_contracting),
                                d.rhs_contracting},
                        {n.batched[0], n.operands[1]});
      return MoveAxisToFront(b, y, nb);
    }
    const DotOrders o(d, b.type(n.operands[0]).shape.size(), b.type(n.operands[1]).shape.size());
    Value y = b.Apply(OpKind::kDotGeneral,
                      DotDims{d.lhs_batch, ShiftAxes(d.rhs_batch), d.lhs_contracting,
                              ShiftAxes(d.rhs_contracting)},
                      {n.operands[0], n.batched[1]});
    return MoveAxisToFront(b, y, nb + o.lhs_free.size());
  }

 protected:
  static void CheckAxes(const InferContext& c, std::vector<int64_t>* axes, size_t rank,
                        std::vector<bool>* used, const char* what, const char* side) {
    for (int64_t& ax : *axes) {
      ax = c.NormAxis(ax, rank, std::string(side) + " " + what + " axis");
      if ((*used)[static_cast<size_t>(ax)]) {
        c.Invalid(std::string(side) + " axis " + std::to_string(ax) + " is used twice");
      }
      (*used)[static_cast<size_t>(ax)] = true;
    }
  }

  TensorType InferTyped(InferContext& c, DotDims& d) const override {
    const Shape& a = c.in(0).shape;
    const Shape& b = c.in(1).shape;
    c.SameDType(c.in(0).dtype, c.in(1).dtype);
    c.RequireDType(c.in(0).dtype, trace::IsNumeric(c.in(0).dtype), "numeric operands");
    if (d.lhs_batch.size() != d.rhs_batch.size())
      c.Invalid("lhs and rhs have different numbers of batch axes");
    if (d.lhs_contracting.size() != d.rhs_contracting.size()) {
      c.Invalid("lhs and rhs have different numbers of contracting axes");
    }
    std::vector<bool> ua(a.size(), false), ub(b.size(), false);
    CheckAxes(c, &d.lhs_batch, a.size(), &ua, "batch", "lhs");
    CheckAxes(c, &d.lhs_contracting, a.size(), &ua, "contracting", "lhs");
    CheckAxes(c, &d.rhs_batch, b.size(), &ub, "batch", "rhs");
    CheckAxes(c, &d.rhs_contracting, b.size(), &ub, "contracting", "rhs");
    Shape out;
    for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
      const Expr* x = a[static_cast<size_t>(d.lhs_batch[i])];
      const Expr* y = b[static_cast<size_t>(d.rhs_batch[i])];
      if (!c.Decide(x, Cmp::kEq, y, "batch dimensions of " + c.Str(a) + " and " + c.Str(b))) {
        c.Mismatch("batch dimensions differ: " + c.Str(x) + " vs " + c.Str(y) + " (shapes " +
                   c.Str(a) + " and " + c.Str(b) + ")");
      }
      out.push_back(x);
    }
    for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
      const Expr* x = a[static_cast<size_t>(d.lhs_contracting[i])];
      const Expr* y = b[static_cast<size_t>(d.rhs_contracting[i])];
      if (!c.Decide(x, Cmp::kEq, y, "contracting dimensions of " + c.Str(a) + " and " + c.Str(b))) {
        c.Mismatch("contracting dimensions differ: " + c.Str(x) + " vs " + c.Str(y) + " (shapes " +
                   c.Str(a) + " and " + c.Str(b) + ")");
      }
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (!ua[i]) out.push_back(a[i]);
    }
    for (size_t i = 0; i < b.size(); ++i) {
      if (!ub[i]) out.push_back(b[i]);
    }
    return TensorType{c.in(0).dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const DotDims& d) const override {
    flatbuffers::FlatBufferBuilder& b = *w.b;
    // One vector at a time, last first: file bytes must not depend on argument evaluation order.
    auto rhs_contracting = b.CreateVector(d.rhs_contracting);
    auto lhs_contracting = b.CreateVector(d.lhs_contracting);
    auto rhs_batch = b.CreateVector(d.rhs_batch);
    auto lhs_batch = b.CreateVector(d.lhs_batch);
    return fb::CreateDotGeneralOptions(b, lhs_batch, rhs_batch, lhs_contracting, rhs_contracting)
        .Union();
  }
  void Read(const OptionsReader& r, const void* opt, DotDims* d) const override {
    const fb::DotGeneralOptions* o = static_cast<const fb::DotGeneralOptions*>(opt);
    d->lhs_batch = r.ints(o->lhs_batch());
    d->rhs_batch = r.ints(o->rhs_batch());
    d->lhs_contracting = r.ints(o->lhs_contracting());
    d->rhs_contracting = r.ints(o->rhs_contracting());
  }
  std::string Text(const AttrPrinter& p, const DotDims& d) const override {
    return " lhs_batch=" + p.Ints(d.lhs_batch) + " rhs_batch=" + p.Ints(d.rhs_batch) +
           " lhs_contracting=" + p.Ints(d.lhs_contracting) +
           " rhs_contracting=" + p.Ints(d.rhs_contracting);
  }

  void PlanTyped(PlanBuilder& pb, const NodeView& n, const DotDims& d) const override {
    using PB = PlanBuilder;
    const std::vector<int64_t>& a = pb.shape(n.operands[0]);
    const std::vector<int64_t>& b = pb.shape(n.operands[1]);
    const int64_t elems = PB::Product(pb.shape(n.value));
    const DotOrders o(d, a.size(), b.size());
    const std::vector<int64_t>& af = o.lhs_free;
    const std::vector<int64_t>& bf = o.rhs_free;
    int64_t B = 1, M = 1, N = 1, Kc = 1;
    for (int64_t x : d.lhs_batch) B = PB::Mul(B, a[static_cast<size_t>(x)]);
    for (int64_t x : af) M = PB::Mul(M, a[static_cast<size_t>(x)]);
    for (int64_t x : bf) N = PB::Mul(N, b[static_cast<size_t>(x)]);
    for (int64_t x : d.lhs_contracting) Kc = PB::Mul(Kc, a[static_cast<size_t>(x)]);
    kernels::MatmulParams mm;
    mm.m = M;
    mm.n = N;
    mm.k = Kc;
    mm.c_row_stride = N;
    // Reads operand k as a row-major [rows, cols] matrix (strides into mm's row/col fields):
    // in place when its axes are `direct` or `swapped` in order, else through a transpose to
    // `direct` order. Returns the slot the matmul reads.
    auto operand = [&](size_t k, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& direct, const std::vector<int64_t>& swapped,
                       int64_t rows, int64_t cols, int64_t* row_stride, int64_t* col_stride) {
      int32_t slot = n.operands[k];
      *row_stride = cols;
      *col_stride = 1;
      if (IsIdentity(direct)) return slot;
      if (IsIdentity(swapped)) {
        *row_stride = 1;
        *col_stride = rows;
        return slot;
      }
      PB::CheckRank(shape.size(), kernels::kMaxTransposeRank, "dot_general");
      int32_t t = pb.NewTempLike(slot);
      PlanTranspose(pb, n.dtype, slot, shape, direct, t, PB::Product(shape) >= PB::kThreadElements);
      return t;
    };
    int32_t sa =
        operand(0, a, o.lhs_direct, o.lhs_swapped, M, Kc, &mm.a_row_stride, &mm.a_col_stride);
    int32_t sb =
        operand(1, b, o.rhs_direct, o.rhs_swapped, Kc, N, &mm.b_row_stride, &mm.b_col_stride);
    kernels::AddMatmulBatchDim(&mm, B, PB::Mul(M, Kc), PB::Mul(Kc, N), PB::Mul(M, N));
    MatmulStep& s = pb.AddStep<MatmulStep>(n.dtype, {sa, sb}, n.value);
    s.mm = mm;
    s.threaded = PB::Mul(elems, Kc) >= PB::kThreadElements;
  }
};

}  // namespace

SHP_DEFINE_OP(MatMul, MatMulDef)
SHP_DEFINE_OP(DotGeneral, DotGeneralDef)

}  // namespace ops
}  // namespace shp
