// Dynamic dispatch for the fused attention (see attention.h). foreach_target.h re-includes this
// file once per Highway target; the HWY_ONCE pass emits the dispatch table and the entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/attention-inl.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

bool AttentionTarget(DType dtype, const AttentionParams& p, const void* q, const void* k,
                     const void* v, void* out, ThreadPool* pool) {
  return AttentionImpl(dtype, p, q, k, v, out, pool);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>

namespace shp {
namespace kernels {

HWY_EXPORT(AttentionTarget);

int64_t AttentionRowBlock(int64_t l, int64_t s, size_t elem_bytes) {
  // About 256 KiB of scores per block, 1 to 64 rows (never more than s).
  const int64_t bytes = std::max<int64_t>(1, l) * static_cast<int64_t>(elem_bytes);
  const int64_t rows = std::clamp<int64_t>((int64_t{256} << 10) / bytes, 1, 64);
  return std::max<int64_t>(1, std::min(rows, s));
}

bool Attention(DType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
               void* out, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(AttentionTarget)(dtype, p, q, k, v, out, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
