// C API: ops whose result size comes from the data (nonzero, boolean_mask, size_from_value).
// Each makes a new unbacked dimension variable (cc/ops/data_dependent.cc).
#include <cstdint>
#include <string>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/trace/trace.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
using shp::capi::BuildTensor;
using shp::capi::TensorArg;
using shp::capi::Wrap;

shp_error_t* shp_tensor_nonzero(const shp_tensor_t* x, const shp_tensor_t** indices_out) {
  return BuildTensor(indices_out, [&] {
    const shp::trace::Tensor* t = TensorArg(x, "x");
    return t->owner->Nonzero(t);
  });
}

shp_error_t* shp_tensor_boolean_mask(const shp_tensor_t* x, const shp_tensor_t* mask, int64_t axis,
                                     const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const shp::trace::Tensor* t = TensorArg(x, "x");
    return t->owner->BooleanMask(t, TensorArg(mask, "mask"), axis);
  });
}

shp_error_t* shp_tensor_size_from_value(const shp_tensor_t* value, const char* name, int64_t min,
                                        int64_t max, const shp_dim_t** dim_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(dim_out, "dim_out");
  const shp::trace::Tensor* t = TensorArg(value, "value");
  if (min < 0) {
    throw Error(Code::kInvalidArgument,
                "size_from_value: min is " + std::to_string(min) + ", but a size is >= 0");
  }
  if (max < min) {
    throw Error(Code::kInvalidArgument, "size_from_value: the range [" + std::to_string(min) +
                                            ", " + std::to_string(max) + "] is empty");
  }
  *dim_out = Wrap(t->owner->SizeFromValue(t, name == nullptr ? "" : name, min, max));
  return nullptr;
  SHP_API_END
}
