#include "cc/trace/infer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "cc/base/error.h"

namespace shp {
namespace trace {
namespace {

using dim::Cmp;
using dim::Expr;
using dim::Truth;
using Shape = std::vector<const Expr*>;

bool FloatOnly(OpKind k) {
  switch (k) {
    case OpKind::kExp: case OpKind::kLog: case OpKind::kLog1p: case OpKind::kExpm1: case OpKind::kSqrt:
    case OpKind::kRsqrt: case OpKind::kSin: case OpKind::kCos: case OpKind::kTanh: case OpKind::kLogistic:
    case OpKind::kFloor: case OpKind::kCeil: case OpKind::kRound:
      return true;
    default:
      return false;
  }
}

class Inferrer {
 public:
  Inferrer(dim::Scope* s, OpKind op, Attrs* attrs, const std::vector<TensorType>& in, InferMode mode)
      : s_(s), op_(op), a_(attrs), in_(in), mode_(mode) {}

  TensorType Run() {
    CheckOperandCount();
    for (const TensorType& t : in_) CheckDims(t.shape);
    CheckDims(a_->dims);
    CheckDims(a_->dims2);
    if (IsUnary(op_)) return Unary();
    if (IsBinary(op_)) return Binary();
    if (IsCompare(op_)) return Compare();
    if (IsReduce(op_)) return Reduce();
    switch (op_) {
      case OpKind::kConstant:
        throw Error(Code::kInvalidArgument, "constant: a constant has no inferred type");
      case OpKind::kSelect: return Select();
      case OpKind::kConvert: return Convert();
      case OpKind::kBroadcastTo: return BroadcastTo();
      case OpKind::kReshape: return Reshape();
      case OpKind::kTranspose: return Transpose();
      case OpKind::kConcatenate: return Concatenate();
      case OpKind::kSlice: return Slice();
      case OpKind::kPad: return Pad();
      case OpKind::kMatMul: return MatMul();
      case OpKind::kDotGeneral: return DotGeneral();
      case OpKind::kIota: return Iota();
      case OpKind::kSoftmax: return AlongAxis(true);
      case OpKind::kLayerNorm: return LayerNorm();
      case OpKind::kCumSum: return AlongAxis(false);
      case OpKind::kTake: return Take();
      case OpKind::kDimValue: return DimValue();
      default:
        break;
    }
    throw Error(Code::kInvalidArgument, "unknown operation " + std::to_string(static_cast<int32_t>(op_)));
  }

 private:
  // ---- Helpers ----
  std::string Name() const { return OpName(op_); }
  std::string Str(const Expr* e) const { return s_->ToString(e); }
  std::string Str(const Shape& sh) const { return s_->ShapeToString(sh); }

  [[noreturn]] void Fail(Code code, const std::string& msg) const { throw Error(code, Name() + ": " + msg); }
  [[noreturn]] void Mismatch(const std::string& msg) const { Fail(Code::kShapeMismatch, msg); }
  [[noreturn]] void Invalid(const std::string& msg) const { Fail(Code::kInvalidArgument, msg); }

  [[noreturn]] void Inconclusive(const Expr* a, Cmp op, const Expr* b, const std::string& context) const {
    std::string fact = Str(a) + " " + dim::CmpSymbol(op) + " " + Str(b);
    Fail(Code::kInconclusive,
         "cannot decide whether " + fact + " (" + context + ") under the constraints " +
             s_->ConstraintsToString() +
             ". To fix it: add a constraint that decides it when creating the scope (e.g. '" + fact +
             "'), use max/min so that the dimensions provably agree, declare the variables' ranges "
             "(shp_scope_declare), or assert the fact with shp_scope_check");
  }

  // TRUE -> true, FALSE -> false, UNKNOWN -> kInconclusive.
  bool Decide(const Expr* a, Cmp op, const Expr* b, const std::string& context) const {
    if (a == b) return op == Cmp::kEq || op == Cmp::kLe || op == Cmp::kGe;
    Truth t = s_->Compare(a, op, b);
    if (t == Truth::kUnknown) Inconclusive(a, op, b, context);
    return t == Truth::kTrue;
  }

  bool IsOne(const Expr* e) const {
    return e == s_->Constant(1) || (!e->IsConstant() && s_->Compare(e, Cmp::kEq, s_->Constant(1)) == Truth::kTrue);
  }

  void CheckDims(const Shape& sh) const {
    for (const Expr* d : sh) {
      if (d != nullptr && d->scope != s_) s_->CheckSameScope(d, d, OpName(op_));
    }
  }

  void CheckOperandCount() const {
    int want = ExpectedOperandCount(op_);
    int got = static_cast<int>(in_.size());
    if (want >= 0 && got != want) {
      Invalid("takes " + std::to_string(want) + " operand" + (want == 1 ? "" : "s") + ", got " + std::to_string(got));
    }
    if (want < 0 && got < 1) Invalid("takes at least one operand");
  }

  // A dimension given as an attribute must be able to be a size (>= 0).
  void CheckSize(const Expr* d, const std::string& what) const {
    if (s_->Compare(d, Cmp::kGe, s_->Constant(0)) == Truth::kFalse) {
      Mismatch(what + " " + Str(d) + " is negative");
    }
  }

  int64_t NormAxis(int64_t axis, size_t rank, const std::string& what) const {
    int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) {
      Invalid(what + " " + std::to_string(axis) + " is out of range for an operand of rank " + std::to_string(rank));
    }
    return axis < 0 ? axis + r : axis;
  }

  void RequireDType(DType t, bool ok, const std::string& what) const {
    if (!ok) Fail(Code::kDtypeMismatch, "expects " + what + ", got " + DTypeName(t));
  }

  void SameDType(DType a, DType b) const {
    if (a != b) {
      Fail(Code::kDtypeMismatch, std::string("operand dtypes differ: ") + DTypeName(a) + " and " + DTypeName(b) +
                                     " (convert one operand first)");
    }
  }

  // NumPy broadcasting of several shapes. A symbolic dimension broadcasts only when it is
  // provably 1; otherwise the dimensions must be provably equal.
  Shape Broadcast(const std::vector<const Shape*>& shapes, const std::string& what) const {
    size_t rank = 0;
    for (const Shape* sh : shapes) rank = std::max(rank, sh->size());
    Shape out(rank, nullptr);
    auto all = [&] {
      std::string t;
      for (size_t i = 0; i < shapes.size(); ++i) {
        if (i) t += i + 1 == shapes.size() ? " and " : ", ";
        t += Str(*shapes[i]);
      }
      return t;
    };
    for (size_t k = 0; k < rank; ++k) {  // k counts from the last axis
      const Expr* acc = nullptr;
      for (const Shape* sh : shapes) {
        if (k >= sh->size()) continue;
        const Expr* d = (*sh)[sh->size() - 1 - k];
        if (acc == nullptr || acc == d) {
          acc = d;
          continue;
        }
        if (IsOne(d)) continue;
        if (IsOne(acc)) {
          acc = d;
          continue;
        }
        Truth t = s_->Compare(acc, Cmp::kEq, d);
        if (t == Truth::kTrue) continue;
        if (t == Truth::kFalse) {
          Mismatch("incompatible shapes for " + what + ": " + all() + " (axis " + std::to_string(rank - 1 - k) +
                   " of the result: " + Str(acc) + " vs " + Str(d) +
                   "; a symbolic dimension is broadcast only when it is provably 1)");
        }
        Inconclusive(acc, Cmp::kEq, d, "axis " + std::to_string(rank - 1 - k) + " of the result when " + what + " " +
                                           all());
      }
      out[rank - 1 - k] = acc;
    }
    return out;
  }

  // ---- Operations ----
  TensorType Unary() const {
    DType t = in_[0].dtype;
    if (FloatOnly(op_)) RequireDType(t, IsFloat(t), "a floating-point operand");
    if (op_ == OpKind::kNot) RequireDType(t, !IsFloat(t), "a bool or integer operand");
    if (op_ == OpKind::kNeg || op_ == OpKind::kAbs || op_ == OpKind::kSign) {
      RequireDType(t, IsNumeric(t), "a numeric operand");
    }
    return in_[0];
  }

  TensorType Binary() const {
    DType t = in_[0].dtype;
    SameDType(t, in_[1].dtype);
    if (op_ == OpKind::kAnd || op_ == OpKind::kOr || op_ == OpKind::kXor) {
      RequireDType(t, !IsFloat(t), "bool or integer operands");
    } else {
      RequireDType(t, IsNumeric(t), "numeric operands");
    }
    return TensorType{t, Broadcast({&in_[0].shape, &in_[1].shape}, "broadcasting")};
  }

  TensorType Compare() const {
    SameDType(in_[0].dtype, in_[1].dtype);
    return TensorType{DType::kBool, Broadcast({&in_[0].shape, &in_[1].shape}, "broadcasting")};
  }

  TensorType Select() const {
    if (in_[0].dtype != DType::kBool) {
      Fail(Code::kDtypeMismatch, std::string("the predicate must be bool, got ") + DTypeName(in_[0].dtype));
    }
    SameDType(in_[1].dtype, in_[2].dtype);
    return TensorType{in_[1].dtype, Broadcast({&in_[0].shape, &in_[1].shape, &in_[2].shape}, "broadcasting")};
  }

  TensorType Convert() const {
    if (!IsValidDType(static_cast<int32_t>(a_->dtype))) {
      Invalid("invalid target dtype " + std::to_string(static_cast<int32_t>(a_->dtype)));
    }
    return TensorType{a_->dtype, in_[0].shape};
  }

  TensorType BroadcastTo() const {
    const Shape& x = in_[0].shape;
    const Shape& to = a_->dims;
    for (size_t i = 0; i < to.size(); ++i) {
      if (to[i] == nullptr) Invalid("target dimension " + std::to_string(i) + " is missing");
      CheckSize(to[i], "target dimension " + std::to_string(i));
    }
    if (to.size() < x.size()) Mismatch("cannot broadcast " + Str(x) + " to the lower-rank shape " + Str(to));
    size_t off = to.size() - x.size();
    for (size_t i = 0; i < x.size(); ++i) {
      const Expr* d = x[i];
      const Expr* t = to[off + i];
      if (d == t || IsOne(d)) continue;
      Truth eq = s_->Compare(d, Cmp::kEq, t);
      if (eq == Truth::kTrue) continue;
      if (eq == Truth::kFalse) {
        Mismatch("cannot broadcast " + Str(x) + " to " + Str(to) + ": axis " + std::to_string(i) + " is " + Str(d) +
                 ", which is neither 1 nor " + Str(t));
      }
      Inconclusive(d, Cmp::kEq, t, "axis " + std::to_string(i) + " when broadcasting " + Str(x) + " to " + Str(to));
    }
    return TensorType{in_[0].dtype, to};
  }

  const Expr* Product(const Shape& sh) const {
    const Expr* p = s_->Constant(1);
    for (const Expr* d : sh) {
      if (d != nullptr) p = s_->Mul(p, d);
    }
    return p;
  }

  std::string SpecStr(const Shape& sh) const {
    std::string t = "(";
    for (size_t i = 0; i < sh.size(); ++i) {
      if (i) t += ", ";
      t += sh[i] ? Str(sh[i]) : "_";
    }
    return t + (sh.size() == 1 ? ",)" : ")");
  }

  TensorType Reshape() const {
    const Shape& x = in_[0].shape;
    Shape to = a_->dims;
    int64_t infer = -1;
    for (size_t i = 0; i < to.size(); ++i) {
      if (to[i] != nullptr) {
        CheckSize(to[i], "target dimension " + std::to_string(i));
        continue;
      }
      if (infer >= 0) Invalid("at most one target dimension can be inferred, got " + SpecStr(to));
      infer = static_cast<int64_t>(i);
    }
    a_->axis = infer;
    const Expr* total = Product(x);
    const Expr* known = Product(to);
    if (infer < 0) {
      if (!Decide(total, Cmp::kEq, known, "the sizes when reshaping " + Str(x) + " to " + Str(to))) {
        Mismatch("cannot reshape " + Str(x) + " to " + Str(to) + ": the sizes " + Str(total) + " and " + Str(known) +
                 " differ");
      }
      return TensorType{in_[0].dtype, to};
    }
    if (s_->Compare(known, Cmp::kGe, s_->Constant(1)) != Truth::kTrue) {
      Fail(s_->Compare(known, Cmp::kEq, s_->Constant(0)) == Truth::kTrue ? Code::kInvalidArgument
                                                                           : Code::kInconclusive,
           "cannot infer a dimension of " + SpecStr(to) + " when reshaping " + Str(x) + ": the product " +
               Str(known) + " of the other dimensions may be 0 under the constraints " + s_->ConstraintsToString() +
               " (add a constraint or declare the ranges so that it is provably >= 1)");
    }
    const Expr* rem = s_->Mod(total, known);
    Truth divisible = rem->terms.empty() ? Truth::kTrue : s_->Compare(rem, Cmp::kEq, s_->Constant(0));
    if (divisible == Truth::kFalse) {
      Mismatch("cannot reshape " + Str(x) + " to " + SpecStr(to) + ": the size " + Str(total) +
               " is not divisible by " + Str(known));
    }
    if (divisible == Truth::kUnknown) {
      if (mode_ == InferMode::kVerify) {
        Inconclusive(rem, Cmp::kEq, s_->Constant(0),
                     "divisibility when reshaping " + Str(x) + " to " + SpecStr(to) + "; the program lacks this assertion");
      }
      s_->Check(rem, Cmp::kEq, s_->Constant(0),
                "reshape: the size " + Str(total) + " of the operand " + Str(x) + " must be divisible by " + Str(known) +
                    " to reshape it to " + SpecStr(to));
    }
    to[static_cast<size_t>(infer)] = s_->FloorDiv(total, known);
    return TensorType{in_[0].dtype, to};
  }

  TensorType Transpose() const {
    const Shape& x = in_[0].shape;
    std::vector<int64_t>& perm = a_->ints;
    if (perm.size() != x.size()) {
      Invalid("the permutation has " + std::to_string(perm.size()) + " entries but the operand has rank " +
              std::to_string(x.size()));
    }
    std::vector<bool> seen(x.size(), false);
    Shape out;
    for (int64_t& p : perm) {
      p = NormAxis(p, x.size(), "permutation entry");
      if (seen[static_cast<size_t>(p)]) Invalid("the permutation repeats axis " + std::to_string(p));
      seen[static_cast<size_t>(p)] = true;
      out.push_back(x[static_cast<size_t>(p)]);
    }
    return TensorType{in_[0].dtype, out};
  }

  TensorType Concatenate() const {
    const Shape& first = in_[0].shape;
    if (first.empty()) Invalid("cannot concatenate rank-0 tensors");
    a_->axis = NormAxis(a_->axis, first.size(), "axis");
    size_t ax = static_cast<size_t>(a_->axis);
    const Expr* sum = first[ax];
    for (size_t i = 1; i < in_.size(); ++i) {
      const Shape& sh = in_[i].shape;
      SameDType(in_[0].dtype, in_[i].dtype);
      if (sh.size() != first.size()) {
        Mismatch("operands have different ranks: " + Str(first) + " and " + Str(sh));
      }
      for (size_t j = 0; j < sh.size(); ++j) {
        if (j == ax) continue;
        if (!Decide(first[j], Cmp::kEq, sh[j], "axis " + std::to_string(j) + " of operands 0 and " + std::to_string(i))) {
          Mismatch("shapes " + Str(first) + " and " + Str(sh) + " differ on axis " + std::to_string(j) + " (" +
                   Str(first[j]) + " vs " + Str(sh[j]) + "); only axis " + std::to_string(ax) + " may differ");
        }
      }
      sum = s_->Add(sum, sh[ax]);
    }
    Shape out = first;
    out[ax] = sum;
    return TensorType{in_[0].dtype, out};
  }

  TensorType Slice() const {
    const Shape& x = in_[0].shape;
    if (a_->dims.size() != x.size() || a_->dims2.size() != x.size() || a_->ints.size() != x.size()) {
      Invalid("start, limit and strides need one entry per axis (" + std::to_string(x.size()) + ")");
    }
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
      const Expr* st = a_->dims[i];
      const Expr* li = a_->dims2[i];
      int64_t stride = a_->ints[i];
      if (st == nullptr || li == nullptr) Invalid("start or limit of axis " + std::to_string(i) + " is missing");
      if (stride < 1) Invalid("stride " + std::to_string(stride) + " of axis " + std::to_string(i) + " is not >= 1");
      std::string ax = "axis " + std::to_string(i) + " of " + Str(x);
      const Expr* zero = s_->Constant(0);
      if (!Decide(st, Cmp::kGe, zero, "start of " + ax)) Mismatch("start " + Str(st) + " of " + ax + " is negative");
      if (!Decide(st, Cmp::kLe, li, "start and limit of " + ax)) {
        Mismatch("start " + Str(st) + " of " + ax + " exceeds the limit " + Str(li));
      }
      if (!Decide(li, Cmp::kLe, x[i], "limit of " + ax)) {
        Mismatch("limit " + Str(li) + " of " + ax + " exceeds the dimension " + Str(x[i]));
      }
      const Expr* len = s_->Sub(li, st);
      out.push_back(stride == 1 ? len : s_->FloorDiv(s_->Add(len, s_->Constant(stride - 1)), s_->Constant(stride)));
    }
    return TensorType{in_[0].dtype, out};
  }

  TensorType Pad() const {
    const Shape& x = in_[0].shape;
    if (a_->dims.size() != x.size() || a_->dims2.size() != x.size()) {
      Invalid("low and high padding need one entry per axis (" + std::to_string(x.size()) + ")");
    }
    if (!std::isfinite(a_->fvalue) && IsInteger(in_[0].dtype)) Invalid("the padding value is not finite");
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
      const Expr* lo = a_->dims[i];
      const Expr* hi = a_->dims2[i];
      if (lo == nullptr || hi == nullptr) Invalid("padding of axis " + std::to_string(i) + " is missing");
      const Expr* zero = s_->Constant(0);
      std::string ax = "axis " + std::to_string(i);
      if (!Decide(lo, Cmp::kGe, zero, "low padding of " + ax)) Mismatch("low padding " + Str(lo) + " of " + ax + " is negative");
      if (!Decide(hi, Cmp::kGe, zero, "high padding of " + ax)) Mismatch("high padding " + Str(hi) + " of " + ax + " is negative");
      out.push_back(s_->Add(s_->Add(lo, x[i]), hi));
    }
    return TensorType{in_[0].dtype, out};
  }

  TensorType Reduce() const {
    const Shape& x = in_[0].shape;
    DType t = in_[0].dtype;
    if (op_ == OpKind::kReduceMean) {
      RequireDType(t, IsFloat(t), "a floating-point operand");
    } else {
      RequireDType(t, IsNumeric(t), "a numeric operand");
    }
    std::vector<int64_t>& axes = a_->ints;
    if (axes.empty()) {
      for (size_t i = 0; i < x.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    for (int64_t& ax : axes) ax = NormAxis(ax, x.size(), "axis");
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) Invalid("an axis is listed twice");
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
      bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
      if (!reduced) {
        out.push_back(x[i]);
      } else if (a_->keepdims) {
        out.push_back(s_->Constant(1));
      }
    }
    return TensorType{t, out};
  }

  TensorType MatMul() const {
    const Shape& a = in_[0].shape;
    const Shape& b = in_[1].shape;
    SameDType(in_[0].dtype, in_[1].dtype);
    RequireDType(in_[0].dtype, IsNumeric(in_[0].dtype), "numeric operands");
    if (a.empty() || b.empty()) Invalid("operands must have rank >= 1, got " + Str(a) + " and " + Str(b));
    const Expr* k1 = a.back();
    const Expr* k2 = b.size() == 1 ? b[0] : b[b.size() - 2];
    if (!Decide(k1, Cmp::kEq, k2, "the contracting dimensions of " + Str(a) + " and " + Str(b))) {
      Mismatch("contracting dimensions differ: " + Str(k1) + " vs " + Str(k2) + " (shapes " + Str(a) + " and " +
               Str(b) + ")");
    }
    Shape ba(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
    Shape bb(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
    Shape out = Broadcast({&ba, &bb}, "broadcasting the batch dimensions of");
    if (a.size() >= 2) out.push_back(a[a.size() - 2]);
    if (b.size() >= 2) out.push_back(b.back());
    return TensorType{in_[0].dtype, out};
  }

  void CheckAxes(std::vector<int64_t>* axes, size_t rank, std::vector<bool>* used, const char* what,
                 const char* side) const {
    for (int64_t& ax : *axes) {
      ax = NormAxis(ax, rank, std::string(side) + " " + what + " axis");
      if ((*used)[static_cast<size_t>(ax)]) Invalid(std::string(side) + " axis " + std::to_string(ax) + " is used twice");
      (*used)[static_cast<size_t>(ax)] = true;
    }
  }

  TensorType DotGeneral() const {
    const Shape& a = in_[0].shape;
    const Shape& b = in_[1].shape;
    SameDType(in_[0].dtype, in_[1].dtype);
    RequireDType(in_[0].dtype, IsNumeric(in_[0].dtype), "numeric operands");
    DotDims& d = a_->dot;
    if (d.lhs_batch.size() != d.rhs_batch.size()) Invalid("lhs and rhs have different numbers of batch axes");
    if (d.lhs_contracting.size() != d.rhs_contracting.size()) {
      Invalid("lhs and rhs have different numbers of contracting axes");
    }
    std::vector<bool> ua(a.size(), false), ub(b.size(), false);
    CheckAxes(&d.lhs_batch, a.size(), &ua, "batch", "lhs");
    CheckAxes(&d.lhs_contracting, a.size(), &ua, "contracting", "lhs");
    CheckAxes(&d.rhs_batch, b.size(), &ub, "batch", "rhs");
    CheckAxes(&d.rhs_contracting, b.size(), &ub, "contracting", "rhs");
    Shape out;
    for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
      const Expr* x = a[static_cast<size_t>(d.lhs_batch[i])];
      const Expr* y = b[static_cast<size_t>(d.rhs_batch[i])];
      if (!Decide(x, Cmp::kEq, y, "batch dimensions of " + Str(a) + " and " + Str(b))) {
        Mismatch("batch dimensions differ: " + Str(x) + " vs " + Str(y) + " (shapes " + Str(a) + " and " + Str(b) + ")");
      }
      out.push_back(x);
    }
    for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
      const Expr* x = a[static_cast<size_t>(d.lhs_contracting[i])];
      const Expr* y = b[static_cast<size_t>(d.rhs_contracting[i])];
      if (!Decide(x, Cmp::kEq, y, "contracting dimensions of " + Str(a) + " and " + Str(b))) {
        Mismatch("contracting dimensions differ: " + Str(x) + " vs " + Str(y) + " (shapes " + Str(a) + " and " +
                 Str(b) + ")");
      }
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (!ua[i]) out.push_back(a[i]);
    }
    for (size_t i = 0; i < b.size(); ++i) {
      if (!ub[i]) out.push_back(b[i]);
    }
    return TensorType{in_[0].dtype, out};
  }

  TensorType Iota() const {
    RequireDType(a_->dtype, IsValidDType(static_cast<int32_t>(a_->dtype)) && IsNumeric(a_->dtype), "a numeric dtype");
    const Shape& sh = a_->dims;
    if (sh.empty()) Invalid("the shape must have rank >= 1");
    for (size_t i = 0; i < sh.size(); ++i) {
      if (sh[i] == nullptr) Invalid("dimension " + std::to_string(i) + " is missing");
      CheckSize(sh[i], "dimension " + std::to_string(i));
    }
    a_->axis = NormAxis(a_->axis, sh.size(), "axis");
    return TensorType{a_->dtype, sh};
  }

  TensorType AlongAxis(bool float_only) const {
    DType t = in_[0].dtype;
    if (float_only) {
      RequireDType(t, IsFloat(t), "a floating-point operand");
    } else {
      RequireDType(t, IsNumeric(t), "a numeric operand");
    }
    if (in_[0].shape.empty()) Invalid("the operand must have rank >= 1");
    a_->axis = NormAxis(a_->axis, in_[0].shape.size(), "axis");
    return in_[0];
  }

  TensorType LayerNorm() const {
    if (!(a_->fvalue >= 0) || !std::isfinite(a_->fvalue)) {
      Invalid("epsilon must be finite and >= 0, got " + std::to_string(a_->fvalue));
    }
    return AlongAxis(true);
  }

  TensorType Take() const {
    const Shape& x = in_[0].shape;
    const Shape& idx = in_[1].shape;
    RequireDType(in_[1].dtype, IsInteger(in_[1].dtype), "integer indices");
    if (x.empty()) Invalid("the operand must have rank >= 1");
    a_->axis = NormAxis(a_->axis, x.size(), "axis");
    size_t ax = static_cast<size_t>(a_->axis);
    Shape out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(ax));
    out.insert(out.end(), idx.begin(), idx.end());
    out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.end());
    return TensorType{in_[0].dtype, out};
  }

  TensorType DimValue() const {
    if (a_->dims.size() != 1 || a_->dims[0] == nullptr) Invalid("takes exactly one dimension expression");
    return TensorType{DType::kI64, {}};
  }

  dim::Scope* s_;
  OpKind op_;
  Attrs* a_;
  const std::vector<TensorType>& in_;
  InferMode mode_;
};

}  // namespace

int ExpectedOperandCount(OpKind op) {
  if (IsUnary(op)) return 1;
  if (IsBinary(op) || IsCompare(op)) return 2;
  if (IsReduce(op)) return 1;
  switch (op) {
    case OpKind::kConstant: case OpKind::kIota: case OpKind::kDimValue: return 0;
    case OpKind::kSelect: return 3;
    case OpKind::kMatMul: case OpKind::kDotGeneral: case OpKind::kTake: return 2;
    case OpKind::kConcatenate: return -1;
    default: return 1;
  }
}

TensorType InferType(dim::Scope* scope, OpKind op, Attrs* attrs, const std::vector<TensorType>& operands,
                     InferMode mode) {
  if (!IsValidOpKind(static_cast<int32_t>(op))) {
    throw Error(Code::kInvalidArgument, "unknown operation " + std::to_string(static_cast<int32_t>(op)));
  }
  try {
    return Inferrer(scope, op, attrs, operands, mode).Run();
  } catch (const Error& e) {
    // Errors of the dimension engine (division by zero, overflow, ...) get the op's name.
    std::string prefix = std::string(OpName(op)) + ": ";
    if (e.message().compare(0, prefix.size(), prefix) == 0) throw;
    throw Error(e.code(), prefix + e.message());
  }
}

}  // namespace trace
}  // namespace shp
