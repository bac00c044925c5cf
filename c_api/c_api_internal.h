// Internal helpers for the extern "C" thunks in c_api/*.cc. NOT installed, NOT public.
//
// Every thunk that returns shp_error_t* has this shape:
//
//   shp_error_t* shp_thing_do(shp_thing_t* thing, int64_t x, int64_t* out) {
//     SHP_API_BEGIN
//     SHP_REQUIRE_ARG(thing, "thing");
//     SHP_REQUIRE_ARG(out, "out");
//     const int64_t result = Unwrap(thing)->Do(x);  // may throw shp::Error, std::bad_alloc, ...
//     *out = result;                                 // write out-params only after success
//     return nullptr;
//     SHP_API_END
//   }
//
// SHP_API_END turns any C++ exception into an error object, so none crosses the C boundary.
#ifndef SHAPEPOLY_C_API_C_API_INTERNAL_H_
#define SHAPEPOLY_C_API_C_API_INTERNAL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cc/base/error.h"
#include "cc/dim/scope.h"
#include "cc/program/program.h"
#include "cc/trace/trace.h"
#include "shapepoly/shapepoly.h"

// The error object behind shp_error_t. `code` is never SHP_OK.
struct shp_error {
  int32_t code;
  std::string message;
  // Witnesses and verified fixes (shp_error_witness_*, shp_error_fix*); null when none.
  std::shared_ptr<const shp::ErrorDetail> detail;
};

// A scope handle: the dimension engine's scope (and, once tracing starts, its trace).
struct shp_scope {
  std::unique_ptr<shp::dim::Scope> dim;
  // Created on first use by a tensor function (shp::capi::TraceOf); declared after `dim` so
  // that it is destroyed first.
  std::unique_ptr<shp::trace::Trace> trace;
};

// A program handle: shared so that a runtime can keep the program alive on its own.
struct shp_program {
  std::shared_ptr<const shp::program::Program> program;
};

// Serialized bytes owned by the caller.
struct shp_buffer {
  std::string bytes;
};

struct shp_bindings {
  std::vector<std::string> names;
  std::vector<int64_t> values;
  int64_t variant = -1;  // the variant shp_program_check_shapes chose; -1 from shp_scope_solve
};

namespace shp {
namespace capi {

// Allocates an error with `code` and `msg` (an empty `msg` becomes the code's fixed text,
// without the "SHP_X: " prefix). Never throws: if allocation fails it returns
// OutOfMemoryError(). A code of kOk is a bug and becomes kInternal.
shp_error_t* MakeError(shp::Code code, std::string msg) noexcept;
// ... carrying `detail` (witnesses and fixes; may be null). Its strings are made valid UTF-8
// as the message is.
shp_error_t* MakeError(shp::Code code, std::string msg,
                       std::shared_ptr<const shp::ErrorDetail> detail) noexcept;

// The preallocated static SHP_OUT_OF_MEMORY error; shp_error_destroy ignores it.
shp_error_t* OutOfMemoryError() noexcept;

// Converts the exception being handled into an error object. Call ONLY inside a catch
// block. shp::Error -> its code, message and detail; std::bad_alloc -> OutOfMemoryError();
// any other std::exception -> kInternal with what(); anything else -> kInternal. Never
// throws.
shp_error_t* ErrorFromCurrentException() noexcept;

// Throws shp::Error(kInvalidArgument, "argument '<name>' must not be NULL") if `ptr` is NULL.
inline void RequireArg(const void* ptr, const char* name) {
  if (ptr == nullptr) {
    throw shp::Error(shp::Code::kInvalidArgument,
                     std::string("argument '") + name + "' must not be NULL");
  }
}

// The int32 value of an enum argument. C callers may pass any int; reading it through its
// object representation (never as the enum type) keeps out-of-range values well defined in
// C++, so the thunks can reject them with SHP_INVALID_ARGUMENT.
template <typename E>
inline int32_t RawEnum(const E& e) {
  static_assert(sizeof(E) == sizeof(int32_t), "C enums are int-sized");
  int32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Writes `s` snprintf-style (the header's convention): at most cap - 1 bytes and a NUL to
// `buf` (a size query when `buf` is NULL or `cap` is 0); its length to *len_out.
inline void WriteString(const std::string& s, char* buf, size_t cap, size_t* len_out) {
  RequireArg(len_out, "len_out");
  if (buf != nullptr && cap > 0) {
    size_t n = cap - 1 < s.size() ? cap - 1 : s.size();
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  *len_out = s.size();
}

// The value of a shp_cost_kind_t argument (runtime::CostKind's values), checked.
inline int32_t CostKindValue(const shp_cost_kind_t& kind) {
  const int32_t raw = RawEnum(kind);
  if (raw < 0 || raw > SHP_COST_PARAMETER_BYTES) {
    throw shp::Error(shp::Code::kInvalidArgument,
                     "kind is not a shp_cost_kind_t value: " + std::to_string(raw) +
                         " (expected 0..3: SHP_COST_FLOPS, SHP_COST_BYTES_ACCESSED, "
                         "SHP_COST_PEAK_BYTES, SHP_COST_PARAMETER_BYTES)");
  }
  return raw;
}

// shp_dim_t is an opaque view of an interned shp::dim::Expr.
inline const dim::Expr* Unwrap(const shp_dim_t* d) { return reinterpret_cast<const dim::Expr*>(d); }
inline const shp_dim_t* Wrap(const dim::Expr* e) { return reinterpret_cast<const shp_dim_t*>(e); }

// shp_tensor_t is an opaque view of a shp::trace::Tensor, owned by its scope's trace.
inline const trace::Tensor* Unwrap(const shp_tensor_t* t) {
  return reinterpret_cast<const trace::Tensor*>(t);
}
inline const shp_tensor_t* Wrap(const trace::Tensor* t) {
  return reinterpret_cast<const shp_tensor_t*>(t);
}

// The trace of a scope, created on first use.
inline trace::Trace* TraceOf(shp_scope_t* scope) {
  if (!scope->trace) scope->trace = trace::NewTrace(scope->dim.get());
  return scope->trace.get();
}

}  // namespace capi
}  // namespace shp

// Wrap the whole body of a function returning shp_error_t*. The body must end with
// `return nullptr;` (success) on every path that does not throw.
#define SHP_API_BEGIN try {
#define SHP_API_END                                  \
  }                                                  \
  catch (...) {                                      \
    return ::shp::capi::ErrorFromCurrentException(); \
  }

// Inside SHP_API_BEGIN/END: fail with SHP_INVALID_ARGUMENT if a pointer argument is NULL.
#define SHP_REQUIRE_ARG(ptr, name) ::shp::capi::RequireArg((ptr), (name))

namespace shp {
namespace capi {

// The tensor behind the tensor argument `name` (SHP_INVALID_ARGUMENT when NULL).
inline const trace::Tensor* TensorArg(const shp_tensor_t* t, const char* name) {
  SHP_REQUIRE_ARG(t, name);
  return Unwrap(t);
}

// The n integers of the array argument `name` (SHP_INVALID_ARGUMENT when NULL with n > 0).
inline std::vector<int64_t> Ints(const int64_t* v, size_t n, const char* name) {
  if (n > 0) SHP_REQUIRE_ARG(v, name);
  return n ? std::vector<int64_t>(v, v + n) : std::vector<int64_t>();
}

// The whole body of a C function that records one tensor: f() traces it, *tensor_out gets it.
template <typename F>
shp_error_t* BuildTensor(const shp_tensor_t** tensor_out, F f) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(tensor_out, "tensor_out");
  *tensor_out = Wrap(f());
  return nullptr;
  SHP_API_END
}

}  // namespace capi
}  // namespace shp

// The C++ codes (cc/base/error.h) and the C codes (shapepoly.h) must never drift apart.
#define SHP_INTERNAL_CHECK_CODE(cpp, c) \
  static_assert(static_cast<int32_t>(::shp::Code::cpp) == (c), #cpp " != " #c)
SHP_INTERNAL_CHECK_CODE(kOk, SHP_OK);
SHP_INTERNAL_CHECK_CODE(kInvalidArgument, SHP_INVALID_ARGUMENT);
SHP_INTERNAL_CHECK_CODE(kParseError, SHP_PARSE_ERROR);
SHP_INTERNAL_CHECK_CODE(kInconclusive, SHP_INCONCLUSIVE);
SHP_INTERNAL_CHECK_CODE(kScopeMismatch, SHP_SCOPE_MISMATCH);
SHP_INTERNAL_CHECK_CODE(kUnsatisfiable, SHP_UNSATISFIABLE);
SHP_INTERNAL_CHECK_CODE(kShapeMismatch, SHP_SHAPE_MISMATCH);
SHP_INTERNAL_CHECK_CODE(kConstraintViolation, SHP_CONSTRAINT_VIOLATION);
SHP_INTERNAL_CHECK_CODE(kUnsolvable, SHP_UNSOLVABLE);
SHP_INTERNAL_CHECK_CODE(kDivisionByZero, SHP_DIVISION_BY_ZERO);
SHP_INTERNAL_CHECK_CODE(kOverflow, SHP_OVERFLOW);
SHP_INTERNAL_CHECK_CODE(kDtypeMismatch, SHP_DTYPE_MISMATCH);
SHP_INTERNAL_CHECK_CODE(kNotFound, SHP_NOT_FOUND);
SHP_INTERNAL_CHECK_CODE(kInvalidProgram, SHP_INVALID_PROGRAM);
SHP_INTERNAL_CHECK_CODE(kVersionMismatch, SHP_VERSION_MISMATCH);
SHP_INTERNAL_CHECK_CODE(kUnsupported, SHP_UNSUPPORTED);
SHP_INTERNAL_CHECK_CODE(kOutOfMemory, SHP_OUT_OF_MEMORY);
SHP_INTERNAL_CHECK_CODE(kInternal, SHP_INTERNAL);
#undef SHP_INTERNAL_CHECK_CODE

#endif  // SHAPEPOLY_C_API_C_API_INTERNAL_H_
