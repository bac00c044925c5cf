#include "cc/trace/trace.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "cc/base/error.h"
#include "cc/dim/parse.h"
#include "cc/ops/limits.h"
#include "cc/ops/op_def.h"

namespace shp {
namespace trace {

Trace::Trace(dim::Scope* dims) : dims_(dims) {
  if (dims == nullptr) throw Error(Code::kInvalidArgument, "a trace needs a dimension scope");
}

std::unique_ptr<Trace> NewTrace(dim::Scope* dims) {
  return std::unique_ptr<Trace>(new Trace(dims));
}

bool Trace::Owns(const Tensor* t) const {
  if (t == nullptr || t->id < 0 || static_cast<size_t>(t->id) >= tensors_.size()) return false;
  return &tensors_[static_cast<size_t>(t->id)] == t;
}

void Trace::CheckOwned(const Tensor* t, const char* what) const {
  if (t == nullptr)
    throw Error(Code::kInvalidArgument, std::string(what) + ": a tensor argument is NULL");
  if (!Owns(t)) {
    throw Error(Code::kScopeMismatch,
                std::string(what) +
                    ": a tensor argument belongs to another scope (tensors of different scopes "
                    "cannot be combined)");
  }
}

Tensor* Trace::NewTensor() {
  tensors_.emplace_back();
  Tensor* t = &tensors_.back();
  t->owner = this;
  t->id = static_cast<int32_t>(tensors_.size() - 1);
  return t;
}

void Trace::CheckShape(const std::vector<const dim::Expr*>& shape, const char* what) const {
  if (shape.size() > ops::kMaxRank) {
    throw Error(Code::kInvalidArgument,
                std::string(what) + ": rank " + std::to_string(shape.size()) +
                    " is above the limit of " + std::to_string(ops::kMaxRank) + " axes");
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const dim::Expr* d = shape[i];
    if (d == nullptr) {
      throw Error(Code::kInvalidArgument,
                  std::string(what) + ": dimension " + std::to_string(i) + " is NULL");
    }
    if (d->scope != dims_) dims_->CheckSameScope(d, d, what);
  }
}

std::string FillText(double v) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v || std::isnan(v)) break;
  }
  return text;
}

std::string FillProblem(DType dtype, double v) {
  const std::string is = "is " + FillText(v) + ", which ";
  double lo = 0, hi = 0;  // integer types: the range, as exact doubles (hi excluded for 64 bits)
  bool hi_open = false;
  switch (dtype) {
    case DType::kF32:
    case DType::kF64:
    case DType::kF16:
    case DType::kBF16: {
      const double max = dtype == DType::kF64    ? 1.7976931348623157e308
                         : dtype == DType::kF32  ? 3.4028234663852886e38
                         : dtype == DType::kBF16 ? 3.3895313892515355e38
                                                 : 65504.0;
      if (!std::isfinite(v) || std::fabs(v) > max)
        return is + "is not a finite " + DTypeName(dtype) + " value";
      return "";
    }
    case DType::kBool:
      if (v != 0 && v != 1) return is + "is not a bool value (0 or 1)";
      return "";
    case DType::kI8:
      lo = -128, hi = 127;
      break;
    case DType::kU8:
      lo = 0, hi = 255;
      break;
    case DType::kI16:
      lo = -32768, hi = 32767;
      break;
    case DType::kU16:
      lo = 0, hi = 65535;
      break;
    case DType::kI32:
      lo = -2147483648.0, hi = 2147483647.0;
      break;
    case DType::kU32:
      lo = 0, hi = 4294967295.0;
      break;
    case DType::kI64:
      lo = -9223372036854775808.0, hi = 9223372036854775808.0, hi_open = true;
      break;
    case DType::kU64:
      lo = 0, hi = 18446744073709551616.0, hi_open = true;
      break;
  }
  if (!std::isfinite(v) || v != std::trunc(v) || v < lo || v > hi || (hi_open && v == hi))
    return is + "is not exactly a " + DTypeName(dtype) + " value";
  return "";
}

std::string NameProblem(const std::string& name) {
  for (size_t i = 0; i < name.size();) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const size_t n = dim::PrintableCharLength(name, i);
    // C1 controls (U+0080..U+009F) are valid UTF-8 but no more printable than C0 ones.
    const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(name[i + 1]) < 0xa0;
    if (c < 0x20 || c == 0x7f || c1) {
      return "contains the control character " +
             std::to_string(c1 ? static_cast<unsigned char>(name[i + 1]) : c) + " at byte " +
             std::to_string(i);
    }
    if (n == 0) return "is not valid UTF-8 (at byte " + std::to_string(i) + ")";
    i += n;
  }
  return "";
}

// A name users give to an input: not empty, printable UTF-8, without the mark of derived
// names.
static void CheckName(const std::string& name, const char* what) {
  if (name.empty())
    throw Error(Code::kInvalidArgument, std::string(what) + ": the name must not be empty");
  const std::string problem = NameProblem(name);
  if (!problem.empty()) {
    throw Error(Code::kInvalidArgument,
                std::string(what) + " name " + dim::QuoteForMessage(name) + " " + problem);
  }
  if (name.find(kDerivedNameMark) != std::string::npos) {
    throw Error(Code::kInvalidArgument,
                std::string(what) + " '" + name + "': names with '" + kDerivedNameMark +
                    "' are reserved for the names transformations derive (x.tangent, "
                    "y.cotangent, x.grad)");
  }
}

Tensor* Trace::NewInput(const std::string& name, DType dtype,
                        const std::vector<const dim::Expr*>& shape) {
  if (!IsValidDType(static_cast<int32_t>(dtype))) {
    throw Error(Code::kInvalidArgument, "input '" + name + "': invalid dtype " +
                                            std::to_string(static_cast<int32_t>(dtype)));
  }
  CheckShape(shape, "input");
  // Every dimension of an input is a size: it must be able to be >= 0.
  for (size_t i = 0; i < shape.size(); ++i) {
    if (dims_->Compare(shape[i], dim::Cmp::kGe, dims_->Constant(0)) == dim::Truth::kFalse) {
      throw Error(Code::kShapeMismatch, "input '" + name + "': dimension " + std::to_string(i) +
                                            " (" + dims_->ToString(shape[i]) +
                                            ") is negative under the constraints " +
                                            dims_->ConstraintsToString());
    }
  }
  Tensor* t = NewTensor();
  t->type.dtype = dtype;
  t->type.shape = shape;
  t->source = Source::kInput;
  t->name = name;
  return t;
}

const Tensor* Trace::Input(const std::string& name, DType dtype,
                           const std::vector<const dim::Expr*>& shape) {
  CheckName(name, "input");
  return NewInput(name, dtype, shape);
}

const Tensor* Trace::Input(const std::string& name, DType dtype, const std::string& shape_spec) {
  CheckName(name, "input");  // before parsing: a bad name is reported first
  return NewInput(name, dtype, dims_->ParseShape(shape_spec, nullptr));
}

const Tensor* Trace::Parameter(const std::string& name, DType dtype,
                               const std::vector<int64_t>& shape, const void* data, size_t nbytes) {
  CheckName(name, "parameter");
  const std::string what = "parameter '" + name + "'";
  int32_t buffer = AddBuffer(what.c_str(), dtype, shape, data, nbytes);
  std::vector<const dim::Expr*> dims;
  for (int64_t d : shape) dims.push_back(dims_->Constant(d));
  Tensor* t = NewInput(name, dtype, dims);
  t->role = InputRole::kParameter;
  t->default_buffer = buffer;
  return t;
}

const Tensor* Trace::DerivedInput(const std::string& name, InputRole role, DType dtype,
                                  const std::vector<const dim::Expr*>& shape,
                                  const void* default_data, size_t nbytes, const double* fill) {
  if (name.empty()) throw Error(Code::kInvalidArgument, "input: the name must not be empty");
  const std::string problem = NameProblem(name);
  if (!problem.empty()) {
    throw Error(Code::kInvalidArgument, "input name " + dim::QuoteForMessage(name) + " " + problem);
  }
  if (role == InputRole::kDim) {
    throw Error(Code::kInvalidArgument, "input '" + name + "': use DimInput for dimension inputs");
  }
  int32_t buffer = -1;
  if (default_data != nullptr) {
    const std::string what = "the default of input '" + name + "'";
    std::vector<int64_t> concrete;
    for (const dim::Expr* d : shape) {
      if (d == nullptr || !d->IsConstant())
        throw Error(Code::kInvalidArgument, what + ": the input's shape must be constant");
      concrete.push_back(d->ConstantTerm());
    }
    buffer = AddBuffer(what.c_str(), dtype, concrete, default_data, nbytes);
  }
  if (fill != nullptr) {
    if (default_data != nullptr) {
      throw Error(Code::kInvalidArgument,
                  "input '" + name + "': a default value and a fill default at once");
    }
    const std::string problem = FillProblem(dtype, *fill);
    if (!problem.empty())
      throw Error(Code::kInvalidArgument, "the fill default of input '" + name + "' " + problem);
  }
  Tensor* t = NewInput(name, dtype, shape);
  t->role = role;
  t->default_buffer = buffer;
  if (fill != nullptr) {
    t->has_fill = true;
    t->fill = *fill + 0.0;  // -0 as 0: the format stores 0 as the field's default
  }
  return t;
}

const Tensor* Trace::DimInput(const std::string& var_name) {
  CheckName(var_name, "dimension input");
  const dim::Expr* v = dims_->Var(var_name);
  Tensor* t = NewTensor();
  t->type.dtype = DType::kI64;
  t->source = Source::kDimInput;
  t->role = InputRole::kDim;
  t->name = var_name;
  t->dim_var = v->AsVar();
  return t;
}

int32_t Trace::AddBuffer(const char* what, DType dtype, const std::vector<int64_t>& shape,
                         const void* data, size_t nbytes) {
  const std::string w = what;
  if (!IsValidDType(static_cast<int32_t>(dtype))) {
    throw Error(Code::kInvalidArgument,
                w + ": invalid dtype " + std::to_string(static_cast<int32_t>(dtype)));
  }
  if (shape.size() > ops::kMaxRank) {
    throw Error(Code::kInvalidArgument, w + ": rank " + std::to_string(shape.size()) +
                                            " is above the limit of " +
                                            std::to_string(ops::kMaxRank) + " axes");
  }
  uint64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw Error(Code::kInvalidArgument, w + ": dimension " + std::to_string(i) +
                                              " is negative (" + std::to_string(shape[i]) + ")");
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(shape[i]), &count)) {
      throw Error(Code::kOverflow, w + ": the number of elements overflows");
    }
  }
  uint64_t want;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(DTypeSize(dtype)), &want)) {
    throw Error(Code::kOverflow, w + ": the size in bytes overflows");
  }
  if (want != nbytes) {
    throw Error(Code::kInvalidArgument, w + ": " + std::to_string(nbytes) + " bytes given but a " +
                                            DTypeName(dtype) + " tensor of " +
                                            std::to_string(count) + " elements needs " +
                                            std::to_string(want));
  }
  if (want > ops::kMaxConstantBytes) {
    throw Error(Code::kInvalidArgument,
                w + ": " + std::to_string(want) + " bytes is above the limit of " +
                    std::to_string(ops::kMaxConstantBytes) + " bytes per constant");
  }
  if (nbytes > 0 && data == nullptr)
    throw Error(Code::kInvalidArgument, w + ": the data pointer is NULL");
  if (dtype == DType::kBool) {  // one byte each, 0 or 1 (what kernels and files assume)
    const uint8_t* b = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < nbytes; ++i) {
      if (b[i] > 1) {
        throw Error(Code::kInvalidArgument, w + ": bool element " + std::to_string(i) + " is " +
                                                std::to_string(b[i]) +
                                                " (bool elements must be 0 or 1)");
      }
    }
  }
  buffers_.emplace_back(nbytes ? std::string(static_cast<const char*>(data), nbytes)
                               : std::string());
  return static_cast<int32_t>(buffers_.size() - 1);
}

const Tensor* Trace::Constant(DType dtype, const std::vector<int64_t>& shape, const void* data,
                              size_t nbytes) {
  int32_t buffer = AddBuffer("constant", dtype, shape, data, nbytes);
  std::vector<const dim::Expr*> dims;
  for (int64_t d : shape) dims.push_back(dims_->Constant(d));
  Tensor* t = NewTensor();
  t->type.dtype = dtype;
  t->type.shape = std::move(dims);
  t->op = OpKind::kConstant;
  t->attrs = ops::ConstantAttrs{buffer};
  return t;
}

const Tensor* Trace::Apply(OpKind op, Attrs attrs, const std::vector<const Tensor*>& operands) {
  const char* name = IsValidOpKind(static_cast<int32_t>(op)) ? OpName(op) : "operation";
  if (op == OpKind::kConstant) throw Error(Code::kInvalidArgument, "constant: use Trace::Constant");
  for (const Tensor* t : operands) CheckOwned(t, name);
  if (NeedsNarrowLowering(op, attrs, operands)) return ApplyNarrow(op, std::move(attrs), operands);
  std::vector<TensorType> types;
  types.reserve(operands.size());
  for (const Tensor* t : operands) types.push_back(t->type);
  // A failing operation leaves no fact behind: its guards and assertions are dropped.
  const size_t facts = dims_->facts().size();
  TensorType result;
  try {
    result = ops::InferType(dims_, op, &attrs, types, ops::InferMode::kTrace);
  } catch (...) {
    dims_->DropFactsAfter(facts);
    throw;
  }
  Tensor* t = NewTensor();
  t->type = std::move(result);
  t->op = op;
  t->attrs = std::move(attrs);
  t->operands = operands;
  return t;
}

const Tensor* Trace::Unary(OpKind op, const Tensor* x) {
  if (!IsUnary(op)) throw Error(Code::kInvalidArgument, "unary: not a unary operation");
  return Apply(op, Attrs(), {x});
}

const Tensor* Trace::Binary(OpKind op, const Tensor* a, const Tensor* b) {
  if (!IsBinary(op) && !IsCompare(op))
    throw Error(Code::kInvalidArgument, "binary: not a binary operation");
  return Apply(op, Attrs(), {a, b});
}

const Tensor* Trace::Select(const Tensor* pred, const Tensor* on_true, const Tensor* on_false) {
  return Apply(OpKind::kSelect, Attrs(), {pred, on_true, on_false});
}

const Tensor* Trace::Convert(const Tensor* x, DType dtype) {
  return Apply(OpKind::kConvert, ops::ConvertAttrs{dtype}, {x});
}

const Tensor* Trace::BroadcastTo(const Tensor* x, const std::vector<const dim::Expr*>& shape) {
  return Apply(OpKind::kBroadcastTo, ops::ShapeAttrs{shape}, {x});
}

const Tensor* Trace::Reshape(const Tensor* x, const std::vector<const dim::Expr*>& shape) {
  return Apply(OpKind::kReshape, ops::ReshapeAttrs{shape, -1}, {x});
}

const Tensor* Trace::Transpose(const Tensor* x, const std::vector<int64_t>& permutation) {
  return Apply(OpKind::kTranspose, ops::TransposeAttrs{permutation}, {x});
}

const Tensor* Trace::Concatenate(const std::vector<const Tensor*>& xs, int64_t axis) {
  return Apply(OpKind::kConcatenate, ops::AxisAttrs{axis}, xs);
}

const Tensor* Trace::Slice(const Tensor* x, const std::vector<const dim::Expr*>& start,
                           const std::vector<const dim::Expr*>& limit,
                           const std::vector<int64_t>& strides) {
  CheckOwned(x, "slice");
  size_t rank = x->type.shape.size();
  auto check = [&](size_t n, const char* what) {
    if (n != rank) {
      throw Error(Code::kInvalidArgument,
                  std::string("slice: ") + what + " has " + std::to_string(n) +
                      " entries but the operand has rank " + std::to_string(rank));
    }
  };
  ops::SliceAttrs a;
  a.start = start.empty() ? std::vector<const dim::Expr*>(rank, nullptr) : start;
  a.limit = limit.empty() ? std::vector<const dim::Expr*>(rank, nullptr) : limit;
  a.strides = strides.empty() ? std::vector<int64_t>(rank, 1) : strides;
  check(a.start.size(), "start");
  check(a.limit.size(), "limit");
  check(a.strides.size(), "strides");
  for (size_t i = 0; i < rank; ++i) {
    if (a.start[i] == nullptr) a.start[i] = dims_->Constant(0);
    if (a.limit[i] == nullptr) a.limit[i] = x->type.shape[i];
  }
  return Apply(OpKind::kSlice, a, {x});
}

const Tensor* Trace::Pad(const Tensor* x, const std::vector<const dim::Expr*>& low,
                         const std::vector<const dim::Expr*>& high, double value) {
  return Apply(OpKind::kPad, ops::PadAttrs{low, high, value}, {x});
}

const Tensor* Trace::Reduce(OpKind op, const Tensor* x, const std::vector<int64_t>& axes,
                            bool keepdims) {
  if (!IsReduce(op)) throw Error(Code::kInvalidArgument, "reduce: not a reduction");
  return Apply(op, ops::ReduceAttrs{axes, keepdims}, {x});
}

const Tensor* Trace::MatMul(const Tensor* a, const Tensor* b) {
  return Apply(OpKind::kMatMul, Attrs(), {a, b});
}

const Tensor* Trace::DotGeneral(const Tensor* a, const Tensor* b, const DotDims& dims) {
  return Apply(OpKind::kDotGeneral, dims, {a, b});
}

const Tensor* Trace::Iota(DType dtype, const std::vector<const dim::Expr*>& shape, int64_t axis) {
  return Apply(OpKind::kIota, ops::IotaAttrs{dtype, shape, axis}, {});
}

const Tensor* Trace::Softmax(const Tensor* x, int64_t axis) {
  return Apply(OpKind::kSoftmax, ops::AxisAttrs{axis}, {x});
}

const Tensor* Trace::LayerNorm(const Tensor* x, int64_t axis, double epsilon) {
  return Apply(OpKind::kLayerNorm, ops::LayerNormAttrs{axis, epsilon}, {x});
}

const Tensor* Trace::CumSum(const Tensor* x, int64_t axis) {
  return Apply(OpKind::kCumSum, ops::AxisAttrs{axis}, {x});
}

const Tensor* Trace::Take(const Tensor* x, const Tensor* indices, int64_t axis) {
  return Apply(OpKind::kTake, ops::AxisAttrs{axis}, {x, indices});
}

const Tensor* Trace::DimValue(const dim::Expr* d) {
  if (d == nullptr) throw Error(Code::kInvalidArgument, "dim_value: the dimension is NULL");
  return Apply(OpKind::kDimValue, ops::DimValueAttrs{d}, {});
}

const Tensor* Trace::Nonzero(const Tensor* x) {
  return Apply(OpKind::kNonzero, ops::UnbackedAttrs{}, {x});
}

const Tensor* Trace::BooleanMask(const Tensor* x, const Tensor* mask, int64_t axis) {
  ops::UnbackedAttrs a;
  a.axis = axis;
  return Apply(OpKind::kBooleanMask, a, {x, mask});
}

const dim::Expr* Trace::SizeFromValue(const Tensor* value, const std::string& name, int64_t min,
                                      int64_t max) {
  ops::UnbackedAttrs a;
  a.name = name;
  a.min = min;
  a.max = max;
  const Tensor* t = Apply(OpKind::kSizeFromValue, a, {value});
  return std::get<ops::UnbackedAttrs>(t->attrs).size;
}

}  // namespace trace
}  // namespace shp
