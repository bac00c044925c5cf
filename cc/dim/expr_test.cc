// Normal form, hash-consing, arithmetic, printing.
#include <gtest/gtest.h>

#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

TEST(Expr, PrintsReadably) {
  auto s = Scope::Create({});
  EXPECT_EQ(Norm(s.get(), "1 + 2*b"), "2*b + 1");
  EXPECT_EQ(Norm(s.get(), "b*a*a"), "a^2*b");
  EXPECT_EQ(Norm(s.get(), "a // 3"), "floordiv(a, 3)");
  EXPECT_EQ(Norm(s.get(), "max(b, a)"), "max(a, b)");
  EXPECT_EQ(Norm(s.get(), "3 - a"), "-a + 3");
  EXPECT_EQ(Norm(s.get(), "a - a"), "0");
  EXPECT_EQ(Norm(s.get(), "(a + 1)^2"), "a^2 + 2*a + 1");
  EXPECT_EQ(Norm(s.get(), "-9223372036854775807 - 1"), "-9223372036854775808");
  EXPECT_EQ(s->ShapeToString(s->ParseShape("b", nullptr)), "(b,)");
}

TEST(Expr, HashConsedWhicheverWayBuilt) {
  auto s = Scope::Create({});
  const Expr* a = s->Var("a");
  const Expr* b = s->Var("b");
  const Expr* built = s->Add(s->Mul(s->Constant(2), s->Mul(a, b)), s->Constant(1));
  EXPECT_EQ(built, s->Parse("1 + b*a*2"));
  EXPECT_EQ(built, s->Parse("2*a*b + 1"));
  EXPECT_EQ(s->Sub(a, a), s->Constant(0));
  EXPECT_EQ(s->Max(a, b), s->Max(b, a));
  EXPECT_EQ(s->Parse("a % 4"), s->Mod(a, s->Constant(4)));
}

TEST(Expr, ExactDivisionSimplifies) {
  auto s = Scope::Create({});
  EXPECT_EQ(Norm(s.get(), "floordiv(3*a + 3, 3)"), "a + 1");
  EXPECT_EQ(Norm(s.get(), "mod(6*a, 3)"), "0");
  EXPECT_EQ(Norm(s.get(), "floordiv(4*a + 5, 2)"), "2*a + 2");
  EXPECT_EQ(Norm(s.get(), "mod(4*a + 5, 2)"), "1");
  EXPECT_EQ(Norm(s.get(), "floordiv(2*a, 4)"), "floordiv(a, 2)");
  EXPECT_EQ(Norm(s.get(), "mod(2*a, 4)"), "2*mod(a, 2)");
  EXPECT_EQ(Norm(s.get(), "floordiv(a*b + a, b + 1)"), "a");
  EXPECT_EQ(Norm(s.get(), "mod(a*b, b)"), "0");
  EXPECT_EQ(Norm(s.get(), "floordiv(a, 1)"), "a");
  EXPECT_EQ(Norm(s.get(), "floordiv(-7, 2)"), "-4");
  EXPECT_EQ(Norm(s.get(), "mod(-7, 2)"), "1");
  EXPECT_EQ(Norm(s.get(), "mod(7, -2)"), "-1");
  EXPECT_EQ(Norm(s.get(), "floordiv(a, -2)"),
            "-a + floordiv(a, 2)");  // floor(-a/2) = -a + floor(a/2)
}

TEST(Expr, MaxMinFoldWhenDecided) {
  auto s = Scope::Create({"a >= b + 2"});
  EXPECT_EQ(Norm(s.get(), "max(a, a + 1)"), "a + 1");
  EXPECT_EQ(Norm(s.get(), "min(2*b + 3, b)"), "b");
  EXPECT_EQ(Norm(s.get(), "max(a, b)"), "a");
  EXPECT_EQ(Norm(s.get(), "min(a, b)"), "b");
  EXPECT_EQ(Norm(s.get(), "max(c, 1)"), "c");
  EXPECT_EQ(Norm(s.get(), "max(c, 2)"), "max(c, 2)");
  EXPECT_EQ(Norm(s.get(), "max(3, 5)"), "5");
}

TEST(Expr, OverflowIsAnError) {
  auto s = Scope::Create({});
  EXPECT_EQ(Catch([&] { s->Parse("9223372036854775807 + 1"); }).code(), Code::kOverflow);
  EXPECT_EQ(Catch([&] { s->Parse("a*9223372036854775807*2"); }).code(), Code::kOverflow);
  EXPECT_EQ(Catch([&] { s->Parse("(a + 1)^64 * 8"); }).code(), Code::kOverflow);  // C(64, 32)*8
  // a^100: past the exponent limit (cc/base/limits.h: kMaxPow = 64) before any coefficient
  // overflows.
  EXPECT_EQ(Catch([&] { s->Parse("(a + 1)^100"); }).code(), Code::kUnsupported);
  EXPECT_EQ(Catch([&] { s->Parse("(a+b+c+d+e+f+g)^12"); }).code(), Code::kUnsupported);
  EXPECT_EQ(Catch([&] { s->Parse("floordiv(-9223372036854775807 - 1, -1)"); }).code(),
            Code::kOverflow);
}

TEST(Expr, DivisionByZeroNamesTheDivisor) {
  auto s = Scope::Create({});
  Error e = Catch([&] { s->Parse("floordiv(a, 0)"); });
  EXPECT_EQ(e.code(), Code::kDivisionByZero);
  EXPECT_NE(e.message().find("floordiv(a, 0)"), std::string::npos) << e.message();
  // A divisor that is 0 wherever the constraints hold is refused, naming it.
  auto z = Scope::Create({"b == 1"});
  Error e2 = Catch([&] { z->Parse("mod(a, b - 1)"); });
  EXPECT_EQ(e2.code(), Code::kDivisionByZero);
  EXPECT_NE(e2.message().find("'b - 1'"), std::string::npos) << e2.message();
  // One that may be 0 is accepted as an opaque atom (zero_divisor_test.cc); b >= 2 makes
  // b - 1 a positive divisor.
  EXPECT_EQ(Norm(s.get(), "mod(a, b - 1)"), "mod(a, b - 1)");
  auto t = Scope::Create({"b >= 2"});
  EXPECT_EQ(Norm(t.get(), "mod(a, b - 1)"), "mod(a, b - 1)");
}

TEST(Expr, EvaluateUsesFloorSemantics) {
  auto s = Scope::Create({});
  const Expr* e = s->Parse("floordiv(a - 10, 3) + mod(a - 10, 3)*100 + max(a, b)");
  std::vector<int64_t> vals(s->variables().size());
  std::vector<bool> known(vals.size(), true);
  vals[s->FindVar("a")] = 2;
  vals[s->FindVar("b")] = 7;
  EXPECT_EQ(s->Evaluate(e, vals, known), -3 + 100 * 1 + 7);
  known[s->FindVar("b")] = false;
  EXPECT_EQ(Catch([&] { s->Evaluate(e, vals, known); }).code(), Code::kUnsolvable);
}

TEST(Expr, ScopesDoNotMix) {
  auto s = Scope::Create({"a >= 2"});
  auto t = Scope::Create({});
  Error e = Catch([&] { s->Add(s->Parse("a"), t->Parse("b")); });
  EXPECT_EQ(e.code(), Code::kScopeMismatch);
  EXPECT_NE(e.message().find("{a >= 2}"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("{no constraints}"), std::string::npos) << e.message();
}

TEST(Expr, DeclareRanges) {
  auto s = Scope::Create({"n <= 4096"});
  s->Declare("n", 0, 8192);  // a variable mentioned only by constraints may still be declared
  s->Declare("m", -5, 5);
  EXPECT_EQ(s->Bounds(s->Parse("n")).lo, 0);
  EXPECT_EQ(s->Bounds(s->Parse("n")).hi, 4096);
  EXPECT_EQ(s->Bounds(s->Parse("m")).lo, -5);
  EXPECT_EQ(Cmp3(s.get(), "n", Cmp::kGe, "1"), Truth::kUnknown);  // size-0 dims are possible
  EXPECT_EQ(Catch([&] { s->Declare("n", 0, 1); }).code(), Code::kInvalidArgument);  // twice
  s->Parse("k + 1");
  EXPECT_EQ(Catch([&] { s->Declare("k", 0, 1); }).code(), Code::kInvalidArgument);    // after use
  EXPECT_EQ(Catch([&] { s->Declare("z", 3, 1); }).code(), Code::kInvalidArgument);    // empty
  EXPECT_EQ(Catch([&] { s->Declare("max", 0, 1); }).code(), Code::kInvalidArgument);  // reserved
  // A declaration that contradicts a constraint is refused and leaves the scope as it was.
  auto t = Scope::Create({"q >= 10"});
  EXPECT_EQ(Catch([&] { t->Declare("q", 0, 5); }).code(), Code::kUnsatisfiable);
  EXPECT_EQ(t->Bounds(t->Parse("q")).lo, 10);
}

// Regressions found by the soundness test: a declaration reloads the constraints under the new
// range, so nothing cached under the old one may survive it, and a refused one must keep them.
TEST(Expr, DeclareDropsWhatWasLearnedUnderTheOldRange) {
  auto s = Scope::Create({"max(b, 0) >= 0"});
  s->Bounds(s->Var("a"));  // caches folds and bounds under b >= 1
  s->Declare("b", -3, 5);
  EXPECT_EQ(Cmp3(s.get(), "b", Cmp::kGe, "0"), Truth::kUnknown);  // was a wrong TRUE
  EXPECT_EQ(s->Bounds(s->Parse("b")).lo, -3);
  auto t = Scope::Create({"mod(5, b) >= 0", "b <= 7"});
  // b == 0 divides by zero everywhere (a range that only includes 0 is accepted: mod(5, b)
  // is then defined where b != 0, see zero_divisor_test.cc).
  EXPECT_NE(Catch([&] { t->Declare("b", 0, 0); }).code(), Code::kOk);
  t->Declare("b", 2, 100);  // the scope is still usable, its constraints still there
  EXPECT_EQ(t->Bounds(t->Parse("b")).lo, 2);
  EXPECT_EQ(t->Bounds(t->Parse("b")).hi, 7);
}

}  // namespace
}  // namespace dim
}  // namespace shp
