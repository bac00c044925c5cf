#include "cc/ops/infer_context.h"

#include <algorithm>

#include "cc/dim/explain.h"

namespace shp {
namespace ops {

using dim::Cmp;
using dim::Expr;
using dim::Truth;
using trace::DType;

std::string InferContext::SpecStr(const Shape& sh) const {
  std::string t = "(";
  for (size_t i = 0; i < sh.size(); ++i) {
    if (i) t += ", ";
    t += sh[i] ? Str(sh[i]) : "_";
  }
  return t + (sh.size() == 1 ? ",)" : ")");
}

void InferContext::Fail(Code code, const std::string& msg) const {
  throw Error(code, Name() + ": " + msg);
}

void InferContext::Inconclusive(const Expr* a, Cmp op, const Expr* b,
                                const std::string& context) const {
  s_->ThrowIfDataDependent(a, op, b, Name() + ": " + context);
  std::string fact = Str(a) + " " + dim::CmpSymbol(op) + " " + Str(b);
  // Witnesses and verified fixes (dim/explain.h): only fixes that decide it are suggested.
  dim::Explanation why = dim::ExplainUndecided(s_, a, op, b, /*in_spec=*/true);
  throw Error(Code::kInconclusive,
              Name() + ": cannot decide whether " + fact + " (" + context +
                  ") under the constraints " + s_->ConstraintsToString() + "." + why.text,
              why.detail);
}

bool InferContext::Decide(const Expr* a, Cmp op, const Expr* b, const std::string& context) const {
  if (a == b) return op == Cmp::kEq || op == Cmp::kLe || op == Cmp::kGe;
  Truth t = s_->Compare(a, op, b);
  if (t == Truth::kUnknown) {
    GuardOnHints(a, op, b, context);
    return true;
  }
  return t == Truth::kTrue;
}

void InferContext::GuardOnHints(const Expr* a, Cmp op, const Expr* b,
                                const std::string& context) const {
  if (mode_ != InferMode::kTrace || s_->guard_policy() != dim::GuardPolicy::kFromHints) {
    Inconclusive(a, op, b, context);
  }
  int64_t l, r;
  if (!s_->EvaluateOnHints(a, &l, nullptr) || !s_->EvaluateOnHints(b, &r, nullptr)) {
    Inconclusive(a, op, b,
                 context + "; the guard policy decides on hints, but a variable has none");
  }
  const std::string fact = Str(a) + " " + dim::CmpSymbol(op) + " " + Str(b);
  if (!dim::CmpHolds(l, op, r)) {
    // The operation needs the comparison: on these hints it would fail, so nothing is guarded.
    Mismatch(fact + " is needed (" + context + ") but does not hold on the hints (" +
             s_->HintsText(a, b) + ": " + std::to_string(l) + " " + dim::CmpSymbol(op) + " " +
             std::to_string(r) + " is false)" +
             (op == Cmp::kEq && (l == 1 || r == 1)
                  ? "; a hint of 1 does not make a symbolic dimension broadcast (it broadcasts "
                    "only when provably 1: assume it == 1 with shp_scope_assume)"
                  : ""));
  }
  s_->AddGuard(a, op, b, "", Name() + ": " + context);
}

bool InferContext::IsOne(const Expr* e) const {
  return e == s_->Constant(1) ||
         (!e->IsConstant() && s_->Compare(e, Cmp::kEq, s_->Constant(1)) == Truth::kTrue);
}

void InferContext::CheckSize(const Expr* d, const std::string& what) const {
  if (s_->Compare(d, Cmp::kGe, s_->Constant(0)) == Truth::kFalse) {
    Mismatch(what + " " + Str(d) + " is negative");
  }
}

int64_t InferContext::NormAxis(int64_t axis, size_t rank, const std::string& what) const {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    Invalid(what + " " + std::to_string(axis) + " is out of range for an operand of rank " +
            std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

void InferContext::NormAxes(std::vector<int64_t>* axes, size_t rank) const {
  for (int64_t& ax : *axes) ax = NormAxis(ax, rank, "axis");
  std::sort(axes->begin(), axes->end());
  if (std::adjacent_find(axes->begin(), axes->end()) != axes->end())
    Invalid("an axis is listed twice");
}

void InferContext::RequireDType(DType t, bool ok, const std::string& what) const {
  if (!ok) Fail(Code::kDtypeMismatch, "expects " + what + ", got " + trace::DTypeName(t));
}

void InferContext::RequireRule(DType t, OperandRule rule, bool plural) const {
  // (The text of what is expected is made only for an error.)
  switch (rule) {
    case OperandRule::kAny:
      return;
    case OperandRule::kNumeric:
      if (!trace::IsNumeric(t))
        RequireDType(t, false, plural ? "numeric operands" : "a numeric operand");
      return;
    case OperandRule::kFloat:
      if (!trace::IsFloat(t))
        RequireDType(t, false, plural ? "floating-point operands" : "a floating-point operand");
      return;
    case OperandRule::kLogical:
      if (t != DType::kBool && !trace::IsInteger(t))
        RequireDType(t, false, plural ? "bool or integer operands" : "a bool or integer operand");
      return;
  }
}

void InferContext::SameDType(DType a, DType b) const {
  if (a != b) {
    Fail(Code::kDtypeMismatch, std::string("operand dtypes differ: ") + trace::DTypeName(a) +
                                   " and " + trace::DTypeName(b) + " (convert one operand first)");
  }
}

Shape InferContext::Broadcast(const std::vector<const Shape*>& shapes,
                              const std::string& what) const {
  size_t rank = 0;
  for (const Shape* sh : shapes) rank = std::max(rank, sh->size());
  Shape out(rank, nullptr);
  auto all = [&] {
    std::string t;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i) t += i + 1 == shapes.size() ? " and " : ", ";
      t += Str(*shapes[i]);
    }
    return t;
  };
  for (size_t k = 0; k < rank; ++k) {  // k counts from the last axis
    const Expr* acc = nullptr;
    for (const Shape* sh : shapes) {
      if (k >= sh->size()) continue;
      const Expr* d = (*sh)[sh->size() - 1 - k];
      if (acc == nullptr || acc == d) {
        acc = d;
        continue;
      }
      if (IsOne(d)) continue;
      if (IsOne(acc)) {
        acc = d;
        continue;
      }
      Truth t = s_->Compare(acc, Cmp::kEq, d);
      if (t == Truth::kTrue) continue;
      if (t == Truth::kFalse) {
        Mismatch("incompatible shapes for " + what + ": " + all() + " (axis " +
                 std::to_string(rank - 1 - k) + " of the result: " + Str(acc) + " vs " + Str(d) +
                 "; a symbolic dimension is broadcast only when it is provably 1)");
      }
      // A hint of 1 does not make a symbolic dimension broadcast: only equal sizes guard.
      GuardOnHints(
          acc, Cmp::kEq, d,
          "axis " + std::to_string(rank - 1 - k) + " of the result when " + what + " " + all());
    }
    out[rank - 1 - k] = acc;
  }
  return out;
}

const Expr* InferContext::Product(const Shape& sh) const {
  const Expr* p = s_->Constant(1);
  for (const Expr* d : sh) {
    if (d != nullptr) p = s_->Mul(p, d);
  }
  return p;
}

}  // namespace ops
}  // namespace shp
