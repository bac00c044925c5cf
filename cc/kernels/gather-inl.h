// Per-target part of the gather kernels (see gather.h): TakeAlongAxis's runs of 4-byte elements
// as SIMD gathers. A Highway "-inl.h" header: foreach_target.h re-includes it once per target
// (from gather.cc), so it has a per-target include guard and is a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_GATHER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_GATHER_INL_H_
#undef SHAPEPOLY_CC_KERNELS_GATHER_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_GATHER_INL_H_
#endif

#include <stdint.h>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A run of 4-byte elements: out[m] = src[w_m * stride + m * step] for m in [0, len), where w_m
// is index m wrapped (+ n when negative). Whole vectors only: stops before the first vector
// that holds an invalid index (outside [-n, n)) and before a tail shorter than a vector, and
// returns how many elements it wrote (the caller's scalar loop does the rest, clamping).
// The caller guarantees that every offset (n - 1) * stride + (len - 1) * step fits in int32.
template <typename I>
int64_t Gather4Impl(const int32_t* src, int64_t stride, int64_t step, const I* idx, int32_t* out,
                    int64_t len, int64_t n) {
#if HWY_TARGET == HWY_SCALAR
  (void)src, (void)stride, (void)step, (void)idx, (void)out, (void)len, (void)n;
  return 0;  // one lane: the caller's scalar loop
#else
  const hn::ScalableTag<int32_t> d32;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d32));
  const auto vstride = hn::Set(d32, static_cast<int32_t>(stride));
  const auto vnext = hn::Set(d32, static_cast<int32_t>(lanes * step));
  auto pos = hn::Mul(hn::Iota(d32, 0), hn::Set(d32, static_cast<int32_t>(step)));  // m * step
  int64_t m = 0;
  if constexpr (sizeof(I) == 8) {
    const hn::Repartition<int64_t, decltype(d32)> d64;
    const int64_t half = static_cast<int64_t>(hn::Lanes(d64));
    const auto zero = hn::Zero(d64);
    const auto vn = hn::Set(d64, n);
    for (; m + lanes <= len; m += lanes) {
      auto a = hn::LoadU(d64, reinterpret_cast<const int64_t*>(idx) + m);
      auto b = hn::LoadU(d64, reinterpret_cast<const int64_t*>(idx) + m + half);
      a = hn::Add(a, hn::IfThenElseZero(hn::Lt(a, zero), vn));
      b = hn::Add(b, hn::IfThenElseZero(hn::Lt(b, zero), vn));
      const auto bad = hn::Or(hn::Or(hn::Lt(a, zero), hn::Not(hn::Lt(a, vn))),
                              hn::Or(hn::Lt(b, zero), hn::Not(hn::Lt(b, vn))));
      if (!hn::AllFalse(d64, bad)) break;
      // In [0, n): the low halves are the values (little-endian lanes).
      const auto w = hn::ConcatEven(d32, hn::BitCast(d32, b), hn::BitCast(d32, a));
      hn::StoreU(hn::GatherIndex(d32, src, hn::Add(hn::Mul(w, vstride), pos)), d32, out + m);
      pos = hn::Add(pos, vnext);
    }
  } else {
    const auto zero = hn::Zero(d32);
    const auto vn = hn::Set(d32, static_cast<int32_t>(n));  // n fits: offsets fit in int32
    for (; m + lanes <= len; m += lanes) {
      auto a = hn::LoadU(d32, reinterpret_cast<const int32_t*>(idx) + m);
      a = hn::Add(a, hn::IfThenElseZero(hn::Lt(a, zero), vn));
      if (!hn::AllFalse(d32, hn::Or(hn::Lt(a, zero), hn::Not(hn::Lt(a, vn))))) break;
      hn::StoreU(hn::GatherIndex(d32, src, hn::Add(hn::Mul(a, vstride), pos)), d32, out + m);
      pos = hn::Add(pos, vnext);
    }
  }
  return m;
#endif
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
