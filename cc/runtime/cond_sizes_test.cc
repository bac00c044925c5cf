// Control flow with data-dependent sizes (docs/control_flow.md): a cond whose branches return
// different sizes (each differing dim a new unbacked variable, set by the branch that runs),
// a branch that computes a data-dependent size (it flows out through the cond), loop bodies
// whose data-dependent sizes stay inside, and a carried value whose size the body computes,
// checked per iteration. Against values computed here by hand, on the program and on it
// serialized and loaded back.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/ops/op_def.h"
#include "cc/program/program.h"
#include "cc/program/subprogram.h"
#include "cc/runtime/runtime.h"
#include "cc/runtime/test_arrays.h"
#include "cc/trace/trace.h"

namespace shp {
namespace runtime {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;
using testing::Arr;
using testing::RunAll;
using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Tensors = std::vector<const Tensor*>;

Arr F32(std::vector<int64_t> shape, const std::vector<float>& v) {
  Arr a;
  a.dtype = DType::kF32;
  a.shape = std::move(shape);
  a.bytes.resize(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}

std::vector<float> Values(const Arr& a) {
  std::vector<float> v(static_cast<size_t>(a.size()));
  if (!v.empty()) std::memcpy(v.data(), a.bytes.data(), v.size() * sizeof(float));
  return v;
}

struct Traced {
  std::unique_ptr<dim::Scope> scope;
  std::unique_ptr<trace::Trace> t;
  explicit Traced(const std::vector<std::string>& constraints = {})
      : scope(dim::Scope::Create(constraints)), t(new trace::Trace(scope.get())) {}

  // A subprogram traced by `f` on fresh inputs of `types` (dtype, shape spec).
  std::shared_ptr<const ops::Subprogram> Sub(
      const std::vector<std::pair<DType, std::string>>& types,
      const std::function<Tensors(const Tensors&)>& f) {
    const size_t mark = t->tensors().size();
    Tensors in;
    for (size_t i = 0; i < types.size(); ++i) {
      in.push_back(t->Input("arg" + std::to_string(i), types[i].first, types[i].second));
    }
    trace::Body b = trace::CutBody(*t, mark, in, f(in));
    EXPECT_TRUE(b.captures.empty());
    std::vector<std::string> names;
    for (size_t i = 0; i < b.outputs.size(); ++i) names.push_back("out" + std::to_string(i));
    return std::make_shared<program::ProgramBody>(
        program::Program::FromTrace(*b.trace, b.inputs, b.outputs, names));
  }
  const Tensor* Scalar(float v) { return t->Constant(DType::kF32, {}, &v, sizeof v); }
  // sum(x) > 0
  const Tensor* Positive(const Tensor* x) {
    return t->Binary(OpKind::kGt, t->Reduce(OpKind::kReduceSum, x, {}, false), Scalar(0.f));
  }
  // The program, and the same program serialized and loaded back.
  std::vector<std::shared_ptr<const program::Program>> Programs(const Tensors& in,
                                                                const Tensors& out) {
    std::vector<std::string> names;
    for (size_t i = 0; i < out.size(); ++i) names.push_back("out" + std::to_string(i));
    std::shared_ptr<const program::Program> p(program::Program::FromTrace(*t, in, out, names));
    const std::string bytes = p->Serialize();
    std::shared_ptr<const program::Program> q(program::Program::Load(bytes.data(), bytes.size()));
    EXPECT_EQ(q->Serialize(), bytes);
    return {p, q};
  }
};

// cond(sum(x) > 0, x * 2, y + 1) with x: [n], y: [m]: the result is [u], u set by the branch.
TEST(CondSizes, BranchesOfDifferentSizesMakeOneDataDependentSize) {
  Traced tr;
  trace::Trace& t = *tr.t;
  const Tensor* x = t.Input("x", DType::kF32, "n");
  const Tensor* y = t.Input("y", DType::kF32, "m");
  const std::vector<std::pair<DType, std::string>> types = {{DType::kF32, "n"}, {DType::kF32, "m"}};
  ops::ControlFlowAttrs a;
  a.bodies = {tr.Sub(types,
                     [&](const Tensors& in) {
                       return Tensors{t.Binary(OpKind::kMul, in[0], tr.Scalar(2.f))};
                     }),
              tr.Sub(types, [&](const Tensors& in) {
                return Tensors{t.Binary(OpKind::kAdd, in[1], tr.Scalar(1.f))};
              })};
  const Tensor* r = t.ControlFlow(OpKind::kCond, a, {tr.Positive(x), x, y})[0];
  ASSERT_EQ(r->type.shape.size(), 1u);
  const int32_t u = r->type.shape[0]->AsVar();
  ASSERT_GE(u, 0);
  EXPECT_TRUE(tr.scope->IsUnbacked(u));
  EXPECT_TRUE(Contains(tr.scope->variables()[static_cast<size_t>(u)].origin, "true branch"));
  // The size is used downstream: a sum over it, and the result itself.
  const Tensor* s = t.Reduce(OpKind::kReduceSum, r, {}, false);
  for (const auto& p : tr.Programs({x, y}, {r, s})) {
    EXPECT_GE(p->SchemaVersionNeeded(), 13u);
    EXPECT_TRUE(p->has_unbacked());
    Runtime rt(p, Options());
    for (int64_t n : {1, 3}) {
      for (int64_t m : {1, 5}) {
        for (float sign : {1.f, -1.f}) {
          std::vector<float> xv(static_cast<size_t>(n), sign), yv(static_cast<size_t>(m));
          for (int64_t i = 0; i < m; ++i) yv[static_cast<size_t>(i)] = static_cast<float>(i);
          const uint64_t runs = rt.stats().subprogram_runs;
          std::vector<Arr> out = RunAll(rt, {"x", "y"}, {F32({n}, xv), F32({m}, yv)});
          // The taken branch runs once (to learn the sizes); its results are the cond's.
          EXPECT_EQ(rt.stats().subprogram_runs, runs + 1);
          std::vector<float> want;
          if (sign > 0) {
            want.assign(static_cast<size_t>(n), 2.f);
          } else {
            for (float v : yv) want.push_back(v + 1.f);
          }
          EXPECT_EQ(out[0].shape, std::vector<int64_t>{static_cast<int64_t>(want.size())});
          EXPECT_EQ(Values(out[0]), want);
          float sum = 0;
          for (float v : want) sum += v;
          EXPECT_EQ(Values(out[1])[0], sum);
        }
      }
    }
    // A dry run: the size is data-dependent, bounded by the hull of n and m (>= 1).
    const int64_t n3[] = {3}, m5[] = {5};
    const ArrayView views[] = {{DType::kF32, n3, 1, nullptr}, {DType::kF32, m5, 1, nullptr}};
    const char* names[] = {"x", "y"};
    std::vector<std::vector<int64_t>> shapes = rt.OutputShapes(names, views, 2);
    EXPECT_EQ(shapes[0], std::vector<int64_t>{-1});
    EXPECT_TRUE(rt.OutputBounds()[0][0].data_dependent);
    EXPECT_EQ(rt.OutputBounds()[0][0].min, 1);
  }
}

// Ranks and dtypes that differ stay refused, naming both shapes.
// The sized cond's results are read where the branch left them (no copy): by an op of the
// cond's stage and, through a later data-dependent stage, by a mask of them; neither is an
// output of the program.
TEST(CondSizes, ResultsReadInPlaceByLaterOpsAndStages) {
  Traced tr;
  trace::Trace& t = *tr.t;
  const Tensor* x = t.Input("x", DType::kF32, "n");
  const Tensor* y = t.Input("y", DType::kF32, "m");
  const std::vector<std::pair<DType, std::string>> types = {{DType::kF32, "n"}, {DType::kF32, "m"}};
  ops::ControlFlowAttrs a;
  a.bodies = {tr.Sub(types,
                     [&](const Tensors& in) {
                       return Tensors{t.Binary(OpKind::kMul, in[0], tr.Scalar(2.f))};
                     }),
              tr.Sub(types, [&](const Tensors& in) {
                return Tensors{t.Binary(OpKind::kAdd, in[1], tr.Scalar(1.f))};
              })};
  const Tensor* r = t.ControlFlow(OpKind::kCond, a, {tr.Positive(x), x, y})[0];
  const Tensor* s =
      t.Reduce(OpKind::kReduceSum, t.Binary(OpKind::kMul, r, tr.Scalar(3.f)), {}, false);
  const Tensor* big = t.BooleanMask(r, t.Binary(OpKind::kGt, r, tr.Scalar(3.f)), 0);
  for (const auto& p : tr.Programs({x, y}, {s, big})) {
    Runtime rt(p, Options());
    for (int rep = 0; rep < 2; ++rep) {
      std::vector<Arr> out = RunAll(rt, {"x", "y"}, {F32({3}, {1, 2, -1}), F32({2}, {9, 0})});
      EXPECT_EQ(Values(out[0])[0], 12.f);  // 3 * (2 + 4 - 2)
      EXPECT_EQ(Values(out[1]), (std::vector<float>{4}));
      out = RunAll(rt, {"x", "y"}, {F32({1}, {-1}), F32({4}, {9, 0, 3, 5})});
      EXPECT_EQ(Values(out[0])[0], 63.f);  // 3 * (10 + 1 + 4 + 6)
      EXPECT_EQ(Values(out[1]), (std::vector<float>{10, 4, 6}));
    }
    EXPECT_EQ(rt.stats().subprogram_runs, 4u);
  }
}

TEST(CondSizes, DifferentRanksOrDtypesAreRefusedNamingBothShapes) {
  Traced tr;
  trace::Trace& t = *tr.t;
  const Tensor* x = t.Input("x", DType::kF32, "n, 2");
  const std::vector<std::pair<DType, std::string>> types = {{DType::kF32, "n, 2"}};
  ops::ControlFlowAttrs a;
  a.bodies = {tr.Sub(types, [&](const Tensors& in) { return Tensors{in[0]}; }),
              tr.Sub(types, [&](const Tensors& in) {
                return Tensors{t.Reduce(OpKind::kReduceSum, in[0], {0}, false)};
              })};
  Error e = Catch([&] { t.ControlFlow(OpKind::kCond, a, {tr.Positive(x), x}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "true branch is f32 (n, 2), of the false branch f32 (2,)"));
  EXPECT_TRUE(Contains(e.message(), "equal ranks"));
  a.bodies[1] = tr.Sub(types, [&](const Tensors& in) {
    return Tensors{t.Binary(OpKind::kGt, in[0], tr.Scalar(0.f))};
  });
  e = Catch([&] { t.ControlFlow(OpKind::kCond, a, {tr.Positive(x), x}); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_TRUE(Contains(e.message(), "of the false branch bool (n, 2)"));
}

// A branch that computes a data-dependent size: x[x > 0] or x * 3; the size flows out.
TEST(CondSizes, BranchThatComputesADataDependentSize) {
  Traced tr;
  trace::Trace& t = *tr.t;
  const Tensor* x = t.Input("x", DType::kF32, "n");
  const std::vector<std::pair<DType, std::string>> types = {{DType::kF32, "n"}};
  ops::ControlFlowAttrs a;
  a.bodies = {tr.Sub(types,
                     [&](const Tensors& in) {
                       const Tensor* m = t.Binary(OpKind::kGt, in[0], tr.Scalar(0.f));
                       return Tensors{t.BooleanMask(in[0], m, 0)};
                     }),
              tr.Sub(types, [&](const Tensors& in) {
                return Tensors{t.Binary(OpKind::kMul, in[0], tr.Scalar(3.f))};
              })};
  const Tensor* r = t.ControlFlow(OpKind::kCond, a, {tr.Positive(x), x})[0];
  for (const auto& p : tr.Programs({x}, {r})) {
    Runtime rt(p, Options());
    const std::vector<std::pair<std::vector<float>, std::vector<float>>> cases = {
        {{1, -2, 3}, {1, 3}}, {{-1, -2, 1}, {-3, -6, 3}}, {{4}, {4}}, {{5, -1, 0, 2}, {5, 2}}};
    for (int rep = 0; rep < 2; ++rep) {  // again: the plans are cached by the sizes
      for (const auto& c : cases) {
        const int64_t n = static_cast<int64_t>(c.first.size());
        std::vector<Arr> out = RunAll(rt, {"x"}, {F32({n}, c.first)});
        EXPECT_EQ(Values(out[0]), c.second);
      }
    }
  }
}

// A scan body that masks its slice and sums it: the size stays inside the body.
TEST(CondSizes, ScanBodyWithAnInnerDataDependentSize) {
  Traced tr;
  tr.scope->Declare("t", 0, dim::kPosInf);  // length 0 too
  trace::Trace& t = *tr.t;
  const Tensor* xs = t.Input("xs", DType::kF32, "t, k");
  const Tensor* c0 = t.Input("c0", DType::kF32, "");
  ops::ControlFlowAttrs a;
  a.bodies = {tr.Sub({{DType::kF32, ""}, {DType::kF32, "k"}}, [&](const Tensors& in) {
    const Tensor* m = t.Binary(OpKind::kGt, in[1], tr.Scalar(0.f));
    const Tensor* s = t.Reduce(OpKind::kReduceSum, t.BooleanMask(in[1], m, 0), {}, false);
    return Tensors{t.Binary(OpKind::kAdd, in[0], s), s};
  })};
  a.counts = {1, 1};
  Tensors r = t.ControlFlow(OpKind::kScan, a, {c0, xs});
  EXPECT_EQ(r[1]->type.shape.size(), 1u);
  for (const auto& p : tr.Programs({xs, c0}, r)) {
    EXPECT_FALSE(p->has_unbacked());  // the body's own
    Runtime rt(p, Options());
    for (int64_t len : {0, 1, 4}) {
      std::vector<float> xv;
      std::vector<float> ys;
      float c = 0.5f;
      for (int64_t i = 0; i < len; ++i) {
        float s = 0;
        for (int64_t j = 0; j < 3; ++j) {
          const float v = static_cast<float>((i * 3 + j) % 5) - 2.f;
          xv.push_back(v);
          if (v > 0) s += v;
        }
        ys.push_back(s);
        c += s;
      }
      const uint64_t runs = rt.stats().subprogram_runs;
      std::vector<Arr> out = RunAll(rt, {"xs", "c0"}, {F32({len, 3}, xv), F32({}, {0.5f})});
      EXPECT_EQ(rt.stats().subprogram_runs, runs + static_cast<uint64_t>(len));  // one per row
      EXPECT_EQ(Values(out[0])[0], c);
      EXPECT_EQ(Values(out[1]), ys);
    }
  }
}

// A carried value whose size the body computes from data: x[x > t] must keep the carried
// size; the run fails naming the iteration when it does not.
TEST(CondSizes, CarriedSizeComputedByTheBodyIsCheckedPerIteration) {
  Traced tr;
  trace::Trace& t = *tr.t;
  const Tensor* v = t.Input("v", DType::kF32, "n");
  const Tensor* xs = t.Input("xs", DType::kF32, "t");
  ops::ControlFlowAttrs a;
  a.bodies = {tr.Sub({{DType::kF32, "n"}, {DType::kF32, ""}}, [&](const Tensors& in) {
    const Tensor* m = t.Binary(OpKind::kGt, in[0], in[1]);
    return Tensors{t.BooleanMask(in[0], m, 0)};
  })};
  a.counts = {1, 1};
  const Tensor* r = t.ControlFlow(OpKind::kScan, a, {v, xs})[0];
  for (const auto& p : tr.Programs({v, xs}, {r})) {
    Runtime rt(p, Options());
    // Every element above every threshold: the size stays.
    std::vector<Arr> out = RunAll(rt, {"v", "xs"}, {F32({3}, {5, 6, 7}), F32({2}, {1, 2})});
    EXPECT_EQ(Values(out[0]), (std::vector<float>{5, 6, 7}));
    Error e = Catch([&] {
      RunAll(rt, {"v", "xs"}, {F32({3}, {5, 6, 7}), F32({3}, {1, 5.5f, 0})});
    });
    EXPECT_EQ(e.code(), Code::kShapeMismatch);
    EXPECT_TRUE(Contains(e.message(), "iteration 1 of the body has the shape (2,), not (3,)"))
        << e.message();
    // Usable after the error.
    out = RunAll(rt, {"v", "xs"}, {F32({2}, {5, 6}), F32({1}, {1})});
    EXPECT_EQ(Values(out[0]), (std::vector<float>{5, 6}));
  }
}

// A scan whose y is x_t[x_t > 0]: the stacked ys have a data-dependent size set by the first
// iteration; another iteration that gives another size fails naming it.
TEST(CondSizes, ScanYsOfADataDependentSizeMustAgreeAcrossIterations) {
  Traced tr;
  tr.scope->Declare("t", 0, dim::kPosInf);
  trace::Trace& t = *tr.t;
  const Tensor* xs = t.Input("xs", DType::kF32, "t, k");
  const Tensor* c0 = t.Input("c0", DType::kF32, "");
  ops::ControlFlowAttrs a;
  a.bodies = {tr.Sub({{DType::kF32, ""}, {DType::kF32, "k"}}, [&](const Tensors& in) {
    const Tensor* m = t.Binary(OpKind::kGt, in[1], tr.Scalar(0.f));
    const Tensor* y = t.BooleanMask(in[1], m, 0);
    return Tensors{t.Binary(OpKind::kAdd, in[0], t.Reduce(OpKind::kReduceSum, y, {}, false)), y};
  })};
  a.counts = {1, 1};
  for (bool reverse : {false, true}) {
    a.reverse = reverse;
    Tensors r = t.ControlFlow(OpKind::kScan, a, {c0, xs});
    ASSERT_EQ(r[1]->type.shape.size(), 2u);
    const int32_t u = r[1]->type.shape[1]->AsVar();
    ASSERT_GE(u, 0);
    EXPECT_TRUE(tr.scope->IsUnbacked(u));
    for (const auto& p : tr.Programs({xs, c0}, r)) {
      Runtime rt(p, Options());
      // Two positives per row. The first iteration runs once: to learn the size, and its
      // results are kept (three rows, three runs of the body).
      std::vector<Arr> out =
          RunAll(rt, {"xs", "c0"}, {F32({3, 3}, {1, -1, 2, -3, 4, 5, 6, 7, -8}), F32({}, {0.f})});
      EXPECT_EQ(rt.stats().subprogram_runs, 3u);
      EXPECT_EQ(out[1].shape, (std::vector<int64_t>{3, 2}));
      EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 2, 4, 5, 6, 7}));
      EXPECT_EQ(Values(out[0])[0], 25.f);
      out = RunAll(rt, {"xs", "c0"}, {F32({0, 3}, {}), F32({}, {1.f})});
      EXPECT_EQ(rt.stats().subprogram_runs, 3u);
      EXPECT_EQ(out[1].shape[0], 0);
      EXPECT_EQ(Values(out[0])[0], 1.f);
      Error e = Catch([&] {
        RunAll(rt, {"xs", "c0"}, {F32({2, 3}, {1, -1, 2, 3, 4, 5}), F32({}, {0.f})});
      });
      EXPECT_EQ(e.code(), Code::kShapeMismatch);
      // Forward: iteration 0 (kept), then 1 fails; reversed: iteration 1 (kept), then 0 fails.
      EXPECT_EQ(rt.stats().subprogram_runs, 5u);
      // The first iteration (the last row when reversed) sets the size.
      EXPECT_TRUE(Contains(e.message(), reverse ? "result 1 of iteration 0 of the body has the "
                                                  "shape (2,), not (3,)"
                                                : "result 1 of iteration 1 of the body has the "
                                                  "shape (3,), not (2,)"))
          << e.message();
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace shp
