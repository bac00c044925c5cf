// Program::Load: reads flatbuffers/program.fbs with the FlatBuffers verifier, then verifies
// every section semantically (a hostile file gives kInvalidProgram, never a crash, a hang or an
// unbounded allocation) and re-infers every node's type with its op's definition.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <set>

#include "cc/base/error.h"
#include "cc/base/limits.h"
#include "cc/dim/parse.h"  // IsValidVarName, QuoteForMessage
#include "cc/ops/limits.h"
#include "cc/ops/op_def.h"
#include "cc/program/program.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

namespace fb = ::shapepoly::fb;
using dim::Expr;
using trace::OpKind;
using trace::TensorType;

namespace {

// ---- Limits on what a loaded file may ask for (anything larger is kInvalidProgram): the
// limits table the builders enforce (cc/base/limits.h), so that whatever is created loads ----
constexpr size_t kMaxFileSize = size_t{1} << 31;  // FlatBuffers' own limit
using limits::kMaxDagEntries;
using limits::kMaxFactors;
using limits::kMaxFacts;
using limits::kMaxNodes;
using limits::kMaxOperands;
using limits::kMaxPow;
using limits::kMaxRank;
using limits::kMaxTerms;
using limits::kMaxVariables;

[[noreturn]] void Bad(const std::string& msg) {
  throw Error(Code::kInvalidProgram, "invalid program: " + msg);
}

template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// Text from the file, quoted for a message: NUL, control bytes and invalid UTF-8 become \xNN
// (messages are NUL-terminated UTF-8), and long text is cut.
std::string Quoted(const std::string& text) { return "'" + dim::QuoteForMessage(text) + "'"; }

// Names must survive the C API (NUL-terminated strings): the tracer can only make such names.
void CheckName(const std::string& name, const std::string& where) {
  if (name.empty()) Bad(where + " has an empty name");
  if (name.find('\0') != std::string::npos)
    Bad(where + " has the name " + Quoted(name) + ", which contains a NUL byte");
  const std::string problem = trace::NameProblem(name);  // what tracing would reject
  if (!problem.empty()) Bad(where + " has the name " + Quoted(name) + ", which " + problem);
}

}  // namespace

// Loads the sections of a verified buffer into a new Program, in dependency order: the scope
// (variables, constraints), the dimension DAG with the assertions, the constants, the inputs,
// the nodes, the outputs; then the solve recipe must be the one this library derives.
class Program::Loader {
 public:
  Loader(Program* p, const fb::Program* r, const LoadOptions& options)
      : p(p), r(r), options(options) {}

  // Everything that needs no inflation comes first; the constants are inflated last, once the
  // whole program is known to be valid and their declared sizes fit the cap.
  void Run() {
    CheckLimits();
    CheckBuffers();
    LoadScope();
    LoadDims();
    CheckFacts();
    LoadInputs();
    LoadNodes();
    CheckDerived();
    LoadOutputs();
    CheckSolveRecipe();
    InflateBuffers();
    CheckBoolConstants();
  }

 private:
  // A feature of schema version `v` in a file that declares an older one.
  void RequireVersion(uint32_t v, const std::string& what) {
    if (r->schema_version() < v) {
      Bad(what + ", a feature of schema version " + std::to_string(v) +
          ", but the file declares version " + std::to_string(r->schema_version()));
    }
  }

  // Counts beyond the limits above.
  void CheckLimits() {
    if (Len(r->dims()) > kMaxDagEntries) {
      Bad("too many dimension expressions (" + std::to_string(Len(r->dims())) +
          " DAG entries; the limit is " + std::to_string(kMaxDagEntries) + ")");
    }
    if (Len(r->variables()) > kMaxVariables) {
      Bad("too many variables (" + std::to_string(Len(r->variables())) + "; the limit is " +
          std::to_string(kMaxVariables) + ")");
    }
    const size_t facts = Len(r->constraints()) + Len(r->assertions()) + Len(r->derived());
    if (facts > kMaxFacts) {
      Bad("too many facts (" + std::to_string(facts) +
          " constraints, assertions, guards and derived facts; the limit is " +
          std::to_string(kMaxFacts) + ")");
    }
    if (Len(r->nodes()) > kMaxNodes || Len(r->inputs()) > kMaxNodes ||
        Len(r->outputs()) > kMaxNodes) {
      Bad("too many inputs, outputs or nodes (the limit is " + std::to_string(kMaxNodes) +
          " each)");
    }
  }

  // Variables and constraints: the program's scope.
  void LoadScope() {
    std::vector<dim::Scope::Declaration> decls;
    std::set<std::string> seen;
    for (size_t i = 0; i < Len(r->variables()); ++i) {
      const fb::Variable* v = r->variables()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string name = v->name()->str();
      if (!dim::IsValidVarName(name)) {
        Bad("variable " + std::to_string(i) + " has the name " + Quoted(name) +
            ", which is not a valid dimension variable name");
      }
      if (!seen.insert(name).second) Bad("variable '" + name + "' is listed twice");
      var_names.push_back(name);
      if (v->declared()) decls.push_back({name, v->lo(), v->hi()});
      if (v->unbacked() || v->origin()) {
        RequireVersion(5, "variable '" + name + "' is data-dependent");
        if (!v->unbacked() || !v->origin() || v->origin()->str().find('\0') != std::string::npos) {
          Bad("variable '" + name + "' has " +
              (v->unbacked() ? "no origin, or one with a NUL byte"
                             : "an origin but is not data-dependent"));
        }
        unbacked.emplace_back(name, v->origin()->str());
      }
    }
    std::vector<std::string> constraint_texts;
    for (size_t i = 0; i < Len(r->constraints()); ++i) {
      const fb::Fact* f = r->constraints()->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (!f->text()) Bad("constraint " + std::to_string(i) + " has no text");
      constraint_texts.push_back(f->text()->str());
    }
    p->scope_ = dim::Scope::Create(constraint_texts, decls);
    s = p->scope_.get();
    for (const auto& u : unbacked) s->MarkUnbacked(u.first, u.second);
    for (const std::string& name : var_names) var_map.push_back(s->Var(name)->AsVar());
  }

  // The DAG, with the assertions added as soon as their expressions exist.
  void LoadDims() {
    nd = Len(r->dims());
    dims.assign(nd, nullptr);
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
      // Messages are read back as NUL-terminated strings (shp_program_assertion_message).
      if (asserts[i]->message() && asserts[i]->message()->str().find('\0') != std::string::npos) {
        Bad("assertion " + std::to_string(i) +
            " has a message with a NUL byte: " + Quoted(asserts[i]->message()->str()));
      }
      if (asserts[i]->guard()) RequireVersion(3, "assertion " + std::to_string(i) + " is a guard");
      if (asserts[i]->origin() &&
          (!asserts[i]->guard() || asserts[i]->origin()->str().find('\0') != std::string::npos)) {
        Bad("assertion " + std::to_string(i) + " has an origin " +
            Quoted(asserts[i]->origin()->str()) +
            (asserts[i]->guard() ? " with a NUL byte" : " but is not a guard"));
      }
    }
    for (size_t i = 0; i < Len(r->derived()); ++i) {
      const fb::Fact* f = r->derived()->Get(static_cast<flatbuffers::uoffset_t>(i));
      RequireVersion(5, "derived fact " + std::to_string(i));
      if (f->lhs() >= nd || f->rhs() >= nd)
        Bad("derived fact " + std::to_string(i) + " refers to a missing dimension");
      if (static_cast<int8_t>(f->op()) < 0 || static_cast<int8_t>(f->op()) > 5)
        Bad("derived fact " + std::to_string(i) + " has an invalid comparison");
      derived.push_back(f);
    }
    add_ready_assertions(0);
    for (size_t i = 0; i < nd; ++i) {
      const fb::Dim* d = r->dims()->Get(static_cast<flatbuffers::uoffset_t>(i));
      size_t nops = Len(d->operands());
      if (nops > std::max(kMaxTerms, kMaxFactors)) {
        Bad("dimension " + std::to_string(i) + " has too many operands (" + std::to_string(nops) +
            "; the limit is " + std::to_string(std::max(kMaxTerms, kMaxFactors)) + ")");
      }
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
          if (d->value() < 2 || d->value() > kMaxPow) {
            Bad("dimension " + std::to_string(i) + " has the exponent " +
                std::to_string(d->value()) + " (it must be 2 to " + std::to_string(kMaxPow) + ")");
          }
          e = s->Pow(ops[0], d->value());
          break;
        default:
          Bad("dimension " + std::to_string(i) + " has an unknown operation");
      }
      if (dim::NumTerms(e) > kMaxTerms) {
        Bad("dimension " + std::to_string(i) + " is too large (" +
            std::to_string(dim::NumTerms(e)) + " terms; the limit is " + std::to_string(kMaxTerms) +
            ")");
      }
      dims[i] = e;
      add_ready_assertions(i + 1);
    }
  }

  // The parsed constraint texts must be the expressions of the DAG.
  void CheckFacts() {
    size_t ci = 0;
    for (const dim::Fact& f : s->facts()) {
      if (f.is_assertion || f.is_derived) continue;
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
        Bad("assertion " + std::to_string(ai) + " has the text " + Quoted(ff->text()->str()) +
            " but its expressions read '" + f.text + "'");
      }
      ++ai;
    }
  }

  const Expr* dim_at(uint32_t idx, const std::string& where) const {
    if (idx >= nd) Bad(where + " refers to a missing dimension");
    return dims[idx];
  }
  std::vector<const Expr*> shape_of(const flatbuffers::Vector<uint32_t>* v,
                                    const std::string& where) const {
    std::vector<const Expr*> out;
    if (Len(v) > kMaxRank) Bad(where + " has a rank above " + std::to_string(kMaxRank));
    for (size_t j = 0; j < Len(v); ++j)
      out.push_back(dim_at(v->Get(static_cast<flatbuffers::uoffset_t>(j)), where));
    return out;
  }
  std::vector<int64_t> ints_of(const flatbuffers::Vector<int64_t>* v,
                               const std::string& where) const {
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
  }
  trace::DType dtype_of(fb::DType t, const std::string& where) const {
    if (!trace::IsValidDType(static_cast<int8_t>(t))) Bad(where + " has an invalid dtype");
    return static_cast<trace::DType>(static_cast<int8_t>(t));
  }

  // The constants' declared sizes, before anything is allocated or inflated: the format's
  // limits, the caller's cap (options.max_bytes) per buffer and in total, a stored size that
  // matches, and a zlib size the stream could produce at all.
  void CheckBuffers() {
    const uint64_t cap = options.max_bytes;
    const std::string cap_text = "the load cap max_bytes = " + std::to_string(cap) +
                                 " bytes (LoadOptions::max_bytes, shp_load_options_set_max_bytes)";
    uint64_t total = 0;
    for (size_t i = 0; i < Len(r->buffers()); ++i) {
      const fb::Buffer* bf = r->buffers()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string where = "buffer " + std::to_string(i);
      uint64_t want = bf->size();
      size_t have = Len(bf->data());
      if (want > ops::kMaxConstantBytes) {
        Bad(where + " declares " + std::to_string(want) + " bytes, above the format's limit of " +
            std::to_string(ops::kMaxConstantBytes) + " bytes per constant");
      }
      if (want > cap)
        Bad(where + " declares " + std::to_string(want) + " bytes, above " + cap_text);
      total += want;  // at most 2^30 per buffer and fewer than 2^31 buffers: no overflow
      if (total > ops::kMaxTotalConstantBytes) {
        Bad("the constants declare more than the format's limit of " +
            std::to_string(ops::kMaxTotalConstantBytes) + " bytes in total (at buffer " +
            std::to_string(i) + ")");
      }
      if (total > cap) {
        Bad("the constants declare at least " + std::to_string(total) + " bytes (buffers 0.." +
            std::to_string(i) + "), above " + cap_text);
      }
      if (bf->compression() == fb::Compression::NONE) {
        if (have != want)
          Bad(where + " holds " + std::to_string(have) + " bytes but records " +
              std::to_string(want));
      } else if (bf->compression() == fb::Compression::ZLIB) {
        // zlib cannot expand more than ~1032:1; refuse sizes the stream cannot produce.
        if (want > uint64_t{have} * 1032 + 64)
          Bad(where + " records an impossible uncompressed size");
      } else {
        Bad(where + " has an unknown compression");
      }
      buffer_sizes.push_back(want);
    }
  }

  // The constants, checked by CheckBuffers: time and memory linear in the declared sizes.
  void InflateBuffers() {
    for (size_t i = 0; i < buffer_sizes.size(); ++i) {
      const fb::Buffer* bf = r->buffers()->Get(static_cast<flatbuffers::uoffset_t>(i));
      const uint64_t want = buffer_sizes[i];
      const size_t have = Len(bf->data());
      const Bytef* in = reinterpret_cast<const Bytef*>(bf->data() ? bf->data()->data() : nullptr);
      std::string out;
      if (bf->compression() == fb::Compression::NONE) {
        out.assign(reinterpret_cast<const char*>(in), have);
      } else {
        out.assign(static_cast<size_t>(want), '\0');
        uLongf got = static_cast<uLongf>(want);
        int rc = uncompress(reinterpret_cast<Bytef*>(want ? &out[0] : nullptr), &got, in,
                            static_cast<uLong>(have));
        if (rc == Z_MEM_ERROR) throw std::bad_alloc();  // not the file's fault
        if (want == 0 && rc == Z_BUF_ERROR) rc = Z_OK;
        if (rc != Z_OK || got != want) {
          Bad("buffer " + std::to_string(i) + " is not a valid zlib stream of " +
              std::to_string(want) + " bytes");
        }
      }
      p->buffers_.push_back(std::move(out));
    }
  }

  // Bool elements are one byte, 0 or 1, as tracing enforces: kernels compute and/or/not on the
  // bytes, so a 2 would make not(x) true and x true at once.
  void CheckBoolConstants() {
    for (size_t i = 0; i < p->inputs_.size(); ++i) {
      const Input& in = p->inputs_[i];
      if (in.default_buffer < 0 || in.type.dtype != trace::DType::kBool) continue;
      const std::string& bytes = p->buffers_[static_cast<size_t>(in.default_buffer)];
      for (size_t k = 0; k < bytes.size(); ++k) {
        if (static_cast<unsigned char>(bytes[k]) > 1) {
          Bad("input " + std::to_string(i) + " has a bool default with the byte " +
              std::to_string(static_cast<unsigned char>(bytes[k])) + " at element " +
              std::to_string(k) + " (bool elements must be 0 or 1)");
        }
      }
    }
    for (size_t i = 0; i < p->nodes_.size(); ++i) {
      const Node& n = p->nodes_[i];
      if (n.op != OpKind::kConstant || n.type.dtype != trace::DType::kBool) continue;
      const int32_t buffer = std::get<ops::ConstantAttrs>(n.attrs).buffer;
      const std::string& bytes = p->buffers_[static_cast<size_t>(buffer)];
      for (size_t k = 0; k < bytes.size(); ++k) {
        const unsigned char b = static_cast<unsigned char>(bytes[k]);
        if (b > 1) {
          Bad("node " + std::to_string(i) + " (%" + std::to_string(p->inputs_.size() + i) +
              ", a bool constant) has the byte " + std::to_string(b) + " at element " +
              std::to_string(k) + " of buffer " + std::to_string(buffer) +
              " (bool elements must be 0 or 1)");
        }
      }
    }
  }

  // Inputs: names, dtypes, shapes, roles.
  void LoadInputs() {
    std::set<std::string> names;
    for (size_t i = 0; i < Len(r->inputs()); ++i) {
      const fb::Input* fi = r->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string where = "input " + std::to_string(i);
      Input in;
      in.name = fi->name()->str();
      CheckName(in.name, where);
      if (!names.insert(in.name).second)
        Bad("the input name " + Quoted(in.name) + " is used twice");
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
        // The tracer names a dimension input after its variable.
        const std::string& var = var_names[static_cast<size_t>(fi->variable())];
        if (in.name != var) {
          Bad(where + " is named " + Quoted(in.name) + " but gives the variable '" + var +
              "' (a dimension input has its variable's name)");
        }
      } else if (fi->role() == fb::InputRole::DATA || fi->role() == fb::InputRole::PARAMETER ||
                 fi->role() == fb::InputRole::TANGENT || fi->role() == fb::InputRole::COTANGENT) {
        in.role = static_cast<InputRole>(fi->role());
        if (in.role != InputRole::kData)
          RequireVersion(2, where + " has the role " + fb::EnumNameInputRole(fi->role()));
        if (fi->variable() != -1) Bad(where + " is a data input but names a variable");
        // Only transformations derive names with '.' (the tracer refuses them in user names).
        const bool derived = in.role == InputRole::kTangent || in.role == InputRole::kCotangent;
        if (!derived && in.name.find(trace::kDerivedNameMark) != std::string::npos) {
          Bad(where + " has the name " + Quoted(in.name) + ": names with '" +
              trace::kDerivedNameMark + "' are reserved for tangent and cotangent inputs");
        }
        for (const Expr* e : in.type.shape) {
          if (s->Compare(e, dim::Cmp::kGe, s->Constant(0)) == dim::Truth::kFalse) {
            Bad(where + " has the negative dimension " + s->ToString(e));
          }
        }
      } else {
        Bad(where + " has an unknown role");
      }
      if (fi->default_buffer() != -1) {
        RequireVersion(2, where + " has a default value");
        if (in.role == InputRole::kDim) Bad(where + " is a dimension input with a default value");
        if (fi->default_buffer() < 0 ||
            static_cast<size_t>(fi->default_buffer()) >= buffer_sizes.size()) {
          Bad(where + " has a default in a missing buffer");
        }
        uint64_t bytes = trace::DTypeSize(in.type.dtype);
        for (const Expr* e : in.type.shape) {
          if (!e->IsConstant() || e->ConstantTerm() < 0)
            Bad(where + " has a default value but a non-constant shape");
          if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(e->ConstantTerm()), &bytes))
            Bad(where + " is too large");
        }
        if (bytes != buffer_sizes[static_cast<size_t>(fi->default_buffer())]) {
          Bad(where + " has a default of " +
              std::to_string(buffer_sizes[static_cast<size_t>(fi->default_buffer())]) +
              " bytes but its dtype and shape need " + std::to_string(bytes));
        }
        in.default_buffer = fi->default_buffer();
      } else if (in.role == InputRole::kParameter) {
        Bad(where + " is a parameter without a default value");
      }
      p->inputs_.push_back(std::move(in));
    }
  }

  // Nodes: decoded with their op's definition, then every type re-inferred.
  void LoadNodes() {
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
      RequireVersion(OpSchemaVersion(n.op), where + " is an operation");
      for (size_t j = 0; j < Len(fn->operands()); ++j) {
        uint32_t o = fn->operands()->Get(static_cast<flatbuffers::uoffset_t>(j));
        if (o >= id) Bad(where + " uses %" + std::to_string(o) + ", which does not come before it");
        n.operands.push_back(static_cast<int32_t>(o));
      }
      if (Len(fn->operands()) > kMaxOperands) {
        Bad(where + " has too many operands (the limit is " + std::to_string(kMaxOperands) + ")");
      }
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
        if (buffer < 0 || static_cast<size_t>(buffer) >= buffer_sizes.size())
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
            bytes != buffer_sizes[static_cast<size_t>(buffer)]) {
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
  }

  // Derived facts are never checked at run time (they hold by construction of the
  // data-dependent ops), so the file is not trusted with them: each must be the bound that a
  // node producing its variable guarantees, re-derived here from the node's operands
  // (OpDef::UnbackedBound). An edited bound (u0 <= 1 for nonzero's u0 <= 4*n) would make
  // variable_bounds, cost_bounds and output_dim_bounds report too little.
  void CheckDerived() {
    struct Guaranteed {
      const Expr* var;
      const Expr* bound;
      size_t node;
    };
    std::vector<Guaranteed> guaranteed;
    for (size_t i = 0; i < p->nodes_.size(); ++i) {
      const Node& n = p->nodes_[i];
      const ops::OpDef& def = ops::Def(n.op);
      const Expr* u = def.UnbackedSize(n.attrs);
      if (u == nullptr) continue;
      std::vector<TensorType> types;
      for (int32_t o : n.operands) types.push_back(p->value_type(o));
      ops::InferContext c(s, n.op, types, ops::InferMode::kVerify);
      const Expr* bound = def.UnbackedBound(c);
      if (bound != nullptr) guaranteed.push_back({u, bound, i});
    }
    for (size_t i = 0; i < derived.size(); ++i) {
      const fb::Fact* f = derived[i];
      const Expr* lhs = dims[f->lhs()];
      const Expr* rhs = dims[f->rhs()];
      const dim::Cmp op = static_cast<dim::Cmp>(f->op());
      const Guaranteed* producer = nullptr;
      bool found = false;
      for (const Guaranteed& g : guaranteed) {
        if (g.var != lhs) continue;
        producer = &g;
        found = found || (op == dim::Cmp::kLe && g.bound == rhs);
      }
      if (found) continue;
      const std::string text = s->ToString(lhs) + " " + dim::CmpSymbol(op) + " " + s->ToString(rhs);
      std::string why;
      if (producer != nullptr) {
        const size_t id = p->inputs_.size() + producer->node;
        why = "node " + std::to_string(producer->node) + " (%" + std::to_string(id) + " " +
              OpName(p->nodes_[producer->node].op) + ") guarantees '" + s->ToString(lhs) +
              " <= " + s->ToString(producer->bound) + "'";
      } else {
        why =
            "no data-dependent operation of the program guarantees a bound on " + s->ToString(lhs);
      }
      Bad("derived fact " + std::to_string(i) + " ('" + text +
          "') is not a bound the program's operations guarantee: " + why +
          " (derived facts are never checked at run time, so the loader re-derives them)");
    }
  }

  // Outputs: names and values.
  void LoadOutputs() {
    std::set<std::string> names;
    for (size_t i = 0; i < Len(r->outputs()); ++i) {
      const fb::Output* fo = r->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      Output o;
      o.name = fo->name()->str();
      CheckName(o.name, "output " + std::to_string(i));
      if (!names.insert(o.name).second) Bad("the output name " + Quoted(o.name) + " is used twice");
      if (fo->value() >= p->num_values())
        Bad("output " + Quoted(o.name) + " refers to a missing value");
      o.value = static_cast<int32_t>(fo->value());
      const std::string where = "output " + std::to_string(i);
      switch (fo->role()) {
        case fb::OutputRole::PRIMAL:
          if (o.name.find(trace::kDerivedNameMark) != std::string::npos) {
            Bad(where + " has the name " + Quoted(o.name) + ": names with '" +
                trace::kDerivedNameMark + "' are reserved for derived outputs");
          }
          break;
        case fb::OutputRole::TANGENT:
        case fb::OutputRole::GRAD:
          RequireVersion(2, where + " has the role " + fb::EnumNameOutputRole(fo->role()));
          break;
        default:
          Bad(where + " has an unknown role");
      }
      o.role = static_cast<OutputRole>(fo->role());
      p->outputs_.push_back(std::move(o));
    }
  }

  // The stored solve recipe must be the one this library derives.
  void CheckSolveRecipe() {
    p->Finalize();
    bool same = Len(r->solve()) == p->solve_.size();
    for (size_t i = 0; same && i < p->solve_.size(); ++i) {
      const fb::SolveStep* st = r->solve()->Get(static_cast<flatbuffers::uoffset_t>(i));
      same = st->variable() < var_map.size() && var_map[st->variable()] == p->solve_[i].var &&
             st->input() == static_cast<uint32_t>(p->solve_[i].input) &&
             st->axis() == p->solve_[i].axis;
    }
    if (!same) Bad("the solve recipe does not match the program's input shapes");
  }

  // Entries [0, built) of the DAG exist: adds the assertions whose sides are among them.
  void add_ready_assertions(size_t built) {
    while (next_assert < asserts.size() && asserts[next_assert]->lhs() < built &&
           asserts[next_assert]->rhs() < built) {
      const fb::Fact* f = asserts[next_assert];
      const std::string message = f->message() ? f->message()->str() : std::string();
      if (f->guard()) {
        s->AddGuard(dims[f->lhs()], static_cast<dim::Cmp>(f->op()), dims[f->rhs()], message,
                    f->origin() ? f->origin()->str() : std::string());
      } else {
        s->Check(dims[f->lhs()], static_cast<dim::Cmp>(f->op()), dims[f->rhs()], message);
      }
      ++next_assert;
    }
    while (next_derived < derived.size() && derived[next_derived]->lhs() < built &&
           derived[next_derived]->rhs() < built) {
      const fb::Fact* f = derived[next_derived];
      s->AddDerived(dims[f->lhs()], static_cast<dim::Cmp>(f->op()), dims[f->rhs()]);
      ++next_derived;
    }
  }

  Program* p;
  const fb::Program* r;
  const LoadOptions& options;
  std::vector<uint64_t> buffer_sizes;  // declared, checked by CheckBuffers
  dim::Scope* s = nullptr;
  std::vector<std::string> var_names;  // by index in the file
  std::vector<int32_t> var_map;        // file variable index -> scope variable
  size_t nd = 0;                       // DAG entries
  std::vector<const Expr*> dims;       // the DAG
  std::vector<const fb::Fact*> asserts;
  size_t next_assert = 0;
  std::vector<const fb::Fact*> derived;  // the data-dependent ops' bounds
  size_t next_derived = 0;
  std::vector<std::pair<std::string, std::string>> unbacked;  // name, origin
};

std::unique_ptr<Program> Program::Load(const void* data, size_t size, const LoadOptions& options) {
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
                    " (written by " +
                    (r->producer() ? Quoted(r->producer()->str()) : std::string("'?'")) +
                    "); upgrade libshapepoly");
  }
  // One cap for the constants of every variant together.
  if (Len(r->variants()) > kMaxVariants - 1) {
    Bad("the program has " + std::to_string(Len(r->variants()) + 1) + " variants, at most " +
        std::to_string(kMaxVariants) + " are allowed");
  }
  // (A single table's loader checks its own constants with more precise messages.)
  uint64_t declared = 0;
  for (size_t v = 0; Len(r->variants()) > 0 && v <= Len(r->variants()); ++v) {
    const fb::Program* t =
        v == 0 ? r : r->variants()->Get(static_cast<flatbuffers::uoffset_t>(v - 1));
    for (size_t i = 0; i < Len(t->buffers()); ++i) {
      declared +=
          std::min<uint64_t>(t->buffers()->Get(static_cast<flatbuffers::uoffset_t>(i))->size(),
                             ops::kMaxTotalConstantBytes + 1);
      if (declared > options.max_bytes) {
        Bad("the constants of the variants declare more than the load cap max_bytes = " +
            std::to_string(options.max_bytes) + " bytes (LoadOptions::max_bytes) together");
      }
    }
  }
  std::unique_ptr<Program> p(new Program());
  try {
    Loader(p.get(), r, options).Run();
    std::vector<std::shared_ptr<const Program>> more;
    for (size_t v = 0; v < Len(r->variants()); ++v) {
      const fb::Program* t = r->variants()->Get(static_cast<flatbuffers::uoffset_t>(v));
      const std::string where = "variant " + std::to_string(v + 1);
      if (r->schema_version() < 3) {
        Bad("the program has variants, a feature of schema version 3, but the file declares "
            "version " +
            std::to_string(r->schema_version()));
      }
      if (t->schema_version() != r->schema_version()) {
        Bad(where + " declares schema version " + std::to_string(t->schema_version()) +
            ", the program " + std::to_string(r->schema_version()));
      }
      if (Len(t->variants()) > 0) Bad(where + " has variants of its own");
      std::unique_ptr<Program> q(new Program());
      try {
        Loader(q.get(), t, options).Run();
      } catch (const Error& e) {
        if (e.code() != Code::kInvalidProgram) throw;
        const std::string prefix = "invalid program: ";
        const std::string& m = e.message();
        Bad(where + ": " +
            (m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m));
      }
      more.push_back(std::shared_ptr<const Program>(q.release()));
    }
    if (!more.empty()) p->AttachVariants(std::move(more));
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
