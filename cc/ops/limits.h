// The one table of limits on programs. What can be traced can be serialized and loaded (the
// tracer, the program builder and the loader enforce the same numbers), and what loads can be
// planned: the runtime's own limits (OpDef::CheckExecutable) are checked when a runtime is
// created, never first at run time. The C header documents these values.
#ifndef SHAPEPOLY_CC_OPS_LIMITS_H_
#define SHAPEPOLY_CC_OPS_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace shp {
namespace ops {

constexpr size_t kMaxRank = 64;                                 // axes of any value
constexpr uint64_t kMaxConstantBytes = uint64_t{1} << 30;       // bytes of one constant
constexpr uint64_t kMaxTotalConstantBytes = uint64_t{1} << 32;  // bytes of all constants
constexpr size_t kMaxNodes = size_t{1} << 20;                   // operations of a program
constexpr size_t kMaxOperands = 4096;                           // operands of one operation
// Dimension expressions nest floordiv/mod/max/min at most dim::kMaxNestingDepth (1000) deep,
// in the builders as in the parser (cc/dim/scope.h).

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_LIMITS_H_
