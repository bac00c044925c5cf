// SimdTargetName names the target the dispatch chose: every TEST_P runs once per Highway target
// compiled into the library and supported by this CPU (the dispatch is forced to each in turn).
#include "cc/kernels/simd_target.h"

#include <cstring>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

HWY_BEFORE_TEST(SimdTargetTest);

TEST_P(SimdTargetTest, NamesTheForcedTarget) {
  EXPECT_STREQ(hwy::TargetName(GetParam()), SimdTargetName());
}

TEST(SimdTarget, NamesTheBestSupportedTargetByDefault) {
  const char* name = SimdTargetName();
  ASSERT_NE(nullptr, name);
  EXPECT_GT(std::strlen(name), 0u);
}

}  // namespace
}  // namespace kernels
}  // namespace shp
