// Dynamic dispatch of the direct convolution kernel (see conv.h). foreach_target.h re-includes
// this file once per Highway target; the HWY_ONCE pass emits the dispatch table and the entry
// points. The method choice, im2col and the matmul calls are in conv_gemm.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/conv-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

void ConvDirectF32Target(const ConvParams& p, const float* x, const float* w, float* y,
                         ThreadPool* pool) {
  DirectImpl(p, x, w, y, pool);
}
void ConvDirectF64Target(const ConvParams& p, const double* x, const double* w, double* y,
                         ThreadPool* pool) {
  DirectImpl(p, x, w, y, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(ConvDirectF32Target);
HWY_EXPORT(ConvDirectF64Target);

void ConvDirectF32(const ConvParams& p, const float* x, const float* w, float* y,
                   ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(ConvDirectF32Target)(p, x, w, y, pool);
}
void ConvDirectF64(const ConvParams& p, const double* x, const double* w, double* y,
                   ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(ConvDirectF64Target)(p, x, w, y, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
