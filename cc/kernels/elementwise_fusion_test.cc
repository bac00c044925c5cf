// The evaluator's fusions (Mul+Add, the unary passes, the direct output) against the same
// program evaluated unfused (ElementwiseProgram::set_fusion(false)): bit for bit, since the fused
// passes do the same vector arithmetic. First the programs of issue 36 (a Mul fused into an Add
// and a tanh/exp fused into that same Mul: the Add read a register no pass had written), then
// random register programs in the order the runtime emits them (operands first, depth first)
// and in random topological orders. Every TEST_P runs once per Highway target compiled in and
// supported by this CPU.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/elementwise_test_util.h"
#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"

namespace shp {
namespace kernels {
namespace {

HWY_BEFORE_TEST(ElementwiseFusionTest);

// Runs `p` over n elements of float inputs `in` (each of n elements, or 1 element broadcast
// when its size is 1) with fusion on and off, and returns whether the bits agree; `out` gets
// the fused result of output 0.
bool FusedMatchesUnfused(ElementwiseProgram& p, const std::vector<std::vector<float>>& in,
                         int64_t n, ThreadPool* pool, std::vector<float>* out, std::string* why) {
  std::vector<ElementwiseInput> ins(in.size());
  const int64_t zero = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    ins[k].data = in[k].data();
    ins[k].strides = in[k].size() == 1 && n != 1 ? &zero : nullptr;
  }
  const int nout = p.num_outputs();
  std::vector<std::vector<float>> got[2];
  for (int fuse = 0; fuse < 2; ++fuse) {
    p.set_fusion(fuse == 1);
    got[fuse].assign(static_cast<size_t>(nout), std::vector<float>(static_cast<size_t>(n), -7.f));
    std::vector<void*> outs;
    for (auto& o : got[fuse]) outs.push_back(o.data());
    const int64_t shape[1] = {n};
    if (!EvalElementwise(p, 1, shape, ins.data(), static_cast<int>(ins.size()), outs.data(), nout,
                         pool)) {
      *why = "EvalElementwise refused the program";
      return false;
    }
  }
  p.set_fusion(true);
  for (int j = 0; j < nout; ++j) {
    for (int64_t i = 0; i < n; ++i) {
      const float a = got[1][static_cast<size_t>(j)][static_cast<size_t>(i)];
      const float b = got[0][static_cast<size_t>(j)][static_cast<size_t>(i)];
      if (std::memcmp(&a, &b, 4) != 0 && !(std::isnan(a) && std::isnan(b))) {
        *why = "output " + std::to_string(j) + " element " + std::to_string(i) + " of " +
               std::to_string(n) + ": fused " + std::to_string(a) + ", unfused " +
               std::to_string(b);
        return false;
      }
    }
  }
  *out = got[1][0];
  return true;
}

// The expressions of issue 36, over x, y, z (inputs 0, 1, 2), written into a register program
// operands first as the runtime's GroupBuilder emits them; `ref` is the same in double.
struct Case {
  const char* text;
  std::function<int(ElementwiseProgram&, int, int, int)> build;
  std::function<double(double, double, double)> ref;
};

std::vector<Case> IssueCases() {
  using B = BinaryOp;
  using U = UnaryOp;
  return {
      {"z + x * tanh(y)",
       [](ElementwiseProgram& p, int, int, int) {
         const int z = p.Input(2, DType::kF32), x = p.Input(0, DType::kF32);
         const int t = p.Unary(U::kTanh, p.Input(1, DType::kF32));
         return p.Binary(B::kAdd, z, p.Binary(B::kMul, x, t));
       },
       [](double x, double y, double z) { return z + x * std::tanh(y); }},
      {"sub(add(add(y, mul(sub(z, y), exp(x))), z), mul(z, sub(y, maximum(x, x))))",
       [](ElementwiseProgram& p, int, int, int) {
         const int y = p.Input(1, DType::kF32), z = p.Input(2, DType::kF32);
         const int s = p.Binary(B::kSub, z, y);
         const int e = p.Unary(U::kExp, p.Input(0, DType::kF32));
         const int a = p.Binary(B::kAdd, p.Binary(B::kAdd, y, p.Binary(B::kMul, s, e)), z);
         const int x = p.Input(0, DType::kF32);
         const int m = p.Binary(B::kMul, z, p.Binary(B::kSub, y, p.Binary(B::kMax, x, x)));
         return p.Binary(B::kSub, a, m);
       },
       [](double x, double y, double z) {
         return (y + (z - y) * std::exp(x)) + z - z * (y - std::max(x, x));
       }},
      {"add(mul(maximum(maximum(sub(y, y), y), mul(sub(y, z), mul(y, z))), z), "
       "mul(exp(maximum(y, x)), z))",
       [](ElementwiseProgram& p, int, int, int) {
         const int y = p.Input(1, DType::kF32), z = p.Input(2, DType::kF32);
         const int x = p.Input(0, DType::kF32);
         const int m1 = p.Binary(B::kMax, p.Binary(B::kSub, y, y), y);
         const int m2 = p.Binary(B::kMul, p.Binary(B::kSub, y, z), p.Binary(B::kMul, y, z));
         const int l = p.Binary(B::kMul, p.Binary(B::kMax, m1, m2), z);
         const int e = p.Unary(U::kExp, p.Binary(B::kMax, y, x));
         return p.Binary(B::kAdd, l, p.Binary(B::kMul, e, z));
       },
       [](double x, double y, double z) {
         return std::max(std::max(y - y, y), (y - z) * (y * z)) * z + std::exp(std::max(y, x)) * z;
       }},
      {"abs(add(add(x, mul(neg(z), x)), mul(y, exp(maximum(z, x)))))",
       [](ElementwiseProgram& p, int, int, int) {
         const int x = p.Input(0, DType::kF32), z = p.Input(2, DType::kF32);
         const int a = p.Binary(B::kAdd, x, p.Binary(B::kMul, p.Unary(U::kNeg, z), x));
         const int y = p.Input(1, DType::kF32);
         const int e = p.Unary(U::kExp, p.Binary(B::kMax, z, x));
         return p.Unary(U::kAbs, p.Binary(B::kAdd, a, p.Binary(B::kMul, y, e)));
       },
       [](double x, double y, double z) {
         return std::fabs(x + (-z) * x + y * std::exp(std::max(z, x)));
       }},
      {"LSTM update: f*c + i*tanh(g), then o*tanh(c')",
       [](ElementwiseProgram& p, int, int, int) {
         // x = the pre-activation of f, i and o alike; y = g; z = c.
         const int pre = p.Input(0, DType::kF32);
         const int f = p.Unary(U::kLogistic, pre);
         const int c = p.Input(2, DType::kF32);
         const int fc = p.Binary(B::kMul, f, c);
         const int i = p.Unary(U::kLogistic, pre);
         const int g = p.Unary(U::kTanh, p.Input(1, DType::kF32));
         const int c2 = p.Binary(B::kAdd, fc, p.Binary(B::kMul, i, g));
         const int o = p.Unary(U::kLogistic, pre);
         return p.Binary(B::kMul, o, p.Unary(U::kTanh, c2));
       },
       [](double x, double y, double z) {
         const double s = 1 / (1 + std::exp(-x));
         return s * std::tanh(s * z + s * std::tanh(y));
       }},
  };
}

TEST_P(ElementwiseFusionTest, IssueProgramsMatchUnfusedAndReference) {
  std::mt19937 rng(36);
  ThreadPool pool(2);
  for (const Case& c : IssueCases()) {
    ElementwiseProgram p;
    p.AddOutput(c.build(p, 0, 1, 2));
    for (int64_t n : {1, 4, 12, 37, 255, 1000, 1025, 140000}) {
      for (int bcast = 0; bcast < 4; ++bcast) {  // 0: none; k: input k-1 is one broadcast value
        std::vector<std::vector<float>> in(3);
        for (int k = 0; k < 3; ++k) {
          in[static_cast<size_t>(k)] =
              RandomVec<float>(bcast == k + 1 ? 1 : static_cast<size_t>(n), rng, -2, 2);
        }
        std::vector<float> out;
        std::string why;
        ASSERT_TRUE(FusedMatchesUnfused(p, in, n, n > 100000 ? &pool : nullptr, &out, &why))
            << c.text << ": " << why;
        for (int64_t i = 0; i < n; ++i) {
          auto at = [&](int k) {
            const std::vector<float>& v = in[static_cast<size_t>(k)];
            return static_cast<double>(v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]);
          };
          const double want = c.ref(at(0), at(1), at(2));
          ASSERT_NEAR(want, out[static_cast<size_t>(i)], 1e-5 * (1 + std::fabs(want)) * 8)
              << c.text << " n " << n << " element " << i;
        }
      }
    }
  }
}

// The issue's first program decides no fused unary inside the Mul that its Add fuses.
TEST(ElementwiseFusion, MulFusedIntoAddKeepsItsUnary) {
  ElementwiseProgram p;
  const int z = p.Input(2, DType::kF32), x = p.Input(0, DType::kF32);
  const int t = p.Unary(UnaryOp::kTanh, p.Input(1, DType::kF32));
  const int m = p.Binary(BinaryOp::kMul, x, t);
  const int a = p.Binary(BinaryOp::kAdd, z, m);
  p.AddOutput(a);
  EXPECT_EQ(m, p.fused_mul()[static_cast<size_t>(a)]);
  EXPECT_EQ(-1, p.fused_unary()[static_cast<size_t>(m)]);
  EXPECT_EQ(0, p.fused_into_next()[static_cast<size_t>(t)]);
  p.set_fusion(false);
  EXPECT_EQ(-1, p.fused_mul()[static_cast<size_t>(a)]);
  EXPECT_EQ(-1, p.direct_output());
}

// Random float DAGs (bit for bit; a NaN result may differ in sign and payload): depth <= 8,
// intermediates reused up to 4 times, several outputs (an input or a reused intermediate among
// them), broadcast inputs, emitted depth first from the outputs (as the runtime does) or in a
// random topological order; f32 and f64 programs; every length class (1, SIMD tails, a chunk's and
// a tile's edges, several thread chunks).
TEST_P(ElementwiseFusionTest, RandomProgramsMatchUnfused) {
  std::mt19937 rng(3600);
  ThreadPool pool(2);
  const UnaryOp unary[] = {UnaryOp::kNeg,  UnaryOp::kAbs,      UnaryOp::kExp,
                           UnaryOp::kTanh, UnaryOp::kLogistic, UnaryOp::kSqrt};
  const BinaryOp binary[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul,
                             BinaryOp::kMul, BinaryOp::kMax, BinaryOp::kAdd};
  struct Node {
    int kind;  // 0 input, 1 const, 2 unary, 3 binary
    int op = 0, a = -1, b = -1, depth = 0;
    double value = 0;
  };
  const int programs = 400;
  for (int it = 0; it < programs; ++it) {
    const bool f64 = it % 5 == 4;
    const DType dt = f64 ? DType::kF64 : DType::kF32;
    const int ninputs = 1 + static_cast<int>(rng() % 4);
    std::vector<Node> g;
    for (int k = 0; k < ninputs; ++k) g.push_back({0, k});
    if (rng() % 2) g.push_back({1, 0, -1, -1, 0, 0.5 + static_cast<double>(rng() % 5)});
    const int nops = 2 + static_cast<int>(rng() % 14);
    for (int k = 0; k < nops; ++k) {
      auto pick = [&]() {  // recent nodes more often: chains; older ones: fan-out
        const int sz = static_cast<int>(g.size());
        for (int tries = 0; tries < 8; ++tries) {
          const int j = rng() % 3 ? sz - 1 - static_cast<int>(rng() % std::min(sz, 3))
                                  : static_cast<int>(rng() % static_cast<unsigned>(sz));
          if (g[static_cast<size_t>(j)].depth < 8) return j;
        }
        return static_cast<int>(rng() % static_cast<unsigned>(ninputs));
      };
      Node nd;
      if (rng() % 3 == 0) {
        nd.kind = 2;
        nd.op = static_cast<int>(unary[rng() % 6]);
        nd.a = pick();
        nd.depth = g[static_cast<size_t>(nd.a)].depth + 1;
      } else {
        nd.kind = 3;
        nd.op = static_cast<int>(binary[rng() % 6]);
        nd.a = pick();
        nd.b = pick();
        nd.depth =
            1 + std::max(g[static_cast<size_t>(nd.a)].depth, g[static_cast<size_t>(nd.b)].depth);
      }
      g.push_back(nd);
    }
    std::vector<int> outs = {static_cast<int>(g.size()) - 1};
    const int extra = static_cast<int>(rng() % 3);
    for (int k = 0; k < extra; ++k) outs.push_back(static_cast<int>(rng() % g.size()));
    // Emission order: depth first from the outputs, operands in order (the runtime's), or a
    // random topological order.
    std::vector<int> order;
    std::vector<char> placed(g.size(), 0);
    if (it % 3 != 2) {
      std::function<void(int)> visit = [&](int v) {
        if (placed[static_cast<size_t>(v)]) return;
        const Node& nd = g[static_cast<size_t>(v)];
        if (nd.a >= 0) visit(nd.a);
        if (nd.b >= 0) visit(nd.b);
        placed[static_cast<size_t>(v)] = 1;
        order.push_back(v);
      };
      for (int o : outs) visit(o);
    } else {
      std::vector<int> ready;
      while (order.size() < g.size()) {
        ready.clear();
        for (size_t v = 0; v < g.size(); ++v) {
          const Node& nd = g[v];
          if (!placed[v] && (nd.a < 0 || placed[static_cast<size_t>(nd.a)]) &&
              (nd.b < 0 || placed[static_cast<size_t>(nd.b)])) {
            ready.push_back(static_cast<int>(v));
          }
        }
        const int v = ready[rng() % ready.size()];
        placed[static_cast<size_t>(v)] = 1;
        order.push_back(v);
      }
    }
    ElementwiseProgram p;
    std::vector<int> reg(g.size(), -1);
    for (int v : order) {
      const Node& nd = g[static_cast<size_t>(v)];
      int r;
      switch (nd.kind) {
        case 0:
          r = p.Input(nd.op, dt);
          break;
        case 1:
          r = p.Constant(dt, nd.value);
          break;
        case 2:
          r = p.Unary(static_cast<UnaryOp>(nd.op), reg[static_cast<size_t>(nd.a)]);
          break;
        default:
          r = p.Binary(static_cast<BinaryOp>(nd.op), reg[static_cast<size_t>(nd.a)],
                       reg[static_cast<size_t>(nd.b)]);
      }
      reg[static_cast<size_t>(v)] = r;
    }
    for (int o : outs) p.AddOutput(reg[static_cast<size_t>(o)]);
    const int64_t lens[] = {1, 7, 17, 33, 256, 257, 1023, 1025, 70001, 140000};
    const int64_t n = lens[rng() % (it % 10 == 0 ? 10 : 8)];
    const size_t es = f64 ? 8 : 4;
    std::vector<std::vector<uint8_t>> data(static_cast<size_t>(ninputs));
    std::vector<ElementwiseInput> ins(static_cast<size_t>(ninputs));
    const int64_t zero = 0;
    for (int k = 0; k < ninputs; ++k) {
      const bool bc = n > 1 && rng() % 4 == 0;
      const size_t len = bc ? 1 : static_cast<size_t>(n);
      std::vector<uint8_t>& d = data[static_cast<size_t>(k)];
      d.resize(len * es);
      std::uniform_real_distribution<double> u(-3, 3);
      for (size_t i = 0; i < len; ++i) {
        double v = u(rng);
        if (rng() % 61 == 0) {  // special values
          const double special[] = {-0.0, std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    -std::numeric_limits<double>::quiet_NaN()};
          v = special[rng() % 5];
        }
        if (f64) {
          std::memcpy(d.data() + 8 * i, &v, 8);
        } else {
          const float f = static_cast<float>(v);
          std::memcpy(d.data() + 4 * i, &f, 4);
        }
      }
      ins[static_cast<size_t>(k)] = {d.data(), bc ? &zero : nullptr};
    }
    std::vector<std::vector<uint8_t>> got[2];
    for (int fuse = 0; fuse < 2; ++fuse) {
      p.set_fusion(fuse == 1);
      got[fuse].assign(outs.size(), std::vector<uint8_t>(static_cast<size_t>(n) * es, 0xA5));
      std::vector<void*> ptrs;
      for (auto& o : got[fuse]) ptrs.push_back(o.data());
      const int64_t shape[1] = {n};
      ASSERT_TRUE(EvalElementwise(p, 1, shape, ins.data(), ninputs, ptrs.data(),
                                  static_cast<int>(ptrs.size()), n > 65536 ? &pool : nullptr));
    }
    for (size_t j = 0; j < outs.size(); ++j) {
      for (int64_t i = 0; i < n; ++i) {
        const uint8_t* a = got[1][j].data() + static_cast<size_t>(i) * es;
        const uint8_t* b = got[0][j].data() + static_cast<size_t>(i) * es;
        if (std::memcmp(a, b, es) == 0) continue;
        double x, y;
        if (f64) {
          std::memcpy(&x, a, 8);
          std::memcpy(&y, b, 8);
        } else {
          float fx, fy;
          std::memcpy(&fx, a, 4);
          std::memcpy(&fy, b, 4);
          x = fx;
          y = fy;
        }
        if (std::isnan(x) && std::isnan(y)) continue;  // a NaN's sign and payload may differ
        std::string text;  // the program, one instruction per line, with the fusions decided
        for (int r = 0; r < p.num_registers(); ++r) {
          const ElementwiseInstr& q = p.instrs()[static_cast<size_t>(r)];
          text += "  r" + std::to_string(r) + " = kind " +
                  std::to_string(static_cast<int>(q.kind)) + " op " + std::to_string(q.op) + " (r" +
                  std::to_string(q.a) + ", r" + std::to_string(q.b) + ") input " +
                  std::to_string(q.input) + " fused_mul " +
                  std::to_string(p.fused_mul()[static_cast<size_t>(r)]) + " fused_unary " +
                  std::to_string(p.fused_unary()[static_cast<size_t>(r)]) + " muladd " +
                  std::to_string(p.unary_muladd()[static_cast<size_t>(r)]) + "\n";
        }
        FAIL() << text << "program " << it << " output " << j << " element " << i << " of " << n
               << ": fused " << x << ", unfused " << y;
      }
    }
  }
}

// Every program above (and in the other TESTs of this binary run before it) had a layout that
// keeps the evaluator's contract: none was demoted to unfused evaluation.
TEST(ElementwiseFusion, NoLayoutBrokeTheContract) { EXPECT_EQ(0u, ElementwiseContractBreaks()); }

}  // namespace
}  // namespace kernels
}  // namespace shp
