// C API of the neural-network building blocks (ONNX semantics): thin thunks over the
// composites of cc/ops/composites (activations, log_softmax, batch_norm, lrn, pad modes,
// depth_to_space and space_to_depth).
#include <cstdint>
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/ops/composites/composites.h"
#include "cc/trace/trace.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
using shp::capi::BuildTensor;
using shp::capi::Unwrap;
namespace composites = shp::ops::composites;
namespace dim = shp::dim;

static_assert(SHP_PAD_CONSTANT == static_cast<int>(composites::PadMode::kConstant), "modes");
static_assert(SHP_PAD_REFLECT == static_cast<int>(composites::PadMode::kReflect), "modes");
static_assert(SHP_PAD_EDGE == static_cast<int>(composites::PadMode::kEdge), "modes");
static_assert(SHP_DEPTH_TO_SPACE_DCR == static_cast<int>(composites::DepthToSpaceMode::kDcr),
              "modes");
static_assert(SHP_DEPTH_TO_SPACE_CRD == static_cast<int>(composites::DepthToSpaceMode::kCrd),
              "modes");

namespace {

// The `rank` dims of the array argument `name` of pad_mode, each of the scope of `x`.
std::vector<const dim::Expr*> PadDims(const shp::trace::Tensor* x, const shp_dim_t* const* dims,
                                      size_t rank, const char* name) {
  if (rank > 0) SHP_REQUIRE_ARG(dims, name);
  std::vector<const dim::Expr*> out;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] == nullptr) {
      throw Error(Code::kInvalidArgument,
                  std::string("pad_mode: ") + name + "[" + std::to_string(i) + "] is NULL");
    }
    const dim::Expr* e = Unwrap(dims[i]);
    x->owner->dims()->CheckSameScope(e, e, "pad_mode");
    out.push_back(e);
  }
  return out;
}

}  // namespace

extern "C" {

shp_error_t* shp_tensor_leaky_relu(const shp_tensor_t* x, double alpha,
                                   const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("leaky_relu", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::LeakyRelu(a[0], alpha);
                                         });
  });
}

shp_error_t* shp_tensor_prelu(const shp_tensor_t* x, const shp_tensor_t* slope,
                              const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("prelu", {Unwrap(x), Unwrap(slope)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::Prelu(a[0], a[1]);
                                         });
  });
}

shp_error_t* shp_tensor_elu(const shp_tensor_t* x, double alpha, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("elu", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::Elu(a[0], alpha);
                                         });
  });
}

shp_error_t* shp_tensor_selu(const shp_tensor_t* x, double alpha, double gamma,
                             const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("selu", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::Selu(a[0], alpha, gamma);
                                         });
  });
}

shp_error_t* shp_tensor_softplus(const shp_tensor_t* x, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("softplus", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::Softplus(a[0]);
                                         });
  });
}

shp_error_t* shp_tensor_softsign(const shp_tensor_t* x, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("softsign", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::Softsign(a[0]);
                                         });
  });
}

shp_error_t* shp_tensor_clip(const shp_tensor_t* x, double min, double max,
                             const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] { return composites::Clip(Unwrap(x), min, max); });
}

shp_error_t* shp_tensor_hard_sigmoid(const shp_tensor_t* x, double alpha, double beta,
                                     const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("hard_sigmoid", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::HardSigmoid(a[0], alpha, beta);
                                         });
  });
}

shp_error_t* shp_tensor_log_softmax(const shp_tensor_t* x, int64_t axis,
                                    const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("log_softmax", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::LogSoftmax(a[0], axis);
                                         });
  });
}

shp_error_t* shp_tensor_batch_norm(const shp_tensor_t* x, const shp_tensor_t* scale,
                                   const shp_tensor_t* bias, const shp_tensor_t* mean,
                                   const shp_tensor_t* var, double epsilon,
                                   const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType(
        "batch_norm", {Unwrap(x), Unwrap(scale), Unwrap(bias), Unwrap(mean), Unwrap(var)},
        [&](const std::vector<const shp::trace::Tensor*>& a) {
          return composites::BatchNorm(a[0], a[1], a[2], a[3], a[4], epsilon);
        });
  });
}

shp_error_t* shp_tensor_lrn(const shp_tensor_t* x, int64_t size, double alpha, double beta,
                            double bias, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::OnceInComputeType("lrn", {Unwrap(x)},
                                         [&](const std::vector<const shp::trace::Tensor*>& a) {
                                           return composites::Lrn(a[0], size, alpha, beta, bias);
                                         });
  });
}

shp_error_t* shp_tensor_pad_mode(const shp_tensor_t* x, const shp_dim_t* const* low,
                                 const shp_dim_t* const* high, size_t rank, shp_pad_mode_t mode,
                                 double value, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const auto m = static_cast<composites::PadMode>(shp::capi::RawEnum(mode));
    // The arrays are read only once `rank` is known to be the rank of x.
    composites::CheckPadModeArgs(Unwrap(x), m, rank);
    const std::vector<const dim::Expr*> lo = PadDims(Unwrap(x), low, rank, "low");
    const std::vector<const dim::Expr*> hi = PadDims(Unwrap(x), high, rank, "high");
    return composites::PadWithMode(Unwrap(x), lo, hi, m, value);
  });
}

shp_error_t* shp_tensor_depth_to_space(const shp_tensor_t* x, int64_t blocksize,
                                       shp_depth_to_space_mode_t mode,
                                       const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    return composites::DepthToSpace(
        Unwrap(x), blocksize, static_cast<composites::DepthToSpaceMode>(shp::capi::RawEnum(mode)));
  });
}

shp_error_t* shp_tensor_space_to_depth(const shp_tensor_t* x, int64_t blocksize,
                                       const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] { return composites::SpaceToDepth(Unwrap(x), blocksize); });
}

}  // extern "C"
