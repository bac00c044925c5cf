// Element types of kernel operands. Plain C++ (no Highway).
#ifndef SHAPEPOLY_CC_KERNELS_DTYPE_H_
#define SHAPEPOLY_CC_KERNELS_DTYPE_H_

#include <cstddef>
#include <cstdint>

namespace shp {
namespace kernels {

// The values equal the C API's shp_dtype_t (SHP_F32 = 0, SHP_F64 = 1, SHP_I32 = 2, SHP_I64 = 3,
// SHP_BOOL = 4). kBool is stored as one byte holding 0 or 1; kernels write only 0 or 1 and
// read any non-zero byte as true.
enum class DType : int32_t { kF32 = 0, kF64 = 1, kI32 = 2, kI64 = 3, kBool = 4 };

// Bytes per element: 4, 8, 4, 8, 1. Returns 0 for a value outside the enum.
inline size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF64: return 8;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kBool: return 1;
  }
  return 0;
}

// "f32", "f64", "i32", "i64", "bool"; "invalid" for a value outside the enum. Static string.
inline const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
  }
  return "invalid";
}

inline bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }
inline bool IsInt(DType t) { return t == DType::kI32 || t == DType::kI64; }

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_DTYPE_H_
