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
      // Outputs whose position q*s + off lies in [0, w_in).
      const int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
      const int64_t last = w_in - 1 - off;
      int64_t hi = last < 0 ? 0 : last / s + 1;
      hi = std::min(hi, w_out);
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

// Output channel plane `plane` (= batch * O + o): zeroed, then accumulated over its group's
// input channels and the kernel taps in a fixed order (channel, then taps row-major).
template <class T>
void DirectPlane(const ConvGeom& g, const T* x, const T* w, T* y, int64_t plane) {
  const int64_t b = plane / g.o, o = plane % g.o;
  const int64_t grp = o / g.og;
  T* yp = y + plane * g.out_plane;
  std::fill(yp, yp + g.out_plane, T(0));
  for (int64_t c = 0; c < g.cg; ++c) {
    const T* xc = x + (b * g.c + grp * g.cg + c) * g.in_plane;
    const T* wc = w + (o * g.cg + c) * g.k_plane;
    for (int64_t q0 = 0; q0 < g.out[0]; ++q0) {
      for (int64_t j0 = 0; j0 < g.k[0]; ++j0) {
        const int64_t i0 = g.InputIndex(0, q0, j0);
        if (i0 < 0) continue;
        for (int64_t q1 = 0; q1 < g.out[1]; ++q1) {
          T* yr = yp + (q0 * g.out[1] + q1) * g.out[2];
          for (int64_t j1 = 0; j1 < g.k[1]; ++j1) {
            const int64_t i1 = g.InputIndex(1, q1, j1);
            if (i1 < 0) continue;
            DirectRow(g, xc + (i0 * g.in[1] + i1) * g.in[2], wc + (j0 * g.k[1] + j1) * g.k[2], yr);
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
