// Reductions (sum, mean, max, min, prod) over axes of a row-major array. Plain C++ (no
// Highway types); the per-target code is in reduce-inl.h.
#ifndef SHAPEPOLY_CC_KERNELS_REDUCE_H_
#define SHAPEPOLY_CC_KERNELS_REDUCE_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

// Reduction ops. The output dtype equals the input dtype.
//   kSum, kProd: f32 accumulates in double (rounded to float once at the end); f64 accumulates
//     in double (plain summation in several vector lanes, no compensation); i32/i64 wrap modulo
//     2^bits. Empty: sum = 0, prod = 1. Not defined for bool.
//   kMean: f32/f64 only; the sum (as above) divided by the element count; empty gives NaN.
//   kMax, kMin: any dtype; NaN if any element is NaN (numpy.max); empty gives the identity:
//     max: -inf / INT_MIN / false; min: +inf / INT_MAX / true. On bool, max = any, min = all.
//   f16, bf16 (every op): loaded into f32 registers and reduced as f32 is (the same
//     accumulators), the f32 result rounded once to the type: the bits of converting to f32,
//     the f32 reduction and converting back (a NaN's sign and payload aside). The other narrow
//     types are refused (the tracer computes them in i32/i64).
// Summation order: fixed by the shape alone (rows longer than 32768 elements are summed in
// 32768-element blocks whose partial sums are combined in order), so results are identical
// for every thread count, but may differ between SIMD targets in the last double bits.
enum class ReduceOp : int32_t { kSum, kMean, kMax, kMin, kProd };

// Reduces in[outer][reduced][inner] (row-major, contiguous) over the middle axis into
// out[outer][inner]. Extents >= 0 (reduced == 0 gives the empty results above). `in` and
// `out` must not overlap. Multi-threaded over rows / column blocks / row blocks on `pool`
// (nullptr = calling thread). Returns false, writing nothing, for an op not defined on the
// dtype, a negative extent or null data with a non-empty shape (the error convention of
// dtype.h). Thread-safety: reentrant.
bool Reduce(ReduceOp op, DType dtype, const void* in, int64_t outer, int64_t reduced, int64_t inner,
            void* out, ThreadPool* pool);

// Reduces the axes with reduce_axis[d] == true of a row-major array of shape shape[0..rank)
// into `out`, whose shape is `shape` without those axes (keepdims does not change the memory
// layout). Adjacent axes of the same kind are merged; several separate reduced groups are
// reduced one after the other (innermost first) through an accumulator-typed scratch buffer
// (double for f32 sums), so the accuracy is the same as for one group. rank 0 (or no reduced
// axis) copies the input. Same dtypes, aliasing, threading and errors as Reduce.
bool ReduceAxes(ReduceOp op, DType dtype, const void* in, int rank, const int64_t* shape,
                const bool* reduce_axis, void* out, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_REDUCE_H_
