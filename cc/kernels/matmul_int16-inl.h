// Per-target i32 matmul for operands whose values all fit int16 (issue 41: quantized u8/i8/i16
// matrices that the tracer widened to i32), computed on int16 pairs with i32 accumulation. A
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
// matmul_int16_test.cc checks this, with -32768 operands at k large enough to wrap.
//
// The operands are scanned before anything is written: with a value outside int16 in A or B
// (as read through the strides, for every batch index), MatmulI32ViaI16Impl returns false and
// writes nothing, and MatmulI32 takes its other exact paths. Only x86 targets other than SCALAR
// have the kernel (the argument above is about pmaddwd); elsewhere it returns false.
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

// A 32-bit word holding two int16 values (lo, hi): lo in the low half. Both must fit int16.
HWY_INLINE uint32_t I16Pair(int32_t lo, int32_t hi) {
  return (static_cast<uint32_t>(lo) & 0xFFFFu) | (static_cast<uint32_t>(hi) << 16);
}

// True if every element of the rows x cols matrix at x (strides rs, cs) is in [-32768, 32767]:
// (uint32)v + 2^15 < 2^16 exactly for those, so OR-ing these sums keeps the high half 0.
HWY_INLINE bool I16FitsMatrix(const int32_t* x, int64_t rows, int64_t cols, int64_t rs,
                              int64_t cs) {
  if (rows <= 0 || cols <= 0) return true;
  if (cs != 1 && rs == 1) {  // column-major: scan the contiguous columns
    std::swap(rows, cols);
    std::swap(rs, cs);
  }
  const hn::ScalableTag<uint32_t> du;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  const auto bias = hn::Set(du, 0x8000u);
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* row = x + r * rs;
    uint32_t bits = 0;
    int64_t j = 0;
    if (cs == 1) {
      auto acc = hn::Zero(du);
      const uint32_t* u = reinterpret_cast<const uint32_t*>(row);
      for (; j + N <= cols; j += N) acc = hn::Or(acc, hn::Add(hn::LoadU(du, u + j), bias));
      const auto high = hn::ShiftRight<16>(acc);
      if (!hn::AllTrue(du, hn::Eq(high, hn::Zero(du)))) return false;
      for (; j < cols; ++j) bits |= static_cast<uint32_t>(row[j]) + 0x8000u;
    } else {
      for (; j < cols; ++j) bits |= static_cast<uint32_t>(row[j * cs]) + 0x8000u;
    }
    if ((bits >> 16) != 0) return false;
  }
  return true;
}

// I16FitsMatrix for the matrix of every batch index of an operand (base pointer x, batch
// strides `strides`): batch dimensions it is broadcast over (stride 0) are scanned once.
HWY_INLINE bool I16FitsBatched(const MatmulParams& prm, const int32_t* x, const int64_t* strides,
                               int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  int64_t count = 1;
  for (int d = 0; d < prm.batch_rank; ++d) {
    if (strides[d] != 0) count *= prm.batch_dims[d];
  }
  for (int64_t t = 0; t < count; ++t) {
    int64_t rest = t, off = 0;
    for (int d = prm.batch_rank - 1; d >= 0; --d) {
      if (strides[d] == 0) continue;
      off += rest % prm.batch_dims[d] * strides[d];
      rest /= prm.batch_dims[d];
    }
    if (!I16FitsMatrix(x + off, rows, cols, rs, cs)) return false;
  }
  return true;
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

// out[t] = (src[2t], src[2t+1]) for t < ceil(kc/2), the last high half 0 for odd kc: kc
// contiguous values (in int16 range) as pairs, by vectors (a saturating demotion to int16,
// exact on these values, puts them in order).
HWY_INLINE void I16PairsOfRow(const int32_t* HWY_RESTRICT src, int64_t kc,
                              uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<int32_t> d;
  const hn::Rebind<int16_t, decltype(d)> d16;  // N lanes of int16: N / 2 pairs
  const hn::Repartition<uint32_t, decltype(d16)> dp;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t p = 0;
  for (; p + N <= kc; p += N) {  // N >= 4 (x86 targets but SCALAR)
    hn::StoreU(hn::BitCast(dp, hn::DemoteTo(d16, hn::LoadU(d, src + p))), dp, out + p / 2);
  }
  for (; p + 2 <= kc; p += 2) out[p / 2] = I16Pair(src[p], src[p + 1]);
  if (p < kc) out[p / 2] = I16Pair(src[p], 0);
}

// Rows of a packing chunk: I16PairsOfRow fills up to this many rows of pairs (A rows, or B
// columns whose k values are contiguous), which one TransposeTile then spreads into a panel.
constexpr int64_t kI16PackChunk = 8;

// dst[t * ds + r] = pair t of row r for r < rows <= kI16PackChunk, t < ceil(kc/2), row r at
// src + r * rs (its kc values contiguous).
HWY_INLINE void I16PackContiguousRows(const int32_t* src, int64_t rs, int64_t rows, int64_t kc,
                                      uint32_t* HWY_RESTRICT dst, int64_t ds) {
  HWY_ALIGN uint32_t tmp[kI16PackChunk * kI16KCPairs];
  const int64_t kcp = (kc + 1) / 2;
  for (int64_t r = 0; r < rows; ++r) I16PairsOfRow(src + r * rs, kc, tmp + r * kI16KCPairs);
  TransposeTile<uint32_t>(tmp, kI16KCPairs, dst, ds, 0, rows, 0, kcp);
}

// Packs rows [i0, i0+mc) x k values [p0, p0+kc) of A into ceil(mc/MR) panels of kcp = ceil(kc/2)
// pairs: panel q, pair t, row r at dst[q*kcp*MR + t*MR + r] = (A[i][p0+2t], A[i][p0+2t+1]),
// i = i0 + q*MR + r; 0 halves past kc and whole zeros for rows >= mc.
HWY_INLINE void I16PackA(const I16Operands& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                         uint32_t* HWY_RESTRICT dst) {
  constexpr int64_t MR = kGemmMR;
  static_assert(MR <= kI16PackChunk, "a panel is one packing chunk");
  const int64_t kcp = (kc + 1) / 2, full = kc / 2;
  for (int64_t q = 0; q * MR < mc; ++q) {
    uint32_t* HWY_RESTRICT panel = dst + q * kcp * MR;
    const int64_t rows = std::min<int64_t>(MR, mc - q * MR);
    const int32_t* first = g.a + (i0 + q * MR) * g.a_rs + p0 * g.a_cs;
    if (g.a_cs == 1) {  // row-major A
      I16PackContiguousRows(first, g.a_rs, rows, kc, panel, MR);
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t* src = first + r * g.a_rs;
        const int64_t cs = g.a_cs;
        for (int64_t t = 0; t < full; ++t) {
          panel[t * MR + r] = I16Pair(src[2 * t * cs], src[(2 * t + 1) * cs]);
        }
        if (kcp > full) panel[full * MR + r] = I16Pair(src[2 * full * cs], 0);
      }
    }
    for (int64_t r = rows; r < MR; ++r) {
      for (int64_t t = 0; t < kcp; ++t) panel[t * MR + r] = 0;
    }
  }
}

// Packs k values [p0, p0+kc) x columns [j0, j0+nc) of B into ceil(nc/NR) panels of kcp pairs:
// panel q, pair t, column j at dst[q*kcp*NR + t*NR + j] = (B[p0+2t][j'], B[p0+2t+1][j']),
// j' = j0 + q*NR + j; 0 halves past kc and whole zeros for columns >= nc.
template <int NRV>
HWY_INLINE void I16PackB(const I16Operands& g, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                         uint32_t* HWY_RESTRICT dst) {
  const hn::ScalableTag<int32_t> d;
  const hn::ScalableTag<uint32_t> du;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t NR = NRV * N;
  const int64_t kcp = (kc + 1) / 2;
  const auto low = hn::Set(d, 0xFFFF);
  for (int64_t q = 0; q * NR < nc; ++q) {
    uint32_t* HWY_RESTRICT panel = dst + q * kcp * NR;
    const int64_t cols = std::min<int64_t>(NR, nc - q * NR);
    const int32_t* src = g.b + p0 * g.b_rs + (j0 + q * NR) * g.b_cs;
    if (g.b_cs == 1) {  // row-major B: two rows combine into one row of pairs, by vectors
      const int64_t vec_cols = cols / N * N;
      for (int64_t t = 0; t < kcp; ++t) {
        const int32_t* r0 = src + 2 * t * g.b_rs;
        const bool has_r1 = 2 * t + 1 < kc;
        const int32_t* r1 = has_r1 ? r0 + g.b_rs : r0;  // only addressed elements
        uint32_t* HWY_RESTRICT out = panel + t * NR;
        for (int64_t j = 0; j < vec_cols; j += N) {
          auto v = hn::And(hn::LoadU(d, r0 + j), low);
          if (has_r1) v = hn::Or(v, hn::ShiftLeft<16>(hn::LoadU(d, r1 + j)));
          hn::Store(hn::BitCast(du, v), du, out + j);
        }
        for (int64_t j = vec_cols; j < cols; ++j) out[j] = I16Pair(r0[j], has_r1 ? r1[j] : 0);
        for (int64_t j = cols; j < NR; ++j) out[j] = 0;
      }
      continue;
    }
    if (g.b_rs == 1) {  // column-major B (e.g. transposed): each column's k values in a row
      for (int64_t j = 0; j < cols; j += kI16PackChunk) {
        I16PackContiguousRows(src + j * g.b_cs, g.b_cs, std::min(kI16PackChunk, cols - j), kc,
                              panel + j, NR);
      }
    } else {  // strided B: column by column
      for (int64_t j = 0; j < cols; ++j) {
        const int32_t* col = src + j * g.b_cs;
        for (int64_t t = 0; t < kc / 2; ++t) {
          panel[t * NR + j] = I16Pair(col[2 * t * g.b_rs], col[(2 * t + 1) * g.b_rs]);
        }
        if (kc % 2 != 0) panel[(kcp - 1) * NR + j] = I16Pair(col[(kc - 1) * g.b_rs], 0);
      }
    }
    for (int64_t t = 0; t < kcp; ++t) {
      for (int64_t j = cols; j < NR; ++j) panel[t * NR + j] = 0;
    }
  }
}

// acc + (per 32-bit lane) a.lo * b.lo + a.hi * b.hi, the int16 halves of a and b: pmaddwd then
// vpaddd (ReorderWidenMulAccumulate), or one vpdpwssd (kVnni; AVX3 only, see I16CpuHasVnni).
template <bool kVnni, class D32, class V = hn::Vec<D32>>
HWY_INLINE V I16MulAcc(D32 d32, V a, V b, V acc) {
#if HWY_TARGET <= HWY_AVX3
  if constexpr (kVnni) {
    // Non-saturating: the same wrapped sum as pmaddwd + vpaddd (see the file comment).
    asm("vpdpwssd %2, %1, %0" : "+v"(acc.raw) : "v"(a.raw), "v"(b.raw));
    return acc;
  }
#endif
  static_assert(!kVnni || HWY_TARGET <= HWY_AVX3, "vpdpwssd needs AVX-512");
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

// Stores (or adds to C, wrapping) a full R x V-vector tile of accumulators, row r at c + r * c_rs.
// The two cases are separate straight-line loops: with a per-element choice GCC 12 kept the
// accumulators in memory across the k loop (as matmul-inl.h's GemmStoreFullTile notes for f32).
template <int R, int V, class D, class Vec = hn::Vec<D>>
HWY_INLINE void I16StoreFullTile(D d, const Vec (&acc)[R][V], int32_t* HWY_RESTRICT c, int64_t c_rs,
                                 bool accumulate) {
  const size_t N = hn::Lanes(d);
  if (accumulate) {
    HWY_UNROLL(32)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(32)
      for (int v = 0; v < V; ++v) {
        int32_t* p = c + r * c_rs + v * N;
        hn::StoreU(hn::Add(hn::LoadU(d, p), acc[r][v]), d, p);
      }
    }
  } else {
    HWY_UNROLL(32)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(32)
      for (int v = 0; v < V; ++v) hn::StoreU(acc[r][v], d, c + r * c_rs + v * N);
    }
  }
}

// C tile [mr x nr] (+)= packed A panel (kcp pairs x MR rows, rows kGemmMR apart) · packed B panel
// (kcp pairs x NRV vectors), mr <= MR, nr <= NR. ap and bp are vector-aligned. Writes only the
// mr x nr valid elements of C.
template <int NRV, int MR, bool kVnni>
HWY_INLINE void I16MicroKernel(int64_t kcp, const uint32_t* HWY_RESTRICT ap,
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
  for (int64_t t = 0; t < kcp; ++t) {
    V bv[NRV];
    HWY_UNROLL(32)
    for (int v = 0; v < NRV; ++v) bv[v] = hn::Load(d, b32 + v * N);
    HWY_UNROLL(32)
    for (int r = 0; r < MR; ++r) {
      const V av = hn::Set(d, a32[r]);
      HWY_UNROLL(32)
      for (int v = 0; v < NRV; ++v) acc[r][v] = I16MulAcc<kVnni>(d, av, bv[v], acc[r][v]);
    }
    a32 += kGemmMR;
    b32 += NRV * N;
  }
  if (mr == MR && nr == static_cast<int64_t>(NRV * N)) {
    I16StoreFullTile<MR, NRV>(d, acc, c, c_rs, accumulate);
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
template <int NRV, bool kVnni>
HWY_NOINLINE void I16PanelTile(int64_t kcp, const uint32_t* HWY_RESTRICT ap,
                               const uint32_t* HWY_RESTRICT bp, int32_t* HWY_RESTRICT c,
                               int64_t c_rs, int64_t rows, int64_t nr, bool accumulate) {
  for (int64_t r0 = 0; r0 < rows; r0 += kI16PassRows) {
    const int64_t pass = std::min<int64_t>(kI16PassRows, rows - r0);
    const uint32_t* pap = ap + r0;
    int32_t* pc = c + r0 * c_rs;
    switch (pass) {
#define SHP_I16_ROWS_CASE(R)                                                    \
  case R:                                                                       \
    if constexpr (R <= kI16PassRows) {                                          \
      I16MicroKernel<NRV, R, kVnni>(kcp, pap, bp, pc, c_rs, R, nr, accumulate); \
    }                                                                           \
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
// words, both vector-aligned).
template <int NRV, bool kVnni>
HWY_NOINLINE void I16GemmBlock(const I16Operands& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                               uint32_t* HWY_RESTRICT apack, uint32_t* HWY_RESTRICT bpack) {
  using B = GemmBlocking<float>;  // the same bytes per row and column (see kI16KCPairs)
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>()));
  const int64_t nc_step = std::max<int64_t>(NR, B::NC() / NR * NR);
  constexpr int64_t KC = 2 * kI16KCPairs;
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
      const int64_t kcp = (kc + 1) / 2;
      const bool accumulate = g.accumulate || pc > 0;
      I16PackB<NRV>(g, pc, kc, jc, nc, bpack);
      for (int64_t ic = i0; ic < i1; ic += B::MC()) {
        const int64_t mc = std::min<int64_t>(B::MC(), i1 - ic);
        I16PackA(g, ic, mc, pc, kc, apack);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const uint32_t* bp = bpack + (jr / NR) * kcp * NR;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            I16PanelTile<NRV, kVnni>(
                kcp, apack + (ir / MR) * kcp * MR, bp, g.c + (ic + ir) * g.c_rs + jc + jr, g.c_rs,
                std::min<int64_t>(MR, mc - ir), std::min<int64_t>(NR, nc - jr), accumulate);
          }
        }
      }
    }
  }
}

// The MatmulParams driver with NRV vectors per tile row: the f32 GEMM's work split (items of
// batch index x row range x column range of C), each item computed by I16GemmBlock.
template <int NRV, bool kVnni>
HWY_NOINLINE void MatmulI16NRV(const MatmulParams& prm, int64_t batch, const int32_t* a,
                               const int32_t* b, int32_t* c, bool plain, ThreadPool* pool) {
  using B = GemmBlocking<float>;
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>()));
  const GemmSplit sp = SplitGemmWork(prm, batch, MR, NR, false, pool);
  const auto run = [&](int64_t begin, int64_t end) {
    const int64_t nc_max = std::min<int64_t>(B::NC(), sp.n_step);
    const int64_t mc_max = std::min<int64_t>(B::MC(), sp.m_step);
    const int64_t kcp_max = std::min<int64_t>(kI16KCPairs, std::max<int64_t>((prm.k + 1) / 2, 1));
    // MatmulI32 does not throw: without its pack buffers a thread computes its items with the
    // plain loop (the same exact result; items done by other threads may already be in C).
    uint32_t* apack = nullptr;
    uint32_t* bpack = nullptr;
    try {
      if (plain) throw std::bad_alloc();  // tests of the fallback (I16Kernel::kPlainLoop)
      apack = GemmScratch<uint32_t>(0, static_cast<size_t>((mc_max + MR) * kcp_max));
      bpack = GemmScratch<uint32_t>(1, static_cast<size_t>((nc_max + NR) * kcp_max));
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
        I16GemmBlock<NRV, kVnni>(g, it.i0, it.i1, it.j0, it.j1, apack, bpack);
      } else {
        I16PlainBlock(g, it.i0, it.i1, it.j0, it.j1);
      }
    }
  };
  RunGemmItems(sp, pool, run);
}

template <bool kVnni>
HWY_INLINE void MatmulI16Width(const MatmulParams& prm, int64_t batch, const int32_t* a,
                               const int32_t* b, int32_t* c, bool plain, ThreadPool* pool) {
  switch (GemmNRV(prm.n, static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>())))) {
    case 1:
      MatmulI16NRV<1, kVnni>(prm, batch, a, b, c, plain, pool);
      break;
    case 2:
      MatmulI16NRV<2, kVnni>(prm, batch, a, b, c, plain, pool);
      break;
    default:
      MatmulI16NRV<kGemmNRV, kVnni>(prm, batch, a, b, c, plain, pool);
      break;
  }
}

#endif  // SHP_MATMUL_I16

// How MatmulI32ViaI16Impl multiplies: kAuto uses vpdpwssd where the target and the CPU have it,
// else pmaddwd + vpaddd; kNoVnni never uses vpdpwssd; kPlainLoop computes every work item with
// the plain loop, as a thread does when its pack buffers cannot be allocated (for tests).
enum class I16Kernel { kAuto, kNoVnni, kPlainLoop };

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
  int64_t batch = 1;
  for (int i = 0; i < prm.batch_rank; ++i) batch *= prm.batch_dims[i];
  if (batch == 0 || prm.m == 0 || prm.n == 0) return true;
  if (prm.k > 0) {
    if (!I16FitsBatched(prm, a, prm.a_batch_strides, prm.m, prm.k, prm.a_row_stride,
                        prm.a_col_stride) ||
        !I16FitsBatched(prm, b, prm.b_batch_strides, prm.k, prm.n, prm.b_row_stride,
                        prm.b_col_stride)) {
      return false;
    }
  }
  const bool plain = kernel == I16Kernel::kPlainLoop;
  if (kernel == I16Kernel::kAuto && I16CpuHasVnni()) {
#if HWY_TARGET <= HWY_AVX3
    MatmulI16Width<true>(prm, batch, a, b, c, plain, pool);
    return true;
#endif
  }
  MatmulI16Width<false>(prm, batch, a, b, c, plain, pool);
  return true;
#else
  (void)prm, (void)a, (void)b, (void)c, (void)pool, (void)kernel;
  return false;
#endif
}

// True if MatmulI32ViaI16Impl on this target uses vpdpwssd (I16Kernel::kAuto).
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
