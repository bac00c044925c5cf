// scatter_add's JVP (scatter of the tangents) and VJP (the base gets the cotangent, the
// updates take it back) against central finite differences (f64), at three sizes of the
// symbolic variable (size 1 included), on traced and loaded programs: along each axis, with
// indices of rank 0, 1 and 2, repeated indices, and with either operand carrying no tangent.
// scatter's reductions the same way (replace: a repeat that loses gets no derivative; max/min:
// the winner's), replace's cotangents exactly, and mul's refusal.
#include <gtest/gtest.h>

#include "cc/autodiff/ad_check.h"
#include "cc/autodiff/autodiff.h"
#include "cc/base/error.h"
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

const Tensor* ScatterAdd(trace::Trace& t, const Tensor* base, const Tensor* idx, const Tensor* upd,
                         int64_t axis) {
  return t.Apply(OpKind::kScatterAdd, ops::AxisAttrs{axis}, {base, idx, upd});
}

TEST(ScatterAd, MatchesFiniteDifferences) {
  Case c;
  c.name = "scatter_add";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    const Tensor* i = t.Input("i", DType::kI32, "4");  // along axis 1: values in [0, 3)
    const Tensor* u = t.Input("u", DType::kF64, "n, 4");
    const Tensor* j = t.Input("j", DType::kI64, "n, 2");     // along axis 0: values in [0, 1)
    const Tensor* v = t.Input("v", DType::kF64, "n, 2, 3");  // every index repeated
    const Tensor* k = t.Input("k", DType::kI32, "");         // a scalar index
    const Tensor* w = t.Input("w", DType::kF64, "n");
    *in = {x, i, u, j, v, k, w};
    // A nonlinear head, so the derivatives depend on the point.
    auto head = [&t](const Tensor* y) { return t.Binary(OpKind::kMul, y, y); };
    out->push_back(head(ScatterAdd(t, x, i, u, 1)));
    out->push_back(head(ScatterAdd(t, x, j, v, 0)));
    out->push_back(head(ScatterAdd(t, x, k, w, -1)));
    // Updates scattered twice, and a scatter of a scatter.
    const Tensor* twice = ScatterAdd(t, ScatterAdd(t, x, i, u, 1), i, u, -1);
    out->push_back(t.Binary(OpKind::kMul, twice, x));
  };
  c.shapes = [](int k) {
    const int64_t n = kSizes[k];
    return Shapes{{"x", {n, 3}},    {"i", {4}}, {"u", {n, 4}}, {"j", {n, 2}},
                  {"v", {n, 2, 3}}, {"k", {}},  {"w", {n}}};
  };
  c.int_bounds = {{"i", 3}, {"j", 1}, {"k", 3}};
  CheckCase(c);
}

// Only one of base and updates carries a tangent: the other is converted from integers (zero
// derivative), so the rules see a symbolic zero on that side.
TEST(ScatterAd, OneSideWithoutTangent) {
  Case c;
  c.name = "scatter_add, one side constant";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    const Tensor* b = t.Input("b", DType::kI32, "n, 3");
    const Tensor* i = t.Input("i", DType::kI64, "2, 2");  // indices of rank 2 along axis 1
    const Tensor* u = t.Input("u", DType::kF64, "n, 2, 2");
    const Tensor* ui = t.Input("ui", DType::kI32, "n, 2, 2");
    *in = {x, b, i, u, ui};
    const Tensor* base = t.Convert(b, DType::kF64);
    const Tensor* upd = t.Convert(ui, DType::kF64);
    out->push_back(t.Unary(OpKind::kSin, ScatterAdd(t, base, i, u, 1)));  // base: no tangent
    out->push_back(t.Unary(OpKind::kSin, ScatterAdd(t, x, i, upd, 1)));   // updates: none
  };
  c.shapes = [](int k) {
    const int64_t n = kSizes[k];
    return Shapes{{"x", {n, 3}}, {"b", {n, 3}}, {"i", {2, 2}}, {"u", {n, 2, 2}}, {"ui", {n, 2, 2}}};
  };
  c.int_bounds = {{"b", 5}, {"i", 3}, {"ui", 5}};
  CheckCase(c);
}

const Tensor* Scatter(trace::Trace& t, const Tensor* base, const Tensor* idx, const Tensor* upd,
                      int64_t axis, int64_t reduction) {
  return t.Apply(OpKind::kScatter, ops::ScatterAttrs{axis, reduction}, {base, idx, upd});
}

// Each differentiable reduction (0 replace, 1 add, 3 max, 4 min) along both axes, with repeated
// indices (replace: the later repeat wins; max/min: the larger/smaller of the repeats and the
// base element), and with either operand carrying no tangent.
TEST(ScatterAd, ReductionsMatchFiniteDifferences) {
  for (int64_t red : {0, 1, 3, 4}) {
    Case c;
    c.name = "scatter reduction " + std::to_string(red);
    c.build = [red](trace::Trace& t, std::vector<const Tensor*>* in,
                    std::vector<const Tensor*>* out) {
      const Tensor* x = t.Input("x", DType::kF64, "n, 3");
      const Tensor* i = t.Input("i", DType::kI32, "4");  // along axis 1: values in [0, 3)
      const Tensor* u = t.Input("u", DType::kF64, "n, 4");
      const Tensor* j = t.Input("j", DType::kI64, "n, 2");     // along axis 0: values in [0, 1)
      const Tensor* v = t.Input("v", DType::kF64, "n, 2, 3");  // every index repeated
      const Tensor* b = t.Input("b", DType::kI32, "n, 3");
      const Tensor* ub = t.Input("ub", DType::kI32, "n, 4");
      *in = {x, i, u, j, v, b, ub};
      auto head = [&t](const Tensor* y) { return t.Binary(OpKind::kMul, y, y); };
      out->push_back(head(Scatter(t, x, i, u, 1, red)));
      out->push_back(head(Scatter(t, x, j, v, 0, red)));
      // The base without a tangent, then the updates without one.
      out->push_back(t.Unary(OpKind::kSin, Scatter(t, t.Convert(b, DType::kF64), i, u, -1, red)));
      out->push_back(t.Unary(OpKind::kSin, Scatter(t, x, i, t.Convert(ub, DType::kF64), 1, red)));
    };
    c.shapes = [](int k) {
      const int64_t n = kSizes[k];
      return Shapes{{"x", {n, 3}},    {"i", {4}},    {"u", {n, 4}}, {"j", {n, 2}},
                    {"v", {n, 2, 3}}, {"b", {n, 3}}, {"ub", {n, 4}}};
    };
    c.int_bounds = {{"i", 3}, {"j", 1}, {"b", 5}, {"ub", 5}};
    CheckCase(c);
  }
}

// replace's cotangents exactly: the base gets the cotangent where no index hits; among repeated
// indices only the update at the last position gets it.
TEST(ScatterAd, ReplaceGivesTheCotangentToTheLastRepeat) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "4");
  const Tensor* i = t.Input("i", DType::kI64, "5");
  const Tensor* u = t.Input("u", DType::kF64, "5");
  const Tensor* y = Scatter(t, x, i, u, 0, 0);
  const Tensor* w = t.Constant(DType::kF64, {4}, std::vector<double>{1, 10, 100, 1000}.data(), 32);
  std::shared_ptr<const program::Program> p = program::Program::FromTrace(
      t, {x, i, u}, {t.Reduce(OpKind::kReduceSum, t.Binary(OpKind::kMul, y, w), {}, false)}, {"y"});
  Arrays in{{"x", Array{DType::kF64, {4}, {1, 2, 3, 4}}},
            {"i", Array{DType::kI64, {5}, {2, 0, 2, 3, 2}}},
            {"u", Array{DType::kF64, {5}, {5, 6, 7, 8, 9}}},
            {"y.cotangent", Array{DType::kF64, {}, {1}}}};
  const Arrays g =
      testing::Run(std::shared_ptr<const program::Program>(Vjp(*p, {"y"}, {"x", "u"})), in);
  EXPECT_EQ(g.at("y").data, (std::vector<double>{6 + 20 + 900 + 8000}));
  EXPECT_EQ(g.at("x.grad").data, (std::vector<double>{0, 10, 0, 0}));
  EXPECT_EQ(g.at("u.grad").data, (std::vector<double>{0, 1, 0, 1000, 100}));
}

// max: a tie between the base element and an update shares the cotangent equally.
TEST(ScatterAd, MaxTiesShareTheCotangent) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "3");
  const Tensor* i = t.Input("i", DType::kI64, "3");
  const Tensor* u = t.Input("u", DType::kF64, "3");
  std::shared_ptr<const program::Program> p = program::Program::FromTrace(
      t, {x, i, u}, {t.Reduce(OpKind::kReduceSum, Scatter(t, x, i, u, 0, 3), {}, false)}, {"y"});
  Arrays in{{"x", Array{DType::kF64, {3}, {5, 1, 2}}},
            {"i", Array{DType::kI64, {3}, {0, 1, 1}}},
            {"u", Array{DType::kF64, {3}, {5, 4, 4}}},
            {"y.cotangent", Array{DType::kF64, {}, {1}}}};
  const Arrays g =
      testing::Run(std::shared_ptr<const program::Program>(Vjp(*p, {"y"}, {"x", "u"})), in);
  EXPECT_EQ(g.at("y").data, (std::vector<double>{5 + 4 + 2}));
  EXPECT_EQ(g.at("x.grad").data, (std::vector<double>{0.5, 0, 1}));
  EXPECT_EQ(g.at("u.grad").data, (std::vector<double>{0.5, 0.5, 0.5}));
}

// mul has no derivative rule: both transformations refuse it, naming the reduction.
TEST(ScatterAd, MulIsRefused) {
  auto scope = dim::Scope::Create({});
  trace::Trace t(scope.get());
  const Tensor* x = t.Input("x", DType::kF64, "3");
  const Tensor* i = t.Input("i", DType::kI64, "2");
  const Tensor* u = t.Input("u", DType::kF64, "2");
  std::shared_ptr<const program::Program> p =
      program::Program::FromTrace(t, {x, i, u}, {Scatter(t, x, i, u, 0, 2)}, {"y"});
  for (int jvp = 0; jvp < 2; ++jvp) {
    try {
      if (jvp) {
        Jvp(*p, {"x"});
      } else {
        Vjp(*p, {"y"}, {"u"});
      }
      ADD_FAILURE() << "scatter mul was differentiated";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kUnsupported);
      EXPECT_NE(e.message().find("reduction mul"), std::string::npos) << e.message();
    }
  }
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
