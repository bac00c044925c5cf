// Numerically stable softmax. Plain C++ (no Highway types); per-target code in softmax-inl.h.
#ifndef SHAPEPOLY_CC_KERNELS_SOFTMAX_H_
#define SHAPEPOLY_CC_KERNELS_SOFTMAX_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

// Softmax of in[outer][axis][inner] (row-major, contiguous) along the middle axis, written to
// out with the same layout: out = exp(x - max) / sum(exp(x - max)). The last axis of a
// [rows, cols] array is (outer = rows, axis = cols, inner = 1), its fast path; any other axis
// of an n-d array is expressed by collapsing the dims before it into `outer` and after it into
// `inner` (no transpose needed; vectorized across `inner`).
//
// dtype: kF32 or kF64. f32: the max is subtracted first, exp is Highway's SIMD Exp (<= 1 ulp
// on its range), and the sum of the exponentials is accumulated in float vector lanes flushed
// into a double every 256 elements (f64: in double), then multiplied by its reciprocal. A
// slice containing NaN or +-inf is computed with the scalar <cmath> algorithm, giving numpy's
// results (NaN, or exact 0 for -inf entries; all -inf gives NaN). axis == 0 writes nothing.
// Aliasing: out may equal in (in place); no partial overlap. Multi-threaded over slices on
// `pool` (nullptr = calling thread); results do not depend on the thread count. Returns false,
// writing nothing, for another dtype, negative extents or null data with a non-empty shape
// (the error convention of dtype.h).
bool Softmax(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner, void* out,
             ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_SOFTMAX_H_
