// Hints and guards in the dim engine: hints never change an answer, a guard is the comparison
// or its negation that the hints satisfy, and guards are facts that stay sound.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

TEST(Hints, NegateCmpIsTheComplement) {
  for (int op = 0; op <= 5; ++op) {
    for (int64_t a = -2; a <= 2; ++a) {
      for (int64_t b = -2; b <= 2; ++b) {
        EXPECT_NE(CmpHolds(a, static_cast<Cmp>(op), b),
                  CmpHolds(a, NegateCmp(static_cast<Cmp>(op)), b));
      }
    }
  }
}

TEST(Hints, EvaluateOnHintsNamesMissingVariables) {
  auto s = Scope::Create({});
  const Expr* e = s->Parse("2*a + floordiv(b, 3)");
  int64_t v = 0;
  std::vector<std::string> missing;
  s->SetHint("a", 4);
  EXPECT_FALSE(s->EvaluateOnHints(e, &v, &missing));
  EXPECT_EQ(std::vector<std::string>{"b"}, missing);
  s->SetHint("b", 7);
  EXPECT_TRUE(s->EvaluateOnHints(e, &v, nullptr));
  EXPECT_EQ(10, v);
  EXPECT_EQ("a = 4, b = 7", s->HintsText(s->Parse("a"), s->Parse("b + 1")));
}

TEST(Hints, GuardRecordsTheSideTheHintsTake) {
  auto s = Scope::Create({"n <= 4096"});
  s->SetHint("n", 100);
  EXPECT_FALSE(s->Guard(s->Parse("n"), Cmp::kGt, s->Parse("1024"), "", "test"));
  ASSERT_EQ(2u, s->facts().size());
  EXPECT_TRUE(s->facts()[1].is_guard);
  EXPECT_TRUE(s->facts()[1].is_assertion);
  EXPECT_EQ("n <= 1024", s->facts()[1].text);
  EXPECT_EQ("test", s->facts()[1].origin);
  EXPECT_EQ(Truth::kTrue, Cmp3(s.get(), "n", Cmp::kLt, "1025"));
  // Decided from now on: nothing more is recorded.
  EXPECT_FALSE(s->Guard(s->Parse("n"), Cmp::kGt, s->Parse("2000"), "", "test"));
  EXPECT_EQ(2u, s->facts().size());
  // A failing operation's facts can be dropped.
  s->Guard(s->Parse("n"), Cmp::kGe, s->Parse("64"), "", "test");
  EXPECT_EQ(3u, s->facts().size());
  s->DropFactsAfter(2);
  EXPECT_EQ(2u, s->facts().size());
  EXPECT_EQ(Truth::kUnknown, Cmp3(s.get(), "n", Cmp::kGe, "64"));
}

// Randomized: scopes with random constraints and a hint valuation that satisfies them; random
// guards on random comparisons. Checks that (1) each guard's answer is the comparison on the
// hints, (2) the hints satisfy every fact afterwards, (3) every TRUE/FALSE answer of the
// guarded scope holds at every valuation of a box that satisfies all facts (brute force), and
// (4) the same scope without hints gives the same answers (hints are not facts).
TEST(Hints, RandomGuardsAreSoundAndHintsNeverChangeAnswers) {
  std::mt19937_64 rng(20261130);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::vector<std::string> names = {"a", "b", "c"};
  int guards_recorded = 0, decided_checked = 0;
  for (int round = 0; round < 120; ++round) {
    std::vector<std::string> constraints;
    if (pick(0, 1)) constraints.push_back("a + b <= " + std::to_string(pick(4, 12)));
    if (pick(0, 1)) constraints.push_back("c >= " + std::to_string(pick(1, 3)));
    std::unique_ptr<Scope> hinted, plain;
    std::vector<int64_t> hint(3);
    try {
      hinted = Scope::Create(constraints);
      plain = Scope::Create(constraints);
      for (const std::string& n : names) {
        hinted->Var(n);
        plain->Var(n);
      }
      // A hint valuation in [1, 6]^3 that satisfies the constraints.
      bool set = false;
      for (int attempt = 0; attempt < 50 && !set; ++attempt) {
        for (int64_t& h : hint) h = pick(1, 6);
        try {
          for (size_t i = 0; i < 3; ++i) hinted->SetHint(names[i], hint[i]);
          set = true;
        } catch (const Error& e) {
          ASSERT_EQ(Code::kConstraintViolation, e.code());
        }
      }
      if (!set) continue;
    } catch (const Error&) {
      continue;
    }
    // Random guards, mirrored into `plain` as the facts `hinted` recorded.
    for (int k = 0; k < 3; ++k) {
      const Expr* x = RandomExpr(hinted.get(), &rng, names, 2);
      const Expr* y = hinted->Constant(pick(0, 8));
      const Cmp op = static_cast<Cmp>(pick(0, 5));
      const size_t before = hinted->facts().size();
      bool got;
      try {
        got = hinted->Guard(x, op, y, "", "random");
      } catch (const Error& e) {
        continue;  // e.g. a division by zero on the hints
      }
      int64_t hx, hy;
      if (!hinted->EvaluateOnHints(x, &hx, nullptr)) {
        // x divides by zero at the hints (a divisor that may be 0): a decided answer holds
        // where x is defined, and nothing was recorded.
        ASSERT_EQ(hinted->facts().size(), before) << hinted->ToString(x);
        continue;
      }
      ASSERT_TRUE(hinted->EvaluateOnHints(y, &hy, nullptr));
      EXPECT_EQ(CmpHolds(hx, op, hy), got) << hinted->ToString(x);
      if (hinted->facts().size() > before) {
        ++guards_recorded;
        const Fact& f = hinted->facts().back();
        plain->AddGuard(plain->Parse(hinted->ToString(f.lhs)), f.op,
                        plain->Parse(hinted->ToString(f.rhs)), "", "random");
      }
    }
    // (2) The hints satisfy every fact.
    for (const Fact& f : hinted->facts()) {
      int64_t l, r;
      ASSERT_TRUE(hinted->EvaluateOnHints(f.lhs, &l, nullptr));
      ASSERT_TRUE(hinted->EvaluateOnHints(f.rhs, &r, nullptr));
      EXPECT_TRUE(CmpHolds(l, f.op, r)) << f.text;
    }
    // (3) and (4) on random queries.
    std::vector<std::vector<int64_t>> models;
    for (int64_t va = 1; va <= 8; ++va) {
      for (int64_t vb = 1; vb <= 8; ++vb) {
        for (int64_t vc = 1; vc <= 8; ++vc) {
          std::vector<int64_t> v = {va, vb, vc};
          std::vector<bool> known(hinted->variables().size(), false);
          std::vector<int64_t> vals(hinted->variables().size(), 0);
          for (size_t i = 0; i < 3; ++i) {
            int32_t idx = hinted->FindVar(names[i]);
            vals[static_cast<size_t>(idx)] = v[i];
            known[static_cast<size_t>(idx)] = true;
          }
          bool ok = true;
          for (const Fact& f : hinted->facts()) {
            try {
              ok = ok && CmpHolds(hinted->Evaluate(f.lhs, vals, known), f.op,
                                  hinted->Evaluate(f.rhs, vals, known));
            } catch (const Error&) {
              ok = false;
            }
          }
          if (ok) models.push_back(vals);
        }
      }
    }
    ASSERT_FALSE(models.empty());  // the hints are a model in the box
    for (int q = 0; q < 6; ++q) {
      const Expr* x = RandomExpr(hinted.get(), &rng, names, 2);
      const Expr* y = hinted->Constant(pick(-2, 10));
      const Cmp op = static_cast<Cmp>(pick(0, 5));
      const Truth t = hinted->Compare(x, op, y);
      EXPECT_EQ(t, plain->Compare(plain->Parse(hinted->ToString(x)), op,
                                  plain->Parse(hinted->ToString(y))))
          << hinted->ToString(x) << " " << CmpSymbol(op) << " " << hinted->ToString(y);
      if (t == Truth::kUnknown) continue;
      for (const std::vector<int64_t>& m : models) {
        std::vector<bool> known(m.size(), true);
        int64_t vx;
        try {
          vx = hinted->Evaluate(x, m, known);
        } catch (const Error&) {
          continue;
        }
        ++decided_checked;
        ASSERT_EQ(t == Truth::kTrue, CmpHolds(vx, op, y->ConstantTerm()))
            << hinted->ToString(x) << " " << CmpSymbol(op) << " " << hinted->ToString(y)
            << " under " << hinted->ConstraintsToString();
      }
    }
  }
  std::printf("%d guards recorded, %d decided answers checked\n", guards_recorded, decided_checked);
  EXPECT_GT(guards_recorded, 50);
  EXPECT_GT(decided_checked, 1000);
}

}  // namespace
}  // namespace dim
}  // namespace shp
