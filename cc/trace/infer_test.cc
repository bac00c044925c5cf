// Shape inference of every operation: result shapes, provable mismatches, UNKNOWN
// comparisons (kInconclusive), dtype rules, and shape assertions recorded by reshape.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/trace/trace.h"

namespace shp {
namespace trace {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;

class InferTest : public ::testing::Test {
 protected:
  void Make(const std::vector<std::string>& constraints = {}) {
    s_ = dim::Scope::Create(constraints);
    t_.reset(new Trace(s_.get()));
  }
  void SetUp() override { Make(); }
  const dim::Expr* D(const std::string& text) { return s_->Parse(text); }
  std::vector<const dim::Expr*> Dims(const std::vector<std::string>& texts) {
    std::vector<const dim::Expr*> out;
    for (const std::string& x : texts) out.push_back(x == "_" ? nullptr : D(x));
    return out;
  }
  const Tensor* In(const std::string& spec, DType dtype = DType::kF32) {
    return t_->Input("x" + std::to_string(t_->tensors().size()), dtype, spec);
  }
  std::string Shape(const Tensor* t) { return s_->ShapeToString(t->type.shape); }

  std::unique_ptr<dim::Scope> s_;
  std::unique_ptr<Trace> t_;
};

TEST_F(InferTest, UnaryKeepsTypeAndChecksDtypes) {
  const Tensor* x = In("b, 3");
  for (OpKind k : ops::kAllOpKinds) {  // every unary op but the logical not
    if (!ops::IsUnary(k) || k == OpKind::kNot) continue;
    const Tensor* y = t_->Unary(k, x);
    EXPECT_EQ(Shape(y), "(b, 3)") << OpName(k);
    EXPECT_EQ(y->type.dtype, DType::kF32);
  }
  const Tensor* i = In("b", DType::kI32);
  Error e = Catch([&] { t_->Unary(OpKind::kExp, i); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_EQ(e.message(), "exp: expects a floating-point operand, got i32");
  EXPECT_EQ(t_->Unary(OpKind::kNeg, i)->type.dtype, DType::kI32);
  EXPECT_EQ(t_->Unary(OpKind::kNot, In("b", DType::kBool))->type.dtype, DType::kBool);
  EXPECT_EQ(Catch([&] { t_->Unary(OpKind::kNot, x); }).code(), Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] { t_->Unary(OpKind::kNeg, In("b", DType::kBool)); }).code(),
            Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] { t_->Unary(OpKind::kAdd, x); }).code(), Code::kInvalidArgument);
}

TEST_F(InferTest, BinaryBroadcastsLikeNumPy) {
  EXPECT_EQ(Shape(t_->Binary(OpKind::kAdd, In("b, 1, 4"), In("3, 1"))), "(b, 3, 4)");
  EXPECT_EQ(Shape(t_->Binary(OpKind::kMul, In("b"), In(""))), "(b,)");
  EXPECT_EQ(Shape(t_->Binary(OpKind::kSub, In("2*n + 1, 1"), In("1 + n*2, k"))), "(2*n + 1, k)");
  for (OpKind k : ops::kAllOpKinds) {
    if (!ops::IsBinary(k)) continue;
    if (k != OpKind::kAnd && k != OpKind::kOr && k != OpKind::kXor) {  // numeric
      EXPECT_EQ(Shape(t_->Binary(k, In("b"), In("b"))), "(b,)");
      continue;
    }
    EXPECT_EQ(t_->Binary(k, In("b", DType::kBool), In("b", DType::kBool))->type.dtype,
              DType::kBool);
    EXPECT_EQ(Catch([&] { t_->Binary(k, In("b"), In("b")); }).code(), Code::kDtypeMismatch);
  }
}

TEST_F(InferTest, BinaryMismatchShowsTheSymbolicShapes) {
  Make({"v >= 5"});
  Error e = Catch([&] { t_->Binary(OpKind::kAdd, In("v"), In("4")); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "add: incompatible shapes for broadcasting: (v,) and (4,)"));
  e = Catch([&] { t_->Binary(OpKind::kAdd, In("v"), In("v + 1")); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  e = Catch([&] { t_->Binary(OpKind::kAdd, In("b"), In("b", DType::kI32)); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_TRUE(Contains(e.message(), "add: operand dtypes differ: f32 and i32"));
}

TEST_F(InferTest, BinaryUnknownIsInconclusiveWithTheFixes) {
  Error e = Catch([&] { t_->Binary(OpKind::kAdd, In("v"), In("4")); });
  EXPECT_EQ(e.code(), Code::kInconclusive);
  EXPECT_TRUE(Contains(e.message(), "add: cannot decide whether v == 4"));
  EXPECT_TRUE(Contains(e.message(), "{no constraints}"));
  // Only verified fixes (dim/explain.h): the fact itself, and pinning v's range.
  EXPECT_TRUE(Contains(e.message(), "shp_scope_check(scope, v, SHP_CMP_EQ, 4)"));
  EXPECT_TRUE(Contains(e.message(), "declare 'v' with the range [4, 4] (shp_scope_declare"));
  EXPECT_TRUE(Contains(e.message(), "v = 4 makes it true")) << e.message();
  ASSERT_NE(e.detail(), nullptr);
  EXPECT_EQ(e.detail()->witnesses.size(), 2u);
  e = Catch([&] { t_->Binary(OpKind::kAdd, In("a"), In("b")); });
  EXPECT_EQ(e.code(), Code::kInconclusive);
  // Two symbolic dimensions: max in the specification makes them agree.
  EXPECT_TRUE(Contains(e.message(), "write max(a, b) for both dimensions in the specification"))
      << e.message();
  // A user assertion decides it.
  s_->Check(D("a"), dim::Cmp::kEq, D("b"), "a and b agree");
  EXPECT_EQ(Shape(t_->Binary(OpKind::kAdd, In("a"), In("b"))), "(a,)");
  // So does a constraint; a symbolic dimension that is provably 1 broadcasts.
  Make({"a == 1"});
  EXPECT_EQ(Shape(t_->Binary(OpKind::kAdd, In("a"), In("c"))), "(c,)");
}

TEST_F(InferTest, CompareGivesBool) {
  for (OpKind k : ops::kAllOpKinds) {
    if (!ops::IsCompare(k)) continue;
    const Tensor* y = t_->Binary(k, In("b, 1"), In("3"));
    EXPECT_EQ(y->type.dtype, DType::kBool);
    EXPECT_EQ(Shape(y), "(b, 3)");
  }
  EXPECT_EQ(Catch([&] { t_->Binary(OpKind::kLt, In("b"), In("b", DType::kI64)); }).code(),
            Code::kDtypeMismatch);
}

TEST_F(InferTest, Select) {
  const Tensor* y = t_->Select(In("b, 1", DType::kBool), In("3"), In("b, 3"));
  EXPECT_EQ(Shape(y), "(b, 3)");
  EXPECT_EQ(Catch([&] { t_->Select(In("b"), In("b"), In("b")); }).code(), Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] { t_->Select(In("b", DType::kBool), In("b"), In("b", DType::kI32)); }).code(),
            Code::kDtypeMismatch);
  Error e = Catch([&] { t_->Select(In("2", DType::kBool), In("3"), In("3")); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(
      Contains(e.message(), "select: incompatible shapes for broadcasting: (2,), (3,) and (3,)"));
}

TEST_F(InferTest, Convert) {
  const Tensor* y = t_->Convert(In("b"), DType::kI64);
  EXPECT_EQ(y->type.dtype, DType::kI64);
  EXPECT_EQ(Shape(y), "(b,)");
  EXPECT_EQ(Catch([&] { t_->Convert(In("b"), static_cast<DType>(99)); }).code(),
            Code::kInvalidArgument);
}

TEST_F(InferTest, BroadcastTo) {
  EXPECT_EQ(Shape(t_->BroadcastTo(In("1, n"), Dims({"b", "k", "n"}))), "(b, k, n)");
  Error e = Catch([&] { t_->BroadcastTo(In("3"), Dims({"b", "4"})); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "broadcast_to: cannot broadcast (3,) to (b, 4)"));
  EXPECT_EQ(Catch([&] { t_->BroadcastTo(In("3, 3"), Dims({"3"})); }).code(), Code::kShapeMismatch);
  EXPECT_EQ(Catch([&] { t_->BroadcastTo(In("n"), Dims({"m"})); }).code(), Code::kInconclusive);
  EXPECT_EQ(Catch([&] { t_->BroadcastTo(In("1"), Dims({"-2"})); }).code(), Code::kShapeMismatch);
}

TEST_F(InferTest, ReshapeChecksSizes) {
  EXPECT_EQ(Shape(t_->Reshape(In("b, 4, 3"), Dims({"b", "12"}))), "(b, 12)");
  Error e = Catch([&] { t_->Reshape(In("b, 4"), Dims({"b", "5"})); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(),
                       "reshape: cannot reshape (b, 4) to (b, 5): the sizes 4*b and 5*b differ"));
  e = Catch([&] { t_->Reshape(In("a, b"), Dims({"c"})); });
  EXPECT_EQ(e.code(), Code::kInconclusive);
  EXPECT_TRUE(Contains(e.message(), "reshape: cannot decide whether a*b == c"));
  EXPECT_EQ(Catch([&] { t_->Reshape(In("4"), Dims({"_", "_"})); }).code(), Code::kInvalidArgument);
}

TEST_F(InferTest, ReshapeInfersADimension) {
  const Tensor* y = t_->Reshape(In("b, 4, 3"), Dims({"_", "6"}));
  EXPECT_EQ(Shape(y), "(2*b, 6)");
  EXPECT_EQ(std::get<ops::ReshapeAttrs>(y->attrs).infer_axis, 0);
  EXPECT_EQ(s_->facts().size(), 0u);  // divisible: no assertion
  Error e = Catch([&] { t_->Reshape(In("2*b + 1"), Dims({"_", "2"})); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "is not divisible by 2"));
}

TEST_F(InferTest, ReshapeRecordsADivisibilityAssertion) {
  const Tensor* y = t_->Reshape(In("n"), Dims({"_", "4"}));
  EXPECT_EQ(Shape(y), "(floordiv(n, 4), 4)");
  ASSERT_EQ(s_->facts().size(), 1u);
  const dim::Fact& f = s_->facts()[0];
  EXPECT_TRUE(f.is_assertion);
  EXPECT_EQ(f.text, "mod(n, 4) == 0");
  EXPECT_TRUE(Contains(f.message, "must be divisible by 4"));
  // The engine now knows it: 4*floordiv(n, 4) == n.
  EXPECT_EQ(s_->Compare(D("4*floordiv(n, 4)"), dim::Cmp::kEq, D("n")), dim::Truth::kTrue);
  // A divisor that may be 0 is inconclusive.
  EXPECT_EQ(Catch([&] {
              t_->Reshape(In("n"), {nullptr, s_->Sub(D("k"), D("1"))});
            }).code(),
            Code::kInconclusive);
}

TEST_F(InferTest, Transpose) {
  EXPECT_EQ(Shape(t_->Transpose(In("a, b, 3"), {2, 0, -2})), "(3, a, b)");
  EXPECT_EQ(Catch([&] { t_->Transpose(In("a, b"), {0}); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->Transpose(In("a, b"), {0, 0}); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->Transpose(In("a, b"), {0, 2}); }).code(), Code::kInvalidArgument);
}

TEST_F(InferTest, Concatenate) {
  const Tensor* y = t_->Concatenate({In("b, 3"), In("b, n"), In("b, 1")}, -1);
  EXPECT_EQ(Shape(y), "(b, n + 4)");
  EXPECT_EQ(std::get<ops::AxisAttrs>(y->attrs).axis, 1);
  Make({"n >= 5"});
  Error e = Catch([&] { t_->Concatenate({In("n, 3"), In("4, 3")}, 1); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "concatenate: shapes (n, 3) and (4, 3) differ on axis 0"));
  EXPECT_EQ(Catch([&] {
              t_->Concatenate({In("m, 3"), In("k, 3")}, 1);
            }).code(),
            Code::kInconclusive);
  EXPECT_EQ(Catch([&] { t_->Concatenate({In("3"), In("3, 1")}, 0); }).code(), Code::kShapeMismatch);
  EXPECT_EQ(Catch([&] {
              t_->Concatenate({In("3"), In("3", DType::kI32)}, 0);
            }).code(),
            Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] { t_->Concatenate({In("")}, 0); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->Concatenate({}, 0); }).code(), Code::kInvalidArgument);
}

TEST_F(InferTest, Slice) {
  const Tensor* x = In("n, 10");
  EXPECT_EQ(Shape(t_->Slice(x, Dims({"1", "0"}), Dims({"n", "10"}), {1, 3})), "(n - 1, 4)");
  EXPECT_EQ(Shape(t_->Slice(x, {}, {}, {2, 1})), "(floordiv(n + 1, 2), 10)");
  Error e = Catch([&] { t_->Slice(x, Dims({"0", "0"}), Dims({"n", "11"}), {}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(
      Contains(e.message(), "slice: limit 11 of axis 1 of (n, 10) exceeds the dimension 10"));
  e = Catch([&] { t_->Slice(x, Dims({"2", "0"}), Dims({"n", "10"}), {}); });
  EXPECT_EQ(e.code(), Code::kInconclusive);
  EXPECT_TRUE(Contains(e.message(), "2 <= n"));
  EXPECT_EQ(Catch([&] { t_->Slice(x, {}, {}, {0, 1}); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->Slice(x, Dims({"0"}), {}, {}); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] {
              t_->Slice(x, Dims({"5", "0"}), Dims({"4", "10"}), {});
            }).code(),
            Code::kShapeMismatch);
}

TEST_F(InferTest, Pad) {
  EXPECT_EQ(Shape(t_->Pad(In("n, 3"), Dims({"1", "p"}), Dims({"0", "2"}), 0.0)), "(n + 1, p + 5)");
  EXPECT_EQ(Catch([&] { t_->Pad(In("n"), Dims({"-1"}), Dims({"0"}), 0.0); }).code(),
            Code::kShapeMismatch);
  EXPECT_EQ(Catch([&] { t_->Pad(In("n"), Dims({"1 - p"}), Dims({"0"}), 0.0); }).code(),
            Code::kInconclusive);
  EXPECT_EQ(Catch([&] { t_->Pad(In("n"), Dims({"1"}), {}, 0.0); }).code(), Code::kInvalidArgument);
}

TEST_F(InferTest, Reductions) {
  const Tensor* x = In("b, n, 3");
  EXPECT_EQ(Shape(t_->Reduce(OpKind::kReduceSum, x, {-1, 0}, false)), "(n,)");
  const Tensor* y = t_->Reduce(OpKind::kReduceMax, x, {1}, true);
  EXPECT_EQ(Shape(y), "(b, 1, 3)");
  EXPECT_EQ(Shape(t_->Reduce(OpKind::kReduceProd, x, {}, false)), "()");
  EXPECT_EQ(Shape(t_->Reduce(OpKind::kReduceMin, x, {2, 1}, false)), "(b,)");
  const Tensor* m = t_->Reduce(OpKind::kReduceMean, x, {2, 0}, false);
  EXPECT_EQ(std::get<ops::ReduceAttrs>(m->attrs).axes, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(
      Catch([&] { t_->Reduce(OpKind::kReduceMean, In("b", DType::kI32), {0}, false); }).code(),
      Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] {
              t_->Reduce(OpKind::kReduceSum, x, {0, -3}, false);
            }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->Reduce(OpKind::kReduceSum, x, {3}, false); }).code(),
            Code::kInvalidArgument);
}

TEST_F(InferTest, MatMulFollowsNumPy) {
  EXPECT_EQ(Shape(t_->MatMul(In("b, 784"), In("784, 10"))), "(b, 10)");
  EXPECT_EQ(Shape(t_->MatMul(In("k"), In("k, m"))), "(m,)");
  EXPECT_EQ(Shape(t_->MatMul(In("n, k"), In("k"))), "(n,)");
  EXPECT_EQ(Shape(t_->MatMul(In("k"), In("k"))), "()");
  EXPECT_EQ(Shape(t_->MatMul(In("h, 1, n, k"), In("b, k, m"))), "(h, b, n, m)");
  Make({"v >= 5"});
  Error e = Catch([&] { t_->MatMul(In("n, 4"), In("v, m")); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "matmul: contracting dimensions differ: 4 vs v"));
  e = Catch([&] { t_->MatMul(In("n, k"), In("j, m")); });
  EXPECT_EQ(e.code(), Code::kInconclusive);
  EXPECT_TRUE(Contains(e.message(), "matmul: cannot decide whether k == j"));
  EXPECT_EQ(Catch([&] { t_->MatMul(In("2, n, k"), In("3, k, m")); }).code(), Code::kShapeMismatch);
  EXPECT_EQ(Catch([&] { t_->MatMul(In(""), In("k")); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->MatMul(In("b", DType::kBool), In("b", DType::kBool)); }).code(),
            Code::kDtypeMismatch);
}

TEST_F(InferTest, DotGeneral) {
  DotDims d{{0}, {0}, {2}, {1}};
  EXPECT_EQ(Shape(t_->DotGeneral(In("b, n, k"), In("b, k, m"), d)), "(b, n, m)");
  Error e = Catch([&] { t_->DotGeneral(In("b, n, 4"), In("b, 5, m"), d); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "dot_general: contracting dimensions differ: 4 vs 5"));
  e = Catch([&] { t_->DotGeneral(In("b, n, k"), In("c, k, m"), d); });
  EXPECT_EQ(e.code(), Code::kInconclusive);
  EXPECT_EQ(Catch([&] {
              t_->DotGeneral(In("b, k"), In("b, k"), DotDims{{0}, {}, {1}, {1}});
            }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] {
              t_->DotGeneral(In("b, k"), In("b, k"), DotDims{{0}, {0}, {0}, {1}});
            }).code(),
            Code::kInvalidArgument);
}

TEST_F(InferTest, IotaSoftmaxLayerNormCumSum) {
  const Tensor* i = t_->Iota(DType::kI32, Dims({"n", "4"}), -1);
  EXPECT_EQ(Shape(i), "(n, 4)");
  EXPECT_EQ(std::get<ops::IotaAttrs>(i->attrs).axis, 1);
  EXPECT_EQ(Catch([&] { t_->Iota(DType::kBool, Dims({"n"}), 0); }).code(), Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] { t_->Iota(DType::kI32, {}, 0); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->Iota(DType::kI32, Dims({"n"}), 1); }).code(), Code::kInvalidArgument);
  const Tensor* x = In("b, n");
  EXPECT_EQ(Shape(t_->Softmax(x, -1)), "(b, n)");
  EXPECT_EQ(Shape(t_->LayerNorm(x, 1, 1e-5)), "(b, n)");
  EXPECT_EQ(Shape(t_->CumSum(In("b, n", DType::kI64), 0)), "(b, n)");
  EXPECT_EQ(Catch([&] { t_->Softmax(In("n", DType::kI32), 0); }).code(), Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] { t_->Softmax(x, 2); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->LayerNorm(x, 1, -1.0); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Catch([&] { t_->CumSum(In(""), 0); }).code(), Code::kInvalidArgument);
}

TEST_F(InferTest, TakeAndDimValue) {
  EXPECT_EQ(Shape(t_->Take(In("v, d"), In("b, s", DType::kI32), 0)), "(b, s, d)");
  EXPECT_EQ(Shape(t_->Take(In("v, d"), In("", DType::kI64), 1)), "(v,)");
  EXPECT_EQ(Catch([&] { t_->Take(In("v, d"), In("b"), 0); }).code(), Code::kDtypeMismatch);
  EXPECT_EQ(Catch([&] { t_->Take(In("v, d"), In("b", DType::kI32), 2); }).code(),
            Code::kInvalidArgument);
  const Tensor* n = t_->DimValue(D("2*n + 1"));
  EXPECT_EQ(n->type.dtype, DType::kI64);
  EXPECT_EQ(Shape(n), "()");
  EXPECT_EQ(Catch([&] { t_->DimValue(nullptr); }).code(), Code::kInvalidArgument);
}

TEST_F(InferTest, DimensionEngineErrorsNameTheOp) {
  auto other = dim::Scope::Create({});
  Error e = Catch([&] { t_->BroadcastTo(In("1"), {other->Var("z")}); });
  EXPECT_EQ(e.code(), Code::kScopeMismatch);
  EXPECT_TRUE(Contains(e.message(), "broadcast_to"));
}

}  // namespace
}  // namespace trace
}  // namespace shp
