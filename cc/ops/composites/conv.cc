// The convolution composites of composites.h: ONNX-style conv and conv_transpose over the
// `conv` op (cc/ops/conv.cc), with auto padding computed as dim expressions and an optional bias
// (a broadcast add, which the runtime fuses with the following elementwise ops).
#include <algorithm>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/ops/attrs.h"
#include "cc/ops/composites/composites.h"
#include "cc/trace/trace.h"

namespace shp {
namespace ops {
namespace composites {
namespace {

// The values of AutoPad as int32 (compared as the C API's raw values).
constexpr int32_t kNotSet = static_cast<int32_t>(AutoPad::kNotSet);
constexpr int32_t kSameUpper = static_cast<int32_t>(AutoPad::kSameUpper);
constexpr int32_t kSameLower = static_cast<int32_t>(AutoPad::kSameLower);
constexpr int32_t kValid = static_cast<int32_t>(AutoPad::kValid);

// The tensor argument `name` (kInvalidArgument "argument '<name>' must not be NULL").
const trace::Tensor* TensorArg(const trace::Tensor* t, const char* name) {
  if (t == nullptr) {
    throw Error(Code::kInvalidArgument, std::string("argument '") + name + "' must not be NULL");
  }
  return t;
}

using Shape = std::vector<const dim::Expr*>;

[[noreturn]] void Bad(const char* fn, const std::string& msg) {
  throw Error(Code::kInvalidArgument, std::string(fn) + ": " + msg);
}

// `n` ints (NULL: all `dflt`), each >= `min`.
std::vector<int64_t> Ints(const char* fn, const int64_t* v, size_t n, int64_t dflt, int64_t min,
                          const char* name) {
  std::vector<int64_t> out(n, dflt);
  if (v == nullptr) return out;
  for (size_t i = 0; i < n; ++i) {
    if (v[i] < min) {
      Bad(fn, std::string(name) + "[" + std::to_string(i) + "] must be >= " + std::to_string(min) +
                  ", got " + std::to_string(v[i]));
    }
    out[i] = v[i];
  }
  return out;
}

// The checks shared by conv and conv_transpose; returns the auto_pad value.
int32_t CheckCommon(const char* fn, const trace::Tensor* x, const trace::Tensor* w,
                    size_t num_spatial, const int64_t* pads, AutoPad auto_pad, int64_t groups) {
  if (num_spatial < 1 || num_spatial > 3) {
    Bad(fn, "num_spatial must be 1, 2 or 3, got " + std::to_string(num_spatial));
  }
  if (x->owner != w->owner) Bad(fn, "x and w belong to different scopes");
  dim::Scope* s = x->owner->dims();
  const size_t rank = num_spatial + 2;
  if (x->type.shape.size() != rank) {
    Bad(fn, "x " + s->ShapeToString(x->type.shape) + " has rank " +
                std::to_string(x->type.shape.size()) +
                ", expected num_spatial + 2 = " + std::to_string(rank) + " ([N, C, *spatial])");
  }
  if (w->type.shape.size() != rank) {
    Bad(fn, "w " + s->ShapeToString(w->type.shape) + " has rank " +
                std::to_string(w->type.shape.size()) +
                ", expected num_spatial + 2 = " + std::to_string(rank));
  }
  if (x->type.dtype != w->type.dtype) {
    throw Error(Code::kDtypeMismatch, std::string(fn) + ": x is " +
                                          trace::DTypeName(x->type.dtype) + " but w is " +
                                          trace::DTypeName(w->type.dtype));
  }
  if (groups < 1) Bad(fn, "groups must be >= 1, got " + std::to_string(groups));
  const int32_t ap = static_cast<int32_t>(auto_pad);
  if (ap < kNotSet || ap > kValid) {
    Bad(fn, "auto_pad is not a shp_auto_pad_t value: " + std::to_string(ap));
  }
  if (ap != kNotSet && pads != nullptr) {
    Bad(fn, "explicit pads and auto_pad " + std::to_string(ap) +
                " were both given (pass pads = NULL or auto_pad = SHP_AUTO_PAD_NOTSET)");
  }
  return ap;
}

// y + bias[None, :, None...] when bias is given: bias must be [O] of y's dtype.
const trace::Tensor* AddBias(const char* fn, const trace::Tensor* y, const trace::Tensor* b) {
  if (b == nullptr) return y;
  trace::Trace* tr = y->owner;
  dim::Scope* s = tr->dims();
  if (b->owner != tr) Bad(fn, "bias belongs to another scope than x");
  const dim::Expr* o = y->type.shape[1];
  if (b->type.dtype != y->type.dtype) {
    throw Error(Code::kDtypeMismatch, std::string(fn) + ": bias is " +
                                          trace::DTypeName(b->type.dtype) + " but x is " +
                                          trace::DTypeName(y->type.dtype));
  }
  if (b->type.shape.size() != 1 ||
      (b->type.shape[0] != o &&
       s->Compare(b->type.shape[0], dim::Cmp::kEq, o) != dim::Truth::kTrue)) {
    throw Error(Code::kShapeMismatch, std::string(fn) + ": bias must have shape (" +
                                          s->ToString(o) + ",) (the output channels), got " +
                                          s->ShapeToString(b->type.shape));
  }
  Shape shape{o};
  for (size_t i = 2; i < y->type.shape.size(); ++i) shape.push_back(s->Constant(1));
  return tr->Binary(trace::OpKind::kAdd, y, tr->Reshape(b, shape));
}

// The kernel of conv_transpose as conv's: w [C, O/G, *k] -> [O, C/G, *k] (channel axes swapped
// within each group), flipped on the spatial axes.
const trace::Tensor* TransposedKernel(const trace::Tensor* w, int64_t groups, size_t ns) {
  trace::Trace* tr = w->owner;
  dim::Scope* s = tr->dims();
  const Shape& ws = w->type.shape;
  std::vector<int64_t> spatial;
  for (size_t i = 0; i < ns; ++i) spatial.push_back(static_cast<int64_t>(2 + i));
  const trace::Tensor* k;
  if (groups == 1) {
    std::vector<int64_t> perm{1, 0};
    perm.insert(perm.end(), spatial.begin(), spatial.end());
    k = tr->Transpose(w, perm);
  } else {
    const dim::Expr* g = s->Constant(groups);
    const dim::Expr* cg = s->FloorDiv(ws[0], g);
    Shape split{g, cg, ws[1]};
    split.insert(split.end(), ws.begin() + 2, ws.end());
    std::vector<int64_t> perm{0, 2, 1};
    for (size_t i = 0; i < ns; ++i) perm.push_back(static_cast<int64_t>(3 + i));
    Shape merged{s->Scale(ws[1], groups), cg};
    merged.insert(merged.end(), ws.begin() + 2, ws.end());
    k = tr->Reshape(tr->Transpose(tr->Reshape(w, split), perm), merged);
  }
  return tr->Apply(trace::OpKind::kReverse, ReverseAttrs{spatial}, {k});
}

}  // namespace

const trace::Tensor* Conv(const trace::Tensor* x, const trace::Tensor* w, const trace::Tensor* bias,
                          size_t num_spatial, const int64_t* strides, const int64_t* dilations,
                          const int64_t* pads, AutoPad auto_pad, int64_t groups) {
  static const char* const fn = "conv";
  const trace::Tensor* xt = TensorArg(x, "x");
  const trace::Tensor* wt = TensorArg(w, "w");
  const int32_t ap = CheckCommon(fn, xt, wt, num_spatial, pads, auto_pad, groups);
  trace::Trace* tr = xt->owner;
  dim::Scope* s = tr->dims();
  ConvAttrs a;
  a.strides = Ints(fn, strides, num_spatial, 1, 1, "strides");
  a.rhs_dilation = Ints(fn, dilations, num_spatial, 1, 1, "dilations");
  a.lhs_dilation.assign(num_spatial, 1);
  a.groups = groups;
  for (size_t i = 0; i < num_spatial; ++i) {
    const dim::Expr* h = xt->type.shape[2 + i];
    const dim::Expr* k = wt->type.shape[2 + i];
    if (ap == kSameUpper || ap == kSameLower) {
      // out = ceil(h / stride); total = max(0, (out - 1) * stride + (k - 1) * dilation + 1 - h).
      const int64_t st = a.strides[i], d = a.rhs_dilation[i];
      const dim::Expr* out = s->FloorDiv(s->Add(h, s->Constant(st - 1)), s->Constant(st));
      const dim::Expr* need =
          s->Add(s->Scale(s->Sub(out, s->Constant(1)), st),
                 s->Add(s->Scale(s->Sub(k, s->Constant(1)), d), s->Constant(1)));
      const dim::Expr* total = s->Max(s->Constant(0), s->Sub(need, h));
      const dim::Expr* half = s->FloorDiv(total, s->Constant(2));
      const dim::Expr* rest = s->Sub(total, half);
      a.pad_low.push_back(ap == kSameUpper ? half : rest);
      a.pad_high.push_back(ap == kSameUpper ? rest : half);
    } else if (pads != nullptr) {
      a.pad_low.push_back(s->Constant(pads[i]));
      a.pad_high.push_back(s->Constant(pads[num_spatial + i]));
    } else {
      a.pad_low.push_back(s->Constant(0));
      a.pad_high.push_back(s->Constant(0));
    }
  }
  const trace::Tensor* y = tr->Apply(trace::OpKind::kConv, a, {xt, wt});
  return AddBias(fn, y, bias);
}

const trace::Tensor* ConvTranspose(const trace::Tensor* x, const trace::Tensor* w,
                                   const trace::Tensor* bias, size_t num_spatial,
                                   const int64_t* strides, const int64_t* dilations,
                                   const int64_t* pads, const int64_t* output_padding,
                                   AutoPad auto_pad, int64_t groups) {
  static const char* const fn = "conv_transpose";
  const trace::Tensor* xt = TensorArg(x, "x");
  const trace::Tensor* wt = TensorArg(w, "w");
  const int32_t ap = CheckCommon(fn, xt, wt, num_spatial, pads, auto_pad, groups);
  trace::Trace* tr = xt->owner;
  dim::Scope* s = tr->dims();
  const Shape& xs = xt->type.shape;
  const Shape& ws = wt->type.shape;
  if (xs[1] != ws[0] && s->Compare(xs[1], dim::Cmp::kEq, ws[0]) != dim::Truth::kTrue) {
    throw Error(Code::kShapeMismatch, std::string(fn) + ": w's axis 0 " + s->ToString(ws[0]) +
                                          " must be x's channel count " + s->ToString(xs[1]) +
                                          " (w is [C, O/groups, *kernel]; x " +
                                          s->ShapeToString(xs) + ", w " + s->ShapeToString(ws) +
                                          ")");
  }
  if (s->Compare(s->Mod(xs[1], s->Constant(groups)), dim::Cmp::kEq, s->Constant(0)) !=
      dim::Truth::kTrue) {
    throw Error(Code::kShapeMismatch,
                std::string(fn) + ": x's channel count " + s->ToString(xs[1]) +
                    " is not provably divisible by groups = " + std::to_string(groups));
  }
  ConvAttrs a;
  a.strides.assign(num_spatial, 1);
  a.lhs_dilation = Ints(fn, strides, num_spatial, 1, 1, "strides");
  a.rhs_dilation = Ints(fn, dilations, num_spatial, 1, 1, "dilations");
  const std::vector<int64_t> adj = Ints(fn, output_padding, num_spatial, 0, 0, "output_padding");
  for (size_t i = 0; i < num_spatial; ++i) {
    const int64_t st = a.lhs_dilation[i], d = a.rhs_dilation[i];
    if (adj[i] >= std::max(st, d)) {
      Bad(fn, "output_padding[" + std::to_string(i) + "] = " + std::to_string(adj[i]) +
                  " must be smaller than the stride or the dilation (" +
                  std::to_string(std::max(st, d)) + ")");
    }
  }
  a.groups = groups;
  for (size_t i = 0; i < num_spatial; ++i) {
    const int64_t st = a.lhs_dilation[i], d = a.rhs_dilation[i];
    const dim::Expr* h = xs[2 + i];
    const dim::Expr* reach = s->Scale(s->Sub(ws[2 + i], s->Constant(1)), d);  // (k - 1) * d
    const dim::Expr* begin;
    const dim::Expr* end;
    if (ap == kSameUpper || ap == kSameLower) {
      // ONNX ConvTranspose: output h * stride; total = (h - 1) * stride + output_padding +
      // (k - 1) * d + 1 - h * stride, split as for conv: the larger half at the end for
      // SAME_UPPER (as onnxruntime 1.32 does; checked against it).
      const dim::Expr* full =
          s->Add(s->Add(s->Scale(s->Sub(h, s->Constant(1)), st), s->Constant(adj[i] + 1)), reach);
      const dim::Expr* total = s->Max(s->Constant(0), s->Sub(full, s->Scale(h, st)));
      const dim::Expr* half = s->FloorDiv(total, s->Constant(2));
      const dim::Expr* rest = s->Sub(total, half);
      begin = ap == kSameUpper ? half : rest;
      end = ap == kSameUpper ? rest : half;
    } else if (pads != nullptr) {
      begin = s->Constant(pads[i]);
      end = s->Constant(pads[num_spatial + i]);
    } else {
      begin = s->Constant(0);
      end = s->Constant(0);
    }
    a.pad_low.push_back(s->Sub(reach, begin));
    a.pad_high.push_back(s->Add(s->Sub(reach, end), s->Constant(adj[i])));
  }
  const trace::Tensor* y =
      tr->Apply(trace::OpKind::kConv, a, {xt, TransposedKernel(wt, groups, num_spatial)});
  return AddBias(fn, y, bias);
}

}  // namespace composites
}  // namespace ops
}  // namespace shp
