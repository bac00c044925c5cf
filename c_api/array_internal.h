// Internal to c_api/: the object behind shp_array_t (shared by array_api.cc and
// runtime_api.cc). NOT installed, NOT public.
#ifndef SHAPEPOLY_C_API_ARRAY_INTERNAL_H_
#define SHAPEPOLY_C_API_ARRAY_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shapepoly/shapepoly.h"

struct shp_array {
  shp_dtype_t dtype = SHP_F32;
  std::vector<int64_t> shape;
  void* data = nullptr;
  size_t nbytes = 0;
  bool owned = false;  // one malloc block with its data (NewOwnedArray)
};

namespace shp {
namespace capi {

// Validates dtype and shape and returns the byte size. Throws shp::Error (kInvalidArgument,
// kOverflow).
size_t ArrayBytes(const shp_dtype_t& dtype, const int64_t* shape, size_t rank);

// A new array owning zeroed, 64-byte aligned memory. Throws shp::Error or std::bad_alloc.
shp_array* NewOwnedArray(const shp_dtype_t& dtype, const int64_t* shape, size_t rank);

}  // namespace capi
}  // namespace shp

#endif  // SHAPEPOLY_C_API_ARRAY_INTERNAL_H_
