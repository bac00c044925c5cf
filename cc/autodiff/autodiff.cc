#include "cc/autodiff/autodiff.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cc/autodiff/control_flow_ad.h"
#include "cc/base/error.h"
#include "cc/kernels/narrow.h"
#include "cc/ops/ad.h"
#include "cc/ops/op_def.h"
#include "cc/ops/subprogram.h"
#include "cc/trace/trace.h"

namespace shp {
namespace autodiff {
namespace {

using ops::Value;
using program::Program;
using program::Replay;
using trace::Tensor;

// The rules' builder over the replayed trace. It records each distinct operation once (common
// subexpressions: the same op, attributes and operands give the tensor recorded first, also one
// of the replayed program's own) and skips x * 1, 1 * x, x + 0, 0 + x, x - 0 and x / 1 with a
// scalar constant of x's type: without this, each order of a derivative repeats the previous
// orders' subexpressions (issue 39: a program grew ~2.6x per order).
class TraceBuilder final : public ops::AdBuilder {
 public:
  TraceBuilder(trace::Trace* t, const std::vector<const Tensor*>& replayed) : t_(t) {
    // Dims print as their addresses: the scope interns them.
    printer_.dim = [](const dim::Expr* e) {
      return std::to_string(reinterpret_cast<uintptr_t>(e));
    };
    seen_.reserve(2 * replayed.size());
    for (const Tensor* v : replayed) Remember(v);
  }
  dim::Scope* dims() override { return t_->dims(); }
  const trace::TensorType& type(Value v) override { return v->type; }
  Value Apply(ops::OpKind op, ops::Attrs attrs, const std::vector<Value>& operands) override {
    if (Value same = Identity(op, operands)) return same;
    const Tensor* y = t_->Apply(op, std::move(attrs), operands);
    std::string key = Key(y);
    if (key.empty()) return y;
    auto it = seen_.find(key);
    if (it != seen_.end()) return it->second;  // y stays unused: Finish records the reachable
    seen_.emplace(std::move(key), y);
    return y;
  }
  Value Scalar(trace::DType dtype, double value) override {
    if (!trace::IsAnyFloat(dtype)) {
      throw Error(Code::kInternal, std::string("autodiff: a scalar of dtype ") +
                                       trace::DTypeName(dtype) + " in a derivative");
    }
    uint64_t bits = 0;  // f32, f64, f16 or bf16, rounded once
    kernels::StoreScalar(dtype, value, &bits);
    const std::string key =
        "c" + std::to_string(static_cast<int>(dtype)) + ":" + std::to_string(bits);
    auto it = seen_.find(key);
    if (it != seen_.end()) return it->second;
    const Tensor* c = t_->Constant(dtype, {}, &bits, trace::DTypeSize(dtype));
    seen_.emplace(key, c);
    scalar_value_[c] = value;
    return c;
  }

 private:
  // The identity of an op node: op, operands, the result's type (the text of an attribute may
  // leave a field out: iota's dtype) and the attributes' text, the fixed-size fields as bytes
  // (dims by address: the scope interns them), the counts before their entries. Empty for
  // ops that make a new variable (their results differ).
  std::string Key(const Tensor* y) const {
    if (y->source != trace::Source::kOp || y->op == ops::OpKind::kNonzero ||
        y->op == ops::OpKind::kBooleanMask || y->op == ops::OpKind::kSizeFromValue) {
      return "";
    }
    std::string k;
    auto put = [&k](const void* bytes, size_t n) { k.append(static_cast<const char*>(bytes), n); };
    const int64_t head[4] = {static_cast<int64_t>(y->op), static_cast<int64_t>(y->type.dtype),
                             static_cast<int64_t>(y->operands.size()),
                             static_cast<int64_t>(y->type.shape.size())};
    k.reserve(sizeof head + 8 * (y->operands.size() + y->type.shape.size()) + 16);
    put(head, sizeof head);
    for (const Tensor* o : y->operands) put(&o->id, sizeof o->id);
    for (const dim::Expr* e : y->type.shape) put(&e, sizeof e);
    return k + ops::Def(y->op).AttrText(printer_, y->attrs);
  }
  void Remember(const Tensor* v) {
    std::string key = Key(v);
    if (!key.empty()) seen_.emplace(std::move(key), v);
  }
  // x for x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1 (one of this builder's scalars, of x's type).
  Value Identity(ops::OpKind op, const std::vector<Value>& operands) const {
    if (operands.size() != 2) return nullptr;
    auto is = [&](Value v, double c) {
      auto it = scalar_value_.find(v);
      return it != scalar_value_.end() && it->second == c;
    };
    Value a = operands[0], b = operands[1];
    const bool a_keeps = a->type.dtype == b->type.dtype && b->type.shape.empty();
    const bool b_keeps = a->type.dtype == b->type.dtype && a->type.shape.empty();
    switch (op) {
      case ops::OpKind::kMul:
        if (a_keeps && is(b, 1)) return a;
        if (b_keeps && is(a, 1)) return b;
        return nullptr;
      case ops::OpKind::kAdd:
        if (a_keeps && is(b, 0)) return a;
        if (b_keeps && is(a, 0)) return b;
        return nullptr;
      case ops::OpKind::kSub:
        return a_keeps && is(b, 0) ? a : nullptr;
      case ops::OpKind::kDiv:
        return a_keeps && is(b, 1) ? a : nullptr;
      default:
        return nullptr;
    }
  }

  trace::Trace* t_;
  ops::AttrPrinter printer_;
  std::unordered_map<std::string, Value> seen_;
  std::unordered_map<Value, double> scalar_value_;
};

// The inputs' indices by name (a program's input names are distinct).
std::unordered_map<std::string, size_t> InputIndex(const Program& p) {
  std::unordered_map<std::string, size_t> index;
  index.reserve(p.inputs().size());
  for (size_t i = 0; i < p.inputs().size(); ++i) index.emplace(p.inputs()[i].name, i);
  return index;
}

// The input named `name` (its index by name in `index`: InputIndex(p)), which must be a
// floating-point data input (`what`: "wrt").
size_t FindDifferentiableInput(const Program& p,
                               const std::unordered_map<std::string, size_t>& index,
                               const std::string& name, const char* what) {
  auto found = index.find(name);
  if (found != index.end()) {
    const size_t i = found->second;
    const program::Input& in = p.inputs()[i];
    if (in.role == program::InputRole::kDim) {
      throw Error(Code::kInvalidArgument, std::string("autodiff: ") + what + " names '" + name +
                                              "', a dimension input (only floating-point " +
                                              "tensors are differentiated)");
    }
    if (!ops::IsDifferentiable(in.type.dtype)) {
      throw Error(Code::kDtypeMismatch,
                  std::string("autodiff: ") + what + " names the input '" + name + "' of dtype " +
                      trace::DTypeName(in.type.dtype) +
                      "; only floating-point values (f32, f64, f16, bf16) are differentiated");
    }
    return i;
  }
  std::string known;
  for (const program::Input& in : p.inputs()) known += (known.empty() ? "" : ", ") + in.name;
  throw Error(Code::kNotFound, std::string("autodiff: ") + what + " names no input '" + name +
                                   "' (the inputs: " + known + ")");
}

size_t FindOutput(const Program& p, const std::string& name, const char* what) {
  for (size_t i = 0; i < p.outputs().size(); ++i) {
    if (p.outputs()[i].name != name) continue;
    const trace::DType dt = p.value_type(p.outputs()[i].value).dtype;
    if (!ops::IsDifferentiable(dt)) {
      throw Error(Code::kDtypeMismatch,
                  std::string("autodiff: ") + what + " names the output '" + name + "' of dtype " +
                      trace::DTypeName(dt) +
                      "; only floating-point values (f32, f64, f16, bf16) are differentiated");
    }
    return i;
  }
  std::string known;
  for (const program::Output& o : p.outputs()) known += (known.empty() ? "" : ", ") + o.name;
  throw Error(Code::kNotFound, std::string("autodiff: ") + what + " names no output '" + name +
                                   "' (the outputs: " + known + ")");
}

// `base` + suffix, with the suffix repeated until the name is free among `taken` (a second
// order derivative of x is "x.grad.grad" when "x.grad" is already an output).
std::string FreeName(const std::string& base, const std::string& suffix,
                     std::set<std::string>* taken) {
  std::string name = base + suffix;
  while (taken->count(name)) name += suffix;
  taken->insert(name);
  return name;
}

// The name of d(of)/d(x) by its order: "x.grad" for an output that is not a derivative of x,
// one ".grad" more than `of` when it is one ("x.grad.grad" -> "x.grad.grad.grad"), so a name
// names one order only, also after grad dropped the lower orders' outputs; then made free
// among `taken`.
std::string GradName(const std::string& of, const std::string& x, std::set<std::string>* taken) {
  const std::string suffix = ".grad";
  std::string name = x + suffix;
  for (std::string n = name; n.size() <= of.size(); n += suffix) {
    if (n == of) name = n + suffix;
  }
  while (taken->count(name)) name += suffix;
  taken->insert(name);
  return name;
}

std::set<std::string> InputNames(const Program& p) {
  std::set<std::string> s;
  for (const program::Input& in : p.inputs()) s.insert(in.name);
  return s;
}

std::set<std::string> OutputNames(const Program& p) {
  std::set<std::string> s;
  for (const program::Output& o : p.outputs()) s.insert(o.name);
  return s;
}

// `v` (indices below `bound`), refused when an index repeats: names[i] for the first i whose
// index an earlier entry has.
std::vector<size_t> Unique(std::vector<size_t> v, size_t bound,
                           const std::vector<std::string>& names, const char* what) {
  std::vector<bool> seen(bound, false);
  for (size_t i = 0; i < v.size(); ++i) {
    if (seen[v[i]]) {
      throw Error(Code::kInvalidArgument,
                  std::string("autodiff: ") + what + " names '" + names[i] + "' twice");
    }
    seen[v[i]] = true;
  }
  return v;
}

// The number of results of a control-flow node's operation.
size_t ResultCount(const Tensor* y) {
  const auto& a = std::get<ops::ControlFlowAttrs>(y->attrs);
  return y->op == ops::OpKind::kWhileLoop ? static_cast<size_t>(a.counts[0])
                                          : a.bodies[0]->num_outputs();
}

ops::AdNode NodeOf(const Tensor* t) { return ops::AdNode{t->op, t->attrs, t->operands, t}; }

// The program of `r`'s trace: the original inputs then `extra_inputs`; the outputs `keep` of
// the original (all when null), then `extra` (name, value, role).
struct Extra {
  std::string name;
  const Tensor* value;
  program::OutputRole role;
};
std::unique_ptr<Program> Finish(const Program& p, Replay& r,
                                const std::vector<const Tensor*>& extra_inputs,
                                const std::vector<size_t>* keep, const std::vector<Extra>& extra) {
  std::vector<const Tensor*> inputs = r.inputs;
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  std::vector<const Tensor*> outputs;
  std::vector<std::string> names;
  std::vector<program::OutputRole> roles;
  for (size_t i = 0; i < p.outputs().size(); ++i) {
    if (keep != nullptr && std::find(keep->begin(), keep->end(), i) == keep->end()) continue;
    const program::Output& o = p.outputs()[i];
    outputs.push_back(r.values[static_cast<size_t>(o.value)]);
    names.push_back(o.name);
    roles.push_back(o.role);
  }
  for (const Extra& e : extra) {
    names.push_back(e.name);
    outputs.push_back(e.value);
    roles.push_back(e.role);
  }
  return Program::FromTrace(*r.trace, inputs, outputs, names, roles);
}

std::unique_ptr<Program> JvpOne(const Program& p, const std::vector<std::string>& wrt,
                                const std::vector<double>& default_fill) {
  if (!default_fill.empty() && default_fill.size() != wrt.size()) {
    throw Error(Code::kInvalidArgument,
                "jvp: " + std::to_string(default_fill.size()) + " default tangent values for " +
                    std::to_string(wrt.size()) + " inputs in 'wrt' (give one per input)");
  }
  std::vector<size_t> idx;
  const std::unordered_map<std::string, size_t> index = InputIndex(p);
  for (const std::string& w : wrt) idx.push_back(FindDifferentiableInput(p, index, w, "wrt"));
  idx = Unique(idx, p.inputs().size(), wrt, "wrt");

  Replay r = p.ReplayIntoTrace();
  TraceBuilder b(r.trace.get(), r.values);
  std::set<std::string> in_names = InputNames(p), out_names = OutputNames(p);
  std::unordered_map<const Tensor*, Value> tangent;
  std::vector<const Tensor*> tangent_inputs;
  for (size_t k = 0; k < idx.size(); ++k) {
    const Tensor* x = r.inputs[idx[k]];
    const Tensor* tx = r.trace->DerivedInput(
        FreeName(wrt[k], ".tangent", &in_names), trace::InputRole::kTangent, x->type.dtype,
        x->type.shape, nullptr, 0, default_fill.empty() ? nullptr : &default_fill[k]);
    tangent_inputs.push_back(tx);
    tangent[x] = tx;
  }
  const size_t num_inputs = p.inputs().size();
  for (size_t v = num_inputs; v < r.values.size(); ++v) {
    const Tensor* y = r.values[v];
    if (!ops::IsDifferentiable(y->type.dtype)) continue;
    std::vector<Value> ts;
    bool any = false;
    for (const Tensor* o : y->operands) {
      auto it = tangent.find(o);
      ts.push_back(it == tangent.end() ? nullptr : it->second);
      any = any || ts.back() != nullptr;
    }
    if (!any) continue;
    if (ops::IsControlFlow(y->op)) {
      // All results of the operation at once, at its first node (control_flow_ad.h).
      const std::vector<size_t> nodes = OperationNodes(r.values, v);
      if (nodes.front() != v) continue;
      const std::vector<Value> tr = ControlFlowJvp(*r.trace, y, ts);
      for (size_t u : nodes) {
        const auto& a = std::get<ops::ControlFlowAttrs>(r.values[u]->attrs);
        if (Value tu = tr[static_cast<size_t>(a.result)]) tangent[r.values[u]] = tu;
      }
      continue;
    }
    Value ty = ops::Def(y->op).Jvp(b, NodeOf(y), ts);
    if (ty != nullptr) tangent[y] = ty;
  }
  std::vector<Extra> extra;
  for (const program::Output& o : p.outputs()) {
    const Tensor* y = r.values[static_cast<size_t>(o.value)];
    if (!ops::IsDifferentiable(y->type.dtype)) continue;
    auto it = tangent.find(y);
    extra.push_back(Extra{FreeName(o.name, ".tangent", &out_names),
                          it == tangent.end() ? b.Zeros(y->type) : it->second,
                          program::OutputRole::kTangent});
  }
  return Finish(p, r, tangent_inputs, nullptr, extra);
}

// Reverse mode over `r`: the cotangents of the inputs `ins` given seeds for the outputs
// `outs` (cotangent inputs made here, with `seed_default` as their default when not null).
std::vector<Value> Backward(const Program& p, Replay& r, TraceBuilder& b,
                            const std::vector<size_t>& outs, const std::vector<size_t>& ins,
                            const std::vector<std::string>& of, const double* seed_default,
                            std::vector<const Tensor*>* ct_inputs) {
  const size_t num_inputs = p.inputs().size();
  // Forward: which values depend on an input of `ins` (only those need cotangents).
  std::vector<bool> active(r.values.size(), false);
  std::unordered_map<const Tensor*, size_t> id;
  for (size_t v = 0; v < r.values.size(); ++v) id[r.values[v]] = v;
  for (size_t i : ins) active[i] = true;
  for (size_t v = num_inputs; v < r.values.size(); ++v) {
    const Tensor* y = r.values[v];
    if (!ops::IsDifferentiable(y->type.dtype)) continue;
    for (const Tensor* o : y->operands) active[v] = active[v] || active[id.at(o)];
  }
  // Backward, from the cotangent inputs.
  std::set<std::string> in_names = InputNames(p);
  std::vector<Value> ct(r.values.size(), nullptr);
  for (size_t k = 0; k < outs.size(); ++k) {
    const Tensor* y = r.values[static_cast<size_t>(p.outputs()[outs[k]].value)];
    const std::string name = FreeName(of[k], ".cotangent", &in_names);
    const Tensor* c = nullptr;
    if (seed_default != nullptr) {  // grad: a scalar output, seeded with 1
      uint64_t seed = 0;            // the seed in the output's dtype
      kernels::StoreScalar(y->type.dtype, *seed_default, &seed);
      c = r.trace->DerivedInput(name, trace::InputRole::kCotangent, y->type.dtype, y->type.shape,
                                &seed, trace::DTypeSize(y->type.dtype));
    } else {
      c = r.trace->DerivedInput(name, trace::InputRole::kCotangent, y->type.dtype, y->type.shape);
    }
    ct_inputs->push_back(c);
    size_t v = id.at(y);
    ct[v] = b.AddZ(ct[v], c);
  }
  for (size_t v = r.values.size(); v-- > num_inputs;) {
    const Tensor* y = r.values[v];
    std::vector<Value> cts;
    std::vector<bool> need;
    if (ops::IsControlFlow(y->op) && active[v]) {
      // At the operation's first node (its others come later, so their cotangents are
      // complete): all results' cotangents at once (control_flow_ad.h).
      const std::vector<size_t> nodes = OperationNodes(r.values, v);
      if (nodes.front() != v) continue;
      std::vector<Value> result_cts;
      bool any = false;
      for (size_t u : nodes) {
        const size_t k =
            static_cast<size_t>(std::get<ops::ControlFlowAttrs>(r.values[u]->attrs).result);
        if (result_cts.size() <= k) result_cts.resize(k + 1, nullptr);
        result_cts[k] = b.AddZ(result_cts[k], ct[u]);
        any = any || ct[u] != nullptr;
      }
      if (!any) continue;
      result_cts.resize(std::max(result_cts.size(), ResultCount(y)), nullptr);
      for (const Tensor* o : y->operands) need.push_back(active[id.at(o)]);
      cts = ControlFlowVjp(*r.trace, y, result_cts, need);
    } else {
      if (ct[v] == nullptr || !active[v]) continue;
      for (const Tensor* o : y->operands) need.push_back(active[id.at(o)]);
      cts = ops::Def(y->op).Vjp(b, NodeOf(y), ct[v], need);
    }
    for (size_t i = 0; i < y->operands.size(); ++i) {
      if (!need[i] || i >= cts.size() || cts[i] == nullptr) continue;
      size_t o = id.at(y->operands[i]);
      ct[o] = b.AddZ(ct[o], cts[i]);
    }
  }
  std::vector<Value> grads;
  for (size_t i : ins) grads.push_back(ct[i] ? ct[i] : b.Zeros(r.values[i]->type));
  return grads;
}

std::unique_ptr<Program> VjpOne(const Program& p, const std::vector<std::string>& of,
                                const std::vector<std::string>& wrt) {
  std::vector<size_t> outs, ins;
  for (const std::string& o : of) outs.push_back(FindOutput(p, o, "of"));
  outs = Unique(outs, p.outputs().size(), of, "of");
  const std::unordered_map<std::string, size_t> index = InputIndex(p);
  for (const std::string& w : wrt) ins.push_back(FindDifferentiableInput(p, index, w, "wrt"));
  ins = Unique(ins, p.inputs().size(), wrt, "wrt");
  Replay r = p.ReplayIntoTrace();
  TraceBuilder b(r.trace.get(), r.values);
  std::vector<const Tensor*> ct_inputs;
  std::vector<Value> grads = Backward(p, r, b, outs, ins, of, nullptr, &ct_inputs);
  std::set<std::string> out_names = OutputNames(p);
  std::vector<Extra> extra;
  for (size_t k = 0; k < ins.size(); ++k)
    extra.push_back(
        Extra{FreeName(wrt[k], ".grad", &out_names), grads[k], program::OutputRole::kGrad});
  return Finish(p, r, ct_inputs, nullptr, extra);
}

std::unique_ptr<Program> GradOne(const Program& p, const std::string& of,
                                 const std::vector<std::string>& wrt) {
  size_t out = FindOutput(p, of, "of");
  const trace::TensorType& t = p.value_type(p.outputs()[out].value);
  if (!t.shape.empty()) {
    throw Error(Code::kShapeMismatch, "autodiff: grad needs a scalar output, but '" + of +
                                          "' has rank " + std::to_string(t.shape.size()) +
                                          " (use vjp for a non-scalar output)");
  }
  std::vector<size_t> ins;
  const std::unordered_map<std::string, size_t> index = InputIndex(p);
  for (const std::string& w : wrt) ins.push_back(FindDifferentiableInput(p, index, w, "wrt"));
  ins = Unique(ins, p.inputs().size(), wrt, "wrt");
  Replay r = p.ReplayIntoTrace();
  TraceBuilder b(r.trace.get(), r.values);
  std::vector<const Tensor*> ct_inputs;
  const double one = 1.0;
  std::vector<Value> grads = Backward(p, r, b, {out}, ins, {of}, &one, &ct_inputs);
  std::set<std::string> out_names = InputNames(p);
  out_names.insert(of);
  std::vector<Extra> extra;
  for (size_t k = 0; k < ins.size(); ++k)
    extra.push_back(Extra{GradName(of, wrt[k], &out_names), grads[k], program::OutputRole::kGrad});
  std::vector<size_t> keep = {out};
  return Finish(p, r, ct_inputs, &keep, extra);
}

// A transformation of a multi-variant program transforms each variant and combines the
// results: variant i of the result is the transformation of variant i.
template <typename F>
std::unique_ptr<Program> EachVariant(const Program& p, F transform) {
  if (p.num_variants() == 1) return transform(p);
  std::vector<std::shared_ptr<const Program>> out;
  for (size_t v = 0; v < p.num_variants(); ++v)
    out.push_back(std::shared_ptr<const Program>(transform(p.variant(v)).release()));
  return Program::CreateVariants(out);
}

}  // namespace

std::unique_ptr<Program> Jvp(const Program& p, const std::vector<std::string>& wrt,
                             const std::vector<double>& default_fill) {
  return Program::WithMetadataOf(
      EachVariant(p, [&](const Program& q) { return JvpOne(q, wrt, default_fill); }), p);
}

std::unique_ptr<Program> Vjp(const Program& p, const std::vector<std::string>& of,
                             const std::vector<std::string>& wrt) {
  return Program::WithMetadataOf(
      EachVariant(p, [&](const Program& q) { return VjpOne(q, of, wrt); }), p);
}

std::unique_ptr<Program> Grad(const Program& p, const std::string& of,
                              const std::vector<std::string>& wrt) {
  return Program::WithMetadataOf(
      EachVariant(p, [&](const Program& q) { return GradOne(q, of, wrt); }), p);
}

}  // namespace autodiff
}  // namespace shp
