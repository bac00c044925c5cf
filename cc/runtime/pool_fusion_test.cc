// PoolFusion (plan.h): the composite avg_pool that excludes the padding (a window sum divided by
// the window sum of ones) runs as one ReduceWindowMean step. Its outputs are the bits of the same
// program with fusion off (Options::fuse_elementwise) for 1 to 3 spatial axes, strides, dilations,
// pads, ceil mode's overhang, f32 and f64, batch 0, 1 and 3, 1 and 2 threads, and match the mean
// of the input positions of each window; the other avg_pool forms and a sum with another use stay
// unfused and right.
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
using testing::Random;
using testing::RunAll;

struct PoolCase {
  const char* name;
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  bool ceil_mode;
  std::vector<std::vector<int64_t>> spatial;  // input sizes to run
};

std::vector<PoolCase> Cases() {
  return {
      {"3x3 s1 p1", {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, {{12, 9}, {1, 1}, {3, 20}}},
      {"3x3 s2 p1", {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, {{15, 16}, {1, 2}}},
      {"2x3 asym pads", {2, 3}, {1, 2}, {1, 1}, {0, 2, 1, 0}, false, {{8, 11}}},
      {"3x3 ceil", {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, {{10, 7}, {4, 4}}},
      {"dilated", {2, 2}, {1, 1}, {2, 2}, {1, 1, 1, 1}, false, {{9, 6}}},
      {"1-D", {5}, {2}, {1}, {2, 2}, false, {{31}, {1}}},
      {"3-D", {2, 3, 2}, {1, 2, 1}, {1, 1, 1}, {1, 1, 0, 0, 1, 1}, false, {{4, 5, 6}}},
  };
}

// x [N, 3, *spatial] (N and the spatial sizes symbolic); y = avg_pool(x), maybe also `extra`.
Program PoolProgram(const PoolCase& c, DType t, bool count_include_pad, bool sum_twice = false) {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  scope->Declare("N", 0, dim::kPosInf);
  trace::Trace tr(scope.get());
  std::string xs = "N, 3";
  for (size_t i = 0; i < c.kernel.size(); ++i) {
    scope->Declare("S" + std::to_string(i), 1, dim::kPosInf);
    xs += ", S" + std::to_string(i);
  }
  const Tensor* x = tr.Input("x", t, xs);
  const Tensor* y = ops::composites::AvgPool(
      x, c.kernel.size(), c.kernel.data(), c.strides.data(), c.dilations.data(), c.pads.data(),
      ops::composites::AutoPad::kNotSet, c.ceil_mode, count_include_pad);
  std::vector<const Tensor*> outs{y};
  std::vector<std::string> names{"y"};
  if (sum_twice) {  // the window sum also an output: nothing fuses
    outs.push_back(tr.Binary(OpKind::kMul, y, y));
    names.push_back("y2");
  }
  return Program(program::Program::FromTrace(tr, {x}, outs, names));
}

double At(const Arr& a, int64_t i) {
  return a.dtype == DType::kF32 ? a.data<float>()[i] : a.data<double>()[i];
}

// The mean over the input positions of each window, in double.
void ExpectMeans(const PoolCase& c, const Arr& x, const Arr& y) {
  const size_t ns = c.kernel.size();
  std::vector<int64_t> out(y.shape.begin() + 2, y.shape.end());
  int64_t plane = 1, in_plane = 1;
  for (size_t a = 0; a < ns; ++a) {
    plane *= out[a];
    in_plane *= x.shape[2 + a];
  }
  for (int64_t nc = 0; nc < x.shape[0] * x.shape[1]; ++nc) {
    for (int64_t q = 0; q < plane; ++q) {
      std::vector<int64_t> oq(ns);
      for (size_t a = ns, r = static_cast<size_t>(q); a-- > 0;) {
        oq[a] = static_cast<int64_t>(r) % out[a];
        r /= static_cast<size_t>(out[a]);
      }
      int64_t taps = 1;
      for (int64_t k : c.kernel) taps *= k;
      double sum = 0;
      int64_t n = 0;
      for (int64_t t = 0; t < taps; ++t) {
        int64_t flat = 0, rest = t;
        bool inside = true;
        for (size_t a = ns; a-- > 0;) {
          const int64_t j = rest % c.kernel[a];
          rest /= c.kernel[a];
          const int64_t pos = oq[a] * c.strides[a] + j * c.dilations[a] - c.pads[a];
          inside = inside && pos >= 0 && pos < x.shape[2 + a];
        }
        if (!inside) continue;
        rest = t;
        int64_t mult = 1;
        for (size_t a = ns; a-- > 0;) {
          const int64_t j = rest % c.kernel[a];
          rest /= c.kernel[a];
          flat += (oq[a] * c.strides[a] + j * c.dilations[a] - c.pads[a]) * mult;
          mult *= x.shape[2 + a];
        }
        sum += At(x, nc * in_plane + flat);
        ++n;
      }
      ASSERT_NEAR(sum / static_cast<double>(n), At(y, nc * plane + q), 1e-5)
          << c.name << " at " << nc << ", " << q;
    }
  }
}

TEST(PoolFusion, EqualsTheUnfusedOpsBitForBit) {
  std::mt19937 rng(11);
  for (const PoolCase& c : Cases()) {
    for (DType t : {DType::kF32, DType::kF64}) {
      const Program p = PoolProgram(c, t, false);
      const Graph fused(*p), plain(*p, true, true, /*fuse_elementwise=*/false);
      ASSERT_EQ(1u, fused.pool_fusions.size()) << c.name;
      ASSERT_EQ(0u, plain.pool_fusions.size()) << c.name;
      for (int threads : {1, 2}) {
        Options on, off;
        on.num_threads = off.num_threads = threads;
        off.fuse_elementwise = false;
        Runtime rf(p, on), ru(p, off);
        for (int64_t n : {int64_t{1}, int64_t{0}, int64_t{3}}) {
          for (const std::vector<int64_t>& sp : c.spatial) {
            std::vector<int64_t> xs{n, 3};
            xs.insert(xs.end(), sp.begin(), sp.end());
            const std::vector<Arr> in = {Random(t, xs, &rng)};
            const std::vector<Arr> want = RunAll(ru, {"x"}, in), got = RunAll(rf, {"x"}, in);
            ASSERT_EQ(want[0].shape, got[0].shape);
            ASSERT_EQ(want[0].bytes, got[0].bytes) << c.name << ", N " << n << ", " << threads;
            if (threads == 1) ExpectMeans(c, in[0], got[0]);
          }
        }
      }
    }
  }
}

// count_include_pad with an overhang (the padded-ones count) and a pool whose result has
// another use than the division's... stay the plain ops; a window sum used twice too.
TEST(PoolFusion, OtherFormsStayUnfused) {
  const std::vector<PoolCase> cases = Cases();
  const Program include = PoolProgram(cases[3], DType::kF32, true);
  EXPECT_EQ(0u, Graph(*include).pool_fusions.size());
  // A pool without pads divides by a constant: nothing to fuse.
  PoolCase no_pads = cases[0];
  no_pads.pads = {0, 0, 0, 0};
  EXPECT_EQ(0u, Graph(*PoolProgram(no_pads, DType::kF32, false)).pool_fusions.size());
  // The fused div may have other users (y * y): still one fusion, right values.
  const Program twice = PoolProgram(cases[0], DType::kF32, false, true);
  EXPECT_EQ(1u, Graph(*twice).pool_fusions.size());
  std::mt19937 rng(3);
  Options on, off;
  off.fuse_elementwise = false;
  Runtime rf(twice, on), ru(twice, off);
  const std::vector<Arr> in = {Random(DType::kF32, {2, 3, 7, 5}, &rng)};
  const std::vector<Arr> want = RunAll(ru, {"x"}, in), got = RunAll(rf, {"x"}, in);
  ASSERT_EQ(2u, got.size());
  EXPECT_EQ(want[0].bytes, got[0].bytes);
  EXPECT_EQ(want[1].bytes, got[1].bytes);
}

}  // namespace
}  // namespace runtime
}  // namespace shp
