// Composite operations (ONNX semantics) built from the primitives of cc/ops, recorded through a
// trace: activations, log_softmax, batch_norm, lrn, pad modes, depth_to_space,
// space_to_depth, pooling and convolution. They add no op of their own, so serialization, the
// oracle, autodiff and the fusion of elementwise chains apply to them unchanged.
//
// Usable from C++ without the C API (c_api/{nn,pool,conv}_api.cc are one-call thunks over
// these functions). Every function checks all its arguments before it records the first
// operation, so a rejected call adds no tensor to the trace (the shape assertions an undecided
// check records are part of that check). Errors are shp::Error with the code and message the C
// API documents (the messages start with the op's name where the C API's do); a NULL tensor
// argument is kInvalidArgument "argument '<name>' must not be NULL". Tensor arguments must
// belong to the trace of `x`.
#ifndef SHAPEPOLY_CC_OPS_COMPOSITES_COMPOSITES_H_
#define SHAPEPOLY_CC_OPS_COMPOSITES_COMPOSITES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "cc/dim/expr.h"
#include "cc/trace/trace.h"

namespace shp {
namespace ops {
namespace composites {

// The enums below have the values of the C API's (shp_pad_mode_t, shp_depth_to_space_mode_t,
// shp_auto_pad_t). Their underlying type is fixed, so any int32 converts to them; a value
// outside the enumerators is rejected with kInvalidArgument.
enum class PadMode : int32_t { kConstant = 0, kReflect = 1, kEdge = 2 };
enum class DepthToSpaceMode : int32_t { kDcr = 0, kCrd = 1 };
enum class AutoPad : int32_t { kNotSet = 0, kSameUpper = 1, kSameLower = 2, kValid = 3 };

// Runs `body` on `args` (null entries stay null). When they are of one narrow type (f16, bf16,
// i8, ...), body gets them converted to its compute type and its result is converted back once:
// the composite rounds once, as one op does (cc/trace/narrow.cc). Mixed dtypes with a narrow one:
// kDtypeMismatch naming `fn`.
const trace::Tensor* OnceInComputeType(
    const char* fn, std::vector<const trace::Tensor*> args,
    const std::function<const trace::Tensor*(const std::vector<const trace::Tensor*>&)>& body);

// ---- Activations (f32/f64 `x`; the double parameters must be finite) ----
// x >= 0 ? x : alpha * x.
const trace::Tensor* LeakyRelu(const trace::Tensor* x, double alpha);
// x >= 0 ? x : slope * x, `slope` of x's dtype broadcast to x's shape (never the reverse).
const trace::Tensor* Prelu(const trace::Tensor* x, const trace::Tensor* slope);
// x >= 0 ? x : alpha * (e^x - 1).
const trace::Tensor* Elu(const trace::Tensor* x, double alpha);
// gamma * (x > 0 ? x : alpha * (e^x - 1)).
const trace::Tensor* Selu(const trace::Tensor* x, double alpha, double gamma);
// log(1 + e^x), computed as max(x, 0) + log1p(e^-|x|).
const trace::Tensor* Softplus(const trace::Tensor* x);
// x / (1 + |x|).
const trace::Tensor* Softsign(const trace::Tensor* x);
// min(max(x, min), max) for any numeric dtype (integers: the bounds rounded inward; a bound
// every value meets is none). min and max must not be NaN; +-infinity means no bound.
const trace::Tensor* Clip(const trace::Tensor* x, double min, double max);
// max(0, min(1, alpha * x + beta)).
const trace::Tensor* HardSigmoid(const trace::Tensor* x, double alpha, double beta);

// ---- Normalization ----
// x - max - log(sum(e^(x - max))) along `axis` (in [-rank, rank)).
const trace::Tensor* LogSoftmax(const trace::Tensor* x, int64_t axis);
// Inference batch norm of x [N, C, ...] with scale, bias, mean and var of shape [C].
const trace::Tensor* BatchNorm(const trace::Tensor* x, const trace::Tensor* scale,
                               const trace::Tensor* bias, const trace::Tensor* mean,
                               const trace::Tensor* var, double epsilon);
// Local response normalization of x [N, C, ...] across `size` channels.
const trace::Tensor* Lrn(const trace::Tensor* x, int64_t size, double alpha, double beta,
                         double bias);

// ---- Layout ----
// Pads x by low[i] / high[i] (rank of x entries each, dims of x's scope, provably >= 0):
// kConstant fills with `value`, kReflect mirrors without repeating the edge (each non-zero pad
// <= dim - 1), kEdge repeats the edge (dim >= 1 on each padded axis); a need that cannot be
// decided becomes a shape assertion.
const trace::Tensor* PadWithMode(const trace::Tensor* x, const std::vector<const dim::Expr*>& low,
                                 const std::vector<const dim::Expr*>& high, PadMode mode,
                                 double value);
// The checks of PadWithMode that come before it reads its dims, for callers that convert
// `rank` entries of raw arrays first: x not NULL, a valid mode, rank == the rank of x.
void CheckPadModeArgs(const trace::Tensor* x, PadMode mode, size_t rank);
// ONNX DepthToSpace / SpaceToDepth of x [N, C, H, W].
const trace::Tensor* DepthToSpace(const trace::Tensor* x, int64_t blocksize, DepthToSpaceMode mode);
const trace::Tensor* SpaceToDepth(const trace::Tensor* x, int64_t blocksize);

// ---- Pooling (x [N, C, *spatial], num_spatial spatial axes) ----
// The int arrays hold num_spatial entries (`pads`: 2 * num_spatial, the beginnings then the
// ends), read only after x's rank is checked against num_spatial; NULL means the default
// (strides and dilations 1, no explicit pads); kernel_shape is required. Pads are only allowed
// with AutoPad::kNotSet.
const trace::Tensor* MaxPool(const trace::Tensor* x, size_t num_spatial,
                             const int64_t* kernel_shape, const int64_t* strides,
                             const int64_t* dilations, const int64_t* pads, AutoPad auto_pad,
                             bool ceil_mode);
const trace::Tensor* AvgPool(const trace::Tensor* x, size_t num_spatial,
                             const int64_t* kernel_shape, const int64_t* strides,
                             const int64_t* dilations, const int64_t* pads, AutoPad auto_pad,
                             bool ceil_mode, bool count_include_pad);
// Mean / max over every axis after N and C (kept as size 1); x of rank >= 3.
const trace::Tensor* GlobalAvgPool(const trace::Tensor* x);
const trace::Tensor* GlobalMaxPool(const trace::Tensor* x);

// ---- Convolution (x [N, C, *spatial], 1 to 3 spatial axes) ----
// ONNX Conv: w [O, C/groups, *kernel]; `bias` [O] or NULL. The int arrays as for pooling.
const trace::Tensor* Conv(const trace::Tensor* x, const trace::Tensor* w, const trace::Tensor* bias,
                          size_t num_spatial, const int64_t* strides, const int64_t* dilations,
                          const int64_t* pads, AutoPad auto_pad, int64_t groups);
// ONNX ConvTranspose: w [C, O/groups, *kernel]; output_padding num_spatial entries or NULL.
const trace::Tensor* ConvTranspose(const trace::Tensor* x, const trace::Tensor* w,
                                   const trace::Tensor* bias, size_t num_spatial,
                                   const int64_t* strides, const int64_t* dilations,
                                   const int64_t* pads, const int64_t* output_padding,
                                   AutoPad auto_pad, int64_t groups);

}  // namespace composites
}  // namespace ops
}  // namespace shp

#endif  // SHAPEPOLY_CC_OPS_COMPOSITES_COMPOSITES_H_
