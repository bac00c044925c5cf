/*
 * Staged planning of data-dependent sizes (issue 13), through the public C API of
 * libshapepoly.so. The program: x: f32[n] -> mask = x > 0 -> y = 2 * x[mask] + 1 (a
 * boolean_mask, then an elementwise chain over its u0 rows). Stage 0 (compare) is planned per
 * input shape; stage 1 (mask select + elementwise) once the count is known.
 *
 *   new count   on a cached input shape (n = 4096), each count run twice in a row (plan
 *               cache of 64): the first run plans stage 1 for the new count
 *               (shp_runtime_last_plan_build_ns: check + plan, median; target <= 10 us), the
 *               second finds it cached; the paired difference of the two whole runs is the
 *               staged planning's added cost as a user sees it (median; target <= 10 us).
 *
 * Output: INFO lines and ROW lines as the other runtime benchmarks
 *   ROW <scenario> | <ours> | <reference name> | <reference> | <ratio> | <target> | <verdict>
 * Usage: staged_bench [--quick]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shapepoly/shapepoly.h"

/* After shapepoly.h, for bench_check. */
#include "benchmarks/bench_util.h"

static shp_program_t* masked_program(void) {
  shp_scope_t* s;
  bench_check(shp_scope_create(NULL, 0, &s));
  const shp_tensor_t *x, *zero, *mask, *sel, *two, *one, *scaled, *y;
  bench_check(shp_tensor_input(s, "x", SHP_F32, "n", &x));
  const float z = 0.0f, t = 2.0f, o = 1.0f;
  bench_check(shp_tensor_constant(s, SHP_F32, NULL, 0, &z, sizeof z, &zero));
  bench_check(shp_tensor_constant(s, SHP_F32, NULL, 0, &t, sizeof t, &two));
  bench_check(shp_tensor_constant(s, SHP_F32, NULL, 0, &o, sizeof o, &one));
  bench_check(shp_tensor_compare(x, SHP_CMP_GT, zero, &mask));
  bench_check(shp_tensor_boolean_mask(x, mask, 0, &sel));
  bench_check(shp_tensor_binary(SHP_MUL, sel, two, &scaled));
  bench_check(shp_tensor_binary(SHP_ADD, scaled, one, &y));
  const char* name = "y";
  shp_program_t* p;
  bench_check(shp_program_create(s, &x, 1, &y, &name, 1, &p));
  shp_scope_destroy(s);
  return p;
}

/* x[i] > 0 exactly for i < count. */
static void fill(float* x, int64_t n, int64_t count) {
  for (int64_t i = 0; i < n; ++i) x[i] = i < count ? (float)(i + 1) : -1.0f;
}

int main(int argc, char** argv) {
  const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const int calls = quick ? 300 : 2000;
  const int64_t n = 4096;
  shp_program_t* p = masked_program();
  shp_runtime_options_t* o;
  bench_check(shp_runtime_options_create(&o));
  bench_check(shp_runtime_options_set_num_threads(o, 1));
  bench_check(shp_runtime_options_set_plan_cache_capacity(o, 64));
  shp_runtime_t* r;
  bench_check(shp_runtime_create(p, o, &r));
  shp_runtime_options_destroy(o);
  bench_print_machine(1, shp_runtime_simd_target(r), "1 thread");
  printf("INFO n = %lld; %d calls per scenario\n", (long long)n, calls);

  shp_array_t* xa;
  bench_check(shp_array_create(SHP_F32, &n, 1, &xa));
  float* x = shp_array_data(xa);
  const shp_array_t* ins[1] = {xa};
  shp_array_t* out;
  /* Warm: the input shape's stage-0 plan and the arena. */
  fill(x, n, n);
  bench_check(shp_runtime_run(r, NULL, ins, 1, &out, 1));
  shp_array_destroy(out);

  double* plan_ns = malloc(sizeof(double) * (size_t)calls);
  double* new_run = malloc(sizeof(double) * (size_t)calls);
  double* cached_run = malloc(sizeof(double) * (size_t)calls);
  if (!plan_ns || !new_run || !cached_run) return 1;
  /* Each count twice in a row: first new (the stage-1 plan is built), then cached. */
  for (int i = 0; i < calls; ++i) {
    const int64_t count = i % (n + 1);
    fill(x, n, count);
    for (int again = 0; again < 2; ++again) {
      const uint64_t built = shp_runtime_plans_built(r);
      double t0 = bench_now_ns();
      bench_check(shp_runtime_run(r, NULL, ins, 1, &out, 1));
      const double us = (bench_now_ns() - t0) / 1e3;
      if (shp_runtime_plans_built(r) != built + (again ? 0 : 1)) {
        fprintf(stderr, again ? "a repeated count planned again\n"
                              : "expected one new plan per new count\n");
        return 1;
      }
      if (shp_array_shape(out)[0] != count) {
        fprintf(stderr, "wrong row count %lld (want %lld)\n", (long long)shp_array_shape(out)[0],
                (long long)count);
        return 1;
      }
      shp_array_destroy(out);
      if (again) {
        cached_run[i] = us;
      } else {
        new_run[i] = us;
        plan_ns[i] = (double)shp_runtime_last_plan_build_ns(r) / 1e3;
      }
    }
  }
  /* The added cost per call: paired differences (same count, same data). */
  double* diff = malloc(sizeof(double) * (size_t)calls);
  if (!diff) return 1;
  for (int i = 0; i < calls; ++i) diff[i] = new_run[i] - cached_run[i];
  const double plan_med = bench_median(plan_ns, calls);
  const double diff_med = bench_median(diff, calls);
  const double new_med = bench_median(new_run, calls);
  const double cached_med = bench_median(cached_run, calls);
  char spread_plan[64], spread_diff[64];
  bench_spread(plan_ns, calls, 2, spread_plan, sizeof spread_plan);
  bench_spread(diff, calls, 2, spread_diff, sizeof spread_diff);
  printf("INFO spread (min-max, us): plan build %s; new minus cached %s\n", spread_plan,
         spread_diff);
  printf(
      "ROW stage-1 plan build, new count (last_plan_build_ns) | %.2f | - | - | - | <= 10 us | %s\n",
      plan_med, bench_verdict_at_most(1, plan_med, 10.0));
  printf("ROW run with a new count minus with a cached count | %.2f | - | - | - | <= 10 us | %s\n",
         diff_med, bench_verdict_at_most(1, diff_med, 10.0));
  printf("ROW run, new count (whole call) | %.2f | cached count | %.2f | %.2f | - | -\n", new_med,
         cached_med, cached_med / new_med);
  shp_array_destroy(xa);
  shp_runtime_destroy(r);
  shp_program_destroy(p);
  free(plan_ns);
  free(new_run);
  free(cached_run);
  free(diff);
  return 0;
}
