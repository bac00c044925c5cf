/* Symbolic cost of a 1,000-operation program (issue 19): the time to compute the four cost
 * formulas (shp_program_cost, with bounds) and to evaluate FLOPs for concrete shapes
 * (shp_runtime_cost). Prints machine-readable lines for benchmarks/cost/run_cost_bench.sh:
 *   INFO <text>
 *   OURS formulas_ms <median>        the four formulas and their bounds
 *   OURS shapes_ms <median>          FLOPs at batch 1, 64 and 4096 (after the formulas)
 *   OURS flops <batch> <value>       for the peer's check
 * The program: x[batch, 64] then 250 times (matmul by a 64x64 constant, tanh, add x, softmax).
 * Usage: cost_bench [--reps N] */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shapepoly/shapepoly.h"

/* After shapepoly.h, for bench_check_what. */
#include "benchmarks/bench_util.h"

static shp_program_t* build(void) {
  const char* constraints[] = {"batch <= 4096"};
  shp_scope_t* s;
  bench_check_what(shp_scope_create(constraints, 1, &s), "scope");
  const shp_tensor_t *x, *w, *h;
  bench_check_what(shp_tensor_input(s, "x", SHP_F32, "batch, 64", &x), "input");
  static float wv[64 * 64];
  int64_t ws[] = {64, 64};
  bench_check_what(shp_tensor_constant(s, SHP_F32, ws, 2, wv, sizeof wv, &w), "constant");
  h = x;
  for (int i = 0; i < 1000; ++i) {
    switch (i % 4) {
      case 0:
        bench_check_what(shp_tensor_matmul(h, w, &h), "matmul");
        break;
      case 1:
        bench_check_what(shp_tensor_unary(SHP_TANH, h, &h), "tanh");
        break;
      case 2:
        bench_check_what(shp_tensor_binary(SHP_ADD, h, x, &h), "add");
        break;
      default:
        bench_check_what(shp_tensor_softmax(h, 1, &h), "softmax");
        break;
    }
  }
  const char* name = "y";
  shp_program_t* p;
  bench_check_what(shp_program_create(s, &x, 1, &h, &name, 1, &p), "program");
  shp_scope_destroy(s);
  return p;
}

int main(int argc, char** argv) {
  int reps = 21;
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[++i]);
  }
  if (reps < 1 || reps > 1000) reps = 21;
  printf("INFO libshapepoly %s\n", shp_version_string());
  bench_print_machine(1, shp_simd_target(), "threads: none (no kernel runs)");
  shp_program_t* p = build();
  printf("INFO program: %zu inputs, 1000 operations, constraint batch <= 4096\n",
         shp_program_input_count(p));
  double* f = malloc(sizeof(double) * (size_t)reps);
  double* g = malloc(sizeof(double) * (size_t)reps);
  char buf[4096];
  size_t len;
  int64_t lo, hi, batches[] = {1, 64, 4096}, values[3];
  shp_runtime_t* r;
  bench_check_what(shp_runtime_create(p, NULL, &r), "runtime");
  for (int k = 0; k < reps; ++k) {
    double t0 = bench_now_ns() / 1e6;
    for (int kind = 0; kind < 4; ++kind) {
      bench_check_what(shp_program_cost(p, (shp_cost_kind_t)kind, buf, sizeof buf, &len), "cost");
      bench_check_what(shp_program_cost_bounds(p, (shp_cost_kind_t)kind, &lo, &hi), "bounds");
    }
    double t1 = bench_now_ns() / 1e6;
    for (int b = 0; b < 3; ++b) {
      const char* names[] = {"x"};
      int64_t shape[] = {batches[b], 64};
      const int64_t* shapes[] = {shape};
      size_t ranks[] = {2};
      bench_check_what(
          shp_runtime_cost(r, SHP_COST_FLOPS, names, NULL, shapes, ranks, 1, &values[b]),
          "runtime cost");
    }
    f[k] = t1 - t0;
    g[k] = bench_now_ns() / 1e6 - t1;
  }
  bench_check_what(shp_program_cost(p, SHP_COST_FLOPS, buf, sizeof buf, &len), "cost");
  printf("INFO flops formula: %s\n", buf);
  bench_check_what(shp_program_cost(p, SHP_COST_PEAK_BYTES, buf, sizeof buf, &len), "cost");
  bench_check_what(shp_program_cost_bounds(p, SHP_COST_PEAK_BYTES, &lo, &hi), "bounds");
  printf("INFO peak bytes formula: %s (at most %lld for batch <= 4096)\n", buf, (long long)hi);
  printf("INFO spread of the formulas: min %.3f ms, max %.3f ms over %d repetitions\n",
         bench_quantile(f, reps, 0.0), bench_quantile(f, reps, 1.0), reps);
  printf("OURS formulas_ms %.4f\n", bench_median(f, reps));
  printf("OURS shapes_ms %.4f\n", bench_median(g, reps));
  for (int b = 0; b < 3; ++b)
    printf("OURS flops %lld %lld\n", (long long)batches[b], (long long)values[b]);
  shp_runtime_destroy(r);
  shp_program_destroy(p);
  free(f);
  free(g);
  return 0;
}
