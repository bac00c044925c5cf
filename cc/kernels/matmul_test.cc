// Tests of the matmul kernels on EVERY Highway target compiled into this binary that the CPU
// supports (the per-target f32/f64 driver directly, and the public dispatchers with dispatch
// forced to each target), plus the integer kernels. Results are checked against a naive
// long-double reference with a relative tolerance, and guard zones around every C check that
// nothing outside C is written.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/matmul_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/matmul-inl.h"

// ---- Target-independent helpers (declared once; defined in the HWY_ONCE pass) ----
#ifndef SHAPEPOLY_CC_KERNELS_MATMUL_TEST_HELPERS_
#define SHAPEPOLY_CC_KERNELS_MATMUL_TEST_HELPERS_
#include <stdint.h>

#include "cc/kernels/matmul.h"

namespace shp {
namespace kernels {
namespace matmul_test {

using MatmulF32Fn = bool (*)(const MatmulParams&, const float*, const float*, float*, ThreadPool*);
using MatmulF64Fn = bool (*)(const MatmulParams&, const double*, const double*, double*,
                             ThreadPool*);

// Runs the whole floating-point suite (sizes, strides, transposes, batch broadcasting,
// accumulation, threads, guard zones) on one implementation, labelled `target`.
void RunFloatSuite(const char* target, MatmulF32Fn f32);
void RunFloatSuite(const char* target, MatmulF64Fn f64);
void RecordTarget(const char* target);

}  // namespace matmul_test
}  // namespace kernels
}  // namespace shp
#endif  // SHAPEPOLY_CC_KERNELS_MATMUL_TEST_HELPERS_

// ---- Per-target test bodies ----
HWY_BEFORE_NAMESPACE();
namespace shp {
namespace kernels {
namespace HWY_NAMESPACE {

bool MatmulF32ForTest(const MatmulParams& p, const float* a, const float* b, float* c,
                      ThreadPool* pool) {
  return MatmulFloatImpl<float>(p, a, b, c, pool);
}

bool MatmulF64ForTest(const MatmulParams& p, const double* a, const double* b, double* c,
                      ThreadPool* pool) {
  return MatmulFloatImpl<double>(p, a, b, c, pool);
}

void TestMatmulF32() {
  const char* target = hwy::TargetName(HWY_TARGET);
  matmul_test::RecordTarget(target);
  matmul_test::RunFloatSuite(target, &MatmulF32ForTest);
}

void TestMatmulF64() { matmul_test::RunFloatSuite(hwy::TargetName(HWY_TARGET), &MatmulF64ForTest); }

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace shp
HWY_AFTER_NAMESPACE();

// ---- Test registration and helper definitions (once) ----
#if HWY_ONCE
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <type_traits>
#include <string>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace matmul_test {

namespace {

std::set<std::string>& TargetsRun() {
  static std::set<std::string> targets;
  return targets;
}

// Deterministic pseudo-random values in [-1, 1) (integers: in [-range, range]).
template <typename T>
std::vector<T> Random(size_t n, uint32_t seed) {
  std::vector<T> v(n);
  uint32_t state = seed * 2654435761u + 12345u;
  for (T& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<T>(static_cast<double>(state >> 8) / 8388608.0 - 1.0);
  }
  return v;
}

// Number of elements a strided operand spans: 1 + max offset (strides are non-negative here).
int64_t Span(const int64_t* dims, const int64_t* strides, int rank, int64_t rows,
             int64_t row_stride, int64_t cols, int64_t col_stride) {
  if (rows == 0 || cols == 0) return 0;
  int64_t off = (rows - 1) * row_stride + (cols - 1) * col_stride;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 0) return 0;
    off += (dims[i] - 1) * strides[i];
  }
  return off + 1;
}

constexpr int64_t kGuard = 37;  // guard elements before and after C

// Runs `fn` on random A, B (and C when accumulating) for `p` and checks every C element against
// a long-double reference: |got - want| <= 4 * (k + 1) * eps * sum_p |A[i,p] * B[p,j]|.
// Checks that elements of C's buffer that are not addressed (row padding, guards) are unchanged.
// Returns the computed C buffer (without guards) for further comparisons.
template <typename T, typename Fn>
std::vector<T> Check(const char* target, const char* what, Fn fn, const MatmulParams& p,
                     ThreadPool* pool, uint32_t seed) {
  const int64_t a_span =
      Span(p.batch_dims, p.a_batch_strides, p.batch_rank, p.m, p.a_row_stride, p.k, p.a_col_stride);
  const int64_t b_span =
      Span(p.batch_dims, p.b_batch_strides, p.batch_rank, p.k, p.b_row_stride, p.n, p.b_col_stride);
  const int64_t c_span =
      Span(p.batch_dims, p.c_batch_strides, p.batch_rank, p.m, p.c_row_stride, p.n, 1);
  const std::vector<T> a = Random<T>(static_cast<size_t>(a_span), seed);
  const std::vector<T> b = Random<T>(static_cast<size_t>(b_span), seed + 1);
  const T sentinel = static_cast<T>(-12345.5);
  std::vector<T> cbuf(static_cast<size_t>(c_span + 2 * kGuard), sentinel);
  std::vector<bool> addressed(cbuf.size(), false);
  int64_t batch = 1;
  for (int i = 0; i < p.batch_rank; ++i) batch *= p.batch_dims[i];
  // Reference and addressed elements.
  std::vector<long double> want;
  std::vector<long double> bound;
  std::vector<int64_t> where;
  const std::vector<T> c_init = Random<T>(static_cast<size_t>(c_span), seed + 2);
  for (int64_t t = 0; t < batch; ++t) {
    int64_t rest = t, oa = 0, ob = 0, oc = 0;
    for (int dim = p.batch_rank - 1; dim >= 0; --dim) {
      const int64_t idx = rest % p.batch_dims[dim];
      rest /= p.batch_dims[dim];
      oa += idx * p.a_batch_strides[dim];
      ob += idx * p.b_batch_strides[dim];
      oc += idx * p.c_batch_strides[dim];
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        const int64_t ci = oc + i * p.c_row_stride + j;
        long double sum = 0, abs_sum = 0;
        if (p.accumulate) {
          sum = c_init[static_cast<size_t>(ci)];
          abs_sum = std::fabs(sum);
          cbuf[static_cast<size_t>(kGuard + ci)] = c_init[static_cast<size_t>(ci)];
        }
        for (int64_t q = 0; q < p.k; ++q) {
          const long double prod =
              static_cast<long double>(
                  a[static_cast<size_t>(oa + i * p.a_row_stride + q * p.a_col_stride)]) *
              static_cast<long double>(
                  b[static_cast<size_t>(ob + q * p.b_row_stride + j * p.b_col_stride)]);
          sum += prod;
          abs_sum += std::fabs(prod);
        }
        want.push_back(sum);
        bound.push_back(abs_sum);
        where.push_back(ci);
        addressed[static_cast<size_t>(kGuard + ci)] = true;
      }
    }
  }
  EXPECT_TRUE(fn(p, a.empty() ? nullptr : a.data(), b.empty() ? nullptr : b.data(),
                 cbuf.data() + kGuard, pool))
      << target << " " << what;
  const long double eps = std::numeric_limits<T>::epsilon();
  int failures = 0;
  for (size_t e = 0; e < want.size() && failures < 5; ++e) {
    const long double got = cbuf[static_cast<size_t>(kGuard + where[e])];
    const long double tol = 4 * (p.k + 1) * eps * bound[e] + 1e-30L;
    if (!(std::fabs(got - want[e]) <= tol)) {
      ++failures;
      ADD_FAILURE() << "target " << target << ", " << what << ": m=" << p.m << " n=" << p.n
                    << " k=" << p.k << " element " << where[e] << ": got "
                    << static_cast<double>(got) << ", want " << static_cast<double>(want[e]);
    }
  }
  for (size_t e = 0; e < cbuf.size() && failures < 5; ++e) {
    if (!addressed[e] && !(cbuf[e] == sentinel)) {
      ++failures;
      ADD_FAILURE() << "target " << target << ", " << what << ": m=" << p.m << " n=" << p.n
                    << " k=" << p.k << " wrote outside C at buffer index "
                    << static_cast<int64_t>(e) - kGuard;
    }
  }
  return std::vector<T>(cbuf.begin() + kGuard, cbuf.end() - kGuard);
}

template <typename T, typename Fn>
void RunSuite(const char* target, Fn fn) {
  uint32_t seed = 1;
  // Sizes around the register blocks (MR <= 8, NR <= 64), the cache blocks (KC = 256 / 128,
  // MC <= 144) and primes; includes 0 and 1 for every extent.
  const int64_t small[] = {0, 1, 2, 3, 5, 7, 8, 13, 17};
  for (int64_t m : small) {
    for (int64_t n : {0, 1, 3, 16, 31, 33, 49}) {
      for (int64_t k : {0, 1, 4, 9}) {
        Check<T>(target, "small", fn, RowMajorMatmul(m, n, k), nullptr, seed++);
      }
    }
  }
  const int64_t shapes[][3] = {{97, 131, 257}, {145, 67, 300}, {300, 97, 129}, {1, 515, 517},
                               {517, 1, 263},  {2, 4100, 3},   {64, 64, 64},   {193, 129, 5}};
  for (const auto& s : shapes) {
    Check<T>(target, "large", fn, RowMajorMatmul(s[0], s[1], s[2]), nullptr, seed++);
    Check<T>(target, "transpose_b", fn, RowMajorMatmul(s[0], s[1], s[2], true), nullptr, seed++);
  }
  // Transposed A (column-major), padded C rows, odd strides everywhere.
  for (const auto& s : {std::vector<int64_t>{37, 41, 43}, std::vector<int64_t>{130, 70, 270}}) {
    MatmulParams p = RowMajorMatmul(s[0], s[1], s[2]);
    p.a_row_stride = 1;
    p.a_col_stride = s[0];
    Check<T>(target, "transpose_a", fn, p, nullptr, seed++);
    p.a_row_stride = 3 * s[2] + 1;
    p.a_col_stride = 3;
    p.b_row_stride = 2 * s[1] + 5;
    p.b_col_stride = 2;
    p.c_row_stride = s[1] + 7;
    Check<T>(target, "strided", fn, p, nullptr, seed++);
    p.accumulate = true;
    Check<T>(target, "strided accumulate", fn, p, nullptr, seed++);
  }
  // Accumulation across K blocks.
  {
    MatmulParams p = RowMajorMatmul(19, 45, 600);
    p.accumulate = true;
    Check<T>(target, "accumulate", fn, p, nullptr, seed++);
    p.k = 0;
    Check<T>(target, "accumulate k=0", fn, p, nullptr, seed++);
  }
  // Batches: a flat batch with broadcast B, and NumPy broadcasting [2,1,m,k] x [1,3,k,n].
  for (const auto& s : {std::vector<int64_t>{5, 7, 3}, std::vector<int64_t>{33, 65, 70}}) {
    const int64_t m = s[0], n = s[1], k = s[2];
    Check<T>(target, "batch", fn, BatchedRowMajorMatmul(4, m, n, k, m * k, k * n), nullptr, seed++);
    Check<T>(target, "batch bcast B", fn, BatchedRowMajorMatmul(3, m, n, k, m * k, 0), nullptr,
             seed++);
    Check<T>(target, "batch bcast A, B^T", fn, BatchedRowMajorMatmul(3, m, n, k, 0, n * k, true),
             nullptr, seed++);
    Check<T>(target, "batch 0", fn, BatchedRowMajorMatmul(0, m, n, k, m * k, k * n), nullptr,
             seed++);
    MatmulParams p = RowMajorMatmul(m, n, k);
    ASSERT_TRUE(AddMatmulBatchDim(&p, 2, m * k, 0, 3 * m * n));
    ASSERT_TRUE(AddMatmulBatchDim(&p, 3, 0, k * n, m * n));
    Check<T>(target, "numpy broadcast", fn, p, nullptr, seed++);
  }
  // Threads: same bits as single-threaded, for splits over batch, rows and columns.
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    const MatmulParams cases[] = {RowMajorMatmul(203, 190, 150), RowMajorMatmul(3, 1001, 400),
                                  BatchedRowMajorMatmul(5, 64, 80, 90, 64 * 90, 0),
                                  RowMajorMatmul(150, 150, 270, true)};
    for (const MatmulParams& p : cases) {
      const std::vector<T> serial = Check<T>(target, "serial", fn, p, nullptr, seed);
      const std::vector<T> parallel = Check<T>(target, "threads", fn, p, &pool, seed);
      EXPECT_TRUE(serial == parallel)
          << target << ": threads=" << threads << " m=" << p.m << " n=" << p.n << " k=" << p.k;
      ++seed;
    }
  }
  // Few rows (the small-m path, which reads A and B unpacked) give the bits of the same rows
  // computed within a tall product (packed panels), across k blocks and column edges.
  for (const auto& s : {std::vector<int64_t>{1, 75, 600}, std::vector<int64_t>{5, 263, 300},
                        std::vector<int64_t>{13, 41, 257}}) {
    const int64_t rows = s[0], n = s[1], k = s[2], tall = 64;
    const MatmulParams p = RowMajorMatmul(tall, n, k);
    const std::vector<T> a = Random<T>(static_cast<size_t>(tall * k), seed);
    const std::vector<T> b = Random<T>(static_cast<size_t>(k * n), seed + 1);
    std::vector<T> c_tall(static_cast<size_t>(tall * n)), c_few(static_cast<size_t>(rows * n));
    ASSERT_TRUE(fn(p, a.data(), b.data(), c_tall.data(), nullptr)) << target;
    ASSERT_TRUE(fn(RowMajorMatmul(rows, n, k), a.data(), b.data(), c_few.data(), nullptr))
        << target;
    EXPECT_TRUE(std::equal(c_few.begin(), c_few.end(), c_tall.begin()))
        << target << ": rows=" << rows << " n=" << n << " k=" << k;
    ++seed;
  }
  // Invalid parameters write nothing.
  MatmulParams bad = RowMajorMatmul(-1, 2, 2);
  T c[4] = {T(1), T(2), T(3), T(4)};
  EXPECT_FALSE(fn(bad, c, c, c, nullptr)) << target;
  bad = RowMajorMatmul(1, 1, 1);
  bad.batch_rank = kMaxMatmulBatchRank + 1;
  EXPECT_FALSE(fn(bad, c, c, c, nullptr)) << target;
  EXPECT_EQ(T(1), c[0]);
}

}  // namespace

void RunFloatSuite(const char* target, MatmulF32Fn f32) { RunSuite<float>(target, f32); }
void RunFloatSuite(const char* target, MatmulF64Fn f64) { RunSuite<double>(target, f64); }
void RecordTarget(const char* target) { TargetsRun().insert(target); }

class PrintTargets : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("Highway targets tested:");
    for (const std::string& t : TargetsRun()) std::printf(" %s", t.c_str());
    int mr = 0, nr = 0;
    MatmulF32TileShape(&mr, &nr);
    std::printf("\nDispatched f32 tile: %d x %d\n", mr, nr);
  }
};
const ::testing::Environment* const kPrintTargets =
    ::testing::AddGlobalTestEnvironment(new PrintTargets);

}  // namespace matmul_test

HWY_BEFORE_TEST(MatmulKernelTest);
HWY_EXPORT_AND_TEST_P(MatmulKernelTest, TestMatmulF32);
HWY_EXPORT_AND_TEST_P(MatmulKernelTest, TestMatmulF64);

// The public entry points, with dispatch forced to each target in turn.
using MatmulF32Fn = bool (*)(const MatmulParams&, const float*, const float*, float*,
                             ThreadPool*);  // the MatmulF32 overload without an epilogue
HWY_BEFORE_TEST(MatmulDispatchTest);
TEST_P(MatmulDispatchTest, PublicEntryPoints) {
  const char* target = hwy::TargetName(GetParam());
  matmul_test::Check<float>(target, "MatmulF32", static_cast<MatmulF32Fn>(&MatmulF32),
                            RowMajorMatmul(45, 77, 300), nullptr, 99);
  matmul_test::Check<double>(target, "MatmulF64", &MatmulF64, RowMajorMatmul(45, 77, 300, true),
                             nullptr, 98);
  int mr = 0, nr = 0;
  MatmulF32TileShape(&mr, &nr);
  EXPECT_GE(mr, 1);
  EXPECT_GE(nr, 1);
}

// ---- NaN and infinities ----

// IEEE propagation: a NaN or inf in A, B or an accumulated C reaches exactly the C elements
// whose sums contain it (any summation order gives NaN for NaN or inf - inf, else the inf);
// inf * 0 is NaN (zeros of B are not skipped); a NaN left in C is ignored unless
// accumulating. Specials land in row/column tails of the register blocks and in both k
// blocks (k > 256); the other elements keep the usual tolerance.
template <typename T, typename Fn>
void CheckSpecials(const char* target, Fn fn) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  uint32_t state = 77;
  auto next = [&state](int64_t bound) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int64_t>((state >> 8) % static_cast<uint32_t>(bound));
  };
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 2}, {7, 17, 9}, {13, 35, 300}, {20, 70, 33}};
  for (const auto& s : shapes) {
    for (bool transpose_b : {false, true}) {
      for (bool accumulate : {false, true}) {
        const int64_t m = s[0], n = s[1], k = s[2];
        MatmulParams p = RowMajorMatmul(m, n, k, transpose_b);
        p.accumulate = accumulate;
        std::vector<T> a =
            matmul_test::Random<T>(static_cast<size_t>(m * k), static_cast<uint32_t>(m + k));
        std::vector<T> b =
            matmul_test::Random<T>(static_cast<size_t>(k * n), static_cast<uint32_t>(n + k));
        std::vector<T> c0(static_cast<size_t>(m * n), nan);  // ignored unless accumulating
        if (accumulate) {
          c0 = matmul_test::Random<T>(c0.size(), 9);
          c0[static_cast<size_t>(next(m * n))] = nan;
          c0[static_cast<size_t>(next(m * n))] = inf;
        }
        auto A = [&](int64_t i, int64_t q) -> T& { return a[static_cast<size_t>(i * k + q)]; };
        auto B = [&](int64_t q, int64_t j) -> T& {
          return b[static_cast<size_t>(q * p.b_row_stride + j * p.b_col_stride)];
        };
        A(next(m), next(k)) = nan;
        A(next(m), next(k)) = inf;
        B(next(k), next(n)) = -inf;
        B(next(k), next(n)) = nan;
        // -inf in the last row of A against a zero in the last column of B: inf * 0.
        const int64_t q0 = next(k);
        A(m - 1, q0) = -inf;
        B(q0, n - 1) = T(0);
        std::vector<T> c = c0;
        ASSERT_TRUE(fn(p, a.data(), b.data(), c.data(), nullptr)) << target;
        int failures = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            long double want = accumulate ? c0[static_cast<size_t>(i * n + j)] : 0;
            long double bound = std::fabs(want);
            for (int64_t q = 0; q < k; ++q) {
              const long double prod = static_cast<long double>(A(i, q)) * B(q, j);
              want += prod;
              bound += std::fabs(prod);
            }
            const T got = c[static_cast<size_t>(i * n + j)];
            bool ok;
            if (std::isnan(want)) {
              ok = std::isnan(got);
            } else if (std::isinf(want)) {
              ok = static_cast<long double>(got) == want;
            } else {
              ok = std::fabs(got - want) <=
                   4 * (k + 1) * std::numeric_limits<T>::epsilon() * bound + 1e-30L;
            }
            if (!ok && ++failures <= 5) {
              ADD_FAILURE() << "target " << target << " specials m=" << m << " n=" << n
                            << " k=" << k << (transpose_b ? " Bt" : "")
                            << (accumulate ? " acc" : "") << ": C[" << i << "," << j
                            << "] = " << got << ", want " << static_cast<double>(want);
            }
          }
        }
        EXPECT_TRUE(std::isnan(c[static_cast<size_t>(m * n - 1)])) << target << " inf * 0";
      }
    }
  }
}

TEST_P(MatmulDispatchTest, NaNAndInfPropagateAsIEEE) {
  const char* target = hwy::TargetName(GetParam());
  CheckSpecials<float>(target, static_cast<MatmulF32Fn>(&MatmulF32));
  CheckSpecials<double>(target, &MatmulF64);
}

// ---- Integer kernels (no SIMD dispatch) ----

// Reference with unsigned (wrapping) arithmetic.
template <typename T>
std::vector<T> IntReference(const MatmulParams& p, const std::vector<T>& a, const std::vector<T>& b,
                            const std::vector<T>& c0) {
  using U = std::make_unsigned_t<T>;
  std::vector<T> c = c0;
  int64_t batch = 1;
  for (int i = 0; i < p.batch_rank; ++i) batch *= p.batch_dims[i];
  for (int64_t t = 0; t < batch; ++t) {
    int64_t rest = t, oa = 0, ob = 0, oc = 0;
    for (int dim = p.batch_rank - 1; dim >= 0; --dim) {
      const int64_t idx = rest % p.batch_dims[dim];
      rest /= p.batch_dims[dim];
      oa += idx * p.a_batch_strides[dim];
      ob += idx * p.b_batch_strides[dim];
      oc += idx * p.c_batch_strides[dim];
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        U sum = p.accumulate ? static_cast<U>(c[oc + i * p.c_row_stride + j]) : 0;
        for (int64_t q = 0; q < p.k; ++q) {
          sum += static_cast<U>(a[oa + i * p.a_row_stride + q * p.a_col_stride]) *
                 static_cast<U>(b[ob + q * p.b_row_stride + j * p.b_col_stride]);
        }
        c[oc + i * p.c_row_stride + j] = static_cast<T>(sum);
      }
    }
  }
  return c;
}

template <typename T, typename Fn>
void CheckInt(Fn fn, const MatmulParams& p, size_t a_n, size_t b_n, size_t c_n, uint32_t seed,
              ThreadPool* pool) {
  std::vector<T> a(a_n), b(b_n), c(c_n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto* v : {&a, &b, &c}) {
    for (T& x : *v) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      x = static_cast<T>(s >> 7);  // full-range values: products overflow and must wrap
    }
  }
  const std::vector<T> want = IntReference(p, a, b, c);
  ASSERT_TRUE(fn(p, a.data(), b.data(), c.data(), pool));
  EXPECT_TRUE(want == c) << "m=" << p.m << " n=" << p.n << " k=" << p.k;
}

template <typename T, typename Fn>
void IntSuite(Fn fn) {
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (int64_t m : {0, 1, 5, 33, 130}) {
    for (int64_t n : {0, 1, 7, 64, 129}) {
      for (int64_t k : {0, 1, 3, 70}) {
        for (bool tb : {false, true}) {
          MatmulParams p = RowMajorMatmul(m, n, k, tb);
          const size_t an = static_cast<size_t>(m * k), bn = static_cast<size_t>(k * n),
                       cn = static_cast<size_t>(m * n);
          CheckInt<T>(fn, p, an, bn, cn, seed++, nullptr);
          CheckInt<T>(fn, p, an, bn, cn, seed++, &pool);
          p.accumulate = true;
          CheckInt<T>(fn, p, an, bn, cn, seed++, nullptr);
        }
      }
    }
  }
  MatmulParams p = RowMajorMatmul(6, 5, 4);
  ASSERT_TRUE(AddMatmulBatchDim(&p, 2, 24, 0, 90));
  ASSERT_TRUE(AddMatmulBatchDim(&p, 3, 0, 20, 30));
  CheckInt<T>(fn, p, 48, 60, 180, seed++, &pool);
}

TEST(MatmulInt, I32MatchesWrappingReference) { IntSuite<int32_t>(&MatmulI32); }
TEST(MatmulInt, I64MatchesWrappingReference) { IntSuite<int64_t>(&MatmulI64); }

TEST(MatmulInt, I32WrapsOnOverflow) {
  const int32_t a[2] = {std::numeric_limits<int32_t>::max(), 2};
  const int32_t b[2] = {2, std::numeric_limits<int32_t>::max()};
  int32_t c = 0;
  ASSERT_TRUE(MatmulI32(RowMajorMatmul(1, 1, 2), a, b, &c, nullptr));
  // 2 * (2^31 - 1) * 2 = 2^33 - 4 == -4 (mod 2^32).
  EXPECT_EQ(-4, c);
}

// Products of quantized (int8 and int16 range) operands run on the f64 GEMM when the exact sums
// fit 53 bits: the same wrapped results as the integer reference, also with a transposed B and
// a strided C; at the limit (int16 values, k large enough to pass 2^52) the integer kernel runs.
TEST(MatmulInt, I32SmallValuesMatchTheReferenceThroughF64) {
  ThreadPool pool(2);
  for (int range : {127, 255, 32767, 1 << 30}) {
    for (bool tb : {false, true}) {
      const int64_t m = 67, n = 80, k = range > 40000 ? 300 : 96;
      MatmulParams p = RowMajorMatmul(m, n, k, tb);
      p.c_row_stride = n + 3;
      std::vector<int32_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
      std::vector<int32_t> c(static_cast<size_t>(m * (n + 3)), 7);
      uint64_t s = 12345 + static_cast<uint64_t>(range);
      for (auto* v : {&a, &b}) {
        for (int32_t& x : *v) {
          s = s * 6364136223846793005ull + 1442695040888963407ull;
          x = static_cast<int32_t>(static_cast<int64_t>(s >> 33) % (2 * range + 1)) - range;
        }
      }
      const std::vector<int32_t> want = IntReference(p, a, b, c);
      ASSERT_TRUE(MatmulI32(p, a.data(), b.data(), c.data(), &pool));
      EXPECT_TRUE(want == c) << "range " << range << " transposed b " << tb;
    }
  }
}

TEST(MatmulParamsTest, Helpers) {
  MatmulParams p = RowMajorMatmul(2, 3, 4, true);
  EXPECT_EQ(1, p.b_row_stride);
  EXPECT_EQ(4, p.b_col_stride);
  EXPECT_EQ(3, p.c_row_stride);
  for (int i = 0; i < kMaxMatmulBatchRank; ++i) EXPECT_TRUE(AddMatmulBatchDim(&p, 1, 0, 0, 6));
  EXPECT_FALSE(AddMatmulBatchDim(&p, 1, 0, 0, 6));
  EXPECT_TRUE(ValidMatmulParams(p));
  MatmulParams q = RowMajorMatmul(1, 1, 1);
  EXPECT_FALSE(AddMatmulBatchDim(&q, -1, 0, 0, 0));
  EXPECT_EQ(0, q.batch_rank);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
