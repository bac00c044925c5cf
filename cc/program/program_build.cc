// Program::FromTrace: a program from traced tensors. The signature is checked, the tensors the
// outputs depend on are found, every expression is rebuilt into the program's private scope
// (declarations, constraints, then assertions and guards), and every node's type is re-inferred
// there; the limits a loader enforces are checked so that every program can be loaded back.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/parse.h"
#include "cc/dim/rebuild.h"
#include "cc/ops/limits.h"
#include "cc/ops/op_def.h"
#include "cc/program/program.h"

namespace shp {
namespace program {

using dim::Expr;
using trace::OpKind;
using trace::Tensor;
using trace::TensorType;

// The steps of FromTrace, in the order they run (each may throw; nothing is built before the
// signature is known to be valid): a nested class, so that it may fill the program's private
// parts.
class Program::Builder {
 public:
  Builder(const trace::Trace& trace, const std::vector<const Tensor*>& inputs,
          const std::vector<const Tensor*>& outputs, const std::vector<std::string>& output_names,
          const std::vector<OutputRole>& output_roles)
      : trace_(trace),
        src_(trace.dims()),
        in_tensors_(inputs),
        out_tensors_(outputs),
        output_names_(output_names),
        output_roles_(output_roles) {}

  std::unique_ptr<Program> Build() {
    CheckSignature();
    FindReachable();
    MakeScope();
    AddFacts();
    AddInputs();
    CheckLoaderLimits();
    AddNodes();
    for (size_t i = 0; i < out_tensors_.size(); ++i) {
      p_->outputs_.push_back(
          Output{output_names_[i], value_.at(out_tensors_[i]),
                 output_roles_.empty() ? OutputRole::kPrimal : output_roles_[i]});
    }
    p_->CheckDagSize();
    p_->Finalize();
    return std::move(p_);
  }

 private:
  // Refuses a signature the program could not keep: counts, unlisted or doubly named inputs,
  // empty, invalid, repeated or reserved output names.
  void CheckSignature();
  // Marks in reach_ the tensors the outputs (and the assertions over data-dependent sizes)
  // depend on, so that the program holds only those; an unlisted input they use is refused.
  void FindReachable();
  // Whether the program computes unbacked variable v (its producer is reachable): facts over
  // the others are dropped.
  bool Produced(int32_t v) const {
    auto it = producer_.find(v);
    return it != producer_.end() && reach_[static_cast<size_t>(it->second->id)];
  }
  // Whether fact f belongs in the program (a derived fact only when it mentions no unbacked
  // variable the program does not compute).
  bool Keeps(const dim::Fact& f) const {
    if (!f.is_derived) return true;
    for (const Expr* side : {f.lhs, f.rhs}) {
      for (int32_t v : src_->VarsOf(side)) {
        if (src_->IsUnbacked(v) && !Produced(v)) return false;
      }
    }
    return true;
  }
  // Creates the program's private scope with the declarations and constraints of the
  // variables the program uses, and marks its unbacked variables.
  void MakeScope();
  // Rebuilds the derived facts, assertions and guards into the private scope, in their order.
  void AddFacts();
  // The program's inputs (with their default values) in the private scope.
  void AddInputs();
  // Refuses a program the loader would refuse (cc/ops/limits.h): too many nodes, inputs or
  // outputs, or too many constant bytes.
  void CheckLoaderLimits();
  // The reachable operations as nodes, each type re-inferred in the private scope.
  void AddNodes();

  const trace::Trace& trace_;
  dim::Scope* src_;
  const std::vector<const Tensor*>& in_tensors_;
  const std::vector<const Tensor*>& out_tensors_;
  const std::vector<std::string>& output_names_;
  const std::vector<OutputRole>& output_roles_;
  std::unordered_map<const Tensor*, int32_t> input_index_;
  std::unordered_map<int32_t, const Tensor*> producer_;  // unbacked variable -> last producer
  std::vector<bool> reach_;                              // by tensor id
  std::unique_ptr<Program> p_;
  dim::Scope* dst_ = nullptr;                         // p_'s scope
  std::unique_ptr<dim::Rebuilder> rb_;                // src_ -> dst_
  std::unordered_map<const Tensor*, int32_t> value_;  // tensor -> value id
  size_t num_nodes_ = 0;                              // reachable operations (CheckLoaderLimits)
};

void Program::Builder::CheckSignature() {
  if (out_tensors_.size() != output_names_.size()) {
    throw Error(Code::kInvalidArgument, "program: " + std::to_string(out_tensors_.size()) +
                                            " outputs but " + std::to_string(output_names_.size()) +
                                            " output names");
  }
  if (!output_roles_.empty() && output_roles_.size() != out_tensors_.size()) {
    throw Error(Code::kInvalidArgument, "program: " + std::to_string(out_tensors_.size()) +
                                            " outputs but " + std::to_string(output_roles_.size()) +
                                            " output roles");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < in_tensors_.size(); ++i) {
    const Tensor* t = in_tensors_[i];
    trace_.CheckOwned(t, "program");
    if (t->source == trace::Source::kOp) {
      throw Error(Code::kInvalidArgument, "program: inputs[" + std::to_string(i) +
                                              "] is not an input tensor (it is the result of " +
                                              OpName(t->op) + ")");
    }
    if (!names.insert(t->name).second) {
      throw Error(Code::kInvalidArgument,
                  "program: the input name '" + t->name + "' is used twice");
    }
    input_index_.emplace(t, static_cast<int32_t>(i));
  }
  names.clear();
  for (size_t i = 0; i < out_tensors_.size(); ++i) {
    trace_.CheckOwned(out_tensors_[i], "program");
    if (output_names_[i].empty()) {
      throw Error(Code::kInvalidArgument,
                  "program: the name of outputs[" + std::to_string(i) + "] is empty");
    }
    const std::string problem = trace::NameProblem(output_names_[i]);
    if (!problem.empty()) {
      throw Error(Code::kInvalidArgument, "program: the name of outputs[" + std::to_string(i) +
                                              "], " + dim::QuoteForMessage(output_names_[i]) +
                                              ", " + problem);
    }
    if (!names.insert(output_names_[i]).second) {
      throw Error(Code::kInvalidArgument,
                  "program: the output name '" + output_names_[i] + "' is used twice");
    }
    const bool primal = output_roles_.empty() || output_roles_[i] == OutputRole::kPrimal;
    if (primal && output_names_[i].find(trace::kDerivedNameMark) != std::string::npos) {
      throw Error(Code::kInvalidArgument,
                  "program: the output name '" + output_names_[i] + "': names with '" +
                      trace::kDerivedNameMark +
                      "' are reserved for the names transformations derive (y.tangent, x.grad)");
    }
  }
}

void Program::Builder::FindReachable() {
  // Tensors the outputs depend on, in creation (= topological) order. A tensor whose shape or
  // attributes use an unbacked variable depends on the op that produces it, and so does every
  // assertion over one (the program must compute the value to check it).
  for (const Tensor& t : trace_.tensors()) {
    if (t.source != trace::Source::kOp) continue;
    // The last producer: a transformation's (vmap's batched cond, say) follows the replayed
    // original, which the program need not reach.
    for (const Expr* u : ops::Def(t.op).UnbackedSizes(t.attrs)) {
      if (u->AsVar() >= 0) producer_[u->AsVar()] = &t;
    }
  }
  reach_.assign(trace_.tensors().size(), false);
  std::vector<const Tensor*> stack(out_tensors_.begin(), out_tensors_.end());
  auto need_producers = [&](const Expr* e) {
    if (e == nullptr || producer_.empty()) return;
    for (int32_t v : src_->VarsOf(e)) {
      auto it = producer_.find(v);
      if (it != producer_.end()) stack.push_back(it->second);
    }
  };
  for (const dim::Fact& f : src_->facts()) {
    if (!f.is_assertion) continue;
    need_producers(f.lhs);
    need_producers(f.rhs);
  }
  while (!stack.empty()) {
    const Tensor* t = stack.back();
    stack.pop_back();
    if (reach_[static_cast<size_t>(t->id)]) continue;
    reach_[static_cast<size_t>(t->id)] = true;
    if (t->source != trace::Source::kOp) {
      if (!input_index_.count(t)) {
        throw Error(Code::kInvalidArgument, "program: the outputs use the input '" + t->name +
                                                "', which is not listed in the program's inputs");
      }
      continue;
    }
    for (const Tensor* o : t->operands) stack.push_back(o);
    for (const Expr* e : t->type.shape) need_producers(e);
    ops::ForEachDim(t->attrs, need_producers);
  }
}

void Program::Builder::MakeScope() {
  // ---- The private scope: declarations and constraints, then assertions ----
  std::set<int32_t> relevant;
  auto note = [&](const Expr* e) {
    if (e == nullptr) return;
    for (int32_t v : src_->VarsOf(e)) relevant.insert(v);
  };
  auto note_all = [&](const std::vector<const Expr*>& v) {
    for (const Expr* e : v) note(e);
  };
  for (const Tensor* t : in_tensors_) {
    note_all(t->type.shape);
    if (t->dim_var >= 0) relevant.insert(t->dim_var);
  }
  for (const Tensor& t : trace_.tensors()) {
    if (!reach_[static_cast<size_t>(t.id)] || t.source != trace::Source::kOp) continue;
    note_all(t.type.shape);
    ops::ForEachDim(t.attrs, note);
  }
  std::vector<std::string> constraints;
  for (const dim::Fact& f : src_->facts()) {
    if (!Keeps(f)) continue;
    note(f.lhs);
    note(f.rhs);
    if (!f.is_assertion && !f.is_derived) constraints.push_back(f.text);
  }
  std::vector<dim::Scope::Declaration> decls;
  for (int32_t v : relevant) {
    const dim::Variable& var = src_->variables()[static_cast<size_t>(v)];
    if (var.declared) decls.push_back({var.name, var.lo, var.hi});
  }
  p_.reset(new Program());
  p_->scope_ = dim::Scope::Create(constraints, decls);
  dst_ = p_->scope_.get();
  for (int32_t v : relevant) {
    const dim::Variable& var = src_->variables()[static_cast<size_t>(v)];
    if (var.unbacked && Produced(v)) dst_->MarkUnbacked(var.name, var.origin);
  }
  rb_.reset(new dim::Rebuilder(dst_));
}

void Program::Builder::AddFacts() {
  dim::Rebuilder& rb = *rb_;
  for (const dim::Fact& f : src_->facts()) {
    if (f.is_derived && Keeps(f)) {
      const Expr* lhs = rb.Expr(f.lhs);
      const Expr* rhs = rb.Expr(f.rhs);
      dst_->AddDerived(lhs, f.op, rhs);
      continue;
    }
    if (!f.is_assertion) continue;
    // Named steps: the order in which variables enter the scope must not depend on the
    // compiler's argument evaluation order (it decides the program's bytes and messages).
    const Expr* lhs = rb.Expr(f.lhs);
    const Expr* rhs = rb.Expr(f.rhs);
    if (f.is_guard) {
      dst_->AddGuard(lhs, f.op, rhs, f.message, f.origin);
    } else {
      dst_->Check(lhs, f.op, rhs, f.message);
    }
  }
}

void Program::Builder::AddInputs() {
  for (size_t i = 0; i < in_tensors_.size(); ++i) {
    const Tensor* t = in_tensors_[i];
    Input in;
    in.name = t->name;
    in.type.dtype = t->type.dtype;
    in.type.shape = rb_->Shape(t->type.shape);
    if (t->source == trace::Source::kDimInput) {
      in.role = InputRole::kDim;
      in.var = dst_->Var(src_->VarName(t->dim_var))->AsVar();
    } else {
      in.role = t->role;
    }
    if (t->default_buffer >= 0) {
      in.default_buffer = static_cast<int32_t>(p_->buffers_.size());
      p_->buffers_.push_back(trace_.buffer(t->default_buffer));
    }
    in.has_fill = t->has_fill;
    in.fill = t->fill;
    p_->inputs_.push_back(std::move(in));
    value_.emplace(t, static_cast<int32_t>(i));
  }
}

void Program::Builder::CheckLoaderLimits() {
  size_t num_nodes = 0;
  uint64_t constant_bytes = 0;  // constants and defaults
  for (const std::string& b : p_->buffers_) constant_bytes += b.size();
  for (const Tensor& t : trace_.tensors()) {
    if (!reach_[static_cast<size_t>(t.id)] || t.source != trace::Source::kOp) continue;
    ++num_nodes;
    if (t.op == OpKind::kConstant) {
      constant_bytes += trace_.buffer(std::get<ops::ConstantAttrs>(t.attrs).buffer).size();
    }
  }
  num_nodes_ = num_nodes;
  if (num_nodes > ops::kMaxNodes || in_tensors_.size() > ops::kMaxNodes ||
      out_tensors_.size() > ops::kMaxNodes) {
    throw Error(Code::kInvalidArgument, "program: " + std::to_string(num_nodes) + " operations, " +
                                            std::to_string(in_tensors_.size()) + " inputs and " +
                                            std::to_string(out_tensors_.size()) +
                                            " outputs; each is limited to " +
                                            std::to_string(ops::kMaxNodes));
  }
  if (constant_bytes > ops::kMaxTotalConstantBytes) {
    throw Error(Code::kInvalidArgument,
                "program: the constants and defaults hold " + std::to_string(constant_bytes) +
                    " bytes, above the limit of " + std::to_string(ops::kMaxTotalConstantBytes));
  }
}

void Program::Builder::AddNodes() {
  Program* p = p_.get();
  p->nodes_.reserve(num_nodes_);
  value_.reserve(in_tensors_.size() + num_nodes_);
  std::vector<TensorType> operand_types;
  for (const Tensor& t : trace_.tensors()) {
    if (!reach_[static_cast<size_t>(t.id)] || t.source != trace::Source::kOp) continue;
    Node n;
    n.op = t.op;
    n.attrs = t.attrs;
    ops::ForEachDim(n.attrs, [&](const Expr*& e) { e = rb_->Expr(e); });
    operand_types.clear();
    n.operands.reserve(t.operands.size());
    for (const Tensor* o : t.operands) {
      const int32_t v = value_.at(o);
      n.operands.push_back(v);
      operand_types.push_back(p->value_type(v));
    }
    if (t.op == OpKind::kConstant) {
      n.attrs = ops::ConstantAttrs{static_cast<int32_t>(p->buffers_.size())};
      p->buffers_.push_back(trace_.buffer(std::get<ops::ConstantAttrs>(t.attrs).buffer));
      n.type.dtype = t.type.dtype;
      n.type.shape = rb_->Shape(t.type.shape);
    } else {
      try {
        n.type = ops::InferType(dst_, n.op, &n.attrs, operand_types, ops::InferMode::kVerify);
      } catch (const Error& e) {
        throw Error(e.code(),
                    "program: re-checking node " + std::to_string(p->nodes_.size()) +
                        " in the program's scope failed: " + e.message(),
                    e.detail());
      }
    }
    p->nodes_.push_back(std::move(n));
    value_.emplace(&t, static_cast<int32_t>(p->inputs_.size() + p->nodes_.size() - 1));
  }
}

std::unique_ptr<Program> Program::FromTrace(const trace::Trace& trace,
                                            const std::vector<const Tensor*>& inputs,
                                            const std::vector<const Tensor*>& outputs,
                                            const std::vector<std::string>& output_names,
                                            const std::vector<OutputRole>& output_roles) {
  return Builder(trace, inputs, outputs, output_names, output_roles).Build();
}

}  // namespace program
}  // namespace shp
