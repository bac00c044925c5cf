#include "cc/autodiff/control_flow_ad.h"

#include <memory>
#include <string>
#include <utility>

#include "cc/autodiff/autodiff.h"
#include "cc/base/error.h"
#include "cc/dim/rebuild.h"
#include "cc/ops/ad.h"
#include "cc/ops/op_def.h"
#include "cc/program/subprogram.h"

namespace shp {
namespace autodiff {
namespace {

using ops::ControlFlowAttrs;
using ops::OpKind;
using program::Program;
using trace::Tensor;
using trace::TensorType;

const ControlFlowAttrs& Cf(const Tensor* y) { return std::get<ControlFlowAttrs>(y->attrs); }

const Program& BodyProgram(const ControlFlowAttrs& a, size_t i) {
  return program::BodyOf(*a.bodies[i]).program();
}

std::shared_ptr<const ops::Subprogram> AsBody(std::unique_ptr<Program> p) {
  return std::make_shared<program::ProgramBody>(std::shared_ptr<const Program>(p.release()));
}

bool SameOp(const Tensor* a, const Tensor* b) {
  if (a->source != trace::Source::kOp || b->source != trace::Source::kOp || a->op != b->op ||
      !ops::IsControlFlow(a->op) || a->operands != b->operands) {
    return false;
  }
  const ControlFlowAttrs& x = Cf(a);
  const ControlFlowAttrs& y = Cf(b);
  return x.bodies == y.bodies && x.counts == y.counts && x.axis == y.axis &&
         x.reverse == y.reverse && x.length == y.length && x.max_trips == y.max_trips &&
         x.sizes == y.sizes;
}

// Zeros of `type` in trace t (every dtype's zero is all-zero bits).
const Tensor* Zeros(trace::Trace& t, const TensorType& type) {
  const uint64_t zero = 0;
  const Tensor* z = t.Constant(type.dtype, {}, &zero, trace::DTypeSize(type.dtype));
  return type.shape.empty() ? z : t.BroadcastTo(z, type.shape);
}

const Tensor* OrZeros(trace::Trace& t, const Tensor* v, const TensorType& type) {
  return v != nullptr ? v : Zeros(t, type);
}

std::vector<std::string> InputNames(const Program& p, const std::vector<size_t>& idx) {
  std::vector<std::string> names;
  for (size_t i : idx) names.push_back(p.inputs()[i].name);
  return names;
}

std::vector<std::string> OutputNames(const Program& p, const std::vector<size_t>& idx) {
  std::vector<std::string> names;
  for (size_t i : idx) names.push_back(p.outputs()[i].name);
  return names;
}

// The program q with inputs `in` (>= 0: q's input; < 0: a new unused input of type
// extra[-1 - e], given in trace scope `from`) and outputs `out` (>= 0: q's output; < 0: q's
// input -1 - e passed through).
std::unique_ptr<Program> Arranged(const Program& q, const std::vector<int>& in,
                                  const std::vector<TensorType>& extra,
                                  const std::vector<int>& out) {
  program::Replay r = q.ReplayIntoTrace();
  dim::Rebuilder rb(r.scope.get());
  std::vector<const Tensor*> inputs, outputs;
  std::vector<std::string> names;
  for (int e : in) {
    if (e >= 0) {
      inputs.push_back(r.inputs[static_cast<size_t>(e)]);
      continue;
    }
    const TensorType& t = extra[static_cast<size_t>(-1 - e)];
    inputs.push_back(r.trace->Input("unused" + std::to_string(-1 - e), t.dtype, rb.Shape(t.shape)));
  }
  for (int e : out) {
    outputs.push_back(e >= 0
                          ? r.values[static_cast<size_t>(q.outputs()[static_cast<size_t>(e)].value)]
                          : r.inputs[static_cast<size_t>(-1 - e)]);
    names.push_back("out" + std::to_string(names.size()));
  }
  return Program::FromTrace(*r.trace, inputs, outputs, names);
}

std::vector<int> Range(size_t begin, size_t end) {
  std::vector<int> v;
  for (size_t i = begin; i < end; ++i) v.push_back(static_cast<int>(i));
  return v;
}

void Append(std::vector<int>* v, const std::vector<int>& more) {
  v->insert(v->end(), more.begin(), more.end());
}

// Indices of the floating-point types among `types`.
std::vector<size_t> Floats(const std::vector<const Tensor*>& values, size_t begin, size_t end) {
  std::vector<size_t> v;
  for (size_t i = begin; i < end; ++i) {
    if (ops::IsDifferentiable(values[i]->type.dtype)) v.push_back(i);
  }
  return v;
}

std::vector<size_t> Active(const std::vector<const Tensor*>& values, size_t begin, size_t end,
                           const std::vector<bool>& on) {
  std::vector<size_t> v;
  for (size_t i = begin; i < end; ++i) {
    if (on[i] && ops::IsDifferentiable(values[i]->type.dtype)) v.push_back(i);
  }
  return v;
}

// Floating-point outputs of a program, by index.
std::vector<size_t> FloatOutputs(const Program& p, size_t begin, size_t end) {
  std::vector<size_t> v;
  for (size_t k = begin; k < end; ++k) {
    if (ops::IsDifferentiable(p.value_type(p.outputs()[k].value).dtype)) v.push_back(k);
  }
  return v;
}

// ---- jvp ----

std::vector<const Tensor*> JvpCond(trace::Trace& t, const Tensor* y,
                                   const std::vector<const Tensor*>& tan) {
  const ControlFlowAttrs& a = Cf(y);
  const std::vector<const Tensor*>& ops = y->operands;
  std::vector<bool> on(ops.size(), false);
  for (size_t i = 1; i < ops.size(); ++i) on[i] = tan[i] != nullptr;
  const std::vector<size_t> act = Active(ops, 1, ops.size(), on);
  std::vector<size_t> pos;  // as branch inputs
  for (size_t i : act) pos.push_back(i - 1);
  ControlFlowAttrs j = a;
  j.bodies = {AsBody(Jvp(BodyProgram(a, 0), InputNames(BodyProgram(a, 0), pos))),
              AsBody(Jvp(BodyProgram(a, 1), InputNames(BodyProgram(a, 1), pos)))};
  const Program& b = BodyProgram(a, 0);
  const size_t m = b.outputs().size();
  const std::vector<size_t> fo = FloatOutputs(b, 0, m);
  if (!a.sizes.empty()) {
    // Result sizes set by the branch that runs: each tangent has its primal's.
    std::vector<size_t> first(m + 1, 0);
    for (size_t k = 0; k < m; ++k)
      first[k + 1] = first[k] + b.value_type(b.outputs()[k].value).shape.size();
    for (size_t k : fo) {
      j.sizes.insert(j.sizes.end(), a.sizes.begin() + static_cast<long>(first[k]),
                     a.sizes.begin() + static_cast<long>(first[k + 1]));
    }
  }
  std::vector<const Tensor*> operands = ops;
  for (size_t i : act) operands.push_back(tan[i]);
  const std::vector<const Tensor*> r = t.ControlFlow(OpKind::kCond, j, operands);
  std::vector<const Tensor*> out(m, nullptr);
  for (size_t k = 0; k < fo.size(); ++k) out[fo[k]] = r[m + k];
  return out;
}

std::vector<const Tensor*> JvpScan(trace::Trace& t, const Tensor* y,
                                   const std::vector<const Tensor*>& tan) {
  const ControlFlowAttrs& a = Cf(y);
  const std::vector<const Tensor*>& ops = y->operands;
  const size_t nc = static_cast<size_t>(a.counts[0]), nx = static_cast<size_t>(a.counts[1]);
  const size_t n = ops.size();
  std::vector<bool> on(n, false);
  for (size_t i = 0; i < n; ++i) on[i] = tan[i] != nullptr;
  const std::vector<size_t> fc = Floats(ops, 0, nc);  // every float carry gets a tangent
  const std::vector<size_t> ax = Active(ops, nc, nc + nx, on);
  const std::vector<size_t> ak = Active(ops, nc + nx, n, on);
  const Program& body = BodyProgram(a, 0);
  std::vector<size_t> wrt = fc;
  wrt.insert(wrt.end(), ax.begin(), ax.end());
  wrt.insert(wrt.end(), ak.begin(), ak.end());
  std::unique_ptr<Program> jb = Jvp(body, InputNames(body, wrt));
  const size_t nout = body.outputs().size(), ny = nout - nc;
  // Inputs: carry, carry tangents, xs, xs tangents, consts, consts tangents.
  std::vector<int> in = Range(0, nc);
  Append(&in, Range(n, n + fc.size()));
  Append(&in, Range(nc, nc + nx));
  Append(&in, Range(n + fc.size(), n + fc.size() + ax.size()));
  Append(&in, Range(nc + nx, n));
  Append(&in, Range(n + fc.size() + ax.size(), n + wrt.size()));
  // Outputs: carry, carry tangents, ys, ys tangents (float outputs' tangents follow, in order).
  const std::vector<size_t> fy = FloatOutputs(body, nc, nout);
  std::vector<int> out = Range(0, nc);
  Append(&out, Range(nout, nout + fc.size()));
  Append(&out, Range(nc, nout));
  Append(&out, Range(nout + fc.size(), nout + fc.size() + fy.size()));
  ControlFlowAttrs j = a;
  j.bodies = {AsBody(Arranged(*jb, in, {}, out))};
  j.counts = {static_cast<int64_t>(nc + fc.size()), static_cast<int64_t>(nx + ax.size())};
  if (!a.sizes.empty()) {
    // ys with sizes the body computes: each tangent has its y's (the same variables).
    std::vector<size_t> first(nout + 1, 0);
    for (size_t k = 0; k < nout; ++k) {
      first[k + 1] = first[k] + body.value_type(body.outputs()[k].value).shape.size();
    }
    auto span = [&](size_t k) {
      return std::vector<const dim::Expr*>(a.sizes.begin() + static_cast<long>(first[k]),
                                           a.sizes.begin() + static_cast<long>(first[k + 1]));
    };
    j.sizes.assign(first[nc], nullptr);
    for (size_t k : fc) j.sizes.resize(j.sizes.size() + (first[k + 1] - first[k]), nullptr);
    for (size_t k = nc; k < nout; ++k) {
      const std::vector<const dim::Expr*> v = span(k);
      j.sizes.insert(j.sizes.end(), v.begin(), v.end());
    }
    for (size_t k : fy) {
      const std::vector<const dim::Expr*> v = span(k);
      j.sizes.insert(j.sizes.end(), v.begin(), v.end());
    }
  }
  std::vector<const Tensor*> operands(ops.begin(), ops.begin() + static_cast<long>(nc));
  for (size_t i : fc) operands.push_back(OrZeros(t, tan[i], ops[i]->type));
  operands.insert(operands.end(), ops.begin() + static_cast<long>(nc),
                  ops.begin() + static_cast<long>(nc + nx));
  for (size_t i : ax) operands.push_back(tan[i]);
  operands.insert(operands.end(), ops.begin() + static_cast<long>(nc + nx), ops.end());
  for (size_t i : ak) operands.push_back(tan[i]);
  const std::vector<const Tensor*> r = t.ControlFlow(OpKind::kScan, j, operands);
  std::vector<const Tensor*> res(nout, nullptr);
  for (size_t k = 0; k < fc.size(); ++k) res[fc[k]] = r[nc + k];
  for (size_t k = 0; k < fy.size(); ++k) res[fy[k]] = r[nc + fc.size() + ny + k];
  return res;
}

std::vector<const Tensor*> JvpWhile(trace::Trace& t, const Tensor* y,
                                    const std::vector<const Tensor*>& tan) {
  const ControlFlowAttrs& a = Cf(y);
  const std::vector<const Tensor*>& ops = y->operands;
  const size_t nc = static_cast<size_t>(a.counts[0]), n = ops.size();
  std::vector<bool> on(n, false);
  for (size_t i = 0; i < n; ++i) on[i] = tan[i] != nullptr;
  const std::vector<size_t> fc = Floats(ops, 0, nc);
  const std::vector<size_t> ak = Active(ops, nc, n, on);
  const Program& cond = BodyProgram(a, 0);
  const Program& body = BodyProgram(a, 1);
  std::vector<size_t> wrt = fc;
  wrt.insert(wrt.end(), ak.begin(), ak.end());
  std::unique_ptr<Program> jb = Jvp(body, InputNames(body, wrt));
  // Operands: carry, carry tangents, consts, consts tangents.
  std::vector<int> in = Range(0, nc);
  Append(&in, Range(n, n + fc.size()));
  Append(&in, Range(nc, n));
  Append(&in, Range(n + fc.size(), n + wrt.size()));
  std::vector<TensorType> extra;
  std::vector<int> cin = Range(0, nc);
  for (size_t i : fc) {
    cin.push_back(-1 - static_cast<int>(extra.size()));
    extra.push_back(ops[i]->type);
  }
  Append(&cin, Range(nc, n));
  for (size_t i : ak) {
    cin.push_back(-1 - static_cast<int>(extra.size()));
    extra.push_back(ops[i]->type);
  }
  ControlFlowAttrs j = a;
  j.bodies = {AsBody(Arranged(cond, cin, extra, {0})),
              AsBody(Arranged(*jb, in, {}, Range(0, nc + fc.size())))};
  j.counts = {static_cast<int64_t>(nc + fc.size())};
  std::vector<const Tensor*> operands(ops.begin(), ops.begin() + static_cast<long>(nc));
  for (size_t i : fc) operands.push_back(OrZeros(t, tan[i], ops[i]->type));
  operands.insert(operands.end(), ops.begin() + static_cast<long>(nc), ops.end());
  for (size_t i : ak) operands.push_back(tan[i]);
  const std::vector<const Tensor*> r = t.ControlFlow(OpKind::kWhileLoop, j, operands);
  std::vector<const Tensor*> res(nc, nullptr);
  for (size_t k = 0; k < fc.size(); ++k) res[fc[k]] = r[nc + k];
  return res;
}

// ---- vjp ----

std::vector<const Tensor*> VjpCond(trace::Trace& t, const Tensor* y,
                                   const std::vector<const Tensor*>& cts,
                                   const std::vector<bool>& need) {
  const ControlFlowAttrs& a = Cf(y);
  const std::vector<const Tensor*>& ops = y->operands;
  const std::vector<size_t> act = Active(ops, 1, ops.size(), need);
  std::vector<const Tensor*> grads(ops.size(), nullptr);
  if (act.empty()) return grads;
  std::vector<size_t> pos;
  for (size_t i : act) pos.push_back(i - 1);
  const Program& tb = BodyProgram(a, 0);
  const size_t m = tb.outputs().size();
  const std::vector<size_t> fo = FloatOutputs(tb, 0, m);
  ControlFlowAttrs j = a;
  j.sizes.clear();  // the gradients' shapes are the operands'
  j.bodies.clear();
  for (size_t i = 0; i < 2; ++i) {
    const Program& b = BodyProgram(a, i);
    j.bodies.push_back(AsBody(Vjp(b, OutputNames(b, fo), InputNames(b, pos))));
  }
  // The results' types, for zeros: the true branch's outputs in this scope, with the cond's
  // result sizes where its branches differ.
  std::vector<TensorType> types = a.bodies[0]->OutputTypes(t.dims(), "the true branch");
  if (!a.sizes.empty()) {
    size_t j = 0;
    for (TensorType& ty : types) {
      for (const dim::Expr*& d : ty.shape) {
        if (a.sizes.at(j) != nullptr) d = a.sizes[j];
        ++j;
      }
    }
  }
  std::vector<const Tensor*> operands = ops;
  for (size_t k : fo) operands.push_back(OrZeros(t, cts[k], types[k]));
  const std::vector<const Tensor*> r = t.ControlFlow(OpKind::kCond, j, operands);
  for (size_t k = 0; k < act.size(); ++k) grads[act[k]] = r[m + k];
  return grads;
}

// The backward body of a scan (see the header): inputs [ct of the float carries, accumulated
// ct of the needed consts, the carry entering the step, x, ct of the float ys, consts];
// outputs [ct of the float carries entering the step, the accumulators plus this step's, ct of
// the needed xs].
std::unique_ptr<Program> ScanBackwardBody(const Program& body, size_t nc, size_t nx,
                                          const std::vector<size_t>& fc,
                                          const std::vector<size_t>& fy,
                                          const std::vector<size_t>& nxs,
                                          const std::vector<size_t>& nks) {
  const size_t n = body.inputs().size();
  std::vector<size_t> of = fc;
  of.insert(of.end(), fy.begin(), fy.end());
  std::vector<size_t> wrt = fc;
  wrt.insert(wrt.end(), nxs.begin(), nxs.end());
  wrt.insert(wrt.end(), nks.begin(), nks.end());
  std::unique_ptr<Program> v = Vjp(body, OutputNames(body, of), InputNames(body, wrt));
  program::Replay r = v->ReplayIntoTrace();
  trace::Trace& t = *r.trace;
  const size_t nout = body.outputs().size();
  auto grad = [&](size_t k) {  // output k of v's grads
    return r.values[static_cast<size_t>(v->outputs()[nout + k].value)];
  };
  std::vector<const Tensor*> inputs, outputs;
  for (size_t k = 0; k < fc.size(); ++k) inputs.push_back(r.inputs[n + k]);
  std::vector<const Tensor*> acc;
  for (size_t k = 0; k < nks.size(); ++k) {
    const Tensor* c = r.inputs[nks[k]];
    acc.push_back(t.Input("acc" + std::to_string(k), c->type.dtype, c->type.shape));
  }
  inputs.insert(inputs.end(), acc.begin(), acc.end());
  for (size_t i = 0; i < nc + nx; ++i) inputs.push_back(r.inputs[i]);
  for (size_t k = 0; k < fy.size(); ++k) inputs.push_back(r.inputs[n + fc.size() + k]);
  for (size_t i = nc + nx; i < n; ++i) inputs.push_back(r.inputs[i]);
  for (size_t k = 0; k < fc.size(); ++k) outputs.push_back(grad(k));
  for (size_t k = 0; k < nks.size(); ++k) {
    outputs.push_back(t.Binary(OpKind::kAdd, acc[k], grad(fc.size() + nxs.size() + k)));
  }
  for (size_t k = 0; k < nxs.size(); ++k) outputs.push_back(grad(fc.size() + k));
  std::vector<std::string> names;
  for (size_t k = 0; k < outputs.size(); ++k) names.push_back("out" + std::to_string(k));
  return Program::FromTrace(t, inputs, outputs, names);
}

std::vector<const Tensor*> VjpScan(trace::Trace& t, const Tensor* y,
                                   const std::vector<const Tensor*>& cts,
                                   const std::vector<bool>& need) {
  const ControlFlowAttrs& a = Cf(y);
  if (!a.sizes.empty()) {
    throw Error(Code::kUnsupported,
                "vjp: a scan whose ys have sizes its body computes from data (data-dependent "
                "sizes, the same every iteration) has no reverse-mode rule; jvp works");
  }
  const std::vector<const Tensor*>& ops = y->operands;
  const size_t nc = static_cast<size_t>(a.counts[0]), nx = static_cast<size_t>(a.counts[1]);
  const size_t n = ops.size();
  const Program& body = BodyProgram(a, 0);
  const size_t nout = body.outputs().size();
  const std::vector<size_t> fc = Floats(ops, 0, nc);
  const std::vector<size_t> fy = FloatOutputs(body, nc, nout);
  const std::vector<size_t> nxs = Active(ops, nc, nc + nx, need);
  const std::vector<size_t> nks = Active(ops, nc + nx, n, need);
  std::vector<const Tensor*> grads(n, nullptr);
  // 1. Forward again, stacking the carry entering each step (the residuals).
  std::vector<int> fwd_out = Range(0, nout);
  for (size_t i = 0; i < nc; ++i) fwd_out.push_back(-1 - static_cast<int>(i));
  ControlFlowAttrs f = a;
  f.bodies = {AsBody(Arranged(body, Range(0, n), {}, fwd_out))};
  const std::vector<const Tensor*> fr = t.ControlFlow(OpKind::kScan, f, ops);
  // 2. Backward, in the other direction.
  ControlFlowAttrs b = a;
  b.bodies = {AsBody(ScanBackwardBody(body, nc, nx, fc, fy, nxs, nks))};
  b.reverse = !a.reverse;
  b.counts = {static_cast<int64_t>(fc.size() + nks.size()),
              static_cast<int64_t>(nc + nx + fy.size())};
  std::vector<const Tensor*> operands;
  for (size_t i : fc) operands.push_back(OrZeros(t, cts[i], ops[i]->type));
  for (size_t k : nks) operands.push_back(Zeros(t, ops[k]->type));
  for (size_t i = 0; i < nc; ++i) operands.push_back(fr[nout + i]);  // stacked carries
  for (size_t i = nc; i < nc + nx; ++i) operands.push_back(ops[i]);
  for (size_t k : fy) operands.push_back(OrZeros(t, cts[k], fr[k]->type));
  for (size_t i = nc + nx; i < n; ++i) operands.push_back(ops[i]);
  const std::vector<const Tensor*> r = t.ControlFlow(OpKind::kScan, b, operands);
  for (size_t k = 0; k < fc.size(); ++k) grads[fc[k]] = need[fc[k]] ? r[k] : nullptr;
  for (size_t k = 0; k < nks.size(); ++k) grads[nks[k]] = r[fc.size() + k];
  for (size_t k = 0; k < nxs.size(); ++k) grads[nxs[k]] = r[fc.size() + nks.size() + k];
  return grads;
}

// A bounded while_loop as the scan it equals while it stops within max_trips: each of the
// max_trips steps runs the body where the condition holds and keeps the carry where it does
// not (cond ops over the loop's own subprograms), so the scan's vjp is the loop's.
std::vector<const Tensor*> VjpWhile(trace::Trace& t, const Tensor* y,
                                    const std::vector<const Tensor*>& cts,
                                    const std::vector<bool>& need) {
  const ControlFlowAttrs& a = Cf(y);
  if (a.max_trips < 0) {
    throw Error(Code::kUnsupported,
                "autodiff: a while_loop without max_trips has no reverse-mode derivative (its "
                "trip count depends on the data): give max_trips, or use jvp");
  }
  const size_t nc = static_cast<size_t>(a.counts[0]);
  const Program& cond = BodyProgram(a, 0);
  const Program& body = BodyProgram(a, 1);
  const size_t n = body.inputs().size();
  std::vector<int> keep;
  for (size_t i = 0; i < nc; ++i) keep.push_back(-1 - static_cast<int>(i));
  const std::shared_ptr<const ops::Subprogram> same = AsBody(Arranged(body, Range(0, n), {}, keep));
  // The step: p = cond(carry, consts) (a cond whose branches are both the condition: a call),
  // then carry' = p ? body(carry, consts) : carry.
  program::Replay r = body.ReplayIntoTrace();
  const uint8_t yes = 1;
  const Tensor* always = r.trace->Constant(trace::DType::kBool, {}, &yes, 1);
  ControlFlowAttrs call;
  call.bodies = {a.bodies[0], a.bodies[0]};
  std::vector<const Tensor*> ops{always};
  ops.insert(ops.end(), r.inputs.begin(), r.inputs.end());
  const Tensor* p = r.trace->ControlFlow(OpKind::kCond, call, ops)[0];
  ControlFlowAttrs pick;
  pick.bodies = {a.bodies[1], same};
  ops[0] = p;
  const std::vector<const Tensor*> next = r.trace->ControlFlow(OpKind::kCond, pick, ops);
  std::vector<std::string> names;
  for (size_t k = 0; k < next.size(); ++k) names.push_back("out" + std::to_string(k));
  (void)cond;
  ControlFlowAttrs scan;
  scan.bodies = {AsBody(Program::FromTrace(*r.trace, r.inputs, next, names))};
  scan.counts = {static_cast<int64_t>(nc), 0};
  scan.length = t.dims()->Constant(a.max_trips);
  const std::vector<const Tensor*> sr = t.ControlFlow(OpKind::kScan, scan, y->operands);
  return VjpScan(t, sr[0], cts, need);
}

}  // namespace

std::vector<size_t> OperationNodes(const std::vector<const Tensor*>& values, size_t v) {
  size_t first = v;
  while (first > 0 && SameOp(values[first - 1], values[v])) --first;
  std::vector<size_t> nodes;
  for (size_t u = first; u < values.size() && SameOp(values[u], values[v]); ++u) nodes.push_back(u);
  return nodes;
}

std::vector<const Tensor*> ControlFlowJvp(trace::Trace& t, const Tensor* y,
                                          const std::vector<const Tensor*>& tangents) {
  switch (y->op) {
    case OpKind::kCond:
      return JvpCond(t, y, tangents);
    case OpKind::kScan:
      return JvpScan(t, y, tangents);
    default:
      return JvpWhile(t, y, tangents);
  }
}

std::vector<const Tensor*> ControlFlowVjp(trace::Trace& t, const Tensor* y,
                                          const std::vector<const Tensor*>& cts,
                                          const std::vector<bool>& need) {
  switch (y->op) {
    case OpKind::kCond:
      return VjpCond(t, y, cts, need);
    case OpKind::kScan:
      return VjpScan(t, y, cts, need);
    default:
      return VjpWhile(t, y, cts, need);
  }
}

}  // namespace autodiff
}  // namespace shp
