// Dynamic dispatch of the direct and band convolution kernels (see conv.h). foreach_target.h
// re-includes this file once per Highway target; the HWY_ONCE pass emits the dispatch table and the
// entry points. The method choice, im2col and the matmul calls are in conv_gemm.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/conv-inl.h"
#include "cc/kernels/conv_band-inl.h"

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

bool ConvBandF32Target(const ConvParams& p, const float* x, const float* w, float* y,
                       const float* bias, const float* residual, bool relu, ThreadPool* pool) {
  BandPlan bp;
  if (!BandPlanFor<float>(ConvGeom(p), &bp)) return false;
  BandImpl(p, bp, x, w, y, bias, residual, relu, pool);
  return true;
}
void ConvEpilogueF32Target(float* y, int64_t planes, int64_t plane, int64_t channels,
                           const float* bias, const float* residual, bool relu, ThreadPool* pool) {
  ApplyConvEpilogue(y, planes, plane, channels, bias, residual, relu, pool);
}
bool ConvBandTakesTarget(const ConvParams& p) {
  BandPlan bp;
  return BandPlanFor<float>(ConvGeom(p), &bp);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(ConvDirectF32Target);
HWY_EXPORT(ConvDirectF64Target);
HWY_EXPORT(ConvBandF32Target);
HWY_EXPORT(ConvEpilogueF32Target);
HWY_EXPORT(ConvBandTakesTarget);

void ConvDirectF32(const ConvParams& p, const float* x, const float* w, float* y,
                   ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(ConvDirectF32Target)(p, x, w, y, pool);
}
void ConvDirectF64(const ConvParams& p, const double* x, const double* w, double* y,
                   ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(ConvDirectF64Target)(p, x, w, y, pool);
}

bool ConvBandF32(const ConvParams& p, const float* x, const float* w, float* y, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(ConvBandF32Target)(p, x, w, y, nullptr, nullptr, false, pool);
}
bool ConvBandF32(const ConvParams& p, const float* x, const float* w, float* y,
                 const ConvEpilogue& epilogue, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(ConvBandF32Target)(p, x, w, y, epilogue.bias, epilogue.residual,
                                                 epilogue.relu, pool);
}
void ApplyConvEpilogueF32(float* y, int64_t planes, int64_t plane, int64_t channels,
                          const ConvEpilogue& epilogue, ThreadPool* pool) {
  HWY_DYNAMIC_DISPATCH(ConvEpilogueF32Target)
  (y, planes, plane, channels, epilogue.bias, epilogue.residual, epilogue.relu, pool);
}
bool ConvBandTakes(const ConvParams& p) { return HWY_DYNAMIC_DISPATCH(ConvBandTakesTarget)(p); }

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
