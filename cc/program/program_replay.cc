// Program::ReplayIntoTrace: the program's values traced again in a new scope, so that a
// transformation can add operations and make a new program with Program::FromTrace.
#include <string>
#include <utility>
#include <vector>

#include "cc/dim/rebuild.h"
#include "cc/program/program.h"

namespace shp {
namespace program {

Replay Program::ReplayIntoTrace() const {
  std::lock_guard<std::mutex> lock(*mu_);
  const dim::Scope& src = *scope_;
  std::vector<dim::Scope::Declaration> decls;
  for (const dim::Variable& v : src.variables()) {
    if (v.declared) decls.push_back({v.name, v.lo, v.hi});
  }
  Replay r;
  r.scope = dim::Scope::Create(constraint_texts_, decls);
  for (const dim::Variable& v : src.variables()) {
    if (v.unbacked) r.scope->MarkUnbacked(v.name, v.origin);
  }
  dim::Rebuilder rb(r.scope.get());
  for (const dim::Fact& f : src.facts()) {
    if (f.is_derived) {
      const dim::Expr* lhs = rb.Expr(f.lhs);
      const dim::Expr* rhs = rb.Expr(f.rhs);
      r.scope->AddDerived(lhs, f.op, rhs);
      continue;
    }
    if (!f.is_assertion) continue;
    const dim::Expr* lhs = rb.Expr(f.lhs);  // named steps: a fixed order of new variables
    const dim::Expr* rhs = rb.Expr(f.rhs);
    if (f.is_guard) {
      r.scope->AddGuard(lhs, f.op, rhs, f.message, f.origin);
    } else {
      r.scope->Check(lhs, f.op, rhs, f.message);
    }
  }
  r.trace = trace::NewTrace(r.scope.get());
  trace::Trace& t = *r.trace;
  for (const Input& in : inputs_) {
    const trace::Tensor* x = nullptr;
    if (in.role == InputRole::kDim) {
      x = t.DimInput(src.VarName(in.var));
    } else {
      const std::string* def =
          in.default_buffer >= 0 ? &buffers_[static_cast<size_t>(in.default_buffer)] : nullptr;
      x = t.DerivedInput(in.name, in.role, in.type.dtype, rb.Shape(in.type.shape),
                         def ? def->data() : nullptr, def ? def->size() : 0,
                         in.has_fill ? &in.fill : nullptr);
    }
    r.values.push_back(x);
    r.inputs.push_back(x);
  }
  for (const Node& n : nodes_) {
    if (n.op == trace::OpKind::kConstant) {
      std::vector<int64_t> shape;
      for (const dim::Expr* d : n.type.shape) shape.push_back(d->ConstantTerm());
      const std::string& bytes =
          buffers_[static_cast<size_t>(std::get<ops::ConstantAttrs>(n.attrs).buffer)];
      r.values.push_back(t.Constant(n.type.dtype, shape, bytes.data(), bytes.size()));
      continue;
    }
    trace::Attrs attrs = n.attrs;
    ops::ForEachDim(attrs, [&](const dim::Expr*& e) { e = rb.Expr(e); });
    std::vector<const trace::Tensor*> operands;
    for (int32_t o : n.operands) operands.push_back(r.values[static_cast<size_t>(o)]);
    r.values.push_back(t.Apply(n.op, std::move(attrs), operands));
  }
  return r;
}

}  // namespace program
}  // namespace shp
