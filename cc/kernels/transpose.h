// Transpose / permute kernels on concrete extents, for elements of any size. Plain C++: no
// Highway types here. The implementation (transpose-inl.h) first drops extent-1 axes and merges
// axes that stay adjacent, then either copies contiguous runs (the innermost axis is kept) or
// runs a cache-blocked 2-d transpose with SIMD 4x4 (4-byte) / 2x2 (8-byte) register transposes,
// dynamically dispatched, split over threads for large arrays.
#ifndef SHAPEPOLY_CC_KERNELS_TRANSPOSE_H_
#define SHAPEPOLY_CC_KERNELS_TRANSPOSE_H_

#include <cstdint>

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

// Most axes Transpose accepts.
constexpr int kMaxTransposeRank = 16;

// out = in.transpose(perm) for a contiguous row-major array `in` of shape in_shape[0..rank):
// `out` is contiguous row-major with shape out_shape[d] = in_shape[perm[d]], and
//   out[i_0, ..., i_{rank-1}] = in[j] where j[perm[d]] = i_d.
//   - elem_size: bytes per element, >= 1 (1, 2, 4 and 8 have fast paths; bool = 1 byte).
//   - Returns false and writes nothing if rank is not in [0, kMaxTransposeRank], elem_size < 1,
//     an extent is negative, or perm is not a permutation of [0, rank) (the error convention of
//     dtype.h). rank == 0 copies one
//     element. Empty arrays write nothing (in / out may then be null).
//   - in and out must not overlap. Any alignment.
//   - pool: large arrays are split over its threads; nullptr runs on the caller's thread.
//     Must not be called from inside a ParallelFor task of the same pool.
//   - Thread-safe: concurrent calls on disjoint outputs are fine.
bool Transpose(const void* in, const int64_t* in_shape, const int64_t* perm, int rank,
               int64_t elem_size, void* out, ThreadPool* pool);

// Strided 2-d transpose: out[c * out_row_stride + r] = in[r * in_row_stride + c] for r < rows,
// c < cols; strides are in elements, in_row_stride >= cols and out_row_stride >= rows (other
// elements of out are not written). Same rules as Transpose otherwise; returns false (writing
// nothing) for negative extents, elem_size < 1 or too-small strides.
bool Transpose2D(const void* in, int64_t rows, int64_t cols, int64_t in_row_stride,
                 int64_t elem_size, void* out, int64_t out_row_stride, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_TRANSPOSE_H_
