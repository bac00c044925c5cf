// Windowed reductions (XLA's ReduceWindow): sum, max or min over a sliding window on every
// axis of a row-major array, with strides, window dilation, base dilation and padding. Pooling
// is built from it. Plain C++ (no Highway types); the per-target code is in
// reduce_window-inl.h.
#ifndef SHAPEPOLY_CC_KERNELS_REDUCE_WINDOW_H_
#define SHAPEPOLY_CC_KERNELS_REDUCE_WINDOW_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/reduce.h"

namespace shp {
namespace kernels {

// The largest rank ReduceWindow accepts.
constexpr int kMaxWindowRank = 16;

// The window geometry of one axis. The input of `size` elements is first base-dilated
// (base_dilation - 1 holes between neighbours: (size - 1) * base_dilation + 1 positions), then
// padded with pad_low / pad_high positions (negative padding removes positions); holes and
// padding hold the reduction's identity. Output element o reduces the positions
// o * stride + k * window_dilation for k in [0, window).
struct WindowDim {
  int64_t size = 0;
  int64_t window = 1;
  int64_t stride = 1;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
  int64_t pad_low = 0;
  int64_t pad_high = 0;
};

// The output extent of one axis,
//   floordiv((size - 1) * base_dilation + 1 + pad_low + pad_high
//            - ((window - 1) * window_dilation + 1), stride) + 1,
// into *out. Returns false for size < 0, window, stride or a dilation < 1, or int64 overflow.
// The result may be <= 0 (callers decide whether that is an error; ReduceWindow rejects < 0).
bool ReduceWindowOutputSize(const WindowDim& d, int64_t* out);

// out = reduce_window(in) for op kSum, kMax or kMin; `out` has the extents of
// ReduceWindowOutputSize per axis (row-major, contiguous; an extent of 0 writes nothing).
// Identities: sum 0; max -inf (floats) / the lowest value (ints); min +inf / the highest.
// dtypes f32, f64, i32, i64 (ints wrap on sums; float max/min propagate NaN).
// Order of a float sum (the same on every target and thread count): the window's rows (every
// axis but the last, row-major window order) are added first, starting from the first present
// row, giving one value per position of the last axis (0 where no row is present); then those
// values are added along the last axis in window order, starting from the first window
// position (padding included). f32 sums accumulate in f32.
// Multi-threaded over output rows and column blocks on `pool` (nullptr = calling thread);
// every output element is computed by one thread, so results do not depend on the thread
// count. Returns false, writing nothing, for another op or dtype, rank outside
// [1, kMaxWindowRank], a geometry ReduceWindowOutputSize rejects or with a negative output
// extent, or null data with a non-empty shape. `in` and `out` must not overlap.
bool ReduceWindow(ReduceOp op, DType dtype, const void* in, int rank, const WindowDim* dims,
                  void* out, ThreadPool* pool);

// Average pooling in one pass: out = the window sum of ReduceWindow's kSum (the same order, the
// same bits) divided by the number of window positions that are counted, in the same sweep. A
// position of axis a is counted when it lies in [-count_pad_low[a], size + count_pad_high[a])
// (input coordinates): count pads of 0 count the input elements only (ONNX AveragePool without
// count_include_pad); the explicit pads count them too (count_include_pad; a ceil-mode overhang
// past them is not counted). Null count pads mean 0 on every axis. The divisor is the product
// of the per-axis counts, exact in T, so the result equals the window sum divided by a window
// sum over ones padded that way (0 / 0 = NaN where nothing is counted). dtypes f32 and f64;
// every base_dilation must be 1 and count pads must be >= 0, else false (nothing written).
// Otherwise as ReduceWindow (threads, determinism, the errors).
bool ReduceWindowMean(DType dtype, const void* in, int rank, const WindowDim* dims,
                      const int64_t* count_pad_low, const int64_t* count_pad_high, void* out,
                      ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_REDUCE_WINDOW_H_
