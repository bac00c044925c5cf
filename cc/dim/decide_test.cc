// The decision procedure: bounds and three-valued comparisons, including the examples of the
// JAX shape-polymorphism documentation and the cases where JAX gives up.
#include <gtest/gtest.h>

#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

Interval B(Scope* s, const std::string& e) { return s->Bounds(s->Parse(e)); }

TEST(Decide, JaxDocBounds) {
  auto s = Scope::Create({"batch >= 128", "batch <= 1024"});
  EXPECT_EQ(B(s.get(), "batch").lo, 128);
  EXPECT_EQ(B(s.get(), "batch").hi, 1024);
  EXPECT_EQ(B(s.get(), "2*batch + 1").lo, 257);
  EXPECT_EQ(B(s.get(), "2*batch + 1").hi, 2049);
  auto t = Scope::Create({});
  EXPECT_EQ(B(t.get(), "b").lo, 1);
  EXPECT_EQ(B(t.get(), "b").hi, kPosInf);
  EXPECT_EQ(B(t.get(), "-b").hi, -1);
  EXPECT_EQ(B(t.get(), "-b").lo, kNegInf);
  EXPECT_EQ(B(t.get(), "mod(b, 3)").lo, 0);
  EXPECT_EQ(B(t.get(), "mod(b, 3)").hi, 2);
}

TEST(Decide, JaxDocComparisons) {
  auto s = Scope::Create({});
  // A slice of 16 fits in b + 15.
  EXPECT_EQ(Cmp3(s.get(), "b + 15", Cmp::kGe, "16"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(b, 3)", Cmp::kLe, "b"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "b", Cmp::kGe, "1"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "b", Cmp::kGe, "2"), Truth::kUnknown);
  EXPECT_EQ(Cmp3(s.get(), "b", Cmp::kEq, "1"), Truth::kUnknown);  // not FALSE, unlike JAX's ==
  EXPECT_EQ(Cmp3(s.get(), "b", Cmp::kNe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "b", Cmp::kEq, "0"), Truth::kFalse);
  EXPECT_EQ(Cmp3(s.get(), "2*b", Cmp::kGe, "b"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "a", Cmp::kLt, "b"), Truth::kUnknown);
  EXPECT_EQ(Cmp3(s.get(), "a + 1", Cmp::kGt, "a"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(b, 2)", Cmp::kLe, "b"), Truth::kTrue);
}

TEST(Decide, ImplicitFactsOfAtoms) {
  auto s = Scope::Create({});
  EXPECT_EQ(Cmp3(s.get(), "2*floordiv(a, 2) + mod(a, 2)", Cmp::kEq, "a"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "max(a, b) + min(a, b)", Cmp::kEq, "a + b"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "max(a, b)", Cmp::kGe, "a"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "min(a, b)", Cmp::kLe, "b"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "b", Cmp::kGe, "mod(b, 3)"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "a*b", Cmp::kGe, "a"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "a*b", Cmp::kGe, "a + b - 1"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "a^2", Cmp::kGe, "a"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "3*floordiv(a, 3)", Cmp::kLe, "a"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "3*floordiv(a, 3)", Cmp::kGt, "a - 3"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(a, b)*b + mod(a, b)", Cmp::kEq, "a"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(a, b)", Cmp::kLt, "b"), Truth::kTrue);
}

TEST(Decide, ConstraintOrderDoesNotMatter) {
  for (auto cons : std::vector<std::vector<std::string>>{{"a >= b + 8", "b >= c + 2"},
                                                         {"b >= c + 2", "a >= b + 8"}}) {
    auto s = Scope::Create(cons);
    EXPECT_EQ(Cmp3(s.get(), "a", Cmp::kGe, "11"), Truth::kTrue);
    EXPECT_EQ(B(s.get(), "a").lo, 11);
    EXPECT_EQ(B(s.get(), "a - c").lo, 10);
    EXPECT_EQ(Cmp3(s.get(), "a", Cmp::kGe, "12"), Truth::kUnknown);
  }
}

TEST(Decide, EqualityConstraints) {
  auto s = Scope::Create({"a*b == c + d", "mod(e, 4) == 0", "f == g"});
  EXPECT_EQ(Cmp3(s.get(), "a*b", Cmp::kGe, "2"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "c + d - a*b", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "4*floordiv(e, 4)", Cmp::kEq, "e"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "e", Cmp::kGe, "4"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "f", Cmp::kEq, "g"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "max(f, g)", Cmp::kEq, "g"), Truth::kTrue);
  // No rewriting: f and g stay distinct variables, so both can still be solved (JAX #23437).
  EXPECT_EQ(Norm(s.get(), "f + g"), "f + g");
}

TEST(Decide, Unsatisfiable) {
  Error e = Catch([] { Scope::Create({"b <= 0"}); });
  EXPECT_EQ(e.code(), Code::kUnsatisfiable);
  EXPECT_NE(e.message().find("b <= 0"), std::string::npos) << e.message();
  e = Catch([] { Scope::Create({"x >= 3", "a >= b + 1", "b >= a"}); });
  EXPECT_EQ(e.code(), Code::kUnsatisfiable);
  EXPECT_NE(e.message().find("{a >= b + 1, b >= a}"), std::string::npos) << e.message();
  EXPECT_EQ(e.message().find("x >= 3"), std::string::npos) << e.message();
  e = Catch([] { Scope::Create({"2*a == 2*b + 1"}); });  // integer reasoning: parity
  EXPECT_EQ(e.code(), Code::kUnsatisfiable);
  e = Catch([] { Scope::Create({"mod(a, 4) == 5"}); });
  EXPECT_EQ(e.code(), Code::kUnsatisfiable);
  // Satisfiable sets are accepted.
  Scope::Create({"a >= b", "b >= a"});
  Scope::Create({"a*b == 6", "a >= 2"});
}

TEST(Decide, DeclaredRangesAndSizeZero) {
  auto s = Scope::Create({}, {{"n", 0, 16}});
  EXPECT_EQ(B(s.get(), "n").lo, 0);
  EXPECT_EQ(B(s.get(), "3*n + 1").hi, 49);
  EXPECT_EQ(Cmp3(s.get(), "n", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "n", Cmp::kEq, "0"), Truth::kUnknown);
  EXPECT_EQ(Catch([&] { s->Parse("floordiv(8, n)"); }).code(), Code::kDivisionByZero);
  auto t = Scope::Create({}, {{"m", -4, 4}});
  EXPECT_EQ(B(t.get(), "m^2").lo, 0);
  EXPECT_EQ(B(t.get(), "m^2").hi, 16);
  EXPECT_EQ(B(t.get(), "mod(m, 3)").lo, 0);
}

TEST(Decide, ChecksBecomeFacts) {
  auto s = Scope::Create({});
  EXPECT_EQ(Cmp3(s.get(), "a", Cmp::kGe, "8"), Truth::kUnknown);
  s->Check(s->Parse("a"), Cmp::kGe, s->Parse("8"), "a must be at least 8");
  EXPECT_EQ(Cmp3(s.get(), "a", Cmp::kGe, "8"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "a - 7", Cmp::kGt, "0"), Truth::kTrue);
  ASSERT_EQ(s->facts().size(), 1u);
  EXPECT_TRUE(s->facts()[0].is_assertion);
  EXPECT_EQ(Catch([&] { s->Check(s->Parse("a"), Cmp::kLt, s->Parse("3"), ""); }).code(),
            Code::kUnsatisfiable);
  EXPECT_EQ(s->facts().size(), 1u);  // the refused check left the scope unchanged
}

TEST(Decide, HugeValuesStaySound) {
  auto s = Scope::Create({"a >= 4611686018427387904"});
  Interval iv = B(s.get(), "4*a");
  EXPECT_EQ(iv.hi, kPosInf);
  EXPECT_LE(iv.lo, kPosInf - 1);
  EXPECT_EQ(Cmp3(s.get(), "a", Cmp::kGt, "0"), Truth::kTrue);
}

}  // namespace
}  // namespace dim
}  // namespace shp
