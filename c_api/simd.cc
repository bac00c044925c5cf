// SIMD queries and kernels (thin thunks over cc/kernels); shp_simd_sum_f32 is experimental
// (shapepoly_experimental.h).
#include <cstddef>
#include <string>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/kernels/simd_target.h"
#include "cc/kernels/sum.h"
#include "shapepoly/shapepoly.h"
#include "shapepoly/shapepoly_experimental.h"

extern "C" {

const char* shp_simd_target(void) { return shp::kernels::SimdTargetName(); }

shp_error_t* shp_set_simd_target(const char* name) {
  SHP_API_BEGIN
  std::string message;
  switch (shp::kernels::SetSimdTarget(name, &message)) {
    case shp::kernels::SimdTargetStatus::kOk:
      return nullptr;
    case shp::kernels::SimdTargetStatus::kUnknownName:
      throw shp::Error(shp::Code::kInvalidArgument, message);
    case shp::kernels::SimdTargetStatus::kNotCompiled:
    case shp::kernels::SimdTargetStatus::kNotSupported:
      throw shp::Error(shp::Code::kUnsupported, message);
  }
  throw shp::Error(shp::Code::kInternal, "unexpected SetSimdTarget status");
  SHP_API_END
}

shp_error_t* shp_simd_sum_f32(const float* data, size_t n, float* sum_out) {
  SHP_API_BEGIN
  if (data == nullptr && n > 0) {
    throw shp::Error(shp::Code::kInvalidArgument, "argument 'data' must not be NULL when n > 0");
  }
  SHP_REQUIRE_ARG(sum_out, "sum_out");
  *sum_out = shp::kernels::SumF32(data, n);
  return nullptr;
  SHP_API_END
}

}  // extern "C"
