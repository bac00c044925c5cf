// Internal to c_api/: the object behind shp_array_t (shared by array_api.cc and
// runtime_api.cc). NOT installed, NOT public.
#ifndef SHAPEPOLY_C_API_ARRAY_INTERNAL_H_
#define SHAPEPOLY_C_API_ARRAY_INTERNAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "shapepoly/shapepoly.h"

namespace shp {
namespace capi {

// An array's dims: up to kInline in the object, more on the heap (so an output created by a
// run is one allocation, not two).
class ArrayShape {
 public:
  static constexpr size_t kInline = 6;
  ArrayShape() = default;
  ArrayShape(const ArrayShape&) = delete;
  ArrayShape& operator=(const ArrayShape&) = delete;
  // Throws std::bad_alloc (the old dims kept).
  void assign(const int64_t* begin, const int64_t* end) {
    const size_t n = static_cast<size_t>(end - begin);
    if (n > kInline) {
      std::unique_ptr<int64_t[]> h(new int64_t[n]);
      std::copy(begin, end, h.get());
      heap_ = std::move(h);
    } else {
      std::copy(begin, end, inline_);
      heap_.reset();
    }
    size_ = n;
  }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t operator[](size_t i) const { return data()[i]; }

 private:
  int64_t inline_[kInline] = {};
  std::unique_ptr<int64_t[]> heap_;
  size_t size_ = 0;
};

}  // namespace capi
}  // namespace shp

struct shp_array {
  shp_dtype_t dtype = SHP_F32;
  shp::capi::ArrayShape shape;
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
