// Symbolic divisors (issue 14 part 2): common factors of numerator and divisor cancel,
// nested floors fold (also inside mod), divisibility facts and equalities decide floordiv
// and mod by a symbolic divisor, and equalities between floordiv terms bound others.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

TEST(SymbolicDivisors, CommonFactorsCancel) {
  auto s = Scope::Create({});
  EXPECT_EQ(Norm(s.get(), "floordiv(10*a, 4*b)"), Norm(s.get(), "floordiv(5*a, 2*b)"));
  EXPECT_EQ(Norm(s.get(), "floordiv(10*a, 4*b)"), "floordiv(5*a, 2*b)");
  EXPECT_EQ(Norm(s.get(), "mod(10*a, 4*b)"), "2*mod(5*a, 2*b)");
  EXPECT_EQ(Norm(s.get(), "floordiv(6*a + 3, 3*b)"), "floordiv(2*a + 1, b)");
  // A common monomial factor cancels when it is >= 1: floordiv(a*c, b*c) == floordiv(a, b).
  EXPECT_EQ(Norm(s.get(), "floordiv(a*c, b*c)"), "floordiv(a, b)");
  EXPECT_EQ(Norm(s.get(), "mod(a*c, b*c)"), "c*mod(a, b)");
  EXPECT_EQ(Norm(s.get(), "floordiv(a*c, 2*c)"), "floordiv(a, 2)");
  EXPECT_EQ(Cmp3(s.get(), "floordiv(10*a, 4*b)", Cmp::kEq, "floordiv(5*a, 2*b)"), Truth::kTrue);
  // Not when the factor may be 0 or negative (c in [-2, 2]: floordiv(a*c, b*c) != floordiv(a, b)
  // at c = -1, a = 1, b = 2).
  auto t = Scope::Create({}, {{"c", -2, 2}});
  EXPECT_EQ(Norm(t.get(), "floordiv(a*c, b)"), "floordiv(a*c, b)");
  EXPECT_EQ(Norm(t.get(), "floordiv(a*c*c + a, b*c*c + b)"), "floordiv(a*c^2 + a, b*c^2 + b)");
  // Nothing in common: unchanged.
  EXPECT_EQ(Norm(s.get(), "floordiv(3*a, 2*b)"), "floordiv(3*a, 2*b)");
}

TEST(SymbolicDivisors, NestedFloorsFold) {
  auto s = Scope::Create({});
  EXPECT_EQ(Norm(s.get(), "floordiv(floordiv(a, 3), b)"), Norm(s.get(), "floordiv(a, 3*b)"));
  // A symbolic inner divisor keeps the nesting (chains of them reach the depth limit, which
  // the C API documents and tests).
  EXPECT_EQ(Norm(s.get(), "floordiv(floordiv(a, c), b)"), "floordiv(floordiv(a, c), b)");
  EXPECT_EQ(Cmp3(s.get(), "floordiv(floordiv(a, 3), b)", Cmp::kEq, "floordiv(a, 3*b)"),
            Truth::kTrue);
  // Inside mod: mod(floordiv(a, 3), b) == floordiv(a, 3) - b*floordiv(a, 3*b).
  EXPECT_EQ(Norm(s.get(), "mod(floordiv(a, 3), b)"), "-b*floordiv(a, 3*b) + floordiv(a, 3)");
  EXPECT_EQ(Cmp3(s.get(), "mod(floordiv(a, 3), b)", Cmp::kLt, "b"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(floordiv(a, 3), b)", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "3*b*floordiv(floordiv(a, 3), b)", Cmp::kLe, "a"), Truth::kTrue);
  // Constant outer divisors fold too (for any sign of the numerator), inside mod as well.
  EXPECT_EQ(Norm(s.get(), "floordiv(floordiv(a, 2), 3)"), "floordiv(a, 6)");
  EXPECT_EQ(Norm(s.get(), "floordiv(floordiv(1 - 5*a, 2), 3)"),
            Norm(s.get(), "floordiv(1 - 5*a, 6)"));
  EXPECT_EQ(Norm(s.get(), "mod(floordiv(floordiv(a, 2), 3), 5)"), "mod(floordiv(a, 6), 5)");
  EXPECT_EQ(Norm(s.get(), "floordiv(floordiv(floordiv(a, 2), 3), 7) + 1"), "floordiv(a, 42) + 1");
  EXPECT_EQ(Norm(s.get(), "floordiv(floordiv(a + 4, 2), 4)"), Norm(s.get(), "floordiv(a + 4, 8)"));
  // Brute force: floor(floor(x / d) / k) == floor(x / (d * k)) on both signs.
  for (int64_t d : {1, 2, 3, 7}) {
    for (int64_t k : {1, 2, 5}) {
      for (int64_t x = -60; x <= 60; ++x) {
        const int64_t fd = x >= 0 ? x / d : -((-x + d - 1) / d);
        const int64_t outer = fd >= 0 ? fd / k : -((-fd + k - 1) / k);
        const int64_t dk = d * k;
        EXPECT_EQ(outer, x >= 0 ? x / dk : -((-x + dk - 1) / dk)) << x << " " << d << " " << k;
      }
    }
  }
}

TEST(SymbolicDivisors, DivisibilityWithASymbolicDivisor) {
  auto s = Scope::Create({"mod(s, 3) == 0", "s >= 3"});
  EXPECT_EQ(Norm(s.get(), "floordiv(s, floordiv(s, 3))"), "3");
  // mod(s, floordiv(s, 3)) is s - 3*floordiv(s, 3), which the fact makes 0.
  EXPECT_EQ(Norm(s.get(), "mod(s, floordiv(s, 3))"), "s - 3*floordiv(s, 3)");
  EXPECT_EQ(Cmp3(s.get(), "mod(s, floordiv(s, 3))", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(s, floordiv(s, 3))", Cmp::kEq, "3"), Truth::kTrue);
  // Without the divisibility fact it is 3 or more (s = 4: floordiv(4, 1) = 4).
  auto t = Scope::Create({"s >= 3"});
  EXPECT_EQ(Cmp3(t.get(), "floordiv(s, floordiv(s, 3))", Cmp::kEq, "3"), Truth::kUnknown);
}

TEST(SymbolicDivisors, EqualitiesInsideFloorDivAndMod) {
  auto s = Scope::Create({"x == y"});
  EXPECT_EQ(Cmp3(s.get(), "floordiv(3*x, y)", Cmp::kEq, "3"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(3*x, y)", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Norm(s.get(), "floordiv(3*x + y, y)"), "4");
  auto t = Scope::Create({"x == 2*y"});
  EXPECT_EQ(Norm(t.get(), "floordiv(x, y)"), "2");
  EXPECT_EQ(Cmp3(t.get(), "mod(x, y)", Cmp::kEq, "0"), Truth::kTrue);
  // floordiv(2*y + 1, y) is 3 at y = 1 and 2 above: no constant quotient.
  auto v = Scope::Create({"x == 2*y + 1"});
  EXPECT_EQ(Cmp3(v.get(), "floordiv(x, y)", Cmp::kEq, "2"), Truth::kUnknown);
  EXPECT_EQ(Cmp3(v.get(), "floordiv(x, y)", Cmp::kEq, "3"), Truth::kUnknown);
  // Only a proven quotient is used: with x in [y, 2*y] the quotient is 1 or 2.
  auto u = Scope::Create({"x >= y", "x <= 2*y"});
  EXPECT_EQ(Cmp3(u.get(), "floordiv(x, y)", Cmp::kEq, "1"), Truth::kUnknown);
}

TEST(SymbolicDivisors, EqualitiesBetweenFloorDivTerms) {
  auto s = Scope::Create({"floordiv(a, 2) == floordiv(b, 2)"});
  EXPECT_EQ(Cmp3(s.get(), "floordiv(a, 4)", Cmp::kEq, "floordiv(b, 4)"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "a - b", Cmp::kLe, "1"), Truth::kTrue);
  auto t = Scope::Create({"floordiv(a, 4) == b"});
  EXPECT_EQ(Cmp3(t.get(), "floordiv(a, 8)", Cmp::kLe, "b"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "floordiv(a, 2)", Cmp::kGe, "2*b"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "floordiv(a, 2)", Cmp::kLe, "2*b + 1"), Truth::kTrue);
}

}  // namespace
}  // namespace dim
}  // namespace shp
