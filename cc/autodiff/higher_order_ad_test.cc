// Transformations composed: the JVP of a VJP (a Hessian-vector product) of a small MLP loss
// against central finite differences of its gradient, and the VJP of a VJP program loaded
// from bytes (second order), at batch sizes 1, 2 and 5.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cc/autodiff/ad_check.h"
#include "cc/autodiff/autodiff.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace autodiff {
namespace {

using program::Program;
using testing::Array;
using testing::Arrays;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

const int64_t kBatches[] = {1, 2, 5};

// loss = mean(log(softmax(tanh(x @ w1) @ w2, -1))): x (b, 4), w1 (4, 5), w2 (5, 3).
std::shared_ptr<const Program> MlpLoss(dim::Scope* scope) {
  trace::Trace t(scope);
  const Tensor* x = t.Input("x", DType::kF64, "b, 4");
  const Tensor* w1 = t.Input("w1", DType::kF64, "4, 5");
  const Tensor* w2 = t.Input("w2", DType::kF64, "5, 3");
  const Tensor* h = t.Unary(OpKind::kTanh, t.MatMul(x, w1));
  const Tensor* logp = t.Unary(OpKind::kLog, t.Softmax(t.MatMul(h, w2), -1));
  const Tensor* loss = t.Reduce(OpKind::kReduceMean, logp, {}, false);
  return Program::FromTrace(t, {x, w1, w2}, {loss}, {"loss"});
}

Array Random(std::vector<int64_t> shape, std::mt19937_64& rng) {
  Array a{DType::kF64, shape, {}};
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::uniform_real_distribution<double> u(-1, 1);
  for (size_t i = 0; i < n; ++i) a.data.push_back(u(rng));
  return a;
}

std::shared_ptr<const Program> Reload(const Program& p) {
  const std::string bytes = p.Serialize();
  return Program::Load(bytes.data(), bytes.size());
}

TEST(HigherOrderAd, HessianVectorProductMatchesFiniteDifferencesOfTheGradient) {
  auto scope = dim::Scope::Create({});
  std::shared_ptr<const Program> loss = MlpLoss(scope.get());
  std::shared_ptr<const Program> grad(Vjp(*loss, {"loss"}, {"w1", "w2"}));
  std::mt19937_64 rng(7);
  for (int64_t b : kBatches) {
    SCOPED_TRACE("batch " + std::to_string(b));
    Arrays in{{"x", Random({b, 4}, rng)},
              {"w1", Random({4, 5}, rng)},
              {"w2", Random({5, 3}, rng)},
              {"loss.cotangent", Array{DType::kF64, {}, {1.0}}}};
    const Array v1 = Random({4, 5}, rng), v2 = Random({5, 3}, rng);
    for (const auto& g : {grad, Reload(*grad)}) {
      SCOPED_TRACE(g == grad ? "traced" : "loaded");
      std::shared_ptr<const Program> hvp(Jvp(*g, {"w1", "w2"}));
      const size_t ni = g->inputs().size(), no = g->outputs().size();
      Arrays hin = in;
      hin[hvp->inputs().at(ni).name] = v1;
      hin[hvp->inputs().at(ni + 1).name] = v2;
      const Arrays hout = testing::Run(hvp, hin);
      // The tangents of w1.grad and w2.grad follow those of loss.
      const Array& hv1 = hout.at(hvp->outputs().at(no + 1).name);
      const Array& hv2 = hout.at(hvp->outputs().at(no + 2).name);
      EXPECT_EQ(hvp->outputs().at(no + 1).name, "w1.grad.tangent");

      const double h = 1e-5;
      Arrays plus = in, minus = in;
      for (size_t i = 0; i < v1.data.size(); ++i) {
        plus["w1"].data[i] += h * v1.data[i];
        minus["w1"].data[i] -= h * v1.data[i];
      }
      for (size_t i = 0; i < v2.data.size(); ++i) {
        plus["w2"].data[i] += h * v2.data[i];
        minus["w2"].data[i] -= h * v2.data[i];
      }
      const Arrays gp = testing::Run(g, plus), gm = testing::Run(g, minus);
      // First order too: <grad, v> against finite differences of the loss.
      const Arrays g0 = testing::Run(g, in);
      const double fd_loss = (gp.at("loss").data[0] - gm.at("loss").data[0]) / (2 * h);
      double gv = 0;
      for (size_t i = 0; i < v1.data.size(); ++i) gv += g0.at("w1.grad").data[i] * v1.data[i];
      for (size_t i = 0; i < v2.data.size(); ++i) gv += g0.at("w2.grad").data[i] * v2.data[i];
      EXPECT_NEAR(gv, fd_loss, 1e-8 * (1 + std::fabs(fd_loss)));
      double norm = 0;
      const std::pair<std::string, const Array*> hvs[] = {{"w1.grad", &hv1}, {"w2.grad", &hv2}};
      for (const auto& [name, hv] : hvs) {
        ASSERT_EQ(hv->shape, gp.at(name).shape) << name;
        for (size_t i = 0; i < hv->data.size(); ++i) {
          const double fd = (gp.at(name).data[i] - gm.at(name).data[i]) / (2 * h);
          EXPECT_NEAR(hv->data[i], fd, 1e-7 * (1 + std::fabs(fd))) << name << "[" << i << "]";
          norm += std::fabs(hv->data[i]);
        }
      }
      EXPECT_GT(norm, 1e-3);  // not trivially zero
    }
  }
}

// The gradient program, loaded from bytes, differentiated again: its JVP against finite
// differences (a Hessian-vector product) and its VJP (second order) against its JVP; then
// the VJP's own derived programs from bytes once more (third order).
TEST(HigherOrderAd, VjpOfALoadedVjpProgram) {
  auto scope = dim::Scope::Create({});
  std::shared_ptr<const Program> loss = MlpLoss(scope.get());
  std::shared_ptr<const Program> grad = Reload(*Vjp(*loss, {"loss"}, {"w1", "w2"}));
  std::shared_ptr<const Program> second =
      Reload(*Vjp(*grad, {"w1.grad", "w2.grad"}, {"x", "w1", "w2"}));
  std::mt19937_64 rng(11);
  for (int64_t b : kBatches) {
    SCOPED_TRACE("batch " + std::to_string(b));
    Arrays in{{"x", Random({b, 4}, rng)},
              {"w1", Random({4, 5}, rng)},
              {"w2", Random({5, 3}, rng)},
              {"loss.cotangent", Array{DType::kF64, {}, {1.0}}}};
    testing::CheckProgram(grad, in, static_cast<uint32_t>(b));

    // The second-order program: its cotangent inputs follow grad's inputs.
    Arrays in2 = in;
    const size_t ni = grad->inputs().size();
    in2[second->inputs().at(ni).name] = Random({4, 5}, rng);
    in2[second->inputs().at(ni + 1).name] = Random({5, 3}, rng);
    testing::CheckProgram(second, in2, static_cast<uint32_t>(b) + 100);
  }
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
