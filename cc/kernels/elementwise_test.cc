// Tests of the fused elementwise kernels. Every TEST_P runs once per Highway target compiled
// into the library and supported by this CPU (the dispatch is forced to each in turn).
#include "cc/kernels/elementwise.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cc/kernels/elementwise_scalar.h"
#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

const float kInfF = std::numeric_limits<float>::infinity();
const float kNaNF = std::numeric_limits<float>::quiet_NaN();

std::vector<int64_t> Sizes() {
  std::vector<int64_t> s;
  for (int64_t n = 0; n <= 40; ++n) s.push_back(n);
  for (int64_t n : {63, 64, 65, 1023, 1024, 1025, 3000}) s.push_back(n);
  return s;
}

template <class T>
std::vector<T> RandomVec(size_t n, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

template <class T>
DType DTypeOf();
template <> DType DTypeOf<float>() { return DType::kF32; }
template <> DType DTypeOf<double>() { return DType::kF64; }
template <> DType DTypeOf<int32_t>() { return DType::kI32; }
template <> DType DTypeOf<int64_t>() { return DType::kI64; }

// Runs out = op(x) for a 1-d x.
template <class T>
std::vector<T> RunUnary(UnaryOp op, const std::vector<T>& x, ThreadPool* pool = nullptr) {
  ElementwiseProgram p;
  p.AddOutput(p.Unary(op, p.Input(0, DTypeOf<T>())));
  std::vector<T> out(x.size(), T(-7));
  const int64_t shape[1] = {static_cast<int64_t>(x.size())};
  ElementwiseInput in{x.data(), nullptr};
  void* outs[1] = {out.data()};
  EvalElementwise(p, 1, shape, &in, 1, outs, 1, pool);
  return out;
}

template <class T>
std::vector<T> RunBinary(BinaryOp op, const std::vector<T>& a, const std::vector<T>& b) {
  ElementwiseProgram p;
  p.AddOutput(p.Binary(op, p.Input(0, DTypeOf<T>()), p.Input(1, DTypeOf<T>())));
  std::vector<T> out(a.size(), T(-7));
  const int64_t shape[1] = {static_cast<int64_t>(a.size())};
  ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
  void* outs[1] = {out.data()};
  EvalElementwise(p, 1, shape, in, 2, outs, 1, nullptr);
  return out;
}

template <class T>
bool Close(T got, T want, T rel, T abs) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rel * std::fabs(want) + abs;
}

const UnaryOp kFloatUnary[] = {
    UnaryOp::kNeg,  UnaryOp::kAbs,   UnaryOp::kExp,  UnaryOp::kLog,      UnaryOp::kLog1p,
    UnaryOp::kExpm1, UnaryOp::kSqrt, UnaryOp::kRsqrt, UnaryOp::kSin,     UnaryOp::kCos,
    UnaryOp::kTanh, UnaryOp::kLogistic, UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kRound,
    UnaryOp::kSign};

template <class T>
void CheckFloatUnary(const char* target) {
  std::mt19937 rng(42);
  const T rel = sizeof(T) == 4 ? T(2e-6) : T(1e-14);
  const T abs = sizeof(T) == 4 ? T(2e-7) : T(1e-15);
  for (UnaryOp op : kFloatUnary) {
    for (int64_t n : Sizes()) {
      std::vector<T> x = RandomVec<T>(static_cast<size_t>(n), rng, -30, 30);
      // Special values sprinkled in.
      const T specials[] = {T(0), -T(0), std::numeric_limits<T>::infinity(),
                            -std::numeric_limits<T>::infinity(),
                            std::numeric_limits<T>::quiet_NaN(), T(1e-30), T(-1e-30), T(100),
                            T(-100), T(1000), T(-1000), T(2.5), T(-2.5), T(0.5), T(-0.5),
                            T(1e5), std::numeric_limits<T>::denorm_min(), T(-0.9)};
      for (size_t i = 0; i < x.size(); i += 3) x[i] = specials[(i / 3) % 18];
      const std::vector<T> got = RunUnary(op, x);
      for (size_t i = 0; i < x.size(); ++i) {
        const T want = ew_scalar::FloatUnary(op, x[i]);
        EXPECT_TRUE(Close(got[i], want, rel, abs))
            << target << " op " << static_cast<int>(op) << " x=" << x[i] << " got " << got[i]
            << " want " << want << " n=" << n;
      }
    }
  }
}

HWY_BEFORE_TEST(ElementwiseTest);

TEST_P(ElementwiseTest, DispatchesToForcedTarget) {
  EXPECT_STREQ(hwy::TargetName(GetParam()), ElementwiseTargetName());
}

TEST_P(ElementwiseTest, FloatUnaryMatchesScalarReference) {
  CheckFloatUnary<float>(ElementwiseTargetName());
  CheckFloatUnary<double>(ElementwiseTargetName());
}

TEST_P(ElementwiseTest, RoundIsHalfToEvenAndSignKeepsZeroAndNaN) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.7f, -3.7f, 0.0f};
  const std::vector<float> r = RunUnary(UnaryOp::kRound, x);
  const float want[] = {0, 2, 2, -0.0f, -2, -2, 4, -4, 0};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(want[i], r[i]) << x[i];
  EXPECT_TRUE(std::signbit(r[3]));
  const std::vector<float> s = RunUnary(UnaryOp::kSign, std::vector<float>{-3, 0, -0.0f, 5, kNaNF});
  EXPECT_EQ(-1, s[0]);
  EXPECT_EQ(0, s[1]);
  EXPECT_TRUE(std::signbit(s[2]));
  EXPECT_EQ(1, s[3]);
  EXPECT_TRUE(std::isnan(s[4]));
  const std::vector<float> e = RunUnary(UnaryOp::kExp, std::vector<float>{-200, 200, kNaNF, -kInfF});
  EXPECT_EQ(0.0f, e[0]);
  EXPECT_EQ(kInfF, e[1]);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(0.0f, e[3]);
  const std::vector<float> l = RunUnary(UnaryOp::kLogistic, std::vector<float>{-200, 200, 0});
  EXPECT_GE(l[0], 0.0f);
  EXPECT_LT(l[0], 1e-30f);
  EXPECT_EQ(1.0f, l[1]);
  EXPECT_EQ(0.5f, l[2]);
}

template <class T>
void CheckFloatBinary() {
  std::mt19937 rng(7);
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                      BinaryOp::kPow, BinaryOp::kMax, BinaryOp::kMin, BinaryOp::kRem,
                      BinaryOp::kFloorDiv}) {
    for (int64_t n : Sizes()) {
      std::vector<T> a = RandomVec<T>(static_cast<size_t>(n), rng, -10, 10);
      std::vector<T> b = RandomVec<T>(static_cast<size_t>(n), rng, -10, 10);
      for (size_t i = 0; i < a.size(); i += 5) a[i] = std::numeric_limits<T>::quiet_NaN();
      for (size_t i = 1; i < b.size(); i += 7) b[i] = T(0);
      for (size_t i = 2; i < b.size(); i += 11) b[i] = std::numeric_limits<T>::quiet_NaN();
      const std::vector<T> got = RunBinary(op, a, b);
      for (size_t i = 0; i < a.size(); ++i) {
        T want;
        switch (op) {
          case BinaryOp::kAdd: want = a[i] + b[i]; break;
          case BinaryOp::kSub: want = a[i] - b[i]; break;
          case BinaryOp::kMul: want = a[i] * b[i]; break;
          case BinaryOp::kDiv: want = a[i] / b[i]; break;
          case BinaryOp::kPow: want = std::pow(a[i], b[i]); break;
          case BinaryOp::kMax: want = ew_scalar::FloatMax(a[i], b[i]); break;
          case BinaryOp::kMin: want = ew_scalar::FloatMin(a[i], b[i]); break;
          case BinaryOp::kRem: want = ew_scalar::FloatRem(a[i], b[i]); break;
          default: want = ew_scalar::FloatFloorDiv(a[i], b[i]); break;
        }
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got[i])) << static_cast<int>(op) << " " << a[i] << " " << b[i];
        } else {
          EXPECT_EQ(want, got[i]) << static_cast<int>(op) << " " << a[i] << " " << b[i];
        }
      }
    }
  }
}

TEST_P(ElementwiseTest, FloatBinaryMatchesScalarReference) {
  CheckFloatBinary<float>();
  CheckFloatBinary<double>();
}

TEST_P(ElementwiseTest, NumpyRemainderAndFloorDivide) {
  // numpy: np.remainder(-7., 3.) == 2, np.remainder(7., -3.) == -2, (-7.)//3 == -3.
  EXPECT_EQ(2.0f, RunBinary(BinaryOp::kRem, std::vector<float>{-7}, std::vector<float>{3})[0]);
  EXPECT_EQ(-2.0f, RunBinary(BinaryOp::kRem, std::vector<float>{7}, std::vector<float>{-3})[0]);
  EXPECT_EQ(-3.0f, RunBinary(BinaryOp::kFloorDiv, std::vector<float>{-7}, std::vector<float>{3})[0]);
  EXPECT_EQ(2, RunBinary(BinaryOp::kRem, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
  EXPECT_EQ(-2, RunBinary(BinaryOp::kRem, std::vector<int32_t>{7}, std::vector<int32_t>{-3})[0]);
  EXPECT_EQ(-3, RunBinary(BinaryOp::kFloorDiv, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
  EXPECT_EQ(-2, RunBinary(BinaryOp::kDiv, std::vector<int32_t>{-7}, std::vector<int32_t>{3})[0]);
}

template <class T>
void CheckIntOps() {
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int64_t> u(-50, 50);
  for (int64_t n : Sizes()) {
    std::vector<T> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<T>(u(rng));
      b[i] = static_cast<T>(u(rng));
    }
    const T edge[] = {mn, mx, 0, -1, 1};
    for (size_t i = 0; i < a.size(); i += 4) a[i] = edge[(i / 4) % 5];
    for (size_t i = 1; i < b.size(); i += 3) b[i] = edge[(i / 3) % 5];
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                        BinaryOp::kFloorDiv, BinaryOp::kPow, BinaryOp::kMax, BinaryOp::kMin,
                        BinaryOp::kRem, BinaryOp::kAnd, BinaryOp::kOr, BinaryOp::kXor}) {
      const std::vector<T> got = RunBinary(op, a, b);
      for (size_t i = 0; i < a.size(); ++i) {
        T want;
        switch (op) {
          case BinaryOp::kAdd: want = ew_scalar::WrapAdd(a[i], b[i]); break;
          case BinaryOp::kSub: want = ew_scalar::WrapSub(a[i], b[i]); break;
          case BinaryOp::kMul: want = ew_scalar::WrapMul(a[i], b[i]); break;
          case BinaryOp::kDiv: want = ew_scalar::IntDiv(a[i], b[i]); break;
          case BinaryOp::kFloorDiv: want = ew_scalar::IntFloorDiv(a[i], b[i]); break;
          case BinaryOp::kPow: want = ew_scalar::IntPow(a[i], b[i]); break;
          case BinaryOp::kMax: want = std::max(a[i], b[i]); break;
          case BinaryOp::kMin: want = std::min(a[i], b[i]); break;
          case BinaryOp::kRem: want = ew_scalar::IntRem(a[i], b[i]); break;
          case BinaryOp::kAnd: want = a[i] & b[i]; break;
          case BinaryOp::kOr: want = a[i] | b[i]; break;
          default: want = a[i] ^ b[i]; break;
        }
        EXPECT_EQ(want, got[i]) << static_cast<int>(op) << " " << a[i] << " " << b[i];
      }
    }
  }
  // Defined results for the traps of C.
  EXPECT_EQ(0, RunBinary(BinaryOp::kDiv, std::vector<T>{5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kRem, std::vector<T>{5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kFloorDiv, std::vector<T>{5}, std::vector<T>{0})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kDiv, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kFloorDiv, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kRem, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kAdd, std::vector<T>{mx}, std::vector<T>{1})[0]);
  EXPECT_EQ(1024, RunBinary(BinaryOp::kPow, std::vector<T>{2}, std::vector<T>{10})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kPow, std::vector<T>{2}, std::vector<T>{-1})[0]);
  EXPECT_EQ(-1, RunBinary(BinaryOp::kPow, std::vector<T>{-1}, std::vector<T>{-3})[0]);
  EXPECT_EQ(mn, RunUnary(UnaryOp::kNeg, std::vector<T>{mn})[0]);
  EXPECT_EQ(mn, RunUnary(UnaryOp::kAbs, std::vector<T>{mn})[0]);
  EXPECT_EQ(static_cast<T>(~T(5)), RunUnary(UnaryOp::kNot, std::vector<T>{5})[0]);
  const std::vector<T> s = RunUnary(UnaryOp::kSign, std::vector<T>{-9, 0, 4});
  EXPECT_EQ(-1, s[0]);
  EXPECT_EQ(0, s[1]);
  EXPECT_EQ(1, s[2]);
}

TEST_P(ElementwiseTest, IntOpsAreDefinedEverywhere) {
  CheckIntOps<int32_t>();
  CheckIntOps<int64_t>();
}

TEST_P(ElementwiseTest, CompareSelectAndBool) {
  const std::vector<float> a = {1, 2, kNaNF, 4, -1};
  const std::vector<float> b = {1, 3, kNaNF, 3, -1};
  for (CompareOp op : {CompareOp::kEq, CompareOp::kNe, CompareOp::kLt, CompareOp::kLe,
                       CompareOp::kGt, CompareOp::kGe}) {
    ElementwiseProgram p;
    const int x = p.Input(0, DType::kF32), y = p.Input(1, DType::kF32);
    const int c = p.Compare(op, x, y);
    p.AddOutput(c);
    p.AddOutput(p.Select(c, x, y));
    p.AddOutput(p.Unary(UnaryOp::kNot, c));
    std::vector<uint8_t> out_c(5), out_n(5);
    std::vector<float> out_s(5);
    const int64_t shape[1] = {5};
    ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
    void* outs[3] = {out_c.data(), out_s.data(), out_n.data()};
    EvalElementwise(p, 1, shape, in, 2, outs, 3, nullptr);
    for (size_t i = 0; i < 5; ++i) {
      bool want = false;
      switch (op) {
        case CompareOp::kEq: want = a[i] == b[i]; break;
        case CompareOp::kNe: want = a[i] != b[i]; break;
        case CompareOp::kLt: want = a[i] < b[i]; break;
        case CompareOp::kLe: want = a[i] <= b[i]; break;
        case CompareOp::kGt: want = a[i] > b[i]; break;
        case CompareOp::kGe: want = a[i] >= b[i]; break;
      }
      EXPECT_EQ(want ? 1 : 0, out_c[i]);
      EXPECT_EQ(want ? 0 : 1, out_n[i]);
      const float ws = want ? a[i] : b[i];
      EXPECT_TRUE(ws == out_s[i] || (std::isnan(ws) && std::isnan(out_s[i])));
    }
  }
  // Bool logic; any non-zero input byte counts as true, outputs are 0/1.
  const std::vector<uint8_t> p = {0, 0, 7, 1}, q = {0, 1, 0, 255};
  ElementwiseProgram prog;
  const int x = prog.Input(0, DType::kBool), y = prog.Input(1, DType::kBool);
  prog.AddOutput(prog.Binary(BinaryOp::kAnd, x, y));
  prog.AddOutput(prog.Binary(BinaryOp::kOr, x, y));
  prog.AddOutput(prog.Binary(BinaryOp::kXor, x, y));
  prog.AddOutput(prog.Compare(CompareOp::kEq, x, y));
  std::vector<uint8_t> o[4];
  void* outs[4];
  for (int k = 0; k < 4; ++k) {
    o[k].assign(4, 9);
    outs[k] = o[k].data();
  }
  const int64_t shape[1] = {4};
  ElementwiseInput in[2] = {{p.data(), nullptr}, {q.data(), nullptr}};
  EvalElementwise(prog, 1, shape, in, 2, outs, 4, nullptr);
  EXPECT_EQ((std::vector<uint8_t>{0, 0, 0, 1}), o[0]);
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1, 1}), o[1]);
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1, 0}), o[2]);
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 0, 1}), o[3]);
}

TEST_P(ElementwiseTest, ConversionsSaturateAndTruncate) {
  const std::vector<float> x = {1.9f,  -1.9f, kNaNF, 3e9f, -3e9f, kInfF, -kInfF,
                                0.0f, 2147483520.0f, -2147483648.0f};
  ElementwiseProgram p;
  const int in = p.Input(0, DType::kF32);
  p.AddOutput(p.Convert(in, DType::kI32));
  p.AddOutput(p.Convert(in, DType::kI64));
  p.AddOutput(p.Convert(in, DType::kBool));
  p.AddOutput(p.Convert(p.Convert(in, DType::kF64), DType::kF32));
  std::vector<int32_t> i32(x.size());
  std::vector<int64_t> i64(x.size());
  std::vector<uint8_t> b(x.size());
  std::vector<float> f(x.size());
  void* outs[4] = {i32.data(), i64.data(), b.data(), f.data()};
  const int64_t shape[1] = {static_cast<int64_t>(x.size())};
  ElementwiseInput input{x.data(), nullptr};
  EvalElementwise(p, 1, shape, &input, 1, outs, 4, nullptr);
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  EXPECT_EQ((std::vector<int32_t>{1, -1, 0, mx, mn, mx, mn, 0, 2147483520, mn}), i32);
  EXPECT_EQ((std::vector<int64_t>{1, -1, 0, 3000000000LL, -3000000000LL,
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(), 0, 2147483520LL,
                                  -2147483648LL}),
            i64);
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 0, 1, 1}), b);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_TRUE(f[i] == x[i] || (std::isnan(x[i]) && std::isnan(f[i])));
  }
  // i64 -> i32 wraps; bool -> f32; constants.
  ElementwiseProgram q;
  const int v = q.Input(0, DType::kI64);
  q.AddOutput(q.Convert(v, DType::kI32));
  q.AddOutput(q.Binary(BinaryOp::kAdd, q.Convert(q.Convert(v, DType::kBool), DType::kF32),
                       q.Constant(DType::kF32, 0.5)));
  const std::vector<int64_t> w = {(1LL << 32) + 5, -1, 0};
  std::vector<int32_t> o1(3);
  std::vector<float> o2(3);
  void* outs2[2] = {o1.data(), o2.data()};
  const int64_t shape2[1] = {3};
  ElementwiseInput input2{w.data(), nullptr};
  EvalElementwise(q, 1, shape2, &input2, 1, outs2, 2, nullptr);
  EXPECT_EQ((std::vector<int32_t>{5, -1, 0}), o1);
  EXPECT_EQ((std::vector<float>{1.5f, 1.5f, 0.5f}), o2);
}

// Random n-d shapes with broadcasting (stride 0), transposed and padded strides: the fused
// chain tanh(a*x + b) * c against a per-element reference.
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
          s *= std::max<int64_t>(1, shape[static_cast<size_t>(d)]) + static_cast<int64_t>(rng() % 2);
        }
      }
      data[k] = RandomVec<float>(static_cast<size_t>(s), rng, -2, 2);
    }
    ElementwiseProgram p;
    const int a = p.Input(0, DType::kF32), x = p.Input(1, DType::kF32);
    const int b = p.Input(2, DType::kF32), c = p.Input(3, DType::kF32);
    p.AddOutput(p.Binary(BinaryOp::kMul,
                         p.Unary(UnaryOp::kTanh,
                                 p.Binary(BinaryOp::kAdd, p.Binary(BinaryOp::kMul, a, x), b)),
                         c));
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
        for (int d = 0; d < rank; ++d) off += idx[static_cast<size_t>(d)] * strides[k][static_cast<size_t>(d)];
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
  p.AddOutput(y);                                         // -> x (in place)
  p.AddOutput(p.Binary(BinaryOp::kAdd, in, y));           // 3x
  p.AddOutput(in);                                        // copy of the input
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
    fused.AddOutput(fused.Binary(BinaryOp::kAdd, fused.Input(2, DType::kF32),
                                 fused.Binary(BinaryOp::kMul, fused.Input(0, DType::kF32),
                                              fused.Input(1, DType::kF32))));
    ElementwiseProgram plain;
    const int m = plain.Binary(BinaryOp::kMul, plain.Input(0, DType::kF32), plain.Input(1, DType::kF32));
    plain.AddOutput(m);
    plain.AddOutput(plain.Binary(BinaryOp::kAdd, plain.Input(2, DType::kF32), m));
    std::vector<float> o1(static_cast<size_t>(n)), prod(static_cast<size_t>(n)), o2(static_cast<size_t>(n));
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
    if (n > 0) EXPECT_EQ(0, std::memcmp(c.data(), o1.data(), o1.size() * sizeof(float)));
  }
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
  EXPECT_THROW(EvalElementwise(p, 1, shape, &in, 1, outs, 1, nullptr), std::invalid_argument);
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
