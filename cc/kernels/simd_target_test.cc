// SimdTargetName names the target the dispatch chose: every TEST_P runs once per Highway target
// compiled into the library and supported by this CPU (the dispatch is forced to each in turn).
// SetSimdTarget caps the dispatch at one target, with an error for each kind of bad name.
#include "cc/kernels/simd_target.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

HWY_BEFORE_TEST(SimdTargetTest);

TEST_P(SimdTargetTest, NamesTheForcedTarget) {
  EXPECT_STREQ(hwy::TargetName(GetParam()), SimdTargetName());
}

TEST(SimdTarget, NamesTheBestSupportedTargetByDefault) {
  const char* name = SimdTargetName();
  ASSERT_NE(nullptr, name);
  EXPECT_GT(std::strlen(name), 0u);
}

std::vector<int64_t> Bits(int64_t mask) {
  std::vector<int64_t> out;
  for (int bit = 0; bit < 63; ++bit) {
    if ((mask & (int64_t{1} << bit)) != 0) out.push_back(int64_t{1} << bit);
  }
  return out;
}

int64_t Runnable() { return CpuSimdTargets() & CompiledSimdTargets(); }

// Every target Highway names on this architecture (x86: AVX3_DL ... SCALAR).
int64_t Known() {
  int64_t known = 0;
  for (int64_t t : Bits(INT64_MAX)) {
    if (std::strcmp(hwy::TargetName(t), "Unknown") != 0) known |= t;
  }
  return known;
}

class SetSimdTargetTest : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(SimdTargetStatus::kOk, SetSimdTarget("best", nullptr)); }
};

TEST_F(SetSimdTargetTest, DispatchesToEachRunnableTargetAndBackToTheBest) {
  const std::vector<int64_t> runnable = Bits(Runnable());
  ASSERT_FALSE(runnable.empty());
  // The CPU's best (lowest bit) is what the dispatch picks without a cap (SHP_SIMD_TARGET may
  // have set one).
  ASSERT_EQ(SimdTargetStatus::kOk, SetSimdTarget("best", nullptr));
  EXPECT_STREQ(hwy::TargetName(runnable.front()), SimdTargetName());
  for (int64_t t : runnable) {
    std::string message = "untouched";
    ASSERT_EQ(SimdTargetStatus::kOk, SetSimdTarget(hwy::TargetName(t), &message));
    EXPECT_EQ("untouched", message);
    EXPECT_STREQ(hwy::TargetName(t), SimdTargetName());
    EXPECT_STREQ(hwy::TargetName(t), SimdTargetRequested());
  }
  // Lower case is accepted; nullptr and "BEST" lift the cap.
  std::string lower = hwy::TargetName(runnable.back());
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  ASSERT_EQ(SimdTargetStatus::kOk, SetSimdTarget(lower.c_str(), nullptr));
  EXPECT_STREQ(hwy::TargetName(runnable.back()), SimdTargetName());
  ASSERT_EQ(SimdTargetStatus::kOk, SetSimdTarget(nullptr, nullptr));
  EXPECT_STREQ(hwy::TargetName(runnable.front()), SimdTargetName());
  EXPECT_STREQ("best", SimdTargetRequested());
  ASSERT_EQ(SimdTargetStatus::kOk, SetSimdTarget(lower.c_str(), nullptr));
  ASSERT_EQ(SimdTargetStatus::kOk, SetSimdTarget("BEST", nullptr));
  EXPECT_STREQ(hwy::TargetName(runnable.front()), SimdTargetName());
}

TEST_F(SetSimdTargetTest, UnknownNamesAreRejectedWithTheAcceptedNames) {
  for (const char* bad : {"AVX9", "", "AVX2 ", "bestest", "Unknown"}) {
    std::string message;
    EXPECT_EQ(SimdTargetStatus::kUnknownName, SetSimdTarget(bad, &message)) << bad;
    EXPECT_NE(std::string::npos, message.find(std::string("'") + bad + "'")) << message;
    EXPECT_NE(std::string::npos, message.find("expected \"best\" or one of ")) << message;
    EXPECT_NE(std::string::npos, message.find(SimdTargetList(Runnable()))) << message;
  }
  EXPECT_STREQ("best", SimdTargetRequested());
}

TEST_F(SetSimdTargetTest, ATargetThisCpuCannotRunIsRejected) {
  const int64_t lacking = CompiledSimdTargets() & ~CpuSimdTargets();
  if (lacking == 0) {
    GTEST_SKIP() << "this CPU runs every compiled target (" << SimdTargetList(Runnable()) << ")";
  }
  const int64_t t = Bits(lacking).front();
  const std::string before = SimdTargetName();
  std::string message;
  EXPECT_EQ(SimdTargetStatus::kNotSupported, SetSimdTarget(hwy::TargetName(t), &message));
  EXPECT_EQ(std::string(hwy::TargetName(t)) +
                " is not supported by this CPU; it supports: " + SimdTargetList(Runnable()),
            message);
  EXPECT_EQ(before, SimdTargetName());
}

TEST_F(SetSimdTargetTest, ATargetNotCompiledIsRejected) {
  const int64_t missing = Known() & ~CompiledSimdTargets();
  if (missing == 0) GTEST_SKIP() << "every target Highway knows is compiled";
  const int64_t t = Bits(missing).front();
  std::string message;
  EXPECT_EQ(SimdTargetStatus::kNotCompiled, SetSimdTarget(hwy::TargetName(t), &message));
  EXPECT_EQ(0u, message.find(std::string(hwy::TargetName(t)) +
                             " is not compiled into this library; it is compiled for: " +
                             SimdTargetList(CompiledSimdTargets())))
      << message;
}

// Highway 1.0.3's SupportedTargets() re-detects and stores the unmasked set as the chosen
// target, which would drop a DisableTargets cap; the mock SetSimdTarget also sets prevents that
// (hwy_gtest's parameter generator and matmul_bench call SupportedTargets).
TEST_F(SetSimdTargetTest, HighwaySupportedTargetsKeepsTheCap) {
  const std::vector<int64_t> runnable = Bits(Runnable());
  if (runnable.size() < 2) GTEST_SKIP() << "one runnable target: nothing to cap";
  ASSERT_EQ(SimdTargetStatus::kOk, SetSimdTarget(hwy::TargetName(runnable[1]), nullptr));
  EXPECT_STREQ(hwy::TargetName(runnable[1]), SimdTargetName());
  EXPECT_EQ(0, hwy::SupportedTargets() & runnable[0]);
  EXPECT_STREQ(hwy::TargetName(runnable[1]), SimdTargetName());
  // Ending the mock keeps the DisableTargets mask.
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_STREQ(hwy::TargetName(runnable[1]), SimdTargetName());
}

TEST(SimdTargetList, NamesBestFirst) {
  EXPECT_EQ("", SimdTargetList(0));
  EXPECT_EQ("AVX2, SSE4", SimdTargetList(HWY_SSE4 | HWY_AVX2));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
