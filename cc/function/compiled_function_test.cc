// CompiledFunction from C++ (no C API): automatic dynamic shapes, cache hits, the stances and
// the recompile limit, the event log, the trace function's errors and re-entry, export.
#include "cc/function/compiled_function.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/base/testing.h"
#include "cc/dim/scope.h"
#include "cc/program/program.h"
#include "cc/runtime/runtime.h"
#include "cc/trace/trace.h"

namespace shp {
namespace function {
namespace {

using ::shp::testing::Catch;
using ::shp::testing::Contains;
using trace::DType;
using trace::OpKind;
using trace::Tensor;

// An input array of f32 (values i * 0.5).
struct Arr {
  std::vector<int64_t> shape;
  std::vector<float> data;
  explicit Arr(std::vector<int64_t> s) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    for (int64_t i = 0; i < n; ++i) data.push_back(static_cast<float>(i) * 0.5f);
  }
  runtime::ArrayView view() const {
    return runtime::ArrayView{DType::kF32, shape.data(), shape.size(), data.data()};
  }
};

class FloatSink : public runtime::OutputSink {
 public:
  void* Output(size_t i, DType, const int64_t* shape, size_t rank) override {
    if (outs.size() <= i) outs.resize(i + 1);
    shapes.resize(outs.size());
    int64_t n = 1;
    for (size_t k = 0; k < rank; ++k) n *= shape[k];
    shapes[i].assign(shape, shape + rank);
    outs[i].assign(static_cast<size_t>(n), 0.f);
    return outs[i].data();
  }
  std::vector<std::vector<float>> outs;
  std::vector<std::vector<int64_t>> shapes;
};

struct Fixture {
  int traces = 0;
  CompiledFunction* self = nullptr;  // called from the trace function when set
  std::string reentry;
  bool fail = false;

  CompiledFunction::TraceFn Fn() {
    return [this](dim::Scope*, trace::Trace* t, const std::vector<const Tensor*>& in) {
      ++traces;
      if (fail) throw Error(Code::kUnsupported, "no, thanks");
      if (self != nullptr) {
        reentry = Catch([&] {
                    FloatSink sink;
                    self->Call(nullptr, nullptr, 0, 1, &sink);
                  }).message();
      }
      const Tensor* y = t->Binary(OpKind::kAdd, in[0], in[0]);
      return std::vector<const Tensor*>{y};
    };
  }
};

void Call(CompiledFunction& f, const Arr& x, FloatSink* sink) {
  const runtime::ArrayView v = x.view();
  const runtime::ArrayView* views[1] = {&v};
  const char* names[1] = {"x"};
  f.Call(names, views, 1, 1, sink);
}

TEST(CompiledFunction, TracesAgainOnlyWhenNoVariantApplies) {
  Fixture fx;
  CompiledFunction f(fx.Fn(), {{"x", DType::kF32, 2}}, {"y"}, CompiledFunction::Options());
  FloatSink sink;
  Call(f, Arr({2, 3}), &sink);
  ASSERT_EQ(sink.outs.size(), 1u);
  EXPECT_EQ(sink.shapes[0], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(sink.outs[0][5], 5.f);  // 2 * 2.5
  EXPECT_EQ(f.variant_count(), 1u);
  Call(f, Arr({2, 3}), &sink);
  EXPECT_EQ(f.cache_hits(), 1u);
  // Automatic dynamic: axis 0 changes, so the second trace makes it symbolic.
  Call(f, Arr({4, 3}), &sink);
  EXPECT_EQ(f.variant_count(), 2u);
  EXPECT_EQ(sink.shapes[0], (std::vector<int64_t>{4, 3}));
  Call(f, Arr({7, 3}), &sink);
  EXPECT_EQ(f.variant_count(), 2u);
  EXPECT_EQ(fx.traces, 2);
  ASSERT_FALSE(f.events().empty());
  EXPECT_TRUE(Contains(f.events()[0], "trace 1 for call 1 (x: (2, 3)): first call"));
  ASSERT_NE(f.program(), nullptr);
  EXPECT_EQ(f.program()->num_variants(), 2u);
}

TEST(CompiledFunction, StancesAndTheRecompileLimit) {
  Fixture fx;
  CompiledFunction::Options o;
  o.policy.dynamic = DynamicMode::kNone;
  o.policy.recompile_limit = 2;
  CompiledFunction f(fx.Fn(), {{"x", DType::kF32, 1}}, {"y"}, o);
  FloatSink sink;
  Call(f, Arr({1}), &sink);
  f.set_stance(Stance::kFailOnRecompile);
  Error e = Catch([&] { Call(f, Arr({2}), &sink); });
  EXPECT_EQ(e.code(), Code::kGuardFailed);
  EXPECT_TRUE(Contains(e.message(), "the stance is FAIL_ON_RECOMPILE"));
  f.set_stance(Stance::kDefault);
  Call(f, Arr({2}), &sink);
  e = Catch([&] { Call(f, Arr({3}), &sink); });
  EXPECT_EQ(e.code(), Code::kGuardFailed);
  EXPECT_TRUE(Contains(e.message(), "the recompile limit 2 is reached (2 variants)"));
  f.set_stance(Stance::kDynamicOnLimit);
  Call(f, Arr({3}), &sink);
  Call(f, Arr({9}), &sink);
  EXPECT_EQ(f.variant_count(), 3u);
  EXPECT_EQ(sink.shapes[0], (std::vector<int64_t>{9}));
}

TEST(CompiledFunction, TraceFunctionErrorsAndReentry) {
  Fixture fx;
  CompiledFunction f(fx.Fn(), {{"x", DType::kF32, 1}}, {"y"}, CompiledFunction::Options());
  FloatSink sink;
  fx.fail = true;
  Error e = Catch([&] { Call(f, Arr({3}), &sink); });
  EXPECT_EQ(e.code(), Code::kUnsupported);
  EXPECT_EQ(e.message(), "the trace function failed: no, thanks");
  EXPECT_FALSE(f.tracing());
  EXPECT_EQ(f.variant_count(), 0u);
  EXPECT_EQ(f.program(), nullptr);
  fx.fail = false;
  fx.self = &f;
  Call(f, Arr({3}), &sink);
  EXPECT_EQ(fx.reentry, "shp_function_call: the function was called from its own trace function");
  EXPECT_FALSE(f.tracing());
}

// One thread at a time per function; different functions run concurrently (the header's
// threading rule), each with its own variants and log.
TEST(CompiledFunction, DifferentFunctionsOnDifferentThreads) {
  std::vector<std::string> failures(4);
  ::shp::testing::OnThreads(4, [&](int th) {
    try {
      Fixture fx;
      CompiledFunction::Options o;
      o.num_threads = 1;
      CompiledFunction f(fx.Fn(), {{"x", DType::kF32, 1}}, {"y"}, o);
      FloatSink sink;
      for (int64_t n = 1; n <= 20; ++n) {
        Call(f, Arr({n + th}), &sink);
        if (sink.shapes[0] != std::vector<int64_t>{n + th}) failures[th] = "wrong shape";
      }
      if (f.variant_count() != 2) failures[th] = "variants: " + std::to_string(f.variant_count());
    } catch (const Error& e) {
      failures[th] = e.message();
    }
  });
  for (const std::string& f : failures) EXPECT_EQ(f, "");
}

TEST(CompiledFunction, ArgumentErrors) {
  Fixture fx;
  CompiledFunction f(fx.Fn(), {{"x", DType::kF32, 1}}, {"y"}, CompiledFunction::Options());
  FloatSink sink;
  EXPECT_EQ(Catch([&] { f.Call(nullptr, nullptr, 0, 2, &sink); }).message(),
            "the function has 1 output but num_outputs is 2");
  EXPECT_EQ(Catch([&] { f.Call(nullptr, nullptr, 0, 1, &sink); }).message(),
            "input 'x' is missing");
  const char* names[1] = {"z"};
  const Arr x({3});
  const runtime::ArrayView v = x.view();
  const runtime::ArrayView* views[1] = {&v};
  Error e = Catch([&] { f.Call(names, views, 1, 1, &sink); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  EXPECT_EQ(e.message(), "the function has no input named 'z' (its inputs: 'x')");
  e = Catch([&] {
    CompiledFunction g(fx.Fn(), {{"x", DType::kF32, 1}, {"x", DType::kF32, 2}}, {"y"},
                       CompiledFunction::Options());
  });
  EXPECT_EQ(e.message(), "input 'x' is listed twice in input_names");
  e = Catch([&] { CompiledFunction g(fx.Fn(), {}, {}, CompiledFunction::Options()); });
  EXPECT_EQ(e.message(), "a function needs an output");
  EXPECT_EQ(Catch([] { CompiledFunction::CheckRecompileLimit(0); }).message(),
            "the recompile limit must be in [1, 64], got 0");
  EXPECT_EQ(Catch([] { CompiledFunction::CheckNumThreads(257); }).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace function
}  // namespace shp
