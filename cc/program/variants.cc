// Multi-variant programs: combining programs traced under different guards, checking that
// they fit together and whether their guards cover every valuation the constraints allow, and
// picking the variant that runs on given shapes.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/rebuild.h"
#include "cc/program/program.h"

namespace shp {
namespace program {

using dim::Cmp;
using dim::Expr;
using dim::Truth;

namespace {

// Coverage: at most this many combinations of negated guards are refuted one by one, and at
// most this many valuations are tried in the search for a counterexample.
constexpr size_t kMaxCoverageCases = 1024;
constexpr size_t kMaxSearchValuations = 20000;
// Copies of programs already in memory are not capped beyond the format's own limits.
const LoadOptions kCopyOptions{UINT64_MAX};

std::string Plural(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// The integers written in `text` (the constants that guards and constraints compare with).
void CollectIntegers(const std::string& text, std::set<int64_t>* out) {
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    int64_t v = 0;
    bool fits = true;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      if (v > (INT64_MAX - 9) / 10) fits = false;
      if (fits) v = v * 10 + (text[j] - '0');
      ++j;
    }
    // Skip digits inside identifiers such as s0.
    const bool in_name =
        i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
    if (fits && !in_name) out->insert(v);
    i = j;
  }
}

// A guard of one variant, rebuilt in the scope that the coverage check reasons in.
struct GuardRef {
  const Expr* lhs;  // in the base scope of ComputeCoverage
  Cmp op;
  const Expr* rhs;
  std::string text;
};

// The proof half of the coverage check (ComputeCoverage): true when the decision procedure
// refutes every combination of one negated guard per variant, so some variant always runs.
bool RefuteEveryUncoveredCase(dim::Scope* base, const std::vector<std::vector<GuardRef>>& guards,
                              size_t base_facts) {
  const size_t nv = guards.size();
  // Each variant fails when one of its guards fails: the negation of a guard, with != split
  // into < and >, so that every case is a conjunction the decision procedure can refute.
  struct Negation {
    size_t guard;
    Cmp op;
  };
  std::vector<std::vector<Negation>> options(nv);
  size_t cases = 1;
  for (size_t v = 0; v < nv; ++v) {
    for (size_t g = 0; g < guards[v].size(); ++g) {
      Cmp neg = dim::NegateCmp(guards[v][g].op);
      if (neg == Cmp::kNe) {
        options[v].push_back({g, Cmp::kLt});
        options[v].push_back({g, Cmp::kGt});
      } else {
        options[v].push_back({g, neg});
      }
    }
    cases = cases > kMaxCoverageCases ? cases : cases * options[v].size();
  }
  bool proven = cases <= kMaxCoverageCases;
  if (proven) {
    std::vector<size_t> pick(nv, 0);
    for (size_t c = 0; c < cases && proven; ++c) {
      bool refuted = false;
      try {
        for (size_t v = 0; v < nv; ++v) {
          const Negation& n = options[v][pick[v]];
          const GuardRef& g = guards[v][n.guard];
          base->AddGuard(g.lhs, n.op, g.rhs, "", "");
        }
      } catch (const Error& e) {
        refuted = e.code() == Code::kUnsatisfiable;
      }
      base->DropFactsAfter(base_facts);
      if (!refuted) proven = false;
      for (size_t v = 0; v < nv; ++v) {  // the next combination
        if (++pick[v] < options[v].size()) break;
        pick[v] = 0;
      }
    }
  }
  return proven;
}

// The values the counterexample search tries for each variable: the ends of its range, small
// values, powers of two and the literals (+-1) of the guards and constraints, trimmed (keeping
// the smallest) until the product fits the search budget. *total: that product (capped).
std::vector<std::vector<int64_t>> CandidateValues(const std::vector<dim::Variable>& vars,
                                                  const std::set<int64_t>& literals,
                                                  size_t* total_out) {
  std::vector<std::vector<int64_t>> candidates(vars.size());
  size_t total = 1;
  for (size_t i = 0; i < vars.size(); ++i) {
    std::set<int64_t> c;
    auto add = [&](int64_t x) {
      if (x >= vars[i].lo && x <= vars[i].hi) c.insert(x);
    };
    for (int64_t d = 0; d <= 2; ++d) {
      if (vars[i].lo != dim::kNegInf && vars[i].lo <= INT64_MAX - d) add(vars[i].lo + d);
      if (vars[i].hi != dim::kPosInf && vars[i].hi >= INT64_MIN + d) add(vars[i].hi - d);
    }
    for (int64_t x = -2; x <= 16; ++x) add(x);
    for (int64_t x = 32; x <= (int64_t{1} << 16); x *= 2) add(x);
    for (int64_t l : literals) {
      for (int64_t d = -1; d <= 1; ++d) {
        if (l < INT64_MAX) add(l + d);
        if (-l > INT64_MIN + 1) add(-l + d);
      }
    }
    candidates[i].assign(c.begin(), c.end());
    if (candidates[i].empty()) candidates[i].push_back(vars[i].lo);
  }
  // Trim the lists (keeping their smallest values) until the product fits the search budget.
  for (;;) {
    total = 1;
    size_t widest = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      total = total > kMaxSearchValuations ? total : total * candidates[i].size();
      if (candidates[i].size() > candidates[widest].size()) widest = i;
    }
    if (total <= kMaxSearchValuations || candidates.empty() || candidates[widest].size() <= 2)
      break;
    candidates[widest].resize(candidates[widest].size() * 3 / 4);
  }
  *total_out = total;
  return candidates;
}

// The search half of the coverage check (ComputeCoverage), once the proof failed: a valuation
// that satisfies the constraints and no variant's guards, reported in *counterexample only
// once every guard has been evaluated on it. False when the search finds none.
bool FindCounterexample(dim::Scope* base, const std::vector<std::vector<GuardRef>>& guards,
                        size_t base_facts, const std::set<int64_t>& literals,
                        std::string* counterexample) {
  const size_t nv = guards.size();
  const std::vector<dim::Variable>& vars = base->variables();
  size_t total = 1;
  const std::vector<std::vector<int64_t>> candidates = CandidateValues(vars, literals, &total);
  std::vector<int64_t> values(vars.size(), 0);
  std::vector<bool> known(vars.size(), true);
  std::vector<size_t> at(vars.size(), 0);
  auto holds = [&](const Expr* l, Cmp op, const Expr* r, bool* ok) {
    try {
      return dim::CmpHolds(base->Evaluate(l, values, known), op, base->Evaluate(r, values, known));
    } catch (const Error&) {
      *ok = false;  // undefined on this valuation (e.g. a division by zero): not a witness
      return false;
    }
  };
  for (size_t n = 0; n < std::min(total, kMaxSearchValuations); ++n) {
    for (size_t i = 0; i < vars.size(); ++i) values[i] = candidates[i][at[i]];
    for (size_t i = 0; i < vars.size(); ++i) {  // the next valuation
      if (++at[i] < candidates[i].size()) break;
      at[i] = 0;
    }
    bool ok = true;
    bool allowed = true;
    for (size_t f = 0; f < base_facts && allowed; ++f) {
      const dim::Fact& fact = base->facts()[f];
      allowed = holds(fact.lhs, fact.op, fact.rhs, &ok) && ok;
    }
    if (!allowed) continue;
    std::string failures;
    bool covered = false;
    for (size_t v = 0; v < nv && !covered && ok; ++v) {
      std::string first;
      for (const GuardRef& g : guards[v]) {
        if (!holds(g.lhs, g.op, g.rhs, &ok)) {
          first = g.text;
          break;
        }
      }
      if (first.empty()) covered = true;
      failures += (v ? "; " : "") +
                  (nv > 1 ? "variant " + std::to_string(v) + ": " : std::string()) + first +
                  " is false";
    }
    if (covered || !ok) continue;
    std::string valuation;
    for (size_t i = 0; i < vars.size(); ++i) {
      valuation += (i ? ", " : "") + vars[i].name + " = " + std::to_string(values[i]);
    }
    *counterexample = valuation + " satisfies the constraints and " +
                      (nv > 1 ? "no variant's guards (" : "not the program's guards (") + failures +
                      ")";
    return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<Program> Program::CreateVariants(
    const std::vector<std::shared_ptr<const Program>>& variants) {
  if (variants.empty()) throw Error(Code::kInvalidArgument, "create_variants: no variant given");
  std::vector<std::shared_ptr<const Program>> flat;
  for (size_t k = 0; k < variants.size(); ++k) {
    if (!variants[k]) {
      throw Error(Code::kInvalidArgument,
                  "create_variants: variant " + std::to_string(k) + " is NULL");
    }
    const Program& p = *variants[k];
    if (p.more_variants_.empty()) {
      flat.push_back(variants[k]);
      continue;
    }
    // A multi-variant argument contributes its variants, in order.
    const std::string own = p.SerializeOwn();
    flat.push_back(
        std::shared_ptr<const Program>(Load(own.data(), own.size(), kCopyOptions).release()));
    for (const auto& m : p.more_variants_) flat.push_back(m);
  }
  if (flat.size() > kMaxVariants) {
    throw Error(Code::kInvalidArgument, "create_variants: " + Plural(flat.size(), "variant") +
                                            " given, at most " + std::to_string(kMaxVariants) +
                                            " are allowed");
  }
  // Variant 0 becomes the new program itself: a copy, since programs are immutable.
  const std::string first = flat[0]->SerializeOwn();
  std::unique_ptr<Program> out = Load(first.data(), first.size(), kCopyOptions);
  out->AttachVariants(std::vector<std::shared_ptr<const Program>>(flat.begin() + 1, flat.end()));
  out->metadata_ = variants[0]->metadata_;  // the first argument's (Program::metadata)
  return out;
}

// A guard over a data-dependent size of `p` (docs/data_dependent.md: variants are chosen
// before the data is computed, so they cannot dispatch on one), as "u0 >= 2", or "".
constexpr const char* kNoDispatch =
    ": variants are chosen before the data is computed, so they cannot dispatch on it (use an "
    "assertion, or select between results)";

static std::string GuardOverUnbacked(const Program& p, const dim::Scope& scope) {
  if (!p.has_unbacked()) return "";
  for (const dim::Fact& f : scope.facts()) {
    if (!f.is_guard) continue;
    for (const dim::Expr* e : {f.lhs, f.rhs}) {
      for (int32_t var : scope.VarsOf(e)) {
        if (p.UnbackedProducer(var) >= 0) return f.text;
      }
    }
  }
  return "";
}

void Program::AttachVariants(std::vector<std::shared_ptr<const Program>> more) {
  auto fail = [](size_t v, const std::string& msg) {
    throw Error(Code::kInvalidArgument,
                "create_variants: variant " + std::to_string(v) + " " + msg);
  };
  for (size_t v = 0; v <= more.size() && !more.empty(); ++v) {
    const Program& q = v == 0 ? *this : *more[v - 1];
    std::lock_guard<std::mutex> lock(*q.mu_);
    const std::string g = GuardOverUnbacked(q, *q.scope_);
    if (!g.empty()) fail(v, "has the guard '" + g + "' over a data-dependent size" + kNoDispatch);
  }
  for (size_t k = 0; k < more.size(); ++k) {
    const Program& q = *more[k];
    const size_t v = k + 1;
    if (q.inputs_.size() != inputs_.size()) {
      fail(v, "has " + Plural(q.inputs_.size(), "input") + " but variant 0 has " +
                  std::to_string(inputs_.size()));
    }
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Input& a = inputs_[i];
      const Input& b = q.inputs_[i];
      const std::string which = "input " + std::to_string(i);
      if (a.name != b.name)
        fail(v, "names " + which + " '" + b.name + "', variant 0 '" + a.name + "'");
      if (a.role != b.role) fail(v, "gives input '" + a.name + "' another role than variant 0");
      if (a.type.dtype != b.type.dtype) {
        fail(v, "gives input '" + a.name + "' the dtype " + trace::DTypeName(b.type.dtype) +
                    ", variant 0 " + trace::DTypeName(a.type.dtype));
      }
      if (a.type.shape.size() != b.type.shape.size()) {
        fail(v, "gives input '" + a.name + "' the rank " + std::to_string(b.type.shape.size()) +
                    ", variant 0 " + std::to_string(a.type.shape.size()));
      }
      const bool da = a.default_buffer >= 0, db = b.default_buffer >= 0;
      if (da != db || (da && buffers_[static_cast<size_t>(a.default_buffer)] !=
                                 q.buffers_[static_cast<size_t>(b.default_buffer)])) {
        fail(v, "gives input '" + a.name + "' another default value than variant 0");
      }
      if (a.has_fill != b.has_fill || (a.has_fill && a.fill != b.fill))
        fail(v, "gives input '" + a.name + "' another fill default than variant 0");
    }
    if (q.outputs_.size() != outputs_.size()) {
      fail(v, "has " + Plural(q.outputs_.size(), "output") + " but variant 0 has " +
                  std::to_string(outputs_.size()));
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const Output& a = outputs_[i];
      const Output& b = q.outputs_[i];
      const trace::TensorType& ta = value_type(a.value);
      const trace::TensorType& tb = q.value_type(b.value);
      if (a.name != b.name) {
        fail(v,
             "names output " + std::to_string(i) + " '" + b.name + "', variant 0 '" + a.name + "'");
      }
      if (a.role != b.role) fail(v, "gives output '" + a.name + "' another role than variant 0");
      if (ta.dtype != tb.dtype) {
        fail(v, "gives output '" + a.name + "' the dtype " + trace::DTypeName(tb.dtype) +
                    ", variant 0 " + trace::DTypeName(ta.dtype));
      }
      if (ta.shape.size() != tb.shape.size()) {
        fail(v, "gives output '" + a.name + "' the rank " + std::to_string(tb.shape.size()) +
                    ", variant 0 " + std::to_string(ta.shape.size()));
      }
    }
    if (q.constraint_texts_ != constraint_texts_) {
      fail(v,
           "was traced under other constraints than variant 0 (trace every variant in a scope "
           "with the same constraints; variant 0: " +
               std::to_string(constraint_texts_.size()) + ", variant " + std::to_string(v) + ": " +
               std::to_string(q.constraint_texts_.size()) + ")");
    }
    // Declared ranges must agree, and symbolic shapes must be provably equal under the
    // variant's own guards and assertions.
    std::vector<dim::Scope::Declaration> decls;
    std::vector<std::pair<std::string, std::string>> shape_pairs;  // not textually equal
    {
      std::lock_guard<std::mutex> l0(*mu_);
      std::lock_guard<std::mutex> l1(*q.mu_);
      for (const dim::Variable& x : q.scope_->variables()) {
        int32_t o = scope_->FindVar(x.name);
        if (o >= 0) {
          const dim::Variable& y = scope_->variables()[static_cast<size_t>(o)];
          if (x.declared != y.declared || x.lo != y.lo || x.hi != y.hi) {
            fail(v, "declares the range of '" + x.name + "' differently from variant 0");
          }
        }
        if (x.declared) decls.push_back({x.name, x.lo, x.hi});
      }
    }
    std::unique_ptr<dim::Scope> check = dim::Scope::Create(constraint_texts_, decls);
    dim::Rebuilder from_q(check.get());
    dim::Rebuilder from_0(check.get());
    auto same = [&](const Expr* eq, const Expr* e0) {
      try {
        const Expr* x = from_q.Expr(eq);
        const Expr* y = from_0.Expr(e0);
        return x == y || check->Compare(x, Cmp::kEq, y) == Truth::kTrue;
      } catch (const Error&) {
        return false;  // e.g. a division the check scope cannot prove safe
      }
    };
    std::lock_guard<std::mutex> l0(*mu_);
    std::lock_guard<std::mutex> l1(*q.mu_);
    try {
      for (const dim::Fact& f : q.scope_->facts()) {
        if (!f.is_assertion) continue;
        const Expr* lhs = from_q.Expr(f.lhs);  // named steps: a fixed order of new variables
        const Expr* rhs = from_q.Expr(f.rhs);
        check->AddGuard(lhs, f.op, rhs, "", "");
      }
    } catch (const Error& e) {
      fail(v, "has guards or assertions that cannot be checked against variant 0: " + e.message());
    }
    auto compare_shapes = [&](const std::string& what, const std::vector<const Expr*>& sq,
                              const std::vector<const Expr*>& s0) {
      for (size_t j = 0; j < s0.size(); ++j) {
        if (q.scope_->ToString(sq[j]) == scope_->ToString(s0[j])) continue;
        if (!same(sq[j], s0[j])) {
          fail(v, "gives " + what + " axis " + std::to_string(j) + " the size " +
                      q.scope_->ToString(sq[j]) + " but variant 0 " + scope_->ToString(s0[j]) +
                      ", and the variant's guards do not make them provably equal");
        }
      }
    };
    for (size_t i = 0; i < inputs_.size(); ++i) {
      compare_shapes("input '" + inputs_[i].name + "'", q.inputs_[i].type.shape,
                     inputs_[i].type.shape);
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      compare_shapes("output '" + outputs_[i].name + "'", q.value_type(q.outputs_[i].value).shape,
                     value_type(outputs_[i].value).shape);
    }
  }
  more_variants_ = std::move(more);
  same_input_shapes_ = true;
  for (const auto& q : more_variants_) same_input_shapes_ &= q->input_shapes_ == input_shapes_;
  ComputeCoverage();
  std::string t = "program with " + Plural(num_variants(), "variant") +
                  " (the first whose guards hold runs; exhaustive: " +
                  (exhaustive_ == Truth::kTrue    ? std::string("yes")
                   : exhaustive_ == Truth::kFalse ? "no: " + counterexample_
                                                  : std::string("unknown")) +
                  ")\n";
  for (size_t v = 0; v < num_variants(); ++v) {
    t += "== variant " + std::to_string(v) + " ==\n" + variant(v).own_text_;
  }
  text_ = std::move(t);
}

void Program::ComputeCoverage() {
  exhaustive_ = Truth::kTrue;
  counterexample_.clear();
  const size_t nv = num_variants();
  for (size_t v = 0; v < nv; ++v) {
    if (variant(v).guard_texts_.empty()) return;  // this variant runs everywhere
  }
  // Every variant has guards: refute each combination of one negated guard per variant.
  std::vector<dim::Scope::Declaration> decls;
  std::set<std::string> declared;
  for (size_t v = 0; v < nv; ++v) {
    const Program& q = variant(v);
    std::unique_lock<std::mutex> lock(*q.mu_, std::defer_lock);
    if (v > 0) lock.lock();  // this program's own scope is not shared yet
    for (const dim::Variable& x : q.scope_->variables()) {
      if (x.declared && declared.insert(x.name).second) decls.push_back({x.name, x.lo, x.hi});
    }
  }
  std::unique_ptr<dim::Scope> base;
  std::vector<std::vector<GuardRef>> guards(nv);
  std::set<int64_t> literals;
  for (const std::string& c : constraint_texts_) CollectIntegers(c, &literals);
  try {
    base = dim::Scope::Create(constraint_texts_, decls);
    for (size_t v = 0; v < nv; ++v) {
      const Program& q = variant(v);
      std::unique_lock<std::mutex> lock(*q.mu_, std::defer_lock);
      if (v > 0) lock.lock();
      dim::Rebuilder rb(base.get());
      for (const dim::Fact& f : q.scope_->facts()) {
        if (!f.is_guard) continue;
        guards[v].push_back({rb.Expr(f.lhs), f.op, rb.Expr(f.rhs), f.text});
        CollectIntegers(f.text, &literals);
      }
    }
  } catch (const Error&) {
    exhaustive_ = Truth::kUnknown;  // a guard the base scope cannot rebuild
    return;
  }
  const size_t base_facts = base->facts().size();
  if (RefuteEveryUncoveredCase(base.get(), guards, base_facts)) return;
  exhaustive_ = FindCounterexample(base.get(), guards, base_facts, literals, &counterexample_)
                    ? Truth::kFalse
                    : Truth::kUnknown;
}

int32_t Program::VariantForValues(const std::vector<std::string>& var_names,
                                  const std::vector<int64_t>& var_values, std::string* why) const {
  std::string reasons;
  for (size_t v = 0; v < num_variants(); ++v) {
    const Program& q = variant(v);
    std::lock_guard<std::mutex> lock(*q.mu_);
    const dim::Scope& s = *q.scope_;
    std::vector<int64_t> values(s.variables().size(), 0);
    std::vector<bool> known(s.variables().size(), false);
    for (size_t k = 0; k < var_names.size() && k < var_values.size(); ++k) {
      int32_t x = s.FindVar(var_names[k]);
      if (x < 0) continue;
      values[static_cast<size_t>(x)] = var_values[k];
      known[static_cast<size_t>(x)] = true;
    }
    std::string failed;
    for (const dim::Fact& f : s.facts()) {
      if (!f.is_guard) continue;
      try {
        if (dim::CmpHolds(s.Evaluate(f.lhs, values, known), f.op,
                          s.Evaluate(f.rhs, values, known))) {
          continue;
        }
        failed = "guard " + f.text + " is false";
      } catch (const Error& e) {
        failed = "guard " + f.text + " cannot be evaluated: " + e.message();
      }
      break;
    }
    if (failed.empty()) return static_cast<int32_t>(v);
    reasons += (reasons.empty() ? "" : "; ") + ("variant " + std::to_string(v) + ": ") + failed;
  }
  if (why != nullptr) *why = reasons;
  return -1;
}

ShapeCheck Program::CheckShapes(const std::vector<std::string>& names,
                                const std::vector<std::vector<int64_t>>& shapes) const {
  if (more_variants_.empty()) return CheckShapesOwn(names, shapes);
  // Fast path when every variant reads the same symbolic input shapes: solve once, pick the
  // first variant whose guards hold on the values, and check that variant alone.
  if (same_input_shapes_) {
    int32_t v = -1;
    try {
      ShapeCheck pre = CheckShapesOwn(names, shapes, /*check_facts=*/false);
      v = VariantForValues(pre.var_names, pre.var_values, nullptr);
    } catch (const Error&) {
      v = -1;  // the loop below reports it
    }
    if (v >= 0) {
      try {
        ShapeCheck c = variant(static_cast<size_t>(v)).CheckShapesOwn(names, shapes);
        c.variant = v;
        return c;
      } catch (const Error& e) {
        if (e.code() != Code::kGuardFailed) throw;
      }
    }
  }
  // A variant applies when its variables solve and its guards hold; a failure after that (a
  // violated constraint or assertion, a bad name) is the error of the call.
  std::string reasons;
  bool guard_failed = false;
  Error first(Code::kOk, "");
  for (size_t v = 0; v < num_variants(); ++v) {
    try {
      ShapeCheck c = variant(v).CheckShapesOwn(names, shapes);
      c.variant = static_cast<int32_t>(v);
      return c;
    } catch (const Error& e) {
      if (e.code() != Code::kGuardFailed && e.code() != Code::kShapeMismatch) throw;
      if (v == 0) first = e;
      if (e.code() == Code::kGuardFailed) guard_failed = true;
      reasons += "\n  variant " + std::to_string(v) + ": " + e.message();
    }
  }
  // Every variant refused the shapes themselves: variant 0's error says it.
  if (!guard_failed) throw first;
  throw Error(
      Code::kGuardFailed,
      "no variant of the program applies to these shapes (the first failure of each):" + reasons);
}

std::vector<int64_t> Program::OutputShape(size_t i, const std::vector<std::string>& var_names,
                                          const std::vector<int64_t>& var_values, int32_t v) const {
  if (v >= static_cast<int32_t>(num_variants())) {
    throw Error(Code::kInvalidArgument, "variant " + std::to_string(v) +
                                            " is out of range (the program has " +
                                            Plural(num_variants(), "variant") + ")");
  }
  if (v < 0) {
    std::string why;
    v = VariantForValues(var_names, var_values, &why);
    if (v < 0) {
      throw Error(Code::kGuardFailed,
                  "no variant of the program applies to these variable values: " + why);
    }
  }
  return variant(static_cast<size_t>(v)).OutputShapeOwn(i, var_names, var_values);
}

}  // namespace program
}  // namespace shp
