// The C API calls that take or return enums, with int32_t in their place (see
// c_api_enum_shim.c: out-of-range enum values are fine in C, undefined behaviour in C++).
#ifndef SHAPEPOLY_TESTS_FUZZ_C_API_ENUM_SHIM_H_
#define SHAPEPOLY_TESTS_FUZZ_C_API_ENUM_SHIM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapepoly/shapepoly.h"

#ifdef __cplusplus
extern "C" {
#endif

shp_error_t* shim_scope_check(shp_scope_t* scope, const shp_dim_t* a, int32_t op,
                              const shp_dim_t* b, const char* message);
shp_error_t* shim_scope_assume(shp_scope_t* scope, const shp_dim_t* a, int32_t op,
                               const shp_dim_t* b, const char* message);
shp_error_t* shim_dim_guard(const shp_dim_t* a, int32_t op, const shp_dim_t* b, const char* message,
                            bool* bool_out);
shp_error_t* shim_scope_set_guard_policy(shp_scope_t* scope, int32_t policy);
int32_t shim_program_variants_exhaustive(const shp_program_t* program);
shp_error_t* shim_dim_compare(const shp_dim_t* a, int32_t op, const shp_dim_t* b,
                              int32_t* truth_out);
shp_error_t* shim_tensor_input(shp_scope_t* scope, const char* name, int32_t dtype,
                               const char* shape_spec, const shp_tensor_t** tensor_out);
shp_error_t* shim_tensor_input_dims(shp_scope_t* scope, const char* name, int32_t dtype,
                                    const shp_dim_t* const* dims, size_t rank,
                                    const shp_tensor_t** tensor_out);
shp_error_t* shim_tensor_constant(shp_scope_t* scope, int32_t dtype, const int64_t* shape,
                                  size_t rank, const void* data, size_t nbytes,
                                  const shp_tensor_t** tensor_out);
shp_error_t* shim_tensor_unary(int32_t op, const shp_tensor_t* x, const shp_tensor_t** out);
shp_error_t* shim_tensor_binary(int32_t op, const shp_tensor_t* a, const shp_tensor_t* b,
                                const shp_tensor_t** out);
shp_error_t* shim_tensor_compare(const shp_tensor_t* a, int32_t op, const shp_tensor_t* b,
                                 const shp_tensor_t** out);
shp_error_t* shim_tensor_convert(const shp_tensor_t* x, int32_t dtype, const shp_tensor_t** out);
shp_error_t* shim_tensor_reduce(int32_t op, const shp_tensor_t* x, const int64_t* axes,
                                size_t num_axes, bool keepdims, const shp_tensor_t** out);
shp_error_t* shim_tensor_iota(shp_scope_t* scope, int32_t dtype, const shp_dim_t* const* dims,
                              size_t rank, int64_t axis, const shp_tensor_t** out);
int32_t shim_tensor_dtype(const shp_tensor_t* tensor);
int32_t shim_program_input_dtype(const shp_program_t* program, size_t i);
int32_t shim_program_input_role(const shp_program_t* program, size_t i);
int32_t shim_program_output_dtype(const shp_program_t* program, size_t i);
shp_error_t* shim_runtime_dry_run(shp_runtime_t* runtime, const char* const* input_names,
                                  const int32_t* dtypes, const int64_t* const* shapes,
                                  const size_t* ranks, size_t num_inputs);
shp_error_t* shim_array_create(int32_t dtype, const int64_t* shape, size_t rank,
                               shp_array_t** array_out);
shp_error_t* shim_array_wrap(int32_t dtype, const int64_t* shape, size_t rank, void* data,
                             size_t nbytes, shp_array_t** array_out);
int32_t shim_array_dtype(const shp_array_t* array);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SHAPEPOLY_TESTS_FUZZ_C_API_ENUM_SHIM_H_
