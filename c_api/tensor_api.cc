// C API of tracing: thin thunks over cc/trace.
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/ops/op_list.h"
#include "cc/trace/trace.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
using shp::capi::BuildTensor;
using shp::capi::Ints;
using shp::capi::TensorArg;
using shp::capi::TraceOf;
using shp::capi::Unwrap;
using shp::capi::Wrap;
namespace dim = shp::dim;
namespace trace = shp::trace;
namespace ops = shp::ops;

namespace {

trace::DType ToDType(const shp_dtype_t& d) {
  int32_t raw = shp::capi::RawEnum(d);
  if (!trace::IsValidDType(raw)) {
    throw Error(Code::kInvalidArgument,
                "argument 'dtype' is not a shp_dtype_t value: " + std::to_string(raw));
  }
  return static_cast<trace::DType>(raw);
}

// The trace that records a tensor.
trace::Trace* TraceOfTensor(const trace::Tensor* t) { return t->owner; }

std::vector<const dim::Expr*> Dims(const shp_dim_t* const* dims, size_t rank, const char* name,
                                   bool allow_null) {
  if (rank > 0) SHP_REQUIRE_ARG(dims, name);
  std::vector<const dim::Expr*> out;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] == nullptr && !allow_null) {
      throw Error(Code::kInvalidArgument,
                  std::string(name) + "[" + std::to_string(i) + "] is NULL");
    }
    out.push_back(dims[i] ? Unwrap(dims[i]) : nullptr);
  }
  return out;
}

// The C enums of the elementwise and reduction families name the rows of cc/ops/op_list.h
// (SHP_<C_NAME>); a row without its C value is a build error here.
#define SHP_C_OP_CASE(Name, FB, code, text, C, ...) \
  case SHP_##C:                                     \
    return trace::OpKind::k##Name;
#define SHP_C_CMP_CASE(Name, FB, code, text, C, ...) \
  case SHP_CMP_##C:                                  \
    return trace::OpKind::k##Name;

trace::OpKind UnaryKind(int32_t raw) {
  switch (raw) { SHP_UNARY_OPS(SHP_C_OP_CASE) }
  throw Error(Code::kInvalidArgument,
              "argument 'op' is not a shp_unary_op_t value: " + std::to_string(raw));
}

trace::OpKind BinaryKind(int32_t raw) {
  switch (raw) { SHP_BINARY_OPS(SHP_C_OP_CASE) }
  throw Error(Code::kInvalidArgument,
              "argument 'op' is not a shp_binary_op_t value: " + std::to_string(raw));
}

trace::OpKind CompareKind(int32_t raw) {
  switch (raw) { SHP_COMPARE_OPS(SHP_C_CMP_CASE) }
  throw Error(Code::kInvalidArgument,
              "argument 'op' is not a shp_cmp_t value: " + std::to_string(raw));
}

trace::OpKind ReduceKind(int32_t raw) {
  switch (raw) { SHP_REDUCE_OPS(SHP_C_OP_CASE) }
  throw Error(Code::kInvalidArgument,
              "argument 'op' is not a shp_reduce_op_t value: " + std::to_string(raw));
}

#undef SHP_C_OP_CASE
#undef SHP_C_CMP_CASE

}  // namespace

extern "C" {

shp_error_t* shp_tensor_input(shp_scope_t* scope, const char* name, shp_dtype_t dtype,
                              const char* shape_spec, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    SHP_REQUIRE_ARG(scope, "scope");
    SHP_REQUIRE_ARG(name, "name");
    SHP_REQUIRE_ARG(shape_spec, "shape_spec");
    return TraceOf(scope)->Input(name, ToDType(dtype), std::string(shape_spec));
  });
}

shp_error_t* shp_tensor_input_dims(shp_scope_t* scope, const char* name, shp_dtype_t dtype,
                                   const shp_dim_t* const* dims, size_t rank,
                                   const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    SHP_REQUIRE_ARG(scope, "scope");
    SHP_REQUIRE_ARG(name, "name");
    return TraceOf(scope)->Input(name, ToDType(dtype), Dims(dims, rank, "dims", false));
  });
}

shp_error_t* shp_tensor_dim_input(shp_scope_t* scope, const char* var_name,
                                  const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    SHP_REQUIRE_ARG(scope, "scope");
    SHP_REQUIRE_ARG(var_name, "var_name");
    return TraceOf(scope)->DimInput(var_name);
  });
}

shp_error_t* shp_tensor_constant(shp_scope_t* scope, shp_dtype_t dtype, const int64_t* shape,
                                 size_t rank, const void* data, size_t nbytes,
                                 const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    SHP_REQUIRE_ARG(scope, "scope");
    return TraceOf(scope)->Constant(ToDType(dtype), Ints(shape, rank, "shape"), data, nbytes);
  });
}

shp_error_t* shp_tensor_unary(shp_unary_op_t op, const shp_tensor_t* x,
                              const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::OpKind kind = UnaryKind(shp::capi::RawEnum(op));
    const trace::Tensor* t = TensorArg(x, "x");
    return TraceOfTensor(t)->Unary(kind, t);
  });
}

shp_error_t* shp_tensor_binary(shp_binary_op_t op, const shp_tensor_t* a, const shp_tensor_t* b,
                               const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::OpKind kind = BinaryKind(shp::capi::RawEnum(op));
    const trace::Tensor* x = TensorArg(a, "a");
    return TraceOfTensor(x)->Binary(kind, x, TensorArg(b, "b"));
  });
}

shp_error_t* shp_tensor_compare(const shp_tensor_t* a, shp_cmp_t op, const shp_tensor_t* b,
                                const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::OpKind kind = CompareKind(shp::capi::RawEnum(op));
    const trace::Tensor* x = TensorArg(a, "a");
    return TraceOfTensor(x)->Binary(kind, x, TensorArg(b, "b"));
  });
}

shp_error_t* shp_tensor_select(const shp_tensor_t* pred, const shp_tensor_t* on_true,
                               const shp_tensor_t* on_false, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* p = TensorArg(pred, "pred");
    return TraceOfTensor(p)->Select(p, TensorArg(on_true, "on_true"),
                                    TensorArg(on_false, "on_false"));
  });
}

shp_error_t* shp_tensor_convert(const shp_tensor_t* x, shp_dtype_t dtype,
                                const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* t = TensorArg(x, "x");
    return TraceOfTensor(t)->Convert(t, ToDType(dtype));
  });
}

shp_error_t* shp_tensor_broadcast_to(const shp_tensor_t* x, const shp_dim_t* const* dims,
                                     size_t rank, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* t = TensorArg(x, "x");
    return TraceOfTensor(t)->BroadcastTo(t, Dims(dims, rank, "dims", false));
  });
}

shp_error_t* shp_tensor_reshape(const shp_tensor_t* x, const shp_dim_t* const* dims, size_t rank,
                                const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* t = TensorArg(x, "x");
    return TraceOfTensor(t)->Reshape(t, Dims(dims, rank, "dims", true));
  });
}

shp_error_t* shp_tensor_transpose(const shp_tensor_t* x, const int64_t* permutation, size_t rank,
                                  const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* t = TensorArg(x, "x");
    return TraceOfTensor(t)->Transpose(t, Ints(permutation, rank, "permutation"));
  });
}

shp_error_t* shp_tensor_concatenate(const shp_tensor_t* const* xs, size_t n, int64_t axis,
                                    const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    if (n == 0) throw Error(Code::kInvalidArgument, "concatenate: needs at least one tensor");
    SHP_REQUIRE_ARG(xs, "xs");
    std::vector<const trace::Tensor*> ts;
    for (size_t i = 0; i < n; ++i) ts.push_back(TensorArg(xs[i], "xs[i]"));
    return TraceOfTensor(ts[0])->Concatenate(ts, axis);
  });
}

shp_error_t* shp_tensor_slice(const shp_tensor_t* x, const shp_dim_t* const* start,
                              const shp_dim_t* const* limit, const int64_t* strides, size_t rank,
                              const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* t = TensorArg(x, "x");
    if (rank != t->type.shape.size()) {
      throw Error(Code::kInvalidArgument, "slice: rank " + std::to_string(rank) +
                                              " given for an operand of rank " +
                                              std::to_string(t->type.shape.size()));
    }
    std::vector<const dim::Expr*> st =
        start ? Dims(start, rank, "start", true) : std::vector<const dim::Expr*>();
    std::vector<const dim::Expr*> li =
        limit ? Dims(limit, rank, "limit", true) : std::vector<const dim::Expr*>();
    std::vector<int64_t> sr = strides ? Ints(strides, rank, "strides") : std::vector<int64_t>();
    return TraceOfTensor(t)->Slice(t, st, li, sr);
  });
}

shp_error_t* shp_tensor_pad(const shp_tensor_t* x, const shp_dim_t* const* low,
                            const shp_dim_t* const* high, size_t rank, double value,
                            const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* t = TensorArg(x, "x");
    return TraceOfTensor(t)->Pad(t, Dims(low, rank, "low", false), Dims(high, rank, "high", false),
                                 value);
  });
}

shp_error_t* shp_tensor_reduce(shp_reduce_op_t op, const shp_tensor_t* x, const int64_t* axes,
                               size_t num_axes, bool keepdims, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::OpKind kind = ReduceKind(shp::capi::RawEnum(op));
    const trace::Tensor* t = TensorArg(x, "x");
    return TraceOfTensor(t)->Reduce(kind, t, Ints(axes, num_axes, "axes"), keepdims);
  });
}

shp_error_t* shp_tensor_dot_general(const shp_tensor_t* a, const shp_tensor_t* b,
                                    const int64_t* lhs_batch, const int64_t* rhs_batch,
                                    size_t num_batch, const int64_t* lhs_contracting,
                                    const int64_t* rhs_contracting, size_t num_contracting,
                                    const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    const trace::Tensor* x = TensorArg(a, "a");
    trace::DotDims d{Ints(lhs_batch, num_batch, "lhs_batch"),
                     Ints(rhs_batch, num_batch, "rhs_batch"),
                     Ints(lhs_contracting, num_contracting, "lhs_contracting"),
                     Ints(rhs_contracting, num_contracting, "rhs_contracting")};
    return TraceOfTensor(x)->DotGeneral(x, TensorArg(b, "b"), d);
  });
}

shp_error_t* shp_tensor_iota(shp_scope_t* scope, shp_dtype_t dtype, const shp_dim_t* const* dims,
                             size_t rank, int64_t axis, const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    SHP_REQUIRE_ARG(scope, "scope");
    return TraceOf(scope)->Iota(ToDType(dtype), Dims(dims, rank, "dims", false), axis);
  });
}

shp_error_t* shp_tensor_dim_value(shp_scope_t* scope, const shp_dim_t* d,
                                  const shp_tensor_t** tensor_out) {
  return BuildTensor(tensor_out, [&] {
    SHP_REQUIRE_ARG(scope, "scope");
    SHP_REQUIRE_ARG(d, "dim");
    return TraceOf(scope)->DimValue(Unwrap(d));
  });
}

shp_error_t* shp_tensor_top_k(const shp_tensor_t* x, const shp_dim_t* k, int64_t axis, bool largest,
                              bool sorted, const shp_tensor_t** values_out,
                              const shp_tensor_t** indices_out) {
  SHP_API_BEGIN
  const trace::Tensor* t = TensorArg(x, "x");
  SHP_REQUIRE_ARG(k, "k");
  SHP_REQUIRE_ARG(values_out, "values_out");
  SHP_REQUIRE_ARG(indices_out, "indices_out");
  ops::TopKAttrs attrs;
  attrs.k = Unwrap(k);
  attrs.axis = axis;
  attrs.largest = largest;
  attrs.sorted = sorted;
  // Both before either output is written: a failure leaves the outputs untouched.
  const trace::Tensor* values = t->owner->Apply(trace::OpKind::kTopKValues, attrs, {t});
  const trace::Tensor* indices = t->owner->Apply(trace::OpKind::kTopKIndices, attrs, {t});
  *values_out = Wrap(values);
  *indices_out = Wrap(indices);
  return nullptr;
  SHP_API_END
}

shp_dtype_t shp_tensor_dtype(const shp_tensor_t* tensor) {
  if (tensor == nullptr) return static_cast<shp_dtype_t>(-1);
  return static_cast<shp_dtype_t>(Unwrap(tensor)->type.dtype);
}

shp_error_t* shp_tensor_shape(const shp_tensor_t* tensor, const shp_dim_t** dims_out, size_t cap,
                              size_t* rank_out) {
  SHP_API_BEGIN
  const trace::Tensor* t = TensorArg(tensor, "tensor");
  SHP_REQUIRE_ARG(rank_out, "rank_out");
  if (cap > 0) SHP_REQUIRE_ARG(dims_out, "dims_out");
  const std::vector<const dim::Expr*>& sh = t->type.shape;
  for (size_t i = 0; i < sh.size() && i < cap; ++i) dims_out[i] = Wrap(sh[i]);
  *rank_out = sh.size();
  return nullptr;
  SHP_API_END
}

}  // extern "C"
