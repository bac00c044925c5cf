// Conversions between any two element types (narrow.h): one loop per (from, to) pair, each
// reading an element as its exact value (float, double, int64 or uint64) and storing it with
// the target's rule.
#include "cc/kernels/narrow.h"

#include <limits>
#include <type_traits>

namespace shp {
namespace kernels {
namespace {

// Storage tags of the 16-bit floats (their C++ type is uint16_t, shared with u16).
struct F16Tag {};
struct BF16Tag {};

// The exact value of one stored element.
template <class S>
struct Reader;
template <>
struct Reader<float> {
  using Storage = float;
  static float Get(float x) { return x; }
};
template <>
struct Reader<double> {
  using Storage = double;
  static double Get(double x) { return x; }
};
template <>
struct Reader<F16Tag> {
  using Storage = uint16_t;
  static float Get(uint16_t x) { return HalfBitsToFloat(x); }
};
template <>
struct Reader<BF16Tag> {
  using Storage = uint16_t;
  static float Get(uint16_t x) { return BF16BitsToFloat(x); }
};
template <>
struct Reader<bool> {
  using Storage = uint8_t;
  static uint64_t Get(uint8_t x) { return x != 0 ? 1u : 0u; }
};
// Integers: signed types read as int64_t, unsigned as uint64_t.
template <class I>
struct IntReader {
  using Storage = I;
  using Value = typename std::conditional<std::is_signed<I>::value, int64_t, uint64_t>::type;
  static Value Get(I x) { return static_cast<Value>(x); }
};
template <>
struct Reader<int8_t> : IntReader<int8_t> {};
template <>
struct Reader<uint8_t> : IntReader<uint8_t> {};
template <>
struct Reader<int16_t> : IntReader<int16_t> {};
template <>
struct Reader<uint16_t> : IntReader<uint16_t> {};
template <>
struct Reader<int32_t> : IntReader<int32_t> {};
template <>
struct Reader<uint32_t> : IntReader<uint32_t> {};
template <>
struct Reader<int64_t> : IntReader<int64_t> {};
template <>
struct Reader<uint64_t> : IntReader<uint64_t> {};

// Float to integer type I: truncation toward zero, NaN -> 0, saturation.
template <class I, class F>
I FloatToIntSat(F x) {
  if (!(x == x)) return 0;
  const F hi = std::ldexp(F(1), std::numeric_limits<I>::digits);  // max + 1, exact
  if (x >= hi) return std::numeric_limits<I>::max();
  if (std::is_unsigned<I>::value) {
    if (x <= F(-1)) return 0;
  } else if (x < -hi) {
    return std::numeric_limits<I>::min();
  }
  return static_cast<I>(x);
}

template <class I, class V>
I IntTo(V x) {
  using U = typename std::make_unsigned<I>::type;
  return static_cast<I>(static_cast<U>(x));  // wraps modulo 2^bits
}

// Storing an exact value into a target type.
template <class D>
struct Writer;
template <>
struct Writer<float> {
  using Storage = float;
  template <class V>
  static float Put(V x) {
    return static_cast<float>(x);  // one rounding from double and 64-bit integers
  }
};
template <>
struct Writer<double> {
  using Storage = double;
  template <class V>
  static double Put(V x) {
    return static_cast<double>(x);
  }
};
template <>
struct Writer<bool> {
  using Storage = uint8_t;
  template <class V>
  static uint8_t Put(V x) {
    return x != V(0) ? 1 : 0;
  }
};
template <class Tag>
struct HalfWriter {
  using Storage = uint16_t;
  static constexpr bool kBF16 = std::is_same<Tag, BF16Tag>::value;
  static uint16_t Put(float x) { return kBF16 ? FloatToBF16Bits(x) : FloatToHalfBits(x); }
  static uint16_t Put(double x) { return kBF16 ? DoubleToBF16Bits(x) : DoubleToHalfBits(x); }
  static uint16_t Put(int64_t x) { return Put(I64ToDoubleOdd(x)); }
  static uint16_t Put(uint64_t x) { return Put(U64ToDoubleOdd(x)); }
};
template <>
struct Writer<F16Tag> : HalfWriter<F16Tag> {};
template <>
struct Writer<BF16Tag> : HalfWriter<BF16Tag> {};
template <class I>
struct IntWriter {
  using Storage = I;
  static I Put(float x) { return FloatToIntSat<I>(x); }
  static I Put(double x) { return FloatToIntSat<I>(x); }
  static I Put(int64_t x) { return IntTo<I>(x); }
  static I Put(uint64_t x) { return IntTo<I>(x); }
};
template <>
struct Writer<int8_t> : IntWriter<int8_t> {};
template <>
struct Writer<uint8_t> : IntWriter<uint8_t> {};
template <>
struct Writer<int16_t> : IntWriter<int16_t> {};
template <>
struct Writer<uint16_t> : IntWriter<uint16_t> {};
template <>
struct Writer<int32_t> : IntWriter<int32_t> {};
template <>
struct Writer<uint32_t> : IntWriter<uint32_t> {};
template <>
struct Writer<int64_t> : IntWriter<int64_t> {};
template <>
struct Writer<uint64_t> : IntWriter<uint64_t> {};

template <class From, class To>
void Loop(const void* x, void* out, size_t n) {
  using SIn = typename Reader<From>::Storage;
  using SOut = typename Writer<To>::Storage;
  const SIn* in = static_cast<const SIn*>(x);
  SOut* o = static_cast<SOut*>(out);
  for (size_t i = 0; i < n; ++i) o[i] = Writer<To>::Put(Reader<From>::Get(in[i]));
}

// Calls f(Tag{}) with the element tag of dtype t; false for an invalid dtype.
template <class F>
bool WithType(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      f(float{});
      return true;
    case DType::kF64:
      f(double{});
      return true;
    case DType::kI32:
      f(int32_t{});
      return true;
    case DType::kI64:
      f(int64_t{});
      return true;
    case DType::kBool:
      f(bool{});
      return true;
    case DType::kF16:
      f(F16Tag{});
      return true;
    case DType::kBF16:
      f(BF16Tag{});
      return true;
    case DType::kI8:
      f(int8_t{});
      return true;
    case DType::kU8:
      f(uint8_t{});
      return true;
    case DType::kI16:
      f(int16_t{});
      return true;
    case DType::kU16:
      f(uint16_t{});
      return true;
    case DType::kU32:
      f(uint32_t{});
      return true;
    case DType::kU64:
      f(uint64_t{});
      return true;
  }
  return false;
}

}  // namespace

bool ConvertElements(DType from, const void* x, DType to, void* out, size_t n) {
  if (!IsValidDType(static_cast<int32_t>(from)) || !IsValidDType(static_cast<int32_t>(to)))
    return false;
  if (n == 0) return true;
  if (x == nullptr || out == nullptr) return false;
  return WithType(from, [&](auto src) {
    WithType(to, [&](auto dst) { Loop<decltype(src), decltype(dst)>(x, out, n); });
  });
}

void StoreScalar(DType to, double v, void* out) { ConvertElements(DType::kF64, &v, to, out, 1); }

}  // namespace kernels
}  // namespace shp
