// Program::Load: reads flatbuffers/program.fbs with the FlatBuffers verifier, then verifies
// every section semantically (a hostile file gives kInvalidProgram, never a crash, a hang or an
// unbounded allocation) and re-infers every node's type with its op's definition. This file
// holds the entry point and the first stages (limits, scope, dimension DAG, facts); the class
// and the other stages are in program_load.h and program_load_*.cc.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/limits.h"
#include "cc/dim/parse.h"  // IsValidVarName, QuoteForMessage
#include "cc/ops/limits.h"
#include "cc/program/program.h"
#include "cc/program/program_load.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

using dim::Expr;
using loading::Bad;
using loading::Len;
using loading::Quoted;

namespace {

// ---- Limits on what a loaded file may ask for (anything larger is kInvalidProgram): the
// limits table the builders enforce (cc/base/limits.h), so that whatever is created loads ----
constexpr size_t kMaxFileSize = size_t{1} << 31;  // FlatBuffers' own limit
using limits::kMaxDagEntries;
using limits::kMaxFactors;
using limits::kMaxFacts;
using limits::kMaxNodes;
using limits::kMaxPow;
using limits::kMaxTerms;
using limits::kMaxVariables;

}  // namespace

namespace loading {

void Bad(const std::string& msg) { throw Error(Code::kInvalidProgram, "invalid program: " + msg); }

std::string Quoted(const std::string& text) { return "'" + dim::QuoteForMessage(text) + "'"; }

void CheckName(const std::string& name, const std::string& where) {
  if (name.empty()) Bad(where + " has an empty name");
  if (name.find('\0') != std::string::npos)
    Bad(where + " has the name " + Quoted(name) + ", which contains a NUL byte");
  const std::string problem = trace::NameProblem(name);  // what tracing would reject
  if (!problem.empty()) Bad(where + " has the name " + Quoted(name) + ", which " + problem);
}

}  // namespace loading

void Program::Loader::RequireVersion(uint32_t v, const std::string& what) const {
  if (r->schema_version() < v) {
    Bad(what + ", a feature of schema version " + std::to_string(v) +
        ", but the file declares version " + std::to_string(r->schema_version()));
  }
}

void Program::Loader::CheckLimits() {
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
    Bad("too many inputs, outputs or nodes (the limit is " + std::to_string(kMaxNodes) + " each)");
  }
}

void Program::Loader::LoadScope() {
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

void Program::Loader::LoadDims() {
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
          Bad("dimension " + std::to_string(i) + " has the exponent " + std::to_string(d->value()) +
              " (it must be 2 to " + std::to_string(kMaxPow) + ")");
        }
        e = s->Pow(ops[0], d->value());
        break;
      default:
        Bad("dimension " + std::to_string(i) + " has an unknown operation");
    }
    if (dim::NumTerms(e) > kMaxTerms) {
      Bad("dimension " + std::to_string(i) + " is too large (" + std::to_string(dim::NumTerms(e)) +
          " terms; the limit is " + std::to_string(kMaxTerms) + ")");
    }
    dims[i] = e;
    add_ready_assertions(i + 1);
  }
}

void Program::Loader::CheckFacts() {
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

void Program::Loader::add_ready_assertions(size_t built) {
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
  // Metadata (v14), of the root table only: sizes checked before any string is copied.
  Metadata metadata;
  if (const auto* md = r->metadata()) {
    if (r->schema_version() < 14) {
      Bad("the program has metadata, a feature of schema version 14, but the file declares "
          "version " +
          std::to_string(r->schema_version()));
    }
    if (md->size() > limits::kMaxMetadataEntries) {
      Bad("the program has " + std::to_string(md->size()) + " metadata entries, at most " +
          std::to_string(limits::kMaxMetadataEntries) + " are allowed");
    }
    metadata.reserve(md->size());
    for (flatbuffers::uoffset_t i = 0; i < md->size(); ++i) {
      const fb::KeyValue* kv = md->Get(i);
      // (key and value are required: the verifier checked that they are present.)
      if (kv->key()->size() > limits::kMaxMetadataKeyBytes ||
          kv->value()->size() > limits::kMaxMetadataValueBytes) {
        Bad("metadata entry " + std::to_string(i) + ": its key has " +
            std::to_string(kv->key()->size()) + " bytes and its value " +
            std::to_string(kv->value()->size()) + ", at most " +
            std::to_string(limits::kMaxMetadataKeyBytes) + " and " +
            std::to_string(limits::kMaxMetadataValueBytes) + " are allowed");
      }
      std::string key = kv->key()->str(), value = kv->value()->str();
      const std::string problem = MetadataEntryProblem(key, value);
      if (!problem.empty()) Bad("metadata entry " + std::to_string(i) + ": " + problem);
      if (!metadata.empty() && !(metadata.back().first < key)) {
        Bad("metadata entry " + std::to_string(i) + ": the key " + loading::Quoted(key) +
            (metadata.back().first == key
                 ? " appears twice"
                 : " comes after " + loading::Quoted(metadata.back().first) +
                       " (keys must be unique and in increasing byte "
                       "order)"));
      }
      metadata.emplace_back(std::move(key), std::move(value));
    }
  }
  for (size_t v = 0; v < Len(r->variants()); ++v) {
    if (Len(r->variants()->Get(static_cast<flatbuffers::uoffset_t>(v))->metadata()) > 0)
      Bad("variant " + std::to_string(v + 1) + " has metadata (only the root program has)");
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
    p->metadata_ = std::move(metadata);
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
