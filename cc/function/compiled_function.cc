#include "cc/function/compiled_function.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "cc/base/error.h"

namespace shp {
namespace function {

namespace {

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + (s.size() == 1 ? ",)" : ")");
}

void RequireArg(const void* p, const char* name) {
  if (p == nullptr) {
    throw Error(Code::kInvalidArgument, std::string("argument '") + name + "' must not be NULL");
  }
}

}  // namespace

CompiledFunction::CompiledFunction(TraceFn trace_fn, std::vector<InputSpec> inputs,
                                   std::vector<std::string> output_names, const Options& options)
    : trace_fn_(std::move(trace_fn)),
      output_names_(std::move(output_names)),
      policy_(Checked(std::move(inputs), trace_fn_, output_names_, options), options.policy),
      num_threads_(options.num_threads) {
  const char* log = std::getenv("SHAPEPOLY_LOG");
  if (log != nullptr) {
    log_recompiles_ = std::strstr(log, "recompiles") != nullptr;
    log_guards_ = std::strstr(log, "guards") != nullptr;
    log_dynamic_ = std::strstr(log, "dynamic") != nullptr;
  }
}

std::vector<InputSpec> CompiledFunction::Checked(std::vector<InputSpec> inputs,
                                                 const TraceFn& trace_fn,
                                                 const std::vector<std::string>& output_names,
                                                 const Options& options) {
  if (!trace_fn) throw Error(Code::kInvalidArgument, "argument 'trace_fn' is NULL");
  if (output_names.empty()) throw Error(Code::kInvalidArgument, "a function needs an output");
  std::vector<InputSpec> declared;
  for (size_t i = 0; i < inputs.size(); ++i) {
    CheckNewInput(declared, inputs[i], i);
    declared.push_back(inputs[i]);
  }
  CheckRecompileLimit(options.policy.recompile_limit);
  CheckNumThreads(options.num_threads);
  return inputs;
}

CompiledFunction::~CompiledFunction() = default;

void CompiledFunction::CheckNewInput(const std::vector<InputSpec>& declared, const InputSpec& input,
                                     size_t index) {
  if (input.rank > 64) {
    throw Error(Code::kInvalidArgument, "ranks[" + std::to_string(index) + "] is " +
                                            std::to_string(input.rank) + ", above 64");
  }
  for (const InputSpec& s : declared) {
    if (s.name == input.name) {
      throw Error(Code::kInvalidArgument, "input '" + s.name + "' is listed twice in input_names");
    }
  }
}

void CompiledFunction::CheckRecompileLimit(int32_t limit) {
  if (limit < 1 || limit > static_cast<int32_t>(program::kMaxVariants)) {
    throw Error(Code::kInvalidArgument, "the recompile limit must be in [1, " +
                                            std::to_string(program::kMaxVariants) + "], got " +
                                            std::to_string(limit));
  }
}

void CompiledFunction::CheckNumThreads(int32_t n) {
  if (n < 0 || n > 256) {
    throw Error(
        Code::kInvalidArgument,
        "num_threads must be in [0, 256] (0: every hardware thread), got " + std::to_string(n));
  }
}

void CompiledFunction::MarkDynamic(const std::string& input, int64_t axis, int64_t min,
                                   int64_t max) {
  policy_.MarkDynamic(input, axis, min, max);
}

void CompiledFunction::MarkStatic(const std::string& input, int64_t axis) {
  policy_.MarkStatic(input, axis);
}

void CompiledFunction::MarkUnbacked(const std::string& input, int64_t axis) {
  policy_.MarkUnbacked(input, axis);
}

void CompiledFunction::MaybeMarkDynamic(const std::string& input, int64_t axis) {
  policy_.MaybeMarkDynamic(input, axis);
}

// Logs `text` as an event of kind `kind` ("recompiles", "guards" or "dynamic").
void CompiledFunction::Event(const char* kind, const std::string& text) {
  events_.push_back(text);
  const bool on = std::strcmp(kind, "recompiles") == 0 ? log_recompiles_
                  : std::strcmp(kind, "guards") == 0   ? log_guards_
                                                       : log_dynamic_;
  if (on) std::fprintf(stderr, "[shapepoly %s] %s\n", kind, text.c_str());
}

// The call's shapes in declared input order, checking names, dtypes and ranks.
std::vector<std::vector<int64_t>> CompiledFunction::BindShapes(
    const char* const* names, const runtime::ArrayView* const* inputs, size_t n) const {
  const std::vector<InputSpec>& decl = policy_.inputs();
  if (n > 0) {
    RequireArg(names, "names");
    RequireArg(inputs, "inputs");
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
      for (const InputSpec& in : decl) all += (all.empty() ? "'" : ", '") + in.name + "'";
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
    const runtime::ArrayView* a = inputs[given[i]];
    if (a->dtype != decl[i].dtype) {
      throw Error(Code::kDtypeMismatch,
                  "input '" + decl[i].name + "' has dtype " + trace::DTypeName(a->dtype) +
                      " but the function takes " + trace::DTypeName(decl[i].dtype));
    }
    if (a->rank != decl[i].rank) {
      throw Error(Code::kShapeMismatch,
                  "input '" + decl[i].name + "' has rank " + std::to_string(a->rank) +
                      " but the function takes rank " + std::to_string(decl[i].rank));
    }
    shapes.emplace_back(a->shape, a->shape + a->rank);
  }
  return shapes;
}

// Runs the runtime over the variants (the checks of shp_runtime_run on the input arrays).
void CompiledFunction::Run(const char* const* names, const runtime::ArrayView* const* inputs,
                           size_t n, runtime::OutputSink* sink) {
  if (n > 0) RequireArg(inputs, "inputs");
  views_.resize(n);
  for (size_t k = 0; k < n; ++k) {
    if (inputs[k] == nullptr) {
      throw Error(Code::kInvalidArgument, "inputs[" + std::to_string(k) + "] is NULL");
    }
    views_[k] = *inputs[k];
  }
  runtime_->Run(names, views_.data(), n, sink);
}

// Traces the function once under `plan`: a new scope with the plan's ranges, hints, guard
// policy FROM_HINTS and assumptions; inputs of the plan's shapes; the trace function.
std::shared_ptr<const program::Program> CompiledFunction::TraceVariant(const TracePlan& plan) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({}, plan.ranges);
  dim::Scope* s = scope.get();
  for (const auto& h : plan.hints) s->SetHint(h.first, h.second);
  s->set_guard_policy(dim::GuardPolicy::kFromHints);
  for (const Assumption& a : plan.assumptions) {
    const dim::Expr* rhs = a.other_var.empty() ? s->Constant(a.value) : s->Var(a.other_var);
    s->Assume(s->Var(a.var), dim::Cmp::kEq, rhs, a.message,
              a.other_var.empty() ? "static dimension" : "duck sizing");
  }
  // Declared after `scope`: destroyed first.
  std::unique_ptr<trace::Trace> t = trace::NewTrace(s);
  const std::vector<InputSpec>& decl = policy_.inputs();
  std::vector<const trace::Tensor*> ins;
  for (size_t i = 0; i < decl.size(); ++i) {
    ins.push_back(t->Input(decl[i].name, decl[i].dtype, plan.specs[i]));
  }
  std::vector<const trace::Tensor*> outs;
  {
    struct Tracing {
      bool* flag;
      ~Tracing() { *flag = false; }
    } tracing{&tracing_};
    tracing_ = true;
    try {
      outs = trace_fn_(s, t.get(), ins);
    } catch (const Error& e) {
      // The trace function's error, code and message (prefixed with where it came from).
      throw Error(e.code(), std::string("the trace function failed: ") + e.message());
    }
  }
  if (outs.size() != output_names_.size()) {
    throw Error(Code::kInvalidArgument, "the trace function returned " +
                                            std::to_string(outs.size()) + " outputs for " +
                                            std::to_string(output_names_.size()) + " output names");
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    if (!outs[j]) {
      throw Error(Code::kInvalidArgument, "the trace function left output " + std::to_string(j) +
                                              " ('" + output_names_[j] + "') NULL");
    }
    if (!t->Owns(outs[j])) {
      throw Error(Code::kScopeMismatch,
                  "the trace function returned for output '" + output_names_[j] +
                      "' a tensor of another scope: build every output in the scope it is given");
    }
  }
  std::shared_ptr<const program::Program> p(
      program::Program::FromTrace(*t, ins, outs, output_names_).release());
  // As PyTorch's ConstraintViolationError: a marked-dynamic axis that the trace function's
  // guards pin to one size is refused, naming the axis and the guards (with their lines).
  // Axes the plan itself made static (marked dynamic only during this trace) are the policy's
  // doing, not the trace function's.
  std::set<std::string> planned_static;
  for (const Assumption& a : plan.assumptions) {
    if (a.other_var.empty()) planned_static.insert(a.var);
  }
  for (size_t i = 0; i < decl.size() && !plan.fully_dynamic; ++i) {
    for (size_t axis = 0; axis < decl[i].rank; ++axis) {
      if (!policy_.MarkedDynamic(i, axis)) continue;
      const std::string var = policy_.VarName(i, axis);
      if (planned_static.count(var)) continue;
      const dim::Interval b = s->Bounds(s->Var(var));
      if (b.lo != b.hi) continue;
      std::string guards;
      for (size_t g = 0; g < p->guard_texts().size(); ++g) {
        const std::string& text = p->guard_texts()[g];
        size_t at = text.find(var);
        while (at != std::string::npos &&
               ((at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1]))) ||
                (at + var.size() < text.size() &&
                 std::isalnum(static_cast<unsigned char>(text[at + var.size()])))))
          at = text.find(var, at + 1);
        if (at == std::string::npos) continue;
        guards += (guards.empty() ? "" : "; ") + text + " (from " + p->guard_origins()[g] +
                  (p->guard_messages()[g].empty() ? "" : ": " + p->guard_messages()[g]) + ")";
      }
      throw Error(Code::kConstraintViolation,
                  "input '" + decl[i].name + "' axis " + std::to_string(axis) +
                      " was marked dynamic, but the trace function specialized it to " +
                      std::to_string(b.lo) + (guards.empty() ? "" : " by the guards " + guards) +
                      "; remove the branch on its size, or mark it static instead");
    }
  }
  return p;
}

void CompiledFunction::TraceAndRunOnce(const char* const* names,
                                       const runtime::ArrayView* const* inputs, size_t n,
                                       runtime::OutputSink* sink) {
  const std::vector<std::vector<int64_t>> shapes = BindShapes(names, inputs, n);
  std::string call = "call " + std::to_string(calls_) + " (";
  for (size_t i = 0; i < shapes.size(); ++i)
    call += (i ? ", " : "") + policy_.inputs()[i].name + ": " + ShapeText(shapes[i]);
  Event("recompiles", "forced trace for " + call +
                          "): the stance FORCE_TRACE traces every call (its variants are not "
                          "used or kept)");
  std::shared_ptr<const program::Program> p = TraceVariant(policy_.Plan(shapes, false));
  runtime::Options o;
  o.num_threads = num_threads_;
  o.plan_cache_capacity = 0;
  runtime::Runtime rt(p, o);
  views_.resize(n);
  for (size_t k = 0; k < n; ++k) views_[k] = *inputs[k];
  rt.Run(names, views_.data(), n, sink);
}

// Combines the variants and makes a runtime over them.
void CompiledFunction::Rebuild() {
  std::shared_ptr<const program::Program> p = program::Program::CreateVariants(variants_);
  runtime::Options o;
  o.num_threads = num_threads_;
  std::unique_ptr<runtime::Runtime> rt(new runtime::Runtime(p, o));
  runtime_ = std::move(rt);
  program_ = std::move(p);
}

void CompiledFunction::CheckCallable(size_t num_outputs) const {
  if (tracing_) {
    throw Error(Code::kInvalidArgument,
                "shp_function_call: the function was called from its own trace function");
  }
  if (num_outputs != output_names_.size()) {
    throw Error(Code::kInvalidArgument, "the function has " + std::to_string(output_names_.size()) +
                                            " output" + (output_names_.size() == 1 ? "" : "s") +
                                            " but num_outputs is " + std::to_string(num_outputs));
  }
}

void CompiledFunction::Call(const char* const* names, const runtime::ArrayView* const* inputs,
                            size_t num_inputs, size_t num_outputs, runtime::OutputSink* sink) {
  CheckCallable(num_outputs);
  ++calls_;
  if (policy_.options().stance == Stance::kForceTrace) {
    TraceAndRunOnce(names, inputs, num_inputs, sink);
    return;
  }
  std::string failed;  // why the variants seen so far do not apply
  if (runtime_ != nullptr) {
    try {
      Run(names, inputs, num_inputs, sink);
      ++cache_hits_;
      return;
    } catch (const Error& e) {
      if (e.code() != Code::kGuardFailed) throw;
      failed = e.message();
    }
  }
  // No variant covers these shapes: trace again, as the stance allows.
  std::vector<std::vector<int64_t>> shapes = BindShapes(names, inputs, num_inputs);
  const PolicyOptions& po = policy_.options();
  std::string call = "call " + std::to_string(calls_) + " (";
  for (size_t i = 0; i < shapes.size(); ++i)
    call += (i ? ", " : "") + policy_.inputs()[i].name + ": " + ShapeText(shapes[i]);
  call += ")";
  if (!variants_.empty() && po.stance == Stance::kFailOnRecompile) {
    Event("recompiles",
          call + ": no variant applies and the stance FAIL_ON_RECOMPILE forbids tracing again");
    throw Error(
        Code::kGuardFailed,
        "no variant of the function applies and the stance is FAIL_ON_RECOMPILE: " + failed);
  }
  bool fully_dynamic = false;
  if (variants_.size() >= static_cast<size_t>(po.recompile_limit)) {
    if (po.stance == Stance::kDynamicOnLimit && !has_fully_dynamic_ &&
        variants_.size() < program::kMaxVariants) {
      fully_dynamic = true;
    } else {
      Event("recompiles", call + ": no variant applies and the recompile limit (" +
                              std::to_string(po.recompile_limit) + ") is reached");
      throw Error(Code::kGuardFailed,
                  "no variant of the function applies and the recompile limit " +
                      std::to_string(po.recompile_limit) + " is reached (" +
                      std::to_string(variants_.size()) + " variants): " + failed);
    }
  }
  const TracePlan plan = policy_.Plan(shapes, fully_dynamic);
  std::string why;
  if (variants_.empty()) {
    why = "first call";
  } else {
    for (const std::string& line : policy_.Explain(shapes, plan)) {
      why += (why.empty() ? "" : "; ") + line;
    }
    // With several variants the policy's lines name only the assumptions of the sizes; the
    // runtime's message names each variant's failing guard: log both.
    if (why.empty()) {
      why = failed;
    } else if (variants_.size() > 1 && !failed.empty()) {
      why += " (" + failed + ")";
    }
  }
  if (fully_dynamic) why += "; the recompile limit is reached: tracing one fully dynamic variant";
  Event("recompiles",
        "trace " + std::to_string(variants_.size() + 1) + " for " + call + ": " + why);
  std::shared_ptr<const program::Program> v = TraceVariant(plan);
  variants_.push_back(v);
  try {
    Rebuild();
  } catch (...) {
    variants_.pop_back();
    throw;
  }
  policy_.Record(shapes, plan);
  has_fully_dynamic_ |= fully_dynamic;
  const std::string variant = "variant " + std::to_string(variants_.size() - 1);
  for (const std::string& r : plan.static_reasons) Event("dynamic", variant + ": " + r);
  for (size_t g = 0; g < v->guard_texts().size(); ++g) {
    Event("guards", variant + ": guard " + v->guard_texts()[g] + " (from " + v->guard_origins()[g] +
                        (v->guard_messages()[g].empty() ? "" : ": " + v->guard_messages()[g]) +
                        ")");
  }
  Run(names, inputs, num_inputs, sink);
}

}  // namespace function
}  // namespace shp
