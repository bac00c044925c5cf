// C API of windowed reductions and pooling (ONNX MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool): reduce_window records its op; the pools are thunks over
// cc/ops/composites.
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/ops/attrs.h"
#include "cc/ops/composites/composites.h"
#include "cc/trace/trace.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
using shp::capi::BuildTensor;
using shp::capi::TensorArg;
using shp::capi::Unwrap;
namespace composites = shp::ops::composites;
namespace ops = shp::ops;
namespace trace = shp::trace;

static_assert(SHP_AUTO_PAD_NOTSET == static_cast<int>(composites::AutoPad::kNotSet), "auto_pad");
static_assert(SHP_AUTO_PAD_SAME_UPPER == static_cast<int>(composites::AutoPad::kSameUpper),
              "auto_pad");
static_assert(SHP_AUTO_PAD_SAME_LOWER == static_cast<int>(composites::AutoPad::kSameLower),
              "auto_pad");
static_assert(SHP_AUTO_PAD_VALID == static_cast<int>(composites::AutoPad::kValid), "auto_pad");

extern "C" {

shp_error_t* shp_tensor_reduce_window(shp_reduce_op_t op, const shp_tensor_t* x,
                                      const int64_t* window, const int64_t* strides,
                                      const int64_t* window_dilation, const int64_t* base_dilation,
                                      const shp_dim_t* const* pad_low,
                                      const shp_dim_t* const* pad_high, size_t rank,
                                      const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const int32_t raw = shp::capi::RawEnum(op);
    ops::WindowAttrs a;
    if (raw == SHP_REDUCE_SUM) {
      a.reduction = ops::OpKind::kReduceSum;
    } else if (raw == SHP_REDUCE_MAX) {
      a.reduction = ops::OpKind::kReduceMax;
    } else if (raw == SHP_REDUCE_MIN) {
      a.reduction = ops::OpKind::kReduceMin;
    } else {
      throw Error(Code::kInvalidArgument,
                  "argument 'op' must be SHP_REDUCE_SUM, SHP_REDUCE_MAX or SHP_REDUCE_MIN, got " +
                      std::to_string(raw));
    }
    const trace::Tensor* t = TensorArg(x, "x");
    SHP_REQUIRE_ARG(window, "window");
    a.window.assign(window, window + rank);
    auto ints = [&](const int64_t* v, std::vector<int64_t>* out) {
      if (v != nullptr) out->assign(v, v + rank);
    };
    ints(strides, &a.strides);
    ints(window_dilation, &a.window_dilation);
    ints(base_dilation, &a.base_dilation);
    auto dims = [&](const shp_dim_t* const* v, const char* name, ops::Shape* out) {
      if (v == nullptr) return;
      for (size_t i = 0; i < rank; ++i) {
        if (v[i] == nullptr) {
          throw Error(Code::kInvalidArgument,
                      std::string(name) + "[" + std::to_string(i) + "] is NULL");
        }
        out->push_back(Unwrap(v[i]));
      }
    };
    dims(pad_low, "pad_low", &a.pad_low);
    dims(pad_high, "pad_high", &a.pad_high);
    return t->owner->Apply(ops::OpKind::kReduceWindow, a, {t});
  });
}

shp_error_t* shp_tensor_max_pool(const shp_tensor_t* x, size_t num_spatial,
                                 const int64_t* kernel_shape, const int64_t* strides,
                                 const int64_t* dilations, const int64_t* pads,
                                 shp_auto_pad_t auto_pad, bool ceil_mode,
                                 const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::MaxPool(TensorArg(x, "x"), num_spatial, kernel_shape, strides, dilations,
                               pads, static_cast<composites::AutoPad>(shp::capi::RawEnum(auto_pad)),
                               ceil_mode);
  });
}

shp_error_t* shp_tensor_avg_pool(const shp_tensor_t* x, size_t num_spatial,
                                 const int64_t* kernel_shape, const int64_t* strides,
                                 const int64_t* dilations, const int64_t* pads,
                                 shp_auto_pad_t auto_pad, bool ceil_mode, bool count_include_pad,
                                 const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType(
        "avg_pool", {TensorArg(x, "x")}, [&](const std::vector<const shp::trace::Tensor*>& a) {
          return composites::AvgPool(a[0], num_spatial, kernel_shape, strides, dilations, pads,
                                     static_cast<composites::AutoPad>(shp::capi::RawEnum(auto_pad)),
                                     ceil_mode, count_include_pad);
        });
  });
}

shp_error_t* shp_tensor_global_avg_pool(const shp_tensor_t* x, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] { return composites::GlobalAvgPool(TensorArg(x, "x")); });
}

shp_error_t* shp_tensor_global_max_pool(const shp_tensor_t* x, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] { return composites::GlobalMaxPool(TensorArg(x, "x")); });
}

}  // extern "C"
