// Dynamic dispatch for the layer normalization (see layernorm.h). foreach_target.h re-includes
// this file once per Highway target; the HWY_ONCE pass emits the dispatch table and the entry
// point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/layernorm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/layernorm-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool LayerNormTarget(DType dtype, const void* in, int64_t rows, int64_t cols, const void* scale,
                     const void* bias, double epsilon, void* out, ThreadPool* pool) {
  return LayerNormImpl(dtype, in, rows, cols, scale, bias, epsilon, out, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(LayerNormTarget);

bool LayerNorm(DType dtype, const void* in, int64_t rows, int64_t cols, const void* scale,
               const void* bias, double epsilon, void* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(LayerNormTarget)(dtype, in, rows, cols, scale, bias, epsilon, out,
                                               pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
