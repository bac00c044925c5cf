// NarrowFusion (plan.h): softmax, layer_norm and the reductions on f16/bf16 operands (traced as
// convert -> the f32 op -> convert) run as one step on the narrow arrays. Their outputs are the
// bits of the same program with fusion off (Options::fuse_elementwise: the three ops run one by
// one), a NaN's sign and payload aside, for both types, every reduction, axes inner, outer and
// several, keepdims, sizes 0 and 1, tails, NaN and inf, on 1 and 2 threads; the f32 copies of
// the operand and the result are gone from the arena; other shapes of the pattern stay unfused
// and right.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/kernels/narrow.h"
#include "cc/runtime/plan.h"
#include "cc/runtime/runtime.h"
#include "cc/runtime/test_arrays.h"
#include "cc/trace/trace.h"

namespace shp {
namespace runtime {
namespace {

using testing::Arr;
using testing::RunAll;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

std::vector<Arr> RunOn(Runtime& rt, const Arr& x) { return RunAll(rt, {"x"}, {x}); }

// Random f16/bf16 values, with a NaN, infinities and a subnormal when `specials`.
Arr RandomNarrow(DType t, std::vector<int64_t> shape, uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-5, 5);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> f(static_cast<size_t>(n));
  for (float& v : f) v = u(rng);
  if (specials && n > 3) {
    f[rng() % f.size()] = NAN;
    f[rng() % f.size()] = INFINITY;
    f[rng() % f.size()] = -INFINITY;
    f[rng() % f.size()] = 1e-7f;
  }
  Arr a;
  a.dtype = t;
  a.shape = std::move(shape);
  a.bytes.resize(static_cast<size_t>(n) * 2);
  EXPECT_TRUE(kernels::ConvertElements(DType::kF32, f.data(), t, a.bytes.data(), f.size()));
  return a;
}

bool IsNaN(DType t, uint16_t h) {
  return t == DType::kF16 ? (h & 0x7fff) > 0x7c00 : (h & 0x7fff) > 0x7f80;
}

::testing::AssertionResult SameBits(const Arr& want, const Arr& got) {
  if (want.dtype != got.dtype || want.shape != got.shape || want.bytes.size() != got.bytes.size())
    return ::testing::AssertionFailure() << "dtype, shape or size differ";
  const size_t n = want.bytes.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    uint16_t a, b;
    std::memcpy(&a, want.bytes.data() + 2 * i, 2);
    std::memcpy(&b, got.bytes.data() + 2 * i, 2);
    if (a == b || (IsNaN(want.dtype, a) && IsNaN(want.dtype, b))) continue;
    return ::testing::AssertionFailure()
           << "element " << i << ": 0x" << std::hex << a << " unfused, 0x" << b << " fused";
  }
  return ::testing::AssertionSuccess();
}

using Build = std::function<const Tensor*(trace::Trace&, const Tensor*)>;

struct Case {
  std::string name;
  Build op;
};

std::vector<Case> Cases() {
  std::vector<Case> c;
  c.push_back({"softmax -1", [](trace::Trace& t, const Tensor* x) { return t.Softmax(x, -1); }});
  c.push_back({"softmax 0", [](trace::Trace& t, const Tensor* x) { return t.Softmax(x, 0); }});
  c.push_back(
      {"layer_norm -1", [](trace::Trace& t, const Tensor* x) { return t.LayerNorm(x, -1, 1e-5); }});
  c.push_back(
      {"layer_norm 0", [](trace::Trace& t, const Tensor* x) { return t.LayerNorm(x, 0, 1e-3); }});
  const OpKind reductions[] = {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax,
                               OpKind::kReduceMin, OpKind::kReduceProd};
  for (OpKind op : reductions) {
    const std::string n = trace::OpName(op);
    for (bool keep : {false, true}) {
      const std::string k = keep ? " keepdims" : "";
      c.push_back({n + " axis 1" + k, [op, keep](trace::Trace& t, const Tensor* x) {
                     return t.Reduce(op, x, {1}, keep);
                   }});
      c.push_back({n + " axis 0" + k, [op, keep](trace::Trace& t, const Tensor* x) {
                     return t.Reduce(op, x, {0}, keep);
                   }});
      c.push_back({n + " all" + k, [op, keep](trace::Trace& t, const Tensor* x) {
                     return t.Reduce(op, x, {}, keep);
                   }});
    }
  }
  return c;
}

std::shared_ptr<const program::Program> OneOp(DType t, const Build& op) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  scope->Declare("B", 0, dim::kPosInf);  // sizes 0 too
  scope->Declare("N", 0, dim::kPosInf);
  trace::Trace tr(scope.get());
  const Tensor* x = tr.Input("x", t, "B, N");
  const Tensor* y = op(tr, x);
  return std::shared_ptr<const program::Program>(program::Program::FromTrace(tr, {x}, {y}, {"y"}));
}

TEST(NarrowFusion, EqualsTheUnfusedOpsBitForBit) {
  const std::vector<std::vector<int64_t>> shapes = {{3, 1000}, {37, 17},  {1, 1},     {0, 5},
                                                    {4, 0},    {300, 64}, {2, 40000}, {1100, 3}};
  uint32_t seed = 1;
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (const Case& c : Cases()) {
      auto p = OneOp(t, c.op);
      const Graph g(*p);
      ASSERT_EQ(1u, g.narrow_fusions.size()) << c.name;
      for (int threads : {1, 2}) {
        Options on, off;
        on.num_threads = off.num_threads = threads;
        off.fuse_elementwise = false;
        Runtime fused(p, on), plain(p, off);
        for (const std::vector<int64_t>& s : shapes) {
          ++seed;
          const Arr x = RandomNarrow(t, s, seed, seed % 2 == 0);
          std::vector<Arr> want = RunOn(plain, x), got = RunOn(fused, x);
          ASSERT_EQ(1u, got.size());
          ASSERT_EQ(t, got[0].dtype);
          ASSERT_TRUE(SameBits(want[0], got[0]))
              << (t == DType::kF16 ? "f16 " : "bf16 ") << c.name << " on " << s[0] << "x" << s[1]
              << ", " << threads << " threads";
        }
      }
    }
  }
}

// The fused plan keeps no f32 copy: its arena holds at most the op's own scratch (layer_norm
// over axis 0 transposes the narrow operand), not the 4-byte copies of the unfused plan.
TEST(NarrowFusion, PlansNoF32Copies) {
  for (const Case& c : Cases()) {
    auto p = OneOp(DType::kF16, c.op);
    const Graph fused(*p), plain(*p, true, true, /*fuse_elementwise=*/false);
    ASSERT_EQ(1u, fused.narrow_fusions.size());
    ASSERT_EQ(0u, plain.narrow_fusions.size());
    std::vector<int64_t> vars(static_cast<size_t>(fused.max_var + 1), 0);
    for (const auto& vp : fused.var_pos) vars[static_cast<size_t>(vp.first)] = 512;
    const Plan a(fused, vars), b(plain, vars);
    const size_t narrow = 512 * 512 * 2;
    EXPECT_LE(a.arena_bytes, narrow) << c.name;
    EXPECT_GE(b.arena_bytes, 2 * narrow) << c.name;
    EXPECT_LT(a.steps.size(), b.steps.size()) << c.name;
  }
}

// One f16 input feeding several ops: each op's conversion of it is its own node (the tracer
// converts per op), so each op fuses, and the results are the unfused ones.
TEST(NarrowFusion, SeveralOpsOnOneInput) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  trace::Trace tr(scope.get());
  const Tensor* x = tr.Input("x", DType::kBF16, "B, N");
  const Tensor* a = tr.Softmax(x, -1);
  const Tensor* b = tr.Reduce(OpKind::kReduceSum, x, {1}, false);
  const Tensor* c = tr.LayerNorm(x, -1, 1e-5);
  auto p = std::shared_ptr<const program::Program>(
      program::Program::FromTrace(tr, {x}, {a, b, c}, {"a", "b", "c"}));
  EXPECT_EQ(3u, Graph(*p).narrow_fusions.size());
  Options on, off;
  off.fuse_elementwise = false;
  Runtime fused(p, on), plain(p, off);
  const Arr in = RandomNarrow(DType::kBF16, {9, 70}, 8, true);
  std::vector<Arr> f = RunOn(fused, in), u = RunOn(plain, in);
  ASSERT_EQ(3u, f.size());
  for (size_t i = 0; i < f.size(); ++i) EXPECT_TRUE(SameBits(u[i], f[i])) << i;
}

// Other shapes of the pattern stay unfused, and every output is still right: the f32 result
// also an output, the converted operand used twice, an f32 operand rounded to f16 after the op,
// and an f16 operand whose f32 result is kept.
TEST(NarrowFusion, OtherPatternsStayUnfused) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  trace::Trace tr(scope.get());
  const Tensor* x = tr.Input("x", DType::kF16, "B, N");
  const Tensor* x32 = tr.Convert(x, DType::kF32);
  const Tensor* s32 = tr.Softmax(x32, -1);                           // f32 result: an output too
  const Tensor* s16 = tr.Convert(s32, DType::kF16);                  // (so no fusion)
  const Tensor* m = tr.Reduce(OpKind::kReduceMax, x32, {1}, false);  // x32 used twice
  // The f32 sum is the result (not converted back to f16).
  const Tensor* w = tr.Reduce(OpKind::kReduceSum, tr.Convert(x, DType::kF32), {0}, false);
  auto p = std::shared_ptr<const program::Program>(
      program::Program::FromTrace(tr, {x}, {s32, s16, m, w}, {"s32", "s16", "m", "w"}));
  const Graph g(*p);
  EXPECT_EQ(0u, g.narrow_fusions.size());
  Options on, off;
  off.fuse_elementwise = false;
  Runtime fused(p, on), plain(p, off);
  const Arr in = RandomNarrow(DType::kF16, {7, 33}, 5, false);
  std::vector<Arr> a = RunOn(fused, in), b = RunOn(plain, in);
  ASSERT_EQ(4u, a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i].bytes, a[i].bytes) << i;
}

}  // namespace
}  // namespace runtime
}  // namespace shp
