// Evaluation of normal forms: dim::Evaluate (the runtime's, lock-free) and
// Scope::Evaluate (solving and witnesses) share one walk and differ in their errors.
#include "cc/dim/eval.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/dim/detail/normal_form.h"

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

// Terms, factors and atom operands in normal-form order, so the first failure is the same
// for every policy. Policy: Var(atom), DivisionByZero(e, atom), Mul(a, b), Add(a, b).
template <typename Policy>
int64_t EvaluateWith(const Policy& p, const Expr* e) {
  int64_t sum = 0;
  for (const Term& t : e->terms) {
    int64_t prod = t.coeff;
    for (const Factor& f : t.mono->factors) {
      const Atom* at = f.atom;
      int64_t v = 0;
      switch (at->kind) {
        case AtomKind::kVar:
          v = p.Var(at);
          break;
        case AtomKind::kFloorDiv:
        case AtomKind::kMod: {
          int64_t x = EvaluateWith(p, at->a), y = EvaluateWith(p, at->b);
          if (y == 0) p.DivisionByZero(e, at);
          v = at->kind == AtomKind::kFloorDiv ? FloorDivInt(x, y) : ModInt(x, y);
          break;
        }
        case AtomKind::kMax:
        case AtomKind::kMin: {
          int64_t x = EvaluateWith(p, at->a), y = EvaluateWith(p, at->b);
          v = at->kind == AtomKind::kMax ? std::max(x, y) : std::min(x, y);
          break;
        }
      }
      prod = MulPow(p, prod, v, f.exp);
    }
    sum = p.Add(sum, prod);
  }
  return sum;
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
    if (__builtin_add_overflow(a, b, &r))
      throw Error(Code::kOverflow, "runtime: a dimension overflows int64");
    return r;
  }
};

// The scope's messages: they print the expressions and name unknown variables.
struct ScopePolicy {
  const Scope& s;
  const std::vector<int64_t>& values;
  const std::vector<bool>& known;
  int64_t Var(const Atom* at) const {
    if (at->var >= static_cast<int32_t>(values.size()) || !known[at->var]) {
      throw Error(Code::kUnsolvable,
                  "no value for dimension variable '" + s.VarName(at->var) + "'");
    }
    return values[at->var];
  }
  [[noreturn]] void DivisionByZero(const Expr* e, const Atom* at) const {
    throw Error(Code::kDivisionByZero, "division by zero evaluating '" + s.ToString(e) +
                                           "': divisor '" + s.ToString(at->b) + "' is 0");
  }
  int64_t Mul(int64_t a, int64_t b) const { return CheckedMul(a, b); }
  int64_t Add(int64_t a, int64_t b) const { return CheckedAdd(a, b); }
};

}  // namespace

int64_t Evaluate(const Expr* e, const std::vector<int64_t>& vars) {
  return EvaluateWith(RuntimePolicy{vars}, e);
}

int64_t Scope::Evaluate(const Expr* e, const std::vector<int64_t>& values,
                        const std::vector<bool>& known) const {
  return EvaluateWith(ScopePolicy{*this, values, known}, e);
}

void CollectVars(const Expr* e, std::vector<VarRef>* out) {
  if (e == nullptr) return;
  for (const Term& t : e->terms) {
    for (const Factor& f : t.mono->factors) {
      const Atom* at = f.atom;
      if (at->kind != AtomKind::kVar) {
        CollectVars(at->a, out);
        CollectVars(at->b, out);
        continue;
      }
      bool seen = std::any_of(out->begin(), out->end(),
                              [at](const VarRef& r) { return r.index == at->var; });
      if (!seen) out->push_back(VarRef{at->var, at->name});
    }
  }
}

}  // namespace dim
}  // namespace shp
