/* For simd_target_env_test.sh: prints the SIMD target the library dispatches to as its first
 * call (so after SHP_SIMD_TARGET was applied at load, and before anything else), then the
 * targets shp_set_simd_target accepts here (one line, best first), then the best target. */
#include <stdio.h>

#include "shapepoly/shapepoly.h"
#include "shapepoly/shapepoly_experimental.h"

int main(void) {
  static const char* const kNames[] = {"AVX3_DL", "AVX3",   "AVX2",  "SSE4",
                                       "SSSE3",   "EMU128", "SCALAR"};
  float data[3] = {1e8f, 1.0f, -1e8f};
  float sum = 0;
  size_t i;
  printf("first: %s\n", shp_simd_target());
  shp_error_t* err = shp_simd_sum_f32(data, 3, &sum);
  if (err != NULL || sum != 1.0f) {
    printf("sum failed: %s\n", shp_error_message(err));
    shp_error_destroy(err);
    return 1;
  }
  printf("runnable:");
  for (i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
    err = shp_set_simd_target(kNames[i]);
    if (err == NULL) printf(" %s", kNames[i]);
    shp_error_destroy(err);
  }
  printf("\n");
  err = shp_set_simd_target(NULL);
  if (err != NULL) {
    printf("lifting the cap failed: %s\n", shp_error_message(err));
    shp_error_destroy(err);
    return 1;
  }
  printf("best: %s\n", shp_simd_target());
  return 0;
}
