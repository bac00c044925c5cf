// Programs built from traces: signature checks, solvability, listing, shape checking,
// independence from the tracing scope, concurrent use.
#include "cc/program/program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/trace/trace.h"

namespace shp {
namespace program {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

struct Mlp {
  std::unique_ptr<dim::Scope> scope;
  std::unique_ptr<trace::Trace> trace;
  const Tensor *x, *w, *b, *y;
};

Mlp MakeMlp() {
  Mlp m;
  m.scope = dim::Scope::Create({});
  m.trace.reset(new trace::Trace(m.scope.get()));
  m.x = m.trace->Input("x", DType::kF32, "batch, 784");
  m.w = m.trace->Input("w", DType::kF32, "784, 10");
  m.b = m.trace->Input("b", DType::kF32, "10");
  const Tensor* h = m.trace->Binary(OpKind::kAdd, m.trace->MatMul(m.x, m.w), m.b);
  m.y = m.trace->Softmax(m.trace->Unary(OpKind::kTanh, h), -1);
  return m;
}

TEST(Program, SignatureAndListing) {
  Mlp m = MakeMlp();
  auto p = Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {m.y}, {"probs"});
  ASSERT_EQ(p->inputs().size(), 3u);
  EXPECT_EQ(p->inputs()[0].name, "x");
  EXPECT_EQ(p->input_shape_string(0), "(batch, 784)");
  EXPECT_EQ(p->outputs()[0].name, "probs");
  EXPECT_EQ(p->output_shape_string(0), "(batch, 10)");
  EXPECT_EQ(p->nodes().size(), 4u);
  ASSERT_EQ(p->solve_steps().size(), 1u);
  EXPECT_EQ(p->solve_steps()[0].input, 0);
  EXPECT_EQ(p->solve_steps()[0].axis, 0);
  EXPECT_EQ(p->variable_names(), std::vector<std::string>{"batch"});
  const std::string& t = p->text();
  EXPECT_TRUE(Contains(
      t, "program(x: f32[batch, 784], w: f32[784, 10], b: f32[10]) -> (probs: f32[batch, 10])"));
  EXPECT_TRUE(Contains(t, "batch >= 1  (from input 'x' axis 0 = batch)"));
  EXPECT_TRUE(Contains(t, "%3 = matmul(%0, %1) : f32[batch, 10]"));
  EXPECT_TRUE(Contains(t, "%6 = softmax(%5) axis=1 : f32[batch, 10]"));
  EXPECT_TRUE(Contains(t, "output 'probs' = %6"));
}

TEST(Program, IsIndependentOfItsScope) {
  std::unique_ptr<Program> p;
  {
    Mlp m = MakeMlp();
    p = Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {m.y}, {"probs"});
  }
  ShapeCheck c = p->CheckShapes({"x", "w", "b"}, {{8, 784}, {784, 10}, {10}});
  EXPECT_EQ(c.var_names, std::vector<std::string>{"batch"});
  EXPECT_EQ(c.var_values, std::vector<int64_t>{8});
  EXPECT_EQ(c.output_shapes, (std::vector<std::vector<int64_t>>{{8, 10}}));
}

TEST(Program, CheckShapesGivesPreciseErrors) {
  Mlp m = MakeMlp();
  auto p = Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {m.y}, {"probs"});
  Error e = Catch([&] { p->CheckShapes({"x", "w", "b"}, {{8, 785}, {784, 10}, {10}}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "input 'x': axis 1 is 785 but the program requires 784"));
  e = Catch([&] { p->CheckShapes({"x", "w"}, {{8, 784}, {784, 10}}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "input 'b' is missing"));
  e = Catch([&] { p->CheckShapes({"x", "w", "c"}, {{8, 784}, {784, 10}, {10}}); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  e = Catch([&] { p->CheckShapes({"x", "w", "b"}, {{0, 784}, {784, 10}, {10}}); });
  EXPECT_EQ(e.code(), Code::kConstraintViolation);
}

// An input or output whose byte size overflows int64 cannot exist; `check` must not accept
// what the runtime refuses (found by the CLI tests: --shape x=9223372036854775807,4).
TEST(Program, CheckShapesRefusesSizesThatOverflow) {
  auto s = dim::Scope::Create({}, {{"c", 0, INT64_MAX}});
  trace::Trace t(s.get());
  const trace::Tensor* x = t.Input("x", trace::DType::kI32, "r, c");
  const trace::Tensor* y = t.BroadcastTo(x, {s->Var("r"), s->Var("r"), s->Var("c")});
  auto p = Program::FromTrace(t, {x}, {x, y}, {"same", "wide"});
  Error e = Catch([&] { p->CheckShapes({"x"}, {{INT64_MAX, 4}}); });
  EXPECT_EQ(e.code(), Code::kOverflow);
  EXPECT_TRUE(
      Contains(e.message(),
               "input 'x' of shape (9223372036854775807, 4) would need more than 2^63-1 bytes"));
  e = Catch([&] {
    p->CheckShapes({"x"}, {{int64_t{1} << 31, 2}});
  });  // input 2^34 bytes, output 2^65
  EXPECT_EQ(e.code(), Code::kOverflow);
  EXPECT_TRUE(Contains(e.message(), "output 'wide'"));
  // A zero extent: no bytes at all, whatever the other extents.
  ShapeCheck c = p->CheckShapes({"x"}, {{INT64_MAX, 0}});
  EXPECT_EQ(c.output_shapes[1], (std::vector<int64_t>{INT64_MAX, INT64_MAX, 0}));
}

TEST(Program, SignatureErrors) {
  Mlp m = MakeMlp();
  Error e = Catch([&] { Program::FromTrace(*m.trace, {m.x, m.w}, {m.y}, {"probs"}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "the outputs use the input 'b', which is not listed"));
  e = Catch([&] { Program::FromTrace(*m.trace, {m.x, m.w, m.b, m.y}, {m.y}, {"probs"}); });
  EXPECT_TRUE(Contains(e.message(), "is not an input tensor"));
  const Tensor* x2 = m.trace->Input("x", DType::kF32, "3");
  e = Catch([&] { Program::FromTrace(*m.trace, {m.x, m.w, m.b, x2}, {m.y}, {"probs"}); });
  EXPECT_TRUE(Contains(e.message(), "the input name 'x' is used twice"));
  e = Catch([&] { Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {m.y, m.y}, {"p", "p"}); });
  EXPECT_TRUE(Contains(e.message(), "the output name 'p' is used twice"));
  e = Catch([&] { Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {m.y}, {""}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  e = Catch([&] { Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {m.y}, {}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  Mlp other = MakeMlp();
  e = Catch([&] { Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {other.y}, {"p"}); });
  EXPECT_EQ(e.code(), Code::kScopeMismatch);
}

TEST(Program, UnusedInputsStayInTheSignature) {
  Mlp m = MakeMlp();
  const Tensor* extra = m.trace->Input("extra", DType::kI32, "7");
  auto p = Program::FromTrace(*m.trace, {m.x, extra, m.w, m.b}, {m.y}, {"probs"});
  ASSERT_EQ(p->inputs().size(), 4u);
  EXPECT_EQ(p->inputs()[1].name, "extra");
}

TEST(Program, UnsolvableVariablesAreNamed) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "n*m");
  const Tensor* i = t.Iota(DType::kI32, {s->Var("k")}, 0);
  Error e = Catch([&] { Program::FromTrace(t, {x}, {x, i}, {"x", "i"}); });
  EXPECT_EQ(e.code(), Code::kUnsolvable);
  EXPECT_TRUE(Contains(e.message(), "'m', 'n', 'k'"));
  EXPECT_TRUE(Contains(e.message(), "shp_tensor_dim_input"));
}

TEST(Program, DimensionInputsGiveVariables) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* k = t.DimInput("k");
  const Tensor* x = t.Input("x", DType::kF32, "n, k + 1");
  const Tensor* i = t.Iota(DType::kI32, {s->Var("k")}, 0);
  const Tensor* v = t.DimValue(s->Parse("2*k"));
  auto p = Program::FromTrace(t, {x, k}, {i, v, t.Binary(OpKind::kMul, x, x)}, {"i", "v", "xx"});
  EXPECT_EQ(p->inputs()[1].role, InputRole::kDim);
  ASSERT_EQ(p->solve_steps().size(), 2u);
  EXPECT_EQ(p->solve_steps()[0].axis, -1);  // k first: it is given
  EXPECT_EQ(p->solve_steps()[1].axis, 0);
  EXPECT_TRUE(Contains(p->text(), "k >= 1  (given by input 'k')"));
  ShapeCheck c = p->CheckShapes({"x", "k"}, {{3, 6}, {5}});
  EXPECT_EQ(c.output_shapes[0], std::vector<int64_t>{5});
  Error e = Catch([&] { p->CheckShapes({"x", "k"}, {{3, 7}, {5}}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
}

// Issue 17, finding 7: with only dimension inputs the message has no empty list of shape
// specifications ("Using the following shape specifications: .").
TEST(Program, OnlyDimensionInputsGiveNoEmptySpecificationList) {
  auto s = dim::Scope::Create({"k >= 4"});
  trace::Trace t(s.get());
  const Tensor* k = t.DimInput("k");
  const Tensor* i = t.Iota(DType::kI32, {s->Var("k")}, 0);
  auto p = Program::FromTrace(t, {k}, {i}, {"i"});
  EXPECT_EQ(p->CheckShapes({"k"}, {{5}}).output_shapes[0], std::vector<int64_t>{5});
  Error e = Catch([&] { p->CheckShapes({"k"}, {{2}}); });
  EXPECT_EQ(e.code(), Code::kConstraintViolation);
  EXPECT_FALSE(Contains(e.message(), "shape specifications")) << e.message();
  EXPECT_FALSE(Contains(e.message(), ": .")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "'k' = 2 (given explicitly)")) << e.message();
  // An unknown name is quoted escaped and bounded.
  e = Catch([&] { p->CheckShapes({"k\x1b[2J" + std::string(100000, 'z')}, {{5}}); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(e.message(), "named 'k\\x1b[2Jzzz")) << e.message();
  EXPECT_LT(e.message().size(), 400u);
}

TEST(Program, SolvesProductsPowersAndMaxWithKnownParts) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "a*b, a, c^2, max(d, 3), 2*e + a");
  auto p = Program::FromTrace(t, {x}, {x}, {"y"});
  EXPECT_EQ(p->solve_steps().size(), 5u);
  ShapeCheck c = p->CheckShapes({"x"}, {{12, 3, 9, 7, 13}});
  EXPECT_EQ(c.var_names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(c.var_values, (std::vector<int64_t>{3, 4, 3, 7, 5}));
}

TEST(Program, CarriesConstraintsAndAssertions) {
  auto s = dim::Scope::Create({"n >= 2", "n <= 4096"});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "n");
  const Tensor* y = t.Reshape(x, {nullptr, s->Constant(4)});
  s->Check(s->Var("n"), dim::Cmp::kLe, s->Constant(1024), "n is at most 1024");
  auto p = Program::FromTrace(t, {x}, {y}, {"y"});
  EXPECT_EQ(p->constraint_texts(), (std::vector<std::string>{"n >= 2", "n <= 4096"}));
  ASSERT_EQ(p->assertion_texts().size(), 2u);
  EXPECT_EQ(p->assertion_texts()[0], "mod(n, 4) == 0");
  EXPECT_EQ(p->assertion_messages()[1], "n is at most 1024");
  EXPECT_EQ(p->output_shape_string(0), "(floordiv(n, 4), 4)");
  EXPECT_EQ(p->CheckShapes({"x"}, {{16}}).output_shapes[0], (std::vector<int64_t>{4, 4}));
  Error e = Catch([&] { p->CheckShapes({"x"}, {{18}}); });
  EXPECT_EQ(e.code(), Code::kConstraintViolation);
  EXPECT_TRUE(Contains(e.message(), "must be divisible by 4"));
  e = Catch([&] { p->CheckShapes({"x"}, {{2048}}); });
  EXPECT_TRUE(Contains(e.message(), "n is at most 1024"));
  e = Catch([&] { p->CheckShapes({"x"}, {{8192}}); });
  EXPECT_TRUE(Contains(e.message(), "n <= 4096"));
  EXPECT_TRUE(Contains(p->text(), "constraints:\n  n >= 2\n  n <= 4096\n"));
  EXPECT_TRUE(Contains(p->text(), "mod(n, 4) == 0  \"reshape: the size n"));
}

TEST(Program, DeclaredRangesAreKept) {
  auto s = dim::Scope::Create({}, {{"n", 0, 100}});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "n");
  auto p = Program::FromTrace(t, {x}, {x}, {"y"});
  EXPECT_TRUE(Contains(p->text(), "0 <= n <= 100"));
  EXPECT_EQ(p->CheckShapes({"x"}, {{0}}).var_values[0], 0);
  EXPECT_EQ(Catch([&] { p->CheckShapes({"x"}, {{101}}); }).code(), Code::kConstraintViolation);
}

TEST(Program, ConcurrentUse) {
  Mlp m = MakeMlp();
  auto p = Program::FromTrace(*m.trace, {m.x, m.w, m.b}, {m.y}, {"probs"});
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 1; i <= 200; ++i) {
        ShapeCheck c = p->CheckShapes({"x", "w", "b"}, {{i, 784}, {784, 10}, {10}});
        if (c.output_shapes[0][0] == i && p->text().size() > 10) ++ok[k];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(ok[k], 200);
}

// Fill defaults (jvp's default tangents): the shape comes from the other inputs, so the solve
// recipe never reads the input, and an input whose shape has a variable no other input gives
// cannot have one; the value must be finite or exact in the dtype.
TEST(Program, FillDefaults) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF32, "n, 2");
  const double one = 1;
  const Tensor* tx = t.DerivedInput("x.tangent", trace::InputRole::kTangent, DType::kF32,
                                    x->type.shape, nullptr, 0, &one);
  const Tensor* y = t.Binary(OpKind::kMul, x, tx);
  auto p = Program::FromTrace(t, {x, tx}, {y}, {"y"});
  EXPECT_TRUE(p->inputs()[1].has_fill);
  EXPECT_EQ(p->SchemaVersionNeeded(), 11u);
  ASSERT_EQ(p->solve_steps().size(), 1u);
  EXPECT_EQ(p->solve_steps()[0].input, 0);
  // Left out, it takes the shape the others give; given, it is checked.
  EXPECT_EQ(p->CheckShapes({"x"}, {{3, 2}}).output_shapes,
            (std::vector<std::vector<int64_t>>{{3, 2}}));
  EXPECT_EQ(Catch([&] {
              p->CheckShapes({"x", "x.tangent"}, {{3, 2}, {4, 2}});
            }).code(),
            Code::kShapeMismatch);
  std::vector<int64_t> values;
  const int64_t xs[] = {5, 2};
  const int64_t* shapes[] = {xs, nullptr};
  const size_t ranks[] = {2, Program::kAbsentRank};
  EXPECT_EQ(p->TryCheckShapesLockFree(shapes, ranks, &values), 0);
  // Only x may be left out of nothing: x has no default.
  EXPECT_TRUE(Contains(Catch([&] {
                         p->CheckShapes({"x.tangent"}, {{3, 2}});
                       }).message(),
                       "input 'x' is missing"));

  const Tensor* m = t.DerivedInput("m.tangent", trace::InputRole::kTangent, DType::kF32,
                                   {s->Var("m")}, nullptr, 0, &one);
  Error e = Catch([&] { Program::FromTrace(t, {x, m}, {t.Binary(OpKind::kAdd, m, m)}, {"y"}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(),
                       "input 'm.tangent' cannot have a fill default: its shape uses the variable "
                       "'m', which no other input determines"))
      << e.message();

  const double bad[] = {std::nan(""), INFINITY, 1e39};
  for (double v : bad) {
    e = Catch([&] {
      t.DerivedInput("z.tangent", trace::InputRole::kTangent, DType::kF32, {}, nullptr, 0, &v);
    });
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_TRUE(Contains(e.message(), "which is not a finite f32 value")) << e.message();
  }
  EXPECT_EQ(trace::FillProblem(DType::kF16, 65504), "");
  EXPECT_NE(trace::FillProblem(DType::kF16, 65505), "");
  EXPECT_EQ(trace::FillProblem(DType::kI64, -9223372036854775808.0), "");
  EXPECT_NE(trace::FillProblem(DType::kI64, 9223372036854775808.0), "");
  EXPECT_EQ(trace::FillProblem(DType::kU8, 255), "");
  EXPECT_NE(trace::FillProblem(DType::kU8, -1), "");
  EXPECT_EQ(trace::FillProblem(DType::kBool, 1), "");
  EXPECT_EQ(trace::FillText(0.1), "0.1");
  EXPECT_EQ(trace::FillText(1), "1");
}

}  // namespace
}  // namespace program
}  // namespace shp
