// Solving variables from concrete shapes, and the order and wording of the checks.
#include <gtest/gtest.h>

#include "cc/dim/solve.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

struct Case {
  std::vector<std::string> constraints;
  std::vector<std::string> specs;
  std::vector<std::vector<int64_t>> shapes;
};

// "name=value ..." of the solution, or the error code and message.
std::string SolveText(const Case& c) {
  auto s = Scope::Create(c.constraints);
  std::vector<SolveArg> args;
  for (size_t i = 0; i < c.specs.size(); ++i) {
    args.push_back(
        {"args[" + std::to_string(i) + "]", s->ParseShape(c.specs[i], nullptr), c.shapes[i]});
  }
  try {
    Solution sol = Solve(s.get(), args, SolveOptions());
    std::string out;
    for (size_t v = 0; v < sol.known.size(); ++v) {
      if (sol.known[v])
        out += (out.empty() ? "" : " ") + s->VarName(v) + "=" + std::to_string(sol.values[v]);
    }
    return out;
  } catch (const Error& e) {
    return "E" + std::to_string(static_cast<int>(e.code())) + ": " + e.message();
  }
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Solve, LinearAndIterated) {
  EXPECT_EQ(SolveText({{}, {"b, 2*s + 1"}, {{8, 33}}}), "b=8 s=16");
  EXPECT_EQ(SolveText({{}, {"b*s, d", "b, s"}, {{128, 4}, {8, 16}}}), "b=8 s=16 d=4");
  EXPECT_EQ(SolveText({{},
                       {"b, s", "s, 2*h", "4*h + 1, d", "b*s, d", "b, 3"},
                       {{8, 16}, {16, 10}, {21, 32}, {128, 32}, {8, 3}}}),
            "b=8 s=16 h=5 d=32");
}

TEST(Solve, BeyondJax) {
  EXPECT_EQ(SolveText({{}, {"a*b", "a"}, {{12}, {3}}}),
            "a=3 b=4");                               // a product once a factor is known
  EXPECT_EQ(SolveText({{}, {"a^2"}, {{9}}}), "a=3");  // perfect powers
  EXPECT_EQ(SolveText({{}, {"a^3 + 1"}, {{28}}}), "a=3");
  EXPECT_EQ(SolveText({{}, {"max(a, 4)"}, {{9}}}), "a=9");  // max when the value exceeds c
  EXPECT_EQ(SolveText({{}, {"min(a, 4), a + 1"}, {{4, 9}}}), "a=8");
}

TEST(Solve, RemainderMessage) {
  std::string r = SolveText({{}, {"b, b, 2*d"}, {{3, 3, 5}}});
  EXPECT_TRUE(Has(r, "E6: Division had remainder 1 when computing the value of 'd'")) << r;
  EXPECT_TRUE(Has(r, "args[0].shape[2] (= 5)")) << r;
  EXPECT_TRUE(Has(r, "args[0].shape = (b, b, 2*d)")) << r;
  EXPECT_TRUE(Has(r, "'b' = 3")) << r;
}

TEST(Solve, ChecksInOrder) {
  // rank first
  EXPECT_TRUE(Has(SolveText({{}, {"b, 4"}, {{3}}}),
                  "E6: args[0]: rank is 1 but the specification requires rank 2"))
      << "";
  // constant dims
  std::string r = SolveText({{}, {"b, 784"}, {{8, 5}}});
  EXPECT_TRUE(Has(r, "E6: args[0].shape[1] is 5 but the specification requires 784")) << r;
  // ranges
  r = SolveText({{}, {"b"}, {{0}}});
  EXPECT_TRUE(Has(r, "E7: Expected value >= 1 for dimension variable 'b', but found 0")) << r;
  // unsolvable: every variable named
  r = SolveText({{}, {"b + c, d*e"}, {{8, 6}}});
  EXPECT_TRUE(Has(r, "E8: Cannot determine the dimension variables 'b', 'c', 'd', 'e'")) << r;
  // consistency between arguments
  r = SolveText({{}, {"b", "b"}, {{8}, {5}}});
  EXPECT_TRUE(Has(
      r,
      "E6: Found inconsistency between dimension size args[1].shape[0] (= 5) and the specification "
      "'b' (= 8)"))
      << r;
  // constraints last
  r = SolveText({{"a >= 2"}, {"a"}, {{1}}});
  EXPECT_TRUE(Has(r, "E7: constraint a >= 2 violated: a - 2 = -1")) << r;
  r = SolveText({{"mod(d, 8) == 0"}, {"d"}, {{12}}});
  EXPECT_TRUE(Has(r, "E7: constraint mod(d, 8) == 0 violated: mod(d, 8) = 4")) << r;
  // facts over variables in no shape still bound the solved ones
  r = SolveText({{"a >= b + 8", "b >= c + 2"}, {"a"}, {{10}}});
  EXPECT_TRUE(
      Has(r, "E7: Expected value >= 11 for dimension variable 'a' (implied by the constraints"))
      << r;
  EXPECT_EQ(SolveText({{"a >= b + 8", "b >= c + 2"}, {"a"}, {{11}}}), "a=11");
  // a negative concrete dim
  EXPECT_TRUE(Has(SolveText({{}, {"b"}, {{-1}}}), "negative size"));
}

// Regression found by the soundness test: values below zero are legal for variables declared
// with a negative range ("-2 is not a perfect power" before).
TEST(Solve, NegativeValuesOfDeclaredVariables) {
  auto s = Scope::Create({}, {{"a", -3, 1}});
  for (const char* spec : {"a + 2", "-a - 2", "a^3 + 8"}) {
    std::vector<SolveArg> args{{"args[0]", s->ParseShape(spec, nullptr), {0}}};
    Solution sol = Solve(s.get(), args, SolveOptions());
    EXPECT_EQ(sol.values[s->FindVar("a")], -2) << spec;
  }
}

// Issue 17, finding 7: a linear solve that lands outside the variable's range is a range
// violation, not "-2 is not a perfect power".
TEST(Solve, LinearSolutionOutsideTheRangeIsARangeViolation) {
  std::string r = SolveText({{}, {"10 - a"}, {{12}}});
  EXPECT_TRUE(Has(r, "E7: Expected value >= 1 for dimension variable 'a', but found -2.")) << r;
  EXPECT_FALSE(Has(r, "perfect")) << r;
  r = SolveText({{}, {"10 - 2*a"}, {{14}}});
  EXPECT_TRUE(Has(r, "E7: Expected value >= 1 for dimension variable 'a', but found -2.")) << r;
  r = SolveText({{}, {"-a^3 + 8"}, {{16}}});
  EXPECT_TRUE(Has(r, "E7: Expected value >= 1 for dimension variable 'a', but found -2.")) << r;
  // No integer root, and the real one (the cube root of -2) is below the range: the range
  // is what the dimension violates, not the power.
  r = SolveText({{}, {"10 - a^3"}, {{12}}});
  EXPECT_TRUE(Has(r, "E7: Expected value >= 1 for dimension variable 'a', but found 'a^3' = -2"))
      << r;
  EXPECT_FALSE(Has(r, "perfect")) << r;
  auto s = Scope::Create({}, {{"n", 3, 5}});
  std::vector<SolveArg> args{{"args[0]", s->ParseShape("n^2", nullptr), {7}}};
  r = Catch([&] { Solve(s.get(), args, SolveOptions()); }).message();
  EXPECT_TRUE(Has(r, "Expected value >= 3 for dimension variable 'n', but found 'n^2' = 7")) << r;
  args[0].shape = {30};  // sqrt(30) = 5.48 is above 5
  r = Catch([&] { Solve(s.get(), args, SolveOptions()); }).message();
  EXPECT_TRUE(Has(r, "Expected value <= 5 for dimension variable 'n', but found 'n^2' = 30")) << r;
  args[0].shape = {20};  // sqrt(20) = 4.47 is in range but no integer
  r = Catch([&] { Solve(s.get(), args, SolveOptions()); }).message();
  EXPECT_TRUE(Has(r, "20 is not a perfect square")) << r;
}

// Issue 17, finding 7: without shaped arguments there is no "Using the following shape
// specifications: ." sentence.
TEST(Solve, NoEmptySpecificationList) {
  auto s = Scope::Create({"n >= 4"});
  Solution preset;
  s->Var("n");
  preset.values.assign(s->variables().size(), 0);
  preset.known.assign(s->variables().size(), false);
  preset.values[s->FindVar("n")] = 2;
  preset.known[s->FindVar("n")] = true;
  SolveOptions o;
  o.preset = &preset;
  std::string m = Catch([&] { Solve(s.get(), {}, o); }).message();
  EXPECT_FALSE(Has(m, "shape specifications")) << m;
  EXPECT_TRUE(Has(m, "'n' = 2")) << m;
}

// a*b - b with a = 1 is 0 for every b: the variable's terms cancel. Dividing by their
// summed coefficient (0) was a SIGFPE; now b stays unsolved. Found by SolvableVar's
// agreement test.
TEST(Solve, UnknownTermsThatCancelLeaveTheVariableUnsolved) {
  std::string r = SolveText({{}, {"a, a*b - b"}, {{1, 0}}});
  EXPECT_TRUE(Has(r, "E8: Cannot determine the dimension variable 'b'")) << r;
  EXPECT_EQ(SolveText({{}, {"a, a*b - b"}, {{3, 8}}}), "a=3 b=4");
}

TEST(Solve, DeclaredRangeAllowsZero) {
  auto s = Scope::Create({}, {{"n", 0, 100}});
  std::vector<SolveArg> args{{"args[0]", s->ParseShape("n, 3", nullptr), {0, 3}}};
  Solution sol = Solve(s.get(), args, SolveOptions());
  EXPECT_EQ(sol.values[s->FindVar("n")], 0);
  args[0].shape = {101, 3};
  EXPECT_TRUE(Has(Catch([&] { Solve(s.get(), args, SolveOptions()); }).message(),
                  "Expected value <= 100 for dimension variable 'n'"));
}

TEST(Solve, NamedInputsAndAssertions) {
  auto s = Scope::Create({});
  s->Check(s->Parse("b"), Cmp::kLe, s->Parse("64"), "batch too large for this model");
  std::vector<SolveArg> args{{"input 'x'", s->ParseShape("b, 784", nullptr), {8, 5}, true}};
  SolveOptions o;
  o.requirer = "the program";
  EXPECT_EQ(Catch([&] { Solve(s.get(), args, o); }).message(),
            "input 'x': axis 1 is 5 but the program requires 784");
  args[0].shape = {100, 784};
  Error e = Catch([&] { Solve(s.get(), args, o); });
  EXPECT_EQ(e.code(), Code::kConstraintViolation);
  EXPECT_TRUE(
      Has(e.message(), "batch too large for this model (check b <= 64 violated: -b + 64 = -36)"))
      << e.message();
}

TEST(Solve, EqualityConstraintKeepsVariablesSolvable) {
  // JAX issue 23437: an equality constraint must not make a variable disappear.
  EXPECT_EQ(SolveText({{"a == b"}, {"a", "b"}, {{3}, {3}}}), "a=3 b=3");
  EXPECT_TRUE(Has(SolveText({{"a == b"}, {"a", "b"}, {{3}, {4}}}), "constraint a == b violated"));
}

// A divisor that is zero at the solved values: the scope built floordiv(a, b) because b's
// range excludes 0, so b = 0 is a range violation, reported as such (it was a
// kDivisionByZero from evaluating the third dimension before the ranges were checked; seed
// 792200 of Soundness.RandomScopesAgainstBruteForce).
TEST(Solve, ZeroDivisorAtTheSolvedValuesIsTheViolationThatCausedIt) {
  auto s = Scope::Create({}, {{"a", 0, 5}});
  SolveArg arg{"args[0]",
               {s->Parse("2*a + 1"), s->Parse("-b + 3"), s->Parse("b - 1 + floordiv(a, b)")},
               {7, 3, 3}};
  Error e = Catch([&] { Solve(s.get(), {arg}, SolveOptions()); });
  EXPECT_EQ(e.code(), Code::kConstraintViolation) << e.message();
  EXPECT_TRUE(Has(e.message(), "Expected value >= 1 for dimension variable 'b', but found 0"))
      << e.message();
  // The same through a constraint: floordiv(a, b - 2) needs b >= 3, which b = 2 violates.
  auto t = Scope::Create({"b >= 3"}, {{"a", 0, 5}});
  SolveArg arg2{
      "args[0]", {t->Parse("a"), t->Parse("b"), t->Parse("floordiv(a, b - 2) + b")}, {4, 2, 9}};
  Error e2 = Catch([&] { Solve(t.get(), {arg2}, SolveOptions()); });
  EXPECT_EQ(e2.code(), Code::kConstraintViolation) << e2.message();
  EXPECT_TRUE(Has(e2.message(), "constraint b >= 3 violated")) << e2.message();
  // At values where the divisor is not zero the same specification solves.
  EXPECT_EQ(Solve(t.get(), {{"args[0]", arg2.dims, {4, 4, 6}}}, SolveOptions()).values.size(), 2u);
}

}  // namespace
}  // namespace dim
}  // namespace shp
