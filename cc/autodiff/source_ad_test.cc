// The source ops (constant, iota, dim_value: zero derivatives), take (JVP: take of the
// tangent; VJP: scatter_add into zeros) and take_along_axis (the same, on x's flat positions)
// against central finite differences (f64), at three sizes of the symbolic variable (size 1
// included), on traced and loaded programs.
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

// Values made from attributes only mix with x: their derivative is zero, never an error.
TEST(SourceAd, ConstantIotaAndDimValueHaveZeroDerivatives) {
  Case c;
  c.name = "constant, iota, dim_value";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    in->push_back(x);
    dim::Scope* s = t.dims();
    const dim::Expr* n = s->Var("n");
    const double k[3] = {0.5, -1, 2};
    const Tensor* konst = t.Constant(DType::kF64, {3}, k, sizeof k);
    const Tensor* iota = t.Iota(DType::kF64, {n, s->Constant(3)}, 0);  // a float iota
    const Tensor* count = t.Convert(t.DimValue(s->Scale(n, 3)), DType::kF64);
    const Tensor* y = t.Binary(OpKind::kMul, t.Binary(OpKind::kAdd, x, konst), iota);
    out->push_back(t.Binary(OpKind::kDiv, t.Binary(OpKind::kMul, y, x), count));
    out->push_back(iota);  // an output that does not depend on x: a zero tangent
  };
  c.shapes = [](int k) { return Shapes{{"x", {kSizes[k], 3}}}; };
  CheckCase(c);
}

// take along each axis, with repeated indices (their cotangents accumulate) and with indices
// of rank 0, 1 and 2.
TEST(SourceAd, Take) {
  Case c;
  c.name = "take";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    const Tensor* i = t.Input("i", DType::kI32, "n, 4");
    const Tensor* j = t.Input("j", DType::kI64, "n");
    const Tensor* k = t.Input("k", DType::kI32, "");
    *in = {x, i, j, k};
    auto head = [&t](const Tensor* y) { return t.Binary(OpKind::kMul, y, y); };
    out->push_back(head(t.Take(x, i, 1)));   // (n, n, 4): values in [0, 3)
    out->push_back(head(t.Take(x, j, 0)));   // (n, 3): values in [0, n) (bound 1 below)
    out->push_back(head(t.Take(x, k, -1)));  // (n,)
  };
  c.shapes = [](int k) {
    return Shapes{{"x", {kSizes[k], 3}}, {"i", {kSizes[k], 4}}, {"j", {kSizes[k]}}, {"k", {}}};
  };
  c.int_bounds = {{"i", 3}, {"j", 1}, {"k", 3}};
  CheckCase(c);
}

// take_along_axis on each axis, with negative indices (i - 3 and j - 2: values in [-3, 3) and
// [-2, 2) count from the end) and repeated ones (their cotangents accumulate), and with more and
// fewer positions than the axis.
TEST(SourceAd, TakeAlongAxis) {
  Case c;
  c.name = "take_along_axis";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    const Tensor* i = t.Input("i", DType::kI32, "n, 5");
    const Tensor* j = t.Input("j", DType::kI64, "2, 3");
    *in = {x, i, j};
    auto along = [&t](const Tensor* v, const Tensor* idx, int64_t axis) {
      return t.Apply(OpKind::kTakeAlongAxis, ops::AxisAttrs{axis}, {v, idx});
    };
    auto head = [&t](const Tensor* y) { return t.Binary(OpKind::kMul, y, y); };
    const Tensor* three = t.Constant(DType::kI32, {}, std::vector<int32_t>{3}.data(), 4);
    const Tensor* two = t.Constant(DType::kI64, {}, std::vector<int64_t>{2}.data(), 8);
    out->push_back(head(along(x, t.Binary(OpKind::kSub, i, three), 1)));  // (n, 5)
    // (2, 3) along axis 0 of x: j - 2 in [-2, 2) is valid for n >= 2; x's first rows otherwise.
    out->push_back(head(along(x, t.Binary(OpKind::kSub, j, two), -2)));
  };
  c.shapes = [](int k) {
    return Shapes{{"x", {kSizes[k] + 1, 3}}, {"i", {kSizes[k] + 1, 5}}, {"j", {2, 3}}};
  };
  c.int_bounds = {{"i", 6}, {"j", 4}};
  CheckCase(c);
}

// take_along_axis's cotangent accumulates repeated and negative indices at their positions.
TEST(SourceAd, TakeAlongAxisAccumulatesRepeatedIndices) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "2, n");
  const Tensor* i = t.Input("i", DType::kI64, "2, m");
  const Tensor* y = t.Apply(OpKind::kTakeAlongAxis, ops::AxisAttrs{1}, {x, i});
  std::shared_ptr<const program::Program> p =
      program::Program::FromTrace(t, {x, i}, {t.Reduce(OpKind::kReduceSum, y, {}, false)}, {"y"});
  Arrays in{{"x", Array{DType::kF64, {2, 3}, {1, 2, 3, 4, 5, 6}}},
            {"i", Array{DType::kI64, {2, 4}, {2, -1, 0, 2, -3, -3, 1, 0}}},
            {"y.cotangent", Array{DType::kF64, {}, {0.5}}}};
  const Arrays g = testing::Run(std::shared_ptr<const program::Program>(Vjp(*p, {"y"}, {"x"})), in);
  EXPECT_EQ(g.at("x.grad").data, (std::vector<double>{0.5, 0, 1.5, 1.5, 0.5, 0}));
  EXPECT_EQ(g.at("y").data, (std::vector<double>{3 + 3 + 1 + 3 + 4 + 4 + 5 + 4}));
}

// Repeated indices: the gradient counts each use.
TEST(SourceAd, TakeAccumulatesRepeatedIndices) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "n");
  const Tensor* i = t.Input("i", DType::kI32, "m");
  std::shared_ptr<const program::Program> p = program::Program::FromTrace(
      t, {x, i}, {t.Reduce(OpKind::kReduceSum, t.Take(x, i, 0), {}, false)}, {"y"});
  Arrays in{{"x", Array{DType::kF64, {4}, {1, 2, 3, 4}}},
            {"i", Array{DType::kI32, {5}, {2, 0, 2, 2, 3}}},
            {"y.cotangent", Array{DType::kF64, {}, {0.5}}}};
  const Arrays g = testing::Run(std::shared_ptr<const program::Program>(Vjp(*p, {"y"}, {"x"})), in);
  EXPECT_EQ(g.at("x.grad").data, (std::vector<double>{0.5, 0, 1.5, 0.5}));
  EXPECT_EQ(g.at("y").data, (std::vector<double>{14}));
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
