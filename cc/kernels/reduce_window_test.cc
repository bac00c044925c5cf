// Tests of the windowed reductions on every compiled Highway target (dispatch forced to each),
// against a naive reference that follows the documented summation order, so every result must
// be bit-identical (NaN compared as NaN).
#include "cc/kernels/reduce_window.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
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

template <class T>
T Identity(ReduceOp op) {
  if (op == ReduceOp::kSum) return T(0);
  const bool inf = std::numeric_limits<T>::has_infinity;
  if (op == ReduceOp::kMax)
    return inf ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  return inf ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}

template <class T>
T Combine(ReduceOp op, T a, T b) {
  if (op == ReduceOp::kSum) {
    if constexpr (std::is_integral<T>::value) {
      using U = typename std::make_unsigned<T>::type;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
  if (a != a || b != b) return a != a ? a : b;
  return op == ReduceOp::kMax ? (a > b ? a : b) : (a < b ? a : b);
}

// The input index of window position `k` of output `o` on one axis, or -1 (padding or hole).
int64_t Source(const WindowDim& d, int64_t o, int64_t k) {
  const int64_t p = o * d.stride + k * d.window_dilation - d.pad_low;
  if (p < 0 || p % d.base_dilation != 0 || p / d.base_dilation >= d.size) return -1;
  return p / d.base_dilation;
}

// The documented order: the window rows (axes 0..r-2, row-major) first, then the last axis.
template <class T>
std::vector<T> Reference(ReduceOp op, const std::vector<T>& x, const std::vector<WindowDim>& d,
                         const std::vector<int64_t>& out) {
  const size_t r = d.size();
  std::vector<int64_t> in_stride(r, 1);
  for (size_t a = r - 1; a > 0; --a) in_stride[a - 1] = in_stride[a] * d[a].size;
  int64_t total = 1;
  for (int64_t e : out) total *= e;
  std::vector<T> y(static_cast<size_t>(total));
  std::vector<int64_t> o(r, 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat;
    for (size_t a = r; a-- > 0;) {
      o[a] = rem % out[a];
      rem /= out[a];
    }
    const WindowDim& last = d[r - 1];
    T acc = T(0);
    for (int64_t kl = 0; kl < last.window; ++kl) {
      const int64_t il = Source(last, o[r - 1], kl);
      T col = Identity<T>(op);
      if (il >= 0) {
        // Odometer over the window positions of axes 0..r-2.
        std::vector<int64_t> k(r, 0);
        bool first = true;
        while (true) {
          int64_t off = il;
          bool present = true;
          for (size_t a = 0; a + 1 < r; ++a) {
            const int64_t i = Source(d[a], o[a], k[a]);
            if (i < 0) present = false;
            off += i * in_stride[a];
          }
          if (present) {
            col =
                first ? x[static_cast<size_t>(off)] : Combine(op, col, x[static_cast<size_t>(off)]);
            first = false;
          }
          size_t a = r - 1;
          while (a > 0) {
            --a;
            if (++k[a] < d[a].window) break;
            k[a] = 0;
            if (a == 0) {
              a = r;  // done
              break;
            }
          }
          if (a == r || r == 1) break;
        }
      }
      acc = kl == 0 ? col : Combine(op, acc, col);
    }
    y[static_cast<size_t>(flat)] = acc;
  }
  return y;
}

template <class T>
bool Same(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (a != a) return b != b;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

template <class T>
std::vector<T> RandomData(std::mt19937& rng, int64_t n, bool nans) {
  std::vector<T> x(static_cast<size_t>(n));
  for (auto& v : x) {
    if constexpr (std::is_floating_point<T>::value) {
      v = static_cast<T>(std::uniform_real_distribution<double>(-10, 10)(rng));
      if (nans && rng() % 50 == 0) v = std::numeric_limits<T>::quiet_NaN();
    } else {
      v = static_cast<T>(static_cast<int64_t>(rng()) * (sizeof(T) == 8 ? 987654321 : 1));
    }
  }
  return x;
}

// Runs one configuration with 1, 2 and 3 threads and checks each against the reference.
template <class T>
void CheckConfig(ReduceOp op, const std::vector<int64_t>& shape, const std::vector<WindowDim>& d0,
                 std::mt19937& rng, bool nans, ThreadPool* pools[3]) {
  std::vector<WindowDim> d = d0;
  std::vector<int64_t> out(d.size());
  int64_t n = 1;
  for (size_t a = 0; a < d.size(); ++a) {
    d[a].size = shape[a];
    n *= shape[a];
    ASSERT_TRUE(ReduceWindowOutputSize(d[a], &out[a]));
    if (out[a] < 0) return;  // not a valid configuration
  }
  const std::vector<T> x = RandomData<T>(rng, n, nans);
  const std::vector<T> want = Reference(op, x, d, out);
  for (int t = 0; t < 3; ++t) {
    std::vector<T> got(want.size() + 1, T(7));
    ASSERT_TRUE(ReduceWindow(op, DTypeOf<T>(), x.data(), static_cast<int>(d.size()), d.data(),
                             got.data(), pools[t]));
    ASSERT_EQ(T(7), got.back());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(Same(want[i], got[i]))
          << "op " << static_cast<int>(op) << " element " << i << " want " << want[i] << " got "
          << got[i] << " threads " << t + 1 << " rank " << d.size();
    }
  }
}

WindowDim RandomDim(std::mt19937& rng, bool windowed) {
  WindowDim d;
  if (!windowed) return d;
  d.window = 1 + rng() % 4;
  d.stride = 1 + rng() % 3;
  d.window_dilation = rng() % 3 == 0 ? 2 + rng() % 2 : 1;
  d.base_dilation = rng() % 4 == 0 ? 2 + rng() % 2 : 1;
  d.pad_low = static_cast<int64_t>(rng() % 5) - 1;
  d.pad_high = static_cast<int64_t>(rng() % 5) - 1;
  return d;
}

struct Pools {
  ThreadPool two{2}, three{3};
  ThreadPool* p[3] = {nullptr, &two, &three};
};

template <class T>
void CheckRandom(ReduceOp op) {
  Pools pools;
  std::mt19937 rng(1234 + static_cast<int>(op));
  for (int iter = 0; iter < 120; ++iter) {
    const size_t rank = 1 + rng() % 4;
    std::vector<int64_t> shape(rank);
    std::vector<WindowDim> d(rank);
    const bool trailing = iter % 2 == 0;  // windows on the last axes only (NCHW pooling)
    for (size_t a = 0; a < rank; ++a) {
      shape[a] = 1 + rng() % (a + 1 == rank ? 40 : 7);
      const bool windowed = trailing ? a + 2 >= rank : rng() % 2 == 0;
      d[a] = RandomDim(rng, windowed);
    }
    CheckConfig<T>(op, shape, d, rng, iter % 3 == 0, pools.p);
  }
}

// Pooling shapes: the SIMD main loops and tails of strides 1 and 2, 1-D/2-D/3-D windows.
template <class T>
void CheckPooling(ReduceOp op) {
  Pools pools;
  std::mt19937 rng(99);
  auto pool2d = [](int64_t k, int64_t s, int64_t p, int64_t dil) {
    WindowDim w;
    w.window = k;
    w.stride = s;
    w.pad_low = p;
    w.pad_high = p;
    w.window_dilation = dil;
    return std::vector<WindowDim>{WindowDim{}, WindowDim{}, w, w};
  };
  for (int64_t width : {1, 7, 16, 33, 67, 112}) {
    for (auto [k, s, p, dil] : {std::array<int64_t, 4>{3, 1, 1, 1},
                                {3, 2, 1, 1},
                                {2, 2, 0, 1},
                                {3, 2, 0, 2},
                                {5, 1, 2, 1},
                                {1, 2, 0, 1}}) {
      CheckConfig<T>(op, {2, 3, 9, width}, pool2d(k, s, p, dil), rng, true, pools.p);
    }
  }
  // 1-D and 3-D windows, a window on a middle axis, NHWC (the last axis untouched), a long
  // row split into column blocks, and a window over a large untouched last axis.
  WindowDim w3;
  w3.window = 3;
  w3.stride = 2;
  w3.pad_low = 1;
  w3.pad_high = 1;
  CheckConfig<T>(op, {3, 4, 29}, {WindowDim{}, WindowDim{}, w3}, rng, true, pools.p);
  CheckConfig<T>(op, {2, 5, 6, 19}, {WindowDim{}, w3, w3, w3}, rng, true, pools.p);
  CheckConfig<T>(op, {4, 9, 5, 3}, {WindowDim{}, w3, WindowDim{}, WindowDim{}}, rng, true, pools.p);
  CheckConfig<T>(op, {2, 9, 8, 19}, {WindowDim{}, w3, w3, WindowDim{}}, rng, true, pools.p);
  WindowDim w1;
  w1.window = 4;
  w1.pad_high = 3;
  CheckConfig<T>(op, {5003}, {w1}, rng, true, pools.p);
  CheckConfig<T>(op, {2, 4, 3000}, {WindowDim{}, w3, WindowDim{}}, rng, true, pools.p);
}

// The counted window positions of output o on one axis (ReduceWindowMean).
int64_t Counted(const WindowDim& d, int64_t o, int64_t cpl, int64_t cph) {
  int64_t n = 0;
  for (int64_t k = 0; k < d.window; ++k) {
    const int64_t p = o * d.stride + k * d.window_dilation - d.pad_low;
    n += p >= -cpl && p < d.size + cph;
  }
  return n;
}

// ReduceWindowMean against the reference window sum divided by the product of the counts, with
// 1, 2 and 3 threads: bit for bit.
template <class T>
void CheckMean(const std::vector<int64_t>& shape, const std::vector<WindowDim>& d0,
               const std::vector<int64_t>& cpl, const std::vector<int64_t>& cph, std::mt19937& rng,
               ThreadPool* pools[3]) {
  std::vector<WindowDim> d = d0;
  std::vector<int64_t> out(d.size());
  int64_t n = 1;
  for (size_t a = 0; a < d.size(); ++a) {
    d[a].size = shape[a];
    n *= shape[a];
    ASSERT_TRUE(ReduceWindowOutputSize(d[a], &out[a]));
    if (out[a] < 0) return;
  }
  const std::vector<T> x = RandomData<T>(rng, n, false);
  std::vector<T> want = Reference(ReduceOp::kSum, x, d, out);
  std::vector<int64_t> o(d.size(), 0);
  for (size_t flat = 0; flat < want.size(); ++flat) {
    int64_t rem = static_cast<int64_t>(flat), count = 1;
    for (size_t a = d.size(); a-- > 0;) {
      count *= Counted(d[a], rem % out[a], cpl[a], cph[a]);
      rem /= out[a];
    }
    want[flat] = want[flat] / static_cast<T>(count);
  }
  for (int t = 0; t < 3; ++t) {
    std::vector<T> got(want.size() + 1, T(7));
    ASSERT_TRUE(ReduceWindowMean(DTypeOf<T>(), x.data(), static_cast<int>(d.size()), d.data(),
                                 cpl.data(), cph.data(), got.data(), pools[t]));
    ASSERT_EQ(T(7), got.back());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(Same(want[i], got[i]))
          << "element " << i << " want " << want[i] << " got " << got[i] << " threads " << t + 1;
    }
  }
}

template <class T>
void CheckMeans() {
  Pools pools;
  std::mt19937 rng(7);
  // Pooling shapes (the plane path), wide rows and every tail.
  for (int64_t width : {1, 5, 16, 17, 56, 67, 112, 301}) {
    for (auto [k, s, p, dil] : {std::array<int64_t, 4>{3, 1, 1, 1},
                                {3, 2, 1, 1},
                                {2, 2, 0, 1},
                                {3, 2, 0, 2},
                                {5, 1, 2, 1},
                                {1, 1, 0, 1}}) {
      WindowDim w;
      w.window = k;
      w.stride = s;
      w.pad_low = p;
      w.pad_high = p + (width % 2);  // ceil-mode overhang on odd widths
      w.window_dilation = dil;
      const std::vector<WindowDim> d{WindowDim{}, WindowDim{}, w, w};
      CheckMean<T>({2, 3, 9, width}, d, {0, 0, 0, 0}, {0, 0, 0, 0}, rng, pools.p);
      CheckMean<T>({1, 2, 7, width}, d, {0, 0, p, p}, {0, 0, p, p}, rng, pools.p);
    }
  }
  // Random geometries (no base dilation) with random count pads.
  for (int iter = 0; iter < 150; ++iter) {
    const size_t rank = 1 + rng() % 4;
    std::vector<int64_t> shape(rank), cpl(rank), cph(rank);
    std::vector<WindowDim> d(rank);
    for (size_t a = 0; a < rank; ++a) {
      shape[a] = 1 + rng() % (a + 1 == rank ? 40 : 7);
      d[a] = RandomDim(rng, iter % 2 == 0 ? a + 2 >= rank : rng() % 2 == 0);
      d[a].base_dilation = 1;
      cpl[a] = rng() % 3;
      cph[a] = rng() % 3;
    }
    CheckMean<T>(shape, d, cpl, cph, rng, pools.p);
  }
}

HWY_BEFORE_TEST(ReduceWindowTest);

TEST_P(ReduceWindowTest, MeanMatchesReference) {
  CheckMeans<float>();
  CheckMeans<double>();
}

TEST_P(ReduceWindowTest, MeanRejectsBadArguments) {
  WindowDim d;
  d.size = 4;
  d.window = 2;
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  int32_t xi[4] = {}, yi[4] = {};
  const int64_t neg[1] = {-1}, zero[1] = {0};
  EXPECT_FALSE(ReduceWindowMean(DType::kI32, xi, 1, &d, nullptr, nullptr, yi, nullptr));
  EXPECT_FALSE(ReduceWindowMean(DType::kF32, x, 1, &d, neg, zero, y, nullptr));
  EXPECT_FALSE(ReduceWindowMean(DType::kF32, x, 1, &d, zero, neg, y, nullptr));
  WindowDim bd = d;
  bd.base_dilation = 2;
  EXPECT_FALSE(ReduceWindowMean(DType::kF32, x, 1, &bd, nullptr, nullptr, y, nullptr));
  ASSERT_TRUE(ReduceWindowMean(DType::kF32, x, 1, &d, nullptr, nullptr, y, nullptr));
  const float want[3] = {1.5f, 2.5f, 3.5f};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(want[i], y[i]) << i;
}

TEST_P(ReduceWindowTest, RandomMatchesReference) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    CheckRandom<float>(op);
    CheckRandom<double>(op);
    CheckRandom<int32_t>(op);
    CheckRandom<int64_t>(op);
  }
}

TEST_P(ReduceWindowTest, PoolingMatchesReference) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    CheckPooling<float>(op);
    CheckPooling<double>(op);
    CheckPooling<int32_t>(op);
    CheckPooling<int64_t>(op);
  }
}

// Padding holds the identity: max over all-negative data never picks a pad (nor min over
// positive data), and a window entirely in padding gives the identity.
TEST_P(ReduceWindowTest, PaddingIsTheIdentity) {
  WindowDim d;
  d.size = 3;
  d.window = 2;
  d.pad_low = 3;
  d.pad_high = 1;
  int64_t n = 0;
  ASSERT_TRUE(ReduceWindowOutputSize(d, &n));
  ASSERT_EQ(6, n);
  const float x[3] = {-5, -7, -6};
  float y[6];
  ASSERT_TRUE(ReduceWindow(ReduceOp::kMax, DType::kF32, x, 1, &d, y, nullptr));
  const float inf = std::numeric_limits<float>::infinity();
  const float want[6] = {-inf, -inf, -5, -5, -6, -6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(want[i], y[i]) << i;
  const int32_t xi[3] = {5, 7, 6};
  int32_t yi[6];
  ASSERT_TRUE(ReduceWindow(ReduceOp::kMin, DType::kI32, xi, 1, &d, yi, nullptr));
  const int32_t big = std::numeric_limits<int32_t>::max();
  const int32_t want_i[6] = {big, big, 5, 5, 6, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(want_i[i], yi[i]) << i;
}

TEST_P(ReduceWindowTest, RejectsBadArguments) {
  WindowDim d;
  d.size = 4;
  d.window = 2;
  float x[4] = {}, y[4] = {};
  EXPECT_FALSE(ReduceWindow(ReduceOp::kMean, DType::kF32, x, 1, &d, y, nullptr));
  EXPECT_FALSE(ReduceWindow(ReduceOp::kProd, DType::kF32, x, 1, &d, y, nullptr));
  EXPECT_FALSE(ReduceWindow(ReduceOp::kSum, DType::kBool, x, 1, &d, y, nullptr));
  EXPECT_FALSE(ReduceWindow(ReduceOp::kSum, DType::kF32, x, 0, &d, y, nullptr));
  EXPECT_FALSE(ReduceWindow(ReduceOp::kSum, DType::kF32, nullptr, 1, &d, y, nullptr));
  WindowDim bad = d;
  bad.window = 0;
  EXPECT_FALSE(ReduceWindow(ReduceOp::kSum, DType::kF32, x, 1, &bad, y, nullptr));
  bad = d;
  bad.stride = 0;
  EXPECT_FALSE(ReduceWindow(ReduceOp::kSum, DType::kF32, x, 1, &bad, y, nullptr));
  bad = d;
  bad.window = 9;  // floordiv(4 - 9, 1) + 1 < 0
  EXPECT_FALSE(ReduceWindow(ReduceOp::kSum, DType::kF32, x, 1, &bad, y, nullptr));
  bad = d;
  bad.window = 3;
  bad.window_dilation = std::numeric_limits<int64_t>::max();  // (3 - 1) * dilation overflows
  int64_t n = 0;
  EXPECT_FALSE(ReduceWindowOutputSize(bad, &n));
  // An empty output writes nothing.
  bad = d;
  bad.window = 5;
  ASSERT_TRUE(ReduceWindowOutputSize(bad, &n));
  EXPECT_EQ(0, n);
  EXPECT_TRUE(ReduceWindow(ReduceOp::kSum, DType::kF32, x, 1, &bad, nullptr, nullptr));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
