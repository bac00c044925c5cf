// Hints and guards: example values of variables (never facts), and the guards recorded when a
// comparison the engine cannot decide is decided on the hints (as PyTorch does for backed
// SymInts), or assumed explicitly to trace one variant of a program.
#include <algorithm>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/explain.h"
#include "cc/dim/parse.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

Cmp NegateCmp(Cmp op) {
  switch (op) {
    case Cmp::kEq:
      return Cmp::kNe;
    case Cmp::kNe:
      return Cmp::kEq;
    case Cmp::kLt:
      return Cmp::kGe;
    case Cmp::kLe:
      return Cmp::kGt;
    case Cmp::kGt:
      return Cmp::kLe;
    case Cmp::kGe:
      return Cmp::kLt;
  }
  return op;
}

bool Scope::HintOf(int32_t var, int64_t* value) const {
  if (var < 0 || static_cast<size_t>(var) >= has_hint_.size() || !has_hint_[var]) return false;
  *value = hint_values_[static_cast<size_t>(var)];
  return true;
}

bool Scope::EvaluateOnHints(const Expr* e, int64_t* value,
                            std::vector<std::string>* missing) const {
  std::vector<int64_t> values(vars_.size(), 0);
  std::vector<bool> known(vars_.size(), false);
  bool complete = true;
  for (int32_t v : VarsOf(e)) {
    int64_t h;
    if (HintOf(v, &h)) {
      values[static_cast<size_t>(v)] = h;
      known[static_cast<size_t>(v)] = true;
    } else {
      complete = false;
      if (missing != nullptr) missing->push_back(vars_[static_cast<size_t>(v)].name);
    }
  }
  if (!complete) return false;
  try {
    *value = Evaluate(e, values, known);
  } catch (const Error&) {
    return false;  // divides by zero or overflows on the hints: no value to decide with
  }
  return true;
}

std::string Scope::HintsText(const Expr* a, const Expr* b) const {
  std::vector<int32_t> vars = VarsOf(a);
  for (int32_t v : VarsOf(b)) vars.push_back(v);
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  std::string t;
  for (int32_t v : vars) {
    int64_t h;
    if (!HintOf(v, &h)) continue;
    t += (t.empty() ? "" : ", ") + vars_[static_cast<size_t>(v)].name + " = " + std::to_string(h);
  }
  return t;
}

void Scope::CheckAgainstHints(const Expr* a, Cmp op, const Expr* b, const std::string& what) const {
  int64_t l, r;
  if (!EvaluateOnHints(a, &l, nullptr) || !EvaluateOnHints(b, &r, nullptr)) return;
  if (CmpHolds(l, op, r)) return;
  throw Error(Code::kConstraintViolation,
              what + " does not hold on the hints (" + HintsText(a, b) + ": " + std::to_string(l) +
                  " " + CmpSymbol(op) + " " + std::to_string(r) +
                  " is false); change the hints first (shp_scope_set_hint)");
}

void Scope::SetHint(const std::string& name, int64_t value) {
  if (!IsValidVarName(name)) {
    throw Error(Code::kInvalidArgument, "cannot set a hint for '" + QuoteForMessage(name) +
                                            "': not a valid dimension variable name");
  }
  int32_t v = FindVar(name);
  if (v < 0) v = Var(name, /*mark_used=*/false)->AsVar();
  const Variable& var = vars_[static_cast<size_t>(v)];
  if (var.unbacked) {
    throw Error(Code::kInvalidArgument,
                "cannot set a hint for '" + name + "': it is data-dependent (produced by " +
                    var.origin +
                    "), so it has no example value; state what you know about it with "
                    "shp_scope_check instead");
  }
  if (value < var.lo || value > var.hi) {
    throw Error(Code::kConstraintViolation, "the hint " + name + " = " + std::to_string(value) +
                                                " lies outside the range [" + BoundText(var.lo) +
                                                ", " + BoundText(var.hi) + "] of '" + name + "'");
  }
  if (has_hint_.size() < vars_.size()) {
    has_hint_.resize(vars_.size(), false);
    hint_values_.resize(vars_.size(), 0);
  }
  const bool had = has_hint_[static_cast<size_t>(v)];
  const int64_t old = hint_values_[static_cast<size_t>(v)];
  has_hint_[static_cast<size_t>(v)] = true;
  hint_values_[static_cast<size_t>(v)] = value;
  try {
    for (const Fact& f : facts_) {
      const char* kind = f.is_guard ? "guard" : f.is_assertion ? "check" : "constraint";
      CheckAgainstHints(f.lhs, f.op, f.rhs, std::string("the ") + kind + " '" + f.text + "'");
    }
  } catch (...) {
    has_hint_[static_cast<size_t>(v)] = had;
    hint_values_[static_cast<size_t>(v)] = old;
    throw;
  }
}

bool Scope::Guard(const Expr* a, Cmp op, const Expr* b, const std::string& message,
                  const std::string& origin) {
  CheckSameScope(a, b, "guard");
  Truth t = Compare(a, op, b);
  if (t != Truth::kUnknown) return t == Truth::kTrue;
  ThrowIfDataDependent(a, op, b, origin.empty() ? "a guard" : origin);
  std::string text = ToString(a) + " " + CmpSymbol(op) + " " + ToString(b);
  std::vector<std::string> missing;
  int64_t l = 0, r = 0;
  bool la = EvaluateOnHints(a, &l, &missing);
  bool lb = EvaluateOnHints(b, &r, &missing);
  if (!la || !lb) {
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "'" : ", '") + m + "'";
    // Witnesses and verified fixes (explain.h) make the answer explain itself.
    Explanation why = ExplainUndecided(this, a, op, b, /*in_spec=*/false);
    throw Error(
        Code::kInconclusive,
        "cannot decide whether " + text + " under the constraints " + ConstraintsToString() +
            ", and " +
            (missing.empty() ? std::string("it cannot be evaluated on the hints")
                             : "the variable" + std::string(missing.size() > 1 ? "s " : " ") +
                                   names + (missing.size() > 1 ? " have" : " has") + " no hint") +
            "." + why.text +
            " To fix it otherwise: give every variable a hint (shp_scope_set_hint) to guard on "
            "it, or assume it (shp_scope_assume)",
        why.detail);
  }
  const bool holds = CmpHolds(l, op, r);
  AddGuard(a, holds ? op : NegateCmp(op), b, message, origin);
  return holds;
}

void Scope::Assume(const Expr* a, Cmp op, const Expr* b, const std::string& message,
                   const std::string& origin) {
  CheckSameScope(a, b, "assume");
  Truth t = Compare(a, op, b);
  std::string text = ToString(a) + " " + CmpSymbol(op) + " " + ToString(b);
  if (t == Truth::kTrue) return;  // already a consequence of the facts: nothing to guard
  if (t == Truth::kFalse) {
    throw Error(Code::kUnsatisfiable,
                "cannot assume '" + text + "': it contradicts the constraints " +
                    ConstraintsToString() +
                    (message.empty() ? "" : " (" + EscapeForMessage(message) + ")"));
  }
  CheckAgainstHints(a, op, b, "the assumption '" + text + "'");
  AddGuard(a, op, b, message, origin);
}

void Scope::AddGuard(const Expr* a, Cmp op, const Expr* b, const std::string& message,
                     const std::string& origin) {
  CheckSameScope(a, b, "guard");
  AppendFact(Fact{a, op, b, ToString(a) + " " + CmpSymbol(op) + " " + ToString(b), message,
                  /*is_assertion=*/true, /*is_guard=*/true, origin, false});
}

void Scope::DropFactsAfter(size_t n) {
  if (facts_.size() <= n) return;
  facts_.erase(facts_.begin() + static_cast<std::ptrdiff_t>(n), facts_.end());
  FactsChanged();
}

}  // namespace dim
}  // namespace shp
