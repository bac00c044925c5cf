#include "cc/program/program.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "cc/base/error.h"
#include "cc/dim/parse.h"
#include "cc/dim/eval.h"
#include "cc/dim/solve.h"
#include "cc/ops/op_def.h"
#include "cc/ops/op_list.h"
#include "cc/program/subprogram.h"

namespace shp {
namespace program {

using dim::Expr;
using trace::OpKind;
using trace::TensorType;

Program::Program() = default;
Program::~Program() = default;

const TensorType& Program::value_type(int32_t v) const {
  size_t i = static_cast<size_t>(v);
  return i < inputs_.size() ? inputs_[i].type : nodes_[i - inputs_.size()].type;
}

uint32_t OpSchemaVersion(ops::OpKind op) {
#define SHP_OP_SINCE_CASE(Name, version) \
  case OpKind::k##Name:                  \
    return version;
  switch (op) { SHP_OP_SCHEMA_VERSIONS(SHP_OP_SINCE_CASE) }
#undef SHP_OP_SINCE_CASE
  return SHP_NEWEST_OP_SCHEMA_VERSION;  // not reached: every OpKind has a row
}

uint32_t Program::SchemaVersionNeeded() const {
  uint32_t v = OwnSchemaVersionNeeded();
  if (!more_variants_.empty()) v = std::max<uint32_t>(v, 3);  // variants: version 3
  // Every variant table declares the program's version, so the newest feature of any decides.
  for (const auto& variant : more_variants_) v = std::max(v, variant->OwnSchemaVersionNeeded());
  if (!metadata_.empty()) v = std::max<uint32_t>(v, 14);  // metadata (of the root): version 14
  return v;
}

uint32_t Program::OwnSchemaVersionNeeded() const {
  uint32_t v = 1;
  if (!guard_texts_.empty()) v = 3;
  // An op newer than version 1 (a reader of an older version does not know it).
  for (const Node& n : nodes_) v = std::max(v, OpSchemaVersion(n.op));
  // A cond whose result sizes differ between its branches: ControlFlowOptions.sizes (v13).
  for (const Node& n : nodes_) {
    const auto* cf = std::get_if<ops::ControlFlowAttrs>(&n.attrs);
    if (cf != nullptr && !cf->sizes.empty()) v = std::max<uint32_t>(v, 13);
  }
  // The narrow element types: version 9 (a conversion or constant of one has a value of it).
  for (const Node& n : nodes_) {
    if (trace::IsNarrow(n.type.dtype)) v = std::max<uint32_t>(v, 9);
  }
  for (const Input& in : inputs_) {
    if (trace::IsNarrow(in.type.dtype)) v = std::max<uint32_t>(v, 9);
    if (in.role != InputRole::kData && in.role != InputRole::kDim) v = std::max<uint32_t>(v, 2);
    if (in.default_buffer >= 0) v = std::max<uint32_t>(v, 2);
    if (in.has_fill) v = std::max<uint32_t>(v, 11);
  }
  for (const Output& o : outputs_) {
    if (o.role != OutputRole::kPrimal) v = std::max<uint32_t>(v, 2);
  }
  return v;
}

// ---- Solve recipe: which dimension determines which variable (dim::SolvableVar) ----

void Program::ComputeSolveRecipe() {
  const dim::Scope& s = *scope_;
  size_t nv = s.variables().size();
  std::vector<bool> known(nv, false);
  solve_.clear();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].role != InputRole::kDim) continue;
    size_t v = static_cast<size_t>(inputs_[i].var);
    if (known[v]) {
      throw Error(Code::kInvalidArgument, "program: the dimension variable '" +
                                              s.VarName(inputs_[i].var) +
                                              "' is given by two inputs");
    }
    known[v] = true;
    solve_.push_back(SolveStep{inputs_[i].var, static_cast<int32_t>(i), -1});
  }
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      // (An input with a fill default never: a run may leave it out.)
      if (inputs_[i].role != InputRole::kData || inputs_[i].has_fill) continue;
      const std::vector<const Expr*>& sh = inputs_[i].type.shape;
      for (size_t j = 0; j < sh.size(); ++j) {
        int32_t v = dim::SolvableVar(s, sh[j], known);
        if (v < 0 || known[static_cast<size_t>(v)]) continue;
        known[static_cast<size_t>(v)] = true;
        solve_.push_back(SolveStep{v, static_cast<int32_t>(i), static_cast<int32_t>(j)});
        progress = true;
      }
    }
  }
  // A fill default takes its shape from the variables the other inputs determine.
  for (const Input& in : inputs_) {
    if (!in.has_fill) continue;
    for (const Expr* e : in.type.shape) {
      for (int32_t v : s.VarsOf(e)) {
        if (known[static_cast<size_t>(v)]) continue;
        throw Error(Code::kInvalidArgument,
                    "program: input '" + in.name +
                        "' cannot have a fill default: its shape uses the variable '" +
                        s.VarName(v) +
                        "', which no other input determines (a run that leaves the input out "
                        "could not know its shape)");
      }
    }
  }
  // Every variable of the program's shapes must be known.
  std::set<int32_t> used;
  auto use = [&](const Expr* e) {
    if (e == nullptr) return;
    for (int32_t v : s.VarsOf(e)) used.insert(v);
  };
  for (const Input& in : inputs_) {
    for (const Expr* e : in.type.shape) use(e);
    if (in.var >= 0) used.insert(in.var);
  }
  for (const Node& n : nodes_) {
    for (const Expr* e : n.type.shape) use(e);
    ops::ForEachDim(n.attrs, use);
  }
  std::string missing;
  int count = 0;
  for (int32_t v : used) {
    if (known[static_cast<size_t>(v)] || UnbackedProducer(v) >= 0) continue;
    if (s.IsUnbacked(v)) {
      throw Error(Code::kInvalidProgram,
                  "program: no node produces the data-dependent size '" + s.VarName(v) + "'");
    }
    missing += (missing.empty() ? "'" : ", '") + s.VarName(v) + "'";
    ++count;
  }
  if (count) {
    throw Error(
        Code::kUnsolvable,
        "program: cannot determine the dimension variable" + std::string(count > 1 ? "s " : " ") +
            missing +
            " from the input shapes (a variable is found from an input dimension that is linear in "
            "it, a "
            "product with known factors, a perfect power, or max/min with a known operand). Make " +
            (count > 1 ? "them" : "it") + " appear that way in an input's shape, or pass " +
            (count > 1 ? "each" : "it") + " as a named integer input (shp_tensor_dim_input)");
  }
  used_vars_.assign(used.begin(), used.end());
}

// ---- Printing ----

namespace {

// Appends "f32[batch, 32]" (Program::TypeString) to *out.
void AppendType(const dim::Scope& s, const TensorType& t, std::string* out) {
  *out += trace::DTypeName(t.dtype);
  *out += '[';
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) *out += ", ";
    *out += s.ToString(t.shape[i]);
  }
  *out += ']';
}

}  // namespace

std::string Program::TypeString(const TensorType& t) const {
  std::string out;
  AppendType(*scope_, t, &out);
  return out;
}

void Program::CollectSubprograms() {
  subprograms_.clear();
  for (const Node& n : nodes_) {
    const auto* a = std::get_if<ops::ControlFlowAttrs>(&n.attrs);
    if (a == nullptr) continue;
    for (const auto& b : a->bodies) {
      if (std::find(subprograms_.begin(), subprograms_.end(), b) == subprograms_.end())
        subprograms_.push_back(b);
    }
  }
}

uint64_t Program::constant_bytes() const {
  uint64_t total = 0;
  for (const std::string& b : buffers_) total += b.size();
  for (const auto& s : subprograms_) {
    const auto* body = dynamic_cast<const ProgramBody*>(s.get());
    if (body != nullptr) total += body->program().constant_bytes();
  }
  for (const auto& v : more_variants_) total += v->constant_bytes();
  return total;
}

uint32_t Program::subprogram_depth() const {
  uint32_t d = 0;
  for (const auto& s : subprograms_) {
    const auto* body = dynamic_cast<const ProgramBody*>(s.get());
    if (body != nullptr) d = std::max(d, 1 + body->program().subprogram_depth());
  }
  for (const auto& v : more_variants_) d = std::max(d, v->subprogram_depth());
  return d;
}

std::string Program::AttrString(const Node& n) const {
  ops::AttrPrinter printer;
  printer.dim = [&](const Expr* e) { return scope_->ToString(e); };
  printer.subprogram = [&](const ops::Subprogram& b) {
    for (size_t i = 0; i < subprograms_.size(); ++i) {
      if (subprograms_[i].get() == &b) return "#" + std::to_string(i);
    }
    return std::string("#?");
  };
  return ops::Def(n.op).AttrText(printer, n.attrs);
}

void Program::Finalize() {
  CollectSubprograms();
  ComputeUnbacked();
  ComputeSolveRecipe();
  ComputeLockFreeCheck();
  const dim::Scope& s = *scope_;
  input_shapes_.clear();
  output_shapes_.clear();
  for (const Input& in : inputs_) input_shapes_.push_back(s.ShapeToString(in.type.shape));
  for (const Output& o : outputs_)
    output_shapes_.push_back(s.ShapeToString(value_type(o.value).shape));
  constraint_texts_.clear();
  assertion_texts_.clear();
  assertion_messages_.clear();
  guard_texts_.clear();
  guard_messages_.clear();
  guard_origins_.clear();
  derived_texts_.clear();
  for (const dim::Fact& f : s.facts()) {
    if (f.is_derived) {
      derived_texts_.push_back(f.text);
    } else if (f.is_guard) {
      guard_texts_.push_back(f.text);
      guard_messages_.push_back(f.message);
      guard_origins_.push_back(f.origin);
    } else if (f.is_assertion) {
      assertion_texts_.push_back(f.text);
      assertion_messages_.push_back(f.message);
    } else {
      constraint_texts_.push_back(f.text);
    }
  }
  var_names_.clear();
  for (int32_t v : used_vars_) var_names_.push_back(s.VarName(v));
  own_text_ = Listing();
  text_ = own_text_;
  ComputeCoverage();
}

std::string Program::Listing() const {
  const dim::Scope& s = *scope_;
  // Appended piece by piece where it has a line per input, node or output.
  std::string t = "program(";
  t.reserve(64 * (2 * inputs_.size() + nodes_.size() + outputs_.size()) + 256);  // a guess
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (i) t += ", ";
    t += inputs_[i].name;
    t += ": ";
    AppendType(s, inputs_[i].type, &t);
  }
  t += ") -> (";
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (i) t += ", ";
    t += outputs_[i].name;
    t += ": ";
    AppendType(s, value_type(outputs_[i].value), &t);
  }
  t += ")\n";
  if (!used_vars_.empty()) {
    t += "variables:\n";
    for (const SolveStep& st : solve_) {
      const dim::Variable& var = s.variables()[static_cast<size_t>(st.var)];
      std::string range = var.hi == dim::kPosInf ? var.name + " >= " + std::to_string(var.lo)
                                                 : std::to_string(var.lo) + " <= " + var.name +
                                                       " <= " + std::to_string(var.hi);
      if (var.lo == dim::kNegInf)
        range = var.hi == dim::kPosInf ? var.name : var.name + " <= " + std::to_string(var.hi);
      const Input& in = inputs_[static_cast<size_t>(st.input)];
      t += "  " + range + "  (" +
           (st.axis < 0 ? "given by input '" + in.name + "'"
                        : "from input '" + in.name + "' axis " + std::to_string(st.axis) + " = " +
                              s.ToString(in.type.shape[static_cast<size_t>(st.axis)])) +
           ")\n";
    }
  }
  for (int32_t v : used_vars_) {
    const int32_t node = UnbackedProducer(v);
    if (node < 0) continue;
    const dim::Variable& var = s.variables()[static_cast<size_t>(v)];
    std::string range = var.hi == dim::kPosInf ? var.name + " >= " + std::to_string(var.lo)
                                               : std::to_string(var.lo) + " <= " + var.name +
                                                     " <= " + std::to_string(var.hi);
    t += "  " + range + "  (data-dependent: " + var.origin + ", computed by %" +
         std::to_string(inputs_.size() + static_cast<size_t>(node)) + ")\n";
  }
  if (!derived_texts_.empty()) {
    t += "bounds of data-dependent sizes:\n";
    for (const std::string& d : derived_texts_) t += "  " + d + "\n";
  }
  if (!constraint_texts_.empty()) {
    t += "constraints:\n";
    for (const std::string& c : constraint_texts_) t += "  " + c + "\n";
  }
  if (!assertion_texts_.empty()) {
    t += "assertions:\n";
    for (size_t i = 0; i < assertion_texts_.size(); ++i) {
      t += "  " + assertion_texts_[i] +
           (assertion_messages_[i].empty() ? "" : "  \"" + assertion_messages_[i] + "\"") + "\n";
    }
  }
  if (!guard_texts_.empty()) {
    t += "guards:\n";
    for (size_t i = 0; i < guard_texts_.size(); ++i) {
      t += "  " + guard_texts_[i] +
           (guard_messages_[i].empty() ? "" : "  \"" + guard_messages_[i] + "\"") +
           (guard_origins_[i].empty() ? "" : "  (from " + guard_origins_[i] + ")") + "\n";
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    std::string role;
    switch (in.role) {
      case InputRole::kDim:
        role = " (dimension variable " + s.VarName(in.var) + ")";
        break;
      case InputRole::kParameter:
        role = " (parameter)";
        break;
      case InputRole::kTangent:
        role = " (tangent)";
        break;
      case InputRole::kCotangent:
        role = " (cotangent)";
        break;
      case InputRole::kData:
        break;
    }
    if (in.default_buffer >= 0) role += " with a default";
    if (in.has_fill) role += " with the default fill " + trace::FillText(in.fill);
    t += '%';
    t += std::to_string(i);
    t += " = input '";
    t += in.name;
    t += '\'';
    t += role;
    t += " : ";
    AppendType(s, in.type, &t);
    t += '\n';
  }
  ops::AttrPrinter printer;  // as AttrString's
  printer.dim = [&](const Expr* e) { return s.ToString(e); };
  printer.subprogram = [&](const ops::Subprogram& b) {
    for (size_t i = 0; i < subprograms_.size(); ++i) {
      if (subprograms_[i].get() == &b) return "#" + std::to_string(i);
    }
    return std::string("#?");
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    t += '%';
    t += std::to_string(inputs_.size() + i);
    t += " = ";
    t += OpName(n.op);
    t += '(';
    for (size_t j = 0; j < n.operands.size(); ++j) {
      t += j ? ", %" : "%";
      t += std::to_string(n.operands[j]);
    }
    t += ')';
    t += ops::Def(n.op).AttrText(printer, n.attrs);
    t += " : ";
    AppendType(s, n.type, &t);
    t += '\n';
  }
  for (const Output& o : outputs_) {
    const char* role = o.role == OutputRole::kTangent ? " (tangent)"
                       : o.role == OutputRole::kGrad  ? " (grad)"
                                                      : "";
    t += "output '";
    t += o.name;
    t += '\'';
    t += role;
    t += " = %";
    t += std::to_string(o.value);
    t += '\n';
  }
  for (size_t i = 0; i < subprograms_.size(); ++i) {
    t += "subprogram #" + std::to_string(i) + ":\n";
    const std::string& body = subprograms_[i]->Text();
    size_t pos = 0;
    while (pos < body.size()) {
      size_t end = body.find('\n', pos);
      if (end == std::string::npos) end = body.size();
      t += "  " + body.substr(pos, end - pos) + "\n";
      pos = end + 1;
    }
  }
  return t;
}

// ---- Checking concrete shapes ----

namespace {

// Throws kOverflow when an array of this shape and dtype cannot exist: its byte size does not
// fit in int64 (a zero extent makes any shape fine). Mirrors what the runtime refuses.
void CheckByteSize(const std::vector<int64_t>& shape, trace::DType dtype, const std::string& what) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  int64_t bytes = static_cast<int64_t>(trace::DTypeSize(dtype));
  for (int64_t d : shape) {
    if (d > 0 && __builtin_mul_overflow(bytes, d, &bytes)) {
      std::string dims;
      for (int64_t e : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(e);
      throw Error(Code::kOverflow,
                  what + " of shape (" + dims + ") would need more than 2^63-1 bytes");
    }
  }
}

}  // namespace

ShapeCheck Program::CheckShapesOwn(const std::vector<std::string>& names,
                                   const std::vector<std::vector<int64_t>>& shapes,
                                   bool check_facts) const {
  if (names.size() != shapes.size())
    throw Error(Code::kInvalidArgument, "check: names and shapes differ in number");
  std::vector<int32_t> given(inputs_.size(), -1);
  for (size_t k = 0; k < names.size(); ++k) {
    int32_t found = -1;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].name == names[k]) found = static_cast<int32_t>(i);
    }
    if (found < 0) {
      std::string all;
      for (const Input& in : inputs_) all += (all.empty() ? "'" : ", '") + in.name + "'";
      throw Error(Code::kNotFound, "the program has no input named '" +
                                       dim::QuoteForMessage(names[k]) +
                                       "' (its inputs: " + (all.empty() ? "none" : all) + ")");
    }
    if (given[static_cast<size_t>(found)] >= 0) {
      throw Error(Code::kInvalidArgument, "input '" + names[k] + "' is given twice");
    }
    given[static_cast<size_t>(found)] = static_cast<int32_t>(k);
  }
  // An input with a default may be left out, as in a run: its (constant) shape is the
  // default's; a fill default's shape follows from the other inputs (not checked: it fits).
  std::vector<std::vector<int64_t>> default_shapes;
  std::vector<bool> absent(inputs_.size(), false);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (given[i] >= 0) continue;
    if (inputs_[i].has_fill) {
      absent[i] = true;
      continue;
    }
    if (inputs_[i].default_buffer < 0)
      throw Error(Code::kInvalidArgument, "input '" + inputs_[i].name + "' is missing");
    std::vector<int64_t> sh;
    for (const Expr* e : inputs_[i].type.shape) sh.push_back(e->ConstantTerm());
    default_shapes.push_back(std::move(sh));
    given[i] = -static_cast<int32_t>(default_shapes.size()) - 1;  // -2, -3, ...: a default
  }
  std::lock_guard<std::mutex> lock(*mu_);
  dim::Scope* s = scope_.get();
  dim::Solution preset;
  preset.values.assign(s->variables().size(), 0);
  preset.known.assign(s->variables().size(), false);
  std::vector<dim::SolveArg> args;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (absent[i]) continue;
    const std::vector<int64_t>& sh = given[i] >= 0
                                         ? shapes[static_cast<size_t>(given[i])]
                                         : default_shapes[static_cast<size_t>(-given[i] - 2)];
    if (inputs_[i].role == InputRole::kDim) {
      if (sh.size() != 1) {
        throw Error(Code::kInvalidArgument,
                    "input '" + inputs_[i].name + "' gives the dimension variable " +
                        s->VarName(inputs_[i].var) + ": pass exactly one value");
      }
      preset.values[static_cast<size_t>(inputs_[i].var)] = sh[0];
      preset.known[static_cast<size_t>(inputs_[i].var)] = true;
      continue;
    }
    CheckByteSize(sh, inputs_[i].type.dtype, "input '" + inputs_[i].name + "'");
    dim::SolveArg a;
    a.label = "input '" + inputs_[i].name + "'";
    a.dims = inputs_[i].type.shape;
    a.shape = sh;
    a.named = true;
    args.push_back(std::move(a));
  }
  dim::SolveOptions opts;
  opts.requirer = "the program";
  opts.preset = &preset;
  opts.check_facts = check_facts;
  dim::Solution sol = dim::Solve(s, args, opts);
  ShapeCheck out;
  for (int32_t v : used_vars_) {
    out.var_names.push_back(s->VarName(v));
    out.var_values.push_back(sol.values[static_cast<size_t>(v)]);
  }
  for (const Output& o : outputs_) {
    std::vector<int64_t> sh;
    for (const Expr* e : value_type(o.value).shape) {
      bool data_dependent = false;
      for (int32_t v : s->VarsOf(e)) data_dependent = data_dependent || UnbackedProducer(v) >= 0;
      if (data_dependent) {
        sh.push_back(-1);  // known once the data is computed
        continue;
      }
      int64_t d = s->Evaluate(e, sol.values, sol.known);
      if (d < 0) {
        throw Error(Code::kShapeMismatch, "output '" + o.name +
                                              "' would have the negative dimension " +
                                              s->ToString(e) + " = " + std::to_string(d));
      }
      sh.push_back(d);
    }
    CheckByteSize(sh, value_type(o.value).dtype, "output '" + o.name + "'");
    out.output_shapes.push_back(std::move(sh));
  }
  return out;
}

// ---- The lock-free check (the runtime's path for accepted shapes) ----

void Program::ComputeLockFreeCheck() {
  fast_ok_ = false;
  fast_steps_.clear();
  fast_facts_.clear();
  dim::Scope* s = scope_.get();
  const size_t nv = s->variables().size();
  var_ranges_.clear();
  for (const dim::Variable& v : s->variables()) var_ranges_.emplace_back(v.lo, v.hi);
  // An even power has two roots: where a variable may be negative, the solver could pick the
  // other one from such a dimension, so those programs keep to the solver.
  bool negative = false;
  for (const dim::Variable& v : s->variables()) negative = negative || v.lo < 0;
  for (const Input& in : inputs_) {
    for (const Expr* e : in.type.shape) {
      if (negative && dim::Degree(e) > 1) return;
    }
  }
  std::vector<bool> solved(nv, false);
  try {
    for (const SolveStep& st : solve_) {
      solved[static_cast<size_t>(st.var)] = true;
      if (st.axis < 0) {
        fast_steps_.push_back(FastStep{st.var, st.input, st.axis, 1, nullptr});
        continue;
      }
      const Expr* e =
          inputs_[static_cast<size_t>(st.input)].type.shape[static_cast<size_t>(st.axis)];
      // The coefficient of the variable if e is affine in it: e(1) - e(0), the other variables
      // at 1; then e - coeff * var must not mention the variable (checked on the normal form).
      std::vector<int64_t> at(nv, 1);
      std::vector<bool> known(nv, true);
      at[static_cast<size_t>(st.var)] = 0;
      const int64_t e0 = s->Evaluate(e, at, known);
      at[static_cast<size_t>(st.var)] = 1;
      int64_t coeff;
      if (__builtin_sub_overflow(s->Evaluate(e, at, known), e0, &coeff) || coeff == 0) return;
      const Expr* rest = s->Sub(e, s->Scale(s->Var(s->VarName(st.var)), coeff));
      for (int32_t v : s->VarsOf(rest)) {
        if (!solved[static_cast<size_t>(v)] || v == st.var) return;
      }
      fast_steps_.push_back(FastStep{st.var, st.input, st.axis, coeff, rest});
    }
  } catch (const Error&) {
    return;  // e.g. a dimension that divides by zero at these values: the general solver
  }
  for (int kind = 0; kind < 3; ++kind) {
    for (const dim::Fact& f : s->facts()) {
      if ((!f.is_assertion ? 0 : f.is_guard ? 1 : 2) != kind) continue;
      // Derived facts hold by construction; facts over data-dependent sizes are checked by
      // the runtime once their values are known (CheckUnbacked).
      bool later = f.is_derived;
      for (const Expr* side : {f.lhs, f.rhs}) {
        for (int32_t v : s->VarsOf(side)) later = later || UnbackedProducer(v) >= 0;
      }
      if (later) continue;
      for (const Expr* side : {f.lhs, f.rhs}) {
        for (int32_t v : s->VarsOf(side)) {
          if (!solved[static_cast<size_t>(v)]) return;  // the solver checks implied bounds
        }
      }
      fast_facts_.push_back(FastFact{f.lhs, f.op, f.rhs, kind});
    }
  }
  fast_ok_ = true;
}

Program::FastResult Program::LockFreeCheckOwn(const int64_t* const* shapes, const size_t* ranks,
                                              std::vector<int64_t>* values) const {
  if (!fast_ok_) return FastResult::kUndecided;
  std::vector<int64_t>& x = *values;
  x.assign(var_ranges_.size(), 0);
  try {
    // Ranks and negative sizes (the solver's first checks), then the recipe.
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const bool is_dim = inputs_[i].role == InputRole::kDim;
      if (ranks[i] == kAbsentRank) {
        if (!inputs_[i].has_fill) return FastResult::kUndecided;
        continue;
      }
      if (ranks[i] != (is_dim ? 1 : inputs_[i].type.shape.size())) return FastResult::kUndecided;
      if (is_dim) continue;
      for (size_t j = 0; j < ranks[i]; ++j) {
        if (shapes[i][j] < 0) return FastResult::kUndecided;
      }
    }
    for (const FastStep& st : fast_steps_) {
      const int64_t given = shapes[st.input][st.axis < 0 ? 0 : st.axis];
      if (st.axis < 0) {
        x[static_cast<size_t>(st.var)] = given;
        continue;
      }
      int64_t diff;
      if (__builtin_sub_overflow(given, dim::Evaluate(st.rest, x), &diff) ||
          (st.coeff == -1 && diff == INT64_MIN) || diff % st.coeff != 0) {
        return FastResult::kUndecided;
      }
      x[static_cast<size_t>(st.var)] = diff / st.coeff;
    }
    for (const FastStep& st : fast_steps_) {
      const auto& r = var_ranges_[static_cast<size_t>(st.var)];
      const int64_t v = x[static_cast<size_t>(st.var)];
      if (v < r.first || v > r.second) return FastResult::kUndecided;
    }
    // Every dimension of every data input must agree with the values (consistency).
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].role == InputRole::kDim || ranks[i] == kAbsentRank) continue;
      const std::vector<const Expr*>& dims = inputs_[i].type.shape;
      for (size_t j = 0; j < dims.size(); ++j) {
        if (dim::Evaluate(dims[j], x) != shapes[i][j]) return FastResult::kUndecided;
      }
    }
    for (const FastFact& f : fast_facts_) {
      if (dim::CmpHolds(dim::Evaluate(f.lhs, x), f.op, dim::Evaluate(f.rhs, x))) continue;
      return f.kind == 1 ? FastResult::kGuardFalse : FastResult::kUndecided;
    }
    // Byte sizes of the inputs and outputs, and no negative output dimension.
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].role == InputRole::kDim || ranks[i] == kAbsentRank) continue;
      int64_t bytes = static_cast<int64_t>(trace::DTypeSize(inputs_[i].type.dtype));
      bool zero = false;
      for (size_t j = 0; j < ranks[i]; ++j) zero = zero || shapes[i][j] == 0;
      for (size_t j = 0; j < ranks[i] && !zero; ++j) {
        if (__builtin_mul_overflow(bytes, shapes[i][j], &bytes)) return FastResult::kUndecided;
      }
    }
    for (const Output& o : outputs_) {
      const TensorType& t = value_type(o.value);
      int64_t bytes = static_cast<int64_t>(trace::DTypeSize(t.dtype));
      bool zero = false, over = false;
      for (const Expr* e : t.shape) {
        const int64_t d = dim::Evaluate(e, x);
        if (d < 0) return FastResult::kUndecided;
        zero = zero || d == 0;
        over = over || __builtin_mul_overflow(bytes, d, &bytes);
      }
      if (over && !zero) return FastResult::kUndecided;
    }
  } catch (const Error&) {
    return FastResult::kUndecided;  // overflow or division by zero: the solver words it
  }
  return FastResult::kAccepted;
}

int32_t Program::TryCheckShapesLockFree(const int64_t* const* shapes, const size_t* ranks,
                                        std::vector<int64_t>* values) const {
  // The first variant whose guards hold; a variant that fails before its guards (the
  // constraints are the same in every variant) leaves the answer to CheckShapes.
  for (size_t v = 0; v < num_variants(); ++v) {
    switch (variant(v).LockFreeCheckOwn(shapes, ranks, values)) {
      case FastResult::kAccepted:
        return static_cast<int32_t>(v);
      case FastResult::kGuardFalse:
        continue;
      case FastResult::kUndecided:
        return -1;
    }
  }
  return -1;
}

std::vector<int64_t> Program::OutputShapeOwn(size_t i, const std::vector<std::string>& var_names,
                                             const std::vector<int64_t>& var_values) const {
  if (i >= outputs_.size()) {
    throw Error(Code::kInvalidArgument, "output index " + std::to_string(i) +
                                            " is out of range (the program has " +
                                            std::to_string(outputs_.size()) + " outputs)");
  }
  if (var_names.size() != var_values.size())
    throw Error(Code::kInvalidArgument, "names and values differ in number");
  std::lock_guard<std::mutex> lock(*mu_);
  const dim::Scope& s = *scope_;
  std::vector<int64_t> values(s.variables().size(), 0);
  std::vector<bool> known(s.variables().size(), false);
  for (size_t k = 0; k < var_names.size(); ++k) {
    int32_t v = s.FindVar(var_names[k]);
    if (v < 0) continue;
    values[static_cast<size_t>(v)] = var_values[k];
    known[static_cast<size_t>(v)] = true;
  }
  std::vector<int64_t> out;
  for (const Expr* e : value_type(outputs_[i].value).shape) {
    for (int32_t v : s.VarsOf(e)) {
      if (!known[static_cast<size_t>(v)]) {
        throw Error(Code::kInvalidArgument,
                    "no value given for the dimension variable '" + s.VarName(v) + "'");
      }
    }
    out.push_back(s.Evaluate(e, values, known));
  }
  return out;
}

}  // namespace program
}  // namespace shp
