// Tests of the int16-pair i32 matmul (matmul_int16-inl.h) on EVERY Highway target compiled into
// this binary that the CPU supports: the per-target kernel directly (with pmaddwd + vpaddd, and
// with vpdpwssd where the target and the CPU have AVX512_VNNI), and the public MatmulI32 with
// dispatch forced to each target. Every result must equal, bit for bit, a plain scalar
// reference with wrapping (uint32) arithmetic written here; nothing outside C may be written,
// and elements of A and B the strides do not address are never read (they hold values outside
// int16, which would make the kernel decline).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/matmul_int16_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/matmul_int16-inl.h"

// ---- Target-independent helpers (declared once; defined in the HWY_ONCE pass) ----
#ifndef SHAPEPOLY_CC_KERNELS_MATMUL_INT16_TEST_HELPERS_
#define SHAPEPOLY_CC_KERNELS_MATMUL_INT16_TEST_HELPERS_
#include <stdint.h>

#include <string>

#include "cc/kernels/matmul.h"

namespace shp {
namespace kernels {
namespace i16_test {

using I32Fn = bool (*)(const MatmulParams&, const int32_t*, const int32_t*, int32_t*, ThreadPool*);

// Runs the whole suite on the int16 kernel of one target (labelled `label`). has_kernel: the
// target has the int16 kernel (false: it must decline every non-empty product with k > 0).
void RunKernelSuite(const std::string& label, I32Fn fn, bool has_kernel);
// Runs the u8 x s8 suite: `only` must compute every product whose A is u8 and B s8 (or A s8 and
// B u8) with vpdpbusd and decline the rest, which `full` (MatmulI32ViaI16Impl's kAuto) computes
// with an int16 kernel.
void RunU8S8Suite(const std::string& label, I32Fn only, I32Fn full);
// Checks that fn declines u8 x s8 operands, writing nothing.
void CheckDeclinesAll(const std::string& label, I32Fn fn);
void RecordRun(const std::string& label);

}  // namespace i16_test
}  // namespace kernels
}  // namespace shp
#endif  // SHAPEPOLY_CC_KERNELS_MATMUL_INT16_TEST_HELPERS_

// ---- Per-target test bodies ----
HWY_BEFORE_NAMESPACE();
namespace shp {
namespace kernels {
namespace HWY_NAMESPACE {

// The int16 GEMM forced to one kernel choice.
template <I16Kernel kKernel>
bool MatmulI16ForTest(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c,
                      ThreadPool* pool) {
  return MatmulI32ViaI16Impl(p, a, b, c, pool, kKernel);
}

// pmaddwd + vpaddd on every target with the kernel.
void TestMatmulI16() {
  const std::string target = hwy::TargetName(HWY_TARGET);
  i16_test::RecordRun(target + (SHP_MATMUL_I16 ? "" : " (no int16 kernel: declines)"));
  i16_test::RunKernelSuite(target, &MatmulI16ForTest<I16Kernel::kNoVnni>, SHP_MATMUL_I16 != 0);
}

// vpdpwssd (on every operand, u8 x s8 ones included): only where this target uses it on this
// CPU (AVX3 with AVX512_VNNI); elsewhere it is the kernel above, which TestMatmulI16 covers.
void TestMatmulI16Vnni() {
  if (!MatmulI16UsesVnni()) return;
  const std::string label = std::string(hwy::TargetName(HWY_TARGET)) + "+VNNI";
  i16_test::RecordRun(label);
  i16_test::RunKernelSuite(label, &MatmulI16ForTest<I16Kernel::kNoU8S8>, true);
}

// vpdpbusd on u8 x s8 and s8 x u8 operands (AVX3 with AVX512_VNNI), and kAuto, which takes it
// when the operands fit and an int16 kernel otherwise. Elsewhere kU8S8Only declines everything.
void TestMatmulU8S8() {
  const std::string target = hwy::TargetName(HWY_TARGET);
  if (!MatmulI16UsesVnni()) {
    i16_test::CheckDeclinesAll(target, &MatmulI16ForTest<I16Kernel::kU8S8Only>);
    return;
  }
  const std::string label = target + "+VNNI u8s8";
  i16_test::RecordRun(label);
  i16_test::RunU8S8Suite(label, &MatmulI16ForTest<I16Kernel::kU8S8Only>,
                         &MatmulI16ForTest<I16Kernel::kAuto>);
}

// The plain loop a thread falls back to without its pack buffers (after the same checks).
void TestMatmulI16PlainFallback() {
  const std::string label = std::string(hwy::TargetName(HWY_TARGET)) + " plain fallback";
  if (SHP_MATMUL_I16) i16_test::RecordRun(label);
  i16_test::RunKernelSuite(label, &MatmulI16ForTest<I16Kernel::kPlainLoop>, SHP_MATMUL_I16 != 0);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace shp
HWY_AFTER_NAMESPACE();

// ---- Test registration and helper definitions (once) ----
#if HWY_ONCE
#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace i16_test {
namespace {

std::set<std::string>& Runs() {
  static std::set<std::string> runs;
  return runs;
}

// Values of the operands' addressed elements.
enum class Values {
  kU8,        // [0, 255] (quantized activations)
  kI8,        // [-128, 127] (quantized weights)
  kI16,       // all of [-32768, 32767]
  kLimits,    // mostly -32768 and 32767, with -32767, -1, 0, 1
  kMin,       // -32768 everywhere: each pmaddwd pair is 2^31, the sums wrap
  kFullI32,   // any int32 (out of int16: the kernel declines)
  kU8Limits,  // mostly 0 and 255, with 1, 127, 128, 254
  kS8Limits,  // mostly -128 and 127, with -127, -1, 0, 1
  kU8Max,     // 255 everywhere
  kS8Min,     // -128 everywhere: with kU8Max, each product is -32640 (the sums wrap past k 65793)
};

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull) {}
  uint32_t Next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 32);
  }
  int32_t Value(Values v) {
    const uint32_t x = Next();
    switch (v) {
      case Values::kU8:
        return static_cast<int32_t>(x % 256);
      case Values::kI8:
        return static_cast<int32_t>(x % 256) - 128;
      case Values::kI16:
        return static_cast<int32_t>(x % 65536) - 32768;
      case Values::kLimits: {
        static const int32_t kPick[] = {-32768, -32768, -32768, 32767, 32767, -32767, -1, 0, 1};
        return kPick[x % 9];
      }
      case Values::kMin:
        return -32768;
      case Values::kFullI32:
        return static_cast<int32_t>(x);
      case Values::kU8Limits: {
        static const int32_t kPick[] = {0, 0, 255, 255, 255, 1, 127, 128, 254};
        return kPick[x % 9];
      }
      case Values::kS8Limits: {
        static const int32_t kPick[] = {-128, -128, -128, 127, 127, -127, -1, 0, 1};
        return kPick[x % 9];
      }
      case Values::kU8Max:
        return 255;
      case Values::kS8Min:
        return -128;
    }
    return 0;
  }
};

// The element offsets one operand addresses (relative to its base pointer), in batch-major,
// row-major order: extents {batch dims..., rows, cols} with the matching strides.
std::vector<int64_t> Offsets(const MatmulParams& p, const int64_t* batch_strides, int64_t rows,
                             int64_t cols, int64_t rs, int64_t cs) {
  std::vector<int64_t> ext, str;
  for (int d = 0; d < p.batch_rank; ++d) {
    ext.push_back(p.batch_dims[d]);
    str.push_back(batch_strides[d]);
  }
  ext.push_back(rows);
  str.push_back(rs);
  ext.push_back(cols);
  str.push_back(cs);
  int64_t total = 1;
  for (int64_t e : ext) total *= e;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(total));
  for (int64_t t = 0; t < total; ++t) {
    int64_t rest = t, off = 0;
    for (size_t d = ext.size(); d-- > 0;) {
      off += rest % ext[d] * str[d];
      rest /= ext[d];
    }
    out.push_back(off);
  }
  return out;
}

// A buffer holding an operand: element at offset o is buf[base + o]. Unaddressed elements
// (gaps between strided rows and columns, and a margin on each side) hold `fill`.
struct Buffer {
  std::vector<int32_t> buf;
  int64_t base = 0;
  std::vector<int64_t> offsets;  // the addressed ones
  int32_t* ptr() { return buf.empty() ? nullptr : buf.data() + base; }
  int32_t& at(int64_t off) { return buf[static_cast<size_t>(base + off)]; }
};

constexpr int64_t kMargin = 19;

Buffer MakeBuffer(std::vector<int64_t> offsets, int32_t fill) {
  Buffer b;
  b.offsets = std::move(offsets);
  if (b.offsets.empty()) return b;
  const auto mm = std::minmax_element(b.offsets.begin(), b.offsets.end());
  b.base = kMargin - *mm.first;
  b.buf.assign(static_cast<size_t>(*mm.second - *mm.first + 1 + 2 * kMargin), fill);
  return b;
}

// The plain reference: C[b, i, j] (+)= sum_p A[b, i, p] * B[b, p, j] modulo 2^32.
void Reference(const MatmulParams& p, const int32_t* a, const int32_t* b, int32_t* c) {
  int64_t batch = 1;
  for (int d = 0; d < p.batch_rank; ++d) batch *= p.batch_dims[d];
  for (int64_t t = 0; t < batch; ++t) {
    int64_t rest = t, oa = 0, ob = 0, oc = 0;
    for (int d = p.batch_rank - 1; d >= 0; --d) {
      const int64_t idx = rest % p.batch_dims[d];
      rest /= p.batch_dims[d];
      oa += idx * p.a_batch_strides[d];
      ob += idx * p.b_batch_strides[d];
      oc += idx * p.c_batch_strides[d];
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        int32_t* cij = c + oc + i * p.c_row_stride + j;
        uint32_t sum = p.accumulate ? static_cast<uint32_t>(*cij) : 0u;
        for (int64_t q = 0; q < p.k; ++q) {
          sum += static_cast<uint32_t>(a[oa + i * p.a_row_stride + q * p.a_col_stride]) *
                 static_cast<uint32_t>(b[ob + q * p.b_row_stride + j * p.b_col_stride]);
        }
        *cij = static_cast<int32_t>(sum);
      }
    }
  }
}

std::string Describe(const MatmulParams& p) {
  std::string s = "m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
                  " k=" + std::to_string(p.k) + " a(" + std::to_string(p.a_row_stride) + "," +
                  std::to_string(p.a_col_stride) + ") b(" + std::to_string(p.b_row_stride) + "," +
                  std::to_string(p.b_col_stride) + ") c_rs=" + std::to_string(p.c_row_stride);
  for (int d = 0; d < p.batch_rank; ++d) {
    s += " batch[" + std::to_string(p.batch_dims[d]) + ": " + std::to_string(p.a_batch_strides[d]) +
         "," + std::to_string(p.b_batch_strides[d]) + "," + std::to_string(p.c_batch_strides[d]) +
         "]";
  }
  if (p.accumulate) s += " accumulate";
  return s;
}

// What a case expects of the kernel.
enum class Expect {
  kExact,    // returns true, C equals the reference, nothing else written
  kDecline,  // returns false, nothing written
};

constexpr int32_t kGapValue = 1 << 20;  // outside int16: reading it would decline
constexpr int32_t kCSentinel = 0x5A5A5A5A;

// Runs fn on params p with operand values va / vb, checks the outcome; returns the number of
// failures (reported once). `poison`: after filling, one addressed element of A (1) or B (2),
// chosen by the seed, is set to 32768 or -32769 (just outside int16); of A to 256 (3, just
// outside u8) or to 128 or -129 (5, just outside s8); of B to 128 or -129 (4) or to 256 (6).
int RunCase(const std::string& label, I32Fn fn, const MatmulParams& p, Values va, Values vb,
            uint64_t seed, ThreadPool* pool, Expect expect, int poison = 0) {
  Rng rng(seed);
  Buffer a = MakeBuffer(Offsets(p, p.a_batch_strides, p.m, p.k, p.a_row_stride, p.a_col_stride),
                        kGapValue);
  Buffer b = MakeBuffer(Offsets(p, p.b_batch_strides, p.k, p.n, p.b_row_stride, p.b_col_stride),
                        kGapValue);
  Buffer c = MakeBuffer(Offsets(p, p.c_batch_strides, p.m, p.n, p.c_row_stride, 1), kCSentinel);
  for (int64_t o : a.offsets) a.at(o) = rng.Value(va);
  for (int64_t o : b.offsets) b.at(o) = rng.Value(vb);
  for (int64_t o : c.offsets) c.at(o) = rng.Value(Values::kFullI32);
  if (poison != 0) {
    Buffer& x = poison % 2 == 1 ? a : b;
    if (!x.offsets.empty()) {
      const int64_t at = x.offsets[rng.Next() % x.offsets.size()];
      const bool odd = (rng.Next() & 1) != 0;
      if (poison <= 2) {
        x.at(at) = odd ? 32768 : -32769;
      } else if (poison <= 4) {
        x.at(at) = poison == 3 ? 256 : odd ? 128 : -129;
      } else {
        x.at(at) = poison == 6 ? 256 : odd ? 128 : -129;
      }
    }
  }
  std::vector<int32_t> want = c.buf;
  if (expect == Expect::kExact) {
    Reference(p, a.ptr(), b.ptr(), want.empty() ? nullptr : want.data() + c.base);
  }
  const bool ok = fn(p, a.ptr(), b.ptr(), c.ptr(), pool);
  const std::string what = label + " " + Describe(p) + (pool ? " 2 threads" : " 1 thread");
  if (ok != (expect == Expect::kExact)) {
    ADD_FAILURE() << what << ": returned " << ok;
    return 1;
  }
  if (c.buf != want) {
    size_t first = 0;
    while (c.buf[first] == want[first]) ++first;
    ADD_FAILURE() << what << ": first difference at buffer index " << first << " (offset "
                  << static_cast<int64_t>(first) - c.base << "): got " << c.buf[first] << ", want "
                  << want[first];
    return 1;
  }
  return 0;
}

// The layouts of A and B a case can take.
enum Layout : int {
  kRowMajor,
  kTransposedB,  // B stored [n, k]
  kTransposedA,  // A stored [k, m]
  kBothTransposed,
  kStrided,   // gaps between rows and columns of A and B, and a padded C row
  kNegative,  // negative strides (rows of A and columns of B read backwards)
  kLayouts,
};

MatmulParams MakeParams(int64_t m, int64_t n, int64_t k, int layout, bool accumulate) {
  MatmulParams p = RowMajorMatmul(m, n, k);
  switch (layout) {
    case kTransposedB:
      p.b_row_stride = 1;
      p.b_col_stride = k;
      break;
    case kTransposedA:
      p.a_row_stride = 1;
      p.a_col_stride = m;
      break;
    case kBothTransposed:
      p.a_row_stride = 1;
      p.a_col_stride = m;
      p.b_row_stride = 1;
      p.b_col_stride = k;
      break;
    case kStrided:
      p.a_col_stride = 2;
      p.a_row_stride = 2 * k + 3;
      p.b_col_stride = 3;
      p.b_row_stride = 3 * n + 1;
      p.c_row_stride = n + 5;
      break;
    case kNegative:
      p.a_row_stride = -k;
      p.b_col_stride = -1;
      p.b_row_stride = n;
      p.c_row_stride = n + 1;
      break;
    default:
      break;
  }
  p.accumulate = accumulate;
  return p;
}

}  // namespace

void RecordRun(const std::string& label) { Runs().insert(label); }

void RunKernelSuite(const std::string& label, I32Fn fn, bool has_kernel) {
  ThreadPool pool(2);
  const Expect exact = has_kernel ? Expect::kExact : Expect::kDecline;
  uint64_t seed = 1;
  int failures = 0;
  const auto run = [&](const MatmulParams& p, Values va, Values vb, ThreadPool* tp, Expect expect,
                       int poison = 0) {
    if (!has_kernel) expect = Expect::kDecline;  // declines everything, writes nothing
    failures += RunCase(label, fn, p, va, vb, seed++, tp, expect, poison);
  };

  // Small shapes: every row tail of MR (6 or 8) and column tail of the vector widths (4, 8, 16
  // lanes) and tile widths (1-3 vectors), k odd and even, every layout, with and without
  // accumulation.
  int layout = 0;
  for (int64_t m : {0, 1, 2, 3, 5, 6, 7, 8, 9, 13, 17}) {
    for (int64_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49, 65}) {
      for (int64_t k : {0, 1, 2, 3, 4, 7, 8, 33}) {
        const bool acc = ((m + n + k) & 1) != 0;
        const Values v = (layout % 3 == 0)   ? Values::kI16
                         : (layout % 3 == 1) ? Values::kLimits
                                             : Values::kI8;
        run(MakeParams(m, n, k, layout % kLayouts, acc), v, v, nullptr, exact);
        ++layout;
        if (failures > 10) return;
      }
    }
  }
  // k across the 512-value (256-pair) cache blocks, odd and even, with row/column tails.
  for (int64_t k : {511, 512, 513, 1023, 1025, 1537}) {
    for (int lay = 0; lay < kLayouts; ++lay) {
      run(MakeParams(9, 33, k, lay, lay % 2 == 1), Values::kI16, Values::kI16, nullptr, exact);
    }
  }
  // Larger products: threads (the pool splits rows, or columns when m < n), more than one MC row
  // block (m = 600) and NC column block (n = 4200), both multi-vector tile widths.
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape& s :
       {Shape{130, 129, 70}, Shape{64, 300, 81}, Shape{257, 33, 129}, Shape{200, 200, 600},
        Shape{37, 1000, 40}, Shape{600, 17, 21}, Shape{3, 4200, 5}, Shape{96, 256, 64}}) {
    for (int lay : {int{kRowMajor}, int{kTransposedB}, int{kStrided}}) {
      for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
        run(MakeParams(s.m, s.n, s.k, lay, s.k % 2 == 0), Values::kU8, Values::kI8, tp, exact);
      }
    }
  }
  // The limits: -32768 everywhere (each pmaddwd pair is (-32768)^2 * 2 = 2^31, which wraps to
  // -2^31) with k large enough that the sums wrap many times, odd and even k, plus accumulating
  // into C; and mixes of the extremes.
  for (int64_t k : {2, 3, 4098, 4099, 8191}) {
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      run(MakeParams(9, 35, k, kRowMajor, false), Values::kMin, Values::kMin, tp, exact);
      run(MakeParams(13, 17, k, kTransposedB, true), Values::kMin, Values::kMin, tp, exact);
      run(MakeParams(19, 50, k, kRowMajor, k % 2 == 1), Values::kLimits, Values::kLimits, tp,
          exact);
    }
  }
  // Batches: broadcast A or B (stride 0), batch rank 2, a zero batch extent, accumulation,
  // threads (fewer and more items than threads).
  {
    MatmulParams p = MakeParams(6, 5, 4, kRowMajor, false);
    ASSERT_TRUE(AddMatmulBatchDim(&p, 2, 24, 0, 90));
    ASSERT_TRUE(AddMatmulBatchDim(&p, 3, 0, 20, 30));
    run(p, Values::kI16, Values::kI16, &pool, exact);
    p.accumulate = true;
    run(p, Values::kLimits, Values::kLimits, nullptr, exact);
    MatmulParams q = MakeParams(70, 90, 33, kTransposedB, false);
    ASSERT_TRUE(AddMatmulBatchDim(&q, 3, 70 * 33, 90 * 33, 70 * 90));
    run(q, Values::kI16, Values::kI16, &pool, exact);
    run(q, Values::kI16, Values::kI16, nullptr, exact);
    MatmulParams r = MakeParams(150, 140, 65, kRowMajor, true);
    ASSERT_TRUE(AddMatmulBatchDim(&r, 2, 0, 65 * 140, 150 * 140));
    run(r, Values::kU8, Values::kI8, &pool, exact);
    MatmulParams z = MakeParams(5, 6, 7, kRowMajor, false);
    ASSERT_TRUE(AddMatmulBatchDim(&z, 0, 35, 42, 30));
    run(z, Values::kI16, Values::kI16, nullptr, Expect::kExact);  // nothing to do
  }
  // Just outside int16 (32768 or -32769) anywhere in A or B, also in a later batch index: the
  // kernel declines and writes nothing. A full-range operand likewise.
  for (int poison : {1, 2}) {
    for (int lay = 0; lay < kLayouts; ++lay) {
      run(MakeParams(17, 33, 65, lay, lay % 2 == 0), Values::kI16, Values::kI16,
          lay % 2 ? &pool : nullptr, Expect::kDecline, poison);
    }
    MatmulParams p = MakeParams(6, 5, 4, kRowMajor, true);
    ASSERT_TRUE(AddMatmulBatchDim(&p, 3, 24, 20, 30));
    for (int rep = 0; rep < 4; ++rep) {
      run(p, Values::kI8, Values::kI8, nullptr, Expect::kDecline, poison);
    }
  }
  run(MakeParams(7, 9, 11, kRowMajor, false), Values::kFullI32, Values::kI8, nullptr,
      Expect::kDecline);
  run(MakeParams(7, 9, 11, kRowMajor, false), Values::kI8, Values::kFullI32, nullptr,
      Expect::kDecline);
  // Invalid params: false, nothing written.
  {
    MatmulParams p = MakeParams(2, 2, 2, kRowMajor, false);
    p.m = -1;
    int32_t x = 0;
    EXPECT_FALSE(fn(p, &x, &x, &x, nullptr)) << label;
  }
  // The one pmaddwd sum that overflows: (-32768)^2 + (-32768)^2 = 2^31 -> -2^31 (mod 2^32).
  if (has_kernel) {
    const int32_t a[2] = {-32768, -32768}, b[2] = {-32768, -32768};
    int32_t c = 0;
    ASSERT_TRUE(fn(MakeParams(1, 1, 2, kRowMajor, false), a, b, &c, nullptr)) << label;
    EXPECT_EQ(std::numeric_limits<int32_t>::min(), c) << label;
  }
}

void CheckDeclinesAll(const std::string& label, I32Fn fn) {
  ThreadPool pool(2);
  for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
    RunCase(label, fn, MakeParams(9, 33, 70, kRowMajor, false), Values::kU8, Values::kI8, 1, tp,
            Expect::kDecline);
  }
}

void RunU8S8Suite(const std::string& label, I32Fn only, I32Fn full) {
  ThreadPool pool(2);
  uint64_t seed = 5000;
  int failures = 0;
  const auto run = [&](I32Fn fn, const MatmulParams& p, Values va, Values vb, ThreadPool* tp,
                       Expect expect, int poison = 0) {
    failures += RunCase(label, fn, p, va, vb, seed++, tp, expect, poison);
  };
  // Operands that are u8 x s8 or s8 x u8 (random, or mostly at the limits).
  const std::pair<Values, Values> kFit[] = {{Values::kU8, Values::kI8},
                                            {Values::kI8, Values::kU8},
                                            {Values::kU8Limits, Values::kS8Limits},
                                            {Values::kS8Limits, Values::kU8Limits}};
  // Small shapes: the row and column tails, k not a multiple of 4 (and 0), every layout, with
  // and without accumulation, both orientations.
  int count = 0;
  for (int64_t m : {0, 1, 2, 3, 5, 6, 7, 8, 9, 13, 17}) {
    for (int64_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49, 65}) {
      for (int64_t k : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 33, 35}) {
        const auto& v = kFit[count % 4];
        run(only, MakeParams(m, n, k, count % kLayouts, ((m + n + k) & 1) != 0), v.first, v.second,
            nullptr, Expect::kExact);
        ++count;
        if (failures > 10) return;
      }
    }
  }
  // k across the 1024-value (256-quad) cache blocks.
  for (int64_t k : {1021, 1023, 1024, 1025, 1026, 2047, 2049, 3075}) {
    for (int lay = 0; lay < kLayouts; ++lay) {
      const auto& v = kFit[(k + lay) % 4];
      run(only, MakeParams(9, 33, k, lay, lay % 2 == 1), v.first, v.second, nullptr,
          Expect::kExact);
    }
  }
  // Larger products, 1 and 2 threads, more than one MC / NC block.
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape& s :
       {Shape{130, 129, 70}, Shape{64, 300, 81}, Shape{257, 33, 129}, Shape{200, 200, 600},
        Shape{37, 1000, 43}, Shape{600, 17, 21}, Shape{3, 4200, 5}, Shape{96, 256, 64}}) {
    for (int lay : {int{kRowMajor}, int{kTransposedB}, int{kTransposedA}, int{kStrided}}) {
      for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
        const auto& v = kFit[(s.k + lay) % 4];
        run(only, MakeParams(s.m, s.n, s.k, lay, s.k % 2 == 0), v.first, v.second, tp,
            Expect::kExact);
      }
    }
  }
  // The extremes: 255 * -128 = -32640 in every product. Without accumulation the sums wrap once
  // k exceeds 2^31 / 32640 (k = 70001: -2284832640 wraps to 2010134656); accumulated into
  // random C, already at several thousand.
  for (int64_t k : {4, 5, 4095, 4097, 8190, 70001}) {
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      const int64_t m = k > 10000 ? 3 : 9, n = k > 10000 ? 17 : 35;
      run(only, MakeParams(m, n, k, kRowMajor, false), Values::kU8Max, Values::kS8Min, tp,
          Expect::kExact);
      run(only, MakeParams(m, n, k, kTransposedB, false), Values::kS8Min, Values::kU8Max, tp,
          Expect::kExact);
      run(only, MakeParams(m + 4, n / 2, k, kTransposedA, true), Values::kU8Max, Values::kS8Min, tp,
          Expect::kExact);
      run(only, MakeParams(m + 2, n + 3, k, kRowMajor, true), Values::kU8Limits, Values::kS8Limits,
          tp, Expect::kExact);
      run(only, MakeParams(m + 2, n + 3, k, kStrided, k % 2 == 0), Values::kS8Limits,
          Values::kU8Limits, tp, Expect::kExact);
    }
  }
  {  // one product by hand: 255 * -128 * 70001 = -2284832640 = 2010134656 - 2^32
    const int64_t k = 70001;
    std::vector<int32_t> a(k, 255), b(k, -128);
    int32_t c = 0;
    ASSERT_TRUE(only(MakeParams(1, 1, k, kRowMajor, false), a.data(), b.data(), &c, nullptr));
    EXPECT_EQ(2010134656, c) << label;
  }
  // Batches (broadcast operands, rank 2, accumulation, threads).
  {
    MatmulParams p = MakeParams(6, 5, 7, kRowMajor, false);
    ASSERT_TRUE(AddMatmulBatchDim(&p, 2, 42, 0, 90));
    ASSERT_TRUE(AddMatmulBatchDim(&p, 3, 0, 35, 30));
    run(only, p, Values::kU8, Values::kI8, &pool, Expect::kExact);
    p.accumulate = true;
    run(only, p, Values::kS8Limits, Values::kU8Limits, nullptr, Expect::kExact);
    MatmulParams q = MakeParams(70, 90, 33, kTransposedB, false);
    ASSERT_TRUE(AddMatmulBatchDim(&q, 3, 70 * 33, 90 * 33, 70 * 90));
    run(only, q, Values::kU8Limits, Values::kS8Limits, &pool, Expect::kExact);
    run(only, q, Values::kI8, Values::kU8, nullptr, Expect::kExact);
    MatmulParams r = MakeParams(150, 140, 65, kRowMajor, true);
    ASSERT_TRUE(AddMatmulBatchDim(&r, 2, 0, 65 * 140, 150 * 140));
    run(only, r, Values::kU8, Values::kI8, &pool, Expect::kExact);
  }
  // One value just outside u8 or s8 (also in a later batch index): vpdpbusd declines and writes
  // nothing; kAuto computes the product exactly with an int16 kernel. Operands that are both u8
  // with a value above 127, or both s8 with a negative value, fit neither orientation.
  for (int poison : {3, 4, 5, 6}) {
    const Values va = poison <= 4 ? Values::kU8Limits : Values::kS8Limits;
    const Values vb = poison <= 4 ? Values::kS8Limits : Values::kU8Limits;
    for (int lay = 0; lay < kLayouts; ++lay) {
      const MatmulParams p = MakeParams(17, 33, 65, lay, lay % 2 == 0);
      ThreadPool* tp = lay % 2 ? &pool : nullptr;
      run(only, p, va, vb, tp, Expect::kDecline, poison);
      run(full, p, va, vb, tp, Expect::kExact, poison);
    }
    MatmulParams p = MakeParams(6, 5, 4, kRowMajor, true);
    ASSERT_TRUE(AddMatmulBatchDim(&p, 3, 24, 20, 30));
    for (int rep = 0; rep < 4; ++rep) {
      run(only, p, va, vb, nullptr, Expect::kDecline, poison);
      run(full, p, va, vb, nullptr, Expect::kExact, poison);
    }
  }
  for (const auto& v : {std::pair<Values, Values>{Values::kU8Limits, Values::kU8Limits},
                        {Values::kS8Limits, Values::kS8Limits},
                        {Values::kI16, Values::kI8}}) {
    run(only, MakeParams(7, 9, 11, kRowMajor, false), v.first, v.second, nullptr, Expect::kDecline);
    run(full, MakeParams(7, 9, 11, kRowMajor, false), v.first, v.second, nullptr, Expect::kExact);
  }
  // The vector row-major B pack and the pack tails: B rows of 1-3 values past a multiple of 4.
  for (int64_t k : {1, 2, 3, 5, 6, 7}) {
    run(only, MakeParams(3, 64, k, kRowMajor, false), Values::kU8Limits, Values::kS8Limits, nullptr,
        Expect::kExact);
  }
}

}  // namespace i16_test

HWY_BEFORE_TEST(MatmulI16KernelTest);
HWY_EXPORT_AND_TEST_P(MatmulI16KernelTest, TestMatmulI16);
HWY_EXPORT_AND_TEST_P(MatmulI16KernelTest, TestMatmulI16Vnni);
HWY_EXPORT_AND_TEST_P(MatmulI16KernelTest, TestMatmulU8S8);
HWY_EXPORT_AND_TEST_P(MatmulI16KernelTest, TestMatmulI16PlainFallback);

// The public MatmulI32 with dispatch forced to each target: exact whichever path it takes
// (int16 operands, one value just outside int16, full-range operands).
HWY_BEFORE_TEST(MatmulI16DispatchTest);
TEST_P(MatmulI16DispatchTest, MatmulI32IsExactOnEveryPath) {
  const std::string target = hwy::TargetName(GetParam());
  ThreadPool pool(2);
  using i16_test::Expect;
  using i16_test::Values;
  uint64_t seed = 1000;
  for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
    for (int lay : {0, 1, 4}) {
      for (const auto& v : {std::pair<Values, Values>{Values::kU8, Values::kI8},
                            {Values::kI8, Values::kU8},
                            {Values::kU8Limits, Values::kS8Limits},
                            {Values::kLimits, Values::kLimits},
                            {Values::kFullI32, Values::kFullI32}}) {
        const i16_test::I32Fn fn = &MatmulI32;
        i16_test::RunCase(target, fn, i16_test::MakeParams(70, 90, 301, lay, lay == 4), v.first,
                          v.second, seed++, tp, Expect::kExact);
        i16_test::RunCase(target, fn, i16_test::MakeParams(3, 5, 7, lay, false), v.first, v.second,
                          seed++, tp, Expect::kExact);
      }
      // One value just outside int16, in A or in B: an old path, still exact.
      for (int poison : {1, 2}) {
        i16_test::RunCase(target, &MatmulI32, i16_test::MakeParams(70, 90, 301, lay, false),
                          Values::kI16, Values::kI16, seed++, tp, Expect::kExact, poison);
      }
      // One value just outside u8 / s8: the int16 kernel, still exact.
      for (int poison : {3, 4, 5, 6}) {
        i16_test::RunCase(target, &MatmulI32, i16_test::MakeParams(70, 90, 301, lay, true),
                          poison <= 4 ? Values::kU8Limits : Values::kS8Limits,
                          poison <= 4 ? Values::kS8Limits : Values::kU8Limits, seed++, tp,
                          Expect::kExact, poison);
      }
    }
  }
}

class PrintRuns : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("int16 kernels tested:");
    for (const std::string& t : i16_test::Runs()) std::printf(" [%s]", t.c_str());
    std::printf("\n");
  }
};
const ::testing::Environment* const kPrintRuns = ::testing::AddGlobalTestEnvironment(new PrintRuns);

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
