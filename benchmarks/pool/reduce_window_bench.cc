// The reduce_window kernel on pooling shapes, 1 and 2 threads: microseconds per call (median of
// rounds) and input GB/s; with 1 thread also the CPU time of the calling thread, which other
// processes on a busy machine disturb less. Information for run_pool_bench.sh (no peer here).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>

#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"
#include "cc/kernels/reduce_window.h"

namespace {

using shp::kernels::ReduceOp;
using shp::kernels::WindowDim;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Row(const char* name, ReduceOp op, std::vector<int64_t> shape, int64_t k, int64_t s, int64_t p,
         shp::kernels::ThreadPool* pool, int threads) {
  std::vector<WindowDim> d(shape.size());
  int64_t n = 1, m = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    d[i].size = shape[i];
    if (i >= 2) {
      d[i].window = k;
      d[i].stride = s;
      d[i].pad_low = d[i].pad_high = p;
    }
    int64_t o = 0;
    shp::kernels::ReduceWindowOutputSize(d[i], &o);
    n *= shape[i];
    m *= o;
  }
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(m));
  std::mt19937 rng(1);
  for (float& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<double> t, cpu;
  for (int r = 0; r < 15; ++r) {
    const int calls = 20;
    const double c0 = ThreadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) {
      if (op == ReduceOp::kMean) {  // average pooling excluding pads, in one pass
        shp::kernels::ReduceWindowMean(shp::kernels::DType::kF32, x.data(),
                                       static_cast<int>(shape.size()), d.data(), nullptr, nullptr,
                                       y.data(), pool);
      } else {
        shp::kernels::ReduceWindow(op, shp::kernels::DType::kF32, x.data(),
                                   static_cast<int>(shape.size()), d.data(), y.data(), pool);
      }
    }
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                calls);
    cpu.push_back((ThreadCpuSeconds() - c0) / calls);
  }
  const double sec = Median(t);
  std::printf("%-32s %d thread(s) %8.1f us %6.2f GB/s in", name, threads, sec * 1e6,
              static_cast<double>(n) * 4 / sec / 1e9);
  if (threads == 1) std::printf("  (thread cpu %8.1f us)", Median(cpu) * 1e6);
  std::printf("\n");
}

}  // namespace

int main() {
  std::printf("SIMD target %s\n", shp::kernels::SimdTargetName());
  shp::kernels::ThreadPool two(2);
  for (int threads : {1, 2}) {
    shp::kernels::ThreadPool* pool = threads == 1 ? nullptr : &two;
    Row("max 3x3 s2 p1 1x64x112x112", ReduceOp::kMax, {1, 64, 112, 112}, 3, 2, 1, pool, threads);
    Row("max 2x2 s2 1x64x112x112", ReduceOp::kMax, {1, 64, 112, 112}, 2, 2, 0, pool, threads);
    Row("sum 3x3 s1 p1 1x64x56x56", ReduceOp::kSum, {1, 64, 56, 56}, 3, 1, 1, pool, threads);
    Row("sum 2x2 s2 1x64x112x112", ReduceOp::kSum, {1, 64, 112, 112}, 2, 2, 0, pool, threads);
    Row("mean 3x3 s1 p1 1x64x56x56", ReduceOp::kMean, {1, 64, 56, 56}, 3, 1, 1, pool, threads);
  }
  return 0;
}
