// What a program costs, for every shape at once (shp_program_cost): floating-point operations,
// bytes accessed, peak memory and parameter bytes as dim expressions over the program's
// variables, with sound bounds under its constraints.
//
//   kFlops           the sum of each operation's rule (ops::OpDef::Flops, docs/ops.md),
//                    a multiply-add counted as 2.
//   kBytesAccessed   per operation (as traced, before fusion; constants excluded): the bytes
//                    of its operands read plus its result written.
//   kPeakBytes       the output bytes plus the runtime's arena under its own planning rules
//                    (memory.cc): buffers that are never live at once share a region, a
//                    region is as large as its largest buffer (64-byte aligned), and the
//                    arena is the sum of the regions. The runtime never uses more (it takes
//                    first-fit offsets only when they need less).
//   kParameterBytes  the inputs with the parameter role plus the constants (weights).
// A multi-variant program's formulas are those of one variant (0 unless given).
#ifndef SHAPEPOLY_CC_RUNTIME_COST_H_
#define SHAPEPOLY_CC_RUNTIME_COST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cc/dim/scope.h"
#include "cc/program/program.h"

namespace shp {
namespace runtime {

// Values of shp_cost_kind_t.
enum class CostKind : int32_t {
  kFlops = 0,
  kBytesAccessed = 1,
  kPeakBytes = 2,
  kParameterBytes = 3,
};
constexpr int32_t kNumCostKinds = 4;
// "flops", "bytes accessed", "peak bytes", "parameter bytes".
const char* CostKindName(CostKind kind);

struct Cost {
  std::string formula;   // in the dim syntax, e.g. "1605632*batch + 3328"
  dim::Interval bounds;  // sound, under the program's declared ranges and constraints
  // When bounds.hi is unbounded: which variables make it so and how to bound them.
  std::string unbounded_reason;
};

// The cost of kind `kind` of variant `variant` of `p`. Throws shp::Error: kInvalidArgument (a
// kind or variant out of range), kUnsupported (kPeakBytes of a program the runtime cannot
// plan).
Cost ProgramCost(const program::Program& p, CostKind kind, size_t variant = 0);

// The cost for concrete variable values (by name, as program::ShapeCheck gives them). Throws
// kInvalidArgument (a variable of the formula missing), kOverflow.
int64_t CostValue(const program::Program& p, CostKind kind, size_t variant,
                  const std::vector<std::string>& var_names, const std::vector<int64_t>& values);

// The same for variable values indexed by the program's scope variables (as a plan holds
// them; the variant's scope).
int64_t CostValueAt(const program::Program& p, CostKind kind, size_t variant,
                    const std::vector<int64_t>& scope_values);

}  // namespace runtime
}  // namespace shp

#endif  // SHAPEPOLY_CC_RUNTIME_COST_H_
