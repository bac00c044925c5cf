// Element types of kernel operands, and the error convention every kernel follows. Plain C++
// (no Highway).
//
// Error convention of the kernels (one for all):
//   - A kernel entry point returns bool: true when it ran, false when it rejected its arguments
//     (an op or dtype it does not define, a negative extent, a rank beyond its limit, null data
//     for a non-empty array, parameters that do not match, ...). On false it has written
//     nothing. Callers validate first, so false means a caller bug (the runtime reports it as an
//     internal error).
//   - An outcome that still produces the whole output is reported through an out-parameter:
//     Take / TakeAlongAxis write with clamped indices and report the first invalid index in a
//     BadIndex (gather.h).
//   - Kernels throw nothing for bad arguments. The only exceptions that pass through are
//     std::bad_alloc (scratch or packing memory) and an exception thrown by a ThreadPool task.
//   - Functions without a failure mode return their value (SumF32, SimdTargetName).
//   - Builders run once when a computation is planned, not per call: ElementwiseProgram throws
//     std::invalid_argument with a message that names the misuse; PackedMatrixF32::Pack
//     returns an empty matrix for negative extents (which MatmulF32Prepacked then rejects).
#ifndef SHAPEPOLY_CC_KERNELS_DTYPE_H_
#define SHAPEPOLY_CC_KERNELS_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace shp {
namespace kernels {

// The values equal the C API's shp_dtype_t (SHP_F32 = 0, SHP_F64 = 1, SHP_I32 = 2, SHP_I64 = 3,
// SHP_BOOL = 4). kBool is stored as one byte holding 0 or 1; kernels write only 0 or 1 and
// read any non-zero byte as true.
enum class DType : int32_t { kF32 = 0, kF64 = 1, kI32 = 2, kI64 = 3, kBool = 4 };
constexpr int32_t kNumDTypes = 5;

// The one dtype table of the library, by enum value: name and bytes per element.
struct DTypeInfo {
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypeTable[kNumDTypes] = {
    {"f32", 4}, {"f64", 8}, {"i32", 4}, {"i64", 8}, {"bool", 1}};

constexpr bool IsValidDType(int32_t v) { return v >= 0 && v < kNumDTypes; }

// Bytes per element: 4, 8, 4, 8, 1. Returns 0 for a value outside the enum.
constexpr size_t DTypeSize(DType t) {
  return IsValidDType(static_cast<int32_t>(t)) ? kDTypeTable[static_cast<int32_t>(t)].size : 0;
}

// "f32", "f64", "i32", "i64", "bool"; "invalid" for a value outside the enum. Static string.
constexpr const char* DTypeName(DType t) {
  return IsValidDType(static_cast<int32_t>(t)) ? kDTypeTable[static_cast<int32_t>(t)].name
                                               : "invalid";
}

// The DType of a C++ element type (bool elements are uint8_t): DTypeOf<float>() == kF32, ...
template <class T>
constexpr DType DTypeOf() {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value ||
                    std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value ||
                    std::is_same<T, uint8_t>::value,
                "no DType for this element type");
  return std::is_same<T, float>::value     ? DType::kF32
         : std::is_same<T, double>::value  ? DType::kF64
         : std::is_same<T, int32_t>::value ? DType::kI32
         : std::is_same<T, int64_t>::value ? DType::kI64
                                           : DType::kBool;
}

constexpr bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }
constexpr bool IsInt(DType t) { return t == DType::kI32 || t == DType::kI64; }

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_DTYPE_H_
