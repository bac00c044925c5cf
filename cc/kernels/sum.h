// Float sum kernel (Highway, dynamically dispatched). Plain C++: no Highway types here.
#ifndef SHAPEPOLY_CC_KERNELS_SUM_H_
#define SHAPEPOLY_CC_KERNELS_SUM_H_

#include <cstddef>

namespace shp {
namespace kernels {

// Returns the sum of data[0..n). Accumulates in double precision and rounds to float once
// (see sum-inl.h). `data` may be null only if n == 0. Any alignment. Thread-safe.
float SumF32(const float* data, size_t n);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_SUM_H_
