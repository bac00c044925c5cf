// Layer-norm over the rows of a 4096x1024 f32 matrix with scale and bias, 1 thread: ours vs
// numpy ((x - mean) / sqrt(var + eps) * g + b). Also the row-sum reduction vs numpy
// x.sum(-1) and our 2-thread figure. Run from the repository root, normally through
// benchmarks/kernels/run_kernels_bench.sh.
#include <cstdio>

#include "benchmarks/kernels/elementwise_bench_util.h"
#include "cc/kernels/layernorm.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/reduce.h"
#include "cc/kernels/simd_target.h"

int main(int argc, char** argv) {
  using shp::kernels::DType;
  constexpr int64_t kRows = 4096, kCols = 1024;
  shp_bench::ParseArgs(argc, argv);
  shp_bench::PrintMachine(shp::kernels::SimdTargetName(), "1 thread (2: information)");
  std::printf("layer-norm rows %ldx%ld f32, median of %d\n", static_cast<long>(kRows),
              static_cast<long>(kCols), shp_bench::Reps());
  shp_bench::FloatBuffer x(kRows * kCols, 1), y(kRows * kCols, 2), g(kCols, 3), b(kCols, 4);
  double ours, np_s;
  {
    shp_bench::NumpyPeer np("layernorm");
    shp_bench::Interleaved(
        [&] {
          shp::kernels::LayerNorm(DType::kF32, x.data, kRows, kCols, g.data, b.data, 1e-5, y.data,
                                  nullptr);
        },
        [&] { return np.RunOnce(); }, &ours, &np_s);
  }
  shp_bench::Report("layernorm 4096x1024 f32", ours, "numpy", np_s, 4.0);
  shp::kernels::ThreadPool pool2(2);
  std::printf("  (2 threads: %.3f ms)\n", shp_bench::MedianSeconds([&] {
                                            shp::kernels::LayerNorm(DType::kF32, x.data, kRows,
                                                                    kCols, g.data, b.data, 1e-5,
                                                                    y.data, &pool2);
                                          }) * 1e3);
  {
    shp_bench::NumpyPeer np("sum_rows");
    shp_bench::Interleaved(
        [&] {
          shp::kernels::Reduce(shp::kernels::ReduceOp::kSum, DType::kF32, x.data, kRows, kCols, 1,
                               y.data, nullptr);
        },
        [&] { return np.RunOnce(); }, &ours, &np_s);
  }
  shp_bench::Report("row sum 4096x1024 f32", ours, "numpy", np_s, 1.0);
  return 0;
}
