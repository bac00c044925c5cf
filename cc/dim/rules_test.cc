// One test per rule of the decision procedure's rule table (rules/table.cc): each asks a
// question, through the public Scope API, whose answer needs the rule, and asks it again in
// a fresh scope with the rule skipped (SkipRuleForTesting) to show that the answer is then
// weaker. A rule that leaves the table fails its test.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/dim/decide.h"
#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

// Skips one rule (or turns the case analysis of max/min off) while in scope.
struct SkipRule {
  explicit SkipRule(const char* name) { SkipRuleForTesting(name); }
  ~SkipRule() { SkipRuleForTesting(nullptr); }
};
struct NoCaseSplits {
  NoCaseSplits() { SetCaseSplitsForTesting(false); }
  ~NoCaseSplits() { SetCaseSplitsForTesting(true); }
};

using Decls = std::vector<Scope::Declaration>;

// The answer of `a op b` in a fresh scope with `constraints` and `decls`.
Truth Ask(const std::vector<std::string>& constraints, const Decls& decls, const std::string& a,
          Cmp op, const std::string& b) {
  auto s = Scope::Create(constraints, decls);
  return Cmp3(s.get(), a, op, b);
}
Interval BoundsOf(const std::vector<std::string>& constraints, const Decls& decls,
                  const std::string& e) {
  auto s = Scope::Create(constraints, decls);
  return s->Bounds(s->Parse(e));
}

// `a op b` is TRUE with every rule and not decided with `rule` skipped.
void ExpectNeeds(const char* rule, const std::vector<std::string>& constraints, const Decls& decls,
                 const std::string& a, Cmp op, const std::string& b) {
  EXPECT_EQ(Ask(constraints, decls, a, op, b), Truth::kTrue) << a << " vs " << b;
  SkipRule cases("SmallValueCases");  // which decides one-variable orders on its own
  SkipRule skip(rule);
  EXPECT_EQ(Ask(constraints, decls, a, op, b), Truth::kUnknown) << rule << ": " << a << " vs " << b;
}

TEST(Rules, FactRow) {
  EXPECT_EQ(BoundsOf({"a + b <= 10"}, {}, "a + b").hi, 10);
  SkipRule skip("FactRow");
  EXPECT_EQ(BoundsOf({"a + b <= 10"}, {}, "a + b").hi, kPosInf);
}

TEST(Rules, FactPolynomialBounds) {
  // n^2 <= 10^6 gives n <= 1000 (the secant at the root); n^3 <= 1000 gives n <= 10.
  EXPECT_EQ(BoundsOf({"n*n <= 1000000"}, {}, "n").hi, 1000);
  EXPECT_EQ(BoundsOf({"n^3 <= 1000"}, {}, "n").hi, 10);
  // Any degree, certified by Taylor shifts (issue 43 item 5: PyTorch's example).
  const std::vector<std::string> cubic = {"s >= 2", "4*s^3 - 4*s^2 + s <= 2147483647"};
  EXPECT_EQ(BoundsOf(cubic, {}, "s").hi, 813);
  EXPECT_EQ(BoundsOf({"n >= 1", "n^3 == 64*n"}, {}, "n").lo, 8);
  SkipRule skip("FactPolynomialBounds");
  EXPECT_GT(BoundsOf({"n*n <= 1000000"}, {}, "n").hi, 1000);
  EXPECT_GT(BoundsOf({"n^3 <= 1000"}, {}, "n").hi, 10);
  EXPECT_GT(BoundsOf(cubic, {}, "s").hi, 813);
}

// The bounds from one-variable polynomial facts are sound: random polynomials of degree 2-5
// with small coefficients (real roots within +-40), every integer solution found by brute
// force lies within the bounds, and they are tight where the solutions are bounded and
// contiguous at an end.
TEST(Rules, FactPolynomialBoundsRandomSound) {
  std::mt19937 rng(43);
  int tightened = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int degree = 2 + static_cast<int>(rng() % 4);
    std::vector<int64_t> c(static_cast<size_t>(degree) + 1);
    for (int64_t& x : c) x = static_cast<int64_t>(rng() % 41) - 20;
    if (c.back() == 0) c.back() = 1;
    c[0] *= 1000;  // constants large enough for solutions away from 0
    const int64_t lo = static_cast<int64_t>(rng() % 21) - 10;
    const char* ops[] = {">=", "<=", "=="};
    const std::string op = ops[rng() % 3];
    std::string q;
    for (size_t k = 0; k < c.size(); ++k) {
      if (c[k] == 0) continue;
      q += (q.empty() ? "" : " + ") + std::string("(") + std::to_string(c[k]) + ")" +
           (k == 0 ? "" : "*n^" + std::to_string(k));
    }
    if (q.empty()) continue;
    const std::vector<std::string> facts = {q + " " + op + " 0"};
    Interval iv;
    try {
      iv = BoundsOf(facts, {{"n", lo, kPosInf}}, "n");
    } catch (const Error&) {
      continue;  // refused as unsatisfiable: checked below by the brute force
    }
    auto value = [&](int64_t n) {
      __int128 v = 0, p = 1;
      for (int64_t ck : c) {
        v += p * ck;
        p *= n;
      }
      return v;
    };
    for (int64_t n = lo; n <= lo + 3000; ++n) {
      const __int128 v = value(n);
      const bool holds = op == ">=" ? v >= 0 : op == "<=" ? v <= 0 : v == 0;
      if (holds) {
        ASSERT_TRUE(iv.lo <= n && n <= iv.hi) << facts[0] << ", n >= " << lo << ": n = " << n
                                              << " outside [" << iv.lo << ", " << iv.hi << "]";
      }
    }
    tightened += iv.lo > lo || iv.hi != kPosInf;
  }
  EXPECT_GT(tightened, 100);
}

TEST(Rules, CongruenceModulus) {
  // mod(s, 3) == 0 and mod(s, 5) == 0: s is a multiple of 15, so s >= 15.
  const std::vector<std::string> facts = {"mod(s, 3) == 0", "mod(s, 5) == 0"};
  EXPECT_EQ(BoundsOf(facts, {}, "s").lo, 15);
  SkipRule residues("CongruenceResidues");  // which finds the same from the residues
  SkipRule skip("CongruenceModulus");
  EXPECT_LT(BoundsOf(facts, {}, "s").lo, 15);
}

TEST(Rules, CongruenceResidues) {
  // A chain of congruences on nested floors (PyTorch's example, issue 43 item 2): s is even,
  // s / 2 a multiple of 8 and s / 16 == 2 (mod 4), so s == 32 (mod 64).
  const std::vector<std::string> chain = {"mod(s, 2) == 0", "mod(floordiv(s, 2), 8) == 0",
                                          "mod(floordiv(s, 16) + 2, 4) == 0"};
  ExpectNeeds("CongruenceResidues", chain, {}, "mod(s, 64)", Cmp::kEq, "32");
  ExpectNeeds("CongruenceResidues", chain, {}, "floordiv(s, 32)", Cmp::kEq,
              "2*floordiv(s, 64) + 1");
  // No residue left: the scope is refused.
  EXPECT_THROW(Scope::Create({"mod(floordiv(s, 3), 2) == 1", "mod(s, 6) <= 2"}), Error);
  EXPECT_THROW(Scope::Create({"mod(s, 4) == 1", "mod(floordiv(s, 2), 3) == 2",
                              "mod(floordiv(s, 4), 3) == 0"}),
               Error);
  // The same congruences with a satisfiable third fact: s == 5 (mod 12).
  auto ok = Scope::Create(
      {"mod(s, 4) == 1", "mod(floordiv(s, 2), 3) == 2", "mod(floordiv(s, 4), 3) == 1"});
  EXPECT_EQ(Cmp3(ok.get(), "mod(s, 12)", Cmp::kEq, "5"), Truth::kTrue);
}

TEST(Rules, QuerySquare) {
  ExpectNeeds("QuerySquare", {}, {{"a", -100, 100}, {"b", -100, 100}}, "(a - b)^2", Cmp::kGe, "0");
}

TEST(Rules, DivModWhereDefined) {
  // y may be 0; where floordiv(x, y) is defined, x == y makes it 1.
  ExpectNeeds("DivModWhereDefined", {"x == y"}, {{"x", 0, 100}, {"y", 0, 100}}, "floordiv(x, y)",
              Cmp::kEq, "1");
}

TEST(Rules, DivisorPositive) {
  // y may be 0: where mod(x, y) is defined, y >= 1. (DivModRange's rows imply it too: 0 <=
  // x - y*floordiv(x, y) <= y - 1. Skipped, DivisorPositive alone still decides it.)
  const Decls decls = {{"x", 0, 100}, {"y", 0, 10}};
  SkipRule skip_range("DivModRange");
  ExpectNeeds("DivisorPositive", {}, decls, "mod(x, y) + y", Cmp::kGe, "1");
}

TEST(Rules, DivModRange) { ExpectNeeds("DivModRange", {}, {}, "4*floordiv(x, 4)", Cmp::kLe, "x"); }

TEST(Rules, CongruenceRemainder) {
  // y is a multiple of 2 and of 3, so of 6: mod(y + 1, 6) == 1.
  SkipRule residues("CongruenceResidues");  // which finds the same from the residues
  ExpectNeeds("CongruenceRemainder", {"mod(y, 2) == 0", "mod(y, 3) == 0"}, {}, "mod(y + 1, 6)",
              Cmp::kEq, "1");
}

TEST(Rules, ModEquality) {
  ExpectNeeds("ModEquality", {}, {}, "mod(x, 4) + 4*floordiv(x, 4)", Cmp::kEq, "x");
}

TEST(Rules, ModFormForProducts) {
  // mod(n*m, 4) <= mod(n, 4)*m*k: mod(n, 4) becomes a column only in the closure (a factor
  // of the product), after the product rule gathered its equalities; handed over, its
  // equality times m ties the two sides.
  ExpectNeeds("ModFormForProducts", {}, {}, "m*mod(n, 4)*k", Cmp::kGe, "mod(n*m, 4)");
}

TEST(Rules, MaxMinOperands) {
  NoCaseSplits no_splits;  // the case analysis would decide it on its own
  ExpectNeeds("MaxMinOperands", {}, {}, "max(a, b)", Cmp::kGe, "a");
}

TEST(Rules, MaxPlusMin) {
  NoCaseSplits no_splits;
  ExpectNeeds("MaxPlusMin", {}, {{"a", -10, 10}, {"b", -10, 10}}, "max(a, b) + min(a, b)", Cmp::kEq,
              "a + b");
}

TEST(Rules, EvenPowers) {
  // w^2 >= w at every integer w, which intervals and McCormick miss around 0.
  ExpectNeeds("EvenPowers", {}, {{"w", -10, 10}}, "w*w", Cmp::kGe, "w");
}

TEST(Rules, EqualityProducts) {
  // p*q == r gives p*p*q == p*r.
  ExpectNeeds("EqualityProducts", {"p*q == r"}, {}, "p*p*q", Cmp::kEq, "p*r");
}

TEST(Rules, McCormick) {
  // (a - 1)(b - 1) >= 0 for a, b >= 1.
  ExpectNeeds("McCormick", {}, {}, "a*b", Cmp::kGe, "a + b - 1");
}

TEST(Rules, ColumnInterval) {
  // c <= a needs a's declared range as a row to bound c.
  EXPECT_EQ(BoundsOf({"c <= a"}, {{"a", 1, 5}}, "c").hi, 5);
  SkipRule skip("ColumnInterval");
  EXPECT_EQ(BoundsOf({"c <= a"}, {{"a", 1, 5}}, "c").hi, kPosInf);
}

}  // namespace
}  // namespace dim
}  // namespace shp
