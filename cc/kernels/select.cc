// Dynamic dispatch for the selection kernels (see select.h). foreach_target.h re-includes this
// file once per Highway target; the HWY_ONCE pass emits the dispatch tables and the entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/select.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/select-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool CountNonzeroTarget(DType dtype, const void* x, int64_t n, ThreadPool* pool, int64_t* count) {
  return CountNonzeroImpl(dtype, x, n, pool, count);
}

bool NonzeroTarget(DType dtype, const void* x, const int64_t* shape, int rank, int64_t count,
                   int64_t* out, ThreadPool* pool) {
  return NonzeroImpl(dtype, x, shape, rank, count, out, pool);
}

bool MaskSelectTarget(const void* x, int64_t outer, int64_t m, int64_t inner, int64_t elem_size,
                      const uint8_t* mask, int64_t count, void* out, ThreadPool* pool) {
  return MaskSelectImpl(x, outer, m, inner, elem_size, mask, count, out, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(CountNonzeroTarget);
HWY_EXPORT(NonzeroTarget);
HWY_EXPORT(MaskSelectTarget);

bool CountNonzero(DType dtype, const void* x, int64_t n, ThreadPool* pool, int64_t* count) {
  return HWY_DYNAMIC_DISPATCH(CountNonzeroTarget)(dtype, x, n, pool, count);
}

bool Nonzero(DType dtype, const void* x, const int64_t* shape, int rank, int64_t count,
             int64_t* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(NonzeroTarget)(dtype, x, shape, rank, count, out, pool);
}

bool MaskSelect(const void* x, int64_t outer, int64_t m, int64_t inner, int64_t elem_size,
                const uint8_t* mask, int64_t count, void* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MaskSelectTarget)(x, outer, m, inner, elem_size, mask, count, out,
                                                pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
