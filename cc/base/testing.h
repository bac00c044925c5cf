// Helpers shared by the unit tests of every C++ layer.
#ifndef SHAPEPOLY_CC_BASE_TESTING_H_
#define SHAPEPOLY_CC_BASE_TESTING_H_

#include <gtest/gtest.h>

#include <string>

#include "cc/base/error.h"

namespace shp {
namespace testing {

// Runs `f` and returns the shp::Error it throws (fails the test if it does not throw).
template <typename F>
Error Catch(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an shp::Error";
  return Error(Code::kOk, "");
}

// True if `text` contains `part` (for EXPECT_TRUE with a readable failure).
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

}  // namespace testing
}  // namespace shp

#endif  // SHAPEPOLY_CC_BASE_TESTING_H_
