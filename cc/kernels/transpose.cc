// Dynamic dispatch for the transpose kernels (see transpose.h). foreach_target.h re-includes
// this file once per Highway target; the HWY_ONCE pass emits the dispatch tables and the plain
// C++ entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/transpose.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool TransposeTarget(const void* in, const int64_t* in_shape, const int64_t* perm, int rank,
                     int64_t elem_size, void* out, ThreadPool* pool) {
  return TransposeImpl(in, in_shape, perm, rank, elem_size, out, pool);
}

bool Transpose2DTarget(const void* in, int64_t rows, int64_t cols, int64_t in_row_stride,
                       int64_t elem_size, void* out, int64_t out_row_stride, ThreadPool* pool) {
  return Transpose2DImpl(in, rows, cols, in_row_stride, elem_size, out, out_row_stride, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(TransposeTarget);
HWY_EXPORT(Transpose2DTarget);

bool Transpose(const void* in, const int64_t* in_shape, const int64_t* perm, int rank,
               int64_t elem_size, void* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(TransposeTarget)(in, in_shape, perm, rank, elem_size, out, pool);
}

bool Transpose2D(const void* in, int64_t rows, int64_t cols, int64_t in_row_stride,
                 int64_t elem_size, void* out, int64_t out_row_stride, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(Transpose2DTarget)(in, rows, cols, in_row_stride, elem_size, out,
                                                 out_row_stride, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
