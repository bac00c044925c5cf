// shp_set_simd_target through the shipped shared library: every target this CPU runs and the
// library is compiled for is forced in turn (shp_simd_target reports it, the SIMD sum and a
// program run give exact results on it, a runtime reports it), then the cap is lifted; each
// kind of bad name fails with its code and message. The oracle is Highway itself, asked in
// this test (the library and this file are compiled for the same HWY_TARGETS).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "shapepoly/shapepoly.h"
#include "shapepoly/shapepoly_experimental.h"

namespace {

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

std::vector<int64_t> Bits(int64_t mask) {
  std::vector<int64_t> out;
  for (int bit = 0; bit < 63; ++bit) {
    if ((mask & (int64_t{1} << bit)) != 0) out.push_back(int64_t{1} << bit);
  }
  return out;
}

std::string List(int64_t mask) {
  std::string out;
  for (int64_t t : Bits(mask)) out += (out.empty() ? "" : ", ") + std::string(hwy::TargetName(t));
  return out;
}

// The targets this CPU runs, asked of Highway with no cap in place.
int64_t Cpu() {
  static const int64_t cpu = [] {
    EXPECT_EQ(Message(shp_set_simd_target(nullptr)), "");
    const int64_t t = hwy::SupportedTargets();
    hwy::GetChosenTarget().DeInit();  // SupportedTargets chose unmasked; re-resolve next time
    return t;
  }();
  return cpu;
}

int64_t Known() {
  int64_t known = 0;
  for (int64_t t : Bits(INT64_MAX)) {
    if (std::strcmp(hwy::TargetName(t), "Unknown") != 0) known |= t;
  }
  return known;
}

class SimdTargetApiTest : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(Message(shp_set_simd_target("best")), ""); }
};

// out = x * y + x on integers exact in float (identical on every target, FMA or not).
shp_program_t* MakeProgram() {
  shp_scope_t* scope;
  EXPECT_EQ(shp_scope_create(nullptr, 0, &scope), nullptr);
  const shp_tensor_t *x, *y, *p, *s;
  EXPECT_EQ(shp_tensor_input(scope, "x", SHP_F32, "n", &x), nullptr);
  EXPECT_EQ(shp_tensor_input(scope, "y", SHP_F32, "n", &y), nullptr);
  EXPECT_EQ(shp_tensor_binary(SHP_MUL, x, y, &p), nullptr);
  EXPECT_EQ(shp_tensor_binary(SHP_ADD, p, x, &s), nullptr);
  const shp_tensor_t* ins[] = {x, y};
  const char* names[] = {"out"};
  shp_program_t* prog = nullptr;
  EXPECT_EQ(shp_program_create(scope, ins, 2, &s, names, 1, &prog), nullptr);
  shp_scope_destroy(scope);
  return prog;
}

void ExpectKernelsWork(const std::string& target) {
  // 1e8, -1e8 and 999 halves: exactly the halves whatever the vector width (double sums).
  std::vector<float> v(1001, 0.5f);
  v[0] = 1e8f;
  v[500] = -1e8f;
  float sum = 0;
  OK(shp_simd_sum_f32(v.data(), v.size(), &sum));
  EXPECT_EQ(499.5f, sum) << target;

  shp_program_t* prog = MakeProgram();
  ASSERT_NE(prog, nullptr);
  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(prog, nullptr, &rt));
  shp_program_destroy(prog);
  EXPECT_EQ(target, shp_runtime_simd_target(rt));
  const int64_t n = 37;  // vectors and a tail on every target
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i - 10);
    y[i] = static_cast<float>(2 * i + 1);
  }
  shp_array_t *xa = nullptr, *ya = nullptr, *out = nullptr;
  OK(shp_array_wrap(SHP_F32, &n, 1, x.data(), x.size() * 4, &xa));
  OK(shp_array_wrap(SHP_F32, &n, 1, y.data(), y.size() * 4, &ya));
  const shp_array_t* args[] = {xa, ya};
  const char* names[] = {"x", "y"};
  OK(shp_runtime_run(rt, names, args, 2, &out, 1));
  const float* o = static_cast<const float*>(shp_array_data(out));
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(x[i] * y[i] + x[i], o[i]) << target << " i=" << i;
  EXPECT_EQ(target, shp_simd_target());
  shp_array_destroy(out);
  shp_array_destroy(xa);
  shp_array_destroy(ya);
  shp_runtime_destroy(rt);
}

TEST_F(SimdTargetApiTest, ForcesEachTargetThisCpuRunsThenLiftsTheCap) {
  const std::vector<int64_t> runnable = Bits(Cpu() & HWY_TARGETS);
  ASSERT_FALSE(runnable.empty());
  const std::string best = hwy::TargetName(runnable.front());
  EXPECT_EQ(best, shp_simd_target());
  for (int64_t t : runnable) {
    const std::string name = hwy::TargetName(t);
    OK(shp_set_simd_target(name.c_str()));
    EXPECT_EQ(name, shp_simd_target());
    ExpectKernelsWork(name);
  }
  // A runtime created on one target runs on the next one.
  OK(shp_set_simd_target(hwy::TargetName(runnable.back())));
  shp_program_t* prog = MakeProgram();
  shp_runtime_t* rt = nullptr;
  OK(shp_runtime_create(prog, nullptr, &rt));
  shp_program_destroy(prog);
  OK(shp_set_simd_target(nullptr));
  EXPECT_EQ(best, shp_runtime_simd_target(rt));
  shp_runtime_destroy(rt);
  EXPECT_EQ(best, shp_simd_target());
  ExpectKernelsWork(best);
  // Case is ignored.
  std::string lower = hwy::TargetName(runnable.back());
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  OK(shp_set_simd_target(lower.c_str()));
  EXPECT_STREQ(hwy::TargetName(runnable.back()), shp_simd_target());
}

TEST_F(SimdTargetApiTest, AnUnknownNameIsAnInvalidArgumentListingTheAcceptedNames) {
  for (const char* bad : {"AVX9", "", "avx 2", "Unknown"}) {
    shp_error_t* err = shp_set_simd_target(bad);
    EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(err)) << bad;
    EXPECT_EQ("unknown SIMD target '" + std::string(bad) + "': expected \"best\" or one of " +
                  List(Known()) + " (compiled into this library: " + List(HWY_TARGETS) +
                  "; this CPU runs: " + List(Cpu() & HWY_TARGETS) + ")",
              Message(err));
  }
}

TEST_F(SimdTargetApiTest, ATargetThisCpuCannotRunIsUnsupported) {
  const int64_t lacking = HWY_TARGETS & ~Cpu();
  if (lacking == 0) {
    GTEST_SKIP() << "this CPU runs every compiled target (" << List(HWY_TARGETS)
                 << "): no unsupported one to request";
  }
  const std::vector<int64_t> runnable = Bits(Cpu() & HWY_TARGETS);
  OK(shp_set_simd_target(hwy::TargetName(runnable.back())));  // a cap that must survive
  const std::string name = hwy::TargetName(Bits(lacking).front());
  shp_error_t* err = shp_set_simd_target(name.c_str());
  EXPECT_EQ(SHP_UNSUPPORTED, shp_error_code(err));
  EXPECT_EQ(name + " is not supported by this CPU; it supports: " + List(Cpu() & HWY_TARGETS),
            Message(err));
  EXPECT_STREQ(hwy::TargetName(runnable.back()), shp_simd_target());
}

TEST_F(SimdTargetApiTest, ATargetNotCompiledIsUnsupported) {
  const int64_t missing = Known() & ~HWY_TARGETS;
  if (missing == 0) GTEST_SKIP() << "every target Highway names is compiled";
  const std::string name = hwy::TargetName(Bits(missing).front());
  shp_error_t* err = shp_set_simd_target(name.c_str());
  EXPECT_EQ(SHP_UNSUPPORTED, shp_error_code(err));
  EXPECT_EQ(0u, Message(err).find(name +
                                  " is not compiled into this library; it is compiled "
                                  "for: " +
                                  List(HWY_TARGETS)));
}

}  // namespace
