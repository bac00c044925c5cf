// Tests of the convolution kernels against a naive loop, on every compiled Highway target
// (dispatch forced to each) and for each method (matmul, direct, im2col tiles).
#include "cc/kernels/conv.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

int64_t Numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// The definition, one output element at a time, in long double.
template <class T>
std::vector<T> Reference(const ConvParams& p, const std::vector<T>& x, const std::vector<T>& w) {
  const int r = p.spatial_rank;
  const int64_t cg = p.in_channels / p.groups, og = p.out_channels / p.groups;
  std::vector<int64_t> out(p.out, p.out + r), in(p.in, p.in + r), k(p.kernel, p.kernel + r);
  const int64_t op = Numel(out), ip = Numel(in), kp = Numel(k);
  std::vector<T> y(static_cast<size_t>(p.batch * p.out_channels * op));
  std::vector<int64_t> q(static_cast<size_t>(r)), j(static_cast<size_t>(r));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t o = 0; o < p.out_channels; ++o) {
      for (int64_t oi = 0; oi < op; ++oi) {
        int64_t t = oi;
        for (int a = r - 1; a >= 0; --a) {
          q[static_cast<size_t>(a)] = t % out[static_cast<size_t>(a)];
          t /= out[static_cast<size_t>(a)];
        }
        long double acc = 0;
        for (int64_t c = 0; c < cg; ++c) {
          for (int64_t ki = 0; ki < kp; ++ki) {
            int64_t u = ki, xi = 0;
            bool ok = true;
            for (int a = r - 1; a >= 0; --a) {
              j[static_cast<size_t>(a)] = u % k[static_cast<size_t>(a)];
              u /= k[static_cast<size_t>(a)];
            }
            int64_t mult = 1;
            for (int a = r - 1; a >= 0; --a) {
              const int64_t pos = q[static_cast<size_t>(a)] * p.stride[a] +
                                  j[static_cast<size_t>(a)] * p.rhs_dilation[a] - p.pad_low[a];
              if (pos < 0 || pos % p.lhs_dilation[a] != 0 || pos / p.lhs_dilation[a] >= p.in[a]) {
                ok = false;
                break;
              }
              xi += pos / p.lhs_dilation[a] * mult;
              mult *= p.in[a];
            }
            if (!ok) continue;
            const int64_t ch = o / og * cg + c;
            acc += static_cast<long double>(
                       x[static_cast<size_t>((b * p.in_channels + ch) * ip + xi)]) *
                   w[static_cast<size_t>((o * cg + c) * kp + ki)];
          }
        }
        y[static_cast<size_t>((b * p.out_channels + o) * op + oi)] = static_cast<T>(acc);
      }
    }
  }
  return y;
}

struct Case {
  ConvParams p;
  std::vector<int64_t> xs, ws, ys;
};

// A random convolution; `kind` 0: any, 1: depthwise, 2: pointwise (1x1, stride 1).
Case RandomCase(std::mt19937& rng, int kind) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  Case c;
  ConvParams& p = c.p;
  p.spatial_rank = static_cast<int>(pick(1, 3));
  p.batch = pick(1, 2);
  p.groups = kind == 1 ? pick(1, 4) : pick(1, 2) == 1 ? 1 : pick(2, 3);
  const int64_t cg = kind == 1 ? 1 : pick(1, 4);
  p.in_channels = cg * p.groups;
  p.out_channels = p.groups * (kind == 1 ? pick(1, 2) : pick(1, 5));
  for (int a = 0; a < p.spatial_rank; ++a) {
    const bool big = p.spatial_rank == 1 || (p.spatial_rank == 2 && a == 1);
    for (;;) {
      p.in[a] = pick(1, big ? 23 : 7);
      p.kernel[a] = kind == 2 ? 1 : pick(1, 3);
      p.stride[a] = kind == 2 ? 1 : pick(1, 3);
      p.lhs_dilation[a] = kind == 2 ? 1 : pick(1, 4) == 4 ? 2 : 1;
      p.rhs_dilation[a] = kind == 2 ? 1 : pick(1, 3) == 3 ? 2 : 1;
      p.pad_low[a] = kind == 2 ? 0 : pick(-1, 2);
      const int64_t pad_high = kind == 2 ? 0 : pick(-1, 2);
      const int64_t span = (p.in[a] - 1) * p.lhs_dilation[a] + 1 + p.pad_low[a] + pad_high -
                           ((p.kernel[a] - 1) * p.rhs_dilation[a] + 1);
      if (span < 0) continue;
      p.out[a] = span / p.stride[a] + 1;
      break;
    }
  }
  c.xs = {p.batch, p.in_channels};
  c.ws = {p.out_channels, cg};
  c.ys = {p.batch, p.out_channels};
  for (int a = 0; a < p.spatial_rank; ++a) {
    c.xs.push_back(p.in[a]);
    c.ws.push_back(p.kernel[a]);
    c.ys.push_back(p.out[a]);
  }
  return c;
}

// Runs the conv with `scratch`'s size of scratch, 64-byte aligned as the runtime's arena gives
// it (f32 im2col tiles then go straight into the matmul's panels, which need vector alignment),
// or, with `misaligned`, one element off (the column-buffer path: the same bits).
template <class T>
bool RunConv(const ConvParams& p, const std::vector<T>& x, const std::vector<T>& w, T* y,
             std::vector<T>* scratch, ThreadPool* pool, bool misaligned = false) {
  const size_t n = scratch->size();
  std::vector<T> buf(n + 64 / sizeof(T) + 1);
  uintptr_t base = reinterpret_cast<uintptr_t>(buf.data());
  base = (base + 63) / 64 * 64 + (misaligned ? sizeof(T) : 0);
  T* s = reinterpret_cast<T*>(base);
  if (std::is_same<T, float>::value) {
    return ConvF32(p, reinterpret_cast<const float*>(x.data()),
                   reinterpret_cast<const float*>(w.data()), reinterpret_cast<float*>(y),
                   reinterpret_cast<float*>(s), static_cast<int64_t>(n), pool);
  }
  return ConvF64(p, reinterpret_cast<const double*>(x.data()),
                 reinterpret_cast<const double*>(w.data()), reinterpret_cast<double*>(y),
                 reinterpret_cast<double*>(s), static_cast<int64_t>(n), pool);
}

template <class T>
void CheckRandom(int kind, int64_t scratch_columns, int iters, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  ThreadPool pool2(2), pool3(3);
  for (int it = 0; it < iters; ++it) {
    Case c = RandomCase(rng, kind);
    const ConvParams& p = c.p;
    std::vector<T> x(static_cast<size_t>(Numel(c.xs))), w(static_cast<size_t>(Numel(c.ws)));
    for (T& v : x) v = static_cast<T>(u(rng));
    for (T& v : w) v = static_cast<T>(u(rng));
    const std::vector<T> ref = Reference(p, x, w);
    // Two tiles of scratch_columns (the kernel fills two at once on several threads).
    std::vector<T> scratch(static_cast<size_t>(ConvColumnRows(p) * scratch_columns * 2 + 1));
    const ConvMethod method = ChooseConvMethod(p, static_cast<int64_t>(scratch.size()));
    if (kind == 1) {
      EXPECT_TRUE(method == ConvMethod::kDirect || method == ConvMethod::kMatmul);
    }
    if (kind == 2) {
      EXPECT_EQ(ConvMethod::kMatmul, method);
    }
    std::vector<T> got(ref.size() + 1, T(7));
    ASSERT_TRUE(RunConv(p, x, w, got.data(), &scratch, nullptr));
    EXPECT_EQ(T(7), got.back());  // nothing written past the end
    const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(static_cast<double>(ref[i]), static_cast<double>(got[i]), tol)
          << "iteration " << it << " element " << i << " method " << static_cast<int>(method);
    }
    for (ThreadPool* pool : {&pool2, &pool3}) {
      std::vector<T> again(ref.size());
      ASSERT_TRUE(RunConv(p, x, w, again.data(), &scratch, pool));
      ASSERT_EQ(0, std::memcmp(got.data(), again.data(), ref.size() * sizeof(T)))
          << "iteration " << it << " threads " << pool->num_threads();
    }
  }
}

HWY_BEFORE_TEST(ConvTest);

TEST_P(ConvTest, Im2colMatchesReference) {
  CheckRandom<float>(0, 64, 150, 1);
  CheckRandom<double>(0, 64, 60, 2);
}

TEST_P(ConvTest, SmallTilesMatchReference) {
  // 16 columns per tile: most convs here take several tiles.
  CheckRandom<float>(0, 16, 100, 3);
}

TEST_P(ConvTest, DirectWithoutScratchMatchesReference) {
  CheckRandom<float>(0, 0, 100, 4);
  CheckRandom<double>(0, 0, 40, 5);
}

TEST_P(ConvTest, DepthwiseMatchesReference) {
  CheckRandom<float>(1, 64, 120, 6);
  CheckRandom<double>(1, 64, 40, 7);
}

TEST_P(ConvTest, DepthwisePlanesOfMobileNetSizesMatchReference) {
  // 3x3 depthwise planes as MobileNet and ResNeXt run them: the padded plane kernel in groups
  // of output vectors across row ends (7, 14, 56, 112 wide; stride 2 along rows), the row
  // kernel of planes too large for its buffer (150), and a 1-D plane. Each checked against the
  // reference and for the same bits on 1, 2 and 3 threads.
  struct Plane {
    int64_t h, w, stride_h, stride_w, kernel;
  };
  const Plane planes[] = {{7, 7, 1, 1, 3},     {14, 14, 1, 1, 3},   {56, 56, 1, 1, 3},
                          {112, 112, 1, 1, 3}, {112, 112, 2, 1, 3}, {56, 56, 2, 2, 3},
                          {150, 150, 1, 1, 3}, {1, 1000, 1, 1, 5},  {9, 33, 1, 1, 7}};
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-1, 1);
  ThreadPool pool2(2), pool3(3);
  for (const Plane& pl : planes) {
    ConvParams p;
    p.spatial_rank = 2;
    p.batch = 1;
    p.in_channels = p.out_channels = p.groups = 3;
    const int64_t in[2] = {pl.h, pl.w}, stride[2] = {pl.stride_h, pl.stride_w};
    for (int a = 0; a < 2; ++a) {
      p.in[a] = in[a];
      p.kernel[a] = in[a] == 1 ? 1 : pl.kernel;
      p.stride[a] = stride[a];
      p.lhs_dilation[a] = p.rhs_dilation[a] = 1;
      p.pad_low[a] = (p.kernel[a] - 1) / 2;
      p.out[a] = (in[a] + 2 * p.pad_low[a] - p.kernel[a]) / stride[a] + 1;
    }
    std::vector<float> x(static_cast<size_t>(3 * pl.h * pl.w));
    std::vector<float> w(static_cast<size_t>(3 * p.kernel[0] * p.kernel[1]));
    for (float& v : x) v = static_cast<float>(u(rng));
    for (float& v : w) v = static_cast<float>(u(rng));
    const std::vector<float> ref = Reference(p, x, w);
    std::vector<float> scratch(1);
    std::vector<float> got(ref.size() + 1, 7.0f);
    ASSERT_TRUE(RunConv(p, x, w, got.data(), &scratch, nullptr));
    EXPECT_EQ(7.0f, got.back()) << pl.h << "x" << pl.w;
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(ref[i], got[i], 2e-5) << pl.h << "x" << pl.w << " element " << i;
    }
    for (ThreadPool* pool : {&pool2, &pool3}) {
      std::vector<float> again(ref.size());
      ASSERT_TRUE(RunConv(p, x, w, again.data(), &scratch, pool));
      ASSERT_EQ(0, std::memcmp(got.data(), again.data(), ref.size() * sizeof(float)))
          << pl.h << "x" << pl.w << " threads " << pool->num_threads();
    }
  }
}

TEST_P(ConvTest, WideIm2colTilesMatchReference) {
  // ResNet-like 3x3 convs whose im2col tiles are hundreds of columns wide and whose k spans
  // several k blocks of the matmul (rows = 9 * channels > 256): the f32 tiles are written
  // straight into packed panels; f64 goes through the column buffer.
  struct Shape {
    int64_t c, o, h, w, columns;
  };
  const Shape shapes[] = {
      {64, 64, 30, 30, 480}, {32, 16, 17, 23, 200}, {40, 8, 9, 9, 81}, {64, 24, 12, 40, 96}};
  SetConvBandEnabled(false);   // these shapes would take the band kernel
  SetConvNchwcEnabled(false);  // and 64 channels the NCHWc kernel
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> u(-1, 1);
  ThreadPool pool2(2);
  for (const Shape& sh : shapes) {
    ConvParams p;
    p.spatial_rank = 2;
    p.batch = 2;
    p.in_channels = sh.c;
    p.out_channels = sh.o;
    p.groups = 1;
    const int64_t in[2] = {sh.h, sh.w};
    for (int a = 0; a < 2; ++a) {
      p.in[a] = in[a];
      p.kernel[a] = 3;
      p.stride[a] = 1;
      p.lhs_dilation[a] = p.rhs_dilation[a] = 1;
      p.pad_low[a] = 1;
      p.out[a] = in[a];
    }
    std::vector<float> x(static_cast<size_t>(2 * sh.c * sh.h * sh.w));
    std::vector<float> w(static_cast<size_t>(sh.o * sh.c * 9));
    for (float& v : x) v = static_cast<float>(u(rng));
    for (float& v : w) v = static_cast<float>(u(rng));
    const std::vector<float> ref = Reference(p, x, w);
    std::vector<float> scratch(static_cast<size_t>(ConvColumnRows(p) * sh.columns * 2));
    ASSERT_EQ(ConvMethod::kIm2col, ChooseConvMethod(p, static_cast<int64_t>(scratch.size())));
    std::vector<float> got(ref.size() + 1, 7.0f);
    ASSERT_TRUE(RunConv(p, x, w, got.data(), &scratch, nullptr));
    EXPECT_EQ(7.0f, got.back());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(ref[i], got[i], 1e-4) << sh.c << "->" << sh.o << " element " << i;
    }
    std::vector<float> again(ref.size());
    ASSERT_TRUE(RunConv(p, x, w, again.data(), &scratch, &pool2));
    ASSERT_EQ(0, std::memcmp(got.data(), again.data(), ref.size() * sizeof(float)));
    // A misaligned scratch takes the column buffer: the same bits.
    ASSERT_TRUE(RunConv(p, x, w, again.data(), &scratch, nullptr, /*misaligned=*/true));
    ASSERT_EQ(0, std::memcmp(got.data(), again.data(), ref.size() * sizeof(float)));
  }
  SetConvBandEnabled(true);
  SetConvNchwcEnabled(true);
}

// A conv the band kernel takes (stride 1, no input dilation, 1-D or 2-D): random channels
// (output channel tiles with every remainder), widths around the tile width, pads of any sign,
// kernel dilation, groups; against the reference, bitwise the same on 1, 2 and 3 threads, and
// as ConvF32 runs it. Returns whether the band kernel took it.
bool CheckBand(std::mt19937& rng, int rank, int64_t cg, int64_t og, int64_t groups, int64_t h,
               int64_t w_in, int64_t kh, int64_t kw, int64_t dil, int64_t pad_lo, int64_t pad_hi,
               ThreadPool* pools[2], int64_t stride = 1) {
  std::uniform_real_distribution<double> u(-1, 1);
  ConvParams p;
  p.spatial_rank = rank;
  p.batch = 1 + static_cast<int64_t>(rng() % 2);
  p.groups = groups;
  p.in_channels = cg * groups;
  p.out_channels = og * groups;
  const int64_t in[2] = {h, w_in}, k[2] = {kh, kw};
  for (int a = 0; a < rank; ++a) {
    const int src = rank == 1 ? 1 : a;
    p.in[a] = in[src];
    p.kernel[a] = k[src];
    p.stride[a] = stride;
    p.lhs_dilation[a] = 1;
    p.rhs_dilation[a] = dil;
    p.pad_low[a] = pad_lo;
    const int64_t span = p.in[a] + pad_lo + pad_hi - (p.kernel[a] - 1) * dil - 1;
    if (span < 0) return false;
    p.out[a] = span / stride + 1;
  }
  if (!ConvBandTakes(p)) return false;
  std::vector<float> x(static_cast<size_t>(p.batch * p.in_channels * Numel({in[0], in[1]}))),
      w(static_cast<size_t>(p.out_channels * cg * kh * kw));
  if (rank == 1) {
    x.resize(static_cast<size_t>(p.batch * p.in_channels * w_in));
    w.resize(static_cast<size_t>(p.out_channels * cg * kw));
  }
  for (float& v : x) v = static_cast<float>(u(rng));
  for (float& v : w) v = static_cast<float>(u(rng));
  const std::vector<float> ref = Reference(p, x, w);
  std::vector<float> got(ref.size() + 1, 7.0f);
  EXPECT_TRUE(ConvBandF32(p, x.data(), w.data(), got.data(), nullptr));
  EXPECT_EQ(7.0f, got.back());
  const double tol = 2e-6 * static_cast<double>(cg * kh * kw);
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(ref[i], got[i], tol)
        << "cg " << cg << " og " << og << " groups " << groups << " " << h << "x" << w_in << " k "
        << kh << "x" << kw << " dil " << dil << " pads " << pad_lo << "," << pad_hi << " element "
        << i;
  }
  for (int t = 0; t < 2; ++t) {
    std::vector<float> again(ref.size());
    EXPECT_TRUE(ConvBandF32(p, x.data(), w.data(), again.data(), pools[t]));
    EXPECT_EQ(0, std::memcmp(got.data(), again.data(), ref.size() * sizeof(float)));
  }
  EXPECT_EQ(ConvMethod::kBand, ChooseConvMethod(p, 0));
  std::vector<float> via(ref.size());
  EXPECT_TRUE(ConvF32(p, x.data(), w.data(), via.data(), nullptr, 0, pools[0]));
  EXPECT_EQ(0, std::memcmp(got.data(), via.data(), ref.size() * sizeof(float)));
  return true;
}

TEST_P(ConvTest, BandMatchesReference) {
  std::mt19937 rng(41);
  ThreadPool pool2(2), pool3(3);
  ThreadPool* pools[2] = {&pool2, &pool3};
  // ResNet-like 3x3 layers (several channel blocks for the widest), then random ones.
  EXPECT_TRUE(CheckBand(rng, 2, 64, 64, 1, 56, 56, 3, 3, 1, 1, 1, pools));
  EXPECT_TRUE(CheckBand(rng, 2, 24, 20, 1, 28, 28, 3, 3, 1, 1, 1, pools));
  EXPECT_TRUE(CheckBand(rng, 2, 300, 9, 1, 12, 60, 3, 3, 1, 1, 1, pools));
  EXPECT_TRUE(CheckBand(rng, 1, 16, 13, 2, 1, 333, 1, 5, 1, 2, 2, pools));
  // Strided: ResNet-50's stem (7x7 s2 from 3 channels) and stride-2 3x3 layers; not its 1x1.
  EXPECT_TRUE(CheckBand(rng, 2, 3, 16, 1, 64, 64, 7, 7, 1, 3, 3, pools, 2));
  EXPECT_TRUE(CheckBand(rng, 2, 32, 24, 1, 56, 56, 3, 3, 1, 1, 1, pools, 2));
  EXPECT_FALSE(CheckBand(rng, 2, 64, 16, 1, 56, 56, 1, 1, 1, 0, 0, pools, 2));  // 1x1: matmul
  int taken = 0;
  for (int it = 0; it < 90; ++it) {
    const int rank = rng() % 4 == 0 ? 1 : 2;
    const int64_t kh = 1 + rng() % 3, kw = 1 + rng() % 3;
    taken += CheckBand(rng, rank, 4 + rng() % 13, 1 + rng() % 19, 1 + rng() % 2, 1 + rng() % 20,
                       8 + rng() % 70, kh, kw, 1 + rng() % 2, static_cast<int64_t>(rng() % 4) - 1,
                       static_cast<int64_t>(rng() % 4) - 1, pools, it % 3 == 0 ? 1 : 1 + rng() % 4);
  }
  EXPECT_GE(taken, 20);
}

TEST_P(ConvTest, PointwiseMatchesReference) {
  CheckRandom<float>(2, 0, 60, 8);
  CheckRandom<double>(2, 0, 30, 9);
}

TEST_P(ConvTest, WideRowsMatchReference) {
  // Rows long enough for the direct kernel's 4-vector blocks and the im2col copies, with
  // padding, kernel dilation and input dilation at both ends.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int it = 0; it < 24; ++it) {
    ConvParams p;
    p.spatial_rank = 2;
    p.batch = 1;
    p.groups = it % 3 == 0 ? 1 : 3;
    p.in_channels = it % 3 == 2 ? 3 : 6;
    if (p.in_channels % p.groups != 0) p.groups = 1;
    p.out_channels = p.groups * (1 + it % 2);
    for (int a = 0; a < 2; ++a) {
      p.in[a] = a == 0 ? 3 + it % 3 : 60 + 7 * it;
      p.kernel[a] = 1 + (it + a) % 3;
      p.stride[a] = a == 1 && it % 5 == 4 ? 2 : 1;
      p.lhs_dilation[a] = a == 1 && it % 7 == 6 ? 2 : 1;
      p.rhs_dilation[a] = 1 + (it / 2) % 2;
      p.pad_low[a] = it % 4 - 1;
      const int64_t pad_high = (it / 4) % 3;
      const int64_t span = (p.in[a] - 1) * p.lhs_dilation[a] + 1 + p.pad_low[a] + pad_high -
                           ((p.kernel[a] - 1) * p.rhs_dilation[a] + 1);
      p.out[a] = std::max<int64_t>(span, 0) / p.stride[a] + 1;
      if (span < 0) p.pad_low[a] -= span;  // keep the output size >= 1
    }
    const int64_t cg = p.in_channels / p.groups;
    std::vector<float> x(static_cast<size_t>(p.in_channels * p.in[0] * p.in[1]));
    std::vector<float> w(static_cast<size_t>(p.out_channels * cg * p.kernel[0] * p.kernel[1]));
    for (float& v : x) v = static_cast<float>(u(rng));
    for (float& v : w) v = static_cast<float>(u(rng));
    const std::vector<float> ref = Reference(p, x, w);
    for (int64_t columns : {int64_t{0}, int64_t{40}}) {
      std::vector<float> scratch(static_cast<size_t>(ConvColumnRows(p) * columns * 2));
      std::vector<float> got(ref.size());
      ASSERT_TRUE(RunConv(p, x, w, got.data(), &scratch, nullptr));
      for (size_t i = 0; i < ref.size(); ++i) {
        ASSERT_NEAR(ref[i], got[i], 2e-5) << "iteration " << it << " element " << i;
      }
    }
  }
}

TEST_P(ConvTest, LargeConvsAreBitIdenticalAcrossThreadCounts) {
  // Large enough for the matmul and the direct kernel to split over threads.
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t groups : {1, 32}) {
    ConvParams p;
    p.spatial_rank = 2;
    p.batch = 2;
    p.in_channels = 32;
    p.out_channels = 32;
    p.groups = groups;
    for (int a = 0; a < 2; ++a) {
      p.in[a] = 30;
      p.kernel[a] = 3;
      p.out[a] = 30;
      p.stride[a] = 1;
      p.lhs_dilation[a] = 1;
      p.rhs_dilation[a] = 1;
      p.pad_low[a] = 1;
    }
    std::vector<float> x(static_cast<size_t>(2 * 32 * 900)), w(static_cast<size_t>(32 * 9 * 32));
    for (float& v : x) v = u(rng);
    for (float& v : w) v = u(rng);
    std::vector<float> scratch(static_cast<size_t>(ConvColumnRows(p) * 200));
    std::vector<float> y1(x.size()), y2(x.size()), y3(x.size());
    ASSERT_TRUE(ConvF32(p, x.data(), w.data(), y1.data(), scratch.data(),
                        static_cast<int64_t>(scratch.size()), nullptr));
    ThreadPool pool2(2), pool3(3);
    ASSERT_TRUE(ConvF32(p, x.data(), w.data(), y2.data(), scratch.data(),
                        static_cast<int64_t>(scratch.size()), &pool2));
    ASSERT_TRUE(ConvF32(p, x.data(), w.data(), y3.data(), scratch.data(),
                        static_cast<int64_t>(scratch.size()), &pool3));
    EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float)));
  }
}

// ConvF32 with a bias and relu epilogue is bitwise the conv followed by the f32 add and
// max(., 0) (NaN kept, -0 made +0), for each method: band (stride 1 and 2), im2col, direct
// (depthwise) and matmul (1x1); 1 and 2 threads.
TEST_P(ConvTest, EpilogueIsTheUnfusedAddAndRelu) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> u(-1, 1);
  ThreadPool pool2(2);
  struct Shape {
    int64_t c, o, groups, hw, k, stride;
  };
  const Shape shapes[] = {{16, 12, 1, 30, 3, 1},
                          {24, 10, 1, 21, 3, 2},
                          {16, 12, 1, 7, 3, 1},
                          {8, 8, 8, 20, 3, 1},
                          {32, 20, 1, 9, 1, 1}};
  for (const Shape& sh : shapes) {
    ConvParams p;
    p.spatial_rank = 2;
    p.batch = 2;
    p.in_channels = sh.c;
    p.out_channels = sh.o;
    p.groups = sh.groups;
    for (int a = 0; a < 2; ++a) {
      p.in[a] = sh.hw;
      p.kernel[a] = sh.k;
      p.stride[a] = sh.stride;
      p.lhs_dilation[a] = p.rhs_dilation[a] = 1;
      p.pad_low[a] = sh.k / 2;
      p.out[a] = (sh.hw + 2 * (sh.k / 2) - sh.k) / sh.stride + 1;
    }
    const int64_t cg = sh.c / sh.groups;
    std::vector<float> x(static_cast<size_t>(2 * sh.c * sh.hw * sh.hw));
    std::vector<float> w(static_cast<size_t>(sh.o * cg * sh.k * sh.k)), bias(sh.o);
    for (float& v : x) v = u(rng);
    for (float& v : w) v = u(rng);
    for (float& v : bias) v = u(rng);
    x[5] = std::numeric_limits<float>::quiet_NaN();  // NaN outputs stay NaN
    std::vector<float> scratch(static_cast<size_t>(ConvColumnRows(p) * 64 * 2 + 64));
    const int64_t ny = 2 * sh.o * p.out[0] * p.out[1];
    std::vector<float> plain(static_cast<size_t>(ny));
    ASSERT_TRUE(ConvF32(p, x.data(), w.data(), plain.data(), scratch.data(),
                        static_cast<int64_t>(scratch.size()), nullptr));
    std::vector<float> residual(static_cast<size_t>(ny));
    for (float& v : residual) v = u(rng);
    // 0: bias, 1: relu, 2: bias + relu, 3: bias + residual + relu, 4: residual.
    for (int mode = 0; mode < 5; ++mode) {
      ConvEpilogue ep;
      ep.bias = mode != 1 && mode != 4 ? bias.data() : nullptr;
      ep.residual = mode >= 3 ? residual.data() : nullptr;
      ep.relu = mode != 0 && mode != 4;
      std::vector<float> want(plain);
      const int64_t plane = p.out[0] * p.out[1];
      for (int64_t i = 0; i < ny; ++i) {
        float v = want[static_cast<size_t>(i)];
        if (ep.bias != nullptr) v = v + bias[static_cast<size_t>(i / plane % sh.o)];
        if (ep.residual != nullptr) v = v + residual[static_cast<size_t>(i)];
        if (ep.relu) v = v != v ? v + 0.0f : (v > 0.0f ? v : 0.0f);
        want[static_cast<size_t>(i)] = v;
      }
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        std::vector<float> got(static_cast<size_t>(ny) + 1, 7.0f);
        ASSERT_TRUE(ConvF32(p, x.data(), w.data(), got.data(), scratch.data(),
                            static_cast<int64_t>(scratch.size()), ep, pool));
        EXPECT_EQ(7.0f, got.back());
        for (int64_t i = 0; i < ny; ++i) {
          const float a = want[static_cast<size_t>(i)], b = got[static_cast<size_t>(i)];
          ASSERT_TRUE((a != a && b != b) || std::memcmp(&a, &b, sizeof(float)) == 0)
              << "shape " << sh.c << "->" << sh.o << " k" << sh.k << " s" << sh.stride << " mode "
              << mode << " element " << i << " want " << a << " got " << b;
        }
      }
    }
  }
}

// The channels-last product with packed weights (ConvF32Packed) gives ConvF32's bits with the
// same epilogue (kMatmul and kIm2col shapes with small output planes, batch 0 to 3, 1 and 2
// threads, a NaN input) and near the reference; it refuses what it does not take (groups, a
// plane larger than the output channels, band-kernel shapes, a wrong packing, small buffers),
// writing nothing.
TEST_P(ConvTest, PackedChannelsProductIsConvF32) {
  std::mt19937 rng(91);
  std::uniform_real_distribution<float> u(-1, 1);
  ThreadPool pool2(2);
  int taken = 0;
  struct Shape {
    int64_t c, o, hw, k, stride, pad;
  };
  const Shape shapes[] = {{32, 64, 7, 1, 1, 0},  {40, 96, 9, 3, 1, 1},  {24, 64, 14, 3, 2, 1},
                          {16, 96, 14, 1, 2, 0}, {300, 80, 5, 3, 1, 1}, {8, 256, 16, 1, 1, 0},
                          {20, 64, 3, 3, 1, 0}};
  for (const Shape& sh : shapes) {
    for (int64_t batch : {int64_t{2}, int64_t{0}, int64_t{1}}) {
      ConvParams p;
      p.spatial_rank = 2;
      p.batch = batch;
      p.in_channels = sh.c;
      p.out_channels = sh.o;
      p.groups = 1;
      for (int a = 0; a < 2; ++a) {
        p.in[a] = sh.hw;
        p.kernel[a] = sh.k;
        p.stride[a] = sh.stride;
        p.lhs_dilation[a] = p.rhs_dilation[a] = 1;
        p.pad_low[a] = sh.pad;
        p.out[a] = (sh.hw + 2 * sh.pad - sh.k) / sh.stride + 1;
      }
      const std::string what = std::to_string(sh.c) + "->" + std::to_string(sh.o) + " " +
                               std::to_string(sh.hw) + "^2 k" + std::to_string(sh.k) + " s" +
                               std::to_string(sh.stride) + " batch " + std::to_string(batch);
      std::vector<float> x(static_cast<size_t>(batch * sh.c * sh.hw * sh.hw) + 1);
      std::vector<float> w(static_cast<size_t>(sh.o * sh.c * sh.k * sh.k)), bias(sh.o);
      for (float& v : x) v = u(rng);
      for (float& v : w) v = u(rng);
      for (float& v : bias) v = u(rng);
      x[3] = std::numeric_limits<float>::quiet_NaN();
      const int64_t scratch_n = std::max<int64_t>(Numel({sh.o, sh.c, sh.k, sh.k}), 1);
      // Taken wherever the shape's method is a product (the band kernel keeps its shapes).
      const ConvMethod m = ChooseConvMethod(p, scratch_n);
      ASSERT_EQ(m == ConvMethod::kMatmul || m == ConvMethod::kIm2col,
                ConvChannelsTakes(p, scratch_n))
          << what;
      if (!ConvChannelsTakes(p, scratch_n)) continue;
      ++taken;
      std::vector<float> scratch(static_cast<size_t>(scratch_n));
      std::vector<float> product(static_cast<size_t>(ConvChannelsProduct(p)));
      ASSERT_LE(ConvChannelsColumns(p), scratch_n) << what;
      const PackedMatrixF32 wt = PackConvWeightsF32(p, w.data());
      const int64_t ny = batch * sh.o * p.out[0] * p.out[1];
      std::vector<float> residual(static_cast<size_t>(ny) + 1);
      for (float& v : residual) v = u(rng);
      for (int mode = 0; mode < 5; ++mode) {  // as EpilogueIsTheUnfusedAddAndRelu's modes
        ConvEpilogue ep;
        ep.bias = mode != 1 && mode != 4 ? bias.data() : nullptr;
        ep.residual = mode >= 3 ? residual.data() : nullptr;
        ep.relu = mode != 0 && mode != 4;
        std::vector<float> want(static_cast<size_t>(ny) + 1, 7.0f);
        ASSERT_TRUE(
            ConvF32(p, x.data(), w.data(), want.data(), scratch.data(), scratch_n, ep, nullptr));
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
          std::vector<float> got(static_cast<size_t>(ny) + 1, 7.0f);
          ASSERT_TRUE(ConvF32Packed(p, x.data(), wt, got.data(), scratch.data(), scratch_n,
                                    product.data(), static_cast<int64_t>(product.size()), ep, pool))
              << what;
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), got.size() * sizeof(float)))
              << what << " mode " << mode;
        }
      }
      if (batch == 2) {  // near the definition too (not only ConvF32's bits)
        std::vector<float> xs(x.begin(), x.end() - 1);
        xs[3] = 0.5f;
        const std::vector<float> ref = Reference(p, xs, w);
        std::vector<float> got(static_cast<size_t>(ny));
        ASSERT_TRUE(ConvF32Packed(p, xs.data(), wt, got.data(), scratch.data(), scratch_n,
                                  product.data(), static_cast<int64_t>(product.size()),
                                  ConvEpilogue{}, nullptr));
        for (int64_t i = 0; i < ny; ++i) {
          ASSERT_NEAR(ref[static_cast<size_t>(i)], got[static_cast<size_t>(i)], 1e-3) << what;
        }
        // A buffer too small, or the weights packed for another conv: refused, nothing written.
        std::vector<float> untouched(static_cast<size_t>(ny), 7.0f);
        EXPECT_FALSE(ConvF32Packed(p, xs.data(), wt, untouched.data(), scratch.data(), scratch_n,
                                   product.data(), ConvChannelsProduct(p) - 1, ConvEpilogue{},
                                   nullptr));
        ConvParams other = p;
        other.in_channels += 1;
        const std::vector<float> w2(static_cast<size_t>(sh.o * (sh.c + 1) * sh.k * sh.k), 1.0f);
        const PackedMatrixF32 wrong = PackConvWeightsF32(other, w2.data());
        EXPECT_FALSE(ConvF32Packed(p, xs.data(), wrong, untouched.data(), scratch.data(), scratch_n,
                                   product.data(), static_cast<int64_t>(product.size()),
                                   ConvEpilogue{}, nullptr));
        EXPECT_EQ(std::vector<float>(static_cast<size_t>(ny), 7.0f), untouched) << what;
      }
    }
  }
  EXPECT_GE(taken, 12);  // the pointwise shapes (4 of 7) at least, each at 3 batch sizes
  // Not taken: two groups, a plane larger than the output channels, a band-kernel shape.
  ConvParams p;
  p.spatial_rank = 2;
  p.batch = 1;
  p.in_channels = 64;
  p.out_channels = 64;
  p.groups = 2;
  for (int a = 0; a < 2; ++a) {
    p.in[a] = p.out[a] = 7;
    p.kernel[a] = p.stride[a] = p.lhs_dilation[a] = p.rhs_dilation[a] = 1;
    p.pad_low[a] = 0;
  }
  EXPECT_FALSE(ConvChannelsTakes(p, 1 << 20));
  p.groups = 1;
  EXPECT_TRUE(ConvChannelsTakes(p, 0));
  p.in[0] = p.out[0] = 10;  // 70 positions > 64 channels
  EXPECT_FALSE(ConvChannelsTakes(p, 1 << 20));
  ConvParams band = p;
  band.out_channels = 256;
  for (int a = 0; a < 2; ++a) {
    band.in[a] = band.out[a] = 14;
    band.kernel[a] = 3;
    band.pad_low[a] = 1;
  }
  EXPECT_EQ(ChooseConvMethod(band, 1 << 22) == ConvMethod::kIm2col,
            ConvChannelsTakes(band, 1 << 22));
}

TEST(Conv, RejectsBadParamsWritingNothing) {
  ConvParams p;
  p.spatial_rank = 1;
  p.batch = 1;
  p.in_channels = 3;
  p.out_channels = 2;
  p.groups = 2;  // does not divide 3
  p.in[0] = 4;
  p.kernel[0] = 1;
  p.out[0] = 4;
  p.stride[0] = p.lhs_dilation[0] = p.rhs_dilation[0] = 1;
  std::vector<float> x(12, 1.0f), w(6, 1.0f), y(8, 5.0f);
  EXPECT_FALSE(ConvF32(p, x.data(), w.data(), y.data(), nullptr, 0, nullptr));
  p.groups = 1;
  p.stride[0] = 0;
  EXPECT_FALSE(ConvF32(p, x.data(), w.data(), y.data(), nullptr, 0, nullptr));
  p.stride[0] = 1;
  p.spatial_rank = 4;
  EXPECT_FALSE(ConvF32(p, x.data(), w.data(), y.data(), nullptr, 0, nullptr));
  for (float v : y) EXPECT_EQ(5.0f, v);
  p.spatial_rank = 1;
  EXPECT_TRUE(ConvF32(p, x.data(), w.data(), y.data(), nullptr, 0, nullptr));
  EXPECT_EQ(3.0f, y[0]);
}

}  // namespace
}  // namespace kernels
}  // namespace shp
