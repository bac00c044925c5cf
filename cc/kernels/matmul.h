// Matrix multiplication kernels: C = A·B (or C += A·B) on concrete extents, with general
// strides for A and B (so transposed operands cost nothing extra) and NumPy-style batch
// broadcasting (batch stride 0). Plain C++: no Highway types here.
//
// f32 and f64 use a packed, register-blocked Highway micro-kernel (matmul-inl.h), dynamically
// dispatched. i32 uses one too when every value of A and B fits int16 (matmul_int16-inl.h:
// int16 pairs by pmaddwd / vpdpwssd, or u8 x s8 byte quads by vpdpbusd on AVX512_VNNI CPUs),
// else the f64 GEMM when the exact sums fit 53 bits, else a plain loop; i64 uses a plain loop.
// Integer results wrap around (unsigned arithmetic) on every path.
#ifndef SHAPEPOLY_CC_KERNELS_MATMUL_H_
#define SHAPEPOLY_CC_KERNELS_MATMUL_H_

#include <cstdint>

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

// Most batch dimensions a MatmulParams can describe.
constexpr int kMaxMatmulBatchRank = 8;

// Describes C[b..., i, j] (+)= sum_p A[b..., i, p] * B[b..., p, j] for every batch index b.
// All strides are in elements (not bytes) and may be any value, including 0 and negative;
// the kernels read exactly the elements the strides address and nothing else.
//   A[b, i, p] = a[sum_d b_d * a_batch_strides[d] + i * a_row_stride + p * a_col_stride]
//   B[b, p, j] = b[sum_d b_d * b_batch_strides[d] + p * b_row_stride + j * b_col_stride]
//   C[b, i, j] = c[sum_d b_d * c_batch_strides[d] + i * c_row_stride + j]
// A batch stride of 0 for A or B broadcasts that operand over the dimension (NumPy matmul
// broadcasting). Distinct C elements must not alias one another (c_row_stride >= n when
// m > 1, and distinct batch indices must address distinct C matrices).
struct MatmulParams {
  int64_t m = 0;  // rows of A and C
  int64_t n = 0;  // columns of B and C
  int64_t k = 0;  // columns of A, rows of B (the contracted extent)
  int64_t a_row_stride = 0;
  int64_t a_col_stride = 1;
  int64_t b_row_stride = 0;
  int64_t b_col_stride = 1;
  int64_t c_row_stride = 0;
  // Batch dimensions, outermost first; batch_rank == 0 means a single matrix product.
  int batch_rank = 0;
  int64_t batch_dims[kMaxMatmulBatchRank] = {};
  int64_t a_batch_strides[kMaxMatmulBatchRank] = {};
  int64_t b_batch_strides[kMaxMatmulBatchRank] = {};
  int64_t c_batch_strides[kMaxMatmulBatchRank] = {};
  // false: C = A·B (C's previous contents are ignored and may be uninitialized memory).
  // true:  C += A·B.
  bool accumulate = false;
};

// Parameters for contiguous row-major C[m, n] = A[m, k] · B[k, n]. With transpose_b, B is
// stored as a contiguous row-major [n, k] matrix and C = A · Bᵀ (a common dot_general and
// attention layout). No batch dimensions.
MatmulParams RowMajorMatmul(int64_t m, int64_t n, int64_t k, bool transpose_b = false);

// Appends a batch dimension of extent `dim` (inner to those already added) with the given
// element strides (0 for a = broadcast A, 0 for b = broadcast B). Returns false, leaving
// `params` unchanged, if batch_rank is already kMaxMatmulBatchRank or dim < 0.
bool AddMatmulBatchDim(MatmulParams* params, int64_t dim, int64_t a_stride, int64_t b_stride,
                       int64_t c_stride);

// Parameters for `batch` contiguous row-major products C[t] = A[t] · B[t] (t < batch), where
// A[t] starts at a + t * a_batch_stride, B[t] at b + t * b_batch_stride (either stride may be 0
// to broadcast), and C[t] at c + t * m * n. With transpose_b, each B[t] is stored [n, k].
MatmulParams BatchedRowMajorMatmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                                   int64_t a_batch_stride, int64_t b_batch_stride,
                                   bool transpose_b = false);

// True if every extent is >= 0, batch_rank is in [0, kMaxMatmulBatchRank] and every batch
// dim is >= 0. (Aliasing and addressability of the strides are the caller's responsibility.)
bool ValidMatmulParams(const MatmulParams& params);

// Computes the product described by `params` (see MatmulParams).
//   - Returns false and writes nothing if !ValidMatmulParams(params); true otherwise (the error
//     convention of dtype.h).
//   - a / b may be null only if nothing is read from them (m, n, k or a batch dim is 0, or
//     k == 0); c may be null only if m, n or a batch dim is 0. With k == 0, C is set to 0
//     (or left unchanged when accumulating).
//   - C must not overlap A or B. Any alignment of a, b, c.
//   - pool: splits large products over its threads (over batch, rows and columns of C); the
//     result is bitwise identical for any thread count. nullptr runs on the caller's thread.
//     Must not be called from inside a ParallelFor task of the same pool.
//   - Thread-safe: concurrent calls on disjoint outputs are fine.
//   - Memory: f32/f64, and i32 on operands that fit int16, keep per-thread packing buffers (up
//     to ~4 MiB per thread that ran a large product) for the thread's lifetime; f32/f64 throw
//     std::bad_alloc if they cannot be allocated (nothing else throws: i32 then computes with
//     its plain loop).
//
// MatmulF32 / MatmulF64: packed, register-blocked SIMD (FMA where the target has it);
// accumulation is in the element type, in increasing p order within cache blocks of k.
bool MatmulF32(const MatmulParams& params, const float* a, const float* b, float* c,
               ThreadPool* pool);

// What a dense layer does after its product, fused into the f32 GEMM: each C element, when its
// final value leaves the registers (the tile's last k block), becomes
//   c[b..., i, j] = c + bias[j]        (if bias != nullptr; one f32 rounding, c first)
//   c = relu(c) = max(c, 0)            (if relu; NaN stays NaN, as BinaryOp::kMax(c, 0))
// The results are bitwise identical to the product followed by a separate f32 add of the bias
// row (broadcast over rows and batch) and then max(., 0), the same vector operations in the
// same order, for every thread count and SIMD target. bias has n elements (one per column of
// C; the same row for every batch index) and must not overlap C. The default does nothing.
struct MatmulEpilogue {
  const float* bias = nullptr;  // [n], or nullptr for no bias
  bool relu = false;
};

// MatmulF32 with an epilogue (MatmulEpilogue). Returns false, writing nothing, if
// params.accumulate is set and the epilogue does something (C += A·B then a bias is not a
// dense layer: do the product and the add separately); otherwise as MatmulF32.
bool MatmulF32(const MatmulParams& params, const float* a, const float* b, float* c,
               const MatmulEpilogue& epilogue, ThreadPool* pool);
bool MatmulF64(const MatmulParams& params, const double* a, const double* b, double* c,
               ThreadPool* pool);
// MatmulI32 / MatmulI64: exact results modulo 2^32 / 2^64 (products and sums wrap around as
// unsigned arithmetic, no undefined behaviour on overflow).
bool MatmulI32(const MatmulParams& params, const int32_t* a, const int32_t* b, int32_t* c,
               ThreadPool* pool);
bool MatmulI64(const MatmulParams& params, const int64_t* a, const int64_t* b, int64_t* c,
               ThreadPool* pool);

// The widest register-block shape (rows x columns of C per micro-kernel call) MatmulF32 uses on
// this CPU's dispatched target, e.g. 8 x 48 on AVX3 (products use 1- or 2-vector-wide tiles
// instead when those pad n no more, e.g. 8 x 32 for n = 256). For benchmarks and diagnostics.
// Thread-safe.
void MatmulF32TileShape(int* mr, int* nr);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_MATMUL_H_
