// softmax's, layer_norm's, cumsum's and conv's JVP and VJP rules against central finite differences
// (f64), at three sizes of the symbolic variable (size 1 included), along every axis (negative
// ones too), on traced and loaded programs.
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

// f(x) for x of shape (n, 4, 3), with a nonlinear head (cotangents differ per element).
Case AlongAxes(const std::string& name,
               std::function<std::vector<const Tensor*>(trace::Trace&, const Tensor*)> f) {
  Case c;
  c.name = name;
  c.build = [f](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n, 4, 3");
    in->push_back(x);
    for (const Tensor* y : f(t, x))
      out->push_back(t.Binary(OpKind::kMul, y, t.Unary(OpKind::kCos, y)));
  };
  c.shapes = [](int k) { return Shapes{{"x", {kSizes[k], 4, 3}}}; };
  return c;
}

TEST(NnAd, Softmax) {
  CheckCase(AlongAxes("softmax", [](trace::Trace& t, const Tensor* x) {
    return std::vector<const Tensor*>{t.Softmax(x, 0), t.Softmax(x, 1), t.Softmax(x, -1)};
  }));
}

TEST(NnAd, LayerNorm) {
  CheckCase(AlongAxes("layer_norm", [](trace::Trace& t, const Tensor* x) {
    return std::vector<const Tensor*>{t.LayerNorm(x, -1, 1e-5), t.LayerNorm(x, 1, 0.0),
                                      t.LayerNorm(x, 0, 0.5)};
  }));
}

TEST(NnAd, CumSum) {
  CheckCase(AlongAxes("cumsum", [](trace::Trace& t, const Tensor* x) {
    return std::vector<const Tensor*>{t.CumSum(x, 0), t.CumSum(x, -2), t.CumSum(x, 2)};
  }));
}

// A rank-1 operand whose only axis is symbolic.
TEST(NnAd, Vectors) {
  Case c;
  c.name = "vectors";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, "n");
    in->push_back(x);
    out->push_back(t.Binary(OpKind::kMul, x, t.Softmax(x, 0)));
    out->push_back(t.Binary(OpKind::kMul, x, t.LayerNorm(x, 0, 0.25)));
    out->push_back(t.Binary(OpKind::kMul, x, t.CumSum(x, -1)));
  };
  c.shapes = [](int k) { return Shapes{{"x", {kSizes[k]}}}; };
  CheckCase(c);
}

// conv with every attribute: strides, kernel (rhs) and input (lhs) dilation, positive and
// negative (cropping) pads, groups (and depthwise with a depth multiplier), 1-D to 3-D, with
// the symbolic variable as the batch and as a spatial size; both operands differentiated.
TEST(NnAd, Conv) {
  Case c;
  c.name = "conv";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    dim::Scope* s = t.dims();
    auto dims = [s](std::vector<int64_t> v) {
      ops::Shape sh;
      for (int64_t x : v) sh.push_back(s->Constant(x));
      return sh;
    };
    auto conv = [&](const Tensor* x, const Tensor* w, ops::ConvAttrs a) {
      const Tensor* y = t.Apply(OpKind::kConv, a, {x, w});
      out->push_back(t.Binary(OpKind::kMul, y, t.Unary(OpKind::kCos, y)));
    };
    const Tensor* x2 = t.Input("x2", DType::kF64, "n, 4, 7, 6");
    const Tensor* w2 = t.Input("w2", DType::kF64, "6, 2, 3, 2");
    const Tensor* x1 = t.Input("x1", DType::kF64, "2, 2, n + 4");
    const Tensor* w1 = t.Input("w1", DType::kF64, "3, 2, 3");
    const Tensor* x3 = t.Input("x3", DType::kF64, "1, 2, 3, 4, 2");
    const Tensor* w3 = t.Input("w3", DType::kF64, "4, 1, 2, 2, 1");
    *in = {x2, w2, x1, w1, x3, w3};
    conv(x2, w2, ops::ConvAttrs{{2, 1}, {1, 1}, {1, 2}, dims({1, -1}), dims({0, 2}), 2});
    conv(x2, w2, ops::ConvAttrs{{1, 3}, {2, 1}, {1, 1}, dims({2, 0}), dims({-1, 1}), 2});
    conv(x1, w1, ops::ConvAttrs{{2}, {2}, {1}, dims({1}), dims({-1}), 1});
    conv(x1, w1, ops::ConvAttrs{{1}, {1}, {2}, dims({0}), dims({0}), 1});
    conv(x3, w3,
         ops::ConvAttrs{{1, 2, 1}, {1, 1, 1}, {2, 1, 1}, dims({1, 0, 0}), dims({1, 1, 0}), 2});
  };
  c.shapes = [](int k) {
    const int64_t n = kSizes[k];
    return Shapes{{"x2", {n, 4, 7, 6}}, {"w2", {6, 2, 3, 2}},    {"x1", {2, 2, n + 4}},
                  {"w1", {3, 2, 3}},    {"x3", {1, 2, 3, 4, 2}}, {"w3", {4, 1, 2, 2, 1}}};
  };
  CheckCase(c);
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
