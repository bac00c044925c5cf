// The C side of the Python binding's MLP benchmark: loads a program file, runs it on one
// runtime at a given batch with input "x" (filled like the Python side) and prints the median
// time of one shp_runtime_run (plus the release of its outputs) over REPS repetitions of
// ITERS calls, in nanoseconds: "c_ns <median>".
// Usage: mlp_c_time FILE.shpoly BATCH FEATURES THREADS REPS ITERS
#include <shapepoly/shapepoly.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void Check(shp_error_t* e) {
  if (e != NULL) {
    fprintf(stderr, "mlp_c_time: %s\n", shp_error_message(e));
    exit(1);
  }
}

static int CompareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double NowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: mlp_c_time FILE.shpoly BATCH FEATURES THREADS REPS ITERS\n");
    return 2;
  }
  int64_t batch = atoll(argv[2]), features = atoll(argv[3]);
  int threads = atoi(argv[4]), reps = atoi(argv[5]), iters = atoi(argv[6]);
  FILE* f = fopen(argv[1], "rb");
  if (f == NULL) return 1;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)size);
  if (fread(data, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  shp_program_t* program = NULL;
  Check(shp_program_load(data, (size_t)size, &program));
  free(data);
  shp_runtime_options_t* options = NULL;
  Check(shp_runtime_options_create(&options));
  Check(shp_runtime_options_set_num_threads(options, threads));
  shp_runtime_t* runtime = NULL;
  Check(shp_runtime_create(program, options, &runtime));
  shp_runtime_options_destroy(options);
  size_t n = (size_t)(batch * features);
  float* x = malloc(n * sizeof(float));
  for (size_t k = 0; k < n; ++k) x[k] = (float)((int)(k * 31 + 7) % 17 - 8) / 8.0f;
  int64_t shape[2] = {batch, features};
  shp_array_t* input = NULL;
  Check(shp_array_wrap(SHP_F32, shape, 2, x, n * sizeof(float), &input));
  const char* names[1] = {"x"};
  const shp_array_t* inputs[1] = {input};
  size_t num_outputs = shp_program_output_count(program);
  shp_array_t* outputs[16];
  double* times = malloc((size_t)reps * sizeof(double));
  for (int r = -1; r < reps; ++r) {  // r == -1 warms up (plans, caches)
    double t0 = NowNs();
    for (int i = 0; i < iters; ++i) {
      Check(shp_runtime_run(runtime, names, inputs, 1, outputs, num_outputs));
      for (size_t j = 0; j < num_outputs; ++j) shp_array_destroy(outputs[j]);
    }
    if (r >= 0) times[r] = (NowNs() - t0) / iters;
  }
  qsort(times, (size_t)reps, sizeof(double), CompareDoubles);
  printf("c_ns %.1f\n", times[reps / 2]);
  free(times);
  shp_array_destroy(input);
  free(x);
  shp_runtime_destroy(runtime);
  shp_program_destroy(program);
  return 0;
}
