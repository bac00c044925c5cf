// Dynamic dispatch for the matmul family (matmul.h, matmul_prepacked.h): foreach_target.h
// re-includes this file once per Highway target; each pass defines thin per-target wrappers of
// matmul-inl.h, and the HWY_ONCE pass emits the dispatch tables and the plain C++ entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/matmul.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/matmul-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool MatmulF32Target(const MatmulParams& p, const float* a, const float* b, float* c,
                     const MatmulEpilogue& e, ThreadPool* pool) {
  return MatmulFloatImpl<float>(p, a, b, c, pool, GemmTileEpilogue<float>{e.bias, e.relu});
}

bool MatmulF64Target(const MatmulParams& p, const double* a, const double* b, double* c,
                     ThreadPool* pool) {
  return MatmulFloatImpl<double>(p, a, b, c, pool);
}

bool MatmulI32Target(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c,
                     ThreadPool* pool) {
  return MatmulIntImpl<int32_t>(p, a, b, c, pool);
}

bool MatmulI64Target(const MatmulParams& p, const int64_t* a, const int64_t* b, int64_t* c,
                     ThreadPool* pool) {
  return MatmulIntImpl<int64_t>(p, a, b, c, pool);
}

void MatmulF32TileShapeTarget(int* mr, int* nr) {
  const hn::ScalableTag<float> d;
  *mr = kGemmMR;
  *nr = kGemmNRV * static_cast<int>(hn::Lanes(d));
}

float* PackF32Target(const float* b, int64_t k, int64_t n, int64_t rs, int64_t cs, int32_t* nrv,
                     int32_t* lanes, int64_t* n_padded, size_t* size) {
  return PackF32Impl(b, k, n, rs, cs, nrv, lanes, n_padded, size);
}

bool MatmulF32PrepackedTarget(const MatmulParams& p, const float* a, const PackedMatrixF32& b,
                              float* c, const MatmulEpilogue& e, ThreadPool* pool) {
  return MatmulF32PrepackedImpl(p, a, b, c, GemmTileEpilogue<float>{e.bias, e.relu}, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cstdlib>
#include <utility>

namespace shp {
namespace kernels {

HWY_EXPORT(MatmulF32Target);
HWY_EXPORT(MatmulF64Target);
HWY_EXPORT(MatmulI32Target);
HWY_EXPORT(MatmulI64Target);
HWY_EXPORT(MatmulF32TileShapeTarget);
HWY_EXPORT(PackF32Target);
HWY_EXPORT(MatmulF32PrepackedTarget);

bool MatmulF32(const MatmulParams& p, const float* a, const float* b, float* c, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32Target)(p, a, b, c, MatmulEpilogue{}, pool);
}

bool MatmulF32(const MatmulParams& p, const float* a, const float* b, float* c,
               const MatmulEpilogue& epilogue, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32Target)(p, a, b, c, epilogue, pool);
}

bool MatmulF64(const MatmulParams& p, const double* a, const double* b, double* c,
               ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF64Target)(p, a, b, c, pool);
}

bool MatmulI32(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c,
               ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulI32Target)(p, a, b, c, pool);
}

bool MatmulI64(const MatmulParams& p, const int64_t* a, const int64_t* b, int64_t* c,
               ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulI64Target)(p, a, b, c, pool);
}

void MatmulF32TileShape(int* mr, int* nr) {
  HWY_DYNAMIC_DISPATCH(MatmulF32TileShapeTarget)(mr, nr);
}

PackedMatrixF32::~PackedMatrixF32() { std::free(data_); }

PackedMatrixF32::PackedMatrixF32(PackedMatrixF32&& o) noexcept { *this = std::move(o); }

PackedMatrixF32& PackedMatrixF32::operator=(PackedMatrixF32&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    k_ = o.k_;
    n_ = o.n_;
    n_padded_ = o.n_padded_;
    nrv_ = o.nrv_;
    lanes_ = o.lanes_;
  }
  return *this;
}

PackedMatrixF32 PackedMatrixF32::Pack(const float* b, int64_t k, int64_t n, int64_t row_stride,
                                      int64_t col_stride) {
  PackedMatrixF32 out;
  if (k < 0 || n < 0) return out;
  out.data_ = HWY_DYNAMIC_DISPATCH(PackF32Target)(b, k, n, row_stride, col_stride, &out.nrv_,
                                                  &out.lanes_, &out.n_padded_, &out.size_);
  out.k_ = k;
  out.n_ = n;
  return out;
}

bool MatmulF32Prepacked(const MatmulParams& params, const float* a, const PackedMatrixF32& b,
                        float* c, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32PrepackedTarget)(params, a, b, c, MatmulEpilogue{}, pool);
}

bool MatmulF32Prepacked(const MatmulParams& params, const float* a, const PackedMatrixF32& b,
                        float* c, const MatmulEpilogue& epilogue, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32PrepackedTarget)(params, a, b, c, epilogue, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
