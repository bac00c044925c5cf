// Inputs, dimension inputs and constants of a trace.
#include "cc/trace/trace.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"

namespace shp {
namespace trace {
namespace {

using ::shp::testing::Catch;

TEST(Trace, InputsKeepNameDtypeAndSymbolicShape) {
  auto s = dim::Scope::Create({});
  Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "batch, 784");
  EXPECT_EQ(x->name, "x");
  EXPECT_EQ(x->source, Source::kInput);
  EXPECT_EQ(x->type.dtype, DType::kF32);
  EXPECT_EQ(s->ShapeToString(x->type.shape), "(batch, 784)");
  EXPECT_TRUE(t.Owns(x));
  EXPECT_EQ(t.tensors().size(), 1u);
}

TEST(Trace, InputErrors) {
  auto s = dim::Scope::Create({"n <= -1"}, {{"n", dim::kNegInf, dim::kPosInf}});
  Trace t(s.get());
  EXPECT_EQ(Catch([&] { t.Input("", DType::kF32, "a"); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t.Input("x", static_cast<DType>(9), "a"); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t.Input("x", DType::kF32, "a +"); }).code(), Code::kParseError);
  Error e = Catch([&] { t.Input("x", DType::kF32, "n"); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_NE(e.message().find("negative"), std::string::npos) << e.message();
  auto other = dim::Scope::Create({});
  EXPECT_EQ(Catch([&] { t.Input("x", DType::kF32, {other->Var("b")}); }).code(),
            Code::kScopeMismatch);
  EXPECT_EQ(t.tensors().size(), 0u);
}

TEST(Trace, DimInputIsAScalarI64NamingItsVariable) {
  auto s = dim::Scope::Create({});
  Trace t(s.get());
  const Tensor* k = t.DimInput("k");
  EXPECT_EQ(k->source, Source::kDimInput);
  EXPECT_EQ(k->type.dtype, DType::kI64);
  EXPECT_TRUE(k->type.shape.empty());
  EXPECT_EQ(s->VarName(k->dim_var), "k");
  EXPECT_EQ(Catch([&] { t.DimInput("2k"); }).code(), Code::kInvalidArgument);
}

TEST(Trace, ConstantsCopyTheirBytes) {
  auto s = dim::Scope::Create({});
  Trace t(s.get());
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const Tensor* c = t.Constant(DType::kF32, {2, 3}, v.data(), v.size() * sizeof(float));
  v[0] = 42;
  EXPECT_EQ(s->ShapeToString(c->type.shape), "(2, 3)");
  ASSERT_GE(std::get<ops::ConstantAttrs>(c->attrs).buffer, 0);
  EXPECT_EQ(t.buffer(std::get<ops::ConstantAttrs>(c->attrs).buffer).size(), 24u);
  float first;
  std::memcpy(&first, t.buffer(std::get<ops::ConstantAttrs>(c->attrs).buffer).data(),
              sizeof(float));
  EXPECT_EQ(first, 1.0f);
  const Tensor* empty = t.Constant(DType::kI32, {0, 5}, nullptr, 0);
  EXPECT_EQ(t.buffer(std::get<ops::ConstantAttrs>(empty->attrs).buffer).size(), 0u);
  EXPECT_EQ(Catch([&] { t.Constant(DType::kF32, {2}, v.data(), 4); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t.Constant(DType::kF32, {-1}, v.data(), 4); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t.Constant(DType::kF32, {1}, nullptr, 4); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] {
              t.Constant(DType::kF32, {INT64_MAX, 4}, v.data(), 4);
            }).code(),
            Code::kOverflow);
}

TEST(Trace, ForeignTensorsAreRejected) {
  auto s1 = dim::Scope::Create({});
  auto s2 = dim::Scope::Create({});
  Trace t1(s1.get()), t2(s2.get());
  const Tensor* x = t1.Input("x", DType::kF32, "a");
  EXPECT_FALSE(t2.Owns(x));
  EXPECT_EQ(Catch([&] { t2.CheckOwned(x, "add"); }).code(), Code::kScopeMismatch);
  EXPECT_EQ(Catch([&] { t2.CheckOwned(nullptr, "add"); }).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace trace
}  // namespace shp
