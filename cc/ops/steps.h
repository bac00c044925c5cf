// Steps that several op families plan (a transpose before a matmul or a layer norm; the
// runtime's copy into an output).
#ifndef SHAPEPOLY_CC_OPS_STEPS_H_
#define SHAPEPOLY_CC_OPS_STEPS_H_

#include <cstdint>
#include <vector>

#include "cc/kernels/reduce_window.h"
#include "cc/ops/attrs.h"
#include "cc/ops/plan_builder.h"

namespace shp {
namespace ops {

// Throws kInternal ("runtime: the <what> kernel rejected its arguments") unless ok.
void CheckKernel(bool ok, const char* what);

// out = transpose(in, perm) for an input of shape `shape`.
struct TransposeStep final : Step {
  std::vector<int64_t> shape, perm;
  void Run(const RunContext& c) override;
};

// Plans a transpose of slot `in` (of shape `shape`) into slot `out`.
void PlanTranspose(PlanBuilder& b, trace::DType dt, int32_t in, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& perm, int32_t out, bool threaded);

// The kernel's window of each axis of a reduce_window of x (shape `x`) into y (shape `y`), for
// reduce_window's step and the runtime's average-pooling fusion. Throws kConstraintViolation when
// an output size is not the window's (< 1 for a non-empty input).
std::vector<kernels::WindowDim> PlanWindowDims(const PlanBuilder& b, const WindowAttrs& a,
                                               const std::vector<int64_t>& x,
                                               const std::vector<int64_t>& y);

// Copies `bytes` bytes.
struct CopyStep final : Step {
  int64_t bytes = 0;
  void Run(const RunContext& c) override;
};

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_STEPS_H_
