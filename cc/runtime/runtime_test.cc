// Runtime: strict binding and every error path, plan cache (results independent of the cache
// state), execution of the operations against naive references, concurrent runtimes.
#include "cc/runtime/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <pthread.h>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/runtime/test_arrays.h"
#include "cc/trace/trace.h"

namespace shp {
namespace runtime {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;
using ::shp::testing::OnSmallStack;
using testing::Arr;
using testing::RunAll;
using testing::VectorSink;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

template <typename T>
Arr Make(DType dt, std::vector<int64_t> shape, const std::vector<T>& values) {
  Arr a;
  a.dtype = dt;
  a.shape = std::move(shape);
  a.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

Arr RandomF32(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return Make<float>(DType::kF32, std::move(shape), v);
}

struct Traced {
  std::unique_ptr<dim::Scope> scope;
  std::unique_ptr<trace::Trace> t;
  Traced() : scope(dim::Scope::Create({})), t(new trace::Trace(scope.get())) {}
  explicit Traced(const std::vector<std::string>& constraints)
      : scope(dim::Scope::Create(constraints)), t(new trace::Trace(scope.get())) {}
  std::shared_ptr<const program::Program> Build(const std::vector<const Tensor*>& in,
                                                const std::vector<const Tensor*>& out) {
    std::vector<std::string> names;
    for (size_t i = 0; i < out.size(); ++i) names.push_back("out" + std::to_string(i));
    return std::shared_ptr<const program::Program>(program::Program::FromTrace(*t, in, out, names));
  }
};

// ---- A small MLP: matmul, bias add, relu via max, softmax ----

struct Mlp {
  Traced tr;
  std::shared_ptr<const program::Program> p;
  Arr w1, b1, w2, b2;
};

std::unique_ptr<Mlp> MakeMlp() {
  std::unique_ptr<Mlp> m(new Mlp);
  trace::Trace& t = *m->tr.t;
  m->w1 = RandomF32({6, 5}, 1);
  m->b1 = RandomF32({5}, 2);
  m->w2 = RandomF32({5, 3}, 3);
  m->b2 = RandomF32({3}, 4);
  const Tensor* x = t.Input("x", DType::kF32, "batch, 6");
  auto c = [&](const Arr& a) {
    return t.Constant(a.dtype, a.shape, a.bytes.data(), a.bytes.size());
  };
  float zero = 0;
  const Tensor* z = t.Constant(DType::kF32, {}, &zero, 4);
  const Tensor* h =
      t.Binary(OpKind::kMax, t.Binary(OpKind::kAdd, t.MatMul(x, c(m->w1)), c(m->b1)), z);
  const Tensor* y = t.Softmax(t.Binary(OpKind::kAdd, t.MatMul(h, c(m->w2)), c(m->b2)), -1);
  m->p = m->tr.Build({x}, {y});
  return m;
}

std::vector<float> MlpReference(const Mlp& m, const Arr& x) {
  int64_t b = x.shape[0];
  std::vector<float> out(static_cast<size_t>(b * 3));
  for (int64_t r = 0; r < b; ++r) {
    float h[5];
    for (int j = 0; j < 5; ++j) {
      double s = m.b1.data<float>()[j];
      for (int k = 0; k < 6; ++k)
        s += double(x.data<float>()[r * 6 + k]) * m.w1.data<float>()[k * 5 + j];
      h[j] = std::max(0.f, static_cast<float>(s));
    }
    double l[3], mx = -1e30, sum = 0;
    for (int j = 0; j < 3; ++j) {
      double s = m.b2.data<float>()[j];
      for (int k = 0; k < 5; ++k) s += double(h[k]) * m.w2.data<float>()[k * 3 + j];
      l[j] = s;
      mx = std::max(mx, s);
    }
    for (int j = 0; j < 3; ++j) sum += std::exp(l[j] - mx);
    for (int j = 0; j < 3; ++j)
      out[static_cast<size_t>(r * 3 + j)] = static_cast<float>(std::exp(l[j] - mx) / sum);
  }
  return out;
}

void ExpectNear(const Arr& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], tol) << "at " << i;
}

TEST(Runtime, MlpAtSeveralBatches) {
  auto m = MakeMlp();
  Runtime rt(m->p, Options{});
  for (int64_t b : {1, 7, 64, 2, 7}) {
    Arr x = RandomF32({b, 6}, static_cast<uint32_t>(10 + b));
    std::vector<Arr> out = RunAll(rt, {"x"}, {x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{b, 3}));
    ExpectNear(out[0], MlpReference(*m, x));
  }
  EXPECT_EQ(rt.stats().plans_built, 4u);
  EXPECT_EQ(rt.stats().cache_hits, 1u);
  EXPECT_GT(rt.stats().last_plan_build_ns, 0);
}

// Issue 36: z + x * tanh(y) (the update of every LSTM cell) crashed or gave garbage: the
// register program fused the Mul into the Add and the tanh into that same Mul. Fused, unfused
// (Options::fuse_elementwise) and SHP_FUSION=off agree bit for bit and match a double
// reference, at a symbolic and a static batch, on 1 and 2 threads.
TEST(Runtime, FusedMulAddOfUnaryMatchesUnfused) {
  for (const char* shape : {"B, 4", "3, 4"}) {
    Traced tr;
    trace::Trace& t = *tr.t;
    const Tensor* x = t.Input("x", DType::kF32, shape);
    const Tensor* y = t.Input("y", DType::kF32, shape);
    const Tensor* z = t.Input("z", DType::kF32, shape);
    const Tensor* out =
        t.Binary(OpKind::kAdd, z, t.Binary(OpKind::kMul, x, t.Unary(OpKind::kTanh, y)));
    auto p = tr.Build({x, y, z}, {out});
    const bool symbolic = shape[0] == 'B';
    for (int threads : {1, 2}) {
      Options on, off;
      on.num_threads = off.num_threads = threads;
      off.fuse_elementwise = false;
      Runtime fused(p, on), plain(p, off);
      ASSERT_EQ(0, setenv(kFusionEnv, "off", 1));
      Runtime env_off(p, on);
      ASSERT_EQ(0, unsetenv(kFusionEnv));
      for (int64_t b :
           symbolic ? std::vector<int64_t>{1, 3, 37, 1000, 70000} : std::vector<int64_t>{3}) {
        std::vector<Arr> in = {RandomF32({b, 4}, 1), RandomF32({b, 4}, 2), RandomF32({b, 4}, 3)};
        std::vector<Arr> f = RunAll(fused, {"x", "y", "z"}, in);
        EXPECT_EQ(f[0].bytes, RunAll(plain, {"x", "y", "z"}, in)[0].bytes) << shape << " " << b;
        EXPECT_EQ(f[0].bytes, RunAll(env_off, {"x", "y", "z"}, in)[0].bytes) << shape << " " << b;
        for (int64_t i = 0; i < b * 4; ++i) {
          const double want = in[2].data<float>()[i] +
                              double(in[0].data<float>()[i]) * std::tanh(in[1].data<float>()[i]);
          ASSERT_NEAR(want, f[0].data<float>()[i], 1e-6) << shape << " batch " << b << " at " << i;
        }
      }
    }
  }
  EXPECT_TRUE(FusionFromEnv());
}

// The MLP's matmul + bias (+ relu) run as one step with the kernel's epilogue: outputs are
// bit-identical to the unfused ops, at every batch, with 1 and 2 threads. A bias input fuses;
// a matmul whose result has another use, max with -0.0 and bias + matmul (order) are left
// unfused; all are right.
TEST(Runtime, MatmulEpilogueFusionIsBitIdentical) {
  auto m = MakeMlp();
  for (int threads : {1, 2}) {
    Options on, off;
    on.num_threads = off.num_threads = threads;
    off.fuse_matmul_epilogue = false;
    Runtime fused(m->p, on), plain(m->p, off);
    for (int64_t b : {1, 3, 64, 300, 2000}) {
      Arr x = RandomF32({b, 6}, static_cast<uint32_t>(b));
      x.data<float>()[0] = -0.0f;
      std::vector<Arr> f = RunAll(fused, {"x"}, {x});
      std::vector<Arr> u = RunAll(plain, {"x"}, {x});
      ASSERT_EQ(f[0].bytes, u[0].bytes) << "batch " << b << ", " << threads << " threads";
      ExpectNear(f[0], MlpReference(*m, x));
    }
  }
  // Patterns that must not fuse (each checked against a plain reference computation).
  Traced tr;
  trace::Trace& t = *tr.t;
  Arr w = RandomF32({4, 3}, 7);
  const Tensor* x = t.Input("x", DType::kF32, "batch, 4");
  const Tensor* bias = t.Input("bias", DType::kF32, "3");
  const Tensor* wc = t.Constant(DType::kF32, w.shape, w.bytes.data(), w.bytes.size());
  const Tensor* mm = t.MatMul(x, wc);
  float nz = -0.0f;
  const Tensor* negzero = t.Constant(DType::kF32, {}, &nz, 4);
  // The add fuses (a bias input); the max with -0.0 does not.
  const Tensor* r1 = t.Binary(OpKind::kMax, t.Binary(OpKind::kAdd, t.MatMul(x, wc), bias), negzero);
  const Tensor* r2 = t.Binary(OpKind::kAdd, bias, t.MatMul(x, wc));
  auto p = tr.Build({x, bias}, {r1, r2, mm});
  Arr xs = RandomF32({5, 4}, 8), bs = RandomF32({3}, 9);
  Options o;
  Runtime rt(p, o);
  std::vector<Arr> out = RunAll(rt, {"x", "bias"}, {xs, bs});
  ASSERT_EQ(out.size(), 3u);
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t j = 0; j < 3; ++j) {
      double s = 0;
      for (int64_t k = 0; k < 4; ++k)
        s += double(xs.data<float>()[r * 4 + k]) * w.data<float>()[k * 3 + j];
      const size_t at = static_cast<size_t>(r * 3 + j);
      EXPECT_NEAR(out[2].data<float>()[at], s, 1e-5);
      EXPECT_NEAR(out[1].data<float>()[at], s + bs.data<float>()[j], 1e-5);
      EXPECT_NEAR(out[0].data<float>()[at], std::max(0.0, s + bs.data<float>()[j]), 1e-5);
    }
  }
}

TEST(Runtime, ResultsDoNotDependOnCacheState) {
  auto m = MakeMlp();
  Options small;
  small.plan_cache_capacity = 1;
  Options none;
  none.plan_cache_capacity = 0;
  Runtime a(m->p, small), b(m->p, Options{}), c(m->p, none);
  for (int round = 0; round < 3; ++round) {
    for (int64_t batch : {3, 9, 3, 1}) {
      Arr x = RandomF32({batch, 6}, static_cast<uint32_t>(100 + batch));
      Arr ra = RunAll(a, {"x"}, {x})[0], rb = RunAll(b, {}, {x})[0], rc = RunAll(c, {"x"}, {x})[0];
      EXPECT_EQ(ra.bytes, rb.bytes);
      EXPECT_EQ(ra.bytes, rc.bytes);
    }
  }
  EXPECT_EQ(a.stats().plans_built, 12u);  // every call alternates shapes with capacity 1
  EXPECT_EQ(b.stats().plans_built, 3u);
  EXPECT_EQ(b.stats().cache_hits, 9u);
  EXPECT_EQ(c.stats().plans_built, 12u);
}

TEST(Runtime, StrictBindingErrors) {
  Traced tr;
  const Tensor* x = tr.t->Input("x", DType::kF32, "batch, 4");
  const Tensor* w = tr.t->Input("w", DType::kF32, "4, 2");
  auto p = tr.Build({x, w}, {tr.t->MatMul(x, w)});
  Runtime rt(p, Options{});
  Arr xa = RandomF32({3, 4}, 1), wa = RandomF32({4, 2}, 2);
  Error e = Catch([&] { RunAll(rt, {"x", "v"}, {xa, wa}); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(e.message(), "no input named 'v' (its inputs: 'x', 'w')"));
  e = Catch([&] { RunAll(rt, {"x", "x"}, {xa, xa}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "input 'x' given more than once"));
  e = Catch([&] { RunAll(rt, {"w"}, {wa}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "input 'x' is missing"));
  e = Catch([&] { RunAll(rt, {}, {xa}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(
      e.message(), "input 'w' is missing: the program has 2 inputs ('x', 'w') but 1 was given"));
  Arr xi = Make<int32_t>(DType::kI32, {3, 4}, std::vector<int32_t>(12, 1));
  e = Catch([&] { RunAll(rt, {"w", "x"}, {wa, xi}); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_TRUE(Contains(e.message(), "input 'x' has dtype i32 but the program requires f32"));
  Arr bad = RandomF32({3, 5}, 3);
  e = Catch([&] { RunAll(rt, {"x", "w"}, {bad, wa}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "input 'x': axis 1 is 5 but the program requires 4"));
  Arr rank3 = RandomF32({3, 4, 1}, 3);
  e = Catch([&] { RunAll(rt, {"x", "w"}, {rank3, wa}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "input 'x'"));
  // Still fully usable, and nothing was planned for the failed calls.
  EXPECT_EQ(rt.stats().plans_built, 0u);
  std::vector<Arr> out = RunAll(rt, {"w", "x"}, {wa, xa});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 2}));
}

TEST(Runtime, ConstraintViolationAndDryRun) {
  Traced tr({"n >= 2", "n <= 8"});
  const Tensor* x = tr.t->Input("x", DType::kF32, "n");
  const Tensor* y = tr.t->Concatenate({x, x}, 0);
  auto p = tr.Build({x}, {y});
  Runtime rt(p, Options{});
  int64_t n9 = 9, n4 = 4;
  ArrayView v9{DType::kF32, &n9, 1, nullptr}, v4{DType::kF32, &n4, 1, nullptr};
  Error e = Catch([&] { rt.OutputShapes(nullptr, &v9, 1); });
  EXPECT_EQ(e.code(), Code::kConstraintViolation);
  EXPECT_TRUE(Contains(e.message(), "n <= 8"));
  auto shapes = rt.OutputShapes(nullptr, &v4, 1);
  EXPECT_EQ(shapes, (std::vector<std::vector<int64_t>>{{8}}));
  EXPECT_EQ(rt.stats().plans_built, 1u);
  Arr xa = Make<float>(DType::kF32, {4}, {1, 2, 3, 4});
  Arr out = RunAll(rt, {"x"}, {xa})[0];
  EXPECT_EQ(rt.stats().cache_hits, 1u);
  std::vector<float> want{1, 2, 3, 4, 1, 2, 3, 4};
  ExpectNear(out, want, 0);
}

TEST(Runtime, ReshapeAssertionAndDimInput) {
  Traced tr;
  const Tensor* x = tr.t->Input("x", DType::kF32, "n");
  const Tensor* r = tr.t->Reshape(x, {nullptr, tr.scope->Constant(4)});
  const Tensor* k = tr.t->DimInput("k");
  const Tensor* io = tr.t->Iota(DType::kI64, {tr.scope->Parse("k")}, 0);
  const Tensor* s = tr.t->Binary(OpKind::kMul, io, tr.t->DimValue(tr.scope->Parse("n")));
  auto p = tr.Build({x, k}, {r, s});
  Runtime rt(p, Options{});
  Arr x6 = RandomF32({6}, 1);
  Arr k3 = Make<int64_t>(DType::kI64, {}, {3});
  Error e = Catch([&] { RunAll(rt, {"x", "k"}, {x6, k3}); });
  EXPECT_EQ(e.code(), Code::kConstraintViolation);
  EXPECT_TRUE(Contains(e.message(), "divisible by 4")) << e.message();
  Arr x8 = RandomF32({8}, 1);
  std::vector<Arr> out = RunAll(rt, {"k", "x"}, {k3, x8});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(out[0].bytes, x8.bytes);
  ASSERT_EQ(out[1].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(out[1].data<int64_t>()[2], 16);
  Arr kbad = Make<int64_t>(DType::kI64, {1}, {3});
  e = Catch([&] { RunAll(rt, {"k", "x"}, {kbad, x8}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
}

// Prepare's one-pass path (every input in declared order, the dtypes and shapes of the last
// call) falls back to the general binding for anything else: the same errors and results as
// a call with new shapes.
TEST(Runtime, RepeatedShapesAreCheckedLikeNewOnes) {
  Traced tr;
  const Tensor* x = tr.t->Input("x", DType::kF32, "n");
  const Tensor* y = tr.t->Input("y", DType::kF32, "n");
  const Tensor* k = tr.t->DimInput("k");
  const Tensor* io = tr.t->Iota(DType::kI64, {tr.scope->Parse("k")}, 0);
  auto p = tr.Build({x, y, k}, {tr.t->Binary(OpKind::kSub, x, y), io});
  Runtime rt(p, Options{});
  Arr xa = Make<float>(DType::kF32, {3}, {5, 7, 9}), ya = Make<float>(DType::kF32, {3}, {1, 2, 3});
  Arr k2 = Make<int64_t>(DType::kI64, {}, {2}), k4 = Make<int64_t>(DType::kI64, {}, {4});
  std::vector<Arr> o = RunAll(rt, {"x", "y", "k"}, {xa, ya, k2});
  ExpectNear(o[0], {4, 5, 6}, 0);
  EXPECT_EQ(o[1].shape, (std::vector<int64_t>{2}));
  // The same shapes again: by position, then with the names in another order.
  ExpectNear(RunAll(rt, {}, {xa, ya, k2})[0], {4, 5, 6}, 0);
  ExpectNear(RunAll(rt, {"y", "x", "k"}, {xa, ya, k2})[0], {-4, -5, -6}, 0);
  EXPECT_EQ(rt.stats().plans_built, 1u);
  EXPECT_EQ(rt.stats().cache_hits, 2u);
  // Errors at the last call's shapes.
  Arr xi = Make<int32_t>(DType::kI32, {3}, {1, 2, 3});
  Error e = Catch([&] { RunAll(rt, {"x", "y", "k"}, {xi, ya, k2}); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_TRUE(Contains(e.message(), "input 'x' has dtype i32 but the program requires f32"));
  e = Catch([&] { RunAll(rt, {}, {xa, xi, k2}); });
  EXPECT_EQ(e.code(), Code::kDtypeMismatch);
  EXPECT_TRUE(Contains(e.message(), "input 'y' has dtype i32"));
  e = Catch([&] { RunAll(rt, {"x", "z", "k"}, {xa, ya, k2}); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(e.message(), "no input named 'z' (its inputs: 'x', 'y', 'k')"));
  e = Catch([&] { RunAll(rt, {"x", "x", "k"}, {xa, ya, k2}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "input 'x' given more than once"));
  Arr k_rank1 = Make<int64_t>(DType::kI64, {1}, {2});
  e = Catch([&] { RunAll(rt, {"x", "y", "k"}, {xa, ya, k_rank1}); });
  EXPECT_EQ(e.code(), Code::kShapeMismatch);
  EXPECT_TRUE(Contains(e.message(), "input 'k' gives a dimension variable"));
  const char* names[3] = {"x", "y", "k"};
  ArrayView no_data[3] = {xa.view(), ya.view(), k2.view()};
  no_data[2].data = nullptr;
  VectorSink sink;
  e = Catch([&] { rt.Run(names, no_data, 3, &sink); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "input 'k' has no data"));
  Arr y4 = Make<float>(DType::kF32, {4}, {1, 2, 3, 4});
  e = Catch([&] { RunAll(rt, {"x", "y", "k"}, {xa, y4, k2}); });
  EXPECT_NE(e.code(), Code::kOk);
  EXPECT_TRUE(Contains(e.message(), "input 'y'")) << e.message();
  EXPECT_EQ(rt.stats().plans_built, 1u);
  EXPECT_EQ(rt.stats().cache_hits, 2u);
  // Another dimension value is another plan; the first is still cached.
  EXPECT_EQ(RunAll(rt, {"x", "y", "k"}, {xa, ya, k4})[1].shape, (std::vector<int64_t>{4}));
  o = RunAll(rt, {"x", "y", "k"}, {xa, ya, k2});
  ExpectNear(o[0], {4, 5, 6}, 0);
  EXPECT_EQ(o[1].shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(rt.stats().plans_built, 2u);
  EXPECT_EQ(rt.stats().cache_hits, 3u);
}

// ---- Operations against naive references ----

TEST(Runtime, ElementwiseFusionAndRem) {
  Traced tr;
  const Tensor* a = tr.t->Input("a", DType::kF32, "n, 3");
  const Tensor* b = tr.t->Input("b", DType::kF32, "3");
  const Tensor* c = tr.t->Input("c", DType::kI32, "n, 3");
  const Tensor* d = tr.t->Input("d", DType::kI32, "n, 1");
  const Tensor* f =
      tr.t->Binary(OpKind::kMul, tr.t->Unary(OpKind::kTanh, tr.t->Binary(OpKind::kAdd, a, b)), a);
  const Tensor* sel = tr.t->Select(tr.t->Binary(OpKind::kGt, a, tr.t->Convert(c, DType::kF32)), f,
                                   tr.t->Unary(OpKind::kNeg, a));
  const Tensor* rf = tr.t->Binary(OpKind::kRem, a, b);
  const Tensor* ri = tr.t->Binary(OpKind::kRem, c, d);
  auto p = tr.Build({a, b, c, d}, {sel, rf, ri});
  Runtime rt(p, Options{});
  Arr aa = Make<float>(DType::kF32, {2, 3}, {-7.5f, 2.f, 0.25f, 1.f, -3.f, 5.f});
  Arr bb = Make<float>(DType::kF32, {3}, {2.f, -0.75f, 3.f});
  Arr cc = Make<int32_t>(DType::kI32, {2, 3}, {-7, 7, 0, -1, 5, -9});
  Arr dd = Make<int32_t>(DType::kI32, {2, 1}, {2, -4});
  std::vector<Arr> out = RunAll(rt, {}, {aa, bb, cc, dd});
  for (int i = 0; i < 6; ++i) {
    float av = aa.data<float>()[i], bv = bb.data<float>()[i % 3];
    float fv = std::tanh(av + bv) * av;
    float want = av > float(cc.data<int32_t>()[i]) ? fv : -av;
    EXPECT_NEAR(out[0].data<float>()[i], want, 1e-6f);
    EXPECT_EQ(out[1].data<float>()[i], std::fmod(av, bv));
    EXPECT_EQ(out[2].data<int32_t>()[i], cc.data<int32_t>()[i] % dd.data<int32_t>()[i / 3]);
  }
}

// A program that is one binary op of two inputs runs one chunk (<= 256 elements) without the
// register walk (the elementwise kernel's one-op path): exact results at every length up to
// and past the chunk, for float and integer ops, and with an input that is broadcast.
TEST(Runtime, OneBinaryOpAtEveryLengthAroundAChunk) {
  Traced tr;
  const Tensor* x = tr.t->Input("x", DType::kF32, "n");
  const Tensor* y = tr.t->Input("y", DType::kF32, "n");
  const Tensor* i = tr.t->Input("i", DType::kI32, "n");
  const Tensor* j = tr.t->Input("j", DType::kI32, "n");
  const Tensor* s = tr.t->Input("s", DType::kF32, "1");
  auto sub = tr.Build({x, y}, {tr.t->Binary(OpKind::kSub, x, y)});
  auto div = tr.Build({x, y}, {tr.t->Binary(OpKind::kDiv, y, x)});
  auto imul = tr.Build({i, j}, {tr.t->Binary(OpKind::kMul, i, j)});
  auto bcast = tr.Build({x, s}, {tr.t->Binary(OpKind::kAdd, x, s)});
  Runtime rsub(sub, Options{}), rdiv(div, Options{}), rimul(imul, Options{}),
      rbcast(bcast, Options{});
  for (int64_t n : {1, 2, 7, 8, 9, 31, 255, 256, 257, 300, 1000}) {
    Arr xa = RandomF32({n}, static_cast<uint32_t>(n));
    Arr ya = RandomF32({n}, static_cast<uint32_t>(n + 500));
    std::vector<int32_t> iv(static_cast<size_t>(n)), jv(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      iv[static_cast<size_t>(k)] = static_cast<int32_t>(k * 7919 - 1000);
      jv[static_cast<size_t>(k)] = static_cast<int32_t>(31 - k);
    }
    Arr ia = Make<int32_t>(DType::kI32, {n}, iv), ja = Make<int32_t>(DType::kI32, {n}, jv);
    Arr sa = Make<float>(DType::kF32, {1}, {0.375f});
    for (int rep = 0; rep < 2; ++rep) {  // planned, then cached
      std::vector<Arr> d = RunAll(rsub, {"x", "y"}, {xa, ya});
      std::vector<Arr> q = RunAll(rdiv, {"x", "y"}, {xa, ya});
      std::vector<Arr> m = RunAll(rimul, {"i", "j"}, {ia, ja});
      std::vector<Arr> b = RunAll(rbcast, {"x", "s"}, {xa, sa});
      for (int64_t k = 0; k < n; ++k) {
        const float xv = xa.data<float>()[k], yv = ya.data<float>()[k];
        ASSERT_EQ(d[0].data<float>()[k], xv - yv) << "n " << n << " k " << k;
        ASSERT_EQ(q[0].data<float>()[k], yv / xv) << "n " << n << " k " << k;
        // kMul wraps modulo 2^32 (elementwise.h); the product in uint32 is that, without UB.
        const uint32_t wrapped = static_cast<uint32_t>(iv[static_cast<size_t>(k)]) *
                                 static_cast<uint32_t>(jv[static_cast<size_t>(k)]);
        ASSERT_EQ(m[0].data<int32_t>()[k], static_cast<int32_t>(wrapped))
            << "n " << n << " k " << k;
        ASSERT_EQ(b[0].data<float>()[k], xv + 0.375f) << "n " << n << " k " << k;
      }
    }
  }
}

TEST(Runtime, CopiesReductionsAndAxisOps) {
  Traced tr;
  const Tensor* x = tr.t->Input("x", DType::kF64, "r, c");
  const Tensor* tp = tr.t->Transpose(x, {1, 0});
  const Tensor* sl = tr.t->Slice(x, {tr.scope->Constant(1), nullptr}, {nullptr, nullptr}, {1, 2});
  const Tensor* pd = tr.t->Pad(x, {tr.scope->Constant(1), tr.scope->Constant(0)},
                               {tr.scope->Constant(0), tr.scope->Constant(2)}, -1.0);
  const Tensor* rs = tr.t->Reduce(OpKind::kReduceSum, x, {0}, true);
  const Tensor* rm = tr.t->Reduce(OpKind::kReduceMax, x, {}, false);
  const Tensor* cs = tr.t->CumSum(x, 0);
  const Tensor* ln = tr.t->LayerNorm(x, 0, 1e-5);
  const Tensor* sm = tr.t->Softmax(x, 0);
  auto p = tr.Build({x}, {tp, sl, pd, rs, rm, cs, ln, sm});
  Runtime rt(p, Options{});
  const int64_t R = 3, C = 4;
  std::vector<double> xv(R * C);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(double(i) * 1.7) * 3;
  Arr xa = Make<double>(DType::kF64, {R, C}, xv);
  std::vector<Arr> o = RunAll(rt, {"x"}, {xa});
  auto X = [&](int64_t r, int64_t c) { return xv[static_cast<size_t>(r * C + c)]; };
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) EXPECT_EQ(o[0].data<double>()[c * R + r], X(r, c));
  }
  EXPECT_EQ(o[1].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(o[1].data<double>()[3], X(2, 2));
  EXPECT_EQ(o[2].shape, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(o[2].data<double>()[0], -1.0);
  EXPECT_EQ(o[2].data<double>()[6 + 1], X(0, 1));
  EXPECT_EQ(o[3].shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(o[4].shape, (std::vector<int64_t>{}));
  double mx = -1e300;
  for (double v : xv) mx = std::max(mx, v);
  EXPECT_EQ(o[4].data<double>()[0], mx);
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, mean = 0, var = 0, smax = -1e300, den = 0;
    for (int64_t r = 0; r < R; ++r) {
      s += X(r, c);
      EXPECT_NEAR(o[5].data<double>()[r * C + c], s, 1e-12);
      smax = std::max(smax, X(r, c));
    }
    EXPECT_NEAR(o[3].data<double>()[c], s, 1e-12);
    mean = s / R;
    for (int64_t r = 0; r < R; ++r) var += (X(r, c) - mean) * (X(r, c) - mean) / R;
    for (int64_t r = 0; r < R; ++r) den += std::exp(X(r, c) - smax);
    for (int64_t r = 0; r < R; ++r) {
      EXPECT_NEAR(o[6].data<double>()[r * C + c], (X(r, c) - mean) / std::sqrt(var + 1e-5), 1e-9);
      EXPECT_NEAR(o[7].data<double>()[r * C + c], std::exp(X(r, c) - smax) / den, 1e-12);
    }
  }
}

TEST(Runtime, MatmulDotGeneralTake) {
  Traced tr;
  const Tensor* a = tr.t->Input("a", DType::kI64, "b, m, k");
  const Tensor* v = tr.t->Input("v", DType::kI64, "k");
  const Tensor* w = tr.t->Input("w", DType::kI64, "n, k, b");
  const Tensor* idx = tr.t->Input("idx", DType::kI32, "j");
  const Tensor* mv = tr.t->MatMul(a, v);  // (b, m)
  trace::DotDims dd;
  dd.lhs_batch = {0};
  dd.rhs_batch = {2};
  dd.lhs_contracting = {2};
  dd.rhs_contracting = {1};
  const Tensor* dg = tr.t->DotGeneral(a, w, dd);  // (b, m, n)
  const Tensor* tk = tr.t->Take(a, idx, 1);       // (b, j, k)
  auto p = tr.Build({a, v, w, idx}, {mv, dg, tk});
  Runtime rt(p, Options{});
  const int64_t B = 2, M = 3, Kk = 4, N = 5;
  std::vector<int64_t> av(B * M * Kk), vv(Kk), wv(N * Kk * B);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<int64_t>(i % 7) - 3;
  for (size_t i = 0; i < vv.size(); ++i) vv[i] = static_cast<int64_t>(i) + 1;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<int64_t>(i % 5) - 2;
  Arr aa = Make<int64_t>(DType::kI64, {B, M, Kk}, av), va = Make<int64_t>(DType::kI64, {Kk}, vv),
      wa = Make<int64_t>(DType::kI64, {N, Kk, B}, wv), ia = Make<int32_t>(DType::kI32, {2}, {2, 0});
  std::vector<Arr> o = RunAll(rt, {}, {aa, va, wa, ia});
  auto A = [&](int64_t b, int64_t m, int64_t k) {
    return av[static_cast<size_t>((b * M + m) * Kk + k)];
  };
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t m = 0; m < M; ++m) {
      int64_t s = 0;
      for (int64_t k = 0; k < Kk; ++k) s += A(b, m, k) * vv[static_cast<size_t>(k)];
      EXPECT_EQ(o[0].data<int64_t>()[b * M + m], s);
      for (int64_t n = 0; n < N; ++n) {
        int64_t t = 0;
        for (int64_t k = 0; k < Kk; ++k)
          t += A(b, m, k) * wv[static_cast<size_t>((n * Kk + k) * B + b)];
        EXPECT_EQ(o[1].data<int64_t>()[(b * M + m) * N + n], t);
      }
    }
    for (int64_t k = 0; k < Kk; ++k) {
      EXPECT_EQ(o[2].data<int64_t>()[(b * 2 + 0) * Kk + k], A(b, 2, k));
      EXPECT_EQ(o[2].data<int64_t>()[(b * 2 + 1) * Kk + k], A(b, 0, k));
    }
  }
  Arr bad = Make<int32_t>(DType::kI32, {2}, {3, 0});
  Error e = Catch([&] { RunAll(rt, {}, {aa, va, wa, bad}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(e.message(), "take: index 3 (position 0 of the indices) is outside [0, 3)"));
  EXPECT_EQ(RunAll(rt, {}, {aa, va, wa, ia})[1].bytes, o[1].bytes);
}

TEST(Runtime, ManyRuntimesShareOneProgramConcurrently) {
  auto m = MakeMlp();
  std::vector<int> failures(4, 0);
  shp::testing::OnThreads(4, [&](int t) {
    Options o;
    o.num_threads = 2;
    o.plan_cache_capacity = 2;
    Runtime rt(m->p, o);
    for (int i = 0; i < 40; ++i) {
      int64_t b = 1 + (i * 7 + t) % 5;
      Arr x = RandomF32({b, 6}, static_cast<uint32_t>(t * 1000 + i));
      Arr y = RunAll(rt, {"x"}, {x})[0];
      std::vector<float> want = MlpReference(*m, x);
      for (size_t k = 0; k < want.size(); ++k) {
        if (std::fabs(y.data<float>()[k] - want[k]) > 1e-5f) ++failures[static_cast<size_t>(t)];
      }
    }
  });
  for (int f : failures) EXPECT_EQ(f, 0);
}

// Two runtimes of one program on two threads with the plan cache off: every call solves and
// plans its shape while the other thread does the same (no lock for this program: issue 18
// item 4). Every output is checked against a runtime that ran alone.
TEST(Runtime, TwoRuntimesPlanEveryCallConcurrently) {
  Traced tr({"n >= 1"});
  const Tensor* x = tr.t->Input("x", DType::kF32, "n");
  const Tensor* y = tr.t->Input("y", DType::kF32, "n");
  const Tensor* z = tr.t->Binary(OpKind::kAdd, tr.t->Binary(OpKind::kMul, x, y), x);
  auto p = tr.Build({x, y}, {z, tr.t->Unary(OpKind::kExp, y)});
  constexpr int kLengths = 37, kCalls = 3000;
  std::vector<Arr> xs, ys;
  std::vector<std::vector<Arr>> want;
  {
    Runtime alone(p, Options{});
    for (int n = 1; n <= kLengths; ++n) {
      xs.push_back(RandomF32({n}, static_cast<uint32_t>(n)));
      ys.push_back(RandomF32({n}, static_cast<uint32_t>(1000 + n)));
      want.push_back(RunAll(alone, {"x", "y"}, {xs.back(), ys.back()}));
    }
  }
  std::vector<int> wrong(2, 0);
  std::vector<uint64_t> built(2, 0);
  shp::testing::OnThreads(2, [&](int t) {
    Options o;
    o.num_threads = 1;
    o.plan_cache_capacity = 0;
    Runtime rt(p, o);
    for (int i = 0; i < kCalls; ++i) {
      const size_t n = static_cast<size_t>((i * 7 + t * 11) % kLengths);
      std::vector<Arr> got = RunAll(rt, {"x", "y"}, {xs[n], ys[n]});
      if (got.size() != 2 || got[0].bytes != want[n][0].bytes || got[1].bytes != want[n][1].bytes ||
          got[0].shape != want[n][0].shape) {
        ++wrong[static_cast<size_t>(t)];
      }
    }
    built[static_cast<size_t>(t)] = rt.stats().plans_built;
  });
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(wrong[static_cast<size_t>(t)], 0) << "thread " << t;
    EXPECT_EQ(built[static_cast<size_t>(t)], static_cast<uint64_t>(kCalls)) << "thread " << t;
  }
}

TEST(Runtime, LargeThreadedElementwiseMatchesSingleThread) {
  Traced tr;
  const Tensor* a = tr.t->Input("a", DType::kF32, "n");
  const Tensor* y = tr.t->Unary(OpKind::kExp, tr.t->Binary(OpKind::kMul, a, a));
  auto p = tr.Build({a}, {y});
  Options one;
  one.num_threads = 1;
  Options four;
  four.num_threads = 4;
  Runtime r1(p, one), r4(p, four);
  Arr x = RandomF32({200000}, 5);
  EXPECT_EQ(RunAll(r1, {}, {x})[0].bytes, RunAll(r4, {}, {x})[0].bytes);
  EXPECT_NE(std::string(Runtime::SimdTarget()), "");
}

// ---- Long programs on a small stack (issue 17, finding 1) ----

// A 100k-op elementwise chain (one fused group) and a 100k-op reshape chain (a chain of views)
// trace, serialize, load, plan and run on a 256 KB stack; creation is linear in the ops.
TEST(Runtime, HundredThousandOpChainsOnASmallStack) {
  constexpr int kOps = 100000;
  OnSmallStack(256 * 1024, [&] {
    Traced tr;
    const Tensor* x = tr.t->Input("x", DType::kF32, "n");
    const Tensor* y = x;
    for (int i = 0; i < kOps; ++i) y = tr.t->Unary(OpKind::kNeg, y);  // even count: y == x
    const Tensor* r = x;
    for (int i = 0; i < kOps; ++i) r = tr.t->Reshape(r, {i % 2 ? tr.scope->Var("n") : nullptr});
    auto traced = tr.Build({x}, {y, r});
    std::string bytes = traced->Serialize();
    std::shared_ptr<const program::Program> p(program::Program::Load(bytes.data(), bytes.size()));
    EXPECT_EQ(p->nodes().size(), 2u * kOps);
    auto start = std::chrono::steady_clock::now();
    Runtime rt(p, Options{});
    double create_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("runtime creation for %d ops: %.1f ms\n", 2 * kOps, create_ms);
    Arr xa = Make<float>(DType::kF32, {5}, {1.f, -2.f, 3.5f, 0.f, -0.25f});
    std::vector<Arr> o = RunAll(rt, {"x"}, {xa});
    ASSERT_EQ(o.size(), 2u);
    for (int k = 0; k < 2; ++k) {
      ASSERT_EQ(o[k].shape, (std::vector<int64_t>{5}));
      for (int i = 0; i < 5; ++i) EXPECT_EQ(o[k].data<float>()[i], xa.data<float>()[i]);
    }
  });
}

// Kernel limits surface when the runtime is created (shp_runtime_create), not at run time
// (issue 17, finding 4).
TEST(Runtime, KernelLimitsAreCheckedAtCreation) {
  auto rejected = [](const std::function<const Tensor*(Traced&)>& build, const std::string& why) {
    Traced tr;
    const Tensor* out = build(tr);
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : tr.t->tensors()) {
      if (t.source == trace::Source::kInput) inputs.push_back(&t);
    }
    auto p = tr.Build(inputs, {out});
    Error e = Catch([&] { Runtime rt(p, Options{}); });
    EXPECT_EQ(e.code(), Code::kUnsupported) << e.message();
    EXPECT_TRUE(Contains(e.message(), why)) << e.message();
  };
  auto spec = [](size_t rank) {
    std::string s;
    for (size_t i = 0; i < rank; ++i) s += i ? ", 1" : "1";
    return s;
  };
  rejected(
      [&](Traced& tr) {
        std::vector<int64_t> perm;
        for (int64_t i = 16; i >= 0; --i) perm.push_back(i);
        return tr.t->Transpose(tr.t->Input("x", DType::kF32, spec(17)), perm);
      },
      "transpose supports rank <= 16");
  rejected(
      [&](Traced& tr) {
        const Tensor* x = tr.t->Input("x", DType::kF32, spec(11));
        return tr.t->MatMul(x, x);
      },
      "matmul supports at most 8 batch axes");
  rejected(
      [&](Traced& tr) {
        return tr.t->Unary(OpKind::kNeg, tr.t->Input("x", DType::kF32, spec(33)));
      },
      "elementwise operations support rank <= 32");
  rejected(
      [&](Traced& tr) { return tr.t->LayerNorm(tr.t->Input("x", DType::kF32, spec(17)), 0, 1e-5); },
      "layer_norm supports rank <= 16");
  rejected(
      [&](Traced& tr) {
        return tr.t->Apply(OpKind::kReverse, ops::ReverseAttrs{{0}},
                           {tr.t->Input("x", DType::kF32, spec(17))});
      },
      "reverse supports rank <= 16");
  rejected(
      [&](Traced& tr) {
        const Tensor* x = tr.t->Input("x", DType::kF32, spec(17));
        return tr.t->DotGeneral(x, tr.t->Input("y", DType::kF32, "1"),
                                trace::DotDims{{}, {}, {8}, {0}});
      },
      "dot_general supports rank <= 16");
}

// Fill defaults (jvp's default tangents): left out by name, the input is a buffer of the shape
// the other inputs give it, filled once per shape (the next runs of that shape reuse it); the
// plan of a call that leaves it out is cached apart from one that gives it.
TEST(Runtime, FillDefaultsTakeTheShapeOfTheOtherInputs) {
  Traced tr;
  trace::Trace& t = *tr.t;
  const Tensor* x = t.Input("x", DType::kF64, "n, 2");
  const double fill = -2.5;
  const Tensor* tx = t.DerivedInput("x.tangent", trace::InputRole::kTangent, DType::kF64,
                                    x->type.shape, nullptr, 0, &fill);
  // out0 = x * x.tangent, out1 = sum(x.tangent): both read every element of the default.
  auto p = tr.Build(
      {x, tx}, {t.Binary(OpKind::kMul, x, tx), t.Reduce(OpKind::kReduceSum, tx, {0, 1}, false)});
  Runtime rt(p, Options{});
  for (int64_t n : {3, 7, 3, 3, 1000}) {
    SCOPED_TRACE(n);
    std::vector<double> xv(static_cast<size_t>(n) * 2);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(i) + 1;
    Arr xa = Make<double>(DType::kF64, {n, 2}, xv);
    std::vector<Arr> out = RunAll(rt, {"x"}, {xa});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{n, 2}));
    for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(out[0].data<double>()[i], xv[i] * fill) << i;
    EXPECT_EQ(out[1].data<double>()[0], fill * static_cast<double>(xv.size()));
    // Given by name, the value given is used.
    Arr ta = Make<double>(DType::kF64, {n, 2}, std::vector<double>(xv.size(), 1.0));
    out = RunAll(rt, {"x", "x.tangent"}, {xa, ta});
    EXPECT_EQ(out[1].data<double>()[0], static_cast<double>(xv.size()));
  }
  // Shapes 3, 7, 1000, each left out and given: six plans.
  EXPECT_EQ(rt.stats().plans_built, 6u);
  // A dry run and a positional run.
  const int64_t xs[] = {4, 2};
  const char* names[] = {"x"};
  ArrayView xv{DType::kF64, xs, 2, nullptr};
  EXPECT_EQ(rt.OutputShapes(names, &xv, 1), (std::vector<std::vector<int64_t>>{{4, 2}, {}}));
  VectorSink sink;
  EXPECT_TRUE(Contains(Catch([&] { rt.Run(nullptr, &xv, 1, &sink); }).message(),
                       "bind every input by name"));
}

}  // namespace
}  // namespace runtime
}  // namespace shp
