// Per-target code of the band convolution kernel (ConvMethod::kBand, conv.h) and the conv
// epilogue (ConvEpilogue) it applies as it stores. A Highway "-inl.h" header: foreach_target.h
// re-includes it once per target (from conv.cc, after conv-inl.h), so it has a per-target
// include guard.

#if defined(SHAPEPOLY_CC_KERNELS_CONV_BAND_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_CONV_BAND_INL_H_
#undef SHAPEPOLY_CC_KERNELS_CONV_BAND_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_CONV_BAND_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "cc/kernels/conv.h"
#include "cc/kernels/conv_geom.h"
#include "cc/kernels/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- The band kernel (ConvMethod::kBand): an implicit GEMM over zero-padded row bands ----
//
// For convs on 1 or 2 spatial axes without input dilation, strides up to kBandMaxStride. A
// band of output rows [i0, i0 + R) reads padded input rows sh * i0 .. sh * (i0 + R - 1) +
// (kh - 1) * dh. Each channel's part of them is copied into a per-worker buffer as sh * sw
// phase planes: plane (rho, sigma) holds the padded rows sh * u + rho and columns sw * v + sigma
// as rows of wp = out_w + ((kw - 1) * dw) / sw (zeros for padding; with stride 1, one plane of
// the padded rows). Output (i, j) of the band sits at flat position q = i * wp + j, and its tap
// (a, b) reads flat position q + (a * dh / sh) * wp + b * dw / sw of plane (a * dh % sh,
// b * dw % sw) of every channel: the im2col matrix without being written. A register tile of
// MR output channels x NRV vectors of flat positions accumulates sum over (channel, tap) of
// w * x by FMAs (the weights broadcast where they are, the positions loaded unaligned);
// positions j >= out_w of a row (the columns between rows) are computed and dropped. Channels
// go in blocks that fit the buffer; the first block stores its sums, the others add theirs (a
// fixed order for given shapes). Work items are (batch, group, band): each output is computed
// by one thread, so the result does not depend on the thread count.

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kBandMR = 8;   // output channels per tile: 8 x 3 vectors = 24 accumulators
constexpr int kBandNRV = 3;  // of 32 registers, + 3 input vectors + 1 broadcast
#else
constexpr int kBandMR = 6;  // 6 x 2 = 12 accumulators + 2 + 1 of 16 registers
constexpr int kBandNRV = 2;
#endif
constexpr int64_t kBandElements = 32768;  // the padded band copy of one worker (stack)
constexpr int64_t kBandMaxTaps = 64;
constexpr int64_t kBandMaxStride = 4;

// A band decomposition of a conv for the target's tile (BandPlanFor).
struct BandPlan {
  int64_t wp = 0;        // a phase row: out_w + ((kw - 1) * dw) / sw positions
  int64_t rows = 0;      // output rows per band
  int64_t bands = 0;     // per (batch, group)
  int64_t in_rows = 0;   // phase rows per band: rows + ((kh - 1) * dh) / sh
  int64_t plane = 0;     // elements of a phase plane: in_rows * wp
  int64_t cstride = 0;   // buffer elements per channel: sh * sw phase planes and slack
  int64_t cb = 0;        // channels per block
  int64_t computed = 0;  // flat positions computed per (batch, group, output channel)
};

// The fraction of computed positions that are outputs below which the im2col path is kept
// (Zen 4, 3x3: the band kernel won at 56x56 to 14x14, 95 against 74 GFLOP/s at 56x56, 87
// against 82 at 14x14 (use 0.82); 7x7 (use 0.51) ran 53 against 70). 1x1 convs keep the matmul
// (50-80 against 77-102 GFLOP/s: one tap per channel leaves too little work per loaded row);
// strided ones gain too (the 7x7 s2 stem 68 -> 80, 3x3 s2 at 56x56 and 28x28 69 -> 75, 63 -> 76).
constexpr double kBandMinUse = 0.8;

// Whether the band kernel takes p (f32) and how: false for other convs or when too many
// computed positions would be dropped (narrow rows: 7x7 maps keep 7 of every 9 columns).
template <class T>
bool BandPlanFor(const ConvGeom& g, BandPlan* bp) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  const int64_t nr = kBandNRV * lanes;
  if (g.k[0] != 1 || g.in[0] != 1 || g.out[0] != 1 || g.s[1] > kBandMaxStride ||
      g.s[2] > kBandMaxStride || g.ld[1] != 1 || g.ld[2] != 1 || g.cg * g.k_plane < 16 ||
      g.k_plane < 2 || g.k_plane > kBandMaxTaps || g.out_plane == 0) {
    return false;
  }
  const int64_t oh = g.out[1], ow = g.out[2], phases = g.s[1] * g.s[2];
  const int64_t wp = ow + (g.k[2] - 1) * g.d[2] / g.s[2];
  const int64_t span = (g.k[1] - 1) * g.d[1] / g.s[1];
  // The rows per band with the least cost: positions computed (whole tiles per band), plus 5%
  // per extra channel block (its sums are added to the output's), among bands whose padded
  // rows fit the buffer for at least one channel; at least 2 bands (work items) when there are
  // 2 rows.
  int64_t best = 0, best_computed = 0, best_cb = 0;
  double best_cost = 0;
  const int64_t max_rows = oh >= 2 ? (oh + 1) / 2 : 1;
  for (int64_t r = 1; r <= max_rows; ++r) {
    const int64_t cstride = (phases * (r + span) * wp + nr + wp + lanes - 1) / lanes * lanes;
    const int64_t cb_max = std::min(g.cg, kBandElements / cstride);
    if (cb_max < 1) break;
    const int64_t blocks = (g.cg + cb_max - 1) / cb_max;
    const int64_t full = oh / r, last = oh % r;
    const int64_t computed =
        full * ((r * wp + nr - 1) / nr * nr) + (last > 0 ? (last * wp + nr - 1) / nr * nr : 0);
    const double cost =
        static_cast<double>(computed) * (1.0 + 0.05 * static_cast<double>(blocks - 1));
    if (best == 0 || cost <= best_cost) {
      best = r;
      best_computed = computed;
      best_cost = cost;
      best_cb = (g.cg + blocks - 1) / blocks;
    }
  }
  if (best == 0) return false;
  if (static_cast<double>(oh * ow) < kBandMinUse * static_cast<double>(best_computed)) return false;
  bp->wp = wp;
  bp->rows = best;
  bp->bands = (oh + best - 1) / best;
  bp->in_rows = best + span;
  bp->plane = bp->in_rows * wp;
  bp->cstride = (phases * bp->plane + nr + wp + lanes - 1) / lanes * lanes;
  bp->cb = best_cb;
  bp->computed = best_computed;
  return true;
}

// MR x (kBandNRV vectors) tile at flat position 0 of `band` (channel c at band + c * cstride):
// sum over c < cb and taps t of w[r * w_os + c * ntaps + t] * band[c][taps[t] + position],
// spilled to tile[r * NR + position].
template <int MR, class T>
HWY_NOINLINE void BandTile(const T* HWY_RESTRICT band, int64_t cstride, int64_t cb,
                           const int64_t* HWY_RESTRICT taps, int64_t ntaps, const T* HWY_RESTRICT w,
                           int64_t w_os, T* HWY_RESTRICT tile) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int NRV = kBandNRV;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  V acc[MR][NRV];
  HWY_UNROLL(8)
  for (int r = 0; r < MR; ++r) {
    HWY_UNROLL(3)
    for (int v = 0; v < NRV; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int64_t c = 0; c < cb; ++c) {
    const T* HWY_RESTRICT xc = band + c * cstride;
    const T* HWY_RESTRICT wc = w + c * ntaps;
    for (int64_t t = 0; t < ntaps; ++t) {
      const T* xt = xc + taps[t];
      V xv[NRV];
      HWY_UNROLL(3)
      for (int v = 0; v < NRV; ++v) xv[v] = hn::LoadU(d, xt + v * N);
      HWY_UNROLL(8)
      for (int r = 0; r < MR; ++r) {
        const V wv = hn::Set(d, wc[r * w_os + t]);
        HWY_UNROLL(3)
        for (int v = 0; v < NRV; ++v) acc[r][v] = hn::MulAdd(wv, xv[v], acc[r][v]);
      }
    }
  }
  HWY_UNROLL(8)
  for (int r = 0; r < MR; ++r) {
    HWY_UNROLL(3)
    for (int v = 0; v < NRV; ++v) hn::Store(acc[r][v], d, tile + r * NRV * N + v * N);
  }
}

template <class T>
void BandTileN(int mr, const T* band, int64_t cstride, int64_t cb, const int64_t* taps,
               int64_t ntaps, const T* w, int64_t w_os, T* tile) {
  switch (mr) {
#define SHP_BAND_TILE_CASE(R)                                                               \
  case R:                                                                                   \
    if constexpr (R <= kBandMR) BandTile<R>(band, cstride, cb, taps, ntaps, w, w_os, tile); \
    break;
    SHP_BAND_TILE_CASE(1)
    SHP_BAND_TILE_CASE(2)
    SHP_BAND_TILE_CASE(3)
    SHP_BAND_TILE_CASE(4)
    SHP_BAND_TILE_CASE(5)
    SHP_BAND_TILE_CASE(6)
    SHP_BAND_TILE_CASE(7)
    SHP_BAND_TILE_CASE(8)
#undef SHP_BAND_TILE_CASE
    default:
      break;
  }
}

// Copies channels [c0, c0 + cb) of plane group xg into buf: for the band starting at output
// row i0, phase plane (rho, sigma) of a channel holds the padded input rows sh * (i0 + u) + rho
// and columns sw * v + sigma (u < in_rows, v < wp), zeros for padding, then slack zeros.
template <class T>
void BandCopy(const ConvGeom& g, const BandPlan& bp, const T* xg, int64_t c0, int64_t cb,
              int64_t i0, T* HWY_RESTRICT buf) {
  const int64_t wp = bp.wp, sh = g.s[1], sw = g.s[2], pl2 = g.pl[2], w_in = g.in[2];
  for (int64_t c = 0; c < cb; ++c) {
    T* dst = buf + c * bp.cstride;
    const T* xc = xg + (c0 + c) * g.in_plane;
    for (int64_t rho = 0; rho < sh; ++rho) {
      for (int64_t sigma = 0; sigma < sw; ++sigma) {
        // Phase columns v whose input column sw * v + sigma - pl2 is in [0, w_in): [lo, hi).
        const int64_t first = pl2 - sigma;  // sw * v >= first
        int64_t lo = first <= 0 ? 0 : (first + sw - 1) / sw;
        const int64_t last = w_in + pl2 - sigma;  // sw * v < last
        int64_t hi = last <= 0 ? 0 : (last + sw - 1) / sw;
        lo = std::min(lo, wp);
        hi = std::max(lo, std::min(hi, wp));
        T* plane = dst + (rho * sw + sigma) * bp.plane;
        for (int64_t r = 0; r < bp.in_rows; ++r) {
          T* row = plane + r * wp;
          const int64_t i = sh * (i0 + r) + rho - g.pl[1];
          if (i < 0 || i >= g.in[1] || hi <= lo) {
            std::fill(row, row + wp, T(0));
            continue;
          }
          const T* xr = xc + i * w_in;  // phase column v: xr[sw * v + sigma - pl2]
          std::fill(row, row + lo, T(0));
          if (sw == 1) {
            std::copy(xr + (lo - pl2), xr + (hi - pl2), row + lo);
          } else {
            for (int64_t v = lo; v < hi; ++v) row[v] = xr[sw * v + sigma - pl2];
          }
          std::fill(row + hi, row + wp, T(0));
        }
      }
    }
    std::fill(dst + sh * sw * bp.plane, dst + bp.cstride, T(0));
  }
}

// relu(x) exactly as the elementwise kernels compute BinaryOp::kMax(x, 0): NaN stays NaN (x + 0,
// which quiets it the same way), otherwise Max(x, 0) (+0 for -0).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ConvRelu(D d, V x) {
  const V zero = hn::Zero(d);
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, zero), hn::Max(x, zero));
}
template <class T>
HWY_INLINE T ConvReluScalar(T x) {
  return x != x ? x + T(0) : (x > T(0) ? x : T(0));
}

// The epilogue of a conv (ConvEpilogue) on n values: v = s[e] (+ dst[e] first when
// `accumulate`), then v + *bias (bias not null), then v + residual[e] (residual not null), then
// relu; stored at dst[e]. The same f32 operations in the same order as the unfused adds and
// max. s may be dst (in place); residual must not overlap dst.
template <class T>
HWY_INLINE void BandStoreEpilogue(const T* s, int64_t n, T* dst, bool accumulate, const T* bias,
                                  const T* residual, bool relu) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vb = hn::Set(d, bias == nullptr ? T(0) : *bias);
  int64_t e = 0;
  for (; e + N <= n; e += N) {
    auto v = hn::LoadU(d, s + e);
    if (accumulate) v = hn::Add(hn::LoadU(d, dst + e), v);
    if (bias != nullptr) v = hn::Add(v, vb);
    if (residual != nullptr) v = hn::Add(v, hn::LoadU(d, residual + e));
    if (relu) v = ConvRelu(d, v);
    hn::StoreU(v, d, dst + e);
  }
  for (; e < n; ++e) {
    T v = accumulate ? dst[e] + s[e] : s[e];
    if (bias != nullptr) v = v + *bias;
    if (residual != nullptr) v = v + residual[e];
    if (relu) v = ConvReluScalar(v);
    dst[e] = v;
  }
}

// The epilogue alone over y [planes, plane] (channel of plane q: q % channels), in place;
// residual (or null) is laid out as y.
template <class T>
void ApplyConvEpilogue(T* y, int64_t planes, int64_t plane, int64_t channels, const T* bias,
                       const T* residual, bool relu, ThreadPool* pool) {
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, plane));
  ParallelFor(pool, planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      T* yp = y + q * plane;
      BandStoreEpilogue(yp, plane, yp, false, bias == nullptr ? nullptr : bias + q % channels,
                        residual == nullptr ? nullptr : residual + q * plane, relu);
    }
  });
}

// dst[e] += s[e] for e < n.
template <class T>
HWY_INLINE void BandAdd(const T* HWY_RESTRICT s, int64_t n, T* HWY_RESTRICT dst) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t e = 0;
  for (; e + N <= n; e += N) {
    hn::StoreU(hn::Add(hn::LoadU(d, dst + e), hn::LoadU(d, s + e)), d, dst + e);
  }
  for (; e < n; ++e) dst[e] += s[e];
}

template <class T>
void BandImpl(const ConvParams& p, const BandPlan& bp, const T* x, const T* w, T* y, const T* bias,
              const T* residual, bool relu, ThreadPool* pool) {
  const ConvGeom g(p);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  const int64_t nr = kBandNRV * lanes;
  const int64_t groups = g.c / g.cg;
  const int64_t ow = g.out[2], oh = g.out[1], wp = bp.wp;
  int64_t taps[kBandMaxTaps];
  // Tap (a, b) reads phase plane (a * dh % sh, b * dw % sw) at row offset a * dh / sh and
  // column offset b * dw / sw.
  for (int64_t a = 0; a < g.k[1]; ++a) {
    for (int64_t b = 0; b < g.k[2]; ++b) {
      const int64_t ra = a * g.d[1], cb_ = b * g.d[2];
      taps[a * g.k[2] + b] =
          (ra % g.s[1] * g.s[2] + cb_ % g.s[2]) * bp.plane + ra / g.s[1] * wp + cb_ / g.s[2];
    }
  }
  const int64_t ntaps = g.k_plane, w_os = g.cg * ntaps;
  const int64_t items = g.n * groups * bp.bands;
  ParallelFor(pool, items, 1, [&](int64_t begin, int64_t end) {
    HWY_ALIGN T buf[kBandElements];
    HWY_ALIGN T tile[kBandMR * kBandNRV * hn::MaxLanes(hn::ScalableTag<T>())];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t band = item % bp.bands, grp = item / bp.bands % groups,
                    b = item / bp.bands / groups;
      const int64_t i0 = band * bp.rows, rows = std::min(bp.rows, oh - i0);
      const int64_t flat = rows * wp;
      const T* xg = x + (b * g.c + grp * g.cg) * g.in_plane;
      for (int64_t c0 = 0; c0 < g.cg; c0 += bp.cb) {
        const int64_t cb = std::min(bp.cb, g.cg - c0);
        BandCopy(g, bp, xg, c0, cb, i0, buf);
        // Output channel tiles outside: a tile's weights (MR x cb x taps) stay in the L1 while
        // it sweeps the band.
        for (int64_t o0 = 0; o0 < g.og; o0 += kBandMR) {
          for (int64_t q0 = 0; q0 < flat; q0 += nr) {
            const int64_t valid = std::min(nr, flat - q0);
            const int mr = static_cast<int>(std::min<int64_t>(kBandMR, g.og - o0));
            const int64_t o = grp * g.og + o0;
            BandTileN(mr, buf + q0, bp.cstride, cb, taps, ntaps, w + o * w_os + c0 * ntaps, w_os,
                      tile);
            // The tile's positions, row segment by row segment, to y.
            for (int r = 0; r < mr; ++r) {
              const T* src = tile + r * nr;
              T* yo = y + (b * g.o + o + r) * g.out_plane + i0 * ow;
              for (int64_t q = q0; q < q0 + valid;) {
                const int64_t i = q / wp, j = q % wp;
                const int64_t seg = std::min(q0 + valid, i * wp + wp) - q;
                if (j < ow) {
                  const int64_t n = std::min(seg, ow - j);
                  T* dst = yo + i * ow + j;
                  const T* s = src + (q - q0);
                  if (c0 + cb == g.cg && (bias != nullptr || residual != nullptr || relu)) {
                    BandStoreEpilogue(s, n, dst, c0 > 0, bias == nullptr ? nullptr : bias + o + r,
                                      residual == nullptr ? nullptr : residual + (dst - y), relu);
                  } else if (c0 == 0) {
                    std::copy(s, s + n, dst);
                  } else {
                    BandAdd(s, n, dst);
                  }
                }
                q += seg;
              }
            }
          }
        }
      }
    }
  });
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SHAPEPOLY_CC_KERNELS_CONV_BAND_INL_H_ toggle
