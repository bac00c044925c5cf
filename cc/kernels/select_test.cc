// Tests of the selection kernels (CountNonzero, Nonzero, MaskSelect) on every compiled Highway
// target (dispatch forced to each), against plain scalar references written here.
#include "cc/kernels/select.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

constexpr int64_t kSentinel = -777;

// ---- Scalar references ----

template <class T>
bool RefNonzero(T v) {
  return !(v == T(0));  // NaN compares unequal to everything: nonzero
}

template <class T>
int64_t RefCount(const std::vector<T>& x) {
  int64_t c = 0;
  for (const T& v : x) c += RefNonzero(v) ? 1 : 0;
  return c;
}

// np.argwhere: the coordinates of each nonzero element, in flat order.
template <class T>
std::vector<int64_t> RefArgwhere(const std::vector<T>& x, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  const int rank = static_cast<int>(shape.size());
  for (size_t f = 0; f < x.size(); ++f) {
    if (!RefNonzero(x[f])) continue;
    int64_t c[kMaxSelectRank];
    int64_t r = static_cast<int64_t>(f);
    for (int a = rank - 1; a >= 0; --a) {
      c[a] = r % shape[a];
      r /= shape[a];
    }
    out.insert(out.end(), c, c + rank);
  }
  return out;
}

// x[:, mask, :] on bytes.
std::vector<uint8_t> RefMaskSelect(const std::vector<uint8_t>& x, int64_t outer, int64_t m,
                                   int64_t inner, int64_t elem_size,
                                   const std::vector<uint8_t>& mask) {
  std::vector<uint8_t> out;
  const int64_t row = inner * elem_size;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < m; ++k) {
      if (mask[k] == 0) continue;
      const uint8_t* p = x.data() + (o * m + k) * row;
      out.insert(out.end(), p, p + row);
    }
  }
  return out;
}

// ---- Data ----

// A value of T that is nonzero with probability `density`; floats mix in the special values
// (NaN, infinities and subnormals are nonzero, -0.0 is zero), bools use bytes other than 1.
template <class T>
T RandomValue(std::mt19937& rng, double density) {
  std::uniform_real_distribution<double> u(0, 1);
  const bool nz = u(rng) < density;
  const uint32_t pick = rng() % 8;
  if constexpr (std::is_floating_point<T>::value) {
    if (!nz) return pick < 4 ? T(0) : -T(0);
    switch (pick) {
      case 0:
        return std::numeric_limits<T>::quiet_NaN();
      case 1:
        return rng() % 2 ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
      case 2:
        return std::numeric_limits<T>::denorm_min();
      case 3:
        return -std::numeric_limits<T>::denorm_min();
      default:
        return static_cast<T>(u(rng) * 2 - 1 + (u(rng) < 0.5 ? 1e-3 : -1e-3));
    }
  } else if constexpr (std::is_same<T, uint8_t>::value) {
    if (!nz) return 0;
    static const uint8_t kTrue[] = {1, 1, 1, 2, 128, 255, 7, 1};
    return kTrue[pick];
  } else {
    if (!nz) return 0;
    // Values whose low bytes or halves are zero catch compares of the wrong lane width.
    static const int64_t kInts[] = {1,
                                    -1,
                                    256,
                                    65536,
                                    int64_t{1} << 32,
                                    -(int64_t{1} << 40),
                                    std::numeric_limits<int64_t>::min(),
                                    12345};
    return static_cast<T>(kInts[pick]) == 0 ? T(1) : static_cast<T>(kInts[pick]);
  }
}

template <class T>
std::vector<T> RandomArray(std::mt19937& rng, int64_t n, double density) {
  std::vector<T> x(static_cast<size_t>(n));
  for (auto& v : x) v = RandomValue<T>(rng, density);
  return x;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Runs CountNonzero + Nonzero on x and compares with the references; the output has guard
// elements past count*rank that must stay untouched.
template <class T>
void CheckNonzero(const std::vector<T>& x, const std::vector<int64_t>& shape, ThreadPool* pool) {
  const int rank = static_cast<int>(shape.size());
  const DType dt = DTypeOf<T>();
  int64_t count = -1;
  ASSERT_TRUE(CountNonzero(dt, x.data(), static_cast<int64_t>(x.size()), pool, &count));
  ASSERT_EQ(RefCount(x), count);
  const std::vector<int64_t> want = RefArgwhere(x, shape);
  std::vector<int64_t> got(static_cast<size_t>(count * rank) + 9, kSentinel);
  ASSERT_TRUE(Nonzero(dt, x.data(), shape.data(), rank, count, got.data(), pool));
  for (size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(kSentinel, got[i]) << i;
  got.resize(want.size());
  ASSERT_EQ(want, got);
}

HWY_BEFORE_TEST(SelectTest);

// Every dtype, ranks 0..4 with random shapes (zero extents included), densities from empty to
// full.
template <class T>
void CheckRandomShapes(ThreadPool* pool) {
  std::mt19937 rng(7);
  for (int rank = 0; rank <= 4; ++rank) {
    for (double density : {0.0, 0.03, 0.5, 0.97, 1.0}) {
      for (int iter = 0; iter < 12; ++iter) {
        std::vector<int64_t> shape(static_cast<size_t>(rank));
        for (auto& d : shape) d = rng() % (rank <= 2 ? 40 : 9) + (iter == 0 ? 0 : 1);
        if (iter == 1 && rank > 0) shape[rng() % rank] = 0;
        const std::vector<T> x = RandomArray<T>(rng, Numel(shape), density);
        SCOPED_TRACE(testing::Message()
                     << "rank " << rank << " density " << density << " n " << x.size());
        CheckNonzero(x, shape, pool);
      }
    }
  }
}

TEST_P(SelectTest, NonzeroMatchesReferenceEveryDTypeAndRank) {
  CheckRandomShapes<float>(nullptr);
  CheckRandomShapes<double>(nullptr);
  CheckRandomShapes<int32_t>(nullptr);
  CheckRandomShapes<int64_t>(nullptr);
  CheckRandomShapes<uint8_t>(nullptr);
}

// 1-D sizes 0..70 (around every vector width and the 64-element words) and larger ones, with
// single-element patterns: each position alone nonzero catches a lane or bit placed wrong.
template <class T>
void CheckSizes() {
  std::mt19937 rng(11);
  for (int64_t n = 0; n <= 70; ++n) {
    for (double density : {0.0, 0.5, 1.0}) {
      CheckNonzero(RandomArray<T>(rng, n, density), {n}, nullptr);
      CheckNonzero(RandomArray<T>(rng, n, density), {1, n}, nullptr);
    }
    for (int64_t k = 0; k < n; ++k) {
      std::vector<T> x(static_cast<size_t>(n), T(0));
      x[k] = RandomValue<T>(rng, 1.0);
      CheckNonzero(x, {n}, nullptr);
      x.assign(x.size(), RandomValue<T>(rng, 1.0));
      x[k] = T(0);
      CheckNonzero(x, {n}, nullptr);
    }
  }
  for (int64_t n : {1000, 4095, 4096, 4097, 65599}) {
    CheckNonzero(RandomArray<T>(rng, n, 0.1), {n}, nullptr);
    CheckNonzero(RandomArray<T>(rng, n, 0.9), {n}, nullptr);
  }
}

TEST_P(SelectTest, NonzeroSizesAroundVectorWidths) {
  CheckSizes<float>();
  CheckSizes<double>();
  CheckSizes<int32_t>();
  CheckSizes<int64_t>();
  CheckSizes<uint8_t>();
}

// NaN is nonzero, -0.0 is zero (numpy's rule), in the SIMD body and in the tail.
TEST_P(SelectTest, NanIsNonzeroNegativeZeroIsZero) {
  for (int64_t n : {3, 64, 67, 200}) {
    std::vector<float> f(static_cast<size_t>(n), -0.0f);
    std::vector<double> d(static_cast<size_t>(n), -0.0);
    f[1] = std::numeric_limits<float>::quiet_NaN();
    d[1] = -std::numeric_limits<double>::quiet_NaN();
    f[n - 1] = std::numeric_limits<float>::signaling_NaN();
    d[n - 1] = std::numeric_limits<double>::quiet_NaN();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr)}) {
      int64_t cf = -1, cd = -1;
      ASSERT_TRUE(CountNonzero(DType::kF32, f.data(), n, pool, &cf));
      ASSERT_TRUE(CountNonzero(DType::kF64, d.data(), n, pool, &cd));
      EXPECT_EQ(2, cf);
      EXPECT_EQ(2, cd);
      std::vector<int64_t> idx(2, kSentinel);
      ASSERT_TRUE(Nonzero(DType::kF32, f.data(), &n, 1, 2, idx.data(), pool));
      EXPECT_EQ((std::vector<int64_t>{1, n - 1}), idx);
      idx.assign(2, kSentinel);
      ASSERT_TRUE(Nonzero(DType::kF64, d.data(), &n, 1, 2, idx.data(), pool));
      EXPECT_EQ((std::vector<int64_t>{1, n - 1}), idx);
    }
  }
}

// A scalar: one row of zero columns when nonzero, none when zero; nothing is written.
TEST_P(SelectTest, ScalarRankZero) {
  int64_t out = kSentinel, count = -1;
  const float nz = -2.5f, z = -0.0f;
  ASSERT_TRUE(CountNonzero(DType::kF32, &nz, 1, nullptr, &count));
  EXPECT_EQ(1, count);
  EXPECT_TRUE(Nonzero(DType::kF32, &nz, nullptr, 0, 1, &out, nullptr));
  EXPECT_TRUE(Nonzero(DType::kF32, &z, nullptr, 0, 0, nullptr, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, &nz, nullptr, 0, 0, &out, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, &z, nullptr, 0, 1, &out, nullptr));
  const uint8_t b = 3;
  EXPECT_TRUE(Nonzero(DType::kBool, &b, nullptr, 0, 1, &out, nullptr));
  EXPECT_EQ(kSentinel, out);
}

// Large inputs split over pools of several sizes give the single-threaded bytes exactly, for
// every rank (chunk boundaries inside rows, rows shorter and longer than a word).
template <class T>
void CheckThreadsIdentical() {
  std::mt19937 rng(5);
  const std::vector<std::vector<int64_t>> shapes = {{300007},    {517, 600},   {3, 100003},
                                                    {100001, 3}, {40, 50, 70}, {7, 11, 13, 300}};
  for (const auto& shape : shapes) {
    for (double density : {0.0, 0.01, 0.5, 0.99, 1.0}) {
      const std::vector<T> x = RandomArray<T>(rng, Numel(shape), density);
      const int rank = static_cast<int>(shape.size());
      int64_t count = -1;
      ASSERT_TRUE(CountNonzero(DTypeOf<T>(), x.data(), Numel(shape), nullptr, &count));
      std::vector<int64_t> ref(static_cast<size_t>(count * rank));
      ASSERT_TRUE(Nonzero(DTypeOf<T>(), x.data(), shape.data(), rank, count, ref.data(), nullptr));
      ASSERT_EQ(RefArgwhere(x, shape), ref);
      for (int t : {2, 3, 4}) {
        ThreadPool pool(t);
        int64_t c = -1;
        ASSERT_TRUE(CountNonzero(DTypeOf<T>(), x.data(), Numel(shape), &pool, &c));
        ASSERT_EQ(count, c);
        std::vector<int64_t> got(ref.size() + 9, kSentinel);
        ASSERT_TRUE(Nonzero(DTypeOf<T>(), x.data(), shape.data(), rank, count, got.data(), &pool));
        for (size_t i = ref.size(); i < got.size(); ++i) ASSERT_EQ(kSentinel, got[i]);
        got.resize(ref.size());
        ASSERT_TRUE(ref == got) << t << " threads";
      }
    }
  }
}

TEST_P(SelectTest, NonzeroThreadedIsBitIdentical) {
  CheckThreadsIdentical<float>();
  CheckThreadsIdentical<int64_t>();
  CheckThreadsIdentical<uint8_t>();
}

// A count that disagrees with the data: false, and nothing past count*rank written (nothing at
// all when the work is split over a pool).
TEST_P(SelectTest, NonzeroCountDisagreement) {
  std::mt19937 rng(9);
  ThreadPool pool(3);
  for (int64_t n : {5, 64, 130, 300000}) {
    for (int rank : {1, 2}) {
      const std::vector<int64_t> shape =
          rank == 1 ? std::vector<int64_t>{n} : std::vector<int64_t>{n / 5, 5};
      const std::vector<int32_t> x = RandomArray<int32_t>(rng, Numel(shape), 0.6);
      const int64_t count = RefCount(x);
      ASSERT_GT(count, 1);
      for (int64_t wrong : {count - 1, count + 1, int64_t{0}}) {
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          std::vector<int64_t> out(static_cast<size_t>((count + 1) * rank) + 9, kSentinel);
          EXPECT_FALSE(Nonzero(DType::kI32, x.data(), shape.data(), rank, wrong, out.data(), p));
          for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(kSentinel, out[i]) << i;
        }
      }
    }
  }
}

TEST(Select, RejectedArgumentsWriteNothing) {
  const float x[4] = {1, 0, 2, 3};
  const int64_t shape[2] = {2, 2};
  int64_t out[16];
  auto fresh = [&] {
    for (auto& v : out) v = kSentinel;
  };
  auto untouched = [&] {
    for (auto v : out)
      if (v != kSentinel) return false;
    return true;
  };
  int64_t count = kSentinel;
  // CountNonzero.
  EXPECT_FALSE(CountNonzero(static_cast<DType>(7), x, 4, nullptr, &count));
  EXPECT_FALSE(CountNonzero(static_cast<DType>(-1), x, 4, nullptr, &count));
  EXPECT_FALSE(CountNonzero(DType::kF32, x, -1, nullptr, &count));
  EXPECT_FALSE(CountNonzero(DType::kF32, nullptr, 4, nullptr, &count));
  EXPECT_FALSE(CountNonzero(DType::kF32, x, 4, nullptr, nullptr));
  EXPECT_EQ(kSentinel, count);
  EXPECT_TRUE(CountNonzero(DType::kF32, nullptr, 0, nullptr, &count));
  EXPECT_EQ(0, count);
  // Nonzero (the right count is 3).
  fresh();
  EXPECT_FALSE(Nonzero(static_cast<DType>(99), x, shape, 2, 3, out, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, x, shape, -1, 3, out, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, x, shape, kMaxSelectRank + 1, 3, out, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, x, nullptr, 2, 3, out, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, x, shape, 2, -1, out, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, x, shape, 2, 5, out, nullptr));  // more than the elements
  EXPECT_FALSE(Nonzero(DType::kF32, nullptr, shape, 2, 3, out, nullptr));
  EXPECT_FALSE(Nonzero(DType::kF32, x, shape, 2, 3, nullptr, nullptr));
  const int64_t negative[2] = {2, -2};
  EXPECT_FALSE(Nonzero(DType::kF32, x, negative, 2, 0, out, nullptr));
  const int64_t huge[3] = {int64_t{1} << 32, int64_t{1} << 32, 0};
  EXPECT_FALSE(Nonzero(DType::kF32, x, huge, 2, 0, out, nullptr));           // 2^64 elements
  EXPECT_TRUE(Nonzero(DType::kF32, nullptr, huge, 3, 0, nullptr, nullptr));  // empty: a 0 extent
  std::vector<int64_t> ones(kMaxSelectRank, 1);
  ones[0] = int64_t{1} << 59;  // count * rank = 2^59 * 32 overflows
  EXPECT_FALSE(
      Nonzero(DType::kF32, x, ones.data(), kMaxSelectRank, int64_t{1} << 59, out, nullptr));
  EXPECT_TRUE(untouched());
  // The rank limit itself works: 32 axes of extent 1 holding one nonzero element.
  ones.assign(kMaxSelectRank, 1);
  std::vector<int64_t> big(kMaxSelectRank, kSentinel);
  EXPECT_TRUE(Nonzero(DType::kF32, x, ones.data(), kMaxSelectRank, 1, big.data(), nullptr));
  EXPECT_EQ(std::vector<int64_t>(kMaxSelectRank, 0), big);
  // MaskSelect.
  const uint8_t mask[2] = {1, 0};
  float y[8];
  for (auto& v : y) v = -1;
  EXPECT_FALSE(MaskSelect(x, -1, 2, 2, 4, mask, 1, y, nullptr));
  EXPECT_FALSE(MaskSelect(x, 1, -2, 2, 4, mask, 1, y, nullptr));
  EXPECT_FALSE(MaskSelect(x, 1, 2, -2, 4, mask, 1, y, nullptr));
  EXPECT_FALSE(MaskSelect(x, 1, 2, 2, 0, mask, 1, y, nullptr));
  EXPECT_FALSE(MaskSelect(x, 1, 2, 2, 4, mask, -1, y, nullptr));
  EXPECT_FALSE(MaskSelect(x, 1, 2, 2, 4, mask, 3, y, nullptr));  // more than m
  EXPECT_FALSE(MaskSelect(nullptr, 1, 2, 2, 4, mask, 1, y, nullptr));
  EXPECT_FALSE(MaskSelect(x, 1, 2, 2, 4, nullptr, 1, y, nullptr));
  EXPECT_FALSE(MaskSelect(x, 1, 2, 2, 4, mask, 1, nullptr, nullptr));
  EXPECT_FALSE(MaskSelect(x, int64_t{1} << 40, 2, int64_t{1} << 30, 4, mask, 1, y, nullptr));
  for (float v : y) EXPECT_EQ(-1, v);
  // Empty cases that are fine: nothing to copy, null data allowed.
  EXPECT_TRUE(MaskSelect(nullptr, 0, 2, 2, 4, mask, 1, nullptr, nullptr));
  EXPECT_TRUE(MaskSelect(nullptr, 3, 0, 2, 4, nullptr, 0, nullptr, nullptr));
  EXPECT_FALSE(MaskSelect(nullptr, 0, 2, 2, 4, mask, 2, nullptr, nullptr));  // mask still checked
}

// ---- MaskSelect ----

void CheckMaskSelect(std::mt19937& rng, int64_t outer, int64_t m, int64_t inner, int64_t elem_size,
                     double density, ThreadPool* pool) {
  std::vector<uint8_t> x(static_cast<size_t>(outer * m * inner * elem_size));
  for (auto& v : x) v = static_cast<uint8_t>(rng());
  const std::vector<uint8_t> mask = RandomArray<uint8_t>(rng, m, density);
  int64_t count = -1;
  ASSERT_TRUE(CountNonzero(DType::kBool, mask.data(), m, pool, &count));
  ASSERT_EQ(RefCount(mask), count);
  const std::vector<uint8_t> want = RefMaskSelect(x, outer, m, inner, elem_size, mask);
  std::vector<uint8_t> got(want.size() + 17, 0xAB);
  ASSERT_TRUE(
      MaskSelect(x.data(), outer, m, inner, elem_size, mask.data(), count, got.data(), pool));
  for (size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(0xAB, got[i]);
  got.resize(want.size());
  ASSERT_EQ(want, got);
  if (count < m) {  // a wrong count writes nothing
    std::vector<uint8_t> none(want.size() + 64, 0xAB);
    ASSERT_FALSE(MaskSelect(x.data(), outer, m, inner, elem_size, mask.data(), count + 1,
                            none.data(), pool));
    for (uint8_t v : none) ASSERT_EQ(0xAB, v);
  }
}

TEST_P(SelectTest, MaskSelectMatchesReference) {
  std::mt19937 rng(13);
  for (int64_t m = 0; m <= 70; ++m) {
    for (double density : {0.0, 0.3, 0.8, 1.0}) {
      CheckMaskSelect(rng, 1, m, 1, 4, density, nullptr);
      CheckMaskSelect(rng, 2, m, 3, 1, density, nullptr);
    }
  }
  for (int iter = 0; iter < 200; ++iter) {
    const int64_t outer = rng() % 4, m = rng() % 300, inner = rng() % 5;
    const int64_t elem_size = std::vector<int64_t>{1, 2, 3, 4, 8, 12}[rng() % 6];
    const double density = std::uniform_real_distribution<double>(0, 1)(rng);
    CheckMaskSelect(rng, outer, m, inner, elem_size, density, nullptr);
  }
}

// Large masks split over pools (mask chunks when outer is small, outer rows when it is large)
// give the single-threaded bytes exactly.
TEST_P(SelectTest, MaskSelectThreadedIsBitIdentical) {
  std::mt19937 rng(17);
  struct Case {
    int64_t outer, m, inner, elem_size;
  };
  for (const Case& c : {Case{1, 300001, 4, 4}, Case{2, 200000, 1, 8}, Case{9, 5000, 16, 4},
                        Case{1, 131072, 2, 1}}) {
    for (double density : {0.0, 0.01, 0.5, 0.99, 1.0}) {
      std::vector<uint8_t> x(static_cast<size_t>(c.outer * c.m * c.inner * c.elem_size));
      for (auto& v : x) v = static_cast<uint8_t>(rng());
      const std::vector<uint8_t> mask = RandomArray<uint8_t>(rng, c.m, density);
      const int64_t count = RefCount(mask);
      const std::vector<uint8_t> want = RefMaskSelect(x, c.outer, c.m, c.inner, c.elem_size, mask);
      for (int t : {1, 2, 3, 4}) {
        ThreadPool pool(t);
        std::vector<uint8_t> got(want.size() + 8, 0xCD);
        ASSERT_TRUE(MaskSelect(x.data(), c.outer, c.m, c.inner, c.elem_size, mask.data(), count,
                               got.data(), &pool));
        for (size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(0xCD, got[i]);
        got.resize(want.size());
        ASSERT_TRUE(want == got) << t << " threads";
        if (count > 0) {
          std::vector<uint8_t> none(want.size() + 64, 0xCD);
          ASSERT_FALSE(MaskSelect(x.data(), c.outer, c.m, c.inner, c.elem_size, mask.data(),
                                  count - 1, none.data(), &pool));
          for (uint8_t v : none) ASSERT_EQ(0xCD, v);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kernels
}  // namespace shp
