// Element types of traced tensors. The numeric values are part of the C ABI (shp_dtype_t)
// and of the serialized format (shapepoly.fb.DType): never renumber them.
#ifndef SHAPEPOLY_CC_TRACE_DTYPE_H_
#define SHAPEPOLY_CC_TRACE_DTYPE_H_

#include <cstddef>
#include <cstdint>

namespace shp {
namespace trace {

enum class DType : int32_t { kF32 = 0, kF64 = 1, kI32 = 2, kI64 = 3, kBool = 4 };
constexpr int32_t kNumDTypes = 5;

inline bool IsValidDType(int32_t v) { return v >= 0 && v < kNumDTypes; }
inline bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }
inline bool IsInteger(DType t) { return t == DType::kI32 || t == DType::kI64; }
inline bool IsNumeric(DType t) { return t != DType::kBool; }

// "f32", "f64", "i32", "i64", "bool".
const char* DTypeName(DType t);
// Bytes per element (bool: 1).
size_t DTypeSize(DType t);

}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_TRACE_DTYPE_H_
