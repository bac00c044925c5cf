// Per-target code of the convolution kernels (conv.h): the direct kernel, used for depthwise
// convs (one input channel per group). A Highway "-inl.h" header: foreach_target.h re-includes
// it once per target (from conv.cc), so it has a per-target include guard.

#if defined(SHAPEPOLY_CC_KERNELS_CONV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_CONV_INL_H_
#undef SHAPEPOLY_CC_KERNELS_CONV_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_CONV_INL_H_
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

// y[i] += w * x[i] for i < n.
template <class T>
HWY_INLINE void AxpyRow(T w, const T* HWY_RESTRICT x, T* HWY_RESTRICT y, int64_t n) {
  const hn::ScalableTag<T> dt;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dt));
  const auto vw = hn::Set(dt, w);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::MulAdd(vw, hn::LoadU(dt, x + i), hn::LoadU(dt, y + i)), dt, y + i);
  }
  for (; i < n; ++i) y[i] += w * x[i];
}

// One output row (fixed outer positions) gets the contribution of one input row `xr` through
// the innermost kernel taps `wr` (k[2] of them).
template <class T>
HWY_INLINE void DirectRow(const ConvGeom& g, const T* xr, const T* wr, T* yr) {
  const int64_t s = g.s[2], d = g.d[2], ld = g.ld[2], pl = g.pl[2];
  const int64_t w_in = g.in[2], w_out = g.out[2];
  for (int64_t kw = 0; kw < g.k[2]; ++kw) {
    const T wv = wr[kw];
    const int64_t off = kw * d - pl;  // input position of output 0
    if (ld == 1) {
      int64_t lo, hi;
      g.ValidOutputs(2, off, &lo, &hi);
      if (lo >= hi) continue;
      if (s == 1) {
        AxpyRow(wv, xr + lo + off, yr + lo, hi - lo);
      } else {
        for (int64_t q = lo; q < hi; ++q) yr[q] += wv * xr[q * s + off];
      }
    } else {
      for (int64_t q = 0; q < w_out; ++q) {
        const int64_t pos = q * s + off;
        if (pos >= 0 && pos % ld == 0 && pos / ld < w_in) yr[q] += wv * xr[pos / ld];
      }
    }
  }
}

// The most (input row, kernel row) pairs FastRow takes for one output row.
constexpr int kMaxRowPairs = 64;

template <class T>
struct RowPair {
  const T* x;  // an input row
  const T* w;  // the k[2] taps applied to it
};

// Elements of the zero-padded row copies FastRow keeps on the stack, and bytes of the padded
// plane PaddedPlane keeps there.
constexpr int64_t kRowBufferElements = 4096;
constexpr int64_t kPlaneBufferBytes = 64 * 1024;

// The positions one padded row holds: every output vector's reads, with slack for a last
// partial vector (the kernels load whole vectors), rounded up to whole vectors so that every
// row of a padded plane starts aligned (fewer loads split across cache lines).
template <class T>
int64_t PaddedSpan(const ConvGeom& g) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  const int64_t span = g.out[2] + lanes + (g.k[2] - 1) * g.d[2];
  return (span + lanes - 1) / lanes * lanes;
}

// The positions [*lo, *hi) of a padded row of `span` that hold input elements (position t holds
// element t - pad_low); the rest is padding.
inline void PaddedRowBounds(const ConvGeom& g, int64_t span, int64_t* lo, int64_t* hi) {
  *lo = std::min(std::max<int64_t>(g.pl[2], 0), span);
  *hi = std::max(*lo, std::min(span, g.in[2] + g.pl[2]));
}

// Stores the first `valid` (<= lanes) lanes of v at p (a whole vector when valid is all lanes).
template <class D, class V = hn::Vec<D>, typename T = hn::TFromD<D>>
HWY_INLINE void StoreFirstLanes(D d, V v, int64_t valid, T* HWY_RESTRICT p) {
  if (valid == static_cast<int64_t>(hn::Lanes(d))) {
    hn::StoreU(v, d, p);
    return;
  }
  HWY_ALIGN T tail[hn::MaxLanes(d)];
  hn::Store(v, d, tail);
  std::copy(tail, tail + valid, p);
}

// b[t] = xr[t - pad_low] for t < span, 0 outside the input row (xr may be null: all 0).
template <class T>
void PadRow(const ConvGeom& g, const T* xr, int64_t span, T* HWY_RESTRICT b) {
  const int64_t pl = g.pl[2];
  int64_t lo, hi;
  PaddedRowBounds(g, span, &lo, &hi);
  if (xr == nullptr) lo = hi = span;
  for (int64_t t = 0; t < lo; ++t) b[t] = T(0);
  if (hi > lo) std::copy(xr + (lo - pl), xr + (hi - pl), b + lo);
  for (int64_t t = hi; t < span; ++t) b[t] = T(0);
}

// Output vectors OutputSlots accumulates at once: 8 independent FMA chains cover the FMA
// latency (4 cycles) on cores with two FMA pipes. Blocks of 4 vectors along one row ran one FMA
// per cycle, half of those cores' peak (benchmarks/kernels/mca), and rows of 56 outputs left
// 16-lane vectors only blocks of 2 and 1.
constexpr int kOutputSlots = 8;

// S output vectors from `n` (input row, taps) pairs over zero-padded rows: slot s reads each
// pair's row at pairs[i].x + off[s] and writes `valid[s]` (<= lanes) outputs at out[s]. Each
// output sums its terms in pair, then tap order, starting from 0.
template <int S, class T>
HWY_INLINE void OutputSlots(const ConvGeom& g, const RowPair<T>* pairs, int n, const int64_t* off,
                            T* const* out, const int64_t* valid) {
  const hn::ScalableTag<T> dt;
  using V = hn::Vec<decltype(dt)>;
  const int64_t k = g.k[2], d = g.d[2];
  int64_t o[S];
  V acc[S];
  HWY_UNROLL(8)
  for (int s = 0; s < S; ++s) {
    o[s] = off[s];
    acc[s] = hn::Zero(dt);
  }
  for (int i = 0; i < n; ++i) {
    const T* HWY_RESTRICT row = pairs[i].x;
    const T* HWY_RESTRICT w = pairs[i].w;
    for (int64_t kw = 0; kw < k; ++kw) {
      const V wv = hn::Set(dt, w[kw]);
      const T* x = row + kw * d;
      HWY_UNROLL(8)
      for (int s = 0; s < S; ++s) acc[s] = hn::MulAdd(wv, hn::LoadU(dt, x + o[s]), acc[s]);
    }
  }
  for (int s = 0; s < S; ++s) StoreFirstLanes(dt, acc[s], valid[s], out[s]);
}

// OutputSlots for 1 <= s <= kOutputSlots slots.
template <class T>
HWY_NOINLINE void OutputSlotsN(int s, const ConvGeom& g, const RowPair<T>* pairs, int n,
                               const int64_t* off, T* const* out, const int64_t* valid) {
  switch (s) {
#define SHP_OUTPUT_SLOTS_CASE(S)                  \
  case S:                                         \
    OutputSlots<S>(g, pairs, n, off, out, valid); \
    break;
    SHP_OUTPUT_SLOTS_CASE(1)
    SHP_OUTPUT_SLOTS_CASE(2)
    SHP_OUTPUT_SLOTS_CASE(3)
    SHP_OUTPUT_SLOTS_CASE(4)
    SHP_OUTPUT_SLOTS_CASE(5)
    SHP_OUTPUT_SLOTS_CASE(6)
    SHP_OUTPUT_SLOTS_CASE(7)
    SHP_OUTPUT_SLOTS_CASE(8)
#undef SHP_OUTPUT_SLOTS_CASE
    default:
      break;
  }
}

// Collects output vectors into slots and runs OutputSlots on each full group of kOutputSlots
// (Add) and on the rest (Flush).
template <class T>
class SlotQueue {
 public:
  SlotQueue(const ConvGeom& g, const RowPair<T>* pairs, int n) : g_(g), pairs_(pairs), n_(n) {}
  void Add(int64_t off, T* out, int64_t valid) {
    off_[count_] = off;
    out_[count_] = out;
    valid_[count_] = valid;
    if (++count_ == kOutputSlots) {
      OutputSlots<kOutputSlots>(g_, pairs_, n_, off_, out_, valid_);
      count_ = 0;
    }
  }
  void Flush() {
    if (count_ > 0) OutputSlotsN(count_, g_, pairs_, n_, off_, out_, valid_);
    count_ = 0;
  }

 private:
  const ConvGeom& g_;
  const RowPair<T>* pairs_;
  int n_;
  int count_ = 0;
  int64_t off_[kOutputSlots], valid_[kOutputSlots];
  T* out_[kOutputSlots];
};

// One output row (stride 1 on the innermost axis) from `n` pairs whose rows are padded
// (PadRow): its vectors kOutputSlots at a time; a last partial vector reads the padding slack.
template <class T>
void PaddedRow(const ConvGeom& g, const RowPair<T>* pairs, int n, T* HWY_RESTRICT yr) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  SlotQueue<T> slots(g, pairs, n);
  for (int64_t q = 0; q < g.out[2]; q += lanes) slots.Add(q, yr + q, std::min(lanes, g.out[2] - q));
  slots.Flush();
}

// One output row (stride 1, no input dilation on the innermost axis) from its `n` pairs, each
// row first copied padded to the stack. Returns false (nothing written) when they do not fit.
template <class T>
bool FastRow(const ConvGeom& g, const RowPair<T>* pairs, int n, T* HWY_RESTRICT yr) {
  const int64_t span = PaddedSpan<T>(g);
  if (span * n > kRowBufferElements) return false;
  HWY_ALIGN T buf[kRowBufferElements];
  RowPair<T> padded[kMaxRowPairs];
  for (int i = 0; i < n; ++i) {
    PadRow(g, pairs[i].x, span, buf + i * span);
    padded[i] = RowPair<T>{buf + i * span, pairs[i].w};
  }
  PaddedRow(g, padded, n, yr);
  return true;
}

// Output rows DepthwiseColumn computes at once: R accumulators, the 9 tap weights and the input
// vector in registers (18 of 32 on AVX-512, 14 of 16 elsewhere).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kDepthwiseRows = 8;
#else
constexpr int kDepthwiseRows = 4;
#endif

// The vectors of the depthwise kernel: 256 bits on AVX-512 targets. Its loads at taps 1 and 2
// are unaligned, and a 64-byte vector at a 4-byte offset always spans two cache lines (a
// 32-byte one half the time): on Zen 4 the 512-bit form ran 35 GFLOP/s, the 256-bit one 46
// (1x128x56x56; onnxruntime 40).
template <class T>
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
using DepthwiseTag = hn::Full256<T>;
#else
using DepthwiseTag = hn::ScalableTag<T>;
#endif

// R output rows x one vector of columns (col, `valid` <= lanes of them) of a depthwise 3x3
// conv with dilation 1, stride S1 along rows and 1 along columns, over the padded plane rows
// starting at `buf` (output row q reads rows q * S1 + j1). Each input vector is loaded once and
// feeds every output row that reads it (up to 3): ((R - 1) * S1 + 3) * 3 loads for R * 9 FMAs.
// OutputSlots made one load per FMA, half of them split across cache lines, and ran at 15% of
// the FMA peak on Zen 4 (perf). Each output still sums kernel rows j1, then taps, from 0.
template <int R, int S1, class T>
HWY_INLINE void DepthwiseColumn(const T* HWY_RESTRICT buf, int64_t span, const T* HWY_RESTRICT w,
                                int64_t col, T* HWY_RESTRICT y, int64_t y_rs, int64_t valid) {
  const DepthwiseTag<T> dt;
  using V = hn::Vec<decltype(dt)>;
  V wv[9];
  HWY_UNROLL(9)
  for (int t = 0; t < 9; ++t) wv[t] = hn::Set(dt, w[t]);
  V acc[R];
  HWY_UNROLL(8)
  for (int q = 0; q < R; ++q) acc[q] = hn::Zero(dt);
  constexpr int kInputRows = (R - 1) * S1 + 3;
  HWY_UNROLL(32)
  for (int r = 0; r < kInputRows; ++r) {
    const T* x = buf + r * span + col;
    HWY_UNROLL(3)
    for (int kw = 0; kw < 3; ++kw) {
      const V xv = hn::LoadU(dt, x + kw);
      HWY_UNROLL(8)
      for (int q = 0; q < R; ++q) {
        const int j1 = r - q * S1;
        if (j1 >= 0 && j1 < 3) acc[q] = hn::MulAdd(wv[j1 * 3 + kw], xv, acc[q]);
      }
    }
  }
  HWY_UNROLL(8)
  for (int q = 0; q < R; ++q) StoreFirstLanes(dt, acc[q], valid, y + q * y_rs);
}

// Output rows [q1, q1 + R) of a padded depthwise 3x3 plane, every column vector.
template <int R, int S1, class T>
HWY_NOINLINE void DepthwiseRows(const ConvGeom& g, const T* buf, int64_t span, const T* wc,
                                int64_t q1, T* yp) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DepthwiseTag<T>()));
  const int64_t w_out = g.out[2];
  for (int64_t col = 0; col < w_out; col += lanes) {
    DepthwiseColumn<R, S1>(buf + q1 * S1 * span, span, wc, col, yp + q1 * w_out + col, w_out,
                           std::min(lanes, w_out - col));
  }
}

// The whole padded plane by DepthwiseRows: kDepthwiseRows rows at a time, then the rest.
template <int S1, class T>
void DepthwisePlane3x3(const ConvGeom& g, const T* buf, int64_t span, const T* wc, T* yp) {
  int64_t q1 = 0;
  for (; q1 + kDepthwiseRows <= g.out[1]; q1 += kDepthwiseRows) {
    DepthwiseRows<kDepthwiseRows, S1>(g, buf, span, wc, q1, yp);
  }
  switch (g.out[1] - q1) {
#define SHP_DEPTHWISE_ROWS_CASE(R)                    \
  case R:                                             \
    if constexpr (R < kDepthwiseRows) {               \
      DepthwiseRows<R, S1>(g, buf, span, wc, q1, yp); \
    }                                                 \
    break;
    SHP_DEPTHWISE_ROWS_CASE(1)
    SHP_DEPTHWISE_ROWS_CASE(2)
    SHP_DEPTHWISE_ROWS_CASE(3)
    SHP_DEPTHWISE_ROWS_CASE(4)
    SHP_DEPTHWISE_ROWS_CASE(5)
    SHP_DEPTHWISE_ROWS_CASE(6)
    SHP_DEPTHWISE_ROWS_CASE(7)
#undef SHP_DEPTHWISE_ROWS_CASE
    default:
      break;
  }
}

// Elements of the padded plane buffer (PlaneBuffer) that PaddedPlane uses.
template <class T>
constexpr int64_t PlaneBufferElements() {
  return kPlaneBufferBytes / static_cast<int64_t>(sizeof(T));
}

// The padded plane copy of one worker, kept across the planes it computes: the padding of a
// plane's rows is the same for every plane of a conv, so it is zeroed once (`zeroed`) and only
// the input rows are copied per plane. Zeroing the whole copy per plane (memset and small
// copies) took a third of a depthwise 3x3 at 56x56 (perf).
template <class T>
struct PlaneBuffer {
  HWY_ALIGN T data[PlaneBufferElements<T>()];
  bool zeroed = false;
};

// A 1-D or 2-D plane with one input channel (depthwise), stride 1 along rows and no input
// dilation: its input is copied padded (rows of padding made zero rows) into `pb`, then a 3x3
// kernel runs DepthwisePlane3x3, any other the output vectors row by row, kOutputSlots at a
// time (across row ends), each reading all k[1] kernel rows from the copy. Returns false
// (nothing written) when the padded plane does not fit the buffer or the conv is not of that
// kind.
template <class T>
bool PaddedPlane(const ConvGeom& g, const T* xc, const T* wc, T* yp, PlaneBuffer<T>* pb) {
  if (g.cg != 1 || g.k[0] != 1 || g.out[0] != 1 || g.in[0] != 1 || g.s[2] != 1 || g.ld[1] != 1 ||
      g.ld[2] != 1 || g.k[1] > kMaxRowPairs) {
    return false;
  }
  const int64_t span = PaddedSpan<T>(g);
  const int64_t rows = (g.out[1] - 1) * g.s[1] + (g.k[1] - 1) * g.d[1] + 1;
  if (rows * span > PlaneBufferElements<T>()) return false;
  T* buf = pb->data;
  if (!pb->zeroed) {
    std::fill(buf, buf + rows * span, T(0));
    pb->zeroed = true;
  }
  // Row r holds input row r - pl[1] at columns [lo, hi) (as PadRow); the rest stays 0.
  const int64_t pl = g.pl[2];
  int64_t lo, hi;
  PaddedRowBounds(g, span, &lo, &hi);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r - g.pl[1];
    if (i < 0 || i >= g.in[1]) continue;
    const T* xr = xc + i * g.in[2];
    std::copy(xr + (lo - pl), xr + (hi - pl), buf + r * span + lo);
  }
  if (g.k[1] == 3 && g.k[2] == 3 && g.d[1] == 1 && g.d[2] == 1 && (g.s[1] == 1 || g.s[1] == 2)) {
    if (g.s[1] == 1) {
      DepthwisePlane3x3<1>(g, buf, span, wc, yp);
    } else {
      DepthwisePlane3x3<2>(g, buf, span, wc, yp);
    }
    return true;
  }
  // The kernel rows as pairs over the plane's first rows; output row q1 reads them q1 * s[1]
  // rows further down (its slots' offsets).
  RowPair<T> pairs[kMaxRowPairs];
  const int n = static_cast<int>(g.k[1]);
  for (int j1 = 0; j1 < n; ++j1) pairs[j1] = RowPair<T>{buf + j1 * g.d[1] * span, wc + j1 * g.k[2]};
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
  SlotQueue<T> slots(g, pairs, n);
  for (int64_t q1 = 0; q1 < g.out[1]; ++q1) {
    for (int64_t q = 0; q < g.out[2]; q += lanes) {
      slots.Add(q1 * g.s[1] * span + q, yp + q1 * g.out[2] + q, std::min(lanes, g.out[2] - q));
    }
  }
  slots.Flush();
  return true;
}

// Output channel plane `plane` (= batch * O + o), one output row at a time: each row gathers
// the (input row, kernel row) pairs of its group's channels and the outer taps, in that order.
template <class T>
void DirectPlane(const ConvGeom& g, const T* x, const T* w, T* y, int64_t plane,
                 PlaneBuffer<T>* pb) {
  const int64_t b = plane / g.o, o = plane % g.o;
  const int64_t grp = o / g.og;
  T* yp = y + plane * g.out_plane;
  const T* xg = x + (b * g.c + grp * g.cg) * g.in_plane;
  const T* wo = w + o * g.cg * g.k_plane;
  if (PaddedPlane(g, xg, wo, yp, pb)) return;
  const bool fast = g.s[2] == 1 && g.ld[2] == 1;
  RowPair<T> pairs[kMaxRowPairs];
  for (int64_t q0 = 0; q0 < g.out[0]; ++q0) {
    for (int64_t q1 = 0; q1 < g.out[1]; ++q1) {
      T* yr = yp + (q0 * g.out[1] + q1) * g.out[2];
      int n = 0;
      bool overflow = false;
      for (int64_t c = 0; c < g.cg && !overflow; ++c) {
        for (int64_t j0 = 0; j0 < g.k[0] && !overflow; ++j0) {
          const int64_t i0 = g.InputIndex(0, q0, j0);
          if (i0 < 0) continue;
          for (int64_t j1 = 0; j1 < g.k[1]; ++j1) {
            const int64_t i1 = g.InputIndex(1, q1, j1);
            if (i1 < 0) continue;
            if (n == kMaxRowPairs) {
              overflow = true;
              break;
            }
            pairs[n++] = RowPair<T>{xg + c * g.in_plane + (i0 * g.in[1] + i1) * g.in[2],
                                    wo + c * g.k_plane + (j0 * g.k[1] + j1) * g.k[2]};
          }
        }
      }
      if (fast && !overflow && FastRow(g, pairs, n, yr)) continue;
      // The same terms in the same order, tap by tap over the row.
      std::fill(yr, yr + g.out[2], T(0));
      for (int64_t c = 0; c < g.cg; ++c) {
        for (int64_t j0 = 0; j0 < g.k[0]; ++j0) {
          const int64_t i0 = g.InputIndex(0, q0, j0);
          if (i0 < 0) continue;
          for (int64_t j1 = 0; j1 < g.k[1]; ++j1) {
            const int64_t i1 = g.InputIndex(1, q1, j1);
            if (i1 < 0) continue;
            DirectRow(g, xg + c * g.in_plane + (i0 * g.in[1] + i1) * g.in[2],
                      wo + c * g.k_plane + (j0 * g.k[1] + j1) * g.k[2], yr);
          }
        }
      }
    }
  }
}

template <class T>
void DirectImpl(const ConvParams& p, const T* x, const T* w, T* y, ThreadPool* pool) {
  const ConvGeom g(p);
  // Whole output planes per task: no output element is split across threads.
  const int64_t work = std::max<int64_t>(1, g.out_plane * g.cg * g.k_plane);
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / work);
  ParallelFor(pool, g.n * g.o, grain, [&](int64_t begin, int64_t end) {
    PlaneBuffer<T> pb;  // zeroed by its first plane, reused by the others
    for (int64_t plane = begin; plane < end; ++plane) DirectPlane(g, x, w, y, plane, &pb);
  });
}

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
// `accumulate`), then v + *bias (bias not null), then relu; stored at dst[e]. The same f32
// operations in the same order as the unfused add and max. s may be dst (in place).
template <class T>
HWY_INLINE void BandStoreEpilogue(const T* s, int64_t n, T* dst, bool accumulate, const T* bias,
                                  bool relu) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vb = hn::Set(d, bias == nullptr ? T(0) : *bias);
  int64_t e = 0;
  for (; e + N <= n; e += N) {
    auto v = hn::LoadU(d, s + e);
    if (accumulate) v = hn::Add(hn::LoadU(d, dst + e), v);
    if (bias != nullptr) v = hn::Add(v, vb);
    if (relu) v = ConvRelu(d, v);
    hn::StoreU(v, d, dst + e);
  }
  for (; e < n; ++e) {
    T v = accumulate ? dst[e] + s[e] : s[e];
    if (bias != nullptr) v = v + *bias;
    if (relu) v = ConvReluScalar(v);
    dst[e] = v;
  }
}

// The epilogue alone over y [planes, plane] (channel of plane q: q % channels), in place.
template <class T>
void ApplyConvEpilogue(T* y, int64_t planes, int64_t plane, int64_t channels, const T* bias,
                       bool relu, ThreadPool* pool) {
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, plane));
  ParallelFor(pool, planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      T* yp = y + q * plane;
      BandStoreEpilogue(yp, plane, yp, false, bias == nullptr ? nullptr : bias + q % channels,
                        relu);
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
              bool relu, ThreadPool* pool) {
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
                  if (c0 + cb == g.cg && (bias != nullptr || relu)) {
                    BandStoreEpilogue(s, n, dst, c0 > 0, bias == nullptr ? nullptr : bias + o + r,
                                      relu);
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

#endif  // SHAPEPOLY_CC_KERNELS_CONV_INL_H_ toggle
