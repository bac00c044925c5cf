// The OpenBLAS peer of matmul_bench, loaded at run time (dlopen) so that the peer is the newest
// OpenBLAS with a core kernel for this CPU rather than whatever the system package ships:
// Debian 12's OpenBLAS 0.3.21 picks its SSE3 "Prescott" core on Sapphire Rapids (6-37 GFLOP/s),
// which made every "vs OpenBLAS" row meaningless there. The driver script points
// SHP_OPENBLAS_LIB at the scipy-openblas32 wheel's library (OpenBLAS 0.3.34, DYNAMIC_ARCH, its
// symbols prefixed "scipy_"); without it the system libopenblas.so.0 is used. Either way the
// header names the library, its version and the core it picked, and NativeCore() says whether
// that core uses the CPU's widest vectors: a row against a core that does not prints
// "peer not native" and gets no verdict.
#ifndef SHAPEPOLY_BENCHMARKS_KERNELS_OPENBLAS_PEER_H_
#define SHAPEPOLY_BENCHMARKS_KERNELS_OPENBLAS_PEER_H_

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "hwy/targets.h"

namespace shp_bench {

// The CBLAS enum values (cblas.h), fixed by the CBLAS standard.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;

class OpenBlasPeer {
 public:
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  // Loads SHP_OPENBLAS_LIB if set, else the system libopenblas.so.0. ok() false (why()) when
  // the library or one of its symbols is missing.
  OpenBlasPeer() {
    const char* env = std::getenv("SHP_OPENBLAS_LIB");
    path_ = env != nullptr && *env != '\0' ? env : "libopenblas.so.0";
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* err = dlerror();
      why_ = std::string("cannot load ") + path_ + ": " + (err ? err : "?");
      return;
    }
    // The scipy-openblas wheels prefix every symbol with "scipy_"; the system library does not.
    for (const char* prefix : {"scipy_", ""}) {
      prefix_ = prefix;
      sgemm_ = reinterpret_cast<Sgemm>(Sym("cblas_sgemm"));
      if (sgemm_ != nullptr) break;
    }
    set_threads_ = reinterpret_cast<void (*)(int)>(Sym("openblas_set_num_threads"));
    get_threads_ = reinterpret_cast<int (*)()>(Sym("openblas_get_num_threads"));
    corename_ = reinterpret_cast<char* (*)()>(Sym("openblas_get_corename"));
    config_ = reinterpret_cast<char* (*)()>(Sym("openblas_get_config"));
    if (sgemm_ == nullptr || set_threads_ == nullptr || get_threads_ == nullptr ||
        corename_ == nullptr || config_ == nullptr) {
      why_ = path_ + " lacks cblas_sgemm or an openblas_* function";
      sgemm_ = nullptr;
    }
  }
  OpenBlasPeer(const OpenBlasPeer&) = delete;
  OpenBlasPeer& operator=(const OpenBlasPeer&) = delete;

  bool ok() const { return sgemm_ != nullptr; }
  const std::string& why() const { return why_; }
  const std::string& path() const { return path_; }
  std::string core() const { return ok() ? corename_() : "?"; }
  std::string config() const {
    if (!ok()) return "?";
    std::string c = config_();
    while (!c.empty() && std::isspace(static_cast<unsigned char>(c.back()))) c.pop_back();
    return c;
  }
  void set_threads(int n) const { set_threads_(n); }
  int threads() const { return get_threads_(); }
  // Row-major C[m,n] = A[m,k] * B[k,n].
  void Gemm(int m, int n, int k, const float* a, const float* b, float* c) const {
    sgemm_(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  }

  // True if the core OpenBLAS picked computes with this CPU's widest float vectors: an AVX-512
  // core (SkylakeX, Cooperlake, SapphireRapids) on a CPU with AVX-512, an AVX2 core or better
  // (Haswell, Zen, SkylakeX, ...) on an AVX2 CPU. Decided from Highway's view of the CPU, so
  // it does not follow a --simd-target cap of our own kernels.
  bool NativeCore() const {
    std::string c = core();
    for (char& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool avx512_core = c == "skylakex" || c == "cooperlake" || c == "sapphirerapids";
    const bool avx2_core = avx512_core || c == "haswell" || c == "zen" || c == "skylake";
    const int64_t cpu = hwy::SupportedTargets();
    if ((cpu & HWY_AVX3) != 0) return avx512_core;
    if ((cpu & HWY_AVX2) != 0) return avx2_core;
    return true;  // an older CPU: whatever OpenBLAS picked is its best
  }

 private:
  void* Sym(const char* name) const { return dlsym(handle_, (prefix_ + name).c_str()); }

  std::string path_, why_, prefix_;
  void* handle_ = nullptr;  // never closed: OpenBLAS's threads outlive any unload
  Sgemm sgemm_ = nullptr;
  void (*set_threads_)(int) = nullptr;
  int (*get_threads_)() = nullptr;
  char* (*corename_)() = nullptr;
  char* (*config_)() = nullptr;
};

}  // namespace shp_bench

#endif  // SHAPEPOLY_BENCHMARKS_KERNELS_OPENBLAS_PEER_H_
