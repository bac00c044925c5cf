// Evaluation of normal forms: dim::Evaluate (the runtime's, lock-free) and
// Scope::Evaluate (solving and witnesses) share one walk and differ in their errors.
#include "cc/dim/eval.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/dim/detail/fold.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/int_math.h"

namespace shp {
namespace dim {
namespace {

// prod * v^exp, multiplying one factor at a time as the definition reads (so overflow is
// reported exactly when an intermediate product leaves int64), with the steps that cannot
// overflow skipped: exponents reach 2^20.
template <typename Policy>
int64_t MulPow(const Policy& p, int64_t prod, int64_t v, int32_t exp) {
  if (v == 1 || prod == 0) return prod;
  if (v == 0) return 0;
  if (v == -1) {
    if (prod == INT64_MIN) return p.Mul(prod, v);  // throws
    return (exp % 2) ? -prod : prod;
  }
  for (int32_t i = 0; i < exp; ++i) prod = p.Mul(prod, v);  // |v| >= 2: at most 63 steps
  return prod;
}

// Terms, factors and atom operands in normal-form order (operand a, then b, then the
// division-by-zero check), so the first failure is the same for every policy; without
// recursion (FoldExpr), in time linear in the expression written out (<= kMaxExpandedSize).
// Policy: Var(atom), DivisionByZero(e, atom), Mul(a, b), Add(a, b), Overflow().
template <typename Policy>
struct Evaluation {
  using Value = int64_t;
  struct State {
    int64_t sum = 0;
    int64_t prod = 0;  // of the current term's factors so far
  };
  const Policy& p;
  bool Find(const Expr*, int64_t*) { return false; }
  void Begin(const Expr*, State*) {}
  void BeginTerm(const Term& t, State* s) { s->prod = t.coeff; }
  void Factor(const dim::Factor& f, int64_t v, State* s) { s->prod = MulPow(p, s->prod, v, f.exp); }
  void EndTerm(const Term&, State* s) { s->sum = p.Add(s->sum, s->prod); }
  int64_t End(const Expr*, State* s) { return s->sum; }
  bool FindAtom(const Atom*, int64_t*) { return false; }
  int64_t Var(const Atom* at) { return p.Var(at); }
  int64_t Op(const Expr* e, const Atom* at, int64_t x, int64_t y) {
    switch (at->kind) {
      case AtomKind::kFloorDiv:
      case AtomKind::kMod:
        if (y == 0) p.DivisionByZero(e, at);
        return at->kind == AtomKind::kFloorDiv ? FloorDivInt(x, y) : ModInt(x, y);
      case AtomKind::kMax:
        return std::max(x, y);
      default:  // kMin (a variable is never an operation)
        return std::min(x, y);
    }
  }
};

// Dims whose atoms nest at most this deep (nearly every shape, spec and fact) are evaluated
// by direct recursion of bounded depth instead of the fold's explicit stack.
constexpr int32_t kDirectDepth = 3;

// Evaluation's operations in its order (terms, factors, operand a then b, then the atom's own
// check), so the same value and the same first error as the fold.
template <typename Policy>
int64_t EvaluateDirect(const Policy& p, const Expr* e) {
  int64_t sum = 0;
  for (const Term& t : e->terms) {
    int64_t prod = t.coeff;
    for (const Factor& f : t.mono->factors) {
      const Atom* at = f.atom;
      int64_t v;
      if (at->kind == AtomKind::kVar) {
        v = p.Var(at);
      } else {
        const int64_t x = EvaluateDirect(p, at->a);
        const int64_t y = EvaluateDirect(p, at->b);
        v = Evaluation<Policy>{p}.Op(e, at, x, y);
      }
      prod = MulPow(p, prod, v, f.exp);
    }
    sum = p.Add(sum, prod);
  }
  return sum;
}

// The int64 walks report overflow as soon as a product or a partial sum leaves int64, but the
// expansion of a power can have terms near 2^63 while its value is small: (((a - 2)^3)^3)^3 is
// 2^27 at a = 4, with a term -569634324480*a^12 there. After such an overflow the expression is
// evaluated again with each term and each sum in 128 bits: only a term that leaves 128 bits,
// or a value (the expression's or an atom operand's) that leaves int64, overflows. A value is
// exact either way; the retry only turns some overflows into the value they stood for.
template <typename Policy>
struct WideEvaluation {
  using Value = int64_t;
  using Wide = __int128;
  struct State {
    Wide sum = 0;
    Wide prod = 0;
  };
  const Policy& p;
  bool Find(const Expr*, int64_t*) { return false; }
  void Begin(const Expr*, State*) {}
  void BeginTerm(const Term& t, State* s) { s->prod = t.coeff; }
  void Factor(const dim::Factor& f, int64_t v, State* s) {
    if (!MulPowWide(&s->prod, v, f.exp)) p.Overflow();
  }
  void EndTerm(const Term&, State* s) {
    if (__builtin_add_overflow(s->sum, s->prod, &s->sum)) p.Overflow();
  }
  int64_t End(const Expr*, State* s) {
    const Wide v = s->sum;
    if (v < INT64_MIN || v > INT64_MAX) p.Overflow();
    return static_cast<int64_t>(v);
  }
  bool FindAtom(const Atom*, int64_t*) { return false; }
  int64_t Var(const Atom* at) { return p.Var(at); }
  int64_t Op(const Expr* e, const Atom* at, int64_t x, int64_t y) {
    return Evaluation<Policy>{p}.Op(e, at, x, y);
  }
};

template <typename Policy>
int64_t EvaluateWith(const Policy& p, const Expr* e) {
  std::exception_ptr overflow;
  try {
    bool shallow = true;
    for (const Term& t : e->terms) {
      for (const Factor& f : t.mono->factors) shallow = shallow && f.atom->depth <= kDirectDepth;
    }
    if (shallow) return EvaluateDirect(p, e);
    Evaluation<Policy> evaluation{p};
    return detail::FoldExpr(&evaluation, e);
  } catch (const Error& err) {
    if (err.code() != Code::kOverflow) throw;
    overflow = std::current_exception();
  }
  // Where the retry fails too, the first walk's error stands (the same error as before).
  try {
    WideEvaluation<Policy> wide{p};
    return detail::FoldExpr(&wide, e);
  } catch (const Error&) {
    std::rethrow_exception(overflow);
  }
}

// The runtime's messages (it evaluated expressions itself before dim::Evaluate existed).
struct RuntimePolicy {
  const std::vector<int64_t>& vars;
  int64_t Var(const Atom* at) const {
    if (static_cast<size_t>(at->var) >= vars.size()) {
      throw Error(Code::kInvalidArgument,
                  std::string("no value for dimension variable '") + at->name + "'");
    }
    return vars[static_cast<size_t>(at->var)];
  }
  [[noreturn]] void DivisionByZero(const Expr*, const Atom*) const {
    throw Error(Code::kDivisionByZero, "runtime: a dimension divides by zero");
  }
  int64_t Mul(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
      throw Error(Code::kOverflow, "runtime: an array size overflows int64");
    return r;
  }
  int64_t Add(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) Overflow();
    return r;
  }
  [[noreturn]] void Overflow() const {
    throw Error(Code::kOverflow, "runtime: a dimension overflows int64");
  }
};

// The scope's messages: they print the expressions and name unknown variables.
struct ScopePolicy {
  const Scope& s;
  const std::vector<int64_t>& values;
  const std::vector<bool>& known;
  // The checks inline; building an error is out of line (witness searches evaluate often).
  int64_t Var(const Atom* at) const {
    if (at->var >= static_cast<int32_t>(values.size()) || !known[at->var]) NoValue(at);
    return values[at->var];
  }
  [[noreturn]] __attribute__((noinline)) void NoValue(const Atom* at) const {
    throw Error(Code::kUnsolvable, "no value for dimension variable '" + s.VarName(at->var) + "'");
  }
  [[noreturn]] void DivisionByZero(const Expr* e, const Atom* at) const {
    throw Error(Code::kDivisionByZero, "division by zero evaluating '" + s.ToString(e) +
                                           "': divisor '" + s.ToString(at->b) + "' is 0");
  }
  // On overflow CheckedMul and CheckedAdd throw their error.
  int64_t Mul(int64_t a, int64_t b) const {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? CheckedMul(a, b) : r;
  }
  int64_t Add(int64_t a, int64_t b) const {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? CheckedAdd(a, b) : r;
  }
  [[noreturn]] __attribute__((noinline)) void Overflow() const {
    throw Error(Code::kOverflow, "integer overflow in dimension arithmetic");
  }
};

// Interval arithmetic on __int128 with +-kInf standing for unbounded: finite bounds are
// int64 values, and any result beyond int64 becomes unbounded (weaker, never wrong).
using Wide = __int128;
constexpr Wide kInf = static_cast<Wide>(1) << 100;

Wide Clamp(Wide x) { return x > INT64_MAX ? kInf : x < INT64_MIN ? -kInf : x; }
Wide FromBound(int64_t x) { return x == kPosInf ? kInf : x == kNegInf ? -kInf : x; }
int64_t ToBound(Wide x) {
  return x >= kInf ? kPosInf : x <= -kInf ? kNegInf : static_cast<int64_t>(x);
}

struct WideInterval {
  Wide lo = 0, hi = 0;
};

Wide MulWide(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  if (a >= kInf || a <= -kInf || b >= kInf || b <= -kInf) return (a > 0) == (b > 0) ? kInf : -kInf;
  return Clamp(a * b);  // |a|, |b| < 2^63: the product fits
}

WideInterval MulIv(WideInterval x, WideInterval y) {
  Wide c[4] = {MulWide(x.lo, y.lo), MulWide(x.lo, y.hi), MulWide(x.hi, y.lo), MulWide(x.hi, y.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// floor(a / b) for b != 0, either possibly unbounded.
Wide FloorDivWide(Wide a, Wide b) {
  const bool a_inf = a >= kInf || a <= -kInf, b_inf = b >= kInf || b <= -kInf;
  if (b_inf) {
    if (a_inf) return (a > 0) == (b > 0) ? kInf : -kInf;  // unknown magnitude: widest
    return a == 0 || (a > 0) == (b > 0) ? 0 : -1;
  }
  if (a_inf) return (a > 0) == (b > 0) ? kInf : -kInf;
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return Clamp(q);
}

struct IntervalEvaluation {
  using Value = WideInterval;
  struct State {
    WideInterval sum{0, 0};
    WideInterval prod{0, 0};
  };
  const std::vector<std::pair<int64_t, int64_t>>& vars;
  bool Find(const Expr*, Value*) { return false; }
  void Begin(const Expr*, State*) {}
  void BeginTerm(const Term& t, State* s) { s->prod = {t.coeff, t.coeff}; }
  void Factor(const dim::Factor& f, const Value& v, State* s) {
    WideInterval p{1, 1};
    if (f.exp % 2 == 0 && v.lo < 0 && v.hi > 0) {
      // Even power over a range with both signs: [0, max(lo^e, hi^e)].
      Wide m = std::max(-v.lo, v.hi);
      WideInterval a{m, m};
      for (int32_t i = 0; i < f.exp && p.hi < kInf && m > 1; ++i) p = MulIv(p, a);
      if (m <= 1) p = {m, m};
      p = {0, p.hi};
    } else {
      for (int32_t i = 0; i < f.exp; ++i) {
        const WideInterval before = p;
        p = MulIv(p, v);
        if (p.lo == before.lo && p.hi == before.hi) break;  // a fixed point (saturated, 0 or 1)
      }
    }
    s->prod = MulIv(s->prod, p);
  }
  void EndTerm(const Term&, State* s) {
    s->sum = {Clamp(s->sum.lo + s->prod.lo), Clamp(s->sum.hi + s->prod.hi)};
  }
  Value End(const Expr*, State* s) { return s->sum; }
  bool FindAtom(const Atom*, Value*) { return false; }
  Value Var(const Atom* at) {
    if (static_cast<size_t>(at->var) >= vars.size()) return {-kInf, kInf};
    const auto& r = vars[static_cast<size_t>(at->var)];
    return {FromBound(r.first), FromBound(r.second)};
  }
  Value Op(const Expr*, const Atom* at, const Value& x, const Value& y) {
    switch (at->kind) {
      case AtomKind::kFloorDiv: {
        if (y.lo <= 0 && y.hi >= 0) return {-kInf, kInf};
        Wide c[4] = {FloorDivWide(x.lo, y.lo), FloorDivWide(x.lo, y.hi), FloorDivWide(x.hi, y.lo),
                     FloorDivWide(x.hi, y.hi)};
        return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      case AtomKind::kMod:
        if (y.lo > 0) {
          Wide hi = y.hi >= kInf ? kInf : y.hi - 1;
          if (x.lo >= 0) hi = std::min(hi, x.hi);
          return {0, hi};
        }
        if (y.hi < 0) {
          Wide lo = y.lo <= -kInf ? -kInf : y.lo + 1;
          if (x.hi <= 0) lo = std::max(lo, x.lo);
          return {lo, 0};
        }
        return {-kInf, kInf};
      case AtomKind::kMax:
        return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
      default:  // kMin
        return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
    }
  }
};

}  // namespace

std::pair<int64_t, int64_t> EvaluateBounds(const Expr* e,
                                           const std::vector<std::pair<int64_t, int64_t>>& vars) {
  IntervalEvaluation ev{vars};
  WideInterval r = detail::FoldExpr(&ev, e);
  return {ToBound(r.lo), ToBound(r.hi)};
}

int64_t Evaluate(const Expr* e, const std::vector<int64_t>& vars) {
  return EvaluateWith(RuntimePolicy{vars}, e);
}

int64_t Scope::Evaluate(const Expr* e, const std::vector<int64_t>& values,
                        const std::vector<bool>& known) const {
  return EvaluateWith(ScopePolicy{*this, values, known}, e);
}

void CollectVars(const Expr* e, std::vector<VarRef>* out) {
  // A worklist in the order of a recursive walk (terms, factors, operand a before b), not
  // recursion: nesting may reach kMaxNestingDepth on a small caller stack.
  std::vector<const Atom*> todo;
  auto push_atoms = [&todo](const Expr* x) {
    for (auto t = x->terms.rbegin(); t != x->terms.rend(); ++t) {
      for (auto f = t->mono->factors.rbegin(); f != t->mono->factors.rend(); ++f)
        todo.push_back(f->atom);
    }
  };
  if (e != nullptr) push_atoms(e);
  while (!todo.empty()) {
    const Atom* at = todo.back();
    todo.pop_back();
    if (at->kind != AtomKind::kVar) {
      push_atoms(at->b);
      push_atoms(at->a);
      continue;
    }
    bool seen =
        std::any_of(out->begin(), out->end(), [at](const VarRef& r) { return r.index == at->var; });
    if (!seen) out->push_back(VarRef{at->var, at->name});
  }
}

}  // namespace dim
}  // namespace shp
