// C API of compiled functions: thin thunks over shp::function::CompiledFunction
// (cc/function/compiled_function.h), which traces again for shapes that no variant covers,
// runs a runtime over the variants and exports them as one multi-variant program.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "c_api/array_internal.h"
#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/function/compiled_function.h"
#include "cc/runtime/runtime.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
namespace fn = shp::function;
namespace rt = shp::runtime;
namespace trace = shp::trace;

static_assert(SHP_DYNAMIC_AUTO == static_cast<int>(fn::DynamicMode::kAuto), "modes");
static_assert(SHP_DYNAMIC_ALL == static_cast<int>(fn::DynamicMode::kAll), "modes");
static_assert(SHP_DYNAMIC_NONE == static_cast<int>(fn::DynamicMode::kNone), "modes");
static_assert(SHP_STANCE_DEFAULT == static_cast<int>(fn::Stance::kDefault), "stances");
static_assert(SHP_STANCE_FAIL_ON_RECOMPILE == static_cast<int>(fn::Stance::kFailOnRecompile),
              "stances");
static_assert(SHP_STANCE_DYNAMIC_ON_LIMIT == static_cast<int>(fn::Stance::kDynamicOnLimit),
              "stances");
static_assert(SHP_STANCE_FORCE_TRACE == static_cast<int>(fn::Stance::kForceTrace), "stances");

struct shp_function_options {
  fn::CompiledFunction::Options options;
};

struct shp_function {
  std::unique_ptr<fn::CompiledFunction> function;
};

namespace {

fn::CompiledFunction& F(const shp_function_t* f) {
  SHP_REQUIRE_ARG(f, "function");
  return *f->function;
}

fn::Stance ToStance(const shp_stance_t& s) {
  const int32_t raw = shp::capi::RawEnum(s);
  if (raw < 0 || raw > 3) {
    throw Error(Code::kInvalidArgument,
                "argument 'stance' is not a shp_stance_t value: " + std::to_string(raw));
  }
  return static_cast<fn::Stance>(raw);
}

// The trace function of a C callback: the scope handle it gets views the function's scope and
// trace (borrowed for the call); its error becomes an shp::Error with its code and message.
fn::CompiledFunction::TraceFn CTraceFn(shp_trace_fn trace_fn, void* user_data, size_t num_outputs) {
  return [=](shp::dim::Scope* scope, trace::Trace* t,
             const std::vector<const trace::Tensor*>& inputs) {
    shp_scope_t handle;
    handle.dim.reset(scope);
    handle.trace.reset(t);
    struct Borrowed {  // declared after `handle`: releases the pointers before it is destroyed
      shp_scope_t* h;
      ~Borrowed() {
        (void)h->trace.release();
        (void)h->dim.release();
      }
    } borrowed{&handle};
    std::vector<const shp_tensor_t*> c_ins;
    for (const trace::Tensor* in : inputs) c_ins.push_back(shp::capi::Wrap(in));
    std::vector<const shp_tensor_t*> c_outs(num_outputs, nullptr);
    shp_error_t* e =
        trace_fn(&handle, c_ins.data(), c_ins.size(), c_outs.data(), c_outs.size(), user_data);
    if (e != nullptr) {
      Error err(static_cast<Code>(shp_error_code(e)), shp_error_message(e));
      shp_error_destroy(e);
      throw err;
    }
    std::vector<const trace::Tensor*> outs;
    for (const shp_tensor_t* o : c_outs) outs.push_back(shp::capi::Unwrap(o));
    return outs;
  };
}

// Creates the output arrays of a call; they are released unless the call succeeds. An output
// asked for again (a run retried after tracing) replaces the earlier array.
class CreatingSink : public rt::OutputSink {
 public:
  explicit CreatingSink(size_t n) : arrays_(n, nullptr) {}
  ~CreatingSink() override {
    for (shp_array* a : arrays_) shp_array_destroy(a);
  }
  void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) override {
    shp_array* a = shp::capi::NewOwnedArray(static_cast<shp_dtype_t>(dtype), shape, rank);
    shp_array_destroy(arrays_[i]);
    arrays_[i] = a;
    return a->data;
  }
  void Release(shp_array_t** out) {
    for (size_t i = 0; i < arrays_.size(); ++i) {
      out[i] = arrays_[i];
      arrays_[i] = nullptr;
    }
  }

 private:
  std::vector<shp_array*> arrays_;
};

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
  o->options.policy.dynamic = static_cast<fn::DynamicMode>(raw);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_duck_sizing(shp_function_options_t* o, bool on) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  o->options.policy.duck_sizing = on;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_recompile_limit(shp_function_options_t* o, int32_t limit) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  fn::CompiledFunction::CheckRecompileLimit(limit);
  o->options.policy.recompile_limit = limit;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_stance(shp_function_options_t* o, shp_stance_t stance) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  o->options.policy.stance = ToStance(stance);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_options_set_num_threads(shp_function_options_t* o, int32_t n) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(o, "options");
  fn::CompiledFunction::CheckNumThreads(n);
  o->options.num_threads = n;
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
    fn::InputSpec spec{input_names[i], static_cast<trace::DType>(dt), ranks[i]};
    fn::CompiledFunction::CheckNewInput(specs, spec, i);
    specs.push_back(std::move(spec));
  }
  std::vector<std::string> outputs;
  for (size_t j = 0; j < num_outputs; ++j) {
    if (!output_names[j])
      throw Error(Code::kInvalidArgument, "output_names[" + std::to_string(j) + "] is NULL");
    outputs.emplace_back(output_names[j]);
  }
  std::unique_ptr<shp_function_t> f(new shp_function_t);
  f->function.reset(new fn::CompiledFunction(
      CTraceFn(trace_fn, user_data, num_outputs), std::move(specs), std::move(outputs),
      options ? options->options : fn::CompiledFunction::Options()));
  *function_out = f.release();
  return nullptr;
  SHP_API_END
}

void shp_function_destroy(shp_function_t* f) { delete f; }

shp_error_t* shp_function_mark_dynamic(shp_function_t* f, const char* input, int64_t axis,
                                       int64_t min, int64_t max) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(input, "input");
  F(f).MarkDynamic(input, axis, min, max);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_mark_static(shp_function_t* f, const char* input, int64_t axis) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(input, "input");
  F(f).MarkStatic(input, axis);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_mark_unbacked(shp_function_t* f, const char* input, int64_t axis) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(input, "input");
  F(f).MarkUnbacked(input, axis);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_maybe_mark_dynamic(shp_function_t* f, const char* input, int64_t axis) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(input, "input");
  F(f).MaybeMarkDynamic(input, axis);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_set_stance(shp_function_t* f, shp_stance_t stance) {
  SHP_API_BEGIN
  F(f).set_stance(ToStance(stance));
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_function_call(shp_function_t* f, const char* const* names,
                               const shp_array_t* const* inputs, size_t num_inputs,
                               shp_array_t** outputs_out, size_t num_outputs) {
  SHP_API_BEGIN
  fn::CompiledFunction& fr = F(f);
  SHP_REQUIRE_ARG(outputs_out, "outputs_out");
  fr.CheckCallable(num_outputs);  // before the arrays are read
  // The arrays as views (NULL stays NULL: the function checks them where the runtime did).
  std::vector<rt::ArrayView> views(inputs ? num_inputs : 0);
  std::vector<const rt::ArrayView*> ptrs(views.size(), nullptr);
  for (size_t k = 0; k < views.size(); ++k) {
    const shp_array_t* a = inputs[k];
    if (a == nullptr) continue;
    views[k] = rt::ArrayView{static_cast<trace::DType>(a->dtype), a->shape.data(), a->shape.size(),
                             a->data};
    ptrs[k] = &views[k];
  }
  CreatingSink sink(fr.output_names().size());
  fr.Call(names, inputs ? ptrs.data() : nullptr, num_inputs, num_outputs, &sink);
  sink.Release(outputs_out);
  return nullptr;
  SHP_API_END
}

size_t shp_function_event_count(const shp_function_t* f) {
  return f ? f->function->events().size() : 0;
}

const char* shp_function_event_text(const shp_function_t* f, size_t i) {
  return f && i < f->function->events().size() ? f->function->events()[i].c_str() : nullptr;
}

uint64_t shp_function_trace_count(const shp_function_t* f) {
  return f ? f->function->variant_count() : 0;
}
uint64_t shp_function_cache_hits(const shp_function_t* f) {
  return f ? f->function->cache_hits() : 0;
}
size_t shp_function_variant_count(const shp_function_t* f) {
  return f ? f->function->variant_count() : 0;
}

shp_error_t* shp_function_export(const shp_function_t* f, shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(f, "function");
  SHP_REQUIRE_ARG(program_out, "program_out");
  if (f->function->program() == nullptr) {
    throw Error(Code::kInvalidArgument,
                "the function has not been traced yet: call it on representative shapes first");
  }
  std::unique_ptr<shp_program_t> p(new shp_program_t);
  p->program = f->function->program();  // immutable: shared
  *program_out = p.release();
  return nullptr;
  SHP_API_END
}

}  // extern "C"
