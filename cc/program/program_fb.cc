// Serialization of programs to flatbuffers/program.fbs and loading with verification.
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "cc/base/error.h"
#include "cc/dim/dag.h"
#include "cc/program/program.h"
#include "cc/ops/op_def.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

namespace fb = ::shapepoly::fb;
using dim::Expr;
using trace::OpKind;
using trace::TensorType;

namespace {

constexpr const char* kProducer = "libshapepoly 0.1.0";

// ---- Limits on what a loaded file may ask for (anything larger is kInvalidProgram) ----
constexpr size_t kMaxFileSize = size_t{1} << 31;  // FlatBuffers' own limit
constexpr size_t kMaxDims = size_t{1} << 16;      // DAG entries
constexpr size_t kMaxOperands = 4096;             // per ADD/MUL entry
constexpr size_t kMaxVariables = 4096;
constexpr size_t kMaxFacts = 1024;
constexpr size_t kMaxNodes = size_t{1} << 20;
constexpr size_t kMaxRank = 64;
constexpr uint64_t kMaxBufferSize = uint64_t{1} << 30;  // uncompressed bytes per constant
constexpr uint64_t kMaxTotalBuffers = uint64_t{1} << 32;
constexpr size_t kMaxExprTerms = 1024;
constexpr int64_t kMaxPow = 64;

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

std::string Program::Serialize() const {
  // The scope is only read here (printing and walking immutable expressions), but take
  // the lock anyway: nothing else may intern into it meanwhile.
  std::lock_guard<std::mutex> lock(mu_);
  const dim::Scope& s = *scope_;
  dim::DagWriter dw(s);
  struct FactIdx {
    uint32_t lhs, rhs;
  };
  std::vector<FactIdx> fact_idx;
  // Emission order: constraints, then assertions (each in order), then inputs and nodes.
  // Loading rebuilds the DAG in this order, adding each assertion as soon as its
  // expressions exist, exactly as the program's scope was built.
  for (const dim::Fact& f : s.facts()) {
    if (!f.is_assertion) fact_idx.push_back({dw.Expr(f.lhs), dw.Expr(f.rhs)});
  }
  for (const dim::Fact& f : s.facts()) {
    if (f.is_assertion) fact_idx.push_back({dw.Expr(f.lhs), dw.Expr(f.rhs)});
  }
  std::vector<std::vector<uint32_t>> in_shapes;
  for (const Input& in : inputs_) in_shapes.push_back(dw.Shape(in.type.shape));
  // Each node's attribute dims, then its shape (the options below find them in the memo).
  std::vector<std::vector<uint32_t>> node_shapes;
  for (const Node& n : nodes_) {
    ops::ForEachDim(n.attrs, [&](const Expr* e) {
      if (e) dw.Expr(e);
    });
    node_shapes.push_back(dw.Shape(n.type.shape));
  }

  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::Variable>> vars;
  for (const dim::Variable& v : s.variables()) {
    vars.push_back(fb::CreateVariable(b, b.CreateString(v.name), v.lo, v.hi, v.declared));
  }
  std::vector<flatbuffers::Offset<fb::Dim>> dims;
  for (const dim::DagEntry& e : dw.entries()) {
    dims.push_back(
        fb::CreateDim(b, ToFb(e.op), e.value, e.operands.empty() ? 0 : b.CreateVector(e.operands)));
  }
  std::vector<flatbuffers::Offset<fb::Fact>> constraints, assertions;
  size_t k = 0;
  for (const dim::Fact& f : s.facts()) {
    if (f.is_assertion) continue;
    constraints.push_back(
        fb::CreateFact(b, ToFb(f.op), fact_idx[k].lhs, fact_idx[k].rhs, b.CreateString(f.text), 0));
    ++k;
  }
  for (const dim::Fact& f : s.facts()) {
    if (!f.is_assertion) continue;
    assertions.push_back(fb::CreateFact(b, ToFb(f.op), fact_idx[k].lhs, fact_idx[k].rhs,
                                        b.CreateString(f.text), b.CreateString(f.message)));
    ++k;
  }
  std::vector<flatbuffers::Offset<fb::Input>> ins;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    ins.push_back(fb::CreateInput(b, b.CreateString(in.name), static_cast<fb::InputRole>(in.role),
                                  static_cast<fb::DType>(in.type.dtype),
                                  b.CreateVector(in_shapes[i]), in.var));
  }
  std::vector<flatbuffers::Offset<fb::Output>> outs;
  for (const Output& o : outputs_) {
    outs.push_back(fb::CreateOutput(b, b.CreateString(o.name), static_cast<uint32_t>(o.value)));
  }
  ops::OptionsWriter writer;
  writer.b = &b;
  writer.dim = [&](const Expr* e) { return dw.Expr(e); };
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    const ops::OpDef& def = ops::Def(n.op);
    fb::OpOptions type = def.options_type();
    flatbuffers::Offset<void> opt = def.WriteOptions(writer, n.attrs);
    std::vector<uint32_t> operands(n.operands.begin(), n.operands.end());
    nodes.push_back(fb::CreateNode(b, static_cast<fb::OpCode>(n.op), b.CreateVector(operands),
                                   static_cast<fb::DType>(n.type.dtype),
                                   b.CreateVector(node_shapes[i]), type, opt));
  }
  std::vector<flatbuffers::Offset<fb::Buffer>> bufs;
  for (const std::string& data : buffers_) {
    fb::Compression comp = fb::Compression::NONE;
    std::string stored = data;
    if (data.size() >= 64) {
      uLongf cap = compressBound(static_cast<uLong>(data.size()));
      std::string z(cap, '\0');
      if (compress2(reinterpret_cast<Bytef*>(&z[0]), &cap,
                    reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size()),
                    Z_BEST_COMPRESSION) == Z_OK &&
          cap < data.size() - data.size() / 8) {
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
  for (const SolveStep& st : solve_) {
    steps.push_back(fb::CreateSolveStep(b, static_cast<uint32_t>(st.var),
                                        static_cast<uint32_t>(st.input), st.axis));
  }
  auto root = fb::CreateProgram(
      b, kSchemaVersion, b.CreateString(kProducer), b.CreateVector(vars), b.CreateVector(dims),
      b.CreateVector(constraints), b.CreateVector(assertions), b.CreateVector(ins),
      b.CreateVector(outs), b.CreateVector(nodes), b.CreateVector(bufs), b.CreateVector(steps));
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

// ---- Loading ----

namespace {

[[noreturn]] void Bad(const std::string& msg) {
  throw Error(Code::kInvalidProgram, "invalid program: " + msg);
}

template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

}  // namespace

std::unique_ptr<Program> Program::Load(const void* data, size_t size) {
  if (data == nullptr && size > 0)
    throw Error(Code::kInvalidArgument, "load: the data pointer is NULL");
  if (size < 8)
    Bad("the data is too short (" + std::to_string(size) + " bytes) to be a shapepoly program");
  if (size >= kMaxFileSize) Bad("the data is too large (" + std::to_string(size) + " bytes)");
  // Copy into 16-byte aligned storage: FlatBuffers reads scalars in place.
  std::vector<uint64_t> storage((size + 15) / 8);
  std::memcpy(storage.data(), data, size);
  const uint8_t* buf = reinterpret_cast<const uint8_t*>(storage.data());
  if (!fb::ProgramBufferHasIdentifier(buf)) {
    std::string id;
    for (int i = 4; i < 8; ++i) {
      char c = static_cast<char>(buf[i]);
      id += (c >= 32 && c < 127) ? std::string(1, c)
                                 : "\\x" + std::to_string(static_cast<int>(buf[i]));
    }
    if (id.size() == 4 && id.compare(0, 3, "SHP") == 0) {
      throw Error(Code::kVersionMismatch, "the program uses the format '" + id +
                                              "', which this library (format 'SHP1') cannot read");
    }
    Bad("not a shapepoly program (file identifier '" + id + "', expected 'SHP1')");
  }
  flatbuffers::Verifier verifier(buf, size, /*max_depth=*/64, /*max_tables=*/4000000);
  if (!fb::VerifyProgramBuffer(verifier))
    Bad("the FlatBuffers verifier rejected the data (corrupt or truncated)");
  const fb::Program* r = fb::GetProgram(buf);
  if (r->schema_version() == 0) Bad("schema_version is 0");
  if (r->schema_version() > kSchemaVersion) {
    throw Error(Code::kVersionMismatch,
                "the program has schema version " + std::to_string(r->schema_version()) +
                    " but this library reads versions up to " + std::to_string(kSchemaVersion) +
                    " (written by '" + (r->producer() ? r->producer()->str() : std::string("?")) +
                    "'); upgrade libshapepoly");
  }
  std::unique_ptr<Program> p(new Program());
  try {
    // ---- Limits ----
    if (Len(r->dims()) > kMaxDims) Bad("too many dimension expressions");
    if (Len(r->variables()) > kMaxVariables) Bad("too many variables");
    if (Len(r->constraints()) + Len(r->assertions()) > kMaxFacts)
      Bad("too many constraints and assertions");
    if (Len(r->nodes()) > kMaxNodes || Len(r->inputs()) > kMaxNodes ||
        Len(r->outputs()) > kMaxNodes) {
      Bad("too many inputs, outputs or nodes");
    }
    // ---- Variables and constraints: the scope ----
    std::vector<std::string> var_names;
    std::vector<dim::Scope::Declaration> decls;
    std::set<std::string> seen;
    for (size_t i = 0; i < Len(r->variables()); ++i) {
      const fb::Variable* v = r->variables()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string name = v->name()->str();
      if (!seen.insert(name).second) Bad("variable '" + name + "' is listed twice");
      var_names.push_back(name);
      if (v->declared()) decls.push_back({name, v->lo(), v->hi()});
    }
    std::vector<std::string> constraint_texts;
    for (size_t i = 0; i < Len(r->constraints()); ++i) {
      const fb::Fact* f = r->constraints()->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (!f->text()) Bad("constraint " + std::to_string(i) + " has no text");
      constraint_texts.push_back(f->text()->str());
    }
    p->scope_ = dim::Scope::Create(constraint_texts, decls);
    dim::Scope* s = p->scope_.get();
    std::vector<int32_t> var_map;
    for (const std::string& name : var_names) var_map.push_back(s->Var(name)->AsVar());

    // ---- The DAG, with the assertions added as soon as their expressions exist ----
    size_t nd = Len(r->dims());
    std::vector<const Expr*> dims(nd, nullptr);
    std::vector<const fb::Fact*> asserts;
    for (size_t i = 0; i < Len(r->assertions()); ++i) {
      asserts.push_back(r->assertions()->Get(static_cast<flatbuffers::uoffset_t>(i)));
    }
    for (size_t i = 0; i < Len(r->constraints()); ++i) {
      const fb::Fact* f = r->constraints()->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (f->lhs() >= nd || f->rhs() >= nd)
        Bad("constraint " + std::to_string(i) + " refers to a missing dimension");
    }
    for (size_t i = 0; i < asserts.size(); ++i) {
      if (asserts[i]->lhs() >= nd || asserts[i]->rhs() >= nd) {
        Bad("assertion " + std::to_string(i) + " refers to a missing dimension");
      }
      if (static_cast<int8_t>(asserts[i]->op()) < 0 || static_cast<int8_t>(asserts[i]->op()) > 5) {
        Bad("assertion " + std::to_string(i) + " has an invalid comparison");
      }
    }
    size_t next_assert = 0;
    auto add_ready_assertions = [&](size_t built) {  // entries [0, built) exist
      while (next_assert < asserts.size() && asserts[next_assert]->lhs() < built &&
             asserts[next_assert]->rhs() < built) {
        const fb::Fact* f = asserts[next_assert];
        s->Check(dims[f->lhs()], static_cast<dim::Cmp>(f->op()), dims[f->rhs()],
                 f->message() ? f->message()->str() : std::string());
        ++next_assert;
      }
    };
    add_ready_assertions(0);
    for (size_t i = 0; i < nd; ++i) {
      const fb::Dim* d = r->dims()->Get(static_cast<flatbuffers::uoffset_t>(i));
      size_t nops = Len(d->operands());
      if (nops > kMaxOperands) Bad("dimension " + std::to_string(i) + " has too many operands");
      std::vector<const Expr*> ops;
      for (size_t j = 0; j < nops; ++j) {
        uint32_t o = d->operands()->Get(static_cast<flatbuffers::uoffset_t>(j));
        if (o >= i)
          Bad("dimension " + std::to_string(i) + " refers to dimension " + std::to_string(o) +
              ", which does not come before it");
        ops.push_back(dims[o]);
      }
      auto arity = [&](size_t want) {
        if (nops != want)
          Bad("dimension " + std::to_string(i) + " has " + std::to_string(nops) + " operands");
      };
      const Expr* e = nullptr;
      switch (d->op()) {
        case fb::DimOp::CONST:
          arity(0);
          e = s->Constant(d->value());
          break;
        case fb::DimOp::VAR:
          arity(0);
          if (d->value() < 0 || static_cast<size_t>(d->value()) >= var_map.size()) {
            Bad("dimension " + std::to_string(i) + " refers to a missing variable");
          }
          e = s->Var(var_names[static_cast<size_t>(d->value())]);
          break;
        case fb::DimOp::ADD:
        case fb::DimOp::MUL:
          if (nops < 2) Bad("dimension " + std::to_string(i) + " has fewer than 2 operands");
          e = ops[0];
          for (size_t j = 1; j < nops; ++j)
            e = d->op() == fb::DimOp::ADD ? s->Add(e, ops[j]) : s->Mul(e, ops[j]);
          break;
        case fb::DimOp::FLOORDIV:
          arity(2);
          e = s->FloorDiv(ops[0], ops[1]);
          break;
        case fb::DimOp::MOD:
          arity(2);
          e = s->Mod(ops[0], ops[1]);
          break;
        case fb::DimOp::MAXIMUM:
          arity(2);
          e = s->Max(ops[0], ops[1]);
          break;
        case fb::DimOp::MINIMUM:
          arity(2);
          e = s->Min(ops[0], ops[1]);
          break;
        case fb::DimOp::POW:
          arity(1);
          if (d->value() < 2 || d->value() > kMaxPow)
            Bad("dimension " + std::to_string(i) + " has a bad exponent");
          e = s->Pow(ops[0], d->value());
          break;
        default:
          Bad("dimension " + std::to_string(i) + " has an unknown operation");
      }
      if (dim::NumTerms(e) > kMaxExprTerms) Bad("dimension " + std::to_string(i) + " is too large");
      dims[i] = e;
      add_ready_assertions(i + 1);
    }
    // Constraints: the parsed text must be the expressions of the DAG.
    {
      size_t ci = 0;
      for (const dim::Fact& f : s->facts()) {
        if (f.is_assertion) continue;
        const fb::Fact* ff = r->constraints()->Get(static_cast<flatbuffers::uoffset_t>(ci));
        if (dims[ff->lhs()] != f.lhs || dims[ff->rhs()] != f.rhs ||
            static_cast<dim::Cmp>(ff->op()) != f.op) {
          Bad("constraint " + std::to_string(ci) + " ('" + f.text +
              "') does not match its expressions");
        }
        ++ci;
      }
      size_t ai = 0;
      for (const dim::Fact& f : s->facts()) {
        if (!f.is_assertion) continue;
        const fb::Fact* ff = asserts[ai];
        if (ff->text() && ff->text()->str() != f.text) {
          Bad("assertion " + std::to_string(ai) + " has the text '" + ff->text()->str() +
              "' but its expressions read '" + f.text + "'");
        }
        ++ai;
      }
    }
    auto dim_at = [&](uint32_t idx, const std::string& where) {
      if (idx >= nd) Bad(where + " refers to a missing dimension");
      return dims[idx];
    };
    auto shape_of = [&](const flatbuffers::Vector<uint32_t>* v, const std::string& where) {
      std::vector<const Expr*> out;
      if (Len(v) > kMaxRank) Bad(where + " has a rank above " + std::to_string(kMaxRank));
      for (size_t j = 0; j < Len(v); ++j)
        out.push_back(dim_at(v->Get(static_cast<flatbuffers::uoffset_t>(j)), where));
      return out;
    };
    auto ints_of = [&](const flatbuffers::Vector<int64_t>* v, const std::string& where) {
      if (Len(v) > kMaxRank) Bad(where + " has too many entries");
      // The FlatBuffers verifier checks the alignment of a vector's length, not of its
      // 8-byte elements; reading misaligned int64s would be undefined behaviour. An empty
      // vector has no element to read, and builders do not pad it to 8 bytes.
      if (Len(v) > 0 && reinterpret_cast<uintptr_t>(v->data()) % alignof(int64_t) != 0) {
        Bad(where + " has a misaligned vector");
      }
      std::vector<int64_t> out;
      for (size_t j = 0; j < Len(v); ++j)
        out.push_back(v->Get(static_cast<flatbuffers::uoffset_t>(j)));
      return out;
    };
    auto dtype_of = [&](fb::DType t, const std::string& where) {
      if (!trace::IsValidDType(static_cast<int8_t>(t))) Bad(where + " has an invalid dtype");
      return static_cast<trace::DType>(static_cast<int8_t>(t));
    };

    // ---- Buffers ----
    uint64_t total = 0;
    for (size_t i = 0; i < Len(r->buffers()); ++i) {
      const fb::Buffer* bf = r->buffers()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string where = "buffer " + std::to_string(i);
      uint64_t want = bf->size();
      size_t have = Len(bf->data());
      if (want > kMaxBufferSize) Bad(where + " is too large (" + std::to_string(want) + " bytes)");
      total += want;
      if (total > kMaxTotalBuffers) Bad("the constants are too large in total");
      std::string out;
      if (bf->compression() == fb::Compression::NONE) {
        if (have != want)
          Bad(where + " holds " + std::to_string(have) + " bytes but records " +
              std::to_string(want));
        out.assign(reinterpret_cast<const char*>(bf->data() ? bf->data()->data() : nullptr), have);
      } else if (bf->compression() == fb::Compression::ZLIB) {
        // zlib cannot expand more than ~1032:1; refuse sizes the stream cannot produce.
        if (want > uint64_t{have} * 1032 + 64)
          Bad(where + " records an impossible uncompressed size");
        out.assign(static_cast<size_t>(want), '\0');
        uLongf got = static_cast<uLongf>(want);
        int rc =
            uncompress(reinterpret_cast<Bytef*>(want ? &out[0] : nullptr), &got,
                       reinterpret_cast<const Bytef*>(bf->data() ? bf->data()->data() : nullptr),
                       static_cast<uLong>(have));
        if (want == 0 && rc == Z_BUF_ERROR) rc = Z_OK;
        if (rc != Z_OK || got != want)
          Bad(where + " is not a valid zlib stream of " + std::to_string(want) + " bytes");
      } else {
        Bad(where + " has an unknown compression");
      }
      p->buffers_.push_back(std::move(out));
    }

    // ---- Inputs ----
    std::set<std::string> names;
    for (size_t i = 0; i < Len(r->inputs()); ++i) {
      const fb::Input* fi = r->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string where = "input " + std::to_string(i);
      Input in;
      in.name = fi->name()->str();
      if (in.name.empty()) Bad(where + " has an empty name");
      if (!names.insert(in.name).second) Bad("the input name '" + in.name + "' is used twice");
      in.type.dtype = dtype_of(fi->dtype(), where);
      in.type.shape = shape_of(fi->shape(), where);
      if (fi->role() == fb::InputRole::DIM) {
        in.role = InputRole::kDim;
        if (fi->variable() < 0 || static_cast<size_t>(fi->variable()) >= var_map.size()) {
          Bad(where + " refers to a missing variable");
        }
        in.var = var_map[static_cast<size_t>(fi->variable())];
        if (!in.type.shape.empty() || in.type.dtype != trace::DType::kI64)
          Bad(where + " must be a scalar i64");
      } else if (fi->role() == fb::InputRole::DATA) {
        if (fi->variable() != -1) Bad(where + " is a data input but names a variable");
        for (const Expr* e : in.type.shape) {
          if (s->Compare(e, dim::Cmp::kGe, s->Constant(0)) == dim::Truth::kFalse) {
            Bad(where + " has the negative dimension " + s->ToString(e));
          }
        }
      } else {
        Bad(where + " has an unknown role");
      }
      p->inputs_.push_back(std::move(in));
    }

    // ---- Nodes: decode, then re-infer every type ----
    for (size_t i = 0; i < Len(r->nodes()); ++i) {
      const fb::Node* fn = r->nodes()->Get(static_cast<flatbuffers::uoffset_t>(i));
      size_t id = p->inputs_.size() + i;
      std::string where = "node " + std::to_string(i) + " (%" + std::to_string(id) + ")";
      int32_t opv = static_cast<int32_t>(fn->op());
      if (!trace::IsValidOpKind(opv))
        Bad(where + " has the unknown operation " + std::to_string(opv));
      Node n;
      n.op = static_cast<OpKind>(opv);
      where += " " + std::string(OpName(n.op));
      for (size_t j = 0; j < Len(fn->operands()); ++j) {
        uint32_t o = fn->operands()->Get(static_cast<flatbuffers::uoffset_t>(j));
        if (o >= id) Bad(where + " uses %" + std::to_string(o) + ", which does not come before it");
        n.operands.push_back(static_cast<int32_t>(o));
      }
      if (Len(fn->operands()) > 4096) Bad(where + " has too many operands");
      n.type.dtype = dtype_of(fn->dtype(), where);
      n.type.shape = shape_of(fn->shape(), where);
      const ops::OpDef& def = ops::Def(n.op);
      fb::OpOptions want = def.options_type();
      if (fn->options_type() != want || (want != fb::OpOptions::NONE && fn->options() == nullptr)) {
        Bad(where + " has options of the wrong kind");
      }
      n.attrs = def.DefaultAttrs();
      if (want != fb::OpOptions::NONE) {
        ops::OptionsReader reader;
        reader.where = where;
        reader.node_dtype = n.type.dtype;
        for (int32_t o : n.operands) reader.operands.push_back(&p->value_type(o));
        reader.dim = [&](uint32_t idx) { return dim_at(idx, where); };
        reader.shape = [&](const flatbuffers::Vector<uint32_t>* v) { return shape_of(v, where); };
        reader.ints = [&](const flatbuffers::Vector<int64_t>* v) { return ints_of(v, where); };
        reader.dtype = [&](fb::DType t) { return dtype_of(t, where); };
        def.ReadOptions(reader, fn->options(), &n.attrs);
      }
      if (n.op == OpKind::kConstant) {
        const int32_t buffer = std::get<ops::ConstantAttrs>(n.attrs).buffer;
        if (!n.operands.empty()) Bad(where + " has operands");
        if (buffer < 0 || static_cast<size_t>(buffer) >= p->buffers_.size())
          Bad(where + " refers to a missing buffer");
        uint64_t count = 1;
        for (const Expr* e : n.type.shape) {
          if (!e->IsConstant() || e->ConstantTerm() < 0)
            Bad(where + " has a non-constant or negative dimension");
          if (__builtin_mul_overflow(count, static_cast<uint64_t>(e->ConstantTerm()), &count))
            Bad(where + " is too large");
        }
        uint64_t bytes;
        if (__builtin_mul_overflow(count, trace::DTypeSize(n.type.dtype), &bytes) ||
            bytes != p->buffers_[static_cast<size_t>(buffer)].size()) {
          Bad(where + " does not match the size of buffer " + std::to_string(buffer));
        }
      } else {
        std::vector<TensorType> types;
        for (int32_t o : n.operands) types.push_back(p->value_type(o));
        trace::Attrs check = n.attrs;
        TensorType t = ops::InferType(s, n.op, &check, types, ops::InferMode::kVerify);
        bool same = t.dtype == n.type.dtype && t.shape.size() == n.type.shape.size();
        for (size_t j = 0; same && j < t.shape.size(); ++j) {
          same = t.shape[j] == n.type.shape[j] ||
                 s->Compare(t.shape[j], dim::Cmp::kEq, n.type.shape[j]) == dim::Truth::kTrue;
        }
        if (!same) {
          Bad(where + " records the type " + trace::DTypeName(n.type.dtype) +
              s->ShapeToString(n.type.shape) + " but its operands give " +
              trace::DTypeName(t.dtype) + s->ShapeToString(t.shape));
        }
        n.attrs = std::move(check);
      }
      p->nodes_.push_back(std::move(n));
    }

    // ---- Outputs ----
    names.clear();
    for (size_t i = 0; i < Len(r->outputs()); ++i) {
      const fb::Output* fo = r->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      Output o;
      o.name = fo->name()->str();
      if (o.name.empty()) Bad("output " + std::to_string(i) + " has an empty name");
      if (!names.insert(o.name).second) Bad("the output name '" + o.name + "' is used twice");
      if (fo->value() >= p->num_values()) Bad("output '" + o.name + "' refers to a missing value");
      o.value = static_cast<int32_t>(fo->value());
      p->outputs_.push_back(std::move(o));
    }

    // ---- Solve recipe: must be the one this library derives ----
    p->Finalize();
    bool same = Len(r->solve()) == p->solve_.size();
    for (size_t i = 0; same && i < p->solve_.size(); ++i) {
      const fb::SolveStep* st = r->solve()->Get(static_cast<flatbuffers::uoffset_t>(i));
      same = st->variable() < var_map.size() && var_map[st->variable()] == p->solve_[i].var &&
             st->input() == static_cast<uint32_t>(p->solve_[i].input) &&
             st->axis() == p->solve_[i].axis;
    }
    if (!same) Bad("the solve recipe does not match the program's input shapes");
  } catch (const Error& e) {
    if (e.code() == Code::kInvalidProgram || e.code() == Code::kVersionMismatch ||
        e.code() == Code::kOutOfMemory) {
      throw;
    }
    Bad(e.message());
  }
  return p;
}

}  // namespace program
}  // namespace shp
