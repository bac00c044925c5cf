// Gather kernels on concrete extents for elements of any size: take along an axis with one
// index list (NumPy `take(axis=)`, JAX `jnp.take`), and take_along_axis with per-position
// indices (NumPy `take_along_axis`, PyTorch `gather`). Plain C++ (contiguous runs are memcpy'd,
// strided 1/2/4/8-byte elements use typed loops), except take_along_axis's runs of 4-byte
// elements: SIMD gathers on the CPU's Highway target.
//
// Index semantics (both kernels):
//   - Indices are int32 or int64. An index i is valid if -n <= i < n for the gathered axis of
//     extent n; a negative index counts from the end (i + n), as in NumPy.
//   - An invalid index never causes an out-of-bounds read: it is clamped into [0, n - 1] and
//     the element there is copied (like XLA's gather); if n == 0 the element is zero-filled.
//     The kernel still writes the whole output, returns true, and reports the first
//     (lowest-position) invalid index in *bad_index so the runtime can raise an error instead.
//   - Returns false, writing nothing, for rejected arguments (the error convention of
//     dtype.h): negative extents or num_indices, elem_size < 1, an unknown index type.
#ifndef SHAPEPOLY_CC_KERNELS_GATHER_H_
#define SHAPEPOLY_CC_KERNELS_GATHER_H_

#include <cstdint>

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

enum class IndexType { kI32 = 0, kI64 = 1 };

// The first invalid index of a gather: its flat position in the indices array and its value.
// position == -1 when every index is valid.
struct BadIndex {
  int64_t position = -1;
  int64_t index = 0;
};

// Take along an axis. The input is viewed as [outer, axis_extent, inner] (the caller collapses
// the axes before and after the gathered one), `indices` holds num_indices indices, and the
// output is [outer, num_indices, inner]:
//   out[o, j, i] = in[o, indices[j], i].
//   - elem_size >= 1 bytes (bool = 1); extents >= 0; otherwise false.
//   - in / indices / out may be null only when nothing is read from / written to them.
//   - out must not overlap in or indices. Any alignment.
//   - bad_index: receives the first invalid index (position -1 if none; may be null).
//   - pool: large gathers are split over its threads (*bad_index does not depend on the
//     split); nullptr runs on the caller's thread. Must not be called from inside a
//     ParallelFor task of the same pool. Thread-safe on disjoint outputs.
bool Take(const void* in, int64_t outer, int64_t axis_extent, int64_t inner, const void* indices,
          IndexType index_type, int64_t num_indices, int64_t elem_size, void* out, ThreadPool* pool,
          BadIndex* bad_index);

// Take along axis with per-position indices. The input is [outer, axis_extent, inner], the
// indices and the output are [outer, num_indices, inner]:
//   out[o, j, i] = in[o, indices[o, j, i], i].
// bad_index->position is the flat position in the indices array. Other rules as Take.
bool TakeAlongAxis(const void* in, int64_t outer, int64_t axis_extent, int64_t inner,
                   const void* indices, IndexType index_type, int64_t num_indices,
                   int64_t elem_size, void* out, ThreadPool* pool, BadIndex* bad_index);

namespace detail {
// TakeAlongAxis's SIMD part (gather_simd.cc, per Highway target): a run of 4-byte elements,
// out[m] = src[w_m * stride + m * step] for m in [0, len) with w_m index m (int64 if i64, else
// int32) plus n when negative. Whole vectors only: it stops before the first vector holding
// an index outside [-n, n) and before a tail shorter than a vector, and returns how many
// elements it wrote. Requires (n - 1) * stride + (len - 1) * step < 2^31 and n >= 1.
int64_t Gather4(const void* src, int64_t stride, int64_t step, const void* idx, bool i64, void* out,
                int64_t len, int64_t n);
}  // namespace detail

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_GATHER_H_
