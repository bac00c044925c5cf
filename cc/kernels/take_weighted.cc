// Dynamic dispatch for take_weighted (see take_weighted.h). foreach_target.h re-includes this
// file once per Highway target; the HWY_ONCE pass checks the arguments, prepares the index
// table (validated, clamped, as element offsets) and calls the target's loops.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/take_weighted.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/take_weighted-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

void TakeWeightedTarget(bool f64, const void* x, int64_t outer, int64_t n, int64_t inner,
                        const int64_t* offsets, const void* weights, int64_t m, int64_t k,
                        void* out, ThreadPool* pool) {
  if (f64) {
    TakeWeightedImpl<double>(static_cast<const double*>(x), outer, n, inner, offsets,
                             static_cast<const double*>(weights), m, k, static_cast<double*>(out),
                             pool);
  } else {
    TakeWeightedImpl<float>(static_cast<const float*>(x), outer, n, inner, offsets,
                            static_cast<const float*>(weights), m, k, static_cast<float*>(out),
                            pool);
  }
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <vector>

namespace shp {
namespace kernels {

HWY_EXPORT(TakeWeightedTarget);

bool TakeWeighted(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner,
                  const void* indices, IndexType index_type, const void* weights, int64_t m,
                  int64_t k, void* out, ThreadPool* pool, BadIndex* bad_index) {
  if (dtype != DType::kF32 && dtype != DType::kF64) return false;
  if (index_type != IndexType::kI32 && index_type != IndexType::kI64) return false;
  if (outer < 0 || n < 0 || inner < 0 || m < 0 || k < 0) return false;
  const int64_t table = m * k;
  const int64_t total = outer * m * inner;
  if (table > 0 && (indices == nullptr || weights == nullptr)) return false;
  if (total > 0 && out == nullptr) return false;
  if (total > 0 && k > 0 && n > 0 && x == nullptr) return false;
  if (bad_index != nullptr) *bad_index = BadIndex{};
  // The table as element offsets along the axis, validated and clamped: -1 marks a term that
  // reads nothing (an axis of extent 0).
  std::vector<int64_t> offsets(static_cast<size_t>(table));
  for (int64_t p = 0; p < table; ++p) {
    const int64_t v = index_type == IndexType::kI64 ? static_cast<const int64_t*>(indices)[p]
                                                    : static_cast<const int32_t*>(indices)[p];
    int64_t c = v;
    if (v < 0 || v >= n) {
      if (bad_index != nullptr && bad_index->position < 0) *bad_index = BadIndex{p, v};
      c = n == 0 ? -1 : (v < 0 ? 0 : n - 1);
    }
    offsets[static_cast<size_t>(p)] = c;
  }
  if (total == 0) return true;
  HWY_DYNAMIC_DISPATCH(TakeWeightedTarget)
  (dtype == DType::kF64, x, outer, n, inner, offsets.data(), weights, m, k, out, pool);
  return true;
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
