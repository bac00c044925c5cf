// The rules of the decision procedure (see decide.h, README.md): each turns one kind of
// knowledge (a fact, an atom's definition, a product, a column's interval) into linear rows
// over the monomial columns of a System. Decider::Build (decide_rows.cc) is the driver: it
// runs the rules of kRules in their order, stage by stage, and turns the rows they add into
// the System's rows. Internal to the decision procedure.
//
// What every rule must keep (the soundness invariant of decide.h): a row it adds holds at
// every valuation where the facts hold and the atoms it mentions are defined. A rule may
// add columns (sys->ColOf) and rows, never remove or weaken any; a row that overflows or
// needs a column past kMaxCols is dropped by the driver, which only loses precision.
#ifndef SHAPEPOLY_CC_DIM_RULES_RULES_H_
#define SHAPEPOLY_CC_DIM_RULES_RULES_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "cc/dim/decide.h"
#include "cc/dim/decide_rows.h"
#include "cc/dim/detail/normal_form.h"

namespace shp {
namespace dim {

// floordiv/mod rows need a divisor >= 1. One that may be 0 but is never negative is >= 1
// wherever its atom is defined, where alone decisions about the atom are claimed.
inline bool PositiveWhereDefined(const Interval& d) { return d.lo >= 0 && d.hi >= 1; }

// The state one Build hands its rules: the System being assembled, the rows found so far
// (in order) and what some rule families gather lazily and share across columns.
struct Decider::RuleContext {
  RuleContext(Decider* decider, System* system, const Expr* q)
      : d(decider), s(decider->s_), sys(system), query(q) {}

  Decider* d;
  Scope* s;
  System* sys;
  const Expr* query;  // may be null (the facts' base system)

  // A row found by a rule: `lin` >= 0, or == 0 when `eq`. The driver numbers its columns.
  struct PendingRow {
    Lin lin;
    uint64_t origin;
    bool eq;
  };
  std::vector<PendingRow> pending;
  void AddGe(Lin lin, uint64_t origin) { pending.push_back({std::move(lin), origin, false}); }
  void AddEq(const Lin& lin, uint64_t origin) { pending.push_back({lin, origin, true}); }
  // Makes every monomial of `lin` a column (those past kMaxCols are not: their rows drop).
  void ColsOf(const Lin& lin) {
    for (const auto& t : lin.terms) sys->ColOf(t.first);
  }

  // The decider's interval bounds (cached; see decide_interval.cc).
  Interval IntervalOf(const Expr* e) { return d->IntervalOf(e); }
  Interval MonoInterval(const Mono* m) { return d->MonoInterval(m); }
  Interval AtomInterval(const Atom* a) { return d->AtomInterval(a); }
  // The value of a floordiv/mod atom with a divisor that may be 0, where it is defined
  // (Scope::where_defined_), or null.
  const Expr* WhereDefined(const Atom* a) const {
    auto it = s->where_defined_.find(a);
    return it == s->where_defined_.end() ? nullptr : it->second;
  }

  // The interval of the divisor of the floordiv/mod atom `at` (computed once per column).
  Interval DivisorInterval(const Atom* at) {
    if (divisor_atom_ != at) {
      divisor_iv_ = IntervalOf(at->b);
      divisor_atom_ = at;
    }
    return divisor_iv_;
  }
  // x - d*floordiv(x, d) for the floordiv/mod atom `at` of x and d, as a form whose
  // monomials are columns (computed once per column).
  const Lin& Remainder(const Atom* at);

  // Congruences (rules/congruence.cc): (x, k) for each fact mod(x, k) == 0, gathered from
  // the facts on first use.
  std::vector<std::pair<const Expr*, int64_t>> divisibility;
  bool divisibility_ready = false;
  // Equality products (rules/products.cc): the equalities L == 0 a product column may be
  // multiplied into, gathered when the first product column needs them.
  std::vector<Lin> eq_forms;
  std::vector<const Atom*> eq_atoms;  // mod atoms whose equality is in eq_forms
  bool eq_forms_ready = false;
  size_t products = 0;                                     // rows made so far
  std::vector<std::pair<size_t, const Mono*>> multiplied;  // (form, multiplier) done

 private:
  const Atom* divisor_atom_ = nullptr;
  Interval divisor_iv_;
  const Atom* remainder_atom_ = nullptr;
  Lin remainder_;
};

// Which columns a column rule applies to.
enum class ColumnClass {
  kDivMod,   // a floordiv or mod atom (exponent 1)
  kMaxMin,   // a max or min atom (exponent 1)
  kProduct,  // a monomial of degree >= 2
  kAny,      // every column (the last stage: the columns' interval bounds)
};

// A linear fact, normalized by the driver to `lin` >= 0 (or == 0 when `eq`); its monomials
// are already columns.
struct FactForm {
  const Lin& lin;
  bool eq;
  uint64_t origin;  // fm::FactOrigin of the fact
};

// The stages, in the order the driver runs them. Within a stage, rules run in table order.
enum class RuleStage {
  kFact,    // once per fact, on the base system (no cached base): `fact`
  kSystem,  // once per Build, after the facts: `system`
  kColumn,  // once per new column, while columns are added (a closure): `column`
  kBounds,  // once per new column, after the closure: `column`
};

struct Rule {
  const char* name;
  RuleStage stage;
  ColumnClass columns;  // kColumn, kBounds: the columns it applies to
  void (*fact)(Decider::RuleContext* cx, const FactForm& f);
  void (*system)(Decider::RuleContext* cx);
  void (*column)(Decider::RuleContext* cx, const Mono* m);
};

// The rule table (rules/table.cc), in the order the rules are tried.
extern const Rule kRules[];
extern const size_t kNumRules;

// The rules, by family (each file states the invariant of its rules).
namespace rules {
// rules/facts.cc
void FactRow(Decider::RuleContext* cx, const FactForm& f);
void ColumnInterval(Decider::RuleContext* cx, const Mono* m);
// rules/polynomial.cc
void FactPolynomialBounds(Decider::RuleContext* cx, const FactForm& f);
void QuerySquare(Decider::RuleContext* cx);
void EvenPowers(Decider::RuleContext* cx, const Mono* m);
// rules/congruence.cc
void CongruenceResidues(Decider::RuleContext* cx);
void CongruenceModulus(Decider::RuleContext* cx);
void CongruenceRemainder(Decider::RuleContext* cx, const Mono* m);
// rules/divmod.cc
void DivModWhereDefined(Decider::RuleContext* cx, const Mono* m);
void DivisorPositive(Decider::RuleContext* cx, const Mono* m);
void DivModRange(Decider::RuleContext* cx, const Mono* m);
void ModEquality(Decider::RuleContext* cx, const Mono* m);
// rules/maxmin.cc
void MaxMinOperands(Decider::RuleContext* cx, const Mono* m);
void MaxPlusMin(Decider::RuleContext* cx, const Mono* m);
// rules/products.cc
void ModFormForProducts(Decider::RuleContext* cx, const Mono* m);
void EqualityProducts(Decider::RuleContext* cx, const Mono* m);
void McCormick(Decider::RuleContext* cx, const Mono* m);
}  // namespace rules

// Helpers shared by rule families.
// The single atom of a column `x^1`, or null.
inline const Atom* ColumnAtom(const Mono* m) {
  return m->factors.size() == 1 && m->factors[0].exp == 1 ? m->factors[0].atom : nullptr;
}
// t / l when the monomial l divides t, else nullptr (rules/products.cc).
const Mono* MonoDiv(Scope* s, const Mono* t, const Mono* l);
// Whether the facts make x a multiple of d (lcm of the facts mod(x, k_i) == 0);
// x == nullptr only gathers the facts (rules/congruence.cc).
bool DividesBy(Decider::RuleContext* cx, const Expr* x, int64_t d);

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_RULES_RULES_H_
