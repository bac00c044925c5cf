// Dynamic dispatch for the float sum. foreach_target.h re-includes this file once per
// Highway target enabled for the build, through the workspace-relative path in
// HWY_TARGET_INCLUDE (resolved via Bazel's "-iquote ."); the final pass (HWY_ONCE) emits
// the dispatch tables and the plain C++ entry points declared in sum.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/sum.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/sum-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

float SumF32Target(const float* HWY_RESTRICT data, size_t n) { return SumF32Impl(data, n); }

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cc/kernels/sum.h"

namespace shp {
namespace kernels {

HWY_EXPORT(SumF32Target);

float SumF32(const float* data, size_t n) { return HWY_DYNAMIC_DISPATCH(SumF32Target)(data, n); }

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
