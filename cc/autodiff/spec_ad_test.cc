// Every op's differentiability as the spec states it (cc/ops/ops.toml's `ad`, generated into
// op_list.h's SHP_OP_DIFFERENTIABILITY), checked op by op (one test per op, named after it):
//   ad = "float": a small program using the op passes ad_check.h's checks (JVP against central
//     finite differences, <vjp(ct), t> == <ct, jvp(t)>; f64, the symbolic size at 1, 2 and 5,
//     traced and loaded). Unary, binary and reduction ops get their family's program; every
//     other op needs a builder in OtherFloatCases() below, and the op's test fails, naming it,
//     when it has none: a new differentiable op cannot land untested.
//   ad = "zero": the op's float outputs, computed from a float input, have exactly-zero
//     tangents (JVP) and give exactly-zero gradients (VJP); its other outputs are not floating
//     point (the transformations never differentiate them), and so is checked, with their
//     conversion to f64 having a zero tangent. Unary and comparison ops get their family's
//     program; every other op needs a builder in OtherZeroCases().
//   ad = "none" (logical ops): the op refuses floating-point operands, so its result is never
//     floating point and the transformations, which apply the rules of float results only,
//     never reach it (its rule would throw an internal error); a program whose float path goes
//     around it (select on its result) passes the derivative checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cc/autodiff/ad_check.h"
#include "cc/autodiff/ad_spec.h"
#include "cc/autodiff/autodiff.h"
#include "cc/base/error.h"
#include "cc/ops/op_def.h"
#include "cc/program/subprogram.h"

namespace shp {
namespace ops {

// gtest prints the parameter of a failed test by its name (found by argument-dependent lookup).
static void PrintTo(OpKind op, std::ostream* os) { *os << OpName(op); }

}  // namespace ops

namespace autodiff {
namespace {

using testing::Ad;
using testing::Array;
using testing::Arrays;
using testing::Case;
using testing::CheckCase;
using testing::Domain;
using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Shapes = std::map<std::string, std::vector<int64_t>>;
using Tensors = std::vector<const Tensor*>;

const int64_t kSizes[] = {1, 2, 5};

const char* AdText(Ad ad) { return ad == Ad::kFloat ? "float" : ad == Ad::kZero ? "zero" : "none"; }

// ---- Programs ----------------------------------------------------------------------------

// An input of a case: its name, its shape in the variable n ("n, 3", "2, n + 4"), its dtype and,
// for integer inputs, the bound of its values ([0, bound)).
struct InputSpec {
  std::string name;
  std::string shape;
  DType dtype = DType::kF64;
  int64_t bound = 2;
  Domain domain = {};
};

// The shape `spec` at n = `n`: entries "n", "n + k" or integers.
std::vector<int64_t> Concrete(const std::string& spec, int64_t n) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < spec.size()) {
    size_t j = spec.find(',', i);
    if (j == std::string::npos) j = spec.size();
    std::string d = spec.substr(i, j - i);
    d.erase(0, d.find_first_not_of(' '));
    if (d == "n") {
      out.push_back(n);
    } else if (d.rfind("n + ", 0) == 0) {
      out.push_back(n + std::stoll(d.substr(4)));
    } else if (!d.empty()) {
      out.push_back(std::stoll(d));
    }
    i = j + 1;
  }
  return out;
}

using Body = std::function<Tensors(trace::Trace& t, const Tensors& in)>;

// A case on `inputs` whose outputs are `body`'s results; with `head`, each floating-point
// result y becomes y * cos(y), so that the cotangents reaching the op differ per element.
Case Make(const std::string& name, const std::vector<InputSpec>& inputs, Body body,
          bool head = true) {
  Case c;
  c.name = name;
  c.build = [inputs, body, head](trace::Trace& t, Tensors* in, Tensors* out) {
    for (const InputSpec& s : inputs) in->push_back(t.Input(s.name, s.dtype, s.shape));
    for (const Tensor* y : body(t, *in)) {
      const bool f = trace::IsFloat(y->type.dtype);
      out->push_back(head && f ? t.Binary(OpKind::kMul, y, t.Unary(OpKind::kCos, y)) : y);
    }
  };
  c.shapes = [inputs](int k) {
    Shapes s;
    for (const InputSpec& i : inputs) s[i.name] = Concrete(i.shape, kSizes[k]);
    return s;
  };
  for (const InputSpec& s : inputs) {
    if (trace::IsFloat(s.dtype)) {
      c.domains[s.name] = s.domain;
    } else {
      c.int_bounds[s.name] = s.bound;
    }
  }
  return c;
}

const dim::Expr* N(trace::Trace& t) { return t.dims()->Var("n"); }
const dim::Expr* K(trace::Trace& t, int64_t v) { return t.dims()->Constant(v); }

// ---- ad = "float" ------------------------------------------------------------------------

// The ops whose domain is not [-2, 2] (away from poles and kinks).
Domain UnaryDomain(OpKind op) {
  const std::map<OpKind, Domain> d = {
      {OpKind::kLog, {0.3, 3}},     {OpKind::kLog1p, {-0.5, 2}},   {OpKind::kSqrt, {0.3, 3}},
      {OpKind::kRsqrt, {0.3, 3}},   {OpKind::kTan, {-1.2, 1.2}},   {OpKind::kAsin, {-0.8, 0.8}},
      {OpKind::kAcos, {-0.8, 0.8}}, {OpKind::kAtanh, {-0.8, 0.8}}, {OpKind::kAcosh, {1.2, 3}},
  };
  return d.count(op) ? d.at(op) : Domain{};
}

std::pair<Domain, Domain> BinaryDomains(OpKind op) {
  const std::map<OpKind, std::pair<Domain, Domain>> d = {
      {OpKind::kDiv, {{}, {0.5, 2}}},
      {OpKind::kPow, {{0.5, 2}, {}}},
      {OpKind::kRem, {{-5, 5}, {1, 2}}},
  };
  return d.count(op) ? d.at(op) : std::pair<Domain, Domain>{};
}

Domain ReduceDomain(OpKind op) { return op == OpKind::kReduceProd ? Domain{0.5, 1.5} : Domain{}; }

Case UnaryFloatCase(OpKind op) {
  return Make(ops::OpName(op), {{"x", "n, 3", DType::kF64, 2, UnaryDomain(op)}},
              [op](trace::Trace& t, const Tensors& x) { return Tensors{t.Unary(op, x[0])}; });
}

// b broadcast along the symbolic axis.
Case BinaryFloatCase(OpKind op) {
  const std::pair<Domain, Domain> d = BinaryDomains(op);
  return Make(
      ops::OpName(op),
      {{"a", "n, 3", DType::kF64, 2, d.first}, {"b", "1, 3", DType::kF64, 2, d.second}},
      [op](trace::Trace& t, const Tensors& x) { return Tensors{t.Binary(op, x[0], x[1])}; });
}

Case ReduceFloatCase(OpKind op) {
  return Make(ops::OpName(op), {{"x", "n, 3", DType::kF64, 2, ReduceDomain(op)}},
              [op](trace::Trace& t, const Tensors& x) {
                return Tensors{t.Reduce(op, x[0], {1}, false), t.Reduce(op, x[0], {0}, true),
                               t.Reduce(op, x[0], {}, false)};
              });
}

struct FloatCase {
  Case c;
  uint32_t seed = 1;
};

// A control-flow subprogram traced in t by `f` on fresh inputs of `types` (shapes as specs).
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
      program::Program::FromTrace(*b.trace, b.inputs, b.outputs, names));
}

// h' = tanh(h @ w + x), y = h * x: a scan's body (carry h, slice x, constant w).
Tensors RnnStep(trace::Trace& t, const Tensors& a) {
  const Tensor* h = t.Unary(OpKind::kTanh, t.Binary(OpKind::kAdd, t.MatMul(a[0], a[2]), a[1]));
  return Tensors{h, t.Binary(OpKind::kMul, a[0], a[1])};
}

// One small program per op outside the unary, binary and reduction families (the family
// tests, cc/autodiff/*_ad_test.cc, cover each op's attributes more thoroughly).
const std::map<OpKind, FloatCase>& OtherFloatCases() {
  static const std::map<OpKind, FloatCase> cases = [] {
    std::map<OpKind, FloatCase> m;
    auto add = [&m](OpKind op, std::vector<InputSpec> in, Body body, uint32_t seed = 1) {
      m[op] = FloatCase{Make(ops::OpName(op), in, body), seed};
    };
    add(OpKind::kSelect, {{"a", "n, 3"}, {"b", "3"}}, [](trace::Trace& t, const Tensors& x) {
      const Tensor* pred = t.Binary(OpKind::kGt, x[0], x[1]);
      return Tensors{t.Select(pred, t.Binary(OpKind::kMul, x[0], x[0]), x[1]),
                     t.Select(pred, x[1], t.Unary(OpKind::kSin, x[0]))};
    });
    // Between floats (derivative 1) and through an integer (zero on that path).
    add(OpKind::kConvert, {{"a", "n, 3"}}, [](trace::Trace& t, const Tensors& x) {
      const Tensor* i = t.Convert(t.Unary(OpKind::kFloor, x[0]), DType::kI32);
      return Tensors{t.Convert(x[0], DType::kF64),
                     t.Binary(OpKind::kMul, x[0], t.Convert(i, DType::kF64))};
    });
    add(OpKind::kBroadcastTo, {{"a", "n, 1"}, {"b", "3"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.BroadcastTo(x[0], {N(t), K(t, 3)}), t.BroadcastTo(x[1], {N(t), K(t, 3)})};
    });
    add(OpKind::kReshape, {{"x", "n, 6"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Reshape(x[0], {N(t), K(t, 2), K(t, 3)}),
                     t.Reshape(x[0], {nullptr, K(t, 3)})};
    });
    add(OpKind::kTranspose, {{"x", "n, 2, 3"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Transpose(x[0], {2, 0, 1}), t.Transpose(x[0], {-2, -1, 0})};
    });
    add(OpKind::kConcatenate, {{"a", "n, 3"}, {"b", "2, 3"}},
        [](trace::Trace& t, const Tensors& x) {
          return Tensors{t.Concatenate({x[0], x[1], x[0]}, 0), t.Concatenate({x[0], x[0]}, -1)};
        });
    add(OpKind::kSlice, {{"x", "n, 7"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Slice(x[0], {K(t, 0), K(t, 1)}, {N(t), K(t, 6)}, {1, 2})};
    });
    add(OpKind::kPad, {{"x", "n, 3"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Pad(x[0], {K(t, 1), K(t, 0)}, {N(t), K(t, 2)}, 1.5)};
    });
    add(OpKind::kMatMul, {{"a", "n, 3"}, {"b", "3, 4"}},
        [](trace::Trace& t, const Tensors& x) { return Tensors{t.MatMul(x[0], x[1])}; });
    add(OpKind::kDotGeneral, {{"a", "2, n, 3, 4"}, {"b", "4, 2, 5, 3"}},
        [](trace::Trace& t, const Tensors& x) {
          return Tensors{t.DotGeneral(x[0], x[1], ops::DotDims{{0}, {1}, {2, 3}, {3, 0}})};
        });
    add(OpKind::kSoftmax, {{"x", "n, 4"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Softmax(x[0], -1), t.Softmax(x[0], 0)};
    });
    add(OpKind::kLayerNorm, {{"x", "n, 4"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.LayerNorm(x[0], -1, 1e-5), t.LayerNorm(x[0], 0, 0.5)};
    });
    add(OpKind::kCumSum, {{"x", "n, 4"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.CumSum(x[0], 0), t.CumSum(x[0], -1)};
    });
    add(OpKind::kTake, {{"x", "n, 3"}, {"i", "n, 4", DType::kI32, 3}},
        [](trace::Trace& t, const Tensors& x) { return Tensors{t.Take(x[0], x[1], 1)}; });
    add(OpKind::kTakeAlongAxis, {{"x", "n, 3"}, {"i", "n, 4", DType::kI32, 3}},
        [](trace::Trace& t, const Tensors& x) {
          return Tensors{t.Apply(OpKind::kTakeAlongAxis, ops::AxisAttrs{1}, {x[0], x[1]})};
        });
    // attention: grouped-query heads (4 over 2), a float mask broadcast over the batch and
    // the rows, both causal alignments with s != l.
    add(OpKind::kAttention,
        {{"q", "n, 4, 3, 2"}, {"k", "n, 2, 5, 2"}, {"v", "n, 2, 5, 3"}, {"m", "4, 1, 5"}},
        [](trace::Trace& t, const Tensors& x) {
          return Tensors{
              t.Apply(OpKind::kAttention, ops::AttentionAttrs{0.0, 1}, {x[0], x[1], x[2], x[3]}),
              t.Apply(OpKind::kAttention, ops::AttentionAttrs{0.7, 2}, {x[0], x[1], x[2], x[3]})};
        });
    add(OpKind::kReverse, {{"x", "n, 3, 2"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Apply(OpKind::kReverse, ops::ReverseAttrs{{0, -1}}, {x[0]})};
    });
    add(OpKind::kTrilu, {{"x", "2, n + 1, 3"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Apply(OpKind::kTrilu, ops::TriluAttrs{1, true}, {x[0]}),
                     t.Apply(OpKind::kTrilu, ops::TriluAttrs{-1, false}, {x[0]})};
    });
    // Control flow: a forward and a reversed scan (an RNN step), a cond on the data.
    add(OpKind::kScan, {{"h", "3"}, {"x", "n, 3"}, {"w", "3, 3"}},
        [](trace::Trace& t, const Tensors& x) {
          const std::vector<std::pair<DType, std::string>> types = {
              {DType::kF64, "3"}, {DType::kF64, "3"}, {DType::kF64, "3, 3"}};
          ops::ControlFlowAttrs a;
          a.bodies = {Sub(t, types, [&t](const Tensors& in) { return RnnStep(t, in); })};
          a.counts = {1, 1};
          Tensors out = t.ControlFlow(OpKind::kScan, a, x);
          a.reverse = true;
          for (const Tensor* r : t.ControlFlow(OpKind::kScan, a, x)) out.push_back(r);
          return out;
        });
    add(OpKind::kCond, {{"x", "n, 3"}, {"w", "3, 3"}}, [](trace::Trace& t, const Tensors& x) {
      const std::vector<std::pair<DType, std::string>> types = {{DType::kF64, "n, 3"},
                                                                {DType::kF64, "3, 3"}};
      ops::ControlFlowAttrs a;
      a.bodies = {
          Sub(t, types, [&t](const Tensors& in) { return Tensors{t.MatMul(in[0], in[1])}; }),
          Sub(t, types, [&t](const Tensors& in) {
            return Tensors{t.Binary(OpKind::kMul, t.Unary(OpKind::kSin, in[0]), in[0])};
          })};
      const Tensor* sum = t.Reduce(OpKind::kReduceSum, x[0], {}, false);
      const Tensor* zero = t.Unary(OpKind::kSin, t.Binary(OpKind::kSub, sum, sum));
      return t.ControlFlow(OpKind::kCond, a, {t.Binary(OpKind::kGt, sum, zero), x[0], x[1]});
    });
    // Random values (no ties): the selection is locally constant.
    add(OpKind::kTopKValues, {{"x", "n, 2, 5"}}, [](trace::Trace& t, const Tensors& x) {
      return Tensors{t.Apply(OpKind::kTopKValues, ops::TopKAttrs{K(t, 3), -1, true, true}, {x[0]}),
                     t.Apply(OpKind::kTopKValues, ops::TopKAttrs{N(t), 0, false, true}, {x[0]})};
    });
    {  // while_loop: forward mode only (its vjp is refused).
      FloatCase w{Make("while_loop", {{"v", "3"}, {"w", "3, 3"}},
                       [](trace::Trace& t, const Tensors& x) {
                         const std::vector<std::pair<DType, std::string>> types = {
                             {DType::kI64, ""}, {DType::kF64, "3"}, {DType::kF64, "3, 3"}};
                         const int64_t zero = 0, one = 1, three = 3;
                         const Tensor* i0 = t.Constant(DType::kI64, {}, &zero, 8);
                         ops::ControlFlowAttrs a;
                         a.bodies = {Sub(t, types,
                                         [&t, &three](const Tensors& in) {
                                           const Tensor* k = t.Constant(DType::kI64, {}, &three, 8);
                                           return Tensors{t.Binary(OpKind::kLt, in[0], k)};
                                         }),
                                     Sub(t, types, [&t, &one](const Tensors& in) {
                                       const Tensor* k = t.Constant(DType::kI64, {}, &one, 8);
                                       const Tensor* v =
                                           t.Unary(OpKind::kTanh, t.MatMul(in[1], in[2]));
                                       return Tensors{t.Binary(OpKind::kAdd, in[0], k), v};
                                     })};
                         a.counts = {2};
                         return Tensors{t.ControlFlow(OpKind::kWhileLoop, a, {i0, x[0], x[1]})[1]};
                       }),
                  1};
      w.c.forward_only = true;
      m[OpKind::kWhileLoop] = w;
    }
    add(OpKind::kScatterAdd, {{"x", "n, 3"}, {"i", "4", DType::kI32, 3}, {"u", "n, 4"}},
        [](trace::Trace& t, const Tensors& x) {
          return Tensors{t.Apply(OpKind::kScatterAdd, ops::AxisAttrs{1}, {x[0], x[1], x[2]})};
        });
    add(OpKind::kScatter, {{"x", "n, 3"}, {"i", "4", DType::kI32, 3}, {"u", "n, 4"}},
        [](trace::Trace& t, const Tensors& x) {
          return Tensors{t.Apply(OpKind::kScatter, ops::ScatterAttrs{1, 0}, {x[0], x[1], x[2]}),
                         t.Apply(OpKind::kScatter, ops::ScatterAttrs{-1, 3}, {x[0], x[1], x[2]})};
        });
    add(OpKind::kConv, {{"x", "2, 2, n + 4"}, {"w", "3, 2, 3"}},
        [](trace::Trace& t, const Tensors& x) {
          const ops::ConvAttrs strided{{2}, {2}, {1}, {K(t, 1)}, {K(t, -1)}, 1};
          const ops::ConvAttrs dilated{{1}, {1}, {2}, {K(t, 0)}, {K(t, 0)}, 1};
          return Tensors{t.Apply(OpKind::kConv, strided, {x[0], x[1]}),
                         t.Apply(OpKind::kConv, dilated, {x[0], x[1]})};
        });
    // Sum and max windows (random values: no ties).
    add(OpKind::kReduceWindow, {{"x", "n, 5, 6"}}, [](trace::Trace& t, const Tensors& x) {
      const ops::WindowAttrs sum{OpKind::kReduceSum,
                                 {2, 2, 3},
                                 {1, 1, 2},
                                 {1, 2, 1},
                                 {1, 1, 2},
                                 {K(t, 1), K(t, 0), K(t, -1)},
                                 {K(t, 0), K(t, 3), K(t, 2)}};
      const ops::WindowAttrs max{
          OpKind::kReduceMax,         {1, 3, 3}, {1, 2, 2}, {}, {}, {K(t, 0), K(t, 1), K(t, 1)},
          {K(t, 0), K(t, 1), K(t, 1)}};
      return Tensors{t.Apply(OpKind::kReduceWindow, sum, {x[0]}),
                     t.Apply(OpKind::kReduceWindow, max, {x[0]})};
    });
    add(OpKind::kBooleanMask,
        {{"x", "n, 3"}, {"r", "n", DType::kI32, 2}, {"p", "3", DType::kI32, 2}},
        [](trace::Trace& t, const Tensors& x) {
          return Tensors{t.BooleanMask(x[0], t.Convert(x[1], DType::kBool), 0),
                         t.BooleanMask(x[0], t.Convert(x[2], DType::kBool), -1)};
        });
    return m;
  }();
  return cases;
}

// ---- ad = "zero" -------------------------------------------------------------------------

// A program on the f64 input x ("n, 3") whose outputs are the op's results.
using ZeroBody = std::function<Tensors(trace::Trace& t, const Tensor* x)>;

const std::map<OpKind, ZeroBody>& OtherZeroCases() {
  static const std::map<OpKind, ZeroBody> cases = {
      {OpKind::kConstant,
       [](trace::Trace& t, const Tensor*) {
         const double k[3] = {0.5, -1, 2};
         return Tensors{t.Constant(DType::kF64, {3}, k, sizeof k)};
       }},
      {OpKind::kIota,
       [](trace::Trace& t, const Tensor*) {
         return Tensors{t.Iota(DType::kF64, {N(t), K(t, 3)}, 0), t.Iota(DType::kI64, {N(t)}, 0)};
       }},
      {OpKind::kDimValue,
       [](trace::Trace& t, const Tensor*) {
         return Tensors{t.DimValue(t.dims()->Scale(N(t), 3))};
       }},
      {OpKind::kNonzero,
       [](trace::Trace& t, const Tensor* x) {
         return Tensors{t.Nonzero(t.Binary(OpKind::kGt, x, t.Unary(OpKind::kSin, x))),
                        t.Nonzero(x)};
       }},
      {OpKind::kTopKIndices,
       [](trace::Trace& t, const Tensor* x) {
         return Tensors{
             t.Apply(OpKind::kTopKIndices, ops::TopKAttrs{K(t, 2), -1, false, true}, {x})};
       }},
      {OpKind::kSizeFromValue,
       [](trace::Trace& t, const Tensor* x) {
         const Tensor* count = t.Reduce(
             OpKind::kReduceSum,
             t.Convert(t.Binary(OpKind::kGt, x, t.Unary(OpKind::kSin, x)), DType::kI64), {}, false);
         ops::UnbackedAttrs a;
         a.name = "u";
         a.max = 1000;
         return Tensors{t.Apply(OpKind::kSizeFromValue, a, {count})};
       }},
  };
  return cases;
}

// Checks that the float outputs of the program x -> body(x) have exactly-zero tangents and
// give x an exactly-zero gradient, and that every other output is not floating point (a float
// conversion of it is added, with a zero tangent too).
void CheckZero(const std::string& name, const ZeroBody& body) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-2, 2);
  std::normal_distribution<double> normal(0, 1);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(name + ", valuation " + std::to_string(k));
    auto scope = dim::Scope::Create({});
    trace::Trace t(scope.get());
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    Tensors outs;
    for (const Tensor* y : body(t, x)) {
      outs.push_back(y);
      if (!trace::IsFloat(y->type.dtype)) outs.push_back(t.Convert(y, DType::kF64));
    }
    std::vector<std::string> names, of;
    for (size_t i = 0; i < outs.size(); ++i) {
      names.push_back("out" + std::to_string(i));
      if (trace::IsFloat(outs[i]->type.dtype)) of.push_back(names.back());
    }
    ASSERT_FALSE(of.empty());
    std::shared_ptr<const program::Program> p = program::Program::FromTrace(t, {x}, outs, names);
    Array xa;
    xa.shape = {kSizes[k], 3};
    for (int64_t i = 0; i < kSizes[k] * 3; ++i) xa.data.push_back(u(rng));
    const Arrays base = testing::Run(p, {{"x", xa}});

    std::shared_ptr<const program::Program> jp, vp;
    try {
      jp = Jvp(*p, {"x"});
      vp = Vjp(*p, of, {"x"});
    } catch (const Error& e) {
      FAIL() << "transformation failed: " << e.message();
    }
    // JVP: one tangent output per float output, all zero.
    ASSERT_EQ(jp->outputs().size(), names.size() + of.size());
    Array tx = xa;
    for (double& v : tx.data) v = normal(rng);
    const Arrays jout = testing::Run(jp, {{"x", xa}, {jp->inputs().at(1).name, tx}});
    for (size_t i = 0; i < of.size(); ++i) {
      const Array& ty = jout.at(jp->outputs().at(names.size() + i).name);
      EXPECT_EQ(ty.data, std::vector<double>(base.at(of[i]).data.size(), 0.0))
          << "the tangent of " << of[i] << " of " << name
          << "'s program is not exactly zero (ad = \"zero\" in cc/ops/ops.toml)";
    }
    // VJP: random cotangents for the float outputs, a zero gradient.
    Arrays vin{{"x", xa}};
    for (size_t i = 0; i < of.size(); ++i) {
      Array ct = base.at(of[i]);
      for (double& v : ct.data) v = normal(rng);
      vin[vp->inputs().at(1 + i).name] = ct;
    }
    const Arrays vout = testing::Run(vp, vin);
    EXPECT_EQ(vout.at(vp->outputs().at(names.size()).name).data,
              std::vector<double>(xa.data.size(), 0.0))
        << "the gradient of x through " << name
        << " is not exactly zero (ad = \"zero\" in cc/ops/ops.toml)";
  }
}

// ---- The tests: one per op of each kind --------------------------------------------------

std::vector<OpKind> OpsWith(Ad ad) {
  std::vector<OpKind> out;
  for (const testing::OpAd& r : testing::SpecDifferentiability()) {
    if (r.ad == ad) out.push_back(r.op);
  }
  return out;
}

std::string OpTestName(const ::testing::TestParamInfo<OpKind>& info) {
  return ops::OpName(info.param);
}

class FloatOp : public ::testing::TestWithParam<OpKind> {};
class ZeroOp : public ::testing::TestWithParam<OpKind> {};
class NoneOp : public ::testing::TestWithParam<OpKind> {};

TEST_P(FloatOp, MatchesFiniteDifferences) {
  const OpKind op = GetParam();
  if (ops::IsUnary(op)) return CheckCase(UnaryFloatCase(op));
  if (ops::IsBinary(op)) return CheckCase(BinaryFloatCase(op));
  if (ops::IsReduce(op)) return CheckCase(ReduceFloatCase(op));
  const auto it = OtherFloatCases().find(op);
  if (it == OtherFloatCases().end()) {
    FAIL() << "the op " << ops::OpName(op)
           << " is differentiable (ad = \"float\" in cc/ops/ops.toml) but has no case in "
              "OtherFloatCases() of cc/autodiff/spec_ad_test.cc: add a small program using it";
  }
  CheckCase(it->second.c, it->second.seed);
}

TEST_P(ZeroOp, HasExactlyZeroDerivatives) {
  const OpKind op = GetParam();
  const std::string name = ops::OpName(op);
  if (ops::IsUnary(op)) {
    return CheckZero(name, [op](trace::Trace& t, const Tensor* x) {
      return Tensors{t.Unary(op, t.Binary(OpKind::kMul, x, x))};
    });
  }
  if (ops::IsCompare(op)) {
    return CheckZero(name, [op](trace::Trace& t, const Tensor* x) {
      return Tensors{t.Binary(op, x, t.Unary(OpKind::kSin, x))};
    });
  }
  const auto it = OtherZeroCases().find(op);
  if (it == OtherZeroCases().end()) {
    FAIL() << "the op " << name
           << " has a zero derivative (ad = \"zero\" in cc/ops/ops.toml) but no case in "
              "OtherZeroCases() of cc/autodiff/spec_ad_test.cc: add a small program using it";
  }
  CheckZero(name, it->second);
}

TEST_P(NoneOp, RefusesFloatsAndIsNeverReached) {
  const OpKind op = GetParam();
  const bool unary = ops::IsUnary(op);
  if (!unary && !ops::IsBinary(op)) {
    FAIL() << "the op " << ops::OpName(op)
           << " is never differentiated (ad = \"none\" in cc/ops/ops.toml) but is neither unary "
              "nor binary: add its check to cc/autodiff/spec_ad_test.cc";
  }
  {  // Float operands are refused: the op's result is never floating point.
    auto scope = dim::Scope::Create({});
    trace::Trace t(scope.get());
    const Tensor* x = t.Input("x", DType::kF64, "n, 3");
    try {
      if (unary) {
        t.Unary(op, x);
      } else {
        t.Binary(op, x, x);
      }
      ADD_FAILURE() << ops::OpName(op) << " accepts f64 operands";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kDtypeMismatch) << e.message();
    }
  }
  // A float path around it: the transformations never call its rules.
  CheckCase(Make(ops::OpName(op), {{"x", "n, 3"}}, [op, unary](trace::Trace& t, const Tensors& x) {
    const Tensor* p = t.Binary(OpKind::kGt, x[0], t.Unary(OpKind::kSin, x[0]));
    const Tensor* q = t.Binary(OpKind::kLt, x[0], t.Unary(OpKind::kCos, x[0]));
    const Tensor* r = unary ? t.Unary(op, p) : t.Binary(op, p, q);
    return Tensors{r, t.Select(r, t.Binary(OpKind::kMul, x[0], x[0]), t.Unary(OpKind::kSin, x[0]))};
  }));
}

INSTANTIATE_TEST_SUITE_P(SpecAd, FloatOp, ::testing::ValuesIn(OpsWith(Ad::kFloat)), OpTestName);
INSTANTIATE_TEST_SUITE_P(SpecAd, ZeroOp, ::testing::ValuesIn(OpsWith(Ad::kZero)), OpTestName);
INSTANTIATE_TEST_SUITE_P(SpecAd, NoneOp, ::testing::ValuesIn(OpsWith(Ad::kNone)), OpTestName);

// The spec lists every op once, and the tables have no case for an op of another kind or of
// a family that gets its program generically (a stale or misplaced case).
TEST(SpecAd, SpecAndTablesAgree) {
  std::map<OpKind, Ad> spec;
  for (const testing::OpAd& r : testing::SpecDifferentiability()) {
    EXPECT_TRUE(spec.emplace(r.op, r.ad).second) << ops::OpName(r.op) << " is listed twice";
  }
  for (OpKind op : ops::kAllOpKinds) {
    EXPECT_EQ(spec.count(op), 1u) << ops::OpName(op) << " has no differentiability";
  }
  for (const auto& [op, c] : OtherFloatCases()) {
    EXPECT_EQ(AdText(spec.at(op)), std::string("float"))
        << "OtherFloatCases() has a case for " << ops::OpName(op) << ", whose ad is not float";
    EXPECT_FALSE(ops::IsUnary(op) || ops::IsBinary(op) || ops::IsReduce(op))
        << ops::OpName(op) << " gets its family's program";
  }
  for (const auto& [op, c] : OtherZeroCases()) {
    EXPECT_EQ(AdText(spec.at(op)), std::string("zero"))
        << "OtherZeroCases() has a case for " << ops::OpName(op) << ", whose ad is not zero";
    EXPECT_FALSE(ops::IsUnary(op) || ops::IsCompare(op))
        << ops::OpName(op) << " gets its family's program";
  }
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
