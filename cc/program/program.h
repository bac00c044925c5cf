// An immutable program: named inputs and outputs with symbolic shapes, the operations
// between them, the constraints and assertions its shapes rely on, and the recipe that
// determines every dimension variable from the inputs.
//
// A Program owns a private dim::Scope into which every expression is rebuilt, so it is
// independent of the scope it was traced in (which may be destroyed first); only the copies
// WithMetadata makes share it, with its mutex. It never changes after construction. The
// private scope is not thread-safe, so every use of it after construction (solving shapes)
// holds that mutex; everything else (introspection, listing, serialization) reads data
// computed at construction, so a const Program may be used from many threads at once. The
// runtime's shape check (TryCheckShapesLockFree) takes no lock: it reads the solve recipe and
// immutable expressions only.
#ifndef SHAPEPOLY_CC_PROGRAM_PROGRAM_H_
#define SHAPEPOLY_CC_PROGRAM_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cc/base/limits.h"
#include "cc/dim/scope.h"
#include "cc/ops/op_list.h"
#include "cc/ops/subprogram.h"
#include "cc/trace/ops.h"
#include "cc/ir/tensor_type.h"
#include "cc/trace/trace.h"

namespace shp {
namespace program {

// The newest schema version this library reads and writes. A program is written with the
// lowest version that can express it (SchemaVersionNeeded), so older readers keep reading
// every program that uses none of the newer features. It is the spec's newest_schema_version
// (cc/ops/ops.toml), which a new op or any other change of the format raises.
constexpr uint32_t kSchemaVersion = SHP_NEWEST_OP_SCHEMA_VERSION;

// The schema version that introduced operation `op` (its `since` in cc/ops/ops.toml). Writers
// need it, and readers refuse a file that uses an op newer than the version it declares.
uint32_t OpSchemaVersion(ops::OpKind op);

// Values of shapepoly.fb.InputRole and shp_input_role_t (trace.h): append only.
using InputRole = trace::InputRole;

// Values of shapepoly.fb.OutputRole and shp_output_role_t: append only.
enum class OutputRole : int32_t {
  kPrimal = 0,   // computed by the program as traced
  kTangent = 1,  // made by jvp
  kGrad = 2,     // made by vjp and grad
};

struct Input {
  std::string name;
  InputRole role = InputRole::kData;
  trace::TensorType type;
  int32_t var = -1;             // kDim: the variable (index in the program's scope)
  int32_t default_buffer = -1;  // an input with a default value: its bytes, buffers()[i]
  // A fill default (schema version 11): every element is `fill`, in the shape the other
  // inputs' variables give it in a run. Never with default_buffer; the solve recipe never
  // reads such an input (a run may leave it out).
  bool has_fill = false;
  double fill = 0;
  bool has_default() const { return default_buffer >= 0 || has_fill; }
};

// Value ids: inputs are 0..num_inputs-1, node i produces value num_inputs + i.
struct Node {
  trace::OpKind op = trace::OpKind::kConstant;
  trace::Attrs attrs;  // the alternative of ops::Def(op); dims belong to the program's scope
  std::vector<int32_t> operands;  // value ids, all smaller than this node's value id
  trace::TensorType type;
};

struct Output {
  std::string name;
  int32_t value = 0;
  OutputRole role = OutputRole::kPrimal;
};

// How the runtime finds variable `var`: from axis `axis` of data input `input`
// (`axis` = -1: the value of dimension input `input`). Steps are in solving order: the
// dimension of a step may use the variables of earlier steps.
struct SolveStep {
  int32_t var = 0;
  int32_t input = 0;
  int32_t axis = -1;
};

// Options of Program::Load. max_bytes caps the bytes the constants may hold once inflated, in
// total: it is checked against the sizes a file declares before anything is inflated, so a
// small hostile file cannot make the loader allocate or inflate more. The format's own
// limits (cc/ops/limits.h: 1 GiB per constant, 4 GiB in total) apply whatever the cap.
constexpr uint64_t kDefaultLoadMaxBytes = uint64_t{1} << 30;
struct LoadOptions {
  uint64_t max_bytes = kDefaultLoadMaxBytes;
  // Internal: how deep the program being loaded is nested in subprograms (control flow).
  uint32_t depth = 0;
};
// The deepest nesting of subprograms (control flow) a file may have.
constexpr uint32_t kMaxSubprogramDepth = 8;

// A program traced again: a new scope with the program's variables, declared ranges,
// constraints and assertions, and a trace with one tensor per value of the program. The
// program transformations (cc/autodiff) extend the trace and make a new program of it.
struct Replay {
  std::unique_ptr<dim::Scope> scope;
  std::unique_ptr<trace::Trace> trace;       // refers to *scope (destroyed first)
  std::vector<const trace::Tensor*> values;  // by value id: the inputs, then the nodes
  std::vector<const trace::Tensor*> inputs;  // the program's inputs, in order
};

// A program's metadata: string key/value pairs in increasing byte order of the keys, each key
// once (schema version 14). The library never interprets it: it is the user's (the ONNX
// importer keeps the model's input and output names there, "onnx.names").
using Metadata = std::vector<std::pair<std::string, std::string>>;
// Why an entry cannot be metadata ("" if it can): the key is not empty, printable UTF-8 (no
// control characters) of at most limits::kMaxMetadataKeyBytes bytes; the value is UTF-8
// without NUL of at most limits::kMaxMetadataValueBytes bytes. Builders and loader alike.
std::string MetadataEntryProblem(const std::string& key, const std::string& value);

// The most variants a program may have (shp_program_create_variants, and files).
constexpr size_t kMaxVariants = limits::kMaxVariants;  // cc/base/limits.h

// What CheckShapes found for accepted shapes.
struct ShapeCheck {
  int32_t variant = 0;                 // the variant that runs on these shapes
  std::vector<std::string> var_names;  // the variables the program's shapes use
  std::vector<int64_t> var_values;
  std::vector<std::vector<int64_t>> output_shapes;
};

class Program {
 public:
  // Builds a program from traced tensors. `inputs` keep their order, names, roles and
  // defaults; every input that the outputs depend on must be listed. `output_roles` is empty
  // (all kPrimal) or one per output; only derived outputs may have names with
  // trace::kDerivedNameMark. Throws shp::Error (kInvalidArgument, kScopeMismatch,
  // kUnsolvable, ...).
  static std::unique_ptr<Program> FromTrace(const trace::Trace& trace,
                                            const std::vector<const trace::Tensor*>& inputs,
                                            const std::vector<const trace::Tensor*>& outputs,
                                            const std::vector<std::string>& output_names,
                                            const std::vector<OutputRole>& output_roles = {});

  // Combines programs traced under different guards into one multi-variant program: a run
  // uses the first variant (in this order; a multi-variant argument contributes its
  // variants) whose guards hold. The variants must have the same constraints and declared
  // ranges, inputs (names, roles, dtypes, ranks, defaults) and outputs (names, roles, dtypes,
  // ranks); their symbolic shapes may differ only where each variant's guards make them
  // provably equal to variant 0's. Throws kInvalidArgument naming the difference. Checks
  // whether the variants cover every valuation the constraints allow (variants_exhaustive).
  static std::unique_ptr<Program> CreateVariants(
      const std::vector<std::shared_ptr<const Program>>& variants);

  // Loads a serialized program (flatbuffers/program.fbs). Copies what it needs. Throws
  // kInvalidProgram (any malformed, hostile or inconsistent file, or constants above
  // options.max_bytes) or kVersionMismatch. Every check that needs no inflation runs first;
  // the time is linear in `size` plus the declared constant bytes.
  static std::unique_ptr<Program> Load(const void* data, size_t size,
                                       const LoadOptions& options = LoadOptions());
  // Deterministic: Load(Serialize()) serializes to the same bytes.
  std::string Serialize() const;
  // The lowest schema version that expresses this program (2: an op added in version 2 such
  // as scatter_add, roles other than data and dimension inputs, defaults, derived outputs;
  // 3: guards or several variants; else 1).
  uint32_t SchemaVersionNeeded() const;
  // Traces this program again in a new scope (see Replay). Thread-safe.
  Replay ReplayIntoTrace() const;

  // ---- Metadata (string key/value pairs, saved with the program; schema version 14) ----
  // Carried over unchanged by every transformation of a program (jvp, vjp, grad, vmap and
  // their per-variant forms), which copy the source program's metadata onto the result
  // (WithMetadataOf); create_variants keeps the first variant's (the others' metadata is
  // dropped, as their tables are variants 1.. of one program). FromTrace starts with none; a
  // subprogram (a control-flow body) has none of its own.
  const Metadata& metadata() const { return metadata_; }
  // The value of `key`, or nullptr.
  const std::string* metadata_value(const std::string& key) const;
  // A copy of this program whose metadata has `key` set to *value (nullptr: `key` removed,
  // whether or not present). Throws kInvalidArgument naming the key or value and the limit
  // (MetadataEntryProblem, at most limits::kMaxMetadataEntries entries). The copy shares this
  // program's scope and copies the rest (the constants' bytes included).
  std::unique_ptr<Program> WithMetadata(const std::string& key, const std::string* value) const;
  // `p` (a program not yet shared, just built by a transformation of `source`) with the
  // metadata of `source`.
  static std::unique_ptr<Program> WithMetadataOf(std::unique_ptr<Program> p, const Program& source);

  ~Program();
  Program& operator=(const Program&) = delete;

  const std::vector<Input>& inputs() const { return inputs_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Output>& outputs() const { return outputs_; }
  const std::vector<std::string>& buffers() const { return buffers_; }
  const std::vector<SolveStep>& solve_steps() const { return solve_; }
  // The subprograms of the control-flow nodes (cond, while_loop, scan), in order of first use
  // (the serialized table; the listing calls them #0, #1, ...).
  const std::vector<std::shared_ptr<const ops::Subprogram>>& subprograms() const {
    return subprograms_;
  }
  // The bytes of every constant: this program's buffers, its subprograms' and its variants'.
  uint64_t constant_bytes() const;
  // How deep subprograms nest in this program: 0 without any, else 1 + the deepest
  // subprogram's. A file loads only up to kMaxSubprogramDepth.
  uint32_t subprogram_depth() const;
  size_t num_values() const { return inputs_.size() + nodes_.size(); }
  const trace::TensorType& value_type(int32_t v) const;

  // Printed forms, computed at construction.
  const std::string& input_shape_string(size_t i) const { return input_shapes_[i]; }
  const std::string& output_shape_string(size_t i) const { return output_shapes_[i]; }
  const std::vector<std::string>& constraint_texts() const { return constraint_texts_; }
  const std::vector<std::string>& assertion_texts() const { return assertion_texts_; }
  const std::vector<std::string>& assertion_messages() const { return assertion_messages_; }
  // The guards of this program (of variant 0 for a multi-variant program), in order.
  const std::vector<std::string>& guard_texts() const { return guard_texts_; }
  const std::vector<std::string>& guard_messages() const { return guard_messages_; }
  const std::vector<std::string>& guard_origins() const { return guard_origins_; }

  // ---- Variants (a single-variant program is its own variant 0) ----
  size_t num_variants() const { return 1 + more_variants_.size(); }
  // Variant i: this program for 0 (whose nodes, guards and listing are variant 0's), else a
  // single-variant program.
  const Program& variant(size_t i) const { return i == 0 ? *this : *more_variants_[i - 1]; }
  // Whether the variants' guards cover every valuation the constraints allow: kTrue when
  // proven (always when a variant has no guard), kFalse with a counterexample verified by
  // evaluation, kUnknown when neither could be shown. A single-variant program with guards is
  // answered the same way: its guards are where it runs.
  dim::Truth variants_exhaustive() const { return exhaustive_; }
  // kFalse: "n = 3 satisfies the constraints and no variant's guards (...)"; else "".
  const std::string& variants_counterexample() const { return counterexample_; }
  // The first variant whose guards hold for these variable values (by name), or -1 with the
  // reasons in *why. A guard over a variable not given fails.
  int32_t VariantForValues(const std::vector<std::string>& var_names,
                           const std::vector<int64_t>& var_values, std::string* why) const;
  const std::vector<std::string>& variable_names() const { return var_names_; }
  // The readable listing: signature, variables, constraints, assertions, one line per node.
  const std::string& text() const { return text_; }
  // The program as a Graphviz DOT graph (program_dot.cc): one node per operation in
  // topological order with its attributes, edges labelled with symbolic shapes and dtypes,
  // inputs with their roles, outputs with their names, and a legend with the constraints,
  // assertions, guards and variants. Constants are folded into their consumers' labels.
  std::string ToDot() const;
  // Runs f(scope) with the program's private scope locked, for analyses that build
  // expressions over the program's shapes (cc/runtime/cost.cc). What f builds stays in the
  // scope (expressions are hash-consed, so repeating an analysis adds nothing).
  template <class F>
  auto WithScope(F&& f) const {
    std::lock_guard<std::mutex> lock(*mu_);
    return f(*scope_);
  }

  // Checks concrete input shapes (by input name; a dimension input gives its value as
  // the single entry of its "shape"), solving every variable and checking every
  // constraint, guard and assertion, and picks the variant that runs (the first whose guards
  // hold). Throws shp::Error with the precise reason (kShapeMismatch, kConstraintViolation,
  // kGuardFailed: a guard fails, or no variant applies, with each variant's first failure;
  // kNotFound, kInvalidArgument, ...). Thread-safe.
  ShapeCheck CheckShapes(const std::vector<std::string>& names,
                         const std::vector<std::vector<int64_t>>& shapes) const;
  // The concrete shape of output `i` given the values of the program's variables (by
  // name; every variable of that output's shape must be given) in variant `variant` (-1:
  // the first variant whose guards hold on these values; kGuardFailed if none). Thread-safe.
  std::vector<int64_t> OutputShape(size_t i, const std::vector<std::string>& var_names,
                                   const std::vector<int64_t>& var_values,
                                   int32_t variant = -1) const;

  // CheckShapes without a lock and without allocating strings, for the runtime: input i's
  // concrete shape is shapes[i] with ranks[i] entries, in declared order (a dimension input
  // gives its value as one entry). When every check passes, returns the variant that runs and
  // sets *values to its variables' values (by index in that variant's scope; the others 0).
  // Returns -1 when this path cannot decide: the shapes fail a check (CheckShapes then gives
  // the error), or the program needs the general solver (a dimension that is not a constant
  // multiple of its variable plus known terms, a fact over a variable no shape determines).
  // Whenever it returns a variant, CheckShapes returns the same variant and values. Reads
  // only immutable data computed at construction, so any number of threads may call it.
  // An input with a fill default that the run leaves out has ranks[i] == kAbsentRank (its
  // shape is not read: the values of the other inputs' variables give it).
  static constexpr size_t kAbsentRank = SIZE_MAX;
  int32_t TryCheckShapesLockFree(const int64_t* const* shapes, const size_t* ranks,
                                 std::vector<int64_t>* values) const;

  // ---- Data-dependent sizes (unbacked variables: nonzero, boolean_mask, size_from_value) ----
  // The node that produces scope variable `var` (the first, when several nodes produce it
  // from the same operands), or -1 for a variable solved from the inputs.
  int32_t UnbackedProducer(int32_t var) const {
    return var >= 0 && static_cast<size_t>(var) < unbacked_producer_.size()
               ? unbacked_producer_[static_cast<size_t>(var)]
               : -1;
  }
  bool has_unbacked() const { return has_unbacked_; }
  // The declared range of scope variable `var`, and the facts `var op e` that bound it: the
  // derived facts its producing op guarantees (var <= numel(x)) and the checks a run
  // enforces (var >= 1), with the variable alone on one side (written as var op e). Lock-free.
  std::pair<int64_t, int64_t> UnbackedRange(int32_t var) const {
    return var_ranges_[static_cast<size_t>(var)];
  }
  struct VarBound {
    dim::Cmp op;
    const dim::Expr* e;
  };
  const std::vector<VarBound>& UnbackedBounds(int32_t var) const {
    return unbacked_bounds_[static_cast<size_t>(var)];
  }
  // [lo, hi] of unbacked variable `var` when the other variables lie in `iv` (by scope
  // variable): its range narrowed by UnbackedBounds. Lock-free.
  std::pair<int64_t, int64_t> UnbackedInterval(
      int32_t var, const std::vector<std::pair<int64_t, int64_t>>& iv) const;
  // Checks what becomes checkable once unbacked variable `var` has its value values[var]
  // (by scope variable; the variables of the inputs and of earlier producers set): its
  // declared range, then the assertions and guards whose last unbacked variable it is.
  // Throws kConstraintViolation (kGuardFailed for a guard) naming the check, its message,
  // the producing op and the value. Lock-free.
  void CheckUnbacked(int32_t var, const std::vector<int64_t>& values) const;
  // The facts the data-dependent ops guarantee (u <= numel(x)), as printed.
  const std::vector<std::string>& derived_texts() const { return derived_texts_; }
  // Whether program variable `i` (variable_names()) is unbacked, and the op producing it.
  bool variable_is_unbacked(size_t i) const;
  const std::string& variable_origin(size_t i) const;

 private:
  class Builder;    // program_build.cc
  class DotWriter;  // program_dot.cc
  class Loader;     // program_load.h
  class Writer;     // program_write.cc
  Program();
  // A copy sharing the scope and its lock (WithMetadata): every member is a value or points
  // into the shared scope, never into this object.
  Program(const Program&) = default;
  // After scope_, inputs_, nodes_, outputs_, buffers_ are set: computes the solve recipe
  // (kUnsolvable if a variable cannot be found) and the printed forms.
  void Finalize();
  // The listing of this program alone (text() of a single-variant program), from Finalize.
  std::string Listing() const;
  void ComputeSolveRecipe();
  // After ComputeSolveRecipe: the data of TryCheckShapesLockFree (fast_*), or fast_ok_ false.
  void ComputeLockFreeCheck();
  enum class FastResult { kAccepted, kGuardFalse, kUndecided };
  // This program alone (not its variants): kGuardFalse when every check before the guards
  // passes and a guard is false (CheckShapesOwn would throw kGuardFailed).
  FastResult LockFreeCheckOwn(const int64_t* const* shapes, const size_t* ranks,
                              std::vector<int64_t>* values) const;
  // `check_facts` false: solve only (constraints, guards and assertions unchecked).
  ShapeCheck CheckShapesOwn(const std::vector<std::string>& names,
                            const std::vector<std::vector<int64_t>>& shapes,
                            bool check_facts = true) const;
  std::vector<int64_t> OutputShapeOwn(size_t i, const std::vector<std::string>& var_names,
                                      const std::vector<int64_t>& var_values) const;
  // Attaches variants 1.. (single-variant programs) to this one after checking that they fit,
  // then computes the coverage and the listing (variants.cc).
  void AttachVariants(std::vector<std::shared_ptr<const Program>> more);
  void ComputeCoverage();
  // SchemaVersionNeeded of this program without its variants.
  uint32_t OwnSchemaVersionNeeded() const;
  // The table of this program without its variants (program_write.cc).
  std::string SerializeOwn() const;
  // Refuses (kUnsupported) a program whose dimension DAG has more entries than the loader
  // accepts (limits::kMaxDagEntries), counted as Serialize writes it (program_write.cc).
  void CheckDagSize() const;
  std::string TypeString(const trace::TensorType& t) const;
  std::string AttrString(const Node& n) const;

  // Guards scope_ after construction. Both are shared with the copies WithMetadata makes (the
  // copy constructor), which read the same immutable expressions: one scope, one lock.
  std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
  std::shared_ptr<dim::Scope> scope_;
  std::vector<Input> inputs_;
  std::vector<Node> nodes_;
  std::vector<Output> outputs_;
  std::vector<std::string> buffers_;
  std::vector<SolveStep> solve_;
  std::vector<std::shared_ptr<const ops::Subprogram>> subprograms_;
  Metadata metadata_;         // of the root program only (never of a variant 1..)
  void CollectSubprograms();  // subprograms_ from nodes_ (Finalize)

  // The lock-free check: each solve step's dimension is coeff * var + rest, with rest over
  // variables of earlier steps; the facts by kind (0 constraints, 1 guards, 2 assertions) over
  // solved variables only; the declared range of every variable.
  struct FastStep {
    int32_t var, input, axis;
    int64_t coeff;
    const dim::Expr* rest;
  };
  struct FastFact {
    const dim::Expr* lhs;
    dim::Cmp op;
    const dim::Expr* rhs;
    int kind;
  };
  bool fast_ok_ = false;
  std::vector<FastStep> fast_steps_;
  std::vector<FastFact> fast_facts_;  // in the solver's order: kind, then as recorded
  std::vector<std::pair<int64_t, int64_t>> var_ranges_;

  std::vector<std::string> input_shapes_, output_shapes_;
  std::vector<std::string> constraint_texts_, assertion_texts_, assertion_messages_;
  std::vector<std::string> guard_texts_, guard_messages_, guard_origins_;
  std::vector<std::shared_ptr<const Program>> more_variants_;  // variants 1..
  bool same_input_shapes_ = true;  // every variant's inputs have variant 0's symbolic shapes
  dim::Truth exhaustive_ = dim::Truth::kTrue;
  std::string counterexample_;
  std::string own_text_;  // the listing of this program alone (variant 0)
  // Unbacked variables, by scope variable: the producing node (-1: none) and the op's words.
  std::vector<int32_t> unbacked_producer_;
  std::vector<std::string> unbacked_origin_, unbacked_name_;
  std::vector<std::vector<VarBound>> unbacked_bounds_;
  bool has_unbacked_ = false;
  struct UnbackedCheck {
    const dim::Expr* lhs;
    dim::Cmp op;
    const dim::Expr* rhs;
    std::string text, message;
    bool is_guard;
    int32_t var;  // checked once this variable is known
  };
  std::vector<UnbackedCheck> unbacked_checks_;
  std::vector<std::string> derived_texts_;
  void ComputeUnbacked();               // after nodes_ and scope_ are set (Finalize)
  std::vector<std::string> var_names_;  // variables used by the program's shapes, by index
  std::vector<int32_t> used_vars_;      // their indices in scope_
  std::string text_;
};

}  // namespace program
}  // namespace shp

#endif  // SHAPEPOLY_CC_PROGRAM_PROGRAM_H_
