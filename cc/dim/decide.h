// The decision procedure: sound bounds of dimension expressions under a scope's facts.
//
// Method: every non-constant monomial is treated as an integer-valued unknown ("column").
// We collect linear facts about the columns — the constraints and assertions, interval
// bounds of each monomial, the implicit facts of every atom (k*floordiv(x,k) + mod(x,k) == x,
// 0 <= mod(x,k) < k, max(a,b) >= a, ...), and McCormick relaxations of products
// (a*b >= a + b - 1 when a, b >= 1) — and project them onto z = e by Fourier–Motzkin
// elimination with integer tightening. Column order is structural, so the answer does not
// depend on the order in which constraints were given.
//
// Max/min atoms get a bounded case analysis on top (issue 14): each atom is one of its
// operands under the inequality that makes it win (max(a, b) = a where a >= b), so the
// bounds of a query are the hull of the projections of the 2^k cases of the k atoms split
// (decide_cases.cc: ProjectByCases). Every valuation falls in some case and each case only adds
// valid rows, so the hull is sound; a case whose rows are contradictory has no valuation
// and is left out. The atoms split are the max/min columns connected to the query (its own
// first), at most kMaxSplitAtoms and fewer on large systems (kSplitRows); SplitMayHelp skips
// the analysis where it cannot change the answer, by a conservative test. Constraints that
// mention max/min (max(n, 3) >= 10) get it through Prepare's projections of the variables.
//
// Products, congruences and polynomial facts (issue 14 part 2) add rows of their own, each
// valid at every valuation where the facts hold (rules/): an equality L == 0 (a fact,
// or a mod atom's mod == x - d*floordiv(x, d)) times the monomial t/l for a column t that a
// monomial l of L divides; x*x*c >= +-x*c for c >= 0 (x(x - 1) >= 0 over the integers);
// q^2 >= 0 for the polynomial q whose square leads the query; the integer secant (x - t)(x -
// t - 1) >= 0 at the roots of a fact quadratic in one variable; and x - d*floordiv(x, d) ==
// mod(c, d) where facts mod(y, k_i) == 0 (x == y + c) make y a multiple of d. None can make
// an answer wrong; each only adds columns and rows under the caps below.
//
// Divisors that may be zero (issue 14: mod(n, floordiv(m, 3)), as JAX accepts it) make an
// opaque atom; its value where the divisor is 0 is SHP_DIVISION_BY_ZERO. Decisions about an
// expression hold at every valuation where the facts hold and the expression (each side of a
// comparison) is defined: a divisor that is never negative is then >= 1, so its atom gets the
// rows and bounds of a positive divisor; one of unknown sign gets none (unbounded). Those rows
// only enter the query's own system (or the base, when a fact mentions the atom: facts are
// defined wherever they hold), never a query without the atom.
//
// The pieces, one file each:
//   interval128.h     int128 interval arithmetic with +-infinity (saturating outward)
//   decide_interval.cc  interval bounds of atoms, monomials, expressions (cached)
//   decide_rows.h/.cc   the System of a query; Build, the driver of the rule table
//   rules/            the rules: facts, atom properties, relaxations and interval bounds ->
//                     rows, one function each, listed in order in rules/table.cc
//   decide_cases.cc   the case analysis of max/min atoms (ProjectByCases)
//   decide_rays.cc    recession rays: queries no elimination can bound (UnboundedSides)
//   decide_witness.cc witnesses: interval bounds a valuation attains need no elimination
//   decide_facts.cc   bound propagation over linear facts, greedy witnesses
//   fm.h/.cc          Fourier–Motzkin: matrix, row set, elimination (knows no expressions)
//   decide.cc         the driver: Prepare, Bounds, Project, satisfiability
//
// Invariants a change must keep (the tests named in brackets fail when one breaks):
//
// * Soundness. Every row is a valid consequence of the facts: a fact itself, a property
//   every valuation satisfies (atoms, interval bounds, relaxations), or a non-negative
//   combination of rows, tightened by rounding the constant down after dividing by the
//   coefficients' gcd. Rows are only ever dropped, never weakened or invented: on
//   coefficient overflow, past fm::kMaxRows (the sparsest are kept),
//   fm::kMaxCombinations or the query's work budget (kQueryWork, kPrepareWork below), by
//   Chernikov's redundancy rule, and facts with != (not linear). Bound propagation (Prepare,
//   when a projection ran out of work) only divides valid rows by a coefficient, rounding
//   inward over the integers.
//   Dropping a row removes a constraint from a system whose solutions contain every real
//   valuation, so the projection can only get wider: results get weaker, never wrong.
//   [soundness_test, fm_test]
//
// * Re-entry protocol. IntervalOf needs the variables' bounds derived from the facts;
//   Prepare derives them by projecting each constrained variable (Project), and Project
//   builds rows using IntervalOf. While Prepare runs, `preparing_` is set: IntervalOf then
//   uses the declared ranges as they stand (Prepare has seeded var_bounds_ with them)
//   instead of re-entering Prepare, and atom_iv_/mono_iv_ are cleared before and after,
//   so no interval computed from the declared ranges alone survives Prepare. The cached
//   base System (base_) is dropped at the end of Prepare too, to be rebuilt with the
//   derived bounds. CheckSatisfiable sets `preparing_` the same way, so that a
//   contradiction is traced to facts and declared ranges only. Scope operators may be
//   called from inside (Build interns atoms and monomials) but never Bounds or Compare:
//   the decider must not re-enter itself through the scope. [decide_test, expr_test]
//
// * Caches. Everything cached (var_bounds_, atom_iv_, mono_iv_, bounds_cache_, base_) is
//   a function of the scope's facts and declared ranges, and Scope calls Reset whenever
//   those change (Scope::FactsChanged). Expressions are immutable, so pointers are keys.
//   derived_ (the variables' bounds of the last Prepare) survives a Reset that only appends
//   facts (Check): bounds valid under some facts stay valid under more. Prepare then projects
//   again only the variables connected to a new fact; the others' projections would use
//   exactly the same rows, so the answers are those of a fresh scope unless a budget or a
//   cap (kMaxCols) was reached. [decide_test: CheckIsIncremental]
//
// * Work budgets. Every elimination runs under a budget counted in coefficients touched
//   (fm::Eliminate), never under a clock, so answers are deterministic. Reaching it drops
//   rows, as above. [soundness_test: TinyWorkBudgetsStaySound, decide_test:
//   LargeScopeAnswersWithinTheWorkBudget]
//
// * Origins. fm::Row::origin is a bitmask naming the facts a row came from (bit i for fact
//   i < 62, bit 62 for any later fact, bit 63 for implicit rows); it only words the
//   kUnsatisfiable message, never decides anything, so the caps lose precision of the
//   message only.
//
// * Row histories (fm::Matrix::h0/h1). Chernikov's rule: after k eliminations, a row
//   combined from more than k + 1 input rows is redundant and is skipped. Only the first
//   128 input rows get a history bit; later rows have none, so the rule never drops them
//   (it can only fail to drop a redundant row, which costs time, not soundness).
//
// * Shortcuts give the elimination's answer. Project skips or shortens work only where the
//   answer is provably the same: recession rays of the rows (decide_rays.cc) show that no
//   elimination bounds z on either side; a side of a Bounds query's interval bounds that a
//   valuation where every fact holds attains (a witness, decide_witness.cc) cannot be
//   tightened by any sound bound, nor an infinite side that a family of such valuations
//   (affine in its parameter by the structure of the facts and the query) leaves unbounded,
//   so Bounds skips the projection when every side is one of them, and the elimination when
//   the others are unbounded along a ray (of every case's rows, or of the case a witness falls
//   in, which is then not contradictory); a case analysis may stop without a witnessed side; a case
//   analysis stops once its hull holds the interval bounds Bounds intersects it with (not for
//   sign_only queries, whose cut-short answer differs); the plain projection leaves out the columns
//   no row has and rows equal to an earlier one (fm::EliminateNarrow, fm::Scratch::weight), which
//   the elimination counts as if they were there. Every bound and comparison of the bench workload,
//   the conformance facts and soundness_test's statistics are unchanged by them. [fm_test:
//   NarrowWithDuplicatesLeftOutIsTheSame, decide_test: UnboundedBothWaysNeedsNoElimination,
//   WitnessedIntervalBoundsNeedNoElimination, WitnessesAndUnboundedFamiliesGiveTheSameAnswers]
//
// * Reused buffers. Project reuses its Decider's buffers (Decider::Buffers: an fm::Scratch
//   and the matrices): a Scope is used by one thread at a time, but different scopes may be
//   used on different threads at once, so the buffers cannot be global; keeping their
//   capacity makes a query allocate little. Eliminate never re-enters Project, so one
//   Scratch is enough. CheckSatisfiable uses a Scratch of its own (it is rare).
#ifndef SHAPEPOLY_CC_DIM_DECIDE_H_
#define SHAPEPOLY_CC_DIM_DECIDE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cc/dim/fm.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

// Work budgets, in fm::Eliminate's units (coefficients touched), so that answers do not
// depend on the machine's speed. A query (one Bounds or Compare, a fold consulting the
// procedure, the satisfiability check of a Check or of creation) gets kQueryWork for its
// elimination. Deriving the variables' bounds (Prepare, once per scope and set of facts,
// paid by the query that needs it first) gets kPrepareWork for all its projections, shared
// evenly (what one projection leaves goes to the next). Past a
// budget the elimination stops and drops the rows it could not resolve (see fm::Eliminate):
// bounds get wider, comparisons UNKNOWN, an unproven contradiction is not reported, never a
// wrong answer. Small scopes (a few variables and constraints) stay far below both.
constexpr long kQueryWork = 500000;
constexpr long kPrepareWork = 1000000;
// Max/min atoms a projection splits on at most (2^k cases, each on a system already
// projected onto the atoms and their operands); the others keep only their implicit facts.
constexpr size_t kMaxSplitAtoms = 4;
// ... and at most k atoms with 2^k times the rows of the query's system within this (at
// least one): the bench scopes' systems (40-60 rows) split one atom, a scope with few facts
// up to four. Systems of more rows than kMaxSplitSystemRows split none (deep chains of
// max/min, large scopes): their answers are those of the projection alone.
constexpr size_t kSplitRows = 150;
constexpr size_t kMaxSplitSystemRows = 100;
// Test-only: replaces both budgets for the calling thread until called again (a value <= 0
// restores the default).
void SetWorkBudgetsForTesting(long query_work, long prepare_work);
// Test-only: turns the case analysis of max/min atoms off (false) or on again for the
// calling thread (the tests measure what it adds).
void SetCaseSplitsForTesting(bool enabled);
// Test-only: turns the witnesses of interval bounds (decide_witness.cc) off (false) or on
// again for the calling thread: answers must be the same either way, with fewer eliminations.
void SetWitnessesForTesting(bool enabled);
// Test-only: Build skips the rule of the rule table named `name` (rules/table.cc) on the
// calling thread, with those named before (at most 4), until called with nullptr. Takes
// effect for systems built afterwards: use a fresh scope. The rule tests (rules_test.cc)
// check with it that each rule is needed.
void SkipRuleForTesting(const char* name);
// Whether SkipRuleForTesting skips `name` on this thread (rules that also act outside Build).
bool RuleSkippedForTesting(const char* name);

class Decider {
 public:
  explicit Decider(Scope* scope);
  ~Decider();
  // Facts changed: drop every cache. `appended`: the only change is facts added at the end
  // (Check), so the variables' bounds derived before stay valid and Prepare reuses them.
  void Reset(bool appended = false);
  const DecideStats& stats() const { return stats_; }
  // Best sound bounds of `e`.
  // `sign_only`: the caller only compares the bounds with 0 (Compare, the max/min folds):
  // the case analysis may stop once the values have both signs, returning bounds that are
  // sound but not the best (not cached).
  Interval Bounds(const Expr* e, bool sign_only = false);
  // True when e == 0 has no integer solution under the facts (parity and other integer
  // reasoning the bounds of e lose); false says nothing.
  bool NeverZero(const Expr* e);
  // Interval-arithmetic bounds only (cheap, weaker).
  Interval IntervalOf(const Expr* e);
  // Throws kUnsatisfiable naming the facts when they cannot all hold.
  void CheckSatisfiable();
  // True if a short greedy search finds values (within the declared ranges) that satisfy
  // every fact: a proof of satisfiability without elimination. False says nothing.
  bool FindWitness() const;
  // Bounds of each variable implied by the facts.
  const std::vector<Interval>& VarBounds();
  // `bounds` (by variable) hold under the facts and ranges, e.g. derived in a scope with a
  // subset of these facts and wider ranges (explain.cc's copies): Prepare then takes them,
  // intersected with the declared ranges and tightened by Propagate, instead of projecting
  // each variable. Sound; answers may be weaker than after a full Prepare. Kept while facts
  // are only appended; dropped by any other change (Reset).
  void Seed(std::vector<Interval> bounds);

  using Row = fm::Row;
  // The rows of one query (decide_rows.h).
  struct System;
  // The state one Build hands the rules of its rule table (rules/rules.h).
  struct RuleContext;

 private:
  void Prepare();
  Interval AtomInterval(const Atom* a);
  Interval MonoInterval(const Mono* m);
  // Adds to `sys` the rows of the facts (unless sys->base holds them), and of the columns of
  // `query` (may be null) and of the atoms and products they lead to: runs the rule table
  // (decide_rows.cc, rules/).
  void Build(System* sys, const Expr* query);
  // A query's system: the cached base of the facts (built on first use) plus e's columns.
  void QuerySystem(const Expr* e, System* sys);
  // Project's rows for its plain elimination: buf_->kept gets buf_->picked without the rows
  // equal to an earlier one, whose number the first one's weight (buf_->scratch.weight)
  // counts, where that changes nothing (see the body); all of them otherwise.
  void LeaveOutCopies(size_t ncols, long work);
  // *out := buf_->kept over the columns they have (listed in buf_->cols; empty: all ncols).
  void NarrowMatrix(size_t ncols, fm::Matrix* out);
  // Projects `e` with at most *work of elimination work (see fm::Eliminate).
  Interval Project(const Expr* e, long* work);
  // Case analysis of max/min atoms: atom = one operand under the inequality that makes it
  // win. rows[w] = {atom - w == 0, w beats the other operand} for operand w (a, then b).
  struct CaseSplit {
    const Atom* atom;
    Row rows[2][2];
    const Expr* win[2];  // the operand that wins in rows[w]
  };
  // Whether splitting on `atoms` may change the bounds of `e` (a heuristic; see decide_cases.cc).
  bool SplitMayHelp(const Expr* e, const std::vector<const Atom*>& atoms);
  // The max/min atoms (columns of `sys` connected to the query's z) to split, at most
  // `max_atoms`: the query's own first, then in structural order.
  std::vector<const Atom*> SplitAtoms(const System& sys, const Expr* e, size_t max_atoms,
                                      const std::function<bool(int)>& connected);
  // The case rows of each atom (an atom whose rows do not fit the system is left out).
  std::vector<CaseSplit> CaseRows(const System& sys, const std::vector<const Atom*>& atoms);
  // Bounds of column z of `m` (all other columns still to eliminate) as the hull over the
  // 2^k cases of `splits`.
  Interval ProjectByCases(fm::Matrix* m, size_t z, std::vector<CaseSplit> splits, long* work);
  // Substitutes the columns the case rows mention through equalities of `m` that have a
  // unit coefficient on them, in `m` and in the case rows, so that the shared projection
  // keeps no column an equality could have replaced exactly; sets keep[j] for z and the
  // columns the case rows mention then. False if `m` turned out contradictory.
  bool SubstituteCaseColumns(fm::Matrix* m, size_t z, std::vector<CaseSplit>* splits,
                             std::vector<bool>* keep);
  // True when the rows of `sys` (and its base's), and the case rows of `splits` (may be
  // null), admit recession rays that raise and that lower the query's column z (q: the row
  // z - e == 0): then no elimination of them bounds z on either side (decide_rays.cc). Never
  // while preparing (a projection's contradictions matter there).
  // *up (*down) set when a ray raises (lowers) z. `only` (may be null): one case, the side
  // only[i] of splits[i], instead of every case.
  void UnboundedSides(const System& sys, const Row& q, const std::vector<CaseSplit>* splits,
                      const std::vector<int>* only, bool* up, bool* down);
  // Whether the running Bounds query's answer is its interval bounds whatever the projection
  // of `sys` (with the cases of `splits`, may be null) gives: each side witnessed (Witnessed)
  // or unbounded along a ray (up, down: rays of every case; otherwise of the case a valuation
  // where the facts hold falls in, which is then not contradictory). decide_witness.cc.
  bool Settled(const Expr* e, const System& sys, const Row& q, const std::vector<CaseSplit>* splits,
               bool up, bool down);
  struct Rays;
  void BuildRays();
  void ResetRays();
  // Whether every finite side of `iv` (e's interval bounds) is attained: a valuation within
  // the declared ranges that satisfies every fact gives e that value (decide_witness.cc).
  // Then no sound bound is tighter on that side. False says nothing. (After WitnessReady.)
  bool Witnessed(const Expr* e, Interval iv);
  // Whether e is unbounded above (`up`) or below on a family of valuations where every fact
  // holds, valid + t*r for every integer t >= 1, along which the facts and e are affine in t
  // (decide_witness.cc): then no sound bound exists on that side. False says nothing.
  bool Unbounded(const Expr* e, bool up);
  // Builds the witness search's state if this scope has asked enough questions (the third
  // Bounds query after a Reset) and it is usable; Witnessed and Unbounded need it.
  bool WitnessReady();
  void BuildFamilies();
  // The points of t = 1 and t = 2 of the family along r; false past int64 or the declared
  // ranges.
  bool FamilyPoints(const std::vector<int64_t>& r, std::vector<int64_t>* p1,
                    std::vector<int64_t>* p2) const;
  struct Witness;
  void BuildWitness();
  void ResetWitness();
  // Moves the variables the query does not mention until every fact holds at the witness
  // point; true if they all do, within the declared ranges (decide_witness.cc).
  bool RepairPoint(int* evals);
  // The bounds of z read from the rows of an elimination that kept z alone.
  static Interval BoundsOfZ(const fm::Matrix& m, size_t z);
  // Tightens `b` (one interval per variable) by bound propagation over the facts that are
  // linear in variables: cheap and sound, used where a projection ran out of work.
  void Propagate(std::vector<Interval>* b) const;
  // Tightens `b` by the facts that are polynomials of degree >= 2 in one variable (e.g.
  // 4*s^3 - 4*s^2 + s <= 2^31 - 1 gives s <= 813), each bound certified (decide_facts.cc).
  // True if it tightened one.
  bool PolynomialBounds(std::vector<Interval>* b) const;
  std::string DescribeOrigin(uint64_t origin) const;
  // A projection's answer on contradictory facts (nothing), recorded for CheckSatisfiable.
  Interval Contradictory(uint64_t origin);
  // Whether a fact has a max or min atom (at any depth).
  bool FactsHaveMaxMin() const;

  Scope* s_;
  bool prepared_ = false;
  bool preparing_ = false;
  std::vector<Interval> var_bounds_;
  std::unordered_map<const Atom*, Interval> atom_iv_;
  std::unordered_map<const Mono*, Interval> mono_iv_;
  std::unordered_map<const Expr*, Interval> bounds_cache_;
  std::unique_ptr<System> base_;  // the facts' rows, shared by every query until Reset
  // The variables' bounds of the last Prepare, kept across Reset(appended = true): under
  // more facts they still hold. Prepare projects again only the variables that share a
  // fact, directly or through other variables, with a fact added since; the others' bounds
  // are what projecting them again would give (their rows are the same).
  struct Derived {
    bool valid = false;
    bool degraded = false;  // some projection ran out of work
    size_t num_facts = 0;
    std::vector<Interval> bounds;
  } derived_;
  bool seeded_ = false;  // Seed: Prepare takes seed_ instead of projecting
  std::vector<Interval> seed_;
  DecideStats stats_;
  // Buffers reused across queries, so that a query allocates little: Eliminate's (it never
  // reenters Project), Project's matrix and the rows connected to its query, and
  // ProjectByCases' case matrix. Owned, not a thread_local with a destructor: glibc aborts
  // the process when registering such a destructor runs out of memory, and a scope is used
  // by one thread at a time anyway. On the heap apart: a Decider past ~1 KB would leave
  // malloc's fast path, and every Scope creates one.
  struct Buffers {
    fm::Scratch scratch;
    fm::Matrix proj, cases;
    std::vector<const fm::Row*> picked;
    std::vector<const fm::Row*> kept;  // Project: picked without duplicates
    std::vector<int> dup_at, own_dup, own_at;
    std::vector<int32_t> cols, slot;         // Project's narrow matrix: its columns, and back
    std::vector<uint8_t> case_keep;          // SubstituteCaseColumns: the columns kept,
    std::vector<int64_t> case_eq, case_row;  // the equality substituted, a row reduced
    std::vector<uint64_t> hashes;
    std::vector<int64_t> ray;             // UnboundedSides: a ray's column values
    std::vector<const int64_t*> ray_own;  // ... and the query's columns' along every ray
  };
  // The candidate rays of the scope's facts (decide_rays.cc), built on first use; dropped
  // with the base.
  std::unique_ptr<Rays> rays_;
  int projections_without_rays_ = 0;  // since the base was built (rays come at the third)
  std::unique_ptr<Buffers> buf_;
  // The witness search's compiled facts and points (decide_witness.cc), built at the third
  // Bounds query after a Reset (a scope that asks one or two questions is spared compiling its
  // facts); dropped with the base.
  std::unique_ptr<Witness> witness_;
  int bounds_without_witness_ = 0;
  // The running Bounds query's sides that witnesses settled (its interval bounds attained),
  // for Project: when rays settle the others (SettledByRays), it answers without eliminating.
  bool witnessed_lo_ = false, witnessed_hi_ = false;
  // The fact component of each variable at the last Prepare (variables that share a fact,
  // directly or through others, have the same id).
  std::vector<int32_t> component_;
  bool sign_only_ = false;  // the running Bounds query is sign_only
  // The interval bounds the running Bounds query intersects its projection with: a case
  // analysis may stop once its hull holds them (ProjectByCases).
  bool has_target_ = false;
  Interval target_;
  bool cut_short_ = false;  // ... and its case analysis stopped early
  // Set when a projection found the facts contradictory (in every case of its split), with
  // the facts the contradictions came from: CheckSatisfiable reports it.
  bool contradiction_found_ = false;
  uint64_t contradiction_origin_ = 0;
};

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_DECIDE_H_
