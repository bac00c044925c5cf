#include "cc/kernels/gemm_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace shp {
namespace kernels {
namespace {

// Size in bytes of /sys/devices/system/cpu/cpu0/cache/index<i>/size if that cache has `level`
// and is a data or unified cache; 0 otherwise.
int64_t SysfsCache(int level) {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    char buf[64] = {};
    const auto read = [&buf](const std::string& path) {
      std::FILE* f = std::fopen(path.c_str(), "r");
      if (f == nullptr) return false;
      const bool ok = std::fgets(buf, sizeof(buf), f) != nullptr;
      std::fclose(f);
      return ok;
    };
    if (!read(dir + "level") || std::atoi(buf) != level) continue;
    if (!read(dir + "type") || std::string(buf).rfind("Instruction", 0) == 0) continue;
    if (!read(dir + "size")) continue;
    char* end = nullptr;
    int64_t size = std::strtoll(buf, &end, 10);
    if (end != nullptr && (*end == 'K' || *end == 'k')) size <<= 10;
    if (end != nullptr && (*end == 'M' || *end == 'm')) size <<= 20;
    return size;
  }
  return 0;
}

int64_t CacheSize(int level, int64_t fallback, int64_t lo, int64_t hi) {
  int64_t size = 0;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && \
    defined(_SC_LEVEL3_CACHE_SIZE)
  const int name = level == 1   ? _SC_LEVEL1_DCACHE_SIZE
                   : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                                : _SC_LEVEL3_CACHE_SIZE;
  size = sysconf(name);
#endif
  if (size <= 0) size = SysfsCache(level);
  if (size <= 0) size = fallback;
  return std::min(std::max(size, lo), hi);
}

GemmCacheSizes Detect() {
  GemmCacheSizes s;
  s.l1d = CacheSize(1, 32 << 10, 16 << 10, 256 << 10);
  s.l2 = CacheSize(2, 256 << 10, 128 << 10, 8 << 20);
  s.l3 = std::max(s.l2, CacheSize(3, s.l2, 128 << 10, int64_t{512} << 20));
  return s;
}

}  // namespace

const GemmCacheSizes& GemmCaches() {
  static const GemmCacheSizes sizes = Detect();
  return sizes;
}

}  // namespace kernels
}  // namespace shp
