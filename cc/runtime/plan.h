// Internal to cc/runtime: the static analysis of a program (Graph, graph.cc: fusion groups,
// variable mapping, prepared op data) and the per-shape execution plan (Plan, plan.cc:
// concrete sizes and the steps of each op's definition; memory.cc: storage).
#ifndef SHAPEPOLY_CC_RUNTIME_PLAN_H_
#define SHAPEPOLY_CC_RUNTIME_PLAN_H_

#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/elementwise_plan.h"
#include "cc/kernels/matmul.h"
#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/parallel.h"
#include "cc/ops/op_def.h"
#include "cc/ops/plan_builder.h"
#include "cc/program/program.h"

namespace shp {
namespace runtime {

// A fused chain of elementwise operations: one register program whose inputs are values
// computed elsewhere and whose single output is the value `root`.
struct EwGroup {
  kernels::ElementwiseProgram prog;
  std::vector<int32_t> inputs;  // value ids feeding Input(0..)
  int32_t root = -1;
};

// An f32 matmul of a rank-2 operand by a rank-2 constant, whose only use is `add` = matmul +
// bias (the matmul the first operand; a 1-D bias, one value per column, computed before the
// matmul), whose only use may be `relu` = max(add, +0.0): one step, the matmul kernel's
// epilogue adding the bias (and clamping) as each tile of the product is stored. Bit-identical
// to the three ops (the kernel's contract, kernels::MatmulEpilogue).
//
// Also (bias -1, add -1): an f32 matmul of rank-2 operands of which one or both are a transpose
// (permutation [1, 0]) used only by it, as the VJP of a matmul emits them (dx = dz @ w^T,
// dw = x^T @ dz): the step reads the transpose's operand through swapped strides, so the
// transpose is never written (the matmul kernel packs through strides: the same bits).
struct MatmulFusion {
  int32_t matmul = -1, add = -1, relu = -1;          // value ids; relu -1: none
  int32_t root = -1;                                 // the value the step writes (relu, else add)
  int32_t a = -1, b = -1, bias = -1;                 // its operands (bias -1: none)
  int32_t a_transpose = -1, b_transpose = -1;        // the transposes read through a or b, or -1
  std::unique_ptr<kernels::PackedMatrixF32> packed;  // b packed once (null without prepare)
  // b's default bytes when b is a parameter: packed holds b only in runs binding b to them.
  const void* packed_source = nullptr;
};

// An f32 conv whose only use is `add` = conv + bias (the conv the first operand, of the add's
// shape; the bias of the conv's dtype with one value per output channel, broadcast over every
// other axis: [O, 1...] or [1, O, 1...], as the composite conv and the ONNX importer emit it),
// whose only use may be `relu` = max(add, +0.0): one conv step whose kernel adds the bias (and
// clamps) as it stores its output (kernels::ConvEpilogue), with no pass over the output for
// each. Bit-identical to the three ops (the kernel's contract). Planned at the add, where the
// bias (often a reshape traced after the conv) is computed: the conv op's own plan with the
// operands {x, w, bias} (add) or {x, w, bias, zero} (add and relu; zero is max's +0.0 operand,
// not read), writing `root` (cc/ops/conv.cc).
//
// Also a residual connection (ResNet's block): when the add's only use is a second add of a
// value `residual` of the conv's shape (either operand order), the epilogue adds it after the
// bias (before the relu, which then follows that add); the step is planned at that add.
struct ConvFusion {
  int32_t conv = -1, add = -1, relu = -1;    // value ids; relu -1: none
  int32_t root = -1;                         // the value the step writes (relu, else the last add)
  int32_t bias = -1, zero = -1;              // the add's second operand, max's (relu only)
  int32_t residual_add = -1, residual = -1;  // the second add and its other operand, or -1
};

// A softmax, layer_norm or reduction of an f32 value converted from f16 or bf16, whose only
// use is the conversion back to that type: the tracer's form of these ops on narrow operands
// (cc/trace/narrow.cc). One step runs the op on the narrow value `x` and writes the narrow
// result `convert_out`: the kernel widens blocks that stay in cache, computes them in f32 and
// rounds once on store, so the bits are the three ops' (a NaN's sign and payload aside), with
// no f32 copy of the operand or the result in memory.
struct NarrowFusion {
  int32_t convert_in = -1, op = -1, convert_out = -1;  // value ids
  int32_t x = -1;                                      // convert_in's operand (f16 or bf16)
};

// Average pooling that excludes the padding, as the composite avg_pool writes it
// (cc/ops/composites/pool.cc): `div` = sum / count, `sum` = an f32/f64 reduce_window sum of `x`
// over [N, C, *spatial] (window 1 on N and C, no base dilation), `count` = the same window's
// sum over ones of the spatial extent (broadcast_to of the constant 1 to [1, 1, *spatial]), both
// used only by the div: one step of kernels::ReduceWindowMean, which divides each window sum by
// the number of input positions in its window in the same sweep. The same bits as the three ops
// (the kernel's contract: the same sums, an exact count). cc/runtime/pool_fusion.cc.
struct PoolFusion {
  int32_t sum = -1, count = -1, div = -1;  // value ids; the step writes div
  int32_t x = -1;
};

class Runtime;

// A control-flow operation (cond, while_loop, scan): the nodes of its results (one per result
// that the program uses; ops::SameOperation) run as one step, planned at the first of them.
struct ControlFlowOp {
  int32_t leader = -1;           // the value of its first node
  std::vector<int32_t> results;  // per result index: its value, or -1 (unused)
  std::vector<const program::Program*> bodies;
  // One runtime per subprogram (made by the Runtime that owns the graph; null in a graph that
  // only plans, for cost analysis): it plans each shape once and runs it per iteration.
  std::vector<std::unique_ptr<Runtime>> runtimes;
  int64_t max_iterations = -1;  // Options::max_loop_iterations (-1: none)
  uint64_t* runs = nullptr;     // the owning runtime's Stats::subprogram_runs (null: none)
  // A cond or scan with result sizes (ControlFlowAttrs::sizes): the runtime runs the taken
  // branch (the scan's first iteration) before planning the stage the op begins
  // (Runtime::RunCondForSizes, RunScanForSizes), into these buffers, which the op's step then
  // uses as those results: the cond's used results are read in place (kPrior slots that the
  // runtime points at the stash), the scan's first iteration is not run again.
  bool sized = false;
  mutable std::vector<std::vector<uint8_t>> stash;
  mutable std::vector<std::vector<int64_t>> stash_shapes;
};

// Shape-independent facts about a program, computed once per runtime.
class Graph {
 public:
  // Throws shp::Error(kUnsupported) for an operation the runtime cannot execute. Without
  // `prepare` the ops' Prepare is skipped (for analyses that plan but never run: cost.cc).
  // `fuse_matmul_epilogue`: form the MatmulFusion steps. `fuse_elementwise`: chains of
  // elementwise ops become one register program each, evaluated with the program's own fusions,
  // and the NarrowFusion and ConvFusion steps are formed; off, every elementwise op is a program
  // of its own, evaluated unfused (the reference of the differential tests).
  explicit Graph(const program::Program& p, bool prepare = true, bool fuse_matmul_epilogue = true,
                 bool fuse_elementwise = true);
  ~Graph();

  const program::Program& p;
  size_t num_inputs = 0;
  size_t num_values = 0;
  std::vector<int32_t> uses;      // operand uses + output uses, per value
  std::vector<int32_t> group_of;  // per value: index into groups if computed by a group, else -1
  std::vector<bool> is_root;      // per value: the root of its group
  std::vector<EwGroup> groups;
  std::vector<MatmulFusion> mm_fusions;
  std::vector<int32_t> mm_fusion_of;  // per value: its MatmulFusion (matmul, add, relu), or -1
  std::vector<ConvFusion> conv_fusions;
  std::vector<int32_t> conv_fusion_of;  // per value: its ConvFusion (conv, add, relu), or -1
  std::vector<NarrowFusion> narrow_fusions;
  std::vector<int32_t> narrow_fusion_of;  // per value: its NarrowFusion (its three values), or -1
  std::vector<PoolFusion> pool_fusions;
  std::vector<int32_t> pool_fusion_of;  // per value: its PoolFusion (sum, count, div), or -1
  // (scope variable index, position in p.variable_names()) of every variable.
  std::vector<std::pair<int32_t, int32_t>> var_pos;
  int32_t max_var = -1;
  // Per node: what its op's definition prepared once (ops::OpDef::Prepare; e.g. the packed
  // constant right operand of a matmul), shared by the plans of every shape; or null.
  std::vector<std::unique_ptr<ops::Prepared>> prepared;
  std::vector<ControlFlowOp> control_flow;
  std::vector<int32_t> control_flow_of;  // per value: its ControlFlowOp, or -1

  // Stages (programs with data-dependent sizes): stage k >= 1 begins at node stage_begin[k],
  // the first producer of the unbacked variables stage_vars[k] (scope variables: one, or a
  // cond's result sizes), whose values the runtime reads from the data once the earlier stages
  // have run (a cond: by running its taken branch), then plans stage k. A program without
  // data-dependent sizes has one stage. Fusion never crosses a stage.
  std::vector<int32_t> stage_begin{0};
  std::vector<std::vector<int32_t>> stage_vars{{}};
  std::vector<int32_t> stage_of_value;  // per value (inputs: 0)
  std::vector<int32_t> last_use_stage;  // per value: the last stage reading it; outputs: kEnd
  static constexpr int32_t kEnd = INT32_MAX;
  size_t num_stages() const { return stage_begin.size(); }
  // The first node after stage k.
  size_t stage_end(size_t k) const {
    return k + 1 < stage_begin.size() ? static_cast<size_t>(stage_begin[k + 1]) : p.nodes().size();
  }

 private:
  // Fills control_flow and control_flow_of.
  void FindControlFlow();
  // Fills mm_fusions and mm_fusion_of (stages known); packs each b if `pack`.
  void FindMatmulFusions(const std::vector<bool>& is_output, bool pack);
  // Adds the MatmulFusions of matmuls reading transposes (after FindMatmulFusions).
  void FindTransposedOperands(const std::vector<bool>& is_output);
  // Sizes conv_fusion_of and, if `fuse`, fills it and conv_fusions (stages known).
  void FindConvFusions(const std::vector<bool>& is_output, bool fuse);
  // Fills narrow_fusions and narrow_fusion_of (stages known).
  void FindNarrowFusions(const std::vector<bool>& is_output);
  // Sizes pool_fusion_of and, if `fuse`, fills it and pool_fusions (pool_fusion.cc).
  void FindPoolFusions(const std::vector<bool>& is_output, bool fuse);
  // The bytes of value v when a constant node computes it, else null (an input or another op).
  const std::string* ConstantBytes(int32_t v) const;
  // Fills `prepared` (each op's Prepare; nothing without `prepare`), fusions known.
  void PrepareNodes(bool prepare);
  // The bytes of input v's stored default when its shape is constant, else null
  // (ops::PrepareContext::default_bytes).
  const std::string* DefaultBytes(int32_t v) const;
  // The node computing value v, or null for an input (the fusions' pattern matching).
  const program::Node* NodeOf(int32_t v) const;
  // Per value: its only user (used once, not an output), else -1.
  std::vector<int32_t> SoleUsers(const std::vector<bool>& is_output) const;
};

using ops::SlotLoc;
using ops::Step;

// A fusion group's step: the elementwise kernel runs its register program. The kernel's plan
// of the call (collapsed shape, each input's access mode) is built with the step, once per
// shape; a run only points it at this run's arrays.
struct ElementwiseStep final : Step {
  const EwGroup* group = nullptr;
  kernels::ew_plan::Plan call;  // never moved (call.ins may point into it): steps are on the heap
  void* outs[1] = {nullptr};    // call.outputs
  void Run(const ops::RunContext& c) override;
};

// A MatmulFusion's step: out = [relu](a @ b + bias) by the matmul kernel's epilogue.
struct FusedMatmulStep final : Step {  // in: a, b, bias (when has_bias)
  kernels::MatmulParams mm;
  const kernels::PackedMatrixF32* packed = nullptr;
  const void* packed_source = nullptr;  // MatmulFusion::packed_source
  bool has_bias = true;
  bool relu = false;
  void Run(const ops::RunContext& c) override;
};

// An arena buffer (a slot that is not an alias) and its life: the steps that write it first
// and read or write it last.
struct ArenaBuffer {
  int32_t slot;
  int64_t first, last;
};

// The region of each buffer (given in order of first write): greedy, the lowest region whose
// buffers are all dead when the buffer is first written. Depends on the lives only, not on
// the sizes, so every shape of a program gets the same regions.
std::vector<int32_t> AssignRegisters(const std::vector<ArenaBuffer>& buffers);

// The plan of one binding of the variables: concrete shapes, storage and steps. The ops'
// definitions add their steps through the PlanBuilder interface.
class Plan final : public ops::PlanBuilder {
 public:
  // Builds the plan for variable values `vars` (indexed by scope variable). Throws
  // shp::Error (kOverflow, kUnsupported). `stage` >= 0: only that stage's nodes (Graph), with
  // the values of earlier stages as kPrior slots; the values later stages read stay live to
  // the end, and only the last stage writes the outputs. -1: every node in one plan (every
  // unbacked variable's value given).
  Plan(const Graph& g, const std::vector<int64_t>& vars, int stage = -1);
  int stage() const { return stage_; }

  trace::DType dtype(int32_t value) const override;
  // The variable values this plan was built for (by scope variable).
  const std::vector<int64_t>& vars() const { return vars_; }
  int64_t Eval(const dim::Expr* e) const override;
  const std::string& buffer(int32_t i) const override;

  size_t arena_bytes = 0;
  std::vector<size_t> output_values;
  // The arena's buffers in order of first write, and the region of each (AssignRegisters).
  std::vector<ArenaBuffer> arena_buffers;
  std::vector<int32_t> arena_register;

 private:
  void PlanControlFlow(const ops::NodeView& n) override;  // control_flow.cc
  void BuildNode(size_t node);
  void PlanMatmulFusion(const MatmulFusion& f);
  void PlanConvFusion(const ConvFusion& f);
  void PlanNarrowFusion(const NarrowFusion& f);
  void PlanPoolFusion(const PoolFusion& f);  // pool_fusion.cc
  void AssignStorage();

  const Graph& g_;
  std::vector<int64_t> vars_;
  int stage_ = -1;
  size_t end_value_ = 0;  // the values of nodes up to this stage's last: [0, end_value_)
};

}  // namespace runtime
}  // namespace shp

#endif  // SHAPEPOLY_CC_RUNTIME_PLAN_H_
