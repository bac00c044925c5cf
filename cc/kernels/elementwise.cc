// Dynamic dispatch for the fused elementwise evaluator (see elementwise.h). foreach_target.h
// re-includes this file once per Highway target; the HWY_ONCE pass emits the dispatch table and
// the entry point. The program builder is in elementwise_program.cc, the plan in
// elementwise_plan.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/elementwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool EvalElementwiseTarget(const ElementwiseProgram& program, int rank, const int64_t* shape,
                           const ElementwiseInput* inputs, int num_inputs, void* const* outputs,
                           int num_outputs, ThreadPool* pool) {
  return EvalElementwiseImpl(program, rank, shape, inputs, num_inputs, outputs, num_outputs, pool);
}

void RunPlanTarget(const ew_plan::Plan& plan, ThreadPool* pool) { RunPlanImpl(plan, pool); }

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(EvalElementwiseTarget);

bool EvalElementwise(const ElementwiseProgram& program, int rank, const int64_t* shape,
                     const ElementwiseInput* inputs, int num_inputs, void* const* outputs,
                     int num_outputs, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(EvalElementwiseTarget)(program, rank, shape, inputs, num_inputs,
                                                     outputs, num_outputs, pool);
}

HWY_EXPORT(RunPlanTarget);

void ew_plan::RunPlan(const Plan& plan, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(RunPlanTarget)(plan, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
