/* The C API used from plain C (compiled with -std=c99 -pedantic-errors), linked against
 * libshapepoly.so. Prints one line per failed check and returns non-zero on any failure. */
#ifdef __cplusplus
#error "this test must be compiled as C, not C++"
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shapepoly/shapepoly.h"
#include "shapepoly/shapepoly_experimental.h"

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++g_checks;                                                                \
    if (!(cond)) {                                                             \
      ++g_failures;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

static void test_version(void) {
  CHECK(strcmp(shp_version_string(), SHP_VERSION_STRING) == 0);
  CHECK(strcmp(SHP_VERSION_STRING, "0.1.0") == 0);
  CHECK(shp_abi_version() == SHP_ABI_VERSION);
  CHECK(SHP_VERSION_MAJOR == 0 && SHP_VERSION_MINOR == 1 && SHP_VERSION_PATCH == 0);
}

static void test_codes(void) {
  const shp_code_t code = SHP_INTERNAL;
  CHECK(sizeof(shp_code_t) == 4);
  CHECK(SHP_OK == 0 && SHP_INVALID_ARGUMENT == 1 && SHP_OUT_OF_MEMORY == 16 && code == 17);
  CHECK(strcmp(shp_code_string(SHP_INVALID_ARGUMENT), "SHP_INVALID_ARGUMENT: invalid argument") ==
        0);
  CHECK(strcmp(shp_code_string(-1), "unknown error code") == 0);
  CHECK(strcmp(shp_code_string(SHP_GUARD_FAILED + 1), "unknown error code") == 0);
  CHECK(SHP_GUARD_FAILED == 18);
}

static void test_null_error(void) {
  CHECK(shp_error_code(NULL) == SHP_OK);
  CHECK(strcmp(shp_error_message(NULL), "") == 0);
  shp_error_destroy(NULL);
}

static void test_simd_sum(void) {
  float data[1000];
  float sum = -1.0f;
  size_t i;
  shp_error_t* error;
  for (i = 0; i < 1000; ++i) data[i] = (float)(i + 1);
  error = shp_simd_sum_f32(data, 1000, &sum);
  CHECK(error == NULL);
  CHECK(sum == 500500.0f);
  shp_error_destroy(error);

  error = shp_simd_sum_f32(NULL, 0, &sum);
  CHECK(error == NULL);
  CHECK(sum == 0.0f);

  CHECK(strlen(shp_simd_target()) > 0);
}

static void test_error_path(void) {
  float sum = 42.0f;
  shp_error_t* error = shp_simd_sum_f32(NULL, 3, &sum);
  CHECK(error != NULL);
  CHECK(shp_error_code(error) == SHP_INVALID_ARGUMENT);
  CHECK(strstr(shp_error_message(error), "'data'") != NULL);
  CHECK(sum == 42.0f); /* out-param untouched on error */
  shp_error_destroy(error);

  {
    const float one = 1.0f;
    error = shp_simd_sum_f32(&one, 1, NULL);
    CHECK(shp_error_code(error) == SHP_INVALID_ARGUMENT);
    CHECK(strstr(shp_error_message(error), "'sum_out'") != NULL);
    shp_error_destroy(error);
  }
}

/* The dim engine from C: parse, arithmetic, compare, bounds, solve. */
static void test_dims(void) {
  const char* constraints[] = {"batch >= 128", "batch <= 1024"};
  shp_scope_t* scope = NULL;
  const shp_dim_t* b = NULL;
  const shp_dim_t* two = NULL;
  const shp_dim_t* e = NULL;
  int64_t lo = 0, hi = 0;
  char text[64];
  size_t len = 0;
  shp_truth_t truth = SHP_UNKNOWN;
  const char* specs[] = {"batch, 2*batch + 1"};
  const int64_t shape0[] = {200, 401};
  const int64_t* shapes[] = {shape0};
  const size_t ranks[] = {2};
  shp_bindings_t* bindings = NULL;
  shp_error_t* err;

  CHECK(shp_scope_create(constraints, 2, &scope) == NULL);
  CHECK(shp_dim_parse(scope, "batch", &b) == NULL);
  CHECK(shp_dim_constant(scope, 2, &two) == NULL);
  CHECK(shp_dim_mul(two, b, &e) == NULL);
  CHECK(shp_dim_add(e, two, &e) == NULL);
  CHECK(shp_dim_to_string(e, text, sizeof text, &len) == NULL);
  CHECK(strcmp(text, "2*batch + 2") == 0 && len == 11);
  CHECK(shp_dim_bounds(e, &lo, &hi) == NULL);
  CHECK(lo == 258 && hi == 2050);
  CHECK(shp_dim_compare(b, SHP_CMP_GE, two, &truth) == NULL);
  CHECK(truth == SHP_TRUE);
  CHECK(shp_scope_solve(scope, 1, specs, shapes, ranks, &bindings) == NULL);
  CHECK(shp_bindings_count(bindings) == 1);
  CHECK(strcmp(shp_bindings_name(bindings, 0), "batch") == 0 &&
        shp_bindings_value(bindings, 0) == 200);
  shp_bindings_destroy(bindings);
  err = shp_dim_parse(scope, "2*(batch", &e);
  CHECK(shp_error_code(err) == SHP_PARSE_ERROR);
  shp_error_destroy(err);
  shp_scope_destroy(scope);
}

/* Out-of-range enum values, as C callers may pass them: each is a clear
 * SHP_INVALID_ARGUMENT (tested here in C, where any int value of an enum type is valid). */
static void test_hostile_enums(void) {
  shp_scope_t* scope = NULL;
  const shp_tensor_t* x = NULL;
  const shp_tensor_t* out = NULL;
  const shp_dim_t* a = NULL;
  shp_truth_t truth = SHP_UNKNOWN;
  shp_array_t* array = NULL;
  shp_error_t* err;
  CHECK(shp_scope_create(NULL, 0, &scope) == NULL);
  CHECK(shp_tensor_input(scope, "x", SHP_F32, "n", &x) == NULL);
  CHECK(shp_dim_parse(scope, "n", &a) == NULL);
  err = shp_tensor_unary((shp_unary_op_t)99, x, &out);
  CHECK(shp_error_code(err) == SHP_INVALID_ARGUMENT && out == NULL);
  shp_error_destroy(err);
  err = shp_tensor_binary((shp_binary_op_t)-3, x, x, &out);
  CHECK(shp_error_code(err) == SHP_INVALID_ARGUMENT);
  shp_error_destroy(err);
  err = shp_tensor_input(scope, "z", (shp_dtype_t)99, "3", &out);
  CHECK(shp_error_code(err) == SHP_INVALID_ARGUMENT);
  shp_error_destroy(err);
  err = shp_dim_compare(a, (shp_cmp_t)9, a, &truth);
  CHECK(shp_error_code(err) == SHP_INVALID_ARGUMENT && truth == SHP_UNKNOWN);
  shp_error_destroy(err);
  err = shp_array_create((shp_dtype_t)99, NULL, 0, &array);
  CHECK(shp_error_code(err) == SHP_INVALID_ARGUMENT && array == NULL);
  shp_error_destroy(err);
  CHECK((int)shp_tensor_dtype(NULL) == -1);
  CHECK((int)shp_array_dtype(NULL) == -1);
  shp_scope_destroy(scope);
}

int main(void) {
  test_version();
  test_hostile_enums();
  test_dims();
  test_codes();
  test_null_error();
  test_simd_sum();
  test_error_path();
  printf("libshapepoly %s (ABI %d), SIMD target %s\n", shp_version_string(), (int)shp_abi_version(),
         shp_simd_target());
  printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
