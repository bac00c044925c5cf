// The composites from C++ (no C API): symbolic shapes, the checks made before anything is
// recorded, and their messages.
#include "cc/ops/composites/composites.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/dim/scope.h"
#include "cc/trace/trace.h"

namespace shp {
namespace ops {
namespace composites {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;
using trace::DType;
using trace::Tensor;

class CompositesTest : public ::testing::Test {
 protected:
  CompositesTest() : s_(dim::Scope::Create({})), t_(s_.get()) {}
  std::string Shape(const Tensor* x) const { return s_->ShapeToString(x->type.shape); }
  std::unique_ptr<dim::Scope> s_;
  trace::Trace t_;
};

TEST_F(CompositesTest, ActivationsKeepTheShape) {
  const Tensor* x = t_.Input("x", DType::kF32, "b, 3");
  EXPECT_EQ(Shape(LeakyRelu(x, 0.1)), "(b, 3)");
  EXPECT_EQ(Shape(Elu(x, 1.0)), "(b, 3)");
  EXPECT_EQ(Shape(Selu(x, 1.67, 1.05)), "(b, 3)");
  EXPECT_EQ(Shape(Softplus(x)), "(b, 3)");
  EXPECT_EQ(Shape(Softsign(x)), "(b, 3)");
  EXPECT_EQ(Shape(Clip(x, -1, 1)), "(b, 3)");
  EXPECT_EQ(Shape(HardSigmoid(x, 0.2, 0.5)), "(b, 3)");
  EXPECT_EQ(Shape(LogSoftmax(x, -1)), "(b, 3)");
  EXPECT_EQ(Shape(Prelu(x, t_.Input("slope", DType::kF32, "3"))), "(b, 3)");
}

TEST_F(CompositesTest, RejectedCallsRecordNothing) {
  const Tensor* x = t_.Input("x", DType::kI32, "b, 3");
  const size_t before = t_.tensors().size();
  Error e = Catch([&] { LeakyRelu(x, 0.1); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_EQ(e.message(), "leaky_relu: argument 'x' has dtype i32; expected f32, f64, f16 or bf16");
  e = Catch([&] { LeakyRelu(nullptr, 0.1); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_EQ(e.message(), "argument 'x' must not be NULL");
  e = Catch([&] { LogSoftmax(x, 0); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_EQ(t_.tensors().size(), before);
}

TEST_F(CompositesTest, BatchNormNeedsChannelSizedParameters) {
  const Tensor* x = t_.Input("x", DType::kF32, "n, c, h");
  const Tensor* p = t_.Input("p", DType::kF32, "c");
  EXPECT_EQ(Shape(BatchNorm(x, p, p, p, p, 1e-5)), "(n, c, h)");
  const Tensor* q = t_.Input("q", DType::kF32, "4");
  Error e = Catch([&] { BatchNorm(x, p, q, p, p, 1e-5); });
  EXPECT_EQ(e.code(), Code::kInconclusive);
  EXPECT_TRUE(Contains(e.message(), "batch_norm: the size of 'bias' must equal C"));
  e = Catch([&] { BatchNorm(x, p, nullptr, p, p, 1e-5); });
  EXPECT_EQ(e.message(), "argument 'bias' must not be NULL");
}

TEST_F(CompositesTest, PadWithModeAndDepthToSpace) {
  const Tensor* x = t_.Input("x", DType::kF32, "n, 8, 4, 6");
  std::vector<const dim::Expr*> lo(4, s_->Constant(0)), hi = lo;
  lo[2] = s_->Constant(1);
  hi[3] = s_->Constant(2);
  EXPECT_EQ(Shape(PadWithMode(x, lo, hi, PadMode::kReflect, 0)), "(n, 8, 5, 8)");
  EXPECT_EQ(Shape(PadWithMode(x, lo, hi, PadMode::kEdge, 0)), "(n, 8, 5, 8)");
  Error e = Catch([&] { PadWithMode(x, lo, hi, static_cast<PadMode>(7), 0); });
  EXPECT_EQ(e.message(),
            "pad_mode: argument 'mode' is not a shp_pad_mode_t value: 7 (expected 0..2: "
            "SHP_PAD_CONSTANT, SHP_PAD_REFLECT, SHP_PAD_EDGE)");
  e = Catch([&] { CheckPadModeArgs(x, PadMode::kEdge, 3); });
  EXPECT_EQ(e.message(), "pad_mode: rank 3 given for 'x' of rank 4");
  EXPECT_EQ(Shape(DepthToSpace(x, 2, DepthToSpaceMode::kCrd)), "(n, 2, 8, 12)");
  EXPECT_EQ(Shape(SpaceToDepth(x, 2)), "(n, 32, 2, 3)");
  e = Catch([&] { SpaceToDepth(x, 4); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
}

TEST_F(CompositesTest, PoolsAndConv) {
  const Tensor* x = t_.Input("x", DType::kF32, "n, 3, h, w");
  const int64_t k[2] = {3, 3}, st[2] = {2, 2};
  const Tensor* m = MaxPool(x, 2, k, st, nullptr, nullptr, AutoPad::kSameUpper, false);
  EXPECT_EQ(m->type.shape.size(), 4u);
  const Tensor* a = AvgPool(x, 2, k, nullptr, nullptr, nullptr, AutoPad::kValid, false, false);
  EXPECT_EQ(Shape(a), "(n, 3, h - 2, w - 2)");
  EXPECT_EQ(Shape(GlobalAvgPool(x)), "(n, 3, 1, 1)");
  EXPECT_EQ(Shape(GlobalMaxPool(x)), "(n, 3, 1, 1)");
  Error e = Catch([&] { MaxPool(x, 2, nullptr, nullptr, nullptr, nullptr, AutoPad::kNotSet, 0); });
  EXPECT_EQ(e.message(), "max_pool: argument 'kernel_shape' must not be NULL");
  const Tensor* w = t_.Input("w", DType::kF32, "8, 3, 3, 3");
  const Tensor* b = t_.Input("b", DType::kF32, "8");
  const Tensor* y = Conv(x, w, b, 2, nullptr, nullptr, nullptr, AutoPad::kValid, 1);
  EXPECT_EQ(Shape(y), "(n, 8, h - 2, w - 2)");
  const Tensor* wt = t_.Input("wt", DType::kF32, "3, 8, 3, 3");
  const Tensor* z =
      ConvTranspose(x, wt, nullptr, 2, nullptr, nullptr, nullptr, nullptr, AutoPad::kNotSet, 1);
  EXPECT_EQ(Shape(z), "(n, 8, h + 2, w + 2)");
  e = Catch([&] { Conv(x, w, nullptr, 4, nullptr, nullptr, nullptr, AutoPad::kNotSet, 1); });
  EXPECT_EQ(e.message(), "conv: num_spatial must be 1, 2 or 3, got 4");
}

}  // namespace
}  // namespace composites
}  // namespace ops
}  // namespace shp
