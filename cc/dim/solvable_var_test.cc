// dim::SolvableVar: direct cases, and agreement with dim::Solve on random expressions.
#include <gtest/gtest.h>

#include "cc/dim/eval.h"
#include "cc/dim/solve.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

// The name of the variable `text == value` determines when `known_names` are known, or "-".
std::string Solvable(Scope* s, const std::string& text,
                     const std::vector<std::string>& known_names) {
  const Expr* e = s->Parse(text);
  std::vector<bool> known(s->variables().size(), false);
  for (const std::string& n : known_names) known[static_cast<size_t>(s->FindVar(n))] = true;
  int32_t v = SolvableVar(*s, e, known);
  return v < 0 ? "-" : s->VarName(v);
}

TEST(SolvableVar, Cases) {
  auto s = Scope::Create({});
  s->Parse("a + b + c + d");  // fixes the variable indices
  EXPECT_EQ(Solvable(s.get(), "2*a + 3", {}), "a");
  EXPECT_EQ(Solvable(s.get(), "a*b + b", {"a"}), "b");     // linear once a is known
  EXPECT_EQ(Solvable(s.get(), "a*b", {}), "-");            // two unknown factors in one term
  EXPECT_EQ(Solvable(s.get(), "a + b", {}), "-");          // two unknown variables
  EXPECT_EQ(Solvable(s.get(), "a^2 + a", {}), "-");        // two powers of one unknown
  EXPECT_EQ(Solvable(s.get(), "3*a^2 + b", {"b"}), "a");   // a perfect power
  EXPECT_EQ(Solvable(s.get(), "a + b", {"a", "b"}), "-");  // nothing unknown
  EXPECT_EQ(Solvable(s.get(), "7", {}), "-");
  EXPECT_EQ(Solvable(s.get(), "floordiv(a, 2)", {}), "-");  // floordiv is not inverted
  EXPECT_EQ(Solvable(s.get(), "floordiv(a, b) + c", {"a", "b"}),
            "c");  // a known atom is a known factor
  EXPECT_EQ(Solvable(s.get(), "max(a, 2*b + 1)", {"a"}), "b");
  EXPECT_EQ(Solvable(s.get(), "min(a, b) + c", {"a", "c"}), "b");
  EXPECT_EQ(Solvable(s.get(), "max(a, b)", {}), "-");         // no known operand
  EXPECT_EQ(Solvable(s.get(), "max(a, b) + c", {"a"}), "-");  // max and another unknown
  EXPECT_EQ(Solvable(s.get(), "max(a, b*c)", {"a"}), "-");    // the other operand is not solvable
  EXPECT_EQ(Solvable(s.get(), "max(a, b)^2", {"a"}), "-");    // a power of an opaque atom
}

// Whenever SolvableVar names a variable, Solve determines it from a dimension computed at a
// random valuation, or else the value genuinely does not decide it (another value of the
// variable gives the same dimension: max(x, k) with x <= k, or a known factor that is 0).
TEST(SolvableVar, AgreesWithSolve) {
  const std::vector<std::string> names = {"a", "b", "c"};
  std::mt19937_64 rng(424242);
  int named = 0, determined = 0;
  for (int round = 0; round < 3000; ++round) {
    std::unique_ptr<Scope> s = ScopeWithVars(names);
    const Expr* e = RandomExpr(s.get(), &rng, names, 3);
    std::vector<bool> known(names.size());
    for (size_t v = 0; v < names.size(); ++v) known[v] = rng() % 2;
    int32_t v = SolvableVar(*s, e, known);
    if (v < 0) continue;
    ASSERT_FALSE(known[static_cast<size_t>(v)]);
    ++named;
    std::vector<int64_t> vals;
    for (size_t i = 0; i < names.size(); ++i) vals.push_back(1 + static_cast<int64_t>(rng() % 6));
    int64_t dim;
    try {
      dim = Evaluate(e, vals);
    } catch (const Error&) {
      continue;  // overflow: no shape to solve from
    }
    if (dim < 0) continue;  // not a shape
    Solution preset{vals, known};
    SolveOptions o;
    o.preset = &preset;
    o.check_facts = false;
    bool solved = false;
    try {
      Solution sol = Solve(s.get(), {{"args[0]", {e}, {dim}}}, o);
      solved = sol.known[static_cast<size_t>(v)];
      if (solved) {
        ASSERT_EQ(sol.values[static_cast<size_t>(v)], vals[static_cast<size_t>(v)])
            << s->ToString(e);
      }
    } catch (const Error& err) {
      ASSERT_EQ(err.code(), Code::kUnsolvable) << s->ToString(e) << ": " << err.message();
    }
    if (solved) {
      ++determined;
      continue;
    }
    bool ambiguous = false;
    for (int64_t d = -2; d <= 2 && !ambiguous; ++d) {
      if (d == 0) continue;
      std::vector<int64_t> other = vals;
      other[static_cast<size_t>(v)] += d;
      try {
        ambiguous = Evaluate(e, other) == dim;
      } catch (const Error&) {
      }
    }
    ASSERT_TRUE(ambiguous) << "Solve did not determine " << s->VarName(v) << " from "
                           << s->ToString(e) << " = " << dim;
  }
  EXPECT_GT(named, 300);
  EXPECT_GT(determined, 200);
}

}  // namespace
}  // namespace dim
}  // namespace shp
