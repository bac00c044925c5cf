// Elementwise ops: unary, binary, comparisons, select, convert, broadcast_to. The runtime
// fuses chains of them into one register program of the elementwise kernel (EmitFused), so
// none of them plans a step of its own.
#include "cc/kernels/elementwise.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace ops {
namespace {

using trace::DType;
using trace::TensorType;

// ---- Derivatives. Every rule is linear in the tangent or cotangent `v`, so one function
// gives both the JVP (v a tangent) and the VJP (v the cotangent). Non-differentiable points
// follow JAX: abs'(0) = 0 (sign), sqrt'(0) = inf, max/min split ties 0.5/0.5, pow's
// d/dbase is 0 where the exponent is 0 and d/dexponent is 0 where the base is 0.

// The switches below list every op (no `default:`), so that a new op without a case does not
// compile (-Wswitch); the ops of the other families emit their labels from op_list.h's lists.
#define SHP_AD_CASE(Name, ...) case OpKind::k##Name:

// An op that cannot reach a family's rule (the rules are only called by the family's defs).
[[noreturn]] void NotInFamily(OpKind op, const char* rule) {
  throw Error(Code::kInternal, std::string("autodiff: ") + rule + " called for the operation " +
                                   OpName(op) + ", which is not of its family");
}

// A logical op (not, and, or, xor: ad = "none" in ops.toml) is never differentiated: its
// operands and result are bool or integer, and the transformations only differentiate
// floating-point results, so reaching it is a bug, never a silent zero.
[[noreturn]] void NeverDifferentiated(OpKind op) {
  throw Error(Code::kInternal, std::string("autodiff: the logical operation ") + OpName(op) +
                                   " is never differentiated (it has no floating-point result)");
}

// v * f'(x) for unary `op` (y = f(x)); nullptr where f' is zero (floor, ceil, round, sign).
Value UnaryPartial(AdBuilder& b, OpKind op, Value x, Value y, Value v) {
  auto k = [&](double c) { return b.ScalarLike(x, c); };
  switch (op) {
    case OpKind::kNeg:
      return b.Neg(v);
    case OpKind::kAbs:
      return b.Mul(v, b.Unary(OpKind::kSign, x));
    case OpKind::kExp:
      return b.Mul(v, y);
    case OpKind::kLog:
      return b.Div(v, x);
    case OpKind::kLog1p:
      return b.Div(v, b.Add(x, k(1)));
    case OpKind::kExpm1:
      return b.Mul(v, b.Add(y, k(1)));
    case OpKind::kSqrt:
      return b.Div(v, b.Mul(y, k(2)));
    case OpKind::kRsqrt:  // d/dx x^-1/2 = -1/2 * y / x
      return b.Mul(v, b.Div(b.Mul(y, k(-0.5)), x));
    case OpKind::kSin:
      return b.Mul(v, b.Unary(OpKind::kCos, x));
    case OpKind::kCos:
      return b.Neg(b.Mul(v, b.Unary(OpKind::kSin, x)));
    case OpKind::kTanh:
      return b.Mul(v, b.Sub(k(1), b.Mul(y, y)));
    case OpKind::kLogistic:
      return b.Mul(v, b.Mul(y, b.Sub(k(1), y)));
    case OpKind::kErf:  // 2 / sqrt(pi) * e^(-x^2)
      return b.Mul(v, b.Mul(b.Unary(OpKind::kExp, b.Neg(b.Mul(x, x))), k(1.1283791670955126)));
    case OpKind::kTan:  // 1 + tan^2
      return b.Mul(v, b.Add(k(1), b.Mul(y, y)));
    case OpKind::kSinh:
      return b.Mul(v, b.Unary(OpKind::kCosh, x));
    case OpKind::kCosh:
      return b.Mul(v, b.Unary(OpKind::kSinh, x));
    // 1 - x^2 as (1 - x)(1 + x) and x^2 - 1 as (x - 1)(x + 1): no cancellation near |x| = 1.
    case OpKind::kAsin:  // 1 / sqrt(1 - x^2)
      return b.Mul(v, b.Unary(OpKind::kRsqrt, b.Mul(b.Sub(k(1), x), b.Add(k(1), x))));
    case OpKind::kAcos:  // -1 / sqrt(1 - x^2)
      return b.Neg(b.Mul(v, b.Unary(OpKind::kRsqrt, b.Mul(b.Sub(k(1), x), b.Add(k(1), x)))));
    case OpKind::kAtan:  // 1 / (1 + x^2)
      return b.Div(v, b.Add(k(1), b.Mul(x, x)));
    case OpKind::kAsinh:  // 1 / sqrt(x^2 + 1)
      return b.Mul(v, b.Unary(OpKind::kRsqrt, b.Add(b.Mul(x, x), k(1))));
    case OpKind::kAcosh:  // 1 / sqrt(x^2 - 1)
      return b.Mul(v, b.Unary(OpKind::kRsqrt, b.Mul(b.Sub(x, k(1)), b.Add(x, k(1)))));
    case OpKind::kAtanh:  // 1 / (1 - x^2)
      return b.Div(v, b.Mul(b.Sub(k(1), x), b.Add(k(1), x)));
    case OpKind::kFloor:
    case OpKind::kCeil:
    case OpKind::kRound:
    case OpKind::kSign:  // ad = "zero": zero wherever defined (a symbolic zero)
      return nullptr;
    case OpKind::kNot:  // ad = "none"
      NeverDifferentiated(op);
      // Not unary: only UnaryDef calls this.
      SHP_BINARY_OPS(SHP_AD_CASE)
      SHP_COMPARE_OPS(SHP_AD_CASE)
      SHP_REDUCE_OPS(SHP_AD_CASE)
      SHP_OTHER_OPS(SHP_AD_CASE)
      break;
  }
  NotInFamily(op, "the unary derivative rule");
}

// 1 where x == z and o != z, 0.5 where all three are equal, else 0: the weight of operand x
// in z = max(x, o) or min(x, o) (JAX's balanced tie rule).
Value TieWeight(AdBuilder& b, Value x, Value z, Value o) {
  Value half = b.Select(b.Binary(OpKind::kEq, o, z), b.ScalarLike(x, 0.5), b.ScalarLike(x, 1));
  return b.Select(b.Binary(OpKind::kEq, x, z), half, b.ScalarLike(x, 0));
}

// v * d(a op c)/d(operand `which`) for binary `op` (y = a op c).
Value BinaryPartial(AdBuilder& b, OpKind op, int which, Value a, Value c, Value y, Value v) {
  auto k = [&](double x) { return b.ScalarLike(a, x); };
  switch (op) {
    case OpKind::kAdd:
      return v;
    case OpKind::kSub:
      return which == 0 ? v : b.Neg(v);
    case OpKind::kMul:
      return b.Mul(v, which == 0 ? c : a);
    case OpKind::kDiv:
      return which == 0 ? b.Div(v, c) : b.Neg(b.Div(b.Mul(v, y), c));
    case OpKind::kPow:
      if (which == 0) {  // c * a^(c - 1), 0 where c == 0
        Value d = b.Mul(c, b.Binary(OpKind::kPow, a, b.Sub(c, k(1))));
        return b.Mul(v, b.Select(b.Binary(OpKind::kEq, c, k(0)), k(0), d));
      } else {  // y * log(a), 0 where a == 0
        Value safe = b.Select(b.Binary(OpKind::kEq, a, k(0)), k(1), a);
        return b.Mul(v, b.Mul(y, b.Unary(OpKind::kLog, safe)));
      }
    case OpKind::kMax:
    case OpKind::kMin:
      return b.Mul(v, which == 0 ? TieWeight(b, a, y, c) : TieWeight(b, c, y, a));
    case OpKind::kRem:  // fmod(a, c) = a - trunc(a / c) * c
      if (which == 0) return v;
      {
        Value q = b.Div(a, c);
        Value trunc =
            b.Mul(b.Unary(OpKind::kSign, q), b.Unary(OpKind::kFloor, b.Unary(OpKind::kAbs, q)));
        return b.Neg(b.Mul(v, trunc));
      }
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor:  // ad = "none"
      NeverDifferentiated(op);
      // Not binary: only BinaryDef calls this.
      SHP_UNARY_OPS(SHP_AD_CASE)
      SHP_COMPARE_OPS(SHP_AD_CASE)
      SHP_REDUCE_OPS(SHP_AD_CASE)
      SHP_OTHER_OPS(SHP_AD_CASE)
      break;
  }
  NotInFamily(op, "the binary derivative rule");
}

#undef SHP_AD_CASE

// `v` (nullptr: zero) with the shape of `like` (a broadcast result).
Value ExpandTo(AdBuilder& b, Value v, Value like) {
  if (v == nullptr || b.type(v).shape == b.type(like).shape) return v;
  return b.BroadcastTo(v, b.type(like).shape);
}

class UnaryDef final : public OpDef {
 public:
  UnaryDef(OpKind k, OperandRule rule, kernels::UnaryOp op)
      : OpDef(k, 1, 0), rule_(rule), op_(op) {}
  Attrs DefaultAttrs() const override { return NoAttrs{}; }
  TensorType Infer(InferContext& c, Attrs*) const override {
    c.RequireRule(c.in(0).dtype, rule_, false);
    return c.in(0);
  }
  const dim::Expr* Flops(const CostContext& c) const override { return c.PerElement(1, *c.result); }
  const char* flops_rule() const override { return "1 per result element"; }
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs&,
                const std::vector<int>& r) const override {
    return p->Unary(op_, r[0]);
  }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return UnaryPartial(b, n.op, n.operands[0], n.result, t[0]);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    return {UnaryPartial(b, n.op, n.operands[0], n.result, ct)};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override { return BatchElementwise(b, n); }

 private:
  OperandRule rule_;
  kernels::UnaryOp op_;
};

class BinaryDef final : public OpDef {
 public:
  BinaryDef(OpKind k, OperandRule rule, kernels::BinaryOp op)
      : OpDef(k, 2, 0), rule_(rule), op_(op) {}
  Attrs DefaultAttrs() const override { return NoAttrs{}; }
  TensorType Infer(InferContext& c, Attrs*) const override {
    DType t = c.in(0).dtype;
    c.SameDType(t, c.in(1).dtype);
    c.RequireRule(t, rule_, true);
    return TensorType{t, c.Broadcast({&c.in(0).shape, &c.in(1).shape}, "broadcasting")};
  }
  const dim::Expr* Flops(const CostContext& c) const override { return c.PerElement(1, *c.result); }
  const char* flops_rule() const override { return "1 per result element"; }
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs&,
                const std::vector<int>& r) const override {
    return p->Binary(op_, r[0], r[1]);
  }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    Value sum = nullptr;
    for (int i = 0; i < 2; ++i) {
      if (t[i] == nullptr) continue;
      Value d = BinaryPartial(b, n.op, i, n.operands[0], n.operands[1], n.result, t[i]);
      sum = b.AddZ(sum, d);
    }
    return ExpandTo(b, sum, n.result);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    std::vector<Value> out(2, nullptr);
    for (int i = 0; i < 2; ++i) {
      if (!need[i]) continue;
      Value d = BinaryPartial(b, n.op, i, n.operands[0], n.operands[1], n.result, ct);
      if (d != nullptr)
        out[i] = b.SumToShape(ExpandTo(b, d, n.result), b.type(n.operands[i]).shape);
    }
    return out;
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override { return BatchElementwise(b, n); }

 private:
  OperandRule rule_;
  kernels::BinaryOp op_;
};

class CompareDef final : public OpDef {
 public:
  CompareDef(OpKind k, OperandRule, kernels::CompareOp op) : OpDef(k, 2, 0), op_(op) {}
  Attrs DefaultAttrs() const override { return NoAttrs{}; }
  TensorType Infer(InferContext& c, Attrs*) const override {
    c.SameDType(c.in(0).dtype, c.in(1).dtype);
    return TensorType{DType::kBool, c.Broadcast({&c.in(0).shape, &c.in(1).shape}, "broadcasting")};
  }
  const dim::Expr* Flops(const CostContext& c) const override { return c.PerElement(1, *c.result); }
  const char* flops_rule() const override { return "1 per result element"; }
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs&,
                const std::vector<int>& r) const override {
    return p->Compare(op_, r[0], r[1]);
  }
  // A bool result: zero derivative (the transformations never ask; stated for completeness).
  Value Jvp(AdBuilder&, const AdNode&, const std::vector<Value>&) const override { return nullptr; }
  std::vector<Value> Vjp(AdBuilder&, const AdNode&, Value,
                         const std::vector<bool>&) const override {
    return {nullptr, nullptr};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override { return BatchElementwise(b, n); }

 private:
  kernels::CompareOp op_;
};

class SelectDef final : public OpDef {
 public:
  SelectDef() : OpDef(OpKind::kSelect, 3, 0) {}
  Attrs DefaultAttrs() const override { return NoAttrs{}; }
  TensorType Infer(InferContext& c, Attrs*) const override {
    if (c.in(0).dtype != DType::kBool) {
      c.Fail(Code::kDtypeMismatch,
             std::string("the predicate must be bool, got ") + trace::DTypeName(c.in(0).dtype));
    }
    c.SameDType(c.in(1).dtype, c.in(2).dtype);
    return TensorType{c.in(1).dtype, c.Broadcast({&c.in(0).shape, &c.in(1).shape, &c.in(2).shape},
                                                 "broadcasting")};
  }
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs&,
                const std::vector<int>& r) const override {
    return p->Select(r[0], r[1], r[2]);
  }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    if (t[1] == nullptr && t[2] == nullptr) return nullptr;
    Value zero = b.ScalarLike(n.result, 0);
    return ExpandTo(b, b.Select(n.operands[0], t[1] ? t[1] : zero, t[2] ? t[2] : zero), n.result);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>& need) const override {
    std::vector<Value> out(3, nullptr);
    Value zero = b.ScalarLike(ct, 0);
    for (int i = 1; i < 3; ++i) {
      if (!need[i]) continue;
      Value v = i == 1 ? b.Select(n.operands[0], ct, zero) : b.Select(n.operands[0], zero, ct);
      out[i] = b.SumToShape(ExpandTo(b, v, n.result), b.type(n.operands[i]).shape);
    }
    return out;
  }
  Value Batch(AdBuilder& b, const BatchNode& n) const override { return BatchElementwise(b, n); }
};

class ConvertDef final : public TypedOpDef<ConvertAttrs> {
 public:
  ConvertDef() : TypedOpDef(OpKind::kConvert, 1) {}
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs& a,
                const std::vector<int>& r) const override {
    return p->Convert(r[0], std::get<ConvertAttrs>(a).dtype);
  }
  fb::OpOptions options_type() const override { return fb::OpOptions::ConvertOptions; }
  // Between floating-point dtypes the derivative is 1; from or to integers and bool, 0.
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    const DType to = b.type(n.result).dtype;
    if (!IsDifferentiable(to) || !IsDifferentiable(b.type(n.operands[0]).dtype)) return nullptr;
    return b.Convert(t[0], to);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    const DType from = b.type(n.operands[0]).dtype;
    if (!IsDifferentiable(from)) return {nullptr};
    return {b.Convert(ct, from)};
  }

  Value Batch(AdBuilder& b, const BatchNode& n) const override { return BatchElementwise(b, n); }

 protected:
  TensorType InferTyped(InferContext& c, ConvertAttrs& a) const override {
    if (!trace::IsValidDType(static_cast<int32_t>(a.dtype))) {
      c.Invalid("invalid target dtype " + std::to_string(static_cast<int32_t>(a.dtype)));
    }
    return TensorType{a.dtype, c.in(0).shape};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ConvertAttrs& a) const override {
    return fb::CreateConvertOptions(*w.b, static_cast<fb::DType>(a.dtype)).Union();
  }
  void Read(const OptionsReader& r, const void* o, ConvertAttrs* a) const override {
    a->dtype = r.dtype(static_cast<const fb::ConvertOptions*>(o)->dtype());
  }
  std::string Text(const AttrPrinter&, const ConvertAttrs& a) const override {
    return std::string(" dtype=") + trace::DTypeName(a.dtype);
  }
};

class BroadcastToDef final : public TypedOpDef<ShapeAttrs> {
 public:
  BroadcastToDef() : TypedOpDef(OpKind::kBroadcastTo, 1) {}
  bool fusable() const override { return true; }  // the runtime broadcasts by strides
  int EmitFused(kernels::ElementwiseProgram*, const Attrs&,
                const std::vector<int>& r) const override {
    return r[0];
  }
  fb::OpOptions options_type() const override { return fb::OpOptions::ShapeOptions; }
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    return b.BroadcastTo(t[0], b.type(n.result).shape);
  }
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    return {b.SumToShape(ct, b.type(n.operands[0]).shape)};
  }

  // The batched operand padded to the target's rank, broadcast to [size] + the target shape.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    const Shape& to = b.type(n.result).shape;
    return b.BroadcastTo(PadBatchedRank(b, n.batched[0], to.size()), WithBatchAxis(n, to));
  }

 protected:
  TensorType InferTyped(InferContext& c, ShapeAttrs& a) const override {
    const Shape& x = c.in(0).shape;
    const Shape& to = a.shape;
    for (size_t i = 0; i < to.size(); ++i) {
      if (to[i] == nullptr) c.Invalid("target dimension " + std::to_string(i) + " is missing");
      c.CheckSize(to[i], "target dimension " + std::to_string(i));
    }
    if (to.size() < x.size())
      c.Mismatch("cannot broadcast " + c.Str(x) + " to the lower-rank shape " + c.Str(to));
    size_t off = to.size() - x.size();
    for (size_t i = 0; i < x.size(); ++i) {
      const dim::Expr* d = x[i];
      const dim::Expr* t = to[off + i];
      if (d == t || c.IsOne(d)) continue;
      dim::Truth eq = c.scope()->Compare(d, dim::Cmp::kEq, t);
      if (eq == dim::Truth::kTrue) continue;
      if (eq == dim::Truth::kFalse) {
        c.Mismatch("cannot broadcast " + c.Str(x) + " to " + c.Str(to) + ": axis " +
                   std::to_string(i) + " is " + c.Str(d) + ", which is neither 1 nor " + c.Str(t));
      }
      c.Inconclusive(
          d, dim::Cmp::kEq, t,
          "axis " + std::to_string(i) + " when broadcasting " + c.Str(x) + " to " + c.Str(to));
    }
    return TensorType{c.in(0).dtype, to};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const ShapeAttrs& a) const override {
    return fb::CreateShapeOptions(*w.b, w.b->CreateVector(w.Shape(a.shape))).Union();
  }
  void Read(const OptionsReader& r, const void* o, ShapeAttrs* a) const override {
    a->shape = r.shape(static_cast<const fb::ShapeOptions*>(o)->shape());
  }
  std::string Text(const AttrPrinter& p, const ShapeAttrs& a) const override {
    return " shape=" + p.Dims(a.shape);
  }
};

}  // namespace

#define SHP_UNARY_DEF(Name, FB, code, text, C, rule, kop)                               \
  const OpDef& Def##Name() {                                                            \
    static const UnaryDef d(OpKind::k##Name, OperandRule::rule, kernels::UnaryOp::kop); \
    return d;                                                                           \
  }
SHP_UNARY_OPS(SHP_UNARY_DEF)
#undef SHP_UNARY_DEF

#define SHP_BINARY_DEF(Name, FB, code, text, C, rule, kop)                                \
  const OpDef& Def##Name() {                                                              \
    static const BinaryDef d(OpKind::k##Name, OperandRule::rule, kernels::BinaryOp::kop); \
    return d;                                                                             \
  }
SHP_BINARY_OPS(SHP_BINARY_DEF)
#undef SHP_BINARY_DEF

#define SHP_COMPARE_DEF(Name, FB, code, text, C, rule, kop)                                 \
  const OpDef& Def##Name() {                                                                \
    static const CompareDef d(OpKind::k##Name, OperandRule::rule, kernels::CompareOp::kop); \
    return d;                                                                               \
  }
SHP_COMPARE_OPS(SHP_COMPARE_DEF)
#undef SHP_COMPARE_DEF

SHP_DEFINE_OP(Select, SelectDef)
SHP_DEFINE_OP(Convert, ConvertDef)
SHP_DEFINE_OP(BroadcastTo, BroadcastToDef)

}  // namespace ops
}  // namespace shp
