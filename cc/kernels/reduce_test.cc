// Tests of the reductions on every compiled Highway target (dispatch forced to each).
#include "cc/kernels/reduce.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

// The integer accumulator's start for max (lowest) or min (max). Float types do not use it:
// converting their limits to int64 would be undefined behaviour (found by UBSan).
template <class T>
int64_t IntLimit(bool lowest) {
  if constexpr (std::is_integral<T>::value) {
    return lowest ? static_cast<int64_t>(std::numeric_limits<T>::lowest())
                  : static_cast<int64_t>(std::numeric_limits<T>::max());
  } else {
    return 0;
  }
}

// Reference: long double (floats) or wrapping int64 arithmetic over every reduced index.
template <class T>
std::vector<T> Reference(ReduceOp op, const std::vector<T>& x, const std::vector<int64_t>& shape,
                         const std::vector<bool>& red, bool is_bool) {
  const int rank = static_cast<int>(shape.size());
  int64_t n_out = 1, total = 1, count = 1;
  for (int d = 0; d < rank; ++d) {
    total *= shape[d];
    if (red[d])
      count *= shape[d];
    else
      n_out *= shape[d];
  }
  std::vector<long double> accf(static_cast<size_t>(n_out));
  std::vector<uint64_t> acci(static_cast<size_t>(n_out));
  std::vector<char> nan(static_cast<size_t>(n_out), 0);
  for (size_t o = 0; o < accf.size(); ++o) {
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean:
        accf[o] = 0;
        acci[o] = 0;
        break;
      case ReduceOp::kProd:
        accf[o] = 1;
        acci[o] = 1;
        break;
      case ReduceOp::kMax:
        accf[o] = -INFINITY;
        acci[o] = static_cast<uint64_t>(is_bool ? 0 : IntLimit<T>(true));
        break;
      case ReduceOp::kMin:
        accf[o] = INFINITY;
        acci[o] = static_cast<uint64_t>(is_bool ? 1 : IntLimit<T>(false));
        break;
    }
  }
  std::vector<int64_t> idx(static_cast<size_t>(rank));
  for (int64_t f = 0; f < total; ++f) {
    int64_t rest = f;
    for (int d = rank - 1; d >= 0; --d) {
      idx[d] = rest % shape[d];
      rest /= shape[d];
    }
    int64_t o = 0;
    for (int d = 0; d < rank; ++d)
      if (!red[d]) o = o * shape[d] + idx[d];
    const T v = x[static_cast<size_t>(f)];
    if (std::is_floating_point<T>::value) {
      if (v != v) nan[o] = 1;
      long double& a = accf[o];
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kMean:
          a += v;
          break;
        case ReduceOp::kProd:
          a *= v;
          break;
        case ReduceOp::kMax:
          a = std::max<long double>(a, v);
          break;
        case ReduceOp::kMin:
          a = std::min<long double>(a, v);
          break;
      }
    } else {
      uint64_t& a = acci[o];
      const int64_t w = is_bool ? (v != 0) : static_cast<int64_t>(v);
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kMean:
          a += static_cast<uint64_t>(w);
          break;
        case ReduceOp::kProd:
          a *= static_cast<uint64_t>(w);
          break;
        case ReduceOp::kMax:
          a = static_cast<uint64_t>(std::max<int64_t>(static_cast<int64_t>(a), w));
          break;
        case ReduceOp::kMin:
          a = static_cast<uint64_t>(std::min<int64_t>(static_cast<int64_t>(a), w));
          break;
      }
    }
  }
  std::vector<T> out(static_cast<size_t>(n_out));
  for (size_t o = 0; o < out.size(); ++o) {
    if (std::is_floating_point<T>::value) {
      long double a = accf[o];
      if (op == ReduceOp::kMean) a = a / static_cast<long double>(count);
      if (nan[o]) a = NAN;
      out[o] = static_cast<T>(a);
    } else {
      out[o] = static_cast<T>(acci[o]);
    }
  }
  return out;
}

template <class T>
void CheckRandom(ReduceOp op, std::mt19937& rng, ThreadPool* pool) {
  const bool is_bool = std::is_same<T, uint8_t>::value;
  for (int iter = 0; iter < 40; ++iter) {
    int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> shape(static_cast<size_t>(rank));
    std::vector<bool> red(static_cast<size_t>(rank));
    int64_t total = 1;
    for (int d = 0; d < rank; ++d) {
      const uint32_t k = rng() % 12;
      shape[d] = k == 0 ? (rng() % 3 == 0 ? 0 : 1) : static_cast<int64_t>(rng() % 40);
      red[d] = rng() % 2;
      total *= shape[d];
    }
    if (iter == 0 && rank >= 1) {  // one long row to exercise row blocks
      shape.assign(1, 70001 + static_cast<int64_t>(rng() % 100));
      red.assign(1, true);
      total = shape[0];
      rank = 1;
      if (op == ReduceOp::kProd) continue;
    }
    std::vector<T> x(static_cast<size_t>(total));
    std::uniform_real_distribution<double> u(-2, 2);
    for (auto& v : x) {
      if (is_bool)
        v = static_cast<T>(rng() % 5 == 0 ? 0 : (rng() % 3 + 1));
      else if (std::is_floating_point<T>::value)
        v = static_cast<T>(op == ReduceOp::kProd ? 1 + u(rng) / 20 : u(rng));
      else
        v = static_cast<T>(static_cast<int64_t>(rng() % 200) - 100);
    }
    if (std::is_floating_point<T>::value && x.size() > 10 && iter % 5 == 1) {
      x[x.size() / 3] = std::numeric_limits<T>::quiet_NaN();
    }
    const std::vector<T> want = Reference(op, x, shape, red, is_bool);
    std::vector<T> got(want.size() + 1, T(77));
    std::unique_ptr<bool[]> mask(new bool[static_cast<size_t>(std::max(rank, 1))]);
    for (int d = 0; d < rank; ++d) mask[d] = red[d];
    ReduceAxes(op, DTypeOf<T>(), x.data(), rank, shape.data(), mask.get(), got.data(), pool);
    ASSERT_EQ(T(77), got.back()) << "wrote past the end";
    for (size_t o = 0; o < want.size(); ++o) {
      if (std::is_floating_point<T>::value) {
        const double w = static_cast<double>(want[o]), g = static_cast<double>(got[o]);
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(g)) << "op " << static_cast<int>(op) << " iter " << iter;
        } else if (std::isinf(w)) {
          EXPECT_EQ(w, g);
        } else {
          EXPECT_NEAR(w, g, std::fabs(w) * (sizeof(T) == 4 ? 1.2e-7 : 1e-14) + 1e-12)
              << "op " << static_cast<int>(op) << " iter " << iter << " o " << o;
        }
      } else {
        EXPECT_EQ(want[o], got[o]) << "op " << static_cast<int>(op) << " iter " << iter;
      }
    }
  }
}

HWY_BEFORE_TEST(ReduceTest);

TEST_P(ReduceTest, RandomShapesAndAxesMatchReference) {
  std::mt19937 rng(1);
  for (ReduceOp op :
       {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd}) {
    CheckRandom<float>(op, rng, nullptr);
    CheckRandom<double>(op, rng, nullptr);
    if (op != ReduceOp::kMean) {
      CheckRandom<int32_t>(op, rng, nullptr);
      CheckRandom<int64_t>(op, rng, nullptr);
    }
  }
  CheckRandom<uint8_t>(ReduceOp::kMax, rng, nullptr);
  CheckRandom<uint8_t>(ReduceOp::kMin, rng, nullptr);
  ThreadPool pool(3);
  CheckRandom<float>(ReduceOp::kSum, rng, &pool);
  CheckRandom<double>(ReduceOp::kMax, rng, &pool);
}

TEST_P(ReduceTest, F32SumIsAccurate) {
  std::vector<float> v(1002, 1.0f);
  v.front() = 1e8f;
  v.back() = -1e8f;
  float out = 0;
  Reduce(ReduceOp::kSum, DType::kF32, v.data(), 1, static_cast<int64_t>(v.size()), 1, &out,
         nullptr);
  EXPECT_EQ(1000.0f, out);
  // Same along a strided (column) reduction.
  std::vector<float> m(1002 * 3, 1.0f);
  for (int j = 0; j < 3; ++j) {
    m[j] = 1e8f;
    m[1001 * 3 + j] = -1e8f;
  }
  float col[3];
  Reduce(ReduceOp::kSum, DType::kF32, m.data(), 1, 1002, 3, col, nullptr);
  for (float c : col) EXPECT_EQ(1000.0f, c);
  // Mean of 2^24 + 1 + 1 ... in double.
  const float big[] = {16777216.0f, 1.0f, 1.0f};
  Reduce(ReduceOp::kSum, DType::kF32, big, 1, 3, 1, &out, nullptr);
  EXPECT_EQ(16777218.0f, out);
}

TEST_P(ReduceTest, EmptyReductionsGiveIdentities) {
  const int64_t shape[2] = {3, 0};
  const bool red[2] = {false, true};
  float f[3];
  ReduceAxes(ReduceOp::kSum, DType::kF32, nullptr, 2, shape, red, f, nullptr);
  for (float v : f) EXPECT_EQ(0.0f, v);
  ReduceAxes(ReduceOp::kProd, DType::kF32, nullptr, 2, shape, red, f, nullptr);
  for (float v : f) EXPECT_EQ(1.0f, v);
  ReduceAxes(ReduceOp::kMax, DType::kF32, nullptr, 2, shape, red, f, nullptr);
  for (float v : f) EXPECT_EQ(-INFINITY, v);
  ReduceAxes(ReduceOp::kMin, DType::kF32, nullptr, 2, shape, red, f, nullptr);
  for (float v : f) EXPECT_EQ(INFINITY, v);
  ReduceAxes(ReduceOp::kMean, DType::kF32, nullptr, 2, shape, red, f, nullptr);
  for (float v : f) EXPECT_TRUE(std::isnan(v));
  int32_t i[3];
  ReduceAxes(ReduceOp::kMax, DType::kI32, nullptr, 2, shape, red, i, nullptr);
  for (int32_t v : i) EXPECT_EQ(std::numeric_limits<int32_t>::min(), v);
  ReduceAxes(ReduceOp::kMin, DType::kI32, nullptr, 2, shape, red, i, nullptr);
  for (int32_t v : i) EXPECT_EQ(std::numeric_limits<int32_t>::max(), v);
  uint8_t b[3];
  ReduceAxes(ReduceOp::kMax, DType::kBool, nullptr, 2, shape, red, b, nullptr);
  for (uint8_t v : b) EXPECT_EQ(0, v);
  ReduceAxes(ReduceOp::kMin, DType::kBool, nullptr, 2, shape, red, b, nullptr);
  for (uint8_t v : b) EXPECT_EQ(1, v);
  // Empty output: nothing is written, nothing read.
  const int64_t shape2[2] = {0, 5};
  ReduceAxes(ReduceOp::kSum, DType::kF32, nullptr, 2, shape2, red, nullptr, nullptr);
}

TEST_P(ReduceTest, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto dims : {std::vector<int64_t>{3, 200000}, std::vector<int64_t>{5000, 77},
                    std::vector<int64_t>{40, 3000, 9}}) {
    int64_t total = 1;
    for (int64_t e : dims) total *= e;
    std::vector<float> x(static_cast<size_t>(total));
    for (auto& v : x) v = u(rng);
    const int rank = static_cast<int>(dims.size());
    const bool red_last[3] = {false, true, false};
    std::vector<float> ref(static_cast<size_t>(total)), got(static_cast<size_t>(total));
    ReduceAxes(ReduceOp::kSum, DType::kF32, x.data(), rank, dims.data(), red_last, ref.data(),
               nullptr);
    for (int t : {1, 2, 4}) {
      ThreadPool pool(t);
      ReduceAxes(ReduceOp::kSum, DType::kF32, x.data(), rank, dims.data(), red_last, got.data(),
                 &pool);
      EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), static_cast<size_t>(total / dims[1]) * 4));
    }
  }
}

TEST(Reduce, RejectsUndefinedOps) {
  float x = 1;
  uint8_t b = 1;
  int32_t i = 1;
  EXPECT_FALSE(Reduce(ReduceOp::kSum, DType::kBool, &b, 1, 1, 1, &b, nullptr));
  EXPECT_FALSE(Reduce(ReduceOp::kMean, DType::kI32, &i, 1, 1, 1, &i, nullptr));
  EXPECT_FALSE(Reduce(ReduceOp::kSum, DType::kF32, &x, -1, 1, 1, &x, nullptr));
  EXPECT_EQ(1, b);  // nothing written
  EXPECT_EQ(1, i);
  EXPECT_EQ(1.0f, x);
}

}  // namespace
}  // namespace kernels
}  // namespace shp
