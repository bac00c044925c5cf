/* A program outside the repository that uses the installed libshapepoly: builds x + x with a
 * symbolic length, runs it at length 3, prints the library version and the result. */
#include <shapepoly/shapepoly.h>
#include <stdio.h>

int main(void) {
  shp_scope_t* scope;
  const shp_tensor_t *x, *y;
  shp_program_t* program;
  shp_runtime_t* runtime;
  shp_array_t *in, *out;
  const char* name = "x";
  const char* out_name = "y";
  const int64_t shape[] = {3};
  float data[] = {1, 2, 3};
  const float* r;
  shp_error_t* err;
  if (shp_abi_version() != SHP_ABI_VERSION) return 1;
  if ((err = shp_scope_create(NULL, 0, &scope)) ||
      (err = shp_tensor_input(scope, "x", SHP_F32, "(n,)", &x)) ||
      (err = shp_tensor_binary(SHP_ADD, x, x, &y)) ||
      (err = shp_program_create(scope, &x, 1, &y, &out_name, 1, &program)) ||
      (err = shp_runtime_create(program, NULL, &runtime)) ||
      (err = shp_array_wrap(SHP_F32, shape, 1, data, sizeof data, &in)) ||
      (err = shp_runtime_run(runtime, &name, (const shp_array_t* const*)&in, 1, &out, 1))) {
    fprintf(stderr, "error: %s\n", shp_error_message(err));
    return 1;
  }
  r = (const float*)shp_array_data(out);
  printf("libshapepoly %s: %g %g %g\n", shp_version_string(), r[0], r[1], r[2]);
  return !(r[0] == 2 && r[1] == 4 && r[2] == 6);
}
