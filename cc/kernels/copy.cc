// Copy kernels (see copy.h): slice, pad, concatenate.
#include "cc/kernels/copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {
namespace {

// Bytes below which a copy runs on the caller's thread only.
constexpr int64_t kParallelBytes = int64_t{256} << 10;
// Bytes of output per ParallelFor grain unit.
constexpr int64_t kGrainBytes = int64_t{32} << 10;

// Odometer over n axes (row-major), tracking one input offset (elements).
struct Odometer {
  int n = 0;
  int64_t dims[kMaxCopyRank] = {};
  int64_t strides[kMaxCopyRank] = {};
  int64_t idx[kMaxCopyRank] = {};
  int64_t off = 0;

  void Seek(int64_t linear) {
    off = 0;
    for (int a = n - 1; a >= 0; --a) {
      idx[a] = linear % dims[a];
      linear /= dims[a];
      off += idx[a] * strides[a];
    }
  }
  void Next() {
    for (int a = n - 1; a >= 0; --a) {
      off += strides[a];
      if (++idx[a] < dims[a]) return;
      off -= idx[a] * strides[a];
      idx[a] = 0;
    }
  }
};

// Runs fn(begin, end) over [0, rows) rows of `row_bytes` bytes each, on the pool if large.
template <typename Fn>
void ForRows(ThreadPool* pool, int64_t rows, int64_t row_bytes, const Fn& fn) {
  if (pool != nullptr && rows > 1 && rows * row_bytes >= kParallelBytes) {
    ParallelFor(pool, rows, std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(row_bytes, 1)),
                fn);
  } else {
    fn(0, rows);
  }
}

// dst[j] = src[j * stride] for j < n elements of sizeof(T) bytes (stride in elements).
template <typename T>
void StridedCopy(const uint8_t* src, int64_t stride, uint8_t* dst, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    T v;
    std::memcpy(&v, src + j * stride * static_cast<int64_t>(sizeof(T)), sizeof(T));
    std::memcpy(dst + j * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
  }
}

void StridedCopyAny(const uint8_t* src, int64_t stride, uint8_t* dst, int64_t n, int64_t es) {
  switch (es) {
    case 1:
      StridedCopy<uint8_t>(src, stride, dst, n);
      return;
    case 2:
      StridedCopy<uint16_t>(src, stride, dst, n);
      return;
    case 4:
      StridedCopy<uint32_t>(src, stride, dst, n);
      return;
    case 8:
      StridedCopy<uint64_t>(src, stride, dst, n);
      return;
    default:
      for (int64_t j = 0; j < n; ++j) {
        std::memcpy(dst + j * es, src + j * stride * es, static_cast<size_t>(es));
      }
  }
}

// Writes n copies of the es-byte value at `value` to dst.
template <typename T>
void FillTyped(uint8_t* dst, const void* value, int64_t n) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  for (int64_t j = 0; j < n; ++j)
    std::memcpy(dst + j * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

void Fill(uint8_t* dst, const void* value, int64_t n, int64_t es) {
  switch (es) {
    case 1:
      std::memset(dst, *static_cast<const uint8_t*>(value), static_cast<size_t>(n));
      return;
    case 2:
      FillTyped<uint16_t>(dst, value, n);
      return;
    case 4:
      FillTyped<uint32_t>(dst, value, n);
      return;
    case 8:
      FillTyped<uint64_t>(dst, value, n);
      return;
    default:
      for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * es, value, static_cast<size_t>(es));
  }
}

}  // namespace

bool Slice(const void* in, const int64_t* in_shape, int rank, const int64_t* start,
           const int64_t* stride, const int64_t* out_shape, int64_t es, void* out,
           ThreadPool* pool) {
  if (rank < 0 || rank > kMaxCopyRank || es < 1) return false;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    if (in_shape[d] < 0 || out_shape[d] < 0) return false;
    total *= out_shape[d];
  }
  for (int d = 0; d < rank; ++d) {  // every addressed index in range (only if non-empty)
    if (total == 0) break;
    const int64_t last = start[d] + (out_shape[d] - 1) * stride[d];
    if (start[d] < 0 || start[d] >= in_shape[d] || last < 0 || last >= in_shape[d]) {
      return false;
    }
  }
  if (total == 0) return true;
  const uint8_t* src = static_cast<const uint8_t*>(in);
  uint8_t* dst = static_cast<uint8_t*>(out);
  // Element strides of the input per output axis, and the base offset.
  int64_t in_stride = 1;
  int64_t base = 0;
  int64_t eff[kMaxCopyRank];
  for (int d = rank - 1; d >= 0; --d) {
    base += start[d] * in_stride;
    eff[d] = stride[d] * in_stride;
    in_stride *= in_shape[d];
  }
  // Merge output axes from the inside while they stay one arithmetic progression in the input;
  // drop extent-1 axes.
  int64_t dims[kMaxCopyRank], strides[kMaxCopyRank];
  int n = 0;
  for (int d = rank - 1; d >= 0; --d) {
    if (out_shape[d] == 1) continue;
    if (n > 0 && eff[d] == strides[n - 1] * dims[n - 1]) {
      dims[n - 1] *= out_shape[d];
    } else {
      dims[n] = out_shape[d];
      strides[n] = eff[d];
      ++n;
    }
  }
  std::reverse(dims, dims + n);
  std::reverse(strides, strides + n);
  if (n == 0) {  // a single element
    std::memcpy(dst, src + base * es, static_cast<size_t>(es));
    return true;
  }
  const int64_t run = dims[n - 1];
  const int64_t run_stride = strides[n - 1];
  const int64_t rows = total / run;
  ForRows(pool, rows, run * es, [&](int64_t begin, int64_t end) {
    Odometer it;
    it.n = n - 1;
    std::copy(dims, dims + n - 1, it.dims);
    std::copy(strides, strides + n - 1, it.strides);
    it.Seek(begin);
    for (int64_t row = begin; row < end; ++row, it.Next()) {
      const uint8_t* s = src + (base + it.off) * es;
      uint8_t* o = dst + row * run * es;
      if (run_stride == 1) {
        std::memcpy(o, s, static_cast<size_t>(run * es));
      } else {
        StridedCopyAny(s, run_stride, o, run, es);
      }
    }
  });
  return true;
}

bool Pad(const void* in, const int64_t* in_shape, int rank, const int64_t* pad_low,
         const int64_t* pad_high, const void* pad_value, int64_t es, void* out, ThreadPool* pool) {
  if (rank < 0 || rank > kMaxCopyRank || es < 1) return false;
  int64_t out_shape[kMaxCopyRank];
  int64_t total = 1;
  bool in_empty = false;
  for (int d = 0; d < rank; ++d) {
    if (in_shape[d] < 0 || pad_low[d] < 0 || pad_high[d] < 0) return false;
    out_shape[d] = pad_low[d] + in_shape[d] + pad_high[d];
    total *= out_shape[d];
    in_empty = in_empty || in_shape[d] == 0;
  }
  if (total == 0) return true;
  const uint8_t* src = static_cast<const uint8_t*>(in);
  uint8_t* dst = static_cast<uint8_t*>(out);
  if (rank == 0) {
    std::memcpy(dst, src, static_cast<size_t>(es));
    return true;
  }
  int64_t in_strides[kMaxCopyRank];
  in_strides[rank - 1] = 1;
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in_shape[d + 1];
  const int64_t width = out_shape[rank - 1];
  const int64_t low = pad_low[rank - 1];
  const int64_t inner = in_shape[rank - 1];
  const int64_t rows = total / width;
  ForRows(pool, rows, width * es, [&](int64_t begin, int64_t end) {
    Odometer it;  // over the output's outer axes; `off` unused (interior test below)
    it.n = rank - 1;
    for (int d = 0; d < rank - 1; ++d) {
      it.dims[d] = out_shape[d];
      it.strides[d] = 0;
    }
    it.Seek(begin);
    for (int64_t row = begin; row < end; ++row, it.Next()) {
      uint8_t* o = dst + row * width * es;
      bool interior = !in_empty;
      int64_t in_off = 0;
      for (int d = 0; d < rank - 1 && interior; ++d) {
        const int64_t i = it.idx[d] - pad_low[d];
        interior = i >= 0 && i < in_shape[d];
        in_off += i * in_strides[d];
      }
      if (!interior) {
        Fill(o, pad_value, width, es);
        continue;
      }
      Fill(o, pad_value, low, es);
      std::memcpy(o + low * es, src + in_off * es, static_cast<size_t>(inner * es));
      Fill(o + (low + inner) * es, pad_value, width - low - inner, es);
    }
  });
  return true;
}

bool Concatenate(const void* const* inputs, const int64_t* axis_extents, int num_inputs,
                 const int64_t* out_shape, int rank, int axis, int64_t es, void* out,
                 ThreadPool* pool) {
  if (rank < 1 || rank > kMaxCopyRank || es < 1 || num_inputs < 1 || axis < 0 || axis >= rank) {
    return false;
  }
  int64_t outer = 1, inner = 1, total = 1;
  for (int d = 0; d < rank; ++d) {
    if (out_shape[d] < 0) return false;
    if (d < axis) outer *= out_shape[d];
    if (d > axis) inner *= out_shape[d];
    total *= out_shape[d];
  }
  int64_t sum = 0;
  for (int t = 0; t < num_inputs; ++t) {
    if (axis_extents[t] < 0) return false;
    sum += axis_extents[t];
  }
  if (sum != out_shape[axis]) return false;
  if (total == 0) return true;
  uint8_t* dst = static_cast<uint8_t*>(out);
  const int64_t out_row = out_shape[axis] * inner * es;          // bytes per outer index
  std::vector<int64_t> before(static_cast<size_t>(num_inputs));  // axis offset of each input
  for (int t = 1; t < num_inputs; ++t) {
    before[static_cast<size_t>(t)] = before[static_cast<size_t>(t - 1)] + axis_extents[t - 1];
  }
  // Items: (outer index, input); each is one contiguous memcpy.
  const int64_t items = outer * num_inputs;
  const auto body = [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / num_inputs;
      const int t = static_cast<int>(item % num_inputs);
      if (axis_extents[t] == 0) continue;
      const int64_t bytes = axis_extents[t] * inner * es;
      std::memcpy(dst + o * out_row + before[static_cast<size_t>(t)] * inner * es,
                  static_cast<const uint8_t*>(inputs[t]) + o * bytes, static_cast<size_t>(bytes));
    }
  };
  const int64_t avg_bytes = total * es / items;
  if (pool != nullptr && items > 1 && total * es >= kParallelBytes) {
    ParallelFor(pool, items, std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(avg_bytes, 1)),
                body);
  } else {
    body(0, items);
  }
  return true;
}

bool Trilu(const void* in, int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper,
           int64_t es, void* out, ThreadPool* pool) {
  if (batch < 0 || rows < 0 || cols < 0 || es < 1) return false;
  if (batch == 0 || rows == 0 || cols == 0) return true;
  // Clamped so that i + k cannot overflow; the result is the same past the matrix's extent.
  const int64_t reach = rows + cols;
  k = std::min(std::max(k, -reach), reach);
  const uint8_t* src = static_cast<const uint8_t*>(in);
  uint8_t* dst = static_cast<uint8_t*>(out);
  ForRows(pool, batch * rows, cols * es, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % rows;
      // The kept columns [lo, hi): j >= i + k (upper) or j <= i + k (lower).
      const int64_t lo = upper ? std::min(std::max(i + k, int64_t{0}), cols) : 0;
      const int64_t hi = upper ? cols : std::min(std::max(i + k + 1, int64_t{0}), cols);
      const uint8_t* s = src + r * cols * es;
      uint8_t* d = dst + r * cols * es;
      std::memset(d, 0, static_cast<size_t>(lo * es));
      if (hi > lo) std::memcpy(d + lo * es, s + lo * es, static_cast<size_t>((hi - lo) * es));
      std::memset(d + hi * es, 0, static_cast<size_t>((cols - hi) * es));
    }
  });
  return true;
}

}  // namespace kernels
}  // namespace shp
