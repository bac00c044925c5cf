// The rule table: every rule of the decision procedure, in the order Decider::Build tries
// them (decide_rows.cc). The order fixes the order of the System's columns and rows, on
// which budgets and caps (fm::kMaxRows, kMaxCols) depend: append a new rule to its stage
// rather than reorder (README.md, "Adding a rule").
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {
namespace {

constexpr Rule PerFact(const char* name, void (*fn)(Decider::RuleContext*, const FactForm&)) {
  return {name, RuleStage::kFact, ColumnClass::kAny, fn, nullptr, nullptr};
}
constexpr Rule PerSystem(const char* name, void (*fn)(Decider::RuleContext*)) {
  return {name, RuleStage::kSystem, ColumnClass::kAny, nullptr, fn, nullptr};
}
constexpr Rule PerColumn(const char* name, ColumnClass columns,
                         void (*fn)(Decider::RuleContext*, const Mono*)) {
  return {name, RuleStage::kColumn, columns, nullptr, nullptr, fn};
}
constexpr Rule AfterClosure(const char* name, void (*fn)(Decider::RuleContext*, const Mono*)) {
  return {name, RuleStage::kBounds, ColumnClass::kAny, nullptr, nullptr, fn};
}

}  // namespace

const Rule kRules[] = {
    // Once per fact (the facts' base system).
    PerFact("FactPolynomialBounds", rules::FactPolynomialBounds),
    PerFact("FactRow", rules::FactRow),
    // Once per system.
    PerSystem("CongruenceModulus", rules::CongruenceModulus),
    PerSystem("QuerySquare", rules::QuerySquare),
    PerSystem("CongruenceResidues", rules::CongruenceResidues),
    // The closure: once per column, including the columns the rules add.
    PerColumn("DivModWhereDefined", ColumnClass::kDivMod, rules::DivModWhereDefined),
    PerColumn("DivisorPositive", ColumnClass::kDivMod, rules::DivisorPositive),
    PerColumn("DivModRange", ColumnClass::kDivMod, rules::DivModRange),
    PerColumn("CongruenceRemainder", ColumnClass::kDivMod, rules::CongruenceRemainder),
    PerColumn("ModFormForProducts", ColumnClass::kDivMod, rules::ModFormForProducts),
    PerColumn("ModEquality", ColumnClass::kDivMod, rules::ModEquality),
    PerColumn("MaxMinOperands", ColumnClass::kMaxMin, rules::MaxMinOperands),
    PerColumn("MaxPlusMin", ColumnClass::kMaxMin, rules::MaxPlusMin),
    PerColumn("EvenPowers", ColumnClass::kProduct, rules::EvenPowers),
    PerColumn("EqualityProducts", ColumnClass::kProduct, rules::EqualityProducts),
    PerColumn("McCormick", ColumnClass::kProduct, rules::McCormick),
    // Once per column, after the closure.
    AfterClosure("ColumnInterval", rules::ColumnInterval),
};
const size_t kNumRules = sizeof(kRules) / sizeof(kRules[0]);

}  // namespace dim
}  // namespace shp
