// Gather kernels (see gather.h): Take and TakeAlongAxis. Plain C++ but for TakeAlongAxis's runs
// of 4-byte elements, which are SIMD gathers (detail::Gather4, gather_simd.cc).
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

// ---- TakeAlongAxis ----
//
// The output [outer, num, inner] is walked in flat runs that read x with a fixed pattern: when
// inner == 1, the positions j of one o (run along the indices' axis: element m reads
// src[k_m], src = x's row o); otherwise the positions i of one (o, j) (element m reads
// src[k_m * inner + m], src = x's plane o). Each element wraps its index (k + n for k < 0)
// and clamps it into [0, n - 1] without a branch, so a run is a tight loop of loads and
// stores; an invalid index only sets a flag, and the first one is found afterwards by a scan
// of the indices (the error path).

// Elements of `bytes` bytes: a typed copy for 1, 2, 4 and 8 (loads and stores through memcpy:
// any alignment), memcpy of `bytes` otherwise.
template <int kBytes>
struct Elem {
  static void Copy(uint8_t* dst, const uint8_t* src, int64_t) { std::memcpy(dst, src, kBytes); }
};
template <>
struct Elem<0> {
  static void Copy(uint8_t* dst, const uint8_t* src, int64_t es) {
    std::memcpy(dst, src, static_cast<size_t>(es));
  }
};

// One run of `len` elements: out[m] = src[(k_m * stride + m * step) * es], k_m the clamped
// index; returns whether some index was invalid. kStep is 0 (inner == 1: stride 1) or 1.
template <typename I, int kBytes, int kStep>
bool GatherRun(const uint8_t* src, int64_t stride, const uint8_t* idx, uint8_t* out, int64_t len,
               int64_t n, int64_t es) {
  const int64_t es_ = kBytes > 0 ? kBytes : es;
  const uint64_t un = static_cast<uint64_t>(n);
  bool invalid = false;
  int64_t m = 0;
  // 4-byte elements: whole vectors as SIMD gathers while the offsets fit in int32 (the rest,
  // and a vector with an invalid index, below).
  if (kBytes == 4 && len >= 16 && (n - 1) * stride + (len - 1) * kStep < (int64_t{1} << 31)) {
    m = detail::Gather4(src, stride, kStep, idx, sizeof(I) == 8, out, len, n);
  }
  for (; m < len; ++m) {
    I raw;
    std::memcpy(&raw, idx + m * static_cast<int64_t>(sizeof(I)), sizeof(I));
    const int64_t k = static_cast<int64_t>(raw);
    int64_t w = k + ((k >> 63) & n);       // no overflow: n > 0 is added to a negative k
    if (static_cast<uint64_t>(w) >= un) {  // invalid: clamped (rare; predicted not taken)
      invalid = true;
      w = w < 0 ? 0 : n - 1;
    }
    Elem<kBytes>::Copy(out + m * es_, src + (w * stride + m * kStep) * es_, es_);
  }
  return invalid;
}

// Positions [begin, end) of the flat output; returns whether some index there was invalid.
template <typename I, int kBytes>
bool TakeAlongAxisRange(const uint8_t* in, int64_t n, int64_t inner, const uint8_t* indices,
                        int64_t num, int64_t es, uint8_t* out, int64_t begin, int64_t end) {
  const int64_t isz = static_cast<int64_t>(sizeof(I));
  bool invalid = false;
  int64_t p = begin;
  if (inner == 1) {
    int64_t o = p / num, j = p - (p / num) * num;
    while (p < end) {
      const int64_t len = std::min(num - j, end - p);
      invalid |=
          GatherRun<I, kBytes, 0>(in + o * n * es, 1, indices + p * isz, out + p * es, len, n, es);
      p += len;
      j = 0;
      ++o;
    }
    return invalid;
  }
  const int64_t row = p / inner;
  int64_t i = p - row * inner, o = row / num, j = row - (row / num) * num;
  while (p < end) {
    const int64_t len = std::min(inner - i, end - p);
    invalid |= GatherRun<I, kBytes, 1>(in + (o * n * inner + i) * es, inner, indices + p * isz,
                                       out + p * es, len, n, es);
    p += len;
    i = 0;
    if (++j == num) {
      j = 0;
      ++o;
    }
  }
  return invalid;
}

template <typename I>
BadIndex TakeAlongAxisImpl(const uint8_t* in, int64_t outer, int64_t n, int64_t inner,
                           const void* indices, int64_t num, int64_t es, uint8_t* out,
                           ThreadPool* pool) {
  BadIndex status;
  const int64_t total = outer * num * inner;
  if (total == 0) return status;
  const uint8_t* idx = static_cast<const uint8_t*>(indices);
  bool invalid = true;
  if (n == 0) {  // nothing to read: every index is invalid, the output zero-filled
    std::memset(out, 0, static_cast<size_t>(total * es));
  } else {
    std::atomic<bool> any{false};
    auto range = [&](int64_t begin, int64_t end) {
      bool bad = false;
      switch (es) {
        case 1:
          bad = TakeAlongAxisRange<I, 1>(in, n, inner, idx, num, es, out, begin, end);
          break;
        case 2:
          bad = TakeAlongAxisRange<I, 2>(in, n, inner, idx, num, es, out, begin, end);
          break;
        case 4:
          bad = TakeAlongAxisRange<I, 4>(in, n, inner, idx, num, es, out, begin, end);
          break;
        case 8:
          bad = TakeAlongAxisRange<I, 8>(in, n, inner, idx, num, es, out, begin, end);
          break;
        default:
          bad = TakeAlongAxisRange<I, 0>(in, n, inner, idx, num, es, out, begin, end);
      }
      if (bad) any.store(true, std::memory_order_relaxed);
    };
    // Positions are the work items (each reads an index and moves one element, ~0.6 ns for
    // 4-byte ones). Threads only from 1 MiB of them (~50 us on one core): below, waking a
    // worker on a loaded machine cost more than it saved (64 x 1024 f32 by i64 indices: 41 us
    // on one thread, 74-87 us split in two at load 4-10).
    const int64_t item = es + static_cast<int64_t>(sizeof(I));
    if (pool != nullptr && total * item >= 4 * kParallelBytes) {
      ParallelFor(pool, total, std::max<int64_t>(1, kGrainBytes / item), range);
    } else {
      range(0, total);
    }
    invalid = any.load();
  }
  if (invalid) {  // the error path: the first invalid position, whatever the split
    for (int64_t pos = 0; pos < total; ++pos) {
      const int64_t k = IndexAt<I>(indices, pos);
      if (k < -n || k >= n) {
        status.position = pos;
        status.index = k;
        break;
      }
    }
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
