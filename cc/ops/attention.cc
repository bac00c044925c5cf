// attention: fused scaled dot-product attention (kernel: cc/kernels/attention.h). Its
// derivatives and batching are stated as the composite it computes (matmul, softmax, select).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cc/kernels/attention.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using trace::DType;
using trace::TensorType;

constexpr int64_t kCausalNone = 0, kCausalUpperLeft = 1, kCausalLowerRight = 2;

const char* CausalName(int64_t c) {
  return c == kCausalUpperLeft ? "upper_left" : c == kCausalLowerRight ? "lower_right" : "none";
}

// ---- The composite (derivatives): k and v repeated to hq heads, the weights P. ----

struct Parts {
  Value q, krep, vrep;  // q; k and v with each kv head repeated g times: [..., hq, l, *]
  Value c;              // the scale (a rank-0 constant, or 1/sqrt(d))
  Value p;              // the attention weights [..., hq, s, l] (zero rows where masked out)
  size_t rank = 0;
  int64_t g = 1;
};

// x [..., hkv, l, e] -> [..., hkv * g, l, e]: each head repeated g times in place (h / g).
Value RepeatHeads(AdBuilder& b, Value x, int64_t g) {
  if (g == 1) return x;
  const Shape& sh = b.type(x).shape;
  const size_t r = sh.size();
  Shape five(sh.begin(), sh.end() - 2);
  five.push_back(b.dims()->Constant(1));
  five.push_back(sh[r - 2]);
  five.push_back(sh[r - 1]);
  Shape wide = five;
  wide[r - 2] = b.dims()->Constant(g);
  Shape out(sh.begin(), sh.end());
  out[r - 3] = b.dims()->Mul(sh[r - 3], b.dims()->Constant(g));
  return b.Reshape(b.BroadcastTo(b.Reshape(x, five), wide), out);
}

// The inverse's transpose: [..., hkv * g, l, e] summed over each group of g heads.
Value SumHeads(AdBuilder& b, Value x, int64_t g, const Shape& kv_shape) {
  if (g == 1 || x == nullptr) return x;
  const size_t r = kv_shape.size();
  Shape five(kv_shape.begin(), kv_shape.end() - 2);
  five.push_back(b.dims()->Constant(g));
  five.push_back(kv_shape[r - 2]);
  five.push_back(kv_shape[r - 1]);
  return b.ReduceSum(b.Reshape(x, five), {static_cast<int64_t>(r - 2)}, false);
}

Value SwapLast(AdBuilder& b, Value x) {
  const size_t r = b.type(x).shape.size();
  std::vector<int64_t> perm;
  for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(i));
  std::swap(perm[r - 1], perm[r - 2]);
  return b.Transpose(x, perm);
}

Value MatMul(AdBuilder& b, Value x, Value y) { return b.Binary(OpKind::kMatMul, x, y); }

Parts Recompute(AdBuilder& b, const Attrs& attrs, const std::vector<Value>& ops) {
  const AttentionAttrs& a = std::get<AttentionAttrs>(attrs);
  Parts P;
  P.q = ops[0];
  const TensorType& qt = b.type(ops[0]);
  const TensorType& kt = b.type(ops[1]);
  P.rank = qt.shape.size();
  const size_t r = P.rank;
  const Expr* hq = qt.shape[r - 3];
  const Expr* hkv = kt.shape[r - 3];
  P.g = hq == hkv || b.dims()->Compare(hq, Cmp::kEq, hkv) == dim::Truth::kTrue
            ? 1
            : hq->ConstantTerm() / hkv->ConstantTerm();
  P.krep = RepeatHeads(b, ops[1], P.g);
  P.vrep = RepeatHeads(b, ops[2], P.g);
  const DType dt = qt.dtype;
  if (a.scale != 0) {
    P.c = b.Scalar(dt, a.scale);
  } else {
    Value d = b.Apply(OpKind::kDimValue, DimValueAttrs{qt.shape[r - 1]}, {});
    P.c = b.Unary(OpKind::kRsqrt, b.Convert(d, dt));
  }
  Value z = b.Mul(MatMul(b, P.q, SwapLast(b, P.krep)), P.c);  // [..., hq, s, l]
  const Shape& zs = b.type(z).shape;
  const Expr* s = zs[r - 2];
  const Expr* l = zs[r - 1];
  const double ninf = -std::numeric_limits<double>::infinity();
  Value bias = nullptr;
  if (a.causal != kCausalNone) {
    Value i = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, {s, l}, 0}, {});
    Value j = b.Apply(OpKind::kIota, IotaAttrs{DType::kI64, {s, l}, 1}, {});
    if (a.causal == kCausalLowerRight) {  // j <= i + (l - s) as j + s <= i + l
      j = b.Add(j, b.Apply(OpKind::kDimValue, DimValueAttrs{s}, {}));
      i = b.Add(i, b.Apply(OpKind::kDimValue, DimValueAttrs{l}, {}));
    }
    Value keep = b.Binary(OpKind::kLe, j, i);
    bias = b.Select(keep, b.ScalarLike(z, 0.0), b.ScalarLike(z, ninf));
  }
  const TensorType& mt = b.type(ops[3]);
  Value mb = mt.dtype == DType::kBool
                 ? b.Select(ops[3], b.ScalarLike(z, 0.0), b.ScalarLike(z, ninf))
                 : ops[3];
  bias = bias == nullptr ? mb : b.Add(bias, mb);
  z = b.Add(z, bias);
  Value p0 = b.Apply(OpKind::kSoftmax, AxisAttrs{static_cast<int64_t>(r - 1)}, {z});
  auto dead = [&](Value x) {  // max along the keys is -inf: [..., 1]
    Value m = b.Apply(OpKind::kReduceMax, ReduceAttrs{{-1}, true}, {x});
    return b.Binary(OpKind::kEq, m, b.ScalarLike(x, ninf));
  };
  // The bias broadcast to the scores' rows (a mask may broadcast along them).
  Value full_bias = b.BroadcastTo(bias, zs);
  Value dead_rows = b.Binary(OpKind::kOr, dead(full_bias), dead(z));
  P.p = b.Select(dead_rows, b.ScalarLike(z, 0.0), p0);
  return P;
}

// y * (v - sum(v * y)) along the keys: softmax's JVP and VJP.
Value SoftmaxPartial(AdBuilder& b, Value y, Value v, size_t r) {
  return b.Mul(y, b.Sub(v, b.ReduceSum(b.Mul(v, y), {static_cast<int64_t>(r - 1)}, true)));
}

struct AttentionStep final : Step {
  kernels::AttentionParams p;
  std::vector<int64_t> offsets;
  bool scalar_bool_mask = false;
  void Run(const RunContext& c) override {
    kernels::AttentionParams run = p;
    run.mask = In(c, 3);
    run.mask_batch_offsets = offsets.data();
    if (scalar_bool_mask && *In(c, 3) != 0) run.mask_kind = kernels::AttentionMask::kNone;
    CheckKernel(kernels::Attention(dtype, run, In(c, 0), In(c, 1), In(c, 2), Out(c), Pool(c)),
                "attention");
  }
};

class AttentionDef final : public TypedOpDef<AttentionAttrs> {
 public:
  AttentionDef() : TypedOpDef(OpKind::kAttention, 4) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::AttentionOptions; }

  // 2 per multiply-add of q.k and P.v, and 7 per score (scale, bias, max, subtract, exp, sum,
  // divide).
  const dim::Expr* Flops(const CostContext& c) const override {
    dim::Scope* s = c.scope;
    const Shape& q = c.operands[0]->shape;
    const Shape& v = c.operands[2]->shape;
    const size_t r = q.size();
    // batch * hq * s rows of l scores.
    const Expr* rows = s->Constant(1);
    for (size_t i = 0; i + 1 < r; ++i) rows = s->Mul(rows, q[i]);
    const Expr* scores = s->Mul(rows, v[r - 2]);
    const Expr* per = s->Add(s->Mul(s->Constant(2), s->Add(q[r - 1], v[r - 1])), s->Constant(7));
    return s->Mul(scores, per);
  }
  const char* flops_rule() const override {
    return "batch * hq * s * l * (2 * (d + dv) + 7) (both products, then scale, bias and softmax "
           "per score)";
  }

  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    Parts P = Recompute(b, n.attrs, n.operands);
    const int64_t g = P.g;
    Value dz = nullptr;
    if (t[0] != nullptr) dz = MatMul(b, t[0], SwapLast(b, P.krep));
    if (t[1] != nullptr) dz = b.AddZ(dz, MatMul(b, P.q, SwapLast(b, RepeatHeads(b, t[1], g))));
    if (dz != nullptr) dz = b.Mul(dz, P.c);
    if (t[3] != nullptr) dz = b.AddZ(dz, t[3]);
    Value dy = nullptr;
    if (dz != nullptr) {
      // A mask's tangent alone has the mask's shape: broadcast to the weights'.
      dy = MatMul(b, SoftmaxPartial(b, P.p, b.BroadcastTo(dz, b.type(P.p).shape), P.rank), P.vrep);
    }
    if (t[2] != nullptr) dy = b.AddZ(dy, MatMul(b, P.p, RepeatHeads(b, t[2], g)));
    return dy;
  }

  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    Parts P = Recompute(b, n.attrs, n.operands);
    std::vector<Value> out(4, nullptr);
    const Shape& kshape = b.type(n.operands[1]).shape;
    const Shape& vshape = b.type(n.operands[2]).shape;
    if (need[2]) out[2] = SumHeads(b, MatMul(b, SwapLast(b, P.p), ct), P.g, vshape);
    if (need[0] || need[1] || need[3]) {
      Value dp = MatMul(b, ct, SwapLast(b, P.vrep));
      Value dz = SoftmaxPartial(b, P.p, dp, P.rank);
      if (need[3]) out[3] = b.SumToShape(dz, b.type(n.operands[3]).shape);
      Value dzc = b.Mul(dz, P.c);
      if (need[0]) out[0] = MatMul(b, dzc, P.krep);
      if (need[1]) out[1] = SumHeads(b, MatMul(b, SwapLast(b, dzc), P.q), P.g, kshape);
    }
    return out;
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    std::vector<Value> ops;
    for (size_t i = 0; i < 3; ++i) ops.push_back(BatchedOperand(b, n, i));
    Value m = n.operands[3];
    if (n.is_batched(3)) m = PadBatchedRank(b, n.batched[3], b.type(n.operands[0]).shape.size());
    ops.push_back(m);
    return b.Apply(OpKind::kAttention, n.attrs, ops);
  }

 protected:
  TensorType InferTyped(InferContext& c, AttentionAttrs& a) const override {
    if (!std::isfinite(a.scale)) {
      c.Invalid("scale must be finite (0 for 1/sqrt(d)), got " + std::to_string(a.scale));
    }
    if (a.causal < kCausalNone || a.causal > kCausalLowerRight) {
      c.Invalid("causal must be 0 (none), 1 (upper_left) or 2 (lower_right), got " +
                std::to_string(a.causal));
    }
    const TensorType& q = c.in(0);
    const TensorType& k = c.in(1);
    const TensorType& v = c.in(2);
    const TensorType& m = c.in(3);
    c.RequireRule(q.dtype, OperandRule::kFloat, false);
    if (k.dtype != q.dtype || v.dtype != q.dtype) {
      c.Fail(Code::kDtypeMismatch,
             std::string("q, k and v must have one dtype, got ") + trace::DTypeName(q.dtype) +
                 ", " + trace::DTypeName(k.dtype) + " and " + trace::DTypeName(v.dtype));
    }
    if (m.dtype != DType::kBool && m.dtype != q.dtype) {
      c.Fail(Code::kDtypeMismatch, std::string("the mask must be bool or q's dtype (") +
                                       trace::DTypeName(q.dtype) + "), got " +
                                       trace::DTypeName(m.dtype));
    }
    const size_t r = q.shape.size();
    if (r < 3 || k.shape.size() != r || v.shape.size() != r) {
      c.Invalid(
          "q [..., hq, s, d], k [..., hkv, l, d] and v [..., hkv, l, dv] must have one rank "
          ">= 3, got " +
          c.Str(q.shape) + ", " + c.Str(k.shape) + " and " + c.Str(v.shape));
    }
    auto same = [&](const Expr* x, const Expr* y, const std::string& what) {
      if (!c.Decide(x, Cmp::kEq, y, what)) {
        c.Mismatch(what + " differ: " + c.Str(x) + " vs " + c.Str(y) + " (q " + c.Str(q.shape) +
                   ", k " + c.Str(k.shape) + ", v " + c.Str(v.shape) + ")");
      }
    };
    for (size_t i = 0; i + 3 < r; ++i) {
      same(q.shape[i], k.shape[i], "the batch dimensions " + std::to_string(i) + " of q and k");
      same(q.shape[i], v.shape[i], "the batch dimensions " + std::to_string(i) + " of q and v");
    }
    same(q.shape[r - 1], k.shape[r - 1], "the head sizes d of q and k");
    same(k.shape[r - 3], v.shape[r - 3], "the kv head counts of k and v");
    same(k.shape[r - 2], v.shape[r - 2], "the key lengths l of k and v");
    const Expr* hq = q.shape[r - 3];
    const Expr* hkv = k.shape[r - 3];
    if (hq != hkv && !(c.scope()->Compare(hq, Cmp::kEq, hkv) == dim::Truth::kTrue)) {
      if (!hq->IsConstant() || !hkv->IsConstant()) {
        c.Mismatch("the query heads hq = " + c.Str(hq) +
                   " must be a multiple of the kv heads hkv = " + c.Str(hkv) +
                   ": equal, or both constants (q " + c.Str(q.shape) + ", k " + c.Str(k.shape) +
                   ")");
      }
      if (hkv->ConstantTerm() <= 0 || hq->ConstantTerm() % hkv->ConstantTerm() != 0) {
        c.Mismatch("the query heads hq = " + c.Str(hq) +
                   " are not a multiple of the kv heads hkv = " + c.Str(hkv) + " (q " +
                   c.Str(q.shape) + ", k " + c.Str(k.shape) + ")");
      }
    }
    Shape scores(q.shape.begin(), q.shape.end() - 1);
    scores.push_back(k.shape[r - 2]);
    if (m.shape.size() > r) {
      c.Invalid("the mask " + c.Str(m.shape) + " has a higher rank than the scores " +
                c.Str(scores) + " it broadcasts to");
    }
    // The mask broadcasts to the scores [..., hq, s, l] without changing them.
    Shape b = c.Broadcast({&scores, &m.shape}, "broadcasting the mask to the scores");
    for (size_t i = 0; i < r; ++i) {
      if (b[i] != scores[i] && c.scope()->Compare(b[i], Cmp::kEq, scores[i]) != dim::Truth::kTrue) {
        c.Mismatch("the mask " + c.Str(m.shape) + " does not broadcast to the scores " +
                   c.Str(scores));
      }
    }
    Shape out(q.shape.begin(), q.shape.end() - 1);
    out.push_back(v.shape[r - 1]);
    return TensorType{q.dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const AttentionAttrs& a) const override {
    return fb::CreateAttentionOptions(*w.b, a.scale, a.causal).Union();
  }
  void Read(const OptionsReader& r, const void* opt, AttentionAttrs* a) const override {
    const fb::AttentionOptions* o = static_cast<const fb::AttentionOptions*>(opt);
    a->scale = o->scale();
    a->causal = o->causal();
    if (!std::isfinite(a->scale)) r.Bad("has a non-finite scale");
    if (a->causal < kCausalNone || a->causal > kCausalLowerRight) {
      r.Bad("has causal " + std::to_string(a->causal) + " (0, 1 or 2)");
    }
  }
  std::string Text(const AttrPrinter& p, const AttentionAttrs& a) const override {
    return " scale=" + p.Double(a.scale) + " causal=" + CausalName(a.causal);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const AttentionAttrs& a) const override {
    const std::vector<int64_t>& q = b.shape(n.operands[0]);
    const std::vector<int64_t>& k = b.shape(n.operands[1]);
    const std::vector<int64_t>& v = b.shape(n.operands[2]);
    const std::vector<int64_t>& m = b.shape(n.operands[3]);
    const size_t r = q.size();
    AttentionStep& s = b.AddStep<AttentionStep>(
        n.dtype, {n.operands[0], n.operands[1], n.operands[2], n.operands[3]}, n.value);
    kernels::AttentionParams& p = s.p;
    p.batch = PlanBuilder::Product(q, 0, r - 3);
    p.hq = q[r - 3];
    p.hkv = k[r - 3];
    p.s = q[r - 2];
    p.d = q[r - 1];
    p.l = k[r - 2];
    p.dv = v[r - 1];
    p.scale = a.scale != 0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(p.d));
    if (a.scale == 0 && p.d == 0) p.scale = 1.0;  // no products: the scores are 0 either way
    p.causal = static_cast<kernels::AttentionCausal>(a.causal);
    const bool is_bool = b.dtype(n.operands[3]) == DType::kBool;
    p.mask_kind = is_bool ? kernels::AttentionMask::kBool : kernels::AttentionMask::kAdd;
    std::vector<int64_t> scores(q.begin(), q.end() - 1);
    scores.push_back(p.l);
    const std::vector<int64_t> st = PlanBuilder::BroadcastStrides(m, scores);
    for (int i = 0; i < 3; ++i) p.mask_strides[i] = st[r - 3 + static_cast<size_t>(i)];
    s.offsets.assign(static_cast<size_t>(p.batch), 0);
    // Flat batch index -> the mask's offset (the leading dims in row-major order).
    for (int64_t bi = 0; bi < p.batch; ++bi) {
      int64_t rem = bi, off = 0;
      for (size_t ax = r - 3; ax-- > 0;) {
        off += (rem % q[ax]) * st[ax];
        rem /= q[ax];
      }
      s.offsets[static_cast<size_t>(bi)] = off;
    }
    s.scalar_bool_mask = is_bool && PlanBuilder::Product(m) == 1;
    s.threaded = PlanBuilder::Product(b.shape(n.value)) * std::max<int64_t>(1, p.l) >=
                 PlanBuilder::kThreadElements;
  }
};

}  // namespace

SHP_DEFINE_OP(Attention, AttentionDef)

}  // namespace ops
}  // namespace shp
