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

class UnaryDef final : public OpDef {
 public:
  UnaryDef(OpKind k, OperandRule rule, kernels::UnaryOp op)
      : OpDef(k, 1, 0), rule_(rule), op_(op) {}
  Attrs DefaultAttrs() const override { return NoAttrs{}; }
  TensorType Infer(InferContext& c, Attrs*) const override {
    c.RequireRule(c.in(0).dtype, rule_, false);
    return c.in(0);
  }
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs&,
                const std::vector<int>& r) const override {
    return p->Unary(op_, r[0]);
  }

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
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs&,
                const std::vector<int>& r) const override {
    return p->Binary(op_, r[0], r[1]);
  }

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
  bool fusable() const override { return true; }
  int EmitFused(kernels::ElementwiseProgram* p, const Attrs&,
                const std::vector<int>& r) const override {
    return p->Compare(op_, r[0], r[1]);
  }

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
