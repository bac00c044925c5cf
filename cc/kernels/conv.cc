// Dynamic dispatch of the direct and band convolution kernels (see conv.h). foreach_target.h
// re-includes this file once per Highway target; the HWY_ONCE pass emits the dispatch table and the
// entry points. The method choice, im2col and the matmul calls are in conv_gemm.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/conv.cc"
#include <cstdlib>
#include <new>

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/conv-inl.h"
#include "cc/kernels/conv_band-inl.h"
#include "cc/kernels/conv_nchwc-inl.h"

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
bool ConvNchwcSupportsTarget(const ConvParams& p) { return NcSupports(ConvGeom(p), p.groups); }
bool ConvNchwcTakesTarget(const ConvParams& p) { return NcTakes(ConvGeom(p), p.groups); }
// The lanes and element count of the packing for p (0 when the kernel does not take it).
int64_t ConvNchwcPackTarget(const ConvParams& p, const float* w, float* out, int32_t* lanes) {
  const ConvGeom g(p);
  if (!NcSupports(g, p.groups)) return 0;
  *lanes = static_cast<int32_t>(NcLanes());
  if (out != nullptr) NcPack(g, w, out);
  return NcPackedElements(g);
}
bool ConvNchwcF32Target(const ConvParams& p, const float* x, const float* w, int32_t lanes,
                        float* y, const float* bias, const float* residual, bool relu,
                        ThreadPool* pool) {
  if (!NcSupports(ConvGeom(p), p.groups) || lanes != NcLanes()) return false;
  NcImpl(p, x, w, y, bias, residual, relu, pool);
  return true;
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
HWY_EXPORT(ConvNchwcSupportsTarget);
HWY_EXPORT(ConvNchwcTakesTarget);
HWY_EXPORT(ConvNchwcPackTarget);
HWY_EXPORT(ConvNchwcF32Target);

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

PackedConvNchwcF32::~PackedConvNchwcF32() { std::free(data_); }
PackedConvNchwcF32::PackedConvNchwcF32(PackedConvNchwcF32&& o) noexcept
    : data_(o.data_), elements_(o.elements_), lanes_(o.lanes_), o_(o.o_), c_(o.c_), taps_(o.taps_) {
  o.data_ = nullptr;
  o.elements_ = 0;
}
PackedConvNchwcF32& PackedConvNchwcF32::operator=(PackedConvNchwcF32&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    elements_ = o.elements_;
    lanes_ = o.lanes_;
    o_ = o.o_;
    c_ = o.c_;
    taps_ = o.taps_;
    o.data_ = nullptr;
    o.elements_ = 0;
  }
  return *this;
}

bool ConvNchwcTakes(const ConvParams& p) {
  return ValidConvParams(p) && HWY_DYNAMIC_DISPATCH(ConvNchwcTakesTarget)(p);
}

int64_t ConvNchwcPackedElements(const ConvParams& p) {
  int32_t lanes = 0;
  return ValidConvParams(p) ? HWY_DYNAMIC_DISPATCH(ConvNchwcPackTarget)(p, nullptr, nullptr, &lanes)
                            : 0;
}

bool ConvNchwcF32(const ConvParams& p, const float* x, const float* w, float* y, float* scratch,
                  int64_t scratch_elements, const ConvEpilogue& epilogue, ThreadPool* pool) {
  if (!ValidConvParams(p)) return false;
  int32_t lanes = 0;
  const int64_t n = HWY_DYNAMIC_DISPATCH(ConvNchwcPackTarget)(p, nullptr, nullptr, &lanes);
  if (n <= 0 || scratch_elements < n) return false;
  HWY_DYNAMIC_DISPATCH(ConvNchwcPackTarget)(p, w, scratch, &lanes);
  return HWY_DYNAMIC_DISPATCH(ConvNchwcF32Target)(p, x, scratch, lanes, y, epilogue.bias,
                                                  epilogue.residual, epilogue.relu, pool);
}

bool ConvNchwcSupports(const ConvParams& p) {
  return ValidConvParams(p) && HWY_DYNAMIC_DISPATCH(ConvNchwcSupportsTarget)(p);
}

PackedConvNchwcF32 PackConvNchwcF32(const ConvParams& p, const float* w) {
  PackedConvNchwcF32 r;
  if (!ValidConvParams(p)) return r;
  int32_t lanes = 0;
  const int64_t n = HWY_DYNAMIC_DISPATCH(ConvNchwcPackTarget)(p, w, nullptr, &lanes);
  if (n <= 0) return r;
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  auto* data = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (data == nullptr) throw std::bad_alloc();
  HWY_DYNAMIC_DISPATCH(ConvNchwcPackTarget)(p, w, data, &lanes);
  r.data_ = data;
  r.elements_ = n;
  r.lanes_ = lanes;
  r.o_ = p.out_channels;
  r.c_ = p.in_channels;
  int64_t taps = 1;
  for (int a = 0; a < p.spatial_rank; ++a) taps *= p.kernel[a];
  r.taps_ = taps;
  return r;
}

bool ConvNchwcF32(const ConvParams& p, const float* x, const PackedConvNchwcF32& wt, float* y,
                  const ConvEpilogue& epilogue, ThreadPool* pool) {
  if (!ValidConvParams(p) || wt.empty()) return false;
  int64_t taps = 1;
  for (int a = 0; a < p.spatial_rank; ++a) taps *= p.kernel[a];
  if (wt.out_channels() != p.out_channels || wt.in_channels() != p.in_channels ||
      wt.taps() != taps) {
    return false;
  }
  return HWY_DYNAMIC_DISPATCH(ConvNchwcF32Target)(p, x, wt.data(), wt.lanes(), y, epilogue.bias,
                                                  epilogue.residual, epilogue.relu, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
