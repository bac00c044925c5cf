// Dynamic dispatch for the reductions (see reduce.h). foreach_target.h re-includes this file
// once per Highway target; the HWY_ONCE pass emits the dispatch tables and the entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool ReduceTarget(ReduceOp op, DType dtype, const void* in, int64_t outer, int64_t reduced,
                  int64_t inner, void* out, ThreadPool* pool) {
  return ReduceImpl(op, dtype, in, outer, reduced, inner, out, pool);
}

bool ReduceAxesTarget(ReduceOp op, DType dtype, const void* in, int rank, const int64_t* shape,
                      const bool* reduce_axis, void* out, ThreadPool* pool) {
  return ReduceAxesImpl(op, dtype, in, rank, shape, reduce_axis, out, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(ReduceTarget);
HWY_EXPORT(ReduceAxesTarget);

bool Reduce(ReduceOp op, DType dtype, const void* in, int64_t outer, int64_t reduced, int64_t inner,
            void* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(ReduceTarget)(op, dtype, in, outer, reduced, inner, out, pool);
}

bool ReduceAxes(ReduceOp op, DType dtype, const void* in, int rank, const int64_t* shape,
                const bool* reduce_axis, void* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(ReduceAxesTarget)(op, dtype, in, rank, shape, reduce_axis, out, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
