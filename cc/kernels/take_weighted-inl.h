// Per-target loops of take_weighted (see take_weighted.h). A Highway "-inl.h" header:
// foreach_target.h re-includes it once per target (from take_weighted.cc), so it has a
// per-target include guard and is a textual header in Bazel. Every sum is a vector Mul then a
// vector Add (the library compiles this file with -ffp-contract=off), so each target, each
// tail and the scalar fallback give the same bits.
#if defined(SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_INL_H_
#undef SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cc/kernels/parallel.h"
#include "cc/kernels/take_weighted.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace take_weighted_impl {
constexpr int64_t kGrainTerms = 32768;  // least multiply-adds per thread chunk
constexpr int64_t kJBlock = 1024;       // output positions per work item when inner == 1

// Tails shorter than a vector go through a zero-padded aligned buffer (the same vector
// arithmetic as whole vectors; this Highway has no LoadN/StoreN).
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadTail(D d, const T* p, size_t r) {
  HWY_ALIGN T buf[HWY_MAX_BYTES / sizeof(T)] = {};
  for (size_t i = 0; i < r; ++i) buf[i] = p[i];
  return hn::Load(d, buf);
}
template <class D, class T>
HWY_INLINE void StoreTail(hn::Vec<D> v, D d, T* p, size_t r) {
  HWY_ALIGN T buf[HWY_MAX_BYTES / sizeof(T)];
  hn::Store(v, d, buf);
  for (size_t i = 0; i < r; ++i) p[i] = buf[i];
}

// One output row of `inner` elements: y = sum_t w[t] * src_t with src_t = base + off[t] * inner.
// K: the number of terms when known at compile time (1, 2, 4), else 0 (k at run time).
template <int K, class T>
HWY_INLINE void Row(const T* HWY_RESTRICT base, int64_t inner, const int64_t* off, const T* w,
                    int64_t k_run, T* HWY_RESTRICT y) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const int64_t k = K > 0 ? K : k_run;
  const size_t len = static_cast<size_t>(inner);
  const T* s0 = base + off[0] * inner;
  const auto w0 = hn::Set(d, w[0]);
  size_t i = 0;
  if (K == 1) {
    for (; i + N <= len; i += N) hn::StoreU(hn::Mul(w0, hn::LoadU(d, s0 + i)), d, y + i);
    if (i < len) {
      const size_t r = len - i;
      StoreTail(hn::Mul(w0, LoadTail(d, s0 + i, r)), d, y + i, r);
    }
    return;
  }
  if (K == 2) {
    const T* s1 = base + off[1] * inner;
    const auto w1 = hn::Set(d, w[1]);
    for (; i + N <= len; i += N) {
      const auto a = hn::Mul(w0, hn::LoadU(d, s0 + i));
      hn::StoreU(hn::Add(a, hn::Mul(w1, hn::LoadU(d, s1 + i))), d, y + i);
    }
    if (i < len) {
      const size_t r = len - i;
      const auto a = hn::Mul(w0, LoadTail(d, s0 + i, r));
      StoreTail(hn::Add(a, hn::Mul(w1, LoadTail(d, s1 + i, r))), d, y + i, r);
    }
    return;
  }
  for (; i + N <= len; i += N) {
    auto acc = hn::Mul(w0, hn::LoadU(d, s0 + i));
    for (int64_t t = 1; t < k; ++t) {
      acc = hn::Add(acc, hn::Mul(hn::Set(d, w[t]), hn::LoadU(d, base + off[t] * inner + i)));
    }
    hn::StoreU(acc, d, y + i);
  }
  if (i < len) {
    const size_t r = len - i;
    auto acc = hn::Mul(w0, LoadTail(d, s0 + i, r));
    for (int64_t t = 1; t < k; ++t) {
      acc = hn::Add(acc, hn::Mul(hn::Set(d, w[t]), LoadTail(d, base + off[t] * inner + i, r)));
    }
    StoreTail(acc, d, y + i, r);
  }
}

template <int K, class T>
HWY_NOINLINE void Rows(const T* x, int64_t n, int64_t inner, const int64_t* off, const T* w,
                       int64_t m, int64_t k, T* out, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t o = r / m, j = r % m;
    Row<K, T>(x + o * n * inner, inner, off + j * k, w + j * k, k, out + r * inner);
  }
}

// Positions [j0, j1) of one slice (inner == 1), vectorized along j with gathers: the tables
// transposed to [k, m] (offsets as the gather's index type TI).
template <class T, class TI>
HWY_NOINLINE void Gathered(const T* HWY_RESTRICT base, const TI* offt, const T* wt, int64_t m,
                           int64_t k, int64_t j0, int64_t j1, T* HWY_RESTRICT y) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  int64_t j = j0;
  for (; j + static_cast<int64_t>(N) <= j1; j += static_cast<int64_t>(N)) {
    auto acc = hn::Mul(hn::LoadU(d, wt + j), hn::GatherIndex(d, base, hn::LoadU(di, offt + j)));
    for (int64_t t = 1; t < k; ++t) {
      const auto v = hn::GatherIndex(d, base, hn::LoadU(di, offt + t * m + j));
      acc = hn::Add(acc, hn::Mul(hn::LoadU(d, wt + t * m + j), v));
    }
    hn::StoreU(acc, d, y + j);
  }
  if (j < j1) {  // padded lanes read offset 0 with weight 0 and are not stored
    const size_t r = static_cast<size_t>(j1 - j);
    auto acc = hn::Mul(LoadTail(d, wt + j, r), hn::GatherIndex(d, base, LoadTail(di, offt + j, r)));
    for (int64_t t = 1; t < k; ++t) {
      const auto v = hn::GatherIndex(d, base, LoadTail(di, offt + t * m + j, r));
      acc = hn::Add(acc, hn::Mul(LoadTail(d, wt + t * m + j, r), v));
    }
    StoreTail(acc, d, y + j, r);
  }
}

// The same positions element by element (an axis too long for the gathers' index type).
template <class T>
HWY_NOINLINE void Scalar(const T* base, const int64_t* off, const T* w, int64_t k, int64_t j0,
                         int64_t j1, T* y) {
  for (int64_t j = j0; j < j1; ++j) {
    T acc = w[j * k] * base[off[j * k]];
    for (int64_t t = 1; t < k; ++t) acc = acc + w[j * k + t] * base[off[j * k + t]];
    y[j] = acc;
  }
}
}  // namespace take_weighted_impl

// off: the validated [m, k] table (each in [0, n) when n > 0); total output > 0.
template <class T>
void TakeWeightedImpl(const T* x, int64_t outer, int64_t n, int64_t inner, const int64_t* off,
                      const T* w, int64_t m, int64_t k, T* out, ThreadPool* pool) {
  namespace ti = take_weighted_impl;
  if (k == 0 || n == 0) {
    std::memset(out, 0, static_cast<size_t>(outer * m * inner) * sizeof(T));
    return;
  }
  auto run = [&](int64_t items, int64_t terms_per_item, auto&& fn) {
    const int64_t grain =
        std::max<int64_t>(1, ti::kGrainTerms / std::max<int64_t>(1, terms_per_item));
    if (pool == nullptr) {
      fn(0, items);
    } else {
      pool->ParallelFor(items, grain, fn);
    }
  };
  if (inner > 1) {
    auto rows = [&](int64_t r0, int64_t r1) {
      if (k == 1) {
        ti::Rows<1, T>(x, n, inner, off, w, m, k, out, r0, r1);
      } else if (k == 2) {
        ti::Rows<2, T>(x, n, inner, off, w, m, k, out, r0, r1);
      } else {
        ti::Rows<0, T>(x, n, inner, off, w, m, k, out, r0, r1);
      }
    };
    run(outer * m, inner * k, rows);
    return;
  }
  const int64_t blocks = (m + ti::kJBlock - 1) / ti::kJBlock;
  using TI = hwy::MakeSigned<T>;
  if (n - 1 > static_cast<int64_t>(std::numeric_limits<TI>::max())) {
    auto scalar = [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t o = b / blocks, jb = b % blocks;
        const int64_t j0 = jb * ti::kJBlock, j1 = std::min(m, j0 + ti::kJBlock);
        ti::Scalar<T>(x + o * n, off, w, k, j0, j1, out + o * m);
      }
    };
    run(outer * blocks, std::min(m, ti::kJBlock) * k, scalar);
    return;
  }
  std::vector<TI> offt(static_cast<size_t>(m * k));
  std::vector<T> wt(static_cast<size_t>(m * k));
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t t = 0; t < k; ++t) {
      offt[static_cast<size_t>(t * m + j)] = static_cast<TI>(off[j * k + t]);
      wt[static_cast<size_t>(t * m + j)] = w[j * k + t];
    }
  }
  auto gathered = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t o = b / blocks, jb = b % blocks;
      const int64_t j0 = jb * ti::kJBlock, j1 = std::min(m, j0 + ti::kJBlock);
      ti::Gathered<T, TI>(x + o * n, offt.data(), wt.data(), m, k, j0, j1, out + o * m);
    }
  };
  run(outer * blocks, std::min(m, ti::kJBlock) * k, gathered);
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // SHAPEPOLY_CC_KERNELS_TAKE_WEIGHTED_INL_H_
