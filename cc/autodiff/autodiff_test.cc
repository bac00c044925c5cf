// The transformations as a user composes them: parameters with defaults, grad with its
// default cotangent, second order (grad of grad, jvp of grad), derived programs serialized and
// loaded back, binding by name only, and the errors for bad requests.
#include "cc/autodiff/autodiff.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cc/autodiff/ad_check.h"
#include "cc/base/testing.h"
#include "cc/runtime/runtime.h"

namespace shp {
namespace autodiff {
namespace {

using program::InputRole;
using program::OutputRole;
using program::Program;
using ::shp::testing::Catch;
using ::shp::testing::Contains;
using testing::Array;
using testing::Arrays;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

Arrays RunProgram(std::shared_ptr<const Program> p, const Arrays& in) {
  return testing::Run(std::move(p), in);
}

std::shared_ptr<const Program> Reload(const Program& p) {
  std::string bytes = p.Serialize();
  return Program::Load(bytes.data(), bytes.size());
}

Array F64(std::vector<int64_t> shape, std::vector<double> data) {
  Array a;
  a.shape = std::move(shape);
  a.data = std::move(data);
  return a;
}

// loss = reduce_sum(x * x * w) with x of shape (n, 2) and the parameter w of shape (2,).
std::shared_ptr<const Program> WeightedSquares() {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const double w[] = {3.0, -1.5};
  const Tensor* x = t.Input("x", DType::kF64, "n, 2");
  const Tensor* pw = t.Parameter("w", DType::kF64, {2}, w, sizeof w);
  const Tensor* y = t.Binary(OpKind::kMul, t.Binary(OpKind::kMul, x, x), pw);
  return Program::FromTrace(t, {x, pw}, {t.Reduce(OpKind::kReduceSum, y, {}, false)}, {"loss"});
}

TEST(Autodiff, ParametersUseTheirDefaultUnlessGivenByName) {
  std::shared_ptr<const Program> p = WeightedSquares();
  ASSERT_EQ(p->inputs()[1].role, InputRole::kParameter);
  ASSERT_GE(p->inputs()[1].default_buffer, 0);
  for (const auto& q : {p, Reload(*p)}) {
    Arrays in = {{"x", F64({2, 2}, {1, 2, 3, 4})}};
    EXPECT_EQ(RunProgram(q, in).at("loss").data,
              std::vector<double>{(1 + 9) * 3.0 - (4 + 16) * 1.5});
    in["w"] = F64({2}, {1, 1});
    EXPECT_EQ(RunProgram(q, in).at("loss").data, std::vector<double>{30.0});
    // A given value is checked for shape.
    in["w"] = F64({3}, {1, 1, 1});
    Error e = Catch([&] { RunProgram(q, in); });
    EXPECT_EQ(e.code(), Code::kShapeMismatch) << e.message();
    EXPECT_TRUE(Contains(e.message(), "'w'")) << e.message();
  }
}

TEST(Autodiff, GradHasADefaultCotangentOfOne) {
  std::shared_ptr<const Program> p = WeightedSquares();
  std::shared_ptr<const Program> g = Grad(*p, "loss", {"x", "w"});
  ASSERT_EQ(g->outputs().size(), 3u);
  EXPECT_EQ(g->outputs()[0].name, "loss");
  EXPECT_EQ(g->outputs()[1].name, "x.grad");
  EXPECT_EQ(g->outputs()[1].role, OutputRole::kGrad);
  EXPECT_EQ(g->outputs()[2].name, "w.grad");
  EXPECT_EQ(g->inputs().back().name, "loss.cotangent");
  EXPECT_EQ(g->inputs().back().role, InputRole::kCotangent);
  for (const auto& q : {g, Reload(*g)}) {
    Arrays in = {{"x", F64({2, 2}, {1, 2, 3, 4})}};
    Arrays out = RunProgram(q, in);
    EXPECT_EQ(out.at("x.grad").data, (std::vector<double>{6, -6, 18, -12}));  // 2 x w
    EXPECT_EQ(out.at("w.grad").data, (std::vector<double>{10, 20}));          // sum x^2
    in["loss.cotangent"] = F64({}, {0.5});
    EXPECT_EQ(RunProgram(q, in).at("w.grad").data, (std::vector<double>{5, 10}));
  }
}

// f(x) = x^3 for a scalar x: grad(grad(f)) = 6x, and the derived names do not collide.
TEST(Autodiff, GradOfGradOfAScalarFunction) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF64, "");
  const Tensor* y = t.Binary(OpKind::kMul, t.Binary(OpKind::kMul, x, x), x);
  std::shared_ptr<const Program> p = Program::FromTrace(t, {x}, {y}, {"y"});
  std::shared_ptr<const Program> g1 = Grad(*p, "y", {"x"});
  std::shared_ptr<const Program> g2 = Grad(*Reload(*g1), "x.grad", {"x"});
  ASSERT_EQ(g2->outputs().size(), 2u);
  EXPECT_EQ(g2->outputs()[0].name, "x.grad");
  EXPECT_EQ(g2->outputs()[1].name, "x.grad.grad");
  for (double v : {-2.0, 0.5, 3.0}) {
    Arrays out = RunProgram(Reload(*g2), {{"x", F64({}, {v})}});
    EXPECT_DOUBLE_EQ(out.at("x.grad").data[0], 3 * v * v);
    EXPECT_DOUBLE_EQ(out.at("x.grad.grad").data[0], 6 * v);
  }
}

// A Hessian-vector product: jvp(grad(f)) for f(x) = sum(exp(x) * x), H = diag(exp(x)(x + 2)).
TEST(Autodiff, JvpOfGradIsAHessianVectorProduct) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF64, "n");
  const Tensor* y = t.Binary(OpKind::kMul, t.Unary(OpKind::kExp, x), x);
  std::shared_ptr<const Program> p =
      Program::FromTrace(t, {x}, {t.Reduce(OpKind::kReduceSum, y, {}, false)}, {"f"});
  std::shared_ptr<const Program> hvp = Jvp(*Reload(*Grad(*p, "f", {"x"})), {"x"});
  const std::vector<double> xs = {-1, 0.25, 2}, v = {0.5, -2, 1};
  Arrays out = RunProgram(Reload(*hvp), {{"x", F64({3}, xs)}, {"x.tangent", F64({3}, v)}});
  const std::vector<double>& h = out.at("x.grad.tangent").data;
  ASSERT_EQ(h.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(h[i], std::exp(xs[i]) * (xs[i] + 2) * v[i], 1e-12) << i;
}

// tenferro-rs #1968's pitfall: inputs bound by position. Here a derived program has two
// same-shape inputs; values given in the "wrong" order follow their names.
TEST(Autodiff, InputsBindByNameNeverByPosition) {
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* a = t.Input("a", DType::kF64, "n");
  const Tensor* b = t.Input("b", DType::kF64, "n");
  std::shared_ptr<const Program> p =
      Program::FromTrace(t, {a, b}, {t.Binary(OpKind::kSub, a, b)}, {"d"});
  std::shared_ptr<const Program> j = Jvp(*p, {"a", "b"});
  // Arrays is a map: Run passes the names in sorted order, not the declared one.
  Arrays in = {{"b.tangent", F64({2}, {0, 0})},
               {"a.tangent", F64({2}, {1, 1})},
               {"b", F64({2}, {10, 20})},
               {"a", F64({2}, {1, 2})}};
  Arrays out = RunProgram(j, in);
  EXPECT_EQ(out.at("d").data, (std::vector<double>{-9, -18}));
  EXPECT_EQ(out.at("d.tangent").data, (std::vector<double>{1, 1}));

  // Without names a program with defaults refuses to run, and says to bind by name.
  std::shared_ptr<const Program> g = Grad(*WeightedSquares(), "loss", {"x"});
  runtime::Runtime rt(g, runtime::Options());
  const int64_t shape[] = {1, 2};
  const double xs[] = {1, 2};
  runtime::ArrayView view{DType::kF64, shape, 2, xs};
  struct NoSink : runtime::OutputSink {
    void* Output(size_t, DType, const int64_t*, size_t) override { return nullptr; }
  } sink;
  Error e = Catch([&] { rt.Run(nullptr, &view, 1, &sink); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "bind every input by name")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "'w'")) << e.message();

  // A tangent given under the parameter's name: the tangent is missing, and the message says
  // what it is.
  std::shared_ptr<const Program> jw = Jvp(*WeightedSquares(), {"w"});
  e = Catch([&] { RunProgram(jw, {{"x", F64({1, 2}, {1, 2})}, {"w", F64({2}, {1, 0})}}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "'w.tangent'")) << e.message();
  EXPECT_TRUE(Contains(e.message(), "the tangent of 'w'")) << e.message();
}

TEST(Autodiff, BadRequestsNameWhatIsWrong) {
  std::shared_ptr<const Program> p = WeightedSquares();
  Error e = Catch([&] { Jvp(*p, {"z"}); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(e.message(), "no input 'z' (the inputs: x, w)")) << e.message();
  e = Catch([&] { Vjp(*p, {"nope"}, {"x"}); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(e.message(), "no output 'nope'")) << e.message();
  e = Catch([&] { Jvp(*p, {"x", "x"}); });
  EXPECT_TRUE(Contains(e.message(), "names 'x' twice")) << e.message();
  // Integer inputs carry no derivative.
  auto s = dim::Scope::Create({});
  trace::Trace t(s.get());
  const Tensor* k = t.Input("k", DType::kI32, "n");
  std::shared_ptr<const Program> q = Program::FromTrace(t, {k}, {t.Unary(OpKind::kNeg, k)}, {"m"});
  e = Catch([&] { Jvp(*q, {"k"}); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_TRUE(Contains(e.message(), "dtype i32")) << e.message();
  // grad needs a scalar output.
  const Tensor* x = t.Input("x", DType::kF32, "n");
  std::shared_ptr<const Program> r = Program::FromTrace(t, {x}, {t.Unary(OpKind::kExp, x)}, {"e"});
  e = Catch([&] { Grad(*r, "e", {"x"}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "needs a scalar output")) << e.message();
  // User names cannot take the mark of derived names.
  e = Catch([&] { t.Input("x.tangent", DType::kF32, "n"); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "reserved")) << e.message();
  e = Catch([&] { Program::FromTrace(t, {x}, {x}, {"y.grad"}); });
  EXPECT_TRUE(Contains(e.message(), "reserved")) << e.message();
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
