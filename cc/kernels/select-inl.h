// Per-target implementation of the selection kernels (see select.h). A Highway "-inl.h" header:
// foreach_target.h re-includes it once per target (from select.cc), so it has a per-target
// include guard and is a textual header in Bazel.
//
// Every kernel works on a bit mask of the data, one uint64_t word per 64 elements (bit i of
// word w set when element 64w + i is nonzero; the bits past the end are zero):
//   1. the words are made once (SIMD compare + StoreMaskBits) and counted per chunk, so the
//      count is checked before anything is written and the data is read only once;
//   2. a prefix sum over the chunks places each chunk's output;
//   3. each chunk fills its part from its words: Nonzero compresses an index iota by the bits
//      (CompressBitsStore), MaskSelect copies each run of set bits with one memcpy.
// Target-independent table, defined once.
#ifndef SHAPEPOLY_CC_KERNELS_SELECT_TABLE_
#define SHAPEPOLY_CC_KERNELS_SELECT_TABLE_
#include <stdint.h>

namespace shp::kernels::select_table {

// pos[b][0..popcount(b)) are the positions of the set bits of the byte b, in increasing order;
// the rest of the row is 0.
struct BytePositions {
  int32_t pos[256][8];
};
constexpr BytePositions MakeBytePositions() {
  BytePositions t{};
  for (int b = 0; b < 256; ++b) {
    int k = 0;
    for (int i = 0; i < 8; ++i) {
      if ((b >> i) & 1) t.pos[b][k++] = i;
    }
  }
  return t;
}
alignas(64) inline constexpr BytePositions kBytePositions = MakeBytePositions();

}  // namespace shp::kernels::select_table
#endif  // SHAPEPOLY_CC_KERNELS_SELECT_TABLE_

#if defined(SHAPEPOLY_CC_KERNELS_SELECT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_SELECT_INL_H_
#undef SHAPEPOLY_CC_KERNELS_SELECT_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_SELECT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/select.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace select_impl {

constexpr int64_t kChunkElems = int64_t{1} << 16;       // fewest elements per thread chunk
constexpr int64_t kMaskChunkBytes = int64_t{64} << 10;  // fewest copied bytes per MaskSelect item
constexpr int64_t kSmallWords = 64;                     // words kept on the stack (4096 elements)
// A word with at most this many set bits is filled bit by bit (count-trailing-zeros loop);
// denser words compress whole vectors of indices.
constexpr int kSparseBits = 8;

// Words for `nwords` words: on the stack when few, else on the heap.
class WordBuffer {
 public:
  explicit WordBuffer(int64_t nwords) {
    if (nwords > kSmallWords) heap_.reset(new uint64_t[static_cast<size_t>(nwords)]);
  }
  uint64_t* get() { return heap_ ? heap_.get() : small_; }

 private:
  uint64_t small_[kSmallWords];
  std::unique_ptr<uint64_t[]> heap_;
};

template <class T>
HWY_INLINE bool IsNonzero(T v) {
  return v != T(0);  // NaN != 0 holds, -0.0 != 0 does not
}

// The mask of the nonzero lanes. Floats: not (v == 0), so NaN (unordered) counts as nonzero.
template <class D, class V>
HWY_INLINE auto NonzeroMask(D d, V v) {
  if constexpr (std::is_floating_point<hn::TFromD<D>>::value) {
    return hn::Not(hn::Eq(v, hn::Zero(d)));
  } else {
    return hn::Ne(v, hn::Zero(d));
  }
}

// The nonzero bits of x[0..64).
template <class T>
HWY_INLINE uint64_t Bits64(const T* HWY_RESTRICT x) {
  const hn::CappedTag<T, 64> d;  // N <= 64 lanes, a power of two: 64 / N vectors
  const size_t N = hn::Lanes(d);
  const uint64_t lane_bits = N >= 64 ? ~uint64_t{0} : (uint64_t{1} << N) - 1;
  uint64_t bits = 0;
  for (size_t i = 0; i < 64; i += N) {
    uint8_t b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    hn::StoreMaskBits(d, NonzeroMask(d, hn::LoadU(d, x + i)), b);
    uint64_t part = 0;
    for (size_t k = 0; k < (N + 7) / 8; ++k) part |= uint64_t{b[k]} << (8 * k);
    bits |= (part & lane_bits) << i;
  }
  return bits;
}

// The nonzero bits of x[0..n), n < 64 (the tail of an array).
template <class T>
HWY_INLINE uint64_t TailBits(const T* x, int64_t n) {
  uint64_t bits = 0;
  for (int64_t i = 0; i < n; ++i) bits |= uint64_t{IsNonzero(x[i])} << i;
  return bits;
}

// Writes words [wb, we) of the bit mask of x[0..n) and returns the number of set bits.
template <class T>
int64_t MakeWords(const T* x, int64_t n, int64_t wb, int64_t we, uint64_t* words) {
  int64_t count = 0;
  for (int64_t w = wb; w < we; ++w) {
    const int64_t i = w * 64;
    const uint64_t bits = i + 64 <= n ? Bits64(x + i) : TailBits(x + i, n - i);
    words[w] = bits;
    count += static_cast<int64_t>(hwy::PopCount(bits));
  }
  return count;
}

// The number of nonzero elements of x[b..e), b a multiple of 64.
template <class T>
int64_t CountRange(const T* x, int64_t b, int64_t e) {
  int64_t count = 0;
  int64_t i = b;
  for (; i + 64 <= e; i += 64) count += static_cast<int64_t>(hwy::PopCount(Bits64(x + i)));
  if (i < e) count += static_cast<int64_t>(hwy::PopCount(TailBits(x + i, e - i)));
  return count;
}

// Writes base + i for each set bit i of `bits`, in increasing order, to out[0..popcount) and
// returns the popcount. May write up to 8 values past them: out must have room for kFillSlack
// values. Dense words go a byte at a time: the byte's row of kBytePositions (its set-bit
// positions, left-packed) plus the base, stored as whole vectors of int64 (a compress of an
// index iota without a permute; Highway 1.0.3's CompressStore copies its 64-bit index table
// to the stack on every call under GCC).
constexpr int64_t kFillSlack = 64 + 8;
HWY_INLINE int64_t FillWord(uint64_t bits, int64_t base, int64_t* HWY_RESTRICT out) {
  const int pc = static_cast<int>(hwy::PopCount(bits));
  int64_t* p = out;
  if (pc <= kSparseBits) {
    while (bits != 0) {
      *p++ = base + static_cast<int64_t>(hwy::Num0BitsBelowLS1Bit_Nonzero64(bits));
      bits &= bits - 1;
    }
    return pc;
  }
  const hn::CappedTag<int64_t, 8> d;  // <= 8 lanes: whole vectors cover a byte's row
  const hn::Rebind<int32_t, decltype(d)> d32;
  const size_t N = hn::Lanes(d);
  for (int byte = 0; byte < 8; ++byte) {
    const uint32_t b = static_cast<uint32_t>(bits >> (8 * byte)) & 0xFF;
    const int32_t* row = select_table::kBytePositions.pos[b];
    const auto vbase = hn::Set(d, base + 8 * byte);
    for (size_t k = 0; k < 8; k += N) {
      hn::StoreU(hn::Add(hn::PromoteTo(d, hn::LoadU(d32, row + k)), vbase), d, p + k);
    }
    p += hwy::PopCount(b);
  }
  return pc;
}

// Writes the set bits of words [wb, we) as flat indices to out (which has exactly room for
// their popcount): directly while a word's slack fits, through a buffer near the end.
HWY_INLINE void FillFlat(const uint64_t* words, int64_t wb, int64_t we, int64_t* out,
                         int64_t room) {
  int64_t pos = 0;
  HWY_ALIGN int64_t buf[kFillSlack];
  for (int64_t w = wb; w < we; ++w) {
    const uint64_t bits = words[w];
    if (bits == 0) continue;
    if (room - pos >= kFillSlack) {
      pos += FillWord(bits, w * 64, out + pos);
    } else {
      const int64_t k = FillWord(bits, w * 64, buf);
      memcpy(out + pos, buf, static_cast<size_t>(k) * sizeof(int64_t));
      pos += k;
    }
  }
}

// Row-major coordinates of increasing flat indices. A row is a run of `inner` elements (the
// last axis); `outer_coords` are the coordinates of the row along the other axes.
class RowCursor {
 public:
  RowCursor(const int64_t* shape, int rank) : shape_(shape), rank_(rank), inner_(shape[rank - 1]) {}

  // Moves to the row of flat index f (f >= every earlier f).
  HWY_INLINE void Seek(int64_t f) {
    if (f < row_end_) return;
    if (f < row_end_ + inner_ && row_end_ > 0) {  // the next row: carry through the axes
      row_begin_ = row_end_;
      row_end_ += inner_;
      for (int a = rank_ - 2; a >= 0; --a) {
        if (++coords_[a] < shape_[a]) break;
        coords_[a] = 0;
      }
      return;
    }
    int64_t r = f / inner_;
    row_begin_ = r * inner_;
    row_end_ = row_begin_ + inner_;
    for (int a = rank_ - 2; a >= 0; --a) {
      coords_[a] = r % shape_[a];
      r /= shape_[a];
    }
  }
  int64_t row_begin() const { return row_begin_; }
  const int64_t* coords() const { return coords_; }

 private:
  const int64_t* shape_;
  int rank_;
  int64_t inner_;
  int64_t row_begin_ = 0, row_end_ = 0;
  int64_t coords_[kMaxSelectRank] = {};
};

// Writes the coordinates (rank >= 2 columns) of the set bits of words [wb, we) to out.
HWY_INLINE void FillCoords(const uint64_t* words, int64_t wb, int64_t we, const int64_t* shape,
                           int rank, int64_t* HWY_RESTRICT out) {
  RowCursor cur(shape, rank);
  HWY_ALIGN int64_t buf[kFillSlack];
  for (int64_t w = wb; w < we; ++w) {
    const uint64_t bits = words[w];
    if (bits == 0) continue;
    if (rank == 2) {
      // All set bits of the word in one row (rows of 64 or more elements, mostly): fill the
      // columns and store (row, column) pairs a vector at a time.
      const int64_t first = w * 64 + static_cast<int64_t>(hwy::Num0BitsBelowLS1Bit_Nonzero64(bits));
      const int64_t last =
          w * 64 + 63 - static_cast<int64_t>(hwy::Num0BitsAboveMS1Bit_Nonzero64(bits));
      cur.Seek(first);
      if (last < cur.row_begin() + shape[1]) {
        const int64_t k = FillWord(bits, w * 64 - cur.row_begin(), buf);
        const hn::CappedTag<int64_t, 8> d;
        const int64_t N = static_cast<int64_t>(hn::Lanes(d));
        const int64_t r = cur.coords()[0];
        const auto vr = hn::Set(d, r);
        int64_t j = 0;
        for (; j + N <= k; j += N) hn::StoreInterleaved2(vr, hn::LoadU(d, buf + j), d, out + 2 * j);
        for (; j < k; ++j) {
          out[2 * j] = r;
          out[2 * j + 1] = buf[j];
        }
        out += 2 * k;
        continue;
      }
    }
    const int64_t k = FillWord(bits, w * 64, buf);
    if (rank == 2) {
      for (int64_t j = 0; j < k; ++j) {
        cur.Seek(buf[j]);
        out[0] = cur.coords()[0];
        out[1] = buf[j] - cur.row_begin();
        out += 2;
      }
    } else {
      for (int64_t j = 0; j < k; ++j) {
        cur.Seek(buf[j]);
        memcpy(out, cur.coords(), static_cast<size_t>(rank - 1) * sizeof(int64_t));
        out[rank - 1] = buf[j] - cur.row_begin();
        out += rank;
      }
    }
  }
}

// Chunks of a word range for `pool`: contiguous, `per` words each (the last one shorter).
struct Chunks {
  int64_t n = 1;
  int64_t per = 0;
};
HWY_INLINE Chunks SplitWords(int64_t nwords, int64_t min_words, ThreadPool* pool) {
  Chunks c;
  const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
  c.n = std::max<int64_t>(1, std::min(threads, nwords / std::max<int64_t>(1, min_words)));
  c.per = (nwords + c.n - 1) / std::max<int64_t>(1, c.n);
  if (c.per > 0) c.n = (nwords + c.per - 1) / c.per;
  return c;
}

// Makes the words of x[0..n) and the set-bit count of each chunk (counts[c]); returns the total.
template <class T>
int64_t WordsAndCounts(const T* x, int64_t n, const Chunks& ch, uint64_t* words, int64_t* counts,
                       ThreadPool* pool) {
  const int64_t nwords = (n + 63) / 64;
  ParallelFor(ch.n > 1 ? pool : nullptr, ch.n, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      counts[c] = MakeWords(x, n, c * ch.per, std::min(nwords, (c + 1) * ch.per), words);
    }
  });
  int64_t total = 0;
  for (int64_t c = 0; c < ch.n; ++c) total += counts[c];
  return total;
}

// *r = the product of factors >= 0: 0 when any is 0 (an empty array has no size to overflow),
// else false when it overflows int64.
HWY_INLINE bool ProductOk(std::initializer_list<int64_t> factors, int64_t* r) {
  for (int64_t f : factors) {
    if (f == 0) {
      *r = 0;
      return true;
    }
  }
  int64_t p = 1;
  for (int64_t f : factors) {
    if (f > std::numeric_limits<int64_t>::max() / p) return false;
    p *= f;
  }
  *r = p;
  return true;
}

}  // namespace select_impl

template <class T>
int64_t CountNonzeroT(const T* x, int64_t n, ThreadPool* pool) {
  using namespace select_impl;
  const Chunks ch = SplitWords((n + 63) / 64, kChunkElems / 64, pool);
  std::vector<int64_t> counts(static_cast<size_t>(ch.n));
  ParallelFor(ch.n > 1 ? pool : nullptr, ch.n, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      counts[c] = CountRange(x, c * ch.per * 64, std::min(n, (c + 1) * ch.per * 64));
    }
  });
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  return total;
}

HWY_INLINE bool CountNonzeroImpl(DType dtype, const void* x, int64_t n, ThreadPool* pool,
                                 int64_t* count) {
  if (!IsValidDType(static_cast<int32_t>(dtype)) || n < 0 || count == nullptr) return false;
  if (n > 0 && x == nullptr) return false;
  switch (dtype) {
    case DType::kF32:
      *count = CountNonzeroT(static_cast<const float*>(x), n, pool);
      break;
    case DType::kF64:
      *count = CountNonzeroT(static_cast<const double*>(x), n, pool);
      break;
    case DType::kI32:
      *count = CountNonzeroT(static_cast<const int32_t*>(x), n, pool);
      break;
    case DType::kI64:
      *count = CountNonzeroT(static_cast<const int64_t*>(x), n, pool);
      break;
    case DType::kBool:
      *count = CountNonzeroT(static_cast<const uint8_t*>(x), n, pool);
      break;
    default:  // the narrow types are computed in their compute type (dtype.h)
      return false;
  }
  return true;
}

template <class T>
bool NonzeroT(const T* x, int64_t n, const int64_t* shape, int rank, int64_t count, int64_t* out,
              ThreadPool* pool) {
  using namespace select_impl;
  const int64_t nwords = (n + 63) / 64;
  const Chunks ch = SplitWords(nwords, kChunkElems / 64, pool);
  WordBuffer words(nwords);
  std::vector<int64_t> offsets(static_cast<size_t>(ch.n) + 1);
  if (WordsAndCounts(x, n, ch, words.get(), offsets.data() + 1, pool) != count) return false;
  for (int64_t c = 0; c < ch.n; ++c) offsets[c + 1] += offsets[c];
  ParallelFor(ch.n > 1 ? pool : nullptr, ch.n, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t wb = c * ch.per, we = std::min(nwords, wb + ch.per);
      int64_t* o = out + offsets[c] * rank;
      if (rank == 1) {
        FillFlat(words.get(), wb, we, o, offsets[c + 1] - offsets[c]);
      } else {
        FillCoords(words.get(), wb, we, shape, rank, o);
      }
    }
  });
  return true;
}

HWY_INLINE bool NonzeroImpl(DType dtype, const void* x, const int64_t* shape, int rank,
                            int64_t count, int64_t* out, ThreadPool* pool) {
  using select_impl::ProductOk;
  if (!IsValidDType(static_cast<int32_t>(dtype))) return false;
  if (rank < 0 || rank > kMaxSelectRank || count < 0) return false;
  if (rank > 0 && shape == nullptr) return false;
  int64_t n = 1;
  bool empty = false;
  for (int a = 0; a < rank; ++a) {
    if (shape[a] < 0) return false;
    empty = empty || shape[a] == 0;
  }
  for (int a = 0; a < rank && !empty; ++a) {
    if (!ProductOk({n, shape[a]}, &n)) return false;
  }
  if (empty) n = 0;
  int64_t out_elems = 0;
  if (count > n || !ProductOk({count, rank}, &out_elems)) return false;
  if (n > 0 && x == nullptr) return false;
  if (out_elems > 0 && out == nullptr) return false;
  if (rank == 0) {
    int64_t nz = 0;
    CountNonzeroImpl(dtype, x, 1, nullptr, &nz);
    return nz == count;  // one row of zero columns, or none: nothing to write
  }
  if (n == 0) return true;  // count == 0 here (count <= n)
  switch (dtype) {
    case DType::kF32:
      return NonzeroT(static_cast<const float*>(x), n, shape, rank, count, out, pool);
    case DType::kF64:
      return NonzeroT(static_cast<const double*>(x), n, shape, rank, count, out, pool);
    case DType::kI32:
      return NonzeroT(static_cast<const int32_t*>(x), n, shape, rank, count, out, pool);
    case DType::kI64:
      return NonzeroT(static_cast<const int64_t*>(x), n, shape, rank, count, out, pool);
    case DType::kBool:
      return NonzeroT(static_cast<const uint8_t*>(x), n, shape, rank, count, out, pool);
    default:
      return false;
  }
}

namespace select_impl {

// The first set bit of words[..we) at position >= i, or -1.
HWY_INLINE int64_t NextSet(const uint64_t* words, int64_t i, int64_t we) {
  int64_t w = i >> 6;
  if (w >= we) return -1;
  uint64_t b = words[w] & (~uint64_t{0} << (i & 63));
  while (b == 0) {
    if (++w >= we) return -1;
    b = words[w];
  }
  return w * 64 + static_cast<int64_t>(hwy::Num0BitsBelowLS1Bit_Nonzero64(b));
}

// The first clear bit of words[..we) at position >= i (i < we * 64), or we * 64.
HWY_INLINE int64_t NextClear(const uint64_t* words, int64_t i, int64_t we) {
  int64_t w = i >> 6;
  uint64_t b = ~words[w] & (~uint64_t{0} << (i & 63));
  while (b == 0) {
    if (++w >= we) return we * 64;
    b = ~words[w];
  }
  return w * 64 + static_cast<int64_t>(hwy::Num0BitsBelowLS1Bit_Nonzero64(b));
}

}  // namespace select_impl

HWY_INLINE bool MaskSelectImpl(const void* x, int64_t outer, int64_t m, int64_t inner,
                               int64_t elem_size, const uint8_t* mask, int64_t count, void* out,
                               ThreadPool* pool) {
  using namespace select_impl;
  if (outer < 0 || m < 0 || inner < 0 || elem_size < 1 || count < 0 || count > m) return false;
  int64_t row_bytes = 0, x_bytes = 0, out_bytes = 0;
  if (!ProductOk({inner, elem_size}, &row_bytes) ||
      !ProductOk({outer, m, inner, elem_size}, &x_bytes) ||
      !ProductOk({outer, count, inner, elem_size}, &out_bytes)) {
    return false;
  }
  if ((m > 0 && mask == nullptr) || (x_bytes > 0 && x == nullptr) ||
      (out_bytes > 0 && out == nullptr)) {
    return false;
  }
  if (m == 0) return true;  // count == 0

  const int64_t nwords = (m + 63) / 64;
  // Chunks of the mask: several only when the outer axis alone cannot feed the threads.
  const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
  const Chunks ch = outer >= threads ? SplitWords(nwords, nwords, nullptr)
                                     : SplitWords(nwords, kChunkElems / 64, pool);
  WordBuffer words(nwords);
  std::vector<int64_t> offsets(static_cast<size_t>(ch.n) + 1);
  if (WordsAndCounts(mask, m, ch, words.get(), offsets.data() + 1, pool) != count) return false;
  for (int64_t c = 0; c < ch.n; ++c) offsets[c + 1] += offsets[c];
  if (out_bytes == 0) return true;

  const uint8_t* src = static_cast<const uint8_t*>(x);
  uint8_t* dst = static_cast<uint8_t*>(out);
  const int64_t item_bytes = std::max<int64_t>(1, out_bytes / (outer * ch.n));
  const int64_t grain = std::max<int64_t>(1, kMaskChunkBytes / item_bytes);
  ParallelFor(pool, outer * ch.n, grain, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / ch.n, c = item % ch.n;
      const int64_t wb = c * ch.per, we = std::min(nwords, wb + ch.per);
      const uint8_t* s = src + o * m * row_bytes;
      uint8_t* d = dst + (o * count + offsets[c]) * row_bytes;
      for (int64_t i = NextSet(words.get(), wb * 64, we); i >= 0;) {
        const int64_t end = NextClear(words.get(), i, we);  // bits past m are clear
        const size_t bytes = static_cast<size_t>((end - i) * row_bytes);
        memcpy(d, s + i * row_bytes, bytes);
        d += bytes;
        i = end < we * 64 ? NextSet(words.get(), end, we) : -1;
      }
    }
  });
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
