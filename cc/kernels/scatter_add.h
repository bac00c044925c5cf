// Scatter-add (and Scatter with another reduction) along an axis on concrete extents: the transpose
// of Take (gather.h), as NumPy's `np.add.at(out, (..., indices, ...), updates)` on a copy of the
// base and JAX's `x.at[..., indices, ...].add(updates)`. Plain C++ (the accumulation is a short
// strided loop per index position; the order of the additions is what makes the result
// reproducible).
//
// Index semantics (as Take):
//   - Indices are int32 or int64. An index i is valid if -n <= i < n for the axis of extent n;
//     a negative index counts from the end (i + n), as in NumPy.
//   - An invalid index never causes an out-of-bounds access: its updates are not added
//     anywhere. The kernel still writes the whole output, returns true, and reports the first
//     (lowest-position) invalid index in *bad_index so the runtime can raise an error instead.
//   - Returns false, writing nothing, for rejected arguments (the error convention of
//     dtype.h): negative extents or num_indices, an unknown index type, a dtype that is not
//     numeric (bool), or an output that partially overlaps the base.
//
// Determinism: every output element receives its updates in the order of the index positions
// (j = 0, 1, ...), whatever the thread count, so repeated indices sum in one fixed order and
// results are bit-for-bit reproducible. Threads split only the axes before and after the
// scattered one, never the index positions. Integers wrap modulo 2^bits (as add).
#ifndef SHAPEPOLY_CC_KERNELS_SCATTER_ADD_H_
#define SHAPEPOLY_CC_KERNELS_SCATTER_ADD_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/gather.h"

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

// The base and the output are viewed as [outer, axis_extent, inner], the updates as
// [outer, num_indices, inner] (the caller collapses the axes before and after the scattered
// one, and the index axes into num_indices):
//   out = base;  for j in 0..num_indices-1:  out[o, indices[j], i] += updates[o, j, i].
//   - dtype: kF32, kF64, kI32 or kI64; extents >= 0; otherwise false.
//   - base / indices / updates / out may be null only when nothing is read from / written to
//     them.
//   - out may be base itself (in place: the copy is skipped); otherwise it must not overlap
//     base, indices or updates. Elements aligned for the dtype.
//   - bad_index: receives the first invalid index (position -1 if none; may be null).
//   - pool: large scatters are split over its threads (the result and *bad_index do not depend
//     on the split); nullptr runs on the caller's thread. Must not be called from inside a
//     ParallelFor task of the same pool. Thread-safe on disjoint outputs.
bool ScatterAdd(const void* base, int64_t outer, int64_t axis_extent, int64_t inner,
                const void* indices, IndexType index_type, int64_t num_indices, const void* updates,
                DType dtype, void* out, ThreadPool* pool, BadIndex* bad_index);

// How Scatter combines an update u with the element d it hits (the values of the C API's
// shp_scatter_reduction_t and of the schema's ScatterReduction).
enum class ScatterReduction : int {
  kReplace = 0,  // u (among repeated indices, the last position's: positions are in order)
  kAdd = 1,      // d + u (integers wrap), as ScatterAdd
  kMul = 2,      // d * u (integers wrap)
  kMax = 3,      // the larger; NaN if either is NaN
  kMin = 4,      // the smaller; NaN if either is NaN
};
constexpr int kNumScatterReductions = 5;

// ScatterAdd with the combination `reduction` (same layout, arguments, errors, order and
// determinism): out = base; for j in 0..num_indices-1: out[o, k_j, i] = combine(out[o, k_j, i],
// updates[o, j, i]). Returns false also for a reduction outside ScatterReduction.
bool Scatter(const void* base, int64_t outer, int64_t axis_extent, int64_t inner,
             const void* indices, IndexType index_type, int64_t num_indices, const void* updates,
             DType dtype, ScatterReduction reduction, void* out, ThreadPool* pool,
             BadIndex* bad_index);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_SCATTER_ADD_H_
