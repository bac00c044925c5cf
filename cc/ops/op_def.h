// One definition per operation (DESIGN.md §1, cc/ops). An OpDef says everything the library
// knows about an op: its name and operand count, its typed attributes, symbolic shape and
// dtype inference, the mapping to and from its FlatBuffers options, its text form, and how
// the runtime plans it and which kernel runs it. The tracer, the serializer and loader, the
// listing and the runtime iterate over these definitions; none of them switches over OpKind.
//
// Definitions live in one file per family (elementwise.cc, shape.cc, reduce.cc, linalg.cc,
// nn.cc, source.cc, scatter.cc) and are found through Def(kind). Ops with attributes derive from
// TypedOpDef<A>, which unpacks the Attrs alternative A for them.
#ifndef SHAPEPOLY_CC_OPS_OP_DEF_H_
#define SHAPEPOLY_CC_OPS_OP_DEF_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "cc/base/error.h"
#include "cc/ops/ad.h"
#include "cc/ops/attrs.h"
#include "cc/ops/batch.h"
#include "cc/ops/infer_context.h"
#include "cc/ops/op_kind.h"
#include "cc/ops/plan_builder.h"
#include "cc/ir/tensor_type.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace kernels {
class ElementwiseProgram;
class ThreadPool;
}  // namespace kernels

namespace ops {

namespace fb = ::shapepoly::fb;

// What an op's WriteOptions may use: the builder and the indices of dims in the program's DAG.
struct OptionsWriter {
  flatbuffers::FlatBufferBuilder* b = nullptr;
  std::function<uint32_t(const dim::Expr*)> dim;  // DAG index of a dim (never nullptr)
  // DAG indices of a shape; nullptr entries are skipped (a reshape's inferred axis).
  std::vector<uint32_t> Shape(const ops::Shape& s) const;
  // The index of a subprogram in the program's table (control flow).
  std::function<uint32_t(const std::shared_ptr<const Subprogram>&)> subprogram;
};

// What an op's ReadOptions may use while a file is being loaded. Every accessor checks what
// it reads and throws kInvalidProgram (through Bad) with `where` in the message.
struct OptionsReader {
  std::string where;  // "node 3 (%5) reshape"
  trace::DType node_dtype = trace::DType::kF32;
  std::vector<const trace::TensorType*> operands;  // operand types (already loaded)
  std::function<const dim::Expr*(uint32_t)> dim;
  std::function<ops::Shape(const flatbuffers::Vector<uint32_t>*)> shape;
  std::function<std::vector<int64_t>(const flatbuffers::Vector<int64_t>*)> ints;
  std::function<trace::DType(fb::DType)> dtype;
  // Subprogram `i` of the program's table (control flow); checks the index.
  std::function<std::shared_ptr<const Subprogram>(uint32_t)> subprogram;
  [[noreturn]] void Bad(const std::string& what) const;  // "<where> <what>"
};

// Formats attribute values for the program listing.
struct AttrPrinter {
  std::function<std::string(const dim::Expr*)> dim;
  std::string Dims(const ops::Shape& s) const;  // "[a, 2*b, _]" (nullptr: "_")
  static std::string Ints(const std::vector<int64_t>& v);
  static std::string Double(double x);  // %.17g
  // A subprogram: `subprogram` when set (the listing: "#0"), else a fingerprint of its
  // listing (ops with different subprograms never print alike).
  std::function<std::string(const ops::Subprogram&)> subprogram;
  std::string Subprogram(const ops::Subprogram& p) const;
};

// Shape-independent data an op computes once per runtime (e.g. a packed constant matrix).
class Prepared {
 public:
  virtual ~Prepared() = default;
};

// What Prepare may look at: the program's values (types and constant bytes).
struct PrepareContext {
  std::function<const trace::TensorType&(int32_t)> type;
  // The bytes of `value` if it is a constant node, else nullptr.
  std::function<const std::string*(int32_t)> constant_bytes;
  // The bytes of `value` if it is an input with a stored default of a constant shape (a
  // parameter: ONNX initializers, weights saved with the program), else nullptr. A run may
  // bind another array to that input, so data prepared from these bytes is only valid in a run
  // whose operand is these very bytes: the step compares the operand's pointer with
  // `bytes->data()` (the runtime binds a default left out to the program's own buffer).
  std::function<const std::string*(int32_t)> default_bytes;
};

// What an op's cost rule sees (OpDef::Flops): the node's operand and result types, whose dims
// belong to `scope`, and its attributes.
struct CostContext {
  dim::Scope* scope = nullptr;
  std::vector<const trace::TensorType*> operands;
  const trace::TensorType* result = nullptr;
  const Attrs* attrs = nullptr;
  // Another node of the same operation came before (control flow: one computation, a node
  // per result, SameOperation): its cost is counted there.
  bool repeated = false;
  // The number of elements of `t` (the product of its dims; 1 for a scalar).
  const dim::Expr* Numel(const trace::TensorType& t) const;
  // `k` times the number of elements of `t`.
  const dim::Expr* PerElement(int64_t k, const trace::TensorType& t) const;
};

class OpDef {
 public:
  OpDef(OpKind kind, int arity, size_t attrs_index)
      : kind_(kind), arity_(arity), attrs_index_(attrs_index) {}
  virtual ~OpDef() = default;
  OpDef(const OpDef&) = delete;
  OpDef& operator=(const OpDef&) = delete;

  OpKind kind() const { return kind_; }
  const char* name() const { return OpName(kind_); }
  // The number of operands; -1: one or more (concatenate); -2: any number (control flow).
  int arity() const { return arity_; }
  // The alternative of Attrs this op's attributes are (Attrs::index()).
  size_t attrs_index() const { return attrs_index_; }
  // Default attributes of this op (the right alternative).
  virtual Attrs DefaultAttrs() const = 0;

  // ---- Inference (tracer and verifier): the result type; normalizes `attrs` in place
  // (negative axes become non-negative, implicit axes explicit) so equal ops compare equal.
  virtual trace::TensorType Infer(InferContext& c, Attrs* attrs) const = 0;

  // ---- Serialization: the options table, written and read back.
  virtual fb::OpOptions options_type() const { return fb::OpOptions::NONE; }
  virtual flatbuffers::Offset<void> WriteOptions(const OptionsWriter& w, const Attrs& a) const;
  virtual void ReadOptions(const OptionsReader& r, const void* options, Attrs* a) const;

  // ---- Listing: " name=value" pairs after the op's name ("" without attributes).
  virtual std::string AttrText(const AttrPrinter& p, const Attrs& a) const;

  // ---- Runtime.
  // Fusable elementwise ops are merged by the runtime into register programs: EmitFused adds
  // the op to `prog` given its operands' registers and returns its result register.
  virtual bool fusable() const { return false; }
  virtual int EmitFused(kernels::ElementwiseProgram* prog, const Attrs& a,
                        const std::vector<int>& regs) const;
  virtual std::unique_ptr<Prepared> Prepare(const PrepareContext& c, const NodeView& n) const;
  // Throws kUnsupported when the runtime cannot execute this node (a kernel's rank limit),
  // from the ranks alone: the runtime checks every node when it is created, so no program that
  // creates a runtime fails at run time for such a limit.
  virtual void CheckExecutable(const NodeView& n, const std::vector<size_t>& operand_ranks,
                               size_t rank) const;
  // Plans the op (not fused) for the concrete shapes in `b`: storage and steps.
  virtual void Plan(PlanBuilder& b, const NodeView& n) const;

  // ---- Data-dependent ops (nonzero, boolean_mask, size_from_value; data_dependent.cc).
  // The unbacked variable this node produces (a variable expression), or nullptr for every
  // other op. The runtime plans such a node only once its value is known: UnbackedValue reads
  // it from the operands' data after the operands are computed.
  virtual const dim::Expr* UnbackedSize(const Attrs&) const { return nullptr; }
  // Every unbacked variable this node produces: UnbackedSize's, or the sizes of a cond whose
  // branches' result shapes differ (set by the branch that runs; cc/ops/control_flow.cc). The
  // runtime reads those by running the branch (cc/runtime/control_flow.cc), not UnbackedValue.
  virtual std::vector<const dim::Expr*> UnbackedSizes(const Attrs& a) const;
  // The upper bound `size <= bound` that the op guarantees for that variable, from its
  // operands' types (c.in(i)), or nullptr (size_from_value: only its declared range, which
  // the runtime checks). Tracing records it as the variable's derived fact; the loader
  // accepts a stored derived fact only when it is one of these (program_load_values.cc), since
  // derived facts are never checked at run time.
  virtual const dim::Expr* UnbackedBound(InferContext&) const { return nullptr; }
  struct OperandData {
    const uint8_t* data;
    const std::vector<int64_t>* shape;
    trace::DType dtype;
  };
  virtual int64_t UnbackedValue(const NodeView& n, const std::vector<OperandData>& operands,
                                kernels::ThreadPool* pool) const;

  // ---- Cost (cc/runtime/cost.cc, shp_program_cost): the floating-point operations of one
  // node as a dim expression, a multiply-add counted as 2; and the rule in words, for
  // docs/ops.md. Default: 0, "0 (data movement)".
  virtual const dim::Expr* Flops(const CostContext& c) const;
  virtual const char* flops_rule() const { return "0 (data movement)"; }

  // ---- Differentiation (ad.h; nullptr tangents and cotangents are symbolic zeros). Only
  // floating-point values carry derivatives; the transformations never call a rule for a node
  // whose result is not floating point, or whose operands all have zero derivatives.
  // The result's tangent given the operands' tangents (nullptr for the inactive ones).
  // Default: kUnsupported naming the op (never a silent zero).
  virtual Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& tangents) const;
  // The operands' cotangents given the result's cotangent `ct` (not nullptr); only operands
  // with need[i] must be given (others may be nullptr). Default: kUnsupported naming the op.
  virtual std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                                 const std::vector<bool>& need) const;

  // ---- Batching (batch.h, the vmap transformation): the result for a batch of operands,
  // its batch axis first, given the operands of which some are batched (never none).
  // Default: kUnsupported naming the op.
  virtual Value Batch(AdBuilder& b, const BatchNode& n) const;

 private:
  OpKind kind_;
  int arity_;
  size_t attrs_index_;
};

// An op whose attributes are the alternative A: the typed hooks get A directly.
template <class A>
class TypedOpDef : public OpDef {
 public:
  TypedOpDef(OpKind kind, int arity) : OpDef(kind, arity, Attrs(A{}).index()) {}
  Attrs DefaultAttrs() const final { return A{}; }
  trace::TensorType Infer(InferContext& c, Attrs* attrs) const final {
    return InferTyped(c, std::get<A>(*attrs));
  }
  flatbuffers::Offset<void> WriteOptions(const OptionsWriter& w, const Attrs& a) const final {
    return Write(w, std::get<A>(a));
  }
  void ReadOptions(const OptionsReader& r, const void* options, Attrs* a) const final {
    A typed;
    Read(r, options, &typed);
    *a = std::move(typed);
  }
  std::string AttrText(const AttrPrinter& p, const Attrs& a) const final {
    return Text(p, std::get<A>(a));
  }
  void Plan(PlanBuilder& b, const NodeView& n) const final {
    PlanTyped(b, n, std::get<A>(n.attrs));
  }

 protected:
  virtual trace::TensorType InferTyped(InferContext& c, A& a) const = 0;
  virtual flatbuffers::Offset<void> Write(const OptionsWriter&, const A&) const { return 0; }
  virtual void Read(const OptionsReader&, const void*, A*) const {}
  virtual std::string Text(const AttrPrinter&, const A&) const { return ""; }
  virtual void PlanTyped(PlanBuilder& b, const NodeView& n, const A& a) const;
};

template <class A>
void TypedOpDef<A>::PlanTyped(PlanBuilder&, const NodeView& n, const A&) const {
  throw Error(Code::kUnsupported,
              std::string("runtime: cannot execute the operation ") + OpName(n.op));
}

// The definition of `kind` (every OpKind has one). Throws kInvalidArgument for a value that
// is no OpKind.
const OpDef& Def(OpKind kind);

// The operations that take the narrow element types (cc/kernels/dtype.h) as they are: those
// that only move elements (cc/ops/narrow.cc). InferType refuses narrow operands of the others:
// the tracer computes them in the compute type (cc/trace/narrow.cc).
bool TakesNarrowTypes(OpKind op);
// True if operand k of `op` holds indices (an integer of any width, not the data's type).
bool IsIndexOperand(OpKind op, size_t k);

// Infers the result type of `op` on operands of types `operands` (operand count, scopes,
// attribute kind, then the op's own rules). Normalizes `attrs` in place (see OpDef::Infer).
// Every dim in `operands` and `attrs` must belong to `scope`. Errors name the op.
trace::TensorType InferType(dim::Scope* scope, OpKind op, Attrs* attrs,
                            const std::vector<trace::TensorType>& operands, InferMode mode);

// Defines Def<Name>() as the one instance of class `Class` (in a family's file).
#define SHP_DEFINE_OP(Name, Class) \
  const OpDef& Def##Name() {       \
    static const Class d;          \
    return d;                      \
  }

// Ops whose attribute is one axis (concatenate, softmax, cumsum, take, scatter_add):
// AxisOptions.
class AxisOpDef : public TypedOpDef<AxisAttrs> {
 public:
  AxisOpDef(OpKind kind, int arity) : TypedOpDef(kind, arity) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::AxisOptions; }

 protected:
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const AxisAttrs& a) const override {
    return fb::CreateAxisOptions(*w.b, a.axis).Union();
  }
  void Read(const OptionsReader&, const void* o, AxisAttrs* a) const override {
    a->axis = static_cast<const fb::AxisOptions*>(o)->axis();
  }
  std::string Text(const AttrPrinter&, const AxisAttrs& a) const override {
    return " axis=" + std::to_string(a.axis);
  }
};

// Control flow (control_flow.cc): cond, while_loop, scan.
bool IsControlFlow(OpKind op);
// Whether two nodes are results of one control-flow operation: the same op, operands and
// attributes except the result index (subprograms compared by identity).
bool SameOperation(const NodeView& a, const NodeView& b);

// Declarations of every definition; each is defined in its family's file.
#define SHP_OP_DEF_DECL(Name, ...) const OpDef& Def##Name();
SHP_ALL_OPS(SHP_OP_DEF_DECL)
#undef SHP_OP_DEF_DECL

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_OP_DEF_H_
