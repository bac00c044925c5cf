// Congruences in the decision procedure (issue 14 part 2): divisibility facts combine, flat
// (mod(s, 3) == 0 and mod(s, 5) == 0) or nested (mod(s, 3) == 0 and mod(floordiv(s, 3), 5)
// == 0), into divisibility by the least common multiple, and decide the mod and floordiv
// questions that follow.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cc/dim/scope.h"
#include "cc/dim/test_util.h"

namespace shp {
namespace dim {
namespace {

TEST(Congruences, NestedDivisibilityCombines) {
  auto s = Scope::Create({"mod(s, 3) == 0", "mod(floordiv(s, 3), 5) == 0"});
  EXPECT_EQ(Cmp3(s.get(), "mod(s, 15)", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(s, 5)", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "15*floordiv(s, 15)", Cmp::kEq, "s"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "s", Cmp::kGe, "15"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "floordiv(s, 5)", Cmp::kEq, "3*floordiv(s, 15)"), Truth::kTrue);
  // Not implied: mod(s, 30) is 0 or 15.
  EXPECT_EQ(Cmp3(s.get(), "mod(s, 30)", Cmp::kEq, "0"), Truth::kUnknown);
}

TEST(Congruences, FlatDivisibilityCombines) {
  auto s = Scope::Create({"mod(s, 3) == 0", "mod(s, 5) == 0"});
  EXPECT_EQ(Cmp3(s.get(), "mod(s, 15)", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "s", Cmp::kEq, "15*floordiv(s, 15)"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "s", Cmp::kGe, "15"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(s + 2, 15)", Cmp::kEq, "2"), Truth::kTrue);
  EXPECT_EQ(Cmp3(s.get(), "mod(s, 45)", Cmp::kEq, "0"), Truth::kUnknown);
  auto t = Scope::Create({"mod(n, 4) == 0", "mod(n, 6) == 0"});  // lcm 12, not 24
  EXPECT_EQ(Cmp3(t.get(), "mod(n, 12)", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(t.get(), "mod(n, 24)", Cmp::kEq, "0"), Truth::kUnknown);
  // A divisor of a fact's modulus: mod(n, 12) == 0 gives mod(n, 6) == 0.
  auto u = Scope::Create({"mod(n, 12) == 0"});
  EXPECT_EQ(Cmp3(u.get(), "mod(n, 6)", Cmp::kEq, "0"), Truth::kTrue);
  EXPECT_EQ(Cmp3(u.get(), "floordiv(n, 4)", Cmp::kEq, "3*floordiv(n, 12)"), Truth::kTrue);
}

}  // namespace
}  // namespace dim
}  // namespace shp
