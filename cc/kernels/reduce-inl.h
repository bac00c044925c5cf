// Per-target implementation of the reductions (see reduce.h): row and column kernels, and the
// drivers that validate, merge axes and combine reduced groups. A Highway "-inl.h" header:
// foreach_target.h re-includes it once per target (from reduce.cc), so it has a per-target
// include guard and is a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_REDUCE_INL_H_
#undef SHAPEPOLY_CC_KERNELS_REDUCE_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_REDUCE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "cc/kernels/narrow-inl.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/reduce.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace reduce_impl {

constexpr int64_t kRowBlock = 32768;    // row blocks for long contiguous reductions
constexpr int64_t kColBlock = 1024;     // column block of the strided (inner > 1) kernel
constexpr int64_t kGrainElems = 32768;  // minimum input elements per thread chunk

// A vector that keeps up to 64 elements inline (a reduction's axis groups: no allocation on a
// run of a cached plan), and moves to the heap beyond.
template <class T>
class AxisVec {
 public:
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[n_ - 1]; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + n_; }
  void push_back(T v) {
    if (n_ == kInline && heap_.empty()) heap_.assign(inline_, inline_ + kInline);
    if (n_ >= kInline) {
      heap_.push_back(v);
    } else {
      inline_[n_] = v;
    }
    ++n_;
  }

 private:
  static constexpr size_t kInline = 64;
  T* data() { return n_ > kInline ? heap_.data() : inline_; }
  const T* data() const { return n_ > kInline ? heap_.data() : inline_; }
  T inline_[kInline];
  std::vector<T> heap_;
  size_t n_ = 0;
};

// The identity of op in accumulator type A (bool is uint8_t).
template <class A>
A Identity(ReduceOp op, bool is_bool) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
      return A(0);
    case ReduceOp::kProd:
      return A(1);
    case ReduceOp::kMax:
      if (is_bool) return A(0);
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    case ReduceOp::kMin:
      if (is_bool) return A(1);
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::max();
  }
  return A(0);
}

template <class A>
inline A WrapAddA(A a, A b) {
  if constexpr (std::is_integral<A>::value && !std::is_same<A, uint8_t>::value) {
    using U = typename std::make_unsigned<A>::type;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<A>(a + b);
  }
}
template <class A>
inline A WrapMulA(A a, A b) {
  if constexpr (std::is_integral<A>::value && !std::is_same<A, uint8_t>::value) {
    using U = typename std::make_unsigned<A>::type;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<A>(a * b);
  }
}

// Combines two accumulator values (max/min propagate NaN).
template <class A>
inline A Combine(ReduceOp op, A a, A b) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
      return WrapAddA(a, b);
    case ReduceOp::kProd:
      return WrapMulA(a, b);
    case ReduceOp::kMax:
      if (a != a || b != b) return a != a ? a : b;
      return a > b ? a : b;
    case ReduceOp::kMin:
      if (a != a || b != b) return a != a ? a : b;
      return a < b ? a : b;
  }
  return a;
}

}  // namespace reduce_impl

using reduce_impl::Combine;
using reduce_impl::Identity;

// ---- Contiguous row: n elements -> one accumulator value ----

// The storage types S of the rows and columns below: the compute types, and f16/bf16 (F16Bits,
// BF16Bits: narrow-inl.h) loaded into f32 registers, whose results are those of the f32 code on
// the widened values. Compute<S> is the type S is computed in.
template <class S>
using Compute = decltype(ToCompute(S{}));

// Generic scalar row (ints, bool, prod): sequential in accumulator type.
template <class S, class A>
HWY_INLINE A RowScalar(ReduceOp op, const S* x, size_t n, A init) {
  A acc = init;
  for (size_t i = 0; i < n; ++i) acc = Combine<A>(op, acc, static_cast<A>(ToCompute(x[i])));
  return acc;
}

// f32 row sum accumulated in double (4 vector accumulators; scalar tail); S: float, F16Bits or
// BF16Bits.
template <class S>
HWY_INLINE double RowSumF32(const S* HWY_RESTRICT x, size_t n) {
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  auto a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    hn::Vec<decltype(dd)> v0, v1, v2, v3;
    LoadTwoAsF64(dd, x + i, &v0, &v1);
    LoadTwoAsF64(dd, x + i + 2 * N, &v2, &v3);
    a0 = hn::Add(a0, v0);
    a1 = hn::Add(a1, v1);
    a2 = hn::Add(a2, v2);
    a3 = hn::Add(a3, v3);
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, hn::PromoteTo(dd, LoadAs(df, x + i)));
  double tail = 0;
  for (; i < n; ++i) tail += static_cast<double>(ToCompute(x[i]));
  return hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)))) + tail;
#else
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += static_cast<double>(ToCompute(x[i]));
  return s;
#endif
}

HWY_INLINE double RowSumF64(const double* HWY_RESTRICT x, size_t n) {
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> d;
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, hn::LoadU(d, x + i));
    a1 = hn::Add(a1, hn::LoadU(d, x + i + N));
    a2 = hn::Add(a2, hn::LoadU(d, x + i + 2 * N));
    a3 = hn::Add(a3, hn::LoadU(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, hn::LoadU(d, x + i));
  double tail = 0;
  for (; i < n; ++i) tail += x[i];
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)))) + tail;
#else
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
#endif
}

// Float row max/min with NaN propagation (S: T, or f16/bf16 computed in T = float).
template <class T, class S>
HWY_INLINE T RowMaxMin(bool is_max, const S* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T init = is_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  auto acc = hn::Set(d, init);
  auto nan = hn::Zero(d);  // lanes become non-zero (all ones) once a NaN was seen
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = LoadAs(d, x + i);
    acc = is_max ? hn::Max(acc, v) : hn::Min(acc, v);
    nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
  }
  if (!hn::AllFalse(d, hn::IsNaN(nan))) {  // all-ones lanes are NaN bit patterns
    return std::numeric_limits<T>::quiet_NaN();
  }
  T r = is_max ? hn::GetLane(hn::MaxOfLanes(d, acc)) : hn::GetLane(hn::MinOfLanes(d, acc));
  for (; i < n; ++i) r = Combine<T>(is_max ? ReduceOp::kMax : ReduceOp::kMin, r, ToCompute(x[i]));
  return r;
}

template <class S, class A>
HWY_INLINE A Row(ReduceOp op, const S* x, size_t n, bool is_bool) {
  using T = Compute<S>;
  const bool sum = op == ReduceOp::kSum || op == ReduceOp::kMean;
  if constexpr (std::is_same<T, float>::value) {
    if (sum) return static_cast<A>(RowSumF32(x, n));
  }
  if constexpr (std::is_same<S, double>::value) {
    if (sum) return static_cast<A>(RowSumF64(x, n));
  }
  if constexpr (std::is_floating_point<T>::value && std::is_same<T, A>::value) {
    if (op == ReduceOp::kMax || op == ReduceOp::kMin) {
      return RowMaxMin<T>(op == ReduceOp::kMax, x, n);
    }
  }
  if constexpr (std::is_same<S, uint8_t>::value) {  // bool is uint8_t
    if (is_bool) {                                  // any non-zero byte is true
      if (op == ReduceOp::kMax) {
        for (size_t i = 0; i < n; ++i) {
          if (x[i] != 0) return A(1);
        }
        return A(0);
      }
      for (size_t i = 0; i < n; ++i) {
        if (x[i] == 0) return A(0);
      }
      return A(1);
    }
  }
  return RowScalar<S, A>(op, x, n, Identity<A>(op, false));
}

// ---- Columns: acc[j] = acc[j] (op) x[j], j < n (S: a storage type as for Row) ----
template <class S, class A>
HWY_INLINE void Col(ReduceOp op, const S* HWY_RESTRICT x, A* HWY_RESTRICT acc, size_t n,
                    bool is_bool) {
  using T = Compute<S>;
  const bool sum = op == ReduceOp::kSum || op == ReduceOp::kMean;
  size_t i = 0;
#if HWY_HAVE_FLOAT64
  if constexpr (std::is_same<T, float>::value && std::is_same<A, double>::value) {
    if (sum) {
      const hn::ScalableTag<double> dd;
      const hn::Rebind<float, decltype(dd)> df;
      const size_t N = hn::Lanes(dd);
      if constexpr (!std::is_same<S, float>::value) {  // 2N at a time: one conversion
        for (; i + 2 * N <= n; i += 2 * N) {
          hn::Vec<decltype(dd)> v0, v1;
          LoadTwoAsF64(dd, x + i, &v0, &v1);
          hn::StoreU(hn::Add(hn::LoadU(dd, acc + i), v0), dd, acc + i);
          hn::StoreU(hn::Add(hn::LoadU(dd, acc + i + N), v1), dd, acc + i + N);
        }
      }
      for (; i + N <= n; i += N) {
        hn::StoreU(hn::Add(hn::LoadU(dd, acc + i), hn::PromoteTo(dd, LoadAs(df, x + i))), dd,
                   acc + i);
      }
    }
  }
#endif
  if constexpr (std::is_floating_point<T>::value && std::is_same<T, A>::value) {
    if (sum || op == ReduceOp::kMax || op == ReduceOp::kMin) {
      const hn::ScalableTag<T> d;
      const size_t N = hn::Lanes(d);
      for (; i + N <= n; i += N) {
        const auto a = hn::LoadU(d, acc + i);
        const auto v = LoadAs(d, x + i);
        auto r = sum ? hn::Add(a, v) : (op == ReduceOp::kMax ? hn::Max(a, v) : hn::Min(a, v));
        if (!sum) {  // NaN propagation: a NaN accumulator or element wins
          r = hn::IfThenElse(hn::IsNaN(v), v, hn::IfThenElse(hn::IsNaN(a), a, r));
        }
        hn::StoreU(r, d, acc + i);
      }
    }
  }
  if constexpr (std::is_same<S, uint8_t>::value) {  // bool is uint8_t
    if (is_bool) {
      for (; i < n; ++i) {
        acc[i] = op == ReduceOp::kMax ? A(acc[i] != 0 || x[i] != 0) : A(acc[i] != 0 && x[i] != 0);
      }
      return;
    }
  }
  for (; i < n; ++i) acc[i] = Combine<A>(op, acc[i], static_cast<A>(ToCompute(x[i])));
}

template <class T, class A>
void ReduceMiddleT(ReduceOp op, const T* in, int64_t outer, int64_t r, int64_t inner, A* out,
                   bool is_bool, ThreadPool* pool) {
  using reduce_impl::kColBlock;
  using reduce_impl::kGrainElems;
  using reduce_impl::kRowBlock;
  const A init = Identity<A>(op, is_bool);
  if (inner == 1) {
    if (r <= kRowBlock) {
      const int64_t grain = std::max<int64_t>(1, kGrainElems / std::max<int64_t>(1, r));
      ParallelFor(pool, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          out[o] = Row<T, A>(op, in + o * r, static_cast<size_t>(r), is_bool);
        }
      });
      return;
    }
    const int64_t blocks = (r + kRowBlock - 1) / kRowBlock;
    std::vector<A> partial(static_cast<size_t>(outer * blocks));
    ParallelFor(pool, outer * blocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / blocks, k = w % blocks;
        const int64_t len = std::min(kRowBlock, r - k * kRowBlock);
        partial[static_cast<size_t>(w)] =
            Row<T, A>(op, in + o * r + k * kRowBlock, static_cast<size_t>(len), is_bool);
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      A acc = init;
      for (int64_t k = 0; k < blocks; ++k) {
        acc = Combine<A>(op, acc, partial[static_cast<size_t>(o * blocks + k)]);
      }
      out[o] = acc;
    }
    return;
  }
  const int64_t cblocks = (inner + kColBlock - 1) / kColBlock;
  const int64_t per_item = std::max<int64_t>(1, r * std::min(inner, kColBlock));
  const int64_t grain = std::max<int64_t>(1, kGrainElems / per_item);
  ParallelFor(pool, outer * cblocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / cblocks, jb = (w % cblocks) * kColBlock;
      const int64_t len = std::min(kColBlock, inner - jb);
      A* acc = out + o * inner + jb;
      for (int64_t j = 0; j < len; ++j) acc[j] = init;
      for (int64_t k = 0; k < r; ++k) {
        Col<T, A>(op, in + (o * r + k) * inner + jb, acc, static_cast<size_t>(len), is_bool);
      }
    }
  });
}

// The f32 kernel's result of accumulator value a (Finish's rule for one f32 output).
template <class A>
HWY_INLINE float FinishF32(ReduceOp op, A a, int64_t count) {
  if constexpr (std::is_same<A, double>::value) {
    if (op == ReduceOp::kMean) {
      const double scale = 1.0 / static_cast<double>(count);
      return static_cast<float>(count == 0 ? a / 0.0 : a * scale);
    }
  }
  return static_cast<float>(a);
}

// Type-erased entry: in_t is the element type of `in`, acc_t that of `out`.
HWY_INLINE void ReduceMiddle(ReduceOp op, DType in_t, DType acc_t, const void* in, int64_t outer,
                             int64_t r, int64_t inner, void* out, ThreadPool* pool) {
  switch (in_t) {
    case DType::kF32:
      if (acc_t == DType::kF64) {
        return ReduceMiddleT(op, static_cast<const float*>(in), outer, r, inner,
                             static_cast<double*>(out), false, pool);
      }
      return ReduceMiddleT(op, static_cast<const float*>(in), outer, r, inner,
                           static_cast<float*>(out), false, pool);
    case DType::kF64:
      return ReduceMiddleT(op, static_cast<const double*>(in), outer, r, inner,
                           static_cast<double*>(out), false, pool);
    case DType::kI32:
      return ReduceMiddleT(op, static_cast<const int32_t*>(in), outer, r, inner,
                           static_cast<int32_t*>(out), false, pool);
    case DType::kI64:
      return ReduceMiddleT(op, static_cast<const int64_t*>(in), outer, r, inner,
                           static_cast<int64_t*>(out), false, pool);
    case DType::kBool:
      return ReduceMiddleT(op, static_cast<const uint8_t*>(in), outer, r, inner,
                           static_cast<uint8_t*>(out), true, pool);
    case DType::kF16:  // in f32 registers; accumulated as f32 is
      if (acc_t == DType::kF64) {
        return ReduceMiddleT(op, static_cast<const F16Bits*>(in), outer, r, inner,
                             static_cast<double*>(out), false, pool);
      }
      return ReduceMiddleT(op, static_cast<const F16Bits*>(in), outer, r, inner,
                           static_cast<float*>(out), false, pool);
    case DType::kBF16:
      if (acc_t == DType::kF64) {
        return ReduceMiddleT(op, static_cast<const BF16Bits*>(in), outer, r, inner,
                             static_cast<double*>(out), false, pool);
      }
      return ReduceMiddleT(op, static_cast<const BF16Bits*>(in), outer, r, inner,
                           static_cast<float*>(out), false, pool);
    default:  // the narrow integers: ValidOp refuses them
      return;
  }
}

// ---- Drivers ----

// True if op is defined on dtype (see ReduceOp).
HWY_INLINE bool ValidOp(ReduceOp op, DType dtype) {
  const int o = static_cast<int>(op);
  if (o < 0 || o > static_cast<int>(ReduceOp::kProd) || DTypeSize(dtype) == 0) return false;
  // f16/bf16: computed in f32 (their compute type) block by block; the other narrow types are
  // computed in theirs by the caller (dtype.h).
  if (IsNarrow(dtype)) return IsNarrowFloatType(dtype);
  return (op == ReduceOp::kMax || op == ReduceOp::kMin) ||
         (op == ReduceOp::kMean ? IsFloat(dtype) : dtype != DType::kBool);
}

// Accumulator dtype: double for f32 sum/mean/prod, else the input dtype.
// f16/bf16 accumulate as f32 does (their values are f32 values).
HWY_INLINE DType AccType(ReduceOp op, DType dtype) {
  if (IsNarrowFloatType(dtype)) dtype = DType::kF32;
  if (dtype == DType::kF32 && op != ReduceOp::kMax && op != ReduceOp::kMin) return DType::kF64;
  return dtype;
}

// Finish for f16/bf16 outputs: the f32 result of each accumulator value, rounded once to t.
template <class A>
HWY_INLINE void FinishNarrow(ReduceOp op, DType t, const A* acc, int64_t n, int64_t count,
                             void* out) {
  constexpr int64_t kChunk = 256;
  HWY_ALIGN float f[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    for (int64_t k = 0; k < m; ++k) f[k] = FinishF32<A>(op, acc[i + k], count);
    F32ToNarrow(t, f, static_cast<uint16_t*>(out) + i, static_cast<size_t>(m));
  }
}

// Converts n accumulator values to the output dtype; mean divides by count.
HWY_INLINE void Finish(ReduceOp op, DType dtype, DType acc_t, const void* acc, int64_t n,
                       int64_t count, void* out) {
  const bool mean = op == ReduceOp::kMean;
  const double scale = mean ? 1.0 / static_cast<double>(count) : 1.0;
  if (acc_t == DType::kF64) {
    const double* a = static_cast<const double*>(acc);
    if (dtype == DType::kF32) {
      float* o = static_cast<float*>(out);
      for (int64_t i = 0; i < n; ++i) {
        o[i] = static_cast<float>(mean ? (count == 0 ? a[i] / 0.0 : a[i] * scale) : a[i]);
      }
    } else {
      double* o = static_cast<double*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = mean ? (count == 0 ? a[i] / 0.0 : a[i] / count) : a[i];
    }
    return;
  }
  if (acc != out) memcpy(out, acc, static_cast<size_t>(n) * DTypeSize(dtype));
  if (mean && dtype == DType::kF32) {  // not reached: f32 mean accumulates in double
    float* o = static_cast<float*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = o[i] / static_cast<float>(count);
  }
}

// Reduce on this target (see reduce.h).
HWY_INLINE bool ReduceImpl(ReduceOp op, DType dtype, const void* in, int64_t outer, int64_t reduced,
                           int64_t inner, void* out, ThreadPool* pool) {
  if (!ValidOp(op, dtype) || outer < 0 || reduced < 0 || inner < 0) return false;
  const int64_t n_out = outer * inner;
  if (n_out == 0) return true;
  if (out == nullptr || (in == nullptr && reduced != 0)) return false;
  if (IsNarrowFloatType(dtype)) {  // f32 accumulators on the calling thread, then rounded once
    const DType acc_t = AccType(op, dtype);
    void* acc = ThreadScratch(kScratchReduce, static_cast<size_t>(n_out) * DTypeSize(acc_t));
    ReduceMiddle(op, dtype, acc_t, in, outer, reduced, inner, acc, pool);
    if (acc_t == DType::kF64) {
      FinishNarrow(op, dtype, static_cast<const double*>(acc), n_out, reduced, out);
    } else {
      FinishNarrow(op, dtype, static_cast<const float*>(acc), n_out, reduced, out);
    }
    return true;
  }
  const DType acc_t = AccType(op, dtype);
  const bool needs_finish = acc_t != dtype || op == ReduceOp::kMean;
  if (!needs_finish) {
    ReduceMiddle(op, dtype, acc_t, in, outer, reduced, inner, out, pool);
    return true;
  }
  std::vector<uint8_t> acc(static_cast<size_t>(n_out) * DTypeSize(acc_t));
  ReduceMiddle(op, dtype, acc_t, in, outer, reduced, inner, acc.data(), pool);
  Finish(op, dtype, acc_t, acc.data(), n_out, reduced, out);
  return true;
}

// ReduceAxes on this target (see reduce.h).
HWY_INLINE bool ReduceAxesImpl(ReduceOp op, DType dtype, const void* in, int rank,
                               const int64_t* shape, const bool* reduce_axis, void* out,
                               ThreadPool* pool) {
  if (!ValidOp(op, dtype) || rank < 0) return false;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0) return false;
  }
  // Groups of adjacent axes of one kind (extent-1 axes join any group).
  reduce_impl::AxisVec<int64_t> ext;
  reduce_impl::AxisVec<char> red;
  int64_t total = 1, count = 1;
  for (int d = 0; d < rank; ++d) {
    total *= shape[d];
    if (reduce_axis[d]) count *= shape[d];
    if (shape[d] == 1) continue;
    const char k = reduce_axis[d] ? 1 : 0;
    if (!red.empty() && red.back() == k) {
      ext.back() *= shape[d];
    } else {
      ext.push_back(shape[d]);
      red.push_back(k);
    }
  }
  const int64_t n_out = count == 0 ? [&] {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) if (!reduce_axis[d]) n *= shape[d];
    return n;
  }() : total / std::max<int64_t>(1, count);
  if (n_out == 0) return true;
  if (out == nullptr || (in == nullptr && total != 0)) return false;
  int groups = 0;
  for (char k : red) groups += k;
  if (groups <= 1) {
    // One reduced group (or none): a single (outer, reduced, inner) reduction.
    int64_t outer = 1, r = 1, inner = 1;
    bool seen = false;
    for (size_t g = 0; g < ext.size(); ++g) {
      if (red[g]) {
        r = ext[g];
        seen = true;
      } else if (seen) {
        inner *= ext[g];
      } else {
        outer *= ext[g];
      }
    }
    if (count == 0) {  // an empty reduced axis (dropped above as it is not extent 1)
      r = 0;
      outer = n_out;
      inner = 1;
    }
    return ReduceImpl(op, dtype, in, outer, r, inner, out, pool);
  }
  // Several groups: reduce the innermost reduced group first, in the accumulator type.
  const DType acc_t = AccType(op, dtype);
  const ReduceOp step_op = op == ReduceOp::kMean ? ReduceOp::kSum : op;
  std::vector<uint8_t> cur, next;
  const void* src = in;
  DType src_t = dtype;
  for (int g = static_cast<int>(ext.size()) - 1; g >= 0; --g) {
    if (!red[static_cast<size_t>(g)]) continue;
    int64_t outer = 1, inner = 1;
    for (int h = 0; h < g; ++h) outer *= ext[static_cast<size_t>(h)];
    for (size_t h = static_cast<size_t>(g) + 1; h < ext.size(); ++h) inner *= ext[h];
    next.assign(static_cast<size_t>(outer * inner) * DTypeSize(acc_t), 0);
    ReduceMiddle(step_op, src_t, acc_t, src, outer, ext[static_cast<size_t>(g)], inner, next.data(),
                 pool);
    ext[static_cast<size_t>(g)] = 1;
    cur.swap(next);
    src = cur.data();
    src_t = acc_t;
  }
  if (IsNarrowFloatType(dtype)) {
    if (acc_t == DType::kF64) {
      FinishNarrow(op, dtype, reinterpret_cast<const double*>(cur.data()), n_out, count, out);
    } else {
      FinishNarrow(op, dtype, reinterpret_cast<const float*>(cur.data()), n_out, count, out);
    }
    return true;
  }
  Finish(op, dtype, acc_t, cur.data(), n_out, count, out);
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
