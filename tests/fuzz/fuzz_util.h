// Helpers shared by the fuzzers: a reproducible random stream and concrete comparisons.
#ifndef SHAPEPOLY_TESTS_FUZZ_FUZZ_UTIL_H_
#define SHAPEPOLY_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstdint>

#include "cc/dim/scope.h"

namespace shp {
namespace fuzz {

// splitmix64: values drawn from a state seeded by the input depend only on the input, so a
// crash reproduces from its file.
inline uint64_t Next(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// `x op y` on concrete values.
inline bool Holds(int64_t x, dim::Cmp op, int64_t y) {
  switch (op) {
    case dim::Cmp::kEq:
      return x == y;
    case dim::Cmp::kNe:
      return x != y;
    case dim::Cmp::kLt:
      return x < y;
    case dim::Cmp::kLe:
      return x <= y;
    case dim::Cmp::kGt:
      return x > y;
    case dim::Cmp::kGe:
      return x >= y;
  }
  return false;
}

}  // namespace fuzz
}  // namespace shp

#endif  // SHAPEPOLY_TESTS_FUZZ_FUZZ_UTIL_H_
