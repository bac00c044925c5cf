// Matmul f32: shp::kernels::MatmulF32 against OpenBLAS cblas_sgemm measured in the same run,
// for square row-major C = A·B. Each figure is the median GFLOP/s (2*n^3 / time) over several
// repetitions; ours and the peer alternate within each repetition so drift hits both equally.
//   "1 thread":  MatmulF32 with pool = nullptr vs OpenBLAS with openblas_set_num_threads(1).
//   "2 threads": MatmulF32 on a 2-thread ThreadPool vs OpenBLAS with 2 threads.
//   "AVX2 target": MatmulF32 with Highway dispatch forced to AVX2 (1 thread), for an
//                  apples-to-apples figure when OpenBLAS picks an AVX2 core kernel (it prints
//                  the one it uses) on a CPU that also has AVX-512.
// Before timing, the two results are compared (max relative difference printed).
// Usage: matmul_bench [sizes...]   (default 256 512 1024 2048). Run through
// benchmarks/kernels/run_matmul_bench.sh (bazel build -c opt).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cc/kernels/matmul.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/sum.h"
#include "hwy/targets.h"

namespace {

using Clock = std::chrono::steady_clock;

// Seconds of one call of fn, as the median over `reps` repetitions, each repetition timing
// enough back-to-back calls to last >= 50 ms.
double Seconds(const std::function<void()>& fn, int calls) {
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - t0).count() / calls;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Pair {
  double ours;  // GFLOP/s
  double peer;  // GFLOP/s
};

// Alternates ours/peer for `reps` repetitions and returns median GFLOP/s of both.
Pair Measure(int64_t n, const std::function<void()>& ours, const std::function<void()>& peer,
             int reps) {
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * n;
  ours();  // warm-up (page faults, thread start)
  peer();
  const double one = std::max(Seconds(ours, 1), 1e-7);
  const int calls = std::max(1, static_cast<int>(0.05 / one));
  std::vector<double> t_ours, t_peer;
  for (int r = 0; r < reps; ++r) {
    t_ours.push_back(Seconds(ours, calls));
    t_peer.push_back(Seconds(peer, calls));
  }
  return {flops / Median(t_ours) * 1e-9, flops / Median(t_peer) * 1e-9};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {256, 512, 1024, 2048};
  const int reps = 7;
  int mr = 0, nr = 0;
  shp::kernels::MatmulF32TileShape(&mr, &nr);
  std::printf("# matmul f32 C = A*B (row-major, square); SIMD target %s, tile %dx%d; "
              "peer%s, core kernel %s\n",
              shp::kernels::SimdTargetName(), mr, nr, OPENBLAS_VERSION,
              openblas_get_corename());
  std::printf("# figures: median GFLOP/s of %d reps; ratio = ours / peer (>1: ours faster)\n",
              reps);
  std::printf("%-28s %10s %10s %8s\n", "scenario", "ours", "peer", "ratio");
  shp::kernels::ThreadPool pool2(2);
  for (const int64_t n : sizes) {
    std::vector<float> a(static_cast<size_t>(n * n)), b(a.size()), c(a.size()), c_ref(a.size());
    uint32_t s = 1;
    for (auto* v : {&a, &b}) {
      for (float& x : *v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(s >> 8) / 8388608.0f - 1.0f;
      }
    }
    const shp::kernels::MatmulParams p = shp::kernels::RowMajorMatmul(n, n, n);
    const int ni = static_cast<int>(n);
    for (const int threads : {1, 2}) {
      shp::kernels::ThreadPool* pool = threads == 1 ? nullptr : &pool2;
      openblas_set_num_threads(threads);
      const auto ours = [&] { shp::kernels::MatmulF32(p, a.data(), b.data(), c.data(), pool); };
      const auto peer = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni,
                    b.data(), ni, 0.0f, c_ref.data(), ni);
      };
      ours();
      peer();
      double max_rel = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        max_rel = std::max(max_rel, std::fabs(static_cast<double>(c[i]) - c_ref[i]) /
                                        (std::fabs(static_cast<double>(c_ref[i])) + 1.0));
      }
      if (max_rel > 1e-3) {
        std::printf("ERROR: n=%lld results differ from OpenBLAS (max rel %g)\n",
                    static_cast<long long>(n), max_rel);
        return 1;
      }
      const Pair r = Measure(n, ours, peer, reps);
      char name[64];
      std::snprintf(name, sizeof(name), "matmul %lld %d thread%s", static_cast<long long>(n),
                    threads, threads == 1 ? "" : "s");
      std::printf("%-28s %10.1f %10.1f %7.2fx\n", name, r.ours, r.peer, r.ours / r.peer);
      std::fflush(stdout);
    }
    if ((hwy::SupportedTargets() & HWY_AVX2) != 0 &&
        std::string(shp::kernels::SimdTargetName()) != "AVX2") {
      openblas_set_num_threads(1);
      hwy::SetSupportedTargetsForTest(HWY_AVX2);
      const auto ours = [&] { shp::kernels::MatmulF32(p, a.data(), b.data(), c.data(), nullptr); };
      const auto peer = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni,
                    b.data(), ni, 0.0f, c_ref.data(), ni);
      };
      const Pair r = Measure(n, ours, peer, reps);
      hwy::SetSupportedTargetsForTest(0);  // back to the CPU's own targets
      char name[64];
      std::snprintf(name, sizeof(name), "matmul %lld 1 thread AVX2", static_cast<long long>(n));
      std::printf("%-28s %10.1f %10.1f %7.2fx\n", name, r.ours, r.peer, r.ours / r.peer);
      std::fflush(stdout);
    }
  }
  return 0;
}
