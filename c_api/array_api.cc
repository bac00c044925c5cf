// C API of arrays: owned (aligned, zeroed) or borrowed n-d arrays.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "c_api/array_internal.h"
#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/ir/dtype.h"

namespace shp {
namespace capi {

size_t ArrayBytes(const shp_dtype_t& dtype, const int64_t* shape, size_t rank) {
  if (!trace::IsValidDType(shp::capi::RawEnum(dtype))) {
    throw Error(Code::kInvalidArgument,
                "invalid dtype " + std::to_string(shp::capi::RawEnum(dtype)));
  }
  if (rank > 0) RequireArg(shape, "shape");
  uint64_t bytes = trace::DTypeSize(static_cast<trace::DType>(dtype));
  for (size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) {
      throw Error(Code::kInvalidArgument, "dimension " + std::to_string(i) + " is negative (" +
                                              std::to_string(shape[i]) + ")");
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[i]), &bytes) ||
        bytes > static_cast<uint64_t>(INT64_MAX)) {
      throw Error(Code::kOverflow, "the array's byte size overflows");
    }
  }
  return static_cast<size_t>(bytes);
}

namespace {
// An owned array is one malloc block: the shp_array object at its start (so free(array)
// releases it), then its data at the next 64-byte boundary (so creating and destroying an
// array costs one malloc/free, its dims in the object up to ArrayShape::kInline of them).
// Plain malloc, not aligned_alloc: glibc's memalign splits and frees around every block,
// several times slower for the small outputs of a cached run.
constexpr size_t kHeaderSlack = sizeof(shp_array) + 63;
}  // namespace

shp_array* NewOwnedArray(const shp_dtype_t& dtype, const int64_t* shape, size_t rank) {
  size_t nbytes = ArrayBytes(dtype, shape, rank);
  size_t data_alloc = (std::max<size_t>(nbytes, 1) + 63) / 64 * 64;
  static_assert(alignof(shp_array) <= alignof(std::max_align_t), "malloc aligns the header");
  void* mem = std::malloc(kHeaderSlack + data_alloc);
  if (mem == nullptr) throw std::bad_alloc();
  shp_array* a = new (mem) shp_array;
  try {
    a->shape.assign(shape, shape + rank);
  } catch (...) {
    a->~shp_array();
    std::free(mem);
    throw;
  }
  a->dtype = dtype;
  const uintptr_t after = reinterpret_cast<uintptr_t>(mem) + sizeof(shp_array);
  a->data = reinterpret_cast<void*>((after + 63) / 64 * 64);
  std::memset(a->data, 0, data_alloc);
  a->nbytes = nbytes;
  a->owned = true;
  return a;
}

}  // namespace capi
}  // namespace shp

extern "C" {

shp_error_t* shp_array_create(shp_dtype_t dtype, const int64_t* shape, size_t rank,
                              shp_array_t** array_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(array_out, "array_out");
  *array_out = shp::capi::NewOwnedArray(dtype, shape, rank);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_array_wrap(shp_dtype_t dtype, const int64_t* shape, size_t rank, void* data,
                            size_t nbytes, shp_array_t** array_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(array_out, "array_out");
  size_t want = shp::capi::ArrayBytes(dtype, shape, rank);
  if (nbytes != want) {
    throw shp::Error(shp::Code::kInvalidArgument, "nbytes is " + std::to_string(nbytes) +
                                                      " but the shape and dtype need " +
                                                      std::to_string(want) + " bytes");
  }
  if (nbytes > 0) SHP_REQUIRE_ARG(data, "data");
  std::unique_ptr<shp_array> a(new shp_array);
  a->dtype = dtype;
  a->shape.assign(shape, shape + rank);
  a->data = data;
  a->nbytes = nbytes;
  a->owned = false;
  *array_out = a.release();
  return nullptr;
  SHP_API_END
}

void* shp_array_data(const shp_array_t* array) { return array ? array->data : nullptr; }

size_t shp_array_nbytes(const shp_array_t* array) { return array ? array->nbytes : 0; }

shp_dtype_t shp_array_dtype(const shp_array_t* array) {
  return array ? array->dtype : static_cast<shp_dtype_t>(-1);
}

size_t shp_array_rank(const shp_array_t* array) { return array ? array->shape.size() : 0; }

const int64_t* shp_array_shape(const shp_array_t* array) {
  return array ? array->shape.data() : nullptr;
}

void shp_array_destroy(shp_array_t* array) {
  if (array == nullptr) return;
  if (array->owned) {  // one allocation with its data (NewOwnedArray)
    array->~shp_array();
    std::free(array);
    return;
  }
  delete array;
}

}  // extern "C"
