// Dynamic dispatch for TakeAlongAxis's SIMD runs (detail::Gather4, see gather.h).
// foreach_target.h re-includes this file once per Highway target; the HWY_ONCE pass emits the
// dispatch tables and the entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/gather_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/gather-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

int64_t Gather4I32Target(const int32_t* src, int64_t stride, int64_t step, const void* idx,
                         int32_t* out, int64_t len, int64_t n) {
  return Gather4Impl(src, stride, step, static_cast<const int32_t*>(idx), out, len, n);
}
int64_t Gather4I64Target(const int32_t* src, int64_t stride, int64_t step, const void* idx,
                         int32_t* out, int64_t len, int64_t n) {
  return Gather4Impl(src, stride, step, static_cast<const int64_t*>(idx), out, len, n);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cc/kernels/gather.h"

namespace shp {
namespace kernels {

HWY_EXPORT(Gather4I32Target);
HWY_EXPORT(Gather4I64Target);

namespace detail {
int64_t Gather4(const void* src, int64_t stride, int64_t step, const void* idx, bool i64, void* out,
                int64_t len, int64_t n) {
  const int32_t* s = static_cast<const int32_t*>(src);
  int32_t* o = static_cast<int32_t*>(out);
  return i64 ? HWY_DYNAMIC_DISPATCH(Gather4I64Target)(s, stride, step, idx, o, len, n)
             : HWY_DYNAMIC_DISPATCH(Gather4I32Target)(s, stride, step, idx, o, len, n);
}
}  // namespace detail

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
