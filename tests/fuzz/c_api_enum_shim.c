/* The calls of c_api_sequence_fuzzer that pass or return enums, made from C: any int32_t is
 * a valid value of a C enum type, whereas in C++ an out-of-range value is undefined behaviour
 * (UBSan's -fsanitize=enum would stop the fuzzer in its own code). A C caller may pass any
 * value; the library must answer SHP_INVALID_ARGUMENT. */
#include "tests/fuzz/c_api_enum_shim.h"

shp_error_t* shim_scope_check(shp_scope_t* scope, const shp_dim_t* a, int32_t op,
                              const shp_dim_t* b, const char* message) {
  return shp_scope_check(scope, a, (shp_cmp_t)op, b, message);
}

shp_error_t* shim_scope_assume(shp_scope_t* scope, const shp_dim_t* a, int32_t op,
                               const shp_dim_t* b, const char* message) {
  return shp_scope_assume(scope, a, (shp_cmp_t)op, b, message);
}

shp_error_t* shim_dim_guard(const shp_dim_t* a, int32_t op, const shp_dim_t* b, const char* message,
                            bool* bool_out) {
  return shp_dim_guard(a, (shp_cmp_t)op, b, message, bool_out);
}

shp_error_t* shim_scope_set_guard_policy(shp_scope_t* scope, int32_t policy) {
  return shp_scope_set_guard_policy(scope, (shp_guard_policy_t)policy);
}

int32_t shim_program_variants_exhaustive(const shp_program_t* program) {
  return (int32_t)shp_program_variants_exhaustive(program);
}

shp_error_t* shim_dim_compare(const shp_dim_t* a, int32_t op, const shp_dim_t* b,
                              int32_t* truth_out) {
  shp_truth_t truth;
  shp_error_t* e = shp_dim_compare(a, (shp_cmp_t)op, b, truth_out ? &truth : NULL);
  if (!e) *truth_out = (int32_t)truth;
  return e;
}

shp_error_t* shim_tensor_input(shp_scope_t* scope, const char* name, int32_t dtype,
                               const char* shape_spec, const shp_tensor_t** tensor_out) {
  return shp_tensor_input(scope, name, (shp_dtype_t)dtype, shape_spec, tensor_out);
}

shp_error_t* shim_tensor_input_dims(shp_scope_t* scope, const char* name, int32_t dtype,
                                    const shp_dim_t* const* dims, size_t rank,
                                    const shp_tensor_t** tensor_out) {
  return shp_tensor_input_dims(scope, name, (shp_dtype_t)dtype, dims, rank, tensor_out);
}

shp_error_t* shim_tensor_constant(shp_scope_t* scope, int32_t dtype, const int64_t* shape,
                                  size_t rank, const void* data, size_t nbytes,
                                  const shp_tensor_t** tensor_out) {
  return shp_tensor_constant(scope, (shp_dtype_t)dtype, shape, rank, data, nbytes, tensor_out);
}

shp_error_t* shim_tensor_unary(int32_t op, const shp_tensor_t* x, const shp_tensor_t** out) {
  return shp_tensor_unary((shp_unary_op_t)op, x, out);
}

shp_error_t* shim_tensor_binary(int32_t op, const shp_tensor_t* a, const shp_tensor_t* b,
                                const shp_tensor_t** out) {
  return shp_tensor_binary((shp_binary_op_t)op, a, b, out);
}

shp_error_t* shim_tensor_compare(const shp_tensor_t* a, int32_t op, const shp_tensor_t* b,
                                 const shp_tensor_t** out) {
  return shp_tensor_compare(a, (shp_cmp_t)op, b, out);
}

shp_error_t* shim_tensor_convert(const shp_tensor_t* x, int32_t dtype, const shp_tensor_t** out) {
  return shp_tensor_convert(x, (shp_dtype_t)dtype, out);
}

shp_error_t* shim_tensor_reduce(int32_t op, const shp_tensor_t* x, const int64_t* axes,
                                size_t num_axes, bool keepdims, const shp_tensor_t** out) {
  return shp_tensor_reduce((shp_reduce_op_t)op, x, axes, num_axes, keepdims, out);
}

shp_error_t* shim_tensor_iota(shp_scope_t* scope, int32_t dtype, const shp_dim_t* const* dims,
                              size_t rank, int64_t axis, const shp_tensor_t** out) {
  return shp_tensor_iota(scope, (shp_dtype_t)dtype, dims, rank, axis, out);
}

int32_t shim_tensor_dtype(const shp_tensor_t* tensor) { return (int32_t)shp_tensor_dtype(tensor); }

int32_t shim_program_input_dtype(const shp_program_t* program, size_t i) {
  return (int32_t)shp_program_input_dtype(program, i);
}

int32_t shim_program_input_role(const shp_program_t* program, size_t i) {
  return (int32_t)shp_program_input_role(program, i);
}

int32_t shim_program_output_dtype(const shp_program_t* program, size_t i) {
  return (int32_t)shp_program_output_dtype(program, i);
}

shp_error_t* shim_runtime_dry_run(shp_runtime_t* runtime, const char* const* input_names,
                                  const int32_t* dtypes, const int64_t* const* shapes,
                                  const size_t* ranks, size_t num_inputs) {
  /* shp_dtype_t is int-sized (checked by the library's own static_assert). */
  return shp_runtime_dry_run(runtime, input_names, (const shp_dtype_t*)(const void*)dtypes, shapes,
                             ranks, num_inputs);
}

shp_error_t* shim_array_create(int32_t dtype, const int64_t* shape, size_t rank,
                               shp_array_t** array_out) {
  return shp_array_create((shp_dtype_t)dtype, shape, rank, array_out);
}

shp_error_t* shim_array_wrap(int32_t dtype, const int64_t* shape, size_t rank, void* data,
                             size_t nbytes, shp_array_t** array_out) {
  return shp_array_wrap((shp_dtype_t)dtype, shape, rank, data, nbytes, array_out);
}

int32_t shim_array_dtype(const shp_array_t* array) { return (int32_t)shp_array_dtype(array); }
