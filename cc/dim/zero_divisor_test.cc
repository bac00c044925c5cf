// Divisors that may be zero (issue 14): mod(n, floordiv(m, 3)) is accepted, as JAX accepts it;
// evaluating it where the divisor is 0 is SHP_DIVISION_BY_ZERO; decisions about it hold at
// every valuation where it is defined, and never leak into questions without it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cc/base/testing.h"
#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

int64_t Eval(Scope* s, const std::string& text,
             const std::vector<std::pair<std::string, int64_t>>& v) {
  const Expr* e = s->Parse(text);
  std::vector<int64_t> vals(s->variables().size());
  std::vector<bool> known(vals.size(), false);
  for (const auto& [name, value] : v) {
    vals[s->FindVar(name)] = value;
    known[s->FindVar(name)] = true;
  }
  return s->Evaluate(e, vals, known);
}

Interval Bnd(Scope* s, const std::string& text) { return s->Bounds(s->Parse(text)); }

TEST(ZeroDivisors, AcceptedAsAnOpaqueAtom) {
  auto s = Scope::Create({});
  // floordiv(m, 3) is 0 for m in [1, 2]: the divisor may be zero.
  EXPECT_EQ(Norm(s.get(), "mod(n, floordiv(m, 3))"), "mod(n, floordiv(m, 3))");
  EXPECT_EQ(Norm(s.get(), "floordiv(n, floordiv(m, 3))"), "floordiv(n, floordiv(m, 3))");
  EXPECT_EQ(Norm(s.get(), "n % (m // 3)"), "mod(n, floordiv(m, 3))");
  // Not simplified, so the zero divisor is not defined away: floordiv(0, d), mod(d, d).
  EXPECT_EQ(Norm(s.get(), "floordiv(0, floordiv(m, 3))"), "floordiv(0, floordiv(m, 3))");
  EXPECT_EQ(Norm(s.get(), "mod(m - 1, m - 1)"), "mod(m - 1, m - 1)");
  // Divisors of unknown sign too.
  auto t = Scope::Create({}, {{"b", -3, 3}});
  EXPECT_EQ(Norm(t.get(), "floordiv(a, b)"), "floordiv(a, b)");
  // A divisor that is 0 wherever the facts hold is refused, naming it.
  auto z = Scope::Create({"m <= 2"});
  Error e = Catch([&] { z->Parse("mod(n, floordiv(m, 3))"); });
  EXPECT_EQ(e.code(), Code::kDivisionByZero);
  EXPECT_NE(e.message().find("mod(n, 0)"), std::string::npos) << e.message();
  auto z2 = Scope::Create({}, {{"k", 0, 0}});
  e = Catch([&] { z2->Parse("floordiv(n, k*m)"); });
  EXPECT_EQ(e.code(), Code::kDivisionByZero);
}

TEST(ZeroDivisors, EvaluationAtAZeroDivisorIsDivisionByZero) {
  auto s = Scope::Create({});
  EXPECT_EQ(Eval(s.get(), "mod(n, floordiv(m, 3))", {{"n", 7}, {"m", 9}}), 1);
  EXPECT_EQ(Eval(s.get(), "floordiv(n, floordiv(m, 3))", {{"n", 7}, {"m", 9}}), 2);
  Error e = Catch([&] { Eval(s.get(), "mod(n, floordiv(m, 3))", {{"n", 7}, {"m", 2}}); });
  EXPECT_EQ(e.code(), Code::kDivisionByZero);
  EXPECT_EQ(Catch([&] {
              Eval(s.get(), "floordiv(0, floordiv(m, 3))", {{"m", 1}});
            }).code(),
            Code::kDivisionByZero);
  auto t = Scope::Create({}, {{"b", -3, 3}});
  EXPECT_EQ(Eval(t.get(), "floordiv(a, b)", {{"a", 7}, {"b", -2}}), -4);
  EXPECT_EQ(Eval(t.get(), "mod(a, b)", {{"a", 7}, {"b", -2}}), -1);
  EXPECT_EQ(Catch([&] {
              Eval(t.get(), "mod(a, b)", {{"a", 7}, {"b", 0}});
            }).code(),
            Code::kDivisionByZero);
}

TEST(ZeroDivisors, DecidedWhereDefined) {
  auto s = Scope::Create({});
  // Where defined, floordiv(m, 3) >= 1: the usual facts of a positive divisor.
  EXPECT_EQ(Cmp3(s.get(), "mod(n, floordiv(m, 3))", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(n, floordiv(m, 3))", Cmp::kLt, "floordiv(m, 3)"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(n, floordiv(m, 3)) + floordiv(m, 3)", Cmp::kGe, "1"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(n, floordiv(m, 3))", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(m, 3)*floordiv(n, floordiv(m, 3)) + mod(n, floordiv(m, 3))",
                 Cmp::kEq, "n"),
            Truth::kTrue);
  Interval iv = Bnd(s.get(), "mod(n, floordiv(m, 3))");
  EXPECT_EQ(iv.lo, 0);
  auto r = Scope::Create({}, {{"m", 0, 20}});
  iv = Bnd(r.get(), "mod(n, floordiv(m, 3))");
  EXPECT_EQ(iv.lo, 0);
  EXPECT_EQ(iv.hi, 5);  // floordiv(20, 3) - 1
  // Of unknown sign: nothing is known (mod takes the divisor's sign).
  auto t = Scope::Create({}, {{"b", -3, 3}});
  EXPECT_EQ(Cmp3(t.get(), "mod(a, b)", Cmp::kGe, "0"), Truth::kUnknown);
  EXPECT_EQ(Cmp3(t.get(), "floordiv(a, b)", Cmp::kLe, "a"), Truth::kUnknown);
}

TEST(ZeroDivisors, SimplifiedFormHoldsWhereDefined) {
  // x == y over sizes that may be 0 (PyTorch's unbacked x // y == 1): where y >= 1 the
  // atom is 1, so the comparison is TRUE where defined; the dim itself stays as written.
  auto s = Scope::Create({"x == y"}, {{"x", 0, kPosInf}, {"y", 0, kPosInf}});
  EXPECT_EQ(Norm(s.get(), "floordiv(x, y)"), "floordiv(x, y)");
  EXPECT_EQ(Cmp3(s.get(), "floordiv(x, y)", Cmp::kEq, "1"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(2*x, y)", Cmp::kEq, "2"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(3*x, y)", Cmp::kEq, "0"), Truth::kTrue);
  // Exact polynomial multiples, for a divisor of any sign: floordiv(x*z, z) is x where z != 0.
  auto u = Scope::Create({}, {{"z", -3, 3}});
  EXPECT_EQ(Cmp3(u.get(), "floordiv(x*z, z)", Cmp::kEq, "x"), Truth::kTrue);
  EXPECT_EQ(Cmp3(u.get(), "mod(x*z + 2*z, z)", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(u.get(), "z", Cmp::kNe, "0"), Truth::kUnknown);
  EXPECT_EQ(Catch([&] {
              Eval(s.get(), "floordiv(x, y)", {{"x", 0}, {"y", 0}});
            }).code(),
            Code::kDivisionByZero);
  // Of unknown sign too: x == y != 0 gives x // y == 1. (The quotient is tried at one
  // sample, variables nearest 1, which ignores the facts: x == -y is not found.)
  auto t = Scope::Create({"x == y"}, {{"x", -5, 5}, {"y", -5, 5}});
  EXPECT_EQ(Cmp3(t.get(), "floordiv(x, y)", Cmp::kEq, "1"), Truth::kTrue);
  // Not a multiple: unknown (x == y + 1 gives 2 at y = 1, 1 at y = 2).
  auto t3 = Scope::Create({"x == y + 1"}, {{"x", 0, 9}, {"y", 0, 9}});
  EXPECT_EQ(Cmp3(t3.get(), "floordiv(x, y)", Cmp::kEq, "1"), Truth::kUnknown);
  // And never in a question without the atom: y >= 1 is not implied.
  EXPECT_EQ(Cmp3(s.get(), "y", Cmp::kGe, "1"), Truth::kUnknown);
}

TEST(ZeroDivisors, NoLeakIntoQuestionsWithoutTheAtom) {
  auto s = Scope::Create({});
  // The atom's rows imply floordiv(m, 3) >= 1, i.e. m >= 3, but only where it is defined:
  // a question about m alone must not see them, before or after one about the atom.
  EXPECT_EQ(Cmp3(s.get(), "m", Cmp::kGe, "3"), Truth::kUnknown);
  EXPECT_EQ(Cmp3(s.get(), "mod(n, floordiv(m, 3))", Cmp::kGe, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "m", Cmp::kGe, "3"), Truth::kUnknown);
  EXPECT_EQ(Bnd(s.get(), "m").lo, 1);
  EXPECT_EQ(Bnd(s.get(), "floordiv(m, 3)").lo, 0);
}

TEST(ZeroDivisors, ConstraintsOverThemHoldWhereDefined) {
  // A constraint is checked where its expressions are defined: shapes with m < 3 cannot
  // satisfy mod(n, floordiv(m, 3)) == 0 (the check divides by zero), so m >= 3 follows.
  auto s = Scope::Create({"mod(n, floordiv(m, 3)) == 0"});
  EXPECT_EQ(Cmp3(s.get(), "m", Cmp::kGe, "3"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(m, 3)*floordiv(n, floordiv(m, 3))", Cmp::kEq, "n"),
            Truth::kTrue);
}

}  // namespace
}  // namespace dim
}  // namespace shp
