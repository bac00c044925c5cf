// Unit tests of c_api_internal.h: every C++ exception becomes an error object.
#include "c_api/c_api_internal.h"

#include <new>
#include <stdexcept>
#include <string>

#include "cc/base/error.h"
#include "gtest/gtest.h"
#include "shapepoly/shapepoly.h"

namespace {

// A thunk-shaped function that throws whatever `kind` says.
shp_error_t* Thunk(int kind, const void* arg, int* out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(arg, "arg");
  switch (kind) {
    case 1:
      throw shp::Error(shp::Code::kShapeMismatch, "dims 3 and 4 differ");
    case 2:
      throw std::bad_alloc();
    case 3:
      throw std::runtime_error("boom");
    case 4:
      throw 42;
    default:
      break;
  }
  *out = 7;
  return nullptr;
  SHP_API_END
}

// Returns {code, message} and destroys the error.
std::pair<int32_t, std::string> Take(shp_error_t* error) {
  std::pair<int32_t, std::string> result{shp_error_code(error), shp_error_message(error)};
  shp_error_destroy(error);
  return result;
}

TEST(CApiInternal, SuccessWritesOutParam) {
  int out = 0;
  const int dummy = 0;
  EXPECT_EQ(nullptr, Thunk(0, &dummy, &out));
  EXPECT_EQ(7, out);
}

TEST(CApiInternal, ShpErrorKeepsCodeAndMessage) {
  int out = -1;
  const int dummy = 0;
  const auto e = Take(Thunk(1, &dummy, &out));
  EXPECT_EQ(SHP_SHAPE_MISMATCH, e.first);
  EXPECT_EQ("dims 3 and 4 differ", e.second);
  EXPECT_EQ(-1, out);
}

TEST(CApiInternal, BadAllocIsStaticOutOfMemory) {
  int out = -1;
  const int dummy = 0;
  shp_error_t* error = Thunk(2, &dummy, &out);
  EXPECT_EQ(shp::capi::OutOfMemoryError(), error);
  EXPECT_EQ(SHP_OUT_OF_MEMORY, shp_error_code(error));
  EXPECT_STREQ("out of memory", shp_error_message(error));
  shp_error_destroy(error);  // no-op on the static object...
  shp_error_destroy(error);  // ...so twice is fine
  EXPECT_EQ(SHP_OUT_OF_MEMORY, shp_error_code(shp::capi::OutOfMemoryError()));
  EXPECT_EQ(-1, out);
}

TEST(CApiInternal, StdExceptionIsInternalWithWhat) {
  int out = -1;
  const int dummy = 0;
  const auto e = Take(Thunk(3, &dummy, &out));
  EXPECT_EQ(SHP_INTERNAL, e.first);
  EXPECT_EQ("internal error: boom", e.second);
}

TEST(CApiInternal, UnknownExceptionIsInternal) {
  int out = -1;
  const int dummy = 0;
  const auto e = Take(Thunk(4, &dummy, &out));
  EXPECT_EQ(SHP_INTERNAL, e.first);
  EXPECT_EQ("internal error: unknown exception", e.second);
}

TEST(CApiInternal, RequireArgNamesTheArgument) {
  int out = -1;
  const auto e = Take(Thunk(0, nullptr, &out));
  EXPECT_EQ(SHP_INVALID_ARGUMENT, e.first);
  EXPECT_EQ("argument 'arg' must not be NULL", e.second);
  EXPECT_EQ(-1, out);
}

TEST(CApiInternal, MakeError) {
  auto e = Take(shp::capi::MakeError(shp::Code::kNotFound, "no input named 'x'"));
  EXPECT_EQ(SHP_NOT_FOUND, e.first);
  EXPECT_EQ("no input named 'x'", e.second);
  // An empty message becomes the code's description.
  e = Take(shp::capi::MakeError(shp::Code::kDivisionByZero, ""));
  EXPECT_EQ(SHP_DIVISION_BY_ZERO, e.first);
  EXPECT_EQ("division by zero", e.second);
  // An error never carries SHP_OK.
  e = Take(shp::capi::MakeError(shp::Code::kOk, "oops"));
  EXPECT_EQ(SHP_INTERNAL, e.first);
  EXPECT_NE(std::string::npos, e.second.find("oops"));
  // An error with a code this build does not know keeps it.
  e = Take(shp::capi::MakeError(static_cast<shp::Code>(1000), ""));
  EXPECT_EQ(1000, e.first);
  EXPECT_EQ("unknown error code", e.second);
}

}  // namespace
