// Per-target implementation of the matmul kernels (see matmul.h and matmul_prepacked.h for the
// API). A Highway "-inl.h" header: foreach_target.h re-includes it once per target (from
// matmul.cc and matmul_test.cc), so it has a per-target include guard and is a textual header in
// Bazel. Everything here is a template or inline (two translation units include it).
// size-gate: file: the packing routines and the microkernels share per-target register-tile
// helpers inside one HWY_NAMESPACE; issue 40 (AVX-512 blocking) will rework and split it.
//
// Algorithm (Goto / BLIS): for each NC-wide column block of C and each KC-deep slice of the
// contracted dimension, B[pc:pc+kc, jc:jc+nc] is packed into NR-wide panels (row p of a panel
// is NR contiguous values, zero-padded past n); then for each MC-high row block, A is packed
// into MR-high panels (column p of a panel is MR contiguous values, zero-padded past m), and a
// register-blocked micro-kernel computes each MR x NR tile of C with NR/lanes vector
// accumulators per row, one broadcast of A and NR/lanes vector loads of B per step of p, and
// fused multiply-adds. Packing reads A and B through their strides, so transposed operands
// need no separate code path, and the micro-kernel only ever reads the packed buffers; edge
// tiles are computed in full on zero padding and only their valid part is written to C.
// Nothing outside the addressed elements of A, B and C is read or written. A pre-packed B
// (PackedMatrixF32) holds the same panels for all of B, and the same loop (GemmBlock) reads them
// instead of packing, so MatmulF32Prepacked equals MatmulF32 bit for bit by construction.
#if defined(SHAPEPOLY_CC_KERNELS_MATMUL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_MATMUL_INL_H_
#undef SHAPEPOLY_CC_KERNELS_MATMUL_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_MATMUL_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <new>

#include <cstdlib>
#include <type_traits>

#include "cc/kernels/gemm_cache.h"
#include "cc/kernels/matmul.h"
#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/transpose-inl.h"
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Widest register-block shape: MR rows of C by kGemmNRV vectors of columns (MatmulFloatImpl
// uses 1 or 2 vectors instead when they pad n no more).
// 32 vector registers (AVX-512): 8 x 3 vectors = 24 accumulators + 3 B vectors + 1 broadcast.
// 16 registers (SSE4 / AVX2 / NEON ...): 6 x 2 vectors = 12 accumulators + 2 + 1.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kGemmMR = 8;
constexpr int kGemmNRV = 3;
#elif HWY_TARGET == HWY_SCALAR
constexpr int kGemmMR = 4;
constexpr int kGemmNRV = 4;
#else
constexpr int kGemmMR = 6;
constexpr int kGemmNRV = 2;
#endif
// Accumulator registers a micro-kernel may use (the rest hold B vectors and the broadcast).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kGemmAccRegs = 24;
#else
constexpr int kGemmAccRegs = 12;
#endif

// The one tile-width rule (vectors per tile row for n columns of N lanes), for MatmulF32/F64
// and for packing a PackedMatrixF32: 1 vector when n fits in one; otherwise 2 unless the widest
// tile pads n strictly less (measured on AVX3: 8 x 32 is at least as fast as 8 x 48 per useful
// FLOP, e.g. n = 256 or 1024). The width only decides speed: every C element is accumulated in
// the same p order whatever it is.
HWY_INLINE int GemmNRV(int64_t n, int64_t N) {
  const auto padded = [n](int64_t w) { return (n + w - 1) / w * w; };
  if (n <= N) return 1;
  if (kGemmNRV == 2 || padded(2 * N) <= padded(kGemmNRV * N)) return 2;
  return kGemmNRV;
}

// Cache blocking, in elements of T: the packed KC x NR micro-panel of B stays in L1 while the
// MC x KC block of A sits in L2; the KC x NC block of B lives in L3. KC is fixed: it decides
// where partial sums are rounded into C (and the layout of a PackedMatrixF32), so results do
// not depend on the CPU's caches. MC and NC only reorder whole tiles, so they come from the
// cache sizes the OS reports (gemm_cache.h), per target through MR and NR.
template <typename T>
struct GemmBlocking {
  static constexpr int64_t kKC = 1024 / sizeof(T);  // 256 floats, 128 doubles
  // Rows of A per block: the block takes about half of L2 (the rest holds C tiles, B panels
  // on their way to L1, and the next A block being packed), in whole MR-row panels.
  static int64_t MC() {
    static const int64_t mc = [] {
      const int64_t rows = GemmCaches().l2 / 2 / (kKC * static_cast<int64_t>(sizeof(T)));
      return std::min<int64_t>(std::max<int64_t>(rows / kGemmMR, 2), 64) * kGemmMR;
    }();
    return mc;
  }
  // Columns of B per block: the packed block takes at most half of the last-level cache shared
  // by the threads, capped at 4096 (the per-thread pack buffer stays <= 4 MiB for float).
  static int64_t NC() {
    static const int64_t nc = [] {
      const int64_t cols = GemmCaches().l3 / 4 / (kKC * static_cast<int64_t>(sizeof(T)));
      return std::min<int64_t>(std::max<int64_t>(cols, 256), 4096);
    }();
    return nc;
  }
};

// One matrix product with element strides (a slice of MatmulParams at a batch index). B is
// read either through b and its strides (packed per block into the caller's buffer), or, when
// b_packed is set, from panels packed once by GemmPackAll (k block pc starts at
// b_packed + pc * b_packed_rs).
template <typename T>
struct GemmOperands {
  const T* a;
  int64_t a_rs, a_cs;
  const T* b;
  int64_t b_rs, b_cs;
  const T* b_packed;
  int64_t b_packed_rs;
  T* c;
  int64_t c_rs;
  int64_t k;
  bool accumulate;
  // Epilogue applied to each C element when its last k block is stored (MatmulEpilogue):
  // c = c + bias[j] if bias is set, then c = relu(c). Never with accumulate.
  const T* bias;
  bool relu;
};

// The epilogue of one C tile (bias already offset to the tile's first column), or none.
template <typename T>
struct GemmTileEpilogue {
  const T* bias = nullptr;
  bool relu = false;
  bool active() const { return bias != nullptr || relu; }
};

// relu(x) exactly as the elementwise kernels compute BinaryOp::kMax(x, 0) (elementwise_ops-inl.h):
// NaN stays NaN (x + 0, which quiets it the same way), otherwise Max(x, 0).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V GemmRelu(D d, V x) {
  const V zero = hn::Zero(d);
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, zero), hn::Max(x, zero));
}

// Applies the epilogue to x, the C values of columns [0, lanes) of a tile row whose bias
// values start at `bias` (null when the epilogue has none): x + bias, then relu. The same
// vector operations as the unfused f32 add and max, so the results are the same bits.
template <class D, typename T = hn::TFromD<D>, class V = hn::Vec<D>>
HWY_INLINE V GemmApplyEpilogue(D d, V x, const T* HWY_RESTRICT bias, bool relu) {
  if (bias != nullptr) x = hn::Add(x, hn::LoadU(d, bias));
  if (relu) x = GemmRelu(d, x);
  return x;
}

// Writes the valid mr x nr part of a tile spilled row by row (NRV vectors per row) to C: adds C's
// old values first when accumulating, then applies the epilogue (in vectors over the padded row:
// lanes past nr are computed and dropped).
template <int NRV, class D, typename T = hn::TFromD<D>>
HWY_INLINE void GemmStoreEdgeTile(D d, T* HWY_RESTRICT tile, T* HWY_RESTRICT c, int64_t c_rs,
                                  int64_t mr, int64_t nr, bool accumulate,
                                  const GemmTileEpilogue<T>& ep) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t NR = NRV * N;
  HWY_ALIGN T bias[NRV * (HWY_MAX_BYTES / sizeof(T))];
  if (ep.bias != nullptr) {
    for (int64_t j = 0; j < NR; ++j) bias[j] = j < nr ? ep.bias[j] : T(0);
  }
  for (int64_t r = 0; r < mr; ++r) {
    T* row = c + r * c_rs;
    T* t = tile + r * NR;
    if (accumulate) {
      for (int64_t j = 0; j < nr; ++j) t[j] = row[j] + t[j];
    }
    if (ep.active()) {
      for (int64_t j = 0; j < nr; j += N) {
        hn::Store(GemmApplyEpilogue(d, hn::Load(d, t + j), ep.bias ? bias + j : nullptr, ep.relu),
                  d, t + j);
      }
    }
    for (int64_t j = 0; j < nr; ++j) row[j] = t[j];
  }
}

// Packs rows [i0, i0+mc) x columns [p0, p0+kc) of A into ceil(mc/MR) panels of kc*MR values:
// panel q, column p holds A[i0 + q*MR + r, p0 + p] at dst[q*kc*MR + p*MR + r], 0 for rows >= mc.
#if HWY_TARGET != HWY_SCALAR
// A full 6-row panel of row-major f32 A (MR = 6 on 16-register targets, where TransposeTile's
// 4x4 blocks would leave rows 4 and 5 to scalar copies): 4 columns at a time, rows 0-3 by a
// 4x4 transpose and rows 4-5 interleaved in pairs. panel[p * 6 + r] = src[r * rs + p].
HWY_INLINE void GemmPackA6F32(const float* HWY_RESTRICT src, int64_t rs, int64_t kc,
                              float* HWY_RESTRICT panel) {
  const hn::Full128<float> d4;
  const hn::Full64<float> d2;
  const hn::Full128<double> d64;  // moves pairs of floats
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    const auto v0 = hn::LoadU(d4, src + p);
    const auto v1 = hn::LoadU(d4, src + rs + p);
    const auto v2 = hn::LoadU(d4, src + 2 * rs + p);
    const auto v3 = hn::LoadU(d4, src + 3 * rs + p);
    const auto v4 = hn::LoadU(d4, src + 4 * rs + p);
    const auto v5 = hn::LoadU(d4, src + 5 * rs + p);
    const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d4, v0, v1));  // a0 b0 a1 b1
    const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d4, v2, v3));  // c0 d0 c1 d1
    const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d4, v0, v1));  // a2 b2 a3 b3
    const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d4, v2, v3));  // c2 d2 c3 d3
    const auto e0 = hn::InterleaveLower(d4, v4, v5);                    // e0 f0 e1 f1
    const auto e1 = hn::InterleaveUpper(d4, v4, v5);                    // e2 f2 e3 f3
    float* HWY_RESTRICT o = panel + p * 6;
    hn::StoreU(hn::BitCast(d4, hn::InterleaveLower(d64, t0, t1)), d4, o);
    hn::StoreU(hn::LowerHalf(d2, e0), d2, o + 4);
    hn::StoreU(hn::BitCast(d4, hn::InterleaveUpper(d64, t0, t1)), d4, o + 6);
    hn::StoreU(hn::UpperHalf(d2, e0), d2, o + 10);
    hn::StoreU(hn::BitCast(d4, hn::InterleaveLower(d64, t2, t3)), d4, o + 12);
    hn::StoreU(hn::LowerHalf(d2, e1), d2, o + 16);
    hn::StoreU(hn::BitCast(d4, hn::InterleaveUpper(d64, t2, t3)), d4, o + 18);
    hn::StoreU(hn::UpperHalf(d2, e1), d2, o + 22);
  }
  for (; p < kc; ++p) {
    for (int64_t r = 0; r < 6; ++r) panel[p * 6 + r] = src[r * rs + p];
  }
}
#endif

template <typename T>
HWY_INLINE void GemmPackA(const GemmOperands<T>& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                          T* HWY_RESTRICT dst) {
  constexpr int64_t MR = kGemmMR;
  for (int64_t q = 0; q * MR < mc; ++q) {
    T* HWY_RESTRICT panel = dst + q * kc * MR;
    const int64_t rows = std::min<int64_t>(MR, mc - q * MR);
    const T* src = g.a + (i0 + q * MR) * g.a_rs + p0 * g.a_cs;
#if HWY_TARGET != HWY_SCALAR
    if constexpr (std::is_same_v<T, float> && MR == 6) {
      if (g.a_cs == 1 && rows == 6) {
        GemmPackA6F32(src, g.a_rs, kc, panel);
        continue;
      }
    }
#endif
    if (g.a_cs == 1) {  // row-major A: a transpose of rows x kc, in SIMD 4x4 / 2x2 blocks
      using U = hwy::MakeUnsigned<T>;
      TransposeTile<U>(reinterpret_cast<const U*>(src), g.a_rs, reinterpret_cast<U*>(panel), MR, 0,
                       rows, 0, kc);
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t r = 0; r < rows; ++r) panel[p * MR + r] = src[r * g.a_rs + p * g.a_cs];
      }
    }
    if (rows < MR) {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t r = rows; r < MR; ++r) panel[p * MR + r] = T(0);
      }
    }
  }
}

// Packs rows [p0, p0+kc) x columns [j0, j0+nc) of B into ceil(nc/NR) panels of kc*NR values:
// panel q, row p holds B[p0 + p, j0 + q*NR + j] at dst[q*kc*NR + p*NR + j], 0 for columns >= nc.
template <int NRV, class D, typename T = hn::TFromD<D>>
HWY_INLINE void GemmPackB(D d, const GemmOperands<T>& g, int64_t p0, int64_t kc, int64_t j0,
                          int64_t nc, T* HWY_RESTRICT dst) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t NR = NRV * N;
  int64_t q0 = 0;  // first panel left to the loop below
  const int64_t full_panels = nc / NR;
  if (g.b_cs == 1 && full_panels > 1) {
    // Full panels of row-major B row by row: each row of the block is read once, front to back.
    // Panel by panel, the reads walked down rows n floats apart (a new page per row for n =
    // 1024), and missed: 5% of a 1024 x 1024 product (perf) in this copy.
    const T* src = g.b + p0 * g.b_rs + j0;
    for (int64_t p = 0; p < kc; ++p) {
      const T* row = src + p * g.b_rs;
      T* HWY_RESTRICT out = dst + p * NR;
      for (int64_t q = 0; q < full_panels; ++q) {
        HWY_UNROLL(32)
        for (int64_t v = 0; v < NRV; ++v) {
          hn::Store(hn::LoadU(d, row + q * NR + v * N), d, out + q * kc * NR + v * N);
        }
      }
    }
    q0 = full_panels;
  }
  for (int64_t q = q0; q * NR < nc; ++q) {
    T* HWY_RESTRICT panel = dst + q * kc * NR;
    const int64_t cols = std::min<int64_t>(NR, nc - q * NR);
    const T* src = g.b + p0 * g.b_rs + (j0 + q * NR) * g.b_cs;
    if (g.b_cs == 1 && cols == NR) {  // row-major B, full panel: vector copies
      for (int64_t p = 0; p < kc; ++p) {
        const T* row = src + p * g.b_rs;
        for (int64_t v = 0; v < NRV; ++v) {
          hn::Store(hn::LoadU(d, row + v * N), d, panel + p * NR + v * N);
        }
      }
      continue;
    }
    if (g.b_cs == 1) {  // row-major B, last (partial) panel: whole vectors, then the rest
      const int64_t full = cols / N * N;
      for (int64_t p = 0; p < kc; ++p) {
        const T* row = src + p * g.b_rs;
        T* HWY_RESTRICT out = panel + p * NR;
        for (int64_t j = 0; j < full; j += N) hn::Store(hn::LoadU(d, row + j), d, out + j);
        for (int64_t j = full; j < cols; ++j) out[j] = row[j];
      }
    } else if (g.b_rs == 1 && g.b_cs != 1) {  // column-major B (e.g. transposed): read columns
      for (int64_t j = 0; j < cols; ++j) {
        const T* HWY_RESTRICT col = src + j * g.b_cs;
        for (int64_t p = 0; p < kc; ++p) panel[p * NR + j] = col[p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t j = 0; j < cols; ++j) panel[p * NR + j] = src[p * g.b_rs + j * g.b_cs];
      }
    }
    if (cols < NR) {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t j = cols; j < NR; ++j) panel[p * NR + j] = T(0);
      }
    }
  }
}

// Stores a full R x V-vector tile of accumulators to C (row r at c + r * c_rs), adding C's old
// values first when accumulating (integers wrap): the straight-line case without an epilogue
// (every k block but the last, plain products, the integer GEMM of matmul_int16-inl.h).
template <int R, int V, class D, typename T = hn::TFromD<D>, class Vec = hn::Vec<D>>
HWY_INLINE void GemmStorePlainTile(D d, const Vec (&acc)[R][V], T* HWY_RESTRICT c, int64_t c_rs,
                                   bool accumulate) {
  const size_t N = hn::Lanes(d);
  if (accumulate) {
    HWY_UNROLL(32)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(32)
      for (int v = 0; v < V; ++v) {
        T* p = c + r * c_rs + v * N;
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

// Stores a full R x V-vector tile of accumulators to C (row r at c + r * c_rs): C's old values
// are added first when accumulating, then the epilogue. The cases without an epilogue (every k
// block but the last, and plain products) get their own straight-line code: with the
// per-element branches of the general case the compiler spilled all accumulators to the stack
// and reloaded them (GCC 12, AVX2: 12 stores and 12 reloads per tile). Same operations either
// way, so the same bits.
template <int R, int V, class D, typename T = hn::TFromD<D>, class Vec = hn::Vec<D>>
HWY_INLINE void GemmStoreFullTile(D d, const Vec (&acc)[R][V], T* HWY_RESTRICT c, int64_t c_rs,
                                  bool accumulate, const GemmTileEpilogue<T>& ep) {
  const size_t N = hn::Lanes(d);
  if (!ep.active()) {
    GemmStorePlainTile<R, V>(d, acc, c, c_rs, accumulate);
    return;
  }
  HWY_UNROLL(32)
  for (int r = 0; r < R; ++r) {
    T* row = c + r * c_rs;
    HWY_UNROLL(32)
    for (int v = 0; v < V; ++v) {
      Vec x = acc[r][v];
      if (accumulate) x = hn::Add(hn::LoadU(d, row + v * N), x);
      x = GemmApplyEpilogue(d, x, ep.bias ? ep.bias + v * N : nullptr, ep.relu);
      hn::StoreU(x, d, row + v * N);
    }
  }
}

// C tile [mr x nr] (+)= packed A panel (kc x MR) · packed B panel (kc x NR), mr <= MR,
// nr <= NR. ap and bp are vector-aligned. Writes only the mr x nr valid elements of C. MR may be
// less than kGemmMR (the first MR rows of a panel, whose columns are still kGemmMR apart).
template <int NRV, int MR = kGemmMR, class D, typename T = hn::TFromD<D>>
HWY_INLINE void GemmMicroKernel(D d, int64_t kc, const T* HWY_RESTRICT ap, const T* HWY_RESTRICT bp,
                                T* HWY_RESTRICT c, int64_t c_rs, int64_t mr, int64_t nr,
                                bool accumulate, const GemmTileEpilogue<T>& ep) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  // C is read (accumulate) or written only after the loop: start fetching its rows now, so the
  // misses of a C that does not fit in cache overlap the arithmetic.
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
  // Two steps of p per iteration (the same FMAs in the same order): one pointer update and one
  // compare-and-branch per 24 FMAs instead of per 12 on AVX2, with no spill (GCC 12).
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    V bv[NRV];
    HWY_UNROLL(32)
    for (int v = 0; v < NRV; ++v) bv[v] = hn::Load(d, bp + v * N);
    HWY_UNROLL(32)
    for (int r = 0; r < MR; ++r) {
      const V av = hn::Set(d, ap[r]);
      HWY_UNROLL(32)
      for (int v = 0; v < NRV; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
    ap += kGemmMR;
    bp += NRV * N;
  }
  if (mr == MR && nr == static_cast<int64_t>(NRV * N)) {
    GemmStoreFullTile<MR, NRV>(d, acc, c, c_rs, accumulate, ep);
    return;
  }
  // Edge tile: spill to a local buffer, then write the valid part.
  HWY_ALIGN T tile[MR * NRV * (HWY_MAX_BYTES / sizeof(T))];
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NRV; ++v) hn::Store(acc[r][v], d, tile + (r * NRV + v) * N);
  }
  GemmStoreEdgeTile<NRV>(d, tile, c, c_rs, mr, nr, accumulate, ep);
}

// The kernel of a panel's last rows (rows < MR), by height.
template <int NRV, class D, typename T = hn::TFromD<D>>
HWY_NOINLINE void GemmPanelTileRows(D d, int64_t kc, const T* HWY_RESTRICT ap,
                                    const T* HWY_RESTRICT bp, T* HWY_RESTRICT c, int64_t c_rs,
                                    int64_t rows, int64_t nr, bool accumulate,
                                    const GemmTileEpilogue<T>& ep) {
  switch (rows) {
#define SHP_GEMM_ROWS_CASE(R)                                                 \
  case R:                                                                     \
    if constexpr (R < kGemmMR) {                                              \
      GemmMicroKernel<NRV, R>(d, kc, ap, bp, c, c_rs, R, nr, accumulate, ep); \
    }                                                                         \
    break;
    SHP_GEMM_ROWS_CASE(1)
    SHP_GEMM_ROWS_CASE(2)
    SHP_GEMM_ROWS_CASE(3)
    SHP_GEMM_ROWS_CASE(4)
    SHP_GEMM_ROWS_CASE(5)
    SHP_GEMM_ROWS_CASE(6)
    SHP_GEMM_ROWS_CASE(7)
#undef SHP_GEMM_ROWS_CASE
    default:
      break;
  }
}

// One tile of a packed A panel with `rows` valid rows: a last panel of fewer than MR rows (m = 64
// on AVX2 ends in a panel of 4) runs a kernel of just those rows instead of computing the zero
// padding (4 x 2 vectors: 8 accumulators, 4 FMAs per broadcast pair instead of 6 of which 2 are
// wasted). Each C element is the same FMA chain whatever the kernel's height.
template <int NRV, class D, typename T = hn::TFromD<D>>
HWY_INLINE void GemmPanelTile(D d, int64_t kc, const T* HWY_RESTRICT ap, const T* HWY_RESTRICT bp,
                              T* HWY_RESTRICT c, int64_t c_rs, int64_t rows, int64_t nr,
                              bool accumulate, const GemmTileEpilogue<T>& ep) {
  if (rows == kGemmMR) {
    GemmMicroKernel<NRV>(d, kc, ap, bp, c, c_rs, rows, nr, accumulate, ep);
    return;
  }
  GemmPanelTileRows<NRV>(d, kc, ap, bp, c, c_rs, rows, nr, accumulate, ep);
}

// Small-m path (few rows of C, B row-major and not pre-packed, A row-major): packing B would
// cost as much as the product, so the kernel reads A and B where they are. R rows of C by V
// vectors of columns; B row p of the tile at b + p * b_rs, A row r at a + r * a_rs. Every C
// element is the same chain of fused multiply-adds in increasing p from 0 as in
// GemmMicroKernel, added to C the same way, so both paths give the same bits.
template <int R, int V, class D, typename T = hn::TFromD<D>>
HWY_INLINE void GemmDirectKernel(D d, int64_t kc, const T* HWY_RESTRICT a, int64_t a_rs,
                                 const T* HWY_RESTRICT b, int64_t b_rs, T* HWY_RESTRICT c,
                                 int64_t c_rs, int64_t nr, bool accumulate,
                                 const GemmTileEpilogue<T>& ep) {
  using V_ = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  V_ acc[R][V];
  HWY_UNROLL(32)
  for (int r = 0; r < R; ++r) {
    HWY_UNROLL(32)
    for (int v = 0; v < V; ++v) acc[r][v] = hn::Zero(d);
  }
  const T* HWY_RESTRICT arow[R];
  HWY_UNROLL(32)
  for (int r = 0; r < R; ++r) arow[r] = a + r * a_rs;
  for (int64_t p = 0; p < kc; ++p) {
    const T* HWY_RESTRICT brow = b + p * b_rs;
    HWY_UNROLL(32)
    for (int r = 0; r < R; ++r) {
      const V_ av = hn::Set(d, arow[r][p]);
      HWY_UNROLL(32)
      for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(av, hn::LoadU(d, brow + v * N), acc[r][v]);
    }
  }
  if (nr == static_cast<int64_t>(V * N)) {
    GemmStoreFullTile<R, V>(d, acc, c, c_rs, accumulate, ep);
    return;
  }
  HWY_ALIGN T tile[R * V * (HWY_MAX_BYTES / sizeof(T))];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) hn::Store(acc[r][v], d, tile + (r * V + v) * N);
  }
  GemmStoreEdgeTile<V>(d, tile, c, c_rs, R, nr, accumulate, ep);
}

// Vectors per tile row of the small-m path for R rows: as many accumulators as the target's
// registers allow (so the FMA latency of one row is hidden by independent columns), at most 8.
template <int R>
constexpr int GemmDirectV() {
  return kGemmAccRegs / R >= 8 ? 8 : (kGemmAccRegs / R < 1 ? 1 : kGemmAccRegs / R);
}

// Rows [i0, i0 + R) x columns [j0, j1) for the k block [p0, p0 + kc), on the small-m path:
// tiles of GemmDirectV<R>() vectors, then single vectors; j1 - j0 is a multiple of the lanes
// (GemmBlock computes the last n % lanes columns on the packed path: nothing past column n
// may be read).
template <int R, class D, typename T = hn::TFromD<D>>
HWY_NOINLINE void GemmDirectRows(D d, const GemmOperands<T>& g, int64_t i0, int64_t j0, int64_t j1,
                                 int64_t p0, int64_t kc, bool accumulate, bool last_block) {
  constexpr int VW = GemmDirectV<R>();
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const T* a = g.a + i0 * g.a_rs + p0;
  const T* b = g.b + p0 * g.b_rs;
  T* c = g.c + i0 * g.c_rs;
  const auto epilogue = [&](int64_t j) {
    GemmTileEpilogue<T> ep;
    if (last_block) {
      ep.bias = g.bias == nullptr ? nullptr : g.bias + j;
      ep.relu = g.relu;
    }
    return ep;
  };
  int64_t j = j0;
  for (; j + VW * N <= j1; j += VW * N) {
    GemmDirectKernel<R, VW>(d, kc, a, g.a_rs, b + j, g.b_rs, c + j, g.c_rs, VW * N, accumulate,
                            epilogue(j));
  }
  for (; j < j1; j += N) {
    GemmDirectKernel<R, 1>(d, kc, a, g.a_rs, b + j, g.b_rs, c + j, g.c_rs, N, accumulate,
                           epilogue(j));
  }
}

// Rows of C up to which a work item takes the small-m path (when its operands allow it): up to
// two row panels read B from cache for less than packing it costs (measured on AVX2 for
// m = 1..32, n = 256, k = 784).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int64_t kGemmDirectMaxRows = 2 * kGemmMR;  // tuned on AVX3 (m = 1..32)
#else
constexpr int64_t kGemmDirectMaxRows = 3 * kGemmMR;  // AVX2: m = 13..18 gain 10-30% over packing
#endif

// True if GemmBlock computes rows [i0, i1) x columns [j0, j1) of g on the small-m path: few
// rows, or a B block of whole vectors small enough to stay in half of the L1 while every row
// panel reads it in place (a 64^3 product: packing B cost 8% of the call, and OpenBLAS ran
// 1.15x ours). Not with a partial last vector: its columns would still take a whole packed
// panel (64 x 10 x 256 on AVX2: 8 columns in place plus a 16-wide panel for the last 2 ran
// 0.65x one panel for all 10).
template <typename T>
HWY_INLINE bool GemmUseDirect(const GemmOperands<T>& g, int64_t i0, int64_t i1, int64_t j0,
                              int64_t j1, int64_t lanes) {
  if (g.b_packed != nullptr || g.b_cs != 1 || g.a_cs != 1) return false;
  if (i1 - i0 <= kGemmDirectMaxRows) return true;
  if ((j1 - j0) % lanes != 0) return false;
  const int64_t b_bytes =
      std::min<int64_t>(g.k, GemmBlocking<T>::kKC) * (j1 - j0) * static_cast<int64_t>(sizeof(T));
  return b_bytes <= GemmCaches().l1d / 2;
}

// GemmBlock on the small-m path, columns [j0, j1) with j1 - j0 a multiple of the lanes: for
// each k block, each panel of up to MR rows.
template <class D, typename T = hn::TFromD<D>>
HWY_NOINLINE void GemmDirect(D d, const GemmOperands<T>& g, int64_t i0, int64_t i1, int64_t j0,
                             int64_t j1) {
  using B = GemmBlocking<T>;
  for (int64_t pc = 0; pc < g.k; pc += B::kKC) {
    const int64_t kc = std::min<int64_t>(B::kKC, g.k - pc);
    const bool accumulate = g.accumulate || pc > 0;
    const bool last = pc + kc == g.k;
    for (int64_t i = i0; i < i1; i += kGemmMR) {
      switch (std::min<int64_t>(kGemmMR, i1 - i)) {
#define SHP_GEMM_DIRECT_CASE(R)                                     \
  case R:                                                           \
    if constexpr (R <= kGemmMR) {                                   \
      GemmDirectRows<R>(d, g, i, j0, j1, pc, kc, accumulate, last); \
    }                                                               \
    break;
        SHP_GEMM_DIRECT_CASE(1)
        SHP_GEMM_DIRECT_CASE(2)
        SHP_GEMM_DIRECT_CASE(3)
        SHP_GEMM_DIRECT_CASE(4)
        SHP_GEMM_DIRECT_CASE(5)
        SHP_GEMM_DIRECT_CASE(6)
        SHP_GEMM_DIRECT_CASE(7)
        SHP_GEMM_DIRECT_CASE(8)
#undef SHP_GEMM_DIRECT_CASE
        default:
          break;
      }
    }
  }
}

// Column tiles of a block up to which GemmBlock reads row-major A in place rather than packing
// it (each A element then feeds at most this many tiles from cache).
constexpr int64_t kGemmDirectAMaxTiles = 2;

// One tile of `rows` (<= MR) rows of C from A read in place (row r at a + r * a_rs) and a
// packed B panel (kc x NRV vectors): GemmDirectKernel, whose C elements are the same chain of
// fused multiply-adds as GemmMicroKernel's, so the result does not depend on the path.
template <int NRV, class D, typename T = hn::TFromD<D>>
HWY_NOINLINE void GemmDirectAPanel(D d, int64_t rows, int64_t kc, const T* HWY_RESTRICT a,
                                   int64_t a_rs, const T* HWY_RESTRICT bp, T* HWY_RESTRICT c,
                                   int64_t c_rs, int64_t nr, bool accumulate,
                                   const GemmTileEpilogue<T>& ep) {
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));
  switch (rows) {
#define SHP_GEMM_DIRECT_A_CASE(R)                                                    \
  case R:                                                                            \
    if constexpr (R <= kGemmMR) {                                                    \
      GemmDirectKernel<R, NRV>(d, kc, a, a_rs, bp, NR, c, c_rs, nr, accumulate, ep); \
    }                                                                                \
    break;
    SHP_GEMM_DIRECT_A_CASE(1)
    SHP_GEMM_DIRECT_A_CASE(2)
    SHP_GEMM_DIRECT_A_CASE(3)
    SHP_GEMM_DIRECT_A_CASE(4)
    SHP_GEMM_DIRECT_A_CASE(5)
    SHP_GEMM_DIRECT_A_CASE(6)
    SHP_GEMM_DIRECT_A_CASE(7)
    SHP_GEMM_DIRECT_A_CASE(8)
#undef SHP_GEMM_DIRECT_A_CASE
    default:
      break;
  }
}

// Panels of B one pass of a few rows (R < MR) of A read in place takes at once: enough that
// R x P x NRV accumulators make 8 independent FMA chains (the FMA latency on two pipes). One
// panel at a time, a batch-1 dense layer ran R x NRV = 2 chains: half the FMA rate of the
// unpacked product (31.8 against 39.5 GFLOP/s at 1x256x784 on AVX3).
template <int R, int NRV>
constexpr int GemmPanelsAtOnce() {
  return 8 / (R * NRV) > 1 ? 8 / (R * NRV) : 1;
}

// R rows of C (R < MR) from A read in place (row r at a + r * a_rs) and P consecutive full
// packed B panels (panel q at bp + q * kc * NR): a tile of R x P * NRV vectors, whose columns
// are contiguous in C. Each C element is the same chain of FMAs in increasing p from 0 as in
// GemmMicroKernel and GemmDirectKernel, stored the same way, so the result does not depend on
// the path. B vectors are loaded where used (each serves R FMAs): 16 registers hold R = 1 x 8.
template <int R, int P, int NRV, class D, typename T = hn::TFromD<D>>
HWY_NOINLINE void GemmDirectAPanelGroup(D d, int64_t kc, const T* HWY_RESTRICT a, int64_t a_rs,
                                        const T* HWY_RESTRICT bp, T* HWY_RESTRICT c, int64_t c_rs,
                                        bool accumulate, const GemmTileEpilogue<T>& ep) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  const int64_t NR = NRV * static_cast<int64_t>(N);
  constexpr int W = P * NRV;
  V acc[R][W];
  HWY_UNROLL(32)
  for (int r = 0; r < R; ++r) {
    HWY_UNROLL(32)
    for (int w = 0; w < W; ++w) acc[r][w] = hn::Zero(d);
  }
  for (int64_t p = 0; p < kc; ++p) {
    V av[R];
    HWY_UNROLL(32)
    for (int r = 0; r < R; ++r) av[r] = hn::Set(d, a[r * a_rs + p]);
    const T* HWY_RESTRICT b = bp + p * NR;
    HWY_UNROLL(32)
    for (int w = 0; w < W; ++w) {
      const V bv = hn::Load(d, b + (w / NRV) * kc * NR + (w % NRV) * static_cast<int64_t>(N));
      HWY_UNROLL(32)
      for (int r = 0; r < R; ++r) acc[r][w] = hn::MulAdd(av[r], bv, acc[r][w]);
    }
  }
  GemmStoreFullTile<R, W>(d, acc, c, c_rs, accumulate, ep);
}

// The columns [0, nc) of `rows` (< MR) rows that GemmDirectAPanelGroup computes, P full panels
// at a time (tile_ep(jr): the epilogue of the tiles at column jr). Returns the first column
// left to the one-panel loop (0 when one panel already gives 8 chains).
template <int NRV, class D, class EpilogueAt, typename T = hn::TFromD<D>>
HWY_INLINE int64_t GemmDirectAPanelGroups(D d, int64_t rows, int64_t kc, const T* a, int64_t a_rs,
                                          const T* bpanels, int64_t nc, T* c, int64_t c_rs,
                                          bool accumulate, const EpilogueAt& tile_ep) {
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));
  int64_t jr = 0;
  switch (rows) {
#define SHP_GEMM_GROUP_CASE(R)                                                                  \
  case R:                                                                                       \
    if constexpr (R < kGemmMR && GemmPanelsAtOnce<R, NRV>() > 1) {                              \
      constexpr int P = GemmPanelsAtOnce<R, NRV>();                                             \
      for (; jr + P * NR <= nc; jr += P * NR) {                                                 \
        GemmDirectAPanelGroup<R, P, NRV>(d, kc, a, a_rs, bpanels + (jr / NR) * kc * NR, c + jr, \
                                         c_rs, accumulate, tile_ep(jr));                        \
      }                                                                                         \
    }                                                                                           \
    break;
    SHP_GEMM_GROUP_CASE(1)
    SHP_GEMM_GROUP_CASE(2)
    SHP_GEMM_GROUP_CASE(3)
    SHP_GEMM_GROUP_CASE(4)
#undef SHP_GEMM_GROUP_CASE
    default:
      break;
  }
  return jr;
}

// Packs all of B[k, n] (B[p, j] = b[p * rs + j * cs]) the way GemmBlock reads it: for each k
// block [pc, pc + kc) of kKC rows, ceil(n / NR) panels of kc x NR values at
// dst[pc * n_padded + q * kc * NR], n_padded = ceil(n / NR) * NR.
template <int NRV, class D, typename T = hn::TFromD<D>>
HWY_NOINLINE void GemmPackAll(D d, const T* b, int64_t k, int64_t n, int64_t rs, int64_t cs,
                              T* HWY_RESTRICT dst) {
  using B = GemmBlocking<T>;
  if (n == 0) return;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));
  const int64_t n_padded = (n + NR - 1) / NR * NR;
  GemmOperands<T> g{};
  g.b = b;
  g.b_rs = rs;
  g.b_cs = cs;
  g.k = k;
  for (int64_t pc = 0; pc < k; pc += B::kKC) {
    GemmPackB<NRV>(d, g, pc, std::min<int64_t>(B::kKC, k - pc), 0, n, dst + pc * n_padded);
  }
}

// Computes rows [i0, i1) x columns [j0, j1) (j0 a multiple of NR) of one product g (all of k),
// using the caller's pack buffers (apack: kMC x kKC values, bpack: kKC x roundup(kNC, NR)
// values, both aligned; bpack is unused when g.b_packed is set).
template <int NRV, class D, typename T = hn::TFromD<D>>
HWY_NOINLINE void GemmBlock(D d, const GemmOperands<T>& g, int64_t i0, int64_t i1, int64_t j0,
                            int64_t j1, T* HWY_RESTRICT apack, T* HWY_RESTRICT bpack) {
  using B = GemmBlocking<T>;
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));
  // Column blocks of whole tiles, so a block of pre-packed panels starts at a panel boundary.
  const int64_t nc_step = std::max<int64_t>(NR, B::NC() / NR * NR);
  if (g.k == 0) {  // empty sum
    if (!g.accumulate) {
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) g.c[i * g.c_rs + j] = T(0);
      }
      if (g.bias != nullptr || g.relu) {  // the epilogue on the zeros, tile by tile
        HWY_ALIGN T tile[MR * NRV * (HWY_MAX_BYTES / sizeof(T))] = {};
        for (int64_t i = i0; i < i1; i += MR) {
          for (int64_t j = j0; j < j1; j += NR) {
            std::fill(tile, tile + MR * NR, T(0));
            GemmTileEpilogue<T> ep{g.bias == nullptr ? nullptr : g.bias + j, g.relu};
            GemmStoreEdgeTile<NRV>(d, tile, g.c + i * g.c_rs + j, g.c_rs,
                                   std::min<int64_t>(MR, i1 - i), std::min<int64_t>(NR, j1 - j),
                                   false, ep);
          }
        }
      }
    }
    return;
  }
  if (GemmUseDirect(g, i0, i1, j0, j1, static_cast<int64_t>(hn::Lanes(d)))) {
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    const int64_t j_split = j0 + (j1 - j0) / N * N;
    if (j_split > j0) GemmDirect(d, g, i0, i1, j0, j_split);
    j0 = j_split;  // the last (j1 - j0) % N columns: packed below
  }
  for (int64_t jc = j0; jc < j1; jc += nc_step) {
    const int64_t nc = std::min<int64_t>(nc_step, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += B::kKC) {
      const int64_t kc = std::min<int64_t>(B::kKC, g.k - pc);
      const bool accumulate = g.accumulate || pc > 0;
      const bool last = pc + kc == g.k;
      // A block with few column tiles, or fewer rows than a panel (a pre-packed B at batch
      // 1-5), reads A where it is (row-major A): packing it would cost about as much as the
      // tiles it serves (e.g. n = 10), or pad the tiles with rows of zeros.
      const bool direct_a = g.a_cs == 1 && (nc <= kGemmDirectAMaxTiles * NR || i1 - i0 < MR);
      // With one row block (<= MC rows, e.g. an MLP layer at batch 19-252), each B panel serves
      // one pass of A only: it is packed right before its tiles, into an L1-sized buffer, instead
      // of packing the whole block first and reading it back from L2. Same panels, same bits.
      const bool panel_at_a_time = g.b_packed == nullptr && !direct_a && i1 - i0 <= B::MC();
      const T* bpanels = bpack;
      if (g.b_packed != nullptr) {
        bpanels = g.b_packed + pc * g.b_packed_rs + (jc / NR) * kc * NR;
      } else if (!panel_at_a_time) {
        GemmPackB<NRV>(d, g, pc, kc, jc, nc, bpack);
      }
      // The epilogue of the tiles at column jr of this block: only after its last k block.
      auto tile_epilogue = [&](int64_t jr) {
        GemmTileEpilogue<T> ep;
        if (last) {
          ep.bias = g.bias == nullptr ? nullptr : g.bias + jc + jr;
          ep.relu = g.relu;
        }
        return ep;
      };
      if (direct_a) {
        int64_t jr0 = 0;
        if (i1 - i0 < MR) {
          jr0 = GemmDirectAPanelGroups<NRV>(d, i1 - i0, kc, g.a + i0 * g.a_rs + pc, g.a_rs, bpanels,
                                            nc, g.c + i0 * g.c_rs + jc, g.c_rs, accumulate,
                                            tile_epilogue);
        }
        for (int64_t jr = jr0; jr < nc; jr += NR) {
          const T* bp = bpanels + (jr / NR) * kc * NR;
          const GemmTileEpilogue<T> ep = tile_epilogue(jr);
          for (int64_t i = i0; i < i1; i += MR) {
            GemmDirectAPanel<NRV>(d, std::min<int64_t>(MR, i1 - i), kc, g.a + i * g.a_rs + pc,
                                  g.a_rs, bp, g.c + i * g.c_rs + jc + jr, g.c_rs,
                                  std::min<int64_t>(NR, nc - jr), accumulate, ep);
          }
        }
        continue;
      }
      for (int64_t ic = i0; ic < i1; ic += B::MC()) {
        const int64_t mc = std::min<int64_t>(B::MC(), i1 - ic);
        GemmPackA(g, ic, mc, pc, kc, apack);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const T* bp = bpanels + (jr / NR) * kc * NR;
          if (panel_at_a_time) {
            GemmPackB<NRV>(d, g, pc, kc, jc + jr, std::min<int64_t>(NR, nc - jr), bpack);
            bp = bpack;
          }
          const GemmTileEpilogue<T> ep = tile_epilogue(jr);
          for (int64_t ir = 0; ir < mc; ir += MR) {
            GemmPanelTile<NRV>(
                d, kc, apack + (ir / MR) * kc * MR, bp, g.c + (ic + ir) * g.c_rs + jc + jr, g.c_rs,
                std::min<int64_t>(MR, mc - ir), std::min<int64_t>(NR, nc - jr), accumulate, ep);
          }
        }
      }
    }
  }
}

// Per-thread packing buffer `slot` (0: A, 1: B) of at least n elements, vector-aligned. Kept
// for the thread's lifetime and grown on demand (at most KC x (NC + NR) elements for B, i.e.
// 4 MiB for float), so repeated calls pay no allocation or page faults. Throws std::bad_alloc
// if the memory cannot be allocated (ThreadScratch: no thread_local with a destructor).
template <typename T>
static HWY_INLINE T* GemmScratch(int slot, size_t n) {
  static_assert(HWY_ALIGNMENT <= 64, "ThreadScratch aligns to 64 bytes");
  return static_cast<T*>(
      ThreadScratch(slot == 0 ? kScratchMatmulA : kScratchMatmulB, n * sizeof(T)));
}

// How a product is split into work items (batch index x row tile x column tile): enough
// items for every thread, cut along rows (multiples of MR) first, or columns (multiples of
// NR) first when m < n. Small products stay one item per batch index (thread wake-up would
// dominate). Row tiles differ by at most one MR-row panel. With a pre-packed B (no per-item
// packing of B), a row split is cut finer, into up to kGemmItemsPerThread items per thread of
// at least kGemmMinItemPanels row panels, which the threads claim as they go
// (ParallelForEach): with one fixed half per thread, a worker that started late or was
// preempted (a loaded machine, or the other core busy) left the caller idle waiting for its
// whole half; now the caller takes over the items the worker has not reached (an MLP layer at
// batch 256: 8 items of 5-6 panels; quiet, each thread still runs 21-22 of the 43 panels).
constexpr int64_t kGemmItemsPerThread = 4;
constexpr int64_t kGemmMinItemPanels = 4;

struct GemmSplit {
  // Row tile t spans row panels [t * m_q + min(t, m_r), ...) of MR rows: m_q or m_q + 1 panels
  // (the m_r first tiles one more), so no tile is more than a panel larger than another.
  int64_t m_q, m_r;
  int64_t m_step, n_step, m_tiles, n_tiles, items;  // m_step: rows of the largest row tile
  bool parallel;
  bool dynamic;  // pre-packed B, more items than threads: claimed one at a time
};

HWY_INLINE GemmSplit SplitGemmWork(const MatmulParams& prm, int64_t batch, int64_t MR, int64_t NR,
                                   bool b_prepacked, ThreadPool* pool) {
  const int threads = pool == nullptr ? 1 : pool->num_threads();
  const double macs = static_cast<double>(batch) * static_cast<double>(prm.m) *
                      static_cast<double>(prm.n) * static_cast<double>(std::max<int64_t>(prm.k, 1));
  GemmSplit sp;
  sp.m_tiles = 1;
  sp.n_tiles = 1;
  sp.parallel = threads > 1 && macs >= static_cast<double>(1 << 20);
  if (sp.parallel && batch < threads) {
    const int64_t want = (threads + batch - 1) / batch;
    const int64_t m_blocks = (prm.m + MR - 1) / MR;
    const int64_t n_blocks = (prm.n + NR - 1) / NR;
    // Each thread packs (or reads) all of the operand along the dimension not split: split C's
    // columns when A is the smaller one (m < n, e.g. an MLP layer at batch 16-64: rows of 6
    // would also split unevenly), else its rows.
    if (prm.m < prm.n) {
      sp.n_tiles = std::min<int64_t>(want, n_blocks);
      sp.m_tiles = std::min<int64_t>((want + sp.n_tiles - 1) / sp.n_tiles, m_blocks);
    } else {
      int64_t want_m = want;
      if (b_prepacked) {
        want_m = std::max<int64_t>(
            want, std::min<int64_t>(kGemmItemsPerThread * want, m_blocks / kGemmMinItemPanels));
      }
      sp.m_tiles = std::min<int64_t>(want_m, m_blocks);
      sp.n_tiles = std::min<int64_t>((want + sp.m_tiles - 1) / sp.m_tiles, n_blocks);
    }
  }
  const int64_t m_panels = (prm.m + MR - 1) / MR;
  sp.m_tiles = std::min(sp.m_tiles, m_panels);
  sp.m_q = m_panels / sp.m_tiles;
  sp.m_r = m_panels % sp.m_tiles;
  sp.m_step = (sp.m_q + (sp.m_r > 0 ? 1 : 0)) * MR;
  sp.n_step = ((prm.n + sp.n_tiles - 1) / sp.n_tiles + NR - 1) / NR * NR;
  sp.n_tiles = (prm.n + sp.n_step - 1) / sp.n_step;
  sp.items = batch * sp.m_tiles * sp.n_tiles;
  sp.dynamic = sp.parallel && b_prepacked && sp.items > threads;
  return sp;
}

// Work item `item`: its rows [i0, i1), columns [j0, j1) and the batch offsets of A, B and C.
struct GemmItem {
  int64_t i0, i1, j0, j1, off_a, off_b, off_c;
};

HWY_INLINE GemmItem GemmItemAt(const MatmulParams& prm, const GemmSplit& sp, int64_t item) {
  int64_t t = item / (sp.m_tiles * sp.n_tiles);
  const int64_t tile = item % (sp.m_tiles * sp.n_tiles);
  GemmItem it{};
  const int64_t tm = tile / sp.n_tiles;
  const int64_t MR = kGemmMR;
  it.i0 = std::min(prm.m, (tm * sp.m_q + std::min(tm, sp.m_r)) * MR);
  it.i1 = std::min(prm.m, ((tm + 1) * sp.m_q + std::min(tm + 1, sp.m_r)) * MR);
  it.j0 = tile % sp.n_tiles * sp.n_step;
  it.j1 = std::min(prm.n, it.j0 + sp.n_step);
  for (int dim = prm.batch_rank - 1; dim >= 0; --dim) {
    const int64_t idx = t % prm.batch_dims[dim];
    t /= prm.batch_dims[dim];
    it.off_a += idx * prm.a_batch_strides[dim];
    it.off_b += idx * prm.b_batch_strides[dim];
    it.off_c += idx * prm.c_batch_strides[dim];
  }
  return it;
}

// Runs fn(begin, end) over the items, on the pool when the split says it pays.
template <typename F>
HWY_INLINE void RunGemmItems(const GemmSplit& sp, ThreadPool* pool, const F& fn) {
  if (sp.dynamic) {
    ParallelForEach(pool, sp.items, fn);
  } else if (sp.parallel && sp.items > 1) {
    ParallelFor(pool, sp.items, 1, fn);
  } else {
    fn(0, sp.items);
  }
}

// The MatmulParams driver for T = float or double with NRV vectors per tile row: splits the
// work into items (batch index x row range x column range of C), each computed by GemmBlock,
// and runs the items on the pool when the product is large enough to pay for the threads.
// B comes from b (strided) or, if b_packed is set, from GemmPackAll panels (row stride
// b_packed_rs). REQUIRES: ValidMatmulParams(prm), and a non-empty product.
template <int NRV, typename T>
HWY_NOINLINE void MatmulFloatNRV(const MatmulParams& prm, int64_t batch, const T* a, const T* b,
                                 const T* b_packed, int64_t b_packed_rs, T* c,
                                 const GemmTileEpilogue<T>& ep, ThreadPool* pool) {
  const hn::ScalableTag<T> d;
  using B = GemmBlocking<T>;
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));

  const GemmSplit sp = SplitGemmWork(prm, batch, MR, NR, b_packed != nullptr, pool);
  const auto run = [&](int64_t begin, int64_t end) {
    const int64_t nc_max = std::min<int64_t>(B::NC(), sp.n_step);
    const int64_t mc_max = std::min<int64_t>(B::MC(), sp.m_step);
    const int64_t kc_max = std::min<int64_t>(B::kKC, std::max<int64_t>(prm.k, 1));
    T* apack = GemmScratch<T>(0, static_cast<size_t>((mc_max + MR) * kc_max));
    T* bpack = b_packed != nullptr ? nullptr
                                   : GemmScratch<T>(1, static_cast<size_t>((nc_max + NR) * kc_max));
    for (int64_t item = begin; item < end; ++item) {
      const GemmItem it = GemmItemAt(prm, sp, item);
      GemmOperands<T> g;
      g.a = a == nullptr ? nullptr : a + it.off_a;
      g.a_rs = prm.a_row_stride;
      g.a_cs = prm.a_col_stride;
      g.b = b == nullptr ? nullptr : b + it.off_b;
      g.b_rs = prm.b_row_stride;
      g.b_cs = prm.b_col_stride;
      g.b_packed = b_packed;
      g.b_packed_rs = b_packed_rs;
      g.c = c + it.off_c;
      g.c_rs = prm.c_row_stride;
      g.k = prm.k;
      g.accumulate = prm.accumulate;
      g.bias = ep.bias;
      g.relu = ep.relu;
      GemmBlock<NRV>(d, g, it.i0, it.i1, it.j0, it.j1, apack, bpack);
    }
  };
  RunGemmItems(sp, pool, run);
}

// The driver shared by MatmulF32/F64 and MatmulF32Prepacked: validates, picks the tile width by
// GemmNRV (a pre-packed B must have been packed with that width: packed_nrv) and runs
// MatmulFloatNRV. Returns false, writing nothing, for invalid params, a width mismatch or an
// epilogue with accumulate.
template <typename T>
HWY_INLINE bool MatmulFloatDriver(const MatmulParams& prm, const T* a, const T* b,
                                  const T* b_packed, int64_t b_packed_rs, int packed_nrv, T* c,
                                  const GemmTileEpilogue<T>& ep, ThreadPool* pool) {
  if (!ValidMatmulParams(prm)) return false;
  if (ep.active() && prm.accumulate) return false;
  const hn::ScalableTag<T> d;
  const int nrv = GemmNRV(prm.n, static_cast<int64_t>(hn::Lanes(d)));
  if (b_packed != nullptr && packed_nrv != nrv) return false;
  int64_t batch = 1;
  for (int i = 0; i < prm.batch_rank; ++i) batch *= prm.batch_dims[i];
  if (batch == 0 || prm.m == 0 || prm.n == 0) return true;
  switch (nrv) {
    case 1:
      MatmulFloatNRV<1>(prm, batch, a, b, b_packed, b_packed_rs, c, ep, pool);
      break;
    case 2:
      MatmulFloatNRV<2>(prm, batch, a, b, b_packed, b_packed_rs, c, ep, pool);
      break;
    default:
      MatmulFloatNRV<kGemmNRV>(prm, batch, a, b, b_packed, b_packed_rs, c, ep, pool);
      break;
  }
  return true;
}

// MatmulF32 / MatmulF64 on this target (the epilogue: MatmulEpilogue for f32, none for f64).
template <typename T>
HWY_INLINE bool MatmulFloatImpl(const MatmulParams& prm, const T* a, const T* b, T* c,
                                ThreadPool* pool, const GemmTileEpilogue<T>& ep = {}) {
  return MatmulFloatDriver<T>(prm, a, b, nullptr, 0, 0, c, ep, pool);
}

// PackedMatrixF32::Pack on this target: the panels GemmBlock reads for all of B, in a 64-byte
// aligned std::aligned_alloc buffer the caller owns (throws std::bad_alloc). Writes the layout
// to *nrv, *lanes, *n_padded and the number of floats to *size.
HWY_INLINE float* PackF32Impl(const float* b, int64_t k, int64_t n, int64_t rs, int64_t cs,
                              int32_t* nrv, int32_t* lanes, int64_t* n_padded, size_t* size) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int w = GemmNRV(n, N);
  *nrv = w;
  *lanes = static_cast<int32_t>(N);
  *n_padded = (n + w * N - 1) / (w * N) * (w * N);
  *size = static_cast<size_t>(k * *n_padded);
  const size_t bytes = (std::max<size_t>(*size, 1) * sizeof(float) + 63) / 64 * 64;
  float* data = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (data == nullptr) throw std::bad_alloc();
  switch (w) {
    case 1:
      GemmPackAll<1>(d, b, k, n, rs, cs, data);
      break;
    case 2:
      GemmPackAll<2>(d, b, k, n, rs, cs, data);
      break;
    default:
      GemmPackAll<kGemmNRV>(d, b, k, n, rs, cs, data);
      break;
  }
  return data;
}

// MatmulF32PanelLayout on this target.
HWY_INLINE PanelLayoutF32 PanelLayoutF32Impl(int64_t n) {
  const hn::ScalableTag<float> d;
  PanelLayoutF32 layout;
  layout.lanes = static_cast<int32_t>(hn::Lanes(d));
  layout.nrv = GemmNRV(n, layout.lanes);
  layout.kc = GemmBlocking<float>::kKC;
  return layout;
}

// MatmulF32PrepackedPanels on this target (with an epilogue for MatmulF32Prepacked): false
// unless B is broadcast over the batch, `layout` is this target's for prm.n and the panels are
// vector-aligned (the micro-kernels load them with aligned loads).
HWY_INLINE bool MatmulF32PanelsImpl(const MatmulParams& prm, const float* a, const float* panels,
                                    const PanelLayoutF32& layout, float* c,
                                    const GemmTileEpilogue<float>& ep, ThreadPool* pool) {
  for (int i = 0; i < prm.batch_rank && i < kMaxMatmulBatchRank; ++i) {
    if (prm.b_batch_strides[i] != 0) return false;
  }
  const PanelLayoutF32 want = PanelLayoutF32Impl(prm.n);
  if (layout.lanes != want.lanes || layout.nrv != want.nrv || layout.kc != want.kc) return false;
  if (panels == nullptr && prm.k > 0 && prm.n > 0) return false;
  if (reinterpret_cast<uintptr_t>(panels) % (want.lanes * sizeof(float)) != 0) return false;
  return MatmulFloatDriver<float>(prm, a, nullptr, panels, layout.n_padded(prm.n), layout.nrv, c,
                                  ep, pool);
}

// MatmulF32Prepacked on this target: B must have been packed by this target (lanes and width).
HWY_INLINE bool MatmulF32PrepackedImpl(const MatmulParams& prm, const float* a,
                                       const PackedMatrixF32& pb, float* c,
                                       const GemmTileEpilogue<float>& ep, ThreadPool* pool) {
  if (pb.empty() || prm.k != pb.k() || prm.n != pb.n()) return false;
  PanelLayoutF32 layout;
  layout.nrv = pb.nrv();
  layout.lanes = pb.lanes();
  layout.kc = GemmBlocking<float>::kKC;
  return MatmulF32PanelsImpl(prm, a, pb.panels(), layout, c, ep, pool);
}

// Integer matmul: row i of C accumulates A[i, p] * B[p, :] over p (unit-stride inner loop when
// B's rows are contiguous, which compilers vectorize). U is the unsigned type of T, so every
// product and sum wraps modulo 2^bits; the final conversion back to T is modular (GCC/Clang).
template <typename T>
HWY_INLINE bool MatmulIntImpl(const MatmulParams& prm, const T* a, const T* b, T* c,
                              ThreadPool* pool) {
  using U = std::make_unsigned_t<T>;
  if (!ValidMatmulParams(prm)) return false;
  int64_t batch = 1;
  for (int i = 0; i < prm.batch_rank; ++i) batch *= prm.batch_dims[i];
  if (batch == 0 || prm.m == 0 || prm.n == 0) return true;
  const int64_t rows = batch * prm.m;
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t t = row / prm.m;
      const int64_t i = row % prm.m;
      int64_t off_a = 0, off_b = 0, off_c = 0;
      for (int dim = prm.batch_rank - 1; dim >= 0; --dim) {
        const int64_t idx = t % prm.batch_dims[dim];
        t /= prm.batch_dims[dim];
        off_a += idx * prm.a_batch_strides[dim];
        off_b += idx * prm.b_batch_strides[dim];
        off_c += idx * prm.c_batch_strides[dim];
      }
      T* HWY_RESTRICT crow = c + off_c + i * prm.c_row_stride;
      if (!prm.accumulate) {
        for (int64_t j = 0; j < prm.n; ++j) crow[j] = T(0);
      }
      for (int64_t p = 0; p < prm.k; ++p) {
        const U av = static_cast<U>(a[off_a + i * prm.a_row_stride + p * prm.a_col_stride]);
        const T* HWY_RESTRICT brow = b + off_b + p * prm.b_row_stride;
        if (prm.b_col_stride == 1) {
          for (int64_t j = 0; j < prm.n; ++j) {
            crow[j] = static_cast<T>(static_cast<U>(crow[j]) + av * static_cast<U>(brow[j]));
          }
        } else {
          for (int64_t j = 0; j < prm.n; ++j) {
            crow[j] = static_cast<T>(static_cast<U>(crow[j]) +
                                     av * static_cast<U>(brow[j * prm.b_col_stride]));
          }
        }
      }
    }
  };
  const double macs = static_cast<double>(rows) * static_cast<double>(prm.n) *
                      static_cast<double>(std::max<int64_t>(prm.k, 1));
  if (pool != nullptr && macs >= static_cast<double>(1 << 18)) {
    const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((1 << 16) / (macs / rows)));
    ParallelFor(pool, rows, grain, run);
  } else {
    run(0, rows);
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
