// Windowed reductions: reduce_window (XLA's ReduceWindow: sum, max or min over a sliding window
// with strides, window and base dilation and padding of any sign). Pooling (c_api/pool_api.cc)
// is built from it. Kernel: cc/kernels/reduce_window.h.
#include <string>
#include <vector>

#include "cc/kernels/reduce_window.h"
#include "cc/ops/op_def.h"
#include "cc/ops/steps.h"

namespace shp {
namespace ops {
namespace {

using dim::Cmp;
using dim::Expr;
using dim::Truth;
using trace::TensorType;

const char* ReductionText(OpKind k) {
  return k == OpKind::kReduceMax ? "max" : k == OpKind::kReduceMin ? "min" : "sum";
}

kernels::ReduceOp KernelOp(OpKind k) {
  return k == OpKind::kReduceMax   ? kernels::ReduceOp::kMax
         : k == OpKind::kReduceMin ? kernels::ReduceOp::kMin
                                   : kernels::ReduceOp::kSum;
}

// The output size of axis i: floordiv((H - 1)*bd + 1 + pl + ph - ((w - 1)*wd + 1), s) + 1.
const Expr* OutputSize(dim::Scope* s, const WindowAttrs& a, size_t i, const Expr* h) {
  const Expr* dilated =
      s->Add(s->Scale(s->Sub(h, s->Constant(1)), a.base_dilation[i]), s->Constant(1));
  const Expr* padded = s->Add(s->Add(dilated, a.pad_low[i]), a.pad_high[i]);
  const Expr* extent = s->Constant((a.window[i] - 1) * a.window_dilation[i] + 1);
  return s->Add(s->FloorDiv(s->Sub(padded, extent), s->Constant(a.strides[i])), s->Constant(1));
}

struct ReduceWindowStep final : Step {
  kernels::ReduceOp op = kernels::ReduceOp::kSum;
  std::vector<kernels::WindowDim> dims;
  void Run(const RunContext& c) override {
    CheckKernel(kernels::ReduceWindow(op, dtype, In(c, 0), static_cast<int>(dims.size()),
                                      dims.data(), Out(c), Pool(c)),
                "reduce_window");
  }
};

// The switches over the reduction in the rules below list every op (no `default:`), so that
// a reduction newly allowed in windows cannot go without a rule (-Wswitch).
#define SHP_AD_CASE(Name, ...) case OpKind::k##Name:
#define SHP_NOT_A_WINDOW_REDUCTION \
  case OpKind::kReduceMean:        \
  case OpKind::kReduceProd:        \
    SHP_UNARY_OPS(SHP_AD_CASE)     \
    SHP_BINARY_OPS(SHP_AD_CASE)    \
    SHP_COMPARE_OPS(SHP_AD_CASE)   \
    SHP_OTHER_OPS(SHP_AD_CASE)

// A reduction that inference refuses in a window reached a rule.
[[noreturn]] void NotAWindowReduction(OpKind red, const char* rule) {
  throw Error(Code::kInternal, std::string("autodiff: the ") + rule +
                                   " rule of reduce_window called with the reduction " +
                                   OpName(red));
}

class ReduceWindowDef final : public TypedOpDef<WindowAttrs> {
 public:
  ReduceWindowDef() : TypedOpDef(OpKind::kReduceWindow, 1) {}
  fb::OpOptions options_type() const override { return fb::OpOptions::WindowOptions; }
  void CheckExecutable(const NodeView&, const std::vector<size_t>&, size_t rank) const override {
    PlanBuilder::CheckRank(rank, kernels::kMaxWindowRank, "reduce_window");
  }
  const dim::Expr* Flops(const CostContext& c) const override {
    const WindowAttrs& a = std::get<WindowAttrs>(*c.attrs);
    const Expr* f = c.Numel(*c.result);
    for (int64_t w : a.window) f = c.scope->Mul(f, c.scope->Constant(w));
    return f;
  }
  const char* flops_rule() const override { return "1 per window element per output element"; }

  // Sum is linear: the same window over the tangent. Max/min: the tangent of the window
  // elements equal to the result, split equally among ties (JAX's rule, as reduce_max).
  Value Jvp(AdBuilder& b, const AdNode& n, const std::vector<Value>& t) const override {
    const WindowAttrs& a = std::get<WindowAttrs>(n.attrs);
    switch (a.reduction) {
      case OpKind::kReduceSum:
        return b.Apply(OpKind::kReduceWindow, a, {t[0]});
      case OpKind::kReduceMax:
      case OpKind::kReduceMin: {
        std::vector<Value> hits;
        const Value count = Hits(b, n, &hits);
        Value dy = nullptr;
        for (size_t k = 0; k < hits.size(); ++k) {
          const Value tk =
              b.Apply(OpKind::kReduceWindow, Pick(b, a, k, OpKind::kReduceSum), {t[0]});
          dy = b.AddZ(dy, b.Mul(hits[k], tk));
        }
        return b.Div(dy, count);
      }
        // Refused by InferTyped:
        SHP_NOT_A_WINDOW_REDUCTION
        break;
    }
    NotAWindowReduction(a.reduction, "JVP");
  }
  // Sum: the transpose of the window sum (SumVjp); max/min: the cotangent goes back to the
  // window elements equal to the result, split equally among ties (MaxMinVjp).
  std::vector<Value> Vjp(AdBuilder& b, const AdNode& n, Value ct,
                         const std::vector<bool>&) const override {
    const WindowAttrs& a = std::get<WindowAttrs>(n.attrs);
    switch (a.reduction) {
      case OpKind::kReduceSum:
        return {SumVjp(b, n, ct)};
      case OpKind::kReduceMax:
      case OpKind::kReduceMin:
        return {MaxMinVjp(b, n, ct)};
        // Refused by InferTyped:
        SHP_NOT_A_WINDOW_REDUCTION
        break;
    }
    NotAWindowReduction(a.reduction, "VJP");
  }

 private:
  // The transpose of a window sum is a window sum of the cotangent: every input position
  // collects the outputs whose windows cover it. The cotangent is base-dilated by the strides,
  // the window slides with the input's base dilation as its stride, and the padding is the
  // complement: low (w - 1)*wd - pl, high (H - 1)*bd + pl - (O - 1)*s (either may be
  // negative), which gives back H positions on every axis.
  static Value SumVjp(AdBuilder& b, const AdNode& n, Value ct) {
    const WindowAttrs& a = std::get<WindowAttrs>(n.attrs);
    dim::Scope* s = b.dims();
    const Shape& x = b.type(n.operands[0]).shape;
    const Shape& y = b.type(n.result).shape;
    WindowAttrs t;
    t.reduction = OpKind::kReduceSum;
    t.window = a.window;
    t.strides = a.base_dilation;
    t.window_dilation = a.window_dilation;
    t.base_dilation = a.strides;
    for (size_t i = 0; i < x.size(); ++i) {
      const Expr* one = s->Constant(1);
      t.pad_low.push_back(
          s->Sub(s->Constant((a.window[i] - 1) * a.window_dilation[i]), a.pad_low[i]));
      t.pad_high.push_back(
          s->Sub(s->Add(s->Scale(s->Sub(x[i], one), a.base_dilation[i]), a.pad_low[i]),
                 s->Scale(s->Sub(y[i], one), a.strides[i])));
    }
    Value dx = b.Apply(OpKind::kReduceWindow, t, {ct});
    // The sizes are equal as expressions; a reshape states it when their forms differ.
    if (b.type(dx).shape != x) dx = b.Reshape(dx, x);
    return dx;
  }

  // A window that leaves axis 0 alone (pooling over [N, C, ...]) runs on the batch merged
  // into axis 0, keeping the kernel's rank; any other gets a leading axis of its own.
  Value Batch(AdBuilder& b, const BatchNode& n) const override {
    WindowAttrs a = std::get<WindowAttrs>(n.attrs);
    dim::Scope* s = b.dims();
    const Shape& x = b.type(n.operands[0]).shape;
    const bool axis0_alone = !x.empty() && a.window[0] == 1 && a.strides[0] == 1 &&
                             a.window_dilation[0] == 1 && a.base_dilation[0] == 1 &&
                             a.pad_low[0] == s->Constant(0) && a.pad_high[0] == s->Constant(0);
    if (axis0_alone) {
      Shape merged = x;
      merged[0] = s->Mul(n.size, x[0]);
      Value y = b.Apply(OpKind::kReduceWindow, a, {b.Reshape(n.batched[0], merged)});
      return b.Reshape(y, WithBatchAxis(n, b.type(n.result).shape));
    }
    a.window.insert(a.window.begin(), 1);
    a.strides.insert(a.strides.begin(), 1);
    a.window_dilation.insert(a.window_dilation.begin(), 1);
    a.base_dilation.insert(a.base_dilation.begin(), 1);
    a.pad_low.insert(a.pad_low.begin(), s->Constant(0));
    a.pad_high.insert(a.pad_high.begin(), s->Constant(0));
    return b.Apply(OpKind::kReduceWindow, std::move(a), {n.batched[0]});
  }

 protected:
  TensorType InferTyped(InferContext& c, WindowAttrs& a) const override {
    dim::Scope* s = c.scope();
    const Shape& x = c.in(0).shape;
    c.RequireRule(c.in(0).dtype, OperandRule::kNumeric, false);
    if (x.empty()) c.Invalid("needs an operand of rank >= 1, got a scalar");
    if (a.reduction != OpKind::kReduceSum && a.reduction != OpKind::kReduceMax &&
        a.reduction != OpKind::kReduceMin) {
      c.Invalid(std::string("the reduction must be reduce_sum, reduce_max or reduce_min, got ") +
                OpName(a.reduction));
    }
    const size_t rank = x.size();
    auto ints = [&](std::vector<int64_t>* v, const char* what, bool required) {
      if (v->empty() && !required) v->assign(rank, 1);
      if (v->size() != rank) {
        c.Invalid(std::string(what) + " needs one entry per axis of the operand (" +
                  std::to_string(rank) + "), got " + std::to_string(v->size()));
      }
      for (size_t i = 0; i < rank; ++i) {
        if ((*v)[i] < 1) {
          c.Invalid(std::string(what) + "[" + std::to_string(i) + "] must be >= 1, got " +
                    std::to_string((*v)[i]));
        }
      }
    };
    ints(&a.window, "window", true);
    ints(&a.strides, "strides", false);
    ints(&a.window_dilation, "window_dilation", false);
    ints(&a.base_dilation, "base_dilation", false);
    for (Shape* p : {&a.pad_low, &a.pad_high}) {
      if (p->empty()) p->assign(rank, s->Constant(0));
      const char* what = p == &a.pad_low ? "pad_low" : "pad_high";
      if (p->size() != rank) {
        c.Invalid(std::string(what) + " needs one entry per axis of the operand (" +
                  std::to_string(rank) + "), got " + std::to_string(p->size()));
      }
      for (size_t i = 0; i < rank; ++i) {
        if ((*p)[i] == nullptr)
          c.Invalid(std::string(what) + "[" + std::to_string(i) + "] is missing");
      }
    }
    Shape out;
    for (size_t i = 0; i < rank; ++i) {
      int64_t extent;  // (w - 1)*wd + 1 without overflow
      if (__builtin_mul_overflow(a.window[i] - 1, a.window_dilation[i], &extent) ||
          __builtin_add_overflow(extent, 1, &extent)) {
        c.Invalid("the window extent (window - 1) * window_dilation + 1 of axis " +
                  std::to_string(i) + " overflows");
      }
      const Expr* o = OutputSize(s, a, i, x[i]);
      out.push_back(o);
      if (o == x[i]) continue;  // an axis the window leaves alone
      const std::string what = "the output size " + c.Str(o) + " of axis " + std::to_string(i) +
                               " (input size " + c.Str(x[i]) + ", window " +
                               std::to_string(a.window[i]) + ", stride " +
                               std::to_string(a.strides[i]) + ")";
      const Truth ok = s->Compare(o, Cmp::kGe, s->Constant(1));
      if (ok == Truth::kFalse) c.Mismatch(what + " is not positive");
      if (ok == Truth::kUnknown) {
        if (c.mode() == InferMode::kVerify) {
          c.Inconclusive(o, Cmp::kGe, s->Constant(1), what + "; the program lacks this assertion");
        }
        s->Check(o, Cmp::kGe, s->Constant(1), "reduce_window: " + what + " must be >= 1");
      }
    }
    return TensorType{c.in(0).dtype, out};
  }
  flatbuffers::Offset<void> Write(const OptionsWriter& w, const WindowAttrs& a) const override {
    // One vector at a time, last first: file bytes must not depend on argument evaluation order.
    auto pad_high = w.b->CreateVector(w.Shape(a.pad_high));
    auto pad_low = w.b->CreateVector(w.Shape(a.pad_low));
    auto base_dilation = w.b->CreateVector(a.base_dilation);
    auto window_dilation = w.b->CreateVector(a.window_dilation);
    auto strides = w.b->CreateVector(a.strides);
    auto window = w.b->CreateVector(a.window);
    return fb::CreateWindowOptions(*w.b, static_cast<fb::OpCode>(a.reduction), window, strides,
                                   window_dilation, base_dilation, pad_low, pad_high)
        .Union();
  }
  void Read(const OptionsReader& r, const void* opt, WindowAttrs* a) const override {
    const fb::WindowOptions* o = static_cast<const fb::WindowOptions*>(opt);
    const int32_t red = static_cast<int32_t>(o->reduction());
    if (red != static_cast<int32_t>(OpKind::kReduceSum) &&
        red != static_cast<int32_t>(OpKind::kReduceMax) &&
        red != static_cast<int32_t>(OpKind::kReduceMin)) {
      r.Bad("has the reduction " + std::to_string(red) +
            " (expected REDUCE_SUM, REDUCE_MAX or REDUCE_MIN)");
    }
    a->reduction = static_cast<OpKind>(red);
    a->window = r.ints(o->window());
    a->strides = r.ints(o->strides());
    a->window_dilation = r.ints(o->window_dilation());
    a->base_dilation = r.ints(o->base_dilation());
    a->pad_low = r.shape(o->pad_low());
    a->pad_high = r.shape(o->pad_high());
  }
  std::string Text(const AttrPrinter& p, const WindowAttrs& a) const override {
    return std::string(" reduction=") + ReductionText(a.reduction) + " window=" + p.Ints(a.window) +
           " strides=" + p.Ints(a.strides) + " window_dilation=" + p.Ints(a.window_dilation) +
           " base_dilation=" + p.Ints(a.base_dilation) + " pad_low=" + p.Dims(a.pad_low) +
           " pad_high=" + p.Dims(a.pad_high);
  }
  void PlanTyped(PlanBuilder& b, const NodeView& n, const WindowAttrs& a) const override {
    const std::vector<int64_t>& x = b.shape(n.operands[0]);
    const std::vector<int64_t>& y = b.shape(n.value);
    PlanBuilder::CheckRank(x.size(), kernels::kMaxWindowRank, "reduce_window");
    ReduceWindowStep& s = b.AddStep<ReduceWindowStep>(n.dtype, {n.operands[0]}, n.value);
    s.op = KernelOp(a.reduction);
    s.dims = PlanWindowDims(b, a, x, y);
    s.threaded = PlanBuilder::Product(y) >= PlanBuilder::kThreadElements / 4;
  }

 private:
  // The window positions of a max/min, row-major over the axes: position k of every output
  // is a window-1 reduce_window of x (stride s, base dilation bd, pads shifted by k * wd; its
  // padding the identity), so the rules need no other op than reduce_window and elementwise
  // ones. At most kMaxPositions positions (each adds a few ops of the output's size).
  static constexpr int64_t kMaxPositions = 1024;

  static std::vector<int64_t> Position(const WindowAttrs& a, size_t k) {
    std::vector<int64_t> pos(a.window.size());
    for (size_t i = a.window.size(); i-- > 0;) {
      pos[i] = static_cast<int64_t>(k) % a.window[i];
      k /= static_cast<size_t>(a.window[i]);
    }
    return pos;
  }

  // Window position k of every output (reduction `red`: its identity fills the padding).
  static WindowAttrs Pick(AdBuilder& b, const WindowAttrs& a, size_t k, OpKind red) {
    dim::Scope* s = b.dims();
    const std::vector<int64_t> pos = Position(a, k);
    WindowAttrs p;
    p.reduction = red;
    p.window.assign(a.window.size(), 1);
    p.strides = a.strides;
    p.window_dilation.assign(a.window.size(), 1);
    p.base_dilation = a.base_dilation;
    for (size_t i = 0; i < a.window.size(); ++i) {
      p.pad_low.push_back(s->Sub(a.pad_low[i], s->Constant(pos[i] * a.window_dilation[i])));
      p.pad_high.push_back(
          s->Sub(a.pad_high[i], s->Constant((a.window[i] - 1 - pos[i]) * a.window_dilation[i])));
    }
    return p;
  }

  // The transpose of Pick (a sum): output element o goes back to input position i with
  // i * bd == o * s + k * wd - pl; the rest of x gets 0.
  static WindowAttrs Put(AdBuilder& b, const WindowAttrs& a, size_t k, const Shape& x,
                         const Shape& y) {
    dim::Scope* s = b.dims();
    const std::vector<int64_t> pos = Position(a, k);
    const Expr* one = s->Constant(1);
    WindowAttrs p;
    p.reduction = OpKind::kReduceSum;
    p.window.assign(a.window.size(), 1);
    p.strides = a.base_dilation;
    p.window_dilation.assign(a.window.size(), 1);
    p.base_dilation = a.strides;
    for (size_t i = 0; i < a.window.size(); ++i) {
      const Expr* low = s->Sub(s->Constant(pos[i] * a.window_dilation[i]), a.pad_low[i]);
      p.pad_low.push_back(low);
      p.pad_high.push_back(s->Sub(s->Sub(s->Scale(s->Sub(x[i], one), a.base_dilation[i]),
                                         s->Scale(s->Sub(y[i], one), a.strides[i])),
                                  low));
    }
    return p;
  }

  // hits[k] = 1 where window position k equals the result (else 0), in x's dtype; returns
  // their sum (the number of ties, >= 1 unless the result is NaN).
  static Value Hits(AdBuilder& b, const AdNode& n, std::vector<Value>* hits) {
    const WindowAttrs& a = std::get<WindowAttrs>(n.attrs);
    int64_t positions = 1;
    for (int64_t w : a.window) {
      if (__builtin_mul_overflow(positions, w, &positions) || positions > kMaxPositions) {
        throw Error(Code::kUnsupported, std::string("reduce_window: the derivative of a ") +
                                            ReductionText(a.reduction) + " window of more than " +
                                            std::to_string(kMaxPositions) +
                                            " positions is not supported");
      }
    }
    const trace::DType dt = b.type(n.operands[0]).dtype;
    Value count = nullptr;
    for (size_t k = 0; k < static_cast<size_t>(positions); ++k) {
      const Value xk = b.Apply(OpKind::kReduceWindow, Pick(b, a, k, a.reduction), {n.operands[0]});
      const Value hit = b.Convert(b.Binary(OpKind::kEq, xk, n.result), dt);
      hits->push_back(hit);
      count = b.AddZ(count, hit);
    }
    return count;
  }

  static Value MaxMinVjp(AdBuilder& b, const AdNode& n, Value ct) {
    const WindowAttrs& a = std::get<WindowAttrs>(n.attrs);
    const Shape& x = b.type(n.operands[0]).shape;
    const Shape& y = b.type(n.result).shape;
    std::vector<Value> hits;
    const Value g = b.Div(ct, Hits(b, n, &hits));
    Value dx = nullptr;
    for (size_t k = 0; k < hits.size(); ++k) {
      Value d = b.Apply(OpKind::kReduceWindow, Put(b, a, k, x, y), {b.Mul(g, hits[k])});
      if (b.type(d).shape != x) d = b.Reshape(d, x);
      dx = b.AddZ(dx, d);
    }
    return dx;
  }
};

#undef SHP_NOT_A_WINDOW_REDUCTION
#undef SHP_AD_CASE

}  // namespace

SHP_DEFINE_OP(ReduceWindow, ReduceWindowDef)

std::vector<kernels::WindowDim> PlanWindowDims(const PlanBuilder& b, const WindowAttrs& a,
                                               const std::vector<int64_t>& x,
                                               const std::vector<int64_t>& y) {
  std::vector<kernels::WindowDim> dims;
  for (size_t i = 0; i < x.size(); ++i) {
    kernels::WindowDim d;
    d.size = x[i];
    d.window = a.window[i];
    d.stride = a.strides[i];
    d.window_dilation = a.window_dilation[i];
    d.base_dilation = a.base_dilation[i];
    d.pad_low = b.Eval(a.pad_low[i]);
    d.pad_high = b.Eval(a.pad_high[i]);
    int64_t o = 0;
    if (!kernels::ReduceWindowOutputSize(d, &o) || o != y[i] || (o < 1 && x[i] > 0)) {
      throw Error(Code::kConstraintViolation,
                  "reduce_window: the output size of axis " + std::to_string(i) + " is " +
                      std::to_string(y[i]) + " (input size " + std::to_string(x[i]) + ", window " +
                      std::to_string(d.window) + ", stride " + std::to_string(d.stride) +
                      ", padding " + std::to_string(d.pad_low) + " and " +
                      std::to_string(d.pad_high) + "); it must be >= 1");
    }
    dims.push_back(d);
  }
  return dims;
}

}  // namespace ops
}  // namespace shp
