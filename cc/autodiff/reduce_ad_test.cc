// The reductions' JVP and VJP rules against central finite differences (f64), at three sizes
// of the symbolic variable (size 1 included), keepdims both ways, negative and multiple axes,
// on traced and loaded programs; ties of reduce_max/min and zeros of reduce_prod exactly.
#include <gtest/gtest.h>

#include "cc/autodiff/ad_check.h"
#include "cc/autodiff/autodiff.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace autodiff {
namespace {

using testing::Array;
using testing::Arrays;
using testing::Case;
using testing::CheckCase;
using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Shapes = std::map<std::string, std::vector<int64_t>>;

const int64_t kSizes[] = {1, 2, 5};

// reduce `op` of x (n, 3, 2) over several axis sets, keepdims both ways.
Case ReduceCase(OpKind op, testing::Domain d) {
  Case c;
  c.name = ops::OpName(op);
  c.build = [op](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3, 2");
    in->push_back(x);
    const std::vector<std::vector<int64_t>> axes_sets = {{0}, {-1}, {0, 2}, {1, -1}, {}};
    for (const std::vector<int64_t>& axes : axes_sets) {
      for (bool keepdims : {false, true}) {
        const Tensor* y = t.Reduce(op, x, axes, keepdims);
        out->push_back(t.Binary(OpKind::kMul, y, t.Unary(OpKind::kSin, y)));
      }
    }
  };
  c.shapes = [](int k) { return Shapes{{"x", {kSizes[k], 3, 2}}}; };
  c.domains["x"] = d;
  return c;
}

TEST(ReduceAd, SumAndMean) {
  CheckCase(ReduceCase(OpKind::kReduceSum, {}));
  CheckCase(ReduceCase(OpKind::kReduceMean, {}));
}

// Random values: no ties, so finite differences apply.
TEST(ReduceAd, MaxAndMinWithoutTies) {
  CheckCase(ReduceCase(OpKind::kReduceMax, {}));
  CheckCase(ReduceCase(OpKind::kReduceMin, {}));
}

TEST(ReduceAd, Prod) {
  CheckCase(ReduceCase(OpKind::kReduceProd, {0.5, 1.5}));
  CheckCase(ReduceCase(OpKind::kReduceProd, {-1.5, 1.5}));
}

// A rank-0 operand and a rank-1 one reduced to a scalar.
TEST(ReduceAd, ScalarsAndVectors) {
  for (OpKind op : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax, OpKind::kReduceMin,
                    OpKind::kReduceProd}) {
    Case c;
    c.name = std::string(ops::OpName(op)) + " (scalar, vector)";
    c.build = [op](trace::Trace& t, std::vector<const Tensor*>* in,
                   std::vector<const Tensor*>* out) {
      const Tensor* s = t.Input("s", DType::kF64, "");
      const Tensor* v = t.Input("v", DType::kF64, "n");
      *in = {s, v};
      out->push_back(t.Reduce(op, s, {}, false));
      out->push_back(t.Reduce(op, v, {0}, false));
      out->push_back(t.Reduce(op, v, {-1}, true));
    };
    c.shapes = [](int k) { return Shapes{{"s", {}}, {"v", {kSizes[k]}}}; };
    CheckCase(c);
  }
}

// One f64 vector through `op` (over axis 0) and its VJP with cotangent 1 and JVP with
// tangent `t`: the gradient and the tangent.
std::pair<std::vector<double>, double> GradAndTangent(OpKind op, const std::vector<double>& x,
                                                      const std::vector<double>& tangent) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* in = t.Input("x", DType::kF64, "n");
  std::shared_ptr<const program::Program> p =
      program::Program::FromTrace(t, {in}, {t.Reduce(op, in, {0}, false)}, {"y"});
  const int64_t n = static_cast<int64_t>(x.size());
  Arrays args{{"x", Array{DType::kF64, {n}, x}}};
  Arrays vin = args;
  vin["y.cotangent"] = Array{DType::kF64, {}, {1.0}};
  const Arrays g =
      testing::Run(std::shared_ptr<const program::Program>(Vjp(*p, {"y"}, {"x"})), vin);
  Arrays jin = args;
  jin["x.tangent"] = Array{DType::kF64, {n}, tangent};
  const Arrays j = testing::Run(std::shared_ptr<const program::Program>(Jvp(*p, {"x"})), jin);
  return {g.at("x.grad").data, j.at("y.tangent").data.at(0)};
}

// JAX's rule: the cotangent is split equally among the elements equal to the result.
TEST(ReduceAd, MaxAndMinSplitTiesEqually) {
  auto mx = GradAndTangent(OpKind::kReduceMax, {1, 3, 3, 2, 3}, {1, 2, 4, 8, 16});
  EXPECT_EQ(mx.first, (std::vector<double>{0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3}));
  EXPECT_NEAR(mx.second, (2 + 4 + 16) / 3.0, 1e-15);
  auto mn = GradAndTangent(OpKind::kReduceMin, {-1, 3, -1, 2}, {1, 2, 4, 8});
  EXPECT_EQ(mn.first, (std::vector<double>{0.5, 0, 0.5, 0}));
  EXPECT_NEAR(mn.second, 2.5, 1e-15);
  auto one = GradAndTangent(OpKind::kReduceMax, {7}, {3});
  EXPECT_EQ(one.first, (std::vector<double>{1}));
  EXPECT_EQ(one.second, 3);
}

// The product of the other elements, also where some are 0 (no division by x).
TEST(ReduceAd, ProdIsExactAtZeros) {
  auto a = GradAndTangent(OpKind::kReduceProd, {2, 0, 3}, {1, 1, 1});
  EXPECT_EQ(a.first, (std::vector<double>{0, 6, 0}));
  EXPECT_EQ(a.second, 6);
  auto b = GradAndTangent(OpKind::kReduceProd, {0, 5, 0, 3}, {1, 1, 1, 1});
  EXPECT_EQ(b.first, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(b.second, 0);
  auto c = GradAndTangent(OpKind::kReduceProd, {0}, {2});
  EXPECT_EQ(c.first, (std::vector<double>{1}));
  EXPECT_EQ(c.second, 2);
  auto d = GradAndTangent(OpKind::kReduceProd, {2, -3, 0.5}, {1, 0, 0});
  EXPECT_EQ(d.first, (std::vector<double>{-1.5, 1, -6}));
  EXPECT_EQ(d.second, -1.5);
}

// reduce_window sum: linear; its VJP is a window sum of the cotangent (strides become base
// dilation, the padding its complement, negative where the forward padding exceeds the window).
// Windows on the last axes and on others, strides, both dilations, padding of either sign and a
// symbolic pad, at three sizes of n.
TEST(ReduceAd, ReduceWindowSum) {
  Case c;
  c.name = "reduce_window sum";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 5, 6");
    in->push_back(x);
    dim::Scope* s = t.dims();
    auto k = [s](int64_t v) { return s->Constant(v); };
    const dim::Expr* n = s->Parse("n");
    const std::vector<ops::WindowAttrs> forms = {
        {OpKind::kReduceSum, {1, 3, 3}, {1, 2, 2}, {}, {}, {k(0), k(1), k(1)}, {k(0), k(1), k(1)}},
        {OpKind::kReduceSum,
         {2, 2, 3},
         {1, 1, 2},
         {1, 2, 1},
         {1, 1, 2},
         {k(1), k(0), k(-1)},
         {k(0), k(3), k(2)}},
        {OpKind::kReduceSum,
         {2, 1, 2},
         {3, 1, 1},
         {2, 1, 1},
         {2, 3, 1},
         {n, k(0), k(0)},
         {k(4), k(0), k(5)}},
    };
    for (const ops::WindowAttrs& a : forms) {
      const Tensor* y = t.Apply(OpKind::kReduceWindow, a, {x});
      out->push_back(t.Binary(OpKind::kMul, y, t.Unary(OpKind::kSin, y)));
    }
  };
  c.shapes = [](int k) { return Shapes{{"x", {kSizes[k], 5, 6}}}; };
  CheckCase(c);
}

// reduce_window max/min: the cotangent goes to the window element equal to the result (random
// values: no ties). A 3x3/2 pool with padding, dilations on both sides (base-dilation holes are
// the identity and never win), a negative pad; every window holds an element of x.
TEST(ReduceAd, ReduceWindowMaxMin) {
  for (OpKind red : {OpKind::kReduceMax, OpKind::kReduceMin}) {
    Case c;
    c.name = std::string("reduce_window ") + ops::OpName(red);
    c.build = [red](trace::Trace& t, std::vector<const Tensor*>* in,
                    std::vector<const Tensor*>* out) {
      const Tensor* x = t.Input("x", DType::kF64, "n, 5, 6");
      in->push_back(x);
      dim::Scope* s = t.dims();
      auto k = [s](int64_t v) { return s->Constant(v); };
      const std::vector<ops::WindowAttrs> forms = {
          {red, {1, 3, 3}, {1, 2, 2}, {}, {}, {k(0), k(1), k(1)}, {k(0), k(1), k(1)}},
          {red, {1, 2, 2}, {1, 1, 2}, {1, 2, 1}, {1, 1, 2}, {k(0), k(0), k(0)}, {k(0), k(0), k(0)}},
          {red, {2, 2, 3}, {1, 1, 1}, {}, {}, {k(0), k(-1), k(1)}, {k(1), k(0), k(1)}},
      };
      for (const ops::WindowAttrs& a : forms) {
        const Tensor* y = t.Apply(OpKind::kReduceWindow, a, {x});
        out->push_back(t.Binary(OpKind::kMul, y, t.Unary(OpKind::kSin, y)));
      }
    };
    c.shapes = [](int k) { return Shapes{{"x", {kSizes[k], 5, 6}}}; };
    CheckCase(c, /*seed=*/7);  // a seed whose values have no two within the step of a window
  }
}

// Ties split the cotangent equally (JAX's rule): a 2-window max over [1, 3, 3, 2] with stride
// 1 has outputs 3, 3, 3; each 3 of the middle window gets half of its cotangent.
TEST(ReduceAd, ReduceWindowMaxSplitsTies) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF64, "4");
  ops::WindowAttrs a;
  a.reduction = OpKind::kReduceMax;
  a.window = {2};
  const Tensor* y = t.Apply(OpKind::kReduceWindow, a, {x});
  std::shared_ptr<const program::Program> p =
      program::Program::FromTrace(t, {x}, {t.Reduce(OpKind::kReduceSum, y, {}, false)}, {"y"});
  std::shared_ptr<const program::Program> g = Grad(*p, "y", {"x"});
  Array in;
  in.shape = {4};
  in.data = {1, 3, 3, 2};
  const Arrays out = testing::Run(g, {{"x", in}});
  EXPECT_EQ(out.at("x.grad").data, (std::vector<double>{0, 1.5, 1.5, 0}));
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
