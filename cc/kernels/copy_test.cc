// Tests of the copy kernels (slice, pad, concatenate, trilu) against naive per-element references,
// for element sizes 1, 2, 3, 4, 8 and 16, with and without threads, with guard bytes around
// every output.
#include "cc/kernels/copy.h"

#include <cstring>
#include <string>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"

namespace shp {
namespace kernels {
namespace {

constexpr size_t kGuard = 32;
constexpr uint8_t kSentinel = 0x5A;

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t s = seed * 2654435761u + 3u;
  for (uint8_t& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<uint8_t>(s >> 24);
  }
  return v;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Multi-index of linear index `linear` in `shape` (row-major).
std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

int64_t Ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + idx[d];
  return off;
}

// An output buffer with guards; Check() verifies the guards and compares the payload.
struct Guarded {
  explicit Guarded(size_t n) : buf(n + 2 * kGuard, kSentinel), size(n) {}
  uint8_t* data() { return buf.data() + kGuard; }
  void Check(const std::vector<uint8_t>& want, const std::string& what) const {
    ASSERT_EQ(want.size(), size) << what;
    EXPECT_TRUE(std::equal(want.begin(), want.end(), buf.begin() + kGuard)) << what;
    for (size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(kSentinel, buf[i]) << what << " (wrote before out)";
      ASSERT_EQ(kSentinel, buf[buf.size() - 1 - i]) << what << " (wrote past out)";
    }
  }
  std::vector<uint8_t> buf;
  size_t size;
};

std::string Describe(const char* op, const std::vector<int64_t>& shape, int64_t es) {
  std::string s = std::string(op) + " es=" + std::to_string(es) + " shape=";
  for (int64_t x : shape) s += std::to_string(x) + ",";
  return s;
}

// ---- Slice ----

void CheckSlice(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& start,
                const std::vector<int64_t>& stride, const std::vector<int64_t>& out_shape,
                int64_t es, ThreadPool* pool, uint32_t seed) {
  const std::vector<uint8_t> in = RandomBytes(static_cast<size_t>(Product(in_shape) * es), seed);
  const int64_t total = Product(out_shape);
  std::vector<uint8_t> want(static_cast<size_t>(total * es));
  for (int64_t o = 0; o < total; ++o) {
    std::vector<int64_t> idx = Unravel(o, out_shape);
    for (size_t d = 0; d < idx.size(); ++d) idx[d] = start[d] + idx[d] * stride[d];
    std::memcpy(&want[o * es], &in[Ravel(idx, in_shape) * es], static_cast<size_t>(es));
  }
  Guarded out(want.size());
  const std::string what = Describe("slice", in_shape, es);
  ASSERT_TRUE(Slice(in.data(), in_shape.data(), static_cast<int>(in_shape.size()), start.data(),
                    stride.data(), out_shape.data(), es, out.data(), pool))
      << what;
  out.Check(want, what);
}

TEST(SliceTest, MatchesReference) {
  ThreadPool pool(3);
  uint32_t seed = 1;
  for (int64_t es : {1, 2, 3, 4, 8, 16}) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      CheckSlice({}, {}, {}, {}, es, p, seed++);                  // scalar
      CheckSlice({10}, {2}, {1}, {5}, es, p, seed++);             // contiguous
      CheckSlice({10}, {9}, {-2}, {5}, es, p, seed++);            // reversed
      CheckSlice({10}, {3}, {0}, {4}, es, p, seed++);             // repeat
      CheckSlice({7, 9}, {1, 0}, {2, 1}, {3, 9}, es, p, seed++);  // merged rows
      CheckSlice({7, 9}, {6, 8}, {-1, -3}, {7, 3}, es, p, seed++);
      CheckSlice({4, 5, 6}, {0, 0, 0}, {1, 1, 1}, {4, 5, 6}, es, p, seed++);  // identity
      CheckSlice({4, 5, 6}, {1, 4, 5}, {2, -1, -1}, {2, 5, 6}, es, p, seed++);
      CheckSlice({4, 1, 6}, {0, 0, 1}, {3, 1, 2}, {2, 1, 3}, es, p, seed++);
      CheckSlice({3, 0, 2}, {0, 0, 0}, {1, 1, 1}, {3, 0, 2}, es, p, seed++);  // empty
      CheckSlice({300, 301}, {5, 7}, {1, 1}, {290, 280}, es, p, seed++);      // large
      CheckSlice({300, 301}, {299, 300}, {-1, -3}, {300, 100}, es, p, seed++);
      CheckSlice({2, 3, 4, 5, 6}, {1, 0, 3, 1, 0}, {1, 2, -1, 2, 5}, {1, 2, 4, 2, 2}, es, p,
                 seed++);
    }
  }
}

TEST(SliceTest, RejectsOutOfRange) {
  uint8_t in[10] = {}, out[10] = {};
  const int64_t shape[1] = {10};
  const int64_t start_bad[1] = {10}, start_ok[1] = {8}, neg[1] = {-1};
  const int64_t stride1[1] = {1}, stride_neg[1] = {-1};
  const int64_t n3[1] = {3}, n1[1] = {1};
  EXPECT_FALSE(Slice(in, shape, 1, start_bad, stride1, n1, 1, out, nullptr));
  EXPECT_FALSE(Slice(in, shape, 1, start_ok, stride1, n3, 1, out, nullptr));  // 8..10
  EXPECT_FALSE(Slice(in, shape, 1, neg, stride1, n1, 1, out, nullptr));
  EXPECT_FALSE(Slice(in, shape, 1, n1, stride_neg, n3, 1, out, nullptr));  // 1, 0, -1
  EXPECT_FALSE(Slice(in, shape, 1, n1, stride1, n1, 0, out, nullptr));     // elem_size
  EXPECT_FALSE(Slice(in, shape, kMaxCopyRank + 1, n1, stride1, n1, 1, out, nullptr));
  const int64_t zero[1] = {0};
  EXPECT_TRUE(Slice(nullptr, shape, 1, start_bad, stride1, zero, 1, nullptr, nullptr));
}

// ---- Pad ----

void CheckPad(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& low,
              const std::vector<int64_t>& high, int64_t es, ThreadPool* pool, uint32_t seed) {
  const std::vector<uint8_t> in = RandomBytes(static_cast<size_t>(Product(in_shape) * es), seed);
  const std::vector<uint8_t> value = RandomBytes(static_cast<size_t>(es), seed + 1000);
  std::vector<int64_t> out_shape(in_shape.size());
  for (size_t d = 0; d < in_shape.size(); ++d) out_shape[d] = low[d] + in_shape[d] + high[d];
  const int64_t total = Product(out_shape);
  std::vector<uint8_t> want(static_cast<size_t>(total * es));
  for (int64_t o = 0; o < total; ++o) {
    std::vector<int64_t> idx = Unravel(o, out_shape);
    bool inside = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      idx[d] -= low[d];
      inside = inside && idx[d] >= 0 && idx[d] < in_shape[d];
    }
    const uint8_t* from = inside ? &in[Ravel(idx, in_shape) * es] : value.data();
    std::memcpy(&want[o * es], from, static_cast<size_t>(es));
  }
  Guarded out(want.size());
  const std::string what = Describe("pad", in_shape, es);
  ASSERT_TRUE(Pad(in.data(), in_shape.data(), static_cast<int>(in_shape.size()), low.data(),
                  high.data(), value.data(), es, out.data(), pool))
      << what;
  out.Check(want, what);
}

TEST(PadTest, MatchesReference) {
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (int64_t es : {1, 2, 3, 4, 8, 16}) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      CheckPad({}, {}, {}, es, p, seed++);
      CheckPad({5}, {0}, {0}, es, p, seed++);
      CheckPad({5}, {2}, {3}, es, p, seed++);
      CheckPad({0}, {2}, {3}, es, p, seed++);  // all padding
      CheckPad({3, 4}, {1, 0}, {0, 2}, es, p, seed++);
      CheckPad({3, 0, 2}, {1, 1, 1}, {1, 0, 1}, es, p, seed++);
      CheckPad({2, 3, 4}, {1, 2, 3}, {3, 2, 1}, es, p, seed++);
      CheckPad({200, 300}, {7, 1}, {3, 5}, es, p, seed++);  // large
      CheckPad({1, 2, 1, 3}, {0, 1, 2, 0}, {1, 0, 0, 2}, es, p, seed++);
    }
  }
}

TEST(PadTest, RejectsNegativePads) {
  uint8_t in[4] = {}, out[16] = {}, v = 0;
  const int64_t shape[1] = {4}, neg[1] = {-1}, zero[1] = {0};
  EXPECT_FALSE(Pad(in, shape, 1, neg, zero, &v, 1, out, nullptr));
  EXPECT_FALSE(Pad(in, shape, 1, zero, neg, &v, 1, out, nullptr));
  EXPECT_FALSE(Pad(in, shape, 1, zero, zero, &v, 0, out, nullptr));
}

// ---- Concatenate ----

void CheckConcat(const std::vector<int64_t>& out_shape, int axis,
                 const std::vector<int64_t>& extents, int64_t es, ThreadPool* pool, uint32_t seed) {
  std::vector<std::vector<uint8_t>> ins;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<const void*> ptrs;
  for (int64_t e : extents) {
    std::vector<int64_t> s = out_shape;
    s[axis] = e;
    shapes.push_back(s);
    ins.push_back(RandomBytes(static_cast<size_t>(Product(s) * es), seed++));
    ptrs.push_back(ins.back().empty() ? nullptr : ins.back().data());
  }
  const int64_t total = Product(out_shape);
  std::vector<uint8_t> want(static_cast<size_t>(total * es));
  for (int64_t o = 0; o < total; ++o) {
    std::vector<int64_t> idx = Unravel(o, out_shape);
    size_t t = 0;
    while (idx[axis] >= extents[t]) idx[axis] -= extents[t++];
    std::memcpy(&want[o * es], &ins[t][Ravel(idx, shapes[t]) * es], static_cast<size_t>(es));
  }
  Guarded out(want.size());
  const std::string what = Describe("concat", out_shape, es) + " axis=" + std::to_string(axis);
  ASSERT_TRUE(Concatenate(ptrs.data(), extents.data(), static_cast<int>(extents.size()),
                          out_shape.data(), static_cast<int>(out_shape.size()), axis, es,
                          out.data(), pool))
      << what;
  out.Check(want, what);
}

TEST(ConcatenateTest, MatchesReference) {
  ThreadPool pool(3);
  uint32_t seed = 1;
  for (int64_t es : {1, 2, 3, 4, 8, 16}) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      CheckConcat({7}, 0, {7}, es, p, seed++);
      CheckConcat({9}, 0, {2, 0, 7}, es, p, seed++);
      CheckConcat({3, 9}, 1, {4, 5}, es, p, seed++);
      CheckConcat({9, 3}, 0, {4, 5}, es, p, seed++);
      CheckConcat({2, 6, 3}, 1, {1, 2, 3}, es, p, seed++);
      CheckConcat({2, 0, 3}, 1, {0, 0}, es, p, seed++);
      CheckConcat({0, 5}, 1, {2, 3}, es, p, seed++);
      CheckConcat({300, 250}, 1, {100, 1, 149}, es, p, seed++);  // large
      CheckConcat({300, 250}, 0, {299, 1}, es, p, seed++);
    }
  }
}

TEST(ConcatenateTest, RejectsBadExtents) {
  uint8_t a[4] = {}, out[8] = {};
  const void* ins[2] = {a, a};
  const int64_t shape[2] = {2, 4};
  const int64_t bad[2] = {1, 2}, neg[2] = {-1, 3}, ok[2] = {2, 2};
  EXPECT_FALSE(Concatenate(ins, bad, 2, shape, 2, 1, 1, out, nullptr));
  EXPECT_FALSE(Concatenate(ins, neg, 2, shape, 2, 1, 1, out, nullptr));
  EXPECT_FALSE(Concatenate(ins, ok, 2, shape, 2, 2, 1, out, nullptr));  // axis
  EXPECT_FALSE(Concatenate(ins, ok, 0, shape, 2, 1, 1, out, nullptr));  // no inputs
  EXPECT_TRUE(Concatenate(ins, ok, 2, shape, 2, 1, 1, out, nullptr));
}

// ---- Trilu ----

void CheckTrilu(int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper, int64_t es,
                ThreadPool* pool, uint32_t seed) {
  const size_t n = static_cast<size_t>(batch * rows * cols * es);
  std::vector<uint8_t> in = RandomBytes(n, seed), want(n, 0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        // The definition, in wide arithmetic: keep where j - i >= k (upper) or <= k (lower).
        const __int128 d = static_cast<__int128>(j) - i;
        if (upper ? d >= k : d <= k) {
          const size_t o = static_cast<size_t>(((b * rows + i) * cols + j) * es);
          std::memcpy(&want[o], &in[o], static_cast<size_t>(es));
        }
      }
    }
  }
  Guarded out(n);
  const std::string what = "trilu " + std::to_string(batch) + "x" + std::to_string(rows) + "x" +
                           std::to_string(cols) + " k=" + std::to_string(k) +
                           (upper ? " upper" : " lower") + " es=" + std::to_string(es);
  ASSERT_TRUE(Trilu(in.data(), batch, rows, cols, k, upper, es, out.data(), pool)) << what;
  out.Check(want, what);
}

TEST(TriluTest, MatchesReference) {
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (int64_t es : {1, 2, 4, 8}) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      for (bool upper : {true, false}) {
        for (int64_t k : {INT64_MIN, int64_t{-7}, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2},
                          int64_t{7}, INT64_MAX}) {
          CheckTrilu(1, 1, 1, k, upper, es, p, seed++);
          CheckTrilu(2, 3, 5, k, upper, es, p, seed++);  // wide
          CheckTrilu(3, 5, 2, k, upper, es, p, seed++);  // tall
          CheckTrilu(1, 0, 4, k, upper, es, p, seed++);  // empty
          CheckTrilu(4, 4, 0, k, upper, es, p, seed++);
        }
        CheckTrilu(3, 300, 257, 5, upper, es, p, seed++);  // large: threaded
      }
    }
  }
}

TEST(TriluTest, RejectsNegativeExtents) {
  uint8_t in[4] = {}, out[4] = {};
  EXPECT_FALSE(Trilu(in, -1, 2, 2, 0, true, 1, out, nullptr));
  EXPECT_FALSE(Trilu(in, 1, -2, 2, 0, true, 1, out, nullptr));
  EXPECT_FALSE(Trilu(in, 1, 2, -2, 0, true, 1, out, nullptr));
  EXPECT_FALSE(Trilu(in, 1, 2, 2, 0, true, 0, out, nullptr));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
