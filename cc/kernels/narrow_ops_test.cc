// f16 and bf16 in softmax, layer_norm and the reductions (their kernels widen blocks to f32):
// bit for bit the results of convert -> the f32 kernel -> convert (the tracer's form of these
// ops on narrow operands), on every compiled Highway target, for every reduction, axes inner
// and outer (and several), extents 0 and 1, tails around the vector and block sizes, NaN, inf,
// subnormals, in place, and 1, 2 or 3 threads.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cc/kernels/layernorm.h"
#include "cc/kernels/narrow.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/reduce.h"
#include "cc/kernels/softmax.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

using Bits = std::vector<uint16_t>;

std::vector<float> Widen(DType t, const Bits& x) {
  std::vector<float> f(x.size());
  EXPECT_TRUE(ConvertElements(t, x.data(), DType::kF32, f.data(), x.size()));
  return f;
}

Bits Round(DType t, const std::vector<float>& f) {
  Bits x(f.size());
  EXPECT_TRUE(ConvertElements(DType::kF32, f.data(), t, x.data(), f.size()));
  return x;
}

// Random values of t: mostly ordinary magnitudes, some raw bit patterns (subnormals, NaN
// payloads, infinities, huge values) where `specials`.
Bits RandomBits(DType t, size_t n, std::mt19937* rng, bool specials) {
  std::uniform_real_distribution<float> u(-6, 6);
  std::vector<float> f(n);
  for (float& v : f) v = u(*rng);
  Bits x = Round(t, f);
  if (specials && n > 0) {
    const uint16_t inf = t == DType::kF16 ? 0x7c00 : 0x7f80;
    const uint16_t pick[] = {inf,
                             static_cast<uint16_t>(inf | 0x8000),
                             static_cast<uint16_t>(inf | 1),
                             static_cast<uint16_t>(inf | 0x8000 | 0x40),
                             0x0001,
                             0x8003,
                             0x8000,
                             static_cast<uint16_t>(inf - 1)};
    for (size_t k = 0; k < 1 + n / 50; ++k) x[(*rng)() % n] = pick[(*rng)() % 8];
    for (size_t k = 0; k < 1 + n / 80; ++k) x[(*rng)() % n] = static_cast<uint16_t>((*rng)());
  }
  return x;
}

std::string Name(DType t) { return t == DType::kF16 ? "f16" : "bf16"; }

bool IsNaNBits(DType t, uint16_t h) {
  return t == DType::kF16 ? (h & 0x7fff) > 0x7c00 : (h & 0x7fff) > 0x7f80;
}

// Equal bits, a NaN's sign and payload aside (the runtime's fusion contract: the compiler may
// swap the operands of a commutative operation, which decides the NaN that propagates, in one
// copy of the f32 code and not in another; seen on the SCALAR target).
::testing::AssertionResult SameBits(DType t, const Bits& want, const Bits& got) {
  if (want.size() != got.size()) {
    return ::testing::AssertionFailure() << "sizes " << want.size() << " and " << got.size();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i] || (IsNaNBits(t, want[i]) && IsNaNBits(t, got[i]))) continue;
    return ::testing::AssertionFailure() << "element " << i << ": want 0x" << std::hex << want[i]
                                         << ", got 0x" << got[i] << std::dec;
  }
  return ::testing::AssertionSuccess();
}

// ---- softmax ----

Bits SoftmaxViaF32(DType t, const Bits& x, int64_t outer, int64_t axis, int64_t inner) {
  std::vector<float> f = Widen(t, x), y(x.size());
  EXPECT_TRUE(Softmax(DType::kF32, f.data(), outer, axis, inner, y.data(), nullptr));
  return Round(t, y);
}

void CheckSoftmax(DType t, int64_t outer, int64_t axis, int64_t inner, bool specials,
                  std::mt19937* rng) {
  const size_t n = static_cast<size_t>(outer * axis * inner);
  const Bits x = RandomBits(t, n, rng, specials);
  const Bits want = SoftmaxViaF32(t, x, outer, axis, inner);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    Bits got(n + 1, 0x1234);
    ASSERT_TRUE(Softmax(t, x.data(), outer, axis, inner, got.data(), &pool));
    ASSERT_EQ(0x1234, got.back());
    got.pop_back();
    ASSERT_TRUE(SameBits(t, want, got)) << Name(t) << " softmax " << outer << "x" << axis << "x"
                                        << inner << ", " << threads << " threads";
    Bits inplace = x;
    ASSERT_TRUE(Softmax(t, inplace.data(), outer, axis, inner, inplace.data(), &pool));
    ASSERT_TRUE(SameBits(t, want, inplace)) << "in place";
  }
}

// ---- layer_norm ----

Bits LayerNormViaF32(DType t, const Bits& x, int64_t rows, int64_t cols, const Bits* scale,
                     const Bits* bias, double eps) {
  std::vector<float> f = Widen(t, x), y(x.size()), s, b;
  if (scale != nullptr) s = Widen(t, *scale);
  if (bias != nullptr) b = Widen(t, *bias);
  EXPECT_TRUE(LayerNorm(DType::kF32, f.data(), rows, cols, scale ? s.data() : nullptr,
                        bias ? b.data() : nullptr, eps, y.data(), nullptr));
  if (cols == 0) return x;  // nothing written
  return Round(t, y);
}

void CheckLayerNorm(DType t, int64_t rows, int64_t cols, bool params, bool specials,
                    std::mt19937* rng) {
  const size_t n = static_cast<size_t>(rows * cols);
  const Bits x = RandomBits(t, n, rng, specials);
  // With specials, NaN and inf in scale and bias too: NaN lanes beside others in one store.
  const Bits scale = RandomBits(t, static_cast<size_t>(cols), rng, specials && params);
  const Bits bias = RandomBits(t, static_cast<size_t>(cols), rng, specials && params);
  const Bits* s = params ? &scale : nullptr;
  const Bits* b = params && cols % 2 == 0 ? &bias : nullptr;  // scale alone, or both
  const Bits want = LayerNormViaF32(t, x, rows, cols, s, b, 1e-5);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    Bits got = x;
    got.push_back(0x1234);
    ASSERT_TRUE(LayerNorm(t, x.data(), rows, cols, s ? s->data() : nullptr, b ? b->data() : nullptr,
                          1e-5, got.data(), &pool));
    ASSERT_EQ(0x1234, got.back());
    got.pop_back();
    ASSERT_TRUE(SameBits(t, want, got))
        << Name(t) << " layer_norm " << rows << "x" << cols << ", " << threads << " threads";
    Bits inplace = x;
    ASSERT_TRUE(LayerNorm(t, inplace.data(), rows, cols, s ? s->data() : nullptr,
                          b ? b->data() : nullptr, 1e-5, inplace.data(), &pool));
    ASSERT_TRUE(SameBits(t, want, inplace)) << "in place";
  }
}

// ---- reductions ----

const ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin,
                         ReduceOp::kProd};

void CheckReduce(DType t, ReduceOp op, const std::vector<int64_t>& shape,
                 const std::vector<bool>& axes, bool specials, std::mt19937* rng) {
  int64_t total = 1, out_n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    total *= shape[d];
    if (!axes[d]) out_n *= shape[d];
  }
  const Bits x = RandomBits(t, static_cast<size_t>(total), rng, specials);
  bool red[64] = {};
  for (size_t d = 0; d < axes.size(); ++d) red[d] = axes[d];
  const int rank = static_cast<int>(shape.size());
  std::vector<float> f = Widen(t, x), y(static_cast<size_t>(out_n));
  ASSERT_TRUE(ReduceAxes(op, DType::kF32, f.data(), rank, shape.data(), red, y.data(), nullptr));
  const Bits want = Round(t, y);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    Bits got(static_cast<size_t>(out_n) + 1, 0x1234);
    ASSERT_TRUE(ReduceAxes(op, t, x.data(), rank, shape.data(), red, got.data(), &pool));
    ASSERT_EQ(0x1234, got.back());
    got.pop_back();
    std::string s;
    for (size_t d = 0; d < shape.size(); ++d)
      s += std::to_string(shape[d]) + (axes[d] ? "r " : " ");
    ASSERT_TRUE(SameBits(t, want, got)) << Name(t) << " reduce op " << static_cast<int>(op)
                                        << " shape " << s << threads << " threads";
  }
}

HWY_BEFORE_TEST(NarrowOpsTest);

TEST_P(NarrowOpsTest, SoftmaxEqualsConvertF32Convert) {
  std::mt19937 rng(1);
  for (DType t : {DType::kF16, DType::kBF16}) {
    // Rows (inner 1): lengths around the vector widths, the flush size and the row block.
    for (int64_t axis : {1, 2, 7, 15, 16, 17, 31, 33, 64, 255, 256, 257, 1000, 4099, 20000}) {
      CheckSoftmax(t, 3, axis, 1, axis % 2 == 1, &rng);
    }
    CheckSoftmax(t, 400, 100, 1, true, &rng);  // several row blocks per chunk
    CheckSoftmax(t, 0, 5, 1, false, &rng);
    CheckSoftmax(t, 3, 0, 1, false, &rng);
    // Columns (inner > 1): column blocks, tails, several outer indices.
    for (int64_t inner : {2, 5, 16, 17, 33, 100, 1500}) {
      for (int64_t axis : {1, 3, 40, 700}) CheckSoftmax(t, 2, axis, inner, inner % 3 != 0, &rng);
    }
    CheckSoftmax(t, 1, 4, 70000, true, &rng);  // many column blocks of one slice
  }
}

// The narrow column path and the f32 one agree column by column: a column with a NaN, +inf or
// only -inf entries is all NaN, and does not change the bits of the columns beside it.
TEST_P(NarrowOpsTest, SoftmaxColumnsAreIndependent) {
  const int64_t axis = 5, inner = 40;
  std::mt19937 rng(3);
  std::vector<float> x(static_cast<size_t>(axis * inner));
  std::uniform_real_distribution<float> u(-4, 4);
  for (float& v : x) v = u(rng);
  std::vector<float> clean(x.size()), dirty(x.size());
  ASSERT_TRUE(Softmax(DType::kF32, x.data(), 1, axis, inner, clean.data(), nullptr));
  std::vector<float> y = x;
  y[static_cast<size_t>(2 * inner + 3)] = NAN;       // column 3: NaN
  y[static_cast<size_t>(1 * inner + 7)] = INFINITY;  // column 7: +inf
  for (int64_t k = 0; k < axis; ++k) y[static_cast<size_t>(k * inner + 11)] = -INFINITY;
  y[static_cast<size_t>(4 * inner + 20)] = -INFINITY;  // column 20: one masked entry
  ASSERT_TRUE(Softmax(DType::kF32, y.data(), 1, axis, inner, dirty.data(), nullptr));
  for (int64_t k = 0; k < axis; ++k) {
    for (int64_t j = 0; j < inner; ++j) {
      const size_t i = static_cast<size_t>(k * inner + j);
      if (j == 3 || j == 7 || j == 11) {
        EXPECT_TRUE(std::isnan(dirty[i])) << k << "," << j;
      } else if (j == 20) {
        if (k == 4) {
          EXPECT_EQ(0.0f, dirty[i]);
        }
      } else {
        EXPECT_EQ(clean[i], dirty[i]) << k << "," << j;
      }
    }
  }
}

TEST_P(NarrowOpsTest, LayerNormEqualsConvertF32Convert) {
  std::mt19937 rng(2);
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (int64_t cols : {1, 2, 7, 16, 17, 33, 255, 256, 257, 1024, 5000, 20000}) {
      CheckLayerNorm(t, 3, cols, false, cols % 2 == 1, &rng);
      CheckLayerNorm(t, 2, cols, true, false, &rng);
      CheckLayerNorm(t, 2, cols, true, true, &rng);
    }
    CheckLayerNorm(t, 300, 100, false, true, &rng);  // several row blocks per chunk
    CheckLayerNorm(t, 0, 8, false, false, &rng);
    CheckLayerNorm(t, 4, 0, false, false, &rng);
  }
}

TEST_P(NarrowOpsTest, ReductionsEqualConvertF32Convert) {
  std::mt19937 rng(4);
  struct Case {
    std::vector<int64_t> shape;
    std::vector<bool> axes;
  };
  const std::vector<Case> cases = {
      {{37}, {true}},                              // one row
      {{5, 1000}, {false, true}},                  // inner axis
      {{1000, 5}, {true, false}},                  // outer axis
      {{3, 17, 33}, {false, true, false}},         // middle, short columns
      {{2, 40, 1500}, {false, true, false}},       // column blocks of 1024 and a tail
      {{2, 70000}, {false, true}},                 // rows in 32768-element blocks
      {{3, 5, 7}, {true, false, true}},            // two axis groups
      {{4, 6, 5, 3}, {false, true, false, true}},  // two groups, inner last
      {{6, 1, 9}, {true, true, false}},            // an extent-1 axis joins the group
      {{1, 1}, {true, true}},                      // size 1
      {{4, 0, 3}, {false, true, false}},           // empty reduced axis: identities
      {{0, 5}, {false, true}},                     // empty output
      {{7, 9}, {false, false}},                    // no reduced axis
      {{}, {}},                                    // rank 0
  };
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (ReduceOp op : kOps) {
      for (size_t c = 0; c < cases.size(); ++c) {
        CheckReduce(t, op, cases[c].shape, cases[c].axes, c % 2 == 0, &rng);
      }
    }
  }
}

TEST(NarrowOps, NarrowIntegersAreStillRefused) {
  int8_t x = 1;
  bool red[1] = {true};
  const int64_t shape[1] = {1};
  EXPECT_FALSE(ReduceAxes(ReduceOp::kSum, DType::kI8, &x, 1, shape, red, &x, nullptr));
  EXPECT_FALSE(Softmax(DType::kU8, &x, 1, 1, 1, &x, nullptr));
  EXPECT_FALSE(LayerNorm(DType::kI8, &x, 1, 1, nullptr, nullptr, 1e-5, &x, nullptr));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
