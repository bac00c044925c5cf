// Dynamic dispatch for the matmul kernels (see matmul.h). foreach_target.h re-includes this
// file once per Highway target; the HWY_ONCE pass emits the dispatch tables, the parameter
// helpers and the integer kernels (plain loops, no SIMD dispatch needed).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/matmul.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/matmul-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp {
namespace kernels {
namespace HWY_NAMESPACE {

bool MatmulF32Target(const MatmulParams& p, const float* a, const float* b, float* c,
                     ThreadPool* pool) {
  return MatmulFloatImpl<float>(p, a, b, c, pool);
}

bool MatmulF64Target(const MatmulParams& p, const double* a, const double* b, double* c,
                     ThreadPool* pool) {
  return MatmulFloatImpl<double>(p, a, b, c, pool);
}

void MatmulF32TileShapeTarget(int* mr, int* nr) {
  const hn::ScalableTag<float> d;
  *mr = kGemmMR;
  *nr = kGemmNRV * static_cast<int>(hn::Lanes(d));
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace shp
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <type_traits>

#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

HWY_EXPORT(MatmulF32Target);
HWY_EXPORT(MatmulF64Target);
HWY_EXPORT(MatmulF32TileShapeTarget);

MatmulParams RowMajorMatmul(int64_t m, int64_t n, int64_t k, bool transpose_b) {
  MatmulParams p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_row_stride = k;
  p.a_col_stride = 1;
  if (transpose_b) {  // B stored [n, k]: B[p, j] = b[j * k + p]
    p.b_row_stride = 1;
    p.b_col_stride = k;
  } else {
    p.b_row_stride = n;
    p.b_col_stride = 1;
  }
  p.c_row_stride = n;
  return p;
}

bool AddMatmulBatchDim(MatmulParams* params, int64_t dim, int64_t a_stride, int64_t b_stride,
                       int64_t c_stride) {
  if (params->batch_rank < 0 || params->batch_rank >= kMaxMatmulBatchRank || dim < 0) {
    return false;
  }
  const int i = params->batch_rank++;
  params->batch_dims[i] = dim;
  params->a_batch_strides[i] = a_stride;
  params->b_batch_strides[i] = b_stride;
  params->c_batch_strides[i] = c_stride;
  return true;
}

MatmulParams BatchedRowMajorMatmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                                   int64_t a_batch_stride, int64_t b_batch_stride,
                                   bool transpose_b) {
  MatmulParams p = RowMajorMatmul(m, n, k, transpose_b);
  AddMatmulBatchDim(&p, batch, a_batch_stride, b_batch_stride, m * n);
  return p;
}

bool ValidMatmulParams(const MatmulParams& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0) return false;
  if (p.batch_rank < 0 || p.batch_rank > kMaxMatmulBatchRank) return false;
  for (int i = 0; i < p.batch_rank; ++i) {
    if (p.batch_dims[i] < 0) return false;
  }
  return true;
}

bool MatmulF32(const MatmulParams& p, const float* a, const float* b, float* c,
               ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32Target)(p, a, b, c, pool);
}

bool MatmulF64(const MatmulParams& p, const double* a, const double* b, double* c,
               ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF64Target)(p, a, b, c, pool);
}

void MatmulF32TileShape(int* mr, int* nr) {
  HWY_DYNAMIC_DISPATCH(MatmulF32TileShapeTarget)(mr, nr);
}

namespace {

// Integer matmul: row i of C accumulates A[i, p] * B[p, :] over p (unit-stride inner loop when
// B's rows are contiguous, which compilers vectorize). U is the unsigned type of T, so every
// product and sum wraps modulo 2^bits; the final conversion back to T is modular (GCC/Clang).
template <typename T>
bool MatmulInt(const MatmulParams& prm, const T* a, const T* b, T* c, ThreadPool* pool) {
  using U = std::make_unsigned_t<T>;
  if (!ValidMatmulParams(prm)) return false;
  int64_t batch = 1;
  for (int i = 0; i < prm.batch_rank; ++i) batch *= prm.batch_dims[i];
  if (batch == 0 || prm.m == 0 || prm.n == 0) return true;
  const int64_t rows = batch * prm.m;
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t t = row / prm.m;
      const int64_t i = row % prm.m;
      int64_t off_a = 0, off_b = 0, off_c = 0;
      for (int dim = prm.batch_rank - 1; dim >= 0; --dim) {
        const int64_t idx = t % prm.batch_dims[dim];
        t /= prm.batch_dims[dim];
        off_a += idx * prm.a_batch_strides[dim];
        off_b += idx * prm.b_batch_strides[dim];
        off_c += idx * prm.c_batch_strides[dim];
      }
      T* HWY_RESTRICT crow = c + off_c + i * prm.c_row_stride;
      if (!prm.accumulate) {
        for (int64_t j = 0; j < prm.n; ++j) crow[j] = T(0);
      }
      for (int64_t p = 0; p < prm.k; ++p) {
        const U av = static_cast<U>(a[off_a + i * prm.a_row_stride + p * prm.a_col_stride]);
        const T* HWY_RESTRICT brow = b + off_b + p * prm.b_row_stride;
        if (prm.b_col_stride == 1) {
          for (int64_t j = 0; j < prm.n; ++j) {
            crow[j] = static_cast<T>(static_cast<U>(crow[j]) + av * static_cast<U>(brow[j]));
          }
        } else {
          for (int64_t j = 0; j < prm.n; ++j) {
            crow[j] = static_cast<T>(static_cast<U>(crow[j]) +
                                     av * static_cast<U>(brow[j * prm.b_col_stride]));
          }
        }
      }
    }
  };
  const double macs = static_cast<double>(rows) * static_cast<double>(prm.n) *
                      static_cast<double>(std::max<int64_t>(prm.k, 1));
  if (pool != nullptr && macs >= static_cast<double>(1 << 18)) {
    const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((1 << 16) / (macs / rows)));
    ParallelFor(pool, rows, grain, run);
  } else {
    run(0, rows);
  }
  return true;
}

}  // namespace

bool MatmulI32(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c,
               ThreadPool* pool) {
  return MatmulInt<int32_t>(p, a, b, c, pool);
}

bool MatmulI64(const MatmulParams& p, const int64_t* a, const int64_t* b, int64_t* c,
               ThreadPool* pool) {
  return MatmulInt<int64_t>(p, a, b, c, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
