// Top-k selection along an axis on concrete extents (ONNX TopK, numpy's sort order). Plain
// C++: a partial sort of an index array per row; not SIMD-bound.
//
// Order: largest: descending values; smallest: ascending. Equal values keep the lower index
// first (stable, as ONNX requires). NaN counts as larger than +inf: first when largest, last
// when smallest (ONNX's reference, numpy's sort); NaNs among themselves by index. -0.0 and
// +0.0 are equal.
#ifndef SHAPEPOLY_CC_KERNELS_TOP_K_H_
#define SHAPEPOLY_CC_KERNELS_TOP_K_H_

#include <cstdint>

#include "cc/kernels/dtype.h"

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

// x is viewed as [outer, n, inner]; values (x's dtype) and indices (int64, positions along the
// axis) as [outer, k, inner]: for every row (o, i), the k best elements of x[o, :, i] in order.
//   - dtype: kF32, kF64, kI32 or kI64; extents >= 0 and 0 <= k <= n; otherwise false, writing
//     nothing.
//   - values or indices may be null (that result is not written).
//   - pool: rows are split over its threads; nullptr runs on the caller's thread. The result
//     does not depend on the split.
bool TopK(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner, int64_t k,
          bool largest, void* values, int64_t* indices, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_TOP_K_H_
