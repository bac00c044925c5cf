// C API of the runtime: thin thunks over cc/runtime.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c_api/array_internal.h"
#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/dim/eval.h"
#include "cc/runtime/runtime.h"

using shp::Code;
using shp::Error;
namespace rt = shp::runtime;
namespace trace = shp::trace;

struct shp_runtime_options {
  rt::Options options;
};

struct shp_runtime {
  std::unique_ptr<rt::Runtime> runtime;
  std::vector<std::vector<int64_t>> output_shapes;  // of the last successful call
  bool has_shapes = false;
  bool dry = false;  // the shapes are a dry run's (data-dependent dims -1: see bounds)
  // Per-call scratch, reused so that a cached run allocates nothing but its outputs.
  std::vector<rt::ArrayView> views;
  std::vector<std::vector<int64_t>> pending_shapes;  // output shapes of the call in progress
  std::vector<shp_array*> created;                   // outputs created by the call in progress
};

namespace {

rt::Runtime& R(shp_runtime_t* r) {
  SHP_REQUIRE_ARG(r, "runtime");
  return *r->runtime;
}

// The errors of a call's arguments, out of line: the checks run on every call.
[[noreturn]] __attribute__((noinline, cold)) void ThrowNullArray(const char* what, size_t k) {
  throw Error(Code::kInvalidArgument, std::string(what) + "[" + std::to_string(k) + "] is NULL");
}

// Converts the input arrays into views (reusing the runtime's scratch).
const rt::ArrayView* Views(shp_runtime_t* r, const shp_array_t* const* inputs, size_t n) {
  if (n > 0) SHP_REQUIRE_ARG(inputs, "inputs");
  if (r->views.size() != n) r->views.resize(n);
  rt::ArrayView* v = r->views.data();
  for (size_t k = 0; k < n; ++k) {
    const shp_array_t* a = inputs[k];
    if (a == nullptr) ThrowNullArray("inputs", k);
    v[k] = rt::ArrayView{static_cast<trace::DType>(a->dtype), a->shape.data(), a->shape.size(),
                         a->data};
  }
  return v;
}

[[noreturn]] __attribute__((noinline, cold)) void ThrowOutputCount(size_t want,
                                                                   size_t num_outputs) {
  throw Error(Code::kInvalidArgument, "the program has " + std::to_string(want) + " output" +
                                          (want == 1 ? "" : "s") + " but num_outputs is " +
                                          std::to_string(num_outputs));
}

inline void CheckOutputCount(const rt::Runtime& r, size_t num_outputs) {
  const size_t want = r.program().outputs().size();
  if (num_outputs != want) ThrowOutputCount(want, num_outputs);
}

// *v = the dims shape[0..rank): copied in place when the rank is the same (assign is an
// out-of-line call).
inline void SetShape(std::vector<int64_t>* v, const int64_t* shape, size_t rank) {
  if (v->size() == rank) {
    std::copy(shape, shape + rank, v->begin());
  } else {
    v->assign(shape, shape + rank);
  }
}

// Creates the output arrays (in the runtime's scratch); they are released unless the run
// succeeds. The output shapes go to pending_shapes, committed by the caller on success.
class CreatingSink : public rt::OutputSink {
 public:
  explicit CreatingSink(shp_runtime_t* r) : r_(r) {
    r_->created.clear();
    r_->pending_shapes.resize(r_->runtime->program().outputs().size());
  }
  ~CreatingSink() override {
    for (shp_array* a : r_->created) shp_array_destroy(a);
    r_->created.clear();
  }
  void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) override {
    r_->created.reserve(r_->pending_shapes.size());
    r_->created.push_back(shp::capi::NewOwnedArray(static_cast<shp_dtype_t>(dtype), shape, rank));
    SetShape(&r_->pending_shapes[i], shape, rank);
    return r_->created.back()->data;
  }
  void Release(shp_array_t** out) {
    for (size_t i = 0; i < r_->created.size(); ++i) out[i] = r_->created[i];
    r_->created.clear();
    std::swap(r_->output_shapes, r_->pending_shapes);
    r_->has_shapes = true;
    r_->dry = false;
  }

 private:
  shp_runtime_t* r_;
};

// Checks the caller's output arrays against the planned outputs.
class ProvidedSink : public rt::OutputSink {
 public:
  ProvidedSink(shp_runtime_t* r, shp_array_t* const* outs) : r_(r), outs_(outs) {
    r_->pending_shapes.resize(r_->runtime->program().outputs().size());
  }
  void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) override {
    const shp_array* a = outs_[i];
    bool same = a->dtype == static_cast<shp_dtype_t>(dtype) && a->shape.size() == rank;
    for (size_t k = 0; same && k < rank; ++k) same = a->shape[k] == shape[k];
    if (!same) Mismatch(i, dtype, shape, rank);
    SetShape(&r_->pending_shapes[i], shape, rank);
    return a->data;
  }
  // Commits the output shapes of a successful run.
  void Commit() {
    std::swap(r_->output_shapes, r_->pending_shapes);
    r_->has_shapes = true;
    r_->dry = false;
  }

 private:
  [[noreturn]] __attribute__((noinline, cold)) void Mismatch(size_t i, trace::DType dtype,
                                                             const int64_t* shape, size_t rank) {
    const shp_array* a = outs_[i];
    const std::string& name = r_->runtime->program().outputs()[i].name;
    if (a->dtype != static_cast<shp_dtype_t>(dtype)) {
      throw Error(Code::kDtypeMismatch, "output '" + name + "' has dtype " +
                                            trace::DTypeName(dtype) + " but outputs[" +
                                            std::to_string(i) + "] has dtype " +
                                            trace::DTypeName(static_cast<trace::DType>(a->dtype)));
    }
    if (a->shape.size() != rank || !std::equal(a->shape.begin(), a->shape.end(), shape)) {
      auto str = [](const int64_t* s, size_t n) {
        std::string t = "(";
        for (size_t k = 0; k < n; ++k) t += (k ? ", " : "") + std::to_string(s[k]);
        return t + (n == 1 ? ",)" : ")");
      };
      throw Error(Code::kShapeMismatch, "output '" + name + "' has shape " + str(shape, rank) +
                                            " but outputs[" + std::to_string(i) + "] has shape " +
                                            str(a->shape.data(), a->shape.size()));
    }
    throw Error(Code::kInternal, "output '" + name + "': Mismatch called on a match");
  }

  shp_runtime_t* r_;
  shp_array_t* const* outs_;
};

}  // namespace

extern "C" {

shp_error_t* shp_runtime_options_create(shp_runtime_options_t** options_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options_out, "options_out");
  *options_out = new shp_runtime_options;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_options_set_num_threads(shp_runtime_options_t* options, int32_t n) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options, "options");
  if (n < 0 || n > rt::kMaxNumThreads) {
    throw Error(Code::kInvalidArgument,
                "num_threads must be in [0, " + std::to_string(rt::kMaxNumThreads) +
                    "] (0: every hardware thread), got " + std::to_string(n));
  }
  options->options.num_threads = n;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_options_set_plan_cache_capacity(shp_runtime_options_t* options, size_t n) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options, "options");
  options->options.plan_cache_capacity = n;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_options_set_bound_allocation(shp_runtime_options_t* options,
                                                      size_t max_bytes) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options, "options");
  options->options.bound_allocation_bytes = max_bytes;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_options_set_max_loop_iterations(shp_runtime_options_t* options,
                                                         int64_t max) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options, "options");
  if (max < -1) {
    throw Error(Code::kInvalidArgument,
                "max_loop_iterations must be >= 0 (or -1: no bound), got " + std::to_string(max));
  }
  options->options.max_loop_iterations = max;
  return nullptr;
  SHP_API_END
}

void shp_runtime_options_destroy(shp_runtime_options_t* options) { delete options; }

shp_error_t* shp_runtime_create(const shp_program_t* program, const shp_runtime_options_t* options,
                                shp_runtime_t** runtime_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(program, "program");
  SHP_REQUIRE_ARG(runtime_out, "runtime_out");
  auto handle = std::make_unique<shp_runtime>();
  handle->runtime.reset(
      new rt::Runtime(program->program, options ? options->options : rt::Options{}));
  // Both shape buffers (swapped on every success) sized now: a cached run allocates nothing.
  const shp::program::Program& prog = handle->runtime->program();
  handle->output_shapes.resize(prog.outputs().size());
  handle->pending_shapes.resize(prog.outputs().size());
  for (size_t i = 0; i < prog.outputs().size(); ++i) {
    const size_t rank = prog.value_type(prog.outputs()[i].value).shape.size();
    handle->output_shapes[i].reserve(rank);
    handle->pending_shapes[i].reserve(rank);
  }
  *runtime_out = handle.release();
  return nullptr;
  SHP_API_END
}

void shp_runtime_destroy(shp_runtime_t* runtime) { delete runtime; }

shp_error_t* shp_runtime_run(shp_runtime_t* runtime, const char* const* input_names,
                             const shp_array_t* const* inputs, size_t num_inputs,
                             shp_array_t** outputs_out, size_t num_outputs) {
  SHP_API_BEGIN
  rt::Runtime& r = R(runtime);
  CheckOutputCount(r, num_outputs);
  if (num_outputs > 0) SHP_REQUIRE_ARG(outputs_out, "outputs_out");
  const rt::ArrayView* views = Views(runtime, inputs, num_inputs);
  CreatingSink sink(runtime);
  r.Run(input_names, views, num_inputs, &sink);
  sink.Release(outputs_out);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_run_into(shp_runtime_t* runtime, const char* const* input_names,
                                  const shp_array_t* const* inputs, size_t num_inputs,
                                  shp_array_t* const* outputs, size_t num_outputs) {
  SHP_API_BEGIN
  rt::Runtime& r = R(runtime);
  CheckOutputCount(r, num_outputs);
  if (num_outputs > 0) SHP_REQUIRE_ARG(outputs, "outputs");
  for (size_t j = 0; j < num_outputs; ++j) {
    if (outputs[j] == nullptr) ThrowNullArray("outputs", j);
  }
  const rt::ArrayView* views = Views(runtime, inputs, num_inputs);
  ProvidedSink sink(runtime, outputs);
  r.Run(input_names, views, num_inputs, &sink);
  sink.Commit();
  return nullptr;
  SHP_API_END
}

// The views of a dry run's arguments (shp_runtime_dry_run, shp_runtime_cost): shapes only; a
// dimension input's value is read through its shape pointer.
static std::vector<rt::ArrayView> ShapeViews(const rt::Runtime& r, const char* const* input_names,
                                             const shp_dtype_t* dtypes,
                                             const int64_t* const* shapes, const size_t* ranks,
                                             size_t num_inputs) {
  if (num_inputs > 0) {
    SHP_REQUIRE_ARG(shapes, "shapes");
    SHP_REQUIRE_ARG(ranks, "ranks");
  }
  const std::vector<shp::program::Input>& decl = r.program().inputs();
  std::vector<rt::ArrayView> views(num_inputs);
  for (size_t k = 0; k < num_inputs; ++k) {
    if (shapes[k] == nullptr && ranks[k] > 0) {
      throw Error(Code::kInvalidArgument, "shapes[" + std::to_string(k) + "] is NULL");
    }
    rt::ArrayView& v = views[k];
    v.shape = shapes[k];
    v.rank = ranks[k];
    if (dtypes) {
      // Read as int32: any value may come from C, and loading an out-of-range enum is UB.
      const int32_t raw = shp::capi::RawEnum(dtypes[k]);
      if (!trace::IsValidDType(raw)) {
        throw Error(
            Code::kInvalidArgument,
            "dtypes[" + std::to_string(k) + "] is not a shp_dtype_t value: " + std::to_string(raw));
      }
      v.dtype = static_cast<trace::DType>(raw);
    } else {
      // The declared dtype of the input this argument binds to (by name or position).
      size_t idx = k;
      if (input_names) {
        SHP_REQUIRE_ARG(input_names[k], "input_names[k]");
        idx = decl.size();
        for (size_t i = 0; i < decl.size(); ++i) {
          if (decl[i].name == input_names[k]) idx = i;
        }
      }
      v.dtype = idx < decl.size() ? decl[idx].type.dtype : trace::DType::kF32;
    }
    // A dimension input passes its value through `shapes[k]` (rank 0).
    v.data = shapes[k];
  }
  return views;
}

shp_error_t* shp_runtime_dry_run(shp_runtime_t* runtime, const char* const* input_names,
                                 const shp_dtype_t* dtypes, const int64_t* const* shapes,
                                 const size_t* ranks, size_t num_inputs) {
  SHP_API_BEGIN
  rt::Runtime& r = R(runtime);
  std::vector<rt::ArrayView> views = ShapeViews(r, input_names, dtypes, shapes, ranks, num_inputs);
  std::vector<std::vector<int64_t>> out = r.OutputShapes(input_names, views.data(), num_inputs);
  runtime->output_shapes = std::move(out);
  runtime->has_shapes = true;
  runtime->dry = true;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_cost(shp_runtime_t* runtime, shp_cost_kind_t kind,
                              const char* const* input_names, const shp_dtype_t* dtypes,
                              const int64_t* const* shapes, const size_t* ranks, size_t num_inputs,
                              int64_t* value_out) {
  SHP_API_BEGIN
  rt::Runtime& r = R(runtime);
  SHP_REQUIRE_ARG(value_out, "value_out");
  const rt::CostKind k = static_cast<rt::CostKind>(shp::capi::CostKindValue(kind));
  std::vector<rt::ArrayView> views = ShapeViews(r, input_names, dtypes, shapes, ranks, num_inputs);
  *value_out = r.Cost(k, input_names, views.data(), num_inputs);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_output_dim_bounds(const shp_runtime_t* runtime, size_t i, size_t axis,
                                           bool* data_dependent_out, int64_t* min_out,
                                           int64_t* max_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(runtime, "runtime");
  if (!runtime->has_shapes) throw Error(Code::kInvalidArgument, "no successful run or dry run yet");
  if (i >= runtime->output_shapes.size()) {
    throw Error(Code::kInvalidArgument,
                "output index " + std::to_string(i) + " is out of range (the program has " +
                    std::to_string(runtime->output_shapes.size()) + " outputs)");
  }
  const std::vector<int64_t>& s = runtime->output_shapes[i];
  if (axis >= s.size()) {
    throw Error(Code::kInvalidArgument, "axis " + std::to_string(axis) +
                                            " is out of range (output " + std::to_string(i) +
                                            " has rank " + std::to_string(s.size()) + ")");
  }
  rt::DimBounds b;
  if (runtime->dry) {
    b = runtime->runtime->OutputBounds()[i][axis];
  } else {
    // After a run every size is computed; whether it came from the data is the program's.
    const shp::program::Program& p = runtime->runtime->program();
    std::vector<shp::dim::VarRef> refs;
    shp::dim::CollectVars(p.value_type(p.outputs()[i].value).shape[axis], &refs);
    for (const shp::dim::VarRef& r : refs)
      b.data_dependent = b.data_dependent || p.UnbackedProducer(r.index) >= 0;
    b.min = b.max = s[axis];
  }
  if (data_dependent_out) *data_dependent_out = b.data_dependent;
  if (min_out) *min_out = b.min;
  if (max_out) *max_out = b.max;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_runtime_output_shape(const shp_runtime_t* runtime, size_t i, int64_t* dims_out,
                                      size_t cap, size_t* rank_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(runtime, "runtime");
  SHP_REQUIRE_ARG(rank_out, "rank_out");
  if (!runtime->has_shapes) throw Error(Code::kInvalidArgument, "no successful run or dry run yet");
  if (i >= runtime->output_shapes.size()) {
    throw Error(Code::kInvalidArgument,
                "output index " + std::to_string(i) + " is out of range (the program has " +
                    std::to_string(runtime->output_shapes.size()) + " outputs)");
  }
  const std::vector<int64_t>& s = runtime->output_shapes[i];
  if (cap > 0) SHP_REQUIRE_ARG(dims_out, "dims_out");
  for (size_t k = 0; k < std::min(cap, s.size()); ++k) dims_out[k] = s[k];
  *rank_out = s.size();
  return nullptr;
  SHP_API_END
}

int64_t shp_runtime_last_variant(const shp_runtime_t* runtime) {
  return runtime ? runtime->runtime->last_variant() : -1;
}

uint64_t shp_runtime_variant_plans_built(const shp_runtime_t* runtime, size_t v) {
  if (!runtime || v >= runtime->runtime->program().num_variants()) return 0;
  return runtime->runtime->variant_stats(v).plans_built;
}

uint64_t shp_runtime_variant_cache_hits(const shp_runtime_t* runtime, size_t v) {
  if (!runtime || v >= runtime->runtime->program().num_variants()) return 0;
  return runtime->runtime->variant_stats(v).cache_hits;
}

uint64_t shp_runtime_plans_built(const shp_runtime_t* runtime) {
  return runtime ? runtime->runtime->stats().plans_built : 0;
}

uint64_t shp_runtime_cache_hits(const shp_runtime_t* runtime) {
  return runtime ? runtime->runtime->stats().cache_hits : 0;
}

int64_t shp_runtime_last_plan_build_ns(const shp_runtime_t* runtime) {
  return runtime ? runtime->runtime->stats().last_plan_build_ns : 0;
}

int32_t shp_runtime_num_threads(const shp_runtime_t* runtime) {
  return runtime ? static_cast<int32_t>(runtime->runtime->num_threads()) : 0;
}

const char* shp_runtime_simd_target(const shp_runtime_t* runtime) {
  return runtime ? rt::Runtime::SimdTarget() : "";
}

}  // extern "C"
