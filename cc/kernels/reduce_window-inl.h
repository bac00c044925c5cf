// Per-target implementation of the windowed reductions (see reduce_window.h). A Highway
// "-inl.h" header: foreach_target.h re-includes it once per target (from reduce_window.cc), so
// it has a per-target include guard and is a textual header in Bazel.
//
// Strategy: adjacent axes the window leaves alone (window 1, stride 1, no dilation, no
// padding) are merged. One work item is one output row (all axes but the last) and a block of
// its columns. Its rows of the window (every present combination of the other axes' window
// positions) are reduced elementwise first ("vertical", vectorized along the contiguous last
// axis) into a padded, base-dilated row buffer; the last axis's window then slides over that
// buffer ("horizontal", vectorized along the output for strides 1 and 2; stride 2 loads two
// vectors and deinterleaves them). When the last axis is not windowed the vertical pass writes
// the output directly. Float max/min watch for NaN while loading; an item that saw one is
// redone by the scalar path, which propagates it.
#if defined(SHAPEPOLY_CC_KERNELS_REDUCE_WINDOW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_REDUCE_WINDOW_INL_H_
#undef SHAPEPOLY_CC_KERNELS_REDUCE_WINDOW_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_REDUCE_WINDOW_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "cc/kernels/parallel.h"
#include "cc/kernels/reduce_window.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace rw_impl {

enum : int { kSumOp = 0, kMaxOp = 1, kMinOp = 2 };

constexpr int64_t kColBlock = 2048;    // output columns per work item
constexpr int64_t kGrainWork = 16384;  // minimum element operations per thread chunk
constexpr int64_t kSlack = 64;         // row buffer elements past the end (vector over-reads)

// The merged geometry of one call.
struct Geo {
  int m = 0;  // merged axes
  int64_t in[kMaxWindowRank], out[kMaxWindowRank], w[kMaxWindowRank], s[kMaxWindowRank],
      wd[kMaxWindowRank], bd[kMaxWindowRank], pl[kMaxWindowRank], in_stride[kMaxWindowRank];
  int64_t rows = 1;       // product of the output extents of axes 0..m-2
  int64_t cols = 0;       // output extent of the last axis
  int64_t col_block = 0;  // output columns per item
  int64_t col_blocks = 0;
  bool last_pass = false;  // the last axis is not windowed
  // A mean (ReduceWindowMean): the window positions counted lie in [-cpl, in + cph) per axis.
  int64_t cpl[kMaxWindowRank] = {}, cph[kMaxWindowRank] = {};
};

inline bool PassThrough(const WindowDim& d) {
  return d.window == 1 && d.stride == 1 && d.base_dilation == 1 && d.pad_low == 0 &&
         d.pad_high == 0;
}

template <class T, int kOp>
HWY_INLINE T Ident() {
  if constexpr (kOp == kSumOp) {
    return T(0);
  } else if constexpr (kOp == kMaxOp) {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  } else {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::max();
  }
}

// a (op) b; ints wrap on sums; float max/min propagate NaN. The operand order is the vector
// code's (a > b ? a : b), so both give the same result on equal values of either sign.
template <class T, int kOp>
HWY_INLINE T Comb(T a, T b) {
  if constexpr (kOp == kSumOp) {
    if constexpr (std::is_integral<T>::value) {
      using U = typename std::make_unsigned<T>::type;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  } else {
    if constexpr (std::is_floating_point<T>::value) {
      if (a != a || b != b) return a != a ? a : b;
    }
    if constexpr (kOp == kMaxOp) {
      return a > b ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
}

template <int kOp, class V>
HWY_INLINE V VComb(V a, V b) {
  if constexpr (kOp == kSumOp) {
    return hn::Add(a, b);
  } else if constexpr (kOp == kMaxOp) {
    return hn::Max(a, b);
  } else {
    return hn::Min(a, b);
  }
}

template <class T, int kOp>
constexpr bool kWatchNaN = std::is_floating_point<T>::value&& kOp != kSumOp;

// dst[t] = the rows x + offs[r] + t reduced elementwise, t < len (the first row copied, then
// combined in order); the identity when there is no row. Returns whether a NaN was loaded
// (float max/min only: those vector lanes may have lost it).
// x_end: the end of the input; with dst_slack (dst has a vector of writable slack), the last
// partial vector is computed whole when no row reads past x_end (16-lane rows of 56: one
// element in 7 took the scalar loop), its extra lanes landing in the slack.
template <class T, int kOp>
HWY_INLINE bool Vertical(const T* HWY_RESTRICT x, const int64_t* offs, size_t nr, int64_t len,
                         T* HWY_RESTRICT dst, const T* x_end = nullptr, bool dst_slack = false) {
  if (nr == 0) {
    for (int64_t t = 0; t < len; ++t) dst[t] = Ident<T, kOp>();
    return false;
  }
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto nan = hn::Zero(d);
  // The rows' vectors at t combined in row order (NaN watched), stored at dst + t.
  const auto rows_at = [&](int64_t t) {
    auto v = hn::LoadU(d, x + offs[0] + t);
    if constexpr (kWatchNaN<T, kOp>) nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
    for (size_t r = 1; r < nr; ++r) {
      const auto u = hn::LoadU(d, x + offs[r] + t);
      if constexpr (kWatchNaN<T, kOp>) nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(u)));
      v = VComb<kOp>(v, u);
    }
    hn::StoreU(v, d, dst + t);
  };
  int64_t t = 0;
  for (; t + N <= len; t += N) rows_at(t);
  if (t < len && dst_slack && x_end != nullptr) {
    bool inside = true;
    for (size_t r = 0; r < nr && inside; ++r) inside = x + offs[r] + t + N <= x_end;
    if (inside) {
      rows_at(t);
      t = len;
    }
  }
  bool seen = false;
  if constexpr (kWatchNaN<T, kOp>) seen = !hn::AllFalse(d, hn::IsNaN(nan));
  for (; t < len; ++t) {
    T v = x[offs[0] + t];
    for (size_t r = 1; r < nr; ++r) v = Comb<T, kOp>(v, x[offs[r] + t]);
    dst[t] = v;
    if constexpr (kWatchNaN<T, kOp>) seen = seen || v != v;  // the vector rows must not lose it
  }
  return seen;
}

// The scalar form of Vertical (propagates NaN).
template <class T, int kOp>
HWY_INLINE void VerticalScalar(const T* x, const int64_t* offs, size_t nr, int64_t len, T* dst) {
  for (int64_t t = 0; t < len; ++t) {
    T v = nr == 0 ? Ident<T, kOp>() : x[offs[0] + t];
    for (size_t r = 1; r < nr; ++r) v = Comb<T, kOp>(v, x[offs[r] + t]);
    dst[t] = v;
  }
}

// y[j] = e[j * s + k * wd] reduced over k < w in order, j < n.
template <class T, int kOp>
HWY_INLINE void HorizontalScalar(const T* e, int64_t n, int64_t w, int64_t s, int64_t wd, T* y) {
  for (int64_t j = 0; j < n; ++j) {
    const T* p = e + j * s;
    T v = p[0];
    for (int64_t k = 1; k < w; ++k) v = Comb<T, kOp>(v, p[k * wd]);
    y[j] = v;
  }
}

// The vector form (no NaN may be in e); e has kSlack readable elements past its end (the
// stride-2 loads read one element past the last one they use, and a last partial vector of
// outputs is computed whole: at most (N - 1) * s + N elements past the end, < kSlack).
template <class T, int kOp>
HWY_INLINE void Horizontal(const T* HWY_RESTRICT e, int64_t n, int64_t w, int64_t s, int64_t wd,
                           T* HWY_RESTRICT y) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  if (s == 1) {
    for (; j + N <= n; j += N) {
      auto v = hn::LoadU(d, e + j);
      for (int64_t k = 1; k < w; ++k) v = VComb<kOp>(v, hn::LoadU(d, e + j + k * wd));
      hn::StoreU(v, d, y + j);
    }
    if (j < n) {  // the last partial vector, whole (its extra lanes read the slack)
      auto v = hn::LoadU(d, e + j);
      for (int64_t k = 1; k < w; ++k) v = VComb<kOp>(v, hn::LoadU(d, e + j + k * wd));
      HWY_ALIGN T tail[hn::MaxLanes(d)];
      hn::Store(v, d, tail);
      std::copy(tail, tail + (n - j), y + j);
      return;
    }
  }
#if HWY_TARGET != HWY_SCALAR
  if (s == 2) {
    // Lanes j..j+N-1 of offset t are e[2j + t + 2i]: the even (t even) or odd (t odd) lanes
    // of the 2N elements from e + 2j + (t & ~1); the last one read past the need is slack.
    for (; j < n; j += N) {
      const T* base = e + 2 * j;
      auto v = hn::Zero(d);
      for (int64_t k = 0; k < w; ++k) {
        const int64_t t = k * wd;
        const T* p = base + (t & ~int64_t{1});
        const auto lo = hn::LoadU(d, p);
        const auto hi = hn::LoadU(d, p + N);
        const auto u = (t & 1) ? hn::ConcatOdd(d, hi, lo) : hn::ConcatEven(d, hi, lo);
        v = k == 0 ? u : VComb<kOp>(v, u);
      }
      if (j + N <= n) {
        hn::StoreU(v, d, y + j);
      } else {  // the last partial vector (its extra lanes read the slack)
        HWY_ALIGN T tail[hn::MaxLanes(d)];
        hn::Store(v, d, tail);
        std::copy(tail, tail + (n - j), y + j);
        return;
      }
    }
  }
#endif
  HorizontalScalar<T, kOp>(e + j * s, n - j, w, s, wd, y + j);
}

// Per-chunk scratch.
template <class T>
struct Scratch {
  std::vector<int64_t> offs;
  std::vector<T> row, col;
};

// For every axis but the last and every output index on it, the input offsets (index *
// stride) of the present window positions, in window order: list[a][first[a][o] ..
// first[a][o + 1]). Built once per call.
struct Tables {
  std::vector<int64_t> list[kMaxWindowRank];
  std::vector<int64_t> first[kMaxWindowRank];
};

inline void BuildTables(const Geo& g, Tables* t) {
  for (int a = 0; a + 1 < g.m; ++a) {
    std::vector<int64_t>& list = t->list[a];
    std::vector<int64_t>& first = t->first[a];
    first.assign(1, 0);
    for (int64_t o = 0; o < g.out[a]; ++o) {
      for (int64_t k = 0; k < g.w[a]; ++k) {
        const int64_t p = o * g.s[a] + k * g.wd[a] - g.pl[a];
        if (p < 0 || p % g.bd[a] != 0 || p / g.bd[a] >= g.in[a]) continue;
        list.push_back(p / g.bd[a] * g.in_stride[a]);
      }
      first.push_back(static_cast<int64_t>(list.size()));
    }
  }
}

// The input offsets of the rows of the window of the output row at coordinates o[0..m-2], in
// row-major window order; returns how many.
inline size_t RowOffsets(const Geo& g, const Tables& t, const int64_t* o,
                         std::vector<int64_t>* offs) {
  const int outer = g.m - 1;
  const int64_t* lists[kMaxWindowRank];
  int64_t cnt[kMaxWindowRank];
  size_t total = 1;
  for (int a = 0; a < outer; ++a) {
    const int64_t b = t.first[a][static_cast<size_t>(o[a])];
    lists[a] = t.list[a].data() + b;
    cnt[a] = t.first[a][static_cast<size_t>(o[a]) + 1] - b;
    total *= static_cast<size_t>(cnt[a]);
  }
  if (offs->size() < total) offs->resize(total);
  if (total == 0) return 0;
  int64_t* dst = offs->data();
  if (outer == 1) {  // a 1-D window over rows, or 2-D pooling of one plane
    for (int64_t r = 0; r < cnt[0]; ++r) dst[r] = lists[0][r];
    return total;
  }
  if (outer == 2) {  // 2-D pooling over planes (NCHW): the per-item odometer cost 20% (perf)
    size_t r = 0;
    for (int64_t i = 0; i < cnt[0]; ++i) {
      for (int64_t k = 0; k < cnt[1]; ++k) dst[r++] = lists[0][i] + lists[1][k];
    }
    return total;
  }
  int64_t pos[kMaxWindowRank];  // zeroed by a loop: `= {}` became a slow rep stos per item
  for (int a = 0; a < outer; ++a) pos[a] = 0;
  int64_t* out = offs->data();
  for (size_t r = 0; r < total; ++r) {
    int64_t off = 0;
    for (int a = 0; a < outer; ++a) off += lists[a][pos[a]];
    out[r] = off;
    for (int a = outer - 1; a >= 0; --a) {
      if (++pos[a] < cnt[a]) break;
      pos[a] = 0;
    }
  }
  return total;
}

template <class T>
HWY_INLINE void Fill(T* p, int64_t n, T v) {
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

// One work item: output row `row`, columns [j0, j1).
template <class T, int kOp>
void Item(const Geo& g, const Tables& tab, const T* x, T* y, const int64_t* o, int64_t row,
          int64_t j0, int64_t j1, Scratch<T>& sc) {
  const size_t nr = RowOffsets(g, tab, o, &sc.offs);
  const int L = g.m - 1;
  T* yrow = y + row * g.cols;
  if (g.last_pass) {
    for (size_t r = 0; r < nr; ++r) sc.offs[r] += j0;
    if (Vertical<T, kOp>(x, sc.offs.data(), nr, j1 - j0, yrow + j0)) {
      VerticalScalar<T, kOp>(x, sc.offs.data(), nr, j1 - j0, yrow + j0);
    }
    return;
  }
  const int64_t w = g.w[L], s = g.s[L], wd = g.wd[L], bd = g.bd[L], pl = g.pl[L], H = g.in[L];
  const T* x_end = x + g.in[0] * g.in_stride[0];
  // The buffer holds positions [e0, e1) of the padded, dilated last axis.
  const int64_t e0 = j0 * s, e1 = (j1 - 1) * s + (w - 1) * wd + 1;
  const int64_t ne = e1 - e0;
  // Grown only (new elements zeroed), so the slack past ne is always initialized memory.
  if (sc.row.size() < static_cast<size_t>(ne + kSlack))
    sc.row.resize(static_cast<size_t>(ne + kSlack));
  T* e = sc.row.data();
  const T id = Ident<T, kOp>();
  bool nan = false;
  if (bd == 1) {
    // Input elements i in [i0, i1) land at buffer index i + pl - e0.
    const int64_t i0 = std::max<int64_t>(0, e0 - pl), i1 = std::min<int64_t>(H, e1 - pl);
    if (i0 >= i1) {
      Fill(e, ne, id);
    } else {
      Fill(e, i0 + pl - e0, id);
      for (size_t r = 0; r < nr; ++r) sc.offs[r] += i0;
      // The vertical pass may write a vector past i1 (slack): the right padding comes after.
      nan = Vertical<T, kOp>(x, sc.offs.data(), nr, i1 - i0, e + (i0 + pl - e0), x_end, true);
      if (nan) VerticalScalar<T, kOp>(x, sc.offs.data(), nr, i1 - i0, e + (i0 + pl - e0));
      Fill(e + (i1 + pl - e0), ne - (i1 + pl - e0), id);
    }
  } else {
    // Base dilation (the transpose of a strided window): present positions are bd apart.
    Fill(e, ne, id);
    const int64_t q0 = std::max<int64_t>(0, e0 - pl);
    const int64_t i0 = (q0 + bd - 1) / bd, i1 = std::min<int64_t>(H, (e1 - pl - 1) / bd + 1);
    if (i0 < i1 && e1 - pl > 0) {
      sc.col.resize(static_cast<size_t>(i1 - i0));
      for (size_t r = 0; r < nr; ++r) sc.offs[r] += i0;
      VerticalScalar<T, kOp>(x, sc.offs.data(), nr, i1 - i0, sc.col.data());
      for (int64_t i = i0; i < i1; ++i) e[i * bd + pl - e0] = sc.col[static_cast<size_t>(i - i0)];
      if constexpr (kWatchNaN<T, kOp>) {
        for (int64_t i = i0; i < i1 && !nan; ++i)
          nan = sc.col[static_cast<size_t>(i - i0)] != sc.col[static_cast<size_t>(i - i0)];
      }
    }
  }
  if (nan) {
    HorizontalScalar<T, kOp>(e, j1 - j0, w, s, wd, yrow + j0);
  } else {
    Horizontal<T, kOp>(e, j1 - j0, w, s, wd, yrow + j0);
  }
}

// ---- The plane path: a window on the last two axes only (NCHW pooling, one plane at a time) --
//
// Output row o of a plane: its present input rows are reduced elementwise (vertical) straight
// into a padded row buffer whose padding was set to the identity once per chunk (the rows are
// written at the same positions every time, so the padding never changes), then the last
// axis's window slides over it (horizontal); a mean divides each sum by its count in the same
// pass. The same operations in the same order as Item: the same bits.

// Elements of the padded row buffer, and the most window rows / output columns, of the path.
constexpr int64_t kPlaneRow = 4096;
constexpr int64_t kPlaneBuffer = 8192;  // the row buffers of a batch
constexpr int64_t kPlaneBatch = 8;      // rows per batch
constexpr int64_t kPlaneMaxRows = 64;
constexpr int64_t kPlaneMaxCols = 2048;

// True if the plane path computes g: after merging, [planes,] H, W with the window on H and W
// only, no base dilation, stride 1 or 2 and no window dilation on W, and rows that fit.
inline bool PlaneOk(const Geo& g) {
  if (g.m != 2 && g.m != 3) return false;
  const int A = g.m - 2, L = g.m - 1;
  if (g.m == 3 &&
      !(g.w[0] == 1 && g.s[0] == 1 && g.bd[0] == 1 && g.pl[0] == 0 && g.in[0] == g.out[0])) {
    return false;
  }
  if (g.last_pass || g.bd[A] != 1 || g.bd[L] != 1 || g.wd[L] != 1) return false;
  if (g.s[L] != 1 && g.s[L] != 2) return false;
  if (g.w[A] > kPlaneMaxRows || g.cols > kPlaneMaxCols) return false;
  const int64_t ne = (g.cols - 1) * g.s[L] + g.w[L];
  return ne + kSlack <= kPlaneRow;
}

// The window positions k < w of output o (stride s, dilation wd, low pad pl) whose position
// lies in [lo, hi) of the unpadded axis.
inline int64_t CountInside(int64_t o, int64_t w, int64_t s, int64_t wd, int64_t pl, int64_t lo,
                           int64_t hi) {
  int64_t n = 0;
  for (int64_t k = 0; k < w; ++k) {
    const int64_t p = o * s + k * wd - pl;
    n += p >= lo && p < hi;
  }
  return n;
}

// The first n (< lanes) elements at p, the other lanes 0, reading nothing past p + n; and the
// first n lanes of v stored at p, writing nothing else. AVX2 and AVX-512 mask the access
// itself; elsewhere Highway's masked forms read or write the whole vector, so a copy.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> LoadFirstN(D d, const T* HWY_RESTRICT p, int64_t n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  return hn::MaskedLoad(hn::FirstN(d, static_cast<size_t>(n)), d, p);
#else
  HWY_ALIGN T tmp[hn::MaxLanes(d)] = {};
  std::copy(p, p + n, tmp);
  return hn::Load(d, tmp);
#endif
}
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE void StoreFirstN(D d, hn::Vec<D> v, T* HWY_RESTRICT p, int64_t n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  hn::BlendedStore(v, hn::FirstN(d, static_cast<size_t>(n)), d, p);
#else
  HWY_ALIGN T tmp[hn::MaxLanes(d)];
  hn::Store(v, d, tmp);
  std::copy(tmp, tmp + n, p);
#endif
}

// Vertical into dst[0, len) (no element past len written, none past the rows read): rows at
// x + offs[r]. Returns whether a NaN was loaded (float max/min).
template <class T, int kOp>
HWY_INLINE bool PlaneVertical(const T* HWY_RESTRICT x, const int64_t* offs, int64_t nr, int64_t len,
                              T* HWY_RESTRICT dst) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (nr == 0) {
    for (int64_t t = 0; t < len; ++t) dst[t] = Ident<T, kOp>();
    return false;
  }
  auto nan = hn::Zero(d);
  int64_t t = 0;
  for (; t + N <= len; t += N) {
    auto v = hn::LoadU(d, x + offs[0] + t);
    if constexpr (kWatchNaN<T, kOp>) nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
    for (int64_t r = 1; r < nr; ++r) {
      const auto u = hn::LoadU(d, x + offs[r] + t);
      if constexpr (kWatchNaN<T, kOp>) nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(u)));
      v = VComb<kOp>(v, u);
    }
    hn::StoreU(v, d, dst + t);
  }
  if (t < len) {
    const int64_t rest = len - t;
    auto v = LoadFirstN(d, x + offs[0] + t, rest);
    if constexpr (kWatchNaN<T, kOp>) nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
    for (int64_t r = 1; r < nr; ++r) {
      const auto u = LoadFirstN(d, x + offs[r] + t, rest);
      if constexpr (kWatchNaN<T, kOp>) nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(u)));
      v = VComb<kOp>(v, u);
    }
    StoreFirstN(d, v, dst + t, rest);
  }
  if constexpr (kWatchNaN<T, kOp>) return !hn::AllFalse(d, hn::IsNaN(nan));
  return false;
}

// Horizontal over the padded row e (kSlack readable past its end) into y[0, n): window w,
// stride s (1 or 2). kMean: each sum divided by rows * cols[j] (cols has n + lanes entries).
template <class T, int kOp, bool kMean>
HWY_INLINE void PlaneHorizontal(const T* HWY_RESTRICT e, int64_t n, int64_t w, int64_t s, T rows,
                                const T* HWY_RESTRICT cols, T* HWY_RESTRICT y) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vrows = hn::Set(d, rows);
  const auto finish = [&](hn::Vec<decltype(d)> v, int64_t j) {
    if constexpr (kMean) v = hn::Div(v, hn::Mul(vrows, hn::LoadU(d, cols + j)));
    if (j + N <= n) {
      hn::StoreU(v, d, y + j);
    } else {
      StoreFirstN(d, v, y + j, n - j);
    }
  };
  if (s == 1) {
    for (int64_t j = 0; j < n; j += N) {
      auto v = hn::LoadU(d, e + j);
      for (int64_t k = 1; k < w; ++k) v = VComb<kOp>(v, hn::LoadU(d, e + j + k));
      finish(v, j);
    }
    return;
  }
#if HWY_TARGET != HWY_SCALAR
  for (int64_t j = 0; j < n; j += N) {
    const T* base = e + 2 * j;
    auto v = hn::Zero(d);
    for (int64_t k = 0; k < w; ++k) {
      const T* p = base + (k & ~int64_t{1});
      const auto lo = hn::LoadU(d, p);
      const auto hi = hn::LoadU(d, p + N);
      const auto u = (k & 1) ? hn::ConcatOdd(d, hi, lo) : hn::ConcatEven(d, hi, lo);
      v = k == 0 ? u : VComb<kOp>(v, u);
    }
    finish(v, j);
  }
#else
  for (int64_t j = 0; j < n; ++j) {
    T v = e[j * s];
    for (int64_t k = 1; k < w; ++k) v = Comb<T, kOp>(v, e[j * s + k]);
    y[j] = kMean ? v / (rows * cols[j]) : v;
  }
#endif
}

// The plane path (PlaneOk(g)); kMean: a sum divided by the count of window positions inside
// [-cpl, size + cph) per axis (g.cpl, g.cph).
template <class T, int kOp, bool kMean>
void RunPlanes(const Geo& g, const T* x, T* y, ThreadPool* pool) {
  const int A = g.m - 2, L = g.m - 1;
  const int64_t planes = g.m == 3 ? g.out[0] : 1;
  const int64_t H = g.in[A], W = g.in[L], oh = g.out[A], ow = g.cols;
  const int64_t wh = g.w[A], sh = g.s[A], dh = g.wd[A], ph = g.pl[A];
  const int64_t w = g.w[L], s = g.s[L], pl = g.pl[L];
  const int64_t ne = (ow - 1) * s + w;
  // Input columns [i0, i1) land at buffer positions [i0 + pl, i1 + pl).
  const int64_t i0 = std::max<int64_t>(0, -pl), i1 = std::min<int64_t>(W, ne - pl);
  const int64_t items = planes * oh;
  const int64_t per_item = std::max<int64_t>(1, ow * wh * w);
  const int64_t grain = std::max<int64_t>(1, kGrainWork / per_item);
  // Rows per batch: the vertical pass writes a batch's rows, then the horizontal pass reads
  // them back at unaligned offsets. Row by row, each load hit the stores just made, which
  // cannot forward to a load that spans two of them (half the time of a 3x3 pool on Zen 4).
  const int64_t stride = (ne + kSlack + 15) / 16 * 16;
  const int64_t batch = std::min<int64_t>(kPlaneBatch, kPlaneBuffer / stride);
  ParallelFor(pool, items, grain, [&](int64_t b, int64_t e) {
    HWY_ALIGN T buf[kPlaneBuffer];
    T cols[kMean ? kPlaneMaxCols + 64 : 1];
    for (int64_t t = 0; t < batch * stride; ++t) buf[t] = Ident<T, kOp>();
    if constexpr (kMean) {
      for (int64_t j = 0; j < ow; ++j) {
        cols[j] = static_cast<T>(CountInside(j, w, s, 1, pl, -g.cpl[L], W + g.cph[L]));
      }
      for (int64_t j = ow; j < ow + 64; ++j) cols[j] = T(1);
    }
    const int64_t len = std::max<int64_t>(0, i1 - i0);
    int64_t offs[kPlaneMaxRows];
    bool nan[kPlaneBatch];
    for (int64_t it0 = b; it0 < e; it0 += batch) {
      const int64_t it1 = std::min(e, it0 + batch);
      for (int64_t it = it0; it < it1; ++it) {
        const int64_t plane = it / oh, o = it % oh;
        int64_t nr = 0;
        for (int64_t k = 0; k < wh; ++k) {
          const int64_t p = o * sh + k * dh - ph;
          if (p >= 0 && p < H) offs[nr++] = p * W + i0;
        }
        const T* xp = x + plane * H * W;
        T* dst = buf + (it - it0) * stride + i0 + pl;
        nan[it - it0] = PlaneVertical<T, kOp>(xp, offs, nr, len, dst);
        // A NaN in a float max/min: the scalar form propagates it.
        if (nan[it - it0]) VerticalScalar<T, kOp>(xp, offs, static_cast<size_t>(nr), len, dst);
      }
      for (int64_t it = it0; it < it1; ++it) {
        const T* row = buf + (it - it0) * stride;
        T* yrow = y + it * ow;
        if (nan[it - it0]) {
          HorizontalScalar<T, kOp>(row, ow, w, s, 1, yrow);
          continue;
        }
        const int64_t o = it % oh;
        const T rows =
            kMean ? static_cast<T>(CountInside(o, wh, sh, dh, ph, -g.cpl[A], H + g.cph[A])) : T(1);
        PlaneHorizontal<T, kOp, kMean>(row, ow, w, s, rows, cols, yrow);
      }
    }
  });
}

template <class T, int kOp>
void Run(const Geo& g, const T* x, T* y, ThreadPool* pool) {
  if (PlaneOk(g)) return RunPlanes<T, kOp, false>(g, x, y, pool);
  const int64_t items = g.rows * g.col_blocks;
  // Work per item: its outputs times the window size (at least 1 op each).
  int64_t window = 1;
  for (int a = 0; a < g.m; ++a) window = std::min<int64_t>(window * g.w[a], int64_t{1} << 20);
  const int64_t per_item = std::max<int64_t>(1, g.col_block * window);
  const int64_t grain = std::max<int64_t>(1, kGrainWork / per_item);
  Tables tab;
  BuildTables(g, &tab);
  ParallelFor(pool, items, grain, [&](int64_t b, int64_t e) {
    Scratch<T> sc;
    // The output row's coordinates, advanced as an odometer (no division per item).
    int64_t o[kMaxWindowRank];
    int64_t row = b / g.col_blocks, cb = b % g.col_blocks;
    for (int a = g.m - 2; a >= 0; --a) {
      o[a] = row % g.out[a];
      row /= g.out[a];
    }
    row = b / g.col_blocks;
    for (int64_t it = b; it < e; ++it) {
      const int64_t j0 = cb * g.col_block, j1 = std::min(g.cols, j0 + g.col_block);
      Item<T, kOp>(g, tab, x, y, o, row, j0, j1, sc);
      if (++cb == g.col_blocks) {
        cb = 0;
        ++row;
        for (int a = g.m - 2; a >= 0; --a) {
          if (++o[a] < g.out[a]) break;
          o[a] = 0;
        }
      }
    }
  });
}

// A mean off the plane path: the window sums, then each divided by its count in place.
template <class T>
void RunMean(const Geo& g, const T* x, T* y, ThreadPool* pool) {
  if (PlaneOk(g)) return RunPlanes<T, kSumOp, true>(g, x, y, pool);
  Run<T, kSumOp>(g, x, y, pool);
  const int L = g.m - 1;
  const int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, g.cols * g.w[L]));
  ParallelFor(pool, g.rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rows = 1, rest = row;
      for (int a = L - 1; a >= 0; --a) {
        const int64_t o = rest % g.out[a];
        rest /= g.out[a];
        rows *= CountInside(o, g.w[a], g.s[a], g.wd[a], g.pl[a], -g.cpl[a], g.in[a] + g.cph[a]);
      }
      T* yr = y + row * g.cols;
      for (int64_t j = 0; j < g.cols; ++j) {
        const int64_t cols =
            CountInside(j, g.w[L], g.s[L], g.wd[L], g.pl[L], -g.cpl[L], g.in[L] + g.cph[L]);
        yr[j] = yr[j] / (static_cast<T>(rows) * static_cast<T>(cols));
      }
    }
  });
}

template <class T>
void RunOp(ReduceOp op, const Geo& g, const void* in, void* out, ThreadPool* pool) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  switch (op) {
    case ReduceOp::kMean:
      if constexpr (std::is_floating_point<T>::value) return RunMean<T>(g, x, y, pool);
      return;
    case ReduceOp::kMax:
      return Run<T, kMaxOp>(g, x, y, pool);
    case ReduceOp::kMin:
      return Run<T, kMinOp>(g, x, y, pool);
    default:
      return Run<T, kSumOp>(g, x, y, pool);
  }
}

}  // namespace rw_impl

// Validates, merges the axes the window leaves alone, and runs (see reduce_window.h).
// op kMean: ReduceWindowMean (count_pad_low / count_pad_high: per axis, or null for 0).
HWY_INLINE bool ReduceWindowImpl(ReduceOp op, DType dtype, const void* in, int rank,
                                 const WindowDim* dims, const int64_t* count_pad_low,
                                 const int64_t* count_pad_high, void* out, ThreadPool* pool) {
  using rw_impl::Geo;
  if (op != ReduceOp::kSum && op != ReduceOp::kMax && op != ReduceOp::kMin &&
      op != ReduceOp::kMean) {
    return false;
  }
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kI32 &&
      dtype != DType::kI64) {
    return false;
  }
  if (op == ReduceOp::kMean && dtype != DType::kF32 && dtype != DType::kF64) return false;
  if (rank < 1 || rank > kMaxWindowRank || dims == nullptr) return false;
  if (op == ReduceOp::kMean) {
    for (int a = 0; a < rank; ++a) {
      const int64_t lo = count_pad_low == nullptr ? 0 : count_pad_low[a];
      const int64_t hi = count_pad_high == nullptr ? 0 : count_pad_high[a];
      if (dims[a].base_dilation != 1 || lo < 0 || hi < 0 || lo > (int64_t{1} << 61) ||
          hi > (int64_t{1} << 61)) {
        return false;
      }
    }
  }
  int64_t outs[kMaxWindowRank];
  int64_t in_elems = 1, out_elems = 1;
  for (int a = 0; a < rank; ++a) {
    if (!ReduceWindowOutputSize(dims[a], &outs[a]) || outs[a] < 0) return false;
    if (__builtin_mul_overflow(in_elems, dims[a].size, &in_elems) ||
        __builtin_mul_overflow(out_elems, outs[a], &out_elems)) {
      return false;
    }
  }
  if (out_elems == 0) return true;
  if (out == nullptr || (in_elems > 0 && in == nullptr)) return false;
  Geo g;
  for (int a = 0; a < rank; ++a) {
    const WindowDim& d = dims[a];
    if (g.m > 0 && rw_impl::PassThrough(d) && g.w[g.m - 1] == 1 && g.s[g.m - 1] == 1 &&
        g.bd[g.m - 1] == 1 && g.pl[g.m - 1] == 0 && g.in[g.m - 1] == g.out[g.m - 1]) {
      g.in[g.m - 1] *= d.size;  // merge with the previous untouched axis
      g.out[g.m - 1] *= outs[a];
      continue;
    }
    const bool pass = rw_impl::PassThrough(d);
    if (op == ReduceOp::kMean) {
      g.cpl[g.m] = count_pad_low == nullptr ? 0 : count_pad_low[a];
      g.cph[g.m] = count_pad_high == nullptr ? 0 : count_pad_high[a];
    }
    g.in[g.m] = d.size;
    g.out[g.m] = outs[a];
    g.w[g.m] = d.window;
    g.s[g.m] = d.stride;
    g.wd[g.m] = pass ? 1 : d.window_dilation;
    g.bd[g.m] = d.base_dilation;
    g.pl[g.m] = d.pad_low;
    ++g.m;
  }
  // The previous-axis merge test above only merges untouched axes: a windowed axis has
  // w, s, bd or padding different from the identity, or in != out.
  int64_t stride = 1;
  for (int a = g.m - 1; a >= 0; --a) {
    g.in_stride[a] = stride;
    stride *= g.in[a];
  }
  const int L = g.m - 1;
  for (int a = 0; a < L; ++a) g.rows *= g.out[a];
  g.cols = g.out[L];
  g.last_pass = g.w[L] == 1 && g.s[L] == 1 && g.bd[L] == 1 && g.pl[L] == 0 && g.in[L] == g.cols;
  g.col_block = std::min(g.cols, rw_impl::kColBlock);
  g.col_blocks = (g.cols + g.col_block - 1) / g.col_block;
  if (g.m == 1 && g.last_pass && op != ReduceOp::kMean) {  // nothing windowed: a copy
    std::copy(static_cast<const uint8_t*>(in),
              static_cast<const uint8_t*>(in) + in_elems * static_cast<int64_t>(DTypeSize(dtype)),
              static_cast<uint8_t*>(out));
    return true;
  }
  switch (dtype) {
    case DType::kF32:
      rw_impl::RunOp<float>(op, g, in, out, pool);
      break;
    case DType::kF64:
      rw_impl::RunOp<double>(op, g, in, out, pool);
      break;
    case DType::kI32:
      rw_impl::RunOp<int32_t>(op, g, in, out, pool);
      break;
    default:
      rw_impl::RunOp<int64_t>(op, g, in, out, pool);
      break;
  }
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
