// max/min in the decision procedure (issue 14): upper bounds and equalities through a case
// analysis on which operand wins, and constraints that mention max/min.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cc/dim/decide.h"
#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

Interval B(Scope* s, const std::string& e) { return s->Bounds(s->Parse(e)); }

// ---- Upper bounds and equalities through max/min ----

// Dominance shown by cases on small values (issue 43 item 7): 64*b >= 64*floordiv(40*b + 63,
// 64) holds from b = 3 on by the floor's bound (24*b - 63 >= 0) and at b = 1, 2 exactly.
TEST(MaxMinCases, DominanceBySmallValues) {
  auto s = Scope::Create({});
  EXPECT_EQ(Norm(s.get(), "max(64*b, 64*floordiv(40*b + 63, 64))"), "64*b");
  EXPECT_EQ(Norm(s.get(), "min(64*b, 64*floordiv(40*b + 63, 64))"), "64*floordiv(40*b + 63, 64)");
  EXPECT_EQ(Norm(s.get(), "max(b^2, 3*b - 2)"), "b^2");  // b^2 - 3b + 2 = (b - 1)(b - 2)
  EXPECT_EQ(Cmp3(s.get(), "64*b", Cmp::kGe, "64*floordiv(40*b + 63, 64)"), Truth::kTrue);
  // Not dominated: 8*b + 64 wins below b = 3 and loses above.
  EXPECT_EQ(Norm(s.get(), "max(8*b + 64, 64*floordiv(40*b + 63, 64))"),
            "max(8*b + 64, 64*floordiv(40*b + 63, 64))");
  // Where b may be 0 the case b = 0 decides: 64*0 < 64*floordiv(63, 64) is false, equal.
  auto z = Scope::Create({}, {{"b", 0, kPosInf}});
  EXPECT_EQ(Norm(z.get(), "max(64*b, 64*floordiv(40*b + 63, 64))"), "64*b");
  // A negative value below the threshold: b^2 - 5*b + 6 < 0 nowhere for integers, but
  // b^2 - 5*b + 5 is -1 at b = 2 and 3.
  EXPECT_EQ(Norm(s.get(), "max(b^2 + 6, 5*b)"), "b^2 + 6");
  EXPECT_EQ(Norm(s.get(), "max(b^2 + 5, 5*b)"), "max(b^2 + 5, 5*b)");
}

TEST(MaxMinCases, Identities) {
  auto s = Scope::Create({});
  EXPECT_EQ(Cmp3(s.get(), "max(x - y, 0) + min(x, y)", Cmp::kEq, "x"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "max(x, y) - min(x, y)", Cmp::kGe, "x - y"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "max(x, y) - min(x, y)", Cmp::kGe, "y - x"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "max(x - y, 0) - max(y - x, 0)", Cmp::kEq, "x - y"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "min(x - y, 0) + max(x, y)", Cmp::kEq, "x"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "max(x, y) + max(y, z)", Cmp::kGe, "max(x, z) + y"), Truth::kTrue);
  // Not an identity: undecided, not FALSE (x = y makes it hold).
  EXPECT_EQ(Cmp3(s.get(), "max(x, y) - min(x, y)", Cmp::kEq, "x - y"), Truth::kUnknown);
}

TEST(MaxMinCases, UpperBounds) {
  auto s = Scope::Create({"b <= 512"});
  EXPECT_EQ(B(s.get(), "max(b, 8) - b").lo, 0);
  EXPECT_EQ(B(s.get(), "max(b, 8) - b").hi, 7);
  EXPECT_EQ(B(s.get(), "b - min(b, 8)").hi, 504);
  EXPECT_EQ(B(s.get(), "min(b, 8) - b").lo, -504);
  EXPECT_EQ(B(s.get(), "5*max(b, 8) - 5*b + 4").hi, 39);
  auto t = Scope::Create({});
  // max(a, b) <= a + b - 1 needs the split: neither operand alone bounds it above.
  EXPECT_EQ(Cmp3(t.get(), "max(a, b)", Cmp::kLe, "a + b - 1"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "max(a, 5)", Cmp::kLe, "a + 4"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "max(a, 5)", Cmp::kLe, "a + 3"), Truth::kUnknown);
  EXPECT_EQ(B(t.get(), "max(a, 5) - a").hi, 4);
  EXPECT_EQ(B(t.get(), "min(a, 5) - a").lo, kNegInf);
  EXPECT_EQ(B(t.get(), "min(a, 5) - a").hi, 0);
  // Sums and differences of several atoms.
  EXPECT_EQ(B(t.get(), "max(a, 3) + max(b, 4) - a - b").hi, 5);
  EXPECT_EQ(B(t.get(), "max(a, 3) - min(a, 3)").lo, 0);
  EXPECT_EQ(Cmp3(t.get(), "max(a, b) + min(a, c)", Cmp::kLe, "a + max(b, c)"), Truth::kTrue);
}

TEST(MaxMinCases, NestedAndInsideOtherAtoms) {
  auto s = Scope::Create({});
  EXPECT_EQ(Cmp3(s.get(), "max(max(a, b), c)", Cmp::kLe, "a + b + c - 2"), Truth::kTrue);
  EXPECT_EQ(B(s.get(), "floordiv(max(a, 8) - a, 2)").hi, 3);
  EXPECT_EQ(B(s.get(), "mod(a, 4) + max(a, 3) - a").hi, 3);
}

TEST(MaxMinCases, UnderConstraints) {
  auto s = Scope::Create({"a <= 10", "b >= 20"});
  EXPECT_EQ(Cmp3(s.get(), "max(a, b)", Cmp::kEq, "b"), Truth::kTrue);
  auto t = Scope::Create({"a <= b + 2"});
  EXPECT_EQ(Cmp3(t.get(), "max(a, b)", Cmp::kLe, "b + 2"), Truth::kTrue);
  EXPECT_EQ(B(t.get(), "max(a, b) - b").hi, 2);
  EXPECT_EQ(B(t.get(), "b - min(a, b)").hi, kPosInf);
}

// Past the work budget the answer only gets weaker.
TEST(MaxMinCases, TinyBudgetIsWeakerNotWrong) {
  struct Restore {
    ~Restore() { SetWorkBudgetsForTesting(0, 0); }
  } restore;
  for (long budget : {1L, 10L, 100L, 1000L}) {
    SetWorkBudgetsForTesting(budget, budget);
    auto s = Scope::Create({"b <= 512"});
    Truth t = Cmp3(s.get(), "max(x - y, 0) + min(x, y)", Cmp::kEq, "x");
    EXPECT_NE(t, Truth::kFalse) << budget;
    Interval iv = B(s.get(), "max(b, 8) - b");
    EXPECT_LE(iv.lo, 0) << budget;
    EXPECT_GE(iv.hi, 7) << budget;
  }
}

// More atoms than kMaxSplitAtoms: the rest keep their implicit facts only (sound).
TEST(MaxMinCases, ManyAtomsStaySound) {
  auto s = Scope::Create({});
  const std::string e =
      "max(a, 2) + max(b, 3) + max(c, 4) + max(d, 5) + max(e, 6) + max(f, 7) - a - b - c - d - e "
      "- f";
  Interval iv = B(s.get(), e);
  EXPECT_EQ(iv.lo, 0);
  EXPECT_GE(iv.hi, 21);
}

// ---- Constraints that mention max/min ----

TEST(MaxMinConstraints, MaxBelowOrAbove) {
  auto s = Scope::Create({"max(n, 3) >= 10"});
  EXPECT_EQ(B(s.get(), "n").lo, 10);
  EXPECT_EQ(Cmp3(s.get(), "n", Cmp::kGe, "10"), Truth::kTrue);
  EXPECT_EQ(Norm(s.get(), "max(n, 3)"), "n");
  auto t = Scope::Create({"max(a, b) >= 10", "a <= 3"});
  EXPECT_EQ(B(t.get(), "b").lo, 10);
  auto u = Scope::Create({"max(a, b) <= 5"});
  EXPECT_EQ(B(u.get(), "a").hi, 5);
  EXPECT_EQ(B(u.get(), "b").hi, 5);
}

TEST(MaxMinConstraints, Min) {
  auto s = Scope::Create({"min(a, b) <= 2", "a >= 5"});
  EXPECT_EQ(B(s.get(), "b").hi, 2);
  auto t = Scope::Create({"min(n, 100) >= 8"});
  EXPECT_EQ(B(t.get(), "n").lo, 8);
  // Only the case where 2*n wins is possible (n + 10 == 16 needs n + 10 <= 2*n).
  auto u = Scope::Create({"min(2*n, n + 10) == 16"});
  EXPECT_EQ(Cmp3(u.get(), "n", Cmp::kEq, "8"), Truth::kTrue);
  // Both cases are: n = 4 (n wins) and n = 8 (12 - n wins).
  auto v = Scope::Create({"min(n, 12 - n) == 4"});
  EXPECT_EQ(B(v.get(), "n").lo, 4);
  EXPECT_EQ(B(v.get(), "n").hi, 8);
  EXPECT_EQ(Cmp3(v.get(), "n", Cmp::kEq, "8"), Truth::kUnknown);
}

TEST(MaxMinConstraints, InsideModAndFloorDiv) {
  auto s = Scope::Create({"mod(max(n, 4), 8) == 0"});
  EXPECT_EQ(B(s.get(), "n").lo, 8);
  auto t = Scope::Create({"floordiv(max(a, b), 4) <= 2", "a >= 4"});
  EXPECT_EQ(B(t.get(), "a").hi, 11);
  EXPECT_EQ(B(t.get(), "b").hi, 11);
  // a <= 3 cannot be a positive multiple of 4: b wins.
  auto u = Scope::Create({"mod(max(a, b), 4) == 0", "a <= 3"});
  EXPECT_EQ(Cmp3(u.get(), "b", Cmp::kGe, "a"), Truth::kTrue);
  EXPECT_EQ(Norm(u.get(), "max(a, b)"), "b");
}

TEST(MaxMinConstraints, QueriesOverOtherVariables) {
  auto s = Scope::Create({"max(n, 3) >= 10"});
  EXPECT_EQ(Cmp3(s.get(), "n + m", Cmp::kGe, "11"), Truth::kTrue);
  auto t = Scope::Create({"min(a, b) >= c", "c >= 4"});
  EXPECT_EQ(Cmp3(t.get(), "a + b", Cmp::kGe, "2*c"), Truth::kTrue);
  EXPECT_EQ(B(t.get(), "a").lo, 4);
}

// ---- max/min in the normal form ----

TEST(MaxMinNormalForm, FlattenOrderDeduplicate) {
  auto s = ScopeWithVars({"a", "b", "c"});
  const std::string canon = Norm(s.get(), "max(a, max(b, c))");
  EXPECT_EQ(canon, "max(a, max(b, c))");
  for (const char* e : {"max(max(a, b), c)", "max(c, max(b, a))", "max(max(c, a), b)",
                        "max(b, max(a, max(c, a)))", "max(max(a, b), max(b, c))"}) {
    EXPECT_EQ(Norm(s.get(), e), canon) << e;
    EXPECT_EQ(s->Parse(e), s->Parse(canon)) << e;
  }
  EXPECT_EQ(Norm(s.get(), "min(min(c, b), a)"), "min(a, min(b, c))");
  EXPECT_EQ(Norm(s.get(), "max(a, max(a, b))"), "max(a, b)");
  // Binary forms print as before.
  EXPECT_EQ(Norm(s.get(), "max(b, a)"), "max(a, b)");
  EXPECT_EQ(Norm(s.get(), "min(c, 2)"), "min(c, 2)");
  // Built by operators in any order: the same pointer.
  const Expr *a = s->Var("a"), *b = s->Var("b"), *c = s->Var("c");
  EXPECT_EQ(s->Max(s->Max(a, b), c), s->Max(a, s->Max(c, b)));
  EXPECT_EQ(s->Min(s->Min(a, b), c), s->Min(c, s->Min(b, a)));
}

TEST(MaxMinNormalForm, FoldConstants) {
  auto s = ScopeWithVars({"n", "m"});
  EXPECT_EQ(Norm(s.get(), "max(max(n, 2), 9)"), "max(n, 9)");
  EXPECT_EQ(Norm(s.get(), "max(9, max(2, n))"), "max(n, 9)");
  EXPECT_EQ(Norm(s.get(), "min(min(n, 20), 9)"), "min(n, 9)");
  EXPECT_EQ(Norm(s.get(), "max(max(n, 2), max(m, 7))"), "max(m, max(n, 7))");
  EXPECT_EQ(Norm(s.get(), "min(max(n, 2), 1)"), "1");
  // n >= 1 by default: max(n, 1) is n, so it disappears from the chain too.
  EXPECT_EQ(Norm(s.get(), "max(max(n, 1), m)"), "max(m, n)");
}

TEST(MaxMinNormalForm, Absorption) {
  auto s = ScopeWithVars({"x", "y", "z"});
  EXPECT_EQ(Norm(s.get(), "max(x, min(x, y))"), "x");
  EXPECT_EQ(Norm(s.get(), "min(x, max(x, y))"), "x");
  EXPECT_EQ(Norm(s.get(), "max(min(x, y), min(x, min(y, z)))"), "min(x, y)");
  EXPECT_EQ(Norm(s.get(), "max(z, max(x, min(x, y)))"), "max(x, z)");
  EXPECT_EQ(Norm(s.get(), "min(max(x, y), max(y, max(x, z)))"), "max(x, y)");
}

TEST(MaxMinNormalForm, Distributivity) {
  auto s = ScopeWithVars({"x", "y", "z", "w"});
  const std::string canon = Norm(s.get(), "min(x, max(y, z))");
  EXPECT_EQ(Norm(s.get(), "max(min(x, y), min(x, z))"), canon);
  EXPECT_EQ(Norm(s.get(), "max(min(y, x), min(z, x))"), canon);
  EXPECT_EQ(Norm(s.get(), "min(max(x, y), max(x, z))"), Norm(s.get(), "max(x, min(y, z))"));
  EXPECT_EQ(Norm(s.get(), "max(w, max(min(x, y), min(x, z)))"),
            Norm(s.get(), "max(w, min(x, max(y, z)))"));
  EXPECT_EQ(Norm(s.get(), "max(min(x, min(y, w)), min(x, min(z, w)))"),
            Norm(s.get(), "min(w, min(x, max(y, z)))"));
  // Nothing in common: unchanged.
  EXPECT_EQ(Norm(s.get(), "max(min(x, y), min(z, w))"), "max(min(w, z), min(x, y))");
}

// Normalizing twice changes nothing: printed forms reparse to the same expression.
TEST(MaxMinNormalForm, Idempotent) {
  auto s = ScopeWithVars({"x", "y", "z", "w"});
  for (const char* e :
       {"max(min(x, y), min(x, z))", "max(w, max(min(x, y), min(x, z)))", "max(max(x, 3), y)",
        "min(max(x, y), max(x, z)) + max(z, max(w, 2))", "max(min(x, 4), min(x, y))"}) {
    const Expr* p = s->Parse(e);
    EXPECT_EQ(s->Parse(s->ToString(p)), p) << e << " -> " << s->ToString(p);
  }
}

}  // namespace
}  // namespace dim
}  // namespace shp
