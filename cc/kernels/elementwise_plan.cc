// The target-independent plan of EvalElementwise (see elementwise_plan.h). Plain C++.
#include "cc/kernels/elementwise_plan.h"

namespace shp {
namespace kernels {
namespace ew_plan {

bool BuildPlan(const ElementwiseProgram& program, int rank, const int64_t* shape,
               const ElementwiseInput* inputs, int num_inputs, void* const* outputs,
               int num_outputs, Plan* out) {
  Plan& plan = *out;
  plan.one_binary = false;
  // A layout left stale by a builder call (set_fusion after AddOutput) is recomputed here, on
  // the calling thread: the tiles read it from every thread of the pool, and recomputing it
  // there was a data race (wrong values at the start of the second thread's range).
  (void)program.num_slots();
  if (rank < 0 || rank > kElementwiseMaxRank) return false;
  if (num_inputs < program.num_inputs() || num_outputs != program.num_outputs()) return false;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0) return false;
    total *= shape[d];
  }
  if (total == 0 || program.num_outputs() == 0) return true;
  for (int j = 0; j < num_outputs; ++j) {
    if (outputs[j] == nullptr) return false;
  }

  plan.program = &program;
  plan.outputs = outputs;
  plan.total = total;
  const int nin = program.num_inputs();
  if (nin <= kSmallInputs) {
    plan.ins = plan.small_ins;
  } else {
    plan.big_ins.resize(static_cast<size_t>(nin));
    plan.ins = plan.big_ins.data();
  }
  for (const ElementwiseInstr& in : program.instrs()) {
    if (in.kind == ElementwiseInstr::Kind::kInput) {
      plan.ins[in.input].used = true;
      plan.ins[in.input].esize = DTypeSize(in.dtype);
    }
  }
  // Row-major strides of the full shape (for inputs given without strides).
  int64_t dense[kElementwiseMaxRank];
  {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      dense[d] = s;
      s *= shape[d];
    }
  }
  auto stride_of = [&](int k, int d) -> int64_t {
    const int64_t* st = inputs[k].strides;
    return st == nullptr ? dense[d] : st[d];
  };
  // Collapse: drop extent-1 dims; merge a dim into the previous one when every used input
  // can (prev stride == stride * extent).
  int r = 0;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 1) continue;
    bool merge = r > 0;
    for (int k = 0; merge && k < nin; ++k) {
      if (plan.ins[k].used && plan.ins[k].strides[r - 1] != stride_of(k, d) * shape[d]) {
        merge = false;
      }
    }
    if (merge) {
      plan.shape[r - 1] *= shape[d];
      for (int k = 0; k < nin; ++k) {
        plan.ins[k].strides[r - 1] = plan.ins[k].used ? stride_of(k, d) : 0;
      }
    } else {
      plan.shape[r] = shape[d];
      for (int k = 0; k < nin; ++k) plan.ins[k].strides[r] = plan.ins[k].used ? stride_of(k, d) : 0;
      ++r;
    }
  }
  if (r == 0) {  // every extent is 1
    plan.shape[0] = 1;
    for (int k = 0; k < nin; ++k) plan.ins[k].strides[0] = 0;
    r = 1;
  }
  plan.rank = r;
  for (int k = 0; k < nin; ++k) {
    In& in = plan.ins[k];
    if (!in.used) continue;
    if (inputs[k].data == nullptr) return false;
    in.data = static_cast<const uint8_t*>(inputs[k].data);
    bool scalar = true, direct = true;
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) {
      if (in.strides[d] != 0) scalar = false;
      if (in.strides[d] != s) direct = false;
      s *= plan.shape[d];
    }
    in.mode = scalar ? InMode::kScalar : (direct ? InMode::kDirect : InMode::kGather);
    if (in.mode == InMode::kGather) plan.any_gather = true;
  }

  // One chunk of a single binary op of two direct inputs, written straight into its output.
  const std::vector<ElementwiseInstr>& code = program.instrs();
  using K = ElementwiseInstr::Kind;
  plan.one_binary = total <= kChunk && code.size() == 3 && code[2].kind == K::kBinary &&
                    program.direct_output() >= 0 && program.fused_mul()[2] < 0 &&
                    program.fused_unary()[2] < 0 && !program.fused_into_next()[2];
  for (size_t r = 0; r < 2 && plan.one_binary; ++r) {
    plan.one_binary = code[r].kind == K::kInput && !program.is_output()[r] &&
                      plan.ins[static_cast<size_t>(code[r].input)].mode == InMode::kDirect;
  }
  return true;
}

}  // namespace ew_plan
}  // namespace kernels
}  // namespace shp
