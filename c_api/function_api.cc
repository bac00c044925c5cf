// C API of compiled functions: a trace callback, traced again for shapes that no variant
// covers (under the shape policy of cc/function), run through a runtime over the variants
// seen so far, and exported as one multi-variant program.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "c_api/array_internal.h"
#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/function/shape_policy.h"
#include "cc/program/program.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
namespace fn = shp::function;
namespace program = shp::program;
namespace trace = shp::trace;
namespace dim = shp::dim;

static_assert(SHP_DYNAMIC_AUTO == static_cast<int>(fn::DynamicMode::kAuto), "modes");
static_assert(SHP_DYNAMIC_ALL == static_cast<int>(fn::DynamicMode::kAll), "modes");
static_assert(SHP_DYNAMIC_NONE == static_cast<int>(fn::DynamicMode::kNone), "modes");
static_assert(SHP_STANCE_DEFAULT == static_cast<int>(fn::Stance::kDefault), "stances");
static_assert(SHP_STANCE_FAIL_ON_RECOMPILE == static_cast<int>(fn::Stance::kFailOnRecompile),
              "stances");
static_assert(SHP_STANCE_DYNAMIC_ON_LIMIT == static_cast<int>(fn::Stance::kDynamicOnLimit),
              "stances");

struct shp_function_options {
  fn::PolicyOptions policy;
  int32_t num_threads = 0;
};

struct shp_function {
  shp_trace_fn trace_fn = nullptr;
  void* user_data = nullptr;
  std::vector<std::string> output_names;
  std::unique_ptr<fn::ShapePolicy> policy;
  int32_t num_threads = 0;
  std::vector<std::shared_ptr<const program::Program>> variants;
  bool has_fully_dynamic = false;
  shp_program_t* program = nullptr;  // the variants combined; owned
  shp_runtime_t* runtime = nullptr;  // over `program`; owned
  std::vector<std::string> events;
  uint64_t calls = 0, cache_hits = 0;
  bool log_recompiles = false, log_guards = false, log_dynamic = false;
  bool tracing = false;  // inside the trace function: calls back into the function are refused

  ~shp_function() {
    shp_runtime_destroy(runtime);
    shp_program_destroy(program);
  }
};

namespace {

shp_function_t& F(shp_function_t* f) {
  SHP_REQUIRE_ARG(f, "function");
  return *f;
}

fn::Stance ToStance(const shp_stance_t& s) {
  const int32_t raw = shp::capi::RawEnum(s);
  if (raw < 0 || raw > 2) {
    throw Error(Code::kInvalidArgument,
                "argument 'stance' is not a shp_stance_t value: " + std::to_string(raw));
  }
  return static_cast<fn::Stance>(raw);
}

// Logs `text` as an event of kind `kind` ("recompiles", "guards" or "dynamic").
void Event(shp_function_t* f, const char* kind, const std::string& text) {
  f->events.push_back(text);
  const bool on = std::strcmp(kind, "recompiles") == 0 ? f->log_recompiles
                  : std::strcmp(kind, "guards") == 0   ? f->log_guards
                                                       : f->log_dynamic;
  if (on) std::fprintf(stderr, "[shapepoly %s] %s\n", kind, text.c_str());
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + (s.size() == 1 ? ",)" : ")");
}

// The call's shapes in declared input order, checking names, dtypes and ranks.
std::vector<std::vector<int64_t>> BindShapes(const shp_function_t& f, const char* const* names,
                                             const shp_array_t* const* inputs, size_t n) {
  const std::vector<fn::InputSpec>& decl = f.policy->inputs();
  if (n > 0) {
    SHP_REQUIRE_ARG(names, "names");
    SHP_REQUIRE_ARG(inputs, "inputs");
  }
  std::vector<int> given(decl.size(), -1);
  for (size_t k = 0; k < n; ++k) {
    if (!names[k]) throw Error(Code::kInvalidArgument, "names[" + std::to_string(k) + "] is NULL");
    if (!inputs[k])
      throw Error(Code::kInvalidArgument, "inputs[" + std::to_string(k) + "] is NULL");
    size_t i = 0;
    while (i < decl.size() && decl[i].name != names[k]) ++i;
    if (i == decl.size()) {
      std::string all;
      for (const fn::InputSpec& in : decl) all += (all.empty() ? "'" : ", '") + in.name + "'";
      throw Error(Code::kNotFound, std::string("the function has no input named '") + names[k] +
                                       "' (its inputs: " + (all.empty() ? "none" : all) + ")");
    }
    if (given[i] >= 0)
      throw Error(Code::kInvalidArgument, "input '" + decl[i].name + "' given more than once");
    given[i] = static_cast<int>(k);
  }
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < decl.size(); ++i) {
    if (given[i] < 0)
      throw Error(Code::kInvalidArgument, "input '" + decl[i].name + "' is missing");
    const shp_array* a = inputs[given[i]];
    if (a->dtype != static_cast<shp_dtype_t>(decl[i].dtype)) {
      throw Error(Code::kDtypeMismatch, "input '" + decl[i].name + "' has dtype " +
                                            trace::DTypeName(static_cast<trace::DType>(a->dtype)) +
                                            " but the function takes " +
                                            trace::DTypeName(decl[i].dtype));
    }
    if (a->shape.size() != decl[i].rank) {
      throw Error(Code::kShapeMismatch,
                  "input '" + decl[i].name + "' has rank " + std::to_string(a->shape.size()) +
                      " but the function takes rank " + std::to_string(decl[i].rank));
    }
    shapes.emplace_back(a->shape.begin(), a->shape.end());
  }
  return shapes;
}

// Traces the function once under `plan`: a new scope with the plan's ranges, hints, guard
// policy FROM_HINTS and assumptions; inputs of the plan's shapes; the user's callback.
std::shared_ptr<const program::Program> TraceVariant(shp_function_t* f, const fn::TracePlan& plan) {
  std::unique_ptr<shp_scope_t> scope(new shp_scope_t);
  scope->dim = dim::Scope::Create({}, plan.ranges);
  dim::Scope* s = scope->dim.get();
  for (const auto& h : plan.hints) s->SetHint(h.first, h.second);
  s->set_guard_policy(dim::GuardPolicy::kFromHints);
  for (const fn::Assumption& a : plan.assumptions) {
    const dim::Expr* rhs = a.other_var.empty() ? s->Constant(a.value) : s->Var(a.other_var);
    s->Assume(s->Var(a.var), dim::Cmp::kEq, rhs, a.message,
              a.other_var.empty() ? "static dimension" : "duck sizing");
  }
  trace::Trace* t = shp::capi::TraceOf(scope.get());
  const std::vector<fn::InputSpec>& decl = f->policy->inputs();
  std::vector<const trace::Tensor*> ins;
  std::vector<const shp_tensor_t*> c_ins;
  for (size_t i = 0; i < decl.size(); ++i) {
    ins.push_back(t->Input(decl[i].name, decl[i].dtype, plan.specs[i]));
    c_ins.push_back(shp::capi::Wrap(ins.back()));
  }
  std::vector<const shp_tensor_t*> c_outs(f->output_names.size(), nullptr);
  f->tracing = true;
  shp_error_t* e = f->trace_fn(scope.get(), c_ins.data(), c_ins.size(), c_outs.data(),
                               c_outs.size(), f->user_data);
  f->tracing = false;
  if (e != nullptr) {
    // The callback's error, code and message, for the caller (prefixed with where it came from).
    Error err(static_cast<Code>(shp_error_code(e)),
              std::string("the trace function failed: ") + shp_error_message(e));
    shp_error_destroy(e);
    throw err;
  }
  std::vector<const trace::Tensor*> outs;
  for (size_t j = 0; j < c_outs.size(); ++j) {
    if (!c_outs[j]) {
      throw Error(Code::kInvalidArgument, "the trace function left output " + std::to_string(j) +
                                              " ('" + f->output_names[j] + "') NULL");
    }
    const trace::Tensor* o = shp::capi::Unwrap(c_outs[j]);
    if (!t->Owns(o)) {
      throw Error(Code::kScopeMismatch,
                  "the trace function returned for output '" + f->output_names[j] +
                      "' a tensor of another scope: build every output in the scope it is given");
    }
    outs.push_back(o);
  }
  return std::shared_ptr<const program::Program>(
      program::Program::FromTrace(*t, ins, outs, f->output_names).release());
}

// Combines the variants and makes a runtime over them.
void Rebuild(shp_function_t* f) {
  std::unique_ptr<shp_program_t> p(new shp_program_t);
  p->program = program::Program::CreateVariants(f->variants);
  shp_runtime_options_t* o = nullptr;
  shp_error_t* e = shp_runtime_options_create(&o);
  if (!e) e = shp_runtime_options_set_num_threads(o, f->num_threads);
  shp_runtime_t* rt = nullptr;
  if (!e) e = shp_runtime_create(p.get(), o, &rt);
  shp_runtime_options_destroy(o);
  if (e) {
    Error err(static_cast<Code>(shp_error_code(e)), shp_error_message(e));
    shp_error_destroy(e);
    throw err;
  }
  shp_runtime_destroy(f->runtime);
  shp_program_destroy(f->program);
  f->runtime = rt;
  f->program = p.release();
}

}  // namespace

extern "C" {

shp_error_t* shp_function_options_create(shp_function_options_t** options_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options_out, "options_out");
  *options_out = new shp_function_options;
  return nullptr;
  SHP_API_END
}

void shp_function_options_destroy(shp_function_options_t* options) { delete options; }

shp_error_t* shp_function_options_set_dynamic(shp_function_options_t* o, shp_dynamic_mode_t mode) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  const int32_t raw = shp::capi::RawEnum(mode);
  if (raw < 0 || raw > 2) {
    throw Error(Code::kInvalidArgument,
                "argument 'mode' is not a shp_dynamic_mode_t value: " + std::to_string(raw));
  }
  o->policy.dynamic = static_cast<fn::DynamicMode>(raw);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_duck_sizing(shp_function_options_t* o, bool on) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  o->policy.duck_sizing = on;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_recompile_limit(shp_function_options_t* o, int32_t limit) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  if (limit < 1 || limit > static_cast<int32_t>(program::kMaxVariants)) {
    throw Error(Code::kInvalidArgument, "the recompile limit must be in [1, " +
                                            std::to_string(program::kMaxVariants) + "], got " +
                                            std::to_string(limit));
  }
  o->policy.recompile_limit = limit;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_stance(shp_function_options_t* o, shp_stance_t stance) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  o->policy.stance = ToStance(stance);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_num_threads(shp_function_options_t* o, int32_t n) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  if (n < 0 || n > 256) {
    throw Error(
        Code::kInvalidArgument,
        "num_threads must be in [0, 256] (0: every hardware thread), got " + std::to_string(n));
  }
  o->num_threads = n;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_create(shp_trace_fn trace_fn, void* user_data,
                                 const char* const* input_names, const shp_dtype_t* dtypes,
                                 const size_t* ranks, size_t num_inputs,
                                 const char* const* output_names, size_t num_outputs,
                                 const shp_function_options_t* options,
                                 shp_function_t** function_out) {
  SHP_API_BEGIN
  if (trace_fn == nullptr) throw Error(Code::kInvalidArgument, "argument 'trace_fn' is NULL");
  SHP_REQUIRE_ARG(function_out, "function_out");
  if (num_inputs > 0) {
    SHP_REQUIRE_ARG(input_names, "input_names");
    SHP_REQUIRE_ARG(dtypes, "dtypes");
    SHP_REQUIRE_ARG(ranks, "ranks");
  }
  if (num_outputs == 0) throw Error(Code::kInvalidArgument, "a function needs an output");
  SHP_REQUIRE_ARG(output_names, "output_names");
  std::vector<fn::InputSpec> specs;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!input_names[i])
      throw Error(Code::kInvalidArgument, "input_names[" + std::to_string(i) + "] is NULL");
    const int32_t dt = shp::capi::RawEnum(dtypes[i]);
    if (dt < 0 || dt > 4) {
      throw Error(
          Code::kInvalidArgument,
          "dtypes[" + std::to_string(i) + "] is not a shp_dtype_t value: " + std::to_string(dt));
    }
    if (ranks[i] > 64) {
      throw Error(Code::kInvalidArgument,
                  "ranks[" + std::to_string(i) + "] is " + std::to_string(ranks[i]) + ", above 64");
    }
    for (const fn::InputSpec& s : specs) {
      if (s.name == input_names[i]) {
        throw Error(Code::kInvalidArgument,
                    "input '" + s.name + "' is listed twice in input_names");
      }
    }
    specs.push_back({input_names[i], static_cast<trace::DType>(dt), ranks[i]});
  }
  std::unique_ptr<shp_function_t> f(new shp_function_t);
  for (size_t j = 0; j < num_outputs; ++j) {
    if (!output_names[j])
      throw Error(Code::kInvalidArgument, "output_names[" + std::to_string(j) + "] is NULL");
    f->output_names.emplace_back(output_names[j]);
  }
  f->trace_fn = trace_fn;
  f->user_data = user_data;
  f->policy.reset(
      new fn::ShapePolicy(std::move(specs), options ? options->policy : fn::PolicyOptions()));
  f->num_threads = options ? options->num_threads : 0;
  const char* log = std::getenv("SHAPEPOLY_LOG");
  if (log != nullptr) {
    f->log_recompiles = std::strstr(log, "recompiles") != nullptr;
    f->log_guards = std::strstr(log, "guards") != nullptr;
    f->log_dynamic = std::strstr(log, "dynamic") != nullptr;
  }
  *function_out = f.release();
  return nullptr;
  SHP_API_END
}

void shp_function_destroy(shp_function_t* f) { delete f; }

shp_error_t* shp_function_mark_dynamic(shp_function_t* f, const char* input, int64_t axis,
                                       int64_t min, int64_t max) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(input, "input");
  F(f).policy->MarkDynamic(input, axis, min, max);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_mark_static(shp_function_t* f, const char* input, int64_t axis) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(input, "input");
  F(f).policy->MarkStatic(input, axis);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_set_stance(shp_function_t* f, shp_stance_t stance) {
  SHP_API_BEGIN
  F(f).policy->set_stance(ToStance(stance));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_call(shp_function_t* f, const char* const* names,
                               const shp_array_t* const* inputs, size_t num_inputs,
                               shp_array_t** outputs_out, size_t num_outputs) {
  SHP_API_BEGIN
  shp_function_t& fr = F(f);
  SHP_REQUIRE_ARG(outputs_out, "outputs_out");
  if (fr.tracing) {
    throw Error(Code::kInvalidArgument,
                "shp_function_call: the function was called from its own trace function");
  }
  if (num_outputs != fr.output_names.size()) {
    throw Error(Code::kInvalidArgument, "the function has " +
                                            std::to_string(fr.output_names.size()) + " output" +
                                            (fr.output_names.size() == 1 ? "" : "s") +
                                            " but num_outputs is " + std::to_string(num_outputs));
  }
  ++fr.calls;
  std::string failed;  // why the variants seen so far do not apply
  if (fr.runtime != nullptr) {
    shp_error_t* e =
        shp_runtime_run(fr.runtime, names, inputs, num_inputs, outputs_out, num_outputs);
    if (e == nullptr) {
      ++fr.cache_hits;
      return nullptr;
    }
    if (shp_error_code(e) != SHP_GUARD_FAILED) return e;
    failed = shp_error_message(e);
    shp_error_destroy(e);
  }
  // No variant covers these shapes: trace again, as the stance allows.
  std::vector<std::vector<int64_t>> shapes = BindShapes(fr, names, inputs, num_inputs);
  const fn::PolicyOptions& po = fr.policy->options();
  std::string call = "call " + std::to_string(fr.calls) + " (";
  for (size_t i = 0; i < shapes.size(); ++i)
    call += (i ? ", " : "") + fr.policy->inputs()[i].name + ": " + ShapeText(shapes[i]);
  call += ")";
  if (!fr.variants.empty() && po.stance == fn::Stance::kFailOnRecompile) {
    Event(&fr, "recompiles",
          call + ": no variant applies and the stance FAIL_ON_RECOMPILE forbids tracing again");
    throw Error(
        Code::kGuardFailed,
        "no variant of the function applies and the stance is FAIL_ON_RECOMPILE: " + failed);
  }
  bool fully_dynamic = false;
  if (fr.variants.size() >= static_cast<size_t>(po.recompile_limit)) {
    if (po.stance == fn::Stance::kDynamicOnLimit && !fr.has_fully_dynamic &&
        fr.variants.size() < program::kMaxVariants) {
      fully_dynamic = true;
    } else {
      Event(&fr, "recompiles",
            call + ": no variant applies and the recompile limit (" +
                std::to_string(po.recompile_limit) + ") is reached");
      throw Error(Code::kGuardFailed,
                  "no variant of the function applies and the recompile limit " +
                      std::to_string(po.recompile_limit) + " is reached (" +
                      std::to_string(fr.variants.size()) + " variants): " + failed);
    }
  }
  const fn::TracePlan plan = fr.policy->Plan(shapes, fully_dynamic);
  std::string why;
  if (fr.variants.empty()) {
    why = "first call";
  } else {
    for (const std::string& line : fr.policy->Explain(shapes, plan)) {
      why += (why.empty() ? "" : "; ") + line;
    }
    if (why.empty()) why = failed;  // guards recorded by the trace function failed
  }
  if (fully_dynamic) why += "; the recompile limit is reached: tracing one fully dynamic variant";
  Event(&fr, "recompiles",
        "trace " + std::to_string(fr.variants.size() + 1) + " for " + call + ": " + why);
  std::shared_ptr<const program::Program> v = TraceVariant(&fr, plan);
  fr.variants.push_back(v);
  try {
    Rebuild(&fr);
  } catch (...) {
    fr.variants.pop_back();
    throw;
  }
  fr.policy->Record(shapes, plan);
  fr.has_fully_dynamic |= fully_dynamic;
  const std::string variant = "variant " + std::to_string(fr.variants.size() - 1);
  for (const std::string& r : plan.static_reasons) Event(&fr, "dynamic", variant + ": " + r);
  for (size_t g = 0; g < v->guard_texts().size(); ++g) {
    Event(&fr, "guards",
          variant + ": guard " + v->guard_texts()[g] + " (from " + v->guard_origins()[g] +
              (v->guard_messages()[g].empty() ? "" : ": " + v->guard_messages()[g]) + ")");
  }
  return shp_runtime_run(fr.runtime, names, inputs, num_inputs, outputs_out, num_outputs);
  SHP_API_END
}

size_t shp_function_event_count(const shp_function_t* f) { return f ? f->events.size() : 0; }

const char* shp_function_event_text(const shp_function_t* f, size_t i) {
  return f && i < f->events.size() ? f->events[i].c_str() : nullptr;
}

uint64_t shp_function_trace_count(const shp_function_t* f) { return f ? f->variants.size() : 0; }
uint64_t shp_function_cache_hits(const shp_function_t* f) { return f ? f->cache_hits : 0; }
size_t shp_function_variant_count(const shp_function_t* f) { return f ? f->variants.size() : 0; }

shp_error_t* shp_function_export(const shp_function_t* f, shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(f, "function");
  SHP_REQUIRE_ARG(program_out, "program_out");
  if (f->program == nullptr) {
    throw Error(Code::kInvalidArgument,
                "the function has not been traced yet: call it on representative shapes first");
  }
  std::unique_ptr<shp_program_t> p(new shp_program_t);
  p->program = f->program->program;  // immutable: shared
  *program_out = p.release();
  return nullptr;
  SHP_API_END
}

}  // extern "C"
