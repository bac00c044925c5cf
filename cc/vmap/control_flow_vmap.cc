#include "cc/vmap/control_flow_vmap.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/rebuild.h"
#include "cc/ops/op_def.h"
#include "cc/program/subprogram.h"
#include "cc/vmap/vmap.h"

namespace shp {
namespace vmap {
namespace {

using ops::ControlFlowAttrs;
using ops::OpKind;
using ops::Shape;
using program::Program;
using trace::DType;
using trace::Tensor;

const ControlFlowAttrs& Cf(const Tensor* y) { return std::get<ControlFlowAttrs>(y->attrs); }

const Program& BodyProgram(const ControlFlowAttrs& a, size_t i) {
  return program::BodyOf(*a.bodies[i]).program();
}

std::shared_ptr<const ops::Subprogram> AsBody(std::unique_ptr<Program> p) {
  return std::make_shared<program::ProgramBody>(std::shared_ptr<const Program>(p.release()));
}

// x with its batch axis first: xb, or x broadcast along a new leading axis.
const Tensor* Batched(trace::Trace& t, const Tensor* x, const Tensor* xb, const dim::Expr* size) {
  if (xb != nullptr) return xb;
  Shape s{size};
  s.insert(s.end(), x->type.shape.begin(), x->type.shape.end());
  return t.BroadcastTo(x, s);
}

// q's nodes applied in t to `inputs` (q's dims rebuilt into t's scope by name); its outputs.
std::vector<const Tensor*> Inline(trace::Trace& t, const Program& q,
                                  const std::vector<const Tensor*>& inputs) {
  return q.WithScope([&](dim::Scope&) {
    dim::Rebuilder rb(t.dims());
    std::vector<const Tensor*> v(inputs);
    for (const program::Node& n : q.nodes()) {
      if (n.op == OpKind::kConstant) {
        std::vector<int64_t> shape;
        for (const dim::Expr* d : n.type.shape) shape.push_back(d->ConstantTerm());
        const std::string& bytes =
            q.buffers()[static_cast<size_t>(std::get<ops::ConstantAttrs>(n.attrs).buffer)];
        v.push_back(t.Constant(n.type.dtype, shape, bytes.data(), bytes.size()));
        continue;
      }
      ops::Attrs attrs = n.attrs;
      ops::ForEachDim(attrs, [&](const dim::Expr*& e) { e = rb.Expr(e); });
      std::vector<const Tensor*> operands;
      for (int32_t o : n.operands) operands.push_back(v[static_cast<size_t>(o)]);
      v.push_back(t.Apply(n.op, std::move(attrs), operands));
    }
    std::vector<const Tensor*> out;
    for (const program::Output& o : q.outputs()) out.push_back(v[static_cast<size_t>(o.value)]);
    return out;
  });
}

// pred [size] (bool) reshaped to broadcast against a batched value of rank `rank` + 1.
const Tensor* PredFor(trace::Trace& t, const Tensor* pred, size_t rank) {
  if (rank == 0) return pred;
  Shape s{pred->type.shape[0]};
  s.insert(s.end(), rank, t.dims()->Constant(1));
  return t.Reshape(pred, s);
}

std::vector<std::string> Names(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back("out" + std::to_string(i));
  return v;
}

std::vector<int64_t> Axes(const std::vector<const Tensor*>& batched, size_t begin, size_t end) {
  std::vector<int64_t> v;
  for (size_t i = begin; i < end; ++i) v.push_back(batched[i] != nullptr ? 0 : -1);
  return v;
}

std::vector<const Tensor*> BatchCond(trace::Trace& t, const Tensor* y,
                                     const std::vector<const Tensor*>& batched,
                                     const dim::Expr* size, const std::string& name) {
  const ControlFlowAttrs& a = Cf(y);
  const std::vector<const Tensor*>& ops = y->operands;
  const std::vector<int64_t> in_axes = Axes(batched, 1, ops.size());
  bool any_operand = false;
  for (int64_t ax : in_axes) any_operand = any_operand || ax == 0;
  std::vector<const Tensor*> operands{ops[0]};
  for (size_t i = 1; i < ops.size(); ++i)
    operands.push_back(batched[i] != nullptr ? batched[i] : ops[i]);
  if (batched[0] == nullptr) {  // one branch for the whole batch
    ControlFlowAttrs c = a;
    c.bodies = {AsBody(Vmap(BodyProgram(a, 0), in_axes, {}, name)),
                AsBody(Vmap(BodyProgram(a, 1), in_axes, {}, name))};
    if (!a.sizes.empty()) {
      // Result sizes set by the branch that runs, the same for the whole batch: each batched
      // result has the batch axis first, then the sizes it had.
      const Program& b = BodyProgram(a, 0);
      c.sizes.clear();
      size_t j = 0;
      for (const program::Output& o : b.outputs()) {
        c.sizes.push_back(nullptr);
        for (size_t d = 0; d < b.value_type(o.value).shape.size(); ++d) {
          c.sizes.push_back(a.sizes.at(j++));
        }
      }
    }
    return t.ControlFlow(OpKind::kCond, c, operands);
  }
  if (!a.sizes.empty()) {
    throw Error(Code::kUnsupported,
                "vmap: a cond whose branches return different sizes (its results' sizes are set "
                "by the branch that runs) with a predicate per batch element: the elements could "
                "take different branches and so have different sizes; vmap it with a predicate "
                "shared by the batch");
  }
  // A predicate per element: both branches, then a select per element.
  std::vector<const Tensor*> branch_inputs(operands.begin() + 1, operands.end());
  std::vector<const Tensor*> on_true, on_false;
  if (any_operand) {
    on_true = Inline(t, *Vmap(BodyProgram(a, 0), in_axes, {}, name), branch_inputs);
    on_false = Inline(t, *Vmap(BodyProgram(a, 1), in_axes, {}, name), branch_inputs);
  } else {
    on_true = Inline(t, BodyProgram(a, 0), branch_inputs);
    on_false = Inline(t, BodyProgram(a, 1), branch_inputs);
  }
  std::vector<const Tensor*> out;
  for (size_t k = 0; k < on_true.size(); ++k) {
    const Tensor* tk = Batched(t, on_true[k], any_operand ? on_true[k] : nullptr, size);
    const Tensor* fk = Batched(t, on_false[k], any_operand ? on_false[k] : nullptr, size);
    out.push_back(t.Select(PredFor(t, batched[0], tk->type.shape.size() - 1), tk, fk));
  }
  return out;
}

std::vector<const Tensor*> BatchWhile(trace::Trace& t, const Tensor* y,
                                      const std::vector<const Tensor*>& batched,
                                      const dim::Expr* size, const std::string& name) {
  const ControlFlowAttrs& a = Cf(y);
  const std::vector<const Tensor*>& ops = y->operands;
  const size_t nc = static_cast<size_t>(a.counts[0]);
  std::vector<int64_t> in_axes(nc, 0);  // every carry batched
  for (int64_t ax : Axes(batched, nc, ops.size())) in_axes.push_back(ax);
  const std::unique_ptr<Program> cond_b = Vmap(BodyProgram(a, 0), in_axes, {}, name);
  const std::unique_ptr<Program> body_b = Vmap(BodyProgram(a, 1), in_axes, {}, name);

  // The loop's condition: some element's condition holds.
  program::Replay rc = cond_b->ReplayIntoTrace();
  trace::Trace& c = *rc.trace;
  const Tensor* p = rc.values[static_cast<size_t>(cond_b->outputs()[0].value)];
  const Tensor* count = c.Reduce(OpKind::kReduceSum, c.Convert(p, DType::kI32), {0}, false);
  const int32_t zero = 0;
  const Tensor* any = c.Binary(OpKind::kGt, count, c.Constant(DType::kI32, {}, &zero, 4));
  std::unique_ptr<Program> cond = Program::FromTrace(c, rc.inputs, {any}, Names(1));

  // The step: the body where the element's condition holds, else the carry unchanged.
  program::Replay rb = body_b->ReplayIntoTrace();
  trace::Trace& b = *rb.trace;
  const Tensor* holds = Inline(b, *cond_b, rb.inputs)[0];
  std::vector<const Tensor*> next;
  for (size_t k = 0; k < nc; ++k) {
    const Tensor* nk = rb.values[static_cast<size_t>(body_b->outputs()[k].value)];
    next.push_back(b.Select(PredFor(b, holds, nk->type.shape.size() - 1), nk, rb.inputs[k]));
  }
  std::unique_ptr<Program> body = Program::FromTrace(b, rb.inputs, next, Names(nc));

  ControlFlowAttrs w = a;
  w.bodies = {AsBody(std::move(cond)), AsBody(std::move(body))};
  std::vector<const Tensor*> operands;
  for (size_t i = 0; i < ops.size(); ++i) {
    operands.push_back(i < nc ? Batched(t, ops[i], batched[i], size)
                              : (batched[i] != nullptr ? batched[i] : ops[i]));
  }
  return t.ControlFlow(OpKind::kWhileLoop, w, operands);
}

std::vector<const Tensor*> BatchScan(trace::Trace& t, const Tensor* y,
                                     const std::vector<const Tensor*>& batched,
                                     const dim::Expr* size, const std::string& name) {
  const ControlFlowAttrs& a = Cf(y);
  if (!a.sizes.empty()) {
    throw Error(Code::kUnsupported,
                "vmap: a scan whose ys have sizes its body computes from data: each batch "
                "element could give another size");
  }
  const std::vector<const Tensor*>& ops = y->operands;
  const size_t nc = static_cast<size_t>(a.counts[0]), nx = static_cast<size_t>(a.counts[1]);
  std::vector<int64_t> in_axes(nc + nx, 0);  // every carry and every xs batched
  for (int64_t ax : Axes(batched, nc + nx, ops.size())) in_axes.push_back(ax);
  ControlFlowAttrs s = a;
  s.bodies = {AsBody(Vmap(BodyProgram(a, 0), in_axes, {}, name))};
  s.axis = a.axis + 1;
  std::vector<const Tensor*> operands;
  for (size_t i = 0; i < ops.size(); ++i) {
    operands.push_back(i < nc + nx ? Batched(t, ops[i], batched[i], size)
                                   : (batched[i] != nullptr ? batched[i] : ops[i]));
  }
  return t.ControlFlow(OpKind::kScan, s, operands);
}

}  // namespace

std::vector<const Tensor*> BatchControlFlow(trace::Trace& t, const Tensor* y,
                                            const std::vector<const Tensor*>& batched,
                                            const dim::Expr* size, const std::string& name) {
  switch (y->op) {
    case OpKind::kCond:
      return BatchCond(t, y, batched, size, name);
    case OpKind::kWhileLoop:
      return BatchWhile(t, y, batched, size, name);
    case OpKind::kScan:
      return BatchScan(t, y, batched, size, name);
    default:
      throw Error(Code::kInternal,
                  std::string("vmap: ") + ops::OpName(y->op) + " is not a control-flow operation");
  }
}

}  // namespace vmap
}  // namespace shp
