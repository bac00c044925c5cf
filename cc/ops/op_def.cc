#include "cc/ops/subprogram.h"
#include "cc/ops/op_def.h"

#include <cstdio>

#include "cc/ops/limits.h"

namespace shp {
namespace ops {

// ---- The list, the schema and the definitions agree (a drift is a build error) ----

#define SHP_OP_CHECK_FB(Name, FB, code, ...)                    \
  static_assert(static_cast<int32_t>(fb::OpCode::FB) == (code), \
                "cc/ops/op_list.h and flatbuffers/program.fbs disagree on " #FB);
SHP_ALL_OPS(SHP_OP_CHECK_FB)
#undef SHP_OP_CHECK_FB

namespace {

constexpr int32_t MaxCode() {
  int32_t m = 0;
  for (OpKind k : kAllOpKinds) m = static_cast<int32_t>(k) > m ? static_cast<int32_t>(k) : m;
  return m;
}

constexpr bool CodesUnique() {
  for (size_t i = 0; i < kNumOpKinds; ++i) {
    for (size_t j = i + 1; j < kNumOpKinds; ++j) {
      if (kAllOpKinds[i] == kAllOpKinds[j]) return false;
    }
  }
  return true;
}

static_assert(CodesUnique(), "two ops of cc/ops/op_list.h have the same code");
// Every code of the schema is in the list (the schema's OpCode has no gaps).
static_assert(static_cast<int32_t>(fb::OpCode::MAX) == MaxCode(),
              "flatbuffers/program.fbs has an OpCode that cc/ops/op_list.h lacks");
static_assert(kNumOpKinds == static_cast<size_t>(MaxCode()) + 1,
              "OpCode values must be 0..N-1 with no gaps");

struct Table {
  const OpDef* by_code[MaxCode() + 1] = {};
  const char* names[MaxCode() + 1] = {};
  Table() {
#define SHP_OP_TABLE(Name, FB, code, text, ...) names[code] = text;
    SHP_ALL_OPS(SHP_OP_TABLE)
#undef SHP_OP_TABLE
  }
};

const Table& NameTable() {
  static const Table t;
  return t;
}

const OpDef* const* DefTable() {
  static const OpDef* const* table = [] {
    static const OpDef* defs[MaxCode() + 1] = {};
#define SHP_OP_DEFS(Name, FB, code, ...) defs[code] = &Def##Name();
    SHP_ALL_OPS(SHP_OP_DEFS)
#undef SHP_OP_DEFS
    return defs;
  }();
  return table;
}

}  // namespace

bool IsValidOpKind(int32_t code) { return code >= 0 && code <= MaxCode(); }

const char* OpName(OpKind k) {
  int32_t c = static_cast<int32_t>(k);
  return IsValidOpKind(c) ? NameTable().names[c] : "?";
}

const OpDef& Def(OpKind kind) {
  int32_t c = static_cast<int32_t>(kind);
  if (!IsValidOpKind(c)) {
    throw Error(Code::kInvalidArgument, "unknown operation " + std::to_string(c));
  }
  const OpDef* d = DefTable()[c];
  if (d->kind() != kind)
    throw Error(Code::kInternal, std::string("the definition of ") + OpName(kind) + " is misfiled");
  return *d;
}

trace::TensorType InferType(dim::Scope* scope, OpKind op, Attrs* attrs,
                            const std::vector<trace::TensorType>& operands, InferMode mode) {
  const OpDef& def = Def(op);
  try {
    InferContext c(scope, op, operands, mode);
    int want = def.arity();
    int got = static_cast<int>(operands.size());
    if (want >= 0 && got != want) {
      c.Invalid("takes " + std::to_string(want) + " operand" + (want == 1 ? "" : "s") + ", got " +
                std::to_string(got));
    }
    if (want == -1 && got < 1) c.Invalid("takes at least one operand");
    if (attrs->index() != def.attrs_index()) {
      if (attrs->index() != 0) c.Invalid("was given attributes of another operation");
      *attrs = def.DefaultAttrs();
    }
    auto check = [&](const dim::Expr* d) {
      if (d != nullptr && d->scope != scope) scope->CheckSameScope(d, d, OpName(op));
    };
    for (const trace::TensorType& t : operands) {
      for (const dim::Expr* d : t.shape) check(d);
    }
    ForEachDim(*static_cast<const Attrs*>(attrs), check);
    if (operands.size() > kMaxOperands) {
      c.Invalid("takes at most " + std::to_string(kMaxOperands) + " operands, got " +
                std::to_string(operands.size()));
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      const trace::DType d = operands[k].dtype;
      if (trace::IsNarrow(d) && (!TakesNarrowTypes(op) || IsIndexOperand(op, k))) {
        c.Fail(Code::kDtypeMismatch,
               std::string("computes in ") + trace::DTypeName(trace::ComputeDType(d)) +
                   ", not in " + trace::DTypeName(d) + ": operand " + std::to_string(k) +
                   " must be converted first (the tracer does this for every " +
                   trace::DTypeName(d) + " operand)");
      }
    }
    trace::TensorType t = def.Infer(c, attrs);
    if (t.shape.size() > kMaxRank) {
      c.Invalid("the result has rank " + std::to_string(t.shape.size()) + ", above the limit of " +
                std::to_string(kMaxRank) + " axes");
    }
    return t;
  } catch (const Error& e) {
    // Errors of the dimension engine (division by zero, overflow, ...) get the op's name.
    std::string prefix = std::string(OpName(op)) + ": ";
    if (e.message().compare(0, prefix.size(), prefix) == 0) throw;
    throw Error(e.code(), prefix + e.message(), e.detail());  // keep witnesses and fixes
  }
}

// ---- Contexts ----

std::vector<uint32_t> OptionsWriter::Shape(const ops::Shape& s) const {
  std::vector<uint32_t> out;
  for (const dim::Expr* e : s) {
    if (e) out.push_back(dim(e));
  }
  return out;
}

void OptionsReader::Bad(const std::string& what) const {
  throw Error(Code::kInvalidProgram, "invalid program: " + where + " " + what);
}

std::string AttrPrinter::Dims(const ops::Shape& s) const {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + (s[i] ? dim(s[i]) : std::string("_"));
  return out + "]";
}

std::string AttrPrinter::Subprogram(const ops::Subprogram& p) const {
  if (subprogram) return subprogram(p);
  // Without a table (a printer for comparing ops): the listing's fingerprint, so that ops with
  // different subprograms never print alike.
  char buf[32];
  std::snprintf(buf, sizeof(buf), "<%016zx>", std::hash<std::string>()(p.Text()));
  return buf;
}

std::string AttrPrinter::Ints(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string AttrPrinter::Double(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

// ---- Defaults: an op without attributes, not fused, without a runtime plan ----

flatbuffers::Offset<void> OpDef::WriteOptions(const OptionsWriter&, const Attrs&) const {
  return 0;
}
void OpDef::ReadOptions(const OptionsReader&, const void*, Attrs*) const {}
std::string OpDef::AttrText(const AttrPrinter&, const Attrs&) const { return ""; }

const dim::Expr* OpDef::Flops(const CostContext& c) const { return c.scope->Constant(0); }

std::vector<const dim::Expr*> OpDef::UnbackedSizes(const Attrs& a) const {
  const dim::Expr* u = UnbackedSize(a);
  if (u == nullptr) return {};
  return {u};
}

int64_t OpDef::UnbackedValue(const NodeView& n, const std::vector<OperandData>&,
                             kernels::ThreadPool*) const {
  throw Error(Code::kInternal, std::string(OpName(n.op)) + " produces no data-dependent size");
}

const dim::Expr* CostContext::Numel(const trace::TensorType& t) const {
  const dim::Expr* n = scope->Constant(1);
  for (const dim::Expr* d : t.shape) n = scope->Mul(n, d);
  return n;
}

const dim::Expr* CostContext::PerElement(int64_t k, const trace::TensorType& t) const {
  return scope->Scale(Numel(t), k);
}

int OpDef::EmitFused(kernels::ElementwiseProgram*, const Attrs&, const std::vector<int>&) const {
  throw Error(Code::kInternal, std::string("runtime: ") + name() + " is not fusable");
}

std::unique_ptr<Prepared> OpDef::Prepare(const PrepareContext&, const NodeView&) const {
  return nullptr;
}

void OpDef::CheckExecutable(const NodeView&, const std::vector<size_t>&, size_t) const {}

void OpDef::Plan(PlanBuilder&, const NodeView& n) const {
  throw Error(Code::kUnsupported,
              std::string("runtime: cannot execute the operation ") + OpName(n.op));
}

}  // namespace ops
}  // namespace shp
