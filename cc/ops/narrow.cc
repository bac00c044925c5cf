// Which operations take the narrow element types (f16, bf16, i8, u8, i16, u16, u32, u64;
// cc/kernels/dtype.h) as they are. Only the ones that move elements without computing with
// them: their kernels copy elements by size. The tracer computes every other operation in the
// compute type and rounds or wraps once on store (cc/trace/narrow.cc), so programs hold narrow
// values only as inputs, outputs, constants, conversions and these operations.
#include "cc/ops/op_def.h"

namespace shp {
namespace ops {

bool TakesNarrowTypes(OpKind op) {
  switch (op) {
    case OpKind::kConstant:
    case OpKind::kConvert:
    case OpKind::kSelect:
    case OpKind::kBroadcastTo:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kConcatenate:
    case OpKind::kSlice:
    case OpKind::kPad:
    case OpKind::kTake:
    case OpKind::kTakeAlongAxis:
    case OpKind::kReverse:
    case OpKind::kTrilu:
    case OpKind::kBooleanMask:
    case OpKind::kCond:
    case OpKind::kWhileLoop:
    case OpKind::kScan:
      return true;
    default:
      return false;
  }
}

bool IsIndexOperand(OpKind op, size_t k) {
  return k == 1 && (op == OpKind::kTake || op == OpKind::kTakeAlongAxis ||
                    op == OpKind::kScatterAdd || op == OpKind::kScatter);
}

}  // namespace ops
}  // namespace shp
