// Program::Serialize: a program to flatbuffers/program.fbs (deterministic bytes).
#include <algorithm>
#include <zlib.h>

#include <cstdint>
#include <new>

#include "cc/base/error.h"
#include "cc/base/limits.h"
#include "cc/dim/dag.h"
#include "cc/ops/op_def.h"
#include "cc/program/program.h"
#include "cc/program/subprogram.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

namespace fb = ::shapepoly::fb;
using dim::Expr;
using trace::OpKind;
using trace::TensorType;

namespace {

constexpr const char* kProducer = "libshapepoly 0.1.0";

// ---- Writing ----

fb::DimOp ToFb(dim::DagOp op) {
  switch (op) {
    case dim::DagOp::kConst:
      return fb::DimOp::CONST;
    case dim::DagOp::kVar:
      return fb::DimOp::VAR;
    case dim::DagOp::kAdd:
      return fb::DimOp::ADD;
    case dim::DagOp::kMul:
      return fb::DimOp::MUL;
    case dim::DagOp::kFloorDiv:
      return fb::DimOp::FLOORDIV;
    case dim::DagOp::kMod:
      return fb::DimOp::MOD;
    case dim::DagOp::kMax:
      return fb::DimOp::MAXIMUM;
    case dim::DagOp::kMin:
      return fb::DimOp::MINIMUM;
    case dim::DagOp::kPow:
      return fb::DimOp::POW;
  }
  throw Error(Code::kInternal, "unknown dimension DAG operation");
}

fb::Cmp ToFb(dim::Cmp c) { return static_cast<fb::Cmp>(static_cast<int8_t>(c)); }

}  // namespace

// Writes one program's table (a whole program, or one variant of one) into `b`.
class Program::Writer {
 public:
  struct FactIdx {
    uint32_t lhs, rhs;
  };
  // The dimension DAG of `p` in emission order: constraints, then assertions (each in order),
  // then derived facts, then inputs and nodes (each node's attribute dims, then its shape).
  // Loading rebuilds the DAG in this order, adding each assertion as soon as its
  // expressions exist, exactly as the program's scope was built.
  static void WriteDag(const Program& p, dim::DagWriter* dw, std::vector<FactIdx>* fact_idx,
                       std::vector<std::vector<uint32_t>>* in_shapes,
                       std::vector<std::vector<uint32_t>>* node_shapes) {
    const dim::Scope& s = *p.scope_;
    for (const dim::Fact& f : s.facts()) {
      if (!f.is_assertion && !f.is_derived) fact_idx->push_back({dw->Expr(f.lhs), dw->Expr(f.rhs)});
    }
    for (const dim::Fact& f : s.facts()) {
      if (f.is_assertion) fact_idx->push_back({dw->Expr(f.lhs), dw->Expr(f.rhs)});
    }
    for (const dim::Fact& f : s.facts()) {
      if (f.is_derived) fact_idx->push_back({dw->Expr(f.lhs), dw->Expr(f.rhs)});
    }
    for (const Input& in : p.inputs_) in_shapes->push_back(dw->Shape(in.type.shape));
    for (const Node& n : p.nodes_) {
      ops::ForEachDim(n.attrs, [&](const Expr* e) {
        if (e) dw->Expr(e);
      });
      node_shapes->push_back(dw->Shape(n.type.shape));
    }
  }
  static void CheckDagEntries(size_t entries) {
    if (entries > limits::kMaxDagEntries) {
      throw Error(Code::kUnsupported,
                  "program: its shapes, attributes and facts use " + std::to_string(entries) +
                      " distinct dimension expressions (DAG entries), above the limit of " +
                      std::to_string(limits::kMaxDagEntries));
    }
  }
  // The root's metadata (v14), only when there is some (0): older readers read the rest.
  static flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>> WriteMetadata(
      flatbuffers::FlatBufferBuilder& b, const Metadata* metadata) {
    if (metadata == nullptr || metadata->empty()) return 0;
    std::vector<flatbuffers::Offset<fb::KeyValue>> entries;
    for (const auto& kv : *metadata) {
      auto value = b.CreateString(kv.second);
      auto key = b.CreateString(kv.first);
      entries.push_back(fb::CreateKeyValue(b, key, value));
    }
    return b.CreateVector(entries);
  }
  static flatbuffers::Offset<fb::Program> Table(
      const Program& p, flatbuffers::FlatBufferBuilder& b, uint32_t version,
      flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Program>>> variants,
      const Metadata* metadata = nullptr);
};

std::string Program::Serialize() const {
  flatbuffers::FlatBufferBuilder b(1024);
  const uint32_t version = SchemaVersionNeeded();
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Program>>> variants_vec = 0;
  if (!more_variants_.empty()) {
    std::vector<flatbuffers::Offset<fb::Program>> tables;
    for (const auto& v : more_variants_) tables.push_back(Writer::Table(*v, b, version, 0));
    variants_vec = b.CreateVector(tables);
  }
  auto root = Writer::Table(*this, b, version, variants_vec, &metadata_);
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

void Program::CheckDagSize() const {
  std::lock_guard<std::mutex> lock(*mu_);
  dim::DagWriter dw(*scope_);
  std::vector<Writer::FactIdx> fact_idx;
  std::vector<std::vector<uint32_t>> in_shapes, node_shapes;
  Writer::WriteDag(*this, &dw, &fact_idx, &in_shapes, &node_shapes);
  Writer::CheckDagEntries(dw.entries().size());
}

std::string Program::SerializeOwn() const {
  flatbuffers::FlatBufferBuilder b(1024);
  const uint32_t version = OwnSchemaVersionNeeded();
  auto root = Writer::Table(*this, b, version, 0);
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

flatbuffers::Offset<fb::Program> Program::Writer::Table(
    const Program& p, flatbuffers::FlatBufferBuilder& b, uint32_t version,
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Program>>> variants,
    const Metadata* metadata) {
  // The scope is only read here (printing and walking immutable expressions), but take
  // the lock anyway: nothing else may intern into it meanwhile.
  std::lock_guard<std::mutex> lock(*p.mu_);
  const dim::Scope& s = *p.scope_;
  dim::DagWriter dw(s);
  std::vector<FactIdx> fact_idx;
  std::vector<std::vector<uint32_t>> in_shapes, node_shapes;
  WriteDag(p, &dw, &fact_idx, &in_shapes, &node_shapes);
  // The builders keep programs within the limits (FromTrace checks this same count); a
  // program past one is refused here rather than written as a file no loader accepts.
  CheckDagEntries(dw.entries().size());

  // Nested objects are built in named steps, never as sibling call arguments: the file's bytes
  // must not depend on the compiler's argument evaluation order (clang builds left to right,
  // GCC right to left; the order below is GCC's, which wrote the golden files).
  std::vector<flatbuffers::Offset<fb::Variable>> vars;
  for (const dim::Variable& v : s.variables()) {
    flatbuffers::Offset<flatbuffers::String> origin = 0;
    if (v.unbacked) origin = b.CreateString(v.origin);
    auto name = b.CreateString(v.name);
    vars.push_back(fb::CreateVariable(b, name, v.lo, v.hi, v.declared, v.unbacked, origin));
  }
  std::vector<flatbuffers::Offset<fb::Dim>> dims;
  for (const dim::DagEntry& e : dw.entries()) {
    dims.push_back(
        fb::CreateDim(b, ToFb(e.op), e.value, e.operands.empty() ? 0 : b.CreateVector(e.operands)));
  }
  std::vector<flatbuffers::Offset<fb::Fact>> constraints, assertions, derived;
  size_t k = 0;
  for (const dim::Fact& f : s.facts()) {
    if (f.is_assertion || f.is_derived) continue;
    constraints.push_back(
        fb::CreateFact(b, ToFb(f.op), fact_idx[k].lhs, fact_idx[k].rhs, b.CreateString(f.text), 0));
    ++k;
  }
  for (const dim::Fact& f : s.facts()) {
    if (!f.is_assertion) continue;
    flatbuffers::Offset<flatbuffers::String> origin = 0;
    if (f.is_guard) origin = b.CreateString(f.origin);
    auto message = b.CreateString(f.message);
    auto text = b.CreateString(f.text);
    assertions.push_back(fb::CreateFact(b, ToFb(f.op), fact_idx[k].lhs, fact_idx[k].rhs, text,
                                        message, f.is_guard, origin));
    ++k;
  }
  for (const dim::Fact& f : s.facts()) {
    if (!f.is_derived) continue;
    auto text = b.CreateString(f.text);
    derived.push_back(fb::CreateFact(b, ToFb(f.op), fact_idx[k].lhs, fact_idx[k].rhs, text, 0));
    ++k;
  }
  std::vector<flatbuffers::Offset<fb::Input>> ins;
  for (size_t i = 0; i < p.inputs_.size(); ++i) {
    const Input& in = p.inputs_[i];
    auto shape = b.CreateVector(in_shapes[i]);
    auto name = b.CreateString(in.name);
    ins.push_back(fb::CreateInput(b, name, static_cast<fb::InputRole>(in.role),
                                  static_cast<fb::DType>(in.type.dtype), shape, in.var,
                                  in.default_buffer, in.has_fill, in.has_fill ? in.fill : 0.0));
  }
  std::vector<flatbuffers::Offset<fb::Output>> outs;
  for (const Output& o : p.outputs_) {
    auto name = b.CreateString(o.name);
    outs.push_back(fb::CreateOutput(b, name, static_cast<uint32_t>(o.value),
                                    static_cast<fb::OutputRole>(o.role)));
  }
  ops::OptionsWriter writer;
  writer.b = &b;
  writer.dim = [&](const Expr* e) { return dw.Expr(e); };
  writer.subprogram = [&](const std::shared_ptr<const ops::Subprogram>& sub) {
    auto it = std::find(p.subprograms_.begin(), p.subprograms_.end(), sub);
    if (it == p.subprograms_.end()) throw Error(Code::kInternal, "program: unlisted subprogram");
    return static_cast<uint32_t>(it - p.subprograms_.begin());
  };
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (size_t i = 0; i < p.nodes_.size(); ++i) {
    const Node& n = p.nodes_[i];
    const ops::OpDef& def = ops::Def(n.op);
    fb::OpOptions type = def.options_type();
    flatbuffers::Offset<void> opt = def.WriteOptions(writer, n.attrs);
    std::vector<uint32_t> operands(n.operands.begin(), n.operands.end());
    auto shape = b.CreateVector(node_shapes[i]);
    auto operand_vec = b.CreateVector(operands);
    nodes.push_back(fb::CreateNode(b, static_cast<fb::OpCode>(n.op), operand_vec,
                                   static_cast<fb::DType>(n.type.dtype), shape, type, opt));
  }
  std::vector<flatbuffers::Offset<fb::Buffer>> bufs;
  for (const std::string& data : p.buffers_) {
    fb::Compression comp = fb::Compression::NONE;
    std::string stored = data;
    if (data.size() >= 64) {
      uLongf cap = compressBound(static_cast<uLong>(data.size()));
      std::string z(cap, '\0');
      const int rc = compress2(reinterpret_cast<Bytef*>(&z[0]), &cap,
                               reinterpret_cast<const Bytef*>(data.data()),
                               static_cast<uLong>(data.size()), Z_BEST_COMPRESSION);
      // Storing the constant uncompressed instead would make the bytes depend on the memory
      // available: serialization is deterministic, so zlib running out of memory is an error.
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      if (rc == Z_OK && cap < data.size() - data.size() / 8) {
        z.resize(cap);
        stored = std::move(z);
        comp = fb::Compression::ZLIB;
      }
    }
    b.ForceVectorAlignment(stored.size(), 1, 16);
    auto vec = b.CreateVector(reinterpret_cast<const uint8_t*>(stored.data()), stored.size());
    bufs.push_back(fb::CreateBuffer(b, comp, data.size(), vec));
  }
  std::vector<flatbuffers::Offset<fb::SolveStep>> steps;
  for (const SolveStep& st : p.solve_) {
    steps.push_back(fb::CreateSolveStep(b, static_cast<uint32_t>(st.var),
                                        static_cast<uint32_t>(st.input), st.axis));
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Fact>>> derived_vec = 0;
  if (!derived.empty()) derived_vec = b.CreateVector(derived);
  // Each subprogram a whole serialized program (its own identifier and version).
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Subprogram>>> subs_vec = 0;
  if (!p.subprograms_.empty()) {
    std::vector<flatbuffers::Offset<fb::Subprogram>> subs;
    for (const auto& sub : p.subprograms_) {
      const std::string bytes = BodyOf(*sub).program().Serialize();
      b.ForceVectorAlignment(bytes.size(), 1, 16);
      auto vec = b.CreateVector(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      subs.push_back(fb::CreateSubprogram(b, vec));
    }
    subs_vec = b.CreateVector(subs);
  }
  auto metadata_vec = WriteMetadata(b, metadata);
  auto steps_vec = b.CreateVector(steps);
  auto bufs_vec = b.CreateVector(bufs);
  auto nodes_vec = b.CreateVector(nodes);
  auto outs_vec = b.CreateVector(outs);
  auto ins_vec = b.CreateVector(ins);
  auto assertions_vec = b.CreateVector(assertions);
  auto constraints_vec = b.CreateVector(constraints);
  auto dims_vec = b.CreateVector(dims);
  auto vars_vec = b.CreateVector(vars);
  auto producer = b.CreateString(kProducer);
  return fb::CreateProgram(b, version, producer, vars_vec, dims_vec, constraints_vec,
                           assertions_vec, ins_vec, outs_vec, nodes_vec, bufs_vec, steps_vec,
                           variants, derived_vec, subs_vec, metadata_vec);
}

}  // namespace program
}  // namespace shp
