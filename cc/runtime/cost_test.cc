// Symbolic cost (cost.h): the MLP's formulas, worst cases under a declared bound, and the
// soundness of peak bytes against the arena the runtime plans, on random programs and shapes,
// with FLOPs checked against a per-op count written here independently of the op rules.
#include "cc/runtime/cost.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/base/testing.h"
#include "cc/dim/parse.h"
#include "cc/program/program.h"
#include "cc/runtime/plan.h"
#include "cc/trace/trace.h"

namespace shp {
namespace runtime {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

std::shared_ptr<const program::Program> Build(trace::Trace& t, const std::vector<const Tensor*>& in,
                                              const std::vector<const Tensor*>& out) {
  std::vector<std::string> names;
  for (size_t i = 0; i < out.size(); ++i) names.push_back("out" + std::to_string(i));
  return std::shared_ptr<const program::Program>(program::Program::FromTrace(t, in, out, names));
}

// The demo's MLP: 784 -> 256 -> 256 -> 10 with bias and relu.
std::shared_ptr<const program::Program> Mlp(const std::vector<std::string>& constraints) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create(constraints);
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF32, "batch, 784");
  auto zeros = [&](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n), 0.f);
    return t.Constant(DType::kF32, shape, v.data(), v.size() * 4);
  };
  float zero = 0;
  const Tensor* z = t.Constant(DType::kF32, {}, &zero, 4);
  auto layer = [&](const Tensor* h, int64_t k, int64_t n, bool relu) {
    const Tensor* y = t.Binary(OpKind::kAdd, t.MatMul(h, zeros({k, n})), zeros({n}));
    return relu ? t.Binary(OpKind::kMax, y, z) : y;
  };
  const Tensor* y = layer(layer(layer(x, 784, 256, true), 256, 256, true), 256, 10, false);
  return Build(t, {x}, {y});
}

TEST(CostTest, MlpFormulas) {
  std::shared_ptr<const program::Program> p = Mlp({});
  // 2*batch*(784*256 + 256*256 + 256*10) for the matmuls, plus one per element for the three
  // bias adds and the two relus: batch*(256 + 256 + 256 + 256 + 10).
  const int64_t matmuls = 2 * (784 * 256 + 256 * 256 + 256 * 10);
  const int64_t elementwise = 256 * 4 + 10;
  EXPECT_EQ(ProgramCost(*p, CostKind::kFlops).formula,
            std::to_string(matmuls + elementwise) + "*batch");
  // Weights and biases (the constants), f32: the scalar zero of relu too.
  const int64_t params = 4 * (784 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10 + 1);
  Cost pb = ProgramCost(*p, CostKind::kParameterBytes);
  EXPECT_EQ(pb.formula, std::to_string(params));
  EXPECT_EQ(pb.bounds.lo, params);
  EXPECT_EQ(pb.bounds.hi, params);
  // Unbounded batch: the worst case is unbounded, and the reason names the variable.
  Cost peak = ProgramCost(*p, CostKind::kPeakBytes);
  EXPECT_EQ(peak.bounds.hi, dim::kPosInf);
  EXPECT_TRUE(Contains(peak.unbounded_reason, "no upper bound on batch"));
  EXPECT_EQ(ProgramCost(*p, CostKind::kFlops).bounds.lo, matmuls + elementwise);
}

TEST(CostTest, WorstCaseUnderBoundEqualsFormulaAtTheBound) {
  std::shared_ptr<const program::Program> p = Mlp({"batch <= 4096"});
  for (int32_t k = 0; k < kNumCostKinds; ++k) {
    CostKind kind = static_cast<CostKind>(k);
    Cost c = ProgramCost(*p, kind);
    EXPECT_EQ(c.bounds.hi, CostValue(*p, kind, 0, {"batch"}, {4096})) << CostKindName(kind);
    EXPECT_EQ(c.bounds.lo, CostValue(*p, kind, 0, {"batch"}, {1})) << CostKindName(kind);
    EXPECT_TRUE(c.unbounded_reason.empty());
  }
}

TEST(CostTest, Errors) {
  std::shared_ptr<const program::Program> p = Mlp({});
  EXPECT_TRUE(Contains(Catch([&] { ProgramCost(*p, static_cast<CostKind>(7)); }).what(),
                       "unknown cost kind 7"));
  EXPECT_TRUE(Contains(Catch([&] { ProgramCost(*p, CostKind::kFlops, 3); }).what(),
                       "variant 3 out of range"));
  EXPECT_TRUE(Contains(Catch([&] { CostValue(*p, CostKind::kFlops, 0, {}, {}); }).what(),
                       "no value for variable 'batch'"));
}

// ---- Random programs ----

// Rank-2 f32 programs over dims {b, n, 4}: fused elementwise chains, broadcasting, matmul,
// dot_general, transposes, reductions, softmax, layer_norm along axis 0 (temporaries),
// concatenation and reshapes (views), with several outputs.
struct RandomProgram {
  std::shared_ptr<const program::Program> p;
  explicit RandomProgram(uint32_t seed) {
    std::mt19937 rng(seed);
    std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
    trace::Trace t(scope.get());
    std::vector<const Tensor*> pool = {t.Input("x", DType::kF32, "b, n"),
                                       t.Input("y", DType::kF32, "n, 4"),
                                       t.Input("z", DType::kF32, "4, b")};
    std::vector<const Tensor*> inputs = pool;
    auto pick = [&]() { return pool[rng() % pool.size()]; };
    int ops = 4 + static_cast<int>(rng() % 12);
    for (int i = 0; i < ops; ++i) {
      const Tensor* a = pick();
      const Tensor* r = nullptr;
      const std::vector<const dim::Expr*>& s = a->type.shape;
      switch (rng() % 10) {
        case 0:
          r = t.Unary(rng() % 2 ? OpKind::kTanh : OpKind::kExp, a);
          break;
        case 1: {
          const Tensor* b = pick();
          r = t.Binary(OpKind::kAdd, a, b->type.shape == s ? b : a);
          break;
        }
        case 2:
          for (const Tensor* b : pool) {
            if (b->type.shape[0] == s[1]) r = t.MatMul(a, b);
          }
          break;
        case 3:
          r = t.Transpose(a, {1, 0});
          break;
        case 4:
          r = t.Binary(OpKind::kSub, a, t.Reduce(OpKind::kReduceSum, a, {1}, true));
          break;
        case 5:
          r = t.Softmax(a, 1);
          break;
        case 6:
          r = t.LayerNorm(a, 0, 1e-5);
          break;
        case 7:
          r = t.Concatenate({a, a}, 0);
          break;
        case 8:
          r = t.Reshape(a, {scope->Mul(s[0], s[1]), scope->Constant(1)});
          break;
        case 9:
          for (const Tensor* b : pool) {
            if (b->type.shape[0] == s[0]) {
              ops::DotDims d;
              d.lhs_contracting = {0};
              d.rhs_contracting = {0};
              r = t.DotGeneral(a, b, d);
            }
          }
          break;
      }
      if (r != nullptr) pool.push_back(r);
    }
    std::vector<const Tensor*> outs = {pool.back()};
    if (pool.size() > 4 && rng() % 2) outs.push_back(pool[3 + rng() % (pool.size() - 4)]);
    if (outs.size() == 2 && outs[0] == outs[1]) outs.pop_back();
    p = Build(t, inputs, outs);
  }
};

// FLOPs of one node with concrete shapes, counted here without the op definitions' rules.
int64_t CountFlops(const program::Node& n, const std::vector<std::vector<int64_t>>& shapes,
                   size_t value) {
  auto numel = [](const std::vector<int64_t>& s) {
    int64_t x = 1;
    for (int64_t d : s) x *= d;
    return x;
  };
  const std::vector<int64_t>& out = shapes[value];
  const std::vector<int64_t>& a =
      shapes[static_cast<size_t>(n.operands.empty() ? 0 : n.operands[0])];
  switch (n.op) {
    case OpKind::kTanh:
    case OpKind::kExp:
    case OpKind::kAdd:
    case OpKind::kSub:
      return numel(out);
    case OpKind::kReduceSum:
      return numel(a);
    case OpKind::kMatMul:
      return 2 * numel(out) * a.back();
    case OpKind::kDotGeneral:
      return 2 * numel(out) * a[0];  // the programs above contract lhs axis 0
    case OpKind::kSoftmax:
    case OpKind::kLayerNorm:
      return 5 * numel(out);
    default:
      return 0;
  }
}

TEST(CostTest, PeakBoundsTheArenaAndFlopsMatchAnIndependentCount) {
  std::mt19937 rng(2024);
  int checked = 0;
  for (uint32_t seed = 0; seed < 50; ++seed) {
    RandomProgram rp(seed);
    const program::Program& p = *rp.p;
    Graph g(p);
    for (int k = 0; k < 20; ++k) {
      int64_t b = 1 + static_cast<int64_t>(rng() % 40), n = 1 + static_cast<int64_t>(rng() % 40);
      program::ShapeCheck sc = p.CheckShapes({"x", "y", "z"}, {{b, n}, {n, 4}, {4, b}});
      std::vector<int64_t> vars(static_cast<size_t>(g.max_var + 1), 0);
      for (const auto& vp : g.var_pos)
        vars[static_cast<size_t>(vp.first)] = sc.var_values[static_cast<size_t>(vp.second)];
      Plan plan(g, vars);
      int64_t outputs = 0;
      for (const program::Output& o : p.outputs()) outputs += plan.bytes(o.value);
      int64_t peak = CostValue(p, CostKind::kPeakBytes, 0, sc.var_names, sc.var_values);
      ASSERT_LE(static_cast<int64_t>(plan.arena_bytes) + outputs, peak)
          << "seed " << seed << " b=" << b << " n=" << n << "\n"
          << p.text() << "\nformula " << ProgramCost(p, CostKind::kPeakBytes).formula;
      if (k < 3) {  // the concrete path (CostValue) equals the symbolic formula evaluated
        const std::string formula = ProgramCost(p, CostKind::kPeakBytes).formula;
        const int64_t from_formula = p.WithScope([&](dim::Scope& s) {
          const dim::Expr* e = dim::ParseExpr(&s, formula, /*mark_used=*/false);
          std::vector<int64_t> vals(s.variables().size(), 0);
          std::vector<bool> known(vals.size(), false);
          for (size_t i = 0; i < sc.var_names.size(); ++i) {
            const int32_t v = s.FindVar(sc.var_names[i]);
            if (v < 0) continue;
            vals[static_cast<size_t>(v)] = sc.var_values[i];
            known[static_cast<size_t>(v)] = true;
          }
          return s.Evaluate(e, vals, known);
        });
        ASSERT_EQ(peak, from_formula) << "seed " << seed << " b=" << b << " n=" << n << "\n"
                                      << p.text() << "\nformula " << formula;
      }
      int64_t flops = 0;
      for (size_t i = 0; i < p.nodes().size(); ++i)
        flops += CountFlops(p.nodes()[i], plan.shapes, g.num_inputs + i);
      ASSERT_EQ(CostValue(p, CostKind::kFlops, 0, sc.var_names, sc.var_values), flops)
          << "seed " << seed << "\n"
          << p.text();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1000);
}

// The formulas of a 1,000-op program (printed: the target is 10 ms for all four).
TEST(CostTest, ThousandOpProgram) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({"batch <= 4096"});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF32, "batch, 64");
  std::vector<float> w(64 * 64, 0.f);
  const Tensor* wc = t.Constant(DType::kF32, {64, 64}, w.data(), w.size() * 4);
  const Tensor* h = x;
  for (int i = 0; i < 1000; ++i) {
    switch (i % 4) {
      case 0:
        h = t.MatMul(h, wc);
        break;
      case 1:
        h = t.Unary(OpKind::kTanh, h);
        break;
      case 2:
        h = t.Binary(OpKind::kAdd, h, x);
        break;
      case 3:
        h = t.Softmax(h, 1);
        break;
    }
  }
  std::shared_ptr<const program::Program> p = Build(t, {x}, {h});
  auto start = std::chrono::steady_clock::now();
  for (int32_t k = 0; k < kNumCostKinds; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    ProgramCost(*p, static_cast<CostKind>(k));
    std::printf(
        "  %s: %.2f ms\n", CostKindName(static_cast<CostKind>(k)),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("cost formulas of a %zu-op program: %.2f ms (target 10 ms)\n", p->nodes().size(), ms);
  Cost peak = ProgramCost(*p, CostKind::kPeakBytes);
  EXPECT_EQ(peak.bounds.hi, CostValue(*p, CostKind::kPeakBytes, 0, {"batch"}, {4096}));
}

// Issue 39 item 5: a chain of pads and slices whose intermediates have different, mostly
// incomparable 2-variable sizes took ~10 ms per op for the peak's formula (each buffer was
// compared with its region's growing max expression, and each alignment proved by an
// elimination): this 5,453-op chain took 17 s. Each region now keeps the sizes no other is proved
// to exceed and rounds once: 34 ms. The limit is a guard against that slope, not a benchmark.
TEST(CostTest, PeakOfIncomparableSizesIsLinear) {
  std::unique_ptr<dim::Scope> scope =
      dim::Scope::Create({"n >= 64", "m >= 64", "n <= 4096", "m <= 4096"});
  trace::Trace t(scope.get());
  dim::Scope& s = *scope;
  const Tensor* x = t.Input("x", DType::kF32, "n, m");
  const Tensor* h = x;
  std::mt19937 rng(39);
  int64_t a = 0, b = 0;
  for (int i = 0; i < 3000; ++i) {
    int64_t da = static_cast<int64_t>(rng() % 7) - 3, db = static_cast<int64_t>(rng() % 7) - 3;
    if (a + da < -30 || a + da > 30) da = -da;
    if (b + db < -30 || b + db > 30) db = -db;
    a += da;
    b += db;
    h = t.Pad(h, {s.Constant(std::max<int64_t>(da, 0)), s.Constant(0)},
              {s.Constant(0), s.Constant(std::max<int64_t>(db, 0))}, 0.0);
    if (da < 0 || db < 0) {
      h = t.Slice(h, {s.Constant(-std::min<int64_t>(da, 0)), nullptr},
                  {nullptr, s.Sub(h->type.shape[1], s.Constant(-std::min<int64_t>(db, 0)))}, {});
    }
    if (i % 7 == 3) {
      h = t.Transpose(h, {1, 0});
      std::swap(a, b);
    }
  }
  std::shared_ptr<const program::Program> p = Build(t, {x}, {h});
  const auto start = std::chrono::steady_clock::now();
  const Cost peak = ProgramCost(*p, CostKind::kPeakBytes);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("peak bytes of a %zu-op chain of incomparable sizes: %.1f ms\n", p->nodes().size(),
              ms);
  EXPECT_LT(ms, 5000.0);
  // Sound: the bounds hold the peak at each shape, which holds the runtime's planned arena.
  Graph g(*p);
  for (int64_t n : {64, 100, 4096}) {
    for (int64_t m : {64, 3000, 4096}) {
      const int64_t at = CostValue(*p, CostKind::kPeakBytes, 0, {"n", "m"}, {n, m});
      EXPECT_LE(peak.bounds.lo, at);
      EXPECT_GE(peak.bounds.hi, at);
      std::vector<int64_t> vars(static_cast<size_t>(g.max_var + 1), 0);
      program::ShapeCheck sc = p->CheckShapes({"x"}, {{n, m}});
      for (const auto& vp : g.var_pos)
        vars[static_cast<size_t>(vp.first)] = sc.var_values[static_cast<size_t>(vp.second)];
      Plan plan(g, vars);
      EXPECT_LE(static_cast<int64_t>(plan.arena_bytes), at) << n << "x" << m;
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace shp
