// The neural-network composites of composites.h (ONNX semantics): activations, log_softmax,
// batch_norm, lrn, pad modes, depth_to_space and space_to_depth. Each is a composite of
// existing primitives recorded through the trace. Every argument is checked before the first
// operation is recorded, so a rejected call adds no tensor to the trace.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
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

using dim::Cmp;
using dim::Expr;
using dim::Truth;
using trace::DType;
using trace::Tensor;

// kInvalidArgument "argument '<name>' must not be NULL" (the C API's wording) when `p` is NULL.
void RequireArg(const void* p, const char* name) {
  if (p == nullptr) {
    throw Error(Code::kInvalidArgument, std::string("argument '") + name + "' must not be NULL");
  }
}

// v (an integer value) converted to T, saturating at T's range.
template <typename T>
T Saturate(double v) {
  const double top = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^31 or 2^63
  if (v >= top) return std::numeric_limits<T>::max();
  if (v <= -top) return std::numeric_limits<T>::min();
  return static_cast<T>(v);
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The builder of one composite: its name (for messages), the trace and the dim scope of `x`.
class Nn {
 public:
  Nn(const char* op, const Tensor* x) : op_(op) {
    RequireArg(x, "x");
    x_ = x;
    t_ = x_->owner;
    s_ = t_->dims();
  }
  const Tensor* x() const { return x_; }
  trace::Trace* t() const { return t_; }
  dim::Scope* s() const { return s_; }
  size_t rank() const { return x_->type.shape.size(); }
  const Expr* dim(size_t axis) const { return x_->type.shape[axis]; }
  DType dtype() const { return x_->type.dtype; }

  [[noreturn]] void Fail(Code code, const std::string& msg) const {
    throw Error(code, std::string(op_) + ": " + msg);
  }

  // `x` must be f32 or f64 (or any numeric dtype when `numeric`).
  void RequireFloat(bool numeric = false) const {
    const DType d = dtype();
    // Narrow types: each op of the composite computes in the compute type (cc/trace/narrow.cc).
    if (numeric ? d != DType::kBool : trace::IsAnyFloat(d)) return;
    Fail(Code::kDtypeMismatch,
         std::string("argument 'x' has dtype ") + trace::DTypeName(d) +
             (numeric ? "; expected a numeric dtype" : "; expected f32, f64, f16 or bf16"));
  }
  void RequireFinite(double v, const char* name) const {
    if (!std::isfinite(v)) {
      Fail(Code::kInvalidArgument,
           std::string("argument '") + name + "' must be finite, got " + Num(v));
    }
  }
  void RequireRank(size_t want, bool at_least, const char* layout) const {
    if (at_least ? rank() >= want : rank() == want) return;
    Fail(Code::kShapeMismatch, std::string("argument 'x' has rank ") + std::to_string(rank()) +
                                   " (shape " + s_->ShapeToString(x_->type.shape) + "); expected " +
                                   (at_least ? "rank >= " : "rank ") + std::to_string(want) + " " +
                                   layout);
  }
  // Another tensor argument: not NULL, of x's scope and dtype.
  const Tensor* Operand(const Tensor* o, const char* name) const {
    RequireArg(o, name);
    if (o->owner != t_) {
      Fail(Code::kScopeMismatch,
           std::string("argument '") + name + "' belongs to another scope than 'x'");
    }
    if (o->type.dtype != dtype()) {
      Fail(Code::kDtypeMismatch, std::string("argument '") + name + "' has dtype " +
                                     trace::DTypeName(o->type.dtype) + "; expected " +
                                     trace::DTypeName(dtype()) + " (the dtype of 'x')");
    }
    return o;
  }
  // axis in [-rank, rank), normalized.
  size_t Axis(int64_t axis) const {
    const int64_t r = static_cast<int64_t>(rank());
    if (axis < -r || axis >= r) {
      Fail(Code::kInvalidArgument, "axis " + std::to_string(axis) +
                                       " is out of range for 'x' of rank " + std::to_string(r) +
                                       " (expected -" + std::to_string(r) + " <= axis < " +
                                       std::to_string(r) + ")");
    }
    return static_cast<size_t>(axis < 0 ? axis + r : axis);
  }
  // Whether `a op b` holds: decided by the engine, or (when undecided and `assert_it`) recorded
  // as a shape assertion that programs check at run time. A false fact, or an undecided one
  // that is not asserted, fails with `what` and `fix`.
  void Require(const Expr* a, Cmp op, const Expr* b, const std::string& what,
               const std::string& fix, bool assert_it) const {
    const Truth truth =
        a == b ? (op == Cmp::kEq || op == Cmp::kLe || op == Cmp::kGe ? Truth::kTrue : Truth::kFalse)
               : s_->Compare(a, op, b);
    if (truth == Truth::kTrue) return;
    const std::string fact = s_->ToString(a) + " " + dim::CmpSymbol(op) + " " + s_->ToString(b);
    if (truth == Truth::kFalse) Fail(Code::kShapeMismatch, what + ": " + fact + " is false");
    if (assert_it) {
      s_->Check(a, op, b, std::string(op_) + ": " + what);
      return;
    }
    Fail(Code::kInconclusive, what + ": cannot prove " + fact + " under the constraints " +
                                  s_->ConstraintsToString() + "; " + fix);
  }

  // ---- Recording ----
  const Tensor* K(double v) const { return K(dtype(), v); }
  const Tensor* K(DType d, double v) const {
    switch (d) {
      case DType::kF32: {
        const float f = static_cast<float>(v);
        return t_->Constant(d, {}, &f, sizeof f);
      }
      case DType::kI32: {
        const int32_t i = Saturate<int32_t>(v);
        return t_->Constant(d, {}, &i, sizeof i);
      }
      case DType::kI64: {
        const int64_t i = Saturate<int64_t>(v);
        return t_->Constant(d, {}, &i, sizeof i);
      }
      case DType::kF64:
        return t_->Constant(d, {}, &v, sizeof v);
      default: {  // bool and the narrow types: the convert op's rule
        uint64_t bits = 0;
        kernels::StoreScalar(d, v, &bits);
        return t_->Constant(d, {}, &bits, trace::DTypeSize(d));
      }
    }
  }
  const Tensor* Un(OpKind k, const Tensor* a) const { return t_->Unary(k, a); }
  const Tensor* Bin(OpKind k, const Tensor* a, const Tensor* b) const {
    return t_->Binary(k, a, b);
  }
  const Tensor* Select(const Tensor* p, const Tensor* a, const Tensor* b) const {
    return t_->Select(p, a, b);
  }
  const Tensor* Reshape(const Tensor* a, const std::vector<const Expr*>& shape) const {
    return t_->Reshape(a, shape);
  }
  const Expr* C(int64_t v) const { return s_->Constant(v); }

 private:
  const char* op_;
  const Tensor* x_ = nullptr;
  trace::Trace* t_ = nullptr;
  dim::Scope* s_ = nullptr;
};

// x where x >= 0 (x > 0 when `strict`), else `neg` (ONNX's branch for the negative side).
const Tensor* Where(const Nn& n, bool strict, const Tensor* neg) {
  const Tensor* pos = n.Bin(strict ? OpKind::kGt : OpKind::kGe, n.x(), n.K(0));
  return n.Select(pos, n.x(), neg);
}

// The needs of reflect / edge padding on every axis (pads >= 0 provably; reflect: each
// non-zero pad <= dim - 1, edge: dim >= 1 on a padded axis, asserted when undecided);
// (*padded)[i]: whether axis i has a pad that is not the constant 0.
void CheckPads(const Nn& n, const std::vector<const Expr*>& lo, const std::vector<const Expr*>& hi,
               bool reflect, std::vector<bool>* padded) {
  const Expr* zero = n.C(0);
  for (size_t i = 0; i < lo.size(); ++i) {
    const std::string ax = "axis " + std::to_string(i);
    n.Require(lo[i], Cmp::kGe, zero, "low[" + std::to_string(i) + "] must be >= 0",
              "add a constraint that makes it non-negative", false);
    n.Require(hi[i], Cmp::kGe, zero, "high[" + std::to_string(i) + "] must be >= 0",
              "add a constraint that makes it non-negative", false);
    (*padded)[i] = lo[i] != zero || hi[i] != zero;
    if (!(*padded)[i]) continue;
    const Expr* d = n.dim(i);
    if (reflect) {
      const Expr* last = n.s()->Sub(d, n.C(1));
      for (const Expr* p : {lo[i], hi[i]}) {
        if (p == zero) continue;
        n.Require(p, Cmp::kLe, last,
                  "reflect padding of " + ax + " needs each pad <= dim - 1 (dim " +
                      n.s()->ToString(d) + ")",
                  "", true);
      }
    } else {
      n.Require(
          d, Cmp::kGe, n.C(1),
          "edge padding of " + ax + " needs a non-empty axis (dim " + n.s()->ToString(d) + " >= 1)",
          "", true);
    }
  }
}

// The checks of PadWithMode that come before its dims are read: x, the mode and the rank.
void CheckPadModeArgs(const Nn& n, PadMode mode, size_t rank) {
  const int32_t m = static_cast<int32_t>(mode);
  if (m < static_cast<int32_t>(PadMode::kConstant) || m > static_cast<int32_t>(PadMode::kEdge)) {
    n.Fail(Code::kInvalidArgument,
           "argument 'mode' is not a shp_pad_mode_t value: " + std::to_string(m) +
               " (expected 0..2: SHP_PAD_CONSTANT, SHP_PAD_REFLECT, SHP_PAD_EDGE)");
  }
  if (rank != n.rank()) {
    n.Fail(Code::kInvalidArgument,
           "rank " + std::to_string(rank) + " given for 'x' of rank " + std::to_string(n.rank()));
  }
}

}  // namespace

void CheckPadModeArgs(const trace::Tensor* x, PadMode mode, size_t rank) {
  CheckPadModeArgs(Nn("pad_mode", x), mode, rank);
}

const Tensor* LeakyRelu(const Tensor* x, double alpha) {
  Nn n("leaky_relu", x);
  n.RequireFloat();
  n.RequireFinite(alpha, "alpha");
  return Where(n, false, n.Bin(OpKind::kMul, n.x(), n.K(alpha)));
}

const Tensor* Prelu(const Tensor* x, const Tensor* slope) {
  Nn n("prelu", x);
  n.RequireFloat();
  const Tensor* sl = n.Operand(slope, "slope");
  // ONNX's unidirectional broadcast: slope broadcasts to x's shape, never the reverse.
  if (sl->type.shape.size() > n.rank()) {
    n.Fail(Code::kShapeMismatch, "'slope' of shape " + n.s()->ShapeToString(sl->type.shape) +
                                     " does not broadcast to 'x' of shape " +
                                     n.s()->ShapeToString(n.x()->type.shape) +
                                     " (it has more axes)");
  }
  const Tensor* b = nullptr;
  try {
    b = n.t()->BroadcastTo(sl, n.x()->type.shape);
  } catch (const Error& e) {  // say which composite and argument it was
    n.Fail(e.code(), "'slope' does not broadcast to 'x': " + e.message());
  }
  return Where(n, false, n.Bin(OpKind::kMul, n.x(), b));
}

const Tensor* Elu(const Tensor* x, double alpha) {
  Nn n("elu", x);
  n.RequireFloat();
  n.RequireFinite(alpha, "alpha");
  return Where(n, false, n.Bin(OpKind::kMul, n.Un(OpKind::kExpm1, n.x()), n.K(alpha)));
}

const Tensor* Selu(const Tensor* x, double alpha, double gamma) {
  Nn n("selu", x);
  n.RequireFloat();
  n.RequireFinite(alpha, "alpha");
  n.RequireFinite(gamma, "gamma");
  // gamma * (x > 0 ? x : alpha * (e^x - 1)), the scales folded into the branches.
  const Tensor* pos = n.Bin(OpKind::kMul, n.x(), n.K(gamma));
  const Tensor* neg = n.Bin(OpKind::kMul, n.Un(OpKind::kExpm1, n.x()), n.K(alpha * gamma));
  return n.Select(n.Bin(OpKind::kGt, n.x(), n.K(0)), pos, neg);
}

const Tensor* Softplus(const Tensor* x) {
  Nn n("softplus", x);
  n.RequireFloat();
  // max(x, 0) + log1p(e^-|x|): no overflow for large x, no loss for very negative x.
  const Tensor* e = n.Un(OpKind::kExp, n.Un(OpKind::kNeg, n.Un(OpKind::kAbs, n.x())));
  return n.Bin(OpKind::kAdd, n.Bin(OpKind::kMax, n.x(), n.K(0)), n.Un(OpKind::kLog1p, e));
}

const Tensor* Softsign(const Tensor* x) {
  Nn n("softsign", x);
  n.RequireFloat();
  return n.Bin(OpKind::kDiv, n.x(), n.Bin(OpKind::kAdd, n.Un(OpKind::kAbs, n.x()), n.K(1)));
}

const Tensor* Clip(const Tensor* x, double min, double max) {
  Nn n("clip", x);
  n.RequireFloat(/*numeric=*/true);
  if (std::isnan(min)) n.Fail(Code::kInvalidArgument, "argument 'min' is NaN");
  if (std::isnan(max)) n.Fail(Code::kInvalidArgument, "argument 'max' is NaN");
  const Tensor* y = n.x();
  if (trace::IsAnyFloat(n.dtype())) {
    if (min != -INFINITY) y = n.Bin(OpKind::kMax, y, n.K(min));
    if (max != INFINITY) y = n.Bin(OpKind::kMin, y, n.K(max));
    return y;
  }
  // Integers: the bounds are rounded inward (x >= 1.5 is x >= 2); a bound that every value
  // of the dtype meets is none, one that none meets saturates.
  const bool i32 = n.dtype() == DType::kI32;
  const double lo = i32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = i32 ? 2147483647.0 : 9223372036854775808.0;  // i64: 2^63, past the max
  const double cmin = std::ceil(min), cmax = std::floor(max);
  if (cmin > lo) y = n.Bin(OpKind::kMax, y, n.K(cmin));
  if (cmax < hi) y = n.Bin(OpKind::kMin, y, n.K(cmax));
  return y;
}

const Tensor* HardSigmoid(const Tensor* x, double alpha, double beta) {
  Nn n("hard_sigmoid", x);
  n.RequireFloat();
  n.RequireFinite(alpha, "alpha");
  n.RequireFinite(beta, "beta");
  const Tensor* l = n.Bin(OpKind::kAdd, n.Bin(OpKind::kMul, n.x(), n.K(alpha)), n.K(beta));
  return n.Bin(OpKind::kMax, n.Bin(OpKind::kMin, l, n.K(1)), n.K(0));
}

const Tensor* LogSoftmax(const Tensor* x, int64_t axis) {
  Nn n("log_softmax", x);
  n.RequireFloat();
  const int64_t a = static_cast<int64_t>(n.Axis(axis));
  // x - max - log(sum(e^(x - max))): the largest exponent is 0, so nothing overflows.
  const Tensor* m = n.t()->Reduce(OpKind::kReduceMax, n.x(), {a}, true);
  const Tensor* d = n.Bin(OpKind::kSub, n.x(), m);
  const Tensor* s = n.t()->Reduce(OpKind::kReduceSum, n.Un(OpKind::kExp, d), {a}, true);
  return n.Bin(OpKind::kSub, d, n.Un(OpKind::kLog, s));
}

const Tensor* BatchNorm(const Tensor* x, const Tensor* scale, const Tensor* bias,
                        const Tensor* mean, const Tensor* var, double epsilon) {
  Nn n("batch_norm", x);
  n.RequireFloat();
  n.RequireRank(2, true, "([N, C, ...])");
  n.RequireFinite(epsilon, "epsilon");
  if (epsilon < 0) {
    n.Fail(Code::kInvalidArgument, "argument 'epsilon' must be >= 0, got " + Num(epsilon));
  }
  const Expr* c = n.dim(1);
  const char* names[4] = {"scale", "bias", "mean", "var"};
  const Tensor* args[4] = {scale, bias, mean, var};
  const Tensor* p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = n.Operand(args[i], names[i]);
    const std::vector<const Expr*>& sh = p[i]->type.shape;
    if (sh.size() != 1) {
      n.Fail(Code::kShapeMismatch, std::string("argument '") + names[i] + "' has shape " +
                                       n.s()->ShapeToString(sh) + "; expected [C] = (" +
                                       n.s()->ToString(c) + ",), C being axis 1 of 'x'");
    }
    n.Require(sh[0], Cmp::kEq, c,
              std::string("the size of '") + names[i] + "' must equal C (axis 1 of 'x')",
              "add a constraint that makes them equal", false);
  }
  // a = scale / sqrt(var + eps) and b = bias - mean * a on [C], then one fused x * a + b.
  const Tensor* a =
      n.Bin(OpKind::kMul, p[0], n.Un(OpKind::kRsqrt, n.Bin(OpKind::kAdd, p[3], n.K(epsilon))));
  const Tensor* b = n.Bin(OpKind::kSub, p[1], n.Bin(OpKind::kMul, p[2], a));
  std::vector<const Expr*> col(n.rank() - 1, n.C(1));
  col[0] = c;
  return n.Bin(OpKind::kAdd, n.Bin(OpKind::kMul, n.x(), n.Reshape(a, col)), n.Reshape(b, col));
}

const Tensor* Lrn(const Tensor* x, int64_t size, double alpha, double beta, double bias) {
  Nn n("lrn", x);
  n.RequireFloat();
  n.RequireRank(2, true, "([N, C, ...])");
  if (size <= 0) {
    n.Fail(Code::kInvalidArgument, "argument 'size' must be >= 1, got " + std::to_string(size));
  }
  n.RequireFinite(alpha, "alpha");
  n.RequireFinite(beta, "beta");
  n.RequireFinite(bias, "bias");
  // The sum of squares over the window [c - floor((size-1)/2), c + ceil((size-1)/2)] of the
  // channel axis: `size` shifted slices of the zero-padded squares.
  const Tensor* sq = n.Bin(OpKind::kMul, n.x(), n.x());
  std::vector<const Expr*> low(n.rank(), n.C(0)), high(n.rank(), n.C(0));
  low[1] = n.C((size - 1) / 2);
  high[1] = n.C(size / 2);
  const Tensor* padded = n.t()->Pad(sq, low, high, 0.0);
  const Tensor* sum = nullptr;
  std::vector<const Expr*> start(n.rank(), nullptr), limit(n.rank(), nullptr);
  for (int64_t i = 0; i < size; ++i) {
    start[1] = n.C(i);
    limit[1] = n.s()->Add(n.dim(1), n.C(i));
    const Tensor* w = n.t()->Slice(padded, start, limit, {});
    sum = sum ? n.Bin(OpKind::kAdd, sum, w) : w;
  }
  const Tensor* base = n.Bin(
      OpKind::kAdd, n.Bin(OpKind::kMul, sum, n.K(alpha / static_cast<double>(size))), n.K(bias));
  return n.Bin(OpKind::kMul, n.x(), n.Bin(OpKind::kPow, base, n.K(-beta)));
}

const Tensor* PadWithMode(const Tensor* x, const std::vector<const Expr*>& low,
                          const std::vector<const Expr*>& high, PadMode mode, double value) {
  Nn n("pad_mode", x);
  CheckPadModeArgs(n, mode, low.size());
  CheckPadModeArgs(n, mode, high.size());
  const size_t rank = n.rank();
  for (const std::vector<const Expr*>* v : {&low, &high}) {
    const char* name = v == &low ? "low" : "high";
    for (size_t i = 0; i < rank; ++i) {
      if ((*v)[i] == nullptr) {
        n.Fail(Code::kInvalidArgument, std::string(name) + "[" + std::to_string(i) + "] is NULL");
      }
      n.s()->CheckSameScope((*v)[i], (*v)[i], "pad_mode");
    }
  }
  const std::vector<const Expr*>& lo = low;
  const std::vector<const Expr*>& hi = high;
  if (mode == PadMode::kConstant) return n.t()->Pad(n.x(), lo, hi, value);
  const bool reflect = mode == PadMode::kReflect;
  // Check every axis before recording any tensor; the assertions recorded for earlier axes
  // are dropped again if a later axis fails.
  std::vector<bool> padded(rank);
  const size_t facts = n.s()->facts().size();
  try {
    CheckPads(n, lo, hi, reflect, &padded);
  } catch (...) {
    n.s()->DropFactsAfter(facts);
    throw;
  }
  // Axis by axis (as numpy.pad): the pieces before and after, concatenated around y.
  const Tensor* y = n.x();
  for (size_t i = 0; i < rank; ++i) {
    if (!padded[i]) continue;
    const int64_t a = static_cast<int64_t>(i);
    const Expr* d = y->type.shape[i];
    std::vector<const Expr*> start(rank, nullptr), limit(rank, nullptr);
    auto piece = [&](const Expr* from, const Expr* to, const Expr* count) {
      start[i] = from;
      limit[i] = to;
      const Tensor* s = n.t()->Slice(y, start, limit, {});
      if (reflect) return n.t()->Apply(OpKind::kReverse, ReverseAttrs{{a}}, {s});
      std::vector<const Expr*> shape = s->type.shape;
      shape[i] = count;
      return n.t()->BroadcastTo(s, shape);
    };
    std::vector<const Tensor*> parts;
    const Expr* one = n.C(1);
    const Expr* last = n.s()->Sub(d, one);
    if (lo[i] != n.C(0)) {
      parts.push_back(reflect ? piece(one, n.s()->Add(one, lo[i]), lo[i])
                              : piece(n.C(0), one, lo[i]));
    }
    parts.push_back(y);
    if (hi[i] != n.C(0)) {
      parts.push_back(reflect ? piece(n.s()->Sub(last, hi[i]), last, hi[i])
                              : piece(last, d, hi[i]));
    }
    y = n.t()->Concatenate(parts, a);
  }
  return y;
}

const Tensor* DepthToSpace(const Tensor* x, int64_t blocksize, DepthToSpaceMode mode) {
  Nn n("depth_to_space", x);
  const int32_t m = static_cast<int32_t>(mode);
  if (mode != DepthToSpaceMode::kDcr && mode != DepthToSpaceMode::kCrd) {
    n.Fail(Code::kInvalidArgument,
           "argument 'mode' is not a shp_depth_to_space_mode_t value: " + std::to_string(m) +
               " (expected 0..1: SHP_DEPTH_TO_SPACE_DCR, SHP_DEPTH_TO_SPACE_CRD)");
  }
  n.RequireRank(4, false, "([N, C, H, W])");
  if (blocksize <= 0) {
    n.Fail(Code::kInvalidArgument,
           "argument 'blocksize' must be >= 1, got " + std::to_string(blocksize));
  }
  dim::Scope* s = n.s();
  const int64_t b = blocksize;
  const Expr* bb = n.C(b * b);
  const Expr* c = n.dim(1);
  n.Require(s->Mod(c, bb), Cmp::kEq, n.C(0),
            "C (axis 1 of 'x', " + s->ToString(c) +
                ") must be divisible by blocksize^2 = " + std::to_string(b * b),
            "add the constraint 'mod(" + s->ToString(c) + ", " + std::to_string(b * b) +
                ") == 0' when creating the scope, or write C as a multiple of " +
                std::to_string(b * b),
            false);
  const Expr* cb = s->FloorDiv(c, bb);
  const Expr* nb = n.dim(0);
  const Expr* h = n.dim(2);
  const Expr* w = n.dim(3);
  const Expr* k = n.C(b);
  const bool dcr = mode == DepthToSpaceMode::kDcr;
  // DCR: [N, b, b, C/b^2, H, W] -> [N, C/b^2, H, b, W, b]; CRD: [N, C/b^2, b, b, H, W] -> same.
  const Tensor* r = n.Reshape(n.x(), dcr ? std::vector<const Expr*>{nb, k, k, cb, h, w}
                                         : std::vector<const Expr*>{nb, cb, k, k, h, w});
  const Tensor* t = n.t()->Transpose(
      r, dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3});
  return n.Reshape(t, {nb, cb, s->Mul(h, k), s->Mul(w, k)});
}

const Tensor* SpaceToDepth(const Tensor* x, int64_t blocksize) {
  Nn n("space_to_depth", x);
  n.RequireRank(4, false, "([N, C, H, W])");
  if (blocksize <= 0) {
    n.Fail(Code::kInvalidArgument,
           "argument 'blocksize' must be >= 1, got " + std::to_string(blocksize));
  }
  dim::Scope* s = n.s();
  const Expr* k = n.C(blocksize);
  const char* names[2] = {"H", "W"};
  for (size_t i = 2; i < 4; ++i) {
    const Expr* d = n.dim(i);
    n.Require(s->Mod(d, k), Cmp::kEq, n.C(0),
              std::string(names[i - 2]) + " (axis " + std::to_string(i) + " of 'x', " +
                  s->ToString(d) +
                  ") must be divisible by blocksize = " + std::to_string(blocksize),
              "add the constraint 'mod(" + s->ToString(d) + ", " + std::to_string(blocksize) +
                  ") == 0' when creating the scope, or write it as a multiple of " +
                  std::to_string(blocksize),
              false);
  }
  const Expr* nb = n.dim(0);
  const Expr* c = n.dim(1);
  const Expr* hb = s->FloorDiv(n.dim(2), k);
  const Expr* wb = s->FloorDiv(n.dim(3), k);
  // [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b] (ONNX's DCR order of the channels).
  const Tensor* r = n.Reshape(n.x(), {nb, c, hb, k, wb, k});
  const Tensor* t = n.t()->Transpose(r, {0, 3, 5, 1, 2, 4});
  return n.Reshape(t, {nb, s->Mul(c, s->Mul(k, k)), hb, wb});
}

}  // namespace composites
}  // namespace ops
}  // namespace shp
