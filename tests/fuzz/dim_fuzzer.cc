// libFuzzer target for the dim engine: constraint loading, declarations, expression and
// shape parsing, the decision procedure, printing and solving. Input: text lines; lines
// before a "---" line are constraints (or declarations "declare NAME LO HI"), the others
// are expressions or shape specs. Besides crashes, hangs and leaks (ASan/UBSan), it traps
// when an invariant breaks:
//   1. printing then parsing gives back the same interned expression (and never throws), for
//      every expression it builds: parsed ones, their negations, products and sums with
//      extreme constants (INT64_MIN, INT64_MAX), floordiv/mod/max/min nested up to the
//      builders' depth limit (kMaxNestingDepth, whose next level must be refused), and the
//      derived ones below; printed shapes parse back to the same dimensions;
//   2. bounds are ordered (lo <= hi) and compare(a, op, b) agrees with compare(a, not op, b)
//      (TRUE for one is FALSE for the other) and with compare(b, swapped op, a), and the
//      three-valued answers never contradict each other;
//   3. at valuations that satisfy every declaration and constraint (sampled, or found by
//      the solver from a shape), every bound contains the expression's value, every
//      TRUE/FALSE comparison holds/fails on the values, and the normal forms built by
//      add/sub/mul/floordiv/mod/max/min evaluate to the operation applied to the values.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/dim/solve.h"
#include "tests/fuzz/fuzz_util.h"

namespace dim = shp::dim;

namespace {

using shp::fuzz::Holds;
using shp::fuzz::Next;

// Caps keep one input to milliseconds: pairs and valuations grow quadratically.
constexpr size_t kMaxExprs = 6;
constexpr size_t kMaxVarExprs = 4;
constexpr int kValuationAttempts = 48;
constexpr size_t kMaxValuations = 6;
// Larger expressions are only round-tripped: bounds of e.g. (a + b)^31 (32 monomials) or of
// x^333720 - y take the decision procedure about a second, which left the fuzzer at 28
// inputs/s.
constexpr size_t kMaxTermsDecided = 12;
constexpr int32_t kMaxDegreeDecided = 64;

bool Decidable(const dim::Expr* e) {
  return dim::NumTerms(e) <= kMaxTermsDecided && dim::Degree(e) <= kMaxDegreeDecided;
}

// What the inputs reached, printed at exit when SHP_FUZZ_STATS is set (tools/run_fuzzers.sh
// shows it after a replay): invariants that never see a valuation check nothing.
struct Stats {
  long inputs = 0, scopes = 0, exprs = 0, comparisons = 0, decided = 0, derived = 0, valuations = 0,
       checks = 0;
  ~Stats() {
    if (std::getenv("SHP_FUZZ_STATS") == nullptr) return;
    std::fprintf(
        stderr,
        "dim_fuzzer stats: %ld inputs, %ld scopes, %ld expressions, %ld comparisons (%ld decided), "
        "%ld derived, %ld satisfying valuations, %ld value checks\n",
        inputs, scopes, exprs, comparisons, decided, derived, valuations, checks);
  }
} stats;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "dim_fuzzer: invariant broken: %s\n", what.c_str());
  __builtin_trap();
}

dim::Cmp Negate(dim::Cmp op) {
  switch (op) {
    case dim::Cmp::kEq:
      return dim::Cmp::kNe;
    case dim::Cmp::kNe:
      return dim::Cmp::kEq;
    case dim::Cmp::kLt:
      return dim::Cmp::kGe;
    case dim::Cmp::kLe:
      return dim::Cmp::kGt;
    case dim::Cmp::kGt:
      return dim::Cmp::kLe;
    case dim::Cmp::kGe:
      return dim::Cmp::kLt;
  }
  return op;
}

// a op b  <=>  b Swap(op) a
dim::Cmp Swap(dim::Cmp op) {
  switch (op) {
    case dim::Cmp::kLt:
      return dim::Cmp::kGt;
    case dim::Cmp::kLe:
      return dim::Cmp::kGe;
    case dim::Cmp::kGt:
      return dim::Cmp::kLt;
    case dim::Cmp::kGe:
      return dim::Cmp::kLe;
    default:
      return op;
  }
}

const char* TruthName(dim::Truth t) {
  return t == dim::Truth::kTrue ? "TRUE" : t == dim::Truth::kFalse ? "FALSE" : "UNKNOWN";
}

// A value in [lo, hi] (either may be infinite) near an end, small, or spread out.
int64_t Pick(int64_t lo, int64_t hi, uint64_t* rng) {
  uint64_t r = Next(rng);
  // A 64-wide window at an infinite end, saturated so that nothing overflows.
  int64_t base_lo =
      lo != dim::kNegInf ? lo : std::max<int64_t>(std::min<int64_t>(hi, 0), dim::kNegInf + 64) - 64;
  int64_t base_hi = hi != dim::kPosInf
                        ? hi
                        : std::min<int64_t>(std::max<int64_t>(base_lo, 0), dim::kPosInf - 64) + 64;
  uint64_t span =
      static_cast<uint64_t>(base_hi) - static_cast<uint64_t>(base_lo);  // no signed overflow
  uint64_t small = std::min<uint64_t>(span, 16);
  int64_t v;
  switch (r % 6) {
    case 0:
      v = base_lo;
      break;
    case 1:
      v = base_hi;
      break;
    case 2:
      v = static_cast<int64_t>(static_cast<uint64_t>(base_lo) + (r >> 8) % (small + 1));
      break;
    case 3:
      v = static_cast<int64_t>(static_cast<uint64_t>(base_hi) - (r >> 8) % (small + 1));
      break;
    case 4:
      v = static_cast<int64_t>((r >> 8) % 33) - 8;
      break;  // small, maybe outside: filtered below
    default:
      v = span == UINT64_MAX
              ? static_cast<int64_t>(r)
              : static_cast<int64_t>(static_cast<uint64_t>(base_lo) + (r >> 4) % (span + 1));
  }
  return v;
}

// Evaluates `e`; false when undefined (division by zero, overflow) at this valuation.
bool Eval(const dim::Scope& s, const dim::Expr* e, const dim::Solution& v, int64_t* out) {
  try {
    *out = s.Evaluate(e, v.values, v.known);
    return true;
  } catch (const shp::Error&) {
    return false;
  }
}

bool Satisfies(const dim::Scope& s, const dim::Solution& v) {
  const std::vector<dim::Variable>& vars = s.variables();
  if (v.values.size() < vars.size()) return false;  // a variable created after this valuation
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!v.known[i] || v.values[i] < vars[i].lo || v.values[i] > vars[i].hi) return false;
  }
  for (const dim::Fact& f : s.facts()) {
    int64_t l, r;
    if (!Eval(s, f.lhs, v, &l) || !Eval(s, f.rhs, v, &r) || !Holds(l, f.op, r)) return false;
  }
  return true;
}

std::string Describe(const dim::Scope& s, const dim::Solution& v) {
  std::ostringstream o;
  o << "{";
  for (size_t i = 0; i < s.variables().size() && i < v.values.size(); ++i)
    o << (i ? ", " : "") << s.variables()[i].name << "=" << v.values[i];
  o << "} under " << s.ConstraintsToString();
  return o.str();
}

// Invariant 1: the printed form parses back to the same interned expression.
void CheckRoundTrip(dim::Scope* s, const dim::Expr* e) {
  std::string text = s->ToString(e);
  const dim::Expr* back = nullptr;
  try {
    back = s->Parse(text);
  } catch (const shp::Error& err) {
    Fail("Parse(ToString(e)) throws for '" + text + "': " + err.what());
  }
  if (back != e)
    Fail("Parse(ToString(e)) != e for '" + text + "' (reparsed: '" + s->ToString(back) + "')");
}

int PrintedNesting(const std::string& text) {
  int depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '(') deepest = std::max(deepest, ++depth);
    if (c == ')') --depth;
  }
  return deepest;
}

// Invariant 1 for what the builders make of `e`: negation, extreme constants, and a chain of
// floordiv/mod/max/min around it whose depth comes from the input (at most
// kMaxNestingDepth, past which a builder must refuse with kUnsupported). Builds that
// overflow or divide by zero are not expressions.
void CheckBuiltRoundTrips(dim::Scope* s, const dim::Expr* e, uint64_t* rng) {
  static const int64_t kConstants[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX, -1, 2, 0};
  auto attempt = [&](auto build) -> const dim::Expr* {
    try {
      const dim::Expr* r = build();
      CheckRoundTrip(s, r);
      return r;
    } catch (const shp::Error& err) {
      if (err.code() != shp::Code::kOverflow && err.code() != shp::Code::kDivisionByZero &&
          err.code() != shp::Code::kUnsupported) {
        Fail(std::string("a builder failed with an unexpected error: ") + err.what());
      }
      return nullptr;
    }
  };
  attempt([&] { return s->Neg(e); });
  for (int64_t c : kConstants) {
    const dim::Expr* k = s->Constant(c);
    CheckRoundTrip(s, k);
    attempt([&] { return s->Mul(k, e); });
    attempt([&] { return s->Add(e, k); });
    attempt([&] { return s->Sub(s->Mul(e, e), s->Mul(k, e)); });
  }
  // Deep chains are slow to build (the decision procedure runs at every level): mostly
  // shallow, now and then right at the limit.
  uint64_t r = Next(rng);
  int depth = r % 64 == 0 ? dim::kMaxNestingDepth + 1 : static_cast<int>((r >> 8) % 24);
  const dim::Expr* chain = e;
  const dim::Expr* other = s->Constant(static_cast<int64_t>((r >> 16) % 7) + 2);
  for (int i = 0; i < depth; ++i) {
    int op = static_cast<int>(Next(rng) % 4);
    const dim::Expr* x = chain;
    const dim::Expr* built = nullptr;
    try {
      built = op == 0   ? s->FloorDiv(s->Add(x, s->Constant(1)), other)
              : op == 1 ? s->Mod(s->Add(x, s->Constant(1)), other)
              : op == 2 ? s->Max(s->Sub(x, s->Constant(3)), other)
                        : s->Min(s->Add(x, s->Constant(3)), s->Neg(other));
    } catch (const shp::Error& err) {
      // Refused for depth only at the limit (printed text nests exactly as deep as atoms).
      if (std::string(err.what()).find("nested too deeply") != std::string::npos &&
          PrintedNesting(s->ToString(x)) != dim::kMaxNestingDepth)
        Fail("a builder refused a level around '" + s->ToString(x) + "': " + err.what());
    }
    if (built != nullptr) chain = built;  // else the next level tries another operation
  }
  CheckRoundTrip(s, chain);
}

// Invariant 1 for shapes: the printed shape parses back to the same dimensions.
void CheckShapeRoundTrip(dim::Scope* s, const std::vector<const dim::Expr*>& dims) {
  std::string text = s->ShapeToString(dims);
  std::vector<const dim::Expr*> back;
  try {
    back = s->ParseShape(text, nullptr);
  } catch (const shp::Error& err) {
    Fail("ParseShape(ShapeToString(dims)) throws for '" + text + "': " + err.what());
  }
  if (back != dims) Fail("ParseShape(ShapeToString(dims)) != dims for '" + text + "'");
}

struct Comparison {
  const dim::Expr* a;
  dim::Cmp op;
  const dim::Expr* b;
  dim::Truth t;
};

// Invariant 2 for one pair: all six comparisons, negated and swapped.
void ComparePair(dim::Scope* s, const dim::Expr* a, const dim::Expr* b,
                 std::vector<Comparison>* out) {
  static const dim::Cmp kOps[] = {dim::Cmp::kEq, dim::Cmp::kNe, dim::Cmp::kLt,
                                  dim::Cmp::kLe, dim::Cmp::kGt, dim::Cmp::kGe};
  dim::Truth t[6], swapped[6];
  for (int i = 0; i < 6; ++i) {
    t[i] = s->Compare(a, kOps[i], b);
    swapped[i] = s->Compare(b, Swap(kOps[i]), a);
    out->push_back({a, kOps[i], b, t[i]});
  }
  std::string pair =
      "'" + s->ToString(a) + "' vs '" + s->ToString(b) + "' under " + s->ConstraintsToString();
  for (int i = 0; i < 6; ++i) {
    dim::Truth n = t[static_cast<int>(Negate(kOps[i]))];
    bool consistent = (t[i] == dim::Truth::kTrue && n == dim::Truth::kFalse) ||
                      (t[i] == dim::Truth::kFalse && n == dim::Truth::kTrue) ||
                      (t[i] == dim::Truth::kUnknown && n == dim::Truth::kUnknown);
    if (!consistent) {
      Fail(std::string("compare ") + dim::CmpSymbol(kOps[i]) + " is " + TruthName(t[i]) +
           " but its negation " + dim::CmpSymbol(Negate(kOps[i])) + " is " + TruthName(n) + ": " +
           pair);
    }
    // Swapped operands may take another route through the engine: only contradictions fail.
    dim::Truth sn = swapped[static_cast<int>(Negate(kOps[i]))];
    if ((t[i] == dim::Truth::kTrue && sn == dim::Truth::kTrue) ||
        (t[i] != dim::Truth::kUnknown && swapped[i] != dim::Truth::kUnknown &&
         t[i] != swapped[i])) {
      Fail(std::string("compare ") + dim::CmpSymbol(kOps[i]) + " is " + TruthName(t[i]) +
           " but swapped " + TruthName(swapped[i]) + ": " + pair);
    }
  }
  // Exactly one of <, ==, > holds, so they cannot all be FALSE, nor two be TRUE.
  int lt = static_cast<int>(dim::Cmp::kLt), eq = static_cast<int>(dim::Cmp::kEq),
      gt = static_cast<int>(dim::Cmp::kGt);
  int trues =
      (t[lt] == dim::Truth::kTrue) + (t[eq] == dim::Truth::kTrue) + (t[gt] == dim::Truth::kTrue);
  int falses =
      (t[lt] == dim::Truth::kFalse) + (t[eq] == dim::Truth::kFalse) + (t[gt] == dim::Truth::kFalse);
  if (trues > 1 || falses == 3) Fail("<, ==, > contradict each other: " + pair);
}

// A normal form built from a and b, with the integer operation it must agree with.
struct Derived {
  const dim::Expr* e;
  const dim::Expr* a;
  const dim::Expr* b;
  int op;  // 0 add, 1 sub, 2 mul, 3 floordiv, 4 mod, 5 max, 6 min
};

const char* const kOpNames[] = {"+", "-", "*", "floordiv", "mod", "max", "min"};

bool Apply(int op, int64_t x, int64_t y, int64_t* out) {
  try {
    switch (op) {
      case 0:
        *out = dim::CheckedAdd(x, y);
        break;
      case 1:
        *out = dim::CheckedAdd(x, dim::CheckedNeg(y));
        break;
      case 2:
        *out = dim::CheckedMul(x, y);
        break;
      case 3:
        *out = dim::FloorDivInt(x, y);
        break;
      case 4:
        *out = dim::ModInt(x, y);
        break;
      case 5:
        *out = std::max(x, y);
        break;
      default:
        *out = std::min(x, y);
    }
    return true;
  } catch (const shp::Error&) {
    return false;
  }
}

const dim::Expr* Build(dim::Scope* s, int op, const dim::Expr* a, const dim::Expr* b) {
  switch (op) {
    case 0:
      return s->Add(a, b);
    case 1:
      return s->Sub(a, b);
    case 2:
      return s->Mul(a, b);
    case 3:
      return s->FloorDiv(a, b);
    case 4:
      return s->Mod(a, b);
    case 5:
      return s->Max(a, b);
    default:
      return s->Min(a, b);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  ++stats.inputs;
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> constraints, items;
  std::vector<dim::Scope::Declaration> decls;
  bool in_constraints = text.find("---") != std::string::npos;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line == "---") {
      in_constraints = false;
      continue;
    }
    if (in_constraints && line.compare(0, 8, "declare ") == 0) {
      std::istringstream in(line.substr(8));
      dim::Scope::Declaration d;
      if (in >> d.name >> d.lo >> d.hi) decls.push_back(d);
      continue;
    }
    (in_constraints ? constraints : items).push_back(line);
  }
  std::unique_ptr<dim::Scope> scope;
  try {
    scope = dim::Scope::Create(constraints, decls);
  } catch (const shp::Error&) {
    return 0;
  }
  dim::Scope* s = scope.get();
  ++stats.scopes;
  uint64_t rng = size;
  for (uint8_t c : text) rng = rng * 131 + c;
  uint64_t build_rng = rng ^ 0x9e3779b97f4a7c15;  // apart, so valuations stay as they were

  std::vector<const dim::Expr*> exprs;
  std::vector<Comparison> comparisons;
  std::vector<Derived> derived;
  std::vector<dim::Solution> valuations;
  for (const std::string& item : items) {
    const dim::Expr* e = nullptr;
    try {
      e = s->Parse(item);
    } catch (const shp::Error&) {
    }
    if (e != nullptr) {
      CheckRoundTrip(s, e);
      CheckBuiltRoundTrips(s, e, &build_rng);
    }
    if (e != nullptr && exprs.size() < kMaxExprs && Decidable(e)) {
      try {
        dim::Interval iv = s->Bounds(e);
        if (iv.lo > iv.hi) Fail("empty bounds for '" + s->ToString(e) + "'");
        for (const dim::Expr* other : exprs) {
          ComparePair(s, e, other, &comparisons);
          for (int op = 0; op < 7; ++op) {
            try {
              const dim::Expr* d = Build(s, op, e, other);
              CheckRoundTrip(s, d);
              derived.push_back({d, e, other, op});
            } catch (const shp::Error&) {
            }
          }
        }
        exprs.push_back(e);
      } catch (const shp::Error&) {
      }
    }
    try {
      std::vector<const dim::Expr*> dims = s->ParseShape(item, nullptr);
      CheckShapeRoundTrip(s, dims);
      std::vector<int64_t> shape;
      for (size_t i = 0; i < dims.size(); ++i)
        shape.push_back(static_cast<int64_t>((item.size() * 7 + i * 3) % 17));
      dim::Solution sol = dim::Solve(s, {{"args[0]", dims, shape}}, dim::SolveOptions());
      // A complete solution (every constraint checked) is one more valuation to test against.
      sol.values.resize(s->variables().size(), 0);
      sol.known.resize(s->variables().size(), false);
      bool complete = std::all_of(sol.known.begin(), sol.known.end(), [](bool k) { return k; });
      if (complete) {
        if (!Satisfies(*s, sol))
          Fail("Solve accepted a valuation that breaks a constraint: " + Describe(*s, sol));
        if (valuations.size() < kMaxValuations) valuations.push_back(sol);
      }
    } catch (const shp::Error&) {
    }
  }

  // Each variable's own bounds are checked too (they are what the engine derives from facts).
  std::vector<const dim::Expr*> checked = exprs;
  size_t nvars = s->variables().size();
  for (size_t i = 0; i < nvars && i < kMaxVarExprs; ++i) {
    const dim::Expr* v = s->Var(s->variables()[i].name);
    checked.push_back(v);
    for (const dim::Expr* e : exprs) {
      try {
        ComparePair(s, v, e, &comparisons);
      } catch (const shp::Error&) {
      }
    }
  }
  for (const Derived& d : derived) {
    if (Decidable(d.e)) checked.push_back(d.e);  // all are evaluated below
  }
  std::vector<dim::Interval> bounds;
  for (const dim::Expr* e : checked) {
    dim::Interval iv;
    try {
      iv = s->Bounds(e);
    } catch (const shp::Error&) {
    }
    bounds.push_back(iv);
  }

  // Sample valuations inside each variable's implied range, keep those that satisfy every fact.
  std::vector<dim::Interval> var_range(nvars);
  for (size_t i = 0; i < nvars; ++i) {
    try {
      var_range[i] = s->Bounds(s->Var(s->variables()[i].name));
    } catch (const shp::Error&) {
      var_range[i] = {s->variables()[i].lo, s->variables()[i].hi};
    }
  }
  for (int attempt = 0;
       attempt < kValuationAttempts && valuations.size() < kMaxValuations && nvars > 0; ++attempt) {
    dim::Solution v;
    v.known.assign(nvars, true);
    for (size_t i = 0; i < nvars; ++i)
      v.values.push_back(Pick(var_range[i].lo, var_range[i].hi, &rng));
    if (Satisfies(*s, v)) valuations.push_back(v);
  }
  if (nvars == 0) valuations.push_back(dim::Solution());

  for (const dim::Solution& v : valuations) {
    for (size_t i = 0; i < checked.size(); ++i) {
      int64_t x;
      if (!Eval(*s, checked[i], v, &x)) continue;
      ++stats.checks;
      if (x < bounds[i].lo || x > bounds[i].hi) {
        Fail("'" + s->ToString(checked[i]) + "' = " + std::to_string(x) + " outside its bounds [" +
             std::to_string(bounds[i].lo) + ", " + std::to_string(bounds[i].hi) + "] at " +
             Describe(*s, v));
      }
    }
    for (const Comparison& c : comparisons) {
      int64_t x, y;
      if (c.t == dim::Truth::kUnknown || !Eval(*s, c.a, v, &x) || !Eval(*s, c.b, v, &y)) continue;
      ++stats.checks;
      if (Holds(x, c.op, y) != (c.t == dim::Truth::kTrue)) {
        Fail("'" + s->ToString(c.a) + " " + dim::CmpSymbol(c.op) + " " + s->ToString(c.b) +
             "' is " + TruthName(c.t) + " but the values are " + std::to_string(x) + " and " +
             std::to_string(y) + " at " + Describe(*s, v));
      }
    }
    for (const Derived& d : derived) {
      int64_t x, y, want, got;
      if (!Eval(*s, d.a, v, &x) || !Eval(*s, d.b, v, &y) || !Apply(d.op, x, y, &want)) continue;
      if (!Eval(*s, d.e, v, &got))
        continue;  // the normal form may overflow where the operation does not
      ++stats.checks;
      if (got != want) {
        Fail(std::string(kOpNames[d.op]) + "('" + s->ToString(d.a) + "', '" + s->ToString(d.b) +
             "') = '" + s->ToString(d.e) + "' evaluates to " + std::to_string(got) + ", not " +
             std::to_string(want) + " at " + Describe(*s, v));
      }
    }
  }
  stats.exprs += static_cast<long>(exprs.size());
  stats.comparisons += static_cast<long>(comparisons.size());
  for (const Comparison& c : comparisons) stats.decided += c.t != dim::Truth::kUnknown;
  stats.derived += static_cast<long>(derived.size());
  stats.valuations += static_cast<long>(valuations.size());
  return 0;
}
