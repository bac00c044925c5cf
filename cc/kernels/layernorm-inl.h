// Per-target implementation of the layer normalization (see layernorm.h). A Highway "-inl.h"
// header: foreach_target.h re-includes it once per target (from layernorm.cc), so it has a
// per-target include guard and is a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_LAYERNORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_LAYERNORM_INL_H_
#undef SHAPEPOLY_CC_KERNELS_LAYERNORM_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_LAYERNORM_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cc/kernels/layernorm.h"
#include "cc/kernels/narrow-inl.h"
#include "cc/kernels/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace layernorm_impl {
constexpr int64_t kGrainElems = 16384;  // minimum elements per thread chunk
constexpr size_t kFlush = 256;          // element-type partial sums are flushed this often
}  // namespace layernorm_impl

// Sum of x[0..n) in double (S: T, or f16/bf16 widened to T = float in registers).
template <class T, class S>
HWY_INLINE double SumDouble(const S* HWY_RESTRICT x, size_t n) {
  size_t i = 0;
  double tail = 0;
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> dd;
  const size_t N = hn::Lanes(dd);
  auto a0 = hn::Zero(dd), a1 = hn::Zero(dd);
  for (; i + 2 * N <= n; i += 2 * N) {
    if constexpr (std::is_same<T, double>::value) {
      a0 = hn::Add(a0, hn::LoadU(dd, x + i));
      a1 = hn::Add(a1, hn::LoadU(dd, x + i + N));
    } else {
      hn::Vec<decltype(dd)> v0, v1;
      LoadTwoAsF64(dd, x + i, &v0, &v1);
      a0 = hn::Add(a0, v0);
      a1 = hn::Add(a1, v1);
    }
  }
  for (; i < n; ++i) tail += static_cast<double>(ToCompute(x[i]));
  return hn::GetLane(hn::SumOfLanes(dd, hn::Add(a0, a1))) + tail;
#else
  for (; i < n; ++i) tail += static_cast<double>(ToCompute(x[i]));
  return tail;
#endif
}

// One row of storage type S computed in T (out may equal x: no restrict).
template <class T, class S>
HWY_INLINE void LayerNormRow(const S* x, size_t n, const T* scale, const T* bias, double epsilon,
                             S* out) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const double mean_d = SumDouble<T>(x, n) / static_cast<double>(n);
  const T mean = static_cast<T>(mean_d);
  const auto vmean = hn::Set(d, mean);
  // Pass 2: sum of squared deviations (and of deviations, for the correction).
  double ss = 0, s1 = 0;
  size_t i = 0;
  while (i + N <= n) {
    const size_t end = std::min(n, i + layernorm_impl::kFlush);
    auto q0 = hn::Zero(d), q1 = hn::Zero(d), l0 = hn::Zero(d);
    for (; i + 2 * N <= end; i += 2 * N) {
      const auto d0 = hn::Sub(LoadAs(d, x + i), vmean);
      const auto d1 = hn::Sub(LoadAs(d, x + i + N), vmean);
      q0 = hn::MulAdd(d0, d0, q0);
      q1 = hn::MulAdd(d1, d1, q1);
      l0 = hn::Add(l0, hn::Add(d0, d1));
    }
    for (; i + N <= end; i += N) {
      const auto d0 = hn::Sub(LoadAs(d, x + i), vmean);
      q0 = hn::MulAdd(d0, d0, q0);
      l0 = hn::Add(l0, d0);
    }
    ss += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, hn::Add(q0, q1))));
    s1 += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, l0)));
  }
  for (; i < n; ++i) {
    const double dv = static_cast<double>(ToCompute(x[i]) - mean);
    ss += dv * dv;
    s1 += dv;
  }
  const double nd = static_cast<double>(n);
  // max(v, 0) keeps a NaN v (an inf or NaN in the row), which max(0, v) would turn into 0.
  const double var = std::max((ss - s1 * s1 / nd) / nd, 0.0);
  const T rstd = static_cast<T>(1.0 / std::sqrt(var + epsilon));
  const auto vr = hn::Set(d, rstd);
  // Pass 3: normalize, scale, shift.
  i = 0;
  if (scale != nullptr && bias != nullptr) {
    for (; i + N <= n; i += N) {
      const auto y = hn::Mul(hn::Sub(LoadAs(d, x + i), vmean), vr);
      StoreAs(hn::MulAdd(y, hn::LoadU(d, scale + i), hn::LoadU(d, bias + i)), d, out + i);
    }
  } else if (scale != nullptr) {
    for (; i + N <= n; i += N) {
      const auto y = hn::Mul(hn::Sub(LoadAs(d, x + i), vmean), vr);
      StoreAs(hn::Mul(y, hn::LoadU(d, scale + i)), d, out + i);
    }
  } else if (bias != nullptr) {
    for (; i + N <= n; i += N) {
      const auto y = hn::Mul(hn::Sub(LoadAs(d, x + i), vmean), vr);
      StoreAs(hn::Add(y, hn::LoadU(d, bias + i)), d, out + i);
    }
  } else {
    for (; i + N <= n; i += N) {
      StoreAs(hn::Mul(hn::Sub(LoadAs(d, x + i), vmean), vr), d, out + i);
    }
  }
  for (; i < n; ++i) {
    T y = (ToCompute(x[i]) - mean) * rstd;
    if (scale != nullptr)
      y = bias != nullptr ? y * scale[i] + bias[i] : y * scale[i];
    else if (bias != nullptr)
      y = y + bias[i];
    FromCompute(y, out + i);
  }
}

template <class T>
void LayerNormT(const T* in, int64_t rows, int64_t cols, const T* scale, const T* bias,
                double epsilon, T* out, ThreadPool* pool) {
  const int64_t grain = std::max<int64_t>(1, layernorm_impl::kGrainElems / cols);
  ParallelFor(pool, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      LayerNormRow<T>(in + r * cols, static_cast<size_t>(cols), scale, bias, epsilon,
                      out + r * cols);
    }
  });
}

// f16 / bf16 (t): each row loaded into f32 registers, the f32 row code above, one rounding on
// store: the bits of convert -> f32 layer_norm -> convert (scale and bias widened once per chunk).
HWY_INLINE void LayerNormNarrow(DType t, const uint16_t* in, int64_t rows, int64_t cols,
                                const uint16_t* scale, const uint16_t* bias, double epsilon,
                                uint16_t* out, ThreadPool* pool) {
  const int64_t grain = std::max<int64_t>(1, layernorm_impl::kGrainElems / cols);
  ParallelFor(pool, rows, grain, [&](int64_t b, int64_t e) {
    const size_t c = static_cast<size_t>(cols);
    const size_t params = (scale != nullptr ? c : 0) + (bias != nullptr ? c : 0);
    float* s32 = nullptr;
    float* b32 = nullptr;
    if (params > 0) {
      float* p = static_cast<float*>(ThreadScratch(kScratchRows, params * sizeof(float)));
      if (scale != nullptr) {
        s32 = p;
        NarrowToF32(t, scale, s32, c);
        p += c;
      }
      if (bias != nullptr) {
        b32 = p;
        NarrowToF32(t, bias, b32, c);
      }
    }
    for (int64_t r = b; r < e; ++r) {
      if (t == DType::kF16) {
        LayerNormRow<float>(reinterpret_cast<const F16Bits*>(in) + r * cols, c, s32, b32, epsilon,
                            reinterpret_cast<F16Bits*>(out) + r * cols);
      } else {
        LayerNormRow<float>(reinterpret_cast<const BF16Bits*>(in) + r * cols, c, s32, b32, epsilon,
                            reinterpret_cast<BF16Bits*>(out) + r * cols);
      }
    }
  });
}

// LayerNorm on this target (see layernorm.h): validates, then runs the typed loop.
HWY_INLINE bool LayerNormImpl(DType dtype, const void* in, int64_t rows, int64_t cols,
                              const void* scale, const void* bias, double epsilon, void* out,
                              ThreadPool* pool) {
  if (!IsFloat(dtype) && !IsNarrowFloatType(dtype)) return false;
  if (rows < 0 || cols < 0) return false;
  if (rows == 0 || cols == 0) return true;
  if (in == nullptr || out == nullptr) return false;
  if (dtype == DType::kF32) {
    LayerNormT(static_cast<const float*>(in), rows, cols, static_cast<const float*>(scale),
               static_cast<const float*>(bias), epsilon, static_cast<float*>(out), pool);
  } else if (dtype == DType::kF64) {
    LayerNormT(static_cast<const double*>(in), rows, cols, static_cast<const double*>(scale),
               static_cast<const double*>(bias), epsilon, static_cast<double*>(out), pool);
  } else {
    LayerNormNarrow(dtype, static_cast<const uint16_t*>(in), rows, cols,
                    static_cast<const uint16_t*>(scale), static_cast<const uint16_t*>(bias),
                    epsilon, static_cast<uint16_t*>(out), pool);
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
