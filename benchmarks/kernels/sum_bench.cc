// Float sum of a whole array, 1 thread: shp::kernels::SumF32 (Highway, dispatched; accumulates
// in double) against peers timed run by run in alternation with ours:
//   numpy `x.sum()` (float32 pairwise summation, what a numpy user writes), child process;
//   a plain C++ double loop (std::accumulate in double: the same accuracy as SumF32).
// Sizes: 1M f32 (4 MiB, cache-resident on big L2/L3) and 16M f32 (64 MiB, memory-bound).
// Before timing, SumF32 is checked against a long double sum (it must round it correctly to
// within 1 ulp of f32), so a fast wrong kernel fails the bench (exit 1).
// Run from the repository root, normally through benchmarks/kernels/run_kernels_bench.sh.
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "benchmarks/kernels/elementwise_bench_util.h"
#include "cc/kernels/simd_target.h"
#include "cc/kernels/sum.h"

namespace {

// The peer loop; noinline so the compiler cannot hoist it out of the timing loop.
__attribute__((noinline)) float DoubleLoop(const float* x, size_t n) {
  return static_cast<float>(std::accumulate(x, x + n, 0.0));
}

volatile float g_sink;  // keeps the timed sums alive

}  // namespace

int main(int argc, char** argv) {
  shp_bench::ParseArgs(argc, argv);
  shp_bench::PrintMachine(shp::kernels::SimdTargetName(), "1 thread");
  std::printf("sum f32, median of %d\n", shp_bench::Reps());
  struct Case {
    const char* name;
    const char* numpy_scenario;  // elementwise_bench_numpy.py builds the same-size input
    size_t n;
    double target;  // peer time / ours vs numpy; our own target (no issue names one)
  };
  const Case cases[] = {{"sum 1M f32", "sum_1m", size_t{1} << 20, 1.0},
                        {"sum 16M f32", "sum_16m", size_t{16} << 20, 1.0}};
  for (const Case& c : cases) {
    shp_bench::FloatBuffer x(c.n, 1);
    long double exact = 0;
    for (size_t i = 0; i < c.n; ++i) exact += x.data[i];
    const float ours_v = shp::kernels::SumF32(x.data, c.n);
    const float want = static_cast<float>(exact);
    const float ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
    std::printf("  %s: ours %.9g, long double %.9g\n", c.name, ours_v, want);
    if (!(std::fabs(ours_v - want) <= ulp)) {
      std::printf("ERROR: %s: SumF32 = %.9g but the long double sum rounds to %.9g\n", c.name,
                  ours_v, want);
      return 1;
    }
    const auto ours_fn = [&] { g_sink = shp::kernels::SumF32(x.data, c.n); };
    double ours, loop_s, ours2, np_s;
    shp_bench::Interleaved(
        ours_fn, [&] { return shp_bench::Seconds([&] { g_sink = DoubleLoop(x.data, c.n); }); },
        &ours, &loop_s);
    {
      shp_bench::NumpyPeer np(c.numpy_scenario);
      shp_bench::Interleaved(
          ours_fn, [&] { return np.RunOnce(); }, &ours2, &np_s);
    }
    shp_bench::Report(c.name, ours2, "numpy", np_s, c.target);
    shp_bench::Report(c.name, ours, "dbl-loop", loop_s, 0);  // information: same accuracy
  }
  return 0;
}
