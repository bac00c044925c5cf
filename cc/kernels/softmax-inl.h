// Per-target implementation of the softmax (see softmax.h). A Highway "-inl.h" header:
// foreach_target.h re-includes it once per target (from softmax.cc), so it has a per-target
// include guard and is a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_SOFTMAX_INL_H_
#undef SHAPEPOLY_CC_KERNELS_SOFTMAX_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_SOFTMAX_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cc/kernels/elementwise_ops-inl.h"  // MaxLanesOf
#include "cc/kernels/narrow-inl.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/softmax.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace softmax_impl {

constexpr int64_t kGrainElems = 16384;  // minimum elements per thread chunk
constexpr size_t kFlush = 256;          // float partial sums are flushed to double this often

}  // namespace softmax_impl

// Softmax of one contiguous row of n >= 1 elements of storage type S (T, or f16/bf16 computed
// in T = float: narrow-inl.h), written to out; e (n Ts) holds the exponentials between passes 2
// and 3: out itself when S is T, else scratch (then the row is rounded once, as it is stored).
// out may equal x (no restrict).
template <class T, class S>
HWY_INLINE void SoftmaxRow(const S* x, size_t n, S* out, T* e) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T kNegInf = -std::numeric_limits<T>::infinity();
  // Pass 1: max, and a NaN check. -inf entries (masked positions, e.g. causal attention) stay
  // on this path: exp(-inf - max) is 0 here as in the padded tail below. The rows that give NaN
  // (a NaN, +inf, or every entry -inf) are filled with NaN.
  auto mx0 = hn::Set(d, kNegInf), mx1 = mx0;
  auto nan = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto v0 = LoadAs(d, x + i), v1 = LoadAs(d, x + i + N);
    mx0 = hn::Max(mx0, v0);
    mx1 = hn::Max(mx1, v1);
    nan = hn::Or(nan, hn::Or(hn::VecFromMask(d, hn::IsNaN(v0)), hn::VecFromMask(d, hn::IsNaN(v1))));
  }
  for (; i + N <= n; i += N) {
    const auto v = LoadAs(d, x + i);
    mx0 = hn::Max(mx0, v);
    nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
  }
  T mx = hn::GetLane(hn::MaxOfLanes(d, hn::Max(mx0, mx1)));
  bool finite = hn::AllFalse(d, hn::MaskFromVec(nan));
  for (; i < n; ++i) {
    const T v = ToCompute(x[i]);
    if (v != v) finite = false;
    mx = v > mx ? v : mx;
  }
  if (!finite || mx == -kNegInf || mx == kNegInf) {
    // NaN anywhere, +inf present (inf - inf) or every entry -inf (-inf - -inf): numpy's formula
    // exp(x - max) / sum gives NaN for every entry of the row.
    for (size_t k = 0; k < n; ++k) FromCompute(std::numeric_limits<T>::quiet_NaN(), out + k);
    return;
  }
  // Pass 2: e = exp(x - max), sum in float lanes flushed to double.
  const auto vmx = hn::Set(d, mx);
  double total = 0;
  i = 0;
  while (i + N <= n) {
    const size_t end = std::min(n, i + softmax_impl::kFlush);
    auto s0 = hn::Zero(d), s1 = hn::Zero(d);
    for (; i + 2 * N <= end; i += 2 * N) {
      const auto e0 = hn::Exp(d, hn::Sub(LoadAs(d, x + i), vmx));
      const auto e1 = hn::Exp(d, hn::Sub(LoadAs(d, x + i + N), vmx));
      hn::StoreU(e0, d, e + i);
      hn::StoreU(e1, d, e + i + N);
      s0 = hn::Add(s0, e0);
      s1 = hn::Add(s1, e1);
    }
    for (; i + N <= end; i += N) {
      const auto e0 = hn::Exp(d, hn::Sub(LoadAs(d, x + i), vmx));
      hn::StoreU(e0, d, e + i);
      s0 = hn::Add(s0, e0);
    }
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1))));
  }
  if (i < n) {  // tail through a padded buffer: same SIMD Exp as the body
    HWY_ALIGN T buf[MaxLanesOf<T>()];
    for (size_t j = 0; j < N; ++j) buf[j] = i + j < n ? ToCompute(x[i + j]) : kNegInf;
    const auto ev = hn::Exp(d, hn::Sub(hn::Load(d, buf), vmx));
    hn::Store(ev, d, buf);
    for (size_t j = 0; i + j < n; ++j) {
      e[i + j] = buf[j];
      total += static_cast<double>(buf[j]);
    }
  }
  // Pass 3: scale (and round to S once).
  const auto inv = hn::Set(d, static_cast<T>(1.0 / total));
  i = 0;
  for (; i + N <= n; i += N) StoreAs(hn::Mul(hn::LoadU(d, e + i), inv), d, out + i);
  const T inv_s = static_cast<T>(1.0 / total);
  for (; i < n; ++i) FromCompute(static_cast<T>(e[i] * inv_s), out + i);
}

// Softmax along the axis of the columns [0, w) of x: `axis` rows whose elements are `stride`
// apart (out: the same layout; may equal x), vectorized across the columns. Each column is one
// softmax, as a row is for SoftmaxRow: a column with a NaN, +inf or only -inf entries is all
// NaN (numpy's formula); the others take the vector path, where -inf entries give exactly 0.
// So a column's bits depend on its own values only, not on the columns computed with it.
// Scratch: sum (w doubles) and mx (w Ts).
template <class T>
HWY_INLINE void SoftmaxColumns(const T* x, int64_t axis, int64_t stride, size_t w, T* out,
                               double* HWY_RESTRICT sum, T* HWY_RESTRICT mx) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T kNaN = std::numeric_limits<T>::quiet_NaN();
  // Pass 1: the max of each column; a NaN entry makes it NaN.
  for (size_t j = 0; j < w; ++j) mx[j] = -std::numeric_limits<T>::infinity();
  for (int64_t k = 0; k < axis; ++k) {
    const T* row = x + k * stride;
    size_t j = 0;
    for (; j + N <= w; j += N) {
      const auto v = hn::LoadU(d, row + j), m = hn::LoadU(d, mx + j);
      const auto r =
          hn::IfThenElse(hn::IsNaN(m), m, hn::IfThenElse(hn::IsNaN(v), v, hn::Max(m, v)));
      hn::StoreU(r, d, mx + j);
    }
    for (; j < w; ++j) {
      const T v = row[j];
      if (mx[j] != mx[j]) continue;
      mx[j] = v != v ? v : (v > mx[j] ? v : mx[j]);
    }
  }
  for (size_t j = 0; j < w; ++j) sum[j] = 0.0;
  // Pass 2: e = exp(x - max) -> out, column sums in double.
  for (int64_t k = 0; k < axis; ++k) {
    const T* row = x + k * stride;
    T* orow = out + k * stride;
    size_t j = 0;
    for (; j + N <= w; j += N) {
      const auto e = hn::Exp(d, hn::Sub(hn::LoadU(d, row + j), hn::LoadU(d, mx + j)));
      hn::StoreU(e, d, orow + j);
    }
    if (j < w) {
      HWY_ALIGN T a[MaxLanesOf<T>()];
      HWY_ALIGN T b[MaxLanesOf<T>()];
      for (size_t l = 0; l < N; ++l) {
        a[l] = j + l < w ? row[j + l] : T(0);
        b[l] = j + l < w ? mx[j + l] : T(0);
      }
      hn::Store(hn::Exp(d, hn::Sub(hn::Load(d, a), hn::Load(d, b))), d, a);
      for (size_t l = 0; j + l < w; ++l) orow[j + l] = a[l];
    }
    for (size_t c = 0; c < w; ++c) sum[c] += static_cast<double>(orow[c]);
  }
  // 1/sum per column (reusing mx); a column whose max is NaN or +-inf is marked by a NaN sum.
  bool any_bad = false;
  for (size_t c = 0; c < w; ++c) {
    if (!(mx[c] - mx[c] == T(0))) {
      sum[c] = static_cast<double>(kNaN);
      any_bad = true;
    }
    mx[c] = static_cast<T>(1.0 / sum[c]);
  }
  // Pass 3: scale.
  for (int64_t k = 0; k < axis; ++k) {
    T* orow = out + k * stride;
    size_t j = 0;
    for (; j + N <= w; j += N) {
      hn::StoreU(hn::Mul(hn::LoadU(d, orow + j), hn::LoadU(d, mx + j)), d, orow + j);
    }
    for (; j < w; ++j) orow[j] *= mx[j];
  }
  if (!any_bad) return;
  for (int64_t k = 0; k < axis; ++k) {
    T* orow = out + k * stride;
    for (size_t c = 0; c < w; ++c) {
      if (sum[c] != sum[c]) orow[c] = kNaN;
    }
  }
}

namespace softmax_impl {

// Columns per block of the strided (inner > 1) path: about kBlockBytes of one block's rows,
// a multiple of 16, at most `inner`.
constexpr int64_t kBlockBytes = 64 * 1024;
inline int64_t ColumnBlock(int64_t axis, int64_t inner, size_t elem_bytes) {
  int64_t w = kBlockBytes / static_cast<int64_t>(elem_bytes) / std::max<int64_t>(1, axis);
  w = std::max<int64_t>(16, w / 16 * 16);
  return std::min(w, inner);
}

}  // namespace softmax_impl

template <class T>
void SoftmaxT(const T* in, int64_t outer, int64_t axis, int64_t inner, T* out, ThreadPool* pool) {
  if (inner == 1) {
    const int64_t grain =
        std::max<int64_t>(1, softmax_impl::kGrainElems / std::max<int64_t>(1, axis));
    ParallelFor(pool, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        SoftmaxRow<T>(in + o * axis, static_cast<size_t>(axis), out + o * axis, out + o * axis);
      }
    });
    return;
  }
  // Blocks of columns: (outer index, column block) items.
  const int64_t w = softmax_impl::ColumnBlock(axis, inner, sizeof(T));
  const int64_t cblocks = (inner + w - 1) / w;
  const int64_t grain =
      std::max<int64_t>(1, softmax_impl::kGrainElems / std::max<int64_t>(1, axis * w));
  ParallelFor(pool, outer * cblocks, grain, [&](int64_t b, int64_t e) {
    uint8_t* scratch = static_cast<uint8_t*>(
        ThreadScratch(kScratchRows, static_cast<size_t>(w) * (sizeof(double) + sizeof(T))));
    double* sum = reinterpret_cast<double*>(scratch);
    T* mx = reinterpret_cast<T*>(scratch + static_cast<size_t>(w) * sizeof(double));
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / cblocks, j0 = (item % cblocks) * w;
      const size_t len = static_cast<size_t>(std::min(w, inner - j0));
      const int64_t at = o * axis * inner + j0;
      SoftmaxColumns(in + at, axis, inner, len, out + at, sum, mx);
    }
  });
}

// f16 / bf16 (t): rows loaded into f32 registers (SoftmaxRow on F16Bits/BF16Bits), blocks of
// columns widened into f32 scratch; the f32 code above and one rounding on store, so the bits are
// those of convert -> f32 softmax -> convert.
HWY_INLINE void SoftmaxNarrow(DType t, const uint16_t* in, int64_t outer, int64_t axis,
                              int64_t inner, uint16_t* out, ThreadPool* pool) {
  if (inner == 1) {  // rows: loaded into f32 registers, the exponentials in an f32 row of scratch
    const int64_t grain =
        std::max<int64_t>(1, softmax_impl::kGrainElems / std::max<int64_t>(1, axis));
    ParallelFor(pool, outer, grain, [&](int64_t b, int64_t e) {
      float* buf = static_cast<float*>(
          ThreadScratch(kScratchRows, static_cast<size_t>(axis) * sizeof(float)));
      const size_t n = static_cast<size_t>(axis);
      for (int64_t o = b; o < e; ++o) {
        if (t == DType::kF16) {
          SoftmaxRow<float>(reinterpret_cast<const F16Bits*>(in) + o * axis, n,
                            reinterpret_cast<F16Bits*>(out) + o * axis, buf);
        } else {
          SoftmaxRow<float>(reinterpret_cast<const BF16Bits*>(in) + o * axis, n,
                            reinterpret_cast<BF16Bits*>(out) + o * axis, buf);
        }
      }
    });
    return;
  }
  const int64_t w = softmax_impl::ColumnBlock(axis, inner, sizeof(float));
  const int64_t cblocks = (inner + w - 1) / w;
  const int64_t grain =
      std::max<int64_t>(1, softmax_impl::kGrainElems / std::max<int64_t>(1, axis * w));
  ParallelFor(pool, outer * cblocks, grain, [&](int64_t b, int64_t e) {
    const size_t cols = static_cast<size_t>(w), block = static_cast<size_t>(axis) * cols;
    uint8_t* scratch = static_cast<uint8_t*>(ThreadScratch(
        kScratchRows, cols * (sizeof(double) + sizeof(float)) + block * sizeof(float)));
    double* sum = reinterpret_cast<double*>(scratch);
    float* mx = reinterpret_cast<float*>(scratch + cols * sizeof(double));
    float* buf = mx + cols;
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / cblocks, j0 = (item % cblocks) * w;
      const size_t len = static_cast<size_t>(std::min(w, inner - j0));
      const int64_t at = o * axis * inner + j0;
      for (int64_t k = 0; k < axis; ++k) NarrowToF32(t, in + at + k * inner, buf + k * len, len);
      SoftmaxColumns(buf, axis, static_cast<int64_t>(len), len, buf, sum, mx);
      for (int64_t k = 0; k < axis; ++k) F32ToNarrow(t, buf + k * len, out + at + k * inner, len);
    }
  });
}

// Softmax on this target (see softmax.h): validates, then runs the typed loop.
HWY_INLINE bool SoftmaxImpl(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner,
                            void* out, ThreadPool* pool) {
  if (!IsFloat(dtype) && !IsNarrowFloatType(dtype)) return false;
  if (outer < 0 || axis < 0 || inner < 0) return false;
  if (outer == 0 || axis == 0 || inner == 0) return true;
  if (in == nullptr || out == nullptr) return false;
  if (dtype == DType::kF32) {
    SoftmaxT(static_cast<const float*>(in), outer, axis, inner, static_cast<float*>(out), pool);
  } else if (dtype == DType::kF64) {
    SoftmaxT(static_cast<const double*>(in), outer, axis, inner, static_cast<double*>(out), pool);
  } else {
    SoftmaxNarrow(dtype, static_cast<const uint16_t*>(in), outer, axis, inner,
                  static_cast<uint16_t*>(out), pool);
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
