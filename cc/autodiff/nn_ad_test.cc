// softmax's, layer_norm's and cumsum's JVP and VJP rules against central finite differences
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

}  // namespace
}  // namespace autodiff
}  // namespace shp
