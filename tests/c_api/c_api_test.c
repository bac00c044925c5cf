/* The C API used from plain C (compiled with -std=c99 -pedantic-errors), linked against
 * libshapepoly.so. Prints one line per failed check and returns non-zero on any failure. */
#ifdef __cplusplus
#error "this test must be compiled as C, not C++"
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shapepoly/shapepoly.h"

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                    \
  do {                                                                 \
    ++g_checks;                                                        \
    if (!(cond)) {                                                     \
      ++g_failures;                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                  \
    }                                                                  \
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
  CHECK(strcmp(shp_code_string(SHP_INTERNAL + 1), "unknown error code") == 0);
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

int main(void) {
  test_version();
  test_codes();
  test_null_error();
  test_simd_sum();
  test_error_path();
  printf("libshapepoly %s (ABI %d), SIMD target %s\n", shp_version_string(),
         (int)shp_abi_version(), shp_simd_target());
  printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
