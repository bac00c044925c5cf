// Unsatisfiable constraint sets (issue 43 item 1): the satisfiability check at scope creation
// splits max/min atoms into cases, so sets whose contradiction needs a case split are refused
// with SHP_UNSATISFIABLE naming the facts; random sets over a small box check that every
// refusal is right (brute force, with an evaluator written here) and that a constraint that
// states a bound directly is never looser in Bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace {

bool Refused(const std::vector<std::string>& facts, std::string* message = nullptr,
             const std::vector<Scope::Declaration>& decls = {}) {
  try {
    Scope::Create(facts, decls);
    return false;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnsatisfiable) << e.what();
    if (message) *message = e.what();
    return true;
  }
}

TEST(Unsatisfiable, NeedsACaseSplit) {
  std::string msg;
  // The set: mod(a, b) >= 2 forces b >= 3, floordiv(a, 4) >= 2 gives a >= 8, and then
  // min(a, b) >= 3.
  EXPECT_TRUE(Refused({"max(a, b) >= 8", "min(a, b) <= 2", "floordiv(a, 4) >= 2", "mod(a, b) >= 2",
                       "mod(max(a, b), 4) >= 2"},
                      &msg));
  EXPECT_NE(msg.find("min(a, b) <= 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mod(a, b) >= 2"), std::string::npos) << msg;
  EXPECT_TRUE(Refused({"a >= 8", "b >= 3", "min(a, b) <= 2"}));
  EXPECT_TRUE(Refused({"max(a, b) <= 4", "a + b >= 9"}));
  EXPECT_TRUE(Refused({"max(a, 2*b) <= 10", "min(a, b) >= 6"}));
  EXPECT_TRUE(Refused({"min(max(a, b), c) >= 5", "max(a, b) <= 4"}));
  // Satisfiable neighbours are created, with the bounds their constraints state.
  EXPECT_FALSE(Refused({"a >= 8", "b >= 3", "min(a, b) <= 3"}));
  auto s = Scope::Create({"max(a, b) >= 8", "min(a, b) <= 2"});
  EXPECT_EQ(s->Bounds(s->Parse("max(a, b)")).lo, 8);
  EXPECT_EQ(s->Bounds(s->Parse("min(a, b)")).hi, 2);
}

// A random term over a and b for the random sets, with its own evaluator (Python floor
// semantics; nullopt-like `ok = false` where a divisor is 0).
struct Node {
  enum Kind { kVar, kNum, kAdd, kMul, kFloorDiv, kMod, kMax, kMin } kind;
  int64_t value = 0;  // kNum; kVar: 0 = a, 1 = b
  std::unique_ptr<Node> l, r;
};

std::unique_ptr<Node> RandomNode(std::mt19937* rng, int depth) {
  auto n = std::make_unique<Node>();
  const int pick = depth <= 0 ? static_cast<int>((*rng)() % 2) : static_cast<int>((*rng)() % 8);
  n->kind = static_cast<Node::Kind>(pick);
  if (n->kind == Node::kVar) n->value = (*rng)() % 2;
  if (n->kind == Node::kNum) n->value = 1 + (*rng)() % 6;
  if (n->kind >= Node::kAdd) {
    n->l = RandomNode(rng, depth - 1);
    if (n->kind == Node::kMul || n->kind == Node::kFloorDiv || n->kind == Node::kMod) {
      n->r = std::make_unique<Node>();  // a constant right operand, or a variable divisor
      n->r->kind = (*rng)() % 3 == 0 ? Node::kVar : Node::kNum;
      n->r->value = n->r->kind == Node::kVar ? (*rng)() % 2 : 1 + (*rng)() % 5;
    } else {
      n->r = RandomNode(rng, depth - 1);
    }
  }
  return n;
}

std::string Text(const Node& n) {
  switch (n.kind) {
    case Node::kVar:
      return n.value ? "b" : "a";
    case Node::kNum:
      return std::to_string(n.value);
    case Node::kAdd:
      return "(" + Text(*n.l) + " + " + Text(*n.r) + ")";
    case Node::kMul:
      return "(" + Text(*n.l) + " * " + Text(*n.r) + ")";
    case Node::kFloorDiv:
      return "floordiv(" + Text(*n.l) + ", " + Text(*n.r) + ")";
    case Node::kMod:
      return "mod(" + Text(*n.l) + ", " + Text(*n.r) + ")";
    case Node::kMax:
      return "max(" + Text(*n.l) + ", " + Text(*n.r) + ")";
    case Node::kMin:
      return "min(" + Text(*n.l) + ", " + Text(*n.r) + ")";
  }
  return "";
}

int64_t Eval(const Node& n, int64_t a, int64_t b, bool* ok) {
  switch (n.kind) {
    case Node::kVar:
      return n.value ? b : a;
    case Node::kNum:
      return n.value;
    default:
      break;
  }
  const int64_t x = Eval(*n.l, a, b, ok), y = Eval(*n.r, a, b, ok);
  switch (n.kind) {
    case Node::kAdd:
      return x + y;
    case Node::kMul:
      return x * y;
    case Node::kFloorDiv:
    case Node::kMod: {
      if (y == 0) {
        *ok = false;
        return 0;
      }
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return n.kind == Node::kFloorDiv ? q : x - q * y;
    }
    case Node::kMax:
      return std::max(x, y);
    case Node::kMin:
      return std::min(x, y);
    default:
      return 0;
  }
}

TEST(Unsatisfiable, RandomSetsRefusedOnlyWhenEmpty) {
  std::mt19937 rng(431);
  const int64_t kHi = 12;  // a, b in [1, 12]: the brute force is exhaustive
  int empty = 0, refused = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const int nfacts = 2 + static_cast<int>(rng() % 3);
    std::vector<std::unique_ptr<Node>> lhs;
    std::vector<int64_t> rhs;
    std::vector<bool> ge;
    std::vector<std::string> facts;
    for (int i = 0; i < nfacts; ++i) {
      lhs.push_back(RandomNode(&rng, 2));
      rhs.push_back(static_cast<int64_t>(rng() % 13));
      ge.push_back(rng() % 2 == 0);
      facts.push_back(Text(*lhs.back()) + (ge.back() ? " >= " : " <= ") +
                      std::to_string(rhs.back()));
    }
    bool any = false;
    for (int64_t a = 1; a <= kHi && !any; ++a) {
      for (int64_t b = 1; b <= kHi && !any; ++b) {
        bool all = true;
        for (int i = 0; i < nfacts && all; ++i) {
          bool ok = true;
          const int64_t v = Eval(*lhs[static_cast<size_t>(i)], a, b, &ok);
          // Where a fact is undefined (a divisor 0), it does not hold.
          all = ok && (ge[static_cast<size_t>(i)] ? v >= rhs[static_cast<size_t>(i)]
                                                  : v <= rhs[static_cast<size_t>(i)]);
        }
        any = all;
      }
    }
    std::unique_ptr<Scope> s;
    try {
      s = Scope::Create(facts, {{"a", 1, kHi}, {"b", 1, kHi}});
    } catch (const Error& e) {
      if (e.code() != Code::kUnsatisfiable) continue;  // refused for another reason
      ++refused;
      std::string all;
      for (const std::string& f : facts) all += f + "; ";
      ASSERT_FALSE(any) << "refused a satisfiable set: " << all << e.what();
      continue;
    }
    empty += !any;
    // A constraint that states a bound of its own expression directly is never looser (where
    // the expression parses to the fact's own normal form: normalizing under the facts can
    // simplify it, mod(max(a, 2), b) to mod(a, b) once a >= 9, and then the two differ).
    if (!any) continue;
    for (int i = 0; i < nfacts; ++i) {
      const Expr* e = s->Parse(Text(*lhs[static_cast<size_t>(i)]));
      if (e != s->facts()[static_cast<size_t>(i)].lhs) continue;
      const Interval iv = s->Bounds(e);
      if (ge[static_cast<size_t>(i)]) {
        EXPECT_GE(iv.lo, rhs[static_cast<size_t>(i)]) << facts[static_cast<size_t>(i)];
      } else {
        EXPECT_LE(iv.hi, rhs[static_cast<size_t>(i)]) << facts[static_cast<size_t>(i)];
      }
    }
  }
  std::printf("random sets: %d refused as unsatisfiable, %d unsatisfiable sets created\n", refused,
              empty);
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace dim
}  // namespace shp
