// Cache sizes the GEMM blocking is derived from (matmul-inl.h): what the OS reports for this
// CPU, with conservative defaults where it reports nothing. Plain C++, target-independent.
#ifndef SHAPEPOLY_CC_KERNELS_GEMM_CACHE_H_
#define SHAPEPOLY_CC_KERNELS_GEMM_CACHE_H_

#include <cstdint>

namespace shp {
namespace kernels {

struct GemmCacheSizes {
  int64_t l1d;  // bytes of L1 data cache per core
  int64_t l2;   // bytes of L2 per core
  int64_t l3;   // bytes of the last-level cache (shared), or l2 if there is none
};

// Read once (sysconf, then /sys/devices/system/cpu/cpu0/cache), then cached. Each size is
// clamped to a sane range, so a bogus report cannot make the blocking degenerate. Thread-safe.
const GemmCacheSizes& GemmCaches();

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_GEMM_CACHE_H_
