// C API of convolution: thin thunks over the ONNX-style conv and conv_transpose of
// cc/ops/composites.
#include "c_api/c_api_internal.h"
#include "cc/ops/composites/composites.h"
#include "shapepoly/shapepoly.h"

using shp::capi::BuildTensor;
using shp::capi::TensorArg;
using shp::capi::Unwrap;
namespace composites = shp::ops::composites;

extern "C" {

shp_error_t* shp_tensor_conv(const shp_tensor_t* x, const shp_tensor_t* w, const shp_tensor_t* bias,
                             size_t num_spatial, const int64_t* strides, const int64_t* dilations,
                             const int64_t* pads, shp_auto_pad_t auto_pad, int64_t groups,
                             const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const shp::trace::Tensor* xt = TensorArg(x, "x");
    const shp::trace::Tensor* wt = TensorArg(w, "w");
    return composites::OnceInComputeType(
        "conv", {xt, wt, Unwrap(bias)}, [&](const std::vector<const shp::trace::Tensor*>& a) {
          return composites::Conv(a[0], a[1], a[2], num_spatial, strides, dilations, pads,
                                  static_cast<composites::AutoPad>(shp::capi::RawEnum(auto_pad)),
                                  groups);
        });
  });
}

shp_error_t* shp_tensor_conv_transpose(const shp_tensor_t* x, const shp_tensor_t* w,
                                       const shp_tensor_t* bias, size_t num_spatial,
                                       const int64_t* strides, const int64_t* dilations,
                                       const int64_t* pads, const int64_t* output_padding,
                                       shp_auto_pad_t auto_pad, int64_t groups,
                                       const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const shp::trace::Tensor* xt = TensorArg(x, "x");
    const shp::trace::Tensor* wt = TensorArg(w, "w");
    return composites::OnceInComputeType(
        "conv_transpose", {xt, wt, Unwrap(bias)},
        [&](const std::vector<const shp::trace::Tensor*>& a) {
          return composites::ConvTranspose(
              a[0], a[1], a[2], num_spatial, strides, dilations, pads, output_padding,
              static_cast<composites::AutoPad>(shp::capi::RawEnum(auto_pad)), groups);
        });
  });
}

}  // extern "C"
