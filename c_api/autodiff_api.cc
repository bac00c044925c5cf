// Parameters, input defaults, output roles and the differentiation transformations.
#include <cstring>
#include <string>
#include <vector>

#include "c_api/array_internal.h"
#include "c_api/c_api_internal.h"
#include "cc/autodiff/autodiff.h"
#include "cc/kernels/narrow.h"

using shp::Code;
using shp::Error;
namespace program = shp::program;
namespace trace = shp::trace;
using shp::capi::TraceOf;
using shp::capi::Wrap;

static_assert(SHP_INPUT_PARAMETER == static_cast<int>(program::InputRole::kParameter), "roles");
static_assert(SHP_INPUT_TANGENT == static_cast<int>(program::InputRole::kTangent), "roles");
static_assert(SHP_INPUT_COTANGENT == static_cast<int>(program::InputRole::kCotangent), "roles");
static_assert(SHP_OUTPUT_PRIMAL == static_cast<int>(program::OutputRole::kPrimal), "roles");
static_assert(SHP_OUTPUT_TANGENT == static_cast<int>(program::OutputRole::kTangent), "roles");
static_assert(SHP_OUTPUT_GRAD == static_cast<int>(program::OutputRole::kGrad), "roles");

namespace {

std::vector<std::string> Names(const char* const* v, size_t n, const char* what) {
  if (n > 0) SHP_REQUIRE_ARG(v, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    if (v[i] == nullptr) {
      throw Error(Code::kInvalidArgument,
                  std::string("argument '") + what + "': entry " + std::to_string(i) + " is NULL");
    }
    out.push_back(v[i]);
  }
  return out;
}

const program::Program& P(const shp_program_t* p) {
  SHP_REQUIRE_ARG(p, "program");
  return *p->program;
}

template <typename F>
shp_error_t* Transform(shp_program_t** out, F f) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(out, "program_out");
  std::unique_ptr<shp_program_t> h(new shp_program_t);
  h->program = f();
  *out = h.release();
  return nullptr;
  SHP_API_END
}

}  // namespace

shp_error_t* shp_tensor_parameter(shp_scope_t* scope, const char* name, shp_dtype_t dtype,
                                  const int64_t* shape, size_t rank, const void* data,
                                  size_t nbytes, const shp_tensor_t** tensor_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(name, "name");
  SHP_REQUIRE_ARG(tensor_out, "tensor_out");
  if (rank > 0) SHP_REQUIRE_ARG(shape, "shape");
  const int32_t raw = shp::capi::RawEnum(dtype);
  if (!trace::IsValidDType(raw)) {
    throw Error(Code::kInvalidArgument,
                "argument 'dtype' is not a shp_dtype_t value: " + std::to_string(raw));
  }
  std::vector<int64_t> dims(shape, shape + rank);
  const trace::Tensor* t =
      TraceOf(scope)->Parameter(name, static_cast<trace::DType>(raw), dims, data, nbytes);
  *tensor_out = Wrap(t);
  return nullptr;
  SHP_API_END
}

bool shp_program_input_has_default(const shp_program_t* p, size_t i) {
  return p != nullptr && i < p->program->inputs().size() && p->program->inputs()[i].has_default();
}

namespace {
const program::Input& InputAt(const program::Program& prog, size_t i) {
  if (i >= prog.inputs().size()) {
    throw Error(Code::kInvalidArgument, "input " + std::to_string(i) + " is out of range (" +
                                            std::to_string(prog.inputs().size()) + " inputs)");
  }
  return prog.inputs()[i];
}
}  // namespace

shp_error_t* shp_program_input_default(const shp_program_t* p, size_t i, shp_array_t** array_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(array_out, "array_out");
  const program::Input& in = InputAt(prog, i);
  if (!in.has_default())
    throw Error(Code::kInvalidArgument, "input '" + in.name + "' has no default value");
  std::vector<int64_t> shape;
  for (const shp::dim::Expr* d : in.type.shape) {
    if (!d->IsConstant()) {
      throw Error(Code::kInvalidArgument,
                  "input '" + in.name + "' has the fill default " + trace::FillText(in.fill) +
                      " over the symbolic shape " + prog.input_shape_string(i) +
                      ": its value takes the shape of each run (shp_program_input_default_fill "
                      "gives the fill value)");
    }
    shape.push_back(d->ConstantTerm());
  }
  shp_array* a =
      shp::capi::NewOwnedArray(static_cast<shp_dtype_t>(in.type.dtype), shape.data(), shape.size());
  if (in.default_buffer >= 0) {
    const std::string& bytes = prog.buffers()[static_cast<size_t>(in.default_buffer)];
    if (!bytes.empty()) std::memcpy(a->data, bytes.data(), bytes.size());
  } else {
    const size_t size = trace::DTypeSize(in.type.dtype);
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    for (size_t k = 0; k < count; ++k)
      shp::kernels::StoreScalar(in.type.dtype, in.fill, static_cast<char*>(a->data) + k * size);
  }
  *array_out = a;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_input_default_fill(const shp_program_t* p, size_t i, double* value_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(value_out, "value_out");
  const program::Input& in = InputAt(prog, i);
  if (!in.has_fill) {
    throw Error(
        Code::kInvalidArgument,
        "input '" + in.name + "' has no fill default" +
            (in.default_buffer >= 0 ? " (its default is an array: shp_program_input_default)"
                                    : ""));
  }
  *value_out = in.fill;
  return nullptr;
  SHP_API_END
}

shp_output_role_t shp_program_output_role(const shp_program_t* p, size_t i) {
  if (!p || i >= p->program->outputs().size()) return static_cast<shp_output_role_t>(-1);
  return static_cast<shp_output_role_t>(p->program->outputs()[i].role);
}

shp_error_t* shp_program_jvp(const shp_program_t* program, const char* const* wrt, size_t num_wrt,
                             shp_program_t** program_out) {
  return Transform(program_out,
                   [&] { return shp::autodiff::Jvp(P(program), Names(wrt, num_wrt, "wrt")); });
}

shp_error_t* shp_program_jvp_with_default_tangents(const shp_program_t* program,
                                                   const char* const* wrt, size_t num_wrt,
                                                   const double* default_fill,
                                                   shp_program_t** program_out) {
  return Transform(program_out, [&] {
    std::vector<double> fill;
    if (default_fill != nullptr) fill.assign(default_fill, default_fill + num_wrt);
    return shp::autodiff::Jvp(P(program), Names(wrt, num_wrt, "wrt"), fill);
  });
}

shp_error_t* shp_program_vjp(const shp_program_t* program, const char* const* of, size_t num_of,
                             const char* const* wrt, size_t num_wrt, shp_program_t** program_out) {
  return Transform(program_out, [&] {
    return shp::autodiff::Vjp(P(program), Names(of, num_of, "of"), Names(wrt, num_wrt, "wrt"));
  });
}

shp_error_t* shp_program_grad(const shp_program_t* program, const char* of, const char* const* wrt,
                              size_t num_wrt, shp_program_t** program_out) {
  return Transform(program_out, [&] {
    SHP_REQUIRE_ARG(of, "of");
    return shp::autodiff::Grad(P(program), of, Names(wrt, num_wrt, "wrt"));
  });
}
