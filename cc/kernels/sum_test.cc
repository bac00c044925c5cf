// Tests of the float sum on EVERY Highway target compiled into this binary that the CPU
// supports: the per-target implementation directly (HWY_EXPORT_AND_TEST_P), and the public
// dispatcher SumF32/SimdTargetName with the dispatch forced to each target in turn.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/sum_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/sum-inl.h"

// ---- Target-independent helpers (declared once; defined in the HWY_ONCE pass) ----
#ifndef SHAPEPOLY_CC_KERNELS_SUM_TEST_HELPERS_
#define SHAPEPOLY_CC_KERNELS_SUM_TEST_HELPERS_
#include <stddef.h>
#include <stdint.h>

#include <limits>
#include <vector>

namespace shp {
namespace kernels {
namespace sum_test {

// Element counts around every vector width (1..16 doubles) and the 4x unrolled loop.
std::vector<size_t> Sizes();
// Deterministic pseudo-random floats in [-1, 1).
std::vector<float> RandomFloats(size_t n, uint32_t seed);
// Checks `got` (computed on `target`) against a long double reference sum of data[0..n).
void ExpectSumClose(const char* target, const float* data, size_t n, float got);
void ExpectSumEq(const char* target, const char* what, float want, float got);
void ExpectNaN(const char* target, const char* what, float got);
void RecordTarget(const char* target);

}  // namespace sum_test
}  // namespace kernels
}  // namespace shp
#endif  // SHAPEPOLY_CC_KERNELS_SUM_TEST_HELPERS_

// ---- Per-target test bodies ----
HWY_BEFORE_NAMESPACE();
namespace shp {
namespace kernels {
namespace HWY_NAMESPACE {

void TestSumMatchesReference() {
  const char* target = hwy::TargetName(HWY_TARGET);
  sum_test::RecordTarget(target);
  for (const size_t n : sum_test::Sizes()) {
    const std::vector<float> v = sum_test::RandomFloats(n + 1, static_cast<uint32_t>(n));
    sum_test::ExpectSumClose(target, v.data(), n, SumF32Impl(v.data(), n));
    // Misaligned start.
    sum_test::ExpectSumClose(target, v.data() + 1, n, SumF32Impl(v.data() + 1, n));
  }
}

void TestSumIsAccurate() {
  const char* target = hwy::TargetName(HWY_TARGET);
  // {1e8, 1 x 1000, -1e8}: a float accumulator loses every 1 (ulp(1e8) = 8).
  std::vector<float> v(1002, 1.0f);
  v.front() = 1e8f;
  v.back() = -1e8f;
  sum_test::ExpectSumEq(target, "cancellation", 1000.0f, SumF32Impl(v.data(), v.size()));
  // 2^24 + 1 + 1: float addition of 2^24 + 1 rounds back to 2^24 each time.
  const float big[] = {16777216.0f, 1.0f, 1.0f};
  sum_test::ExpectSumEq(target, "2^24+1+1", 16777218.0f, SumF32Impl(big, 3));
  // A finite result although a partial float sum would overflow.
  const float huge[] = {3e38f, 3e38f, -3e38f, 0.0f, 0.0f};
  sum_test::ExpectSumEq(target, "no intermediate overflow", 3e38f, SumF32Impl(huge, 5));
}

void TestSumSpecialValues() {
  const char* target = hwy::TargetName(HWY_TARGET);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v(37, 1.0f);
  sum_test::ExpectSumEq(target, "empty", 0.0f, SumF32Impl(nullptr, 0));
  v[20] = inf;
  sum_test::ExpectSumEq(target, "+inf", inf, SumF32Impl(v.data(), v.size()));
  v[3] = -inf;
  sum_test::ExpectNaN(target, "inf + -inf", SumF32Impl(v.data(), v.size()));
  v[3] = 1.0f;
  v[20] = std::numeric_limits<float>::quiet_NaN();
  sum_test::ExpectNaN(target, "NaN element", SumF32Impl(v.data(), v.size()));
  std::vector<float> big(33, 3e38f);
  sum_test::ExpectSumEq(target, "overflow to +inf", inf, SumF32Impl(big.data(), big.size()));
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace shp
HWY_AFTER_NAMESPACE();

// ---- Test registration and helper definitions (once) ----
#if HWY_ONCE
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "cc/kernels/simd_target.h"
#include "cc/kernels/sum.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace sum_test {

namespace {
std::set<std::string>& TargetsRun() {
  static std::set<std::string> targets;
  return targets;
}
}  // namespace

std::vector<size_t> Sizes() {
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 70; ++n) sizes.push_back(n);
  for (size_t n : {127, 128, 129, 255, 256, 257, 1000, 4097, 100003}) sizes.push_back(n);
  return sizes;
}

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t state = seed * 2654435761u + 1u;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;  // LCG
    x = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
  }
  return v;
}

void ExpectSumClose(const char* target, const float* data, size_t n, float got) {
  long double want = 0;
  long double abs_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    want += data[i];
    abs_sum += std::fabs(data[i]);
  }
  // One float rounding of the result plus the (tiny) double accumulation error.
  const double tol =
      std::fabs(static_cast<double>(want)) * 6e-8 + static_cast<double>(abs_sum) * 1e-15 + 1e-30;
  EXPECT_NEAR(static_cast<double>(got), static_cast<double>(want), tol)
      << "target " << target << ", n = " << n;
}

void ExpectSumEq(const char* target, const char* what, float want, float got) {
  EXPECT_EQ(want, got) << "target " << target << ": " << what;
}

void ExpectNaN(const char* target, const char* what, float got) {
  EXPECT_TRUE(std::isnan(got)) << "target " << target << ": " << what << " gave " << got;
}

void RecordTarget(const char* target) { TargetsRun().insert(target); }

// Prints the targets that were tested (visible with --test_output=all or in test.log).
class PrintTargets : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("Highway targets tested:");
    for (const std::string& t : TargetsRun()) std::printf(" %s", t.c_str());
    std::printf("\nDispatcher default target: %s\n", SimdTargetName());
  }
};
const ::testing::Environment* const kPrintTargets =
    ::testing::AddGlobalTestEnvironment(new PrintTargets);

}  // namespace sum_test

// Per-target implementation, once per compiled and supported target.
HWY_BEFORE_TEST(SumKernelTest);
HWY_EXPORT_AND_TEST_P(SumKernelTest, TestSumMatchesReference);
HWY_EXPORT_AND_TEST_P(SumKernelTest, TestSumIsAccurate);
HWY_EXPORT_AND_TEST_P(SumKernelTest, TestSumSpecialValues);

// The public entry points, with dispatch forced to each target in turn.
HWY_BEFORE_TEST(SumDispatchTest);
TEST_P(SumDispatchTest, DispatchesToForcedTarget) {
  EXPECT_STREQ(hwy::TargetName(GetParam()), SimdTargetName());
  const std::vector<float> v = sum_test::RandomFloats(1001, 7);
  sum_test::ExpectSumClose(SimdTargetName(), v.data(), v.size(), SumF32(v.data(), v.size()));
  EXPECT_EQ(0.0f, SumF32(nullptr, 0));
}

TEST(SumKernel, SeveralTargetsAreTested) {
  // A baseline x86-64 build compiles SSSE3..AVX3 plus a portable fallback; any CPU that can
  // run this suite supports at least two of them, so the suite tests at least two targets.
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::string names;
  for (int64_t t : targets) names += std::string(" ") + hwy::TargetName(t);
  std::printf("Compiled and supported targets:%s\n", names.c_str());
  EXPECT_GE(targets.size(), 2u) << names;
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
