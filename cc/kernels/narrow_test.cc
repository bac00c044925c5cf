// The narrow element types' conversions: the scalar forms (narrow.h) against an independent
// reference (exact arithmetic in double and long double), and the vector forms of the
// elementwise kernel's convert (f16 and bf16 <-> f32, elementwise_ops-inl.h) against the scalar
// forms, bit for bit, with dispatch forced to each compiled target this CPU runs.
#include "cc/kernels/narrow.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

float Bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The value of an f16 bit pattern, from its definition.
double HalfValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(mant | 0x400, exp - 25);
  if (exp == 31) v = mant ? NAN : INFINITY;
  return (h & 0x8000) ? -v : v;
}

// The f16 nearest to x (ties to even), by search over the 63488 finite patterns' values.
uint16_t NearestHalf(double x) {
  if (std::isnan(x)) return 0x7e00;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff;  // largest pattern with value <= a, by bisection
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (HalfValue(mid) <= a) {
      lo = mid;
    } else {
      hi = static_cast<uint16_t>(mid - 1);
    }
  }
  uint16_t best = lo;
  if (lo < 0x7bff) {
    const double dlo = a - HalfValue(lo), dhi = HalfValue(lo + 1) - a;
    if (dhi < dlo || (dhi == dlo && (lo & 1))) best = static_cast<uint16_t>(lo + 1);
  } else if (a - HalfValue(lo) >= 16.0) {
    best = 0x7c00;
  }
  return sign | best;
}

TEST(NarrowScalar, HalfToFloatIsExactForEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = HalfValue(static_cast<uint16_t>(h));
    const float got = HalfBitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << h;
      EXPECT_EQ(std::signbit(got), static_cast<bool>(h & 0x8000)) << h;
    }
  }
}

TEST(NarrowScalar, FloatToHalfRoundsToNearestEven) {
  std::mt19937 rng(7);
  std::vector<float> xs = {0.0f,      -0.0f,         65504.0f,      65519.996f, 65520.0f,
                           1e-8f,     2.9802322e-8f, 2.9802326e-8f, 5.96e-8f,   6.1035156e-5f,
                           6.1e-5f,   1.0009766f,    1.0004883f,    1.0014648f, 3.0e38f,
                           -65520.0f, INFINITY,      -INFINITY};
  for (int i = 0; i < 200000; ++i) {
    const uint32_t u = rng();
    const float f = Bits(u);
    if (std::fabs(f) < 1e6f || i % 8 == 0) xs.push_back(f);
  }
  // Every midpoint between two neighbouring halves, and its neighbours in f32.
  for (uint16_t h = 0; h < 0x7bff; h += 7) {
    const float mid = static_cast<float>((HalfValue(h) + HalfValue(h + 1)) / 2);
    xs.push_back(mid);
    xs.push_back(std::nextafter(mid, 0.0f));
    xs.push_back(std::nextafter(mid, INFINITY));
  }
  for (float x : xs) {
    if (std::isnan(x)) continue;
    EXPECT_EQ(FloatToHalfBits(x), NearestHalf(x)) << x;
    EXPECT_EQ(DoubleToHalfBits(x), NearestHalf(x)) << x;
  }
  EXPECT_EQ(FloatToHalfBits(NAN) & 0x7e00, 0x7e00);
}

TEST(NarrowScalar, DoubleToHalfRoundsOnce) {
  // Just above a midpoint in double, but exactly a midpoint once rounded to f32: only a direct
  // rounding gets these right.
  const double mid = (HalfValue(0x3c00) + HalfValue(0x3c01)) / 2;  // 1 + 2^-11
  EXPECT_EQ(DoubleToHalfBits(mid + 1e-12), 0x3c01);
  EXPECT_EQ(DoubleToHalfBits(mid - 1e-12), 0x3c00);
  EXPECT_EQ(DoubleToHalfBits(mid), 0x3c00);  // tie: to even
}

TEST(NarrowScalar, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBF16Bits(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBF16Bits(Bits(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(FloatToBF16Bits(Bits(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(FloatToBF16Bits(Bits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(FloatToBF16Bits(Bits(0x7f7fffffu)), 0x7f80);  // max f32 -> inf
  EXPECT_EQ(FloatToBF16Bits(NAN) & 0x7fc0, 0x7fc0);
  EXPECT_EQ(DoubleToBF16Bits(1.0 + std::ldexp(1.0, -8) + 1e-15), 0x3f81);  // once, not via f32
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = BF16BitsToFloat(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      EXPECT_EQ(FloatToBF16Bits(f), h) << h;
    }
  }
}

TEST(NarrowScalar, ConvertElementsRules) {
  const float fs[] = {-1.5f, 300.7f, NAN, -1e30f, 1e30f, 255.9f, -0.5f};
  uint8_t u8[7];
  ASSERT_TRUE(ConvertElements(DType::kF32, fs, DType::kU8, u8, 7));
  const uint8_t want_u8[] = {0, 255, 0, 0, 255, 255, 0};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(u8[i], want_u8[i]) << i;
  int8_t i8[7];
  ASSERT_TRUE(ConvertElements(DType::kF32, fs, DType::kI8, i8, 7));
  const int8_t want_i8[] = {-1, 127, 0, -128, 127, 127, 0};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(i8[i], want_i8[i]) << i;
  const int32_t is[] = {300, -1, 65536 + 7, -129};
  uint8_t w[4];
  ASSERT_TRUE(ConvertElements(DType::kI32, is, DType::kU8, w, 4));  // wraps
  EXPECT_EQ(w[0], 44);
  EXPECT_EQ(w[1], 255);
  EXPECT_EQ(w[2], 7);
  EXPECT_EQ(w[3], 127);
  const uint64_t big[] = {~uint64_t{0}, uint64_t{1} << 63};
  float f[2];
  ASSERT_TRUE(ConvertElements(DType::kU64, big, DType::kF32, f, 2));
  EXPECT_EQ(f[0], 18446744073709551616.0f);
  EXPECT_EQ(f[1], 9223372036854775808.0f);
  uint16_t h[2];
  ASSERT_TRUE(ConvertElements(DType::kU64, big, DType::kBF16, h, 2));
  EXPECT_EQ(h[0], 0x5f80);  // 2^64
  EXPECT_FALSE(ConvertElements(static_cast<DType>(99), fs, DType::kF32, f, 1));
  EXPECT_FALSE(ConvertElements(DType::kF32, nullptr, DType::kF16, h, 1));
}

// ---- The vector forms, through the elementwise kernel, per target ----

template <class From, class To>
std::vector<To> Convert(DType from, DType to, const std::vector<From>& x) {
  ElementwiseProgram p;
  p.AddOutput(p.Convert(p.Input(0, from), to));
  std::vector<To> out(x.size());
  const int64_t n = static_cast<int64_t>(x.size());
  ElementwiseInput in{x.data(), nullptr};
  void* outs[1] = {out.data()};
  EXPECT_TRUE(EvalElementwise(p, 1, &n, &in, 1, outs, 1, nullptr));
  return out;
}

HWY_BEFORE_TEST(NarrowConvertTest);

TEST_P(NarrowConvertTest, HalfAndBFloat16ToFloatMatchTheScalarForm) {
  std::vector<uint16_t> all(65536 + 5);  // + a tail shorter than a vector
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i * 40503u);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  for (DType t : {DType::kF16, DType::kBF16}) {
    const std::vector<float> got = Convert<uint16_t, float>(t, DType::kF32, all);
    for (size_t i = 0; i < all.size(); ++i) {
      const float want = t == DType::kF16 ? HalfBitsToFloat(all[i]) : BF16BitsToFloat(all[i]);
      uint32_t a, b;
      std::memcpy(&a, &got[i], 4);
      std::memcpy(&b, &want, 4);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << DTypeName(t) << " " << all[i];
      } else {
        EXPECT_EQ(a, b) << DTypeName(t) << " " << all[i];
      }
    }
  }
}

TEST_P(NarrowConvertTest, FloatToHalfAndBFloat16MatchTheScalarForm) {
  std::mt19937 rng(11);
  std::vector<float> xs = {0.0f,     -0.0f,         65504.0f,      65519.996f, 65520.0f,
                           5.96e-8f, 2.9802322e-8f, 6.1035156e-5f, 3.4e38f,    -3.4e38f,
                           INFINITY, -INFINITY,     NAN,           1e-40f};
  for (int i = 0; i < 300000; ++i) {
    const uint32_t u = rng();
    xs.push_back(i % 2 ? Bits(u) : Bits((u & 0x807fffffu) | ((100u + u % 60u) << 23)));
  }
  xs.resize(xs.size() + 3, 1.0009766f);  // a tail
  for (DType t : {DType::kF16, DType::kBF16}) {
    const std::vector<uint16_t> got = Convert<float, uint16_t>(DType::kF32, t, xs);
    for (size_t i = 0; i < xs.size(); ++i) {
      const uint16_t want = t == DType::kF16 ? FloatToHalfBits(xs[i]) : FloatToBF16Bits(xs[i]);
      if (std::isnan(xs[i])) {
        const uint16_t qnan = t == DType::kF16 ? 0x7e00 : 0x7fc0;
        EXPECT_EQ(got[i] & qnan, qnan) << DTypeName(t) << " NaN";
      } else {
        EXPECT_EQ(got[i], want) << DTypeName(t) << " " << xs[i];
      }
    }
  }
}

template <class T>
void ExpectNarrowIntRoundTrip(DType t) {
  std::vector<T> all;
  for (int64_t v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v)
    all.push_back(static_cast<T>(v));
  all.push_back(7);  // a tail
  const std::vector<int32_t> wide = Convert<T, int32_t>(t, DType::kI32, all);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(wide[i], static_cast<int32_t>(all[i]));
  std::mt19937 rng(5);
  std::vector<int32_t> xs = {0, -1, 255, 256, -129, 65535, 65536, INT32_MIN, INT32_MAX};
  for (int i = 0; i < 5000; ++i) xs.push_back(static_cast<int32_t>(rng()));
  const std::vector<T> got = Convert<int32_t, T>(DType::kI32, t, xs);
  std::vector<T> want(xs.size());
  ASSERT_TRUE(ConvertElements(DType::kI32, xs.data(), t, want.data(), xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(got[i], want[i]) << xs[i];  // wraps
}

// f32 <-> i8, u8, i16, u16 with vectors: every narrow value exactly, and floats beyond the
// ranges, halves, NaN and infinities by the saturating rule (ConvertElements).
template <class T>
void ExpectNarrowIntAndFloat(DType t) {
  std::vector<T> all;
  for (int64_t v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v)
    all.push_back(static_cast<T>(v));
  all.push_back(5);  // a tail
  const std::vector<float> f = Convert<T, float>(t, DType::kF32, all);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(f[i], static_cast<float>(all[i]));
  std::mt19937 rng(9);
  std::vector<float> xs = {NAN,      INFINITY, -INFINITY, -0.0f,   -0.5f,  -0.99f, -1.0f,
                           127.5f,   128.0f,   -128.5f,   -129.0f, 255.9f, 256.0f, 32767.9f,
                           32768.0f, 65535.5f, 65536.0f,  1e30f,   -1e30f, 3.5f};
  for (int i = 0; i < 5000; ++i) {
    xs.push_back(Bits(rng()));
    xs.push_back(static_cast<float>(static_cast<int32_t>(rng() % 140000) - 70000) / 2.0f);
  }
  const std::vector<T> got = Convert<float, T>(DType::kF32, t, xs);
  std::vector<T> want(xs.size());
  ASSERT_TRUE(ConvertElements(DType::kF32, xs.data(), t, want.data(), xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(got[i], want[i]) << xs[i];
}

TEST_P(NarrowConvertTest, NarrowIntegersAndFloats) {
  ExpectNarrowIntAndFloat<int8_t>(DType::kI8);
  ExpectNarrowIntAndFloat<uint8_t>(DType::kU8);
  ExpectNarrowIntAndFloat<int16_t>(DType::kI16);
  ExpectNarrowIntAndFloat<uint16_t>(DType::kU16);
}

TEST_P(NarrowConvertTest, NarrowIntegersWidenAndWrap) {
  ExpectNarrowIntRoundTrip<int8_t>(DType::kI8);
  ExpectNarrowIntRoundTrip<uint8_t>(DType::kU8);
  ExpectNarrowIntRoundTrip<int16_t>(DType::kI16);
  ExpectNarrowIntRoundTrip<uint16_t>(DType::kU16);
}

}  // namespace
}  // namespace kernels
}  // namespace shp
