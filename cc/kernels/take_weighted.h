// take_weighted: weighted sums of rows gathered along one axis (interpolation tables: ONNX
// Resize's nearest, linear, cubic and antialiased filters, one axis at a time). Plain C++ (no
// Highway types); per-target code in take_weighted-inl.h.
#ifndef SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_H_
#define SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/gather.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

// x is viewed as [outer, n, inner] (the axes before the taken one collapsed into `outer`, those
// after it into `inner`); indices (int32 or int64) and weights (x's dtype) are [m, k] row-major;
// out is [outer, m, inner]:
//   out[o, j, i] = sum over t = 0 .. k-1 of weights[j, t] * x[o, indices[j, t], i]
// summed in increasing t, each product and each sum rounded once (a multiply then an add, never
// fused): acc = w[j,0] * x0; acc = acc + w[j,t] * xt for t >= 1. k == 0 gives +0. The result
// does not depend on the Highway target, the split over threads or the thread count.
//   - dtype: kF32 or kF64 (others: false).
//   - An index is valid in [0, n) (no negative wrap). An invalid one is never read: it is
//     clamped into [0, n - 1] (n == 0: its term is zero) and the whole output is still written;
//     the first invalid index in row-major order of the [m, k] table is reported in *bad_index
//     (position -1 when all are valid; bad_index may be null).
//   - Extents >= 0; null data only where nothing is read or written. out must not overlap the
//     inputs. Returns false, writing nothing, for rejected arguments (dtype.h's convention).
//   - inner > 1: rows of `inner` contiguous elements, vectorized along them; inner == 1: each
//     output element by gathers along j (SIMD gathers when n < 2^31). Split over `pool`
//     (nullptr: the calling thread); not from inside a ParallelFor task of the same pool.
bool TakeWeighted(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner,
                  const void* indices, IndexType index_type, const void* weights, int64_t m,
                  int64_t k, void* out, ThreadPool* pool, BadIndex* bad_index);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_H_
