// Matmul with a pre-packed right operand: C = A·B where B is a matrix packed ONCE (e.g. the
// constant weight of a dense layer) into the panels the f32 micro-kernel of matmul-inl.h
// reads, so repeated products skip packing B (which dominates small-m products such as an
// MLP at batch 1). Results are bitwise identical to MatmulF32 on the unpacked B by
// construction: both run the same driver loop (matmul-inl.h) with the same tile-width rule, the
// pre-packed one reading these panels where MatmulF32 packs them per block. Plain C++: no
// Highway types here. Part of the matmul family (matmul.cc).
#ifndef SHAPEPOLY_CC_KERNELS_MATMUL_PREPACKED_H_
#define SHAPEPOLY_CC_KERNELS_MATMUL_PREPACKED_H_

#include <cstddef>
#include <cstdint>

#include "cc/kernels/matmul.h"

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

// B[k, n] (f32) packed for the SIMD target that was dispatched when it was packed.
class PackedMatrixF32 {
 public:
  PackedMatrixF32() = default;
  ~PackedMatrixF32();
  PackedMatrixF32(PackedMatrixF32&& o) noexcept;
  PackedMatrixF32& operator=(PackedMatrixF32&& o) noexcept;
  PackedMatrixF32(const PackedMatrixF32&) = delete;
  PackedMatrixF32& operator=(const PackedMatrixF32&) = delete;

  // Packs B[p, j] = b[p * row_stride + j * col_stride] for p < k, j < n (k, n >= 0; b may be
  // null only if k or n is 0). Returns an empty matrix for k < 0 or n < 0. Throws
  // std::bad_alloc.
  static PackedMatrixF32 Pack(const float* b, int64_t k, int64_t n, int64_t row_stride,
                              int64_t col_stride);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  bool empty() const { return data_ == nullptr; }
  size_t bytes() const { return size_ * sizeof(float); }

  // The layout, read by the matmul driver (matmul-inl.h, GemmPackAll): for each k block
  // [pc, pc + kc) of GemmBlocking<float>::kKC rows, ceil(n / nr) panels of kc x nr values at
  // panels()[pc * n_padded() + q * kc * nr], nr = nrv() * lanes() (row p of a panel: nr
  // contiguous values, zero past n).
  const float* panels() const { return data_; }
  int64_t n_padded() const { return n_padded_; }
  int32_t nrv() const { return nrv_; }      // vectors per tile row the panels were packed for
  int32_t lanes() const { return lanes_; }  // f32 lanes of the target that packed them

 private:
  float* data_ = nullptr;  // std::aligned_alloc'd, 64-byte aligned
  size_t size_ = 0;        // floats
  int64_t k_ = 0, n_ = 0, n_padded_ = 0;
  int32_t nrv_ = 0;
  int32_t lanes_ = 0;
};

// C[b..., i, j] (+)= sum_p A[b..., i, p] * B[p, j] with `params` as for MatmulF32 except that
// B comes from `b` (params.k == b.k(), params.n == b.n(); the B strides of params are ignored
// and every b_batch_strides[d] must be 0: B is broadcast over the batch).
// Returns false, writing nothing, if the params are invalid or do not match `b`, or if `b`
// was packed for another SIMD target than the one dispatched now (then call MatmulF32 on the
// unpacked B). Otherwise as MatmulF32 (threads split rows / columns over `pool`; the result is
// bitwise identical for any thread count and to MatmulF32).
bool MatmulF32Prepacked(const MatmulParams& params, const float* a, const PackedMatrixF32& b,
                        float* c, ThreadPool* pool);

// MatmulF32Prepacked followed by the epilogue of a dense layer (MatmulEpilogue, matmul.h),
// fused: relu(A·B + bias) or A·B + bias with one pass over C, bitwise identical to the
// unfused product, f32 add of bias[j] and max(., 0) for any thread count. Returns false,
// writing nothing, in the cases above and when params.accumulate is set with an epilogue that
// does something (accumulate=false only).
bool MatmulF32Prepacked(const MatmulParams& params, const float* a, const PackedMatrixF32& b,
                        float* c, const MatmulEpilogue& epilogue, ThreadPool* pool);

// The panel layout of PackedMatrixF32 for a B of n columns on the target dispatched now: panels
// of nr = nrv * lanes columns, k blocks of kc rows. For callers that write B's panels
// themselves (the convolution's im2col tiles, written straight into panels): for each k block
// [pc, pc + kc'), kc' = min(kc, k - pc), ceil(n / nr) panels of kc' x nr values at
// panels[pc * n_padded + q * kc' * nr], n_padded = ceil(n / nr) * nr; row p of a panel holds
// B[pc + p, q * nr .. q * nr + nr), zero past n.
struct PanelLayoutF32 {
  int32_t nrv = 0;
  int32_t lanes = 0;
  int64_t kc = 0;
  int64_t nr() const { return static_cast<int64_t>(nrv) * lanes; }
  int64_t n_padded(int64_t n) const { return (n + nr() - 1) / nr() * nr(); }
};
PanelLayoutF32 MatmulF32PanelLayout(int64_t n);

// MatmulF32Prepacked on caller-owned panels of B[params.k, params.n] in `layout`
// (MatmulF32PanelLayout(params.n) on the same target), bitwise identical to MatmulF32 on the
// unpacked B. `panels` must be aligned to the vector size (lanes * 4 bytes; 64 bytes always
// suffices). Returns false, writing nothing, if the params are invalid, a B batch stride is
// not 0, `panels` is not so aligned, or `layout` is not the one the dispatched target reads
// for params.n (the target changed in between: pack again).
bool MatmulF32PrepackedPanels(const MatmulParams& params, const float* a, const float* panels,
                              const PanelLayoutF32& layout, float* c, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_MATMUL_PREPACKED_H_
