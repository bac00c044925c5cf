// Integer helpers shared inside the dimension engine (the overflow-checked ones that throw
// are declared in scope.h).
#ifndef SHAPEPOLY_CC_DIM_INT_MATH_H_
#define SHAPEPOLY_CC_DIM_INT_MATH_H_

#include <cstdint>

namespace shp {
namespace dim {

// gcd(|a|, |b|) in uint64, so that INT64_MIN is no trap (negating it gave gcds of -1 and
// then INT64_MIN / -1). A gcd of 2^63 (a, b in {0, INT64_MIN}) is returned as 2^62, still
// a common divisor, so every caller gets a positive int64 (0 only for gcd(0, 0)).
// Binary (Stein's) algorithm: shifts and subtractions, no division (a 64-bit division costs
// tens of cycles, and the eliminations take a gcd per row they make).
inline int64_t Gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  if (x == 0 || y == 0) {
    x |= y;
  } else {
    const int shift = __builtin_ctzll(x | y);
    x >>= __builtin_ctzll(x);
    do {
      y >>= __builtin_ctzll(y);
      if (x > y) {
        const uint64_t t = x;
        x = y;
        y = t;
      }
      y -= x;
    } while (y != 0);
    x <<= shift;
  }
  return x > static_cast<uint64_t>(INT64_MAX) ? int64_t{1} << 62 : static_cast<int64_t>(x);
}

// *prod * v^exp in 128 bits (exp >= 0, |*prod| < 2^127); false, with *prod unspecified, if a
// step leaves 128 bits. For the walks that retry an int64 overflow wide (Evaluate's retry,
// the solver's known terms): v in {0, 1, -1} takes no product, any other v at most 127 steps.
inline bool MulPowWide(__int128* prod, int64_t v, int32_t exp) {
  if (v == 1 || *prod == 0) return true;
  if (v == 0 || v == -1) {
    *prod = v == 0 ? 0 : (exp % 2 ? -*prod : *prod);
    return true;
  }
  for (int32_t i = 0; i < exp; ++i) {
    if (__builtin_mul_overflow(*prod, static_cast<__int128>(v), prod)) return false;
  }
  return true;
}

}  // namespace dim
}  // namespace shp

#endif  // SHAPEPOLY_CC_DIM_INT_MATH_H_
