// Gather kernels (see gather.h): Take and TakeAlongAxis.
#include "cc/kernels/gather.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {
namespace {

constexpr int64_t kParallelBytes = int64_t{256} << 10;
constexpr int64_t kGrainBytes = int64_t{32} << 10;

// Maps index `i` of an axis of extent n to the element to read: i + n for -n <= i < 0, i for
// 0 <= i < n; an invalid index sets *bad and is clamped into [0, n - 1] (-1 when n == 0: the
// caller zero-fills).
inline int64_t Resolve(int64_t i, int64_t n, bool* bad) {
  if (i >= n || i < -n) {
    *bad = true;
    return i < 0 ? (n > 0 ? 0 : -1) : n - 1;
  }
  return i < 0 ? i + n : i;
}

template <typename I>
inline int64_t IndexAt(const void* indices, int64_t pos) {
  I v;
  std::memcpy(&v, static_cast<const uint8_t*>(indices) + pos * static_cast<int64_t>(sizeof(I)),
              sizeof(I));
  return static_cast<int64_t>(v);
}

// Copies `bytes` bytes (typed for the common small sizes, which a loop of memcpy calls with a
// runtime size would make slow), or zero-fills when src is null.
inline void CopyBytes(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  if (src == nullptr) {
    std::memset(dst, 0, static_cast<size_t>(bytes));
    return;
  }
  switch (bytes) {
    case 1:
      *dst = *src;
      return;
    case 2:
      std::memcpy(dst, src, 2);
      return;
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    default:
      std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
}

// Lowers *first to `pos` if smaller (lock-free).
void AtomicMin(std::atomic<int64_t>* first, int64_t pos) {
  int64_t cur = first->load(std::memory_order_relaxed);
  while (pos < cur && !first->compare_exchange_weak(cur, pos, std::memory_order_relaxed)) {
  }
}

bool ValidArgs(int64_t outer, int64_t axis_extent, int64_t inner, IndexType type,
               int64_t num_indices, int64_t es) {
  return outer >= 0 && axis_extent >= 0 && inner >= 0 && num_indices >= 0 && es >= 1 &&
         (type == IndexType::kI32 || type == IndexType::kI64);
}

template <typename Fn>
void Run(ThreadPool* pool, int64_t rows, int64_t row_bytes, const Fn& fn) {
  if (pool != nullptr && rows > 1 && rows * row_bytes >= kParallelBytes) {
    ParallelFor(pool, rows, std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(row_bytes, 1)),
                fn);
  } else {
    fn(0, rows);
  }
}

// Rows [begin, end) of a take (row = o * num + j), with kBytes-byte rows (0: row_bytes): the
// axis position walks along without a division per row, and small rows copy at a constant
// size (a gather of scalars was 6 ns per element with both).
template <typename I, int64_t kBytes>
void TakeRows(const uint8_t* in, int64_t n, const void* indices, int64_t num, int64_t row_bytes,
              uint8_t* out, int64_t begin, int64_t end) {
  const int64_t rb = kBytes > 0 ? kBytes : row_bytes;
  int64_t o = begin / num, j = begin % num;
  for (int64_t row = begin; row < end; ++row) {
    bool bad = false;
    const int64_t k = Resolve(IndexAt<I>(indices, j), n, &bad);
    uint8_t* dst = out + row * rb;
    if (k < 0) {
      std::memset(dst, 0, static_cast<size_t>(rb));
    } else {
      std::memcpy(dst, in + (o * n + k) * rb, static_cast<size_t>(rb));
    }
    if (++j == num) {
      j = 0;
      ++o;
    }
  }
}

template <typename I>
BadIndex TakeImpl(const uint8_t* in, int64_t outer, int64_t n, int64_t inner, const void* indices,
                  int64_t num, int64_t es, uint8_t* out, ThreadPool* pool) {
  BadIndex status;
  for (int64_t j = 0; j < num; ++j) {  // status first: independent of outer and threads
    bool bad = false;
    Resolve(IndexAt<I>(indices, j), n, &bad);
    if (bad) {
      status.position = j;
      status.index = IndexAt<I>(indices, j);
      break;
    }
  }
  const int64_t row_bytes = inner * es;
  if (outer == 0 || num == 0 || row_bytes == 0) return status;
  Run(pool, outer * num, row_bytes, [&](int64_t begin, int64_t end) {
    switch (row_bytes) {
      case 1:
        return TakeRows<I, 1>(in, n, indices, num, row_bytes, out, begin, end);
      case 2:
        return TakeRows<I, 2>(in, n, indices, num, row_bytes, out, begin, end);
      case 4:
        return TakeRows<I, 4>(in, n, indices, num, row_bytes, out, begin, end);
      case 8:
        return TakeRows<I, 8>(in, n, indices, num, row_bytes, out, begin, end);
      default:
        return TakeRows<I, 0>(in, n, indices, num, row_bytes, out, begin, end);
    }
  });
  return status;
}

template <typename I>
BadIndex TakeAlongAxisImpl(const uint8_t* in, int64_t outer, int64_t n, int64_t inner,
                           const void* indices, int64_t num, int64_t es, uint8_t* out,
                           ThreadPool* pool) {
  BadIndex status;
  const int64_t total = outer * num * inner;
  if (total == 0) return status;
  std::atomic<int64_t> first_bad{total};
  Run(pool, outer * num, inner * es, [&](int64_t begin, int64_t end) {
    int64_t local_bad = total;
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row / num;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t pos = row * inner + i;
        bool bad = false;
        const int64_t k = Resolve(IndexAt<I>(indices, pos), n, &bad);
        if (bad && pos < local_bad) local_bad = pos;
        CopyBytes(out + pos * es, k < 0 ? nullptr : in + ((o * n + k) * inner + i) * es, es);
      }
    }
    if (local_bad < total) AtomicMin(&first_bad, local_bad);
  });
  const int64_t pos = first_bad.load();
  if (pos < total) {
    status.position = pos;
    status.index = IndexAt<I>(indices, pos);
  }
  return status;
}

// Validates, then runs Impl<int32_t> or Impl<int64_t> for the index type.
template <template <typename> class Impl>
bool Dispatch(const void* in, int64_t outer, int64_t axis_extent, int64_t inner,
              const void* indices, IndexType index_type, int64_t num_indices, int64_t elem_size,
              void* out, ThreadPool* pool, BadIndex* bad_index) {
  if (!ValidArgs(outer, axis_extent, inner, index_type, num_indices, elem_size)) return false;
  const uint8_t* src = static_cast<const uint8_t*>(in);
  uint8_t* dst = static_cast<uint8_t*>(out);
  const BadIndex bad = index_type == IndexType::kI32
                           ? Impl<int32_t>::Run(src, outer, axis_extent, inner, indices,
                                                num_indices, elem_size, dst, pool)
                           : Impl<int64_t>::Run(src, outer, axis_extent, inner, indices,
                                                num_indices, elem_size, dst, pool);
  if (bad_index != nullptr) *bad_index = bad;
  return true;
}

template <typename I>
struct TakeOp {
  template <typename... A>
  static BadIndex Run(A... args) {
    return TakeImpl<I>(args...);
  }
};
template <typename I>
struct TakeAlongAxisOp {
  template <typename... A>
  static BadIndex Run(A... args) {
    return TakeAlongAxisImpl<I>(args...);
  }
};

}  // namespace

bool Take(const void* in, int64_t outer, int64_t axis_extent, int64_t inner, const void* indices,
          IndexType index_type, int64_t num_indices, int64_t elem_size, void* out, ThreadPool* pool,
          BadIndex* bad_index) {
  return Dispatch<TakeOp>(in, outer, axis_extent, inner, indices, index_type, num_indices,
                          elem_size, out, pool, bad_index);
}

bool TakeAlongAxis(const void* in, int64_t outer, int64_t axis_extent, int64_t inner,
                   const void* indices, IndexType index_type, int64_t num_indices,
                   int64_t elem_size, void* out, ThreadPool* pool, BadIndex* bad_index) {
  return Dispatch<TakeAlongAxisOp>(in, outer, axis_extent, inner, indices, index_type, num_indices,
                                   elem_size, out, pool, bad_index);
}

}  // namespace kernels
}  // namespace shp
