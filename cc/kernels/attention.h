// Fused scaled dot-product attention (the attention op, cc/ops/attention.cc). Plain C++ (no
// Highway types); per-target code in attention-inl.h.
#ifndef SHAPEPOLY_CC_KERNELS_ATTENTION_H_
#define SHAPEPOLY_CC_KERNELS_ATTENTION_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

// How the causal frontier is aligned (PyTorch's CausalVariant): query i sees key j iff
// j <= i (kUpperLeft) or j <= i + (l - s) (kLowerRight, ONNX's alignment with a past cache of
// l - s keys); other keys get a -inf bias.
enum class AttentionCausal : int { kNone = 0, kUpperLeft = 1, kLowerRight = 2 };

enum class AttentionMask : int {
  kNone = 0,
  kBool = 1,  // bool bytes (0 / 1): true keeps the key (bias 0), false masks it (bias -inf)
  kAdd = 2,   // values of the query's dtype added to the scores
};

// out[b, h, i, :] = sum_j P[b, h, i, j] * v[b, h / g, j, :] with g = hq / hkv and
//   z[j] = (scale * dot(q[b, h, i, :], k[b, h / g, j, :])) + (causal[i, j] + mask[b, h, i, j])
//   P[b, h, i, :] = softmax(z) (the softmax op's row: max subtracted, a NaN or +inf entry makes
//                   the row NaN), except a row whose bias (causal + mask) is -inf at every key,
//                   or whose z is -inf at every key: P's row is 0 and so is out's (ONNX's
//                   Attention, opset 23 errata: a fully masked query gives a zero row).
// Layouts (row-major, contiguous): q [batch, hq, s, d], k [batch, hkv, l, d],
// v [batch, hkv, l, dv], out [batch, hq, s, dv]. The mask element of (b, h, i, j) is at
// mask + mask_batch_offsets[b] + h * mask_strides[0] + i * mask_strides[1] + j * mask_strides[2]
// (strides 0 broadcast; mask_batch_offsets has `batch` entries).
struct AttentionParams {
  int64_t batch = 0, hq = 0, hkv = 0, s = 0, l = 0, d = 0, dv = 0;
  double scale = 1.0;
  AttentionCausal causal = AttentionCausal::kNone;
  AttentionMask mask_kind = AttentionMask::kNone;
  const void* mask = nullptr;
  const int64_t* mask_batch_offsets = nullptr;
  int64_t mask_strides[3] = {0, 0, 0};
};

// The number of query rows one work item handles (a function of l and the element size only,
// so results do not depend on the thread count): its scratch is rows * l elements.
int64_t AttentionRowBlock(int64_t l, int64_t s, size_t elem_bytes);

// Computes the attention above for dtype kF32 or kF64 (q, k, v, out and a kAdd mask of that
// dtype). The scores are the f32/f64 GEMM (MatmulF32/F64) of a block of query rows with k, the
// weights P . v the same GEMM; scratch is one block of rows of scores per thread (never the
// whole [s, l] matrix). Parallel over (batch, head, block of rows) on `pool` (nullptr = the
// calling thread); the result is bitwise the same for every thread count. out must not
// overlap the operands. Returns false, writing nothing, for another dtype, negative extents,
// hq not a positive multiple of hkv (when hq > 0), a non-finite scale, or null data with a
// non-empty result (the error convention of dtype.h). d == 0: the scores are 0 (+ bias).
bool Attention(DType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
               void* out, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_ATTENTION_H_
