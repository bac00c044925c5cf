// Derivatives through boolean_mask (x[mask] along an axis): the JVP masks the tangent with the
// same mask (and the same data-dependent variable); the VJP puts each selected slice of the
// cotangent back in its place with zeros elsewhere. Checked against finite differences and
// each other at masks with no, some and every entry true, with the mask over the front, middle
// and last axes and with a rank-2 mask.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cc/autodiff/ad_check.h"
#include "cc/trace/trace.h"

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

TEST(DataDependentAd, BooleanMaskMatchesFiniteDifferences) {
  Case c;
  c.name = "boolean_mask";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 3, 2");
    const Tensor* r = t.Input("r", DType::kI32, "n");     // the row mask, as 0/1
    const Tensor* q = t.Input("q", DType::kI32, "3, 2");  // a rank-2 mask over axes 1, 2
    const Tensor* w = t.Input("w", DType::kF64, "2");
    const Tensor* p = t.Input("p", DType::kI32, "2");  // a mask over the last axis
    *in = {x, r, q, w, p};
    const Tensor* rows = t.BooleanMask(x, t.Convert(r, DType::kBool), 0);   // (u0, 3, 2)
    const Tensor* cells = t.BooleanMask(x, t.Convert(q, DType::kBool), 1);  // (n, u1)
    const Tensor* last = t.BooleanMask(x, t.Convert(p, DType::kBool), -1);  // (n, 3, u2)
    out->push_back(t.Binary(OpKind::kMul, last, last));
    // A nonlinear head, so the derivatives depend on the point.
    out->push_back(t.Binary(OpKind::kMul, rows, t.Binary(OpKind::kMul, rows, w)));
    out->push_back(t.Binary(OpKind::kMul, cells, cells));
  };
  c.shapes = [](int k) {
    const int64_t n = kSizes[k];
    return Shapes{{"x", {n, 3, 2}}, {"r", {n}}, {"q", {3, 2}}, {"w", {2}}, {"p", {2}}};
  };
  c.int_bounds = {{"r", 2}, {"q", 2}, {"p", 2}};
  CheckCase(c);
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
