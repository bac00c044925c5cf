// Dynamic dispatch for the windowed reductions (see reduce_window.h). foreach_target.h
// re-includes this file once per Highway target; the HWY_ONCE pass emits the dispatch table and
// the entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/reduce_window.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/reduce_window-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool ReduceWindowTarget(ReduceOp op, DType dtype, const void* in, int rank, const WindowDim* dims,
                        void* out, ThreadPool* pool) {
  if (op == ReduceOp::kMean) return false;  // ReduceWindowMean
  return ReduceWindowImpl(op, dtype, in, rank, dims, nullptr, nullptr, out, pool);
}
bool ReduceWindowMeanTarget(DType dtype, const void* in, int rank, const WindowDim* dims,
                            const int64_t* count_pad_low, const int64_t* count_pad_high, void* out,
                            ThreadPool* pool) {
  return ReduceWindowImpl(ReduceOp::kMean, dtype, in, rank, dims, count_pad_low, count_pad_high,
                          out, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(ReduceWindowTarget);
HWY_EXPORT(ReduceWindowMeanTarget);

bool ReduceWindowOutputSize(const WindowDim& d, int64_t* out) {
  if (d.size < 0 || d.window < 1 || d.stride < 1 || d.window_dilation < 1 || d.base_dilation < 1) {
    return false;
  }
  int64_t dilated, extent, n;
  if (__builtin_mul_overflow(d.size - 1, d.base_dilation, &dilated) ||
      __builtin_mul_overflow(d.window - 1, d.window_dilation, &extent) ||
      __builtin_add_overflow(dilated, d.pad_low, &n) || __builtin_add_overflow(n, d.pad_high, &n) ||
      __builtin_sub_overflow(n, extent, &n)) {
    return false;
  }
  // n = (size - 1) * bd + 1 + pads - (extent + 1): the two 1s cancel. Floor division.
  int64_t q = n / d.stride;
  if (n % d.stride != 0 && n < 0) --q;
  *out = q + 1;
  return true;
}

bool ReduceWindow(ReduceOp op, DType dtype, const void* in, int rank, const WindowDim* dims,
                  void* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(ReduceWindowTarget)(op, dtype, in, rank, dims, out, pool);
}

bool ReduceWindowMean(DType dtype, const void* in, int rank, const WindowDim* dims,
                      const int64_t* count_pad_low, const int64_t* count_pad_high, void* out,
                      ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(ReduceWindowMeanTarget)(dtype, in, rank, dims, count_pad_low,
                                                      count_pad_high, out, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
