// The geometry of a convolution as its kernels loop over it (conv-inl.h, conv_gemm.cc).
#ifndef SHAPEPOLY_CC_KERNELS_CONV_GEOM_H_
#define SHAPEPOLY_CC_KERNELS_CONV_GEOM_H_

#include <algorithm>
#include <cstdint>

#include "cc/kernels/conv.h"

namespace shp {
namespace kernels {

// ConvParams with the spatial axes right-aligned into 3 (missing leading axes have extent 1,
// stride and dilations 1, no padding), so every kernel loops over exactly 3 axes.
struct ConvGeom {
  int64_t n, c, o, cg, og;  // batch, channels, channels per group
  int64_t in[3], k[3], out[3], s[3], ld[3], d[3], pl[3];
  int64_t in_plane, k_plane, out_plane;  // elements per channel of x, w, y

  explicit ConvGeom(const ConvParams& p) {
    n = p.batch;
    c = p.in_channels;
    o = p.out_channels;
    cg = c / p.groups;
    og = o / p.groups;
    const int off = 3 - p.spatial_rank;
    for (int a = 0; a < 3; ++a) {
      const int src = a - off;
      const bool has = src >= 0;
      in[a] = has ? p.in[src] : 1;
      k[a] = has ? p.kernel[src] : 1;
      out[a] = has ? p.out[src] : 1;
      s[a] = has ? p.stride[src] : 1;
      ld[a] = has ? p.lhs_dilation[src] : 1;
      d[a] = has ? p.rhs_dilation[src] : 1;
      pl[a] = has ? p.pad_low[src] : 0;
    }
    in_plane = in[0] * in[1] * in[2];
    k_plane = k[0] * k[1] * k[2];
    out_plane = out[0] * out[1] * out[2];
  }

  // Without input dilation on axis `a`: the outputs q in [*lo, *hi) (clamped to [0, out[a]))
  // whose input position q * s[a] + off lies in [0, in[a]).
  void ValidOutputs(int a, int64_t off, int64_t* lo, int64_t* hi) const {
    *lo = off >= 0 ? 0 : (-off + s[a] - 1) / s[a];
    const int64_t last = in[a] - 1 - off;
    *hi = last < 0 ? 0 : std::min(last / s[a] + 1, out[a]);
    *lo = std::min(*lo, *hi);
  }

  // The input index read on axis `a` by output position `q` and kernel tap `j`; -1 when that
  // position is padding or falls between dilated input elements.
  int64_t InputIndex(int a, int64_t q, int64_t j) const {
    const int64_t pos = q * s[a] + j * d[a] - pl[a];
    if (ld[a] == 1) return pos >= 0 && pos < in[a] ? pos : -1;  // no division
    if (pos < 0 || pos % ld[a] != 0) return -1;
    const int64_t i = pos / ld[a];
    return i < in[a] ? i : -1;
  }
};

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_CONV_GEOM_H_
