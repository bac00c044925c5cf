// Integer and bool ops, comparisons, select and conversions of the fused elementwise kernels
// against independent references. Every TEST_P runs once per Highway target compiled into the
// library and supported by this CPU (the dispatch is forced to each in turn).
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

HWY_BEFORE_TEST(ElementwiseIntTest);

// ---- Integer ops: references in 128-bit arithmetic, wrapped to the type's width ----------

using I128 = __int128;

template <class T>
T Wrap(I128 v) {  // v modulo 2^bits, as T (two's complement)
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v)));
}

// floor(a / b) for b != 0, from the sign rule rather than a truncating division's remainder.
I128 FloorQuotient(I128 a, I128 b) {
  if (b < 0) {
    a = -a;
    b = -b;
  }
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// a^e modulo 2^bits by left-to-right binary exponentiation (the kernel squares right to
// left); cross-checked against plain repeated multiplication for small exponents below.
template <class T>
T WrapPow(T a, T e) {
  using U = typename std::make_unsigned<T>::type;
  U r = 1;
  for (int bit = std::numeric_limits<U>::digits - 1; bit >= 0; --bit) {
    r = static_cast<U>(r * r);
    if ((static_cast<U>(e) >> bit) & 1) r = static_cast<U>(r * static_cast<U>(a));
  }
  return static_cast<T>(r);
}

// The documented integer semantics (elementwise.h), from the mathematical definitions.
template <class T>
T IntReference(BinaryOp op, T a, T b) {
  const I128 x = a, y = b;
  switch (op) {
    case BinaryOp::kAdd:
      return Wrap<T>(x + y);
    case BinaryOp::kSub:
      return Wrap<T>(x - y);
    case BinaryOp::kMul:
      return Wrap<T>(x * y);  // |x * y| <= 2^126: no 128-bit overflow
    case BinaryOp::kDiv:
      return y == 0 ? T(0) : Wrap<T>(x / y);  // C division truncates
    case BinaryOp::kFloorDiv:
      return y == 0 ? T(0) : Wrap<T>(FloorQuotient(x, y));
    case BinaryOp::kRem:
      return y == 0 ? T(0) : Wrap<T>(x - y * FloorQuotient(x, y));
    case BinaryOp::kFmod:
      return y == 0 ? T(0) : Wrap<T>(x - y * (x / y));  // truncating
    case BinaryOp::kPow:
      if (b >= 0) return WrapPow(a, b);
      // Negative exponents: C truncation of 1 / a^|b|.
      if (a == 1) return 1;
      if (a == -1) return b % 2 == 0 ? T(1) : T(-1);
      return 0;
    case BinaryOp::kMax:
      return a > b ? a : b;
    case BinaryOp::kMin:
      return a < b ? a : b;
    case BinaryOp::kAnd:
      return a & b;
    case BinaryOp::kOr:
      return a | b;
    case BinaryOp::kXor:
      return a ^ b;
  }
  return 0;
}

template <class T>
T IntUnaryReference(UnaryOp op, T x) {
  switch (op) {
    case UnaryOp::kNeg:
      return Wrap<T>(-I128(x));
    case UnaryOp::kAbs:
      return Wrap<T>(x < 0 ? -I128(x) : I128(x));
    case UnaryOp::kSign:
      return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
    case UnaryOp::kNot:
      return static_cast<T>(-I128(x) - 1);  // ~x == -x - 1
    default:
      return x;  // floor, ceil, round of an integer
  }
}

template <class T>
std::vector<T> IntEdges() {
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  return {mn,
          static_cast<T>(mn + 1),
          mx,
          static_cast<T>(mx - 1),
          0,
          1,
          -1,
          2,
          -2,
          3,
          -3,
          7,
          -7,
          31,
          32,
          63,
          64,
          static_cast<T>(mn / 2),
          static_cast<T>(mx / 2 + 1)};
}

template <class T>
void CheckIntOpsAgainstReference() {
  const char* dt = sizeof(T) == 4 ? "i32" : "i64";
  const std::vector<T> edges = IntEdges<T>();
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> small(-50, 50);
  const BinaryOp ops[] = {BinaryOp::kAdd,      BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                          BinaryOp::kFloorDiv, BinaryOp::kPow, BinaryOp::kMax, BinaryOp::kMin,
                          BinaryOp::kRem,      BinaryOp::kAnd, BinaryOp::kOr,  BinaryOp::kXor,
                          BinaryOp::kFmod};
  std::vector<int64_t> sizes = Sizes();
  sizes.push_back(-1);  // marker: every ordered pair of edge values
  for (int64_t n : sizes) {
    std::vector<T> a, b;
    if (n < 0) {
      for (T x : edges) {
        for (T y : edges) {
          a.push_back(x);
          b.push_back(y);
        }
      }
    } else {
      a.resize(static_cast<size_t>(n));
      b.resize(static_cast<size_t>(n));
      for (size_t i = 0; i < a.size(); ++i) {
        switch ((i * 3 + static_cast<size_t>(n)) % 4) {
          case 0:
            a[i] = static_cast<T>(rng());
            b[i] = static_cast<T>(rng());
            break;
          case 1:
            a[i] = edges[rng() % edges.size()];
            b[i] = edges[rng() % edges.size()];
            break;
          case 2:
            a[i] = static_cast<T>(small(rng));
            b[i] = static_cast<T>(small(rng));
            break;
          default:
            a[i] = static_cast<T>(rng());
            b[i] = static_cast<T>(small(rng) % 4);
            break;
        }
      }
    }
    for (BinaryOp op : ops) {
      const std::vector<T> got = RunBinary(op, a, b);
      int failures = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        const T want = IntReference(op, a[i], b[i]);
        ++ReferenceChecks();
        if (got[i] != want && ++failures <= 3) {
          ADD_FAILURE() << SimdTargetName() << " " << dt << " " << BinaryName(op) << "(" << a[i]
                        << ", " << b[i] << ") = " << got[i] << ", want " << want
                        << ", n=" << a.size();
        }
      }
      EXPECT_EQ(0, failures) << dt << " " << BinaryName(op) << " n=" << a.size();
    }
    for (UnaryOp op : {UnaryOp::kNeg, UnaryOp::kAbs, UnaryOp::kSign, UnaryOp::kNot, UnaryOp::kFloor,
                       UnaryOp::kCeil, UnaryOp::kRound}) {
      const std::vector<T> got = RunUnary(op, a);
      for (size_t i = 0; i < a.size(); ++i) {
        ++ReferenceChecks();
        ASSERT_EQ(IntUnaryReference(op, a[i]), got[i])
            << dt << " " << UnaryName(op) << "(" << a[i] << ") n=" << a.size();
      }
    }
  }
  // The reference's exponentiation agrees with repeated multiplication.
  for (T x : edges) {
    for (T e = 0; e <= 70; ++e) {
      using U = typename std::make_unsigned<T>::type;
      U r = 1;
      for (T k = 0; k < e; ++k) r = static_cast<U>(r * static_cast<U>(x));
      ASSERT_EQ(static_cast<T>(r), WrapPow(x, e)) << x << "^" << e;
    }
  }
  // The documented values at C's traps, spelled out.
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  EXPECT_EQ(0, RunBinary(BinaryOp::kDiv, std::vector<T>{5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kRem, std::vector<T>{-5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kFloorDiv, std::vector<T>{mn}, std::vector<T>{0})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kDiv, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kFloorDiv, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kRem, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kFmod, std::vector<T>{-5}, std::vector<T>{0})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kFmod, std::vector<T>{mn}, std::vector<T>{-1})[0]);
  EXPECT_EQ(mn, RunBinary(BinaryOp::kAdd, std::vector<T>{mx}, std::vector<T>{1})[0]);
  EXPECT_EQ(1024, RunBinary(BinaryOp::kPow, std::vector<T>{2}, std::vector<T>{10})[0]);
  EXPECT_EQ(0, RunBinary(BinaryOp::kPow, std::vector<T>{2}, std::vector<T>{-1})[0]);
  EXPECT_EQ(-1, RunBinary(BinaryOp::kPow, std::vector<T>{-1}, std::vector<T>{-3})[0]);
  EXPECT_EQ(mn, RunUnary(UnaryOp::kNeg, std::vector<T>{mn})[0]);
  EXPECT_EQ(mn, RunUnary(UnaryOp::kAbs, std::vector<T>{mn})[0]);
}

TEST_P(ElementwiseIntTest, IntOpsMatchReferenceEverywhere) {
  CheckIntOpsAgainstReference<int32_t>();
  CheckIntOpsAgainstReference<int64_t>();
}

// Bool ops and comparisons of every dtype over the sizes, against C++'s own operators (bools
// are bytes: any non-zero byte is true, results are 0/1).
template <class T>
void CheckCompareAgainstReference(std::mt19937_64& rng) {
  std::vector<T> sp;
  if constexpr (std::is_floating_point<T>::value) sp = Specials<T>();
  for (int64_t n : Sizes()) {
    std::vector<T> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (size_t i = 0; i < a.size(); ++i) {
      if constexpr (std::is_floating_point<T>::value) {
        a[i] = sp[rng() % sp.size()];
        b[i] = rng() % 3 == 0 ? a[i] : sp[rng() % sp.size()];
      } else {
        a[i] = static_cast<T>(rng() % 5);
        b[i] = rng() % 3 == 0 ? a[i] : static_cast<T>(rng());
      }
    }
    for (CompareOp op : {CompareOp::kEq, CompareOp::kNe, CompareOp::kLt, CompareOp::kLe,
                         CompareOp::kGt, CompareOp::kGe}) {
      // The comparison, and a select by it (the select's vector path: 4-byte elements).
      ElementwiseProgram p;
      const int x = p.Input(0, DTypeOf<T>()), y = p.Input(1, DTypeOf<T>());
      const int c = p.Compare(op, x, y);
      p.AddOutput(c);
      p.AddOutput(p.Select(c, y, x));
      std::vector<uint8_t> out(a.size(), 9);
      std::vector<T> sel(a.size(), T(7));
      const int64_t shape[1] = {n};
      ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
      void* outs[2] = {out.data(), sel.data()};
      EvalElementwise(p, 1, shape, in, 2, outs, 2, nullptr);
      for (size_t i = 0; i < a.size(); ++i) {
        const bool want[] = {a[i] == b[i], a[i] != b[i], a[i]<b[i], a[i] <= b[i], a[i]> b[i],
                             a[i] >= b[i]};
        ++ReferenceChecks();
        ASSERT_EQ(want[static_cast<int>(op)] ? 1 : 0, out[i])
            << "compare " << static_cast<int>(op) << " " << a[i] << " " << b[i] << " n=" << n;
        const T chosen = want[static_cast<int>(op)] ? b[i] : a[i];
        ASSERT_EQ(0, std::memcmp(&chosen, &sel[i], sizeof(T)))
            << "select by compare " << static_cast<int>(op) << " at " << i << " n=" << n;
      }
    }
  }
}

TEST_P(ElementwiseIntTest, CompareAndBoolOpsMatchReference) {
  std::mt19937_64 rng(11);
  CheckCompareAgainstReference<float>(rng);
  CheckCompareAgainstReference<double>(rng);
  CheckCompareAgainstReference<int32_t>(rng);
  CheckCompareAgainstReference<int64_t>(rng);
  for (int64_t n : Sizes()) {
    std::vector<uint8_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    const uint8_t bytes[] = {0, 1, 2, 255};
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = bytes[rng() % 4];
      b[i] = bytes[rng() % 4];
    }
    ElementwiseProgram p;
    const int x = p.Input(0, DType::kBool), y = p.Input(1, DType::kBool);
    const BinaryOp ops[] = {BinaryOp::kAnd, BinaryOp::kOr, BinaryOp::kXor, BinaryOp::kMax,
                            BinaryOp::kMin};
    for (BinaryOp op : ops) p.AddOutput(p.Binary(op, x, y));
    p.AddOutput(p.Unary(UnaryOp::kNot, x));
    p.AddOutput(p.Compare(CompareOp::kLt, x, y));
    std::vector<std::vector<uint8_t>> o(7, std::vector<uint8_t>(a.size(), 9));
    void* outs[7];
    for (int k = 0; k < 7; ++k) outs[k] = o[static_cast<size_t>(k)].data();
    const int64_t shape[1] = {n};
    ElementwiseInput in[2] = {{a.data(), nullptr}, {b.data(), nullptr}};
    EvalElementwise(p, 1, shape, in, 2, outs, 7, nullptr);
    for (size_t i = 0; i < a.size(); ++i) {
      const bool p1 = a[i] != 0, q1 = b[i] != 0;
      const bool want[7] = {p1 && q1, p1 || q1, p1 != q1, p1 || q1, p1 && q1, !p1, !p1 && q1};
      for (int k = 0; k < 7; ++k) {
        ++ReferenceChecks();
        ASSERT_EQ(want[k] ? 1 : 0, o[static_cast<size_t>(k)][i])
            << "bool output " << k << " of " << int{a[i]} << ", " << int{b[i]} << " n=" << n;
      }
    }
  }
}

TEST_P(ElementwiseIntTest, CompareSelectAndBool) {
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
        case CompareOp::kEq:
          want = a[i] == b[i];
          break;
        case CompareOp::kNe:
          want = a[i] != b[i];
          break;
        case CompareOp::kLt:
          want = a[i] < b[i];
          break;
        case CompareOp::kLe:
          want = a[i] <= b[i];
          break;
        case CompareOp::kGt:
          want = a[i] > b[i];
          break;
        case CompareOp::kGe:
          want = a[i] >= b[i];
          break;
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

// ---- Conversions and select over the sizes, against the documented rules ----------------

// Reference conversion of one value, from the rules of elementwise.h (float -> int truncates
// toward zero and saturates, NaN -> 0; int -> narrower int wraps; f64 -> f32 rounds to
// nearest, beyond FLT_MAX + half an ulp to +-inf; anything -> bool is x != 0; bool -> 0 / 1).
template <class To, class From>
To ConvertReference(From x) {
  if constexpr (std::is_same<To, uint8_t>::value) {
    return static_cast<To>(x != From(0));  // to bool
  } else if constexpr (std::is_same<From, uint8_t>::value) {
    return static_cast<To>(x != 0 ? 1 : 0);  // from bool (any non-zero byte is true)
  } else if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    const LD v = static_cast<LD>(x);
    const LD limit = std::ldexp(LD(1), std::numeric_limits<To>::digits);  // 2^(bits - 1)
    if (std::isnan(v)) return 0;
    if (v >= limit) return std::numeric_limits<To>::max();
    if (v < -limit) return std::numeric_limits<To>::min();
    return static_cast<To>(std::trunc(v));
  } else if constexpr (std::is_integral<From>::value && std::is_integral<To>::value) {
    return static_cast<To>(static_cast<uint64_t>(static_cast<int64_t>(x)));  // modulo 2^bits
  } else {
    if (sizeof(To) == 4 && sizeof(From) == 8 && std::is_floating_point<From>::value) {
      const LD overflow = std::ldexp(LD(1), 128) - std::ldexp(LD(1), 103);  // FLT_MAX + ulp / 2
      const LD v = static_cast<LD>(x);
      if (std::isfinite(v) && std::fabs(v) >= overflow) {
        return static_cast<To>(std::copysign(std::numeric_limits<LD>::infinity(), v));
      }
    }
    return static_cast<To>(x);  // exact, or one IEEE rounding (int -> float, f64 -> f32)
  }
}

template <class T>
std::vector<T> ConvertInputs(size_t n, std::mt19937_64& rng) {
  std::vector<T> x(n);
  if constexpr (std::is_same<T, uint8_t>::value) {
    const uint8_t bytes[] = {0, 1, 2, 255};
    for (auto& v : x) v = static_cast<T>(bytes[rng() % 4]);
  } else if constexpr (std::is_floating_point<T>::value) {
    const std::vector<T> sp = Specials<T>();
    const T edges[] = {
        T(2147483647.0),          T(2147483648.0),           T(-2147483648.0), T(-2147483904.0),
        T(9.2233720368547758e18), T(-9.2233720368547758e18), T(1.9),           T(-1.9)};
    for (size_t i = 0; i < n; ++i) {
      switch (i % 3) {
        case 0:
          x[i] = RandomBits<T>(rng);
          break;
        case 1:
          x[i] = sp[rng() % sp.size()];
          break;
        default:
          x[i] = edges[rng() % 8];
          break;
      }
    }
  } else {
    const std::vector<T> e = IntEdges<T>();
    for (size_t i = 0; i < n; ++i) x[i] = i % 2 ? static_cast<T>(rng()) : e[rng() % e.size()];
  }
  return x;
}

// Equal bits, or both NaN.
template <class T>
bool SameValue(T got, T want) {
  if (std::is_floating_point<T>::value && got != got && want != want) return true;
  return std::memcmp(&got, &want, sizeof(T)) == 0;
}

template <class From, class To>
void CheckConvert(std::mt19937_64& rng) {
  for (int64_t n : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 1023, 1025, 4099}) {
    const std::vector<From> x = ConvertInputs<From>(static_cast<size_t>(n), rng);
    ElementwiseProgram p;
    p.AddOutput(p.Convert(p.Input(0, DTypeOf<From>()), DTypeOf<To>()));
    std::vector<To> got(x.size(), To(7));
    const int64_t shape[1] = {n};
    ElementwiseInput in{x.data(), nullptr};
    void* outs[1] = {got.data()};
    EvalElementwise(p, 1, shape, &in, 1, outs, 1, nullptr);
    for (size_t i = 0; i < x.size(); ++i) {
      const To want = ConvertReference<To>(x[i]);
      ++ReferenceChecks();
      ASSERT_TRUE(SameValue(got[i], want))
          << "convert " << static_cast<int>(DTypeOf<From>()) << " -> "
          << static_cast<int>(DTypeOf<To>()) << " of " << std::setprecision(21) << +x[i] << ": got "
          << +got[i] << ", want " << +want << " n=" << n;
    }
  }
}

template <class From>
void CheckConvertFrom(std::mt19937_64& rng) {
  CheckConvert<From, float>(rng);
  CheckConvert<From, double>(rng);
  CheckConvert<From, int32_t>(rng);
  CheckConvert<From, int64_t>(rng);
  CheckConvert<From, uint8_t>(rng);
}

TEST_P(ElementwiseIntTest, ConversionsMatchDocumentedRules) {
  std::mt19937_64 rng(29);
  CheckConvertFrom<float>(rng);
  CheckConvertFrom<double>(rng);
  CheckConvertFrom<int32_t>(rng);
  CheckConvertFrom<int64_t>(rng);
  CheckConvertFrom<uint8_t>(rng);
}

template <class T>
void CheckSelect(std::mt19937_64& rng) {
  for (int64_t n : {0, 1, 5, 8, 17, 1025}) {
    const std::vector<T> a = ConvertInputs<T>(static_cast<size_t>(n), rng);
    const std::vector<T> b = ConvertInputs<T>(static_cast<size_t>(n), rng);
    const std::vector<uint8_t> c = ConvertInputs<uint8_t>(static_cast<size_t>(n), rng);
    ElementwiseProgram p;
    p.AddOutput(
        p.Select(p.Input(0, DType::kBool), p.Input(1, DTypeOf<T>()), p.Input(2, DTypeOf<T>())));
    std::vector<T> got(a.size(), T(7));
    const int64_t shape[1] = {n};
    ElementwiseInput in[3] = {{c.data(), nullptr}, {a.data(), nullptr}, {b.data(), nullptr}};
    void* outs[1] = {got.data()};
    EvalElementwise(p, 1, shape, in, 3, outs, 1, nullptr);
    for (size_t i = 0; i < a.size(); ++i) {
      // A bool result is normalized to 0/1 like every bool output.
      T want = c[i] != 0 ? a[i] : b[i];
      if constexpr (std::is_same<T, uint8_t>::value) want = static_cast<T>(want != 0);
      ++ReferenceChecks();
      ASSERT_TRUE(SameValue(got[i], want)) << "select n=" << n << " i=" << i;
    }
  }
}

TEST_P(ElementwiseIntTest, SelectMatchesReference) {
  std::mt19937_64 rng(31);
  CheckSelect<float>(rng);
  CheckSelect<double>(rng);
  CheckSelect<int32_t>(rng);
  CheckSelect<int64_t>(rng);
  CheckSelect<uint8_t>(rng);
}

TEST_P(ElementwiseIntTest, ConversionsSaturateAndTruncate) {
  const std::vector<float> x = {1.9f,  -1.9f,  kNaNF, 3e9f,          -3e9f,
                                kInfF, -kInfF, 0.0f,  2147483520.0f, -2147483648.0f};
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
  EXPECT_EQ((std::vector<int64_t>{
                1, -1, 0, 3000000000LL, -3000000000LL, std::numeric_limits<int64_t>::max(),
                std::numeric_limits<int64_t>::min(), 0, 2147483520LL, -2147483648LL}),
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

}  // namespace
}  // namespace kernels
}  // namespace shp
