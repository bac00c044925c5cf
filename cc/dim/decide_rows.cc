// Assembling the System of one query (see decide.h): Decider::Build, the driver of the rule
// table (rules/rules.h). It makes the query's and the facts' monomials columns, runs the
// rules stage by stage in table order, and turns the rows they found into fm rows.
#include "cc/dim/decide_rows.h"

#include <cstddef>
#include <cstring>
#include <vector>

#include "cc/dim/fm.h"
#include "cc/dim/rules/rules.h"

namespace shp {
namespace dim {
namespace {

// Test-only: the rules Build skips on this thread (SkipRuleForTesting), null-terminated.
constexpr size_t kMaxSkipped = 4;
thread_local const char* t_skipped[kMaxSkipped + 1] = {};

// Whether Build runs `rule` of kRules at `stage`.
bool Runs(const Rule& rule, RuleStage stage) {
  if (rule.stage != stage) return false;
  for (size_t i = 0; t_skipped[i]; ++i) {
    if (std::strcmp(rule.name, t_skipped[i]) == 0) return false;
  }
  return true;
}

// The class of a column, for the column rules (kAny: none applies).
ColumnClass ClassOf(const Mono* m) {
  if (const Atom* at = ColumnAtom(m)) {
    switch (at->kind) {
      case AtomKind::kFloorDiv:
      case AtomKind::kMod:
        return ColumnClass::kDivMod;
      case AtomKind::kMax:
      case AtomKind::kMin:
        return ColumnClass::kMaxMin;
      case AtomKind::kVar:
        break;
    }
    return ColumnClass::kAny;
  }
  return m->degree >= 2 ? ColumnClass::kProduct : ColumnClass::kAny;
}

// Runs the fact rules on each linear fact (the base system only: a cached base has them).
void RunFactRules(Decider::RuleContext* cx) {
  Scope* s = cx->s;
  const std::vector<Fact>& facts = s->facts();
  for (size_t i = 0; i < (cx->sys->base ? 0 : facts.size()); ++i) {
    const Fact& f = facts[i];
    if (f.op == Cmp::kNe) continue;  // not linear; ignoring a fact is sound
    Lin lin;
    // Normalize to lin >= 0 (or == 0).
    bool lhs_big = f.op == Cmp::kGe || f.op == Cmp::kGt || f.op == Cmp::kEq;
    lin.AddExpr(f.lhs, lhs_big ? 1 : -1);
    lin.AddExpr(f.rhs, lhs_big ? -1 : 1);
    if (f.op == Cmp::kGt || f.op == Cmp::kLt) lin.Add(s->UnitMono(), -1);
    cx->ColsOf(lin);
    const FactForm form{lin, f.op == Cmp::kEq, fm::FactOrigin(i)};
    for (size_t r = 0; r < kNumRules; ++r) {
      if (Runs(kRules[r], RuleStage::kFact)) kRules[r].fact(cx, form);
    }
  }
}

// Runs the rules of `stage` on each column from `start` on, including those they add.
void RunColumnRules(Decider::RuleContext* cx, RuleStage stage, size_t start) {
  for (size_t ci = start; ci < cx->sys->cols.size(); ++ci) {
    const Mono* m = cx->sys->cols[ci];
    const ColumnClass cls = ClassOf(m);
    for (size_t r = 0; r < kNumRules; ++r) {
      const Rule& rule = kRules[r];
      if (!Runs(rule, stage)) continue;
      if (rule.columns == ColumnClass::kAny || rule.columns == cls) rule.column(cx, m);
    }
  }
}

// The rows the rules found, as rows of `sys` (a row with a column past kMaxCols, or whose
// coefficients overflow, is dropped; a contradictory constant row marks sys infeasible).
void MakeRows(std::vector<Decider::RuleContext::PendingRow>* pending, Decider::System* sys) {
  size_t ncols = sys->cols.size() + 1;  // last column: z (the query)
  if (sys->base) {  // the base's rows stay in the base (Project reads them from there)
    sys->infeasible = sys->base->infeasible;
    sys->infeasible_origin = sys->base->infeasible_origin;
  }
  sys->rows.reserve(sys->rows.size() + pending->size());
  for (Decider::RuleContext::PendingRow& p : *pending) {
    if (!p.lin.ok) continue;
    fm::Row row;
    row.c.assign(ncols, 0);
    row.c0 = p.lin.c0;
    row.origin = p.origin;
    row.eq = p.eq;
    bool ok = true;
    for (auto& t : p.lin.terms) {
      int j = sys->Find(t.first);
      if (j < 0 || __builtin_add_overflow(row.c[j], t.second, &row.c[j])) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    fm::Norm n = fm::Normalize(&row);
    if (n == fm::Norm::kOk) {
      sys->rows.push_back(std::move(row));
    } else if (n == fm::Norm::kInfeasible) {
      sys->infeasible = true;  // e.g. a constant contradiction: remember it to report it
      sys->infeasible_origin |= row.origin;
    }
  }
}

}  // namespace

bool RuleSkippedForTesting(const char* name) {
  for (size_t i = 0; t_skipped[i]; ++i) {
    if (std::strcmp(name, t_skipped[i]) == 0) return true;
  }
  return false;
}

void SkipRuleForTesting(const char* name) {
  size_t n = 0;
  while (t_skipped[n]) ++n;
  if (!name) {
    for (size_t i = 0; i < n; ++i) t_skipped[i] = nullptr;
  } else if (n < kMaxSkipped) {
    t_skipped[n] = name;
  }
}

void Decider::Build(System* sys, const Expr* query) {
  RuleContext cx(this, sys, query);
  cx.pending.reserve(16);  // a query's own rows are few: one allocation, not doublings
  // With a cached base (facts, their closure and interval rows), only the query's new
  // columns need work here.
  const size_t start = sys->base ? sys->base->cols.size() : 0;
  if (sys->base) sys->cols = sys->base->cols;
  if (query) {
    for (const Term& t : query->terms) {
      if (!t.mono->factors.empty()) sys->ColOf(t.mono);
    }
  }
  RunFactRules(&cx);
  for (size_t r = 0; r < kNumRules; ++r) {
    if (Runs(kRules[r], RuleStage::kSystem)) kRules[r].system(&cx);
  }
  RunColumnRules(&cx, RuleStage::kColumn, start);
  RunColumnRules(&cx, RuleStage::kBounds, start);
  MakeRows(&cx.pending, sys);
}

}  // namespace dim
}  // namespace shp
