// The pooling composites of composites.h (ONNX MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool): thin composites over reduce_window, pad, reduce and div.
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/kernels/narrow.h"
#include "cc/ops/attrs.h"
#include "cc/ops/composites/composites.h"
#include "cc/trace/trace.h"

namespace shp {
namespace ops {
namespace composites {
namespace {

using dim::Expr;
using trace::Tensor;

// The values of AutoPad as int32 (the geometry compares them as the C API's raw values).
constexpr int32_t kNotSet = static_cast<int32_t>(AutoPad::kNotSet);
constexpr int32_t kSameUpper = static_cast<int32_t>(AutoPad::kSameUpper);
constexpr int32_t kSameLower = static_cast<int32_t>(AutoPad::kSameLower);
constexpr int32_t kValid = static_cast<int32_t>(AutoPad::kValid);

[[noreturn]] void Invalid(const char* fn, const std::string& msg) {
  throw Error(Code::kInvalidArgument, std::string(fn) + ": " + msg);
}

// `n` entries of `v` (each >= 1), or n ones when v is NULL.
std::vector<int64_t> Positive(const char* fn, const int64_t* v, size_t n, const char* name,
                              bool required) {
  if (v == nullptr) {
    if (required) Invalid(fn, std::string("argument '") + name + "' must not be NULL");
    return std::vector<int64_t>(n, 1);
  }
  std::vector<int64_t> out(v, v + n);
  for (size_t i = 0; i < n; ++i) {
    if (out[i] < 1) {
      Invalid(fn, std::string(name) + "[" + std::to_string(i) + "] (spatial axis " +
                      std::to_string(i) + ") must be >= 1, got " + std::to_string(out[i]));
    }
  }
  return out;
}

// The spatial geometry of an ONNX pool: per spatial axis the kernel, stride and dilation, the
// explicit (or auto) pads, and the high padding of the reduce_window (which also covers the
// ceil-mode overhang).
struct Pool {
  std::vector<int64_t> k, s, d;
  std::vector<const Expr*> begin, end, end_total;
  bool overhang = false;  // end_total may exceed end (ceil mode)
};

Pool Geometry(const char* fn, const Tensor* x, size_t num_spatial, const int64_t* kernel,
              const int64_t* strides, const int64_t* dilations, const int64_t* pads,
              AutoPad auto_pad_arg, bool ceil_mode) {
  const std::vector<const Expr*>& shape = x->type.shape;
  if (num_spatial < 1) Invalid(fn, "num_spatial must be >= 1, got 0");
  if (shape.size() != num_spatial + 2) {
    Invalid(fn, "x must have rank num_spatial + 2 = " + std::to_string(num_spatial + 2) +
                    " ([N, C, " + std::to_string(num_spatial) + " spatial axes]), got rank " +
                    std::to_string(shape.size()));
  }
  const int32_t auto_pad = static_cast<int32_t>(auto_pad_arg);
  if (auto_pad < kNotSet || auto_pad > kValid) {
    Invalid(fn, "auto_pad is not a shp_auto_pad_t value: " + std::to_string(auto_pad));
  }
  if (pads != nullptr && auto_pad != kNotSet) {
    Invalid(fn,
            "pads must be NULL unless auto_pad is SHP_AUTO_PAD_NOTSET (ONNX: pads and "
            "auto_pad exclude each other)");
  }
  Pool p;
  p.k = Positive(fn, kernel, num_spatial, "kernel_shape", true);
  p.s = Positive(fn, strides, num_spatial, "strides", false);
  p.d = Positive(fn, dilations, num_spatial, "dilations", false);
  dim::Scope* sc = x->owner->dims();
  const Expr* zero = sc->Constant(0);
  const Expr* one = sc->Constant(1);
  for (size_t i = 0; i < num_spatial; ++i) {
    const Expr* h = shape[i + 2];
    int64_t ext;
    if (__builtin_mul_overflow(p.k[i] - 1, p.d[i], &ext) || __builtin_add_overflow(ext, 1, &ext)) {
      Invalid(fn, "the kernel extent (kernel_shape - 1) * dilation + 1 of spatial axis " +
                      std::to_string(i) + " overflows");
    }
    const Expr* e = sc->Constant(ext);
    const Expr* s = sc->Constant(p.s[i]);
    const Expr *b = zero, *en = zero;
    if (auto_pad == kSameUpper || auto_pad == kSameLower) {
      // out = ceil(H / s); the total padding makes the last window end at the last element.
      const Expr* out = sc->FloorDiv(sc->Add(h, sc->Constant(p.s[i] - 1)), s);
      const Expr* total = sc->Max(zero, sc->Sub(sc->Add(sc->Mul(sc->Sub(out, one), s), e), h));
      const Expr* half = sc->FloorDiv(total, sc->Constant(2));
      b = auto_pad == kSameUpper ? half : sc->Sub(total, half);
      en = sc->Sub(total, b);
      p.begin.push_back(b);
      p.end.push_back(en);
      p.end_total.push_back(en);
      continue;  // ceil_mode does not apply (onnxruntime)
    }
    if (pads != nullptr) {
      for (size_t j : {i, i + num_spatial}) {
        const int64_t v = pads[j];
        const char* which = j == i ? "begin" : "end";
        if (v < 0) {
          Invalid(fn, std::string("the pad at the ") + which + " of spatial axis " +
                          std::to_string(i) + " must be >= 0, got " + std::to_string(v));
        }
        if (v >= ext) {
          Invalid(fn, std::string("the pad at the ") + which + " of spatial axis " +
                          std::to_string(i) + " (" + std::to_string(v) +
                          ") must be smaller than the kernel extent " + std::to_string(ext) +
                          " (ONNX)");
        }
      }
      b = sc->Constant(pads[i]);
      en = sc->Constant(pads[i + num_spatial]);
    }
    p.begin.push_back(b);
    p.end.push_back(en);
    if (!ceil_mode) {
      p.end_total.push_back(en);
      continue;
    }
    // ceil((H + b + e - ext) / s) + 1, less one when the last window would start at or past
    // H + b (PyTorch, the ONNX reference): the rest is padding past the end.
    const Expr* span = sc->Sub(sc->Add(sc->Add(h, b), en), e);
    const Expr* ceil_out = sc->Add(sc->FloorDiv(sc->Add(span, sc->Constant(p.s[i] - 1)), s), one);
    const Expr* out = sc->Min(ceil_out, sc->Add(sc->FloorDiv(sc->Sub(sc->Add(h, b), one), s), one));
    const Expr* need = sc->Sub(sc->Add(sc->Mul(sc->Sub(out, one), s), e), sc->Add(h, b));
    const Expr* total_end = sc->Max(en, need);
    p.end_total.push_back(total_end);
    if (total_end != en) p.overhang = true;
  }
  return p;
}

// reduce_window over the spatial axes of x with the pool's geometry; `end` gives the high pads.
const Tensor* Window(const Tensor* x, OpKind reduction, const Pool& p,
                     const std::vector<const Expr*>& begin, const std::vector<const Expr*>& end) {
  dim::Scope* sc = x->owner->dims();
  WindowAttrs a;
  a.reduction = reduction;
  a.window = {1, 1};
  a.strides = {1, 1};
  a.window_dilation = {1, 1};
  a.base_dilation.assign(p.k.size() + 2, 1);
  a.pad_low = {sc->Constant(0), sc->Constant(0)};
  a.pad_high = a.pad_low;
  for (size_t i = 0; i < p.k.size(); ++i) {
    a.window.push_back(p.k[i]);
    a.strides.push_back(p.s[i]);
    a.window_dilation.push_back(p.d[i]);
    a.pad_low.push_back(begin[i]);
    a.pad_high.push_back(end[i]);
  }
  return x->owner->Apply(OpKind::kReduceWindow, a, {x});
}

const Tensor* Scalar(trace::Trace* t, trace::DType dtype, double v) {
  uint64_t bits = 0;  // the convert op's rule (f32: rounded once; f16: to nearest even ...)
  kernels::StoreScalar(dtype, v, &bits);
  return t->Constant(dtype, {}, &bits, trace::DTypeSize(dtype));
}

// Global pools: reduce over every axis after N and C, kept as size 1.
const Tensor* Global(const char* fn, const Tensor* x, OpKind op) {
  if (x == nullptr) throw Error(Code::kInvalidArgument, "argument 'x' must not be NULL");
  const size_t rank = x->type.shape.size();
  if (rank < 3) {
    Invalid(fn,
            "x must have rank >= 3 ([N, C, spatial axes...]), got rank " + std::to_string(rank));
  }
  std::vector<int64_t> axes;
  for (size_t i = 2; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return x->owner->Reduce(op, x, axes, true);
}

}  // namespace

const Tensor* MaxPool(const Tensor* x, size_t num_spatial, const int64_t* kernel_shape,
                      const int64_t* strides, const int64_t* dilations, const int64_t* pads,
                      AutoPad auto_pad, bool ceil_mode) {
  const char* fn = "max_pool";
  if (x == nullptr) throw Error(Code::kInvalidArgument, "argument 'x' must not be NULL");
  const Pool p =
      Geometry(fn, x, num_spatial, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode);
  return Window(x, OpKind::kReduceMax, p, p.begin, p.end_total);
}

const Tensor* AvgPool(const Tensor* x, size_t num_spatial, const int64_t* kernel_shape,
                      const int64_t* strides, const int64_t* dilations, const int64_t* pads,
                      AutoPad auto_pad, bool ceil_mode, bool count_include_pad) {
  const char* fn = "avg_pool";
  if (x == nullptr) throw Error(Code::kInvalidArgument, "argument 'x' must not be NULL");
  const Tensor* t = x;
  if (!trace::IsAnyFloat(t->type.dtype)) {
    throw Error(Code::kDtypeMismatch, std::string(fn) + ": needs a floating-point x, got " +
                                          trace::DTypeName(t->type.dtype));
  }
  const Pool p =
      Geometry(fn, t, num_spatial, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode);
  trace::Trace* tr = t->owner;
  dim::Scope* sc = tr->dims();
  const Tensor* sum = Window(t, OpKind::kReduceSum, p, p.begin, p.end_total);
  bool no_pads = true;
  for (size_t i = 0; i < num_spatial; ++i) {
    no_pads = no_pads && p.begin[i] == sc->Constant(0) && p.end[i] == sc->Constant(0);
  }
  if (!p.overhang && (count_include_pad || no_pads)) {
    // Every window holds prod(kernel) counted elements: a scalar divisor.
    double count = 1;
    for (int64_t k : p.k) count *= static_cast<double>(k);
    return tr->Binary(OpKind::kDiv, sum, Scalar(tr, t->type.dtype, count));
  }
  // The count of each window: a window sum over ones of shape [1, 1, *spatial], padded with
  // ones by the explicit pads when they count (the ceil-mode overhang never does).
  std::vector<const Expr*> ones_shape = {sc->Constant(1), sc->Constant(1)};
  for (size_t i = 0; i < num_spatial; ++i) ones_shape.push_back(t->type.shape[i + 2]);
  const Tensor* ones = tr->BroadcastTo(Scalar(tr, t->type.dtype, 1.0), ones_shape);
  const Tensor* count;
  if (count_include_pad) {
    std::vector<const Expr*> low = {sc->Constant(0), sc->Constant(0)}, high = low;
    std::vector<const Expr*> zeros(num_spatial, sc->Constant(0)), extra;
    for (size_t i = 0; i < num_spatial; ++i) {
      low.push_back(p.begin[i]);
      high.push_back(p.end[i]);
      extra.push_back(sc->Sub(p.end_total[i], p.end[i]));
    }
    count = Window(tr->Pad(ones, low, high, 1.0), OpKind::kReduceSum, p, zeros, extra);
  } else {
    count = Window(ones, OpKind::kReduceSum, p, p.begin, p.end_total);
  }
  return tr->Binary(OpKind::kDiv, sum, count);
}

const Tensor* GlobalAvgPool(const Tensor* x) {
  return Global("global_avg_pool", x, OpKind::kReduceMean);
}

const Tensor* GlobalMaxPool(const Tensor* x) {
  return Global("global_max_pool", x, OpKind::kReduceMax);
}

}  // namespace composites
}  // namespace ops
}  // namespace shp
