// Cumulative sum along an axis. Plain C++ (no Highway types); per-target code in cumsum-inl.h.
#ifndef SHAPEPOLY_CC_KERNELS_CUMSUM_H_
#define SHAPEPOLY_CC_KERNELS_CUMSUM_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

// Inclusive cumulative sum of in[outer][axis][inner] (row-major, contiguous) along the middle
// axis: out[o][k][j] = sum_{k' <= k} in[o][k'][j] (numpy.cumsum; any other axis of an n-d
// array is expressed by collapsing the dims before/after it into outer/inner).
//
// dtype: kF32 (running sum kept in double, each output rounded once: out[k] is the correctly
// accumulated prefix, so errors do not grow with k), kF64 (running sum in double), kI32 and
// kI64 (wrapping modulo 2^bits). Bool is not accepted (convert to an int first, as numpy
// promotes). Aliasing: out may equal in; no partial overlap. Multi-threaded over outer slices
// and column blocks on `pool` (nullptr = calling thread); results do not depend on the thread
// count. Returns false, writing nothing, for another dtype, negative extents or null data with
// a non-empty shape (the error convention of dtype.h).
bool CumSum(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner, void* out,
            ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_CUMSUM_H_
