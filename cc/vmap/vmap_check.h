// Test support for batching rules: checks a program's vmap against running the program once
// per batch element, for several in_axes and out_axes patterns and batch sizes (0, 1, 7),
// on the batched program and on it loaded back from its bytes.
#ifndef SHAPEPOLY_CC_VMAP_VMAP_CHECK_H_
#define SHAPEPOLY_CC_VMAP_VMAP_CHECK_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cc/autodiff/ad_check.h"

namespace shp {
namespace vmap {
namespace testing {

using autodiff::testing::Array;
using autodiff::testing::Arrays;
using autodiff::testing::Case;

// `a` stacked: element e of `elements` at index e of a new axis `axis`.
Array Stack(const std::vector<Array>& elements, size_t axis, const std::vector<int64_t>& shape);
// Element e of `a` along axis `axis` (the axis removed).
Array Unstack(const Array& a, size_t axis, int64_t e);

// For every valuation of `c` and the in_axes patterns (every input batched at axis 0; each
// input alone; every input at its last axis, with the outputs' batch axes last), batch sizes
// 0, 1 and 7: vmap(program) on the stacked inputs equals the per-element runs stacked, also
// after serialize and load. Inputs in `never_batched` (and dimension inputs) stay unbatched.
// Reports gtest failures.
void CheckVmapCase(const Case& c, const std::set<std::string>& never_batched = {},
                   uint32_t seed = 1);

// Batch sizes that the checks use.
inline const std::vector<int64_t>& BatchSizes() {
  static const std::vector<int64_t> sizes{0, 1, 7};
  return sizes;
}

}  // namespace testing
}  // namespace vmap
}  // namespace shp

#endif  // SHAPEPOLY_CC_VMAP_VMAP_CHECK_H_
