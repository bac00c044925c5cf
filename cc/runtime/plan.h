// Internal to cc/runtime: the static analysis of a program (Graph: fusion groups, aliases,
// variable mapping) and the per-shape execution plan (Plan: concrete sizes, storage, steps).
#ifndef SHAPEPOLY_CC_RUNTIME_PLAN_H_
#define SHAPEPOLY_CC_RUNTIME_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/matmul.h"
#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/parallel.h"
#include "cc/program/program.h"

namespace shp {
namespace runtime {

// A fused chain of elementwise operations: one register program whose inputs are values
// computed elsewhere and whose single output is the value `root`.
struct EwGroup {
  kernels::ElementwiseProgram prog;
  std::vector<int32_t> inputs;  // value ids feeding Input(0..)
  int32_t root = -1;
};

// Shape-independent facts about a program, computed once per runtime.
class Graph {
 public:
  // Throws shp::Error(kUnsupported) for an operation the runtime cannot execute.
  explicit Graph(const program::Program& p);

  const program::Program& p;
  size_t num_inputs = 0;
  size_t num_values = 0;
  std::vector<int32_t> uses;      // operand uses + output uses, per value
  std::vector<int32_t> group_of;  // per value: index into groups if computed by a group, else -1
  std::vector<bool> is_root;      // per value: the root of its group
  std::vector<EwGroup> groups;
  std::vector<int32_t> alias_of;  // per value: the value whose storage it shares (reshape), else -1
  // (scope variable index, position in p.variable_names()) of every variable.
  std::vector<std::pair<int32_t, int32_t>> var_pos;
  int32_t max_var = -1;
  // Per node: the right operand of an f32 matmul whose B is a rank-2 constant, packed once
  // for the matmul micro-kernel (null otherwise). Plans of every shape share it.
  std::vector<std::unique_ptr<kernels::PackedMatrixF32>> packed_b;
};

// Where a slot's bytes are at run time.
struct SlotLoc {
  enum Kind : uint8_t { kNone, kInput, kConst, kArena, kOutput, kAlias };
  Kind kind = kNone;
  int64_t index = 0;             // kInput: program input; kArena: offset; kOutput: output; kAlias: slot
  const uint8_t* ptr = nullptr;  // kConst: the bytes (program buffer or plan scalar)
};

enum class StepKind : int32_t {
  kElementwise, kRem, kCopy, kTranspose, kSlice, kPad, kConcat, kReduce, kMatmul, kIota,
  kSoftmax, kLayerNorm, kCumSum, kTake
};

struct Step {
  StepKind kind = StepKind::kCopy;
  trace::DType dtype = trace::DType::kF32;
  std::vector<int32_t> in;  // slots read
  int32_t out = -1;         // slot written
  bool threaded = false;    // pass the runtime's pool to the kernel
  std::vector<int64_t> shape, shape2, v1, v2;  // kind-specific extents
  int64_t a = 0, b = 0, c = 0;                 // kind-specific scalars
  double f = 0;
  uint64_t pad_bits = 0;                       // kPad: the padding value's bytes
  const EwGroup* group = nullptr;              // kElementwise
  std::vector<std::vector<int64_t>> strides;   // kElementwise / kRem: per input, per axis
  std::vector<kernels::ElementwiseInput> ew;   // kElementwise: data filled per run
  std::vector<const void*> ptrs;               // kConcat: filled per run
  kernels::MatmulParams mm;                    // kMatmul
  const kernels::PackedMatrixF32* packed = nullptr;  // kMatmul: B pre-packed (else null)
};

class Plan {
 public:
  // Builds the plan for variable values `vars` (indexed by scope variable) and dimension-input
  // values. Throws shp::Error (kOverflow, kUnsupported).
  Plan(const Graph& g, const std::vector<int64_t>& vars);

  std::vector<std::vector<int64_t>> shapes;  // per value
  std::vector<SlotLoc> loc;                  // per slot (values, then temporaries)
  std::vector<int64_t> slot_bytes;
  std::vector<Step> steps;
  std::vector<int64_t> scalars;              // dim_value results
  size_t arena_bytes = 0;
  std::vector<size_t> output_values;

 private:
  int32_t NewSlot(int64_t bytes, SlotLoc loc);
  Step& AddStep(StepKind kind, trace::DType dtype, std::vector<int32_t> in, int32_t out);
  void BuildNode(const Graph& g, size_t node);
  void AssignStorage(const Graph& g);

  std::vector<int64_t> vars_;
};

// The value of `e` for variable values `vars` (indexed by scope variable). Throws kOverflow /
// kDivisionByZero.
int64_t EvalDim(const dim::Expr* e, const std::vector<int64_t>& vars);

}  // namespace runtime
}  // namespace shp

#endif  // SHAPEPOLY_CC_RUNTIME_PLAN_H_
