// dim::Evaluate and dim::CollectVars: agreement with Scope::Evaluate on random expressions,
// the runtime's error messages, and concurrent use.
#include "cc/dim/eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// The value, or "E<code>" when evaluation throws.
template <typename F>
std::string Outcome(F f) {
  try {
    return std::to_string(f());
  } catch (const Error& e) {
    return "E" + std::to_string(static_cast<int>(e.code()));
  }
}

TEST(Evaluate, AgreesWithScopeEvaluateOnRandomExpressions) {
  std::mt19937_64 rng(20261130);
  const std::vector<std::string> names = {"a", "b", "c"};
  int compared = 0, thrown = 0;
  for (int round = 0; round < 300; ++round) {
    auto s = ScopeWithVars(names);
    const Expr* e = RandomExpr(s.get(), &rng, names, 4);
    for (int k = 0; k < 8; ++k) {
      std::vector<int64_t> vals;
      for (size_t v = 0; v < names.size(); ++v) {
        // Mostly in range; sometimes 0, negative or huge (Evaluate does not check ranges).
        int pick = static_cast<int>(rng() % 10);
        vals.push_back(pick == 0   ? 0
                       : pick == 1 ? -static_cast<int64_t>(rng() % 7)
                       : pick == 2 ? static_cast<int64_t>(rng() >> 2)
                                   : 1 + static_cast<int64_t>(rng() % 9));
      }
      std::vector<bool> known(vals.size(), true);
      std::string want = Outcome([&] { return s->Evaluate(e, vals, known); });
      std::string got = Outcome([&] { return Evaluate(e, vals); });
      ASSERT_EQ(got, want) << s->ToString(e);
      ++compared;
      thrown += want[0] == 'E';
    }
  }
  EXPECT_GT(thrown, 10);  // the error paths are exercised too
  EXPECT_GT(compared - thrown, 1000);
}

TEST(Evaluate, Values) {
  auto s = Scope::Create({});
  const Expr* e = s->Parse("2*a^3*b - floordiv(a, 3) + mod(b, 4)*max(a, b) + min(a, 2) - 7");
  // 2*27*5 - 1 + 1*5 + 2 - 7
  EXPECT_EQ(Evaluate(e, {3, 5}), 269);
  EXPECT_EQ(Evaluate(s->Constant(-9), {}), -9);
  EXPECT_EQ(Evaluate(s->Parse("floordiv(-a, 4) + mod(-a, 4)"), {5}), -2 + 3);
}

TEST(Evaluate, RuntimeMessages) {
  auto s = Scope::Create({});
  Error div = Catch([&] { Evaluate(s->Parse("floordiv(a, b)"), {4, 0}); });
  EXPECT_EQ(div.code(), Code::kDivisionByZero);
  EXPECT_EQ(div.message(), "runtime: a dimension divides by zero");
  Error sum = Catch([&] { Evaluate(s->Parse("a + b"), {kMax, 1}); });
  EXPECT_EQ(sum.code(), Code::kOverflow);
  EXPECT_EQ(sum.message(), "runtime: a dimension overflows int64");
  Error prod = Catch([&] { Evaluate(s->Parse("a*b"), {int64_t{1} << 40, int64_t{1} << 40}); });
  EXPECT_EQ(prod.code(), Code::kOverflow);
  EXPECT_EQ(prod.message(), "runtime: an array size overflows int64");
  EXPECT_EQ(Catch([&] {
              Evaluate(s->Parse("floordiv(a, b)"), {kMin, -1});
            }).code(),
            Code::kOverflow);
  // The first failure in normal-form order wins: the degree-2 term comes first.
  Error first = Catch([&] { Evaluate(s->Parse("a*c + floordiv(a, b)"), {kMax, 0, 2}); });
  EXPECT_EQ(first.code(), Code::kOverflow);
}

TEST(Evaluate, PowersStepByStep) {
  auto s = Scope::Create({});
  const Expr* a = s->Var("a");
  // The largest exponent the limits allow (cc/base/limits.h: kMaxPow = 64, as the loader).
  const Expr* big = s->Pow(a, 64);
  EXPECT_EQ(Evaluate(big, {1}), 1);
  EXPECT_EQ(Evaluate(big, {-1}), 1);
  EXPECT_EQ(Evaluate(s->Pow(a, 63), {-1}), -1);
  EXPECT_EQ(Evaluate(big, {0}), 0);
  EXPECT_EQ(Catch([&] { Evaluate(big, {2}); }).code(), Code::kOverflow);
  EXPECT_EQ(Catch([&] { s->Pow(a, 65); }).code(), Code::kUnsupported);
  EXPECT_EQ(Catch([&] { s->Pow(a, 1 << 20); }).code(), Code::kUnsupported);
  EXPECT_EQ(Evaluate(s->Pow(a, 62), {2}), int64_t{1} << 62);
  EXPECT_EQ(Evaluate(s->Scale(s->Pow(a, 63), -1), {2}), kMin);  // -(2^63) fits: -1 * 2 * ... * 2
  // kMin * (-1)^k: the first step leaves int64, and the 128-bit retry gives kMin for even k;
  // for odd k the value 2^63 itself overflows.
  const Expr* scaled = s->Scale(s->Pow(a, 2), kMin);
  EXPECT_EQ(Evaluate(scaled, {-1}), kMin);
  EXPECT_EQ(Catch([&] { Evaluate(s->Scale(s->Pow(a, 3), kMin), {-1}); }).code(), Code::kOverflow);
  EXPECT_EQ(Evaluate(scaled, {1}), kMin);
  // A zero factor makes the product 0, and later factors are still evaluated (and checked).
  EXPECT_EQ(Evaluate(s->Parse("a * b^5"), {0, 1000000}), 0);
  EXPECT_EQ(Catch([&] {
              Evaluate(s->Parse("a * floordiv(b, c)"), {0, 1, 0});
            }).code(),
            Code::kDivisionByZero);
}

// An expanded power has terms near 2^63 where its value is small: the 128-bit retry gives the
// value; where the value itself (or an atom's operand) leaves int64, the first error stands.
TEST(Evaluate, ExpandedPowersWhoseTermsOverflow) {
  auto s = Scope::Create({});
  const Expr* e = s->Parse("((a - 2)^3)^9");  // a^27 - 54*a^26 + ... - 569634324480*a^12 ...
  for (int64_t a = -3; a <= 7; ++a) {
    __int128 want = 1;
    for (int i = 0; i < 27; ++i) want *= a - 2;
    if (want < kMin || want > kMax) {
      EXPECT_EQ(Catch([&] { Evaluate(e, {a}); }).code(), Code::kOverflow) << a;
      EXPECT_EQ(Catch([&] { s->Evaluate(e, {a}, {true}); }).code(), Code::kOverflow) << a;
      continue;
    }
    EXPECT_EQ(Evaluate(e, {a}), static_cast<int64_t>(want)) << a;
    EXPECT_EQ(s->Evaluate(e, {a}, {true}), static_cast<int64_t>(want)) << a;
  }
  EXPECT_EQ(Evaluate(e, {4}), int64_t{1} << 27);
  // Inside an atom: the operand's value is what counts.
  EXPECT_EQ(Evaluate(s->Parse("floordiv(((a - 2)^3)^9, b)"), {4, 2}), int64_t{1} << 26);
  // The error of the first walk stands when the retry fails too (here the value leaves int64).
  Error prod = Catch([&] { Evaluate(s->Parse("a*b - 1"), {int64_t{1} << 40, int64_t{1} << 40}); });
  EXPECT_EQ(prod.message(), "runtime: an array size overflows int64");
}

TEST(Evaluate, ConcurrentReadersAgree) {
  auto s = Scope::Create({});
  std::vector<const Expr*> es;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) es.push_back(RandomExpr(s.get(), &rng, {"a", "b"}, 4));
  std::vector<int64_t> vals = {3, 7};
  std::vector<std::string> want;
  for (const Expr* e : es) want.push_back(Outcome([&] { return Evaluate(e, vals); }));
  std::vector<std::thread> ts;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      for (int rep = 0; rep < 200; ++rep) {
        for (size_t i = 0; i < es.size(); ++i)
          bad[t] += Outcome([&] { return Evaluate(es[i], vals); }) != want[i];
      }
    });
  }
  for (std::thread& t : ts) t.join();
  for (int b : bad) EXPECT_EQ(b, 0);
}

std::vector<std::string> Names(const std::vector<VarRef>& refs) {
  std::vector<std::string> out;
  for (const VarRef& r : refs) out.push_back(r.name);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CollectVars, EachVariableOnce) {
  auto s = Scope::Create({});
  std::vector<VarRef> out;
  CollectVars(nullptr, &out);
  EXPECT_TRUE(out.empty());
  CollectVars(s->Constant(4), &out);
  EXPECT_TRUE(out.empty());
  CollectVars(s->Parse("a*b + floordiv(c, a) + max(b, d^2)"), &out);
  EXPECT_EQ(Names(out), (std::vector<std::string>{"a", "b", "c", "d"}));
  for (const VarRef& r : out) EXPECT_EQ(r.index, s->FindVar(r.name));
  CollectVars(s->Parse("e + a"), &out);  // already collected variables are not repeated
  EXPECT_EQ(Names(out), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST(CollectVars, AgreesWithVarsOf) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    auto s = Scope::Create({});
    const Expr* e = RandomExpr(s.get(), &rng, {"a", "b", "c", "d"}, 4);
    std::vector<VarRef> refs;
    CollectVars(e, &refs);
    std::vector<int32_t> got;
    for (const VarRef& r : refs) got.push_back(r.index);
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, s->VarsOf(e)) << s->ToString(e);
  }
}

}  // namespace
}  // namespace dim
}  // namespace shp
