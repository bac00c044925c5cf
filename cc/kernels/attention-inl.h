// Per-target implementation of the fused attention (see attention.h). A Highway "-inl.h"
// header: foreach_target.h re-includes it once per target (from attention.cc).
#if defined(SHAPEPOLY_CC_KERNELS_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_ATTENTION_INL_H_
#undef SHAPEPOLY_CC_KERNELS_ATTENTION_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_ATTENTION_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cc/kernels/attention.h"
#include "cc/kernels/matmul.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/softmax-inl.h"  // SoftmaxRow: the softmax op's row, bit for bit
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace attention_impl {

inline bool Gemm(const MatmulParams& m, const float* a, const float* b, float* c) {
  return MatmulF32(m, a, b, c, nullptr);
}
inline bool Gemm(const MatmulParams& m, const double* a, const double* b, double* c) {
  return MatmulF64(m, a, b, c, nullptr);
}

// z[j] = x[j] * scale + bias[j] over [j0, j1) (bias == nullptr: + add, a constant 0 or -inf);
// returns whether some z is not -inf (a NaN counts, as in numpy's max).
template <class T>
HWY_INLINE bool ScaleAdd(T* x, int64_t j0, int64_t j1, T scale, const T* bias, T add) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const T kNegInf = -std::numeric_limits<T>::infinity();
  const auto vs = hn::Set(d, scale), va = hn::Set(d, add), vninf = hn::Set(d, kNegInf);
  auto live = hn::Zero(d);
  int64_t j = j0;
  for (; j + N <= j1; j += N) {
    auto z = hn::Mul(hn::LoadU(d, x + j), vs);
    z = bias != nullptr ? hn::Add(z, hn::Add(va, hn::LoadU(d, bias + j))) : hn::Add(z, va);
    hn::StoreU(z, d, x + j);
    live = hn::Or(live, hn::VecFromMask(d, hn::Not(hn::Eq(z, vninf))));
  }
  bool any = !hn::AllFalse(d, hn::MaskFromVec(live));
  for (; j < j1; ++j) {
    const T z = x[j] * scale + (bias != nullptr ? add + bias[j] : add);
    x[j] = z;
    any = any || !(z == kNegInf);
  }
  return any;
}

// One block of `rows` query rows from row i0 of head h of batch b.
template <class T>
void Block(const AttentionParams& p, const T* q, const T* k, const T* v, T* out, int64_t b,
           int64_t h, int64_t i0, int64_t rows, T* scores, T* bias) {
  const int64_t g = p.hq / p.hkv, kvh = b * p.hkv + h / g, qh = b * p.hq + h;
  const T* qb = q + (qh * p.s + i0) * p.d;
  const T* kb = k + kvh * p.l * p.d;
  const T* vb = v + kvh * p.l * p.dv;
  T* ob = out + (qh * p.s + i0) * p.dv;
  const int64_t l = p.l;
  if (l > 0) Gemm(RowMajorMatmul(rows, l, p.d, /*transpose_b=*/true), qb, kb, scores);
  const T scale = static_cast<T>(p.scale);
  const T kNegInf = -std::numeric_limits<T>::infinity();
  const int64_t off = p.causal == AttentionCausal::kLowerRight ? p.l - p.s : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    T* z = scores + r * l;
    // Keys [0, lim) are before the causal frontier (bias 0), [lim, l) after it (bias -inf).
    const int64_t lim =
        p.causal == AttentionCausal::kNone ? l : std::clamp<int64_t>(i + off + 1, 0, l);
    const T* mb = nullptr;
    bool bias_live = lim > 0;
    if (p.mask_kind != AttentionMask::kNone) {
      const int64_t at = p.mask_batch_offsets[b] + h * p.mask_strides[0] + i * p.mask_strides[1];
      const int64_t sj = p.mask_strides[2];
      bias_live = false;
      if (p.mask_kind == AttentionMask::kBool) {
        const uint8_t* m = static_cast<const uint8_t*>(p.mask) + at;
        for (int64_t j = 0; j < l; ++j) bias[j] = m[j * sj] != 0 ? T(0) : kNegInf;
        for (int64_t j = 0; j < lim; ++j) bias_live = bias_live || m[j * sj] != 0;
      } else {
        const T* m = static_cast<const T*>(p.mask) + at;
        if (sj == 1) {
          std::copy(m, m + l, bias);
        } else {
          for (int64_t j = 0; j < l; ++j) bias[j] = m[j * sj];
        }
        // The causal bias + the mask is -inf after the frontier unless the mask is +inf (NaN).
        for (int64_t j = 0; j < lim; ++j) bias_live = bias_live || !(bias[j] == kNegInf);
        for (int64_t j = lim; j < l; ++j) bias_live = bias_live || bias[j] == -kNegInf;
      }
      mb = bias;
    }
    bool z_live = ScaleAdd(z, 0, lim, scale, mb, T(0));
    z_live = ScaleAdd(z, lim, l, scale, mb, kNegInf) || z_live;
    if (!bias_live || !z_live) {
      std::fill(z, z + l, T(0));  // a fully masked query: a zero row of P, so of out
    } else {
      SoftmaxRow<T, T>(z, static_cast<size_t>(l), z, z);
    }
  }
  // out rows = P . v (l == 0: zeros).
  Gemm(RowMajorMatmul(rows, p.dv, l), scores, vb, ob);
}

template <class T>
void AttentionT(const AttentionParams& p, const T* q, const T* k, const T* v, T* out,
                ThreadPool* pool) {
  const int64_t rb = AttentionRowBlock(p.l, p.s, sizeof(T));
  const int64_t blocks = (p.s + rb - 1) / rb;
  const int64_t items = p.batch * p.hq * blocks;
  // About 64k multiply-adds per chunk at least.
  const int64_t per_item = std::max<int64_t>(1, rb * std::max<int64_t>(1, p.l) * (p.d + p.dv + 4));
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / per_item);
  ParallelFor(pool, items, grain, [&](int64_t begin, int64_t end) {
    thread_local std::vector<T> scratch;
    const size_t need = static_cast<size_t>((rb + 1) * p.l);
    if (scratch.size() < need) scratch.resize(need);
    T* scores = scratch.data();
    T* bias = scores + rb * p.l;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t bh = item / blocks, blk = item % blocks;
      const int64_t i0 = blk * rb;
      Block<T>(p, q, k, v, out, bh / p.hq, bh % p.hq, i0, std::min(rb, p.s - i0), scores, bias);
    }
  });
}

}  // namespace attention_impl

HWY_INLINE bool AttentionImpl(DType dtype, const AttentionParams& p, const void* q, const void* k,
                              const void* v, void* out, ThreadPool* pool) {
  if (dtype != DType::kF32 && dtype != DType::kF64) return false;
  if (p.batch < 0 || p.hq < 0 || p.hkv < 0 || p.s < 0 || p.l < 0 || p.d < 0 || p.dv < 0) {
    return false;
  }
  if (p.hq > 0 && (p.hkv <= 0 || p.hq % p.hkv != 0)) return false;
  if (!std::isfinite(p.scale)) return false;
  if (p.batch == 0 || p.hq == 0 || p.s == 0 || p.dv == 0) return true;
  if (out == nullptr || (p.l > 0 && v == nullptr) ||
      (p.l > 0 && p.d > 0 && (q == nullptr || k == nullptr))) {
    return false;
  }
  if (p.mask_kind != AttentionMask::kNone && p.l > 0 &&
      (p.mask == nullptr || p.mask_batch_offsets == nullptr)) {
    return false;
  }
  if (dtype == DType::kF32) {
    attention_impl::AttentionT(p, static_cast<const float*>(q), static_cast<const float*>(k),
                               static_cast<const float*>(v), static_cast<float*>(out), pool);
  } else {
    attention_impl::AttentionT(p, static_cast<const double*>(q), static_cast<const double*>(k),
                               static_cast<const double*>(v), static_cast<double*>(out), pool);
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
