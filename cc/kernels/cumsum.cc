// Dynamic dispatch for the cumulative sum (see cumsum.h). foreach_target.h re-includes this file
// once per Highway target; the HWY_ONCE pass emits the dispatch table and the entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/cumsum.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/cumsum-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool CumSumTarget(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner,
                  void* out, ThreadPool* pool) {
  return CumSumImpl(dtype, in, outer, axis, inner, out, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(CumSumTarget);

bool CumSum(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner, void* out,
            ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(CumSumTarget)(dtype, in, outer, axis, inner, out, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
