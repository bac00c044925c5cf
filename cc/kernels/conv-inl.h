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

// The positions one padded row holds: every output vector's reads, with slack for the last
// block of 4 vectors.
template <class T>
int64_t PaddedSpan(const ConvGeom& g) {
  const hn::ScalableTag<T> dt;
  return g.out[2] + 4 * static_cast<int64_t>(hn::Lanes(dt)) + (g.k[2] - 1) * g.d[2];
}

// b[t] = xr[t - pad_low] for t < span, 0 outside the input row (xr may be null: all 0).
template <class T>
void PadRow(const ConvGeom& g, const T* xr, int64_t span, T* HWY_RESTRICT b) {
  const int64_t pl = g.pl[2];
  int64_t lo = std::min(std::max<int64_t>(pl, 0), span);
  int64_t hi = std::max(lo, std::min(span, g.in[2] + pl));
  if (xr == nullptr) lo = hi = span;
  for (int64_t t = 0; t < lo; ++t) b[t] = T(0);
  if (hi > lo) std::copy(xr + (lo - pl), xr + (hi - pl), b + lo);
  for (int64_t t = hi; t < span; ++t) b[t] = T(0);
}

// One output row (stride 1 on the innermost axis) from `n` pairs whose rows are padded
// (PadRow): every output in registers, in blocks of 4, then 2, then 1 vector (independent FMA
// chains); the tail through a vector stored to the stack (it reads the padding slack). Each
// output sums its terms in pair, then tap order, starting from 0.
template <class T>
void PaddedRow(const ConvGeom& g, const RowPair<T>* pairs, int n, T* HWY_RESTRICT yr) {
  const hn::ScalableTag<T> dt;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(dt));
  const int64_t k = g.k[2], d = g.d[2], w_out = g.out[2];
  int64_t q = 0;
  for (; q + 4 * lanes <= w_out; q += 4 * lanes) {
    auto a0 = hn::Zero(dt), a1 = hn::Zero(dt), a2 = hn::Zero(dt), a3 = hn::Zero(dt);
    for (int i = 0; i < n; ++i) {
      const T* xr = pairs[i].x + q;
      for (int64_t kw = 0; kw < k; ++kw) {
        const auto wv = hn::Set(dt, pairs[i].w[kw]);
        const T* xp = xr + kw * d;
        a0 = hn::MulAdd(wv, hn::LoadU(dt, xp), a0);
        a1 = hn::MulAdd(wv, hn::LoadU(dt, xp + lanes), a1);
        a2 = hn::MulAdd(wv, hn::LoadU(dt, xp + 2 * lanes), a2);
        a3 = hn::MulAdd(wv, hn::LoadU(dt, xp + 3 * lanes), a3);
      }
    }
    hn::StoreU(a0, dt, yr + q);
    hn::StoreU(a1, dt, yr + q + lanes);
    hn::StoreU(a2, dt, yr + q + 2 * lanes);
    hn::StoreU(a3, dt, yr + q + 3 * lanes);
  }
  for (; q + 2 * lanes <= w_out; q += 2 * lanes) {
    auto a0 = hn::Zero(dt), a1 = hn::Zero(dt);
    for (int i = 0; i < n; ++i) {
      const T* xr = pairs[i].x + q;
      for (int64_t kw = 0; kw < k; ++kw) {
        const auto wv = hn::Set(dt, pairs[i].w[kw]);
        a0 = hn::MulAdd(wv, hn::LoadU(dt, xr + kw * d), a0);
        a1 = hn::MulAdd(wv, hn::LoadU(dt, xr + kw * d + lanes), a1);
      }
    }
    hn::StoreU(a0, dt, yr + q);
    hn::StoreU(a1, dt, yr + q + lanes);
  }
  for (; q < w_out; q += lanes) {
    auto a0 = hn::Zero(dt);
    for (int i = 0; i < n; ++i) {
      const T* xr = pairs[i].x + q;
      for (int64_t kw = 0; kw < k; ++kw) {
        a0 = hn::MulAdd(hn::Set(dt, pairs[i].w[kw]), hn::LoadU(dt, xr + kw * d), a0);
      }
    }
    if (q + lanes <= w_out) {
      hn::StoreU(a0, dt, yr + q);
    } else {
      HWY_ALIGN T tail[hn::MaxLanes(dt)];
      hn::Store(a0, dt, tail);
      std::copy(tail, tail + (w_out - q), yr + q);
    }
  }
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

// A 1-D or 2-D plane with one input channel (depthwise), stride 1 along rows and no input
// dilation: its input is copied padded once (rows of padding made zero rows), then every output
// row reads all k[1] kernel rows from it. Returns false (nothing written) when the padded plane
// does not fit the stack buffer or the conv is not of that kind.
template <class T>
bool PaddedPlane(const ConvGeom& g, const T* xc, const T* wc, T* yp) {
  if (g.cg != 1 || g.k[0] != 1 || g.out[0] != 1 || g.in[0] != 1 || g.s[2] != 1 || g.ld[1] != 1 ||
      g.ld[2] != 1 || g.k[1] > kMaxRowPairs) {
    return false;
  }
  const int64_t span = PaddedSpan<T>(g);
  const int64_t rows = (g.out[1] - 1) * g.s[1] + (g.k[1] - 1) * g.d[1] + 1;
  constexpr int64_t kElements = kPlaneBufferBytes / static_cast<int64_t>(sizeof(T));
  if (rows * span > kElements) return false;
  HWY_ALIGN T buf[kElements];
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r - g.pl[1];
    PadRow(g, i >= 0 && i < g.in[1] ? xc + i * g.in[2] : nullptr, span, buf + r * span);
  }
  RowPair<T> pairs[kMaxRowPairs];
  const int n = static_cast<int>(g.k[1]);
  for (int64_t q1 = 0; q1 < g.out[1]; ++q1) {
    for (int j1 = 0; j1 < n; ++j1) {
      pairs[j1] = RowPair<T>{buf + (q1 * g.s[1] + j1 * g.d[1]) * span, wc + j1 * g.k[2]};
    }
    PaddedRow(g, pairs, n, yp + q1 * g.out[2]);
  }
  return true;
}

// Output channel plane `plane` (= batch * O + o), one output row at a time: each row gathers
// the (input row, kernel row) pairs of its group's channels and the outer taps, in that order.
template <class T>
void DirectPlane(const ConvGeom& g, const T* x, const T* w, T* y, int64_t plane) {
  const int64_t b = plane / g.o, o = plane % g.o;
  const int64_t grp = o / g.og;
  T* yp = y + plane * g.out_plane;
  const T* xg = x + (b * g.c + grp * g.cg) * g.in_plane;
  const T* wo = w + o * g.cg * g.k_plane;
  if (PaddedPlane(g, xg, wo, yp)) return;
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
    for (int64_t plane = begin; plane < end; ++plane) DirectPlane(g, x, w, y, plane);
  });
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SHAPEPOLY_CC_KERNELS_CONV_INL_H_ toggle
