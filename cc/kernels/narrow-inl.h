// Per-target f16/bf16 <-> f32 array conversions for the kernels that take the narrow float
// types by computing blocks of them in f32 (softmax, layer_norm, the reductions): the same
// vector conversions as the elementwise kernel's convert (elementwise_ops-inl.h; their bits are
// narrow.h's, narrow_test.cc), so such a kernel gives the bits of convert -> f32 kernel ->
// convert. A Highway "-inl.h" header: re-included once per target, a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_NARROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_NARROW_INL_H_
#undef SHAPEPOLY_CC_KERNELS_NARROW_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_NARROW_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "cc/kernels/dtype.h"
#include "cc/kernels/elementwise_ops-inl.h"  // F16ToF32, F32ToF16, BF16ToF32, F32ToBF16
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

// True for the narrow float types these kernels take (f16, bf16).
HWY_INLINE bool IsNarrowFloatType(DType t) { return t == DType::kF16 || t == DType::kBF16; }

// n elements of f16 or bf16 (t) at x, widened to f32 (exact).
HWY_INLINE void NarrowToF32(DType t, const void* x, float* out, size_t n) {
  const uint16_t* h = static_cast<const uint16_t*>(x);
  if (t == DType::kF16) {
    F16ToF32(h, out, n);
  } else {
    BF16ToF32(h, out, n);
  }
}

// n f32 values rounded once (to nearest even) to f16 or bf16 (t) at out.
HWY_INLINE void F32ToNarrow(DType t, const float* x, void* out, size_t n) {
  uint16_t* h = static_cast<uint16_t*>(out);
  if (t == DType::kF16) {
    F32ToF16(x, h, n);
  } else {
    F32ToBF16(x, h, n);
  }
}

// ---- Loading f16/bf16 into f32 registers and storing them rounded once ----
//
// The row kernels are templates on their storage type S (float, double, F16Bits, BF16Bits) and
// compute type T (S itself, or float for the narrow types): LoadAs/StoreAs move whole vectors of
// T, ToCompute/FromCompute single elements, with the conversions above (so the same bits as a
// widened copy). f16 uses F16C's vcvtph2ps/vcvtps2ph on AVX2 and AVX-512 targets; without F16C
// (Highway 1.0's emulation is wrong for inf and NaN, and its DemoteTo truncates) it goes through
// narrow.h's scalar forms.

struct F16Bits {  // an f16 element (its bits)
  uint16_t bits;
};
struct BF16Bits {  // a bf16 element (its bits)
  uint16_t bits;
};

#ifdef SHP_NARROW_F16C  // set once per target
#undef SHP_NARROW_F16C
#endif
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
#define SHP_NARROW_F16C 1
#else
#define SHP_NARROW_F16C 0
#endif

template <class T>
HWY_INLINE T ToCompute(T x) {
  return x;
}
HWY_INLINE float ToCompute(F16Bits x) { return HalfBitsToFloat(x.bits); }
HWY_INLINE float ToCompute(BF16Bits x) { return BF16BitsToFloat(x.bits); }

template <class T>
HWY_INLINE void FromCompute(T v, T* out) {
  *out = v;
}
HWY_INLINE void FromCompute(float v, F16Bits* out) { out->bits = FloatToHalfBits(v); }
HWY_INLINE void FromCompute(float v, BF16Bits* out) { out->bits = FloatToBF16Bits(v); }

template <class D>
HWY_INLINE hn::Vec<D> LoadAs(D d, const hn::TFromD<D>* p) {
  return hn::LoadU(d, p);
}
template <class D>
HWY_INLINE hn::Vec<D> LoadAs(D df, const F16Bits* p) {
#if SHP_NARROW_F16C
  const hn::Rebind<hwy::float16_t, D> dh;
  return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
#else
  HWY_ALIGN float buf[MaxLanesOf<float>()];
  for (size_t i = 0; i < hn::Lanes(df); ++i) buf[i] = HalfBitsToFloat(p[i].bits);
  return hn::Load(df, buf);
#endif
}
template <class D>
HWY_INLINE hn::Vec<D> LoadAs(D df, const BF16Bits* p) {
  const hn::Rebind<uint32_t, D> du;
  const hn::Rebind<uint16_t, D> d16;
  const auto bits = hn::PromoteTo(du, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p)));
  return hn::BitCast(df, hn::ShiftLeft<16>(bits));
}

template <class D>
HWY_INLINE void StoreAs(hn::Vec<D> v, D d, hn::TFromD<D>* p) {
  hn::StoreU(v, d, p);
}
template <class D>
HWY_INLINE void StoreAs(hn::Vec<D> v, D df, F16Bits* p) {
#if SHP_NARROW_F16C
  const hn::Rebind<hwy::float16_t, D> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(p));
#else
  HWY_ALIGN float buf[MaxLanesOf<float>()];
  hn::Store(v, df, buf);
  for (size_t i = 0; i < hn::Lanes(df); ++i) p[i].bits = FloatToHalfBits(buf[i]);
#endif
}
// F32ToBF16's steps: round to nearest even, NaN kept quiet (those lanes fixed only when the
// vector has a NaN: IsNaN is the same test as |bits| > 0x7f800000).
template <class D>
HWY_INLINE void StoreAs(hn::Vec<D> v, D df, BF16Bits* p) {
  const hn::Rebind<uint32_t, D> du;
  const hn::Rebind<int32_t, D> di;
  const hn::Rebind<uint16_t, D> d16;
  const auto u = hn::BitCast(du, v);
  const auto rounded =
      hn::Add(u, hn::Add(hn::Set(du, 0x7fffu), hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u))));
  auto r = hn::ShiftRight<16>(rounded);
  const auto nan = hn::IsNaN(v);
  if (HWY_UNLIKELY(!hn::AllFalse(df, nan))) {
    r = hn::IfThenElse(hn::RebindMask(du, nan), hn::Or(hn::ShiftRight<16>(u), hn::Set(du, 0x40u)),
                       r);
  }
  hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, r)), d16, reinterpret_cast<uint16_t*>(p));
}

#if HWY_HAVE_FLOAT64
// 2N elements of storage S at p (N: dd's lanes) widened to f64: lo the first N, hi the next N.
// f16/bf16 on the AVX2 target: one full vector of f32 (one vcvtph2ps for 2N elements), split
// into halves (Zen 4, 1 thread: f16 row sums 0.53 -> 0.50 ms at 4096x1024; on AVX3 the split
// was slower, 0.45 -> 0.59 ms); otherwise (and f32) two half-vector loads, as the f32 code does.
template <class DD, class S>
HWY_INLINE void LoadTwoAsF64(DD dd, const S* p, hn::Vec<DD>* lo, hn::Vec<DD>* hi) {
  const hn::Rebind<float, DD> dfh;
#if HWY_TARGET == HWY_AVX2
  if constexpr (!std::is_same<S, float>::value) {
    const hn::Twice<decltype(dfh)> df2;
    const auto v = LoadAs(df2, p);
    *lo = hn::PromoteTo(dd, hn::LowerHalf(dfh, v));
    *hi = hn::PromoteTo(dd, hn::UpperHalf(dfh, v));
    return;
  }
#endif
  *lo = hn::PromoteTo(dd, LoadAs(dfh, p));
  *hi = hn::PromoteTo(dd, LoadAs(dfh, p + hn::Lanes(dd)));
}
#endif

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
