// The error model of the C API, through the shipped libshapepoly.so.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "shapepoly/shapepoly.h"
#include "shapepoly/shapepoly_experimental.h"

namespace {

TEST(ErrorCodes, HaveFixedValues) {
  EXPECT_EQ(0, SHP_OK);
  EXPECT_EQ(1, SHP_INVALID_ARGUMENT);
  EXPECT_EQ(2, SHP_PARSE_ERROR);
  EXPECT_EQ(3, SHP_INCONCLUSIVE);
  EXPECT_EQ(4, SHP_SCOPE_MISMATCH);
  EXPECT_EQ(5, SHP_UNSATISFIABLE);
  EXPECT_EQ(6, SHP_SHAPE_MISMATCH);
  EXPECT_EQ(7, SHP_CONSTRAINT_VIOLATION);
  EXPECT_EQ(8, SHP_UNSOLVABLE);
  EXPECT_EQ(9, SHP_DIVISION_BY_ZERO);
  EXPECT_EQ(10, SHP_OVERFLOW);
  EXPECT_EQ(11, SHP_DTYPE_MISMATCH);
  EXPECT_EQ(12, SHP_NOT_FOUND);
  EXPECT_EQ(13, SHP_INVALID_PROGRAM);
  EXPECT_EQ(14, SHP_VERSION_MISMATCH);
  EXPECT_EQ(15, SHP_UNSUPPORTED);
  EXPECT_EQ(16, SHP_OUT_OF_MEMORY);
  EXPECT_EQ(17, SHP_INTERNAL);
  EXPECT_EQ(18, SHP_GUARD_FAILED);
  EXPECT_EQ(4u, sizeof(shp_code_t));
}

TEST(ErrorCodes, StringsNameTheCode) {
  const char* const names[] = {
      "SHP_OK",
      "SHP_INVALID_ARGUMENT",
      "SHP_PARSE_ERROR",
      "SHP_INCONCLUSIVE",
      "SHP_SCOPE_MISMATCH",
      "SHP_UNSATISFIABLE",
      "SHP_SHAPE_MISMATCH",
      "SHP_CONSTRAINT_VIOLATION",
      "SHP_UNSOLVABLE",
      "SHP_DIVISION_BY_ZERO",
      "SHP_OVERFLOW",
      "SHP_DTYPE_MISMATCH",
      "SHP_NOT_FOUND",
      "SHP_INVALID_PROGRAM",
      "SHP_VERSION_MISMATCH",
      "SHP_UNSUPPORTED",
      "SHP_OUT_OF_MEMORY",
      "SHP_INTERNAL",
      "SHP_GUARD_FAILED",
  };
  for (int32_t code = 0; code <= SHP_GUARD_FAILED; ++code) {
    const std::string text = shp_code_string(code);
    EXPECT_EQ(0u, text.rfind(std::string(names[code]) + ": ", 0)) << text;
    EXPECT_GT(text.size(), std::strlen(names[code]) + 2) << text;
  }
  EXPECT_STREQ("SHP_INVALID_ARGUMENT: invalid argument", shp_code_string(SHP_INVALID_ARGUMENT));
  EXPECT_STREQ("SHP_OUT_OF_MEMORY: out of memory", shp_code_string(SHP_OUT_OF_MEMORY));
}

TEST(ErrorCodes, UnknownCodes) {
  for (int32_t code :
       {-1, 19, 1000, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}) {
    EXPECT_STREQ("unknown error code", shp_code_string(code)) << code;
  }
}

TEST(ErrorObject, NullIsSuccess) {
  EXPECT_EQ(SHP_OK, shp_error_code(nullptr));
  ASSERT_NE(nullptr, shp_error_message(nullptr));
  EXPECT_STREQ("", shp_error_message(nullptr));
  shp_error_destroy(nullptr);  // no-op
}

TEST(ErrorObject, InvalidArgumentNamesTheArgument) {
  float sum = 3.5f;
  shp_error_t* error = shp_simd_sum_f32(nullptr, 10, &sum);
  ASSERT_NE(nullptr, error);
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(error));
  EXPECT_STREQ("argument 'data' must not be NULL when n > 0", shp_error_message(error));
  EXPECT_EQ(3.5f, sum) << "out-param must be untouched on error";
  shp_error_destroy(error);

  const float data[] = {1.0f, 2.0f};
  error = shp_simd_sum_f32(data, 2, nullptr);
  ASSERT_NE(nullptr, error);
  EXPECT_EQ(SHP_INVALID_ARGUMENT, shp_error_code(error));
  EXPECT_STREQ("argument 'sum_out' must not be NULL", shp_error_message(error));
  shp_error_destroy(error);
}

TEST(ErrorObject, MessageIsStableUntilDestroy) {
  float sum = 0.0f;
  shp_error_t* first = shp_simd_sum_f32(nullptr, 1, &sum);
  const char* message = shp_error_message(first);
  shp_error_t* second = shp_simd_sum_f32(nullptr, 2, &sum);  // an independent object
  ASSERT_NE(first, second);
  EXPECT_STREQ("argument 'data' must not be NULL when n > 0", message);
  shp_error_destroy(second);
  EXPECT_STREQ("argument 'data' must not be NULL when n > 0", message);
  shp_error_destroy(first);
}

TEST(SimdSum, Works) {
  std::vector<float> v(1001, 0.5f);
  float sum = -1.0f;
  ASSERT_EQ(nullptr, shp_simd_sum_f32(v.data(), v.size(), &sum));
  EXPECT_EQ(500.5f, sum);
  ASSERT_EQ(nullptr, shp_simd_sum_f32(nullptr, 0, &sum));
  EXPECT_EQ(0.0f, sum);
  const float cancel[] = {1e8f, 1.0f, -1e8f};
  ASSERT_EQ(nullptr, shp_simd_sum_f32(cancel, 3, &sum));
  EXPECT_EQ(1.0f, sum);
}

TEST(Version, MatchesHeader) {
  EXPECT_STREQ(SHP_VERSION_STRING, shp_version_string());
  EXPECT_EQ(SHP_ABI_VERSION, shp_abi_version());
  const std::string target = shp_simd_target();
  EXPECT_FALSE(target.empty());
  EXPECT_EQ(target, shp_simd_target()) << "the target is chosen once";
}

}  // namespace
