// Dynamic dispatch for the matmul family (matmul.h, matmul_prepacked.h): foreach_target.h
// re-includes this file once per Highway target; each pass defines thin per-target wrappers of
// matmul-inl.h, and the HWY_ONCE pass emits the dispatch tables and the plain C++ entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/matmul.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/matmul-inl.h"
#include "cc/kernels/matmul_int16-inl.h"

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

bool MatmulI32ViaI16Target(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c,
                           ThreadPool* pool) {
  return MatmulI32ViaI16Impl(p, a, b, c, pool);
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

PanelLayoutF32 PanelLayoutF32Target(int64_t n) { return PanelLayoutF32Impl(n); }

bool MatmulF32PanelsTarget(const MatmulParams& p, const float* a, const float* panels,
                           const PanelLayoutF32& layout, float* c, ThreadPool* pool) {
  return MatmulF32PanelsImpl(p, a, panels, layout, c, GemmTileEpilogue<float>{}, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace shp {
namespace kernels {

HWY_EXPORT(MatmulF32Target);
HWY_EXPORT(MatmulF64Target);
HWY_EXPORT(MatmulI32Target);
HWY_EXPORT(MatmulI32ViaI16Target);
HWY_EXPORT(MatmulI64Target);
HWY_EXPORT(MatmulF32TileShapeTarget);
HWY_EXPORT(PackF32Target);
HWY_EXPORT(MatmulF32PrepackedTarget);
HWY_EXPORT(PanelLayoutF32Target);
HWY_EXPORT(MatmulF32PanelsTarget);

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

namespace {

// Copies the rows x cols matrix at m (strides rs, cs) into dense row-major f64; returns the
// largest magnitude.
double DenseF64(const int32_t* m, size_t rows, size_t cols, int64_t rs, int64_t cs, double* out) {
  double max = 0;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const double v = m[static_cast<int64_t>(r) * rs + static_cast<int64_t>(c) * cs];
      max = std::max(max, std::fabs(v));
      out[r * cols + c] = v;
    }
  }
  return max;
}

// A single i32 product whose exact result fits f64's 53 bits (k * max|a| * max|b| < 2^52, the
// case of quantized int8/int16 operands widened to i32) runs on the f64 GEMM: every product and
// partial sum is an integer below 2^53, so exact in any order, and the result wraps to i32 as
// the integer kernel's would. false (nothing written) when the case does not apply; the caller
// then runs the integer kernel.
bool MatmulI32ViaF64(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c,
                     ThreadPool* pool) {
  if (!ValidMatmulParams(p) || p.batch_rank != 0 || p.accumulate || p.m <= 0 || p.n <= 0 ||
      p.k <= 0 || a == nullptr || b == nullptr || c == nullptr) {
    return false;
  }
  if (static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < 1 << 18)
    return false;  // small: the integer kernel is as fast
  const size_t m = static_cast<size_t>(p.m), n = static_cast<size_t>(p.n),
               k = static_cast<size_t>(p.k);
  std::vector<double> af, bf, cf;
  try {
    af.resize(m * k);
    bf.resize(k * n);
    cf.resize(m * n);
  } catch (const std::bad_alloc&) {
    return false;  // the integer kernel needs no scratch
  }
  const double max_a = DenseF64(a, m, k, p.a_row_stride, p.a_col_stride, af.data());
  const double max_b = DenseF64(b, k, n, p.b_row_stride, p.b_col_stride, bf.data());
  if (static_cast<double>(k) * max_a * max_b >= 4503599627370496.0) return false;  // 2^52
  if (!MatmulF64(RowMajorMatmul(p.m, p.n, p.k), af.data(), bf.data(), cf.data(), pool))
    return false;
  for (size_t i = 0; i < m; ++i) {
    int32_t* row = c + static_cast<int64_t>(i) * p.c_row_stride;
    for (size_t j = 0; j < n; ++j) {
      row[j] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(cf[i * n + j])));
    }
  }
  return true;
}

}  // namespace

bool MatmulI32(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c,
               ThreadPool* pool) {
  // Every path is exact (the i32 wrapping result), so the order only decides speed: the int16
  // GEMM (matmul_int16-inl.h) when every value of A and B fits int16, else the f64 GEMM when the
  // exact sums fit 53 bits, else the integer loop.
  if (HWY_DYNAMIC_DISPATCH(MatmulI32ViaI16Target)(p, a, b, c, pool)) return true;
  if (MatmulI32ViaF64(p, a, b, c, pool)) return true;
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

PanelLayoutF32 MatmulF32PanelLayout(int64_t n) {
  return HWY_DYNAMIC_DISPATCH(PanelLayoutF32Target)(n);
}

bool MatmulF32PrepackedPanels(const MatmulParams& params, const float* a, const float* panels,
                              const PanelLayoutF32& layout, float* c, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32PanelsTarget)(params, a, panels, layout, c, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
