// The runtime: executes an immutable program on concrete arrays of any accepted shape, with
// no recompilation.
//
// A call binds the inputs by name (or by position), checks dtypes, then solves the dimension
// variables and checks ranks, constants, constraints and assertions with the program's
// checker -- all before anything is allocated or computed. Per concrete binding (the input
// shapes and the values of dimension inputs) it builds a Plan: the evaluated size of every
// value, one arena with buffer offsets that reuse dead buffers (liveness), the kernel of every
// step (consecutive elementwise operations whose intermediates have one use are fused into one
// register program, evaluated in one pass over memory) and whether a step is split across
// threads. Plans live in a bounded LRU cache, so a known shape skips the solver entirely.
// Results never depend on the cache state.
//
// A Runtime is used by one thread at a time; many runtimes may share one program and run
// concurrently (the program is immutable; solving and planning a new shape take no lock
// unless the program needs its general solver, or the shapes are refused).
#ifndef SHAPEPOLY_CC_RUNTIME_RUNTIME_H_
#define SHAPEPOLY_CC_RUNTIME_RUNTIME_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cc/ops/op_def.h"
#include "cc/program/program.h"
#include "cc/runtime/arena.h"
#include "cc/runtime/cost.h"
#include "cc/ir/dtype.h"

namespace shp {
namespace runtime {

// The most threads per kernel call (kernels::kMaxThreads; documented in shapepoly.h).
constexpr int kMaxNumThreads = 256;

struct Options {
  // Threads per kernel call, at most kMaxNumThreads; 0 = every hardware thread (at most
  // kMaxNumThreads). Threads the system refuses make Runtime's constructor throw kOutOfMemory.
  int num_threads = 0;
  size_t plan_cache_capacity = 16;  // plans kept (LRU); 0 keeps none (every call plans)
  // Programs with data-dependent sizes: a stage whose arena, planned for the upper bounds of
  // its data-dependent sizes, needs at most this many bytes is allocated for the bounds, so
  // the arena never grows with the data (0: allocate for the actual sizes).
  size_t bound_allocation_bytes = 0;
  // A matmul by a constant matrix followed by a bias add (and max(x, 0)) runs as one step, the
  // kernel adding the bias as it stores the product: bit-identical either way (off: to compare).
  bool fuse_matmul_epilogue = true;
  // Chains of elementwise operations run as one fused register program each (off: every
  // elementwise op is its own unfused step). Results are bit-identical either way (a NaN's sign
  // and payload aside, see ElementwiseProgram::set_fusion); off is the
  // reference the differential tests compare with. The environment variable SHP_FUSION=off,
  // read when a runtime is created, turns both fusions off for every runtime of the process
  // (to rule fusion out when a result looks wrong; see FusionFromEnv).
  bool fuse_elementwise = true;
  // The most iterations one while_loop or scan may run per call (-1: no limit): a loop that
  // would run more fails with kConstraintViolation before its next iteration. For programs
  // from files that are not trusted, whose loops could otherwise run for as long as an int64
  // counts.
  int64_t max_loop_iterations = -1;
};

// SHP_FUSION: "off" (or "0", "false") turns fusion off for runtimes created after it is set;
// unset, empty, "on", "1" or "true" leave the options as given. Another value is ignored with
// one line on stderr (once per process). Returns false when the variable asks for fusion off.
bool FusionFromEnv();
inline constexpr const char kFusionEnv[] = "SHP_FUSION";

// What a dry run knows of one output dim: a data-dependent dim (its value comes from the
// data) has bounds at the call's input shapes; another has min == max == its size.
struct DimBounds {
  bool data_dependent = false;
  int64_t min = 0, max = 0;
};

// A borrowed concrete array: dtype, row-major shape and data. For a dry run `data` may be
// null, except for dimension inputs (a scalar i64 whose value is read).
struct ArrayView {
  trace::DType dtype = trace::DType::kF32;
  const int64_t* shape = nullptr;
  size_t rank = 0;
  const void* data = nullptr;
};

struct Stats {
  uint64_t plans_built = 0;        // cache misses that built a plan
  uint64_t cache_hits = 0;         // calls that found their plan in the cache
  int64_t last_plan_build_ns = 0;  // wall time of the last plan build (solver included)
  // Runs of this program's control-flow subprograms (a cond's branch, a while_loop's condition
  // or body, a scan's body: once per iteration); not those of subprograms nested in them.
  uint64_t subprogram_runs = 0;
};

// Receives the outputs of a run: Output(i, ...) is called once per output, in order, after
// every check has passed and before anything is computed, and returns where output i goes
// (contiguous row-major, at least product(shape) * DTypeSize(dtype) bytes, not overlapping
// the inputs or another output). It may throw shp::Error to abort the run.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  virtual void* Output(size_t i, trace::DType dtype, const int64_t* shape, size_t rank) = 0;
};

class Plan;
class Graph;

class Runtime {
 public:
  // Keeps `program` alive. Throws shp::Error (kUnsupported for an operation the runtime
  // cannot execute; kInvalidArgument for bad options).
  Runtime(std::shared_ptr<const program::Program> program, const Options& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const program::Program& program() const { return *program_; }
  int num_threads() const { return num_threads_; }
  const Stats& stats() const { return stats_; }
  // The plan-cache statistics of the calls that ran variant `v` (< program().num_variants()).
  const Stats& variant_stats(size_t v) const { return variant_stats_[v]; }
  // The variant the last successful Run used; -1 before any.
  int64_t last_variant() const { return last_variant_; }

  // Runs the program. `names` may be null when `n` equals the number of program inputs
  // (declared order) and the program is plain: no input has a default or the role parameter,
  // tangent or cotangent, no output is derived (jvp/vjp/grad); an input with a default (a
  // parameter, grad's cotangent) may be left out when binding by name. Errors (shp::Error), all
  // raised before allocation or computation:
  //   kNotFound (an unknown name), kInvalidArgument (missing or repeated inputs, naming
  //   them; a wrong count without names), kDtypeMismatch, kShapeMismatch /
  //   kConstraintViolation (the program checker's messages, naming the input); then
  //   whatever `sink` throws. During computation only `take` and `scatter_add` can fail
  //   (kInvalidArgument for an index out of range). After any error the runtime stays fully usable.
  void Run(const char* const* names, const ArrayView* inputs, size_t n, OutputSink* sink);

  // A dry run: every check of Run, then the output shapes (plans and caches as Run does). A
  // data-dependent dim is -1 (never computed): OutputBounds has its bounds.
  std::vector<std::vector<int64_t>> OutputShapes(const char* const* names, const ArrayView* inputs,
                                                 size_t n);
  // Per output, per dim: what the last OutputShapes or Run found (a Run: the sizes computed).
  const std::vector<std::vector<DimBounds>>& OutputBounds() const { return bounds_; }

  // The cost of kind `kind` (cost.h) for these inputs' dtypes and shapes (data may be null,
  // except for dimension inputs): every check of a dry run, then the formula of the variant
  // that would run, evaluated. Plans and caches like a dry run; runs nothing.
  int64_t Cost(CostKind kind, const char* const* names, const ArrayView* inputs, size_t n);

  // The Highway target the kernels dispatch to, e.g. "AVX3". Static string.
  static const char* SimdTarget();

 private:
  // The runtimes of the control-flow subprograms of every graph (control_flow.cc).
  void MakeControlFlowRuntimes(const Options& options);
  // Binds (bound_), checks and finds (or builds) the plan.
  Plan* Prepare(const char* const* names, const ArrayView* inputs, size_t n);
  // Points the fill defaults the bound call leaves out at buffers of the plan's shapes filled
  // with their values (reusing the buffer of the last run when its shape is the same).
  void FillAbsent(const Plan& plan);
  // Prepare's fast path: every input given in declared order, with the dtypes and shapes of
  // the last cached plan's call, matched in one pass (binding them; a hit counted). Null
  // otherwise, binding nothing: Prepare's general path then checks and words any error.
  Plan* PrepareLast(const char* const* names, const ArrayView* inputs, size_t n);
  // bound_ = the inputs in declared order, their dtypes and dimension inputs checked. The
  // common call (every input, in declared order) is matched in one pass; BindByName handles
  // the rest and words the errors.
  void Bind(const char* const* names, const ArrayView* inputs, size_t n);
  void BindByName(const char* const* names, const ArrayView* inputs, size_t n);  // (order_)
  [[noreturn]] void ThrowBadInput(size_t i) const;
  // The program's CheckShapes on the bound inputs (the general solver, under the program's
  // lock; throws its errors): the variant, and its variables' values in *values.
  int32_t CheckShapesLocked(std::vector<int64_t>* values);
  // Whether `key` is the plan-cache key of the bound inputs.
  bool BoundKeyIs(const std::vector<int64_t>& key) const;
  // The cached plan of `key` (counting a hit), or null.
  std::shared_ptr<Plan> FindPlan(const std::vector<int64_t>& key, int32_t variant);
  // Caches `plan` under `key` (evicting the least recently used); returns it.
  std::shared_ptr<Plan> InsertPlan(const std::vector<int64_t>& key, std::shared_ptr<Plan> plan,
                                   int32_t variant);
  void CountBuilt(int32_t variant, std::chrono::steady_clock::time_point start);
  // The scratch memory of every plan: one block, grown to the largest plan's arena and never
  // shrunk (arena.h).
  using Arena = ScratchArena;
  // Points every slot of `plan` at its storage (arena at `base`, outputs at out_ptr_, earlier
  // stages' values at value_ptr_) and runs its steps.
  void RunSteps(const Plan& plan, uint8_t* base);
  // Run for a program with data-dependent sizes: the stages in order, each planned (or found
  // in the cache) once the value of its unbacked variable is read from the data.
  void RunStaged(std::shared_ptr<Plan> first, OutputSink* sink);
  // A cond with result sizes, the first node of a stage (control_flow.cc): runs the branch its
  // predicate takes on the operands' `data` into the op's stash, sets *vars' entries of its
  // sizes from the shapes the branch returned, and points value_ptr_ of the op's used results
  // at the stash (the stage reads them there: no copy).
  void RunCondForSizes(const Graph& g, size_t node,
                       const std::vector<ops::OpDef::OperandData>& data,
                       std::vector<int64_t>* vars);
  // A scan with result sizes (ys whose sizes its body computes), the first node of a stage:
  // runs its first iteration into the op's stash to read them (the scan's step takes that
  // iteration's results from the stash, and checks every other iteration against them).
  // Length 0: the lowest value of each size's range.
  void RunScanForSizes(const Graph& g, size_t node,
                       const std::vector<ops::OpDef::OperandData>& data,
                       std::vector<int64_t>* vars);
  // The output dims' bounds (bounds_) at the variable values of `plan` (a first stage).
  void ComputeBounds(const Plan& plan);
  // The cache's (or uncached_'s) owner of `plan`.
  std::shared_ptr<Plan> FindCurrent(const Plan* plan) const;
  // key_ = the plan-cache key of the bound inputs.
  void BuildKey();
  // bound_allocation_bytes: reserves stage k's arena for its unbacked variable's upper bound
  // when that needs at most the option's bytes.
  void ReserveForBound(const Graph& g, std::vector<int64_t> vars, size_t k, const Plan& actual);

  std::shared_ptr<const program::Program> program_;
  std::vector<std::unique_ptr<Graph>> graphs_;  // one per variant
  int num_threads_ = 1;
  struct PoolHolder;
  std::unique_ptr<PoolHolder> pool_;
  size_t capacity_ = 16;

  size_t bound_allocation_bytes_ = 0;
  struct Entry {
    std::vector<int64_t> key;
    std::shared_ptr<Plan> plan;  // shared: a staged run holds its stages' plans while it runs
    uint64_t last_used = 0;
    int32_t variant = 0;
  };
  std::vector<Entry> cache_;
  std::shared_ptr<Plan> uncached_;  // the plan of the last call when the capacity is 0
  // Staged runs: the key of the stages' plans, each stage's plan, the pointer of every value
  // computed so far, and one arena per stage after the first.
  std::vector<int64_t> stage_key_;
  std::vector<std::shared_ptr<Plan>> stage_plans_;
  std::vector<uint8_t*> value_ptr_;
  std::vector<std::unique_ptr<Arena>> stage_arenas_;
  std::vector<std::vector<DimBounds>> bounds_;
  uint64_t tick_ = 0;
  size_t last_entry_ = SIZE_MAX;  // the cache entry of the last hit or insertion
  Stats stats_;
  std::vector<Stats> variant_stats_;
  int64_t last_variant_ = -1;
  int32_t variant_ = 0;  // the variant of the plan Prepare returned last

  // What every call reads of the declared inputs and outputs, flat (program::Input is large).
  struct InputFact {
    const char* name;  // the program's string
    trace::DType dtype;
    bool is_dim;
  };
  std::vector<InputFact> in_facts_;
  std::vector<trace::DType> out_dtypes_;

  // Per-call scratch, reused to avoid allocation.
  std::vector<int32_t> order_;
  std::vector<const ArrayView*> bound_;  // input k of the program: given, or its default
  // The defaults of inputs that have one (views of the program's bytes; for a fill default, of
  // fill_data_).
  std::vector<ArrayView> defaults_;
  std::vector<std::vector<int64_t>> default_shapes_;
  // Fill defaults (jvp's default tangents): per input, whether it has one, the bytes of one
  // element, and the buffer filled for the shape in default_shapes_ (made by the first run of
  // a shape, kept for the next runs of that shape). absent_[i]: the bound call leaves input i
  // with a fill default out (any_absent_: some input); its shape comes from the plan.
  std::vector<bool> is_fill_;
  std::vector<std::array<uint8_t, 8>> fill_element_;
  std::vector<std::vector<uint8_t>> fill_data_;
  std::vector<bool> absent_;
  bool any_absent_ = false;
  // Parameters, defaults, tangents, cotangents or derived outputs: inputs bind by name only.
  bool by_name_only_ = false;
  std::vector<int64_t> key_;
  // The lock-free shape check's arguments and result (Program::TryCheckShapesLockFree).
  std::vector<const int64_t*> check_shapes_;
  std::vector<size_t> check_ranks_;
  std::vector<int64_t> dim_values_;
  std::vector<int64_t> var_values_;
  std::vector<uint8_t*> slot_ptr_;
  std::vector<void*> out_ptr_;
  Arena arena_;
};

}  // namespace runtime
}  // namespace shp

#endif  // SHAPEPOLY_CC_RUNTIME_RUNTIME_H_
