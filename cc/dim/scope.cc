// Scope: creation, variables and their ranges, facts (constraints and assertions), and the
// queries answered by the decision procedure. Building normal forms is in normal_form.cc,
// evaluation in eval.cc, printing in print.cc, parsing in parse.cc, the decision procedure
// in decide.cc.
#include "cc/dim/scope.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/limits.h"
#include "cc/dim/decide.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/parse.h"

namespace shp {
namespace dim {

bool CmpHolds(int64_t a, Cmp op, int64_t b) {
  // Bit i of entry op: whether op holds when a is less than (i = 0), equal to (1) or greater
  // than (2) b. Indexed by the enum's values, fixed in scope.h.
  static constexpr uint8_t kHolds[] = {/*kEq*/ 2, /*kNe*/ 5, /*kLt*/ 1,
                                       /*kLe*/ 3, /*kGt*/ 4, /*kGe*/ 6};
  static_assert(static_cast<int>(Cmp::kGe) == 5, "one entry per comparison");
  const int order = a < b ? 0 : (a == b ? 1 : 2);
  return (kHolds[static_cast<int>(op)] >> order) & 1;
}

const char* CmpSymbol(Cmp op) {
  // clang-format off
  switch (op) {
    case Cmp::kEq: return "==";
    case Cmp::kNe: return "!=";
    case Cmp::kLt: return "<";
    case Cmp::kLe: return "<=";
    case Cmp::kGt: return ">";
    case Cmp::kGe: return ">=";
  }
  // clang-format on
  return "?";
}

const char* CmpCName(Cmp op) {
  // clang-format off
  switch (op) {
    case Cmp::kEq: return "SHP_CMP_EQ";
    case Cmp::kNe: return "SHP_CMP_NE";
    case Cmp::kLt: return "SHP_CMP_LT";
    case Cmp::kLe: return "SHP_CMP_LE";
    case Cmp::kGt: return "SHP_CMP_GT";
    case Cmp::kGe: return "SHP_CMP_GE";
  }
  // clang-format on
  return "?";
}

std::string BoundText(int64_t v) {
  return v == kNegInf ? "-inf" : v == kPosInf ? "inf" : std::to_string(v);
}

// ---- Construction ----

Scope::Scope() : store_(new Store()), decider_(new Decider(this)) { unit_mono_ = InternMono({}); }
Scope::~Scope() = default;

std::unique_ptr<Scope> Scope::Create(const std::vector<std::string>& constraints) {
  return Create(constraints, {});
}

std::unique_ptr<Scope> Scope::Create(const std::vector<std::string>& constraints,
                                     const std::vector<Declaration>& declarations) {
  std::unique_ptr<Scope> s(new Scope());
  for (const Declaration& d : declarations) s->Declare(d.name, d.lo, d.hi);
  s->constraint_texts_ = constraints;
  s->LoadConstraints();
  return s;
}

void Scope::FactsChanged(bool appended) {
  ++generation_;
  memo_.Clear();                          // floordiv/mod/max/min results depend on the facts
  if (!appended) where_defined_.clear();  // derived under facts that may be gone
  decider_->Reset(appended);
}

DecideStats Scope::decide_stats() const { return decider_->stats(); }

std::vector<Interval> Scope::VarBounds() { return decider_->VarBounds(); }

void Scope::SeedVarBounds(std::vector<Interval> bounds) {
  FactsChanged(/*appended=*/true);  // caches start afresh under the seeded bounds
  decider_->Seed(std::move(bounds));
}

void Scope::LoadConstraints() {
  facts_.erase(std::remove_if(facts_.begin(), facts_.end(),
                              [](const Fact& f) { return !f.is_assertion && !f.is_derived; }),
               facts_.end());
  // Ranges or facts changed: parsing must not reuse folds or bounds cached under the old
  // ones (after a refused Declare, the restore reused those of the refused range).
  FactsChanged();
  if (constraint_texts_.size() + facts_.size() > limits::kMaxFacts) {
    throw Error(Code::kUnsupported,
                std::to_string(constraint_texts_.size()) + " constraints and " +
                    std::to_string(facts_.size()) +
                    " assertions, guards and derived facts are more facts than the limit (a "
                    "program loads at most " +
                    std::to_string(limits::kMaxFacts) + ")");
  }
  std::vector<Fact> loaded;
  loaded.reserve(constraint_texts_.size());
  for (size_t i = 0; i < constraint_texts_.size(); ++i) {
    loaded.push_back(ParseConstraint(this, constraint_texts_[i]));
  }
  if (facts_.empty()) {
    facts_ = std::move(loaded);
  } else {
    facts_.insert(facts_.begin(), std::make_move_iterator(loaded.begin()),
                  std::make_move_iterator(loaded.end()));
  }
  FactsChanged();
  decider_->CheckSatisfiable();
}

void Scope::Declare(const std::string& name, int64_t lo, int64_t hi) {
  if (!IsValidVarName(name)) {
    throw Error(Code::kInvalidArgument, "cannot declare '" + QuoteForMessage(name) +
                                            "': not a valid dimension variable name");
  }
  if (lo > hi) {
    throw Error(Code::kInvalidArgument, "cannot declare '" + name + "' with an empty range [" +
                                            std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  int32_t v = FindVar(name);
  if (v >= 0 && vars_[v].declared) {
    throw Error(Code::kInvalidArgument, "dimension variable '" + name + "' is already declared");
  }
  if (v >= 0 && vars_[v].used) {
    throw Error(Code::kInvalidArgument,
                "cannot declare '" + name +
                    "' after it has been used in an expression; declare variables first");
  }
  if (v < 0) {
    v = static_cast<int32_t>(vars_.size());
    AddVariable(name);
    InternAtom(AtomKind::kVar, v, nullptr, nullptr);
  }
  int64_t hint;
  if (HintOf(v, &hint) && (hint < lo || hint > hi)) {
    throw Error(Code::kConstraintViolation,
                "cannot declare '" + name + "' with the range [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]: its hint " + std::to_string(hint) +
                    " lies outside; change the hint first (shp_scope_set_hint)");
  }
  Variable saved = vars_[v];
  vars_[v].lo = lo;
  vars_[v].hi = hi;
  vars_[v].declared = true;
  // Constraints were simplified under the old range; reload them under the new one.
  try {
    LoadConstraints();
  } catch (...) {
    vars_[v] = saved;
    LoadConstraints();
    throw;
  }
}

int32_t Scope::AddVariable(const std::string& name) {
  if (vars_.size() >= limits::kMaxVariables) {
    throw Error(Code::kUnsupported, "cannot add the dimension variable '" + name +
                                        "': the scope already has " + std::to_string(vars_.size()) +
                                        " variables, the limit (a program loads at most " +
                                        std::to_string(limits::kMaxVariables) + ")");
  }
  int32_t v = static_cast<int32_t>(vars_.size());
  Variable var;
  var.name = name;
  vars_.push_back(std::move(var));
  store_->var_names.push_back(name);
  var_index_.emplace(name, v);
  return v;
}

int32_t Scope::FindVar(const std::string& name) const {
  auto it = var_index_.find(name);
  return it == var_index_.end() ? -1 : it->second;
}

void Scope::CheckSameScope(const Expr* a, const Expr* b, const char* op) const {
  if (a->scope == this && b->scope == this) return;
  const Expr* foreign = a->scope != this ? a : b;
  throw Error(Code::kScopeMismatch,
              std::string(op) + ": cannot mix dimension expressions of two different scopes: '" +
                  foreign->scope->ToString(foreign) + "' belongs to a scope with constraints " +
                  foreign->scope->ConstraintsToString() +
                  ", the other operand to a scope with constraints " + ConstraintsToString());
}

// ---- Decision procedure entry points ----

Interval Scope::Bounds(const Expr* e) {
  if (e->scope != this) CheckSameScope(e, e, "bounds");
  return decider_->Bounds(e);
}

Truth Scope::Compare(const Expr* a, Cmp op, const Expr* b) {
  CheckSameScope(a, b, "compare");
  if (a->IsConstant() && b->IsConstant()) {
    return CmpHolds(a->ConstantTerm(), op, b->ConstantTerm()) ? Truth::kTrue : Truth::kFalse;
  }
  const Expr* d;
  try {
    d = Sub(a, b);
  } catch (const Error&) {
    return Truth::kUnknown;  // coefficients overflow: nothing sound to say
  }
  auto decide = [op](Interval iv) {
    auto yes_no = [](bool t, bool f) {
      return t ? Truth::kTrue : (f ? Truth::kFalse : Truth::kUnknown);
    };
    switch (op) {
      case Cmp::kEq:
        return yes_no(iv.lo == 0 && iv.hi == 0, iv.lo > 0 || iv.hi < 0);
      case Cmp::kNe:
        return yes_no(iv.lo > 0 || iv.hi < 0, iv.lo == 0 && iv.hi == 0);
      case Cmp::kLt:
        return yes_no(iv.hi < 0, iv.lo >= 0);
      case Cmp::kLe:
        return yes_no(iv.hi <= 0, iv.lo > 0);
      case Cmp::kGt:
        return yes_no(iv.lo > 0, iv.hi <= 0);
      case Cmp::kGe:
        return yes_no(iv.lo >= 0, iv.hi < 0);
    }
    return Truth::kUnknown;
  };
  // Interval arithmetic is cheap and sound; when it already decides, the full procedure
  // (whose bounds are contained in these) would decide the same way.
  Truth quick = decide(decider_->IntervalOf(d));
  if (quick != Truth::kUnknown) return quick;
  const Interval iv = decider_->Bounds(d, /*sign_only=*/true);
  Truth t = decide(iv);
  // d == 0 inside the bounds but without an integer solution (w == 2*x + 1 makes w == 10
  // FALSE): one more elimination, for equalities only.
  if (t == Truth::kUnknown && (op == Cmp::kEq || op == Cmp::kNe) && iv.lo <= 0 && iv.hi >= 0 &&
      decider_->NeverZero(d)) {
    t = op == Cmp::kEq ? Truth::kFalse : Truth::kTrue;
  }
  // An order in one variable: by cases on its small values (ProvesNonNegativeByCases).
  if (t == Truth::kUnknown && op != Cmp::kEq && op != Cmp::kNe) {
    try {
      // d >= lo_need holds (TRUE), or d <= lo_need - 1 everywhere (FALSE), with
      // kGe: d >= 0, kGt: d >= 1, kLe: -d >= 0, kLt: -d >= 1.
      const bool up = op == Cmp::kGe || op == Cmp::kGt;
      const int64_t need = op == Cmp::kGt || op == Cmp::kLt ? 1 : 0;
      const Expr* e = up ? d : Scale(d, -1);  // op holds iff e >= need
      if (ProvesNonNegativeByCases(Sub(e, Constant(need)))) return Truth::kTrue;
      if (ProvesNonNegativeByCases(Sub(Constant(need - 1), e))) return Truth::kFalse;
    } catch (const Error&) {  // not representable: no answer
    }
  }
  return t;
}

void Scope::Check(const Expr* a, Cmp op, const Expr* b, const std::string& message) {
  CheckSameScope(a, b, "check");
  Truth t = Compare(a, op, b);
  std::string text = ToString(a) + " " + CmpSymbol(op) + " " + ToString(b);
  if (t == Truth::kFalse) {
    throw Error(Code::kUnsatisfiable,
                "check '" + text + "' can never hold under the constraints " +
                    ConstraintsToString() +
                    (message.empty() ? "" : ": " + EscapeForMessage(message)));
  }
  CheckAgainstHints(a, op, b, "check '" + text + "'");
  AppendFact(Fact{a, op, b, text, message, /*is_assertion=*/true, /*is_guard=*/false, "", false});
}

void Scope::AppendFact(Fact f) {
  if (facts_.size() >= limits::kMaxFacts) {
    throw Error(Code::kUnsupported,
                "cannot add the " +
                    std::string(f.is_guard     ? "guard"
                                : f.is_derived ? "derived fact"
                                               : "assertion") +
                    " '" + f.text + "': the scope already has " + std::to_string(facts_.size()) +
                    " facts (constraints, assertions, guards and derived facts together), the "
                    "limit (a program loads at most " +
                    std::to_string(limits::kMaxFacts) + ")");
  }
  facts_.push_back(std::move(f));
  FactsChanged(/*appended=*/true);
  try {
    decider_->CheckSatisfiable();
  } catch (...) {
    facts_.pop_back();
    FactsChanged();
    throw;
  }
}

// ---- Variables of an expression ----

std::vector<int32_t> Scope::VarsOf(const Expr* e) const {
  std::vector<int32_t> out;
  // Most expressions are polynomials in variables: one allocation, no stack.
  size_t count = 0;
  bool flat = true;
  for (const Term& t : e->terms) {
    for (const Factor& f : t.mono->factors) {
      ++count;
      flat = flat && f.atom->kind == AtomKind::kVar;
    }
  }
  if (flat) {
    out.reserve(count);
    for (const Term& t : e->terms) {
      for (const Factor& f : t.mono->factors) out.push_back(f.atom->var);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  std::vector<const Expr*> stack{e};
  while (!stack.empty()) {
    const Expr* x = stack.back();
    stack.pop_back();
    for (const Term& t : x->terms) {
      for (const Factor& f : t.mono->factors) {
        if (f.atom->kind == AtomKind::kVar) {
          out.push_back(f.atom->var);
        } else {
          stack.push_back(f.atom->a);
          stack.push_back(f.atom->b);
        }
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace dim
}  // namespace shp
