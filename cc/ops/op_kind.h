// OpKind: the internal name of every operation, generated from cc/ops/op_list.h. Its values
// are the serialized OpCode values (checked against the schema at compile time). Nothing may
// assume that the values of a family are contiguous: ask the op's definition (op_def.h).
#ifndef SHAPEPOLY_CC_OPS_OP_KIND_H_
#define SHAPEPOLY_CC_OPS_OP_KIND_H_

#include <cstddef>
#include <cstdint>

#include "cc/ops/op_list.h"

namespace shp {
namespace ops {

enum class OpKind : int32_t {
#define SHP_OP_ENUM(Name, FB, code, text, ...) k##Name = code,
  SHP_ALL_OPS(SHP_OP_ENUM)
#undef SHP_OP_ENUM
};

// The number of operations.
constexpr size_t kNumOpKinds = 0
#define SHP_OP_COUNT(...) +1
    SHP_ALL_OPS(SHP_OP_COUNT)
#undef SHP_OP_COUNT
    ;

// Every OpKind, in list order.
constexpr OpKind kAllOpKinds[] = {
#define SHP_OP_ALL(Name, ...) OpKind::k##Name,
    SHP_ALL_OPS(SHP_OP_ALL)
#undef SHP_OP_ALL
};

// Family membership, generated from the list (never from numeric ranges).
#define SHP_OP_CASE(Name, ...) case OpKind::k##Name:
#define SHP_OP_FAMILY(Function, LIST) \
  constexpr bool Function(OpKind k) { \
    switch (k) {                      \
      LIST(SHP_OP_CASE) return true;  \
      default:                        \
        return false;                 \
    }                                 \
  }
SHP_OP_FAMILY(IsUnary, SHP_UNARY_OPS)
SHP_OP_FAMILY(IsBinary, SHP_BINARY_OPS)
SHP_OP_FAMILY(IsCompare, SHP_COMPARE_OPS)
SHP_OP_FAMILY(IsReduce, SHP_REDUCE_OPS)
#undef SHP_OP_FAMILY
#undef SHP_OP_CASE

// Whether `code` is the value of some OpKind (for values read from files or the C API).
bool IsValidOpKind(int32_t code);

// Lower-case name used in messages and listings: "add", "reduce_sum", "dot_general".
const char* OpName(OpKind k);

}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_OP_KIND_H_
