// scatter_add's JVP (scatter of the tangents) and VJP (the base gets the cotangent, the
// updates take it back) against central finite differences (f64), at three sizes of the
// symbolic variable (size 1 included), on traced and loaded programs: along each axis, with
// indices of rank 0, 1 and 2, repeated indices, and with either operand carrying no tangent.
#include <gtest/gtest.h>

#include "cc/autodiff/ad_check.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace autodiff {
namespace {

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

}  // namespace
}  // namespace autodiff
}  // namespace shp
