/* The quick-start demo (`make demo`): loads libshapepoly.so through the C API and prints
 * what it is. Later versions replace it with the end-to-end trace/export/run demo. */
#include <stdio.h>

#include "shapepoly/shapepoly.h"
#include "shapepoly/shapepoly_experimental.h"

int main(void) {
  float data[1000];
  float sum = 0.0f;
  shp_error_t* error;
  int i;

  if (shp_abi_version() != SHP_ABI_VERSION) {
    fprintf(stderr, "ABI mismatch: library %d, header %d\n", (int)shp_abi_version(),
            SHP_ABI_VERSION);
    return 1;
  }
  printf("libshapepoly %s (ABI %d), SIMD target: %s\n", shp_version_string(),
         (int)shp_abi_version(), shp_simd_target());

  for (i = 0; i < 1000; ++i) data[i] = (float)(i + 1);
  error = shp_simd_sum_f32(data, 1000, &sum);
  if (error != NULL) {
    fprintf(stderr, "shp_simd_sum_f32: %s\n", shp_error_message(error));
    shp_error_destroy(error);
    return 1;
  }
  printf("shp_simd_sum_f32(1..1000) = %.0f\n", sum);

  /* Errors are objects: the code, a message naming the argument, and out-params untouched. */
  error = shp_simd_sum_f32(NULL, 1000, &sum);
  printf("shp_simd_sum_f32(NULL, 1000) -> %s (%s)\n", shp_code_string(shp_error_code(error)),
         shp_error_message(error));
  shp_error_destroy(error);
  return 0;
}
