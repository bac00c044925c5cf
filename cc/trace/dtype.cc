#include "cc/trace/dtype.h"

namespace shp {
namespace trace {

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
  }
  return "?";
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF64: return 8;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kBool: return 1;
  }
  return 0;
}

}  // namespace trace
}  // namespace shp
