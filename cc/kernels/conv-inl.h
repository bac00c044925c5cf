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

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SHAPEPOLY_CC_KERNELS_CONV_INL_H_ toggle
