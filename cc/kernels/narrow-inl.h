// Per-target f16/bf16 <-> f32 array conversions for the kernels that take the narrow float
// types by computing blocks of them in f32 (softmax, layer_norm, the reductions): the same
// vector conversions as the elementwise kernel's convert (elementwise_ops-inl.h; their bits are
// narrow.h's, narrow_test.cc), so such a kernel gives the bits of convert -> f32 kernel ->
// convert. A Highway "-inl.h" header: re-included once per target, a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_NARROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_NARROW_INL_H_
#undef SHAPEPOLY_CC_KERNELS_NARROW_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_NARROW_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "cc/kernels/dtype.h"
#include "cc/kernels/elementwise_ops-inl.h"  // F16ToF32, F32ToF16, BF16ToF32, F32ToBF16
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

// True for the narrow float types these kernels take (f16, bf16).
HWY_INLINE bool IsNarrowFloatType(DType t) { return t == DType::kF16 || t == DType::kBF16; }

// n elements of f16 or bf16 (t) at x, widened to f32 (exact).
HWY_INLINE void NarrowToF32(DType t, const void* x, float* out, size_t n) {
  const uint16_t* h = static_cast<const uint16_t*>(x);
  if (t == DType::kF16) {
    F16ToF32(h, out, n);
  } else {
    BF16ToF32(h, out, n);
  }
}

// n f32 values rounded once (to nearest even) to f16 or bf16 (t) at out.
HWY_INLINE void F32ToNarrow(DType t, const float* x, void* out, size_t n) {
  uint16_t* h = static_cast<uint16_t*>(out);
  if (t == DType::kF16) {
    F32ToF16(x, h, n);
  } else {
    F32ToBF16(x, h, n);
  }
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
