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
#include <vector>

#include "cc/kernels/elementwise_ops-inl.h"  // MaxLanesOf
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

// Scalar reference for a (possibly strided) slice with non-finite values: numpy semantics.
template <class T>
void ScalarSlice(const T* x, int64_t n, int64_t stride, T* out) {
  T mx = -std::numeric_limits<T>::infinity();
  bool nan = false;
  for (int64_t k = 0; k < n; ++k) {
    const T v = x[k * stride];
    if (v != v) nan = true;
    mx = v > mx ? v : mx;
  }
  if (nan || mx == std::numeric_limits<T>::infinity() ||
      mx == -std::numeric_limits<T>::infinity()) {
    // NaN anywhere, +inf present (inf - inf) or every entry -inf (-inf - -inf): the numpy
    // formula exp(x - max) / sum gives NaN for every entry of the slice.
    for (int64_t k = 0; k < n; ++k) out[k * stride] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const T e = std::exp(x[k * stride] - mx);
    out[k * stride] = e;
    sum += static_cast<double>(e);
  }
  const T inv = static_cast<T>(1.0 / sum);
  for (int64_t k = 0; k < n; ++k) out[k * stride] *= inv;
}

}  // namespace softmax_impl

// Softmax of one contiguous row of n >= 1 elements.
template <class T>
HWY_INLINE void SoftmaxRow(const T* HWY_RESTRICT x, size_t n, T* out) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T kNegInf = -std::numeric_limits<T>::infinity();
  // Pass 1: max, and a NaN check. -inf entries (masked positions, e.g. causal attention) stay
  // on this path: exp(-inf - max) is 0 here as in the padded tail below. The scalar reference
  // takes the rows that give NaN: a NaN, +inf, or every entry -inf.
  auto mx0 = hn::Set(d, kNegInf), mx1 = mx0;
  auto nan = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto v0 = hn::LoadU(d, x + i), v1 = hn::LoadU(d, x + i + N);
    mx0 = hn::Max(mx0, v0);
    mx1 = hn::Max(mx1, v1);
    nan = hn::Or(nan, hn::Or(hn::VecFromMask(d, hn::IsNaN(v0)), hn::VecFromMask(d, hn::IsNaN(v1))));
  }
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, x + i);
    mx0 = hn::Max(mx0, v);
    nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
  }
  T mx = hn::GetLane(hn::MaxOfLanes(d, hn::Max(mx0, mx1)));
  bool finite = hn::AllFalse(d, hn::MaskFromVec(nan));
  for (; i < n; ++i) {
    if (x[i] != x[i]) finite = false;
    mx = x[i] > mx ? x[i] : mx;
  }
  if (!finite || mx == -kNegInf || mx == kNegInf) {
    softmax_impl::ScalarSlice(x, static_cast<int64_t>(n), 1, out);
    return;
  }
  // Pass 2: e = exp(x - max) -> out, sum in float lanes flushed to double.
  const auto vmx = hn::Set(d, mx);
  double total = 0;
  i = 0;
  while (i + N <= n) {
    const size_t end = std::min(n, i + softmax_impl::kFlush);
    auto s0 = hn::Zero(d), s1 = hn::Zero(d);
    for (; i + 2 * N <= end; i += 2 * N) {
      const auto e0 = hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vmx));
      const auto e1 = hn::Exp(d, hn::Sub(hn::LoadU(d, x + i + N), vmx));
      hn::StoreU(e0, d, out + i);
      hn::StoreU(e1, d, out + i + N);
      s0 = hn::Add(s0, e0);
      s1 = hn::Add(s1, e1);
    }
    for (; i + N <= end; i += N) {
      const auto e0 = hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vmx));
      hn::StoreU(e0, d, out + i);
      s0 = hn::Add(s0, e0);
    }
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1))));
  }
  if (i < n) {  // tail through a padded buffer: same SIMD Exp as the body
    HWY_ALIGN T buf[MaxLanesOf<T>()];
    for (size_t j = 0; j < N; ++j) buf[j] = i + j < n ? x[i + j] : kNegInf;
    const auto e = hn::Exp(d, hn::Sub(hn::Load(d, buf), vmx));
    hn::Store(e, d, buf);
    for (size_t j = 0; i + j < n; ++j) {
      out[i + j] = buf[j];
      total += static_cast<double>(buf[j]);
    }
  }
  // Pass 3: scale.
  const auto inv = hn::Set(d, static_cast<T>(1.0 / total));
  i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, out + i), inv), d, out + i);
  const T inv_s = static_cast<T>(1.0 / total);
  for (; i < n; ++i) out[i] *= inv_s;
}

// Softmax along the middle axis of in[axis][inner] for one outer index, vectorized across
// inner (columns). acc is scratch of `inner` doubles and `inner` Ts.
template <class T>
HWY_INLINE void SoftmaxColumns(const T* x, int64_t axis, int64_t inner, T* out,
                               std::vector<double>& sum, std::vector<T>& mx) {
  const size_t m = static_cast<size_t>(inner);
  mx.assign(m, -std::numeric_limits<T>::infinity());
  sum.assign(m, 0.0);
  bool finite = true;
  for (int64_t k = 0; k < axis; ++k) {
    const T* row = x + k * inner;
    for (size_t j = 0; j < m; ++j) {
      if (!(row[j] * T(0) == T(0))) finite = false;
      mx[j] = row[j] > mx[j] ? row[j] : mx[j];
    }
  }
  if (!finite) {
    for (int64_t j = 0; j < inner; ++j) softmax_impl::ScalarSlice(x + j, axis, inner, out + j);
    return;
  }
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  for (int64_t k = 0; k < axis; ++k) {
    const T* row = x + k * inner;
    T* orow = out + k * inner;
    size_t j = 0;
    for (; j + N <= m; j += N) {
      const auto e = hn::Exp(d, hn::Sub(hn::LoadU(d, row + j), hn::LoadU(d, mx.data() + j)));
      hn::StoreU(e, d, orow + j);
    }
    if (j < m) {
      HWY_ALIGN T a[MaxLanesOf<T>()];
      HWY_ALIGN T b[MaxLanesOf<T>()];
      for (size_t l = 0; l < N; ++l) {
        a[l] = j + l < m ? row[j + l] : T(0);
        b[l] = j + l < m ? mx[j + l] : T(0);
      }
      hn::Store(hn::Exp(d, hn::Sub(hn::Load(d, a), hn::Load(d, b))), d, a);
      for (size_t l = 0; j + l < m; ++l) orow[j + l] = a[l];
    }
    for (size_t c = 0; c < m; ++c) sum[c] += static_cast<double>(orow[c]);
  }
  for (size_t c = 0; c < m; ++c) mx[c] = static_cast<T>(1.0 / sum[c]);  // reuse as 1/sum
  for (int64_t k = 0; k < axis; ++k) {
    T* orow = out + k * inner;
    for (size_t c = 0; c < m; ++c) orow[c] *= mx[c];
  }
}

template <class T>
void SoftmaxT(const T* in, int64_t outer, int64_t axis, int64_t inner, T* out, ThreadPool* pool) {
  const int64_t slice = axis * inner;
  const int64_t grain =
      std::max<int64_t>(1, softmax_impl::kGrainElems / std::max<int64_t>(1, slice));
  ParallelFor(pool, outer, grain, [&](int64_t b, int64_t e) {
    if (inner == 1) {
      for (int64_t o = b; o < e; ++o) {
        SoftmaxRow(in + o * axis, static_cast<size_t>(axis), out + o * axis);
      }
      return;
    }
    std::vector<double> sum;
    std::vector<T> mx;
    for (int64_t o = b; o < e; ++o) {
      SoftmaxColumns(in + o * slice, axis, inner, out + o * slice, sum, mx);
    }
  });
}

// Softmax on this target (see softmax.h): validates, then runs the typed loop.
HWY_INLINE bool SoftmaxImpl(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner,
                            void* out, ThreadPool* pool) {
  if (!IsFloat(dtype)) return false;
  if (outer < 0 || axis < 0 || inner < 0) return false;
  if (outer == 0 || axis == 0 || inner == 0) return true;
  if (in == nullptr || out == nullptr) return false;
  if (dtype == DType::kF32) {
    SoftmaxT(static_cast<const float*>(in), outer, axis, inner, static_cast<float*>(out), pool);
  } else {
    SoftmaxT(static_cast<const double*>(in), outer, axis, inner, static_cast<double*>(out), pool);
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
