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

// Shape-independent facts about a program, computed once per runtime.
class Graph {
 public:
  // Throws shp::Error(kUnsupported) for an operation the runtime cannot execute. Without
  // `prepare` the ops' Prepare is skipped (for analyses that plan but never run: cost.cc).
  explicit Graph(const program::Program& p, bool prepare = true);

  const program::Program& p;
  size_t num_inputs = 0;
  size_t num_values = 0;
  std::vector<int32_t> uses;      // operand uses + output uses, per value
  std::vector<int32_t> group_of;  // per value: index into groups if computed by a group, else -1
  std::vector<bool> is_root;      // per value: the root of its group
  std::vector<EwGroup> groups;
  // (scope variable index, position in p.variable_names()) of every variable.
  std::vector<std::pair<int32_t, int32_t>> var_pos;
  int32_t max_var = -1;
  // Per node: what its op's definition prepared once (ops::OpDef::Prepare; e.g. the packed
  // constant right operand of a matmul), shared by the plans of every shape; or null.
  std::vector<std::unique_ptr<ops::Prepared>> prepared;

  // Stages (programs with data-dependent sizes): stage k >= 1 begins at node stage_begin[k],
  // the first producer of unbacked variable stage_var[k] (a scope variable), whose value the
  // runtime reads from the data once the earlier stages have run, then plans stage k. A
  // program without data-dependent sizes has one stage. Fusion never crosses a stage.
  std::vector<int32_t> stage_begin{0};
  std::vector<int32_t> stage_var{-1};
  std::vector<int32_t> stage_of_value;  // per value (inputs: 0)
  std::vector<int32_t> last_use_stage;  // per value: the last stage reading it; outputs: kEnd
  static constexpr int32_t kEnd = INT32_MAX;
  size_t num_stages() const { return stage_begin.size(); }
  // The first node after stage k.
  size_t stage_end(size_t k) const {
    return k + 1 < stage_begin.size() ? static_cast<size_t>(stage_begin[k + 1]) : p.nodes().size();
  }
};

using ops::SlotLoc;
using ops::Step;

// A fusion group's step: the elementwise kernel runs its register program.
struct ElementwiseStep final : Step {
  const EwGroup* group = nullptr;
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;  // per input, per axis
  std::vector<kernels::ElementwiseInput> ew;  // data filled per run
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
  void BuildNode(size_t node);
  void AssignStorage();

  const Graph& g_;
  std::vector<int64_t> vars_;
  int stage_ = -1;
  size_t end_value_ = 0;  // the values of nodes up to this stage's last: [0, end_value_)
};

}  // namespace runtime
}  // namespace shp

#endif  // SHAPEPOLY_CC_RUNTIME_PLAN_H_
