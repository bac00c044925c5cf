// Per-target code of the direct NCHWc convolution kernel (ConvNchwcF32, conv.h). A Highway
// "-inl.h" header: foreach_target.h re-includes it once per target (from conv.cc, after
// conv_band-inl.h, whose epilogue it uses), so it has a per-target include guard.

#if defined(SHAPEPOLY_CC_KERNELS_CONV_NCHWC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_CONV_NCHWC_INL_H_
#undef SHAPEPOLY_CC_KERNELS_CONV_NCHWC_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_CONV_NCHWC_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "cc/kernels/conv.h"
#include "cc/kernels/conv_geom.h"
#include "cc/kernels/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- The direct NCHWc kernel ----
//
// Channels go in blocks of L = the f32 lanes of a vector. Per work item (image, band of output
// rows, group of output-channel pairs), the band's padded input rows are reordered into a
// per-thread buffer [C/L][rows][Wp][L] (zeros for padding and for channels past C), so output
// (i, j)'s tap (a, b) and channel c of block cb reads one float at a fixed offset from the
// tile's base. The weights are packed once (PackConvNchwcF32) as [O/2L][C/L][taps][L][2L]: for
// one pair of output-channel blocks, one input channel and one tap, 2L contiguous outputs'
// weights. A register tile of P output positions of one row x NB (1 or 2) output-channel blocks
// accumulates, for each channel block, tap and channel of the block in that order, the input
// value broadcast times the NB weight vectors (FMAs); every output is one chain of FMAs from
// zero whatever the partition, so the bits do not depend on the thread count. The tile is then
// transposed through a small buffer into y's NCHW rows with the epilogue (bias, residual, relu)
// as it stores.

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kNcP = 14;  // 14 positions x 2 blocks = 28 accumulators of 32 registers
#else
constexpr int kNcP = 6;  // 6 x 2 = 12 accumulators + 2 weight vectors + 1 broadcast of 16
#endif
constexpr int64_t kNcBandBytes = 256 * 1024;  // the reordered input band of one thread
constexpr int64_t kNcMaxTaps = 64;

// Whether the target has a kernel: fixed vectors of at least 4 and at most 16 f32 lanes.
constexpr bool NcTargetOk() {
#if HWY_HAVE_SCALABLE || HWY_TARGET == HWY_SCALAR
  return false;
#else
  return hn::MaxLanes(hn::ScalableTag<float>()) >= 4 &&
         hn::MaxLanes(hn::ScalableTag<float>()) <= 16;
#endif
}

int64_t NcLanes() {
  return NcTargetOk() ? static_cast<int64_t>(hn::MaxLanes(hn::ScalableTag<float>())) : 0;
}

// The shapes the kernel computes (not whether it is the fastest; ConvNchwcTakes decides):
// f32, one group, 1 or 2 spatial axes, no input dilation, column stride 1 or 2, row stride up
// to 4, at most kNcMaxTaps taps, outputs (any batch), and a band of one output row that fits the
// buffer.
bool NcSupports(const ConvGeom& g, int64_t groups) {
  if (!NcTargetOk() || groups != 1 || g.k[0] != 1 || g.in[0] != 1 || g.out[0] != 1 ||
      g.ld[1] != 1 || g.ld[2] != 1 || g.s[2] > 2 || g.s[1] > 4 || g.k_plane > kNcMaxTaps ||
      g.out_plane == 0 || g.c == 0) {
    return false;
  }
  const int64_t L = NcLanes();
  const int64_t wp = (g.out[2] - 1) * g.s[2] + (g.k[2] - 1) * g.d[2] + 1;
  const int64_t rows = (g.k[1] - 1) * g.d[1] + 1;
  const int64_t ncb = (g.c + L - 1) / L;
  return ncb * L * rows * wp * static_cast<int64_t>(sizeof(float)) <= kNcBandBytes;
}

// Where the kernel is measured faster than the band kernel and im2col (Zen 4, AVX3 and AVX2,
// benchmarks/conv/README.md): taps of at least 3x3 over at least 576 terms per output (3x3 from
// 64 channels), strides up to 2 (not the 3 to 64 channel stem: it pads its channels to a block).
bool NcTakes(const ConvGeom& g, int64_t groups) {
  return NcSupports(g, groups) && g.k_plane >= 9 && g.cg * g.k_plane >= 576 && g.s[1] <= 2;
}

// P positions x NB blocks, column stride S: the tile whose first position reads x (channel
// block 0, tap 0) from the reordered band (channel block cb at x + cb * cbs), with the weights
// of its output-channel pair at w. Spilled to tile[p * 2L + nb * L + lane].
template <int P, int NB, int S>
HWY_NOINLINE void NcTile(const float* HWY_RESTRICT x, int64_t cbs, int64_t ncb,
                         const int64_t* HWY_RESTRICT taps, int64_t ntaps,
                         const float* HWY_RESTRICT w, float* HWY_RESTRICT tile) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int64_t L = static_cast<int64_t>(hn::MaxLanes(d));
  constexpr int64_t kRow = 2 * L;
  V acc[P][NB];
  HWY_UNROLL(14)
  for (int p = 0; p < P; ++p) {
    HWY_UNROLL(2)
    for (int nb = 0; nb < NB; ++nb) acc[p][nb] = hn::Zero(d);
  }
  for (int64_t cb = 0; cb < ncb; ++cb) {
    const float* HWY_RESTRICT xc = x + cb * cbs;
    const float* HWY_RESTRICT wc = w + cb * ntaps * L * kRow;
    for (int64_t t = 0; t < ntaps; ++t) {
      const float* HWY_RESTRICT xt = xc + taps[t];
      const float* HWY_RESTRICT wt = wc + t * L * kRow;
      HWY_UNROLL(16)
      for (int64_t ic = 0; ic < L; ++ic) {
        V wv[NB];
        HWY_UNROLL(2)
        for (int nb = 0; nb < NB; ++nb) wv[nb] = hn::LoadU(d, wt + ic * kRow + nb * L);
        HWY_UNROLL(14)
        for (int p = 0; p < P; ++p) {
          const V bx = hn::Set(d, xt[p * S * L + ic]);
          HWY_UNROLL(2)
          for (int nb = 0; nb < NB; ++nb) acc[p][nb] = hn::MulAdd(bx, wv[nb], acc[p][nb]);
        }
      }
    }
  }
  HWY_UNROLL(14)
  for (int p = 0; p < P; ++p) {
    HWY_UNROLL(2)
    for (int nb = 0; nb < NB; ++nb) hn::Store(acc[p][nb], d, tile + p * kRow + nb * L);
  }
}

using NcTileFn = void (*)(const float*, int64_t, int64_t, const int64_t*, int64_t, const float*,
                          float*);

template <int NB, int S, size_t... I>
constexpr std::array<NcTileFn, sizeof...(I)> NcTiles(std::index_sequence<I...>) {
  return {{&NcTile<static_cast<int>(I) + 1, NB, S>...}};
}

// The tile function for p positions (1 to kNcP), nb blocks (1 or 2) and column stride s (1 or 2).
NcTileFn NcTileFor(int p, int nb, int s) {
  static constexpr std::array<NcTileFn, kNcP> k11 = NcTiles<1, 1>(std::make_index_sequence<kNcP>());
  static constexpr std::array<NcTileFn, kNcP> k21 = NcTiles<2, 1>(std::make_index_sequence<kNcP>());
  static constexpr std::array<NcTileFn, kNcP> k12 = NcTiles<1, 2>(std::make_index_sequence<kNcP>());
  static constexpr std::array<NcTileFn, kNcP> k22 = NcTiles<2, 2>(std::make_index_sequence<kNcP>());
  const std::array<NcTileFn, kNcP>& t = s == 1 ? (nb == 1 ? k11 : k21) : (nb == 1 ? k12 : k22);
  return t[static_cast<size_t>(p - 1)];
}

// Packs w [O, C, kh, kw] as [O/2L][C/L][taps][L][2L] (zeros past O and C) into out, which has
// NcPackedElements(g) elements.
int64_t NcPackedElements(const ConvGeom& g) {
  const int64_t L = NcLanes();
  if (L == 0) return 0;
  const int64_t pairs = (g.o + 2 * L - 1) / (2 * L), ncb = (g.c + L - 1) / L;
  return pairs * ncb * g.k_plane * L * 2 * L;
}

void NcPack(const ConvGeom& g, const float* w, float* HWY_RESTRICT out) {
  const int64_t L = NcLanes();
  const int64_t pairs = (g.o + 2 * L - 1) / (2 * L), ncb = (g.c + L - 1) / L, taps = g.k_plane;
  // out written in order; the w rows of one (pair, channel block), 2L x L x taps values, stay in
  // the L1 while they are read.
  for (int64_t pr = 0; pr < pairs; ++pr) {
    const int64_t on = std::min(2 * L, g.o - pr * 2 * L);
    for (int64_t cb = 0; cb < ncb; ++cb) {
      const int64_t cn = std::min(L, g.c - cb * L);
      const float* src = w + (pr * 2 * L * g.c + cb * L) * taps;
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t ic = 0; ic < L; ++ic) {
          for (int64_t oc = 0; oc < 2 * L; ++oc) {
            *out++ = oc < on && ic < cn ? src[(oc * g.c + ic) * taps + t] : 0.0f;
          }
        }
      }
    }
  }
}

// Reorders the padded input rows [r0, r0 + rows) (padded coordinates: input row r - pl[1]) of
// image xb into buf [ncb][rows][wp][L], zeros for padding and channels past C.
void NcReorder(const ConvGeom& g, const float* xb, int64_t r0, int64_t rows, int64_t wp,
               float* HWY_RESTRICT buf) {
  const int64_t L = NcLanes();
  const int64_t ncb = (g.c + L - 1) / L, w_in = g.in[2], pl = g.pl[2];
  // Padded columns whose input column col - pl is in [0, w_in): [lo, hi).
  const int64_t lo = std::min(wp, std::max<int64_t>(0, pl));
  const int64_t hi = std::max(lo, std::min(wp, w_in + pl));
  for (int64_t cb = 0; cb < ncb; ++cb) {
    for (int64_t r = 0; r < rows; ++r) {
      float* HWY_RESTRICT drow = buf + (cb * rows + r) * wp * L;
      const int64_t i = r0 + r - g.pl[1];
      const int64_t cn = std::min(L, g.c - cb * L);
      if (i < 0 || i >= g.in[1] || hi <= lo) {
        std::fill(drow, drow + wp * L, 0.0f);
        continue;
      }
      std::fill(drow, drow + lo * L, 0.0f);
      std::fill(drow + hi * L, drow + wp * L, 0.0f);
      const float* src = xb + (cb * L) * g.in_plane + i * w_in - pl;
      for (int64_t ic = 0; ic < cn; ++ic) {
        const float* s = src + ic * g.in_plane;
        for (int64_t col = lo; col < hi; ++col) drow[col * L + ic] = s[col];
      }
      for (int64_t ic = cn; ic < L; ++ic) {
        for (int64_t col = lo; col < hi; ++col) drow[col * L + ic] = 0.0f;
      }
    }
  }
}

// Stores a tile [cnt positions][kRow] (output channel r of position q at tile[q * kRow + r]) to
// the oc output rows dst + r * plane (cnt contiguous outputs each), with the epilogue: v + bias[r]
// (bias not null), + residual[r * plane + q] (residual not null), relu; the same f32 operations
// as BandStoreEpilogue. Each row's values are gathered from the tile L at a time.
HWY_INLINE void NcStore(const float* HWY_RESTRICT tile, int cnt, int64_t oc, int64_t kRow, float* y,
                        int64_t plane, const float* bias, const float* residual, bool relu) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto idx = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(kRow)));
  for (int64_t r = 0; r < oc; ++r) {
    float* dst = y + r * plane;
    for (int64_t q0 = 0; q0 < cnt; q0 += L) {
      const int64_t n = std::min<int64_t>(L, cnt - q0);
      auto v = hn::GatherIndex(d, tile + q0 * kRow + r, idx);
#if HWY_TARGET <= HWY_AVX2
      // Masked loads and stores that touch only the first n lanes' memory.
      const auto m = hn::FirstN(d, static_cast<size_t>(n));
      if (bias != nullptr) v = hn::Add(v, hn::Set(d, bias[r]));
      if (residual != nullptr) v = hn::Add(v, hn::MaskedLoad(m, d, residual + r * plane + q0));
      if (relu) v = ConvRelu(d, v);
      hn::BlendedStore(v, m, d, dst + q0);
#else
      // Older targets emulate BlendedStore by rewriting the whole vector (a race with the
      // thread that writes the next outputs): through a buffer instead.
      HWY_ALIGN float col[hn::MaxLanes(hn::ScalableTag<float>())];
      hn::Store(v, d, col);
      BandStoreEpilogue(col, n, dst + q0, false, bias == nullptr ? nullptr : bias + r,
                        residual == nullptr ? nullptr : residual + r * plane + q0, relu);
#endif
    }
  }
}

void NcImpl(const ConvParams& p, const float* x, const float* wpack, float* y, const float* bias,
            const float* residual, bool relu, ThreadPool* pool) {
  const ConvGeom g(p);
  if (g.n == 0 || g.o == 0) return;
  const int64_t L = NcLanes();
  const int64_t kRow = 2 * L;
  const int64_t oh = g.out[1], ow = g.out[2], sh = g.s[1], sw = g.s[2];
  const int64_t wp = (ow - 1) * sw + (g.k[2] - 1) * g.d[2] + 1;
  const int64_t span = (g.k[1] - 1) * g.d[1] + 1;
  const int64_t ncb = (g.c + L - 1) / L, pairs = (g.o + kRow - 1) / kRow;
  const int64_t ntaps = g.k_plane;
  int64_t taps[kNcMaxTaps];
  for (int64_t a = 0; a < g.k[1]; ++a) {
    for (int64_t b = 0; b < g.k[2]; ++b) taps[a * g.k[2] + b] = (a * g.d[1] * wp + b * g.d[2]) * L;
  }
  // Rows per band: as many as the buffer holds; then split into enough work items for the
  // threads (output-channel pair groups first: they share the band's reorder only through
  // recomputation, rows through their overlap).
  const int64_t row_bytes = ncb * L * wp * static_cast<int64_t>(sizeof(float));
  int64_t rows = std::max<int64_t>(1, std::min(oh, ((kNcBandBytes / row_bytes) - span) / sh + 1));
  const int64_t threads = pool == nullptr ? 1 : pool->num_threads();
  const int64_t want = threads > 1 ? 2 * threads : 1;
  int64_t bands = (oh + rows - 1) / rows;
  int64_t pgroups = 1;
  if (g.n * bands < want) pgroups = std::min(pairs, (want + g.n * bands - 1) / (g.n * bands));
  if (g.n * bands * pgroups < want) {
    const int64_t need = (want + g.n * pgroups - 1) / (g.n * pgroups);
    rows = std::max<int64_t>(1, (oh + need - 1) / need);
    bands = (oh + rows - 1) / rows;
  }
  const int64_t per_group = (pairs + pgroups - 1) / pgroups;
  const int64_t items = g.n * bands * pgroups;
  const int64_t buf_elems = ncb * L * ((rows - 1) * sh + span) * wp;
  const int64_t ntiles = (ow + kNcP - 1) / kNcP;
  ParallelForEach(pool, items, [&](int64_t begin, int64_t end) {
    float* buf = static_cast<float*>(
        ThreadScratch(kScratchMatmulB, static_cast<size_t>(buf_elems) * sizeof(float)));
    // Rows past the tile's positions are gathered (never stored): kNcP + 16 rows.
    HWY_ALIGN float tile[(kNcP + 16) * 2 * 16];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t grp = item % pgroups, band = item / pgroups % bands, b = item / pgroups / bands;
      const int64_t i0 = band * rows, nrows = std::min(rows, oh - i0);
      const int64_t in_rows = (nrows - 1) * sh + span;
      NcReorder(g, x + b * g.c * g.in_plane, i0 * sh, in_rows, wp, buf);
      const int64_t cbs = in_rows * wp * L;
      const int64_t pr_end = std::min(pairs, (grp + 1) * per_group);
      for (int64_t pr = grp * per_group; pr < pr_end; ++pr) {
        const int64_t o0 = pr * kRow;
        const int64_t oc = std::min(kRow, g.o - o0);
        const int nb = oc > L ? 2 : 1;
        const float* wpr = wpack + pr * ncb * ntaps * L * kRow;
        for (int64_t i = i0; i < i0 + nrows; ++i) {
          const float* xrow = buf + (i - i0) * sh * wp * L;
          // ntiles tiles of balanced sizes (14 = 5 + 5 + 4 on 16 registers, not 6 + 6 + 2).
          for (int64_t k = 0; k < ntiles; ++k) {
            const int64_t j0 = k * ow / ntiles;
            const int cnt = static_cast<int>((k + 1) * ow / ntiles - j0);
            NcTileFor(cnt, nb, static_cast<int>(sw))(xrow + j0 * sw * L, cbs, ncb, taps, ntaps, wpr,
                                                     tile);
            NcStore(tile, cnt, oc, kRow, y + (b * g.o + o0) * g.out_plane + i * ow + j0,
                    g.out_plane, bias == nullptr ? nullptr : bias + o0,
                    residual == nullptr ? nullptr
                                        : residual + (b * g.o + o0) * g.out_plane + i * ow + j0,
                    relu);
          }
        }
      }
    }
  });
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SHAPEPOLY_CC_KERNELS_CONV_NCHWC_INL_H_ toggle
