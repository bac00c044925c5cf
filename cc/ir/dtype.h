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

using kernels::ComputeDType;
using kernels::DType;
using kernels::DTypeName;  // "f32", "f64", "i32", "i64", "bool", "f16", ...
using kernels::DTypeSize;  // bytes per element (bool: 1)
using kernels::IsAnyFloat;
using kernels::IsAnyInt;
using kernels::IsFloat;  // the compute floats f32, f64 (IsAnyFloat adds f16, bf16)
using kernels::IsNarrow;
using kernels::IsNarrowFloat;
using kernels::IsNarrowInt;
using kernels::IsUnsigned;
using kernels::IsValidDType;
using kernels::kNumDTypes;

inline bool IsInteger(DType t) { return kernels::IsInt(t); }
// The compute types' classes: what the arithmetic of the ops takes (narrow types are computed
// in their ComputeDType, cc/trace/narrow.cc).
inline bool IsNumeric(DType t) { return kernels::IsFloat(t) || kernels::IsInt(t); }

}  // namespace ir

// The tracer's, the ops' and the program's name for them (shp::trace::DType, ...).
namespace trace {
using ir::ComputeDType;
using ir::DType;
using ir::DTypeName;
using ir::DTypeSize;
using ir::IsAnyFloat;
using ir::IsAnyInt;
using ir::IsFloat;
using ir::IsInteger;
using ir::IsNarrow;
using ir::IsNarrowFloat;
using ir::IsNarrowInt;
using ir::IsNumeric;
using ir::IsUnsigned;
using ir::IsValidDType;
using ir::kNumDTypes;
}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_IR_DTYPE_H_
