// A Scope owns dimension variables, constraints (and user assertions), and every
// expression built in it. It is the only way to build expressions, so every operation
// returns a hash-consed normal form and can consult the decision procedure (max/min
// folding, floordiv/mod simplification, division-by-zero checks).
//
// A Scope is used by one thread at a time. Errors are thrown as shp::Error.
#ifndef SHAPEPOLY_CC_DIM_SCOPE_H_
#define SHAPEPOLY_CC_DIM_SCOPE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cc/dim/expr.h"
#include "cc/dim/flat_table.h"

namespace shp {
namespace dim {

constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

// The deepest nesting of floordiv, mod, max and min in an expression (max(a, b) is 1 deep).
// Builders refuse deeper expressions (kUnsupported) and the parser deeper parentheses
// (kParseError), so every expression prints as text that parses back.
constexpr int32_t kMaxNestingDepth = 1000;
// The most atoms and terms an expression may have written out as a tree. Hash-consing lets a
// few builder calls make a DAG whose text doubles with each level (max(e - b, e - c) around
// e, repeated); builders refuse an atom past this size (kUnsupported), so printing and
// evaluation stay linear in it. The deepest chains of kMaxNestingDepth levels are far below.
constexpr uint32_t kMaxExpandedSize = 100000;

enum class Cmp : int32_t { kEq = 0, kNe = 1, kLt = 2, kLe = 3, kGt = 4, kGe = 5 };
enum class Truth : int32_t { kFalse = 0, kTrue = 1, kUnknown = 2 };

const char* CmpSymbol(Cmp op);
// The C enum name of a comparison (shp_cmp_t), for fixes written as C calls: "SHP_CMP_GE".
const char* CmpCName(Cmp op);
// A bound as messages print it: the number, "-inf" or "inf".
std::string BoundText(int64_t v);
// Whether `a op b` holds for concrete values.
bool CmpHolds(int64_t a, Cmp op, int64_t b);

// Inclusive bounds; kNegInf / kPosInf mean unbounded.
struct Interval {
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
};

struct Variable {
  std::string name;
  int64_t lo = 1;  // default range [1, +inf), as in JAX
  int64_t hi = kPosInf;
  bool declared = false;
  bool used = false;  // appeared in an expression built outside constraint loading
  // Unbacked (data-dependent) variables (NewUnbacked): the size an op reads from the data
  // (nonzero, boolean_mask, size_from_value). They have no hint, are never solved from input
  // shapes, and get their value from the op at run time.
  bool unbacked = false;
  std::string origin;  // unbacked: the op that produces it, e.g. "nonzero of a (n, 4) tensor"
};

// A fact the decision procedure uses: a constraint given at scope creation, or a fact added
// later, which a program must verify at run time: an assertion (Check) or a guard (Guard,
// Assume, AddGuard). Guards are assertions (is_assertion) with is_guard set: a violated
// guard is kGuardFailed, and a multi-variant program dispatches on its variants' guards.
struct Fact {
  const Expr* lhs;
  Cmp op;  // kEq, kNe, kLt, kLe, kGt or kGe
  const Expr* rhs;
  std::string text;     // as written by the user (constraints) or printed (assertions)
  std::string message;  // assertions and guards: the user's message; empty for constraints
  bool is_assertion = false;
  bool is_guard = false;
  std::string origin;  // guards: what recorded it ("shp_dim_guard", "mul: axis 0 ...")
  // A bound of an unbacked variable that holds by construction of the op producing it
  // (u <= numel(x) for nonzero): used by every decision, never checked at run time.
  bool is_derived = false;
};

// What an operation does with a shape comparison that the engine cannot decide
// (shp_guard_policy_t): fail with kInconclusive, or decide it on the hints and record a guard.
enum class GuardPolicy : int32_t { kNever = 0, kFromHints = 1 };

// The comparison that holds exactly when `op` does not: == and !=, < and >=, <= and >.
Cmp NegateCmp(Cmp op);

// Counters of the decision procedure's work (for tests and benchmarks): eliminations run,
// their work (fm::Eliminate's units), and how many ran out of their budget (decide.h).
struct DecideStats {
  long eliminations = 0;
  long work = 0;
  long degraded = 0;
};

class Decider;
// The normal form (detail/normal_form.h, private to cc/dim).
struct Atom;
struct Mono;
struct Factor;
enum class AtomKind : uint8_t;

class Scope {
 public:
  // Parses the constraints and checks that they are satisfiable (kParseError,
  // kUnsatisfiable otherwise).
  static std::unique_ptr<Scope> Create(const std::vector<std::string>& constraints);
  // Declares variable ranges first, so the constraints are checked under them.
  struct Declaration {
    std::string name;
    int64_t lo, hi;
  };
  static std::unique_ptr<Scope> Create(const std::vector<std::string>& constraints,
                                       const std::vector<Declaration>& declarations);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // Declares `name` with the range [lo, hi] (kNegInf/kPosInf for unbounded). Only before
  // the variable is used in an expression, and once.
  void Declare(const std::string& name, int64_t lo, int64_t hi);

  // ---- Building expressions (all return interned normal forms) ----
  const Expr* Constant(int64_t value);
  // The variable `name`, created on first mention. `mark_used` = false only while
  // loading constraints (so that declaring its range afterwards stays allowed).
  const Expr* Var(const std::string& name, bool mark_used = true);
  const Expr* Add(const Expr* a, const Expr* b);
  const Expr* Sub(const Expr* a, const Expr* b);
  const Expr* Mul(const Expr* a, const Expr* b);
  const Expr* Neg(const Expr* a);
  const Expr* Scale(const Expr* a, int64_t c);
  // Python semantics, by a constant or a divisor whose sign the facts fix (kDivisionByZero
  // otherwise). With a symbolic divisor, common factors cancel (floordiv(10*a, 4*b) is
  // floordiv(5*a, 2*b), mod(a*c, b*c) is c*mod(a, b) when c >= 1), a floordiv by a constant
  // nested in it folds (floordiv(floordiv(a, 3), b) is floordiv(a, 3*b)), and a quotient the
  // facts prove constant becomes that constant (under x == y, floordiv(3*x, y) is 3).
  const Expr* FloorDiv(const Expr* a, const Expr* b);
  const Expr* Mod(const Expr* a, const Expr* b);
  const Expr* Max(const Expr* a, const Expr* b);
  const Expr* Min(const Expr* a, const Expr* b);
  const Expr* Pow(const Expr* a, int64_t exponent);

  // ---- Parsing (kParseError with input, column, expected and found) ----
  const Expr* Parse(const std::string& text);
  // `like` (may be null) supplies dims for `_` and `...`.
  std::vector<const Expr*> ParseShape(const std::string& spec, const std::vector<int64_t>* like);

  // ---- Decision procedure ----
  Interval Bounds(const Expr* e);
  Truth Compare(const Expr* a, Cmp op, const Expr* b);
  // The bounds of each variable (by index) that the facts imply (the decision procedure's,
  // derived once per set of facts).
  std::vector<Interval> VarBounds();
  // Explain's copies of a scope (explain.h): `bounds` (by variable index) are known to hold
  // under these facts and ranges (the VarBounds of a scope with a subset of the facts and
  // wider ranges), and the decision procedure starts from them instead of deriving each
  // variable's bounds again. Answers stay sound and may be weaker. Unseed (or any change
  // but an appended fact) makes it derive them afresh.
  void SeedVarBounds(std::vector<Interval> bounds);
  void Unseed() { FactsChanged(); }
  // Records `a op b` as an assertion (used from now on; programs carry it). A provably
  // false assertion is kUnsatisfiable.
  void Check(const Expr* a, Cmp op, const Expr* b, const std::string& message);

  // ---- Hints and guards (example values, as PyTorch's backed SymInts) ----
  // Gives variable `name` (created if new, still declarable) the example value `value`. A
  // hint is not a fact: it never changes an answer of Compare or Bounds. It must lie in the
  // variable's range and satisfy every fact whose variables all have hints
  // (kConstraintViolation otherwise; the old hint stays).
  void SetHint(const std::string& name, int64_t value);
  // Whether variable `var` has a hint, and its value.
  bool HintOf(int32_t var, int64_t* value) const;
  // The value of `e` on the hints; false if a variable of `e` has none (its names are
  // appended to *missing when not null) or the evaluation fails.
  bool EvaluateOnHints(const Expr* e, int64_t* value, std::vector<std::string>* missing) const;
  // "s0 = 5, s1 = 6": the hints of the variables of `a` and `b` (those that have one).
  std::string HintsText(const Expr* a, const Expr* b) const;
  // Decides `a op b`: the decided answer if there is one (nothing recorded); otherwise its
  // value on the hints, recording as a guard the comparison or its negation, whichever the
  // hints satisfy. kInconclusive when undecided and a variable has no hint.
  bool Guard(const Expr* a, Cmp op, const Expr* b, const std::string& message,
             const std::string& origin);
  // Records `a op b` as a guard when it is not already provable (kUnsatisfiable when it is
  // provably false; kConstraintViolation when the hints violate it).
  void Assume(const Expr* a, Cmp op, const Expr* b, const std::string& message,
              const std::string& origin);
  // Records a guard as it is (programs rebuilding their scope; no hint check).
  void AddGuard(const Expr* a, Cmp op, const Expr* b, const std::string& message,
                const std::string& origin);
  // Removes the assertions and guards recorded after the first `n` facts (an operation that
  // failed after recording some).
  void DropFactsAfter(size_t n);
  GuardPolicy guard_policy() const { return guard_policy_; }
  void set_guard_policy(GuardPolicy p) { guard_policy_ = p; }

  // ---- Unbacked (data-dependent) variables (unbacked.cc) ----
  // Creates an unbacked variable named `name` (empty: the first free name u0, u1, ...) with
  // the range [lo, hi] and, when `upper` is not null, the derived fact `u <= upper`. `origin`
  // names the producing op. kInvalidArgument for a taken or invalid name or an empty range.
  const Expr* NewUnbacked(const std::string& name, int64_t lo, int64_t hi, const Expr* upper,
                          const std::string& origin);
  // Records `a op b` as a derived fact (see Fact::is_derived): programs rebuilding their
  // scope. kUnsatisfiable when it contradicts the facts.
  void AddDerived(const Expr* a, Cmp op, const Expr* b);
  // Marks variable `name` (created if new) unbacked with `origin` (programs rebuilding their
  // scope).
  void MarkUnbacked(const std::string& name, const std::string& origin);
  bool IsUnbacked(int32_t var) const {
    return var >= 0 && static_cast<size_t>(var) < vars_.size() && vars_[var].unbacked;
  }
  // When `a op b` (undecided) mentions an unbacked variable: throws kInconclusive saying the
  // value is data-dependent, naming the variable, the op that produced it, its bounds, what
  // needed the comparison (`what`), and the call that fixes it (shp_scope_check). Returns
  // otherwise.
  void ThrowIfDataDependent(const Expr* a, Cmp op, const Expr* b, const std::string& what);

  // ---- Evaluation and printing ----
  // `values[i]` is the value of variable i; `known[i]` says whether it is set.
  int64_t Evaluate(const Expr* e, const std::vector<int64_t>& values,
                   const std::vector<bool>& known) const;
  std::string ToString(const Expr* e) const;
  std::string ShapeToString(const std::vector<const Expr*>& dims) const;  // "(b, 2*s + 1)"
  std::string FactToString(const Fact& f) const;
  std::string ConstraintsToString() const;  // "{a >= b + 8, b >= c + 2}" or "{no constraints}"

  // ---- Introspection ----
  const std::vector<Variable>& variables() const { return vars_; }
  const std::vector<Fact>& facts() const { return facts_; }
  int32_t FindVar(const std::string& name) const;  // -1 if absent
  // Variables occurring in `e` (sorted by index, no duplicates).
  std::vector<int32_t> VarsOf(const Expr* e) const;
  void CheckSameScope(const Expr* a, const Expr* b, const char* op) const;
  uint64_t generation() const { return generation_; }  // bumps when facts change
  DecideStats decide_stats() const;

  // ---- Internal to cc/dim (the types are complete in detail/normal_form.h only) ----
  const Atom* InternAtom(AtomKind kind, int32_t var, const Expr* a, const Expr* b);
  const Atom* FindAtom(AtomKind kind, const Expr* a, const Expr* b) const;
  const Mono* InternMono(std::vector<Factor> factors);
  const Mono* MonoMul(const Mono* x, const Mono* y);
  const Mono* UnitMono() const { return unit_mono_; }
  // Interns a term list (any order, may contain zero coefficients / duplicate monos).
  const Expr* MakeExpr(std::vector<Term> terms);
  const Expr* MonoExpr(const Mono* m, int64_t coeff);
  const std::string& VarName(int32_t var) const { return vars_[var].name; }

  struct Store;  // interned atoms, monomials and expressions (detail/normal_form.h)

 private:
  Scope();
  int32_t AddVariable(const std::string& name);
  const Expr* AddImpl(const Expr* a, const Expr* b);
  const Expr* SubImpl(const Expr* a, const Expr* b);
  const Expr* MulImpl(const Expr* a, const Expr* b);
  const Expr* ScaleImpl(const Expr* a, int64_t c);
  const Expr* PowImpl(const Expr* a, int64_t exponent);
  // The memoized operators; part of the memo key, so each must have its own value.
  enum class MemoOp : uint8_t { kAdd, kSub, kMul, kScale, kPow, kFloorDiv, kMod, kMax, kMin };
  struct MemoKey {
    const Expr* a;
    const Expr* b;
    int64_t k;
    MemoOp op;
    bool operator==(const MemoKey& o) const {
      return a == o.a && b == o.b && k == o.k && op == o.op;
    }
  };
  struct MemoHash {
    size_t operator()(const MemoKey& k) const;
  };
  // The result of `op` on (a, b) or (a, k), computed once per scope and facts.
  const Expr* Memo(MemoOp op, const Expr* a, const Expr* b, int64_t k);
  void LoadConstraints();  // (re)parses constraint_texts_ into facts_ and checks them
  // `appended`: facts were only added at the end (Check); the decider keeps what stays valid.
  void FactsChanged(bool appended = false);
  // floordiv(a, b), or mod(a, b) when `want_mod`, in normal form (normal_form_divide.cc),
  // by its cases:
  const Expr* DivMod(const Expr* a, const Expr* b, bool want_mod);
  // ... a constant divisor k != 0 (`opname` names the operation in errors);
  const Expr* DivModByConstant(const Expr* a, int64_t k, bool want_mod, const char* opname);
  // ... a divisor that may be 0: one opaque atom, with its value where it is defined;
  const Expr* DivModMayBeZero(const Expr* a, const Expr* b, bool want_mod);
  // ... a divisor >= 1 sharing a factor with the numerator: the division of the rest (null
  // when nothing cancels);
  const Expr* DivModCancelCommon(const Expr* a, const Expr* b, bool want_mod);
  // ... a remainder r (a == q*b + r) that is one floordiv by a constant: the folded nested
  // floor, or null;
  const Expr* DivModFoldNested(const Expr* q, const Expr* r, const Expr* b, bool want_mod);
  // ... a constant quotient of r by b that the facts prove, or null.
  const Expr* DivModProvenQuotient(const Expr* q, const Expr* r, const Expr* b, bool want_mod);
  // floor(a/b) as a constant at a sample valuation where b != 0 (variables at the ends of
  // their bounds nearest 1), or nullptr.
  const Expr* SampleQuotient(const Expr* a, const Expr* b);
  // Appends an assertion or guard fact, keeping the scope unchanged if it is unsatisfiable.
  void AppendFact(Fact f);
  // kConstraintViolation when the hints violate `a op b` (all its variables hinted).
  void CheckAgainstHints(const Expr* a, Cmp op, const Expr* b, const std::string& what) const;
  const Expr* MaxMin(const Expr* a, const Expr* b, bool is_max);
  // max (or min) of flattened operands in the canonical form: constants folded, operands
  // ordered and deduplicated, absorbed or dominated ones dropped, common operands of the
  // dual atoms factored out, nested to the right.
  const Expr* MaxMinOf(std::vector<const Expr*> ops, bool is_max);
  // Whether x >= y is proven (interval arithmetic; with `full`, the whole procedure).
  bool ProvesGe(const Expr* x, const Expr* y, bool full);
  // Whether d >= 0 for every value of its one variable x, by cases on small values: d is
  // bounded below by a polynomial in x (floordiv/mod by constants replaced by their bounds),
  // which a Taylor shift shows >= 0 from some x0 on, and d is evaluated exactly below x0
  // (max(64*b, 64*floordiv(40*b + 63, 64)) is 64*b: 24*b - 63 >= 0 from b = 3, b = 1 and 2
  // by cases).
  bool ProvesNonNegativeByCases(const Expr* d);

  std::vector<Variable> vars_;
  std::vector<const Expr*> var_exprs_;  // the expression of each variable, once built
  std::unordered_map<std::string, int32_t> var_index_;
  std::vector<std::string> constraint_texts_;
  std::vector<Fact> facts_;
  std::vector<int64_t> hint_values_;  // by variable; meaningful where has_hint_ is set
  std::vector<bool> has_hint_;
  GuardPolicy guard_policy_ = GuardPolicy::kNever;

  std::unique_ptr<Store> store_;
  const Mono* unit_mono_ = nullptr;

  PtrValueMap<MemoKey, MemoHash, const Expr*> memo_;
  // Atoms floordiv/mod(a, b) with a divisor that may be 0, kept opaque, whose numerator is a
  // multiple of the divisor, and their value wherever they are defined (b != 0): a row of
  // every system that has the atom (rules/divmod.cc). Cleared with memo_ unless facts were
  // only appended.
  std::unordered_map<const Atom*, const Expr*> where_defined_;
  std::vector<const Expr*> small_constants_ = std::vector<const Expr*>(256 + 16 + 1, nullptr);
  uint64_t generation_ = 0;
  std::unique_ptr<Decider> decider_;
  friend class Decider;
};

// Overflow-checked integer helpers (throw shp::Error kOverflow / kDivisionByZero).
int64_t CheckedAdd(int64_t a, int64_t b);
int64_t CheckedMul(int64_t a, int64_t b);
int64_t CheckedNeg(int64_t a);
int64_t FloorDivInt(int64_t a, int64_t b);  // Python semantics
int64_t ModInt(int64_t a, int64_t b);       // sign of the divisor

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_SCOPE_H_
