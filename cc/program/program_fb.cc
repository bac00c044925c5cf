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
#include "cc/program/program.h"
#include "cc/trace/infer.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

namespace fb = ::shapepoly::fb;
using dim::AtomKind;
using dim::Expr;
using trace::OpKind;
using trace::TensorType;

namespace {

constexpr const char* kProducer = "libshapepoly 0.1.0";

// ---- Limits on what a loaded file may ask for (anything larger is kInvalidProgram) ----
constexpr size_t kMaxFileSize = size_t{1} << 31;       // FlatBuffers' own limit
constexpr size_t kMaxDims = size_t{1} << 16;           // DAG entries
constexpr size_t kMaxOperands = 4096;                  // per ADD/MUL entry
constexpr size_t kMaxVariables = 4096;
constexpr size_t kMaxFacts = 1024;
constexpr size_t kMaxNodes = size_t{1} << 20;
constexpr size_t kMaxRank = 64;
constexpr uint64_t kMaxBufferSize = uint64_t{1} << 30;  // uncompressed bytes per constant
constexpr uint64_t kMaxTotalBuffers = uint64_t{1} << 32;
constexpr size_t kMaxExprTerms = 1024;
constexpr int64_t kMaxPow = 64;

// ---- Writing ----

class DimWriter {
 public:
  explicit DimWriter(const dim::Scope& s) : s_(s) {}

  uint32_t Expr(const dim::Expr* e) {
    auto it = memo_.find(e);
    if (it != memo_.end()) return it->second;
    uint32_t r;
    if (e->IsConstant()) {
      r = Add(fb::DimOp::CONST, e->ConstantTerm(), {});
    } else if (e->terms.size() == 1) {
      r = Term(e->terms[0]);
    } else {
      std::vector<uint32_t> ops;
      for (const dim::Term& t : e->terms) ops.push_back(Term(t));
      r = Add(fb::DimOp::ADD, 0, ops);
    }
    memo_.emplace(e, r);
    return r;
  }

  std::vector<uint32_t> Shape(const std::vector<const dim::Expr*>& v) {
    std::vector<uint32_t> out;
    for (const dim::Expr* e : v) out.push_back(Expr(e));
    return out;
  }

  const std::vector<std::tuple<fb::DimOp, int64_t, std::vector<uint32_t>>>& entries() const { return entries_; }

 private:
  uint32_t Add(fb::DimOp op, int64_t value, const std::vector<uint32_t>& operands) {
    auto key = std::make_tuple(op, value, operands);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    uint32_t i = static_cast<uint32_t>(entries_.size());
    entries_.push_back(key);
    index_.emplace(key, i);
    return i;
  }

  uint32_t Atom(const dim::Atom* a) {
    switch (a->kind) {
      case AtomKind::kVar: return Add(fb::DimOp::VAR, a->var, {});
      case AtomKind::kFloorDiv: return Add(fb::DimOp::FLOORDIV, 0, {Expr(a->a), Expr(a->b)});
      case AtomKind::kMod: return Add(fb::DimOp::MOD, 0, {Expr(a->a), Expr(a->b)});
      case AtomKind::kMax: return Add(fb::DimOp::MAXIMUM, 0, {Expr(a->a), Expr(a->b)});
      case AtomKind::kMin: return Add(fb::DimOp::MINIMUM, 0, {Expr(a->a), Expr(a->b)});
    }
    throw Error(Code::kInternal, "unknown atom kind");
  }

  uint32_t Term(const dim::Term& t) {
    if (t.mono->factors.empty()) return Add(fb::DimOp::CONST, t.coeff, {});
    std::vector<uint32_t> fs;
    for (const dim::Factor& f : t.mono->factors) {
      uint32_t a = Atom(f.atom);
      fs.push_back(f.exp == 1 ? a : Add(fb::DimOp::POW, f.exp, {a}));
    }
    uint32_t m = fs.size() == 1 ? fs[0] : Add(fb::DimOp::MUL, 0, fs);
    if (t.coeff == 1) return m;
    return Add(fb::DimOp::MUL, 0, {Add(fb::DimOp::CONST, t.coeff, {}), m});
  }

  const dim::Scope& s_;
  std::unordered_map<const dim::Expr*, uint32_t> memo_;
  std::map<std::tuple<fb::DimOp, int64_t, std::vector<uint32_t>>, uint32_t> index_;
  std::vector<std::tuple<fb::DimOp, int64_t, std::vector<uint32_t>>> entries_;
};

fb::Cmp ToFb(dim::Cmp c) { return static_cast<fb::Cmp>(static_cast<int8_t>(c)); }

}  // namespace

std::string Program::Serialize() const {
  // The scope is only read here (printing and walking immutable expressions), but take
  // the lock anyway: nothing else may intern into it meanwhile.
  std::lock_guard<std::mutex> lock(mu_);
  const dim::Scope& s = *scope_;
  DimWriter dw(s);
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
  struct NodeIdx {
    std::vector<uint32_t> dims, dims2, shape;
  };
  std::vector<NodeIdx> node_idx;
  for (const Node& n : nodes_) {
    NodeIdx ni;
    for (const Expr* e : n.attrs.dims) {
      if (e) ni.dims.push_back(dw.Expr(e));
    }
    ni.dims2 = dw.Shape(n.attrs.dims2);
    ni.shape = dw.Shape(n.type.shape);
    node_idx.push_back(std::move(ni));
  }

  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::Variable>> vars;
  for (const dim::Variable& v : s.variables()) {
    vars.push_back(fb::CreateVariable(b, b.CreateString(v.name), v.lo, v.hi, v.declared));
  }
  std::vector<flatbuffers::Offset<fb::Dim>> dims;
  for (const auto& e : dw.entries()) {
    dims.push_back(fb::CreateDim(b, std::get<0>(e), std::get<1>(e),
                                 std::get<2>(e).empty() ? 0 : b.CreateVector(std::get<2>(e))));
  }
  std::vector<flatbuffers::Offset<fb::Fact>> constraints, assertions;
  size_t k = 0;
  for (const dim::Fact& f : s.facts()) {
    if (f.is_assertion) continue;
    constraints.push_back(fb::CreateFact(b, ToFb(f.op), fact_idx[k].lhs, fact_idx[k].rhs, b.CreateString(f.text), 0));
    ++k;
  }
  for (const dim::Fact& f : s.facts()) {
    if (!f.is_assertion) continue;
    assertions.push_back(fb::CreateFact(b, ToFb(f.op), fact_idx[k].lhs, fact_idx[k].rhs, b.CreateString(f.text),
                                        b.CreateString(f.message)));
    ++k;
  }
  std::vector<flatbuffers::Offset<fb::Input>> ins;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    ins.push_back(fb::CreateInput(b, b.CreateString(in.name), static_cast<fb::InputRole>(in.role),
                                  static_cast<fb::DType>(in.type.dtype), b.CreateVector(in_shapes[i]), in.var));
  }
  std::vector<flatbuffers::Offset<fb::Output>> outs;
  for (const Output& o : outputs_) {
    outs.push_back(fb::CreateOutput(b, b.CreateString(o.name), static_cast<uint32_t>(o.value)));
  }
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    const trace::Attrs& a = n.attrs;
    const NodeIdx& ni = node_idx[i];
    fb::OpOptions type = fb::OpOptions::NONE;
    flatbuffers::Offset<void> opt;
    switch (n.op) {
      case OpKind::kConstant:
        type = fb::OpOptions::ConstantOptions;
        opt = fb::CreateConstantOptions(b, static_cast<uint32_t>(a.buffer)).Union();
        break;
      case OpKind::kConvert:
        type = fb::OpOptions::ConvertOptions;
        opt = fb::CreateConvertOptions(b, static_cast<fb::DType>(a.dtype)).Union();
        break;
      case OpKind::kBroadcastTo:
        type = fb::OpOptions::ShapeOptions;
        opt = fb::CreateShapeOptions(b, b.CreateVector(ni.dims)).Union();
        break;
      case OpKind::kReshape:
        type = fb::OpOptions::ReshapeOptions;
        opt = fb::CreateReshapeOptions(b, b.CreateVector(ni.dims), static_cast<int32_t>(a.axis)).Union();
        break;
      case OpKind::kTranspose:
        type = fb::OpOptions::TransposeOptions;
        opt = fb::CreateTransposeOptions(b, b.CreateVector(a.ints)).Union();
        break;
      case OpKind::kConcatenate: case OpKind::kSoftmax: case OpKind::kCumSum: case OpKind::kTake:
        type = fb::OpOptions::AxisOptions;
        opt = fb::CreateAxisOptions(b, a.axis).Union();
        break;
      case OpKind::kSlice:
        type = fb::OpOptions::SliceOptions;
        opt = fb::CreateSliceOptions(b, b.CreateVector(ni.dims), b.CreateVector(ni.dims2), b.CreateVector(a.ints))
                  .Union();
        break;
      case OpKind::kPad:
        type = fb::OpOptions::PadOptions;
        opt = fb::CreatePadOptions(b, b.CreateVector(ni.dims), b.CreateVector(ni.dims2), a.fvalue).Union();
        break;
      case OpKind::kDotGeneral:
        type = fb::OpOptions::DotGeneralOptions;
        opt = fb::CreateDotGeneralOptions(b, b.CreateVector(a.dot.lhs_batch), b.CreateVector(a.dot.rhs_batch),
                                          b.CreateVector(a.dot.lhs_contracting),
                                          b.CreateVector(a.dot.rhs_contracting))
                  .Union();
        break;
      case OpKind::kIota:
        type = fb::OpOptions::IotaOptions;
        opt = fb::CreateIotaOptions(b, b.CreateVector(ni.dims), a.axis).Union();
        break;
      case OpKind::kLayerNorm:
        type = fb::OpOptions::LayerNormOptions;
        opt = fb::CreateLayerNormOptions(b, a.axis, a.fvalue).Union();
        break;
      case OpKind::kDimValue:
        type = fb::OpOptions::DimValueOptions;
        opt = fb::CreateDimValueOptions(b, ni.dims[0]).Union();
        break;
      default:
        if (trace::IsReduce(n.op)) {
          type = fb::OpOptions::ReduceOptions;
          opt = fb::CreateReduceOptions(b, b.CreateVector(a.ints), a.keepdims).Union();
        }
        break;
    }
    std::vector<uint32_t> operands(n.operands.begin(), n.operands.end());
    nodes.push_back(fb::CreateNode(b, static_cast<fb::OpCode>(n.op), b.CreateVector(operands),
                                   static_cast<fb::DType>(n.type.dtype), b.CreateVector(ni.shape), type, opt));
  }
  std::vector<flatbuffers::Offset<fb::Buffer>> bufs;
  for (const std::string& data : buffers_) {
    fb::Compression comp = fb::Compression::NONE;
    std::string stored = data;
    if (data.size() >= 64) {
      uLongf cap = compressBound(static_cast<uLong>(data.size()));
      std::string z(cap, '\0');
      if (compress2(reinterpret_cast<Bytef*>(&z[0]), &cap, reinterpret_cast<const Bytef*>(data.data()),
                    static_cast<uLong>(data.size()), Z_BEST_COMPRESSION) == Z_OK &&
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
    steps.push_back(fb::CreateSolveStep(b, static_cast<uint32_t>(st.var), static_cast<uint32_t>(st.input), st.axis));
  }
  auto root = fb::CreateProgram(b, kSchemaVersion, b.CreateString(kProducer), b.CreateVector(vars),
                                b.CreateVector(dims), b.CreateVector(constraints), b.CreateVector(assertions),
                                b.CreateVector(ins), b.CreateVector(outs), b.CreateVector(nodes), b.CreateVector(bufs),
                                b.CreateVector(steps));
  fb::FinishProgramBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

// ---- Loading ----

namespace {

[[noreturn]] void Bad(const std::string& msg) { throw Error(Code::kInvalidProgram, "invalid program: " + msg); }

template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}


}  // namespace

std::unique_ptr<Program> Program::Load(const void* data, size_t size) {
  if (data == nullptr && size > 0) throw Error(Code::kInvalidArgument, "load: the data pointer is NULL");
  if (size < 8) Bad("the data is too short (" + std::to_string(size) + " bytes) to be a shapepoly program");
  if (size >= kMaxFileSize) Bad("the data is too large (" + std::to_string(size) + " bytes)");
  // Copy into 16-byte aligned storage: FlatBuffers reads scalars in place.
  std::vector<uint64_t> storage((size + 15) / 8);
  std::memcpy(storage.data(), data, size);
  const uint8_t* buf = reinterpret_cast<const uint8_t*>(storage.data());
  if (!fb::ProgramBufferHasIdentifier(buf)) {
    std::string id;
    for (int i = 4; i < 8; ++i) {
      char c = static_cast<char>(buf[i]);
      id += (c >= 32 && c < 127) ? std::string(1, c) : "\\x" + std::to_string(static_cast<int>(buf[i]));
    }
    if (id.size() == 4 && id.compare(0, 3, "SHP") == 0) {
      throw Error(Code::kVersionMismatch, "the program uses the format '" + id +
                                              "', which this library (format 'SHP1') cannot read");
    }
    Bad("not a shapepoly program (file identifier '" + id + "', expected 'SHP1')");
  }
  flatbuffers::Verifier verifier(buf, size, /*max_depth=*/64, /*max_tables=*/4000000);
  if (!fb::VerifyProgramBuffer(verifier)) Bad("the FlatBuffers verifier rejected the data (corrupt or truncated)");
  const fb::Program* r = fb::GetProgram(buf);
  if (r->schema_version() == 0) Bad("schema_version is 0");
  if (r->schema_version() > kSchemaVersion) {
    throw Error(Code::kVersionMismatch, "the program has schema version " + std::to_string(r->schema_version()) +
                                            " but this library reads versions up to " +
                                            std::to_string(kSchemaVersion) + " (written by '" +
                                            (r->producer() ? r->producer()->str() : std::string("?")) +
                                            "'); upgrade libshapepoly");
  }
  std::unique_ptr<Program> p(new Program());
  try {
    // ---- Limits ----
    if (Len(r->dims()) > kMaxDims) Bad("too many dimension expressions");
    if (Len(r->variables()) > kMaxVariables) Bad("too many variables");
    if (Len(r->constraints()) + Len(r->assertions()) > kMaxFacts) Bad("too many constraints and assertions");
    if (Len(r->nodes()) > kMaxNodes || Len(r->inputs()) > kMaxNodes || Len(r->outputs()) > kMaxNodes) {
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
      if (f->lhs() >= nd || f->rhs() >= nd) Bad("constraint " + std::to_string(i) + " refers to a missing dimension");
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
      while (next_assert < asserts.size() && asserts[next_assert]->lhs() < built && asserts[next_assert]->rhs() < built) {
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
        if (o >= i) Bad("dimension " + std::to_string(i) + " refers to dimension " + std::to_string(o) +
                        ", which does not come before it");
        ops.push_back(dims[o]);
      }
      auto arity = [&](size_t want) {
        if (nops != want) Bad("dimension " + std::to_string(i) + " has " + std::to_string(nops) + " operands");
      };
      const Expr* e = nullptr;
      switch (d->op()) {
        case fb::DimOp::CONST: arity(0); e = s->Constant(d->value()); break;
        case fb::DimOp::VAR:
          arity(0);
          if (d->value() < 0 || static_cast<size_t>(d->value()) >= var_map.size()) {
            Bad("dimension " + std::to_string(i) + " refers to a missing variable");
          }
          e = s->Var(var_names[static_cast<size_t>(d->value())]);
          break;
        case fb::DimOp::ADD: case fb::DimOp::MUL:
          if (nops < 2) Bad("dimension " + std::to_string(i) + " has fewer than 2 operands");
          e = ops[0];
          for (size_t j = 1; j < nops; ++j) e = d->op() == fb::DimOp::ADD ? s->Add(e, ops[j]) : s->Mul(e, ops[j]);
          break;
        case fb::DimOp::FLOORDIV: arity(2); e = s->FloorDiv(ops[0], ops[1]); break;
        case fb::DimOp::MOD: arity(2); e = s->Mod(ops[0], ops[1]); break;
        case fb::DimOp::MAXIMUM: arity(2); e = s->Max(ops[0], ops[1]); break;
        case fb::DimOp::MINIMUM: arity(2); e = s->Min(ops[0], ops[1]); break;
        case fb::DimOp::POW:
          arity(1);
          if (d->value() < 2 || d->value() > kMaxPow) Bad("dimension " + std::to_string(i) + " has a bad exponent");
          e = s->Pow(ops[0], d->value());
          break;
        default: Bad("dimension " + std::to_string(i) + " has an unknown operation");
      }
      if (e->terms.size() > kMaxExprTerms) Bad("dimension " + std::to_string(i) + " is too large");
      dims[i] = e;
      add_ready_assertions(i + 1);
    }
    // Constraints: the parsed text must be the expressions of the DAG.
    {
      size_t ci = 0;
      for (const dim::Fact& f : s->facts()) {
        if (f.is_assertion) continue;
        const fb::Fact* ff = r->constraints()->Get(static_cast<flatbuffers::uoffset_t>(ci));
        if (dims[ff->lhs()] != f.lhs || dims[ff->rhs()] != f.rhs || static_cast<dim::Cmp>(ff->op()) != f.op) {
          Bad("constraint " + std::to_string(ci) + " ('" + f.text + "') does not match its expressions");
        }
        ++ci;
      }
      size_t ai = 0;
      for (const dim::Fact& f : s->facts()) {
        if (!f.is_assertion) continue;
        const fb::Fact* ff = asserts[ai];
        if (ff->text() && ff->text()->str() != f.text) {
          Bad("assertion " + std::to_string(ai) + " has the text '" + ff->text()->str() + "' but its expressions read '" +
              f.text + "'");
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
      for (size_t j = 0; j < Len(v); ++j) out.push_back(dim_at(v->Get(static_cast<flatbuffers::uoffset_t>(j)), where));
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
      for (size_t j = 0; j < Len(v); ++j) out.push_back(v->Get(static_cast<flatbuffers::uoffset_t>(j)));
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
        if (have != want) Bad(where + " holds " + std::to_string(have) + " bytes but records " + std::to_string(want));
        out.assign(reinterpret_cast<const char*>(bf->data() ? bf->data()->data() : nullptr), have);
      } else if (bf->compression() == fb::Compression::ZLIB) {
        // zlib cannot expand more than ~1032:1; refuse sizes the stream cannot produce.
        if (want > uint64_t{have} * 1032 + 64) Bad(where + " records an impossible uncompressed size");
        out.assign(static_cast<size_t>(want), '\0');
        uLongf got = static_cast<uLongf>(want);
        int rc = uncompress(reinterpret_cast<Bytef*>(want ? &out[0] : nullptr), &got,
                            reinterpret_cast<const Bytef*>(bf->data() ? bf->data()->data() : nullptr),
                            static_cast<uLong>(have));
        if (want == 0 && rc == Z_BUF_ERROR) rc = Z_OK;
        if (rc != Z_OK || got != want) Bad(where + " is not a valid zlib stream of " + std::to_string(want) + " bytes");
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
        if (!in.type.shape.empty() || in.type.dtype != trace::DType::kI64) Bad(where + " must be a scalar i64");
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
      if (!trace::IsValidOpKind(opv)) Bad(where + " has the unknown operation " + std::to_string(opv));
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
      trace::Attrs& a = n.attrs;
      fb::OpOptions want = fb::OpOptions::NONE;
      switch (n.op) {
        case OpKind::kConstant: want = fb::OpOptions::ConstantOptions; break;
        case OpKind::kConvert: want = fb::OpOptions::ConvertOptions; break;
        case OpKind::kBroadcastTo: want = fb::OpOptions::ShapeOptions; break;
        case OpKind::kReshape: want = fb::OpOptions::ReshapeOptions; break;
        case OpKind::kTranspose: want = fb::OpOptions::TransposeOptions; break;
        case OpKind::kConcatenate: case OpKind::kSoftmax: case OpKind::kCumSum: case OpKind::kTake:
          want = fb::OpOptions::AxisOptions;
          break;
        case OpKind::kSlice: want = fb::OpOptions::SliceOptions; break;
        case OpKind::kPad: want = fb::OpOptions::PadOptions; break;
        case OpKind::kDotGeneral: want = fb::OpOptions::DotGeneralOptions; break;
        case OpKind::kIota: want = fb::OpOptions::IotaOptions; break;
        case OpKind::kLayerNorm: want = fb::OpOptions::LayerNormOptions; break;
        case OpKind::kDimValue: want = fb::OpOptions::DimValueOptions; break;
        default:
          if (trace::IsReduce(n.op)) want = fb::OpOptions::ReduceOptions;
          break;
      }
      if (fn->options_type() != want || (want != fb::OpOptions::NONE && fn->options() == nullptr)) {
        Bad(where + " has options of the wrong kind");
      }
      switch (want) {
        case fb::OpOptions::ConstantOptions: a.buffer = static_cast<int32_t>(fn->options_as_ConstantOptions()->buffer()); break;
        case fb::OpOptions::ConvertOptions: a.dtype = dtype_of(fn->options_as_ConvertOptions()->dtype(), where); break;
        case fb::OpOptions::ShapeOptions: a.dims = shape_of(fn->options_as_ShapeOptions()->shape(), where); break;
        case fb::OpOptions::ReshapeOptions: {
          const fb::ReshapeOptions* o = fn->options_as_ReshapeOptions();
          a.dims = shape_of(o->shape(), where);
          if (o->infer_axis() >= 0) {
            if (static_cast<size_t>(o->infer_axis()) > a.dims.size()) Bad(where + " has a bad infer_axis");
            a.dims.insert(a.dims.begin() + o->infer_axis(), nullptr);
          } else if (o->infer_axis() != -1) {
            Bad(where + " has a bad infer_axis");
          }
          a.axis = o->infer_axis();
          break;
        }
        case fb::OpOptions::TransposeOptions: a.ints = ints_of(fn->options_as_TransposeOptions()->permutation(), where); break;
        case fb::OpOptions::AxisOptions: a.axis = fn->options_as_AxisOptions()->axis(); break;
        case fb::OpOptions::SliceOptions: {
          const fb::SliceOptions* o = fn->options_as_SliceOptions();
          a.dims = shape_of(o->start(), where);
          a.dims2 = shape_of(o->limit(), where);
          a.ints = ints_of(o->strides(), where);
          break;
        }
        case fb::OpOptions::PadOptions: {
          const fb::PadOptions* o = fn->options_as_PadOptions();
          a.dims = shape_of(o->low(), where);
          a.dims2 = shape_of(o->high(), where);
          a.fvalue = o->value();
          break;
        }
        case fb::OpOptions::ReduceOptions:
          a.ints = ints_of(fn->options_as_ReduceOptions()->axes(), where);
          a.keepdims = fn->options_as_ReduceOptions()->keepdims();
          if (a.ints.empty() && !n.operands.empty() && !p->value_type(n.operands[0]).shape.empty()) {
            Bad(where + " lists no axes");
          }
          break;
        case fb::OpOptions::DotGeneralOptions: {
          const fb::DotGeneralOptions* o = fn->options_as_DotGeneralOptions();
          a.dot.lhs_batch = ints_of(o->lhs_batch(), where);
          a.dot.rhs_batch = ints_of(o->rhs_batch(), where);
          a.dot.lhs_contracting = ints_of(o->lhs_contracting(), where);
          a.dot.rhs_contracting = ints_of(o->rhs_contracting(), where);
          break;
        }
        case fb::OpOptions::IotaOptions:
          a.dims = shape_of(fn->options_as_IotaOptions()->shape(), where);
          a.axis = fn->options_as_IotaOptions()->axis();
          a.dtype = n.type.dtype;
          break;
        case fb::OpOptions::LayerNormOptions:
          a.axis = fn->options_as_LayerNormOptions()->axis();
          a.fvalue = fn->options_as_LayerNormOptions()->epsilon();
          break;
        case fb::OpOptions::DimValueOptions: a.dims = {dim_at(fn->options_as_DimValueOptions()->dim(), where)}; break;
        default: break;
      }
      if (n.op == OpKind::kConstant) {
        if (!n.operands.empty()) Bad(where + " has operands");
        if (a.buffer < 0 || static_cast<size_t>(a.buffer) >= p->buffers_.size()) Bad(where + " refers to a missing buffer");
        uint64_t count = 1;
        for (const Expr* e : n.type.shape) {
          if (!e->IsConstant() || e->ConstantTerm() < 0) Bad(where + " has a non-constant or negative dimension");
          if (__builtin_mul_overflow(count, static_cast<uint64_t>(e->ConstantTerm()), &count)) Bad(where + " is too large");
        }
        uint64_t bytes;
        if (__builtin_mul_overflow(count, trace::DTypeSize(n.type.dtype), &bytes) ||
            bytes != p->buffers_[static_cast<size_t>(a.buffer)].size()) {
          Bad(where + " does not match the size of buffer " + std::to_string(a.buffer));
        }
      } else {
        std::vector<TensorType> types;
        for (int32_t o : n.operands) types.push_back(p->value_type(o));
        trace::Attrs check = a;
        TensorType t = trace::InferType(s, n.op, &check, types, trace::InferMode::kVerify);
        bool same = t.dtype == n.type.dtype && t.shape.size() == n.type.shape.size();
        for (size_t j = 0; same && j < t.shape.size(); ++j) {
          same = t.shape[j] == n.type.shape[j] ||
                 s->Compare(t.shape[j], dim::Cmp::kEq, n.type.shape[j]) == dim::Truth::kTrue;
        }
        if (!same) {
          Bad(where + " records the type " + trace::DTypeName(n.type.dtype) + s->ShapeToString(n.type.shape) +
              " but its operands give " + trace::DTypeName(t.dtype) + s->ShapeToString(t.shape));
        }
        a = check;
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
             st->input() == static_cast<uint32_t>(p->solve_[i].input) && st->axis() == p->solve_[i].axis;
    }
    if (!same) Bad("the solve recipe does not match the program's input shapes");
  } catch (const Error& e) {
    if (e.code() == Code::kInvalidProgram || e.code() == Code::kVersionMismatch || e.code() == Code::kOutOfMemory) {
      throw;
    }
    Bad(e.message());
  }
  return p;
}

}  // namespace program
}  // namespace shp
