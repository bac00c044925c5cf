// detail::CompiledPair (explain.cc's compiled conditions) against Evaluate: the same values
// wherever it gives one, never a value where Evaluate has none, and the variables VarsOf gives.
#include "cc/dim/detail/compiled_pair.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

// Evaluate's value of `e` at `val`, or false where it throws (division by zero, overflow).
bool EvaluateOrFail(const Expr* e, const std::vector<int64_t>& val, int64_t* out) {
  try {
    *out = Evaluate(e, val);
    return true;
  } catch (const Error&) {
    return false;
  }
}

struct Tally {
  long both = 0;           // Evaluate and the program gave (equal) values
  long neither = 0;        // neither had a value
  long evaluate_only = 0;  // only Evaluate (its 128-bit retry): allowed, must stay rare
};

// Compares the compiled pair (l, r) with Evaluate at `val`; a value where Evaluate has none, or
// a different value, fails the test.
void Check(const Expr* l, const Expr* r, const detail::CompiledPair& p,
           const std::vector<int64_t>& val, Tally* t, Scope* s) {
  std::vector<int64_t> slots(p.slots());
  int64_t pl = 0, pr = 0, el = 0, er = 0;
  const bool ran = p.Run(val.data(), slots.data(), &pl, &pr);
  const bool evaluated = EvaluateOrFail(l, val, &el) && EvaluateOrFail(r, val, &er);
  if (ran) {
    ASSERT_TRUE(evaluated) << "the program has a value where Evaluate fails: " << s->ToString(l)
                           << " , " << s->ToString(r);
    ASSERT_EQ(pl, el) << s->ToString(l);
    ASSERT_EQ(pr, er) << s->ToString(r);
    ++t->both;
  } else if (evaluated) {
    ++t->evaluate_only;
  } else {
    ++t->neither;
  }
}

TEST(CompiledPairTest, SameValuesAsEvaluateOnRandomExpressions) {
  std::mt19937_64 rng(20261202);
  const std::vector<std::string> names = {"a", "b", "c"};
  Tally small, large;
  for (int i = 0; i < 3000; ++i) {
    auto s = ScopeWithVars(names);
    const Expr* l = RandomExpr(s.get(), &rng, names, 3);
    const Expr* r = RandomExpr(s.get(), &rng, names, 3);
    detail::CompiledPair p;
    p.Compile(l, r);

    // Vars(): the union of VarsOf(l) and VarsOf(r), sorted, no duplicates.
    std::vector<int32_t> want = s->VarsOf(l);
    for (int32_t v : s->VarsOf(r)) want.push_back(v);
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    ASSERT_EQ(p.Vars(), want) << s->ToString(l) << " , " << s->ToString(r);

    // Small values, 0 and negatives included (divisions by zero, negative divisors).
    for (int k = 0; k < 8; ++k) {
      std::vector<int64_t> val(names.size());
      for (int64_t& v : val) v = std::uniform_int_distribution<int64_t>(-5, 9)(rng);
      ASSERT_NO_FATAL_FAILURE(Check(l, r, p, val, &small, s.get()));
    }
    // Values whose products and sums leave int64 (the overflow checks).
    for (int k = 0; k < 4; ++k) {
      std::vector<int64_t> val(names.size());
      for (int64_t& v : val) {
        const int64_t mag = int64_t{1} << std::uniform_int_distribution<int>(20, 62)(rng);
        v = (rng() & 1) ? mag - 1 : -mag;
      }
      if (k == 0) val[0] = std::numeric_limits<int64_t>::min();
      ASSERT_NO_FATAL_FAILURE(Check(l, r, p, val, &large, s.get()));
    }
  }
  // Both outcomes occur in both regimes (the comparison is not vacuous), and a value only
  // Evaluate has (its 128-bit retry) is rare.
  EXPECT_GT(small.both, 10000);
  EXPECT_GT(small.neither, 100);
  EXPECT_GT(large.both, 1000);
  EXPECT_GT(large.neither, 1000);
  EXPECT_LE(small.evaluate_only, small.both / 1000);
  EXPECT_LE(large.evaluate_only, large.both / 20);
  std::printf("small values: %ld equal, %ld no value, %ld Evaluate only; large: %ld, %ld, %ld\n",
              small.both, small.neither, small.evaluate_only, large.both, large.neither,
              large.evaluate_only);
}

// Atoms shared by the two sides are computed once, and a constant side costs no operation.
TEST(CompiledPairTest, SharedAtomsAndConstants) {
  auto s = ScopeWithVars({"a", "b"});
  const Expr* q = s->Parse("floordiv(a, b)");
  const Expr* l = s->Add(q, s->Parse("max(a, 2*b) + 1"));
  const Expr* r = s->Mul(q, s->Parse("max(a, 2*b)"));
  detail::CompiledPair p;
  p.Compile(l, r);
  std::vector<int64_t> slots(p.slots());
  int64_t pl = 0, pr = 0;
  ASSERT_TRUE(p.Run(std::vector<int64_t>{17, 3}.data(), slots.data(), &pl, &pr));
  EXPECT_EQ(pl, 5 + 17 + 1);
  EXPECT_EQ(pr, 5 * 17);
  ASSERT_TRUE(p.Run(std::vector<int64_t>{-7, 2}.data(), slots.data(), &pl, &pr));
  EXPECT_EQ(pl, -4 + 4 + 1);
  EXPECT_EQ(pr, -4 * 4);
  EXPECT_FALSE(p.Run(std::vector<int64_t>{5, 0}.data(), slots.data(), &pl, &pr));  // b = 0

  detail::CompiledPair c;
  c.Compile(s->Constant(7), s->Parse("a"));
  std::vector<int64_t> cs(c.slots());
  ASSERT_TRUE(c.Run(std::vector<int64_t>{-3, 0}.data(), cs.data(), &pl, &pr));
  EXPECT_EQ(pl, 7);
  EXPECT_EQ(pr, -3);
  EXPECT_EQ(c.Vars(), std::vector<int32_t>{0});
}

}  // namespace
}  // namespace dim
}  // namespace shp
