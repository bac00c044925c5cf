// Parsing of expressions, shapes and constraints, and its error messages.
#include <gtest/gtest.h>

#include "cc/dim/scope.h"
#include "cc/dim/solve.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

TEST(Parse, Shapes) {
  auto s = Scope::Create({});
  EXPECT_EQ(s->ParseShape("", nullptr).size(), 0u);
  EXPECT_EQ(s->ParseShape("()", nullptr).size(), 0u);
  EXPECT_EQ(s->ParseShape("  ( )  ", nullptr).size(), 0u);
  EXPECT_EQ(s->ShapeToString(s->ParseShape("(a, b,)", nullptr)), "(a, b)");
  EXPECT_EQ(s->ShapeToString(s->ParseShape("batch, 2*seq + 1, floordiv(n, 4)", nullptr)),
            "(batch, 2*seq + 1, floordiv(n, 4))");
  EXPECT_EQ(s->ShapeToString(s->ParseShape("(a + 1)*2", nullptr)), "(2*a + 2,)");
  EXPECT_EQ(s->ShapeToString(s->ParseShape("a,", nullptr)), "(a,)");
  std::vector<int64_t> like = {3, 4, 5};
  EXPECT_EQ(s->ShapeToString(s->ParseShape("_, b, ...", &like)), "(3, b, 5)");
  EXPECT_EQ(s->ShapeToString(s->ParseShape("...", &like)), "(3, 4, 5)");
  EXPECT_EQ(s->ShapeToString(s->ParseShape("a, _", &like)), "(a, 4)");
  // An unknown size in `like` (JAX's None, a negative entry): checked nowhere, taken by
  // neither `_` nor `...`; constants still meet the known sizes.
  std::vector<int64_t> unknown = {-1, 4};
  EXPECT_EQ(s->ShapeToString(s->ParseShape("b, _", &unknown)), "(b, 4)");
  EXPECT_EQ(s->ShapeToString(s->ParseShape("7, 4", &unknown)), "(7, 4)");
  EXPECT_THROW(s->ParseShape("_, 4", &unknown), Error);
  EXPECT_THROW(s->ParseShape("...", &unknown), Error);
  EXPECT_THROW(s->ParseShape("b, 3", &unknown), Error);
}

TEST(Parse, OperatorsAndPrecedence) {
  auto s = Scope::Create({});
  EXPECT_EQ(Norm(s.get(), "-a^2"), "-a^2");
  EXPECT_EQ(Norm(s.get(), "2*-a"), "-2*a");
  EXPECT_EQ(Norm(s.get(), "a - b - c"), "a - b - c");
  EXPECT_EQ(Norm(s.get(), "7 // 2 * 2"), "6");
  EXPECT_EQ(Norm(s.get(), "7 % 4 + 1"), "4");
  EXPECT_EQ(Norm(s.get(), "a^0"), "1");
  EXPECT_EQ(Norm(s.get(), "min(max(a, 3), 2)"), "2");
}

// The parser keeps 32 tokens and 8 open levels in place: inputs past either move to the heap
// mid-parse and must parse as the short ones do.
TEST(Parse, PastTheInPlaceTokensAndLevels) {
  auto s = Scope::Create({});
  std::string sum = "a";
  for (int i = 0; i < 20; ++i) sum += " + a";  // 41 tokens
  EXPECT_EQ(Norm(s.get(), sum), "21*a");
  EXPECT_EQ(Norm(s.get(), std::string(12, '(') + "b - 1" + std::string(12, ')') + " * 2"),
            "2*b - 2");
  // Ten nested calls (max, min alternating over fresh variables) as the builders make them.
  std::string text = "v0";
  const Expr* built = s->Var("v0");
  for (int i = 1; i <= 10; ++i) {
    const std::string v = "v" + std::to_string(i);
    text = std::string(i % 2 ? "min(" : "max(") + text + ", " + v + ")";
    built = i % 2 ? s->Min(built, s->Var(v)) : s->Max(built, s->Var(v));
  }
  EXPECT_EQ(Norm(s.get(), text), s->ToString(built));
  EXPECT_EQ(Norm(s.get(), "floordiv(" + text + ", 1)"), s->ToString(built));
  std::vector<int64_t> like(40, 3);
  std::string spec = "_";
  for (int i = 1; i < 40; ++i) spec += ", _";
  EXPECT_EQ(s->ParseShape(spec, &like).size(), 40u);
  // An error past the in-place tokens names the right column and token.
  Error e = Catch([&] { s->Parse(sum + " + ) "); });
  EXPECT_EQ(e.code(), Code::kParseError);
  EXPECT_EQ(e.message(), "syntax error in symbolic dimension '" + sum +
                             " + ) ' at column 84: expected a dimension expression but found ')'");
}

TEST(Parse, ErrorsSayWhereAndWhat) {
  auto s = Scope::Create({});
  Error e = Catch([&] { s->ParseShape("2*(a, b", nullptr); });
  EXPECT_EQ(e.code(), Code::kParseError);
  EXPECT_EQ(e.message(),
            "syntax error in symbolic shape '2*(a, b' in dimension 0 at column 4: expected ')' but "
            "found ','");
  e = Catch([&] { s->ParseShape("a, , b", nullptr); });
  EXPECT_EQ(e.message(),
            "syntax error in symbolic shape 'a, , b' in dimension 1 at column 3: expected a "
            "dimension expression "
            "but found ','");
  e = Catch([&] { s->Parse("a +"); });
  EXPECT_EQ(e.message(),
            "syntax error in symbolic dimension 'a +' at column 3: expected a dimension expression "
            "but found end of "
            "input");
  e = Catch([&] { s->Parse("a ^ b"); });
  EXPECT_NE(e.message().find("expected a non-negative integer exponent but found 'b'"),
            std::string::npos);
  e = Catch([&] { s->Parse("max(a)"); });
  EXPECT_NE(e.message().find("expected ',' between the two arguments of 'max' but found ')'"),
            std::string::npos);
  e = Catch([&] { s->Parse("foo(a)"); });
  EXPECT_NE(e.message().find("unknown function"), std::string::npos);
  e = Catch([&] { s->Parse("a $ b"); });
  EXPECT_NE(e.message().find("found '$'"), std::string::npos) << e.message();
  e = Catch([&] { s->Parse("99999999999999999999"); });
  EXPECT_NE(e.message().find("fits in 64 bits"), std::string::npos);
  e = Catch([&] { s->Parse(std::string(5000, '(') + "a" + std::string(5000, ')')); });
  EXPECT_EQ(e.code(), Code::kParseError);
  e = Catch([&] { s->ParseShape("..., a", nullptr); });
  EXPECT_EQ(e.code(), Code::kParseError);
  std::vector<int64_t> like = {3};
  e = Catch([&] { s->ParseShape("..., a", &like); });
  EXPECT_NE(e.message().find("'...' must be the last dimension"), std::string::npos);
  e = Catch([&] { s->ParseShape("_, _", &like); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  e = Catch([&] { s->ParseShape("(a, b))", nullptr); });
  EXPECT_EQ(e.code(), Code::kParseError);
}

// Specs as JAX users write them (issue 14): `_` and `...` take their sizes from the
// shape, spaces and one pair of parentheses around the spec change nothing, and a constant
// that differs from the shape's size is an error naming the dimension and both sizes.
TEST(Parse, SpecsAsJaxUsersWriteThem) {
  auto s = Scope::Create({});
  std::vector<int64_t> shape = {2, 3, 4, 5};
  for (const char* spec : {"_, n, ...", " ( _ , n , ... ) ", "(_, n, ...,)", "\t_,n,...\n"}) {
    EXPECT_EQ(s->ShapeToString(s->ParseShape(spec, &shape)), "(2, n, 4, 5)") << spec;
  }
  EXPECT_EQ(s->ShapeToString(s->ParseShape(" ( a , 2*b ) ", nullptr)),
            s->ShapeToString(s->ParseShape("a, 2*b", nullptr)));
  // `_` binds nothing: solving the spec against the shape finds n alone.
  SolveArg arg{"args[0]", s->ParseShape(" ( _, n, ... ) ", &shape), shape};
  Solution sol = Solve(s.get(), {arg}, SolveOptions());
  const int32_t n = s->FindVar("n");
  ASSERT_GE(n, 0);
  EXPECT_TRUE(sol.known[static_cast<size_t>(n)]);
  EXPECT_EQ(sol.values[static_cast<size_t>(n)], 3);
  EXPECT_EQ(s->FindVar("_"), -1);
  // Constants must match the shape where they stand.
  EXPECT_EQ(s->ShapeToString(s->ParseShape("2, n, 4, _", &shape)), "(2, n, 4, 5)");
  Error e = Catch([&] { s->ParseShape("_, 7, ...", &shape); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_EQ(e.message(),
            "dimension 1 of shape '_, 7, ...' is 7 but the 'like' shape has the different size 3 "
            "there");
  e = Catch([&] { s->ParseShape("(2, 3, 2*2, 6)", &shape); });
  EXPECT_NE(e.message().find("dimension 3 of shape"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("is 6 but the 'like' shape has the different size 5"),
            std::string::npos)
      << e.message();
  // Without a 'like' shape (or past its rank) constants are not checked.
  EXPECT_EQ(s->ShapeToString(s->ParseShape("7", nullptr)), "(7,)");
  std::vector<int64_t> short_shape = {2};
  EXPECT_EQ(s->ShapeToString(s->ParseShape("2, 7", &short_shape)), "(2, 7)");
}

TEST(Parse, Constraints) {
  auto s = Scope::Create({"a >= b + 8", "b > c", "c < 100", "d <= 7", "e == 2*f"});
  ASSERT_EQ(s->facts().size(), 5u);
  EXPECT_EQ(s->facts()[1].op, Cmp::kGt);
  EXPECT_EQ(s->ConstraintsToString(), "{a >= b + 8, b > c, c < 100, d <= 7, e == 2*f}");
  Error e = Catch([&] { Scope::Create({"a >= 1", "a + 1"}); });
  EXPECT_EQ(e.code(), Code::kParseError);
  EXPECT_EQ(e.message(),
            "syntax error in constraint 'a + 1' at column 5: expected a comparison ('>=', '<=', "
            "'==', '>' or '<') "
            "but found end of input");
  e = Catch([&] { Scope::Create({"a != 1"}); });
  EXPECT_EQ(e.code(), Code::kParseError);
}

}  // namespace
}  // namespace dim
}  // namespace shp
