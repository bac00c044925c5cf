// Unbacked (data-dependent) variables: sizes an op reads from the data at run time (nonzero,
// boolean_mask, size_from_value), like PyTorch's unbacked SymInts. They have a range and the
// derived facts their op guarantees (u <= numel(x)), no hint, and are never solved from input
// shapes; a comparison that needs more than those facts fails with a message that teaches the
// fix (shp_scope_check), never with a guess.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/explain.h"
#include "cc/dim/parse.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

const Expr* Scope::NewUnbacked(const std::string& name, int64_t lo, int64_t hi, const Expr* upper,
                               const std::string& origin) {
  std::string n = name;
  if (n.empty()) {
    for (int k = 0;; ++k) {
      n = "u" + std::to_string(k);
      if (FindVar(n) < 0) break;
    }
  } else if (FindVar(n) >= 0) {
    throw Error(Code::kInvalidArgument,
                "cannot name the data-dependent size '" + n +
                    "': the scope already has a dimension variable of that name");
  }
  if (upper != nullptr && upper->scope != this) CheckSameScope(upper, upper, "data-dependent size");
  Declare(n, lo, hi);  // checks the name and the range
  const int32_t v = FindVar(n);
  vars_[static_cast<size_t>(v)].unbacked = true;
  vars_[static_cast<size_t>(v)].origin = origin;
  const Expr* u = Var(n);
  if (upper != nullptr) {
    try {
      AddDerived(u, Cmp::kLe, upper);
    } catch (...) {
      // Keep the scope as it was apart from the unused variable's name.
      vars_[static_cast<size_t>(v)].used = true;
      throw;
    }
  }
  return u;
}

void Scope::AddDerived(const Expr* a, Cmp op, const Expr* b) {
  CheckSameScope(a, b, "derived fact");
  Fact f{a,
         op,
         b,
         ToString(a) + " " + CmpSymbol(op) + " " + ToString(b),
         "",
         false,
         false,
         "",
         /*is_derived=*/true};
  AppendFact(std::move(f));
}

void Scope::MarkUnbacked(const std::string& name, const std::string& origin) {
  int32_t v = FindVar(name);
  if (v < 0) v = Var(name, /*mark_used=*/false)->AsVar();
  vars_[static_cast<size_t>(v)].unbacked = true;
  vars_[static_cast<size_t>(v)].origin = origin;
}

void Scope::ThrowIfDataDependent(const Expr* a, Cmp op, const Expr* b, const std::string& what) {
  std::vector<int32_t> vars = VarsOf(a);
  for (int32_t v : VarsOf(b)) vars.push_back(v);
  std::string about;
  bool any = false;
  for (int32_t v : vars) {
    const Variable& var = vars_[static_cast<size_t>(v)];
    if (!var.unbacked || about.find("'" + var.name + "'") != std::string::npos) continue;
    any = true;
    Interval iv = Bounds(Var(var.name));
    std::string derived;
    for (const Fact& f : facts_) {
      if (!f.is_derived) continue;
      std::vector<int32_t> fv = VarsOf(f.lhs);
      if (std::find(fv.begin(), fv.end(), v) == fv.end()) continue;
      derived += (derived.empty() ? "" : ", ") + f.text;
    }
    about += (about.empty() ? "" : "; ") + std::string("'") + var.name +
             "' is data-dependent: it is the size produced by " + var.origin +
             ", known only at run time, with bounds [" + BoundText(iv.lo) + ", " +
             BoundText(iv.hi) + "]" + (derived.empty() ? "" : " (" + derived + ")");
  }
  if (!any) return;
  const std::string text = ToString(a) + " " + CmpSymbol(op) + " " + ToString(b);
  // The witnesses (valuations the data may produce) are verified as for any undecided
  // comparison; the one fix is the check, since a data-dependent size has no hint to guard on
  // and no constraint can name it when the scope is created.
  const std::string fix = "shp_scope_check(scope, " + ToString(a) + ", " + CmpCName(op) + ", " +
                          ToString(b) + ", message)";
  auto detail = std::make_shared<ErrorDetail>();
  std::string witnesses;
  Explanation why = ExplainUndecided(this, a, op, b, /*in_spec=*/false);
  if (why.detail != nullptr) {
    detail->witnesses = why.detail->witnesses;
    for (const ErrorWitness& w : detail->witnesses) {
      witnesses += (witnesses.empty() ? " Values the data may produce: " : "; ") + WitnessText(w) +
                   (w.holds ? " makes it true" : " makes it false");
    }
    if (!witnesses.empty()) witnesses += ".";
  }
  detail->fixes.push_back(fix);
  throw Error(Code::kInconclusive,
              "cannot decide whether " + text + " (" + what + "): " + about +
                  ". It has no example value to guard on." + witnesses +
                  " To fix it, state the fact: " + fix +
                  " (like torch._check): the engine then uses it, and the runtime checks it "
                  "once the value is known (SHP_CONSTRAINT_VIOLATION when the data violates "
                  "it)",
              std::move(detail));
}

}  // namespace dim
}  // namespace shp
