// The SIMD target the kernels dispatch to. Plain C++ (no Highway types).
#ifndef SHAPEPOLY_CC_KERNELS_SIMD_TARGET_H_
#define SHAPEPOLY_CC_KERNELS_SIMD_TARGET_H_

namespace shp {
namespace kernels {

// Name of the Highway target the kernels dispatch to on this CPU, e.g. "AVX3". Every kernel
// family is compiled for the same targets and dispatches on the same global choice, so this one
// name holds for all of them. Static string. Thread-safe.
const char* SimdTargetName();

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_SIMD_TARGET_H_
