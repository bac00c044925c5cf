// Scatter-add kernel (see scatter_add.h).
#include "cc/kernels/scatter_add.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {
namespace {

// Work (elements copied plus elements added) below which one thread runs the whole scatter,
// and the least work of one chunk of a parallel one.
constexpr int64_t kParallelWork = int64_t{1} << 16;
constexpr int64_t kGrainWork = int64_t{1} << 13;
// Columns of the inner axes one work item covers: long enough for contiguous loops, short
// enough that an outer extent of 1 still splits over threads.
constexpr int64_t kColumns = 2048;

template <typename I>
inline int64_t IndexAt(const void* indices, int64_t pos) {
  I v;
  std::memcpy(&v, static_cast<const uint8_t*>(indices) + pos * static_cast<int64_t>(sizeof(I)),
              sizeof(I));
  return static_cast<int64_t>(v);
}

// The row index i addresses on an axis of extent n, or -1 when i is invalid.
inline int64_t Resolve(int64_t i, int64_t n) {
  if (i >= n || i < -n) return -1;
  return i < 0 ? i + n : i;
}

// Integers wrap modulo 2^bits (as the elementwise add); floats add in their own precision.
template <typename T>
inline T Add(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
inline T Mul(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// max/min with NaN on either side giving NaN (for floats: a != a tests NaN).
template <typename T>
inline T Max(T a, T b) {
  if (a != a) return a;  // NOLINT(misc-redundant-expression): NaN test
  if (b != b) return b;  // NOLINT(misc-redundant-expression)
  return a < b ? b : a;
}
template <typename T>
inline T Min(T a, T b) {
  if (a != a) return a;  // NOLINT(misc-redundant-expression)
  if (b != b) return b;  // NOLINT(misc-redundant-expression)
  return b < a ? b : a;
}

// One row of len elements of the updates combined into d.
template <ScatterReduction R, typename T>
inline void Combine(T* d, const T* u, int64_t len) {
  if constexpr (R == ScatterReduction::kReplace) {
    std::memcpy(d, u, static_cast<size_t>(len) * sizeof(T));
  } else {
    for (int64_t i = 0; i < len; ++i) {
      if constexpr (R == ScatterReduction::kAdd) {
        d[i] = Add(d[i], u[i]);
      } else if constexpr (R == ScatterReduction::kMul) {
        d[i] = Mul(d[i], u[i]);
      } else if constexpr (R == ScatterReduction::kMax) {
        d[i] = Max(d[i], u[i]);
      } else {
        d[i] = Min(d[i], u[i]);
      }
    }
  }
}

template <ScatterReduction R, typename T, typename I>
BadIndex Impl(const T* base, int64_t outer, int64_t n, int64_t inner, const void* indices,
              int64_t num, const T* updates, T* out, ThreadPool* pool) {
  BadIndex status;
  for (int64_t j = 0; j < num; ++j) {  // status first: independent of the split
    if (Resolve(IndexAt<I>(indices, j), n) < 0) {
      status.position = j;
      status.index = IndexAt<I>(indices, j);
      break;
    }
  }
  if (outer == 0 || n == 0 || inner == 0) return status;  // an empty output
  const bool copy = out != base;
  const int64_t chunks = (inner + kColumns - 1) / kColumns;
  const int64_t cols = std::min(inner, kColumns);
  // One item: outer row o, columns [c0, c1) of every row of the axis. Within an item the index
  // positions are visited in order, so each element sums its updates in one fixed order.
  auto item = [&](int64_t w) {
    const int64_t o = w / chunks;
    const int64_t c0 = (w % chunks) * kColumns;
    const int64_t len = std::min(inner, c0 + kColumns) - c0;
    T* dst = out + o * n * inner + c0;
    if (copy) {
      const T* src = base + o * n * inner + c0;
      for (int64_t k = 0; k < n; ++k) {
        std::memcpy(dst + k * inner, src + k * inner, static_cast<size_t>(len) * sizeof(T));
      }
    }
    const T* upd = updates + o * num * inner + c0;
    for (int64_t j = 0; j < num; ++j) {
      const int64_t k = Resolve(IndexAt<I>(indices, j), n);
      if (k < 0) continue;
      Combine<R>(dst + k * inner, upd + j * inner, len);
    }
  };
  const int64_t items = outer * chunks;
  const int64_t per_item = std::max<int64_t>(1, (copy ? n : 0) + num) * cols;
  ThreadPool* p = items > 1 && items * per_item >= kParallelWork ? pool : nullptr;
  ParallelFor(p, items, std::max<int64_t>(1, kGrainWork / per_item),
              [&](int64_t begin, int64_t end) {
                for (int64_t w = begin; w < end; ++w) item(w);
              });
  return status;
}

template <ScatterReduction R, typename T>
BadIndex ByIndex(const void* base, int64_t outer, int64_t n, int64_t inner, const void* indices,
                 IndexType type, int64_t num, const void* updates, void* out, ThreadPool* pool) {
  const T* b = static_cast<const T*>(base);
  const T* u = static_cast<const T*>(updates);
  T* o = static_cast<T*>(out);
  return type == IndexType::kI32
             ? Impl<R, T, int32_t>(b, outer, n, inner, indices, num, u, o, pool)
             : Impl<R, T, int64_t>(b, outer, n, inner, indices, num, u, o, pool);
}

template <typename T>
BadIndex Typed(const void* base, int64_t outer, int64_t n, int64_t inner, const void* indices,
               IndexType type, int64_t num, const void* updates, ScatterReduction r, void* out,
               ThreadPool* pool) {
  switch (r) {
    case ScatterReduction::kReplace:
      return ByIndex<ScatterReduction::kReplace, T>(base, outer, n, inner, indices, type, num,
                                                    updates, out, pool);
    case ScatterReduction::kAdd:
      return ByIndex<ScatterReduction::kAdd, T>(base, outer, n, inner, indices, type, num, updates,
                                                out, pool);
    case ScatterReduction::kMul:
      return ByIndex<ScatterReduction::kMul, T>(base, outer, n, inner, indices, type, num, updates,
                                                out, pool);
    case ScatterReduction::kMax:
      return ByIndex<ScatterReduction::kMax, T>(base, outer, n, inner, indices, type, num, updates,
                                                out, pool);
    default:
      return ByIndex<ScatterReduction::kMin, T>(base, outer, n, inner, indices, type, num, updates,
                                                out, pool);
  }
}

// Whether [a, a + bytes) and [b, b + bytes) share a byte without being the same range.
bool PartialOverlap(const void* a, const void* b, int64_t bytes) {
  if (a == nullptr || b == nullptr || a == b || bytes <= 0) return false;
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b);
  const uintptr_t len = static_cast<uintptr_t>(bytes);
  return x < y + len && y < x + len;
}

}  // namespace

bool ScatterAdd(const void* base, int64_t outer, int64_t axis_extent, int64_t inner,
                const void* indices, IndexType index_type, int64_t num_indices, const void* updates,
                DType dtype, void* out, ThreadPool* pool, BadIndex* bad_index) {
  return Scatter(base, outer, axis_extent, inner, indices, index_type, num_indices, updates, dtype,
                 ScatterReduction::kAdd, out, pool, bad_index);
}

bool Scatter(const void* base, int64_t outer, int64_t axis_extent, int64_t inner,
             const void* indices, IndexType index_type, int64_t num_indices, const void* updates,
             DType dtype, ScatterReduction reduction, void* out, ThreadPool* pool,
             BadIndex* bad_index) {
  const int r = static_cast<int>(reduction);
  if (r < 0 || r >= kNumScatterReductions) return false;
  if (outer < 0 || axis_extent < 0 || inner < 0 || num_indices < 0) return false;
  if (index_type != IndexType::kI32 && index_type != IndexType::kI64) return false;
  if (!IsFloat(dtype) && !IsInt(dtype)) return false;
  // Sizes in bytes, refused when they would overflow (the caller's extents come from a plan,
  // whose sizes are checked; this guards direct calls).
  const int64_t es = static_cast<int64_t>(DTypeSize(dtype));
  int64_t base_bytes = es;
  for (int64_t e : {outer, axis_extent, inner}) {
    if (e != 0 && base_bytes > INT64_MAX / e) return false;
    base_bytes *= e;
  }
  if (PartialOverlap(base, out, base_bytes)) return false;
  BadIndex bad;
  switch (dtype) {
    case DType::kF32:
      bad = Typed<float>(base, outer, axis_extent, inner, indices, index_type, num_indices, updates,
                         reduction, out, pool);
      break;
    case DType::kF64:
      bad = Typed<double>(base, outer, axis_extent, inner, indices, index_type, num_indices,
                          updates, reduction, out, pool);
      break;
    case DType::kI32:
      bad = Typed<int32_t>(base, outer, axis_extent, inner, indices, index_type, num_indices,
                           updates, reduction, out, pool);
      break;
    default:
      bad = Typed<int64_t>(base, outer, axis_extent, inner, indices, index_type, num_indices,
                           updates, reduction, out, pool);
      break;
  }
  if (bad_index != nullptr) *bad_index = bad;
  return true;
}

}  // namespace kernels
}  // namespace shp
