// Element types of program values (the IR's, below cc/trace and cc/ops): the kernels' DType
// (cc/kernels/dtype.h holds the one dtype table). The numeric values are part of the C ABI
// (shp_dtype_t) and of the serialized format (shapepoly.fb.DType): never renumber them.
#ifndef SHAPEPOLY_CC_IR_DTYPE_H_
#define SHAPEPOLY_CC_IR_DTYPE_H_

#include <cstddef>
#include <cstdint>

#include "cc/kernels/dtype.h"

namespace shp {
namespace ir {

using kernels::DType;
using kernels::DTypeName;  // "f32", "f64", "i32", "i64", "bool"
using kernels::DTypeSize;  // bytes per element (bool: 1)
using kernels::IsFloat;
using kernels::IsValidDType;
using kernels::kNumDTypes;

inline bool IsInteger(DType t) { return kernels::IsInt(t); }
inline bool IsNumeric(DType t) { return t != DType::kBool; }

}  // namespace ir

// The tracer's, the ops' and the program's name for them (shp::trace::DType, ...).
namespace trace {
using ir::DType;
using ir::DTypeName;
using ir::DTypeSize;
using ir::IsFloat;
using ir::IsInteger;
using ir::IsNumeric;
using ir::IsValidDType;
using ir::kNumDTypes;
}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_IR_DTYPE_H_
