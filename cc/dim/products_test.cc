// Products and equalities, and polynomial constraints, in the decision procedure (issue 14
// part 2): equalities multiplied by monomials, divisibility carried through products, even
// powers and squares non-negative, products of non-negative factors, quadratic facts
// bounding their variable.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

Interval B(Scope* s, const std::string& e) { return s->Bounds(s->Parse(e)); }

TEST(Products, EqualityTimesAMonomial) {
  auto s = Scope::Create({"p*q == r"});
  EXPECT_EQ(Cmp3(s.get(), "p*p*q", Cmp::kEq, "p*r"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "p*q*q", Cmp::kEq, "q*r"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "p*q*s", Cmp::kEq, "r*s"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "p*p*q - p*r + 3", Cmp::kEq, "3"), Truth::kTrue);
  // Not implied: p*r == r*r only where p == r (or r == 0).
  EXPECT_EQ(Cmp3(s.get(), "p*r", Cmp::kEq, "r*r"), Truth::kUnknown);
  auto t = Scope::Create({"a == b + 2"});
  EXPECT_EQ(Cmp3(t.get(), "a*c", Cmp::kEq, "b*c + 2*c"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "a*c", Cmp::kGt, "b*c"), Truth::kTrue);
}

TEST(Products, DivisibilityThroughProducts) {
  auto s = Scope::Create({"mod(n, 8) == 0"});
  EXPECT_EQ(Cmp3(s.get(), "n*m", Cmp::kEq, "8*floordiv(n, 8)*m"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "n*m*k", Cmp::kEq, "8*floordiv(n, 8)*m*k"), Truth::kTrue);
  // Without the fact only the bounds of mod(n, 8)*m are known.
  auto t = Scope::Create({});
  EXPECT_EQ(Cmp3(t.get(), "n*m", Cmp::kEq, "8*floordiv(n, 8)*m"), Truth::kUnknown);
}

TEST(Products, SquaresAreNonNegative) {
  auto s = Scope::Create({}, {{"n", -100, 100}, {"m", -50, 50}, {"u", kNegInf, kPosInf}});
  EXPECT_EQ(Cmp3(s.get(), "(n - 7)^2", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "(n - m)^2", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "(u + 3)^2 + 1", Cmp::kGt, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "u^4", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "u^2", Cmp::kGe, "u"), Truth::kTrue);  // u(u - 1) >= 0
  EXPECT_EQ(B(s.get(), "n^2 - 14*n + 50").lo, 1);
  EXPECT_EQ(B(s.get(), "3*(u - 2)^2 + 4").lo, 4);
  // A square is not an upper bound of anything it does not lead.
  EXPECT_EQ(Cmp3(s.get(), "(n - 7)^2", Cmp::kGe, "1"), Truth::kUnknown);
  auto t = Scope::Create({});  // default ranges [1, inf)
  EXPECT_EQ(Cmp3(t.get(), "(n - 7)^2", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "(a - b)^2 + 2*a*b", Cmp::kGe, "2"), Truth::kTrue);
}

TEST(Products, NonNegativeFactors) {
  auto s = Scope::Create({"a <= 10", "b <= 20"}, {{"w", 0, kPosInf}});
  EXPECT_EQ(B(s.get(), "a*b").lo, 1);
  EXPECT_EQ(B(s.get(), "a*b").hi, 200);
  EXPECT_EQ(B(s.get(), "a*b - a").hi, 190);
  EXPECT_EQ(B(s.get(), "a*b - a").lo, 0);
  EXPECT_EQ(Cmp3(s.get(), "w^3", Cmp::kGe, "w^2"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "w^3", Cmp::kGe, "w"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "a*w^2", Cmp::kGe, "a*w"), Truth::kTrue);
  // w^3 >= w^2 needs w >= 0: for w = -1 it is false.
  auto t = Scope::Create({}, {{"w", -3, 3}});
  EXPECT_EQ(Cmp3(t.get(), "w^3", Cmp::kGe, "w^2"), Truth::kUnknown);
}

TEST(Polynomial, QuadraticFactsBoundTheirVariable) {
  auto s = Scope::Create({"n^2 <= 1000000"});
  EXPECT_EQ(B(s.get(), "n").hi, 1000);
  EXPECT_EQ(Cmp3(s.get(), "n", Cmp::kLe, "1000"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "n", Cmp::kLt, "1000"), Truth::kUnknown);
  auto t = Scope::Create({"n*n <= 999999"}, {{"n", kNegInf, kPosInf}});
  EXPECT_EQ(B(t.get(), "n").lo, -999);
  EXPECT_EQ(B(t.get(), "n").hi, 999);
  auto u = Scope::Create({"n^2 + 4*n <= 60"});  // (n + 2)^2 <= 64: n <= 6
  EXPECT_EQ(B(u.get(), "n").hi, 6);
  auto v = Scope::Create({"2*n^2 == 72"}, {{"n", kNegInf, kPosInf}});
  EXPECT_EQ(B(v.get(), "n").lo, -6);
  EXPECT_EQ(B(v.get(), "n").hi, 6);
  // An upward parabola and a lower bound between its roots: n^2 >= 50 with n >= 1 gives 8.
  auto w = Scope::Create({"n^2 >= 50"});
  EXPECT_EQ(B(w.get(), "n").lo, 8);
  auto x = Scope::Create({"n^2 >= 50"}, {{"n", -20, 20}});  // n <= -8 stays possible
  EXPECT_EQ(B(x.get(), "n").lo, -20);
}

TEST(Polynomial, PowerFactsBoundTheirVariable) {
  auto s = Scope::Create({"n^3 <= 1000"});
  EXPECT_EQ(B(s.get(), "n").hi, 10);
  auto t = Scope::Create({"n^3 <= 999"}, {{"n", kNegInf, kPosInf}});
  EXPECT_EQ(B(t.get(), "n").hi, 9);
  auto u = Scope::Create({"2*n^4 <= 163"}, {{"n", kNegInf, kPosInf}});  // n^4 <= 81
  EXPECT_EQ(B(u.get(), "n").lo, -3);
  EXPECT_EQ(B(u.get(), "n").hi, 3);
  auto v = Scope::Create({"n^3 >= 28"});
  EXPECT_EQ(B(v.get(), "n").lo, 4);
  auto w = Scope::Create({"n^4 == 625"});
  EXPECT_EQ(B(w.get(), "n").lo, 5);
  EXPECT_EQ(B(w.get(), "n").hi, 5);
  // Even powers bound |n| only: with n in [-9, 9], n^4 >= 16 leaves n <= -2 possible.
  auto x = Scope::Create({"n^4 >= 16"}, {{"n", -9, 9}});
  EXPECT_EQ(B(x.get(), "n").lo, -9);
}

TEST(Polynomial, ProductsOfFacts) {
  auto s = Scope::Create({"v == w*w*w"}, {{"w", 0, kPosInf}});
  EXPECT_EQ(Cmp3(s.get(), "v", Cmp::kGe, "w"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "v", Cmp::kGe, "w^2"), Truth::kTrue);
  auto t = Scope::Create({"v == w^2"}, {{"w", kNegInf, kPosInf}});
  EXPECT_EQ(Cmp3(t.get(), "v", Cmp::kGe, "w"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "v", Cmp::kGe, "-w"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "v", Cmp::kGe, "0"), Truth::kTrue);
}

}  // namespace
}  // namespace dim
}  // namespace shp
