// Printing and parsing agree on every expression the builders can make (issue 17, finding 6),
// and parse errors quote long or binary input safely (finding 7).
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cc/dim/parse.h"
#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

using ::shp::testing::Contains;
using ::shp::testing::OnSmallStack;

constexpr size_t kSmallStack = 256 * 1024;

void ExpectRoundTrip(Scope* s, const Expr* e) {
  std::string text = s->ToString(e);
  const Expr* back = nullptr;
  try {
    back = s->Parse(text);
  } catch (const Error& err) {
    ADD_FAILURE() << "'" << text.substr(0, 200) << "' does not parse back: " << err.message();
    return;
  }
  EXPECT_EQ(back, e) << text.substr(0, 200);
}

// Round-trips what `build` makes; builds that overflow are skipped (not expressions).
void ExpectRoundTripOf(Scope* s, const std::function<const Expr*()>& build) {
  const Expr* e = nullptr;
  try {
    e = build();
  } catch (const Error& err) {
    EXPECT_TRUE(err.code() == Code::kOverflow || err.code() == Code::kDivisionByZero)
        << err.message();
    return;
  }
  ExpectRoundTrip(s, e);
}

TEST(RoundTrip, ExtremeConstants) {
  auto s = Scope::Create({});
  Scope* p = s.get();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const Expr* a = s->Var("a");
  const Expr* b = s->Var("b");
  for (int64_t c : {kMin, kMin + 1, kMax, kMax - 1, int64_t{-1}, int64_t{0}, int64_t{1}}) {
    SCOPED_TRACE(c);
    const Expr* k = s->Constant(c);
    ExpectRoundTrip(p, k);
    ExpectRoundTrip(p, s->Mul(k, a));
    ExpectRoundTripOf(p, [&] { return p->Add(p->Mul(k, a), b); });
    ExpectRoundTripOf(p,
                      [&] { return p->Add(p->Mul(k, p->Mul(a, a)), p->Mul(b, p->Constant(3))); });
    ExpectRoundTripOf(p, [&] { return p->Add(a, k); });
    ExpectRoundTripOf(p, [&] { return p->Sub(b, p->Mul(k, a)); });
    ExpectRoundTripOf(p, [&] { return p->Max(a, k); });
    ExpectRoundTripOf(p, [&] { return p->Min(k, p->Mul(k, b)); });
    ExpectRoundTripOf(p, [&] { return p->FloorDiv(a, k); });
    ExpectRoundTripOf(p, [&] { return p->Mod(p->Add(a, b), k); });
    ExpectRoundTripOf(p, [&] { return p->Mul(k, p->FloorDiv(a, p->Add(b, p->Constant(1)))); });
    ExpectRoundTripOf(p, [&] { return p->Max(p->Sub(p->Mul(k, a), b), p->Mul(k, b)); });
  }
  EXPECT_EQ(s->ToString(s->Constant(kMin)), "-9223372036854775808");
}

// One more level of each kind of atom around e (none that the decision procedure folds).
const Expr* Wrap(Scope* s, int kind, const Expr* e) {
  const Expr* b = s->Var("b");
  switch (kind) {
    case 0:
      return s->FloorDiv(s->Add(e, s->Constant(1)), b);
    case 1:
      return s->Mod(s->Add(e, s->Constant(1)), b);
    case 2:
      return s->Max(s->Sub(e, s->Var("c")), b);
    default:
      return s->Min(s->Sub(b, e), s->Constant(7));
  }
}

TEST(RoundTrip, DeepestBuildableExpressionParsesBackOnASmallStack) {
  // Under the sanitizers only the max chain: each floordiv/mod/min level re-runs the builder's
  // simplification proofs, ~10x slower there (the four chains were ~75 s of CI); the default
  // build checks all four kinds.
  for (int kind = ::shp::testing::kSanitized ? 2 : 0; kind < (::shp::testing::kSanitized ? 3 : 4);
       ++kind) {
    OnSmallStack(kSmallStack, [&] {
      SCOPED_TRACE(kind);
      auto s = Scope::Create({});
      const Expr* e = s->Var("a");
      for (int i = 0; i < kMaxNestingDepth; ++i) e = Wrap(s.get(), kind, e);
      ExpectRoundTrip(s.get(), e);
      // One level more is refused by the builder, with the limit in the message.
      Error err = Catch([&] { Wrap(s.get(), kind, e); });
      EXPECT_EQ(err.code(), Code::kUnsupported);
      EXPECT_TRUE(Contains(err.message(), "nested too deeply (more than 1000 levels"));
    });
  }
}

TEST(RoundTrip, HundredThousandDeepTextIsRefusedOnASmallStack) {
  const size_t n = 100000;
  std::vector<std::string> texts = {
      std::string(n, '(') + "a" + std::string(n, ')'),
      [&] {
        std::string t;
        for (size_t i = 0; i < n; ++i) t += "floordiv(";
        t += "a";
        for (size_t i = 0; i < n; ++i) t += ", 2)";
        return t;
      }(),
      [&] {
        std::string t;
        for (size_t i = 0; i < n; ++i) t += "max(-";
        return t + "a";
      }(),
  };
  for (const std::string& text : texts) {
    OnSmallStack(kSmallStack, [&] {
      auto s = Scope::Create({});
      Error e = Catch([&] { s->Parse(text); });
      EXPECT_EQ(e.code(), Code::kParseError);
      EXPECT_LT(e.message().size(), 600u);
      e = Catch([&] { s->ParseShape(text + ", " + text, nullptr); });
      EXPECT_EQ(e.code(), Code::kParseError);
      e = Catch([&] { Scope::Create({text + " >= 1"}); });
      EXPECT_EQ(e.code(), Code::kParseError);
    });
  }
  // A long run of unary minuses is not nesting: it parses, iteratively.
  OnSmallStack(kSmallStack, [&] {
    auto s = Scope::Create({});
    EXPECT_EQ(s->ToString(s->Parse(std::string(n, '-') + "a")), "a");
    EXPECT_EQ(s->ToString(s->Parse(std::string(n + 1, '-') + "a")), "-a");
  });
}

TEST(RoundTrip, ParserAcceptsExactlyTheBuildersDepth) {
  auto s = Scope::Create({});
  auto nested = [](int d) {
    std::string t;
    for (int i = 0; i < d; ++i) t += "max(-";
    t += "a";
    for (int i = 0; i < d; ++i) t += ", b)";
    return t;
  };
  EXPECT_NE(s->Parse(nested(kMaxNestingDepth)), nullptr);
  Error e = Catch([&] { s->Parse(nested(kMaxNestingDepth + 1)); });
  EXPECT_EQ(e.code(), Code::kParseError);
  EXPECT_TRUE(Contains(e.message(), "nested"));
}

TEST(Messages, LongInputIsQuotedAroundTheErrorColumn) {
  auto s = Scope::Create({});
  std::string text = std::string(600000, 'a') + " $ " + std::string(300000, 'b');
  Error e = Catch([&] { s->Parse(text); });
  EXPECT_EQ(e.code(), Code::kParseError);
  EXPECT_LT(e.message().size(), 400u) << e.message().substr(0, 1000);
  EXPECT_TRUE(Contains(e.message(), "at column 600001"));
  EXPECT_TRUE(Contains(e.message(), "a $ b"));
  EXPECT_TRUE(Contains(e.message(), "..."));
  // Short inputs are still quoted whole.
  e = Catch([&] { s->Parse("a +"); });
  EXPECT_EQ(e.message(),
            "syntax error in symbolic dimension 'a +' at column 3: expected a dimension "
            "expression but found end of input");
  // Errors outside the syntax quote a bounded text too.
  std::vector<int64_t> like = {3};
  e = Catch([&] { s->ParseShape("_, _, " + std::string(100000, 'c'), &like); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_LT(e.message().size(), 400u);
}

TEST(Messages, ControlCharactersAndInvalidUtf8AreEscaped) {
  auto s = Scope::Create({});
  Error e = Catch([&] { s->Parse(std::string("a +\x01\x1b[31m \xff\xfe b")); });
  EXPECT_EQ(e.code(), Code::kParseError);
  EXPECT_TRUE(Contains(e.message(), "a +\\x01\\x1b[31m \\xff\\xfe b")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "found '\\x01'")) << e.message();
  // Valid UTF-8 stays as it is.
  e = Catch([&] { s->Parse("a \xc3\xa9 b"); });
  EXPECT_TRUE(Contains(e.message(), "found '\xc3\xa9'")) << e.message();
  // A truncated multi-byte character and a NUL.
  e = Catch([&] { s->Parse(std::string("a \xc3", 3)); });
  EXPECT_TRUE(Contains(e.message(), "'a \\xc3'")) << e.message();
  e = Catch([&] { s->Parse(std::string("a \0 b", 5)); });
  EXPECT_TRUE(Contains(e.message(), "a \\x00 b")) << e.message();
  // Constraints and check messages quoted by the scope are escaped too.
  auto c = Scope::Create({"a >=\t\nb + 1"}, {});
  EXPECT_TRUE(Contains(c->ConstraintsToString(), "{a >=\\x09\\x0ab + 1}"))
      << c->ConstraintsToString();
  e = Catch([&] { c->Check(c->Parse("a"), Cmp::kLt, c->Parse("b"), "bad\nline\xc0"); });
  EXPECT_EQ(e.code(), Code::kUnsatisfiable);
  EXPECT_TRUE(Contains(e.message(), ": bad\\x0aline\\xc0")) << e.message();
  // Names reported by the scope are escaped too.
  e = Catch([&] { s->Var("x\ny"); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "x\\x0ay")) << e.message();
}

}  // namespace
}  // namespace dim
}  // namespace shp
