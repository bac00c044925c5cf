// The conv kernels on ResNet-50's 3x3 layers and its 7x7 stride-2 stem, 1 and 2 threads: GFLOP/s
// (median of rounds) of the band kernel (ConvMethod::kBand) and of im2col tiles + the packed matmul
// (the runtime's scratch: the largest of x, y and w), each on the same data; 1 thread by the
// thread's CPU time. Information for choosing the method; no peer here (run_conv_bench.sh compares
// with onnxruntime).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>

#include "cc/kernels/conv.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"

namespace {

using shp::kernels::ConvParams;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Row(int64_t n, int64_t c, int64_t o, int64_t hw, int64_t k, shp::kernels::ThreadPool* pool,
         int threads, int64_t stride = 1) {
  ConvParams p;
  p.spatial_rank = 2;
  p.batch = n;
  p.in_channels = c;
  p.out_channels = o;
  p.groups = 1;
  for (int a = 0; a < 2; ++a) {
    p.in[a] = hw;
    p.kernel[a] = k;
    p.out[a] = (hw + 2 * (k / 2) - k) / stride + 1;
    p.stride[a] = stride;
    p.lhs_dilation[a] = p.rhs_dilation[a] = 1;
    p.pad_low[a] = k / 2;
  }
  const int64_t xn = n * c * hw * hw, yn = n * o * p.out[0] * p.out[1], wn = o * c * k * k;
  std::vector<float> x(static_cast<size_t>(xn)), w(static_cast<size_t>(wn)),
      y(static_cast<size_t>(yn));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : x) v = u(rng);
  for (float& v : w) v = u(rng);
  const int64_t scratch_n = std::max(xn, std::max(yn, wn));
  std::vector<float> scratch(static_cast<size_t>(scratch_n + 16));
  float* s = scratch.data();
  while (reinterpret_cast<uintptr_t>(s) % 64 != 0) ++s;
  const double flops = 2.0 * static_cast<double>(yn) * static_cast<double>(c * k * k);
  double gf[3] = {0, 0, 0};
  const shp::kernels::PackedConvNchwcF32 packed = shp::kernels::PackConvNchwcF32(p, w.data());
  if (!packed.empty()) {
    std::vector<double> t;
    for (int r = 0; r < 9; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = ThreadCpuSeconds();
      shp::kernels::ConvNchwcF32(p, x.data(), packed, y.data(), {}, pool);
      t.push_back(
          threads == 1
              ? ThreadCpuSeconds() - c0
              : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    gf[2] = flops / Median(t) / 1e9;
  }
  // ConvF32 packing w into the scratch on every call (weights that are not packed once).
  double per_call = 0;
  if (shp::kernels::ChooseConvMethod(p, scratch_n) == shp::kernels::ConvMethod::kNchwc) {
    std::vector<double> t;
    for (int r = 0; r < 9; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = ThreadCpuSeconds();
      shp::kernels::ConvF32(p, x.data(), w.data(), y.data(), s, scratch_n, pool);
      t.push_back(
          threads == 1
              ? ThreadCpuSeconds() - c0
              : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    per_call = flops / Median(t) / 1e9;
  }
  shp::kernels::SetConvNchwcEnabled(false);
  for (int band = 0; band < 2; ++band) {
    shp::kernels::SetConvBandEnabled(band == 1);
    if (band == 1 && !shp::kernels::ConvBandTakes(p)) {
      gf[1] = 0;
      continue;
    }
    std::vector<double> t;
    for (int r = 0; r < 9; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = ThreadCpuSeconds();
      shp::kernels::ConvF32(p, x.data(), w.data(), y.data(), s, scratch_n, pool);
      // 1 thread: the calling thread's CPU time (other processes on a busy machine disturb it
      // less than the wall clock).
      t.push_back(
          threads == 1
              ? ThreadCpuSeconds() - c0
              : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    gf[band] = flops / Median(t) / 1e9;
  }
  shp::kernels::SetConvBandEnabled(true);
  shp::kernels::SetConvNchwcEnabled(true);
  std::printf(
      "%ldx%ldx%ldx%ld -> %ld k%ld s%ld  %d thread(s)  im2col/matmul %6.1f  band %6.1f  nchwc "
      "%6.1f (packing w per call %6.1f)\n",
      static_cast<long>(n), static_cast<long>(c), static_cast<long>(hw), static_cast<long>(hw),
      static_cast<long>(o), static_cast<long>(k), static_cast<long>(stride), threads, gf[0], gf[1],
      gf[2], per_call);
}

}  // namespace

int main() {
  std::printf("SIMD target %s\n", shp::kernels::SimdTargetName());
  shp::kernels::ThreadPool two(2);
  for (int threads : {1, 2}) {
    shp::kernels::ThreadPool* pool = threads == 1 ? nullptr : &two;
    Row(1, 64, 64, 56, 3, pool, threads);
    Row(1, 128, 128, 28, 3, pool, threads);
    Row(1, 256, 256, 14, 3, pool, threads);
    Row(1, 512, 512, 7, 3, pool, threads);
    Row(1, 3, 64, 224, 7, pool, threads, 2);    // the stem
    Row(1, 128, 128, 56, 3, pool, threads, 2);  // stage 2's first 3x3
    Row(1, 256, 256, 28, 3, pool, threads, 2);  // stage 3's
  }
  return 0;
}
