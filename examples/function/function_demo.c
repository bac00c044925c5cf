/* Compiled functions with automatic dynamic shapes (shp_function_t), the torch.compile
 * workflow from C: call a traced function on a stream of batch sizes, read the event log (why
 * it traced again), export the variants as one program, reload it and run it without the trace
 * function. Usage: function_demo [path.shpoly] (default build/function_demo.shpoly). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "shapepoly/shapepoly.h"

#define CHECK(call)                                                       \
  do {                                                                    \
    shp_error_t* err_ = (call);                                           \
    if (err_) {                                                           \
      fprintf(stderr, "%s failed: %s\n", #call, shp_error_message(err_)); \
      shp_error_destroy(err_);                                            \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

enum { kIn = 6, kHidden = 5, kOut = 3 };
static float w1[kIn * kHidden], w2[kHidden * kOut];

/* y = tanh(x @ w1) @ w2 for x of shape (batch, 6). Returns errors to the library instead of
 * exiting: the call reports them with their code. */
static shp_error_t* mlp(shp_scope_t* scope, const shp_tensor_t* const* inputs, size_t num_inputs,
                        const shp_tensor_t** outputs, size_t num_outputs, void* user_data) {
  const int64_t s1[] = {kIn, kHidden}, s2[] = {kHidden, kOut};
  const shp_tensor_t *a, *b, *h, *t;
  shp_error_t* e;
  (void)num_inputs, (void)num_outputs, (void)user_data;
  if ((e = shp_tensor_constant(scope, SHP_F32, s1, 2, w1, sizeof w1, &a))) return e;
  if ((e = shp_tensor_constant(scope, SHP_F32, s2, 2, w2, sizeof w2, &b))) return e;
  if ((e = shp_tensor_matmul(inputs[0], a, &h))) return e;
  if ((e = shp_tensor_unary(SHP_TANH, h, &t))) return e;
  return shp_tensor_matmul(t, b, &outputs[0]);
}

static shp_array_t* make_input(int64_t batch) {
  const int64_t shape[] = {batch, kIn};
  shp_array_t* x;
  float* d;
  int64_t i;
  CHECK(shp_array_create(SHP_F32, shape, 2, &x));
  d = (float*)shp_array_data(x);
  for (i = 0; i < batch * kIn; ++i) d[i] = (float)sin(0.1 * (double)i);
  return x;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "build/function_demo.shpoly";
  const int64_t stream[] = {4, 4, 8, 1, 64, 7, 300, 8};
  const size_t n = sizeof stream / sizeof stream[0];
  const char* in = "x";
  const char* out = "y";
  const shp_dtype_t dt = SHP_F32;
  const size_t rank = 2;
  shp_function_t* f;
  shp_array_t* results[8];
  shp_program_t *program, *loaded;
  shp_buffer_t* buf;
  shp_runtime_t* rt;
  size_t i, k;
  FILE* file;
  int mismatches = 0;
  for (i = 0; i < kIn * kHidden; ++i) w1[i] = (float)cos(0.3 * (double)i) * 0.5f;
  for (i = 0; i < kHidden * kOut; ++i) w2[i] = (float)sin(0.7 * (double)i);

  CHECK(shp_function_create(mlp, NULL, &in, &dt, &rank, 1, &out, 1, NULL, &f));
  for (i = 0; i < n; ++i) {
    shp_array_t* x = make_input(stream[i]);
    CHECK(shp_function_call(f, &in, (const shp_array_t* const*)&x, 1, &results[i], 1));
    printf("call %zu: batch %4lld -> traces so far %llu\n", i + 1, (long long)stream[i],
           (unsigned long long)shp_function_trace_count(f));
    shp_array_destroy(x);
  }
  printf("\nevent log (SHAPEPOLY_LOG=recompiles,guards,dynamic prints it as it happens):\n");
  for (k = 0; k < shp_function_event_count(f); ++k) printf("  %s\n", shp_function_event_text(f, k));
  printf("\n%llu traces, %llu calls served by an existing variant\n",
         (unsigned long long)shp_function_trace_count(f),
         (unsigned long long)shp_function_cache_hits(f));

  /* Export, save, reload, and run every shape again from the file alone. */
  CHECK(shp_function_export(f, &program));
  CHECK(shp_program_serialize(program, &buf));
  file = fopen(path, "wb");
  if (!file ||
      fwrite(shp_buffer_data(buf), 1, shp_buffer_size(buf), file) != shp_buffer_size(buf)) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  fclose(file);
  CHECK(shp_program_load(shp_buffer_data(buf), shp_buffer_size(buf), &loaded));
  shp_buffer_destroy(buf);
  shp_function_destroy(f); /* the file no longer needs the trace function */
  printf("exported %zu variants to %s (exhaustive: %s)\n", shp_program_variant_count(loaded), path,
         shp_program_variants_exhaustive(loaded) == SHP_TRUE ? "yes" : "no");
  CHECK(shp_runtime_create(loaded, NULL, &rt));
  for (i = 0; i < n; ++i) {
    shp_array_t* x = make_input(stream[i]);
    shp_array_t* y;
    const float *a, *b;
    int64_t j;
    CHECK(shp_runtime_run(rt, &in, (const shp_array_t* const*)&x, 1, &y, 1));
    a = (const float*)shp_array_data(y);
    b = (const float*)shp_array_data(results[i]);
    for (j = 0; j < stream[i] * kOut; ++j) mismatches += a[j] != b[j];
    printf("reloaded, batch %4lld: variant %lld, %s\n", (long long)stream[i],
           (long long)shp_runtime_last_variant(rt), mismatches ? "DIFFERENT" : "same outputs");
    shp_array_destroy(y);
    shp_array_destroy(x);
    shp_array_destroy(results[i]);
  }
  shp_runtime_destroy(rt);
  shp_program_destroy(loaded);
  shp_program_destroy(program);
  return mismatches ? 1 : 0;
}
