// The fused elementwise evaluator: broadcasting, strides, in-place outputs, threads, Mul+Add
// fusion, and the program builder's checks. Every TEST_P runs once per Highway target compiled
// into the library and supported by this CPU (the dispatch is forced to each in turn). The ops
// themselves are tested in elementwise_float_test.cc and elementwise_int_test.cc.
#include "cc/kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"
#include "cc/kernels/elementwise_test_util.h"

namespace shp {
namespace kernels {
namespace {

HWY_BEFORE_TEST(ElementwiseTest);

TEST_P(ElementwiseTest, DispatchesToForcedTarget) {
  EXPECT_STREQ(hwy::TargetName(GetParam()), SimdTargetName());
}

TEST_P(ElementwiseTest, BroadcastingAndStridesMatchReference) {
  std::mt19937 rng(123);
  for (int iter = 0; iter < 150; ++iter) {
    const int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> shape(static_cast<size_t>(rank));
    int64_t total = 1;
    for (auto& e : shape) {
      const uint32_t k = rng() % 10;
      e = k == 0 ? (rng() % 4 == 0 ? 0 : 1) : static_cast<int64_t>(rng() % (iter < 100 ? 9 : 70));
      total *= e;
    }
    // At most 2^20 elements (still ~1000 tiles): the per-element reference dominates the time.
    while (total > (1 << 20)) {
      int64_t& largest = *std::max_element(shape.begin(), shape.end());
      total = total / largest * (largest / 2);
      largest /= 2;
    }
    // Four inputs; each dim is broadcast (stride 0) with probability 1/3; layouts are a
    // random permutation of the non-broadcast dims with padding.
    std::vector<std::vector<float>> data(4);
    std::vector<std::vector<int64_t>> strides(4, std::vector<int64_t>(static_cast<size_t>(rank)));
    for (int k = 0; k < 4; ++k) {
      std::vector<int> order(static_cast<size_t>(rank));
      for (int d = 0; d < rank; ++d) order[static_cast<size_t>(d)] = d;
      if (rng() % 2) std::shuffle(order.begin(), order.end(), rng);
      int64_t s = 1 + static_cast<int64_t>(rng() % 2);
      for (int j = rank - 1; j >= 0; --j) {
        const int d = order[static_cast<size_t>(j)];
        if (rng() % 3 == 0) {
          strides[k][static_cast<size_t>(d)] = 0;
        } else {
          strides[k][static_cast<size_t>(d)] = s;
          s *=
              std::max<int64_t>(1, shape[static_cast<size_t>(d)]) + static_cast<int64_t>(rng() % 2);
        }
      }
      data[k] = RandomVec<float>(static_cast<size_t>(s), rng, -2, 2);
    }
    ElementwiseProgram p;
    const int a = p.Input(0, DType::kF32), x = p.Input(1, DType::kF32);
    const int b = p.Input(2, DType::kF32), c = p.Input(3, DType::kF32);
    p.AddOutput(p.Binary(
        BinaryOp::kMul,
        p.Unary(UnaryOp::kTanh, p.Binary(BinaryOp::kAdd, p.Binary(BinaryOp::kMul, a, x), b)), c));
    ElementwiseInput in[4];
    for (int k = 0; k < 4; ++k) in[k] = {data[k].data(), strides[k].data()};
    std::vector<float> out(static_cast<size_t>(total) + 1, -99.0f);
    void* outs[1] = {out.data()};
    EvalElementwise(p, rank, shape.data(), in, 4, outs, 1, nullptr);
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t f = 0; f < total; ++f) {
      int64_t rest = f;
      for (int d = rank - 1; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
        rest /= shape[static_cast<size_t>(d)];
      }
      float v[4];
      for (int k = 0; k < 4; ++k) {
        int64_t off = 0;
        for (int d = 0; d < rank; ++d)
          off += idx[static_cast<size_t>(d)] * strides[k][static_cast<size_t>(d)];
        v[k] = data[k][static_cast<size_t>(off)];
      }
      const float want = std::tanh(v[0] * v[1] + v[2]) * v[3];
      ASSERT_NEAR(want, out[static_cast<size_t>(f)], 1e-5f) << "iter " << iter << " f " << f;
    }
    EXPECT_EQ(-99.0f, out[static_cast<size_t>(total)]) << "wrote past the end";
  }
}

TEST_P(ElementwiseTest, InPlaceMultipleOutputsAndConstants) {
  std::mt19937 rng(5);
  std::vector<double> x = RandomVec<double>(5000, rng, -1, 1);
  const std::vector<double> x0 = x;
  ElementwiseProgram p;
  const int in = p.Input(0, DType::kF64);
  const int two = p.Constant(DType::kF64, 2.0);
  const int y = p.Binary(BinaryOp::kMul, in, two);
  p.AddOutput(y);                                // -> x (in place)
  p.AddOutput(p.Binary(BinaryOp::kAdd, in, y));  // 3x
  p.AddOutput(in);                               // copy of the input
  std::vector<double> o1(x.size()), o2(x.size());
  void* outs[3] = {x.data(), o1.data(), o2.data()};
  const int64_t shape[2] = {50, 100};
  ElementwiseInput input{x.data(), nullptr};
  EvalElementwise(p, 2, shape, &input, 1, outs, 3, nullptr);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(2 * x0[i], x[i]);
    EXPECT_EQ(x0[i] + 2 * x0[i], o1[i]);
    EXPECT_EQ(x0[i], o2[i]);
  }
}

TEST_P(ElementwiseTest, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(9);
  const int64_t rows = 700, cols = 1001;
  std::vector<float> x = RandomVec<float>(static_cast<size_t>(rows * cols), rng, -5, 5);
  std::vector<float> bias = RandomVec<float>(static_cast<size_t>(cols), rng, -1, 1);
  ElementwiseProgram p;
  p.AddOutput(p.Unary(UnaryOp::kLogistic,
                      p.Binary(BinaryOp::kAdd, p.Input(0, DType::kF32), p.Input(1, DType::kF32))));
  const int64_t shape[2] = {rows, cols};
  const int64_t bias_strides[2] = {0, 1};
  ElementwiseInput in[2] = {{x.data(), nullptr}, {bias.data(), bias_strides}};
  std::vector<float> ref(x.size());
  void* outs[1] = {ref.data()};
  EvalElementwise(p, 2, shape, in, 2, outs, 1, nullptr);
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    std::vector<float> got(x.size());
    void* o[1] = {got.data()};
    EvalElementwise(p, 2, shape, in, 2, o, 1, &pool);
    EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), got.size() * sizeof(float)))
        << threads << " threads";
  }
  for (size_t i = 0; i < ref.size(); i += 997) {
    const float v = x[i] + bias[i % static_cast<size_t>(cols)];
    EXPECT_NEAR(1.0f / (1.0f + std::exp(-v)), ref[i], 1e-6f);
  }
}

// The fused multiply-add pass gives exactly the bits of a separate Mul then Add (the second
// program keeps the product as an output, which disables the fusion), including in place.
TEST_P(ElementwiseTest, FusedMulAddIsBitExactAndInPlaceIsSafe) {
  std::mt19937 rng(17);
  for (int64_t n : {0, 1, 5, 17, 1023, 1024, 1025, 5000}) {
    std::vector<float> a = RandomVec<float>(static_cast<size_t>(n), rng, -3, 3);
    std::vector<float> b = RandomVec<float>(static_cast<size_t>(n), rng, -3, 3);
    std::vector<float> c = RandomVec<float>(static_cast<size_t>(n), rng, -3, 3);
    const int64_t shape[1] = {n};
    ElementwiseInput in[3] = {{a.data(), nullptr}, {b.data(), nullptr}, {c.data(), nullptr}};
    ElementwiseProgram fused;
    fused.AddOutput(fused.Binary(
        BinaryOp::kAdd, fused.Input(2, DType::kF32),
        fused.Binary(BinaryOp::kMul, fused.Input(0, DType::kF32), fused.Input(1, DType::kF32))));
    ElementwiseProgram plain;
    const int m =
        plain.Binary(BinaryOp::kMul, plain.Input(0, DType::kF32), plain.Input(1, DType::kF32));
    plain.AddOutput(m);
    plain.AddOutput(plain.Binary(BinaryOp::kAdd, plain.Input(2, DType::kF32), m));
    std::vector<float> o1(static_cast<size_t>(n)), prod(static_cast<size_t>(n)),
        o2(static_cast<size_t>(n));
    void* outs1[1] = {o1.data()};
    void* outs2[2] = {prod.data(), o2.data()};
    EvalElementwise(fused, 1, shape, in, 3, outs1, 1, nullptr);
    EvalElementwise(plain, 1, shape, in, 3, outs2, 2, nullptr);
    for (size_t i = 0; i < o1.size(); ++i) {
      const float p = a[i] * b[i];
      EXPECT_EQ(p, prod[i]);
      EXPECT_EQ(c[i] + p, o1[i]);
      EXPECT_EQ(o1[i], o2[i]);
    }
    // In place: c = c + a*b written over c.
    void* outs3[1] = {c.data()};
    EvalElementwise(fused, 1, shape, in, 3, outs3, 1, nullptr);
    if (n > 0) {
      EXPECT_EQ(0, std::memcmp(c.data(), o1.data(), o1.size() * sizeof(float)));
    }
  }
}

// The fused unary pass (tanh, exp or logistic with the MulAdd before it and/or the Mul after
// it: op(a*x + b) * c in one pass) gives exactly the bits of the separate passes (the second
// program keeps every intermediate as an output, which disables all fusion), for f32 and f64,
// at every tail length, in place, and on 2 threads.
TEST_P(ElementwiseTest, FusedUnaryPassIsBitExact) {
  std::mt19937 rng(29);
  ThreadPool pool(2);
  auto check = [&](auto tag, UnaryOp op, bool muladd, bool mul) {
    using T = decltype(tag);
    const DType dt = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
    for (int64_t n : {1, 7, 8, 9, 255, 257, 1025, 70000}) {
      std::vector<std::vector<T>> v(4);
      for (auto& x : v) x = RandomVec<T>(static_cast<size_t>(n), rng, -6, 6);
      if (n > 3) {  // lanes the range check sends to libm (NaN, +-inf, exp overflow)
        v[1][1] = std::numeric_limits<T>::quiet_NaN();
        v[1][2] = std::numeric_limits<T>::infinity();
        v[0][3] = T(400);
      }
      const int64_t shape[1] = {n};
      ElementwiseInput in[4] = {{v[0].data(), nullptr},
                                {v[1].data(), nullptr},
                                {v[2].data(), nullptr},
                                {v[3].data(), nullptr}};
      // Builds op(a*x + b) * c (or the parts asked for); `keep` adds every intermediate as an
      // output.
      auto build = [&](ElementwiseProgram& p, bool keep) {
        std::vector<int> mids;
        // Inputs first: the fusion needs the MulAdd, the op and the Mul adjacent.
        const int ia = p.Input(0, dt), ix = p.Input(1, dt), ib = p.Input(2, dt);
        const int ic = p.Input(3, dt);
        int y = ix;
        if (muladd) {
          const int m = p.Binary(BinaryOp::kMul, ia, ix);
          mids.push_back(m);
          y = p.Binary(BinaryOp::kAdd, m, ib);
          mids.push_back(y);
        }
        int r = p.Unary(op, y);
        if (mul) {
          mids.push_back(r);
          r = p.Binary(BinaryOp::kMul, ic, r);
        }
        if (keep) {
          for (int m : mids) p.AddOutput(m);
        }
        p.AddOutput(r);
        return static_cast<int>(mids.size());
      };
      ElementwiseProgram fused, plain;
      build(fused, false);
      const int extra = build(plain, true);
      const int last = fused.num_registers() - 1;
      EXPECT_EQ(mul ? last - 1 : -1, fused.fused_unary()[static_cast<size_t>(last)]);
      EXPECT_EQ(muladd, fused.unary_muladd()[static_cast<size_t>(mul ? last - 1 : last)] != 0);
      EXPECT_EQ(-1, plain.fused_unary()[static_cast<size_t>(last)]);
      const size_t un = static_cast<size_t>(n);
      std::vector<T> o1(un), o2(un), o3(un);
      std::vector<std::vector<T>> mids(static_cast<size_t>(extra), std::vector<T>(un));
      std::vector<void*> outs2;
      for (auto& m : mids) outs2.push_back(m.data());
      outs2.push_back(o2.data());
      void* outs1[1] = {o1.data()};
      void* outs3[1] = {o3.data()};
      ASSERT_TRUE(EvalElementwise(fused, 1, shape, in, 4, outs1, 1, nullptr));
      ASSERT_TRUE(EvalElementwise(plain, 1, shape, in, 4, outs2.data(), extra + 1, nullptr));
      ASSERT_TRUE(EvalElementwise(fused, 1, shape, in, 4, outs3, 1, &pool));
      EXPECT_EQ(0, std::memcmp(o1.data(), o2.data(), un * sizeof(T)))
          << "op " << static_cast<int>(op) << " n " << n << " muladd " << muladd << " mul " << mul;
      EXPECT_EQ(0, std::memcmp(o1.data(), o3.data(), un * sizeof(T)));
      // In place over x (input 1, read by the first instruction).
      void* outs4[1] = {v[1].data()};
      ASSERT_TRUE(EvalElementwise(fused, 1, shape, in, 4, outs4, 1, nullptr));
      EXPECT_EQ(0, std::memcmp(o1.data(), v[1].data(), un * sizeof(T)));
    }
  };
  for (UnaryOp op : {UnaryOp::kTanh, UnaryOp::kExp, UnaryOp::kLogistic}) {
    for (int parts : {1, 2, 3}) {
      check(float(), op, (parts & 1) != 0, (parts & 2) != 0);
      check(double(), op, (parts & 1) != 0, (parts & 2) != 0);
    }
  }
}

// Outputs of >= 32 MiB go out with non-temporal stores (elementwise-inl.h): the bits equal those
// of plain stores (the same program on a slice too small to stream), at any alignment of the
// output, in place, and split over threads.
TEST_P(ElementwiseTest, StreamedLargeOutputsMatchPlainStores) {
  const size_t n = (size_t{32} << 20) / sizeof(float) + 37;
  const size_t small = 100003;  // well below the streaming threshold
  std::mt19937 rng(23);
  std::vector<float> a = RandomVec<float>(n, rng, -2, 2), x = RandomVec<float>(n, rng, -2, 2);
  std::vector<float> b = RandomVec<float>(n, rng, -1, 1), c = RandomVec<float>(n, rng, -3, 3);
  ElementwiseProgram p;  // tanh(a*x + b) * c, and a copy of x (an output that is an input)
  p.AddOutput(p.Binary(
      BinaryOp::kMul,
      p.Unary(UnaryOp::kTanh,
              p.Binary(BinaryOp::kAdd,
                       p.Binary(BinaryOp::kMul, p.Input(0, DType::kF32), p.Input(1, DType::kF32)),
                       p.Input(2, DType::kF32))),
      p.Input(3, DType::kF32)));
  p.AddOutput(p.Input(1, DType::kF32));
  // The reference: slices of `small` elements (plain stores).
  std::vector<float> ref(n);
  for (size_t f0 = 0; f0 < n; f0 += small) {
    const int64_t shape[1] = {static_cast<int64_t>(std::min(small, n - f0))};
    ElementwiseInput in[4] = {{a.data() + f0, nullptr},
                              {x.data() + f0, nullptr},
                              {b.data() + f0, nullptr},
                              {c.data() + f0, nullptr}};
    std::vector<float> copy(static_cast<size_t>(shape[0]));
    void* outs[2] = {ref.data() + f0, copy.data()};
    ASSERT_TRUE(EvalElementwise(p, 1, shape, in, 4, outs, 2, nullptr));
  }
  const int64_t shape[1] = {static_cast<int64_t>(n)};
  ElementwiseInput in[4] = {
      {a.data(), nullptr}, {x.data(), nullptr}, {b.data(), nullptr}, {c.data(), nullptr}};
  ThreadPool pool(2);
  std::vector<float> got(n + 16), copy(n + 1);
  for (size_t offset : {0, 1, 3}) {  // output addresses at several alignments
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::fill(got.begin(), got.end(), -7.0f);
      void* outs[2] = {got.data() + offset, copy.data() + offset % 2};
      ASSERT_TRUE(EvalElementwise(p, 1, shape, in, 4, outs, 2, tp));
      EXPECT_EQ(0, std::memcmp(ref.data(), got.data() + offset, n * sizeof(float)))
          << "offset " << offset << (tp ? ", 2 threads" : "");
      EXPECT_EQ(0, std::memcmp(x.data(), copy.data() + offset % 2, n * sizeof(float)));
      for (size_t i = 0; i < offset; ++i) EXPECT_EQ(-7.0f, got[i]);  // nothing written outside
      for (size_t i = n + offset; i < got.size(); ++i) EXPECT_EQ(-7.0f, got[i]);
    }
  }
  for (size_t i = 0; i < n; i += 4099) {  // the values themselves (tanh within 2 ulp)
    const float t = std::tanh(static_cast<double>(a[i] * x[i] + b[i]));
    EXPECT_NEAR(t * c[i], ref[i], 1e-6 * std::fabs(c[i])) << i;
  }
  // In place over c.
  void* outs[2] = {c.data(), copy.data()};
  ASSERT_TRUE(EvalElementwise(p, 1, shape, in, 4, outs, 2, &pool));
  EXPECT_EQ(0, std::memcmp(ref.data(), c.data(), n * sizeof(float)));
}

TEST(ElementwiseProgram, RejectsInvalidPrograms) {
  ElementwiseProgram p;
  const int f = p.Input(0, DType::kF32);
  const int i = p.Input(1, DType::kI32);
  const int b = p.Input(2, DType::kBool);
  EXPECT_THROW(p.Binary(BinaryOp::kAdd, f, i), std::invalid_argument);
  EXPECT_THROW(p.Unary(UnaryOp::kExp, i), std::invalid_argument);
  EXPECT_THROW(p.Unary(UnaryOp::kNot, f), std::invalid_argument);
  EXPECT_THROW(p.Binary(BinaryOp::kAnd, f, f), std::invalid_argument);
  EXPECT_THROW(p.Binary(BinaryOp::kAdd, b, b), std::invalid_argument);
  EXPECT_THROW(p.Select(f, f, f), std::invalid_argument);
  EXPECT_THROW(p.Select(b, f, i), std::invalid_argument);
  EXPECT_THROW(p.Unary(UnaryOp::kNeg, 99), std::invalid_argument);
  EXPECT_THROW(p.Input(-1, DType::kF32), std::invalid_argument);
  EXPECT_EQ(3, p.num_registers());
  EXPECT_EQ(3, p.num_inputs());
  try {
    p.Binary(BinaryOp::kAdd, f, i);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("f32 and i32")) << e.what();
  }
  // Wrong counts at evaluation time.
  p.AddOutput(f);
  const int64_t shape[1] = {1};
  float v = 1;
  ElementwiseInput in{&v, nullptr};
  void* outs[1] = {&v};
  EXPECT_FALSE(EvalElementwise(p, 1, shape, &in, 1, outs, 1, nullptr));
  EXPECT_EQ(1.0f, v);  // nothing written
}

TEST(ElementwiseProgram, SlotsAreReused) {
  ElementwiseProgram p;
  int x = p.Input(0, DType::kF32);
  int y = x;
  for (int k = 0; k < 20; ++k) y = p.Unary(UnaryOp::kNeg, y);
  p.AddOutput(y);
  EXPECT_LE(p.num_slots(), 3);  // input + two alternating temporaries
}

}  // namespace
}  // namespace kernels
}  // namespace shp
