#include "cc/vmap/vmap.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cc/base/error.h"
#include "cc/kernels/narrow.h"
#include "cc/ops/batch.h"
#include "cc/ops/op_def.h"
#include "cc/trace/trace.h"
#include "cc/vmap/control_flow_vmap.h"

namespace shp {
namespace vmap {
namespace {

using ops::Shape;
using ops::Value;
using program::Program;
using trace::Tensor;

// The rules' builder over the replayed trace.
class Builder final : public ops::AdBuilder {
 public:
  explicit Builder(trace::Trace* t) : t_(t) {}
  dim::Scope* dims() override { return t_->dims(); }
  const trace::TensorType& type(Value v) override { return v->type; }
  Value Apply(ops::OpKind op, ops::Attrs attrs, const std::vector<Value>& operands) override {
    return t_->Apply(op, std::move(attrs), operands);
  }
  Value Scalar(trace::DType dtype, double value) override {
    uint64_t bits = 0;
    kernels::StoreScalar(dtype, value, &bits);
    return t_->Constant(dtype, {}, &bits, trace::DTypeSize(dtype));
  }

 private:
  trace::Trace* t_;
};

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// yb, after checking every rule's promise: y's dtype and [size] + y's shape.
Value CheckedResult(dim::Scope* s, const Tensor* y, Value yb, const dim::Expr* size) {
  Shape want{size};
  want.insert(want.end(), y->type.shape.begin(), y->type.shape.end());
  bool same = yb->type.dtype == y->type.dtype && yb->type.shape.size() == want.size();
  for (size_t k = 0; same && k < want.size(); ++k) {
    same = yb->type.shape[k] == want[k] ||
           s->Compare(yb->type.shape[k], dim::Cmp::kEq, want[k]) == dim::Truth::kTrue;
  }
  if (!same) {
    throw Error(Code::kInternal, std::string("vmap: the batching rule of ") + ops::OpName(y->op) +
                                     " gave " + s->ShapeToString(yb->type.shape) + " for " +
                                     s->ShapeToString(want));
  }
  return yb;
}

// Whether u is a node of the control-flow operation of node y (same op, operands, attributes
// but the result index).
bool SameOperation(const Tensor* u, const Tensor* y) {
  if (u->source != trace::Source::kOp || u->op != y->op || u->operands != y->operands) return false;
  const auto& a = std::get<ops::ControlFlowAttrs>(u->attrs);
  const auto& b = std::get<ops::ControlFlowAttrs>(y->attrs);
  return a.bodies == b.bodies && a.counts == b.counts && a.axis == b.axis &&
         a.reverse == b.reverse && a.length == b.length && a.max_trips == b.max_trips;
}

std::unique_ptr<Program> VmapOne(const Program& p, const std::vector<int64_t>& in_axes,
                                 const std::vector<int64_t>& out_axes, const std::string& name) {
  program::Replay r = p.ReplayIntoTrace();
  dim::Scope* s = r.scope.get();
  if (s->FindVar(name) >= 0) {
    throw Error(Code::kInvalidArgument, "vmap: the batch variable " + Quoted(name) +
                                            " is already a dimension variable of the program");
  }
  s->Declare(name, 0, dim::kPosInf);
  const dim::Expr* size = s->Var(name);
  trace::Trace& t = *r.trace;
  Builder b(&t);

  // batched[v]: value v with its batch axis first, or nullptr (the same for every element).
  std::vector<Value> batched(r.values.size(), nullptr);
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < p.inputs().size(); ++i) {
    const program::Input& in = p.inputs()[i];
    const Tensor* x = r.inputs[i];
    if (in_axes[i] < 0) {
      inputs.push_back(x);
      continue;
    }
    Shape shape = x->type.shape;
    const size_t axis = static_cast<size_t>(in_axes[i]);
    shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), size);
    const Tensor* xb = t.DerivedInput(in.name, in.role, in.type.dtype, shape, nullptr, 0,
                                      in.has_fill ? &in.fill : nullptr);
    inputs.push_back(xb);
    batched[i] = ops::MoveAxisToFront(b, xb, axis);
  }

  std::unordered_map<const Tensor*, size_t> index;
  for (size_t v = 0; v < r.values.size(); ++v) index[r.values[v]] = v;
  for (size_t v = p.inputs().size(); v < r.values.size(); ++v) {
    const Tensor* y = r.values[v];
    if (y->source != trace::Source::kOp) continue;
    std::vector<Value> operand_batched;
    bool any = false;
    for (const Tensor* o : y->operands) {
      const Value ob = batched[index.at(o)];
      operand_batched.push_back(ob);
      any = any || ob != nullptr;
    }
    if (!any) continue;
    if (ops::IsControlFlow(y->op)) {
      // All results of the operation at once, at its first node (its nodes are consecutive).
      if (batched[v] != nullptr) continue;
      const std::vector<Value> results = BatchControlFlow(t, y, operand_batched, size, name);
      for (size_t u = v; u < r.values.size() && SameOperation(r.values[u], y); ++u) {
        const auto& a = std::get<ops::ControlFlowAttrs>(r.values[u]->attrs);
        batched[u] = CheckedResult(s, r.values[u], results[static_cast<size_t>(a.result)], size);
      }
      continue;
    }
    const ops::BatchNode node{y->op, y->attrs, y->operands, y, operand_batched, size};
    batched[v] = CheckedResult(s, y, ops::Def(y->op).Batch(b, node), size);
  }

  std::vector<const Tensor*> outputs;
  std::vector<std::string> names;
  std::vector<program::OutputRole> roles;
  for (size_t o = 0; o < p.outputs().size(); ++o) {
    const program::Output& out = p.outputs()[o];
    const Tensor* y = r.values[static_cast<size_t>(out.value)];
    Value yb = batched[static_cast<size_t>(out.value)];
    const int64_t axis = out_axes.empty() ? 0 : out_axes[o];
    if (axis < 0) {
      if (yb != nullptr) {
        throw Error(Code::kInvalidArgument, "vmap: out_axes[" + std::to_string(o) +
                                                "] is -1 (not batched), but output " +
                                                Quoted(out.name) + " depends on a batched input");
      }
      outputs.push_back(y);
    } else {
      if (yb == nullptr) {  // the same for every element: broadcast along the batch
        Shape to{size};
        to.insert(to.end(), y->type.shape.begin(), y->type.shape.end());
        yb = b.BroadcastTo(y, to);
      }
      const size_t rank = yb->type.shape.size();
      if (axis != 0) {  // the batch axis (first) moved to `axis`
        std::vector<int64_t> perm;
        for (size_t k = 1; k < rank; ++k) perm.push_back(static_cast<int64_t>(k));
        perm.insert(perm.begin() + axis, 0);
        yb = b.Transpose(yb, perm);
      }
      outputs.push_back(yb);
    }
    names.push_back(out.name);
    roles.push_back(out.role);
  }
  return Program::FromTrace(t, inputs, outputs, names, roles);
}

}  // namespace

std::string DefaultBatchName(const Program& p) {
  std::set<std::string> taken;
  for (size_t v = 0; v < p.num_variants(); ++v) {
    for (const std::string& n : p.variant(v).variable_names()) taken.insert(n);
  }
  for (int i = 0;; ++i) {
    std::string name = "vmap" + std::to_string(i);
    if (taken.count(name) == 0) return name;
  }
}

std::unique_ptr<Program> Vmap(const Program& p, const std::vector<int64_t>& in_axes,
                              const std::vector<int64_t>& out_axes, const std::string& batch_name) {
  if (in_axes.size() != p.inputs().size()) {
    throw Error(Code::kInvalidArgument, "vmap: " + std::to_string(in_axes.size()) +
                                            " in_axes for a program with " +
                                            std::to_string(p.inputs().size()) +
                                            " inputs (give one per input, -1: not batched)");
  }
  if (!out_axes.empty() && out_axes.size() != p.outputs().size()) {
    throw Error(Code::kInvalidArgument,
                "vmap: " + std::to_string(out_axes.size()) + " out_axes for a program with " +
                    std::to_string(p.outputs().size()) + " outputs (give one per output, or none)");
  }
  bool any = false;
  for (size_t i = 0; i < in_axes.size(); ++i) {
    const program::Input& in = p.inputs()[i];
    const int64_t rank = static_cast<int64_t>(in.type.shape.size());
    if (in_axes[i] == -1) continue;
    if (in_axes[i] < -1 || in_axes[i] > rank) {
      throw Error(Code::kInvalidArgument,
                  "vmap: in_axes[" + std::to_string(i) + "] = " + std::to_string(in_axes[i]) +
                      " for input " + Quoted(in.name) +
                      ": expected -1 (not batched) or an axis in [0, " + std::to_string(rank) +
                      "] (its batched rank is " + std::to_string(rank + 1) + ")");
    }
    if (in.role == program::InputRole::kDim) {
      throw Error(Code::kInvalidArgument, "vmap: in_axes[" + std::to_string(i) + "] batches " +
                                              Quoted(in.name) +
                                              ", a dimension input (a variable's value is one "
                                              "number for the whole batch): give -1");
    }
    if (in.default_buffer >= 0) {
      throw Error(Code::kInvalidArgument,
                  "vmap: in_axes[" + std::to_string(i) + "] batches " + Quoted(in.name) +
                      ", which has a default value of a fixed shape; give -1 (one value for the "
                      "whole batch) or pass the input without a default");
    }
    any = true;
  }
  if (!any) {
    throw Error(Code::kInvalidArgument,
                "vmap: no input is batched (every in_axes entry is -1); batch at least one, so "
                "that the batch size is known from its shape");
  }
  for (size_t o = 0; o < out_axes.size(); ++o) {
    const int64_t rank = static_cast<int64_t>(p.value_type(p.outputs()[o].value).shape.size());
    if (out_axes[o] < -1 || out_axes[o] > rank) {
      throw Error(Code::kInvalidArgument, "vmap: out_axes[" + std::to_string(o) +
                                              "] = " + std::to_string(out_axes[o]) +
                                              " for output " + Quoted(p.outputs()[o].name) +
                                              ": expected -1 (not batched) or an axis in [0, " +
                                              std::to_string(rank) + "]");
    }
  }
  const std::string name = batch_name.empty() ? DefaultBatchName(p) : batch_name;
  // (The metadata is the source program's, whatever the variants.)
  if (p.num_variants() == 1) return Program::WithMetadataOf(VmapOne(p, in_axes, out_axes, name), p);
  std::vector<std::shared_ptr<const Program>> out;
  for (size_t v = 0; v < p.num_variants(); ++v)
    out.push_back(
        std::shared_ptr<const Program>(VmapOne(p.variant(v), in_axes, out_axes, name).release()));
  return Program::WithMetadataOf(Program::CreateVariants(out), p);
}

}  // namespace vmap
}  // namespace shp
