// Tests of the direct NCHWc conv kernel (ConvNchwcF32, conv.h) on every compiled Highway target
// (dispatch forced to each): against a long-double reference loop, against ConvF32 (the band
// kernel or im2col + matmul), bitwise the same for 1, 2 and 3 threads, the epilogue bitwise the
// unfused adds and max, and refusals that write nothing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cc/kernels/conv.h"
#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

struct Shape {
  int rank;  // 1 or 2
  int64_t n, c, o, h, w, kh, kw, sh, sw, dh, dw, pad_h, pad_w, pad_h_hi, pad_w_hi;
};

// ConvParams for s (rank 1 uses the w axis), or false if the output would be empty.
bool Params(const Shape& s, ConvParams* p) {
  *p = ConvParams();
  p->spatial_rank = s.rank;
  p->batch = s.n;
  p->in_channels = s.c;
  p->out_channels = s.o;
  p->groups = 1;
  const int64_t in[2] = {s.h, s.w}, k[2] = {s.kh, s.kw}, st[2] = {s.sh, s.sw}, d[2] = {s.dh, s.dw},
                lo[2] = {s.pad_h, s.pad_w}, hi[2] = {s.pad_h_hi, s.pad_w_hi};
  for (int a = 0; a < s.rank; ++a) {
    const int src = s.rank == 1 ? 1 : a;
    p->in[a] = in[src];
    p->kernel[a] = k[src];
    p->stride[a] = st[src];
    p->lhs_dilation[a] = 1;
    p->rhs_dilation[a] = d[src];
    p->pad_low[a] = lo[src];
    const int64_t span = in[src] + lo[src] + hi[src] - (k[src] - 1) * d[src] - 1;
    if (span < 0) return false;
    p->out[a] = span / st[src] + 1;
  }
  return true;
}

int64_t Plane(const ConvParams& p, const int64_t* e) {
  int64_t n = 1;
  for (int a = 0; a < p.spatial_rank; ++a) n *= e[a];
  return n;
}

// The definition in long double, one output at a time (groups 1, no input dilation).
std::vector<double> Reference(const ConvParams& p, const std::vector<float>& x,
                              const std::vector<float>& w) {
  const int64_t ip = Plane(p, p.in), op = Plane(p, p.out), kp = Plane(p, p.kernel);
  const bool two = p.spatial_rank == 2;
  const int64_t ih = two ? p.in[0] : 1, iw = p.in[two ? 1 : 0];
  const int64_t oh = two ? p.out[0] : 1, ow = p.out[two ? 1 : 0];
  const int64_t kh = two ? p.kernel[0] : 1, kw = p.kernel[two ? 1 : 0];
  const int64_t sh = two ? p.stride[0] : 1, sw = p.stride[two ? 1 : 0];
  const int64_t dh = two ? p.rhs_dilation[0] : 1, dw = p.rhs_dilation[two ? 1 : 0];
  const int64_t ph = two ? p.pad_low[0] : 0, pw = p.pad_low[two ? 1 : 0];
  std::vector<double> y(static_cast<size_t>(p.batch * p.out_channels * op));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t o = 0; o < p.out_channels; ++o) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          long double acc = 0;
          for (int64_t c = 0; c < p.in_channels; ++c) {
            for (int64_t a = 0; a < kh; ++a) {
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t r = i * sh + a * dh - ph, q = j * sw + e * dw - pw;
                if (r < 0 || r >= ih || q < 0 || q >= iw) continue;
                acc += static_cast<long double>(
                           x[static_cast<size_t>((b * p.in_channels + c) * ip + r * iw + q)]) *
                       w[static_cast<size_t>((o * p.in_channels + c) * kp + a * kw + e)];
              }
            }
          }
          y[static_cast<size_t>((b * p.out_channels + o) * op + i * ow + j)] =
              static_cast<double>(acc);
        }
      }
    }
  }
  return y;
}

// Runs shape s through the NCHWc kernel: near the reference (f32 rounding of C x taps terms of
// magnitude <= 1), bitwise the same on 1, 2 and 3 threads, nothing written past y. Returns false
// if the kernel does not support it.
bool Check(const Shape& s, std::mt19937& rng) {
  ConvParams p;
  if (!Params(s, &p) || !ConvNchwcSupports(p)) return false;
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<size_t>(p.batch * p.in_channels * Plane(p, p.in)));
  std::vector<float> w(static_cast<size_t>(p.out_channels * p.in_channels * Plane(p, p.kernel)));
  for (float& v : x) v = u(rng);
  for (float& v : w) v = u(rng);
  const PackedConvNchwcF32 wt = PackConvNchwcF32(p, w.data());
  EXPECT_FALSE(wt.empty());
  const std::vector<double> ref = Reference(p, x, w);
  std::vector<float> got(ref.size() + 1, 7.0f);
  EXPECT_TRUE(ConvNchwcF32(p, x.data(), wt, got.data(), ConvEpilogue(), nullptr));
  EXPECT_EQ(7.0f, got.back());
  const double tol = 1e-6 * static_cast<double>(p.in_channels * Plane(p, p.kernel)) + 1e-6;
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(ref[i], got[i], tol)
        << "rank " << s.rank << " n " << s.n << " c " << s.c << " o " << s.o << " " << s.h << "x"
        << s.w << " k " << s.kh << "x" << s.kw << " s " << s.sh << "," << s.sw << " element " << i;
    if (std::fabs(ref[i] - got[i]) > tol) break;
  }
  ThreadPool pool2(2), pool3(3);
  for (ThreadPool* pool : {&pool2, &pool3}) {
    std::vector<float> again(ref.size() + 1, 7.0f);
    EXPECT_TRUE(ConvNchwcF32(p, x.data(), wt, again.data(), ConvEpilogue(), pool));
    EXPECT_EQ(0, std::memcmp(got.data(), again.data(), again.size() * sizeof(float)))
        << "threads " << pool->num_threads();
  }
  return true;
}

// Whether the target dispatched now has the kernel (not the scalar fallback target). Where it
// has none, the kernel refuses every conv writing nothing and the method choice never picks it.
bool TargetHasKernel() {
  ConvParams p;
  EXPECT_TRUE(Params({2, 1, 16, 16, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, &p));
  if (ConvNchwcSupports(p)) return true;
  std::vector<float> x(16 * 25, 1.0f), w(16 * 16 * 9, 1.0f), y(16 * 25, 5.0f);
  EXPECT_TRUE(PackConvNchwcF32(p, w.data()).empty());
  EXPECT_EQ(0, ConvNchwcPackedElements(p));
  EXPECT_FALSE(ConvNchwcTakes(p));
  std::vector<float> scratch(1 << 16);
  EXPECT_FALSE(ConvNchwcF32(p, x.data(), w.data(), y.data(), scratch.data(),
                            static_cast<int64_t>(scratch.size()), ConvEpilogue(), nullptr));
  for (float v : y) EXPECT_EQ(5.0f, v);
  return false;
}

HWY_BEFORE_TEST(ConvNchwcTest);

TEST_P(ConvNchwcTest, MatchesReferenceWithTails) {
  if (!TargetHasKernel()) return;
  std::mt19937 rng(5);
  // ResNet-like layers, scaled down, and channel counts around the blocks (4, 8 and 16 lanes,
  // output pairs of 2 blocks): tails of C and O, widths of 1, 2 and odd, every tile size.
  const Shape fixed[] = {
      {2, 1, 64, 64, 12, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 2, 17, 33, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 1, 3, 5, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 1, 40, 70, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 2, 31, 16, 9, 29, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {2, 1, 20, 48, 14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0},
      {2, 0, 16, 16, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   // batch 0: nothing to write
      {1, 2, 9, 21, 1, 45, 1, 5, 1, 1, 1, 2, 0, 3, 0, 1},   // 1-D, dilated
      {2, 1, 8, 8, 11, 13, 5, 3, 1, 2, 2, 1, 2, 0, 3, -1},  // pads of both signs
  };
  for (const Shape& s : fixed) EXPECT_TRUE(Check(s, rng)) << s.c << "->" << s.o;
  int taken = 0;
  for (int it = 0; it < 60; ++it) {
    auto pick = [&](int64_t lo, int64_t hi) {
      return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
    };
    Shape s;
    s.rank = pick(1, 4) == 1 ? 1 : 2;
    s.n = pick(0, 2);
    s.c = pick(1, 40);
    s.o = pick(1, 40);
    s.h = pick(1, 12);
    s.w = pick(1, 33);
    s.kh = pick(1, 3);
    s.kw = pick(1, 3);
    s.sh = pick(1, 2);
    s.sw = pick(1, 2);
    s.dh = pick(1, 2);
    s.dw = pick(1, 2);
    s.pad_h = pick(-1, 2);
    s.pad_w = pick(-1, 2);
    s.pad_h_hi = pick(-1, 2);
    s.pad_w_hi = pick(-1, 2);
    taken += Check(s, rng) ? 1 : 0;
  }
  EXPECT_GE(taken, 40);
}

// Within f32 rounding of ConvF32 (band or im2col) on ResNet-50's 3x3 layers, batch 2.
TEST_P(ConvNchwcTest, NearConvF32OnResNetLayers) {
  if (!TargetHasKernel()) return;
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-1, 1);
  const Shape shapes[] = {{2, 2, 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                          {2, 2, 128, 128, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                          {2, 2, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                          {2, 2, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                          {2, 2, 128, 128, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0}};
  ThreadPool pool2(2);
  int chosen = 0;
  for (const Shape& s : shapes) {
    ConvParams p;
    ASSERT_TRUE(Params(s, &p));
    ASSERT_TRUE(ConvNchwcSupports(p));
    std::vector<float> x(static_cast<size_t>(p.batch * p.in_channels * Plane(p, p.in)));
    std::vector<float> w(static_cast<size_t>(p.out_channels * p.in_channels * 9));
    for (float& v : x) v = u(rng);
    for (float& v : w) v = u(rng);
    const int64_t ny = p.batch * p.out_channels * Plane(p, p.out);
    std::vector<float> want(static_cast<size_t>(ny)), got(static_cast<size_t>(ny));
    // The runtime's scratch: the largest of x, y and w.
    std::vector<float> scratch(std::max(x.size(), std::max(static_cast<size_t>(ny), w.size())));
    const int64_t ns = static_cast<int64_t>(scratch.size());
    SetConvNchwcEnabled(false);
    EXPECT_NE(ConvMethod::kNchwc, ChooseConvMethod(p, ns));
    ASSERT_TRUE(ConvF32(p, x.data(), w.data(), want.data(), scratch.data(), ns, &pool2));
    SetConvNchwcEnabled(true);
    const PackedConvNchwcF32 wt = PackConvNchwcF32(p, w.data());
    ASSERT_TRUE(ConvNchwcF32(p, x.data(), wt, got.data(), ConvEpilogue(), &pool2));
    // Where the method choice takes it, ConvF32 packs w into the scratch: the same bits.
    if (ChooseConvMethod(p, ns) == ConvMethod::kNchwc) {
      ++chosen;
      std::vector<float> via(static_cast<size_t>(ny));
      ASSERT_TRUE(ConvF32(p, x.data(), w.data(), via.data(), scratch.data(), ns, nullptr));
      EXPECT_EQ(0, std::memcmp(got.data(), via.data(), via.size() * sizeof(float)));
      ConvEpilogue ep;
      ep.relu = true;
      ASSERT_TRUE(ConvF32(p, x.data(), w.data(), via.data(), scratch.data(), ns, ep, &pool2));
      for (int64_t i = 0; i < ny; ++i) {
        const float v = got[static_cast<size_t>(i)];
        ASSERT_EQ(v > 0 ? v : 0.0f, via[static_cast<size_t>(i)]) << i;
      }
      // Too little scratch for the packing: another method.
      EXPECT_NE(ConvMethod::kNchwc, ChooseConvMethod(p, ConvNchwcPackedElements(p) - 1));
    }
    // Sums of 9 C terms of magnitude < 1 in two orders: a few ulps of sqrt(9 C) each.
    const double tol = 4e-7 * static_cast<double>(9 * p.in_channels);
    double worst = 0;
    for (int64_t i = 0; i < ny; ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(want[static_cast<size_t>(i)]) -
                                        got[static_cast<size_t>(i)]));
    }
    EXPECT_LE(worst, tol) << s.c << "->" << s.o << " at " << s.h;
  }
  // The layers with at least 196 outputs per channel (packing w on every call costs too much
  // for 2 x 7 x 7): all but the 7x7 one.
  EXPECT_EQ(4, chosen);
}

// The epilogue (bias, residual, relu; a NaN input) is bitwise the plain NCHWc result followed
// by the unfused f32 adds and max(., 0), for 1 and 2 threads.
TEST_P(ConvNchwcTest, EpilogueIsTheUnfusedAddAndRelu) {
  if (!TargetHasKernel()) return;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  ThreadPool pool2(2);
  const Shape shapes[] = {{2, 2, 24, 37, 9, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                          {2, 2, 19, 20, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}};
  for (const Shape& s : shapes) {
    ConvParams p;
    ASSERT_TRUE(Params(s, &p));
    ASSERT_TRUE(ConvNchwcSupports(p));
    std::vector<float> x(static_cast<size_t>(p.batch * p.in_channels * Plane(p, p.in)));
    std::vector<float> w(static_cast<size_t>(p.out_channels * p.in_channels * 9));
    std::vector<float> bias(static_cast<size_t>(p.out_channels));
    for (float& v : x) v = u(rng);
    for (float& v : w) v = u(rng);
    for (float& v : bias) v = u(rng);
    x[3] = std::numeric_limits<float>::quiet_NaN();
    const int64_t plane = Plane(p, p.out), ny = p.batch * p.out_channels * plane;
    std::vector<float> residual(static_cast<size_t>(ny));
    for (float& v : residual) v = u(rng);
    const PackedConvNchwcF32 wt = PackConvNchwcF32(p, w.data());
    std::vector<float> plain(static_cast<size_t>(ny));
    ASSERT_TRUE(ConvNchwcF32(p, x.data(), wt, plain.data(), ConvEpilogue(), nullptr));
    for (int mode = 0; mode < 5; ++mode) {
      ConvEpilogue ep;
      ep.bias = mode != 1 && mode != 4 ? bias.data() : nullptr;
      ep.residual = mode >= 3 ? residual.data() : nullptr;
      ep.relu = mode != 0 && mode != 4;
      std::vector<float> want(plain);
      for (int64_t i = 0; i < ny; ++i) {
        float v = want[static_cast<size_t>(i)];
        if (ep.bias != nullptr) v = v + bias[static_cast<size_t>(i / plane % p.out_channels)];
        if (ep.residual != nullptr) v = v + residual[static_cast<size_t>(i)];
        if (ep.relu) v = v != v ? v + 0.0f : (v > 0.0f ? v : 0.0f);
        want[static_cast<size_t>(i)] = v;
      }
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        std::vector<float> got(static_cast<size_t>(ny) + 1, 7.0f);
        ASSERT_TRUE(ConvNchwcF32(p, x.data(), wt, got.data(), ep, pool));
        EXPECT_EQ(7.0f, got.back());
        for (int64_t i = 0; i < ny; ++i) {
          const float a = want[static_cast<size_t>(i)], b = got[static_cast<size_t>(i)];
          ASSERT_TRUE((a != a && b != b) || std::memcmp(&a, &b, sizeof(float)) == 0)
              << "mode " << mode << " element " << i << " want " << a << " got " << b;
        }
      }
    }
  }
}

// Shapes it does not take, and a packing for another shape, return false writing nothing.
TEST_P(ConvNchwcTest, RefusesWritingNothing) {
  if (!TargetHasKernel()) return;
  ConvParams p;
  ASSERT_TRUE(Params({2, 1, 8, 8, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, &p));
  std::vector<float> x(8 * 36, 1.0f), w(8 * 8 * 9, 1.0f), y(8 * 36, 5.0f);
  const PackedConvNchwcF32 wt = PackConvNchwcF32(p, w.data());
  ASSERT_FALSE(wt.empty());
  ConvParams q = p;
  q.groups = 2;  // groups
  EXPECT_FALSE(ConvNchwcSupports(q));
  EXPECT_TRUE(PackConvNchwcF32(q, w.data()).empty());
  EXPECT_FALSE(ConvNchwcF32(q, x.data(), wt, y.data(), ConvEpilogue(), nullptr));
  q = p;
  q.lhs_dilation[0] = 2;  // input dilation
  q.out[0] = 11;
  EXPECT_FALSE(ConvNchwcF32(q, x.data(), wt, y.data(), ConvEpilogue(), nullptr));
  q = p;
  q.stride[1] = 3;  // column stride 3
  q.out[1] = 2;
  EXPECT_FALSE(ConvNchwcF32(q, x.data(), wt, y.data(), ConvEpilogue(), nullptr));
  q = p;
  q.out_channels = 4;  // another shape than the packing's
  EXPECT_FALSE(ConvNchwcF32(q, x.data(), wt, y.data(), ConvEpilogue(), nullptr));
  q = p;
  q.stride[0] = 0;  // invalid
  EXPECT_FALSE(ConvNchwcF32(q, x.data(), wt, y.data(), ConvEpilogue(), nullptr));
  for (float v : y) EXPECT_EQ(5.0f, v);
  EXPECT_TRUE(ConvNchwcF32(p, x.data(), wt, y.data(), ConvEpilogue(), nullptr));
  EXPECT_EQ(8.0f * 4, y[0]);  // a corner: 4 taps x 8 channels of ones
  EXPECT_EQ(8.0f * 9, y[7]);  // inside: 9 taps
}

}  // namespace
}  // namespace kernels
}  // namespace shp
