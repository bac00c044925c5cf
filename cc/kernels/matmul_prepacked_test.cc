// MatmulF32Prepacked must equal MatmulF32 on the unpacked B bitwise (same micro-kernel and
// accumulation order), for any thread count, stride layout of B, batch and accumulate mode,
// and reject what it cannot compute; the fused bias / relu epilogue must equal the unfused
// elementwise add and max bitwise. Every TEST_P runs once per Highway target compiled into
// the library and supported by this CPU (the dispatch is forced to each in turn); results
// are also checked against a long double reference, so an error shared with MatmulF32 fails.
#include "cc/kernels/matmul_prepacked.h"

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/matmul.h"
#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/aligned_allocator.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void ExpectBitwise(const std::vector<float>& got, const std::vector<float>& want,
                   const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << what;
}

// C (row-major m x n, or its accumulation onto c0) against sum_p A[i,p] B[p,j] in long double:
// |got - want| <= 4 (k + 1) eps sum_p |A[i,p] B[p,j]| (float accumulation, FMA or not). NaN
// must meet NaN and an infinity the same infinity (IEEE propagation, whatever the order).
// B[p, j] = b[p * brs + j * bcs]. Returns the number of mismatches (reports the first few).
int CheckAgainstReference(const std::vector<float>& got, const float* a, const float* b,
                          const std::vector<float>* c0, int64_t m, int64_t n, int64_t k,
                          int64_t brs, int64_t bcs, const std::string& what) {
  int failures = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      long double want = c0 == nullptr ? 0 : (*c0)[static_cast<size_t>(i * n + j)];
      long double bound = std::fabs(want);
      for (int64_t p = 0; p < k; ++p) {
        const long double prod = static_cast<long double>(a[i * k + p]) * b[p * brs + j * bcs];
        want += prod;
        bound += std::fabs(prod);
      }
      const float g = got[static_cast<size_t>(i * n + j)];
      bool ok;
      if (std::isnan(want)) {
        ok = std::isnan(g);
      } else if (std::isinf(want)) {
        ok = static_cast<long double>(g) == want;
      } else {
        ok = std::fabs(g - want) <=
             4 * (k + 1) * std::numeric_limits<float>::epsilon() * bound + 1e-30L;
      }
      if (!ok && ++failures <= 5) {
        ADD_FAILURE() << what << ": C[" << i << "," << j << "] = " << g << ", want "
                      << static_cast<double>(want);
      }
    }
  }
  return failures;
}

HWY_BEFORE_TEST(MatmulPrepackedTest);

TEST_P(MatmulPrepackedTest, MatchesMatmulF32BitwiseAndReference) {
  ThreadPool pool(3);
  // m = 1..4: a few rows of A read in place against groups of whole B panels (n = 64, 96, 128,
  // 256, 300 hold 2 to 8 panels) and the one-panel rest; m = 64, 130 with small k and n: the
  // unpacked product reads B in place (it fits in the L1), the pre-packed one does not.
  const int64_t ms[] = {1, 2, 3, 4, 7, 64, 130};
  const int64_t ns[] = {1, 10, 16, 17, 33, 48, 50, 64, 96, 128, 256, 300};
  const int64_t ks[] = {0, 1, 5, 256, 300, 520};  // 520: three k blocks of 256
  uint32_t seed = 1;
  for (int64_t m : ms) {
    for (int64_t n : ns) {
      for (int64_t k : ks) {
        for (bool transposed : {false, true}) {
          for (bool accumulate : {false, true}) {
            std::vector<float> a = Random(static_cast<size_t>(m * k), seed++);
            std::vector<float> b = Random(static_cast<size_t>(k * n), seed++);
            std::vector<float> c0 = Random(static_cast<size_t>(m * n), seed++);
            MatmulParams p = RowMajorMatmul(m, n, k, transposed);
            p.accumulate = accumulate;
            PackedMatrixF32 packed =
                PackedMatrixF32::Pack(b.data(), k, n, p.b_row_stride, p.b_col_stride);
            ASSERT_FALSE(packed.empty());
            EXPECT_EQ(packed.k(), k);
            EXPECT_EQ(packed.n(), n);
            std::vector<float> want = c0, got1 = c0, got3 = c0;
            ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), want.data(), nullptr));
            ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got1.data(), nullptr));
            ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got3.data(), &pool));
            std::string what = std::string(hwy::TargetName(GetParam())) +
                               " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                               " k=" + std::to_string(k) + (transposed ? " Bt" : "") +
                               (accumulate ? " acc" : "");
            ExpectBitwise(got1, want, what);
            ExpectBitwise(got3, want, what + " (3 threads)");
            // The reference is O(mnk): on the smaller products, which still cover every tile
            // tail (n % 8, n % 16), both k blocks (k > 256) and m beyond one row block.
            if (m * n * k <= 7 * 300 * 520) {
              EXPECT_EQ(
                  0, CheckAgainstReference(got1, a.data(), b.data(), accumulate ? &c0 : nullptr, m,
                                           n, k, p.b_row_stride, p.b_col_stride, what));
            }
          }
        }
      }
    }
  }
}

TEST_P(MatmulPrepackedTest, CallerPanelsMatchMatmulF32Bitwise) {
  // Panels written by the caller in MatmulF32PanelLayout (as the convolution writes its im2col
  // tiles), into C with a row stride wider than n, equal MatmulF32 on the unpacked B.
  ThreadPool pool(2);
  const int64_t shapes[][3] = {{64, 432, 576}, {64, 36, 576}, {7, 100, 300}, {130, 48, 5}};
  uint32_t seed = 5;
  for (const auto& sh : shapes) {
    const int64_t m = sh[0], n = sh[1], k = sh[2];
    const std::vector<float> a = Random(static_cast<size_t>(m * k), seed++);
    const std::vector<float> b = Random(static_cast<size_t>(k * n), seed++);
    const PanelLayoutF32 layout = MatmulF32PanelLayout(n);
    ASSERT_GT(layout.nr(), 0);
    const int64_t n_padded = layout.n_padded(n);
    // 64-byte aligned, as the micro-kernels load them (one more element for a misaligned copy).
    hwy::AlignedFreeUniquePtr<float[]> storage =
        hwy::AllocateAligned<float>(static_cast<size_t>(k * n_padded + 1));
    float* panels = storage.get();
    for (int64_t r = 0; r < k; ++r) {
      const int64_t pc = r / layout.kc * layout.kc, p = r - pc;
      const int64_t kc = std::min(layout.kc, k - pc);
      for (int64_t j = 0; j < n_padded; ++j) {
        panels[static_cast<size_t>(pc * n_padded + j / layout.nr() * kc * layout.nr() +
                                   p * layout.nr() + j % layout.nr())] =
            j < n ? b[static_cast<size_t>(r * n + j)] : 0.0f;
      }
    }
    const int64_t c_rs = n + 7;
    MatmulParams prm = RowMajorMatmul(m, n, k);
    prm.c_row_stride = c_rs;
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> want(static_cast<size_t>(m * c_rs), 3.0f), got = want;
      ASSERT_TRUE(MatmulF32(prm, a.data(), b.data(), want.data(), tp));
      ASSERT_TRUE(MatmulF32PrepackedPanels(prm, a.data(), panels, layout, got.data(), tp));
      ExpectBitwise(got, want, "m " + std::to_string(m) + " n " + std::to_string(n));
    }
    PanelLayoutF32 other = layout;
    other.lanes = other.lanes == 1 ? 2 : 1;
    std::vector<float> c(static_cast<size_t>(m * c_rs), 3.0f);
    EXPECT_FALSE(MatmulF32PrepackedPanels(prm, a.data(), panels, other, c.data(), nullptr));
    EXPECT_EQ(3.0f, c[0]);                     // refused: nothing written
    if (k > 0 && n > 0 && layout.lanes > 1) {  // not vector-aligned: refused
      std::copy(panels, panels + k * n_padded, panels + 1);
      EXPECT_FALSE(MatmulF32PrepackedPanels(prm, a.data(), panels + 1, layout, c.data(), nullptr));
      EXPECT_EQ(3.0f, c[0]);
    }
  }
}

TEST_P(MatmulPrepackedTest, BatchedABroadcastB) {
  ThreadPool pool(2);
  const int64_t batch = 3, m = 20, n = 40, k = 300;
  std::vector<float> a = Random(static_cast<size_t>(batch * m * k), 7);
  std::vector<float> b = Random(static_cast<size_t>(k * n), 8);
  MatmulParams p = BatchedRowMajorMatmul(batch, m, n, k, m * k, 0);
  PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
  std::vector<float> want(static_cast<size_t>(batch * m * n)), got(want.size()), got2(want.size());
  ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), want.data(), nullptr));
  ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), nullptr));
  ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got2.data(), &pool));
  const std::string tn = hwy::TargetName(GetParam());
  ExpectBitwise(got, want, tn + " batched");
  ExpectBitwise(got2, want, tn + " batched, 2 threads");
  for (int64_t t = 0; t < batch; ++t) {
    const std::vector<float> slice(got.begin() + t * m * n, got.begin() + (t + 1) * m * n);
    EXPECT_EQ(0, CheckAgainstReference(slice, a.data() + t * m * k, b.data(), nullptr, m, n, k, n,
                                       1, tn + " batch " + std::to_string(t)));
  }
}

// NaN and infinities in A, in the packed B (including next to its zero padding) and in an
// accumulated C reach exactly the outputs whose sums contain them; inf * 0 is NaN (no
// skipped zeros); a NaN already in C is ignored when not accumulating.
TEST_P(MatmulPrepackedTest, NaNAndInfPropagateAsIEEE) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(5);
  const int64_t shapes[][3] = {{1, 1, 1}, {7, 17, 5}, {13, 33, 300}, {9, 50, 40}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    for (bool accumulate : {false, true}) {
      std::vector<float> a = Random(static_cast<size_t>(m * k), static_cast<uint32_t>(m * n));
      std::vector<float> b = Random(static_cast<size_t>(k * n), static_cast<uint32_t>(n * k));
      std::vector<float> c0(static_cast<size_t>(m * n), nan);  // ignored unless accumulating
      if (accumulate) {
        c0 = Random(c0.size(), 3);
        c0[rng() % c0.size()] = nan;
        c0[rng() % c0.size()] = -inf;
      }
      a[rng() % a.size()] = nan;
      a[rng() % a.size()] = inf;
      b[rng() % b.size()] = -inf;
      b[rng() % b.size()] = nan;
      // An inf in A whose row meets a zero of B: that product is NaN.
      const int64_t i0 = static_cast<int64_t>(rng() % static_cast<uint32_t>(m));
      const int64_t p0 = static_cast<int64_t>(rng() % static_cast<uint32_t>(k));
      a[static_cast<size_t>(i0 * k + p0)] = -inf;
      b[static_cast<size_t>(p0 * n + (n - 1))] = 0.0f;  // last column: next to the padding
      MatmulParams p = RowMajorMatmul(m, n, k);
      p.accumulate = accumulate;
      PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
      std::vector<float> got = c0, plain = c0;
      ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), nullptr));
      ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), plain.data(), nullptr));
      const std::string what = std::string(hwy::TargetName(GetParam())) +
                               " specials m=" + std::to_string(m) + " n=" + std::to_string(n) +
                               " k=" + std::to_string(k) + (accumulate ? " acc" : "");
      EXPECT_EQ(0, CheckAgainstReference(got, a.data(), b.data(), accumulate ? &c0 : nullptr, m, n,
                                         k, n, 1, what));
      EXPECT_TRUE(std::isnan(got[static_cast<size_t>(i0 * n + n - 1)])) << what;
      ExpectBitwise(got, plain, what);
    }
  }
}

// A matrix packed while one target was dispatched, used while another is: either refused
// (false, C untouched: the panel layout differs) or, where the layouts agree, correct and
// equal to MatmulF32 on the target now dispatched.
TEST_P(MatmulPrepackedTest, PackedOnAnotherTarget) {
  const int64_t m = 11, n = 50, k = 70;
  std::vector<float> a = Random(static_cast<size_t>(m * k), 21);
  std::vector<float> b = Random(static_cast<size_t>(k * n), 22);
  const MatmulParams p = RowMajorMatmul(m, n, k);
  PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
  for (int64_t other : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(other);
    std::vector<float> got(static_cast<size_t>(m * n), 7.0f), want(got.size());
    const std::string what = std::string("packed on ") + hwy::TargetName(GetParam()) + ", run on " +
                             hwy::TargetName(other);
    if (MatmulF32Prepacked(p, a.data(), packed, got.data(), nullptr)) {
      ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), want.data(), nullptr));
      ExpectBitwise(got, want, what);
      EXPECT_EQ(0, CheckAgainstReference(got, a.data(), b.data(), nullptr, m, n, k, n, 1, what));
    } else {
      EXPECT_NE(other, GetParam()) << what;
      for (float x : got) ASSERT_EQ(7.0f, x) << what;
    }
  }
  // Back on the packing target, the matrix is accepted again.
  hwy::SetSupportedTargetsForTest(GetParam());
  std::vector<float> got(static_cast<size_t>(m * n));
  EXPECT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), nullptr));
}

TEST_P(MatmulPrepackedTest, RejectsWhatItCannotCompute) {
  std::vector<float> a(64), b(64), c(64, 5.0f);
  PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), 8, 8, 8, 1);
  MatmulParams p = RowMajorMatmul(8, 8, 4);  // k differs from the packed B
  EXPECT_FALSE(MatmulF32Prepacked(p, a.data(), packed, c.data(), nullptr));
  p = BatchedRowMajorMatmul(2, 4, 8, 8, 32, 64);  // B not broadcast over the batch
  EXPECT_FALSE(MatmulF32Prepacked(p, a.data(), packed, c.data(), nullptr));
  PackedMatrixF32 none;
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(MatmulF32Prepacked(RowMajorMatmul(8, 8, 8), a.data(), none, c.data(), nullptr));
  for (float x : c) EXPECT_EQ(x, 5.0f);
  PackedMatrixF32 moved = std::move(packed);
  EXPECT_TRUE(packed.empty());
  EXPECT_TRUE(MatmulF32Prepacked(RowMajorMatmul(8, 8, 8), a.data(), moved, c.data(), nullptr));
}

// The unfused dense-layer tail the epilogue replaces, run by the elementwise kernels: C[rows, n]
// = C + bias (broadcast over rows) if bias, then max(C, 0) if relu.
void UnfusedEpilogue(std::vector<float>* c, int64_t rows, int64_t n, const float* bias, bool relu) {
  if (bias == nullptr && !relu) return;
  ElementwiseProgram prog;
  int x = prog.Input(0, DType::kF32);
  if (bias != nullptr) x = prog.Binary(BinaryOp::kAdd, x, prog.Input(1, DType::kF32));
  if (relu) x = prog.Binary(BinaryOp::kMax, x, prog.Constant(DType::kF32, 0.0));
  prog.AddOutput(x);
  const int64_t shape[2] = {rows, n};
  const int64_t bias_strides[2] = {0, 1};
  const ElementwiseInput inputs[2] = {{c->data(), nullptr}, {bias, bias_strides}};
  void* outputs[1] = {c->data()};
  ASSERT_TRUE(
      EvalElementwise(prog, 2, shape, inputs, bias != nullptr ? 2 : 1, outputs, 1, nullptr));
}

// Fused bias + relu equals the product followed by the unfused add and max, bit for bit, on
// MatmulF32Prepacked and MatmulF32 (whose small-m path has its own store), for 1 and 3
// threads, at sizes around the tile edges (m around MR = 6 / 8, n around 8 / 16 / 24 / 32 /
// 48 lanes), with one and several k blocks and k = 0, and with NaN / inf in A and the bias.
TEST_P(MatmulPrepackedTest, EpilogueMatchesUnfusedBitwise) {
  ThreadPool pool(3);
  const int64_t ms[] = {1, 2, 5, 6, 7, 8, 9, 13, 17, 64, 131};
  const int64_t ns[] = {1, 7, 8, 9, 10, 16, 17, 24, 31, 33, 48, 49, 64, 256, 300};
  const int64_t ks[] = {0, 1, 9, 256, 300, 784};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 100;
  int64_t clamped = 0, kept = 0;
  for (int64_t m : ms) {
    for (int64_t n : ns) {
      for (int64_t k : ks) {
        if (m * n * k > 64 * 300 * 784) continue;
        std::vector<float> a = Random(static_cast<size_t>(m * k), seed++);
        std::vector<float> b = Random(static_cast<size_t>(k * n), seed++);
        std::vector<float> bias = Random(static_cast<size_t>(n), seed++);
        const bool specials = seed % 5 == 0;
        if (specials && k > 0) {
          a[seed % a.size()] = nan;
          a[(seed * 7) % a.size()] = -inf;
          bias[seed % bias.size()] = nan;
        }
        const MatmulParams p = RowMajorMatmul(m, n, k);
        PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
        std::vector<float> product(static_cast<size_t>(m * n));
        ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), product.data(), nullptr));
        for (int mode = 0; mode < 3; ++mode) {  // bias, relu, both
          const bool with_bias = mode != 1, relu = mode != 0;
          const MatmulEpilogue ep{with_bias ? bias.data() : nullptr, relu};
          std::vector<float> want = product;
          UnfusedEpilogue(&want, m, n, ep.bias, relu);
          const std::string what = std::string(hwy::TargetName(GetParam())) +
                                   " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                                   " k=" + std::to_string(k) + (with_bias ? " bias" : "") +
                                   (relu ? " relu" : "") + (specials ? " specials" : "");
          for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
            const std::string w = what + (tp != nullptr ? " (3 threads)" : "");
            std::vector<float> got(want.size(), 7.0f), plain(want.size(), 7.0f);
            ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), ep, tp)) << w;
            ExpectBitwise(got, want, w + " prepacked");
            ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), plain.data(), ep, tp)) << w;
            ExpectBitwise(plain, want, w + " MatmulF32");
          }
          // The unfused reference itself, element by element (so a shared error fails).
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              float x = product[static_cast<size_t>(i * n + j)];
              if (with_bias) x = x + bias[static_cast<size_t>(j)];
              if (relu && !std::isnan(x)) x = x > 0.0f ? x : 0.0f;
              const float y = want[static_cast<size_t>(i * n + j)];
              ASSERT_TRUE(std::isnan(x) ? std::isnan(y) : x == y)
                  << what << " at " << i << "," << j;
              if (relu) (x > 0.0f ? kept : clamped)++;
            }
          }
        }
      }
    }
  }
  // Both sides of the relu were exercised.
  EXPECT_GT(clamped, 1000);
  EXPECT_GT(kept, 1000);
}

// The MLP layers at batch 256 (784 -> 256 -> 256 -> 10, bias + relu), whose rows are split
// into more items than threads (claimed as threads free up): the same bits on 1, 2 and 3
// threads as MatmulF32 plus the unfused epilogue.
TEST_P(MatmulPrepackedTest, MlpBatch256SplitsIdentically) {
  ThreadPool pool2(2), pool3(3);
  const int64_t m = 256;
  const int64_t shapes[][2] = {{784, 256}, {256, 256}, {256, 10}};
  uint32_t seed = 51;
  for (const auto& kn : shapes) {
    const int64_t k = kn[0], n = kn[1];
    std::vector<float> a = Random(static_cast<size_t>(m * k), seed++);
    std::vector<float> b = Random(static_cast<size_t>(k * n), seed++);
    std::vector<float> bias = Random(static_cast<size_t>(n), seed++);
    MatmulParams p = RowMajorMatmul(m, n, k);
    PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
    std::vector<float> want(static_cast<size_t>(m * n));
    ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), want.data(), nullptr));
    UnfusedEpilogue(&want, m, n, bias.data(), true);
    const MatmulEpilogue ep{bias.data(), true};
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
      std::vector<float> got(want.size(), -1.0f);
      ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), ep, tp));
      ExpectBitwise(got, want,
                    std::string(hwy::TargetName(GetParam())) + " m=256 k=" + std::to_string(k) +
                        " n=" + std::to_string(n) + " threads " +
                        std::to_string(tp == nullptr ? 1 : tp->num_threads()));
    }
  }
}

// Batched A with a broadcast B: the bias row applies to every batch index.
TEST_P(MatmulPrepackedTest, EpilogueBatched) {
  ThreadPool pool(2);
  const int64_t batch = 3, m = 20, n = 40, k = 300;
  std::vector<float> a = Random(static_cast<size_t>(batch * m * k), 31);
  std::vector<float> b = Random(static_cast<size_t>(k * n), 32);
  std::vector<float> bias = Random(static_cast<size_t>(n), 33);
  MatmulParams p = BatchedRowMajorMatmul(batch, m, n, k, m * k, 0);
  PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
  std::vector<float> want(static_cast<size_t>(batch * m * n)), got(want.size());
  ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), want.data(), nullptr));
  UnfusedEpilogue(&want, batch * m, n, bias.data(), true);
  const MatmulEpilogue ep{bias.data(), true};
  ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), ep, &pool));
  ExpectBitwise(got, want, std::string(hwy::TargetName(GetParam())) + " batched epilogue");
}

// accumulate = true with an epilogue that does something is refused, C untouched; an empty
// epilogue is the plain product (accumulating or not).
TEST_P(MatmulPrepackedTest, EpilogueRejectsAccumulate) {
  const int64_t m = 9, n = 20, k = 30;
  std::vector<float> a = Random(static_cast<size_t>(m * k), 41);
  std::vector<float> b = Random(static_cast<size_t>(k * n), 42);
  std::vector<float> bias = Random(static_cast<size_t>(n), 43);
  PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
  MatmulParams p = RowMajorMatmul(m, n, k);
  p.accumulate = true;
  const MatmulEpilogue eps[] = {{bias.data(), false}, {nullptr, true}, {bias.data(), true}};
  for (const MatmulEpilogue& ep : eps) {
    std::vector<float> c(static_cast<size_t>(m * n), 5.0f);
    EXPECT_FALSE(MatmulF32Prepacked(p, a.data(), packed, c.data(), ep, nullptr));
    EXPECT_FALSE(MatmulF32(p, a.data(), b.data(), c.data(), ep, nullptr));
    for (float x : c) ASSERT_EQ(x, 5.0f);
  }
  std::vector<float> c0 = Random(static_cast<size_t>(m * n), 44);
  std::vector<float> got = c0, want = c0;
  EXPECT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), MatmulEpilogue{}, nullptr));
  EXPECT_TRUE(MatmulF32Prepacked(p, a.data(), packed, want.data(), nullptr));
  ExpectBitwise(got, want, "empty epilogue, accumulate");
}

TEST(MatmulPrepacked, SeveralTargetsAreTested) {
  // See sum_test: an x86-64 build compiles several targets, and any CPU supports >= 2.
  EXPECT_GE(hwy::SupportedAndGeneratedTargets().size(), 2u);
}

}  // namespace
}  // namespace kernels
}  // namespace shp
