// The convolution entry points (conv.h): argument checks, the method choice, the im2col tiles
// and the calls into the packed matmul. Target-independent; the direct kernel is dispatched
// through conv.cc.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "cc/kernels/conv.h"
#include "cc/kernels/conv_geom.h"
#include "cc/kernels/gemm_cache.h"
#include "cc/kernels/matmul.h"
#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/transpose.h"

namespace shp {
namespace kernels {

namespace {

// Fewest im2col columns per tile worth a matmul call; a smaller column buffer runs direct.
constexpr int64_t kMinTileColumns = 16;
// Tiles the column buffer holds at once: threads may fill and multiply that many in parallel.
constexpr int64_t kColumnSlots = 2;
// f32 tile widths are multiples of this: whatever tile width GemmNRV picks (16, 32 or 48 columns
// with AVX-512; 8 or 16 with AVX2), the panels of a full tile take no more than its width.
constexpr int64_t kPanelTileUnit = 48;

bool MulOk(int64_t a, int64_t b, int64_t* r) { return !__builtin_mul_overflow(a, b, r); }

// SHP_CONV_BAND=0 in the environment turns the band kernel off for the process (A/B runs of
// whole models); SetConvBandEnabled overrides it.
bool BandEnabledFromEnv() {
  const char* v = std::getenv("SHP_CONV_BAND");
  return v == nullptr || std::string(v) != "0";
}
std::atomic<bool> band_enabled{BandEnabledFromEnv()};
// SHP_CONV_NCHWC=0 likewise for the direct NCHWc kernel; SetConvNchwcEnabled overrides it.
bool NchwcEnabledFromEnv() {
  const char* v = std::getenv("SHP_CONV_NCHWC");
  return v == nullptr || std::string(v) != "0";
}
std::atomic<bool> nchwc_enabled{NchwcEnabledFromEnv()};

void Direct(const ConvParams& p, const float* x, const float* w, float* y, ThreadPool* pool) {
  ConvDirectF32(p, x, w, y, pool);
}
void Direct(const ConvParams& p, const double* x, const double* w, double* y, ThreadPool* pool) {
  ConvDirectF64(p, x, w, y, pool);
}
bool Matmul(const MatmulParams& mm, const float* a, const float* b, float* c, ThreadPool* pool) {
  return MatmulF32(mm, a, b, c, pool);
}
bool Matmul(const MatmulParams& mm, const double* a, const double* b, double* c, ThreadPool* pool) {
  return MatmulF64(mm, a, b, c, pool);
}

// Row r = (channel, taps...) of the im2col tile of batch `b`, group `grp`: for the output
// positions [p0, p0 + width), the input element each reads (0 for padding), into dst.
template <class T>
void FillColumnRow(const ConvGeom& g, const T* x, int64_t b, int64_t grp, int64_t p0, int64_t width,
                   int64_t r, T* dst) {
  // The output coordinates of p0; runs then advance them without divisions.
  const int64_t s0 = p0 % g.out[2], rest0 = p0 / g.out[2];
  const int64_t s1 = rest0 % g.out[1], s2 = rest0 / g.out[1];
  const int64_t c = r / g.k_plane, tap = r % g.k_plane;
  const int64_t j0 = tap / (g.k[1] * g.k[2]), j1 = tap / g.k[2] % g.k[1], j2 = tap % g.k[2];
  const T* xc = x + (b * g.c + grp * g.cg + c) * g.in_plane;
  // Along the innermost axis (without input dilation): the outputs [lo, hi) read the input.
  const int64_t off = j2 * g.d[2] - g.pl[2];
  int64_t vlo = 0, vhi = 0;
  if (g.ld[2] == 1) g.ValidOutputs(2, off, &vlo, &vhi);
  int64_t q2 = s0, q1 = s1, q0 = s2, done = 0;
  while (done < width) {
    // One run along the innermost output axis.
    const int64_t run = std::min(g.out[2] - q2, width - done);
    const int64_t i0 = g.InputIndex(0, q0, j0), i1 = g.InputIndex(1, q1, j1);
    T* out = dst + done;
    if (i0 < 0 || i1 < 0) {
      std::fill(out, out + run, T(0));
    } else {
      const T* xr = xc + (i0 * g.in[1] + i1) * g.in[2];
      if (g.ld[2] == 1) {
        // Zeros, then a (strided) copy of the valid outputs' inputs, then zeros.
        const int64_t lo = std::min(std::max(vlo, q2), q2 + run);
        const int64_t hi = std::min(std::max(vhi, lo), q2 + run);
        std::fill(out, out + (lo - q2), T(0));
        if (g.s[2] == 1) {
          std::copy(xr + lo + off, xr + hi + off, out + (lo - q2));
        } else {
          for (int64_t q = lo; q < hi; ++q) out[q - q2] = xr[q * g.s[2] + off];
        }
        std::fill(out + (hi - q2), out + run, T(0));
      } else {
        for (int64_t e = 0; e < run; ++e) {
          const int64_t i2 = g.InputIndex(2, q2 + e, j2);
          out[e] = i2 < 0 ? T(0) : xr[i2];
        }
      }
    }
    done += run;
    q2 = 0;
    if (++q1 == g.out[1]) {
      q1 = 0;
      ++q0;
    }
  }
}

// Rows [r0, r1) of the im2col tile (row-major: row r at col + r * width).
template <class T>
void FillColumns(const ConvGeom& g, const T* x, int64_t b, int64_t grp, int64_t p0, int64_t width,
                 int64_t r0, int64_t r1, T* col) {
  for (int64_t r = r0; r < r1; ++r) FillColumnRow(g, x, b, grp, p0, width, r, col + r * width);
}

// Columns of an im2col row FillPanels builds on the stack before spreading them over panels.
constexpr int64_t kPanelRowChunk = 1024;

// Rows [r0, r1) of the im2col tile of `rows` rows, written straight into the matmul's packed
// panels of B (PanelLayoutF32: k block pc, panel q, row p at panels + pc * n_padded +
// q * kc' * nr + p * nr, zero past width): no column buffer for the matmul to pack again.
void FillPanels(const ConvGeom& g, const float* x, int64_t b, int64_t grp, int64_t p0,
                int64_t width, int64_t rows, const PanelLayoutF32& layout, int64_t r0, int64_t r1,
                float* panels) {
  const int64_t nr = layout.nr(), n_padded = layout.n_padded(width);
  float row[kPanelRowChunk];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t pc = r / layout.kc * layout.kc, p = r - pc;
    const int64_t kc = std::min(layout.kc, rows - pc);
    float* base = panels + pc * n_padded + p * nr;
    const int64_t chunk = kPanelRowChunk / nr * nr;  // whole panels per chunk
    for (int64_t j0 = 0; j0 < width; j0 += chunk) {
      const int64_t n = std::min(chunk, width - j0);
      FillColumnRow(g, x, b, grp, p0 + j0, n, r, row);
      for (int64_t j = 0; j < n; j += nr) {
        float* dst = base + (j0 + j) / nr * kc * nr;
        const int64_t m = std::min(nr, n - j);
        std::copy(row + j, row + j + m, dst);
        std::fill(dst + m, dst + nr, 0.0f);
      }
    }
  }
}

template <class T>
bool ConvImpl(const ConvParams& p, const T* x, const T* w, T* y, T* scratch,
              int64_t scratch_elements, ThreadPool* pool) {
  if (!ValidConvParams(p)) return false;
  const ConvGeom g(p);
  if (g.n == 0 || g.o == 0 || g.out_plane == 0) return true;
  const int64_t groups = p.groups;
  switch (ChooseConvMethod(p, scratch_elements, std::is_same<T, double>::value)) {
    case ConvMethod::kMatmul: {
      // y[b, grp] (og x P) = w[grp] (og x cg) · x[b, grp] (cg x P).
      MatmulParams mm = RowMajorMatmul(g.og, g.out_plane, g.cg);
      AddMatmulBatchDim(&mm, g.n, 0, g.c * g.in_plane, g.o * g.out_plane);
      AddMatmulBatchDim(&mm, groups, g.og * g.cg, g.cg * g.in_plane, g.og * g.out_plane);
      return Matmul(mm, w, x, y, pool);
    }
    case ConvMethod::kDirect:
      Direct(p, x, w, y, pool);
      return true;
    case ConvMethod::kNchwc:
      if constexpr (std::is_same<T, float>::value) {
        // False only if the SIMD target changed since the choice: the other methods then.
        if (ConvNchwcF32(p, x, w, y, scratch, scratch_elements, ConvEpilogue(), pool)) {
          return true;
        }
      }
      [[fallthrough]];
    case ConvMethod::kBand:
      if constexpr (std::is_same<T, float>::value) {
        // False only if the SIMD target changed since the choice: the other methods then.
        if (ConvBandF32(p, x, w, y, pool)) return true;
      }
      if (scratch_elements / (ConvColumnRows(p) * kColumnSlots) <
          std::min(g.out_plane, kMinTileColumns)) {
        Direct(p, x, w, y, pool);
        return true;
      }
      break;
    case ConvMethod::kIm2col:
      break;
  }
  const int64_t rows = g.cg * g.k_plane;
  // kColumnSlots tiles of about the L2 each (the matmul packs a tile right after it is
  // written). The width depends on the sizes only, never on the threads, and the matmul is
  // bitwise the same for any pool: every schedule below gives the same bits.
  const int64_t cache_columns = GemmCaches().l2 / (rows * static_cast<int64_t>(sizeof(T)));
  int64_t tile = std::min(g.out_plane, scratch_elements / (rows * kColumnSlots));
  if (cache_columns >= kMinTileColumns && tile > cache_columns) {
    tile = cache_columns / kMinTileColumns * kMinTileColumns;
  }
  // f32 tiles of whole panels (kPanelTileUnit), so that a tile's panels
  // (FillPanels) fit where its column buffer would.
  if (std::is_same<T, float>::value && tile >= kPanelTileUnit && tile < g.out_plane) {
    tile = tile / kPanelTileUnit * kPanelTileUnit;
  }
  const int64_t tiles = (g.out_plane + tile - 1) / tile;
  const int64_t jobs = g.n * groups * tiles;
  // Job j: batch, group and tile; im2col into `col` (f32: straight into the matmul's packed
  // panels when they fit), then the matmul on `mm_pool`.
  auto job = [&](int64_t j, T* col, ThreadPool* fill_pool, ThreadPool* mm_pool) {
    const int64_t t = j % tiles, grp = j / tiles % groups, b = j / tiles / groups;
    const int64_t p0 = t * tile, width = std::min(tile, g.out_plane - p0);
    const int64_t grain = std::max<int64_t>(1, 8192 / width);
    MatmulParams mm = RowMajorMatmul(g.og, width, rows);
    mm.c_row_stride = g.out_plane;
    const T* wg = w + grp * g.og * rows;
    T* yt = y + (b * g.o + grp * g.og) * g.out_plane + p0;
    if constexpr (std::is_same<T, float>::value) {
      const PanelLayoutF32 layout = MatmulF32PanelLayout(width);
      const bool aligned = reinterpret_cast<uintptr_t>(col) % (layout.lanes * sizeof(float)) == 0;
      if (aligned && layout.n_padded(width) <= tile) {
        ParallelFor(fill_pool, rows, grain, [&](int64_t r0, int64_t r1) {
          FillPanels(g, x, b, grp, p0, width, rows, layout, r0, r1, col);
        });
        // False only if the SIMD target changed since the layout was read: columns instead.
        if (MatmulF32PrepackedPanels(mm, wg, col, layout, yt, mm_pool)) return true;
      }
    }
    ParallelFor(fill_pool, rows, grain,
                [&](int64_t r0, int64_t r1) { FillColumns(g, x, b, grp, p0, width, r0, r1, col); });
    return Matmul(mm, wg, col, yt, mm_pool);
  };
  if (pool != nullptr && pool->num_threads() > 1 && jobs >= 2 * kColumnSlots) {
    // Whole tiles per thread, one column slot each: no synchronization inside a tile.
    bool ok[kColumnSlots];
    ParallelFor(pool, kColumnSlots, 1, [&](int64_t s0, int64_t s1) {
      for (int64_t slot = s0; slot < s1; ++slot) {
        ok[slot] = true;
        for (int64_t j = slot; j < jobs && ok[slot]; j += kColumnSlots) {
          ok[slot] = job(j, scratch + slot * rows * tile, nullptr, nullptr);
        }
      }
    });
    for (int64_t slot = 0; slot < kColumnSlots; ++slot) {
      if (!ok[slot]) return false;
    }
    return true;
  }
  for (int64_t j = 0; j < jobs; ++j) {
    if (!job(j, scratch, pool, pool)) return false;
  }
  return true;
}

}  // namespace

bool ValidConvParams(const ConvParams& p) {
  if (p.spatial_rank < 1 || p.spatial_rank > kMaxConvSpatialRank) return false;
  if (p.batch < 0 || p.in_channels < 0 || p.out_channels < 0 || p.groups < 1) return false;
  if (p.in_channels % p.groups != 0 || p.out_channels % p.groups != 0) return false;
  int64_t x = p.batch, w = p.out_channels, y = p.batch;
  if (!MulOk(x, p.in_channels, &x) || !MulOk(w, p.in_channels / p.groups, &w) ||
      !MulOk(y, p.out_channels, &y)) {
    return false;
  }
  for (int a = 0; a < p.spatial_rank; ++a) {
    if (p.in[a] < 0 || p.kernel[a] < 1 || p.out[a] < 0) return false;
    if (p.stride[a] < 1 || p.lhs_dilation[a] < 1 || p.rhs_dilation[a] < 1) return false;
    if (!MulOk(x, p.in[a], &x) || !MulOk(w, p.kernel[a], &w) || !MulOk(y, p.out[a], &y)) {
      return false;
    }
    // Positions q*stride + j*dilation - pad (and the dilated input extent) fit in int64.
    int64_t a1, a2, a3;
    if (!MulOk(p.out[a], p.stride[a], &a1) || !MulOk(p.kernel[a], p.rhs_dilation[a], &a2) ||
        !MulOk(p.in[a], p.lhs_dilation[a], &a3)) {
      return false;
    }
    if (a1 > (int64_t{1} << 61) || a2 > (int64_t{1} << 61) || a3 > (int64_t{1} << 61) ||
        p.pad_low[a] > (int64_t{1} << 61) || p.pad_low[a] < -(int64_t{1} << 61)) {
      return false;
    }
  }
  return true;
}

int64_t ConvColumnRows(const ConvParams& p) {
  int64_t rows = p.groups >= 1 ? p.in_channels / p.groups : 0;
  for (int a = 0; a < p.spatial_rank && a < kMaxConvSpatialRank; ++a) rows *= p.kernel[a];
  return rows;
}

ConvMethod ChooseConvMethod(const ConvParams& p, int64_t scratch_elements, bool f64) {
  bool pointwise = true;
  for (int a = 0; a < p.spatial_rank; ++a) {
    pointwise = pointwise && p.kernel[a] == 1 && p.stride[a] == 1 && p.lhs_dilation[a] == 1 &&
                p.pad_low[a] == 0 && p.out[a] == p.in[a];
  }
  const int64_t cg = p.in_channels / p.groups;
  if (pointwise && cg > 0) return ConvMethod::kMatmul;
  const int64_t rows = ConvColumnRows(p);
  int64_t out_plane = 1;
  for (int a = 0; a < p.spatial_rank; ++a) out_plane *= p.out[a];
  // Depthwise: one channel per group gives im2col rows of only prod(kernel) terms each, too
  // short for the matmul to win over the direct kernel.
  if (cg <= 1 || rows == 0) return ConvMethod::kDirect;
  // The NCHWc kernel packs w into the scratch on every call (a caller with w packed once gets
  // the same bits from ConvNchwcF32): where at least a 14x14 plane of outputs amortizes that
  // (Zen 4, 512 -> 512 channels at 7x7, batch 1: 33 GFLOP/s packing per call, 100 packed once).
  if (!f64 && nchwc_enabled.load(std::memory_order_relaxed) && p.batch * out_plane >= 196 &&
      ConvNchwcTakes(p) && scratch_elements >= ConvNchwcPackedElements(p)) {
    return ConvMethod::kNchwc;
  }
  if (!f64 && band_enabled.load(std::memory_order_relaxed) && ConvBandTakes(p)) {
    return ConvMethod::kBand;
  }
  if (scratch_elements / (rows * kColumnSlots) < std::min(out_plane, kMinTileColumns)) {
    return ConvMethod::kDirect;
  }
  return ConvMethod::kIm2col;
}

void SetConvBandEnabled(bool enabled) { band_enabled.store(enabled); }
void SetConvNchwcEnabled(bool enabled) { nchwc_enabled.store(enabled); }

namespace {

int64_t OutPlane(const ConvParams& p) {
  int64_t out_plane = 1;
  for (int a = 0; a < p.spatial_rank; ++a) out_plane *= p.out[a];
  return out_plane;
}

bool Pointwise(const ConvParams& p) { return ChooseConvMethod(p, 0) == ConvMethod::kMatmul; }

}  // namespace

bool ConvChannelsTakes(const ConvParams& p, int64_t columns_elements) {
  if (!ValidConvParams(p) || p.groups != 1) return false;
  const int64_t plane = OutPlane(p);
  if (plane > kConvChannelsMaxPlane || p.out_channels < kConvChannelsMinOut ||
      plane > p.out_channels) {
    return false;
  }
  const ConvMethod m = ChooseConvMethod(p, columns_elements);
  return m == ConvMethod::kMatmul || m == ConvMethod::kIm2col;
}

int64_t ConvChannelsColumns(const ConvParams& p) {
  return Pointwise(p) ? 0 : ConvColumnRows(p) * OutPlane(p);
}

int64_t ConvChannelsProduct(const ConvParams& p) { return OutPlane(p) * p.out_channels; }

PackedMatrixF32 PackConvWeightsF32(const ConvParams& p, const float* w) {
  const int64_t rows = ConvColumnRows(p);
  return PackedMatrixF32::Pack(w, rows, p.out_channels, 1, rows);
}

bool ConvF32Packed(const ConvParams& p, const float* x, const PackedMatrixF32& wt, float* y,
                   float* columns, int64_t columns_elements, float* product,
                   int64_t product_elements, const ConvEpilogue& epilogue, ThreadPool* pool) {
  if (!ConvChannelsTakes(p, columns_elements)) return false;
  const ConvGeom g(p);
  const int64_t rows = g.cg * g.k_plane, plane = g.out_plane;
  const bool pointwise = Pointwise(p);
  if (wt.k() != rows || wt.n() != g.o || product_elements < plane * g.o ||
      (!pointwise && columns_elements < rows * plane)) {
    return false;
  }
  if (g.n == 0 || g.o == 0 || plane == 0) return true;
  // product[q, o] = sum_r columns[r, q] * W[o, r]: A is the columns read transposed (row q of
  // A is column q of the columns, elements `plane` apart), B the packed W^T.
  MatmulParams mm = RowMajorMatmul(plane, g.o, rows);
  mm.a_row_stride = 1;
  mm.a_col_stride = plane;
  // The product's epilogue adds the bias (and clamps, without a residual); a residual is added
  // after the transpose, then the clamp: the order of the unfused ops.
  MatmulEpilogue ep;
  ep.bias = epilogue.bias;
  ep.relu = epilogue.relu && epilogue.residual == nullptr;
  ConvEpilogue after;
  after.residual = epilogue.residual;
  after.relu = epilogue.relu;
  const int64_t grain = std::max<int64_t>(1, 8192 / plane);
  for (int64_t b = 0; b < g.n; ++b) {
    const float* a = x + b * g.c * g.in_plane;
    if (!pointwise) {
      ParallelFor(pool, rows, grain, [&](int64_t r0, int64_t r1) {
        FillColumns(g, x, b, 0, 0, plane, r0, r1, columns);
      });
      a = columns;
    }
    // False only for a target other than the packing's (before the first image: nothing
    // written yet; the target does not change between images).
    if (!MatmulF32Prepacked(mm, a, wt, product, ep, pool)) return false;
    if (!Transpose2D(product, plane, g.o, g.o, sizeof(float), y + b * g.o * plane, plane, pool)) {
      return false;
    }
    if (after.residual != nullptr) {
      ConvEpilogue image = after;
      image.residual += b * g.o * plane;
      ApplyConvEpilogueF32(y + b * g.o * plane, g.o, plane, g.o, image, pool);
    }
  }
  return true;
}

bool ConvF32(const ConvParams& p, const float* x, const float* w, float* y, float* scratch,
             int64_t scratch_elements, ThreadPool* pool) {
  return ConvImpl(p, x, w, y, scratch, scratch_elements, pool);
}

bool ConvF32(const ConvParams& p, const float* x, const float* w, float* y, float* scratch,
             int64_t scratch_elements, const ConvEpilogue& epilogue, ThreadPool* pool) {
  if (epilogue.bias == nullptr && epilogue.residual == nullptr && !epilogue.relu) {
    return ConvImpl(p, x, w, y, scratch, scratch_elements, pool);
  }
  if (!ValidConvParams(p)) return false;
  const ConvGeom g(p);
  if (g.n == 0 || g.o == 0 || g.out_plane == 0) return true;
  // The band and NCHWc kernels store through the epilogue; false only if they do not take p on
  // the target dispatched now.
  const ConvMethod method = ChooseConvMethod(p, scratch_elements);
  if (method == ConvMethod::kNchwc &&
      ConvNchwcF32(p, x, w, y, scratch, scratch_elements, epilogue, pool)) {
    return true;
  }
  if ((method == ConvMethod::kBand || method == ConvMethod::kNchwc) &&
      ConvBandF32(p, x, w, y, epilogue, pool)) {
    return true;
  }
  if (!ConvImpl(p, x, w, y, scratch, scratch_elements, pool)) return false;
  ApplyConvEpilogueF32(y, g.n * g.o, g.out_plane, g.o, epilogue, pool);
  return true;
}

bool ConvF64(const ConvParams& p, const double* x, const double* w, double* y, double* scratch,
             int64_t scratch_elements, ThreadPool* pool) {
  return ConvImpl(p, x, w, y, scratch, scratch_elements, pool);
}

}  // namespace kernels
}  // namespace shp
