// The values of a loaded program (Program::Loader, program_load.h): its inputs, its nodes
// (decoded by their op's definition, every type re-inferred), the derived facts re-derived from
// the nodes, its outputs, and the solve recipe, which must be the one this library derives.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/limits.h"
#include "cc/ops/op_def.h"
#include "cc/program/program.h"
#include "cc/program/program_load.h"
#include "cc/program/subprogram.h"
#include "flatbuffers/program_generated.h"

namespace shp {
namespace program {

using dim::Expr;
using limits::kMaxOperands;
using limits::kMaxRank;
using loading::Bad;
using loading::CheckName;
using loading::Len;
using loading::Quoted;
using trace::OpKind;
using trace::TensorType;

const Expr* Program::Loader::dim_at(uint32_t idx, const std::string& where) const {
  if (idx >= nd) Bad(where + " refers to a missing dimension");
  return dims[idx];
}

std::vector<const Expr*> Program::Loader::shape_of(const flatbuffers::Vector<uint32_t>* v,
                                                   const std::string& where) const {
  std::vector<const Expr*> out;
  if (Len(v) > kMaxRank) Bad(where + " has a rank above " + std::to_string(kMaxRank));
  for (size_t j = 0; j < Len(v); ++j)
    out.push_back(dim_at(v->Get(static_cast<flatbuffers::uoffset_t>(j)), where));
  return out;
}

std::vector<int64_t> Program::Loader::ints_of(const flatbuffers::Vector<int64_t>* v,
                                              const std::string& where) const {
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
}

trace::DType Program::Loader::dtype_of(fb::DType t, const std::string& where) const {
  if (!trace::IsValidDType(static_cast<int8_t>(t))) Bad(where + " has an invalid dtype");
  const trace::DType d = static_cast<trace::DType>(static_cast<int8_t>(t));
  if (trace::IsNarrow(d)) RequireVersion(9, where + " has the element type " + trace::DTypeName(d));
  return d;
}

void Program::Loader::LoadInputs() {
  std::set<std::string> names;
  for (size_t i = 0; i < Len(r->inputs()); ++i) {
    const fb::Input* fi = r->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    std::string where = "input " + std::to_string(i);
    Input in;
    in.name = fi->name()->str();
    CheckName(in.name, where);
    if (!names.insert(in.name).second) Bad("the input name " + Quoted(in.name) + " is used twice");
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
    if (fi->has_default_fill()) {
      RequireVersion(11, where + " has a fill default");
      if (in.role == InputRole::kDim) Bad(where + " is a dimension input with a fill default");
      if (in.default_buffer >= 0) Bad(where + " has both a default value and a fill default");
      const std::string problem = trace::FillProblem(in.type.dtype, fi->default_fill());
      if (!problem.empty()) Bad(where + ": the fill default " + problem);
      in.has_fill = true;
      in.fill = fi->default_fill() + 0.0;
    } else if (fi->default_fill() != 0) {
      Bad(where + " has a fill value but no fill default");
    }
    p->inputs_.push_back(std::move(in));
  }
}

void Program::Loader::LoadSubprograms() {
  const size_t n = Len(r->subprograms());
  if (n == 0) return;
  RequireVersion(10, "the program has subprograms");
  if (options.depth + 1 > kMaxSubprogramDepth) {
    Bad("subprograms are nested more than " + std::to_string(kMaxSubprogramDepth) + " deep");
  }
  if (n > limits::kMaxNodes) Bad("the program has too many subprograms");
  uint64_t used = 0;
  for (uint64_t b : buffer_sizes) used += b;
  for (size_t i = 0; i < n; ++i) {
    const fb::Subprogram* f = r->subprograms()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const std::string where = "subprogram " + std::to_string(i);
    if (f->program() == nullptr) Bad(where + " is empty");
    LoadOptions sub;
    sub.depth = options.depth + 1;
    sub.max_bytes = used >= options.max_bytes ? 0 : options.max_bytes - used;
    std::shared_ptr<const Program> q;
    try {
      q = Program::Load(f->program()->data(), f->program()->size(), sub);
    } catch (const Error& e) {
      if (e.code() != Code::kInvalidProgram) throw;
      const std::string prefix = "invalid program: ";
      const std::string& m = e.message();
      Bad(where + ": " + (m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m));
    }
    used += q->constant_bytes();
    try {
      subprograms.push_back(std::make_shared<ProgramBody>(q));
    } catch (const Error& e) {
      Bad(where + ": " + e.message());
    }
  }
}

void Program::Loader::LoadNodes() {
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
      reader.subprogram = [&](uint32_t i) {
        if (i >= subprograms.size()) {
          Bad(where + " refers to subprogram " + std::to_string(i) + ", which the program lacks");
        }
        return subprograms[i];
      };
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
            s->ShapeToString(n.type.shape) + " but its operands give " + trace::DTypeName(t.dtype) +
            s->ShapeToString(t.shape));
      }
      n.attrs = std::move(check);
    }
    p->nodes_.push_back(std::move(n));
  }
}

void Program::Loader::CheckDerived() {
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
      why = "no data-dependent operation of the program guarantees a bound on " + s->ToString(lhs);
    }
    Bad("derived fact " + std::to_string(i) + " ('" + text +
        "') is not a bound the program's operations guarantee: " + why +
        " (derived facts are never checked at run time, so the loader re-derives them)");
  }
}

void Program::Loader::LoadOutputs() {
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

void Program::Loader::CheckSolveRecipe() {
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

}  // namespace program
}  // namespace shp
