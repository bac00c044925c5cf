// Per-target i32 matmul for operands whose values all fit int16 (issue 41: quantized u8/i8/i16
// matrices that the tracer widened to i32), computed on int16 pairs with i32 accumulation, or on
// quads of bytes when A is u8 and B s8 (or A s8 and B u8) and the CPU has AVX512_VNNI. A
// Highway "-inl.h" header: foreach_target.h re-includes it once per target (from matmul.cc and
// matmul_int16_test.cc), so it has a per-target include guard and is a textual header in Bazel.
// Everything here is a template or inline (two translation units include it).
//
// Algorithm: the Goto / BLIS loop of the f32 GEMM (matmul-inl.h: the same work split over
// threads, SplitGemmWork / GemmItemAt / RunGemmItems, the same MR x NRV vectors register tile
// and GemmNRV width rule, and the same MC / NC cache blocks), on packed panels of int16 pairs:
//   - B panel q of a k block, pair t, column j holds the 32-bit word (b[p0+2t][j], b[p0+2t+1][j])
//     (the even row in the low half; 0 for a row past the block's end, i.e. odd k is padded with
//     a zero, and for columns past n);
//   - A panel q, pair t, row r holds (a[i][p0+2t], a[i][p0+2t+1]) likewise.
// The micro-kernel broadcasts A's 32-bit pair to every lane, and one pmaddwd
// (hn::ReorderWidenMulAccumulate for int16 -> int32 on x86: sum0 + _mm*_madd_epi16(a, b); sum1 is
// neither read nor written) gives per lane a[i][p] * b[p][j] + a[i][p+1] * b[p+1][j], added to an
// int32 accumulator. On AVX3 with AVX512_VNNI (checked at run time) vpdpwssd does the multiply and
// the add in one instruction, with the same result (measured on Zen 4: 1.1-1.2x pmaddwd + vpaddd).
// 16-register targets run a 6-row panel as two passes of 3 rows (kI16PassRows). Packing reads A
// and B through their strides; rows of contiguous k values (row-major A, column-major B) become
// pairs by a vector demotion and a TransposeTile, row-major B by vector shifts.
//
// u8 x s8 (I16Op::kDpbusdAU / kDpbusdBU; AVX3 targets on CPUs with AVX512_VNNI, when the range
// scan finds every value of A in [0, 255] and of B in [-128, 127], or the reverse): the same
// code with words of 4 consecutive k values as bytes (value p0+4t+e in byte e; 0 bytes pad k to a
// multiple of 4 and the rows / columns past the block), packed by a truncation to bytes instead
// of the demotion (so u8 and s8 pack alike), 256 words (1024 values of k) per k block, and one
// vpdpbusd per word: it reads its first source's bytes as u8 and the second's as s8, so for
// A s8 x B u8 (kDpbusdBU) the operands of the instruction are swapped, nothing else. Four
// multiply-adds per 32-bit lane where vpdpwssd does two. AVX-VNNI (the VEX vpdpbusd on AVX2
// targets) is not used: this machine lacks it, so it could not be tested.
//
// Exactness (the result is bit for bit the i32 wrapping result of the reference integer kernel,
// MatmulIntImpl<int32_t>, for every k and any values in [-32768, 32767]):
//   - a product of two int16 values lies in [-2^30 + 2^15, 2^30], so it is exact in int32;
//   - pmaddwd (and vpdpwssd) add two such products into 32 bits. The exact sum lies in
//     [-2^31 + 2^16, 2^31]; its only value outside int32 is 2^31 = (-32768)^2 * 2, which both
//     instructions return as -2^31, i.e. the sum modulo 2^32 (pmaddwd wraps that one case,
//     vpdpwssd is the non-saturating form and wraps every sum). So each pair's contribution is
//     exact modulo 2^32;
//   - the accumulation (vpaddd, vpdpwssd's add, the scalar adds of edge tiles and of C when
//     accumulating, done in uint32) wraps modulo 2^32, and addition modulo 2^32 is associative
//     and commutative, so the order of the sum (pairs, k blocks, zero padding) does not matter:
//     the result is sum_p a[i][p] * b[p][j] (+ C) modulo 2^32, which is what the reference
//     computes in unsigned arithmetic. Hence also identical for every thread count and target.
//   - vpdpbusd (the non-saturating form; not vpdpbusds): each of its four products of a u8 and
//     an s8 lies in [255 * -128, 255 * 127] = [-32640, 32385] (exact), their sum in
//     [-130560, 129540], exact in int32 with no intermediate saturation; the instruction adds
//     that sum to the 32-bit accumulator modulo 2^32. So each quad's contribution is exact and
//     the accumulation wraps as above: the same result, for any k (with 255 * -128 everywhere
//     the sums wrap past k = 65793).
// matmul_int16_test.cc checks this, with -32768 operands at k large enough to wrap, and
// 255 x -128 operands at k = 70001 (u8 x s8 and s8 x u8).
//
// The operands are scanned before anything is written: with a value outside int16 in A or B
// (as read through the strides, for every batch index), MatmulI32ViaI16Impl returns false and
// writes nothing, and MatmulI32 takes its other exact paths. The same scan tells whether the
// operands are u8 / s8 (I16RangeOfMatrix), so choosing the kernel costs no second pass. Only x86
// targets other than SCALAR have the kernel (the argument above is about pmaddwd); elsewhere it
// returns false.
#if defined(SHAPEPOLY_CC_KERNELS_MATMUL_INT16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_MATMUL_INT16_INL_H_
#undef SHAPEPOLY_CC_KERNELS_MATMUL_INT16_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_MATMUL_INT16_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <new>
#include <utility>

#include "cc/kernels/matmul-inl.h"
#include "cc/kernels/matmul.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/transpose-inl.h"  // TransposeTile
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

#undef SHP_MATMUL_I16
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
#define SHP_MATMUL_I16 1
#else
#define SHP_MATMUL_I16 0
#endif

#if SHP_MATMUL_I16

// True if this target's micro-kernel can use vpdpwssd (AVX3 targets, on a CPU with
// AVX512_VNNI). The instruction is emitted by inline assembly, so the code compiles without
// -mavx512vnni and runs only where the CPU has it.
HWY_INLINE bool I16CpuHasVnni() {
#if HWY_TARGET <= HWY_AVX3
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  return vnni;
#else
  return false;
#endif
}

// k pairs per cache block: 256 pairs (512 values of k) take 1 KiB per row of A or column of B,
// the bytes of the f32 GEMM's 256-float block, so the f32 MC and NC (GemmBlocking<float>) fit
// the caches the same way. Unlike f32, the block size does not affect the result (exact sums).
constexpr int64_t kI16KCPairs = 256;

// Value ranges an operand can fit (bits of the result of I16RangeOfMatrix / I16RangeBatched).
enum : unsigned {
  kFitsI16 = 1,  // every value in [-32768, 32767]
  kFitsU8 = 2,   // every value in [0, 255]
  kFitsS8 = 4,   // every value in [-128, 127]
  kFitsAll = 7,
};

// The ranges (kFits* bits) every element of the rows x cols matrix at x (strides rs, cs) fits:
// a value v is in [-b, 2^s - b) exactly when (uint32)v + b < 2^s, so OR-ing these sums over the
// matrix keeps bits s and up 0 (b = 2^15, s = 16 for int16; b = 0, s = 8 for u8; b = 2^7,
// s = 8 for s8). 0 as soon as a value is outside int16 (u8 and s8 are inside it).
HWY_INLINE unsigned I16RangeOfMatrix(const int32_t* x, int64_t rows, int64_t cols, int64_t rs,
                                     int64_t cs) {
  if (rows <= 0 || cols <= 0) return kFitsAll;
  if (cs != 1 && rs == 1) {  // column-major: scan the contiguous columns
    std::swap(rows, cols);
    std::swap(rs, cs);
  }
  const hn::ScalableTag<uint32_t> du;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  const auto bias16 = hn::Set(du, 0x8000u);
  const auto bias8 = hn::Set(du, 0x80u);
  const auto zero = hn::Zero(du);
  unsigned fits = kFitsAll;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* row = x + r * rs;
    uint32_t o16 = 0, ou8 = 0, os8 = 0;  // the ORs of v + 2^15, v, v + 2^7
    int64_t j = 0;
    if (cs == 1) {
      auto a16 = zero, au8 = zero, as8 = zero;
      const uint32_t* u = reinterpret_cast<const uint32_t*>(row);
      for (; j + N <= cols; j += N) {
        const auto v = hn::LoadU(du, u + j);
        a16 = hn::Or(a16, hn::Add(v, bias16));
        au8 = hn::Or(au8, v);
        as8 = hn::Or(as8, hn::Add(v, bias8));
      }
      if (!hn::AllTrue(du, hn::Eq(hn::ShiftRight<16>(a16), zero))) return 0;
      if (!hn::AllTrue(du, hn::Eq(hn::ShiftRight<8>(au8), zero))) ou8 = 0x100;
      if (!hn::AllTrue(du, hn::Eq(hn::ShiftRight<8>(as8), zero))) os8 = 0x100;
    }
    for (; j < cols; ++j) {
      const uint32_t v = static_cast<uint32_t>(row[j * cs]);
      o16 |= v + 0x8000u;
      ou8 |= v;
      os8 |= v + 0x80u;
    }
    if ((o16 >> 16) != 0) return 0;
    if ((ou8 >> 8) != 0) fits &= ~static_cast<unsigned>(kFitsU8);
    if ((os8 >> 8) != 0) fits &= ~static_cast<unsigned>(kFitsS8);
  }
  return fits;
}

// I16RangeOfMatrix for the matrix of every batch index of an operand (base pointer x, batch
// strides `strides`), the ranges all of them fit: batch dimensions it is broadcast over
// (stride 0) are scanned once.
HWY_INLINE unsigned I16RangeBatched(const MatmulParams& prm, const int32_t* x,
                                    const int64_t* strides, int64_t rows, int64_t cols, int64_t rs,
                                    int64_t cs) {
  int64_t count = 1;
  for (int d = 0; d < prm.batch_rank; ++d) {
    if (strides[d] != 0) count *= prm.batch_dims[d];
  }
  unsigned fits = kFitsAll;
  for (int64_t t = 0; t < count && fits != 0; ++t) {
    int64_t rest = t, off = 0;
    for (int d = prm.batch_rank - 1; d >= 0; --d) {
      if (strides[d] == 0) continue;
      off += rest % prm.batch_dims[d] * strides[d];
      rest /= prm.batch_dims[d];
    }
    fits &= I16RangeOfMatrix(x + off, rows, cols, rs, cs);
  }
  return fits;
}

// One matrix product (a slice of MatmulParams at a batch index) for the int16 kernel.
struct I16Operands {
  const int32_t* a;
  int64_t a_rs, a_cs;
  const int32_t* b;
  int64_t b_rs, b_cs;
  int32_t* c;
  int64_t c_rs;
  int64_t k;
  bool accumulate;
};

// A 32-bit word of G values (G = 2: int16 halves; G = 4: bytes, u8 or s8 alike), value e at
// src[e * stride] for e < count <= G in bits [32e/G, 32(e+1)/G), the rest 0. The values must fit
// the G-way type (int16, or u8 / s8): each is truncated to its field.
template <int G>
HWY_INLINE uint32_t I16Word(const int32_t* src, int64_t stride, int64_t count) {
  static_assert(G == 2 || G == 4, "int16 pairs or byte quads");
  constexpr int kBits = 32 / G;
  constexpr uint32_t kMask = (1u << kBits) - 1;
  uint32_t w = 0;
  for (int64_t e = 0; e < count; ++e) {
    w |= (static_cast<uint32_t>(src[e * stride]) & kMask) << (kBits * e);
  }
  return w;
}

// out[t] = the word of src[Gt .. Gt+G-1] (I16Word) for t < ceil(kc/G), zero-padded past kc: kc
// contiguous values as words, by vectors (G = 2: a saturating demotion to int16, exact on these
// values, puts them in order; G = 4: a truncation to bytes).
template <int G>
HWY_INLINE void I16WordsOfRow(const int32_t* HWY_RESTRICT src, int64_t kc,
                              uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<int32_t> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t p = 0;
  if constexpr (G == 2) {
    const hn::Rebind<int16_t, decltype(d)> d16;  // N lanes of int16: N / 2 words
    const hn::Repartition<uint32_t, decltype(d16)> dp;
    for (; p + N <= kc; p += N) {  // N >= 4 (x86 targets but SCALAR)
      hn::StoreU(hn::BitCast(dp, hn::DemoteTo(d16, hn::LoadU(d, src + p))), dp, out + p / 2);
    }
  } else {
    const hn::RebindToUnsigned<decltype(d)> du;
    const hn::Rebind<uint8_t, decltype(d)> d8;  // N lanes of bytes: N / 4 words
    const hn::Repartition<uint32_t, decltype(d8)> dq;
    for (; p + N <= kc; p += N) {
      const auto bytes = hn::TruncateTo(d8, hn::BitCast(du, hn::LoadU(d, src + p)));
      hn::StoreU(hn::BitCast(dq, bytes), dq, out + p / 4);
    }
  }
  for (; p < kc; p += G) out[p / G] = I16Word<G>(src + p, 1, std::min<int64_t>(G, kc - p));
}

// Rows of a packing chunk: I16WordsOfRow fills up to this many rows of words (A rows, or B
// columns whose k values are contiguous), which one TransposeTile then spreads into a panel.
constexpr int64_t kI16PackChunk = 8;

// dst[t * ds + r] = word t of row r for r < rows <= kI16PackChunk, t < ceil(kc/G), row r at
// src + r * rs (its kc <= G * kI16KCPairs values contiguous).
template <int G>
HWY_INLINE void I16PackContiguousRows(const int32_t* src, int64_t rs, int64_t rows, int64_t kc,
                                      uint32_t* HWY_RESTRICT dst, int64_t ds) {
  HWY_ALIGN uint32_t tmp[kI16PackChunk * kI16KCPairs];
  const int64_t kcw = (kc + G - 1) / G;
  for (int64_t r = 0; r < rows; ++r) I16WordsOfRow<G>(src + r * rs, kc, tmp + r * kI16KCPairs);
  TransposeTile<uint32_t>(tmp, kI16KCPairs, dst, ds, 0, rows, 0, kcw);
}

// Packs rows [i0, i0+mc) x k values [p0, p0+kc) of A into ceil(mc/MR) panels of kcw = ceil(kc/G)
// words: panel q, word t, row r at dst[q*kcw*MR + t*MR + r] = the word of A[i][p0+Gt ..
// p0+Gt+G-1], i = i0 + q*MR + r; 0 fields past kc and whole zeros for rows >= mc.
template <int G>
HWY_INLINE void I16PackA(const I16Operands& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                         uint32_t* HWY_RESTRICT dst) {
  constexpr int64_t MR = kGemmMR;
  static_assert(MR <= kI16PackChunk, "a panel is one packing chunk");
  const int64_t kcw = (kc + G - 1) / G;
  for (int64_t q = 0; q * MR < mc; ++q) {
    uint32_t* HWY_RESTRICT panel = dst + q * kcw * MR;
    const int64_t rows = std::min<int64_t>(MR, mc - q * MR);
    const int32_t* first = g.a + (i0 + q * MR) * g.a_rs + p0 * g.a_cs;
    if (g.a_cs == 1) {  // row-major A
      I16PackContiguousRows<G>(first, g.a_rs, rows, kc, panel, MR);
    } else {
      const int64_t cs = g.a_cs;
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t* src = first + r * g.a_rs;
        for (int64_t t = 0; t < kcw; ++t) {
          panel[t * MR + r] = I16Word<G>(src + G * t * cs, cs, std::min<int64_t>(G, kc - G * t));
        }
      }
    }
    for (int64_t r = rows; r < MR; ++r) {
      for (int64_t t = 0; t < kcw; ++t) panel[t * MR + r] = 0;
    }
  }
}

// Packs k values [p0, p0+kc) x columns [j0, j0+nc) of B into ceil(nc/NR) panels of kcw words:
// panel q, word t, column j at dst[q*kcw*NR + t*NR + j] = the word of B[p0+Gt .. p0+Gt+G-1][j'],
// j' = j0 + q*NR + j; 0 fields past kc and whole zeros for columns >= nc.
template <int G, int NRV>
HWY_INLINE void I16PackB(const I16Operands& g, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                         uint32_t* HWY_RESTRICT dst) {
  const hn::ScalableTag<int32_t> d;
  const hn::ScalableTag<uint32_t> du;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t NR = NRV * N;
  const int64_t kcw = (kc + G - 1) / G;
  constexpr int kBits = 32 / G;
  const auto mask = hn::Set(d, static_cast<int32_t>((1u << kBits) - 1));
  for (int64_t q = 0; q * NR < nc; ++q) {
    uint32_t* HWY_RESTRICT panel = dst + q * kcw * NR;
    const int64_t cols = std::min<int64_t>(NR, nc - q * NR);
    const int32_t* src = g.b + p0 * g.b_rs + (j0 + q * NR) * g.b_cs;
    if (g.b_cs == 1) {  // row-major B: G rows combine into one row of words, by vectors
      const int64_t vec_cols = cols / N * N;
      for (int64_t t = 0; t < kcw; ++t) {
        const int32_t* r0 = src + G * t * g.b_rs;
        const int64_t nrows = std::min<int64_t>(G, kc - G * t);  // only addressed rows
        uint32_t* HWY_RESTRICT out = panel + t * NR;
        for (int64_t j = 0; j < vec_cols; j += N) {
          auto v = hn::And(hn::LoadU(d, r0 + j), mask);
          for (int64_t e = 1; e < nrows; ++e) {
            const auto x = hn::And(hn::LoadU(d, r0 + e * g.b_rs + j), mask);
            v = hn::Or(v, hn::ShiftLeftSame(x, static_cast<int>(kBits * e)));
          }
          hn::Store(hn::BitCast(du, v), du, out + j);
        }
        for (int64_t j = vec_cols; j < cols; ++j) out[j] = I16Word<G>(r0 + j, g.b_rs, nrows);
        for (int64_t j = cols; j < NR; ++j) out[j] = 0;
      }
      continue;
    }
    if (g.b_rs == 1) {  // column-major B (e.g. transposed): each column's k values in a row
      for (int64_t j = 0; j < cols; j += kI16PackChunk) {
        I16PackContiguousRows<G>(src + j * g.b_cs, g.b_cs, std::min(kI16PackChunk, cols - j), kc,
                                 panel + j, NR);
      }
    } else {  // strided B: column by column
      for (int64_t j = 0; j < cols; ++j) {
        const int32_t* col = src + j * g.b_cs;
        for (int64_t t = 0; t < kcw; ++t) {
          panel[t * NR + j] =
              I16Word<G>(col + G * t * g.b_rs, g.b_rs, std::min<int64_t>(G, kc - G * t));
        }
      }
    }
    for (int64_t t = 0; t < kcw; ++t) {
      for (int64_t j = cols; j < NR; ++j) panel[t * NR + j] = 0;
    }
  }
}

// The multiply-add of a micro-kernel, on words of G = I16Group(op) values.
enum class I16Op {
  kMadd,      // int16 pairs: pmaddwd + vpaddd (ReorderWidenMulAccumulate)
  kDpwssd,    // int16 pairs: vpdpwssd (AVX3 targets, AVX512_VNNI CPUs)
  kDpbusdAU,  // byte quads, A u8 and B s8: vpdpbusd (AVX3 targets, AVX512_VNNI CPUs)
  kDpbusdBU,  // byte quads, A s8 and B u8: vpdpbusd with the operands' roles swapped
};

constexpr int I16Group(I16Op op) {
  return op == I16Op::kDpbusdAU || op == I16Op::kDpbusdBU ? 4 : 2;
}

// acc + (per 32-bit lane) the sum of the G products of the fields of a and b: for int16 pairs
// a.lo * b.lo + a.hi * b.hi by pmaddwd then vpaddd (ReorderWidenMulAccumulate) or one vpdpwssd;
// for byte quads the four u8 x s8 products by one vpdpbusd, whose first source (a for kDpbusdAU,
// b for kDpbusdBU) is read as u8 and the other as s8. vpdpwssd / vpdpbusd are emitted by inline
// assembly (AVX3 only, see I16CpuHasVnni); both are the non-saturating forms.
template <I16Op kOp, class D32, class V = hn::Vec<D32>>
HWY_INLINE V I16MulAcc(D32 d32, V a, V b, V acc) {
#if HWY_TARGET <= HWY_AVX3
  if constexpr (kOp == I16Op::kDpwssd) {
    // The same wrapped sum as pmaddwd + vpaddd (see the file comment).
    asm("vpdpwssd %2, %1, %0" : "+v"(acc.raw) : "v"(a.raw), "v"(b.raw));
    return acc;
  } else if constexpr (kOp == I16Op::kDpbusdAU) {  // AT&T order: s8 source, u8 source, dest
    asm("vpdpbusd %2, %1, %0" : "+v"(acc.raw) : "v"(a.raw), "v"(b.raw));
    return acc;
  } else if constexpr (kOp == I16Op::kDpbusdBU) {
    asm("vpdpbusd %1, %2, %0" : "+v"(acc.raw) : "v"(a.raw), "v"(b.raw));
    return acc;
  }
#endif
  static_assert(kOp == I16Op::kMadd || HWY_TARGET <= HWY_AVX3, "VNNI needs AVX-512");
  const hn::Repartition<int16_t, D32> d16;
  V unused = hn::Zero(d32);  // sum1: x86's ReorderWidenMulAccumulate neither reads nor writes it
  return hn::ReorderWidenMulAccumulate(d32, hn::BitCast(d16, a), hn::BitCast(d16, b), acc, unused);
}

// Adds or stores the valid mr x nr part of a tile spilled row by row (NRV vectors per row).
template <int NRV>
HWY_INLINE void I16StoreEdgeTile(const int32_t* HWY_RESTRICT tile, int32_t* HWY_RESTRICT c,
                                 int64_t c_rs, int64_t mr, int64_t nr, bool accumulate) {
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>()));
  for (int64_t r = 0; r < mr; ++r) {
    int32_t* row = c + r * c_rs;
    const int32_t* t = tile + r * NR;
    if (accumulate) {
      for (int64_t j = 0; j < nr; ++j) {
        row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) + static_cast<uint32_t>(t[j]));
      }
    } else {
      for (int64_t j = 0; j < nr; ++j) row[j] = t[j];
    }
  }
}

// C tile [mr x nr] (+)= packed A panel (kcw words x MR rows, rows kGemmMR apart) · packed B panel
// (kcw words x NRV vectors), mr <= MR, nr <= NR. ap and bp are vector-aligned. Writes only the
// mr x nr valid elements of C.
template <int NRV, int MR, I16Op kOp>
HWY_INLINE void I16MicroKernel(int64_t kcw, const uint32_t* HWY_RESTRICT ap,
                               const uint32_t* HWY_RESTRICT bp, int32_t* HWY_RESTRICT c,
                               int64_t c_rs, int64_t mr, int64_t nr, bool accumulate) {
  const hn::ScalableTag<int32_t> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  const int32_t* HWY_RESTRICT a32 = reinterpret_cast<const int32_t*>(ap);
  const int32_t* HWY_RESTRICT b32 = reinterpret_cast<const int32_t*>(bp);
  for (int64_t r = 0; r < mr; ++r) {
    hwy::Prefetch(c + r * c_rs);
    hwy::Prefetch(c + r * c_rs + nr - 1);
  }
  V acc[MR][NRV];
  HWY_UNROLL(32)
  for (int r = 0; r < MR; ++r) {
    HWY_UNROLL(32)
    for (int v = 0; v < NRV; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int64_t t = 0; t < kcw; ++t) {
    V bv[NRV];
    HWY_UNROLL(32)
    for (int v = 0; v < NRV; ++v) bv[v] = hn::Load(d, b32 + v * N);
    HWY_UNROLL(32)
    for (int r = 0; r < MR; ++r) {
      const V av = hn::Set(d, a32[r]);
      HWY_UNROLL(32)
      for (int v = 0; v < NRV; ++v) acc[r][v] = I16MulAcc<kOp>(d, av, bv[v], acc[r][v]);
    }
    a32 += kGemmMR;
    b32 += NRV * N;
  }
  if (mr == MR && nr == static_cast<int64_t>(NRV * N)) {
    GemmStorePlainTile<MR, NRV>(d, acc, c, c_rs, accumulate);  // wraps: i32 Add
    return;
  }
  HWY_ALIGN int32_t tile[MR * NRV * (HWY_MAX_BYTES / sizeof(int32_t))];
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NRV; ++v) hn::Store(acc[r][v], d, tile + (r * NRV + v) * N);
  }
  I16StoreEdgeTile<NRV>(tile, c, c_rs, mr, nr, accumulate);
}

// Rows of C per pass of the k loop: 16-register targets compute a 6-row panel in two passes of
// 3 rows (3 x 2 accumulators + 2 B vectors + the broadcast + pmaddwd's product: 10 registers);
// in one pass, 12 accumulators + 4 left GCC 12 short of registers (2 accumulators spilled and
// reloaded every step: 100 against 150 GOP/s on Zen 4 at 1024^3, AVX2).
#if HWY_TARGET <= HWY_AVX3
constexpr int kI16PassRows = kGemmMR;
#else
constexpr int kI16PassRows = 3;
#endif

// One tile of a packed A panel with `rows` valid rows (a last panel of fewer than MR rows runs a
// kernel of just those rows), in passes of at most kI16PassRows rows.
template <int NRV, I16Op kOp>
HWY_NOINLINE void I16PanelTile(int64_t kcw, const uint32_t* HWY_RESTRICT ap,
                               const uint32_t* HWY_RESTRICT bp, int32_t* HWY_RESTRICT c,
                               int64_t c_rs, int64_t rows, int64_t nr, bool accumulate) {
  for (int64_t r0 = 0; r0 < rows; r0 += kI16PassRows) {
    const int64_t pass = std::min<int64_t>(kI16PassRows, rows - r0);
    const uint32_t* pap = ap + r0;
    int32_t* pc = c + r0 * c_rs;
    switch (pass) {
#define SHP_I16_ROWS_CASE(R)                                                  \
  case R:                                                                     \
    if constexpr (R <= kI16PassRows) {                                        \
      I16MicroKernel<NRV, R, kOp>(kcw, pap, bp, pc, c_rs, R, nr, accumulate); \
    }                                                                         \
    break;
      SHP_I16_ROWS_CASE(1)
      SHP_I16_ROWS_CASE(2)
      SHP_I16_ROWS_CASE(3)
      SHP_I16_ROWS_CASE(4)
      SHP_I16_ROWS_CASE(5)
      SHP_I16_ROWS_CASE(6)
      SHP_I16_ROWS_CASE(7)
      SHP_I16_ROWS_CASE(8)
#undef SHP_I16_ROWS_CASE
      default:
        break;
    }
  }
}

// Rows [i0, i1) x columns [j0, j1) of one product g, by the plain loop in uint32 (wrapping)
// arithmetic: the fallback when a thread's pack buffers cannot be allocated. Same result.
HWY_INLINE void I16PlainBlock(const I16Operands& g, int64_t i0, int64_t i1, int64_t j0,
                              int64_t j1) {
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) {
      int32_t* cij = g.c + i * g.c_rs + j;
      uint32_t sum = g.accumulate ? static_cast<uint32_t>(*cij) : 0u;
      for (int64_t p = 0; p < g.k; ++p) {
        sum += static_cast<uint32_t>(g.a[i * g.a_rs + p * g.a_cs]) *
               static_cast<uint32_t>(g.b[p * g.b_rs + j * g.b_cs]);
      }
      *cij = static_cast<int32_t>(sum);
    }
  }
}

// Rows [i0, i1) x columns [j0, j1) (j0 a multiple of NR) of one product g (all of k), with the
// caller's pack buffers (apack: (MC + MR) x kI16KCPairs words, bpack: (NC + NR) x kI16KCPairs
// words, both vector-aligned), with the words and multiply-add of kOp.
template <int NRV, I16Op kOp>
HWY_NOINLINE void I16GemmBlock(const I16Operands& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                               uint32_t* HWY_RESTRICT apack, uint32_t* HWY_RESTRICT bpack) {
  using B = GemmBlocking<float>;  // the same bytes per row and column (see kI16KCPairs)
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>()));
  const int64_t nc_step = std::max<int64_t>(NR, B::NC() / NR * NR);
  constexpr int G = I16Group(kOp);
  constexpr int64_t KC = G * kI16KCPairs;
  if (g.k == 0) {  // empty sum
    if (!g.accumulate) {
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) g.c[i * g.c_rs + j] = 0;
      }
    }
    return;
  }
  for (int64_t jc = j0; jc < j1; jc += nc_step) {
    const int64_t nc = std::min<int64_t>(nc_step, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += KC) {
      const int64_t kc = std::min<int64_t>(KC, g.k - pc);
      const int64_t kcw = (kc + G - 1) / G;
      const bool accumulate = g.accumulate || pc > 0;
      I16PackB<G, NRV>(g, pc, kc, jc, nc, bpack);
      for (int64_t ic = i0; ic < i1; ic += B::MC()) {
        const int64_t mc = std::min<int64_t>(B::MC(), i1 - ic);
        I16PackA<G>(g, ic, mc, pc, kc, apack);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const uint32_t* bp = bpack + (jr / NR) * kcw * NR;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            I16PanelTile<NRV, kOp>(
                kcw, apack + (ir / MR) * kcw * MR, bp, g.c + (ic + ir) * g.c_rs + jc + jr, g.c_rs,
                std::min<int64_t>(MR, mc - ir), std::min<int64_t>(NR, nc - jr), accumulate);
          }
        }
      }
    }
  }
}

// The MatmulParams driver with NRV vectors per tile row: the f32 GEMM's work split (items of
// batch index x row range x column range of C), each item computed by I16GemmBlock.
template <int NRV, I16Op kOp>
HWY_NOINLINE void MatmulI16NRV(const MatmulParams& prm, int64_t batch, const int32_t* a,
                               const int32_t* b, int32_t* c, bool plain, ThreadPool* pool) {
  using B = GemmBlocking<float>;
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>()));
  const GemmSplit sp = SplitGemmWork(prm, batch, MR, NR, false, pool);
  const auto run = [&](int64_t begin, int64_t end) {
    const int64_t nc_max = std::min<int64_t>(B::NC(), sp.n_step);
    const int64_t mc_max = std::min<int64_t>(B::MC(), sp.m_step);
    constexpr int G = I16Group(kOp);
    const int64_t kcw_max =
        std::min<int64_t>(kI16KCPairs, std::max<int64_t>((prm.k + G - 1) / G, 1));
    // MatmulI32 does not throw: without its pack buffers a thread computes its items with the
    // plain loop (the same exact result; items done by other threads may already be in C).
    uint32_t* apack = nullptr;
    uint32_t* bpack = nullptr;
    try {
      if (plain) throw std::bad_alloc();  // tests of the fallback (I16Kernel::kPlainLoop)
      apack = GemmScratch<uint32_t>(0, static_cast<size_t>((mc_max + MR) * kcw_max));
      bpack = GemmScratch<uint32_t>(1, static_cast<size_t>((nc_max + NR) * kcw_max));
    } catch (const std::bad_alloc&) {
      apack = bpack = nullptr;
    }
    for (int64_t item = begin; item < end; ++item) {
      const GemmItem it = GemmItemAt(prm, sp, item);
      I16Operands g;
      g.a = a == nullptr ? nullptr : a + it.off_a;
      g.a_rs = prm.a_row_stride;
      g.a_cs = prm.a_col_stride;
      g.b = b == nullptr ? nullptr : b + it.off_b;
      g.b_rs = prm.b_row_stride;
      g.b_cs = prm.b_col_stride;
      g.c = c + it.off_c;
      g.c_rs = prm.c_row_stride;
      g.k = prm.k;
      g.accumulate = prm.accumulate;
      if (bpack != nullptr) {
        I16GemmBlock<NRV, kOp>(g, it.i0, it.i1, it.j0, it.j1, apack, bpack);
      } else {
        I16PlainBlock(g, it.i0, it.i1, it.j0, it.j1);
      }
    }
  };
  RunGemmItems(sp, pool, run);
}

template <I16Op kOp>
HWY_INLINE void MatmulI16Width(const MatmulParams& prm, int64_t batch, const int32_t* a,
                               const int32_t* b, int32_t* c, bool plain, ThreadPool* pool) {
  switch (GemmNRV(prm.n, static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>())))) {
    case 1:
      MatmulI16NRV<1, kOp>(prm, batch, a, b, c, plain, pool);
      break;
    case 2:
      MatmulI16NRV<2, kOp>(prm, batch, a, b, c, plain, pool);
      break;
    default:
      MatmulI16NRV<kGemmNRV, kOp>(prm, batch, a, b, c, plain, pool);
      break;
  }
}

#endif  // SHP_MATMUL_I16

// How MatmulI32ViaI16Impl multiplies: kAuto uses vpdpbusd on byte quads when A is u8 and B s8
// (or A s8 and B u8) and the target and the CPU have AVX512_VNNI, else vpdpwssd on int16 pairs
// where they have it, else pmaddwd + vpaddd; kNoU8S8 is kAuto without vpdpbusd; kNoVnni never
// uses VNNI; kU8S8Only is kAuto but returns false (writing nothing) where it would not use
// vpdpbusd; kPlainLoop computes every work item with the plain loop, as a thread does when its
// pack buffers cannot be allocated. All but kAuto are for tests.
enum class I16Kernel { kAuto, kNoU8S8, kNoVnni, kU8S8Only, kPlainLoop };

// MatmulI32 for operands that fit int16, on this target. Returns false, writing nothing, if
// !ValidMatmulParams(prm), if a value of A or B that the product reads is outside
// [-32768, 32767], or if this target has no int16 kernel (SCALAR, non-x86); otherwise computes
// exactly what MatmulI32 does (the i32 wrapping result) and returns true. Never throws (see
// MatmulI16NRV). `kernel`: I16Kernel (kAuto but in tests).
HWY_INLINE bool MatmulI32ViaI16Impl(const MatmulParams& prm, const int32_t* a, const int32_t* b,
                                    int32_t* c, ThreadPool* pool,
                                    I16Kernel kernel = I16Kernel::kAuto) {
#if SHP_MATMUL_I16
  if (!ValidMatmulParams(prm)) return false;
  const bool vnni = I16CpuHasVnni();  // false but on AVX3 targets
  if (kernel == I16Kernel::kU8S8Only && !vnni) return false;
  int64_t batch = 1;
  for (int i = 0; i < prm.batch_rank; ++i) batch *= prm.batch_dims[i];
  if (batch == 0 || prm.m == 0 || prm.n == 0) return true;
  unsigned fa = kFitsAll, fb = kFitsAll;
  if (prm.k > 0) {
    fa = I16RangeBatched(prm, a, prm.a_batch_strides, prm.m, prm.k, prm.a_row_stride,
                         prm.a_col_stride);
    if ((fa & kFitsI16) == 0) return false;
    fb = I16RangeBatched(prm, b, prm.b_batch_strides, prm.k, prm.n, prm.b_row_stride,
                         prm.b_col_stride);
    if ((fb & kFitsI16) == 0) return false;
  }
  const bool plain = kernel == I16Kernel::kPlainLoop;
#if HWY_TARGET <= HWY_AVX3
  if (vnni && (kernel == I16Kernel::kAuto || kernel == I16Kernel::kU8S8Only)) {
    if ((fa & kFitsU8) != 0 && (fb & kFitsS8) != 0) {
      MatmulI16Width<I16Op::kDpbusdAU>(prm, batch, a, b, c, false, pool);
      return true;
    }
    if ((fa & kFitsS8) != 0 && (fb & kFitsU8) != 0) {
      MatmulI16Width<I16Op::kDpbusdBU>(prm, batch, a, b, c, false, pool);
      return true;
    }
  }
  if (kernel == I16Kernel::kU8S8Only) return false;
  if (vnni && (kernel == I16Kernel::kAuto || kernel == I16Kernel::kNoU8S8)) {
    MatmulI16Width<I16Op::kDpwssd>(prm, batch, a, b, c, false, pool);
    return true;
  }
#endif
  MatmulI16Width<I16Op::kMadd>(prm, batch, a, b, c, plain, pool);
  return true;
#else
  (void)prm, (void)a, (void)b, (void)c, (void)pool, (void)kernel;
  return false;
#endif
}

// True if MatmulI32ViaI16Impl on this target uses vpdpwssd and vpdpbusd (I16Kernel::kAuto).
HWY_INLINE bool MatmulI16UsesVnni() {
#if SHP_MATMUL_I16
  return I16CpuHasVnni();
#else
  return false;
#endif
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
