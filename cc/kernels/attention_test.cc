// Tests of the fused attention kernel on every compiled Highway target (dispatch forced to each)
// against a long double reference of its definition (attention.h).
#include "cc/kernels/attention.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

struct Case {
  int64_t batch = 1, hq = 1, hkv = 1, s = 1, l = 1, d = 1, dv = 1;
  double scale = 0.5;
  AttentionCausal causal = AttentionCausal::kNone;
  AttentionMask mask_kind = AttentionMask::kNone;
  // The mask's shape [mb, mh, ms, ml], each 1 (broadcast) or the full extent.
  bool mask_full[4] = {true, true, true, true};
};

template <class T>
struct Arrays {
  std::vector<T> q, k, v, fmask;
  std::vector<uint8_t> bmask;
  std::vector<int64_t> offsets;
  AttentionParams p;
};

template <class T>
Arrays<T> Make(const Case& c, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-2, 2);
  Arrays<T> a;
  auto fill = [&](std::vector<T>& x, int64_t n) {
    x.resize(static_cast<size_t>(n));
    for (auto& e : x) e = static_cast<T>(u(rng));
  };
  fill(a.q, c.batch * c.hq * c.s * c.d);
  fill(a.k, c.batch * c.hkv * c.l * c.d);
  fill(a.v, c.batch * c.hkv * c.l * c.dv);
  AttentionParams& p = a.p;
  p.batch = c.batch;
  p.hq = c.hq;
  p.hkv = c.hkv;
  p.s = c.s;
  p.l = c.l;
  p.d = c.d;
  p.dv = c.dv;
  p.scale = c.scale;
  p.causal = c.causal;
  p.mask_kind = c.mask_kind;
  if (c.mask_kind != AttentionMask::kNone) {
    const int64_t ext[4] = {c.mask_full[0] ? c.batch : 1, c.mask_full[1] ? c.hq : 1,
                            c.mask_full[2] ? c.s : 1, c.mask_full[3] ? c.l : 1};
    const int64_t n = ext[0] * ext[1] * ext[2] * ext[3];
    const int64_t st[4] = {ext[1] * ext[2] * ext[3], ext[2] * ext[3], ext[3], 1};
    for (int64_t b = 0; b < c.batch; ++b) a.offsets.push_back(c.mask_full[0] ? b * st[0] : 0);
    for (int i = 0; i < 3; ++i) p.mask_strides[i] = c.mask_full[i + 1] ? st[i + 1] : 0;
    if (c.mask_kind == AttentionMask::kBool) {
      a.bmask.resize(static_cast<size_t>(n));
      for (auto& e : a.bmask) e = rng() % 4 != 0;  // 3/4 kept
      p.mask = a.bmask.data();
    } else {
      fill(a.fmask, n);
      for (auto& e : a.fmask) {
        if (rng() % 5 == 0) e = -std::numeric_limits<T>::infinity();
      }
      p.mask = a.fmask.data();
    }
    p.mask_batch_offsets = a.offsets.data();
  }
  return a;
}

// The definition in long double: NaN where the result is NaN.
template <class T>
std::vector<long double> Reference(const Arrays<T>& a) {
  const AttentionParams& p = a.p;
  std::vector<long double> out(static_cast<size_t>(p.batch * p.hq * p.s * p.dv), 0.0L);
  const long double ninf = -std::numeric_limits<long double>::infinity();
  const int64_t g = p.hkv > 0 ? p.hq / p.hkv : 1;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t h = 0; h < p.hq; ++h) {
      const int64_t kh = b * p.hkv + h / g, qh = b * p.hq + h;
      for (int64_t i = 0; i < p.s; ++i) {
        std::vector<long double> z(static_cast<size_t>(p.l));
        bool bias_live = false, z_live = false;
        for (int64_t j = 0; j < p.l; ++j) {
          long double dot = 0;
          for (int64_t e = 0; e < p.d; ++e) {
            dot += static_cast<long double>(a.q[static_cast<size_t>((qh * p.s + i) * p.d + e)]) *
                   a.k[static_cast<size_t>((kh * p.l + j) * p.d + e)];
          }
          long double cb = 0, mb = 0;
          if (p.causal == AttentionCausal::kUpperLeft && j > i) cb = ninf;
          if (p.causal == AttentionCausal::kLowerRight && j > i + p.l - p.s) cb = ninf;
          if (p.mask_kind != AttentionMask::kNone) {
            const size_t at =
                static_cast<size_t>(a.offsets[static_cast<size_t>(b)] + h * p.mask_strides[0] +
                                    i * p.mask_strides[1] + j * p.mask_strides[2]);
            mb = p.mask_kind == AttentionMask::kBool ? (a.bmask[at] ? 0.0L : ninf)
                                                     : static_cast<long double>(a.fmask[at]);
          }
          const long double bias = cb + mb;
          bias_live = bias_live || !(bias == ninf);
          z[static_cast<size_t>(j)] = dot * p.scale + bias;
          z_live = z_live || !(z[static_cast<size_t>(j)] == ninf);
        }
        long double* o = &out[static_cast<size_t>((qh * p.s + i) * p.dv)];
        if (!bias_live || !z_live) continue;  // zero row
        long double mx = ninf;
        bool nan = false;
        for (long double x : z) {
          if (std::isnan(x)) nan = true;
          mx = std::max(mx, x);
        }
        if (nan || std::isinf(mx)) {
          for (int64_t e = 0; e < p.dv; ++e) o[e] = NAN;
          continue;
        }
        long double sum = 0;
        for (long double& x : z) sum += (x = std::exp(x - mx));
        for (int64_t j = 0; j < p.l; ++j) {
          for (int64_t e = 0; e < p.dv; ++e) {
            o[e] += z[static_cast<size_t>(j)] / sum *
                    a.v[static_cast<size_t>((kh * p.l + j) * p.dv + e)];
          }
        }
      }
    }
  }
  return out;
}

template <class T>
DType DTypeOfT() {
  return sizeof(T) == 4 ? DType::kF32 : DType::kF64;
}

template <class T>
void Check(const Case& c, std::mt19937& rng, const std::string& what) {
  Arrays<T> a = Make<T>(c, rng);
  const std::vector<long double> want = Reference(a);
  std::vector<T> got(want.size() + 1, T(7));
  ASSERT_TRUE(
      Attention(DTypeOfT<T>(), a.p, a.q.data(), a.k.data(), a.v.data(), got.data(), nullptr))
      << what;
  ASSERT_EQ(T(7), got.back()) << what;  // nothing past the end
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << " at " << i;
    } else {
      ASSERT_NEAR(static_cast<double>(want[i]), static_cast<double>(got[i]),
                  tol * (1 + std::fabs(static_cast<double>(want[i]))))
          << what << " at " << i;
    }
  }
  // Threads: the same bits.
  for (int t : {2, 3}) {
    ThreadPool pool(t);
    std::vector<T> again(want.size() + 1, T(7));
    ASSERT_TRUE(
        Attention(DTypeOfT<T>(), a.p, a.q.data(), a.k.data(), a.v.data(), again.data(), &pool));
    ASSERT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(T)))
        << what << " threads " << t;
  }
}

template <class T>
void CheckRandom() {
  std::mt19937 rng(17);
  for (int iter = 0; iter < 120; ++iter) {
    Case c;
    c.batch = rng() % 3;
    c.hkv = 1 + rng() % 3;
    c.hq = c.hkv * (1 + rng() % 3);
    c.s = rng() % (iter < 100 ? 12 : 150);
    c.l = rng() % (iter < 100 ? 20 : 150);
    c.d = rng() % 9;
    c.dv = rng() % 7;
    c.scale = iter % 4 == 0 ? 1.0 : (iter % 4 == 1 ? -0.3 : 0.4);
    c.causal = static_cast<AttentionCausal>(rng() % 3);
    c.mask_kind = static_cast<AttentionMask>(rng() % 3);
    for (bool& f : c.mask_full) f = rng() % 2 == 0;
    std::string what = "iter " + std::to_string(iter);
    Check<T>(c, rng, what);
    if (testing::Test::HasFatalFailure()) return;
  }
}

HWY_BEFORE_TEST(AttentionTest);

TEST_P(AttentionTest, MatchesReferenceF32) { CheckRandom<float>(); }
TEST_P(AttentionTest, MatchesReferenceF64) { CheckRandom<double>(); }

// Large enough for several row blocks and threads: [2, 4 (GQA over 2), 200, 300] with a
// broadcast float mask and both causal alignments.
TEST_P(AttentionTest, BlocksOfRowsAndThreads) {
  std::mt19937 rng(3);
  for (auto causal :
       {AttentionCausal::kNone, AttentionCausal::kUpperLeft, AttentionCausal::kLowerRight}) {
    Case c;
    c.batch = 2;
    c.hq = 4;
    c.hkv = 2;
    c.s = 200;
    c.l = 300;
    c.d = 24;
    c.dv = 17;
    c.causal = causal;
    c.mask_kind = AttentionMask::kAdd;
    c.mask_full[1] = false;
    Check<float>(c, rng, "blocks");
  }
}

// A query whose keys are all masked (by the bool mask, by a -inf float mask, or before the
// causal frontier when s > l with the lower-right alignment) gives a zero row, not NaN; NaN in
// a live row's scores makes the row NaN (the softmax op's rule).
TEST_P(AttentionTest, FullyMaskedRowsAreZero) {
  const float q[2] = {1, 2}, k[3] = {1, -1, 0.5f}, v[3] = {3, 4, 5};
  const uint8_t none[3] = {0, 0, 0};
  const int64_t zero = 0;
  AttentionParams p;
  p.batch = p.hq = p.hkv = 1;
  p.s = 2;
  p.l = 3;
  p.d = p.dv = 1;
  p.mask_kind = AttentionMask::kBool;
  p.mask = none;
  p.mask_batch_offsets = &zero;
  float out[2] = {9, 9};
  ASSERT_TRUE(Attention(DType::kF32, p, q, k, v, out, nullptr));
  EXPECT_EQ(0.0f, out[0]);
  EXPECT_EQ(0.0f, out[1]);
  const float ninf[3] = {-INFINITY, -INFINITY, -INFINITY};
  p.mask_kind = AttentionMask::kAdd;
  p.mask = ninf;
  ASSERT_TRUE(Attention(DType::kF32, p, q, k, v, out, nullptr));
  EXPECT_EQ(0.0f, out[0]);
  // Lower-right causal with s = 3 > l = 1: query 0 sees key j <= 0 + (1 - 3) (none), query 2
  // sees key 0.
  p.mask_kind = AttentionMask::kNone;
  p.causal = AttentionCausal::kLowerRight;
  p.s = 3;
  p.l = 1;
  const float q3[3] = {1, 1, 1};
  float out3[3] = {9, 9, 9};
  ASSERT_TRUE(Attention(DType::kF32, p, q3, k, v, out3, nullptr));
  EXPECT_EQ(0.0f, out3[0]);
  EXPECT_EQ(0.0f, out3[1]);
  EXPECT_EQ(3.0f, out3[2]);
  // A NaN score in a live row: NaN; the same NaN in a fully masked row: 0.
  const float qn[2] = {NAN, 1};
  p.causal = AttentionCausal::kNone;
  p.s = 2;
  p.l = 3;
  ASSERT_TRUE(Attention(DType::kF32, p, qn, k, v, out, nullptr));
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_FALSE(std::isnan(out[1]));
  p.mask_kind = AttentionMask::kBool;
  p.mask = none;
  ASSERT_TRUE(Attention(DType::kF32, p, qn, k, v, out, nullptr));
  EXPECT_EQ(0.0f, out[0]);
}

TEST(Attention, RejectsBadArguments) {
  float f = 0;
  AttentionParams p;
  p.batch = p.hq = p.hkv = p.s = p.l = p.d = p.dv = 1;
  int32_t i = 0;
  EXPECT_FALSE(Attention(DType::kI32, p, &i, &i, &i, &i, nullptr));
  EXPECT_EQ(0, i);
  p.hq = 3;
  p.hkv = 2;  // not a multiple
  EXPECT_FALSE(Attention(DType::kF32, p, &f, &f, &f, &f, nullptr));
  p.hq = p.hkv = 1;
  p.scale = NAN;
  EXPECT_FALSE(Attention(DType::kF32, p, &f, &f, &f, &f, nullptr));
  p.scale = 1;
  p.s = -1;
  EXPECT_FALSE(Attention(DType::kF32, p, &f, &f, &f, &f, nullptr));
  p.s = 1;
  EXPECT_FALSE(Attention(DType::kF32, p, &f, &f, &f, nullptr, nullptr));
  p.mask_kind = AttentionMask::kBool;  // no mask data
  EXPECT_FALSE(Attention(DType::kF32, p, &f, &f, &f, &f, nullptr));
  EXPECT_EQ(0.0f, f);
  p.s = 0;  // empty result: nothing read
  EXPECT_TRUE(Attention(DType::kF32, p, nullptr, nullptr, nullptr, nullptr, nullptr));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
