// The inner loops that mca_report.py hands to llvm-mca: the GEMM micro-kernels (packed A and B:
// the loop of every matmul, dense layer and im2col convolution), the small-m kernel that reads
// B in place, and the direct convolution row (depthwise and one-channel convs). Not part of
// the Bazel build: mca_report.py compiles this file with g++ and -march=<x86 level> only, so
// Highway's static target (HWY_STATIC_TARGET, no dynamic dispatch) is the one under study: the
// same template code the library compiles per target in matmul.cc and conv.cc.
#include <stdint.h>

#include "cc/kernels/conv-inl.h"
#include "cc/kernels/matmul-inl.h"

namespace k = shp::kernels::HWY_NAMESPACE;
namespace hn = hwy::HWY_NAMESPACE;

extern "C" {

// The full-tile micro-kernel with NRV vectors per row (kGemmMR x NRV accumulators).
#define SHP_MCA_GEMM_MICRO(NRV)                                                        \
  void mca_gemm_micro_nrv##NRV(int64_t kc, const float* ap, const float* bp, float* c, \
                               int64_t c_rs) {                                         \
    const hn::ScalableTag<float> d;                                                    \
    if constexpr (NRV <= k::kGemmNRV) {                                                \
      k::GemmMicroKernel<NRV>(d, kc, ap, bp, c, c_rs, k::kGemmMR,                      \
                              static_cast<int64_t>(NRV * hn::Lanes(d)), false, {});    \
    }                                                                                  \
  }
SHP_MCA_GEMM_MICRO(2)
SHP_MCA_GEMM_MICRO(3)
#undef SHP_MCA_GEMM_MICRO

// The small-m path's kernel (A and B read in place) at one row, as a batch-1 dense layer runs.
void mca_gemm_direct_1row(int64_t kc, const float* a, const float* b, int64_t b_rs, float* c) {
  const hn::ScalableTag<float> d;
  constexpr int V = k::GemmDirectV<1>();
  k::GemmDirectKernel<1, V>(d, kc, a, kc, b, b_rs, c, 0, static_cast<int64_t>(V * hn::Lanes(d)),
                            false, {});
}

// The direct convolution kernel: kOutputSlots output vectors at once over padded input rows
// (a depthwise 3x3 plane: 3 pairs of 3 taps).
void mca_conv_output_slots(const shp::kernels::ConvGeom* g, const k::RowPair<float>* pairs, int n,
                           const int64_t* off, float* const* out, const int64_t* valid) {
  k::OutputSlots<k::kOutputSlots, float>(*g, pairs, n, off, out, valid);
}

// The depthwise 3x3 kernel (stride 1): kDepthwiseRows output rows per column vector, each
// input vector feeding up to 3 of them.
void mca_conv_depthwise3x3(const shp::kernels::ConvGeom* g, const float* buf, int64_t span,
                           const float* wc, int64_t q1, float* y) {
  k::DepthwiseRows<k::kDepthwiseRows, 1, float>(*g, buf, span, wc, q1, y);
}

}  // extern "C"
