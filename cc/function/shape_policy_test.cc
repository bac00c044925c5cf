// The shape policy of compiled functions: static and dynamic axes, marks, duck sizing, and the
// reasons for tracing again.
#include "cc/function/shape_policy.h"

#include <gtest/gtest.h>

#include "cc/base/error.h"

namespace shp {
namespace function {
namespace {

ShapePolicy TwoInputs(PolicyOptions o = PolicyOptions()) {
  return ShapePolicy({{"x", trace::DType::kF32, 2}, {"w", trace::DType::kF32, 1}}, o);
}

TEST(ShapePolicy, FirstTraceIsStaticThenAChangedAxisIsDynamic) {
  ShapePolicy p = TwoInputs();
  TracePlan first = p.Plan({{4, 3}, {3}}, false);
  EXPECT_EQ((std::vector<std::string>{"(s0, s1)", "(s2,)"}), first.specs);
  ASSERT_EQ(3u, first.assumptions.size());
  EXPECT_EQ("s0", first.assumptions[0].var);
  EXPECT_EQ(4, first.assumptions[0].value);
  EXPECT_EQ("input 'x' axis 0: static (only one size seen)", first.static_reasons[0]);
  p.Record({{4, 3}, {3}}, first);
  TracePlan second = p.Plan({{8, 3}, {3}}, false);
  // s0 changed: dynamic; s1 and s2 stay static.
  ASSERT_EQ(2u, second.assumptions.size());
  EXPECT_EQ("s1", second.assumptions[0].var);
  EXPECT_EQ("s2", second.assumptions[1].var);
  EXPECT_EQ(0, second.ranges[0].lo);  // no 0/1 specialization: dynamic sizes start at 0
  std::vector<std::string> why = p.Explain({{8, 3}, {3}}, second);
  ASSERT_EQ(1u, why.size());
  EXPECT_EQ("variant 0: input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic now)",
            why[0]);
}

TEST(ShapePolicy, ModesAndMarks) {
  PolicyOptions all;
  all.dynamic = DynamicMode::kAll;
  all.duck_sizing = false;
  EXPECT_TRUE(TwoInputs(all).Plan({{4, 3}, {3}}, false).assumptions.empty());
  PolicyOptions none;
  none.dynamic = DynamicMode::kNone;
  ShapePolicy n = TwoInputs(none);
  TracePlan a = n.Plan({{4, 3}, {3}}, false);
  n.Record({{4, 3}, {3}}, a);
  EXPECT_EQ(3u, n.Plan({{8, 3}, {3}}, false).assumptions.size());
  ShapePolicy m = TwoInputs();
  m.MarkDynamic("x", 1, 2, 100);
  m.MarkStatic("w", 0);
  TracePlan b = m.Plan({{4, 3}, {3}}, false);
  EXPECT_EQ(2, b.ranges[1].lo);
  EXPECT_EQ(100, b.ranges[1].hi);
  EXPECT_EQ("input 'w' axis 0: static (marked static)", b.static_reasons.back());
  // Fully dynamic ignores static marks.
  EXPECT_TRUE(m.Plan({{4, 3}, {3}}, true).assumptions.empty());
  EXPECT_THROW(m.MarkDynamic("x", 2, 0, 1), Error);
  EXPECT_THROW(m.MarkDynamic("x", 0, 5, 1), Error);
  EXPECT_THROW(m.MarkStatic("nope", 0), Error);
}

TEST(ShapePolicy, DuckSizingSharesEqualDynamicSizesUntilTheyDiffer) {
  PolicyOptions all;
  all.dynamic = DynamicMode::kAll;
  ShapePolicy p({{"x", trace::DType::kF32, 2}}, all);
  TracePlan first = p.Plan({{5, 5}}, false);
  ASSERT_EQ(1u, first.assumptions.size());
  EXPECT_EQ("s1", first.assumptions[0].var);
  EXPECT_EQ("s0", first.assumptions[0].other_var);
  p.Record({{5, 5}}, first);
  TracePlan second = p.Plan({{5, 6}}, false);
  EXPECT_TRUE(second.assumptions.empty());
  std::vector<std::string> why = p.Explain({{5, 6}}, second);
  ASSERT_EQ(1u, why.size());
  EXPECT_NE(std::string::npos, why[0].find("failed guard s1 == s0 (duck sizing")) << why[0];
  p.Record({{5, 6}}, second);
  // Once they differed, equal sizes are a coincidence: no duck sizing again.
  EXPECT_TRUE(p.Plan({{7, 7}}, false).assumptions.empty());
  // Sizes 0 and 1 are never ducked.
  ShapePolicy q({{"x", trace::DType::kF32, 2}}, all);
  EXPECT_TRUE(q.Plan({{1, 1}}, false).assumptions.empty());
}

}  // namespace
}  // namespace function
}  // namespace shp
