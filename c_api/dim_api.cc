// C API of the dimension engine: thin thunks over cc/dim.
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/dim/solve.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
using shp::capi::Unwrap;
using shp::capi::Wrap;
namespace dim = shp::dim;

static_assert(SHP_GUARDS_NEVER == static_cast<int>(dim::GuardPolicy::kNever), "policies");
static_assert(SHP_GUARDS_FROM_HINTS == static_cast<int>(dim::GuardPolicy::kFromHints), "policies");
static_assert(SHP_GUARD_FAILED == static_cast<int>(shp::Code::kGuardFailed), "codes");

namespace {

dim::Cmp ToCmp(const shp_cmp_t& op) {
  const int32_t raw = shp::capi::RawEnum(op);
  if (raw < 0 || raw > 5) {
    throw Error(Code::kInvalidArgument,
                "argument 'op' is not a shp_cmp_t value: " + std::to_string(raw));
  }
  return static_cast<dim::Cmp>(raw);
}

std::vector<std::string> Strings(const char* const* items, size_t n, const char* what) {
  if (n > 0) SHP_REQUIRE_ARG(items, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    if (!items[i])
      throw Error(Code::kInvalidArgument,
                  std::string(what) + "[" + std::to_string(i) + "] is NULL");
    out.emplace_back(items[i]);
  }
  return out;
}

const dim::Expr* Dim(const shp_dim_t* d, const char* name) {
  SHP_REQUIRE_ARG(d, name);
  return Unwrap(d);
}

template <typename F>
shp_error_t* Binary(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out, F f) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(a, "a");
  const dim::Expr* y = Dim(b, "b");
  SHP_REQUIRE_ARG(out, "dim_out");
  x->scope->CheckSameScope(x, y, "dim operation");
  *out = Wrap(f(x->scope, x, y));
  return nullptr;
  SHP_API_END
}

}  // namespace

extern "C" {

shp_error_t* shp_scope_create(const char* const* constraints, size_t num_constraints,
                              shp_scope_t** scope_out) {
  return shp_scope_create_with_ranges(constraints, num_constraints, nullptr, nullptr, nullptr, 0,
                                      scope_out);
}

shp_error_t* shp_scope_create_with_ranges(const char* const* constraints, size_t num_constraints,
                                          const char* const* names, const int64_t* mins,
                                          const int64_t* maxs, size_t num_ranges,
                                          shp_scope_t** scope_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope_out, "scope_out");
  std::vector<std::string> cons = Strings(constraints, num_constraints, "constraints");
  std::vector<std::string> vars = Strings(names, num_ranges, "names");
  if (num_ranges > 0) {
    SHP_REQUIRE_ARG(mins, "mins");
    SHP_REQUIRE_ARG(maxs, "maxs");
  }
  std::vector<dim::Scope::Declaration> decls;
  for (size_t i = 0; i < num_ranges; ++i) decls.push_back({vars[i], mins[i], maxs[i]});
  auto scope = std::make_unique<shp_scope>();
  scope->dim = dim::Scope::Create(cons, decls);
  *scope_out = scope.release();
  return nullptr;
  SHP_API_END
}

void shp_scope_destroy(shp_scope_t* scope) { delete scope; }

shp_error_t* shp_scope_declare(shp_scope_t* scope, const char* name, int64_t min, int64_t max) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(name, "name");
  scope->dim->Declare(name, min, max);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_scope_check(shp_scope_t* scope, const shp_dim_t* a, shp_cmp_t op,
                             const shp_dim_t* b, const char* message) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  const dim::Expr* x = Dim(a, "a");
  const dim::Expr* y = Dim(b, "b");
  scope->dim->Check(x, ToCmp(op), y, message ? message : "");
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_scope_set_hint(shp_scope_t* scope, const char* name, int64_t value) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(name, "name");
  scope->dim->SetHint(name, value);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_scope_hint(const shp_scope_t* scope, const char* name, bool* has_hint_out,
                            int64_t* value_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(name, "name");
  SHP_REQUIRE_ARG(has_hint_out, "has_hint_out");
  SHP_REQUIRE_ARG(value_out, "value_out");
  const int32_t v = scope->dim->FindVar(name);
  if (v < 0) {
    throw Error(Code::kNotFound,
                "the scope has no dimension variable named '" + std::string(name) + "'");
  }
  int64_t h;
  *has_hint_out = scope->dim->HintOf(v, &h);
  if (*has_hint_out) *value_out = h;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_scope_set_guard_policy(shp_scope_t* scope, shp_guard_policy_t policy) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  const int32_t raw = shp::capi::RawEnum(policy);
  if (raw != SHP_GUARDS_NEVER && raw != SHP_GUARDS_FROM_HINTS) {
    throw Error(Code::kInvalidArgument,
                "argument 'policy' is not a shp_guard_policy_t value: " + std::to_string(raw));
  }
  scope->dim->set_guard_policy(static_cast<dim::GuardPolicy>(raw));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_guard(const shp_dim_t* a, shp_cmp_t op, const shp_dim_t* b,
                           const char* message, bool* bool_out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(a, "a");
  const dim::Expr* y = Dim(b, "b");
  SHP_REQUIRE_ARG(bool_out, "bool_out");
  *bool_out = x->scope->Guard(x, ToCmp(op), y, message ? message : "", "shp_dim_guard");
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_scope_assume(shp_scope_t* scope, const shp_dim_t* a, shp_cmp_t op,
                              const shp_dim_t* b, const char* message) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  const dim::Expr* x = Dim(a, "a");
  const dim::Expr* y = Dim(b, "b");
  scope->dim->Assume(x, ToCmp(op), y, message ? message : "", "shp_scope_assume");
  return nullptr;
  SHP_API_END
}

size_t shp_scope_variable_count(const shp_scope_t* scope) {
  return scope ? scope->dim->variables().size() : 0;
}

const char* shp_scope_variable_name(const shp_scope_t* scope, size_t i) {
  if (!scope || i >= scope->dim->variables().size()) return nullptr;
  return scope->dim->VarName(static_cast<int32_t>(i)).c_str();
}

bool shp_scope_variable_is_unbacked(const shp_scope_t* scope, size_t i) {
  return scope && i < scope->dim->variables().size() && scope->dim->variables()[i].unbacked;
}

const char* shp_scope_variable_origin(const shp_scope_t* scope, size_t i) {
  if (!shp_scope_variable_is_unbacked(scope, i)) return nullptr;
  return scope->dim->variables()[i].origin.c_str();
}

shp_error_t* shp_scope_variable_range(const shp_scope_t* scope, size_t i, int64_t* min_out,
                                      int64_t* max_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(min_out, "min_out");
  SHP_REQUIRE_ARG(max_out, "max_out");
  const auto& vars = scope->dim->variables();
  if (i >= vars.size()) {
    throw Error(Code::kInvalidArgument, "variable index " + std::to_string(i) +
                                            " out of range (the scope has " +
                                            std::to_string(vars.size()) + " variables)");
  }
  *min_out = vars[i].lo;
  *max_out = vars[i].hi;
  return nullptr;
  SHP_API_END
}

size_t shp_scope_constraint_count(const shp_scope_t* scope) {
  return scope ? scope->dim->facts().size() : 0;
}

const char* shp_scope_constraint_text(const shp_scope_t* scope, size_t i) {
  if (!scope || i >= scope->dim->facts().size()) return nullptr;
  return scope->dim->facts()[i].text.c_str();
}

shp_error_t* shp_dim_parse(shp_scope_t* scope, const char* text, const shp_dim_t** dim_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(text, "text");
  SHP_REQUIRE_ARG(dim_out, "dim_out");
  *dim_out = Wrap(scope->dim->Parse(text));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_constant(shp_scope_t* scope, int64_t value, const shp_dim_t** dim_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(dim_out, "dim_out");
  *dim_out = Wrap(scope->dim->Constant(value));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_variable(shp_scope_t* scope, const char* name, const shp_dim_t** dim_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(name, "name");
  SHP_REQUIRE_ARG(dim_out, "dim_out");
  *dim_out = Wrap(scope->dim->Var(name));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_add(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out) {
  return Binary(a, b, out,
                [](dim::Scope* s, const dim::Expr* x, const dim::Expr* y) { return s->Add(x, y); });
}
shp_error_t* shp_dim_sub(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out) {
  return Binary(a, b, out,
                [](dim::Scope* s, const dim::Expr* x, const dim::Expr* y) { return s->Sub(x, y); });
}
shp_error_t* shp_dim_mul(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out) {
  return Binary(a, b, out,
                [](dim::Scope* s, const dim::Expr* x, const dim::Expr* y) { return s->Mul(x, y); });
}
shp_error_t* shp_dim_floordiv(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out) {
  return Binary(a, b, out, [](dim::Scope* s, const dim::Expr* x, const dim::Expr* y) {
    return s->FloorDiv(x, y);
  });
}
shp_error_t* shp_dim_mod(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out) {
  return Binary(a, b, out,
                [](dim::Scope* s, const dim::Expr* x, const dim::Expr* y) { return s->Mod(x, y); });
}
shp_error_t* shp_dim_max(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out) {
  return Binary(a, b, out,
                [](dim::Scope* s, const dim::Expr* x, const dim::Expr* y) { return s->Max(x, y); });
}
shp_error_t* shp_dim_min(const shp_dim_t* a, const shp_dim_t* b, const shp_dim_t** out) {
  return Binary(a, b, out,
                [](dim::Scope* s, const dim::Expr* x, const dim::Expr* y) { return s->Min(x, y); });
}

shp_error_t* shp_dim_neg(const shp_dim_t* a, const shp_dim_t** out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(a, "a");
  SHP_REQUIRE_ARG(out, "dim_out");
  *out = Wrap(x->scope->Neg(x));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_pow(const shp_dim_t* a, int64_t exponent, const shp_dim_t** out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(a, "a");
  SHP_REQUIRE_ARG(out, "dim_out");
  if (exponent < 0) {
    throw Error(Code::kInvalidArgument,
                "argument 'exponent' must be >= 0, got " + std::to_string(exponent));
  }
  *out = Wrap(x->scope->Pow(x, exponent));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_to_string(const shp_dim_t* d, char* buf, size_t cap, size_t* len_out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(d, "dim");
  SHP_REQUIRE_ARG(len_out, "len_out");
  std::string s = x->scope->ToString(x);
  if (buf != nullptr && cap > 0) {  // else a size query (the header's convention)
    size_t n = std::min(cap - 1, s.size());
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  *len_out = s.size();
  return nullptr;
  SHP_API_END
}

bool shp_dim_is_constant(const shp_dim_t* d, int64_t* value_out) {
  if (!d || !Unwrap(d)->IsConstant()) return false;
  if (value_out) *value_out = Unwrap(d)->ConstantTerm();
  return true;
}

shp_error_t* shp_dim_variables(const shp_dim_t* d, const char** names_out, size_t cap,
                               size_t* count_out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(d, "dim");
  SHP_REQUIRE_ARG(count_out, "count_out");
  if (cap > 0) SHP_REQUIRE_ARG(names_out, "names_out");
  std::vector<int32_t> vars = x->scope->VarsOf(x);
  for (size_t i = 0; i < vars.size() && i < cap; ++i)
    names_out[i] = x->scope->VarName(vars[i]).c_str();
  *count_out = vars.size();
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_bounds(const shp_dim_t* d, int64_t* lo_out, int64_t* hi_out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(d, "dim");
  SHP_REQUIRE_ARG(lo_out, "lo_out");
  SHP_REQUIRE_ARG(hi_out, "hi_out");
  dim::Interval iv = x->scope->Bounds(x);
  *lo_out = iv.lo;
  *hi_out = iv.hi;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_compare(const shp_dim_t* a, shp_cmp_t op, const shp_dim_t* b,
                             shp_truth_t* truth_out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(a, "a");
  const dim::Expr* y = Dim(b, "b");
  SHP_REQUIRE_ARG(truth_out, "truth_out");
  dim::Cmp cmp = ToCmp(op);
  *truth_out = static_cast<shp_truth_t>(x->scope->Compare(x, cmp, y));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_dim_evaluate(const shp_dim_t* d, const char* const* names, const int64_t* values,
                              size_t n, int64_t* value_out) {
  SHP_API_BEGIN
  const dim::Expr* x = Dim(d, "dim");
  SHP_REQUIRE_ARG(value_out, "value_out");
  std::vector<std::string> given = Strings(names, n, "names");
  if (n > 0) SHP_REQUIRE_ARG(values, "values");
  dim::Scope* s = x->scope;
  std::vector<int64_t> vals(s->variables().size(), 0);
  std::vector<bool> known(vals.size(), false);
  for (size_t i = 0; i < n; ++i) {
    int32_t v = s->FindVar(given[i]);
    if (v < 0)
      throw Error(Code::kNotFound, "unknown dimension variable '" + given[i] + "' (names[" +
                                       std::to_string(i) + "])");
    if (known[v])
      throw Error(Code::kInvalidArgument, "dimension variable '" + given[i] + "' is given twice");
    const dim::Variable& var = s->variables()[v];
    if (values[i] < var.lo || values[i] > var.hi) {
      throw Error(Code::kInvalidArgument,
                  "value " + std::to_string(values[i]) + " for '" + given[i] +
                      "' is outside its range [" + std::to_string(var.lo) + ", " +
                      (var.hi == dim::kPosInf ? "inf" : std::to_string(var.hi)) + "]");
    }
    known[v] = true;
    vals[v] = values[i];
  }
  for (int32_t v : s->VarsOf(x)) {
    if (!known[v]) {
      throw Error(Code::kInvalidArgument, "no value given for dimension variable '" +
                                              s->VarName(v) + "' of '" + s->ToString(x) + "'");
    }
  }
  *value_out = s->Evaluate(x, vals, known);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_shape_parse(shp_scope_t* scope, const char* spec, const int64_t* like,
                             size_t like_rank, const shp_dim_t** dims_out, size_t dims_cap,
                             size_t* rank_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(spec, "spec");
  SHP_REQUIRE_ARG(rank_out, "rank_out");
  if (dims_cap > 0) SHP_REQUIRE_ARG(dims_out, "dims_out");
  std::vector<int64_t> like_dims;
  if (like) like_dims.assign(like, like + like_rank);
  std::vector<const dim::Expr*> dims = scope->dim->ParseShape(spec, like ? &like_dims : nullptr);
  for (size_t i = 0; i < dims.size() && i < dims_cap; ++i) dims_out[i] = Wrap(dims[i]);
  *rank_out = dims.size();
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_scope_solve(shp_scope_t* scope, size_t num_args, const char* const* specs,
                             const int64_t* const* shapes, const size_t* ranks,
                             shp_bindings_t** bindings_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(bindings_out, "bindings_out");
  std::vector<std::string> spec_text = Strings(specs, num_args, "specs");
  if (num_args > 0) {
    SHP_REQUIRE_ARG(shapes, "shapes");
    SHP_REQUIRE_ARG(ranks, "ranks");
  }
  std::vector<dim::SolveArg> args;
  for (size_t i = 0; i < num_args; ++i) {
    if (ranks[i] > 0 && !shapes[i]) {
      throw Error(Code::kInvalidArgument, "shapes[" + std::to_string(i) + "] is NULL but ranks[" +
                                              std::to_string(i) + "] is " +
                                              std::to_string(ranks[i]));
    }
    dim::SolveArg a;
    a.label = "args[" + std::to_string(i) + "]";
    if (ranks[i] > 0) a.shape.assign(shapes[i], shapes[i] + ranks[i]);
    // `_` and `...` take the given shape's sizes (binding nothing), as in JAX's specs.
    try {
      a.dims = scope->dim->ParseShape(spec_text[i], &a.shape);
    } catch (const Error& e) {
      // A constant that differs from the given size is a shape mismatch of this argument.
      if (e.code() != Code::kInvalidArgument ||
          e.message().find("'like' shape has the different size") == std::string::npos) {
        throw;
      }
      throw Error(Code::kShapeMismatch,
                  a.label + ": " +
                      std::string(e.message()).replace(e.message().find("'like'"), 6, "given"));
    }
    args.push_back(std::move(a));
  }
  dim::SolveOptions options;
  dim::Solution sol = dim::Solve(scope->dim.get(), args, options);
  auto b = std::make_unique<shp_bindings>();
  for (size_t v = 0; v < sol.known.size(); ++v) {
    if (!sol.known[v]) continue;
    b->names.push_back(scope->dim->VarName(static_cast<int32_t>(v)));
    b->values.push_back(sol.values[v]);
  }
  *bindings_out = b.release();
  return nullptr;
  SHP_API_END
}

size_t shp_bindings_count(const shp_bindings_t* b) { return b ? b->names.size() : 0; }
const char* shp_bindings_name(const shp_bindings_t* b, size_t i) {
  return (b && i < b->names.size()) ? b->names[i].c_str() : nullptr;
}
int64_t shp_bindings_value(const shp_bindings_t* b, size_t i) {
  return (b && i < b->values.size()) ? b->values[i] : 0;
}
void shp_bindings_destroy(shp_bindings_t* b) { delete b; }

}  // extern "C"
