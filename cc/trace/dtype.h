// Element types of traced tensors: the kernels' DType (cc/kernels/dtype.h holds the one dtype
// table). The numeric values are part of the C ABI (shp_dtype_t) and of the serialized format
// (shapepoly.fb.DType): never renumber them.
#ifndef SHAPEPOLY_CC_TRACE_DTYPE_H_
#define SHAPEPOLY_CC_TRACE_DTYPE_H_

#include <cstddef>
#include <cstdint>

#include "cc/kernels/dtype.h"

namespace shp {
namespace trace {

using kernels::DType;
using kernels::DTypeName;  // "f32", "f64", "i32", "i64", "bool"
using kernels::DTypeSize;  // bytes per element (bool: 1)
using kernels::IsFloat;
using kernels::IsValidDType;
using kernels::kNumDTypes;

inline bool IsInteger(DType t) { return kernels::IsInt(t); }
inline bool IsNumeric(DType t) { return t != DType::kBool; }

}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_TRACE_DTYPE_H_
