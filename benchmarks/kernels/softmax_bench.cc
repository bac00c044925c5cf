// Softmax over the rows of a 4096x1024 f32 matrix, 1 thread: ours vs numpy
// (exp(x - max) / sum) and vs an Eigen row loop (Eigen 3.4, compiled in this file with
// -O3 -march=native so Eigen uses the machine's widest vectors). Also our 2-thread figure.
// Run from the repository root, normally through benchmarks/kernels/run_kernels_bench.sh.
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>

#include "benchmarks/kernels/elementwise_bench_util.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/softmax.h"

namespace {

constexpr int64_t kRows = 4096, kCols = 1024;

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

int main() {
  using shp::kernels::DType;
  std::printf("softmax rows %ldx%ld f32, median of %d\n", static_cast<long>(kRows),
              static_cast<long>(kCols), shp_bench::kReps);
  shp_bench::FloatBuffer x(kRows * kCols, 1), y(kRows * kCols, 2), z(kRows * kCols, 3);
  const auto ours_fn = [&] {
    shp::kernels::Softmax(DType::kF32, x.data, kRows, kCols, 1, y.data, nullptr);
  };
  double ours, eigen, ours2, np_s;
  shp_bench::Interleaved(
      ours_fn, [&] { return shp_bench::Seconds([&] { EigenSoftmax(x.data, z.data); }); }, &ours,
      &eigen);
  double maxdiff = 0;
  for (size_t i = 0; i < x.size; ++i) {
    maxdiff = std::max(maxdiff, static_cast<double>(std::fabs(y.data[i] - z.data[i])));
  }
  {
    shp_bench::NumpyPeer np("softmax");
    shp_bench::Interleaved(ours_fn, [&] { return np.RunOnce(); }, &ours2, &np_s);
  }
  shp_bench::Report("softmax 4096x1024 f32", ours2, "numpy", np_s, 5.0);
  shp_bench::Report("softmax 4096x1024 f32", ours, "eigen", eigen, 0.9);
  shp::kernels::ThreadPool pool2(2);
  std::printf("  (max |ours - eigen| = %.2g; 2 threads: %.3f ms)\n", maxdiff,
              shp_bench::MedianSeconds([&] {
                shp::kernels::Softmax(DType::kF32, x.data, kRows, kCols, 1, y.data, &pool2);
              }) * 1e3);
  return 0;
}
