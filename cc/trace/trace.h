// Tracing: tensors with symbolic shapes, recorded in a Trace that belongs to one
// dimension scope.
//
// A Trace owns every tensor traced in it (they live as long as the Trace) and refers to,
// but does not own, the dim::Scope whose expressions give the tensors' shapes. The C API
// keeps both in its scope object, so that tensors, like dims, are owned by the scope.
// Errors are thrown as shp::Error; a failed operation leaves the trace unchanged (except
// for assertions it had recorded in the scope, which stay valid facts).
// A Trace is used by one thread at a time.
#ifndef SHAPEPOLY_CC_TRACE_TRACE_H_
#define SHAPEPOLY_CC_TRACE_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cc/dim/scope.h"
#include "cc/ir/dtype.h"
#include "cc/trace/ops.h"
#include "cc/ir/tensor_type.h"

namespace shp {
namespace trace {

// How a tensor came to be.
enum class Source : int32_t {
  kInput = 0,     // a named data input
  kDimInput = 1,  // a named scalar i64 input that gives the value of a dimension variable
  kOp = 2,        // the result of an operation (constants included: OpKind::kConstant)
};

// What an input is for. Values of shapepoly.fb.InputRole and shp_input_role_t: append only.
enum class InputRole : int32_t {
  kData = 0,       // a tensor whose shape determines dimension variables
  kDim = 1,        // a scalar i64 that gives the value of one dimension variable
  kParameter = 2,  // a tensor with a concrete shape and a default value (weights)
  kTangent = 3,    // made by jvp: the tangent of an input
  kCotangent = 4,  // made by vjp and grad: the cotangent of an output
};

// Names with this character are reserved for the names transformations derive ("x.tangent",
// "y.cotangent", "x.grad"); inputs and outputs that users name cannot have it.
constexpr char kDerivedNameMark = '.';

// Why `name` cannot name an input or output ("" if it can): it must be valid UTF-8 without
// control characters (so that every message that quotes a name stays readable UTF-8). The
// tracer and the loader apply the same rule.
std::string NameProblem(const std::string& name);

// Why `v` cannot be the fill default of an input of `dtype` ("" if it can): converted to the
// dtype it must be finite (floating-point types: |v| at most the largest finite value) or exact
// (integer types: an integer in the type's range; bool: 0 or 1). The tracer and the loader
// apply the same rule.
std::string FillProblem(DType dtype, double v);
// `v` in the shortest form that reads back exactly ("1", "0.1", "-2.5e-07").
std::string FillText(double v);

class Trace;

struct Tensor {
  Trace* owner = nullptr;  // the trace that owns this tensor
  int32_t id = 0;          // index in its trace, in creation order (operands have smaller ids)
  TensorType type;
  Source source = Source::kOp;
  std::string name;                   // inputs: the input's name
  int32_t dim_var = -1;               // kDimInput: the variable's index in the scope
  InputRole role = InputRole::kData;  // kInput: kData, kParameter, kTangent or kCotangent
  int32_t default_buffer = -1;        // kInput with a default value: its bytes, buffer(i)
  // kInput with a fill default (DerivedInput with `fill`): every element of the shape a run
  // takes is `fill` (shp_program_jvp_with_default_tangents). Never with default_buffer.
  bool has_fill = false;
  double fill = 0;
  OpKind op = OpKind::kConstant;  // kOp only
  Attrs attrs;                    // kOp only: the alternative of Def(op) (cc/ops/op_def.h)
  std::vector<const Tensor*> operands;
};

class Trace {
 public:
  explicit Trace(dim::Scope* dims);
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  dim::Scope* dims() const { return dims_; }

  // A named data input. `shape` must hold expressions of this trace's scope.
  const Tensor* Input(const std::string& name, DType dtype,
                      const std::vector<const dim::Expr*>& shape);
  // A named data input with a shape spec in the dim-engine syntax ("batch, 784").
  const Tensor* Input(const std::string& name, DType dtype, const std::string& shape_spec);
  // A named scalar i64 input whose value is the dimension variable `var_name` (created in
  // the scope if needed). Programs take the variable's value from it instead of solving
  // it from input shapes.
  const Tensor* DimInput(const std::string& var_name);
  // A named parameter: an input with a concrete shape and a default value (copies `nbytes`
  // bytes, exactly product(shape) * DTypeSize(dtype)), which a run uses when the input is not
  // given by name.
  const Tensor* Parameter(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                          const void* data, size_t nbytes);
  // An input made by a transformation (role kTangent or kCotangent, or any role when a
  // program is replayed): the name may contain kDerivedNameMark. `default_data` is nullptr or
  // the default value (`nbytes` bytes; then every dimension of `shape` must be constant).
  // `fill` is nullptr or a fill default: the value of every element, whatever the shape (then
  // default_data must be nullptr; FillProblem must accept the value).
  const Tensor* DerivedInput(const std::string& name, InputRole role, DType dtype,
                             const std::vector<const dim::Expr*>& shape,
                             const void* default_data = nullptr, size_t nbytes = 0,
                             const double* fill = nullptr);
  // A constant with a concrete shape; copies `nbytes` bytes, which must be exactly
  // product(shape) * DTypeSize(dtype).
  const Tensor* Constant(DType dtype, const std::vector<int64_t>& shape, const void* data,
                         size_t nbytes);

  // ---- Operations (shape rules and errors: see infer.h) ----
  // The general form: infers the result type, then records the tensor. Attributes are
  // normalized (see InferType).
  const Tensor* Apply(OpKind op, Attrs attrs, const std::vector<const Tensor*>& operands);

  const Tensor* Unary(OpKind op, const Tensor* x);                    // IsUnary(op)
  const Tensor* Binary(OpKind op, const Tensor* a, const Tensor* b);  // IsBinary or IsCompare
  const Tensor* Select(const Tensor* pred, const Tensor* on_true, const Tensor* on_false);
  const Tensor* Convert(const Tensor* x, DType dtype);
  const Tensor* BroadcastTo(const Tensor* x, const std::vector<const dim::Expr*>& shape);
  // One entry of `shape` may be nullptr: that dimension is inferred (with a shape
  // assertion when its divisibility is not provable).
  const Tensor* Reshape(const Tensor* x, const std::vector<const dim::Expr*>& shape);
  const Tensor* Transpose(const Tensor* x, const std::vector<int64_t>& permutation);
  const Tensor* Concatenate(const std::vector<const Tensor*>& xs, int64_t axis);
  // Symbolic start and limit (nullptr entries: 0 and the dimension), constant strides >= 1
  // (an empty vector: all 1).
  const Tensor* Slice(const Tensor* x, const std::vector<const dim::Expr*>& start,
                      const std::vector<const dim::Expr*>& limit,
                      const std::vector<int64_t>& strides);
  // Padding >= 0 before (low) and after (high) each axis, filled with `value`.
  const Tensor* Pad(const Tensor* x, const std::vector<const dim::Expr*>& low,
                    const std::vector<const dim::Expr*>& high, double value);
  // IsReduce(op). Empty `axes`: every axis.
  const Tensor* Reduce(OpKind op, const Tensor* x, const std::vector<int64_t>& axes, bool keepdims);
  const Tensor* MatMul(const Tensor* a, const Tensor* b);
  const Tensor* DotGeneral(const Tensor* a, const Tensor* b, const DotDims& dims);
  const Tensor* Iota(DType dtype, const std::vector<const dim::Expr*>& shape, int64_t axis);
  const Tensor* Softmax(const Tensor* x, int64_t axis);
  const Tensor* LayerNorm(const Tensor* x, int64_t axis, double epsilon);
  const Tensor* CumSum(const Tensor* x, int64_t axis);
  // np.take(x, indices, axis): x.shape[:axis] + indices.shape + x.shape[axis+1:].
  const Tensor* Take(const Tensor* x, const Tensor* indices, int64_t axis);
  // The value of `d` as a scalar i64 tensor.
  const Tensor* DimValue(const dim::Expr* d);
  // Data-dependent sizes (cc/ops/data_dependent.cc): each makes a new unbacked variable.
  // np.argwhere(x): i64 [u, rank(x)], 0 <= u <= numel(x).
  const Tensor* Nonzero(const Tensor* x);
  // x[mask] with the mask over axes axis..axis+rank(mask)-1: those axes become one axis u.
  const Tensor* BooleanMask(const Tensor* x, const Tensor* mask, int64_t axis);
  // The unbacked variable `name` ("" : u0, u1, ...) in [min, max] whose value is the scalar
  // i64 `value`, computed by the program.
  const dim::Expr* SizeFromValue(const Tensor* value, const std::string& name, int64_t min,
                                 int64_t max);

  // Control flow (control_flow.cc): records every result of `op` (cond, while_loop, scan) on
  // `operands`, one node per result, consecutively; returns them in order (attrs.result is
  // ignored).
  std::vector<const Tensor*> ControlFlow(OpKind op, const ops::ControlFlowAttrs& attrs,
                                         const std::vector<const Tensor*>& operands);

  // Every tensor, in creation order.
  const std::deque<Tensor>& tensors() const { return tensors_; }
  // The bytes of constant buffer `i` (ops::ConstantAttrs::buffer of a kConstant tensor).
  const std::string& buffer(int32_t i) const { return buffers_[static_cast<size_t>(i)]; }
  // Whether `t` is a tensor of this trace (tensors of other traces are rejected by every op).
  bool Owns(const Tensor* t) const;
  // Throws kInvalidArgument / kScopeMismatch unless `t` is a tensor of this trace.
  void CheckOwned(const Tensor* t, const char* what) const;

 private:
  // Narrow element types (cc/trace/narrow.cc): true if `op` on these operands is computed in the
  // compute type; ApplyNarrow records the conversions around the op.
  static bool NeedsNarrowLowering(OpKind op, const Attrs& attrs,
                                  const std::vector<const Tensor*>& operands);
  const Tensor* ApplyNarrow(OpKind op, Attrs attrs, const std::vector<const Tensor*>& operands);

  Tensor* NewTensor();
  Tensor* NewInput(const std::string& name, DType dtype,
                   const std::vector<const dim::Expr*>& shape);
  // Copies concrete bytes after checking them against dtype and shape (`what` names the caller
  // in messages); returns the buffer index.
  int32_t AddBuffer(const char* what, DType dtype, const std::vector<int64_t>& shape,
                    const void* data, size_t nbytes);
  void CheckShape(const std::vector<const dim::Expr*>& shape, const char* what) const;

  dim::Scope* dims_;
  std::deque<Tensor> tensors_;
  std::deque<std::string> buffers_;
};

// Creates the trace of `dims` (used by the C API, which keeps it next to the scope).
std::unique_ptr<Trace> NewTrace(dim::Scope* dims);

// The body of a control-flow op traced in `t` by a function (control_flow.cc): a trace of its
// own (on t's scope) with what `outputs` compute from `inputs` (data inputs of t made at or
// after `mark`, the number of tensors t had when the function began). Tensors older than the
// mark that the outputs use are captures: each becomes an input of the body ("capture0", ...)
// after `inputs`, and the op takes the captured tensor as an operand. Constants are copied. A
// variable the body's shapes use that no input's shape determines becomes a dimension input,
// captured as a dim_value tensor of t (an existing one when t has one).
// A data-dependent size the body computes (nonzero, ...) stays the body's own: its runtime
// reads it per run. Throws kInvalidArgument for an input of t that the body uses but was not
// given.
struct Body {
  std::unique_ptr<Trace> trace;
  std::vector<const Tensor*> inputs;    // of *trace: `inputs`, then one per capture
  std::vector<const Tensor*> outputs;   // of *trace
  std::vector<const Tensor*> captures;  // of t: the operands the capture inputs take
};
// `given_captures` (tensors older than the mark) are the first captures, in order, used or not
// (so that two branches can take the same operands).
Body CutBody(Trace& t, size_t mark, const std::vector<const Tensor*>& inputs,
             const std::vector<const Tensor*>& outputs,
             const std::vector<const Tensor*>& given_captures = {});

}  // namespace trace
}  // namespace shp

#endif  // SHAPEPOLY_CC_TRACE_TRACE_H_
