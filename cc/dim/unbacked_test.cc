// Unbacked (data-dependent) variables: creation and names, derived bounds, no hints, the
// teaching error, and a randomized soundness test: every Bounds and Compare answer over an
// unbacked variable agrees with brute force over the values its op allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace {

Error Catch(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(Code::kOk, "");
}

TEST(Unbacked, NamesRangesAndDerivedFacts) {
  auto s = Scope::Create({});
  const Expr* n = s->Var("n");
  const Expr* u0 = s->NewUnbacked("", 0, kPosInf, s->Scale(n, 4), "nonzero of x");
  const Expr* u1 = s->NewUnbacked("", 0, kPosInf, nullptr, "size_from_value");
  EXPECT_EQ(s->ToString(u0), "u0");
  EXPECT_EQ(s->ToString(u1), "u1");
  EXPECT_TRUE(s->IsUnbacked(u0->AsVar()));
  EXPECT_FALSE(s->IsUnbacked(n->AsVar()));
  EXPECT_EQ(s->variables()[static_cast<size_t>(u0->AsVar())].origin, "nonzero of x");
  EXPECT_EQ(s->Compare(u0, Cmp::kLe, s->Scale(n, 4)), Truth::kTrue);
  EXPECT_EQ(s->Compare(u0, Cmp::kLe, s->Scale(n, 3)), Truth::kUnknown);
  EXPECT_EQ(s->Compare(u0, Cmp::kGe, s->Constant(0)), Truth::kTrue);
  // A taken name, an empty range.
  EXPECT_EQ(Catch([&] { s->NewUnbacked("n", 0, 5, nullptr, "x"); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { s->NewUnbacked("k", 5, 4, nullptr, "x"); }).code(), Code::kInvalidArgument);
  // No hints; guards teach the check.
  Error h = Catch([&] { s->SetHint("u0", 3); });
  EXPECT_EQ(h.code(), Code::kInvalidArgument);
  EXPECT_NE(h.message().find("shp_scope_check"), std::string::npos);
  Error g = Catch([&] { s->Guard(u0, Cmp::kGe, s->Constant(1), "", "shp_dim_guard"); });
  EXPECT_EQ(g.code(), Code::kInconclusive);
  EXPECT_NE(g.message().find("nonzero of x"), std::string::npos) << g.message();
  EXPECT_NE(g.message().find("u0 <= 4*n"), std::string::npos) << g.message();
  // The derived fact survives a declaration that reloads the constraints.
  s->Declare("m", 1, 10);
  EXPECT_EQ(s->Compare(u0, Cmp::kLe, s->Scale(n, 4)), Truth::kTrue);
  // A check is a fact.
  s->Check(u0, Cmp::kGe, s->Constant(1), "one");
  EXPECT_EQ(s->Compare(u0, Cmp::kGt, s->Constant(0)), Truth::kTrue);
}

// Random scopes: a, b in random declared ranges, u = an unbacked size with a random upper
// bound (a product or sum of a, b and constants), then random comparisons of u with
// expressions over a, b. Every decided answer must hold for every (a, b, u) with
// lo <= u <= upper(a, b); Bounds(u) must contain every such u.
TEST(Unbacked, RandomizedSoundnessAgainstBruteForce) {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> small(0, 6);
  long decided = 0, checks = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t alo = 1 + small(rng), ahi = alo + small(rng);
    const int64_t blo = small(rng), bhi = blo + small(rng);
    auto s = Scope::Create({}, {{"a", alo, ahi}, {"b", blo, bhi}});
    const Expr* a = s->Var("a");
    const Expr* b = s->Var("b");
    const int kind = static_cast<int>(rng() % 4);
    const Expr* upper = kind == 0   ? s->Mul(a, b)
                        : kind == 1 ? s->Add(s->Scale(a, 2), b)
                        : kind == 2 ? s->Mul(a, s->Constant(3))
                                    : s->Max(a, b);
    const int64_t ulo = static_cast<int64_t>(rng() % 2);
    const Expr* u = s->NewUnbacked("", ulo, kPosInf, upper, "test op");
    std::vector<int64_t> vals(s->variables().size(), 0);
    std::vector<bool> known(vals.size(), true);
    const size_t ia = static_cast<size_t>(a->AsVar()), ib = static_cast<size_t>(b->AsVar()),
                 iu = static_cast<size_t>(u->AsVar());
    // Every valuation the facts allow.
    std::vector<std::vector<int64_t>> all;
    for (int64_t va = alo; va <= ahi; ++va) {
      for (int64_t vb = blo; vb <= bhi; ++vb) {
        vals[ia] = va;
        vals[ib] = vb;
        const int64_t up = s->Evaluate(upper, vals, known);
        for (int64_t vu = ulo; vu <= up; ++vu) {
          vals[iu] = vu;
          all.push_back(vals);
        }
      }
    }
    Interval iv = s->Bounds(u);
    for (const auto& v : all) {
      ASSERT_LE(iv.lo, v[iu]) << "trial " << trial;
      ASSERT_GE(iv.hi, v[iu]) << "trial " << trial;
    }
    for (int q = 0; q < 8; ++q) {
      const Expr* e = rng() % 2 ? s->Add(s->Scale(a, 1 + small(rng) % 3), s->Constant(small(rng)))
                                : s->Add(b, s->Constant(small(rng) - 3));
      const Cmp op = static_cast<Cmp>(rng() % 6);
      const Truth t = s->Compare(u, op, e);
      if (t == Truth::kUnknown) continue;
      ++decided;
      for (const auto& v : all) {
        ++checks;
        const bool holds = CmpHolds(v[iu], op, s->Evaluate(e, v, known));
        ASSERT_EQ(holds, t == Truth::kTrue)
            << "trial " << trial << ": " << s->ToString(u) << " " << CmpSymbol(op) << " "
            << s->ToString(e) << " answered " << static_cast<int>(t) << " under "
            << s->FactToString(s->facts().back());
      }
    }
  }
  EXPECT_GT(decided, 100);
  EXPECT_GT(checks, 10000);
}

}  // namespace
}  // namespace dim
}  // namespace shp
