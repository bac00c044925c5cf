// Per-target implementation of the transpose kernels (see transpose.h for the API).
// A Highway "-inl.h" header: foreach_target.h re-includes it once per target (from
// transpose.cc and transpose_test.cc), so it has a per-target include guard and is a textual
// header in Bazel, never compiled on its own.
#if defined(SHAPEPOLY_CC_KERNELS_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_TRANSPOSE_INL_H_
#undef SHAPEPOLY_CC_KERNELS_TRANSPOSE_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_TRANSPOSE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>

#include "cc/kernels/parallel.h"
#include "cc/kernels/transpose.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Copies one element of `size` bytes (size is a compile-time 1/2/4/8 for the typed paths).
template <typename T>
HWY_INLINE void TransposeCopyElem(const uint8_t* src, uint8_t* dst) {
  T v;
  memcpy(&v, src, sizeof(T));
  memcpy(dst, &v, sizeof(T));
}

#if HWY_TARGET != HWY_SCALAR
// dst[c * os + r] = src[r * is + c] for r, c < 4 (4-byte elements), in 128-bit registers.
HWY_INLINE void Transpose4x4U32(const uint32_t* HWY_RESTRICT src, int64_t is,
                                uint32_t* HWY_RESTRICT dst, int64_t os) {
  const hn::Full128<uint32_t> d;
  const hn::Full128<uint64_t> d64;
  const auto v0 = hn::LoadU(d, src);
  const auto v1 = hn::LoadU(d, src + is);
  const auto v2 = hn::LoadU(d, src + 2 * is);
  const auto v3 = hn::LoadU(d, src + 3 * is);
  const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, v0, v1));  // a0 b0 a1 b1
  const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d, v2, v3));  // c0 d0 c1 d1
  const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d, v0, v1));  // a2 b2 a3 b3
  const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, v2, v3));  // c2 d2 c3 d3
  hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t0, t1)), d, dst);
  hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t0, t1)), d, dst + os);
  hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t2, t3)), d, dst + 2 * os);
  hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t2, t3)), d, dst + 3 * os);
}

// dst[c * os + r] = src[r * is + c] for r, c < 2 (8-byte elements), in 128-bit registers.
HWY_INLINE void Transpose2x2U64(const uint64_t* HWY_RESTRICT src, int64_t is,
                                uint64_t* HWY_RESTRICT dst, int64_t os) {
  const hn::Full128<uint64_t> d64;
  const auto v0 = hn::LoadU(d64, src);
  const auto v1 = hn::LoadU(d64, src + is);
  hn::StoreU(hn::InterleaveLower(d64, v0, v1), d64, dst);
  hn::StoreU(hn::InterleaveUpper(d64, v0, v1), d64, dst + os);
}
#endif  // HWY_TARGET != HWY_SCALAR

// out[c * os + r] = in[r * is + c] for r in [r0, r1), c in [c0, c1); T is 1, 2, 4 or 8 bytes
// (an unsigned integer type); strides in elements. 4x4 (4-byte) and 2x2 (8-byte) blocks are
// transposed in 128-bit registers; remainders (and other sizes) use scalar copies.
template <typename T>
HWY_INLINE void TransposeTile(const T* HWY_RESTRICT in, int64_t is, T* HWY_RESTRICT out, int64_t os,
                              int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  int64_t r = r0;
#if HWY_TARGET != HWY_SCALAR
  if (sizeof(T) == 4) {
    const uint32_t* src = reinterpret_cast<const uint32_t*>(in);
    uint32_t* dst = reinterpret_cast<uint32_t*>(out);
    for (; r + 4 <= r1; r += 4) {
      int64_t c = c0;
      for (; c + 4 <= c1; c += 4) Transpose4x4U32(src + r * is + c, is, dst + c * os + r, os);
      for (; c < c1; ++c) {
        for (int64_t i = 0; i < 4; ++i) dst[c * os + r + i] = src[(r + i) * is + c];
      }
    }
  } else if (sizeof(T) == 8) {
    const uint64_t* src = reinterpret_cast<const uint64_t*>(in);
    uint64_t* dst = reinterpret_cast<uint64_t*>(out);
    for (; r + 2 <= r1; r += 2) {
      int64_t c = c0;
      for (; c + 2 <= c1; c += 2) Transpose2x2U64(src + r * is + c, is, dst + c * os + r, os);
      for (; c < c1; ++c) {
        dst[c * os + r] = src[r * is + c];
        dst[c * os + r + 1] = src[(r + 1) * is + c];
      }
    }
  }
#endif  // HWY_TARGET != HWY_SCALAR
  // Remaining rows (all rows for 1/2-byte elements and the scalar target): blocks of 8 rows
  // so each output row segment is written contiguously.
  for (; r + 8 <= r1; r += 8) {
    for (int64_t c = c0; c < c1; ++c) {
      T* HWY_RESTRICT o = out + c * os + r;
      const T* HWY_RESTRICT s = in + r * is + c;
      for (int64_t i = 0; i < 8; ++i) o[i] = s[i * is];
    }
  }
  for (; r < r1; ++r) {
    const T* HWY_RESTRICT s = in + r * is + c0;
    T* HWY_RESTRICT o = out + c0 * os + r;
    for (int64_t n = c1 - c0; n > 0; --n, ++s, o += os) *o = *s;
  }
}

// Transposes a full block of 64/es x 64/es elements (one cache line per side) through a
// contiguous L1-resident buffer: large power-of-two strides put all the block's input lines
// (and all its output lines) in the same cache set, so transposing straight into the output
// would evict each partly written output line before it is complete. Here every output line
// is written whole, once, and at most 4-8 input lines are live at a time.
// With `stream`, the output lines (64-byte aligned) are written with non-temporal stores: they
// bypass the caches and skip the read-for-ownership of each line, which saves a third of the
// memory traffic of a transpose much larger than the caches.
template <typename T>
HWY_INLINE void TransposeLineBlock(const uint8_t* in, int64_t is, uint8_t* out, int64_t os,
                                   int64_t rt, int64_t ct, bool stream) {
  constexpr int64_t kTile = 64 / sizeof(T);
  HWY_ALIGN T buf[kTile * kTile];
  const T* src = reinterpret_cast<const T*>(in) + rt * is + ct;
  // The input rows are kTile separate streams with a large stride, more than the hardware
  // prefetchers follow: prefetch each row's line of the block after next (never dereferenced,
  // so prefetching past the end of a row is harmless).
  for (int64_t r = 0; r < kTile; ++r) hwy::Prefetch(src + r * is + 2 * kTile);
#if HWY_TARGET != HWY_SCALAR
  if (sizeof(T) == 4) {
    for (int64_t r = 0; r < kTile; r += 4) {
      for (int64_t c = 0; c < kTile; c += 4) {
        Transpose4x4U32(reinterpret_cast<const uint32_t*>(src) + r * is + c, is,
                        reinterpret_cast<uint32_t*>(buf) + c * kTile + r, kTile);
      }
    }
  } else if (sizeof(T) == 8) {
    for (int64_t r = 0; r < kTile; r += 2) {
      for (int64_t c = 0; c < kTile; c += 2) {
        Transpose2x2U64(reinterpret_cast<const uint64_t*>(src) + r * is + c, is,
                        reinterpret_cast<uint64_t*>(buf) + c * kTile + r, kTile);
      }
    }
  } else {
    TransposeTile<T>(src, is, buf, kTile, 0, kTile, 0, kTile);
  }
#else
  TransposeTile<T>(src, is, buf, kTile, 0, kTile, 0, kTile);
#endif
  if (stream) {
    const hn::ScalableTag<uint8_t> d8;
    const size_t L = hn::Lanes(d8);
    for (int64_t c = 0; c < kTile; ++c) {
      uint8_t* o = out + ((ct + c) * os + rt) * static_cast<int64_t>(sizeof(T));
      const uint8_t* b = reinterpret_cast<const uint8_t*>(buf + c * kTile);
      for (size_t off = 0; off < 64; off += L) hn::Stream(hn::Load(d8, b + off), d8, o + off);
    }
    return;
  }
  for (int64_t c = 0; c < kTile; ++c) {
    memcpy(out + ((ct + c) * os + rt) * static_cast<int64_t>(sizeof(T)), buf + c * kTile, 64);
  }
}

// One block: out[c * os + r] = in[r * is + c] for r in [rt, re), c in [ct, ce).
HWY_INLINE void TransposeBlock(const uint8_t* in, int64_t is, uint8_t* out, int64_t os, int64_t rt,
                               int64_t re, int64_t ct, int64_t ce, int64_t es, bool stream) {
  if (es <= 8 && (es & (es - 1)) == 0 && re - rt == 64 / es && ce - ct == 64 / es) {
    switch (es) {
      case 1:
        TransposeLineBlock<uint8_t>(in, is, out, os, rt, ct, stream);
        return;
      case 2:
        TransposeLineBlock<uint16_t>(in, is, out, os, rt, ct, stream);
        return;
      case 4:
        TransposeLineBlock<uint32_t>(in, is, out, os, rt, ct, stream);
        return;
      default:
        TransposeLineBlock<uint64_t>(in, is, out, os, rt, ct, stream);
        return;
    }
  }
  switch (es) {
    case 1:
      TransposeTile<uint8_t>(in, is, out, os, rt, re, ct, ce);
      break;
    case 2:
      TransposeTile<uint16_t>(reinterpret_cast<const uint16_t*>(in), is,
                              reinterpret_cast<uint16_t*>(out), os, rt, re, ct, ce);
      break;
    case 4:
      TransposeTile<uint32_t>(reinterpret_cast<const uint32_t*>(in), is,
                              reinterpret_cast<uint32_t*>(out), os, rt, re, ct, ce);
      break;
    case 8:
      TransposeTile<uint64_t>(reinterpret_cast<const uint64_t*>(in), is,
                              reinterpret_cast<uint64_t*>(out), os, rt, re, ct, ce);
      break;
    default:
      for (int64_t r = rt; r < re; ++r) {
        for (int64_t c = ct; c < ce; ++c) {
          memcpy(out + (c * os + r) * es, in + (r * is + c) * es, static_cast<size_t>(es));
        }
      }
  }
}

// Rows [r0, r1) of the strided 2-d transpose out[c * os + r] = in[r * is + c] (c < cols).
// Blocks are one cache line (64 bytes) per side: a block reads `tile` input rows and writes
// `tile` output rows of exactly one line each, so every line is fetched and written once,
// whole, even when both strides are large powers of two (taller tiles would evict their own
// lines through cache-set conflicts). Blocks are visited in 4x4 groups so consecutive blocks
// share pages (fewer TLB misses). es = element size in bytes.
// With `stream` (large outputs), full blocks whose output lines are 64-byte aligned use
// non-temporal stores (see TransposeLineBlock), fenced before returning.
HWY_INLINE void TransposeRows(const uint8_t* in, int64_t is, uint8_t* out, int64_t os, int64_t r0,
                              int64_t r1, int64_t cols, int64_t es, bool stream) {
  const int64_t tile = es <= 16 ? 64 / es : 4;
  const int64_t group = 4 * tile;
  stream = stream && HWY_TARGET != HWY_SCALAR && reinterpret_cast<uintptr_t>(out) % 64 == 0 &&
           (os * es) % 64 == 0 && (r0 * es) % 64 == 0;
  for (int64_t rg = r0; rg < r1; rg += group) {
    const int64_t rge = std::min(r1, rg + group);
    for (int64_t cg = 0; cg < cols; cg += group) {
      const int64_t cge = std::min(cols, cg + group);
      for (int64_t rt = rg; rt < rge; rt += tile) {
        const int64_t re = std::min(rge, rt + tile);
        for (int64_t ct = cg; ct < cge; ct += tile) {
          const int64_t ce = std::min(cge, ct + tile);
          TransposeBlock(in, is, out, os, rt, re, ct, ce, es, stream);
        }
      }
    }
  }
  if (stream) hwy::FlushStream();
}

// Bytes below which a transpose runs on the caller's thread only.
constexpr int64_t kTransposeParallelBytes = int64_t{1} << 20;
// Output bytes from which a 2-d transpose writes with non-temporal stores (the output would
// not stay in the caches anyway).
constexpr int64_t kTransposeStreamBytes = int64_t{16} << 20;

HWY_INLINE bool Transpose2DImpl(const void* in, int64_t rows, int64_t cols, int64_t is, int64_t es,
                                void* out, int64_t os, ThreadPool* pool) {
  if (rows < 0 || cols < 0 || es < 1) return false;
  if (rows == 0 || cols == 0) return true;
  if (is < cols || os < rows) return false;
  const uint8_t* src = static_cast<const uint8_t*>(in);
  uint8_t* dst = static_cast<uint8_t*>(out);
  const auto run = [&](int64_t begin, int64_t end) {
    TransposeRows(src, is, dst, os, begin, end, cols, es,
                  rows * cols * es >= kTransposeStreamBytes);
  };
  const int64_t bytes = rows * cols * es;
  if (pool != nullptr && bytes >= kTransposeParallelBytes) {
    // Chunks of whole 64-row tiles where possible.
    ParallelFor(pool, (rows + 63) / 64, 1,
                [&](int64_t b, int64_t e) { run(b * 64, std::min(rows, e * 64)); });
  } else {
    run(0, rows);
  }
  return true;
}

// Odometer over `n` axes with extents dims[], tracking an input and an output offset.
struct TransposeOdometer {
  int n;
  const int64_t* dims;
  const int64_t* in_strides;
  const int64_t* out_strides;
  int64_t idx[kMaxTransposeRank];
  int64_t in_off;
  int64_t out_off;

  // Positions the odometer at linear index `linear` (row-major over dims).
  void Seek(int64_t linear) {
    in_off = 0;
    out_off = 0;
    for (int a = n - 1; a >= 0; --a) {
      idx[a] = linear % dims[a];
      linear /= dims[a];
      in_off += idx[a] * in_strides[a];
      out_off += idx[a] * out_strides[a];
    }
  }
  void Next() {
    for (int a = n - 1; a >= 0; --a) {
      in_off += in_strides[a];
      out_off += out_strides[a];
      if (++idx[a] < dims[a]) return;
      in_off -= idx[a] * in_strides[a];
      out_off -= idx[a] * out_strides[a];
      idx[a] = 0;
    }
  }
};

// Copies `count` runs of `bytes` bytes: run t goes from in + in_off(t) to out + out_off(t).
template <typename T>
HWY_INLINE void TransposeCopyRunsTyped(const uint8_t* in, uint8_t* out, TransposeOdometer& it,
                                       int64_t count, int64_t es) {
  for (int64_t t = 0; t < count; ++t, it.Next()) {
    TransposeCopyElem<T>(in + it.in_off * es, out + it.out_off * es);
  }
}

HWY_INLINE bool TransposeImpl(const void* in, const int64_t* in_shape, const int64_t* perm,
                              int rank, int64_t es, void* out, ThreadPool* pool) {
  if (rank < 0 || rank > kMaxTransposeRank || es < 1) return false;
  bool seen[kMaxTransposeRank] = {};
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    if (in_shape[d] < 0 || perm[d] < 0 || perm[d] >= rank || seen[perm[d]]) return false;
    seen[perm[d]] = true;
    total *= in_shape[d];
  }
  if (total == 0) return true;
  const uint8_t* src = static_cast<const uint8_t*>(in);
  uint8_t* dst = static_cast<uint8_t*>(out);

  // 1. Drop extent-1 axes; renumber the remaining input axes.
  int new_axis[kMaxTransposeRank];
  int64_t shape1[kMaxTransposeRank];
  int k = 0;
  for (int a = 0; a < rank; ++a) {
    new_axis[a] = in_shape[a] == 1 ? -1 : k;
    if (in_shape[a] != 1) shape1[k++] = in_shape[a];
  }
  int perm1[kMaxTransposeRank];
  int kp = 0;
  for (int d = 0; d < rank; ++d) {
    if (new_axis[perm[d]] >= 0) perm1[kp++] = new_axis[perm[d]];
  }
  // 2. Merge output-adjacent axes that are also input-adjacent (in order) into one.
  //    group_of[input axis] = group index in output order; groups ordered by input position.
  int group_start[kMaxTransposeRank];  // first input axis of output-order group g
  int group_len[kMaxTransposeRank];
  int groups = 0;
  for (int d = 0; d < k; ++d) {
    if (groups > 0 && perm1[d] == group_start[groups - 1] + group_len[groups - 1]) {
      ++group_len[groups - 1];
    } else {
      group_start[groups] = perm1[d];
      group_len[groups] = 1;
      ++groups;
    }
  }
  if (groups <= 1) {  // identity (up to extent-1 axes): one contiguous copy
    memcpy(dst, src, static_cast<size_t>(total * es));
    return true;
  }
  // Input order of the groups: rank of group_start among all groups.
  int R = groups;
  int64_t S[kMaxTransposeRank];  // merged input shape (input order)
  int P[kMaxTransposeRank];      // output axis d reads merged input axis P[d]
  for (int g = 0; g < R; ++g) {
    int pos = 0;
    for (int h = 0; h < R; ++h) pos += group_start[h] < group_start[g] ? 1 : 0;
    P[g] = pos;
    int64_t ext = 1;
    for (int a = group_start[g]; a < group_start[g] + group_len[g]; ++a) ext *= shape1[a];
    S[pos] = ext;
  }
  int64_t in_stride[kMaxTransposeRank];
  int64_t out_stride[kMaxTransposeRank];
  in_stride[R - 1] = 1;
  for (int a = R - 2; a >= 0; --a) in_stride[a] = in_stride[a + 1] * S[a + 1];
  out_stride[R - 1] = 1;
  for (int d = R - 2; d >= 0; --d) out_stride[d] = out_stride[d + 1] * S[P[d + 1]];

  const bool parallel = pool != nullptr && total * es >= kTransposeParallelBytes;
  if (P[R - 1] == R - 1) {
    // 3a. The innermost axis is kept: copy contiguous runs of S[R-1] elements, iterating the
    //     other output axes.
    const int64_t run = S[R - 1];
    int64_t dims[kMaxTransposeRank], is[kMaxTransposeRank], os[kMaxTransposeRank];
    for (int d = 0; d < R - 1; ++d) {
      dims[d] = S[P[d]];
      is[d] = in_stride[P[d]];
      os[d] = out_stride[d];
    }
    const int64_t count = total / run;
    const auto body = [&](int64_t begin, int64_t end) {
      TransposeOdometer it{R - 1, dims, is, os, {}, 0, 0};
      it.Seek(begin);
      const int64_t bytes = run * es;
      switch (bytes) {
        case 1:
          TransposeCopyRunsTyped<uint8_t>(src, dst, it, end - begin, es);
          return;
        case 2:
          TransposeCopyRunsTyped<uint16_t>(src, dst, it, end - begin, es);
          return;
        case 4:
          TransposeCopyRunsTyped<uint32_t>(src, dst, it, end - begin, es);
          return;
        case 8:
          TransposeCopyRunsTyped<uint64_t>(src, dst, it, end - begin, es);
          return;
        default:
          for (int64_t t = begin; t < end; ++t, it.Next()) {
            memcpy(dst + it.out_off * es, src + it.in_off * es, static_cast<size_t>(bytes));
          }
      }
    };
    if (parallel) {
      ParallelFor(pool, count, std::max<int64_t>(1, (64 << 10) / (run * es)), body);
    } else {
      body(0, count);
    }
    return true;
  }
  // 3b. 2-d transposes: input axis R-1 (contiguous in the input, output stride os_x) against
  //     output axis R-1 (contiguous in the output, input axis P[R-1] with stride is_y), for
  //     each index of the remaining axes.
  int qx = 0;
  while (P[qx] != R - 1) ++qx;
  const int64_t n_x = S[R - 1];
  const int64_t os_x = out_stride[qx];
  const int64_t n_y = S[P[R - 1]];
  const int64_t is_y = in_stride[P[R - 1]];
  int64_t dims[kMaxTransposeRank], is[kMaxTransposeRank], os[kMaxTransposeRank];
  int n_outer = 0;
  for (int d = 0; d < R - 1; ++d) {
    if (d == qx) continue;
    dims[n_outer] = S[P[d]];
    is[n_outer] = in_stride[P[d]];
    os[n_outer] = out_stride[d];
    ++n_outer;
  }
  int64_t outer = 1;
  for (int d = 0; d < n_outer; ++d) outer *= dims[d];
  // Items: (outer index, block of 64 y rows).
  const int64_t y_blocks = (n_y + 63) / 64;
  const auto body = [&](int64_t begin, int64_t end) {
    TransposeOdometer it{n_outer, dims, is, os, {}, 0, 0};
    int64_t o = begin / y_blocks;
    it.Seek(o);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o_item = item / y_blocks;
      while (o < o_item) {
        it.Next();
        ++o;
      }
      const int64_t yb = item % y_blocks;
      TransposeRows(src + it.in_off * es, is_y, dst + it.out_off * es, os_x, yb * 64,
                    std::min(n_y, yb * 64 + 64), n_x, es, total * es >= kTransposeStreamBytes);
    }
  };
  const int64_t items = outer * y_blocks;
  if (parallel) {
    ParallelFor(pool, items, 1, body);
  } else {
    body(0, items);
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
