// The lock-free shape check (Program::TryCheckShapesLockFree, the runtime's path for a new
// shape) against the program's general CheckShapes: whenever it decides, it picks the same
// variant and the same variable values; it decides the accepted shapes of ordinary programs;
// every refused shape is left to CheckShapes (whose error the runtime reports). Then runtimes
// on many threads planning new shapes of one program with the plan cache off.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/program/program.h"
#include "cc/runtime/runtime.h"
#include "cc/trace/trace.h"

namespace shp {
namespace runtime {
namespace {

using program::Program;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

struct Traced {
  std::unique_ptr<dim::Scope> scope;
  std::unique_ptr<trace::Trace> t;
  explicit Traced(const std::vector<std::string>& constraints = {})
      : scope(dim::Scope::Create(constraints)), t(new trace::Trace(scope.get())) {}
};

// Compares both checks on `shapes` (declared order; a dimension input: one entry). Returns
// whether CheckShapes accepts them; *decided says whether the lock-free check decided.
bool Compare(bool* decided, const Program& p, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<const int64_t*> ptr;
  std::vector<size_t> rank;
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ptr.push_back(shapes[i].data());
    rank.push_back(shapes[i].size());
    names.push_back(p.inputs()[i].name);
  }
  std::vector<int64_t> values;
  const int32_t fast = p.TryCheckShapesLockFree(ptr.data(), rank.data(), &values);
  program::ShapeCheck slow;
  bool accepted = true;
  try {
    slow = p.CheckShapes(names, shapes);
  } catch (const Error&) {
    accepted = false;
  }
  *decided = fast >= 0;
  if (fast < 0) return accepted;
  EXPECT_TRUE(accepted) << "the lock-free check accepted shapes CheckShapes refuses";
  if (!accepted) return false;
  EXPECT_EQ(fast, slow.variant);
  const Program& v = p.variant(static_cast<size_t>(fast));
  for (size_t k = 0; k < slow.var_names.size(); ++k) {
    const int32_t idx = v.WithScope([&](dim::Scope& s) { return s.FindVar(slow.var_names[k]); });
    EXPECT_GE(idx, 0);
    if (idx < 0) continue;
    EXPECT_EQ(values[static_cast<size_t>(idx)], slow.var_values[k]) << slow.var_names[k];
  }
  return true;
}

TEST(LockFreeShapeCheck, AgreesWithTheSolverOnAffineDimensions) {
  Traced tr({"n <= 10", "m >= n - 3"});
  trace::Trace& t = *tr.t;
  const Tensor* x = t.Input("x", DType::kF32, "2*n + 1, m");
  const Tensor* y = t.Input("y", DType::kF32, "m, n*m");
  const Tensor* k = t.DimInput("k");
  const Tensor* io = t.Iota(DType::kI64, {tr.scope->Parse("k + n")}, 0);
  std::shared_ptr<const Program> p(
      Program::FromTrace(t, {x, y, k}, {t.Unary(OpKind::kTanh, x), io, y}, {"a", "b", "c"}));
  int decided = 0, accepted = 0;
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    int64_t n = r(-1, 12), m = r(-1, 9), kv = r(-3, 5);
    std::vector<std::vector<int64_t>> shapes{
        {2 * n + 1 + (r(0, 9) == 0), m}, {m + (r(0, 9) == 0), n * m}, {kv}};
    if (r(0, 19) == 0) shapes[0].push_back(1);  // a wrong rank
    bool d = false;
    if (Compare(&d, *p, shapes)) ++accepted;
    if (d) ++decided;
  }
  // Every accepted shape takes the lock-free path, and there are many.
  EXPECT_EQ(decided, accepted);
  EXPECT_GT(accepted, 300);
}

TEST(LockFreeShapeCheck, PicksTheVariantLikeTheSolver) {
  std::vector<std::shared_ptr<const Program>> variants;
  for (int v = 0; v < 3; ++v) {
    Traced tr({"n <= 100"});
    dim::Scope* s = tr.scope.get();
    const Tensor* x = tr.t->Input("x", DType::kF32, "n, 3");
    s->SetHint("n", v == 0 ? 70 : v == 1 ? 20 : 4);
    if (v < 2) s->Guard(s->Var("n"), dim::Cmp::kGe, s->Constant(v == 0 ? 64 : 8), "", "test");
    const Tensor* y = tr.t->Unary(v == 0 ? OpKind::kTanh : OpKind::kExp, x);
    variants.emplace_back(Program::FromTrace(*tr.t, {x}, {y}, {"y"}));
  }
  std::shared_ptr<const Program> p(Program::CreateVariants(variants));
  ASSERT_EQ(p->num_variants(), 3u);
  int decided = 0, accepted = 0;
  for (int64_t n = -2; n <= 104; ++n) {
    bool d = false;
    if (Compare(&d, *p, {{n, 3}})) ++accepted;
    if (d) ++decided;
    EXPECT_FALSE(Compare(&d, *p, {{n, 4}}));
    EXPECT_FALSE(d);
  }
  EXPECT_EQ(accepted, 100);  // 1..100
  EXPECT_EQ(decided, 100);
}

TEST(LockFreeShapeCheck, RuntimesPlanNewShapesOnManyThreads) {
  Traced tr({"n <= 4096"});
  trace::Trace& t = *tr.t;
  const Tensor* x = t.Input("x", DType::kF32, "n");
  const Tensor* y = t.Binary(OpKind::kAdd, t.Binary(OpKind::kMul, x, x), x);
  std::shared_ptr<const Program> p(Program::FromTrace(t, {x}, {y}, {"y"}));
  std::vector<int> failures(4, 0);
  shp::testing::OnThreads(4, [&](int th) {
    Options o;
    o.num_threads = 1;
    o.plan_cache_capacity = 0;
    Runtime rt(p, o);
    for (int i = 0; i < 300; ++i) {
      const int64_t n = 1 + (i * 13 + th * 7) % 64;
      std::vector<float> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) in[static_cast<size_t>(j)] = static_cast<float>(j - th);
      struct Sink : OutputSink {
        float* d;
        void* Output(size_t, DType, const int64_t*, size_t) override { return d; }
      } sink;
      sink.d = out.data();
      ArrayView v{DType::kF32, &n, 1, in.data()};
      rt.Run(nullptr, &v, 1, &sink);
      for (int64_t j = 0; j < n; ++j) {
        const float a = in[static_cast<size_t>(j)];
        if (out[static_cast<size_t>(j)] != a * a + a) ++failures[static_cast<size_t>(th)];
      }
    }
    if (rt.stats().plans_built != 300u) ++failures[static_cast<size_t>(th)];
  });
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace runtime
}  // namespace shp
