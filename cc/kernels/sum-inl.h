// Per-target implementation of the float sum. A Highway "-inl.h" header: foreach_target.h
// re-includes it once per target (from sum.cc and sum_test.cc), so it has a per-target
// include guard and is a textual header in Bazel, never compiled on its own.
#if defined(SHAPEPOLY_CC_KERNELS_SUM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_SUM_INL_H_
#undef SHAPEPOLY_CC_KERNELS_SUM_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_SUM_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Sum of data[0..n).
//
// Accuracy: every float is widened to double (PromoteTo) and accumulated in four independent
// double vector accumulators (which also hides the add latency); the total is rounded to
// float once. A float has 24 significand bits and a double 53, so the double accumulation
// error stays far below one float ulp of the result unless n is astronomically large or
// the input cancels massively, e.g. {1e8, 1, -1e8} gives exactly 1 (a plain float loop gives
// 0). This is simpler than Kahan compensation in float and, unlike Kahan, lets infinities
// and NaNs propagate exactly as in IEEE arithmetic. The summation order depends on the
// target's vector width, so results may differ between targets in the last double bits.
//
// Remainder: the last (n mod lanes) elements are added by a scalar loop, so callers need no
// padding and nothing past data[n-1] is ever read.
HWY_INLINE float SumF32Impl(const float* HWY_RESTRICT data, size_t n) {
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;  // as many floats as dd has doubles
  const size_t N = hn::Lanes(dd);
  auto acc0 = hn::Zero(dd);
  auto acc1 = hn::Zero(dd);
  auto acc2 = hn::Zero(dd);
  auto acc3 = hn::Zero(dd);
  size_t i = 0;
  if (n >= 4 * N) {
    for (; i <= n - 4 * N; i += 4 * N) {
      acc0 = hn::Add(acc0, hn::PromoteTo(dd, hn::LoadU(df, data + i)));
      acc1 = hn::Add(acc1, hn::PromoteTo(dd, hn::LoadU(df, data + i + N)));
      acc2 = hn::Add(acc2, hn::PromoteTo(dd, hn::LoadU(df, data + i + 2 * N)));
      acc3 = hn::Add(acc3, hn::PromoteTo(dd, hn::LoadU(df, data + i + 3 * N)));
    }
  }
  for (; i + N <= n; i += N) {
    acc0 = hn::Add(acc0, hn::PromoteTo(dd, hn::LoadU(df, data + i)));
  }
  double tail = 0.0;
  for (; i < n; ++i) tail += static_cast<double>(data[i]);
  const auto acc = hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3));
  return static_cast<float>(hn::GetLane(hn::SumOfLanes(dd, acc)) + tail);
#else   // no double lanes on this target: scalar double accumulation, same accuracy
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(data[i]);
  return static_cast<float>(sum);
#endif  // HWY_HAVE_FLOAT64
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
