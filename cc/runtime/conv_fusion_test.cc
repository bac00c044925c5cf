// ConvFusion (plan.h): an f32 conv followed by the add of a per-channel bias (and max(., 0)),
// as the composite conv and the ONNX importer emit them, runs as one conv step whose kernel
// applies the epilogue. Its outputs are the bits of the same program with fusion off
// (Options::fuse_elementwise: the conv, the add and the max run one by one) for every conv
// method (1x1 matmul, depthwise direct, band, im2col), strides, pads, dilations and groups,
// 1 and 2 spatial axes, batch 0, 1-wide maps, 1 and 2 threads; a conv whose output or sum has
// another use, an f64 conv and a bias that is not per channel stay unfused and right.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/ops/composites/composites.h"
#include "cc/runtime/plan.h"
#include "cc/runtime/runtime.h"
#include "cc/runtime/test_arrays.h"
#include "cc/trace/trace.h"

namespace shp {
namespace runtime {
namespace {

using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Program = std::shared_ptr<const program::Program>;
using testing::Arr;
using testing::Dims;
using testing::Random;
using testing::RunAll;

struct ConvCase {
  const char* name;
  int ns;  // spatial axes
  int64_t c, o, groups;
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::vector<std::vector<int64_t>> spatial;              // input sizes to run
};

std::vector<ConvCase> Cases() {
  return {
      {"1x1", 2, 16, 24, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {{9, 7}, {1, 1}, {1, 13}}},
      {"3x3 band", 2, 8, 20, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {{24, 30}, {1, 40}, {5, 1}}},
      {"3x3 wide", 2, 32, 36, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {{14, 14}, {7, 7}}},
      {"3x3 s2", 2, 12, 10, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {{15, 16}, {1, 2}, {3, 3}}},
      {"7x7 s2 stem", 2, 3, 16, 1, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, {{32, 30}}},
      {"depthwise", 2, 12, 12, 12, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {{10, 17}, {1, 1}}},
      {"depthwise s2", 2, 8, 16, 8, {3, 3}, {2, 2}, {1, 1}, {0, 1, 0, 1}, {{11, 12}}},
      {"groups", 2, 12, 18, 3, {3, 2}, {1, 2}, {2, 1}, {2, 0, 1, 1}, {{12, 13}, {5, 1}}},
      {"asym pads", 2, 6, 7, 1, {2, 3}, {1, 1}, {1, 2}, {0, 2, 1, 0}, {{8, 19}}},
      {"1-D", 1, 10, 9, 1, {5}, {1}, {1}, {2, 2}, {{50}, {1}, {4}}},
      {"1-D s3 groups", 1, 8, 4, 2, {3}, {3}, {1}, {1, 0}, {{31}, {2}}},
  };
}

// x [N, c, *spatial] (N, spatial symbolic), w [o, c/g, *kernel], bias [o] inputs; y = conv
// with bias by the composite (its add of bias reshaped to [o, 1...]), then max(y, 0) if relu.
// `bias_shape` other than empty: the bias input has that shape and is added by hand.
Program ConvProgram(const ConvCase& c, DType t, bool relu, std::vector<int64_t> bias_shape = {}) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  scope->Declare("N", 0, dim::kPosInf);
  trace::Trace tr(scope.get());
  std::string xs = "N, " + std::to_string(c.c);
  std::vector<int64_t> ws{c.o, c.c / c.groups};
  for (int i = 0; i < c.ns; ++i) {
    xs += ", S" + std::to_string(i);
    ws.push_back(c.kernel[static_cast<size_t>(i)]);
  }
  const Tensor* x = tr.Input("x", t, xs);
  const Tensor* w = tr.Input("w", t, Dims(ws));
  const Tensor* b = tr.Input("b", t, bias_shape.empty() ? std::to_string(c.o) : Dims(bias_shape));
  const Tensor* y;
  if (bias_shape.empty()) {
    y = ops::composites::Conv(x, w, b, static_cast<size_t>(c.ns), c.strides.data(),
                              c.dilations.data(), c.pads.data(), ops::composites::AutoPad::kNotSet,
                              c.groups);
  } else {
    y = ops::composites::Conv(x, w, nullptr, static_cast<size_t>(c.ns), c.strides.data(),
                              c.dilations.data(), c.pads.data(), ops::composites::AutoPad::kNotSet,
                              c.groups);
    y = tr.Binary(OpKind::kAdd, y, b);
  }
  if (relu) {
    const float zf = 0.0f;
    const double zd = 0.0;
    const Tensor* zero = t == DType::kF32 ? tr.Constant(t, {}, &zf, 4) : tr.Constant(t, {}, &zd, 8);
    y = tr.Binary(OpKind::kMax, y, zero);
  }
  return Program(program::Program::FromTrace(tr, {x, w, b}, {y}, {"y"}));
}

std::vector<Arr> Inputs(const ConvCase& c, DType t, int64_t n, const std::vector<int64_t>& sp,
                        const std::vector<int64_t>& bias_shape, std::mt19937* rng) {
  std::vector<int64_t> xs{n, c.c}, ws{c.o, c.c / c.groups};
  xs.insert(xs.end(), sp.begin(), sp.end());
  ws.insert(ws.end(), c.kernel.begin(), c.kernel.end());
  return {Random(t, xs, rng), Random(t, ws, rng),
          Random(t, bias_shape.empty() ? std::vector<int64_t>{c.o} : bias_shape, rng)};
}

const std::vector<std::string> kNames = {"x", "w", "b"};

TEST(ConvFusion, EqualsTheUnfusedOpsBitForBit) {
  std::mt19937 rng(7);
  for (const ConvCase& c : Cases()) {
    for (bool relu : {false, true}) {
      // The composite's [O, 1...] bias, and a [1, O, 1...] bias added by hand.
      std::vector<int64_t> b4{1, c.o};
      for (int i = 0; i < c.ns; ++i) b4.push_back(1);
      for (const std::vector<int64_t>& bias_shape : {std::vector<int64_t>{}, b4}) {
        const Program p = ConvProgram(c, DType::kF32, relu, bias_shape);
        const std::string what = std::string(c.name) + (relu ? " relu" : "") +
                                 (bias_shape.empty() ? "" : " bias [1, O, 1...]");
        const Graph fused(*p), plain(*p, true, true, /*fuse_elementwise=*/false);
        ASSERT_EQ(1u, fused.conv_fusions.size()) << what;
        EXPECT_EQ(relu, fused.conv_fusions[0].relu >= 0) << what;
        ASSERT_EQ(0u, plain.conv_fusions.size()) << what;
        for (int threads : {1, 2}) {
          Options on, off;
          on.num_threads = off.num_threads = threads;
          off.fuse_elementwise = false;
          Runtime rf(p, on), ru(p, off);
          for (int64_t n : {int64_t{1}, int64_t{0}, int64_t{2}}) {
            for (const std::vector<int64_t>& sp : c.spatial) {
              const std::vector<Arr> in = Inputs(c, DType::kF32, n, sp, bias_shape, &rng);
              const std::vector<Arr> want = RunAll(ru, kNames, in), got = RunAll(rf, kNames, in);
              ASSERT_EQ(1u, got.size());
              ASSERT_EQ(want[0].shape, got[0].shape);
              ASSERT_EQ(want[0].bytes, got[0].bytes) << what << ", N " << n << ", spatial "
                                                     << Dims(sp) << ", " << threads << " threads";
            }
          }
        }
      }
    }
  }
}

// A residual connection (ResNet's block): relu((conv(x, w) + b) + r) and r + (conv(x, w) + b)
// with r another conv of x (the same output shape): the add of r joins the epilogue, bit for
// bit the unfused ops, for every conv method, with and without the relu, batch 0 to 2, 1 and 2
// threads.
TEST(ConvFusion, ResidualAddEqualsTheUnfusedOps) {
  std::mt19937 rng(17);
  for (const ConvCase& c : Cases()) {
    for (int form = 0; form < 3; ++form) {  // 0: (y + b) + r, relu; 1: r + (y + b); 2: 0, no relu
      std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
      scope->Declare("N", 0, dim::kPosInf);
      trace::Trace tr(scope.get());
      std::string xs = "N, " + std::to_string(c.c);
      std::vector<int64_t> ws{c.o, c.c / c.groups};
      for (int i = 0; i < c.ns; ++i) {
        xs += ", S" + std::to_string(i);
        ws.push_back(c.kernel[static_cast<size_t>(i)]);
      }
      const Tensor* x = tr.Input("x", DType::kF32, xs);
      const Tensor* w = tr.Input("w", DType::kF32, Dims(ws));
      const Tensor* w2 = tr.Input("w2", DType::kF32, Dims(ws));
      const Tensor* b = tr.Input("b", DType::kF32, std::to_string(c.o));
      auto conv = [&](const Tensor* wt, const Tensor* bias) {
        return ops::composites::Conv(x, wt, bias, static_cast<size_t>(c.ns), c.strides.data(),
                                     c.dilations.data(), c.pads.data(),
                                     ops::composites::AutoPad::kNotSet, c.groups);
      };
      const Tensor* yb = conv(w, b);
      const Tensor* r = conv(w2, nullptr);
      const Tensor* y = form == 1 ? tr.Binary(OpKind::kAdd, r, yb) : tr.Binary(OpKind::kAdd, yb, r);
      if (form != 2) {
        const float zf = 0.0f;
        y = tr.Binary(OpKind::kMax, y, tr.Constant(DType::kF32, {}, &zf, 4));
      }
      const Program p(program::Program::FromTrace(tr, {x, w, w2, b}, {y}, {"y"}));
      const Graph fused(*p);
      ASSERT_EQ(1u, fused.conv_fusions.size()) << c.name << " form " << form;
      EXPECT_GE(fused.conv_fusions[0].residual, 0) << c.name << " form " << form;
      EXPECT_EQ(form != 2, fused.conv_fusions[0].relu >= 0) << c.name;
      for (int threads : {1, 2}) {
        Options on, off;
        on.num_threads = off.num_threads = threads;
        off.fuse_elementwise = false;
        Runtime rf(p, on), ru(p, off);
        for (int64_t n : {int64_t{2}, int64_t{0}, int64_t{1}}) {
          for (const std::vector<int64_t>& sp : c.spatial) {
            std::vector<int64_t> xsh{n, c.c};
            xsh.insert(xsh.end(), sp.begin(), sp.end());
            const std::vector<Arr> in = {
                Random(DType::kF32, xsh, &rng), Random(DType::kF32, ws, &rng),
                Random(DType::kF32, ws, &rng), Random(DType::kF32, {c.o}, &rng)};
            const std::vector<std::string> names = {"x", "w", "w2", "b"};
            const std::vector<Arr> want = RunAll(ru, names, in), got = RunAll(rf, names, in);
            ASSERT_EQ(want[0].shape, got[0].shape);
            ASSERT_EQ(want[0].bytes, got[0].bytes)
                << c.name << " form " << form << ", N " << n << ", spatial " << Dims(sp) << ", "
                << threads << " threads";
          }
        }
      }
    }
  }
}

// The fused plan has one step for the three ops (the unfused one a conv step and an
// elementwise step), and no arena buffer for the conv's output.
TEST(ConvFusion, OneStep) {
  const std::vector<ConvCase> cases = Cases();
  const ConvCase& c = cases[1];
  const Program p = ConvProgram(c, DType::kF32, true);
  const Graph fused(*p), plain(*p, true, true, /*fuse_elementwise=*/false);
  std::vector<int64_t> vars(static_cast<size_t>(fused.max_var + 1), 0);
  for (const auto& vp : fused.var_pos) vars[static_cast<size_t>(vp.first)] = 16;
  const Plan a(fused, vars), b(plain, vars);
  EXPECT_LT(a.steps.size(), b.steps.size());
  EXPECT_LT(a.arena_bytes, b.arena_bytes);
}

// An f64 conv: the kernel has no f64 epilogue, so nothing fuses; still the same results.
TEST(ConvFusion, F64StaysUnfused) {
  std::mt19937 rng(3);
  for (const ConvCase& c : Cases()) {
    const Program p = ConvProgram(c, DType::kF64, true);
    EXPECT_EQ(0u, Graph(*p).conv_fusions.size()) << c.name;
    Options off;
    off.fuse_elementwise = false;
    Runtime rf(p, Options{}), ru(p, off);
    const std::vector<Arr> in = Inputs(c, DType::kF64, 2, c.spatial[0], {}, &rng);
    EXPECT_EQ(RunAll(ru, kNames, in)[0].bytes, RunAll(rf, kNames, in)[0].bytes) << c.name;
  }
}

// Other shapes of the pattern stay unfused (or fuse only as far as the pattern holds), and
// every output is still right: the conv's output also an output, used twice, the sum also an
// output (no relu fused), the bias added first, a bias along the last axis, max with -0.0 or
// with the sum second (no relu fused), one bias value for every channel.
TEST(ConvFusion, OtherPatterns) {
  const std::vector<ConvCase> cases = Cases();
  const ConvCase& c = cases[3];  // 3x3 s2: o = 10
  std::mt19937 rng(11);
  struct Pattern {
    const char* name;
    size_t fusions;
    bool relu_fused;
  };
  const Pattern patterns[] = {
      {"conv also an output", 0, false},     {"conv used twice", 0, false},
      {"sum also an output", 1, false},      {"bias first", 0, false},
      {"bias on the last axis", 0, false},   {"max with -0.0", 1, false},
      {"max with the sum second", 1, false}, {"one bias for every channel", 0, false}};
  for (size_t k = 0; k < sizeof(patterns) / sizeof(patterns[0]); ++k) {
    std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
    trace::Trace tr(scope.get());
    const Tensor* x = tr.Input("x", DType::kF32, "N, 12, 15, 10");
    const Tensor* w = tr.Input("w", DType::kF32, "10, 12, 3, 3");
    const Tensor* b = tr.Input("b", DType::kF32,
                               k == 4   ? "1, 1, 1, 5"
                               : k == 7 ? "1, 1, 1, 1"
                                        : "1, 10, 1, 1");
    const Tensor* y = ops::composites::Conv(x, w, nullptr, 2, c.strides.data(), c.dilations.data(),
                                            c.pads.data(), ops::composites::AutoPad::kNotSet, 1);
    const float pz = 0.0f, nz = -0.0f;
    const Tensor* zero = tr.Constant(DType::kF32, {}, k == 5 ? &nz : &pz, 4);
    std::vector<const Tensor*> outs;
    const Tensor* s = tr.Binary(OpKind::kAdd, k == 3 ? b : y, k == 3 ? y : b);
    const Tensor* r = tr.Binary(OpKind::kMax, k == 6 ? zero : s, k == 6 ? s : zero);
    outs.push_back(r);
    if (k == 0) outs.push_back(y);
    if (k == 1) outs.push_back(tr.Unary(OpKind::kNeg, y));
    if (k == 2) outs.push_back(s);
    std::vector<std::string> names;
    for (size_t i = 0; i < outs.size(); ++i) names.push_back("o" + std::to_string(i));
    const Program p(program::Program::FromTrace(tr, {x, w, b}, outs, names));
    const Graph g(*p);
    ASSERT_EQ(patterns[k].fusions, g.conv_fusions.size()) << patterns[k].name;
    if (!g.conv_fusions.empty()) {
      EXPECT_EQ(patterns[k].relu_fused, g.conv_fusions[0].relu >= 0) << patterns[k].name;
    }
    for (int threads : {1, 2}) {
      Options on, off;
      on.num_threads = off.num_threads = threads;
      off.fuse_elementwise = false;
      Runtime rf(p, on), ru(p, off);
      std::vector<Arr> in{
          Random(DType::kF32, {2, 12, 15, 10}, &rng), Random(DType::kF32, {10, 12, 3, 3}, &rng),
          Random(DType::kF32, std::vector<int64_t>{1, k == 4 || k == 7 ? 1 : 10, 1, k == 4 ? 5 : 1},
                 &rng)};
      const std::vector<Arr> want = RunAll(ru, kNames, in), got = RunAll(rf, kNames, in);
      ASSERT_EQ(outs.size(), got.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(want[i].bytes, got[i].bytes) << patterns[k].name << " output " << i;
      }
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace shp
