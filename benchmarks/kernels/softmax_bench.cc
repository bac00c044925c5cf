// Softmax over the rows of a 4096x1024 f32 matrix, 1 thread: ours vs numpy
// (exp(x - max) / sum) and vs an Eigen row loop (Eigen 3.4, compiled in this file with
// -O3 -march=native so Eigen uses the machine's widest vectors). Also our 2-thread figure.
// Before timing, our result is compared with Eigen's (max abs and rel difference printed); the
// bench fails (exit 1) above the tolerances below, so a fast but wrong kernel cannot pass.
// Run from the repository root, normally through benchmarks/kernels/run_kernels_bench.sh.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "benchmarks/kernels/elementwise_bench_util.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"
#include "cc/kernels/softmax.h"

namespace {

constexpr int64_t kRows = 4096, kCols = 1024;
// Both sides compute exp in f32 with their own approximations and sum 1024 terms in different
// orders: a few ulp of each output (measured: 7e-9 abs, 4e-7 rel on AVX2). 1e-5 relative
// (~80 ulp) leaves room for that and still catches a missing or partial normalization, a lane
// mix-up or a wrong row stride (each far above 1e-2 relative).
constexpr double kMaxAbsDiff = 1e-6, kMaxRelDiff = 1e-5;

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

__attribute__((noinline)) void EigenSoftmax(const float* x, float* y) {
  Eigen::Map<const RowMajor> X(x, kRows, kCols);
  Eigen::Map<RowMajor> Y(y, kRows, kCols);
  for (int64_t r = 0; r < kRows; ++r) {
    const float m = X.row(r).maxCoeff();
    Y.row(r) = (X.row(r).array() - m).exp().matrix();
    Y.row(r) /= Y.row(r).sum();
  }
}

}  // namespace

int main(int argc, char** argv) {
  using shp::kernels::DType;
  shp_bench::ParseArgs(argc, argv);
  shp_bench::PrintMachine(shp::kernels::SimdTargetName(), "1 thread (2: information)");
  std::printf("softmax rows %ldx%ld f32, median of %d\n", static_cast<long>(kRows),
              static_cast<long>(kCols), shp_bench::Reps());
  shp_bench::FloatBuffer x(kRows * kCols, 1), y(kRows * kCols, 2), z(kRows * kCols, 3);
  const auto ours_fn = [&] {
    shp::kernels::Softmax(DType::kF32, x.data, kRows, kCols, 1, y.data, nullptr);
  };
  ours_fn();
  EigenSoftmax(x.data, z.data);
  double max_abs = 0, max_rel = 0;
  size_t worst = 0;
  for (size_t i = 0; i < x.size; ++i) {
    const double d = std::fabs(static_cast<double>(y.data[i]) - z.data[i]);
    const double rel = d / std::max(std::fabs(static_cast<double>(z.data[i])), 1e-30);
    if (!(d <= max_abs)) max_abs = d, worst = i;  // NaN-safe: a NaN becomes the maximum
    if (!(rel <= max_rel)) max_rel = rel;
  }
  std::printf("  ours vs eigen: max |diff| = %.3g, max rel diff = %.3g (tolerances %.0e, %.0e)\n",
              max_abs, max_rel, kMaxAbsDiff, kMaxRelDiff);
  if (!(max_abs <= kMaxAbsDiff) || !(max_rel <= kMaxRelDiff)) {
    std::printf(
        "ERROR: softmax differs from Eigen beyond tolerance (largest |diff| at %zu: "
        "ours %.9g, eigen %.9g)\n",
        worst, y.data[worst], z.data[worst]);
    std::fprintf(stderr, "softmax_bench: result check against Eigen failed\n");
    return 1;
  }
  double ours, eigen, ours2, np_s;
  shp_bench::Interleaved(
      ours_fn, [&] { return shp_bench::Seconds([&] { EigenSoftmax(x.data, z.data); }); }, &ours,
      &eigen);
  {
    shp_bench::NumpyPeer np("softmax");
    shp_bench::Interleaved(
        ours_fn, [&] { return np.RunOnce(); }, &ours2, &np_s);
  }
  shp_bench::Report("softmax 4096x1024 f32", ours2, "numpy", np_s, 5.0);
  shp_bench::Report("softmax 4096x1024 f32", ours, "eigen", eigen, 0.9);
  shp::kernels::ThreadPool pool2(2);
  std::printf("  (2 threads: %.3f ms)\n", shp_bench::MedianSeconds([&] {
                                            shp::kernels::Softmax(DType::kF32, x.data, kRows, kCols,
                                                                  1, y.data, &pool2);
                                          }) * 1e3);
  return 0;
}
