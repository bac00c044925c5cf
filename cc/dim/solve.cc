#include "cc/dim/solve.h"

#include <algorithm>
#include <map>
#include <memory>

#include "cc/base/error.h"
#include "cc/dim/detail/normal_form.h"
#include "cc/dim/int_math.h"

namespace shp {
namespace dim {
namespace {

[[noreturn]] void Overflow() {
  throw Error(Code::kOverflow, "integer overflow in dimension arithmetic");
}

// x as int64, or the overflow error.
int64_t Narrow(__int128 x) {
  if (x < INT64_MIN || x > INT64_MAX) Overflow();
  return static_cast<int64_t>(x);
}

// Integer k-th root of y if exact (negative y: odd k only). A variable may be negative
// (declared ranges), so the root of a linear dimension (k = 1) can be any value.
bool ExactRoot(int64_t y, int32_t k, int64_t* root) {
  if (k == 1 || y == 0 || y == 1) {
    *root = y;
    return true;
  }
  if (y < 0 && k % 2 == 0) return false;
  const uint64_t m =
      y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y);  // |y| <= 2^63
  uint64_t lo = 0, hi = std::min<uint64_t>(m, uint64_t{1} << 32);       // k >= 2: root <= 2^31.5
  while (lo <= hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    uint64_t p = 1;
    bool over = false;
    for (int32_t i = 0; i < k && !over; ++i) over = __builtin_mul_overflow(p, mid, &p) || p > m;
    if (!over && p == m) {
      *root = y < 0 ? -static_cast<int64_t>(mid) : static_cast<int64_t>(mid);
      return true;
    }
    if (over || p > m) {
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return false;
}

// floor(|y|^(1/k)) for k >= 2.
uint64_t FloorRoot(int64_t y, int32_t k) {
  const uint64_t m = y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y);
  uint64_t lo = 0, hi = std::min<uint64_t>(m, uint64_t{1} << 32);
  while (lo < hi) {  // the largest r with r^k <= m
    uint64_t mid = lo + (hi - lo + 1) / 2;
    uint64_t p = 1;
    bool over = false;
    for (int32_t i = 0; i < k && !over; ++i) over = __builtin_mul_overflow(p, mid, &p) || p > m;
    if (over) {
      hi = mid - 1;
    } else {
      lo = mid;
    }
  }
  return lo;
}

// When y is no integer's k-th power: whether every real root of x^k == y lies outside
// [lo, hi] (then the variable's range, not the power, is what the dimension violates), and
// the bound it breaks ("the nearest root is below lo").
bool RootsOutsideRange(int64_t y, int32_t k, int64_t lo, int64_t hi, bool* below) {
  if (y < 0 && k % 2 == 0) return false;  // no real root at all
  // A root x lies strictly between two integers: x in (r, r + 1) with r = FloorRoot(y, k).
  const int64_t r = static_cast<int64_t>(FloorRoot(y, k));
  auto outside = [&](int64_t a, int64_t b, bool* is_below) {  // x in (a, b), b = a + 1
    if (a >= hi) return *is_below = false, true;
    if (b <= lo) return *is_below = true, true;
    return false;
  };
  bool b1 = false, b2 = false;
  if (y < 0) return outside(-r - 1, -r, below);
  if (k % 2 == 1) return outside(r, r + 1, below);
  if (!outside(r, r + 1, &b1) || !outside(-r - 1, -r, &b2)) return false;
  *below = b1 && b2;
  return true;
}

class Solver {
 public:
  Solver(Scope* s, const std::vector<SolveArg>& args, const SolveOptions& o)
      : s_(s), args_(args), o_(o) {
    size_t n = s->variables().size();
    sol_.values.assign(n, 0);
    sol_.known.assign(n, false);
    origin_.assign(n, "");
    lead_.assign(n, "");
    lead_size_.assign(n, 0);
    if (o.preset) {
      for (size_t v = 0; v < n && v < o.preset->known.size(); ++v) {
        if (o.preset->known[v]) {
          sol_.values[v] = o.preset->values[v];
          sol_.known[v] = true;
          origin_[v] = "given explicitly";
        }
      }
    }
  }

  Solution Run() {
    CheckRanksAndConstants();
    // Iterate: each pass may determine variables that make other dims solvable.
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t i = 0; i < args_.size(); ++i) {
        for (size_t j = 0; j < args_[i].dims.size(); ++j) {
          if (TrySolve(args_[i].dims[j], args_[i].shape[j], i, j)) progress = true;
        }
      }
    }
    CheckRanges();
    CheckAllSolved();
    CheckConsistency();
    if (o_.check_facts) {
      CheckFacts();
      // When every fact could be evaluated, the bounds they imply hold already.
      if (skipped_fact_) CheckImpliedBounds();
    }
    return sol_;
  }

 private:
  std::string Axis(size_t i, size_t j) const {
    const SolveArg& a = args_[i];
    return a.named ? a.label + " axis " + std::to_string(j)
                   : a.label + ".shape[" + std::to_string(j) + "]";
  }
  // "input 'x': axis 1" / "args[0].shape[1]" at the start of a sentence.
  std::string AxisLead(size_t i, size_t j) const {
    const SolveArg& a = args_[i];
    return a.named ? a.label + ": axis " + std::to_string(j) : Axis(i, j);
  }

  std::string Context() const {
    std::string out;
    // Only dimension inputs (preset variables): no empty list of specifications.
    if (!args_.empty()) out = " Using the following shape specifications: ";
    for (size_t i = 0; i < args_.size(); ++i) {
      if (i) out += ", ";
      out +=
          args_[i].label + (args_[i].named ? " " : ".shape = ") + s_->ShapeToString(args_[i].dims);
    }
    if (!args_.empty()) out += ".";
    std::string found;
    for (size_t v = 0; v < sol_.known.size(); ++v) {
      if (!sol_.known[v]) continue;
      if (!found.empty()) found += ", ";
      found += "'" + s_->VarName(static_cast<int32_t>(v)) +
               "' = " + std::to_string(sol_.values[v]) + " (" + origin_[v] + ")";
    }
    out += found.empty() ? " No dimension variables obtained yet."
                         : " Obtained dimension variables: " + found + ".";
    return out;
  }

  void CheckRanksAndConstants() {
    for (size_t i = 0; i < args_.size(); ++i) {
      const SolveArg& a = args_[i];
      if (a.shape.size() != a.dims.size()) {
        throw Error(Code::kShapeMismatch, a.label + ": rank is " + std::to_string(a.shape.size()) +
                                              " but " + o_.requirer + " requires rank " +
                                              std::to_string(a.dims.size()) + " (shape " +
                                              s_->ShapeToString(a.dims) + ")");
      }
    }
    for (size_t i = 0; i < args_.size(); ++i) {
      const SolveArg& a = args_[i];
      for (size_t j = 0; j < a.dims.size(); ++j) {
        if (a.shape[j] < 0) {
          throw Error(Code::kShapeMismatch,
                      AxisLead(i, j) + " has negative size " + std::to_string(a.shape[j]));
        }
        if (a.dims[j]->IsConstant() && a.dims[j]->ConstantTerm() != a.shape[j]) {
          throw Error(Code::kShapeMismatch,
                      AxisLead(i, j) + " is " + std::to_string(a.shape[j]) + " but " + o_.requirer +
                          " requires " + std::to_string(a.dims[j]->ConstantTerm()) +
                          (a.named ? "" : " (shape " + s_->ShapeToString(a.dims) + ")"));
        }
      }
    }
  }

  // Value of `e` if every variable in it is known.
  bool TryEval(const Expr* e, int64_t* out) const {
    for (int32_t v : s_->VarsOf(e)) {
      if (!sol_.known[v]) return false;
    }
    *out = s_->Evaluate(e, sol_.values, sol_.known);
    return true;
  }

  // TryEval while solving: a divisor that is zero at the values found so far counts as not
  // evaluable yet. The scope builds a division only when the facts and ranges exclude a zero
  // divisor, so such values violate a range or a fact, which CheckRanges and CheckFacts then
  // report with the variable's name (seed 792200 of the soundness test: b = 0 from
  // -b + 3 == 3 made floordiv(a, b) throw before b's range [1, inf) was checked).
  bool TryEvalAtom(const Expr* e, int64_t* out) const {
    try {
      return TryEval(e, out);
    } catch (const Error& err) {
      if (err.code() == Code::kDivisionByZero) return false;
      throw;
    }
  }

  void Assign(int32_t var, int64_t value, const std::string& origin) {
    sol_.values[var] = value;
    sol_.known[var] = true;
    origin_[var] = origin;
  }

  // Tries to determine one more variable from `e == value` (a dim of args[i] axis j).
  // Handles c*x^k + (known terms), and max/min(X, known) when the value decides.
  // The sums and products are 128-bit: an expanded power has terms near 2^63 where its value
  // is small ((((a - 2)^3)^3)^3 at a = 4 is 2^27), as in Evaluate's retry. What is divided or
  // compared must still fit int64 (an overflow error otherwise, as before).
  bool TrySolve(const Expr* e, int64_t value, size_t i, size_t j) {
    using Wide = __int128;
    Wide known_sum = 0;
    int32_t unknown_var = -1;
    int32_t unknown_exp = 0;
    Wide unknown_coeff = 0;
    const Atom* opaque = nullptr;  // an unknown compound atom
    Wide opaque_coeff = 0;
    int unknown_terms = 0;
    for (const Term& t : e->terms) {
      Wide c = t.coeff;
      int32_t var = -1, exp = 0;
      const Atom* op = nullptr;
      bool solvable_shape = true;
      for (const Factor& f : t.mono->factors) {
        int64_t v;
        if (f.atom->kind == AtomKind::kVar && sol_.known[f.atom->var]) {
          v = sol_.values[f.atom->var];
        } else if (f.atom->kind != AtomKind::kVar &&
                   TryEvalAtom(s_->MonoExpr(s_->InternMono({Factor{f.atom, 1}}), 1), &v)) {
        } else {
          if (var >= 0 || op) solvable_shape = false;
          if (f.atom->kind == AtomKind::kVar) {
            var = f.atom->var;
            exp = f.exp;
          } else {
            op = f.atom;
            if (f.exp != 1) solvable_shape = false;
          }
          continue;
        }
        if (!MulPowWide(&c, v, f.exp)) Overflow();
      }
      if (var < 0 && !op) {
        if (__builtin_add_overflow(known_sum, c, &known_sum)) Overflow();
        continue;
      }
      ++unknown_terms;
      if (!solvable_shape || c == 0) return false;
      if (op) {
        opaque = op;
        opaque_coeff = c;
        continue;
      }
      if (unknown_var >= 0 && (unknown_var != var || unknown_exp != exp)) return false;
      unknown_var = var;
      unknown_exp = exp;
      if (__builtin_add_overflow(unknown_coeff, c, &unknown_coeff)) Overflow();
    }
    if (unknown_terms == 0) return false;
    std::string where = Axis(i, j) + " (= " + std::to_string(value) + ")";
    const int64_t rest = Narrow(static_cast<Wide>(value) - known_sum);  // |known_sum| < 2^127
    if (opaque) {
      if (unknown_var >= 0 || unknown_terms != 1) return false;
      if (opaque->kind != AtomKind::kMax && opaque->kind != AtomKind::kMin) return false;
      const int64_t coeff = Narrow(opaque_coeff);
      // ModInt/FloorDivInt: `%` and `/` trap on INT64_MIN and -1.
      if (ModInt(rest, coeff) != 0)
        return false;  // inconsistent; reported by the consistency check
      int64_t m = FloorDivInt(rest, coeff);
      int64_t k;
      const Expr* x;
      if (TryEvalAtom(opaque->a, &k)) {
        x = opaque->b;
      } else if (TryEvalAtom(opaque->b, &k)) {
        x = opaque->a;
      } else {
        return false;
      }
      // max(X, k) == m determines X when m > k; min(X, k) == m when m < k.
      bool decides = opaque->kind == AtomKind::kMax ? m > k : m < k;
      return decides && TrySolve(x, m, i, j);
    }
    // The unknown's terms cancel at these values (a*b - b with a = 1): the dimension says
    // nothing about it (dividing by 0 trapped).
    if (unknown_coeff == 0) return false;
    const int64_t coeff = Narrow(unknown_coeff);
    if (ModInt(rest, coeff) != 0) {
      throw Error(Code::kShapeMismatch,
                  "Division had remainder " + std::to_string(ModInt(rest, coeff)) +
                      " when computing the value of '" + s_->VarName(unknown_var) + "' from " +
                      where + " with specification '" + s_->ToString(e) + "'." + Context());
    }
    int64_t y = FloorDivInt(rest, coeff);
    int64_t x;
    if (!ExactRoot(y, unknown_exp, &x)) {
      const Variable& var = s_->variables()[unknown_var];
      bool below = false;
      if (RootsOutsideRange(y, unknown_exp, var.lo, var.hi, &below)) {
        std::string bound = below ? ">= " + std::to_string(var.lo) : "<= " + std::to_string(var.hi);
        throw Error(Code::kConstraintViolation,
                    "Expected value " + bound + " for dimension variable '" + var.name +
                        "', but found '" + var.name + "^" + std::to_string(unknown_exp) +
                        "' = " + std::to_string(y) + " (from " + where + " with specification '" +
                        s_->ToString(e) + "')." + Context());
      }
      throw Error(Code::kShapeMismatch,
                  "Cannot solve for '" + s_->VarName(unknown_var) + "': " + std::to_string(y) +
                      " is not a perfect " + (unknown_exp == 2 ? "square" : "power") + " (from " +
                      where + " with specification '" + s_->ToString(e) + "')." + Context());
    }
    // Even powers have two roots: prefer the one in the variable's range.
    const Variable& var = s_->variables()[unknown_var];
    if (unknown_exp % 2 == 0 && x != 0 && !(x >= var.lo && x <= var.hi) &&
        (-x >= var.lo && -x <= var.hi))
      x = -x;
    Assign(unknown_var, x, "from " + where + " with specification '" + s_->ToString(e) + "'");
    // Named inputs only: shp_scope_solve keeps JAX's own wording.
    if (args_[i].named) lead_[static_cast<size_t>(unknown_var)] = AxisLead(i, j);
    lead_size_[static_cast<size_t>(unknown_var)] = value;
    return true;
  }

  void CheckRanges() {
    for (size_t v = 0; v < sol_.known.size(); ++v) {
      if (!sol_.known[v]) continue;
      const Variable& var = s_->variables()[v];
      int64_t x = sol_.values[v];
      if (x < var.lo || x > var.hi) {
        std::string bound =
            x < var.lo ? ">= " + std::to_string(var.lo) : "<= " + std::to_string(var.hi);
        // Where the value came from first ("input 'x': axis 1 is 0 but cols must be >= 1"),
        // then the details in JAX's words.
        std::string lead;
        if (!lead_[v].empty()) {
          lead = lead_[v] + " is " + std::to_string(lead_size_[v]) + " but " + var.name +
                 " must be " + bound +
                 (lead_size_[v] == x ? "" : " (" + var.name + " = " + std::to_string(x) + ")") +
                 ". ";
        }
        throw Error(Code::kConstraintViolation,
                    lead + "Expected value " + bound + " for dimension variable '" + var.name +
                        "', but found " + std::to_string(x) + "." + Context());
      }
    }
  }

  // Bounds implied by the facts must hold too: this catches facts that mention variables
  // in no shape (which CheckFacts cannot evaluate), e.g. a >= b + 8 with only a known.
  void CheckImpliedBounds() {
    for (size_t v = 0; v < sol_.known.size(); ++v) {
      if (!sol_.known[v]) continue;
      const Variable& var = s_->variables()[v];
      int64_t x = sol_.values[v];
      Interval implied = s_->Bounds(s_->Var(var.name, false));
      if (x < implied.lo || x > implied.hi) {
        std::string bound = x < implied.lo ? ">= " + std::to_string(implied.lo)
                                           : "<= " + std::to_string(implied.hi);
        throw Error(Code::kConstraintViolation,
                    "Expected value " + bound + " for dimension variable '" + var.name +
                        "' (implied by the constraints " + s_->ConstraintsToString() +
                        "), but found " + std::to_string(x) + "." + Context());
      }
    }
  }

  void CheckAllSolved() {
    std::vector<int32_t> missing;
    for (const SolveArg& a : args_) {
      for (const Expr* d : a.dims) {
        for (int32_t v : s_->VarsOf(d)) {
          if (!sol_.known[v]) missing.push_back(v);
        }
      }
    }
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    if (missing.empty()) return;
    std::string names;
    for (int32_t v : missing) names += (names.empty() ? "'" : ", '") + s_->VarName(v) + "'";
    throw Error(Code::kUnsolvable,
                "Cannot determine the dimension variable" +
                    std::string(missing.size() > 1 ? "s " : " ") + names +
                    " from the shapes: a variable is found from a dimension that is linear in it, "
                    "a product with "
                    "known factors, a perfect power, or max/min with a known operand." +
                    Context());
  }

  void CheckConsistency() {
    for (size_t i = 0; i < args_.size(); ++i) {
      for (size_t j = 0; j < args_[i].dims.size(); ++j) {
        const Expr* e = args_[i].dims[j];
        int64_t got;
        try {
          got = s_->Evaluate(e, sol_.values, sol_.known);
        } catch (const Error& err) {
          if (o_.check_facts) CheckFacts();  // a violated constraint explains it better
          if (err.code() != Code::kDivisionByZero) throw;
          // A divisor that may be 0 (the scope accepts them) is 0 for these shapes.
          throw Error(Code::kDivisionByZero,
                      "The specification '" + s_->ToString(e) + "' of " + Axis(i, j) +
                          " (= " + std::to_string(args_[i].shape[j]) +
                          ") is undefined for these shapes: " + err.message() + "." + Context());
        }
        if (got != args_[i].shape[j]) {
          throw Error(Code::kShapeMismatch,
                      "Found inconsistency between dimension size " + Axis(i, j) +
                          " (= " + std::to_string(args_[i].shape[j]) + ") and the specification '" +
                          s_->ToString(e) + "' (= " + std::to_string(got) + ")." + Context());
        }
      }
    }
  }

  // Constraints first, then guards (a variant's preconditions), then assertions (which may
  // only hold where the guards do), each kind in the order recorded.
  void CheckFacts() {
    for (int pass = 0; pass < 3; ++pass) {
      for (const Fact& f : s_->facts()) {
        if (f.is_derived) continue;  // holds by construction (an unbacked variable's bound)
        const int kind = !f.is_assertion ? 0 : f.is_guard ? 1 : 2;
        if (kind == pass) CheckFact(f);
      }
    }
  }

  void CheckFact(const Fact& f) {
    int64_t l, r;
    if (!TryEval(f.lhs, &l) || !TryEval(f.rhs, &r)) {  // mentions a variable not in any shape
      skipped_fact_ = true;
      return;
    }
    if (CmpHolds(l, f.op, r)) return;
    if (f.is_guard) {
      std::string values;
      std::vector<int32_t> vars = s_->VarsOf(f.lhs);
      for (int32_t v : s_->VarsOf(f.rhs)) vars.push_back(v);
      std::sort(vars.begin(), vars.end());
      vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
      for (int32_t v : vars) {
        values += (values.empty() ? "" : ", ") + s_->VarName(v) + " = " +
                  std::to_string(sol_.values[static_cast<size_t>(v)]);
      }
      throw Error(Code::kGuardFailed,
                  "guard " + f.text + " does not hold: " + values + " (" + std::to_string(l) + " " +
                      CmpSymbol(f.op) + " " + std::to_string(r) + " is false)" +
                      (f.message.empty() ? "" : "; guard message: " + f.message) +
                      (f.origin.empty() ? "" : "; recorded by " + f.origin) + "." + Context());
    }
    // Show the difference that must be >= 0 (or == 0) and its value.
    bool lhs_big = f.op == Cmp::kGe || f.op == Cmp::kGt || f.op == Cmp::kEq || f.op == Cmp::kNe;
    std::string diff;
    int64_t dv = 0;
    try {
      const Expr* d = lhs_big ? s_->Sub(f.lhs, f.rhs) : s_->Sub(f.rhs, f.lhs);
      diff = s_->ToString(d);
      dv = s_->Evaluate(d, sol_.values, sol_.known);
    } catch (const Error&) {
      diff = lhs_big ? s_->ToString(f.lhs) + " - (" + s_->ToString(f.rhs) + ")"
                     : s_->ToString(f.rhs) + " - (" + s_->ToString(f.lhs) + ")";
      if (lhs_big ? __builtin_sub_overflow(l, r, &dv) : __builtin_sub_overflow(r, l, &dv))
        dv = kNegInf;
    }
    std::string what = std::string(f.is_assertion ? "check " : "constraint ") + f.text +
                       " violated: " + diff + " = " + std::to_string(dv);
    std::shared_ptr<ErrorDetail> detail;
    std::string change = NearestFix(f, &detail);
    throw Error(Code::kConstraintViolation,
                (f.is_assertion && !f.message.empty() ? f.message + " (" + what + ")" : what) +
                    "." + change + Context(),
                detail);
  }

  // The smallest change of one input dimension that makes the call pass, violated fact
  // included: for each axis whose dimension mentions a variable of `f`, sizes at distance
  // 1..16, then doubling steps, then bisection between the last failing and the first
  // passing distance; each candidate is verified by solving the whole call again (so it
  // satisfies every fact, range and other axis). Returns " Changing <axis> from 10 to 13
  // satisfies it." (and sets *detail's fix) or "" when none was found.
  std::string NearestFix(const Fact& f, std::shared_ptr<ErrorDetail>* detail) {
    if (searching_fix_) return "";  // the nested solves of the search itself
    std::vector<int32_t> fv = s_->VarsOf(f.lhs);
    for (int32_t v : s_->VarsOf(f.rhs)) fv.push_back(v);
    searching_fix_ = true;
    struct Reset {
      ~Reset() { searching_fix_ = false; }
    } reset;
    std::vector<SolveArg> args = args_;
    auto passes = [&](size_t i, size_t j, int64_t size) {
      if (size < 0) return false;
      const int64_t old = args[i].shape[j];
      args[i].shape[j] = size;
      bool ok = true;
      try {
        Solver(s_, args, o_).Run();
      } catch (const Error&) {
        ok = false;
      }
      args[i].shape[j] = old;
      return ok;
    };
    bool found = false;
    size_t bi = 0, bj = 0;
    int64_t best = 0;   // the change, best_size - size
    int budget = 2000;  // solves
    for (size_t i = 0; i < args_.size(); ++i) {
      for (size_t j = 0; j < args_[i].dims.size(); ++j) {
        std::vector<int32_t> dv = s_->VarsOf(args_[i].dims[j]);
        if (std::none_of(dv.begin(), dv.end(), [&](int32_t v) {
              return std::find(fv.begin(), fv.end(), v) != fv.end();
            })) {
          continue;
        }
        const int64_t size = args_[i].shape[j];
        for (int sign : {1, -1}) {
          int64_t prev = 0, step = 1, hit = 0;
          for (; budget > 0 && step <= (int64_t{1} << 40); --budget) {
            if (found && step >= (best < 0 ? -best : best)) break;  // not nearer
            int64_t cand;
            if (__builtin_add_overflow(size, sign * step, &cand)) break;
            if (passes(i, j, cand)) {
              hit = step;
              break;
            }
            prev = step;
            step = step < 16 ? step + 1 : step * 2;
          }
          if (hit == 0) continue;
          // Passing at `hit`, failing at `prev`: bisect for a nearer passing size.
          while (hit - prev > 1 && budget-- > 0) {
            const int64_t mid = prev + (hit - prev) / 2;
            (passes(i, j, size + sign * mid) ? hit : prev) = mid;
          }
          if (!found || hit < (best < 0 ? -best : best)) {
            found = true;
            bi = i;
            bj = j;
            best = sign * hit;
          }
        }
      }
    }
    if (!found) return "";
    const int64_t from = args_[bi].shape[bj], to = from + best;
    const std::string fix =
        "change " + Axis(bi, bj) + " from " + std::to_string(from) + " to " + std::to_string(to);
    auto d = std::make_shared<ErrorDetail>();
    d->fixes.push_back(fix);
    *detail = std::move(d);
    return " The nearest change of one input dimension that satisfies it: " + fix + ".";
  }

  Scope* s_;
  const std::vector<SolveArg>& args_;
  const SolveOptions& o_;
  Solution sol_;
  std::vector<std::string> origin_;
  // For a variable solved from an axis: "input 'x': axis 1" and that axis's size.
  std::vector<std::string> lead_;
  std::vector<int64_t> lead_size_;
  bool skipped_fact_ = false;
  // Set while NearestFix solves candidate shapes (their violations search no fix).
  static thread_local bool searching_fix_;
};

thread_local bool Solver::searching_fix_ = false;

}  // namespace

int32_t SolvableVar(const Scope& s, const Expr* e, const std::vector<bool>& known) {
  auto all_known = [&](const Expr* x) {
    for (int32_t v : s.VarsOf(x)) {
      if (!known[static_cast<size_t>(v)]) return false;
    }
    return true;
  };
  int32_t var = -1, var_exp = 0, unknown_terms = 0;
  const Atom* opaque = nullptr;
  for (const Term& t : e->terms) {
    int32_t tv = -1, texp = 0;
    const Atom* top = nullptr;
    for (const Factor& f : t.mono->factors) {
      const Atom* a = f.atom;
      if (a->kind == AtomKind::kVar ? known[static_cast<size_t>(a->var)]
                                    : (all_known(a->a) && all_known(a->b))) {
        continue;
      }
      if (tv >= 0 || top != nullptr) return -1;  // two unknown factors in one term
      if (a->kind == AtomKind::kVar) {
        tv = a->var;
        texp = f.exp;
      } else {
        if (f.exp != 1) return -1;
        top = a;
      }
    }
    if (tv < 0 && top == nullptr) continue;
    ++unknown_terms;
    if (top != nullptr) {
      opaque = top;
      continue;
    }
    if (var >= 0 && (var != tv || var_exp != texp)) return -1;
    var = tv;
    var_exp = texp;
  }
  if (unknown_terms == 0) return -1;
  if (opaque == nullptr) return var;
  if (var >= 0 || unknown_terms != 1) return -1;
  if (opaque->kind != AtomKind::kMax && opaque->kind != AtomKind::kMin) return -1;
  if (all_known(opaque->a)) return SolvableVar(s, opaque->b, known);
  if (all_known(opaque->b)) return SolvableVar(s, opaque->a, known);
  return -1;
}

Solution Solve(Scope* scope, const std::vector<SolveArg>& args, const SolveOptions& options) {
  for (const SolveArg& a : args) {
    for (const Expr* d : a.dims) {
      if (d->scope != scope) scope->CheckSameScope(d, d, "solve");
    }
  }
  return Solver(scope, args, options).Run();
}

}  // namespace dim
}  // namespace shp
