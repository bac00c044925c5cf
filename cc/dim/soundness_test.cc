// Randomized soundness test of the dimension engine against brute force.
//
// Each case: 2-3 variables (declared with small finite ranges, so the brute-force box is
// the whole domain and the check is exhaustive; or with the default range [1, inf), then
// checked on the box [1, 9]), 0-2 random constraints, and random expression trees. For
// every valuation in the box that satisfies the constraints we check that
//   - the normal form evaluates like a direct (reference) evaluation of the tree,
//   - every bound contains the value,
//   - every TRUE/FALSE comparison holds / fails,
//   - no divisor the engine accepted is zero,
// and that an UNSATISFIABLE scope really has no satisfying valuation (exhaustive boxes).
// Reproduce a failure with SHP_SOUNDNESS_SEED=<seed printed in the failure>.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace {

using I128 = __int128;

enum class Op { kVar, kConst, kAdd, kSub, kMul, kNeg, kFloorDiv, kMod, kMax, kMin, kPow };

struct Node {
  Op op;
  int var = 0;
  int64_t c = 0;
  std::unique_ptr<Node> a, b;
};

const char* kNames[] = {"a", "b", "c"};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::unique_ptr<Node> Tree(int nvars, int depth) {
    auto n = std::make_unique<Node>();
    int pick = depth <= 0 ? Int(0, 1) : Int(0, 12);
    if (pick == 0 || pick == 2) {
      n->op = Op::kVar;
      n->var = Int(0, nvars - 1);
    } else if (pick == 1) {
      n->op = Op::kConst;
      n->c = Int(-4, 5);
    } else {
      static const Op ops[] = {Op::kAdd, Op::kSub, Op::kMul, Op::kNeg, Op::kFloorDiv, Op::kMod,
                               Op::kMax, Op::kMin, Op::kPow, Op::kAdd};
      n->op = ops[pick - 3];
      n->a = Tree(nvars, depth - 1);
      if (n->op == Op::kPow) {
        n->c = Int(0, 3);
      } else if (n->op == Op::kFloorDiv || n->op == Op::kMod) {
        // Mostly constant divisors, sometimes symbolic.
        if (Int(0, 3) == 0) {
          n->b = Tree(nvars, 0);
        } else {
          n->b = std::make_unique<Node>();
          n->b->op = Op::kConst;
          n->b->c = Int(0, 3) == 0 ? -Int(1, 4) : Int(1, 5);
        }
      } else if (n->op != Op::kNeg) {
        n->b = Tree(nvars, depth - 1);
      }
    }
    return n;
  }

 private:
  std::mt19937_64 rng_;
};

std::string Text(const Node& n) {
  switch (n.op) {
    case Op::kVar: return kNames[n.var];
    case Op::kConst: return n.c < 0 ? "(" + std::to_string(n.c) + ")" : std::to_string(n.c);
    case Op::kAdd: return "(" + Text(*n.a) + " + " + Text(*n.b) + ")";
    case Op::kSub: return "(" + Text(*n.a) + " - " + Text(*n.b) + ")";
    case Op::kMul: return "(" + Text(*n.a) + " * " + Text(*n.b) + ")";
    case Op::kNeg: return "(-" + Text(*n.a) + ")";
    case Op::kFloorDiv: return "floordiv(" + Text(*n.a) + ", " + Text(*n.b) + ")";
    case Op::kMod: return "mod(" + Text(*n.a) + ", " + Text(*n.b) + ")";
    case Op::kMax: return "max(" + Text(*n.a) + ", " + Text(*n.b) + ")";
    case Op::kMin: return "min(" + Text(*n.a) + ", " + Text(*n.b) + ")";
    case Op::kPow: return "(" + Text(*n.a) + ")^" + std::to_string(n.c);
  }
  return "";
}

const Expr* Build(Scope* s, const Node& n) {
  switch (n.op) {
    case Op::kVar: return s->Var(kNames[n.var]);
    case Op::kConst: return s->Constant(n.c);
    case Op::kAdd: return s->Add(Build(s, *n.a), Build(s, *n.b));
    case Op::kSub: return s->Sub(Build(s, *n.a), Build(s, *n.b));
    case Op::kMul: return s->Mul(Build(s, *n.a), Build(s, *n.b));
    case Op::kNeg: return s->Neg(Build(s, *n.a));
    case Op::kFloorDiv: return s->FloorDiv(Build(s, *n.a), Build(s, *n.b));
    case Op::kMod: return s->Mod(Build(s, *n.a), Build(s, *n.b));
    case Op::kMax: return s->Max(Build(s, *n.a), Build(s, *n.b));
    case Op::kMin: return s->Min(Build(s, *n.a), Build(s, *n.b));
    case Op::kPow: return s->Pow(Build(s, *n.a), n.c);
  }
  return nullptr;
}

// Reference evaluation in int128. Returns false when a divisor is zero (*zero_div set)
// or a value leaves a comfortable range.
bool Ref(const Node& n, const int64_t* vals, I128* out, bool* zero_div) {
  I128 x = 0, y = 0;
  if (n.a && !Ref(*n.a, vals, &x, zero_div)) return false;
  if (n.b && !Ref(*n.b, vals, &y, zero_div)) return false;
  I128 r = 0;
  switch (n.op) {
    case Op::kVar: r = vals[n.var]; break;
    case Op::kConst: r = n.c; break;
    case Op::kAdd: r = x + y; break;
    case Op::kSub: r = x - y; break;
    case Op::kMul: r = x * y; break;
    case Op::kNeg: r = -x; break;
    case Op::kFloorDiv:
    case Op::kMod: {
      if (y == 0) {
        *zero_div = true;
        return false;
      }
      I128 q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      r = n.op == Op::kFloorDiv ? q : x - q * y;
      break;
    }
    case Op::kMax: r = x > y ? x : y; break;
    case Op::kMin: r = x < y ? x : y; break;
    case Op::kPow: {
      r = 1;
      for (int64_t i = 0; i < n.c; ++i) r *= x;
      break;
    }
  }
  const I128 kLimit = static_cast<I128>(1) << 40;
  if (r > kLimit || r < -kLimit) return false;
  *out = r;
  return true;
}

struct Range {
  int64_t lo, hi;  // declared range; the box checked
  bool declared;
};

bool Holds(I128 x, Cmp op, I128 y) {
  switch (op) {
    case Cmp::kEq: return x == y;
    case Cmp::kNe: return x != y;
    case Cmp::kLt: return x < y;
    case Cmp::kLe: return x <= y;
    case Cmp::kGt: return x > y;
    case Cmp::kGe: return x >= y;
  }
  return false;
}

TEST(Soundness, RandomExpressionsAgainstBruteForce) {
  uint64_t seed = 20261129;
  if (const char* env = std::getenv("SHP_SOUNDNESS_SEED")) seed = std::strtoull(env, nullptr, 10);
  const bool single = std::getenv("SHP_SOUNDNESS_SEED") != nullptr && std::getenv("SHP_SOUNDNESS_CASES") == nullptr;
  long min_cases = 400;
  if (const char* env = std::getenv("SHP_SOUNDNESS_CASES")) min_cases = std::strtol(env, nullptr, 10);
  long checks = 0, cases = 0, unknowns = 0, decided = 0, unsat_scopes = 0;
  for (uint64_t iter = 0; checks < 150000 || cases < min_cases; ++iter) {
    uint64_t case_seed = seed + iter;
    Gen g(case_seed);
    ++cases;
    int nvars = g.Int(2, 3);
    std::vector<Range> ranges(nvars);
    for (int v = 0; v < nvars; ++v) {
      int kind = g.Int(0, 3);
      if (kind == 0) {
        ranges[v] = {1, 9, false};  // default range, checked on a box only
      } else if (kind == 1) {
        ranges[v] = {0, g.Int(3, 7), true};
      } else if (kind == 2) {
        ranges[v] = {-g.Int(1, 4), g.Int(1, 5), true};
      } else {
        int lo = g.Int(1, 4);
        ranges[v] = {lo, lo + g.Int(2, 6), true};
      }
    }
    bool exhaustive = true;
    for (const Range& r : ranges) exhaustive &= r.declared;
    // Constraints: random comparisons of small trees.
    int ncons = g.Int(0, 2);
    std::vector<std::string> cons_text;
    std::vector<std::unique_ptr<Node>> cons_l, cons_r;
    std::vector<Cmp> cons_op;
    for (int k = 0; k < ncons; ++k) {
      cons_l.push_back(g.Tree(nvars, 1));
      cons_r.push_back(g.Tree(nvars, 1));
      static const Cmp ops[] = {Cmp::kGe, Cmp::kLe, Cmp::kEq, Cmp::kGt, Cmp::kLt};
      static const char* sym[] = {">=", "<=", "==", ">", "<"};
      int o = g.Int(0, 4);
      if (o == 2 && g.Int(0, 2) != 0) o = 0;  // fewer equalities: they often make the set tiny
      cons_op.push_back(ops[o]);
      cons_text.push_back(Text(*cons_l.back()) + " " + sym[o] + " " + Text(*cons_r.back()));
    }
    std::ostringstream desc;
    desc << "seed " << case_seed << ": vars";
    for (int v = 0; v < nvars; ++v) {
      desc << " " << kNames[v] << (ranges[v].declared ? " in [" : " default, box [") << ranges[v].lo << ", "
           << ranges[v].hi << "]";
    }
    desc << "; constraints {";
    for (size_t k = 0; k < cons_text.size(); ++k) desc << (k ? ", " : "") << cons_text[k];
    desc << "}";

    // Enumerate the box and the valuations satisfying the constraints.
    std::vector<std::vector<int64_t>> sat;
    int64_t vals[3] = {0, 0, 0};
    std::function<void(int)> enumerate = [&](int v) {
      if (v == nvars) {
        for (int k = 0; k < ncons; ++k) {
          I128 l, r;
          bool zd = false;
          if (!Ref(*cons_l[k], vals, &l, &zd) || !Ref(*cons_r[k], vals, &r, &zd)) return;
          if (!Holds(l, cons_op[k], r)) return;
        }
        sat.emplace_back(vals, vals + nvars);
        return;
      }
      for (int64_t x = ranges[v].lo; x <= ranges[v].hi; ++x) {
        vals[v] = x;
        enumerate(v + 1);
      }
    };

    std::unique_ptr<Scope> scope;
    try {
      std::vector<Scope::Declaration> decls;
      for (int v = 0; v < nvars; ++v) {
        if (ranges[v].declared) decls.push_back({kNames[v], ranges[v].lo, ranges[v].hi});
      }
      scope = Scope::Create(cons_text, decls);
    } catch (const Error& e) {
      bool constraint_error_possible = false;
      // A constraint with a divisor that may be zero is rejected; unsatisfiable must be real.
      if (e.code() == Code::kUnsatisfiable) {
        ++unsat_scopes;
        if (exhaustive) {
          enumerate(0);
          ASSERT_TRUE(sat.empty()) << "UNSATISFIABLE claimed but " << sat.size() << " valuations satisfy: "
                                   << desc.str() << "\n  " << e.message();
          checks += 1;
        }
        continue;
      }
      constraint_error_possible = e.code() == Code::kDivisionByZero || e.code() == Code::kOverflow;
      ASSERT_TRUE(constraint_error_possible) << desc.str() << ": " << e.message();
      continue;
    }
    for (int v = 0; v < nvars; ++v) scope->Var(kNames[v]);
    enumerate(0);
    if (sat.empty()) continue;  // unsatisfiable (not detected): everything is vacuous

    std::vector<std::unique_ptr<Node>> trees;
    std::vector<const Expr*> exprs;
    for (int k = 0; k < 6; ++k) {
      auto t = g.Tree(nvars, g.Int(1, 3));
      const Expr* e;
      try {
        e = Build(scope.get(), *t);
      } catch (const Error& err) {
        ASSERT_TRUE(err.code() == Code::kDivisionByZero || err.code() == Code::kOverflow ||
                    err.code() == Code::kUnsupported)
            << desc.str() << ": " << Text(*t) << ": " << err.message();
        continue;
      }
      // The parser builds the same normal form, and printing round-trips.
      const Expr* parsed = scope->Parse(Text(*t));
      ASSERT_EQ(parsed, e) << desc.str() << ": parse(" << Text(*t) << ") = " << scope->ToString(parsed)
                           << " but ops gave " << scope->ToString(e);
      const Expr* reparsed = scope->Parse(scope->ToString(e));
      ASSERT_EQ(reparsed, e) << desc.str() << ": " << scope->ToString(e) << " reparses to "
                             << scope->ToString(reparsed);
      Interval iv = scope->Bounds(e);
      for (const auto& val : sat) {
        I128 ref;
        bool zero_div = false;
        bool ok = Ref(*t, val.data(), &ref, &zero_div);
        ASSERT_FALSE(zero_div) << desc.str() << ": engine accepted " << Text(*t) << " but a divisor is 0 at a="
                               << val[0] << " b=" << val[1];
        if (!ok) continue;
        std::vector<bool> known(scope->variables().size(), false);
        std::vector<int64_t> values(scope->variables().size(), 0);
        for (int v = 0; v < nvars; ++v) {
          int32_t idx = scope->FindVar(kNames[v]);
          known[idx] = true;
          values[idx] = val[v];
        }
        int64_t got = scope->Evaluate(e, values, known);
        ASSERT_TRUE(got == ref) << desc.str() << ": " << Text(*t) << " normalized to " << scope->ToString(e)
                                << " evaluates to " << got << " but the reference gives "
                                << static_cast<int64_t>(ref) << " at a=" << val[0] << " b=" << val[1]
                                << (nvars > 2 ? " c=" + std::to_string(val[2]) : "");
        ASSERT_TRUE(iv.lo <= got && got <= iv.hi)
            << desc.str() << ": bounds of " << scope->ToString(e) << " = [" << iv.lo << ", " << iv.hi
            << "] exclude " << got << " at a=" << val[0] << " b=" << val[1];
        checks += 2;
      }
      trees.push_back(std::move(t));
      exprs.push_back(e);
    }
    // Comparisons between the expressions (and against small constants).
    for (size_t x = 0; x < exprs.size(); ++x) {
      for (size_t y = 0; y < exprs.size() + 1; ++y) {
        const Expr* rhs = y < exprs.size() ? exprs[y] : scope->Constant(g.Int(-3, 6));
        for (Cmp op : {Cmp::kEq, Cmp::kNe, Cmp::kLt, Cmp::kLe, Cmp::kGt, Cmp::kGe}) {
          Truth t = scope->Compare(exprs[x], op, rhs);
          if (t == Truth::kUnknown) {
            ++unknowns;
            continue;
          }
          ++decided;
          for (const auto& val : sat) {
            std::vector<bool> known(scope->variables().size(), false);
            std::vector<int64_t> values(scope->variables().size(), 0);
            for (int v = 0; v < nvars; ++v) {
              int32_t idx = scope->FindVar(kNames[v]);
              known[idx] = true;
              values[idx] = val[v];
            }
            int64_t l, r;
            try {
              l = scope->Evaluate(exprs[x], values, known);
              r = scope->Evaluate(rhs, values, known);
            } catch (const Error&) {
              continue;  // overflow at this valuation
            }
            ASSERT_EQ(Holds(l, op, r), t == Truth::kTrue)
                << desc.str() << ": " << scope->ToString(exprs[x]) << " " << CmpSymbol(op) << " "
                << scope->ToString(rhs) << " claimed " << (t == Truth::kTrue ? "TRUE" : "FALSE") << " but at a="
                << val[0] << " b=" << val[1] << (nvars > 2 ? " c=" + std::to_string(val[2]) : "")
                << " lhs=" << l << " rhs=" << r;
            ++checks;
          }
        }
      }
    }
    if (single) break;
  }
  std::printf("soundness: %ld cases, %ld checks, %ld decided comparisons, %ld unknown, %ld unsatisfiable scopes\n",
              cases, checks, decided, unknowns, unsat_scopes);
  EXPECT_GE(checks, 100000);
}

}  // namespace
}  // namespace dim
}  // namespace shp
