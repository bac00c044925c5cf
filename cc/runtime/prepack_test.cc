// Operands packed once per runtime from a parameter's stored default (ops::PrepareContext::
// default_bytes): the weights of an ONNX model or of a program traced with parameters. A run that
// leaves the parameter out uses the packed copy; a run that passes its own array for it must
// compute with that array, never with the stale packed default. Both give the bits of the same
// program whose weights are plain inputs, for the plain matmul step, the matmul + bias + relu
// fusion and the conv step, on 1 and 2 threads, alternating default and own weights on one
// runtime (one cached plan for all of them). Also the matmuls that read a transposed operand
// through strides (MatmulFusion::a_transpose / b_transpose), as a VJP emits them.
#include <gtest/gtest.h>

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

// The weights either as parameters with defaults or as plain inputs of the same names.
struct Weights {
  Arr w1, w2, b2, wc, bc, wp;
};

// y1 = x @ w1 (a plain matmul step), y2 = relu(x @ w2 + b2) (the matmul fusion), y3 =
// relu(conv3x3(img, wc) + bc) (the conv fusion), y4 = conv1x1(img, wp): convs on planes of
// 7 x 5 positions with 64 output channels, which the channels-last product takes
// (kernels::ConvF32Packed) with the packed weights.
Program MakeProgram(const Weights& d, bool parameters) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  scope->Declare("N", 0, dim::kPosInf);
  scope->Declare("H", 1, dim::kPosInf);
  trace::Trace tr(scope.get());
  const Tensor* x = tr.Input("x", DType::kF32, "N, 40");
  const Tensor* img = tr.Input("img", DType::kF32, "N, 6, H, 5");
  auto weight = [&](const char* name, const Arr& a) {
    if (parameters) return tr.Parameter(name, DType::kF32, a.shape, a.bytes.data(), a.bytes.size());
    return tr.Input(name, DType::kF32, Dims(a.shape));
  };
  const Tensor* w1 = weight("w1", d.w1);
  const Tensor* w2 = weight("w2", d.w2);
  const Tensor* b2 = weight("b2", d.b2);
  const Tensor* wc = weight("wc", d.wc);
  const Tensor* bc = weight("bc", d.bc);
  const Tensor* wp = weight("wp", d.wp);
  const float zf = 0.0f;
  const Tensor* zero = tr.Constant(DType::kF32, {}, &zf, 4);
  const Tensor* y1 = tr.MatMul(x, w1);
  const Tensor* y2 = tr.Binary(OpKind::kMax, tr.Binary(OpKind::kAdd, tr.MatMul(x, w2), b2), zero);
  const int64_t strides[2] = {1, 1}, dil[2] = {1, 1}, pads[4] = {1, 1, 1, 1};
  const Tensor* y3 = tr.Binary(OpKind::kMax,
                               ops::composites::Conv(img, wc, bc, 2, strides, dil, pads,
                                                     ops::composites::AutoPad::kNotSet, 1),
                               zero);
  const int64_t no_pads[4] = {0, 0, 0, 0};
  const Tensor* y4 = ops::composites::Conv(img, wp, nullptr, 2, strides, dil, no_pads,
                                           ops::composites::AutoPad::kNotSet, 1);
  return Program(program::Program::FromTrace(tr, {x, img, w1, w2, b2, wc, bc, wp}, {y1, y2, y3, y4},
                                             {"y1", "y2", "y3", "y4"}));
}

Weights MakeWeights(std::mt19937* rng) {
  return {Random(DType::kF32, {40, 33}, rng), Random(DType::kF32, {40, 70}, rng),
          Random(DType::kF32, {70}, rng),     Random(DType::kF32, {64, 6, 3, 3}, rng),
          Random(DType::kF32, {64}, rng),     Random(DType::kF32, {64, 6, 1, 1}, rng)};
}

TEST(Prepack, ParameterDefaultsArePackedOnce) {
  std::mt19937 rng(1);
  const Weights d = MakeWeights(&rng);
  const Program p = MakeProgram(d, true);
  const Graph g(*p);
  int prepared = 0;
  for (const auto& pr : g.prepared) prepared += pr != nullptr;
  EXPECT_EQ(3, prepared);  // the plain matmul's w1, the convs' wc and wp
  ASSERT_EQ(1u, g.mm_fusions.size());
  EXPECT_NE(nullptr, g.mm_fusions[0].packed);
  EXPECT_NE(nullptr, g.mm_fusions[0].packed_source);
}

// Default weights, own weights, a copy of the defaults, then the defaults again, on one
// runtime: every run equals the plain-input program run on the same weights, bit for bit.
TEST(Prepack, OwnWeightsReplaceThePackedDefaults) {
  std::mt19937 rng(2);
  const Weights d = MakeWeights(&rng), own = MakeWeights(&rng);
  const Program with_params = MakeProgram(d, true), plain = MakeProgram(d, false);
  const std::vector<std::string> all = {"x", "img", "w1", "w2", "b2", "wc", "bc", "wp"};
  for (int threads : {1, 2}) {
    Options o;
    o.num_threads = threads;
    Runtime rp(with_params, o), ru(plain, o);
    for (int64_t n : {int64_t{3}, int64_t{0}, int64_t{17}}) {
      const Arr x = Random(DType::kF32, {n, 40}, &rng),
                img = Random(DType::kF32, {n, 6, 7, 5}, &rng);
      for (int round = 0; round < 4; ++round) {
        // 0: defaults (left out), 1: own weights, 2: a copy of the defaults, 3: defaults.
        const Weights& w = round == 1 ? own : d;
        const std::vector<Arr> want = RunAll(ru, all, {x, img, w.w1, w.w2, w.b2, w.wc, w.bc, w.wp});
        std::vector<Arr> got;
        if (round == 0 || round == 3) {
          got = RunAll(rp, {"x", "img"}, {x, img});
        } else {
          got = RunAll(rp, all, {x, img, w.w1, w.w2, w.b2, w.wc, w.bc, w.wp});
        }
        ASSERT_EQ(4u, got.size());
        for (size_t k = 0; k < 4; ++k) {
          ASSERT_EQ(want[k].shape, got[k].shape);
          EXPECT_EQ(want[k].bytes, got[k].bytes) << "output " << k << ", N " << n << ", round "
                                                 << round << ", " << threads << " threads";
        }
      }
    }
  }
}

// x^T @ y, x @ y^T and x^T @ y^T read the transposes' operands through swapped strides (no
// transpose step): the bits of the same program with matmul fusion off, at sizes 0, 1 and
// past a k block (300 > 256), on 1 and 2 threads. A transpose used twice, or also an output,
// is computed as before.
TEST(TransposedOperands, ReadThroughStridesBitForBit) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  scope->Declare("M", 0, dim::kPosInf);
  scope->Declare("K", 0, dim::kPosInf);
  scope->Declare("N", 0, dim::kPosInf);
  trace::Trace tr(scope.get());
  const Tensor* a = tr.Input("a", DType::kF32, "K, M");  // read as a^T [M, K]
  const Tensor* b = tr.Input("b", DType::kF32, "K, N");  // [K, N]
  const Tensor* c = tr.Input("c", DType::kF32, "N, K");  // read as c^T [K, N]
  const Tensor* d = tr.Input("d", DType::kF32, "M, K");  // [M, K]
  const Tensor* e = tr.Input("e", DType::kF32, "M, K");  // its transpose used twice
  const Tensor* y1 = tr.MatMul(tr.Transpose(a, {1, 0}), b);
  const Tensor* y2 = tr.MatMul(d, tr.Transpose(c, {1, 0}));
  const Tensor* y3 = tr.MatMul(tr.Transpose(a, {1, 0}), tr.Transpose(c, {1, 0}));
  const Tensor* et = tr.Transpose(e, {1, 0});  // [K, M], used twice
  const Tensor* y4 = tr.MatMul(d, et);         // [M, M]
  const Tensor* y5 = tr.Transpose(c, {1, 0});  // an output: not fused away
  const Tensor* y6 = tr.MatMul(d, y5);
  const Tensor* y7 = tr.MatMul(tr.Transpose(b, {1, 0}), et);  // [N, M]: b^T fused, et not
  const Program p(program::Program::FromTrace(tr, {a, b, c, d, e}, {y1, y2, y3, y4, y5, y6, y7},
                                              {"y1", "y2", "y3", "y4", "y5", "y6", "y7"}));
  const Graph fused(*p);
  int transposed = 0;
  for (const MatmulFusion& f : fused.mm_fusions) {
    transposed += (f.a_transpose >= 0) + (f.b_transpose >= 0);
  }
  EXPECT_EQ(5, transposed);  // y1 1, y2 1, y3 2, y7 1 (b^T); not et (y4, y7), y5 (y6)
  std::mt19937 rng(5);
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  for (int threads : {1, 2}) {
    Options on, off;
    on.num_threads = off.num_threads = threads;
    off.fuse_matmul_epilogue = false;
    Runtime rf(p, on), ru(p, off);
    for (const std::vector<int64_t>& mkn :
         {std::vector<int64_t>{5, 7, 3}, {1, 1, 1}, {0, 4, 2}, {3, 0, 5}, {70, 300, 45}}) {
      const int64_t m = mkn[0], k = mkn[1], n = mkn[2];
      const std::vector<Arr> in = {
          Random(DType::kF32, {k, m}, &rng), Random(DType::kF32, {k, n}, &rng),
          Random(DType::kF32, {n, k}, &rng), Random(DType::kF32, {m, k}, &rng),
          Random(DType::kF32, {m, k}, &rng)};
      const std::vector<Arr> want = RunAll(ru, names, in), got = RunAll(rf, names, in);
      ASSERT_EQ(7u, got.size());
      for (size_t o = 0; o < 7; ++o) {
        ASSERT_EQ(want[o].shape, got[o].shape);
        EXPECT_EQ(want[o].bytes, got[o].bytes)
            << "y" << o + 1 << " m " << m << " k " << k << " n " << n << ", " << threads;
      }
      // y1 against the definition.
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t q = 0; q < k; ++q) {
            sum += double(in[0].data<float>()[q * m + i]) * in[1].data<float>()[q * n + j];
          }
          ASSERT_NEAR(sum, got[0].data<float>()[i * n + j], 1e-4);
        }
      }
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace shp
