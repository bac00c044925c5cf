// Per-target implementation of the cumulative sum (see cumsum.h). A Highway "-inl.h" header:
// foreach_target.h re-includes it once per target (from cumsum.cc), so it has a per-target
// include guard and is a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_CUMSUM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_CUMSUM_INL_H_
#undef SHAPEPOLY_CC_KERNELS_CUMSUM_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_CUMSUM_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "cc/kernels/cumsum.h"
#include "cc/kernels/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace cumsum_impl {
constexpr int64_t kGrainElems = 32768;  // minimum elements per thread chunk
constexpr int64_t kColBlock = 1024;     // columns per work item when inner > 1

// Accumulator: double for floats, the unsigned type (wrapping) for ints.
template <class T, bool kFloat = std::is_floating_point<T>::value>
struct AccOf {
  using type = double;
};
template <class T>
struct AccOf<T, false> {
  using type = typename std::make_unsigned<T>::type;
};
template <class T>
using Acc = typename AccOf<T>::type;
}  // namespace cumsum_impl

template <class T>
HWY_INLINE void CumRow(const T* x, int64_t n, T* out) {
  cumsum_impl::Acc<T> acc = 0;
  for (int64_t k = 0; k < n; ++k) {
    acc = static_cast<cumsum_impl::Acc<T>>(acc + static_cast<cumsum_impl::Acc<T>>(x[k]));
    out[k] = static_cast<T>(acc);
  }
}

// Columns [0, m) of one outer slice: acc[j] += x[k][j]; out[k][j] = acc[j].
template <class T>
HWY_INLINE void CumColumns(const T* x, int64_t axis, int64_t inner, size_t m, T* out,
                           std::vector<cumsum_impl::Acc<T>>& acc) {
  acc.assign(m, 0);
  for (int64_t k = 0; k < axis; ++k) {
    const T* row = x + k * inner;
    T* orow = out + k * inner;
    size_t j = 0;
// Not on HWY_SCALAR: its DemoteTo saturates +-inf and overflow to +-FLT_MAX.
#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR
    if constexpr (std::is_same<T, float>::value) {
      const hn::ScalableTag<double> dd;
      const hn::Rebind<float, decltype(dd)> df;
      const size_t N = hn::Lanes(dd);
      for (; j + N <= m; j += N) {
        const auto a =
            hn::Add(hn::LoadU(dd, acc.data() + j), hn::PromoteTo(dd, hn::LoadU(df, row + j)));
        hn::StoreU(a, dd, acc.data() + j);
        hn::StoreU(hn::DemoteTo(df, a), df, orow + j);
      }
    }
#endif
    for (; j < m; ++j) {
      acc[j] = static_cast<cumsum_impl::Acc<T>>(acc[j] + static_cast<cumsum_impl::Acc<T>>(row[j]));
      orow[j] = static_cast<T>(acc[j]);
    }
  }
}

template <class T>
void CumSumT(const T* in, int64_t outer, int64_t axis, int64_t inner, T* out, ThreadPool* pool) {
  using cumsum_impl::kColBlock;
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, cumsum_impl::kGrainElems / axis);
    ParallelFor(pool, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) CumRow(in + o * axis, axis, out + o * axis);
    });
    return;
  }
  const int64_t cblocks = (inner + kColBlock - 1) / kColBlock;
  const int64_t per_item = axis * std::min(inner, kColBlock);
  const int64_t grain =
      std::max<int64_t>(1, cumsum_impl::kGrainElems / std::max<int64_t>(1, per_item));
  ParallelFor(pool, outer * cblocks, grain, [&](int64_t b, int64_t e) {
    std::vector<cumsum_impl::Acc<T>> acc;
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / cblocks, jb = (w % cblocks) * kColBlock;
      const size_t m = static_cast<size_t>(std::min(kColBlock, inner - jb));
      const int64_t base = o * axis * inner + jb;
      CumColumns(in + base, axis, inner, m, out + base, acc);
    }
  });
}

// CumSum on this target (see cumsum.h): validates, then runs the typed loop.
HWY_INLINE bool CumSumImpl(DType dtype, const void* in, int64_t outer, int64_t axis, int64_t inner,
                           void* out, ThreadPool* pool) {
  if (!(dtype == DType::kF32 || dtype == DType::kF64 || IsInt(dtype))) return false;
  if (outer < 0 || axis < 0 || inner < 0) return false;
  if (outer == 0 || axis == 0 || inner == 0) return true;
  if (in == nullptr || out == nullptr) return false;
  switch (dtype) {
    case DType::kF32:
      CumSumT(static_cast<const float*>(in), outer, axis, inner, static_cast<float*>(out), pool);
      break;
    case DType::kF64:
      CumSumT(static_cast<const double*>(in), outer, axis, inner, static_cast<double*>(out), pool);
      break;
    case DType::kI32:
      CumSumT(static_cast<const int32_t*>(in), outer, axis, inner, static_cast<int32_t*>(out),
              pool);
      break;
    case DType::kI64:
      CumSumT(static_cast<const int64_t*>(in), outer, axis, inner, static_cast<int64_t*>(out),
              pool);
      break;
    default:  // bool and the narrow types (computed in their compute type)
      return false;
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
