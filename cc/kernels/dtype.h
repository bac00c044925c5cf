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
// SHP_BOOL = 4, SHP_F16 = 5, SHP_BF16 = 6, SHP_I8 = 7, SHP_U8 = 8, SHP_I16 = 9, SHP_U16 = 10,
// SHP_U32 = 11, SHP_U64 = 12). kBool is stored as one byte holding 0 or 1; kernels write only
// 0 or 1 and read any non-zero byte as true. kF16 is IEEE binary16, kBF16 the upper half of an
// IEEE binary32 (bfloat16); both are stored as their 16 bits.
//
// The compute types are f32, f64, i32, i64 and bool: the kernels compute in them. The narrow
// types (f16 .. u64) are storage types: an operation on them computes in their compute type
// (ComputeDType) and rounds or wraps once on store (cc/trace/narrow.cc), except the operations
// that only move elements (cc/ops/narrow.cc lists them), which take every type.
enum class DType : int32_t {
  kF32 = 0,
  kF64 = 1,
  kI32 = 2,
  kI64 = 3,
  kBool = 4,
  kF16 = 5,
  kBF16 = 6,
  kI8 = 7,
  kU8 = 8,
  kI16 = 9,
  kU16 = 10,
  kU32 = 11,
  kU64 = 12
};
constexpr int32_t kNumDTypes = 13;

// The one dtype table of the library, by enum value: name and bytes per element.
struct DTypeInfo {
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypeTable[kNumDTypes] = {
    {"f32", 4}, {"f64", 8}, {"i32", 4}, {"i64", 8}, {"bool", 1}, {"f16", 2}, {"bf16", 2},
    {"i8", 1},  {"u8", 1},  {"i16", 2}, {"u16", 2}, {"u32", 4},  {"u64", 8}};

constexpr bool IsValidDType(int32_t v) { return v >= 0 && v < kNumDTypes; }

// Bytes per element: 4, 8, 4, 8, 1, 2, 2, 1, 1, 2, 2, 4, 8. Returns 0 for a value outside the
// enum.
constexpr size_t DTypeSize(DType t) {
  return IsValidDType(static_cast<int32_t>(t)) ? kDTypeTable[static_cast<int32_t>(t)].size : 0;
}

// "f32", "f64", "i32", "i64", "bool", "f16", "bf16", "i8", "u8", "i16", "u16", "u32", "u64";
// "invalid" for a value outside the enum. Static string.
constexpr const char* DTypeName(DType t) {
  return IsValidDType(static_cast<int32_t>(t)) ? kDTypeTable[static_cast<int32_t>(t)].name
                                               : "invalid";
}

// The DType of a C++ element type of a compute type (bool elements are uint8_t):
// DTypeOf<float>() == kF32, ...
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

// The compute types' classes (what the kernels of arithmetic take).
constexpr bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }
constexpr bool IsInt(DType t) { return t == DType::kI32 || t == DType::kI64; }

// The narrow (storage) types.
constexpr bool IsNarrowFloat(DType t) { return t == DType::kF16 || t == DType::kBF16; }
constexpr bool IsNarrowInt(DType t) {
  return t == DType::kI8 || t == DType::kU8 || t == DType::kI16 || t == DType::kU16 ||
         t == DType::kU32 || t == DType::kU64;
}
constexpr bool IsNarrow(DType t) { return IsNarrowFloat(t) || IsNarrowInt(t); }
constexpr bool IsUnsigned(DType t) {
  return t == DType::kU8 || t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
}
// Any floating-point or any integer type, narrow or not.
constexpr bool IsAnyFloat(DType t) { return IsFloat(t) || IsNarrowFloat(t); }
constexpr bool IsAnyInt(DType t) { return IsInt(t) || IsNarrowInt(t); }

// The type a narrow type computes in: f16, bf16 -> f32; i8, u8, i16, u16 -> i32 (every value
// fits, and wrapping i32 arithmetic truncated to the narrow width is the narrow type's wrapping
// arithmetic); u32 -> i64 (likewise); u64 -> i64 (the same bits: exact for the ring operations;
// cc/trace/narrow.cc maps the ordered ones by flipping the sign bit). Compute types map to
// themselves.
constexpr DType ComputeDType(DType t) {
  return IsNarrowFloat(t)                         ? DType::kF32
         : (t == DType::kU32 || t == DType::kU64) ? DType::kI64
         : IsNarrowInt(t)                         ? DType::kI32
                                                  : t;
}

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_DTYPE_H_
