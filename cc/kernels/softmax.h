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
// dtype: kF32, kF64, or kF16/kBF16 (in and out of that type, computed as f32 on the widened
// values and rounded once on store: the bits of converting to f32, the f32 softmax and converting
// back, a NaN's sign and payload aside; rows are loaded into f32 registers, another axis widens
// blocks of columns into per-thread scratch). f32: the max is subtracted first, exp is
// Highway's SIMD Exp (<= 1 ulp on its range), and the sum of the exponentials is accumulated in
// float vector lanes flushed into a double every 256 elements (f64: in double), then multiplied
// by its reciprocal. Each
// slice (a row, or a column of another axis) is on its own: one with a NaN, +inf or only -inf
// entries is all NaN (numpy's results); -inf entries of others give exactly 0. axis == 0
// writes nothing.
// Aliasing: out may equal in (in place); no partial overlap. Multi-threaded over slices on
// `pool` (nullptr = calling thread); results do not depend on the thread count. Returns false,
// writing nothing, for another dtype, negative extents or null data with a non-empty shape
// (the error convention of dtype.h).
bool Softmax(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner, void* out,
             ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_SOFTMAX_H_
