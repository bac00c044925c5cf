// Tracing control flow: the nodes of a cond, while_loop or scan (one per result), and the
// bodies that bindings trace with functions (closures): CutBody copies what a body's outputs
// compute into a trace of their own, turning each tensor the function captured from the
// enclosing computation into an input of the body (and an operand of the op), as JAX converts
// closures of lax.scan's functions.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <set>
#include <unordered_set>

#include "cc/base/error.h"
#include "cc/ops/op_def.h"
#include "cc/ops/subprogram.h"
#include "cc/trace/trace.h"

namespace shp {
namespace trace {

std::vector<const Tensor*> Trace::ControlFlow(OpKind op, const ops::ControlFlowAttrs& attrs,
                                              const std::vector<const Tensor*>& operands) {
  if (!ops::IsControlFlow(op)) {
    throw Error(Code::kInvalidArgument, std::string(OpName(op)) + " is not a control-flow op");
  }
  ops::ControlFlowAttrs a = attrs;
  a.result = 0;
  // The first result checks everything; the others cannot fail once it has passed.
  const Tensor* first = Apply(op, a, operands);
  std::vector<const Tensor*> results{first};
  const auto& done = std::get<ops::ControlFlowAttrs>(first->attrs);
  const size_t count = op == OpKind::kWhileLoop ? static_cast<size_t>(done.counts[0])
                                                : done.bodies[0]->num_outputs();
  for (size_t k = 1; k < count; ++k) {
    ops::ControlFlowAttrs ak = done;
    ak.result = static_cast<int64_t>(k);
    results.push_back(Apply(op, ak, operands));
  }
  return results;
}

namespace {

// The variable of x when x is dim_value(variable), else nullptr.
const dim::Expr* DimValueVar(const Tensor* x) {
  if (x->source != Source::kOp || x->op != OpKind::kDimValue || !x->operands.empty())
    return nullptr;
  const dim::Expr* d = std::get<ops::DimValueAttrs>(x->attrs).dim;
  return d != nullptr && d->AsVar() >= 0 ? d : nullptr;
}

// A dim_value tensor of variable `var` in t: an existing one (so two bodies cut from one trace
// take the same operand), else a new one.
const Tensor* OuterDimValue(Trace& t, int32_t var) {
  for (const Tensor& x : t.tensors()) {
    const dim::Expr* d = DimValueVar(&x);
    if (d != nullptr && d->AsVar() == var) return &x;
  }
  return t.DimValue(t.dims()->Var(t.dims()->VarName(var)));
}

}  // namespace

Body CutBody(Trace& t, size_t mark, const std::vector<const Tensor*>& inputs,
             const std::vector<const Tensor*>& outputs,
             const std::vector<const Tensor*>& given_captures) {
  for (const Tensor* x : inputs) t.CheckOwned(x, "a body input");
  for (const Tensor* x : outputs) t.CheckOwned(x, "a body output");
  if (mark > t.tensors().size()) {
    throw Error(Code::kInvalidArgument, "the trace mark " + std::to_string(mark) +
                                            " is beyond the trace (" +
                                            std::to_string(t.tensors().size()) + " tensors)");
  }
  std::unordered_set<const Tensor*> is_input(inputs.begin(), inputs.end());
  for (const Tensor* x : inputs) {
    if (x->source != Source::kInput || static_cast<size_t>(x->id) < mark) {
      throw Error(Code::kInvalidArgument,
                  "a body input must be a data input made after the body's mark");
    }
  }
  // What the outputs reach, stopping at the inputs and at tensors older than the mark. A
  // tensor whose shape or attributes use a data-dependent size made after the mark reaches the
  // op that makes it (a slice to a size read from data does not take that op as an operand).
  std::unordered_map<int32_t, const Tensor*> made;
  for (size_t i = mark; i < t.tensors().size(); ++i) {
    const Tensor& x = t.tensors()[i];
    if (x.source != Source::kOp) continue;
    for (const dim::Expr* u : ops::Def(x.op).UnbackedSizes(x.attrs)) {
      if (!made.count(u->AsVar())) made[u->AsVar()] = &x;
    }
  }
  std::vector<const Tensor*> reached, stack(outputs.begin(), outputs.end());
  std::unordered_set<const Tensor*> seen;
  auto producers = [&](const dim::Expr* e) {
    if (e == nullptr || made.empty()) return;
    for (int32_t v : t.dims()->VarsOf(e)) {
      auto it = made.find(v);
      if (it != made.end()) stack.push_back(it->second);
    }
  };
  while (!stack.empty()) {
    const Tensor* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    reached.push_back(x);
    if (is_input.count(x) || static_cast<size_t>(x->id) < mark) continue;
    for (const Tensor* o : x->operands) stack.push_back(o);
    for (const dim::Expr* e : x->type.shape) producers(e);
    ops::ForEachDim(x->attrs, producers);
  }
  std::sort(reached.begin(), reached.end(),
            [](const Tensor* a, const Tensor* b) { return a->id < b->id; });
  Body body;
  body.trace = NewTrace(t.dims());
  Trace& bt = *body.trace;
  std::unordered_map<const Tensor*, const Tensor*> map;
  std::unordered_set<int32_t> local;  // unbacked variables the body produces
  for (const Tensor* x : inputs) {
    const Tensor* in = bt.Input(x->name, x->type.dtype, x->type.shape);
    map[x] = in;
    body.inputs.push_back(in);
  }
  std::unordered_set<std::string> names;
  for (const Tensor* x : inputs) names.insert(x->name);
  auto capture = [&](const Tensor* x) {
    if (const dim::Expr* v = DimValueVar(x)) {  // a variable's value: a dimension input
      const Tensor* in = bt.DimInput(t.dims()->VarName(v->AsVar()));
      map[x] = in;
      body.inputs.push_back(in);
      body.captures.push_back(x);
      return;
    }
    std::string name;
    for (size_t k = body.captures.size();; ++k) {
      name = "capture" + std::to_string(k);
      if (!names.count(name)) break;
    }
    names.insert(name);
    const Tensor* in = bt.Input(name, x->type.dtype, x->type.shape);
    map[x] = in;
    body.inputs.push_back(in);
    body.captures.push_back(x);
  };
  for (const Tensor* x : given_captures) {
    t.CheckOwned(x, "a capture");
    if ((static_cast<size_t>(x->id) >= mark && DimValueVar(x) == nullptr) || map.count(x)) {
      throw Error(Code::kInvalidArgument,
                  "a given capture must be a distinct tensor made before the body's mark");
    }
    capture(x);
  }
  for (const Tensor* x : reached) {
    if (map.count(x)) continue;
    const bool older = static_cast<size_t>(x->id) < mark;
    if (x->source == Source::kOp && x->op == OpKind::kConstant) {
      std::vector<int64_t> shape;
      for (const dim::Expr* e : x->type.shape) shape.push_back(e->ConstantTerm());
      const std::string& bytes = t.buffer(std::get<ops::ConstantAttrs>(x->attrs).buffer);
      map[x] = bt.Constant(x->type.dtype, shape, bytes.data(), bytes.size());
      continue;
    }
    if (older) {  // a capture: an input of the body, the enclosing tensor an operand
      capture(x);
      continue;
    }
    if (x->source != Source::kOp) {
      throw Error(Code::kInvalidArgument,
                  "the body uses the input '" + x->name +
                      "', which is neither one of its inputs nor made before the body");
    }
    // A data-dependent size computed here is the body's own (its runtime reads it per run).
    for (const dim::Expr* u : ops::Def(x->op).UnbackedSizes(x->attrs)) local.insert(u->AsVar());
    std::vector<const Tensor*> ops;
    for (const Tensor* o : x->operands) ops.push_back(map.at(o));
    map[x] = bt.Apply(x->op, x->attrs, ops);
  }
  // Variables the body's shapes use that no input's shape has (a dim_value of the enclosing
  // scope's variable, or a data-dependent size computed before the body, say): each becomes a
  // dimension input, given the variable's value. The body's own data-dependent sizes stay.
  std::set<int32_t> known, used;
  const dim::Scope* s = t.dims();
  for (const Tensor* in : body.inputs) {
    if (in->source == Source::kDimInput) known.insert(in->dim_var);
    for (const dim::Expr* e : in->type.shape) {
      for (int32_t v : s->VarsOf(e)) known.insert(v);
    }
  }
  auto use = [&](const dim::Expr* e) {
    if (e == nullptr) return;
    for (int32_t v : s->VarsOf(e)) used.insert(v);
  };
  for (const Tensor& x : bt.tensors()) {
    for (const dim::Expr* e : x.type.shape) use(e);
    ops::ForEachDim(x.attrs, use);
  }
  for (int32_t v : used) {
    if (!known.count(v) && !local.count(v)) capture(OuterDimValue(t, v));
  }
  for (const Tensor* x : outputs) body.outputs.push_back(map.at(x));
  return body;
}

}  // namespace trace
}  // namespace shp
