// The shape ops' JVP and VJP rules (reshape, transpose, concatenate, slice, pad, reverse)
// against central finite differences (f64), at three sizes of the symbolic variable (size 1
// included), on traced and loaded programs.
#include <gtest/gtest.h>

#include "cc/autodiff/ad_check.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace autodiff {
namespace {

using testing::Case;
using testing::CheckCase;
using trace::DType;
using trace::OpKind;
using trace::Tensor;
using Shapes = std::map<std::string, std::vector<int64_t>>;

const int64_t kSizes[] = {1, 2, 5};

// A case with one f64 input "x" of shape `spec`, concrete shape `shape(n)`.
Case OneInput(const std::string& name, const std::string& spec,
              std::function<std::vector<int64_t>(int64_t)> shape,
              std::function<std::vector<const Tensor*>(trace::Trace&, const Tensor*)> f) {
  Case c;
  c.name = name;
  c.build = [spec, f](trace::Trace& t, std::vector<const Tensor*>* in,
                      std::vector<const Tensor*>* out) {
    const Tensor* x = t.Input("x", DType::kF64, spec);
    in->push_back(x);
    // A nonlinear head, so that the cotangents reaching the op differ per element.
    for (const Tensor* y : f(t, x)) out->push_back(t.Binary(OpKind::kMul, y, y));
  };
  c.shapes = [shape](int k) { return Shapes{{"x", shape(kSizes[k])}}; };
  return c;
}

TEST(ShapeAd, Reshape) {
  CheckCase(OneInput(
      "reshape", "n, 6",
      [](int64_t n) {
        return std::vector<int64_t>{n, 6};
      },
      [](trace::Trace& t, const Tensor* x) {
        dim::Scope* s = t.dims();
        const dim::Expr* n = s->Var("n");
        return std::vector<const Tensor*>{
            t.Reshape(x, {n, s->Constant(2), s->Constant(3)}),
            t.Reshape(x, {nullptr, s->Constant(3)}),  // (2*n, 3) inferred
            t.Reshape(x, {s->Scale(n, 6)}),
            t.Reshape(t.Reshape(x, {s->Constant(3), nullptr}), {n, s->Constant(6)}),
        };
      }));
}

// The inferred dimension needs a divisibility assertion (n even): valuations 2, 4, 6.
TEST(ShapeAd, ReshapeWithAnAssertion) {
  Case c = OneInput(
      "reshape (assertion)", "n, 3",
      [](int64_t n) {
        return std::vector<int64_t>{2 * n, 3};
      },
      [](trace::Trace& t, const Tensor* x) {
        dim::Scope* s = t.dims();
        return std::vector<const Tensor*>{t.Reshape(x, {nullptr, s->Constant(6)})};
      });
  CheckCase(c);
}

TEST(ShapeAd, TransposeWithNegativeAxes) {
  CheckCase(OneInput(
      "transpose", "n, 2, 3",
      [](int64_t n) {
        return std::vector<int64_t>{n, 2, 3};
      },
      [](trace::Trace& t, const Tensor* x) {
        return std::vector<const Tensor*>{t.Transpose(x, {2, 0, 1}), t.Transpose(x, {-2, -1, 0})};
      }));
}

TEST(ShapeAd, Concatenate) {
  Case c;
  c.name = "concatenate";
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* a = t.Input("a", DType::kF64, "n, 3");
    const Tensor* b = t.Input("b", DType::kF64, "2, 3");
    const Tensor* d = t.Input("d", DType::kF64, "n, 1");
    *in = {a, b, d};
    // An operand without a tangent (a constant) between active ones: zeros in the JVP.
    const double k[6] = {1, 2, 3, 4, 5, 6};
    const Tensor* konst = t.Constant(DType::kF64, {2, 3}, k, sizeof k);
    const Tensor* c0 = t.Concatenate({a, konst, b, a}, 0);
    const Tensor* c1 = t.Concatenate({a, d, a}, -1);
    out->push_back(t.Binary(OpKind::kMul, c0, c0));
    out->push_back(t.Binary(OpKind::kMul, c1, c1));
    out->push_back(t.Concatenate({b}, 1));
  };
  c.shapes = [](int k) {
    return Shapes{{"a", {kSizes[k], 3}}, {"b", {2, 3}}, {"d", {kSizes[k], 1}}};
  };
  CheckCase(c);
}

TEST(ShapeAd, SliceWithSymbolicBoundsAndStrides) {
  CheckCase(OneInput(
      "slice", "2*n + 1, 7",
      [](int64_t n) {
        return std::vector<int64_t>{2 * n + 1, 7};
      },
      [](trace::Trace& t, const Tensor* x) {
        dim::Scope* s = t.dims();
        const dim::Expr* n = s->Var("n");
        auto k = [s](int64_t v) { return s->Constant(v); };
        const dim::Expr* dim0 = s->Add(s->Scale(n, 2), k(1));
        return std::vector<const Tensor*>{
            t.Slice(x, {k(1), k(2)}, {dim0, k(6)}, {1, 1}),
            t.Slice(x, {k(1), k(0)}, {dim0, k(7)}, {3, 2}),  // strided, symbolic extent
            t.Slice(x, {n, k(1)}, {s->Add(n, k(1)), k(7)}, {2, 4}),
            t.Slice(x, {k(0), k(0)}, {dim0, k(7)}, {1, 1}),  // the whole operand
            t.Slice(x, {k(0), k(3)}, {n, k(3)}, {5, 2}),     // empty on axis 1
        };
      }));
}

TEST(ShapeAd, PadWithSymbolicAmountsAndAValue) {
  CheckCase(OneInput(
      "pad", "n, 3",
      [](int64_t n) {
        return std::vector<int64_t>{n, 3};
      },
      [](trace::Trace& t, const Tensor* x) {
        dim::Scope* s = t.dims();
        const dim::Expr* n = s->Var("n");
        auto k = [s](int64_t v) { return s->Constant(v); };
        return std::vector<const Tensor*>{
            t.Pad(x, {k(1), k(0)}, {n, k(2)}, 1.5),
            t.Pad(x, {k(0), k(0)}, {k(0), k(0)}, 0.0),
        };
      }));
}

TEST(ShapeAd, ReverseOnSeveralAxes) {
  CheckCase(OneInput(
      "reverse", "n, 3, 2",
      [](int64_t n) {
        return std::vector<int64_t>{n, 3, 2};
      },
      [](trace::Trace& t, const Tensor* x) {
        return std::vector<const Tensor*>{
            t.Apply(OpKind::kReverse, ops::ReverseAttrs{{0, -1}}, {x}),
            t.Apply(OpKind::kReverse, ops::ReverseAttrs{{1}}, {x}),
        };
      }));
}

// A slice whose limit is another variable, valid under the scope's constraint m <= n.
TEST(ShapeAd, SliceUnderAConstraint) {
  Case c;
  c.name = "slice (m <= n)";
  c.constraints = {"m <= n"};
  c.build = [](trace::Trace& t, std::vector<const Tensor*>* in, std::vector<const Tensor*>* out) {
    const Tensor* a = t.Input("a", DType::kF64, "n, 3");
    const Tensor* b = t.Input("b", DType::kF64, "m, 3");
    *in = {a, b};
    dim::Scope* s = t.dims();
    const Tensor* head =
        t.Slice(a, {s->Constant(0), s->Constant(0)}, {s->Var("m"), s->Constant(3)}, {1, 2});
    out->push_back(
        t.Binary(OpKind::kMul, head, t.Slice(b, {nullptr, nullptr}, {nullptr, nullptr}, {1, 2})));
  };
  c.shapes = [](int k) {
    const int64_t m[] = {1, 1, 3};
    return Shapes{{"a", {kSizes[k], 3}}, {"b", {m[k], 3}}};
  };
  CheckCase(c);
}

// Slice and pad as each other's transposes, composed with the others in one program.
TEST(ShapeAd, Composition) {
  CheckCase(OneInput(
      "composition", "n, 4",
      [](int64_t n) {
        return std::vector<int64_t>{n, 4};
      },
      [](trace::Trace& t, const Tensor* x) {
        dim::Scope* s = t.dims();
        const dim::Expr* n = s->Var("n");
        auto k = [s](int64_t v) { return s->Constant(v); };
        const Tensor* p = t.Pad(x, {k(2), k(1)}, {k(1), k(0)}, -1.0);  // (n + 3, 5)
        const Tensor* sl = t.Slice(p, {k(1), k(0)}, {s->Add(n, k(3)), k(5)}, {2, 2});
        const Tensor* tr = t.Transpose(sl, {1, 0});
        const Tensor* r = t.Reshape(tr, {nullptr});
        return std::vector<const Tensor*>{t.Concatenate({r, t.Unary(OpKind::kSin, r)}, 0)};
      }));
}

}  // namespace
}  // namespace autodiff
}  // namespace shp
