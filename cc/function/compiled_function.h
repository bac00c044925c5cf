// A compiled function (torch.compile's shape story): a trace callback, traced again for the
// shapes that no variant traced so far covers (under the ShapePolicy), run through one runtime
// over the variants seen so far, and exported as one multi-variant program. The state machine
// behind shp_function_t (c_api/function_api.cc is thunks over it).
//
// A call binds its inputs by name and runs the runtime over the variants; when no variant's
// guards hold (kGuardFailed from the runtime) it traces again as the stance and the recompile
// limit allow, logs why (events), rebuilds the runtime over the variants and runs again.
//
// Threading: used by one thread at a time (not synchronized). The trace function must not call
// the function it traces: such a call is refused with kInvalidArgument.
#ifndef SHAPEPOLY_CC_FUNCTION_COMPILED_FUNCTION_H_
#define SHAPEPOLY_CC_FUNCTION_COMPILED_FUNCTION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cc/dim/scope.h"
#include "cc/function/shape_policy.h"
#include "cc/program/program.h"
#include "cc/runtime/runtime.h"
#include "cc/trace/trace.h"

namespace shp {
namespace function {

class CompiledFunction {
 public:
  struct Options {
    PolicyOptions policy;
    int32_t num_threads = 0;  // threads per kernel call of the runtime; 0: every hardware thread
  };

  // Traces one variant: builds the outputs (one per output name, tensors of `trace`) from
  // `inputs` (the declared inputs, recorded in `trace` with the plan's symbolic shapes).
  // `scope` is a fresh scope with the plan's variable ranges, hints, the guard policy
  // kFromHints and the plan's assumptions; `trace` records in it. Both belong to the function
  // and live for the duration of the call only. Throwing shp::Error fails the call with its
  // code and the message prefixed with "the trace function failed: ".
  using TraceFn = std::function<std::vector<const trace::Tensor*>(
      dim::Scope* scope, trace::Trace* trace, const std::vector<const trace::Tensor*>& inputs)>;

  // Throws kInvalidArgument for an empty trace_fn, no output, an input rejected by
  // CheckNewInput, or options rejected by CheckRecompileLimit or CheckNumThreads. The event log
  // also goes to stderr when the environment variable SHAPEPOLY_LOG contains `recompiles`,
  // `guards` or `dynamic` (read here).
  CompiledFunction(TraceFn trace_fn, std::vector<InputSpec> inputs,
                   std::vector<std::string> output_names, const Options& options);
  ~CompiledFunction();
  CompiledFunction(const CompiledFunction&) = delete;
  CompiledFunction& operator=(const CompiledFunction&) = delete;

  // Argument checks, shared with the C API (which makes them in its own order).
  // kInvalidArgument when `input` cannot follow `declared`: a rank above 64 (`index`: its
  // position, for the message), or a name listed already.
  static void CheckNewInput(const std::vector<InputSpec>& declared, const InputSpec& input,
                            size_t index);
  // kInvalidArgument unless 1 <= limit <= program::kMaxVariants.
  static void CheckRecompileLimit(int32_t limit);
  // kInvalidArgument unless 0 <= n <= 256.
  static void CheckNumThreads(int32_t n);

  const std::vector<InputSpec>& inputs() const { return policy_.inputs(); }
  const std::vector<std::string>& output_names() const { return output_names_; }

  // Marks and stance (ShapePolicy's; for the later traces).
  void MarkDynamic(const std::string& input, int64_t axis, int64_t min, int64_t max);
  void MarkStatic(const std::string& input, int64_t axis);
  void MarkUnbacked(const std::string& input, int64_t axis);
  void MaybeMarkDynamic(const std::string& input, int64_t axis);
  void set_stance(Stance s) { policy_.set_stance(s); }

  // Calls the function. `names[k]` names `inputs[k]` (k < num_inputs; NULL arrays or entries
  // are kInvalidArgument); `num_outputs` must be the number of outputs. The outputs go to
  // `sink` as runtime::Runtime::Run gives them (the sink may be asked again for an output if a
  // run is retried after tracing). Throws the runtime's errors; kGuardFailed when no variant
  // applies and the stance or the recompile limit forbids a new trace (with the reasons); the
  // trace function's errors (see TraceFn); kScopeMismatch when it returns a tensor of another
  // trace; kInvalidArgument when it is called from its own trace function.
  void Call(const char* const* names, const runtime::ArrayView* const* inputs, size_t num_inputs,
            size_t num_outputs, runtime::OutputSink* sink);

  // The checks Call makes first (for callers that convert their arguments before calling):
  // kInvalidArgument when the trace function is running (a call from it), or when
  // `num_outputs` is not the number of outputs.
  void CheckCallable(size_t num_outputs) const;
  // Whether the trace function is running (a call now would be refused).
  bool tracing() const { return tracing_; }
  // The events logged so far: one per trace ("trace 2 for call 3 (x: (8, 3)): ..."), the
  // reasons each axis of a new variant is static, its guards, and refused traces.
  const std::vector<std::string>& events() const { return events_; }
  // Traces made (= variants), and calls served by an existing variant.
  size_t variant_count() const { return variants_.size(); }
  uint64_t cache_hits() const { return cache_hits_; }
  // The variants so far as one multi-variant program; null before the first trace.
  const std::shared_ptr<const program::Program>& program() const { return program_; }

 private:
  // `inputs` once the arguments of the constructor are checked.
  static std::vector<InputSpec> Checked(std::vector<InputSpec> inputs, const TraceFn& trace_fn,
                                        const std::vector<std::string>& output_names,
                                        const Options& options);
  std::vector<std::vector<int64_t>> BindShapes(const char* const* names,
                                               const runtime::ArrayView* const* inputs,
                                               size_t n) const;
  void Run(const char* const* names, const runtime::ArrayView* const* inputs, size_t n,
           runtime::OutputSink* sink);
  std::shared_ptr<const program::Program> TraceVariant(const TracePlan& plan);
  void Rebuild();
  // The stance FORCE_TRACE: traces this call's shapes and runs that program once.
  void TraceAndRunOnce(const char* const* names, const runtime::ArrayView* const* inputs, size_t n,
                       runtime::OutputSink* sink);
  void Event(const char* kind, const std::string& text);

  TraceFn trace_fn_;
  std::vector<std::string> output_names_;
  ShapePolicy policy_;
  int32_t num_threads_ = 0;
  std::vector<std::shared_ptr<const program::Program>> variants_;
  bool has_fully_dynamic_ = false;
  std::shared_ptr<const program::Program> program_;  // the variants combined
  std::unique_ptr<runtime::Runtime> runtime_;        // over program_
  std::vector<runtime::ArrayView> views_;            // scratch of Run
  std::vector<std::string> events_;
  uint64_t calls_ = 0, cache_hits_ = 0;
  bool log_recompiles_ = false, log_guards_ = false, log_dynamic_ = false;
  bool tracing_ = false;  // inside the trace function: calls are refused
};

}  // namespace function
}  // namespace shp

#endif  // SHAPEPOLY_CC_FUNCTION_COMPILED_FUNCTION_H_
