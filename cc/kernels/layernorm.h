// Layer normalization over the last axis. Plain C++ (no Highway types); per-target code in
// layernorm-inl.h.
#ifndef SHAPEPOLY_CC_KERNELS_LAYERNORM_H_
#define SHAPEPOLY_CC_KERNELS_LAYERNORM_H_

#include <cstdint>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

// For each row r of in[rows][cols] (row-major, contiguous):
//   out[r][j] = (in[r][j] - mean_r) / sqrt(var_r + epsilon) * scale[j] + bias[j]
// with the biased (population) variance, as numpy's x.var(-1). scale and bias (cols elements
// of `dtype`) are optional: nullptr means 1 and 0.
//
// dtype: kF32, kF64, or kF16/kBF16 (in, out, scale and bias of that type; each row loaded into
// f32 registers, computed as the f32 kernel does and rounded once on store: the bits of
// converting to f32, the f32 layer_norm and converting back, a NaN's sign and payload aside).
// Method (two-pass, stable): the mean is accumulated in double (f32
// elements are widened); the variance is the mean of squared deviations from that mean,
// computed in the element type over vector lanes and flushed into a double every 256
// elements, with the first-order correction (sum of deviations)^2 / n for the rounding of the
// mean. cols == 0 writes nothing. Non-finite inputs propagate as IEEE arithmetic does (a NaN
// or inf in a row makes that row NaN). epsilon >= 0 is the caller's choice (e.g. 1e-5).
// Aliasing: out may equal in; scale/bias must not overlap out. Multi-threaded over rows on
// `pool` (nullptr = calling thread); results do not depend on the thread count. Returns false,
// writing nothing, for another dtype, negative extents or null data with a non-empty shape
// (the error convention of dtype.h).
bool LayerNorm(DType dtype, const void* in, int64_t rows, int64_t cols, const void* scale,
               const void* bias, double epsilon, void* out, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_LAYERNORM_H_
