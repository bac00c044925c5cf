// The int128 interval arithmetic of the decision procedure: exact inside, saturating
// outward at +-kInf, sound conversions back to int64.
#include "cc/dim/interval128.h"

#include <gtest/gtest.h>

#include <random>

namespace shp {
namespace dim {
namespace {

const I128 kP60 = static_cast<I128>(1) << 60;

TEST(Interval128, ConversionsStaySound) {
  EXPECT_EQ(Ext(kNegInf), -kInf);
  EXPECT_EQ(Ext(kPosInf), kInf);
  EXPECT_EQ(Ext(5), 5);
  // A finite bound beyond int64 becomes the widest finite int64 bound on its side.
  EXPECT_EQ(LoOf(static_cast<I128>(kPosInf) + 7), kPosInf - 1);
  EXPECT_EQ(HiOf(static_cast<I128>(kNegInf) - 7), kNegInf + 1);
  EXPECT_EQ(LoOf(-kInf), kNegInf);
  EXPECT_EQ(HiOf(kInf), kPosInf);
  EXPECT_EQ(LoOf(-3), -3);
  EXPECT_EQ(HiOf(3), 3);
}

TEST(Interval128, MulSaturatesOutward) {
  EXPECT_EQ(MulExt(0, kInf), 0);
  EXPECT_EQ(MulExt(-kInf, 3), -kInf);
  EXPECT_EQ(MulExt(-kInf, -3), kInf);
  EXPECT_EQ(MulExt(kP60, kP60), kInf);  // 2^120 saturates
  EXPECT_EQ(MulExt(kP60 - 1, kP60 - 1), (kP60 - 1) * (kP60 - 1));
  // 2^104 * 2^40 overflows int128 itself: must saturate, not wrap.
  EXPECT_EQ(MulExt(static_cast<I128>(1) << 104, static_cast<I128>(1) << 40), kInf);
  EXPECT_EQ(MulExt(-(static_cast<I128>(1) << 104), static_cast<I128>(1) << 40), -kInf);
}

TEST(Interval128, MulUsesAllFourCorners) {
  ExtIv r = IvMul({-2, 3}, {-5, 4});
  EXPECT_EQ(r.lo, -15);
  EXPECT_EQ(r.hi, 12);
  r = IvMul({-2, 3}, {1, kInf});
  EXPECT_EQ(r.lo, -kInf);
  EXPECT_EQ(r.hi, kInf);
}

TEST(Interval128, Powers) {
  ExtIv r = IvPow({-3, 2}, 2);  // even power across 0
  EXPECT_EQ(r.lo, 0);
  EXPECT_EQ(r.hi, 9);
  r = IvPow({-3, -2}, 2);
  EXPECT_EQ(r.lo, 4);
  EXPECT_EQ(r.hi, 9);
  r = IvPow({-3, 2}, 3);
  EXPECT_EQ(r.lo, -27);
  EXPECT_EQ(r.hi, 8);
  r = IvPow({-1, 1}, 1 << 20);  // +-1 return at once
  EXPECT_EQ(r.lo, 0);
  EXPECT_EQ(r.hi, 1);
  r = IvPow({-1, -1}, (1 << 20) - 1);
  EXPECT_EQ(r.lo, -1);
  EXPECT_EQ(r.hi, -1);
  r = IvPow({2, 3}, 200);  // saturates
  EXPECT_EQ(r.hi, kInf);
  r = IvPow({-3, -2}, 201);
  EXPECT_EQ(r.lo, -kInf);
}

TEST(Interval128, FloorDivRoundsDown) {
  EXPECT_EQ(FloorDivExt(7, 2), 3);
  EXPECT_EQ(FloorDivExt(-7, 2), -4);
  EXPECT_EQ(FloorDivExt(-8, 2), -4);
  EXPECT_EQ(FloorDivExt(kInf, 2), kInf);
  EXPECT_EQ(FloorDivExt(-kInf, 2), -kInf);
  EXPECT_EQ(FloorDivExt(5, kInf), 0);
  EXPECT_EQ(FloorDivExt(-5, kInf), -1);
}

// Random intervals of small values: the products and powers contain every pointwise result.
TEST(Interval128, ContainsPointwiseResults) {
  std::mt19937_64 rng(17);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 2000; ++round) {
    int a = pick(-6, 6), b = pick(a, 6), c = pick(-6, 6), d = pick(c, 6), k = pick(1, 5);
    ExtIv m = IvMul({a, b}, {c, d});
    ExtIv p = IvPow({a, b}, k);
    for (int x = a; x <= b; ++x) {
      I128 xp = 1;
      for (int i = 0; i < k; ++i) xp *= x;
      ASSERT_TRUE(p.lo <= xp && xp <= p.hi) << x << "^" << k;
      for (int y = c; y <= d; ++y) ASSERT_TRUE(m.lo <= x * y && x * y <= m.hi);
    }
  }
}

}  // namespace
}  // namespace dim
}  // namespace shp
