// MatmulParams helpers (see matmul.h). Plain C++: target-independent, so not in matmul.cc.
#include "cc/kernels/matmul.h"

namespace shp {
namespace kernels {

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

}  // namespace kernels
}  // namespace shp
