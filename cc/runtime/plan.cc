// Plan: the concrete shapes of one binding of the variables, and the steps each op's
// definition plans for them (ops::OpDef::Plan); storage is assigned by memory.cc.
#include <string>

#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/ops/steps.h"
#include "cc/runtime/plan.h"

namespace shp {
namespace runtime {

using PB = ops::PlanBuilder;

void ElementwiseStep::Run(const ops::RunContext& c) {
  if (call.total == 0) return;
  const size_t n = in.size();
  for (size_t k = 0; k < n; ++k) call.ins[k].data = In(c, k);
  outs[0] = Out(c);
  kernels::ew_plan::RunPlan(call, Pool(c));
}

void FusedMatmulStep::Run(const ops::RunContext& c) {
  const float* a = reinterpret_cast<const float*>(In(c, 0));
  float* out = reinterpret_cast<float*>(Out(c));
  kernels::MatmulEpilogue ep;
  ep.bias = has_bias ? reinterpret_cast<const float*>(In(c, 2)) : nullptr;
  ep.relu = relu;
  // The packed b (when this run's b is what was packed); false only if it was packed for
  // another SIMD target: then b as it is.
  const uint8_t* b = In(c, 1);
  bool ok = packed != nullptr && (packed_source == nullptr || packed_source == b) &&
            kernels::MatmulF32Prepacked(mm, a, *packed, out, ep, Pool(c));
  if (!ok) {
    ok = kernels::MatmulF32(mm, a, reinterpret_cast<const float*>(b), out, ep, Pool(c));
  }
  ops::CheckKernel(ok, "matmul");
}

void Plan::PlanMatmulFusion(const MatmulFusion& f) {
  // a is [m, k] ([k, m] read transposed), b [k, n] ([n, k] read transposed).
  const std::vector<int64_t>& a = shapes[static_cast<size_t>(f.a)];
  const std::vector<int64_t>& b = shapes[static_cast<size_t>(f.b)];
  const bool at = f.a_transpose >= 0, bt = f.b_transpose >= 0;
  kernels::MatmulParams mm;
  mm.m = at ? a[1] : a[0];
  mm.k = at ? a[0] : a[1];
  mm.n = bt ? b[0] : b[1];
  mm.a_row_stride = at ? 1 : mm.k;
  mm.a_col_stride = at ? mm.m : 1;
  mm.b_row_stride = bt ? 1 : mm.n;
  mm.b_col_stride = bt ? mm.k : 1;
  mm.c_row_stride = mm.n;
  std::vector<int32_t> in{f.a, f.b};
  if (f.bias >= 0) in.push_back(f.bias);
  FusedMatmulStep& s = AddStep<FusedMatmulStep>(trace::DType::kF32, std::move(in), f.root);
  s.mm = mm;
  s.has_bias = f.bias >= 0;
  s.packed = f.packed.get();
  s.packed_source = f.packed_source;
  s.relu = f.relu >= 0;
  s.threaded = PB::Mul(PB::Product(shapes[static_cast<size_t>(f.root)]), mm.k) >= kThreadElements;
}

void Plan::PlanConvFusion(const ConvFusion& f) {
  // The conv op's own plan with the bias (and the relu's zero) as extra operands, writing the
  // root: its step calls the kernel with the epilogue (cc/ops/conv.cc).
  const size_t node = static_cast<size_t>(f.conv) - g_.num_inputs;
  const program::Node& n = g_.p.nodes()[node];
  std::vector<int32_t> operands{n.operands[0], n.operands[1], f.bias};
  if (f.residual >= 0) operands.push_back(f.residual);
  if (f.relu >= 0) operands.push_back(f.zero);
  ops::NodeView view{n.op, n.attrs, operands, f.root, n.type.dtype, g_.prepared[node].get()};
  ops::Def(n.op).Plan(*this, view);
}

void Plan::PlanNarrowFusion(const NarrowFusion& f) {
  // The op's own plan, on the narrow operand and result: its steps get the narrow dtype, which
  // their kernels take (cc/kernels/narrow-inl.h), and scratch sized by the narrow result.
  const size_t node = static_cast<size_t>(f.op) - g_.num_inputs;
  const program::Node& n = g_.p.nodes()[node];
  const std::vector<int32_t> operands{f.x};
  ops::NodeView view{n.op, n.attrs, operands, f.convert_out, dtype(f.x), g_.prepared[node].get()};
  ops::Def(n.op).Plan(*this, view);
}

trace::DType Plan::dtype(int32_t value) const { return g_.p.value_type(value).dtype; }
int64_t Plan::Eval(const dim::Expr* e) const { return dim::Evaluate(e, vars_); }
const std::string& Plan::buffer(int32_t i) const { return g_.p.buffers()[static_cast<size_t>(i)]; }

Plan::Plan(const Graph& g, const std::vector<int64_t>& vars, int stage)
    : g_(g), vars_(vars), stage_(stage) {
  const program::Program& p = g.p;
  const size_t first_node =
      stage < 0 ? 0 : static_cast<size_t>(g.stage_begin[static_cast<size_t>(stage)]);
  const size_t end_node = stage < 0 ? p.nodes().size() : g.stage_end(static_cast<size_t>(stage));
  end_value_ = g.num_inputs + end_node;
  shapes.resize(g.num_values);
  loc.resize(g.num_values);
  slot_bytes.resize(g.num_values);
  // Values of later stages are not planned: their sizes may use variables not known yet.
  for (size_t v = 0; v < end_value_; ++v) {
    const trace::TensorType& t = p.value_type(static_cast<int32_t>(v));
    std::vector<int64_t>& s = shapes[v];
    s.reserve(t.shape.size());
    for (const dim::Expr* e : t.shape) s.push_back(dim::Evaluate(e, vars));
    slot_bytes[v] = PB::Mul(PB::Product(s), static_cast<int64_t>(trace::DTypeSize(t.dtype)));
  }
  for (size_t i = 0; i < g.num_inputs; ++i)
    loc[i] = SlotLoc{SlotLoc::kInput, static_cast<int64_t>(i), nullptr};
  for (size_t v = g.num_inputs; v < g.num_inputs + first_node; ++v)
    loc[v] = SlotLoc{SlotLoc::kPrior, static_cast<int64_t>(v), nullptr};
  for (size_t i = first_node; i < end_node; ++i) BuildNode(i);
  AssignStorage();
}

void Plan::BuildNode(size_t node) {
  const program::Node& n = g_.p.nodes()[node];
  const int32_t v = static_cast<int32_t>(g_.num_inputs + node);
  const size_t vu = static_cast<size_t>(v);
  if (g_.mm_fusion_of[vu] >= 0) {
    // The add and the max are computed by the step planned at the matmul.
    const MatmulFusion& f = g_.mm_fusions[static_cast<size_t>(g_.mm_fusion_of[vu])];
    if (f.matmul == v) PlanMatmulFusion(f);  // a transpose it reads: never written
    return;
  }
  if (g_.conv_fusion_of[vu] >= 0) {
    // The conv, the adds and the max are one step, planned at the last add (the bias and the
    // residual exist there).
    const ConvFusion& f = g_.conv_fusions[static_cast<size_t>(g_.conv_fusion_of[vu])];
    if ((f.residual_add >= 0 ? f.residual_add : f.add) == v) PlanConvFusion(f);
    return;
  }
  if (g_.pool_fusion_of[vu] >= 0) {
    // The window sums and the division are one step, planned at the division.
    const PoolFusion& f = g_.pool_fusions[static_cast<size_t>(g_.pool_fusion_of[vu])];
    if (f.div == v) PlanPoolFusion(f);
    return;
  }
  if (g_.narrow_fusion_of[vu] >= 0) {
    // The conversions are done by the step planned at the op.
    const NarrowFusion& f = g_.narrow_fusions[static_cast<size_t>(g_.narrow_fusion_of[vu])];
    if (f.op == v) PlanNarrowFusion(f);
    return;
  }
  if (g_.group_of[vu] < 0) {
    ops::NodeView view{n.op, n.attrs, n.operands, v, n.type.dtype, g_.prepared[node].get()};
    ops::Def(n.op).Plan(*this, view);
    return;
  }
  if (!g_.is_root[vu]) return;  // computed inside its group's root
  const EwGroup& gr = g_.groups[static_cast<size_t>(g_.group_of[vu])];
  const std::vector<int64_t>& out = shapes[vu];
  if (out.size() > static_cast<size_t>(kernels::kElementwiseMaxRank)) {
    throw Error(Code::kUnsupported, "runtime: elementwise operations support rank <= 32");
  }
  ElementwiseStep& s = AddStep<ElementwiseStep>(n.type.dtype, gr.inputs, v);
  s.group = &gr;
  // Each input's broadcast strides (0 along the axes it is broadcast on), on the stack for
  // the usual few inputs: planning a new shape is on the serving path.
  const size_t nin = gr.inputs.size(), rank = out.size();
  constexpr size_t kStackInputs = 6;
  int64_t stack_strides[kStackInputs * kernels::kElementwiseMaxRank];
  kernels::ElementwiseInput stack_ew[kStackInputs];
  std::vector<int64_t> heap_strides;
  std::vector<kernels::ElementwiseInput> heap_ew;
  int64_t* strides = stack_strides;
  kernels::ElementwiseInput* ew = stack_ew;
  if (nin > kStackInputs) {
    heap_strides.resize(nin * rank);
    heap_ew.resize(nin);
    strides = heap_strides.data();
    ew = heap_ew.data();
  }
  // The kernel's plan, with a placeholder for every array (the runs give the real ones).
  static const uint8_t kPlaceholder[1] = {0};
  for (size_t k = 0; k < nin; ++k) {
    const std::vector<int64_t>& in = shapes[static_cast<size_t>(gr.inputs[k])];
    int64_t* st = strides + k * rank;
    const size_t off = rank - in.size();
    int64_t dense = 1;
    for (size_t d = rank; d-- > 0;) {
      const bool own = d >= off && in[d - off] != 1;
      st[d] = own ? dense : 0;
      if (d >= off) dense *= in[d - off];
    }
    ew[k] = {kPlaceholder, st};
  }
  s.outs[0] = const_cast<uint8_t*>(kPlaceholder);
  if (!kernels::ew_plan::BuildPlan(gr.prog, static_cast<int>(rank), out.data(), ew,
                                   static_cast<int>(nin), s.outs, 1, &s.call)) {
    throw Error(Code::kInternal, "runtime: the elementwise kernel rejected its arguments");
  }
  s.threaded = PB::Product(out) >= kThreadElements;
}

}  // namespace runtime
}  // namespace shp
