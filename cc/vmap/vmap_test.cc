// vmap against running the program once per batch element: every op family, batched and
// unbatched operands mixed, batch axes at the front and at the back, batch sizes 0, 1 and 7,
// symbolic element shapes at three sizes (1 included), on the batched program and on it loaded
// back. Then composition (vmap of vmap, vmap of grad, grad of vmap) and the errors.
#include "cc/vmap/vmap.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cc/autodiff/autodiff.h"
#include "cc/base/testing.h"
#include "cc/ops/op_def.h"
#include "cc/program/subprogram.h"
#include "cc/vmap/vmap_check.h"

namespace shp {
namespace vmap {
namespace {

using testing::Array;
using testing::Arrays;
using testing::Case;
using testing::CheckVmapCase;
using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Shapes = std::map<std::string, std::vector<int64_t>>;
using Outs = std::vector<const Tensor*>;

const int64_t kSizes[] = {1, 2, 5};

struct In {
  std::string name;
  DType dtype;
  std::string spec;  // symbolic shape in n
  std::function<std::vector<int64_t>(int64_t n)> shape;
};

Case Make(const std::string& name, const std::vector<In>& ins,
          std::function<Outs(trace::Trace&, const std::vector<const Tensor*>&)> f,
          std::vector<std::string> constraints = {}) {
  Case c;
  c.name = name;
  c.constraints = std::move(constraints);
  c.build = [ins, f](trace::Trace& t, std::vector<const Tensor*>* in, Outs* out) {
    for (const In& i : ins) in->push_back(t.Input(i.name, i.dtype, i.spec));
    *out = f(t, *in);
  };
  c.shapes = [ins](int k) {
    Shapes s;
    for (const In& i : ins) s[i.name] = i.shape(kSizes[k]);
    return s;
  };
  return c;
}

std::function<std::vector<int64_t>(int64_t)> Shape(std::vector<int64_t> fixed, int n_at = -1) {
  return [fixed, n_at](int64_t n) {
    std::vector<int64_t> s = fixed;
    if (n_at >= 0) s.insert(s.begin() + n_at, n);
    return s;
  };
}

const dim::Expr* N(trace::Trace& t) { return t.dims()->Var("n"); }
const dim::Expr* C(trace::Trace& t, int64_t v) { return t.dims()->Constant(v); }

TEST(Vmap, Elementwise) {
  CheckVmapCase(Make("elementwise",
                     {{"x", DType::kF64, "n, 3", Shape({3}, 0)},
                      {"y", DType::kF64, "3", Shape({3})},
                      {"z", DType::kF64, "", Shape({})}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                       const Tensor *x = in[0], *y = in[1], *z = in[2];
                       const Tensor* a = t.Binary(
                           OpKind::kAdd, z, t.Binary(OpKind::kMul, x, t.Unary(OpKind::kTanh, y)));
                       const Tensor* m = t.Binary(OpKind::kMax, a, y);
                       const Tensor* lt = t.Binary(OpKind::kLt, x, y);
                       return Outs{a,
                                   m,
                                   t.Select(lt, x, z),
                                   lt,
                                   t.Convert(t.Unary(OpKind::kFloor, x), DType::kI32),
                                   t.Unary(OpKind::kNeg, z),
                                   t.BroadcastTo(y, {C(t, 2), N(t), C(t, 3)})};
                     }));
}

TEST(Vmap, ElementwiseIntAndBool) {
  Case c = Make("int and bool",
                {{"i", DType::kI64, "n", Shape({}, 0)}, {"j", DType::kI32, "2, 1", Shape({2, 1})}},
                [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                  const Tensor* j = t.Convert(in[1], DType::kI64);
                  const Tensor* s = t.Binary(OpKind::kSub, in[0], j);  // [2, n]
                  const Tensor* b = t.Binary(OpKind::kGe, s, t.Binary(OpKind::kMul, j, j));
                  return Outs{s, t.Binary(OpKind::kOr, b, t.Unary(OpKind::kNot, b)),
                              t.Binary(OpKind::kRem, s, t.Binary(OpKind::kAdd, j, j))};
                });
  c.int_bounds = {{"i", 9}, {"j", 4}};
  CheckVmapCase(c);
}

TEST(Vmap, ShapeOps) {
  CheckVmapCase(
      Make("shape ops",
           {{"x", DType::kF64, "n, 6", Shape({6}, 0)}, {"y", DType::kF64, "n, 2", Shape({2}, 0)}},
           [](trace::Trace& t, const std::vector<const Tensor*>& in) {
             const Tensor *x = in[0], *y = in[1];
             dim::Scope* s = t.dims();
             const Tensor* r = t.Reshape(x, {N(t), C(t, 2), C(t, 3)});
             const Tensor* inferred = t.Reshape(x, {nullptr, C(t, 3)});
             const Tensor* tr = t.Transpose(r, {2, 0, 1});
             const Tensor* cat = t.Concatenate({x, y, x}, 1);
             const Tensor* sl = t.Slice(cat, {C(t, 0), C(t, 1)}, {N(t), C(t, 13)}, {1, 3});
             const Tensor* pd = t.Pad(y, {C(t, 1), C(t, 0)}, {s->Add(N(t), C(t, 1)), C(t, 2)}, 0.5);
             const Tensor* rv = t.Apply(OpKind::kReverse, ops::ReverseAttrs{{0, 1}}, {x});
             const Tensor* tl = t.Apply(OpKind::kTrilu, ops::TriluAttrs{1, false}, {r});
             return Outs{r, inferred, tr, cat, sl, pd, rv, tl};
           }));
}

TEST(Vmap, Reductions) {
  CheckVmapCase(Make("reductions", {{"x", DType::kF64, "n, 4, 3", Shape({4, 3}, 0)}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                       const Tensor* x = in[0];
                       return Outs{t.Reduce(OpKind::kReduceSum, x, {1}, false),
                                   t.Reduce(OpKind::kReduceMean, x, {0, 2}, true),
                                   t.Reduce(OpKind::kReduceMax, x, {0, 1, 2}, false),
                                   t.Reduce(OpKind::kReduceMin, x, {2}, true),
                                   t.Reduce(OpKind::kReduceProd, x, {0}, false)};
                     }));
}

TEST(Vmap, MatMulEveryRank) {
  CheckVmapCase(Make("matmul",
                     {{"a", DType::kF64, "n, 3", Shape({3}, 0)},
                      {"b", DType::kF64, "3, 4", Shape({3, 4})},
                      {"v", DType::kF64, "3", Shape({3})},
                      {"p", DType::kF64, "2, n, 3", Shape({2, 3}, 1)}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                       const Tensor *a = in[0], *b = in[1], *v = in[2], *p = in[3];
                       return Outs{t.MatMul(a, b),
                                   t.MatMul(v, b),
                                   t.MatMul(a, v),
                                   t.MatMul(v, v),
                                   t.MatMul(p, b),
                                   t.MatMul(p, v),
                                   t.MatMul(t.Transpose(b, {1, 0}), t.Transpose(a, {1, 0}))};
                     }));
}

TEST(Vmap, DotGeneral) {
  CheckVmapCase(Make("dot_general",
                     {{"a", DType::kF64, "2, n, 3", Shape({2, 3}, 1)},
                      {"b", DType::kF64, "3, 2, 4", Shape({3, 2, 4})}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                       return Outs{t.DotGeneral(in[0], in[1], ops::DotDims{{0}, {1}, {2}, {0}}),
                                   t.DotGeneral(in[0], in[1], ops::DotDims{{}, {}, {2}, {0}})};
                     }));
}

TEST(Vmap, SourcesInsideBatchedExpressions) {
  CheckVmapCase(Make("iota, dim_value, constants", {{"x", DType::kF64, "n, 2", Shape({2}, 0)}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                       const Tensor* i = t.Iota(DType::kF64, {N(t), C(t, 2)}, 0);
                       const Tensor* d = t.Convert(t.DimValue(N(t)), DType::kF64);
                       const double k[2] = {0.25, -3};
                       const Tensor* c = t.Constant(DType::kF64, {2}, k, sizeof k);
                       return Outs{t.Binary(OpKind::kAdd, t.Binary(OpKind::kMul, in[0], i),
                                            t.Binary(OpKind::kMul, d, c)),
                                   i};
                     }));
}

TEST(Vmap, Nn) {
  CheckVmapCase(Make("softmax, layer_norm, cumsum", {{"x", DType::kF64, "n, 5", Shape({5}, 0)}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                       const Tensor* x = in[0];
                       return Outs{t.Softmax(x, 1),         t.Softmax(x, 0),
                                   t.LayerNorm(x, 1, 1e-5), t.LayerNorm(x, 0, 1e-3),
                                   t.CumSum(x, 0),          t.CumSum(x, 1)};
                     }));
}

TEST(Vmap, TakeAndScatterAdd) {
  Case c = Make("take, scatter_add",
                {{"x", DType::kF64, "n, 4", Shape({4}, 0)},
                 {"i", DType::kI32, "3, 2", Shape({3, 2})},
                 {"u", DType::kF64, "n, 3, 2", Shape({3, 2}, 0)}},
                [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                  const Tensor *x = in[0], *i = in[1], *u = in[2];
                  const Tensor* y1 = t.Take(x, i, 1);                       // [n, 3, 2]
                  const Tensor* y0 = t.Take(t.Transpose(x, {1, 0}), i, 0);  // [3, 2, n]
                  const Tensor* s1 = t.Apply(OpKind::kScatterAdd, ops::AxisAttrs{1}, {x, i, u});
                  const Tensor* s0 =
                      t.Apply(OpKind::kScatterAdd, ops::AxisAttrs{0},
                              {t.Transpose(x, {1, 0}), i, t.Transpose(u, {1, 2, 0})});
                  return Outs{y1, y0, s1, s0};
                });
  c.int_bounds = {{"i", 4}};
  CheckVmapCase(c);
}

TEST(Vmap, ConvAndPooling) {
  Case c = Make(
      "conv, reduce_window",
      {{"x", DType::kF64, "n, 2, 5, 6", Shape({2, 5, 6}, 0)},
       {"w", DType::kF64, "3, 2, 3, 3", Shape({3, 2, 3, 3})}},
      [](trace::Trace& t, const std::vector<const Tensor*>& in) {
        const Tensor *x = in[0], *w = in[1];
        ops::ConvAttrs ca{{1, 2}, {1, 1}, {1, 1}, {C(t, 1), C(t, 1)}, {C(t, 1), C(t, 0)}, 1};
        ops::WindowAttrs pool{OpKind::kReduceMax,
                              {1, 1, 3, 3},
                              {1, 1, 2, 2},
                              {1, 1, 1, 1},
                              {1, 1, 1, 1},
                              {C(t, 0), C(t, 0), C(t, 1), C(t, 1)},
                              {C(t, 0), C(t, 0), C(t, 1), C(t, 1)}};
        // A window over axis 0 too: the rule's other branch.
        ops::WindowAttrs over0{OpKind::kReduceSum,
                               {2, 1, 1, 2},
                               {1, 1, 1, 1},
                               {1, 1, 1, 1},
                               {1, 1, 1, 1},
                               {C(t, 0), C(t, 0), C(t, 0), C(t, 0)},
                               {C(t, 1), C(t, 0), C(t, 0), C(t, 0)}};
        return Outs{t.Apply(OpKind::kConv, ca, {x, w}), t.Apply(OpKind::kReduceWindow, pool, {x}),
                    t.Apply(OpKind::kReduceWindow, over0, {x})};
      });
  CheckVmapCase(c, {"w"});
}

TEST(Vmap, TopK) {
  CheckVmapCase(Make("top_k", {{"x", DType::kF64, "n, 6", Shape({6}, 0)}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                       ops::TopKAttrs a{C(t, 2), 1, true, true};
                       ops::TopKAttrs b{C(t, 1), 0, false, true};
                       return Outs{t.Apply(OpKind::kTopKValues, a, {in[0]}),
                                   t.Apply(OpKind::kTopKIndices, a, {in[0]}),
                                   t.Apply(OpKind::kTopKValues, b, {in[0]})};
                     }));
}

// An assertion (n even, from the inferred reshape) and a constraint carry over.
TEST(Vmap, ConstraintsAndAssertions) {
  Case c = Make("assertion", {{"x", DType::kF64, "n, 3", Shape({3}, 0)}},
                [](trace::Trace& t, const std::vector<const Tensor*>& in) {
                  return Outs{t.Reshape(in[0], {nullptr, C(t, 6)})};
                },
                {"n >= 1"});
  c.shapes = [](int k) { return Shapes{{"x", {2 * kSizes[k], 3}}}; };
  CheckVmapCase(c);
}

// ---- Control flow ----

using Tensors = std::vector<const Tensor*>;

// A control-flow subprogram traced in t by `f` on fresh inputs of `types` (shapes as specs).
std::shared_ptr<const ops::Subprogram> Sub(trace::Trace& t,
                                           const std::vector<std::pair<DType, std::string>>& types,
                                           const std::function<Tensors(const Tensors&)>& f) {
  const size_t mark = t.tensors().size();
  Tensors in;
  for (size_t i = 0; i < types.size(); ++i)
    in.push_back(t.Input("arg" + std::to_string(i), types[i].first, types[i].second));
  trace::Body b = trace::CutBody(t, mark, in, f(in));
  std::vector<std::string> names;
  for (size_t i = 0; i < b.outputs.size(); ++i) names.push_back("out" + std::to_string(i));
  return std::make_shared<program::ProgramBody>(
      program::Program::FromTrace(*b.trace, b.inputs, b.outputs, names));
}

TEST(Vmap, ScanForwardAndReversed) {
  CheckVmapCase(Make("scan",
                     {{"h", DType::kF64, "3", Shape({3})},
                      {"x", DType::kF64, "n, 3", Shape({3}, 0)},
                      {"w", DType::kF64, "3, 3", Shape({3, 3})}},
                     [](trace::Trace& t, const std::vector<const Tensor*>& x) {
                       const std::vector<std::pair<DType, std::string>> types = {
                           {DType::kF64, "3"}, {DType::kF64, "3"}, {DType::kF64, "3, 3"}};
                       ops::ControlFlowAttrs a;
                       a.bodies = {Sub(t, types, [&t](const Tensors& in) {
                         const Tensor* h = t.Unary(
                             OpKind::kTanh, t.Binary(OpKind::kAdd, t.MatMul(in[0], in[2]), in[1]));
                         return Tensors{h, t.Binary(OpKind::kMul, in[0], in[1])};
                       })};
                       a.counts = {1, 1};
                       Tensors out = t.ControlFlow(OpKind::kScan, a, x);
                       a.reverse = true;
                       for (const Tensor* r : t.ControlFlow(OpKind::kScan, a, x)) out.push_back(r);
                       return out;
                     }));
}

// A predicate that differs per element (the data's sum) and one that does not (from w alone).
TEST(Vmap, CondBatchedAndSharedPredicates) {
  CheckVmapCase(Make(
      "cond",
      {{"x", DType::kF64, "n, 3", Shape({3}, 0)}, {"w", DType::kF64, "3, 3", Shape({3, 3})}},
      [](trace::Trace& t, const std::vector<const Tensor*>& x) {
        const std::vector<std::pair<DType, std::string>> types = {{DType::kF64, "n, 3"},
                                                                  {DType::kF64, "3, 3"}};
        ops::ControlFlowAttrs a;
        a.bodies = {Sub(t, types,
                        [&t](const Tensors& in) {
                          return Tensors{t.MatMul(in[0], in[1]), in[1]};
                        }),
                    Sub(t, types, [&t](const Tensors& in) {
                      return Tensors{t.Binary(OpKind::kMul, t.Unary(OpKind::kSin, in[0]), in[0]),
                                     t.Unary(OpKind::kNeg, in[1])};
                    })};
        const double zero = 0;
        const Tensor* z = t.Constant(DType::kF64, {}, &zero, 8);
        const Tensor* by_x =
            t.Binary(OpKind::kGt, t.Reduce(OpKind::kReduceSum, x[0], {}, false), z);
        const Tensor* by_w =
            t.Binary(OpKind::kGt, t.Reduce(OpKind::kReduceSum, x[1], {}, false), z);
        Tensors out = t.ControlFlow(OpKind::kCond, a, {by_x, x[0], x[1]});
        for (const Tensor* r : t.ControlFlow(OpKind::kCond, a, {by_w, x[0], x[1]}))
          out.push_back(r);
        return out;
      }));
}

// Trip counts that differ per element: each element stops where it would alone.
TEST(Vmap, WhileLoopWithPerElementTripCounts) {
  Case c = Make(
      "while_loop",
      {{"v", DType::kF64, "3", Shape({3})},
       {"k", DType::kI64, "", Shape({})},
       {"w", DType::kF64, "3, 3", Shape({3, 3})}},
      [](trace::Trace& t, const std::vector<const Tensor*>& x) {
        const std::vector<std::pair<DType, std::string>> types = {
            {DType::kI64, ""}, {DType::kF64, "3"}, {DType::kI64, ""}, {DType::kF64, "3, 3"}};
        const int64_t zero = 0, one = 1;
        const Tensor* i0 = t.Constant(DType::kI64, {}, &zero, 8);
        ops::ControlFlowAttrs a;
        a.bodies = {
            Sub(t, types,
                [&t](const Tensors& in) { return Tensors{t.Binary(OpKind::kLt, in[0], in[2])}; }),
            Sub(t, types, [&t, &one](const Tensors& in) {
              const Tensor* k = t.Constant(DType::kI64, {}, &one, 8);
              const Tensor* v = t.Unary(OpKind::kTanh, t.MatMul(in[1], in[3]));
              return Tensors{t.Binary(OpKind::kAdd, in[0], k), v};
            })};
        a.counts = {2};
        return t.ControlFlow(OpKind::kWhileLoop, a, {i0, x[0], x[1], x[2]});
      });
  c.int_bounds = {{"k", 5}};
  CheckVmapCase(c);
}

// ---- Whole programs ----

std::shared_ptr<const program::Program> Mlp() {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "4");
  const Tensor* y = t.Input("y", DType::kF64, "");
  const Tensor* w = t.Input("w", DType::kF64, "4, 3");
  const Tensor* h = t.Unary(OpKind::kTanh, t.MatMul(x, w));
  const Tensor* p = t.Reduce(OpKind::kReduceSum, h, {0}, false);
  const Tensor* d = t.Binary(OpKind::kSub, p, y);
  const Tensor* loss = t.Binary(OpKind::kMul, d, d);
  return program::Program::FromTrace(t, {x, y, w}, {loss}, {"loss"});
}

Array RandomArray(std::vector<int64_t> shape, std::mt19937_64& rng) {
  Array a;
  a.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : a.shape) n *= d;
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < n; ++i) a.data.push_back(u(rng));
  return a;
}

// Per-example gradients: vmap(grad(loss)) with x, y batched and the weights shared, against
// grad run per example; and grad of the vmapped sum of losses against their sum.
TEST(Vmap, PerExampleGradients) {
  std::shared_ptr<const program::Program> loss = Mlp();
  std::shared_ptr<const program::Program> g = autodiff::Grad(*loss, "loss", {"w"});
  std::shared_ptr<const program::Program> vg = Vmap(*g, {0, 0, -1, -1}, {}, "");
  EXPECT_EQ(vg->inputs()[0].name, "x");
  EXPECT_EQ(vg->outputs()[1].name, "w.grad");
  std::mt19937_64 rng(7);
  const Array w = RandomArray({4, 3}, rng);
  for (int64_t b : {0, 1, 7, 64}) {
    std::vector<Array> xs, ys;
    Arrays per;
    std::vector<Arrays> outs;
    for (int64_t e = 0; e < b; ++e) {
      xs.push_back(RandomArray({4}, rng));
      ys.push_back(RandomArray({}, rng));
      outs.push_back(autodiff::testing::Run(g, {{"x", xs.back()}, {"y", ys.back()}, {"w", w}}));
    }
    Arrays got = autodiff::testing::Run(
        vg, {{"x", testing::Stack(xs, 0, {4})}, {"y", testing::Stack(ys, 0, {})}, {"w", w}});
    ASSERT_EQ(got.at("w.grad").shape, (std::vector<int64_t>{b, 4, 3}));
    for (int64_t e = 0; e < b; ++e) {
      const Array ge = testing::Unstack(got.at("w.grad"), 0, e);
      const Array& want = outs[static_cast<size_t>(e)].at("w.grad");
      for (size_t k = 0; k < want.data.size(); ++k)
        EXPECT_NEAR(ge.data[k], want.data[k], 1e-12) << "batch " << b << " element " << e;
    }
  }
}

TEST(Vmap, VmapOfVmapAddsTwoAxes) {
  std::shared_ptr<const program::Program> loss = Mlp();
  std::shared_ptr<const program::Program> v1 = Vmap(*loss, {0, 0, -1}, {}, "");
  std::shared_ptr<const program::Program> v2 = Vmap(*v1, {1, 1, -1}, {1}, "");
  EXPECT_EQ(v1->variable_names(), (std::vector<std::string>{"vmap0"}));
  EXPECT_EQ(v2->input_shape_string(0), "(vmap0, vmap1, 4)");
  EXPECT_EQ(v2->output_shape_string(0), "(vmap0, vmap1)");
  std::mt19937_64 rng(3);
  const Array w = RandomArray({4, 3}, rng);
  const Array x = RandomArray({2, 3, 4}, rng), y = RandomArray({2, 3}, rng);
  Arrays got = autodiff::testing::Run(v2, {{"x", x}, {"y", y}, {"w", w}});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      Arrays one =
          autodiff::testing::Run(loss, {{"x", testing::Unstack(testing::Unstack(x, 0, i), 0, j)},
                                        {"y", testing::Unstack(testing::Unstack(y, 0, i), 0, j)},
                                        {"w", w}});
      EXPECT_NEAR(got.at("loss").data[static_cast<size_t>(i * 3 + j)], one.at("loss").data[0],
                  1e-12);
    }
  }
}

TEST(Vmap, GradOfVmap) {
  std::shared_ptr<const program::Program> loss = Mlp();
  std::shared_ptr<const program::Program> v = Vmap(*loss, {0, 0, -1}, {}, "batch");
  // Batch-mean of the losses needs a new output: check vjp instead (cotangent per element).
  std::shared_ptr<const program::Program> vj = autodiff::Vjp(*v, {"loss"}, {"w"});
  std::mt19937_64 rng(5);
  const Array w = RandomArray({4, 3}, rng);
  const Array x = RandomArray({5, 4}, rng), y = RandomArray({5}, rng), ct = RandomArray({5}, rng);
  Arrays got = autodiff::testing::Run(vj, {{"x", x}, {"y", y}, {"w", w}, {"loss.cotangent", ct}});
  std::shared_ptr<const program::Program> g = autodiff::Grad(*loss, "loss", {"w"});
  std::vector<double> sum(12, 0.0);
  for (int64_t e = 0; e < 5; ++e) {
    Array cte;
    cte.data = {ct.data[static_cast<size_t>(e)]};
    Arrays one = autodiff::testing::Run(g, {{"x", testing::Unstack(x, 0, e)},
                                            {"y", testing::Unstack(y, 0, e)},
                                            {"w", w},
                                            {"loss.cotangent", cte}});
    for (size_t k = 0; k < 12; ++k) sum[k] += one.at("w.grad").data[k];
  }
  for (size_t k = 0; k < 12; ++k) EXPECT_NEAR(got.at("w.grad").data[k], sum[k], 1e-12);
}

// Forward mode both ways: vmap(jvp(loss)) with the tangents batched equals jvp(vmap(loss)).
TEST(Vmap, JvpBothOrders) {
  std::shared_ptr<const program::Program> loss = Mlp();
  std::shared_ptr<const program::Program> vj =
      Vmap(*autodiff::Jvp(*loss, {"x", "w"}), {0, 0, -1, 0, 0}, {}, "");
  std::shared_ptr<const program::Program> jv =
      autodiff::Jvp(*Vmap(*loss, {0, 0, -1}, {}, ""), {"x", "w"});
  EXPECT_EQ(jv->input_shape_string(4), "(4, 3)");  // w.tangent: w's (shared) shape
  std::mt19937_64 rng(9);
  const Array w = RandomArray({4, 3}, rng);
  const Array x = RandomArray({6, 4}, rng), y = RandomArray({6}, rng);
  const Array tx = RandomArray({6, 4}, rng), tw = RandomArray({4, 3}, rng);
  std::vector<Array> tws(6, tw);
  Arrays a = autodiff::testing::Run(vj, {{"x", x},
                                         {"y", y},
                                         {"w", w},
                                         {"x.tangent", tx},
                                         {"w.tangent", testing::Stack(tws, 0, {4, 3})}});
  Arrays b = autodiff::testing::Run(
      jv, {{"x", x}, {"y", y}, {"w", w}, {"x.tangent", tx}, {"w.tangent", tw}});
  ASSERT_EQ(a.at("loss.tangent").shape, (std::vector<int64_t>{6}));
  for (size_t k = 0; k < 6; ++k)
    EXPECT_NEAR(a.at("loss.tangent").data[k], b.at("loss.tangent").data[k], 1e-12);
}

// A multi-variant program (tanh for n >= 8, exp below) batches variant by variant; the guards
// still pick the variant by the element's n, and the constraint n <= 100 carries over.
TEST(Vmap, VariantsAndGuardsCarryOver) {
  std::vector<std::shared_ptr<const program::Program>> variants;
  for (int v = 0; v < 2; ++v) {
    auto scope = dim::Scope::Create({"n <= 100"});
    trace::Trace t(scope.get());
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    scope->SetHint("n", v == 0 ? 20 : 4);
    if (v == 0) scope->Guard(scope->Var("n"), dim::Cmp::kGe, scope->Constant(8), "", "test");
    const Tensor* y = t.Unary(v == 0 ? OpKind::kTanh : OpKind::kExp, x);
    variants.emplace_back(program::Program::FromTrace(t, {x}, {y}, {"y"}));
  }
  std::shared_ptr<const program::Program> p(program::Program::CreateVariants(variants));
  std::shared_ptr<const program::Program> v = Vmap(*p, {0}, {}, "");
  ASSERT_EQ(v->num_variants(), 2u);
  EXPECT_EQ(v->guard_texts(), p->guard_texts());
  EXPECT_EQ(v->constraint_texts(), p->constraint_texts());
  std::mt19937_64 rng(4);
  for (int64_t n : {2, 9}) {
    std::vector<Array> xs;
    for (int e = 0; e < 3; ++e) xs.push_back(RandomArray({n, 3}, rng));
    Arrays got = autodiff::testing::Run(v, {{"x", testing::Stack(xs, 0, {n, 3})}});
    for (int e = 0; e < 3; ++e) {
      Arrays one = autodiff::testing::Run(p, {{"x", xs[static_cast<size_t>(e)]}});
      const Array ge = testing::Unstack(got.at("y"), 0, e);
      EXPECT_EQ(ge.data, one.at("y").data) << "n " << n << " element " << e;
    }
  }
}

// ---- Errors: each names what is wrong and leaves the program usable ----

TEST(Vmap, Errors) {
  std::shared_ptr<const program::Program> loss = Mlp();
  auto code_of = [&](std::vector<int64_t> in, std::vector<int64_t> out, const std::string& name,
                     std::string* message) {
    try {
      Vmap(*loss, in, out, name);
    } catch (const Error& e) {
      *message = e.what();
      return e.code();
    }
    return Code::kOk;
  };
  std::string m;
  EXPECT_EQ(code_of({0, 0}, {}, "", &m), Code::kInvalidArgument);
  EXPECT_NE(m.find("2 in_axes for a program with 3 inputs"), std::string::npos) << m;
  EXPECT_EQ(code_of({2, 0, -1}, {}, "", &m), Code::kInvalidArgument);
  EXPECT_NE(m.find("input 'x'"), std::string::npos) << m;
  EXPECT_EQ(code_of({-1, -1, -1}, {}, "", &m), Code::kInvalidArgument);
  EXPECT_NE(m.find("no input is batched"), std::string::npos) << m;
  EXPECT_EQ(code_of({0, 0, -1}, {-1}, "", &m), Code::kInvalidArgument);
  EXPECT_NE(m.find("output 'loss' depends on a batched input"), std::string::npos) << m;
  EXPECT_EQ(code_of({0, 0, -1}, {1}, "", &m), Code::kInvalidArgument);
  EXPECT_EQ(code_of({0, 0, -1}, {}, "2bad", &m), Code::kInvalidArgument);
  // A name the program already has.
  std::shared_ptr<const program::Program> v = Vmap(*loss, {0, 0, -1}, {}, "");
  std::string m2;
  try {
    Vmap(*v, {0, 0, -1}, {}, "vmap0");
    ADD_FAILURE() << "a taken name was accepted";
  } catch (const Error& e) {
    m2 = e.what();
  }
  EXPECT_NE(m2.find("'vmap0' is already a dimension variable"), std::string::npos) << m2;
  // The program still works.
  EXPECT_EQ(Vmap(*loss, {0, 0, -1}, {0}, "")->inputs().size(), 3u);
}

// An index out of range in one element is refused as when that element runs alone: merging
// the batch into the indexed axis must not turn it into another element's valid index.
TEST(Vmap, OutOfRangeBatchedIndicesStayRefused) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "4");
  const Tensor* i = t.Input("i", DType::kI64, "2");
  auto p = program::Program::FromTrace(t, {x, i}, {t.Take(x, i, 0)}, {"y"});
  std::shared_ptr<const program::Program> v = Vmap(*p, {0, 0}, {}, "");
  Array xs;
  xs.shape = {3, 4};
  for (int k = 0; k < 12; ++k) xs.data.push_back(k);
  Array idx;
  idx.dtype = DType::kI64;
  idx.shape = {3, 2};
  for (const std::vector<double>& bad : {std::vector<double>{0, 1, 4, 2, 3, 0},      // 4 >= 4
                                         std::vector<double>{0, 1, -1, 2, 3, 0}}) {  // -1 < 0
    idx.data = bad;
    try {
      autodiff::testing::Run(v, {{"x", xs}, {"i", idx}});
      ADD_FAILURE() << "an out-of-range index ran";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("outside [0, 12)"), std::string::npos) << e.what();
    }
  }
  idx.data = {0, 1, 3, 2, 3, 0};
  Arrays got = autodiff::testing::Run(v, {{"x", xs}, {"i", idx}});
  EXPECT_EQ(got.at("y").data, (std::vector<double>{0, 1, 7, 6, 11, 8}));
}

TEST(Vmap, DataDependentOpsAreRefusedByName) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "n");
  const Tensor* nz = t.Nonzero(x);
  auto p = program::Program::FromTrace(t, {x}, {nz}, {"nz"});
  try {
    Vmap(*p, {0}, {}, "");
    ADD_FAILURE() << "nonzero was batched";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("nonzero"), std::string::npos) << e.what();
  }
  // Not batched, it stays: a batched input elsewhere is fine.
  auto scope2 = dim::Scope::Create({});
  trace::Trace t2(scope2.get());
  const Tensor* a = t2.Input("a", DType::kF64, "n");
  const Tensor* b = t2.Input("b", DType::kF64, "3");
  auto q = program::Program::FromTrace(t2, {a, b}, {t2.Nonzero(a), t2.Unary(OpKind::kExp, b)},
                                       {"nz", "e"});
  EXPECT_NO_THROW(Vmap(*q, {-1, 0}, {-1, 0}, ""));
}

}  // namespace
}  // namespace vmap
}  // namespace shp
