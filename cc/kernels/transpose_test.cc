// Tests of the transpose kernels on EVERY Highway target compiled into this binary that the
// CPU supports (per-target implementation directly, and the public dispatchers with dispatch
// forced to each target), against a naive element-by-element permutation. Guard bytes around
// every output check that nothing outside it is written.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/transpose_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/transpose-inl.h"

// ---- Target-independent helpers (declared once; defined in the HWY_ONCE pass) ----
#ifndef SHAPEPOLY_CC_KERNELS_TRANSPOSE_TEST_HELPERS_
#define SHAPEPOLY_CC_KERNELS_TRANSPOSE_TEST_HELPERS_
#include <stdint.h>

namespace shp {
namespace kernels {

class ThreadPool;

namespace transpose_test {

using TransposeFn = bool (*)(const void*, const int64_t*, const int64_t*, int, int64_t, void*,
                             ThreadPool*);
using Transpose2DFn = bool (*)(const void*, int64_t, int64_t, int64_t, int64_t, void*, int64_t,
                               ThreadPool*);

// The whole suite on one implementation, labelled `target`.
void RunSuite(const char* target, TransposeFn nd, Transpose2DFn two_d);
void RecordTarget(const char* target);

}  // namespace transpose_test
}  // namespace kernels
}  // namespace shp
#endif  // SHAPEPOLY_CC_KERNELS_TRANSPOSE_TEST_HELPERS_

// ---- Per-target test bodies ----
HWY_BEFORE_NAMESPACE();
namespace shp {
namespace kernels {
namespace HWY_NAMESPACE {

bool TransposeForTest(const void* in, const int64_t* shape, const int64_t* perm, int rank,
                      int64_t es, void* out, ThreadPool* pool) {
  return TransposeImpl(in, shape, perm, rank, es, out, pool);
}

bool Transpose2DForTest(const void* in, int64_t rows, int64_t cols, int64_t is, int64_t es,
                        void* out, int64_t os, ThreadPool* pool) {
  return Transpose2DImpl(in, rows, cols, is, es, out, os, pool);
}

void TestTranspose() {
  const char* target = hwy::TargetName(HWY_TARGET);
  transpose_test::RecordTarget(target);
  transpose_test::RunSuite(target, &TransposeForTest, &Transpose2DForTest);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace shp
HWY_AFTER_NAMESPACE();

// ---- Test registration and helper definitions (once) ----
#if HWY_ONCE
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "cc/kernels/parallel.h"
#include "cc/kernels/transpose.h"
#include "gtest/gtest.h"
#include "hwy/aligned_allocator.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace transpose_test {

namespace {

std::set<std::string>& TargetsRun() {
  static std::set<std::string> targets;
  return targets;
}

constexpr size_t kGuard = 64;
constexpr uint8_t kSentinel = 0xA5;

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t s = seed * 2654435761u + 7u;
  for (uint8_t& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<uint8_t>(s >> 24);
  }
  return v;
}

// Naive reference: for every output index, find the input element.
std::vector<uint8_t> Reference(const std::vector<uint8_t>& in, const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& perm, int64_t es) {
  const int rank = static_cast<int>(shape.size());
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  std::vector<int64_t> in_strides(shape.size(), 1);
  for (int a = rank - 2; a >= 0; --a) in_strides[a] = in_strides[a + 1] * shape[a + 1];
  std::vector<uint8_t> out(static_cast<size_t>(total * es));
  std::vector<int64_t> idx(shape.size(), 0);  // output multi-index
  for (int64_t o = 0; o < total; ++o) {
    int64_t rest = o, off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t ext = shape[perm[d]];
      off += (rest % ext) * in_strides[perm[d]];
      rest /= ext;
    }
    std::memcpy(&out[o * es], &in[off * es], static_cast<size_t>(es));
  }
  return out;
}

void CheckTranspose(const char* target, TransposeFn fn, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& perm, int64_t es, ThreadPool* pool, uint32_t seed) {
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  const std::vector<uint8_t> in = RandomBytes(static_cast<size_t>(total * es), seed);
  const std::vector<uint8_t> want = Reference(in, shape, perm, es);
  std::vector<uint8_t> out(want.size() + 2 * kGuard, kSentinel);
  std::string desc = std::string("target ") + target + " es=" + std::to_string(es) + " shape=";
  for (int64_t s : shape) desc += std::to_string(s) + ",";
  desc += " perm=";
  for (int64_t p : perm) desc += std::to_string(p) + ",";
  ASSERT_TRUE(fn(in.data(), shape.data(), perm.data(), static_cast<int>(shape.size()), es,
                 out.data() + kGuard, pool))
      << desc;
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin() + kGuard)) << desc;
  for (size_t i = 0; i < kGuard; ++i) {
    ASSERT_EQ(kSentinel, out[i]) << desc << " (wrote before out)";
    ASSERT_EQ(kSentinel, out[out.size() - 1 - i]) << desc << " (wrote past out)";
  }
}

}  // namespace

void RunSuite(const char* target, TransposeFn nd, Transpose2DFn two_d) {
  uint32_t seed = 1;
  ThreadPool pool(3);
  // Exhaustive permutations of small ranks over shapes with 0, 1, primes and tile edges.
  const std::vector<std::vector<int64_t>> shapes = {{},
                                                    {5},
                                                    {0},
                                                    {1, 1},
                                                    {3, 7},
                                                    {7, 3},
                                                    {64, 64},
                                                    {67, 129},
                                                    {1, 9},
                                                    {9, 1},
                                                    {4, 0, 3},
                                                    {2, 3, 5},
                                                    {1, 17, 1},
                                                    {5, 1, 13},
                                                    {33, 2, 65},
                                                    {2, 3, 4, 5},
                                                    {6, 1, 7, 2},
                                                    {3, 2, 1, 2, 5},
                                                    {4, 2, 3, 1, 2, 3}};
  for (const auto& shape : shapes) {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (int64_t es : {1, 2, 3, 4, 8, 16}) {
        CheckTranspose(target, nd, shape, perm, es, nullptr, seed++);
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  // Large arrays: cache tiles, SIMD blocks, and threads (>= 1 MiB).
  for (int64_t es : {1, 4, 8}) {
    CheckTranspose(target, nd, {1031, 517}, {1, 0}, es, nullptr, seed++);
    CheckTranspose(target, nd, {1031, 517}, {1, 0}, es, &pool, seed++);
    CheckTranspose(target, nd, {3, 300, 301}, {0, 2, 1}, es, &pool, seed++);
    CheckTranspose(target, nd, {300, 2, 301}, {2, 1, 0}, es, &pool, seed++);
    CheckTranspose(target, nd, {130, 129, 3, 5}, {1, 0, 2, 3}, es, &pool, seed++);
    CheckTranspose(target, nd, {70, 80, 90}, {2, 0, 1}, es, &pool, seed++);
  }
  // Larger than kTransposeStreamBytes with a 64-byte aligned output and line-multiple output
  // rows: full blocks use non-temporal stores, the last column blocks are partial.
  {
    const int64_t rows = 2064, cols = 2051;
    const size_t n = static_cast<size_t>(rows * cols);
    auto in = hwy::AllocateAligned<uint32_t>(n);
    auto out = hwy::AllocateAligned<uint32_t>(n);
    ASSERT_TRUE(in && out);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
    const int64_t shape[2] = {rows, cols};
    const int64_t perm[2] = {1, 0};
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::fill(out.get(), out.get() + n, 0u);
      ASSERT_TRUE(nd(in.get(), shape, perm, 2, 4, out.get(), p)) << target;
      int64_t bad = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) bad += out[c * rows + r] != in[r * cols + c];
      }
      EXPECT_EQ(0, bad) << target << " streamed transpose";
    }
  }
  // Invalid arguments write nothing.
  const int64_t shape2[2] = {2, 3};
  const int64_t bad_perm[2] = {0, 0};
  const int64_t out_of_range[2] = {0, 2};
  const int64_t ok_perm[2] = {1, 0};
  uint8_t buf[6] = {1, 2, 3, 4, 5, 6};
  uint8_t out[6] = {};
  EXPECT_FALSE(nd(buf, shape2, bad_perm, 2, 1, out, nullptr)) << target;
  EXPECT_FALSE(nd(buf, shape2, out_of_range, 2, 1, out, nullptr)) << target;
  EXPECT_FALSE(nd(buf, shape2, ok_perm, 2, 0, out, nullptr)) << target;
  EXPECT_FALSE(nd(buf, shape2, ok_perm, kMaxTransposeRank + 1, 1, out, nullptr)) << target;
  const int64_t neg[2] = {-1, 3};
  EXPECT_FALSE(nd(buf, neg, ok_perm, 2, 1, out, nullptr)) << target;
  EXPECT_EQ(0, out[0]);

  // Strided 2-d: padded rows in and out; padding of out untouched.
  for (const auto& rc : {std::vector<int64_t>{5, 3}, std::vector<int64_t>{130, 67},
                         std::vector<int64_t>{600, 700}}) {
    for (int64_t es : {1, 2, 4, 8, 5}) {
      const int64_t rows = rc[0], cols = rc[1], is = cols + 3, os = rows + 5;
      const std::vector<uint8_t> in = RandomBytes(static_cast<size_t>(rows * is * es), seed++);
      std::vector<uint8_t> got(static_cast<size_t>(cols * os * es), kSentinel);
      ASSERT_TRUE(two_d(in.data(), rows, cols, is, es, got.data(), os, &pool)) << target;
      bool ok = true;
      for (int64_t c = 0; c < cols && ok; ++c) {
        for (int64_t r = 0; r < os && ok; ++r) {
          for (int64_t b = 0; b < es; ++b) {
            const uint8_t g = got[static_cast<size_t>((c * os + r) * es + b)];
            const uint8_t w = r < rows ? in[static_cast<size_t>((r * is + c) * es + b)] : kSentinel;
            if (g != w) ok = false;
          }
        }
      }
      EXPECT_TRUE(ok) << target << " 2d rows=" << rows << " cols=" << cols << " es=" << es;
    }
  }
  EXPECT_FALSE(two_d(buf, 2, 3, 2, 1, out, 2, nullptr)) << target;  // in stride < cols
  EXPECT_FALSE(two_d(buf, 2, 3, 3, 1, out, 1, nullptr)) << target;  // out stride < rows
  EXPECT_TRUE(two_d(nullptr, 0, 3, 3, 1, nullptr, 0, nullptr)) << target;
}

void RecordTarget(const char* target) { TargetsRun().insert(target); }

class PrintTargets : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("Highway targets tested:");
    for (const std::string& t : TargetsRun()) std::printf(" %s", t.c_str());
    std::printf("\n");
  }
};
const ::testing::Environment* const kPrintTargets =
    ::testing::AddGlobalTestEnvironment(new PrintTargets);

}  // namespace transpose_test

HWY_BEFORE_TEST(TransposeKernelTest);
HWY_EXPORT_AND_TEST_P(TransposeKernelTest, TestTranspose);

// The public entry points, with dispatch forced to each target in turn.
HWY_BEFORE_TEST(TransposeDispatchTest);
TEST_P(TransposeDispatchTest, PublicEntryPoints) {
  const int64_t shape[3] = {3, 4, 5};
  const int64_t perm[3] = {2, 0, 1};
  std::vector<float> in(60);
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<float> out(60, -1.0f);
  ASSERT_TRUE(Transpose(in.data(), shape, perm, 3, sizeof(float), out.data(), nullptr));
  // out[k, i, j] = in[i, j, k]
  for (int64_t k = 0; k < 5; ++k) {
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        EXPECT_EQ(in[(i * 4 + j) * 5 + k], out[(k * 3 + i) * 4 + j]);
      }
    }
  }
  std::vector<double> m(6, 0.0), mt(6, 0.0);
  std::iota(m.begin(), m.end(), 1.0);
  ASSERT_TRUE(Transpose2D(m.data(), 2, 3, 3, sizeof(double), mt.data(), 2, nullptr));
  EXPECT_EQ((std::vector<double>{1, 4, 2, 5, 3, 6}), mt);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
