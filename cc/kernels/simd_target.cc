// Dynamic dispatch for SimdTargetName (see simd_target.h): foreach_target.h re-includes this
// file once per Highway target; the HWY_ONCE pass emits the dispatch table and the entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/simd_target.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

const char* SimdTargetNameTarget() { return hwy::TargetName(HWY_TARGET); }

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cc/kernels/simd_target.h"

namespace shp {
namespace kernels {

HWY_EXPORT(SimdTargetNameTarget);

const char* SimdTargetName() { return HWY_DYNAMIC_DISPATCH(SimdTargetNameTarget)(); }

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
