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
using ::shp::testing::Contains;

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
  EXPECT_EQ(Catch([&] { t.Input("x", static_cast<DType>(99), "a"); }).code(),
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

// What can be traced can be serialized and loaded: the loader's limits hold at trace time
// (issue 17, findings 4 and 9).
TEST(Trace, EnforcesTheLimitsOfLoadablePrograms) {
  auto scope = dim::Scope::Create({});
  Trace t(scope.get());
  std::string spec65;
  for (int i = 0; i < 65; ++i) spec65 += i ? ", 1" : "1";
  Error e = Catch([&] { t.Input("x", DType::kF32, spec65); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "rank 65 is above the limit of 64 axes")) << e.message();
  // A result above the rank limit (broadcast_to a rank-65 shape).
  const Tensor* one = t.Input("one", DType::kF32, "");
  std::vector<const dim::Expr*> shape65(65, scope->Constant(1));
  e = Catch([&] { t.BroadcastTo(one, shape65); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  // A constant above 1 GiB: refused from its size, before its bytes are read.
  const int64_t elems = (int64_t{1} << 28) + 1;
  static const char dummy = 0;
  e = Catch([&] { t.Constant(DType::kF32, {elems}, &dummy, static_cast<size_t>(elems) * 4); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "above the limit of 1073741824 bytes")) << e.message();
  // Bool elements are 0 or 1.
  const uint8_t bools[3] = {0, 1, 2};
  e = Catch([&] { t.Constant(DType::kBool, {3}, bools, 3); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "bool element 2 is 2")) << e.message();
}

// Names appear in messages and in files: they must be printable UTF-8.
TEST(Trace, NamesMustBePrintableUtf8) {
  auto s = dim::Scope::Create({});
  Trace t(s.get());
  for (const std::string& bad :
       {std::string("a\nb"), std::string("a\x7f"), std::string("\xc3"), std::string("\xc0\xaf"),
        std::string("\xed\xa0\x80"), std::string("\xc2\x85")}) {
    Error e = Catch([&] { t.Input(bad, DType::kF32, "3"); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.message();
    EXPECT_TRUE(Contains(e.message(), "control character") || Contains(e.message(), "UTF-8"))
        << e.message();
  }
  EXPECT_NE(t.Input(std::string("gr\xc3\xb6\xc3\x9f") + "e \xe2\x9c\x93", DType::kF32, "3"),
            nullptr);
}

}  // namespace
}  // namespace trace
}  // namespace shp
