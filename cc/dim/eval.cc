// Evaluation of normal forms: dim::Evaluate (the runtime's, lock-free) and
// Scope::Evaluate (solving and witnesses) share one walk and differ in their errors.
#include "cc/dim/eval.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/dim/detail/fold.h"
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

// Terms, factors and atom operands in normal-form order (operand a, then b, then the
// division-by-zero check), so the first failure is the same for every policy; without
// recursion (FoldExpr), in time linear in the expression written out (<= kMaxExpandedSize).
// Policy: Var(atom), DivisionByZero(e, atom), Mul(a, b), Add(a, b).
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

template <typename Policy>
int64_t EvaluateWith(const Policy& p, const Expr* e) {
  Evaluation<Policy> evaluation{p};
  return detail::FoldExpr(&evaluation, e);
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
