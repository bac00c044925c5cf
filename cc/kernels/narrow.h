// The narrow element types' bits (f16, bf16, i8, u8, i16, u16, u32, u64; dtype.h): scalar
// conversions with one rounding, and the conversion of arrays between any two element types.
// Plain C++ (no Highway).
//
// Conversion rules (every pair of the 13 types; the same as the compute types' rules,
// elementwise.h):
//   - to f16 / bf16: round to nearest, ties to even, once (from f64 and from 64-bit integers
//     directly, never through f32); beyond the largest finite value: +-inf; NaN stays NaN
//     (quiet, the sign kept).
//   - f16 / bf16 to a wider float: exact.
//   - float to any integer type: truncation toward zero, NaN -> 0, saturation to the type's
//     range (unsigned: negative values -> 0).
//   - integer to integer: wraps modulo 2^bits of the target (two's complement), as C and
//     numpy's astype do.
//   - to bool: x != 0 (NaN is true, -0 false); bool to anything: 0 or 1.
#ifndef SHAPEPOLY_CC_KERNELS_NARROW_H_
#define SHAPEPOLY_CC_KERNELS_NARROW_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cc/kernels/dtype.h"

namespace shp {
namespace kernels {

// ---- f16 (IEEE binary16) ----

inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in f32.
    float f = static_cast<float>(mant) * 5.9604644775390625e-8f;
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, or NaN with its payload
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even, one rounding.
inline uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // inf, or NaN (kept quiet)
    return static_cast<uint16_t>(sign |
                                 (x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u));
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (x < 0x38800000u) {
    // Below 2^-14: a subnormal (or zero) of f16; |f| * 2^24 is exact, rounded to an integer
    // (1024 is the smallest normal's bits, which is right).
    float a;
    std::memcpy(&a, &x, 4);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f)));
  }
  x -= 112u << 23;                 // rebias the exponent (127 -> 15)
  x += 0xfffu + ((x >> 13) & 1u);  // round the 13 dropped bits to nearest even
  return static_cast<uint16_t>(sign | (x >> 13));
}

// ---- bf16 (the upper half of binary32) ----

inline float BF16BitsToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t FloatToBF16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even (carries into inf past the max)
  return static_cast<uint16_t>(x >> 16);
}

// A double rounded once to a float format with `mant_bits` fraction bits and smallest normal
// exponent `emin`, returned as its value (a double holds every such value exactly); +-inf when
// the rounded magnitude exceeds `max_finite`.
inline double RoundToFormat(double d, int mant_bits, int emin, double max_finite) {
  if (!(d == d) || d == 0 || std::isinf(d)) return d;
  int e;
  std::frexp(d, &e);  // |d| in [2^(e-1), 2^e)
  const int exp = e - 1 < emin ? emin : e - 1;
  const double quantum = std::ldexp(1.0, exp - mant_bits);
  const double r = std::nearbyint(d / quantum) * quantum;  // both steps exact but the rounding
  if (std::fabs(r) > max_finite) return d < 0 ? -INFINITY : INFINITY;
  return r;
}

inline uint16_t DoubleToHalfBits(double d) {
  if (d != d) return FloatToHalfBits(static_cast<float>(d));
  // Every f16 value is an f32 value: the rounded value converts to f32 and f16 exactly.
  return FloatToHalfBits(static_cast<float>(RoundToFormat(d, 10, -14, 65504.0)));
}

inline uint16_t DoubleToBF16Bits(double d) {
  if (d != d) return FloatToBF16Bits(static_cast<float>(d));
  const double max = std::ldexp(255.0, 120);  // (2 - 2^-7) * 2^127
  return FloatToBF16Bits(static_cast<float>(RoundToFormat(d, 7, -126, max)));
}

// A 64-bit integer as a double rounded to odd (53 bits kept, the last one sticky): rounding
// that double once more to 24 or fewer bits gives the integer's correctly rounded value.
inline double U64ToDoubleOdd(uint64_t u) {
  if (u < (uint64_t{1} << 53)) return static_cast<double>(u);
  int shift = 0;
  while ((u >> shift) >= (uint64_t{1} << 53)) ++shift;
  const uint64_t kept = (u >> shift) | ((u & ((uint64_t{1} << shift) - 1)) != 0 ? 1u : 0u);
  return std::ldexp(static_cast<double>(kept), shift);
}
inline double I64ToDoubleOdd(int64_t i) {
  const uint64_t mag = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  const double d = U64ToDoubleOdd(mag);
  return i < 0 ? -d : d;
}

// Converts n elements between any two valid types (the rules above). Returns false (writing
// nothing) for an invalid dtype or null data with n > 0. x and out must not overlap unless
// they are the same array of one element size.
bool ConvertElements(DType from, const void* x, DType to, void* out, size_t n);

// The element of type `to` that the double `v` converts to, written to out (DTypeSize(to)
// bytes); for constants and padding values.
void StoreScalar(DType to, double v, void* out);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_NARROW_H_
