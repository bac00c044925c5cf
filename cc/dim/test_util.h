// Helpers shared by the dim engine's unit tests.
#ifndef SHAPEPOLY_CC_DIM_TEST_UTIL_H_
#define SHAPEPOLY_CC_DIM_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/dim/scope.h"

namespace shp {
namespace dim {

inline std::string Norm(Scope* s, const std::string& text) { return s->ToString(s->Parse(text)); }

inline Truth Cmp3(Scope* s, const std::string& a, Cmp op, const std::string& b) {
  return s->Compare(s->Parse(a), op, s->Parse(b));
}

using ::shp::testing::Catch;

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_TEST_UTIL_H_
