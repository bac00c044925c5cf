// Data-dependent selection kernels: count the nonzero elements of an array, list their indices
// (NumPy `argwhere`), and select the slices of an axis whose boolean mask is true (NumPy
// `x[mask]`). Plain C++ (no Highway types); the per-target code is in select-inl.h.
//
// The output size of Nonzero and MaskSelect depends on the data, so a caller first counts
// (CountNonzero), plans the output for that count, then fills it. The fill reads the data once
// more and must find the same count; if the data disagrees (it changed in between) the fill
// returns false having written nothing: it counts (into a bit mask of the data) before it
// writes.
//
// What "nonzero" means, per dtype (numpy's rule):
//   - kF32 / kF64: x != 0 as a number: -0.0 is zero, NaN is nonzero (so are +-inf, subnormals).
//   - kI32 / kI64: x != 0.
//   - kBool: any byte != 0 is true (dtype.h).
//
// Errors follow dtype.h: a rejected argument returns false and writes nothing. Rejected are a
// dtype outside the enum, negative extents or counts, a rank outside 0..32, an element count
// or an output size (in elements or bytes) that overflows int64, null data for a non-empty
// array, elem_size < 1, and a count that cannot be right (more than the elements).
//
// Threads: `pool` (nullptr = the calling thread) splits large inputs into contiguous chunks;
// each chunk counts its part, a prefix sum places it, then each fills its part. The data is
// read once per call: the fill uses the bit mask the counting pass made. Results are
// bit-identical for every thread count. Must not be called from inside a ParallelFor task of
// the same pool. Thread-safe on disjoint outputs. Scratch: the bit mask, n/8 bytes (on the
// stack up to 4096 elements), and std::bad_alloc passes through (dtype.h).
#ifndef SHAPEPOLY_CC_KERNELS_SELECT_H_
#define SHAPEPOLY_CC_KERNELS_SELECT_H_

#include <cstdint>

#include "cc/kernels/dtype.h"

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

// The largest rank Nonzero accepts (the output has one column per axis).
constexpr int kMaxSelectRank = 32;

// *count = the number of nonzero elements among x[0..n) of dtype `dtype` (rules above).
//   - n >= 0; x may be null only when n == 0; count must not be null.
//   - Returns false, leaving *count untouched, for a rejected argument.
bool CountNonzero(DType dtype, const void* x, int64_t n, ThreadPool* pool, int64_t* count);

// The indices of the nonzero elements of the row-major array x of shape shape[0..rank), as
// np.argwhere(x): out is an int64 [count, rank] row-major matrix, one row per nonzero element
// (its coordinates), rows in increasing flat (row-major) order.
//   - rank 0..kMaxSelectRank; rank 0 is a scalar (shape may be null): count is 1 when it is
//     nonzero (one row of zero columns: nothing is written), else 0.
//   - shape[d] >= 0; their product must fit int64 unless one is 0 (x is empty: count 0).
//   - count: what CountNonzero returned for the same data. count < 0, count > elements, or
//     count * rank overflowing int64 is rejected. If the data holds another number of nonzero
//     elements, returns false having written nothing.
//   - x may be null only when it is empty; out only when count * rank == 0.
//   - out must not overlap x. Any alignment.
bool Nonzero(DType dtype, const void* x, const int64_t* shape, int rank, int64_t count,
             int64_t* out, ThreadPool* pool);

// Boolean-mask selection along an axis. x is viewed as [outer, m, inner] elements of elem_size
// bytes (the caller collapses the axes before and after the masked one); mask has m bytes
// (nonzero = true). out = x[:, mask, :], an [outer, count, inner] array:
//   out[o, j, i] = x[o, k_j, i] where k_0 < k_1 < ... are the positions of the true entries.
// Runs of consecutive true entries are copied with one memcpy per outer index.
//   - outer, m, inner >= 0; elem_size >= 1; the byte sizes of x and out must fit int64 (a
//     zero factor makes a size 0).
//   - count: the number of true mask entries (CountNonzero(kBool, mask, m)); count < 0 or
//     count > m is rejected. The mask is checked even when outer or inner is 0. If it holds
//     another number of true entries, returns false having written nothing.
//   - x may be null only when outer*m*inner == 0, mask only when m == 0, out only when
//     outer*count*inner == 0. out must not overlap x or mask. Any alignment.
bool MaskSelect(const void* x, int64_t outer, int64_t m, int64_t inner, int64_t elem_size,
                const uint8_t* mask, int64_t count, void* out, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_SELECT_H_
