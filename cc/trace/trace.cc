#include "cc/trace/trace.h"

#include <cstring>
#include <functional>

#include "cc/base/error.h"
#include "cc/dim/parse.h"

namespace shp {
namespace trace {

Trace::Trace(dim::Scope* dims) : dims_(dims) {
  if (dims == nullptr) throw Error(Code::kInvalidArgument, "a trace needs a dimension scope");
}

std::unique_ptr<Trace> NewTrace(dim::Scope* dims) { return std::unique_ptr<Trace>(new Trace(dims)); }

bool Trace::Owns(const Tensor* t) const {
  if (t == nullptr || t->id < 0 || static_cast<size_t>(t->id) >= tensors_.size()) return false;
  return &tensors_[static_cast<size_t>(t->id)] == t;
}

void Trace::CheckOwned(const Tensor* t, const char* what) const {
  if (t == nullptr) throw Error(Code::kInvalidArgument, std::string(what) + ": a tensor argument is NULL");
  if (!Owns(t)) {
    throw Error(Code::kScopeMismatch,
                std::string(what) + ": a tensor argument belongs to another scope (tensors of different scopes "
                                    "cannot be combined)");
  }
}

Tensor* Trace::NewTensor() {
  tensors_.emplace_back();
  Tensor* t = &tensors_.back();
  t->id = static_cast<int32_t>(tensors_.size() - 1);
  return t;
}

void Trace::CheckShape(const std::vector<const dim::Expr*>& shape, const char* what) const {
  for (size_t i = 0; i < shape.size(); ++i) {
    const dim::Expr* d = shape[i];
    if (d == nullptr) {
      throw Error(Code::kInvalidArgument, std::string(what) + ": dimension " + std::to_string(i) + " is NULL");
    }
    if (d->scope != dims_) dims_->CheckSameScope(d, d, what);
  }
}

static void CheckName(const std::string& name, const char* what) {
  if (name.empty()) throw Error(Code::kInvalidArgument, std::string(what) + ": the name must not be empty");
}

const Tensor* Trace::Input(const std::string& name, DType dtype, const std::vector<const dim::Expr*>& shape) {
  CheckName(name, "input");
  if (!IsValidDType(static_cast<int32_t>(dtype))) {
    throw Error(Code::kInvalidArgument, "input '" + name + "': invalid dtype " +
                                            std::to_string(static_cast<int32_t>(dtype)));
  }
  CheckShape(shape, "input");
  // Every dimension of an input is a size: it must be able to be >= 0.
  for (size_t i = 0; i < shape.size(); ++i) {
    if (dims_->Compare(shape[i], dim::Cmp::kGe, dims_->Constant(0)) == dim::Truth::kFalse) {
      throw Error(Code::kShapeMismatch, "input '" + name + "': dimension " + std::to_string(i) + " (" +
                                            dims_->ToString(shape[i]) + ") is negative under the constraints " +
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

const Tensor* Trace::Input(const std::string& name, DType dtype, const std::string& shape_spec) {
  return Input(name, dtype, dims_->ParseShape(shape_spec, nullptr));
}

const Tensor* Trace::DimInput(const std::string& var_name) {
  CheckName(var_name, "dimension input");
  const dim::Expr* v = dims_->Var(var_name);
  Tensor* t = NewTensor();
  t->type.dtype = DType::kI64;
  t->source = Source::kDimInput;
  t->name = var_name;
  t->dim_var = v->AsVar();
  return t;
}

const Tensor* Trace::Constant(DType dtype, const std::vector<int64_t>& shape, const void* data, size_t nbytes) {
  if (!IsValidDType(static_cast<int32_t>(dtype))) {
    throw Error(Code::kInvalidArgument, "constant: invalid dtype " + std::to_string(static_cast<int32_t>(dtype)));
  }
  uint64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw Error(Code::kInvalidArgument, "constant: dimension " + std::to_string(i) + " is negative (" +
                                              std::to_string(shape[i]) + ")");
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(shape[i]), &count)) {
      throw Error(Code::kOverflow, "constant: the number of elements overflows");
    }
  }
  uint64_t want;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(DTypeSize(dtype)), &want)) {
    throw Error(Code::kOverflow, "constant: the size in bytes overflows");
  }
  if (want != nbytes) {
    throw Error(Code::kInvalidArgument, "constant: " + std::to_string(nbytes) + " bytes given but a " +
                                            DTypeName(dtype) + " tensor of " + std::to_string(count) +
                                            " elements needs " + std::to_string(want));
  }
  if (nbytes > 0 && data == nullptr) throw Error(Code::kInvalidArgument, "constant: the data pointer is NULL");
  std::vector<const dim::Expr*> dims;
  for (int64_t d : shape) dims.push_back(dims_->Constant(d));
  buffers_.emplace_back(nbytes ? std::string(static_cast<const char*>(data), nbytes) : std::string());
  Tensor* t = NewTensor();
  t->type.dtype = dtype;
  t->type.shape = std::move(dims);
  t->op = OpKind::kConstant;
  t->attrs.buffer = static_cast<int32_t>(buffers_.size() - 1);
  return t;
}

}  // namespace trace
}  // namespace shp
