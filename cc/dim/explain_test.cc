// Answers that explain themselves: witnesses of both sides of an undecided comparison,
// verified by evaluation, and fixes that are listed only when they decide it and keep the
// facts satisfiable (explain.h).
#include "cc/dim/explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cc/dim/eval.h"
#include "cc/dim/solve.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

// The full valuation of `s` a witness describes (every variable it does not show set to a
// value of `fill`, which must satisfy the facts over those).
std::vector<int64_t> ValuesOf(const Scope& s, const ErrorWitness& w,
                              const std::vector<int64_t>& fill) {
  std::vector<int64_t> v = fill;
  for (size_t i = 0; i < w.names.size(); ++i) {
    const int32_t k = s.FindVar(w.names[i]);
    EXPECT_GE(k, 0) << w.names[i];
    if (k >= 0) v[static_cast<size_t>(k)] = w.values[i];
  }
  return v;
}

// Whether q op r holds at `v` (false where it cannot be evaluated).
bool Holds(const Expr* q, Cmp op, const Expr* r, const std::vector<int64_t>& v) {
  try {
    return CmpHolds(Evaluate(q, v), op, Evaluate(r, v));
  } catch (const Error&) {
    return false;
  }
}

bool Has(const std::vector<std::string>& fixes, const std::string& part) {
  return std::any_of(fixes.begin(), fixes.end(),
                     [&](const std::string& f) { return f.find(part) != std::string::npos; });
}

TEST(Explain, WitnessesOfBothSidesSatisfyTheFactsAndDecideTheComparison) {
  auto s = Scope::Create({"a >= b + 8"});
  const Expr* a = s->Parse("a");
  const Expr* b2 = s->Parse("2*b");
  ASSERT_EQ(Truth::kUnknown, s->Compare(a, Cmp::kGe, b2));
  Explanation e = ExplainUndecided(s.get(), a, Cmp::kGe, b2, false);
  ASSERT_EQ(2u, e.detail->witnesses.size());
  for (const ErrorWitness& w : e.detail->witnesses) {
    EXPECT_EQ((std::vector<std::string>{"a", "b"}), w.names);
    std::vector<int64_t> v = ValuesOf(*s, w, {1, 1});
    EXPECT_GE(v[0], v[1] + 8) << WitnessText(w);
    EXPECT_EQ(w.holds, v[0] >= 2 * v[1]) << WitnessText(w);
    EXPECT_TRUE(SatisfiesFacts(*s, v, {Condition{a, w.holds ? Cmp::kGe : Cmp::kLt, b2}}));
  }
  EXPECT_NE(e.detail->witnesses[0].holds, e.detail->witnesses[1].holds);
  EXPECT_NE(std::string::npos, e.text.find("makes it true")) << e.text;
  EXPECT_NE(std::string::npos, e.text.find("makes it false")) << e.text;
}

TEST(Explain, GuardWithoutHintsCarriesTheDetail) {
  auto s = Scope::Create({"n >= 2"});
  try {
    s->Guard(s->Parse("n"), Cmp::kEq, s->Parse("4"), "", "");
    FAIL() << "expected kInconclusive";
  } catch (const Error& e) {
    EXPECT_EQ(Code::kInconclusive, e.code());
    ASSERT_NE(nullptr, e.detail());
    ASSERT_EQ(2u, e.detail()->witnesses.size());
    for (const ErrorWitness& w : e.detail()->witnesses) {
      ASSERT_EQ(1u, w.values.size());
      EXPECT_GE(w.values[0], 2);
      EXPECT_EQ(w.holds, w.values[0] == 4);
    }
    EXPECT_TRUE(Has(e.detail()->fixes, "add the constraint 'n == 4'")) << e.message();
    EXPECT_TRUE(Has(e.detail()->fixes, "shp_scope_check(scope, n, SHP_CMP_EQ, 4)")) << e.message();
    EXPECT_NE(std::string::npos, e.message().find("'n' has no hint")) << e.message();
    EXPECT_NE(std::string::npos, e.message().find("Verified fixes")) << e.message();
  }
  EXPECT_EQ(1u, s->facts().size());  // nothing recorded
}

// Every listed fix, applied to the constraint texts, decides the comparison; a range that
// cannot decide it (parity) is not listed.
TEST(Explain, FixesDecideAndRangesThatDoNotAreLeftOut) {
  auto s = Scope::Create({"n >= 1"});
  const Expr* q = s->Parse("mod(n, 2)");
  const Expr* zero = s->Constant(0);
  ASSERT_EQ(Truth::kUnknown, s->Compare(q, Cmp::kEq, zero));
  Explanation e = ExplainUndecided(s.get(), q, Cmp::kEq, zero, false);
  EXPECT_EQ(2u, e.detail->witnesses.size());
  EXPECT_TRUE(Has(e.detail->fixes, "add the constraint 'mod(n, 2) == 0'")) << e.text;
  EXPECT_FALSE(Has(e.detail->fixes, "declare")) << e.text;
  auto fixed = Scope::Create({"n >= 1", "mod(n, 2) == 0"});
  EXPECT_EQ(Truth::kTrue, fixed->Compare(fixed->Parse("mod(n, 2)"), Cmp::kEq, fixed->Constant(0)));
}

TEST(Explain, RangeFixIsTheWidestVerifiedOne) {
  auto s = Scope::Create({});
  const Expr* n = s->Parse("n");
  const Expr* c = s->Constant(100);
  ASSERT_EQ(Truth::kUnknown, s->Compare(n, Cmp::kGe, c));
  Explanation e = ExplainUndecided(s.get(), n, Cmp::kGe, c, false);
  ASSERT_EQ(2u, e.detail->witnesses.size());
  // Each range fix names [L, inf] with L >= 100 (the only ranges that decide n >= 100).
  bool any = false;
  for (const std::string& f : e.detail->fixes) {
    if (f.find("declare 'n' with the range [") == std::string::npos) continue;
    any = true;
    const int64_t lo = std::stoll(f.substr(f.find('[') + 1));
    EXPECT_GE(lo, 100) << f;
    auto d = Scope::Create({}, {{"n", lo, kPosInf}});
    EXPECT_EQ(Truth::kTrue, d->Compare(d->Parse("n"), Cmp::kGe, d->Constant(100))) << f;
  }
  EXPECT_TRUE(any) << e.text;
}

// A comparison true at no integer valuation (n^2 == 2*m^2 has no positive solution) gets no
// true witness, and the constraint that would state it is not a fix: the copy's facts could
// not be satisfied.
TEST(Explain, UnsatisfiableFixIsNotListed) {
  auto s = Scope::Create({}, {{"n", 1, 50}, {"m", 1, 50}});
  const Expr* l = s->Parse("n*n");
  const Expr* r = s->Parse("2*m*m");
  if (s->Compare(l, Cmp::kEq, r) != Truth::kUnknown) GTEST_SKIP() << "decided";
  Explanation e = ExplainUndecided(s.get(), l, Cmp::kEq, r, false);
  ASSERT_EQ(1u, e.detail->witnesses.size());
  EXPECT_FALSE(e.detail->witnesses[0].holds);
  EXPECT_TRUE(e.detail->fixes.empty()) << e.text;
  EXPECT_NE(std::string::npos, e.text.find("no valuation making it true was found")) << e.text;
}

TEST(Explain, SpecFixesUseMaxMin) {
  auto s = Scope::Create({});
  const Expr* a = s->Parse("a");
  const Expr* b = s->Parse("b");
  Explanation eq = ExplainUndecided(s.get(), a, Cmp::kEq, b, /*in_spec=*/true);
  EXPECT_TRUE(Has(eq.detail->fixes, "write max(a, b) for both dimensions")) << eq.text;
  Explanation le = ExplainUndecided(s.get(), a, Cmp::kLt, b, /*in_spec=*/true);
  EXPECT_TRUE(Has(le.detail->fixes, "write min(a, b - 1) for a")) << le.text;
  EXPECT_TRUE(Has(le.detail->fixes, "for b in the specification")) << le.text;
  Explanation no = ExplainUndecided(s.get(), a, Cmp::kEq, b, /*in_spec=*/false);
  EXPECT_FALSE(Has(no.detail->fixes, "max(")) << no.text;
}

TEST(Explain, CopyScopeKeepsFactsAndRanges) {
  auto s = Scope::Create({"a >= b + 2"}, {{"b", 3, 10}});
  s->Check(s->Parse("a"), Cmp::kLe, s->Parse("40"), "");
  auto c = CopyScope(*s, {"a >= 20"}, {{"a", 1, 30}});
  EXPECT_EQ(3u + 0u, c->facts().size());
  EXPECT_EQ(Truth::kTrue, c->Compare(c->Parse("a"), Cmp::kGe, c->Parse("20")));
  EXPECT_EQ(Truth::kTrue, c->Compare(c->Parse("b"), Cmp::kLe, c->Parse("10")));
  EXPECT_EQ(Truth::kTrue, c->Compare(c->Parse("a"), Cmp::kLe, c->Parse("30")));
  EXPECT_EQ(Code::kUnsatisfiable, Catch([&] { CopyScope(*s, {"a <= 4"}, {}); }).code());
}

// Randomized: a copy seeded with the scope's derived bounds (SeedCopy) answers only what
// brute force over its facts confirms, never the opposite of a fresh copy, and unseeded
// answers as the fresh copy does; a copy that widens a range is not seeded.
TEST(Explain, SeededCopiesAnswerSoundlyAndUnseedAnswersAsAFreshCopy) {
  std::mt19937_64 rng(4321);
  const char* kFacts[] = {"a >= b + 1", "a + b <= 9",     "mod(a + c, 3) == 1",
                          "c >= 2*b",   "max(a, c) <= 7", "floordiv(a, 2) >= b",
                          "a*b <= 12",  "b*c >= 2"};
  const char* kQueries[] = {"a",   "b",    "c", "a - b", "mod(a, 4)", "max(b, c)", "floordiv(c, 3)",
                            "a*c", "b + c"};
  int seeded_decided = 0, compared = 0;
  for (int iter = 0; iter < 80; ++iter) {
    std::vector<std::string> facts;
    for (const char* f : kFacts) {
      if (rng() % 3 == 0) facts.push_back(f);
    }
    const std::vector<std::string> extra = {kFacts[rng() % 8]};
    const int64_t ahi = static_cast<int64_t>(2 + rng() % 7);
    const std::vector<Scope::Declaration> narrow = {{"a", 0, ahi}};
    std::unique_ptr<Scope> s, c, f;
    try {
      s = Scope::Create(facts, {{"a", 0, 8}, {"b", -4, 8}, {"c", 0, 8}});
      c = CopyScope(*s, extra, narrow);
      f = CopyScope(*s, extra, narrow);
    } catch (const Error&) {
      continue;  // unsatisfiable draw
    }
    ASSERT_TRUE(SeedCopy(*s, s->VarBounds(), narrow, c.get()));
    std::vector<std::vector<int64_t>> box;  // the valuations satisfying the copy's facts
    for (int64_t a = 0; a <= 8; ++a) {
      for (int64_t b = -4; b <= 8; ++b) {
        for (int64_t cv = 0; cv <= 8; ++cv) {
          std::vector<int64_t> v(3);
          v[static_cast<size_t>(c->FindVar("a"))] = a;
          v[static_cast<size_t>(c->FindVar("b"))] = b;
          v[static_cast<size_t>(c->FindVar("c"))] = cv;
          if (SatisfiesFacts(*c, v)) box.push_back(v);
        }
      }
    }
    for (int k = 0; k < 4; ++k) {
      const std::string q = kQueries[rng() % 9], r = std::to_string(rng() % 8);
      const Cmp op = static_cast<Cmp>(rng() % 6);
      const Expr* cq = c->Parse(q);
      const Expr* cr = c->Parse(r);
      const Truth seeded = c->Compare(cq, op, cr);
      const Truth fresh = f->Compare(f->Parse(q), op, f->Parse(r));
      ++compared;
      if (seeded != Truth::kUnknown) {
        ++seeded_decided;
        if (fresh != Truth::kUnknown) {
          ASSERT_EQ(fresh, seeded) << q << " vs " << r;
        }
        for (const std::vector<int64_t>& v : box) {
          ASSERT_EQ(seeded == Truth::kTrue, Holds(cq, op, cr, v)) << q << " vs " << r;
        }
      }
    }
    c->Unseed();
    for (const char* q : kQueries) {
      for (int k = 1; k < 8; k += 4) {
        const std::string r = std::to_string(k);
        ASSERT_EQ(f->Compare(f->Parse(q), Cmp::kGe, f->Parse(r)),
                  c->Compare(c->Parse(q), Cmp::kGe, c->Parse(r)))
            << q << " >= " << r;
      }
    }
  }
  EXPECT_GT(seeded_decided, compared / 4);
  auto s = Scope::Create({"a >= b + 2"}, {{"b", 3, 10}});
  auto c = CopyScope(*s, {}, {{"b", 0, 20}});
  EXPECT_FALSE(SeedCopy(*s, s->VarBounds(), {{"b", 0, 20}}, c.get()));
}

TEST(Explain, FindValuationHonoursExtraConditionsAndRanges) {
  auto s = Scope::Create({"a == 3*b + 1", "mod(b, 5) == 2"}, {{"b", 0, 1000}});
  std::vector<int64_t> v;
  ASSERT_TRUE(
      FindValuation(s.get(), {Condition{s->Parse("a"), Cmp::kGt, s->Parse("100")}}, nullptr, &v));
  const int64_t a = v[static_cast<size_t>(s->FindVar("a"))];
  const int64_t b = v[static_cast<size_t>(s->FindVar("b"))];
  EXPECT_EQ(a, 3 * b + 1);
  EXPECT_EQ(2, b % 5);
  EXPECT_GT(a, 100);
}

// Randomized: every witness shown satisfies every fact and range and the side it claims,
// checked here by direct evaluation; where brute force over the small box finds a valuation
// of a side, the search finds one in almost every case; every constraint fix decides the
// comparison on the whole box (brute force).
TEST(Explain, RandomWitnessesSatisfyTheFactsByBruteForce) {
  std::mt19937_64 rng(1234);
  const std::vector<std::string> names = {"a", "b", "c"};
  const char* kFacts[] = {"a >= b + 1",     "a + b <= 9", "mod(a + c, 3) == 1",  "c >= 2*b",
                          "max(a, c) <= 7", "b != 3",     "floordiv(a, 2) >= b", "a*b <= 12"};
  const char* kQueries[] = {"a", "b", "c", "a - b", "mod(a, 4)", "max(b, c)", "floordiv(c, 3)"};
  int explained = 0, sides = 0, sides_found = 0;
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<std::string> facts;
    for (const char* f : kFacts) {
      if (rng() % 3 == 0) facts.push_back(f);
    }
    std::unique_ptr<Scope> s;
    const int64_t blo = rng() % 2 == 0 ? 0 : -4;  // b may be negative
    try {
      s = Scope::Create(facts, {{"a", 0, 8}, {"b", blo, 8}, {"c", 0, 8}});
      // Sometimes an assertion too: witnesses must satisfy it as well.
      if (rng() % 3 == 0) s->Check(s->Parse("a + c"), Cmp::kLe, s->Constant(12), "");
    } catch (const Error&) {
      continue;  // unsatisfiable draw
    }
    const Expr* q = s->Parse(kQueries[rng() % 7]);
    const Expr* k = s->Constant(static_cast<int64_t>(rng() % 6));
    const Cmp op = static_cast<Cmp>(rng() % 6);
    if (s->Compare(q, op, k) != Truth::kUnknown) continue;
    ++explained;
    Explanation e = ExplainUndecided(s.get(), q, op, k, false);
    // Brute force over the box.
    bool exists[2] = {false, false};
    for (int64_t a = 0; a <= 8; ++a) {
      for (int64_t b = blo; b <= 8; ++b) {
        for (int64_t c = 0; c <= 8; ++c) {
          std::vector<int64_t> v = {a, b, c};
          if (!SatisfiesFacts(*s, v)) continue;
          bool h = false;
          try {
            h = CmpHolds(Evaluate(q, v), op, Evaluate(k, v));
          } catch (const Error&) {
            continue;
          }
          exists[h ? 1 : 0] = true;
        }
      }
    }
    for (const ErrorWitness& w : e.detail->witnesses) {
      // Variables not shown share no fact with the shown ones: fill them from any valuation.
      std::vector<int64_t> fill;
      ASSERT_TRUE(FindValuation(s.get(), {}, nullptr, &fill));
      std::vector<int64_t> v = ValuesOf(*s, w, fill);
      for (size_t i = 0; i < 3; ++i) {
        ASSERT_GE(v[i], i == 1 ? blo : 0);
        ASSERT_LE(v[i], 8);
      }
      for (const Fact& f : s->facts()) {
        ASSERT_TRUE(CmpHolds(Evaluate(f.lhs, v), f.op, Evaluate(f.rhs, v)))
            << f.text << " at " << WitnessText(w);
      }
      ASSERT_EQ(w.holds, CmpHolds(Evaluate(q, v), op, Evaluate(k, v))) << WitnessText(w);
      ASSERT_TRUE(exists[w.holds ? 1 : 0]);
    }
    for (int side = 0; side < 2; ++side) {
      if (!exists[side]) continue;
      ++sides;
      for (const ErrorWitness& w : e.detail->witnesses) sides_found += w.holds == (side == 1);
    }
    for (const std::string& f : e.detail->fixes) {
      if (f.find("add the constraint '") != 0) continue;
      const std::string text = f.substr(20, f.find('\'', 20) - 20);
      std::vector<std::string> more = facts;
      more.push_back(text);
      auto d = Scope::Create(more, {{"a", 0, 8}, {"b", blo, 8}, {"c", 0, 8}});
      for (const Fact& g : s->facts()) {
        if (g.is_assertion)
          d->Check(d->Parse(s->ToString(g.lhs)), g.op, d->Parse(s->ToString(g.rhs)), "");
      }
      bool some = false;
      for (int64_t a = 0; a <= 8; ++a) {
        for (int64_t b = blo; b <= 8; ++b) {
          for (int64_t c = 0; c <= 8; ++c) {
            std::vector<int64_t> v = {a, b, c};
            if (!SatisfiesFacts(*d, v)) continue;
            some = true;
            ASSERT_TRUE(CmpHolds(Evaluate(q, v), op, Evaluate(k, v))) << f;
          }
        }
      }
      ASSERT_TRUE(some) << f;
    }
  }
  EXPECT_GT(explained, 20);
  EXPECT_GE(sides_found * 100, sides * 95) << sides_found << " of " << sides;
  std::printf("explained %d undecided comparisons; witnesses found for %d of %d sides\n", explained,
              sides_found, sides);
}

// A violated constraint names the nearest change of one input dimension that satisfies it,
// verified by solving again.
TEST(ExplainViolation, NearestChangeOfOneInputDimension) {
  auto s = Scope::Create({"a >= b + 8"});
  std::vector<SolveArg> args{{"args[0]", s->ParseShape("a", nullptr), {10}},
                             {"args[1]", s->ParseShape("b", nullptr), {5}}};
  Error e = Catch([&] { Solve(s.get(), args, SolveOptions()); });
  EXPECT_EQ(Code::kConstraintViolation, e.code());
  // a to 13 and b to 2 are both 3 away: the first axis wins.
  EXPECT_NE(std::string::npos,
            e.message().find("The nearest change of one input dimension that satisfies it: "
                             "change args[0].shape[0] from 10 to 13."))
      << e.message();
  ASSERT_NE(nullptr, e.detail());
  EXPECT_EQ(std::vector<std::string>{"change args[0].shape[0] from 10 to 13"}, e.detail()->fixes);
  args[0].shape = {13};
  EXPECT_EQ(13, Solve(s.get(), args, SolveOptions()).values[0]);
  args[0].shape = {12};
  EXPECT_EQ(Code::kConstraintViolation,
            Catch([&] { Solve(s.get(), args, SolveOptions()); }).code());
}

TEST(ExplainViolation, FarChangesAreFoundByDoublingAndBisection) {
  auto s = Scope::Create({"a >= 1000*b"});
  std::vector<SolveArg> args{{"input 'x'", s->ParseShape("2*a + 1, b", nullptr), {21, 5}, true}};
  Error e = Catch([&] { Solve(s.get(), args, SolveOptions()); });
  EXPECT_EQ(Code::kConstraintViolation, e.code());
  // a = 5000 makes axis 0 10001; b cannot go below 1 (its range), so axis 1 offers nothing
  // nearer than 0.
  ASSERT_NE(nullptr, e.detail()) << e.message();
  EXPECT_EQ(std::vector<std::string>{"change input 'x' axis 0 from 21 to 10001"}, e.detail()->fixes)
      << e.message();
}

TEST(ExplainViolation, ChangesKeepEveryAxisConsistent) {
  // b's two axes must agree, so only a can change.
  auto s = Scope::Create({"a == 2*b + 1"});
  std::vector<SolveArg> args{{"args[0]", s->ParseShape("a, b, b", nullptr), {4, 3, 3}}};
  Error e = Catch([&] { Solve(s.get(), args, SolveOptions()); });
  EXPECT_EQ(Code::kConstraintViolation, e.code());
  ASSERT_NE(nullptr, e.detail()) << e.message();
  // a must be odd and 2*b + 1: a from 4 to 7 (b's axes cannot change alone).
  EXPECT_EQ(std::vector<std::string>{"change args[0].shape[0] from 4 to 7"}, e.detail()->fixes);
  auto t = Scope::Create({"mod(a, 2) == 1"});
  std::vector<SolveArg> even{{"args[0]", t->ParseShape("2*a", nullptr), {8}}};
  Error none = Catch([&] { Solve(t.get(), even, SolveOptions()); });
  EXPECT_EQ(Code::kConstraintViolation, none.code());
  // 2*a == 10 (a = 5) is the nearest: 2 away.
  ASSERT_NE(nullptr, none.detail()) << none.message();
  EXPECT_EQ(std::vector<std::string>{"change args[0].shape[0] from 8 to 10"}, none.detail()->fixes);
  // a >= 5 with a on two axes: no change of ONE dimension satisfies it, and none is shown.
  auto u = Scope::Create({"a >= 5"});
  std::vector<SolveArg> twice{{"args[0]", u->ParseShape("a, a", nullptr), {3, 3}}};
  Error no_fix = Catch([&] { Solve(u.get(), twice, SolveOptions()); });
  EXPECT_EQ(Code::kConstraintViolation, no_fix.code());
  EXPECT_EQ(nullptr, no_fix.detail());
  EXPECT_EQ(std::string::npos, no_fix.message().find("nearest change")) << no_fix.message();
}

}  // namespace
}  // namespace dim
}  // namespace shp
