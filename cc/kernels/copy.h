// Copy kernels on concrete extents for elements of any size: strided slice, constant pad and
// concatenation. Plain C++ (no Highway: the work is memcpy of contiguous runs, which libc
// already vectorizes, plus typed loops for strided 1/2/4/8-byte elements). Arrays are
// contiguous row-major; all extents and offsets are in elements.
#ifndef SHAPEPOLY_CC_KERNELS_COPY_H_
#define SHAPEPOLY_CC_KERNELS_COPY_H_

#include <cstdint>

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

// Most axes the copy kernels accept.
constexpr int kMaxCopyRank = 16;

// Common rules for the functions below:
//   - elem_size: bytes per element, >= 1 (bool = 1 byte).
//   - Return false and write nothing on invalid arguments (rank outside [0, kMaxCopyRank],
//     negative extents, elem_size < 1, out-of-range addressing, as stated per function): the
//     error convention of dtype.h.
//   - Inputs and output must not overlap. Any alignment. Empty outputs write nothing (and the
//     data pointers may then be null).
//   - pool: large copies are split over its threads; nullptr runs on the caller's thread. Must
//     not be called from inside a ParallelFor task of the same pool.
//   - Thread-safe: concurrent calls on disjoint outputs are fine.

// Strided slice: out[i_0, ..., i_{r-1}] = in[start_0 + i_0 * stride_0, ...] for the output
// shape out_shape. Strides may be any value, including negative (reversal) and 0 (repeat);
// every addressed input index must lie in [0, in_shape[d]) (checked: false otherwise).
bool Slice(const void* in, const int64_t* in_shape, int rank, const int64_t* start,
           const int64_t* stride, const int64_t* out_shape, int64_t elem_size, void* out,
           ThreadPool* pool);

// Constant padding: out has shape pad_low[d] + in_shape[d] + pad_high[d]; the input occupies
// [pad_low[d], pad_low[d] + in_shape[d]) on every axis and every other element is a copy of the
// elem_size bytes at pad_value. Pads must be >= 0 (false otherwise; crop with Slice).
bool Pad(const void* in, const int64_t* in_shape, int rank, const int64_t* pad_low,
         const int64_t* pad_high, const void* pad_value, int64_t elem_size, void* out,
         ThreadPool* pool);

// Concatenation along `axis` of num_inputs >= 1 arrays: input t has out_shape except on
// `axis`, where its extent is axis_extents[t] (>= 0, possibly 0); the extents must add up to
// out_shape[axis] (false otherwise). inputs[t] may be null only if input t is empty.
bool Concatenate(const void* const* inputs, const int64_t* axis_extents, int num_inputs,
                 const int64_t* out_shape, int rank, int axis, int64_t elem_size, void* out,
                 ThreadPool* pool);

// Triangle of matrices (numpy triu/tril, ONNX Trilu): in and out hold `batch` row-major
// rows x cols matrices; out[b, i, j] = in[b, i, j] where j - i >= k (upper) or j - i <= k
// (lower), else zero bytes (0, 0.0 and false in every element type). Any k (beyond
// +-(rows + cols) every element is kept or zeroed). Extents must be >= 0 (false otherwise).
bool Trilu(const void* in, int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper,
           int64_t elem_size, void* out, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_COPY_H_
