#include "cc/dim/eval.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "cc/base/error.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {
namespace {

// The messages are the runtime's (it evaluated expressions itself before this function).
int64_t MulOrThrow(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(Code::kOverflow, "runtime: an array size overflows int64");
  return r;
}

// prod * v^exp, multiplying one factor at a time as the definition reads (so overflow is
// reported exactly when an intermediate product leaves int64), with the steps that cannot
// overflow skipped: exponents reach 2^20.
int64_t MulPow(int64_t prod, int64_t v, int32_t exp) {
  if (v == 1 || prod == 0) return prod;
  if (v == 0) return 0;
  if (v == -1) {
    if (prod == INT64_MIN) return MulOrThrow(prod, v);
    return (exp % 2) ? -prod : prod;
  }
  for (int32_t i = 0; i < exp; ++i) prod = MulOrThrow(prod, v);  // |v| >= 2: at most 63 steps
  return prod;
}

}  // namespace

int64_t Evaluate(const Expr* e, const std::vector<int64_t>& vars) {
  int64_t sum = 0;
  for (const Term& t : e->terms) {
    int64_t prod = t.coeff;
    for (const Factor& f : t.mono->factors) {
      const Atom* at = f.atom;
      int64_t v = 0;
      switch (at->kind) {
        case AtomKind::kVar:
          if (static_cast<size_t>(at->var) >= vars.size()) {
            throw Error(Code::kInvalidArgument,
                        std::string("no value for dimension variable '") + at->name + "'");
          }
          v = vars[static_cast<size_t>(at->var)];
          break;
        case AtomKind::kFloorDiv:
        case AtomKind::kMod: {
          int64_t x = Evaluate(at->a, vars), y = Evaluate(at->b, vars);
          if (y == 0) throw Error(Code::kDivisionByZero, "runtime: a dimension divides by zero");
          v = at->kind == AtomKind::kFloorDiv ? FloorDivInt(x, y) : ModInt(x, y);
          break;
        }
        case AtomKind::kMax:
        case AtomKind::kMin: {
          int64_t x = Evaluate(at->a, vars), y = Evaluate(at->b, vars);
          v = at->kind == AtomKind::kMax ? std::max(x, y) : std::min(x, y);
          break;
        }
      }
      prod = MulPow(prod, v, f.exp);
    }
    if (__builtin_add_overflow(sum, prod, &sum)) {
      throw Error(Code::kOverflow, "runtime: a dimension overflows int64");
    }
  }
  return sum;
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
      bool seen = std::any_of(out->begin(), out->end(), [at](const VarRef& r) { return r.index == at->var; });
      if (!seen) out->push_back(VarRef{at->var, at->name});
    }
  }
}

}  // namespace dim
}  // namespace shp
