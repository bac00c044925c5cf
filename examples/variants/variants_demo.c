/*
 * Branching on shapes without losing generality. A row softmax takes one path for short rows
 * (cols <= 16: the softmax op) and another for long rows (max-subtract, exp, sum, divide).
 * With a symbolic `cols` the branch cannot be decided while tracing, so:
 *
 *   1. Variants (both branches in one file): trace the function twice, once under the
 *      assumption cols <= 16 and once under cols > 16 (shp_scope_assume decides the branch),
 *      combine the two programs with shp_program_create_variants, check that their guards
 *      cover every shape, save, load, and run at cols 8, 16, 17 and 64: the runtime picks the
 *      variant whose guard holds (shp_runtime_last_variant says which).
 *   2. Hints and a guard (the PyTorch way): trace once with example values rows = 1, cols = 8;
 *      the branch is decided on the hints and recorded as the guard cols <= 16. The program
 *      runs at any rows (a hint of 1 does not specialize: rows = 1000 works) and refuses
 *      cols = 17 with SHP_GUARD_FAILED.
 *
 * Every result is checked against a softmax computed in double in plain C.
 *
 * Usage: variants_demo [FILE.shpoly]   (default: row_softmax.shpoly in the current directory)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapepoly/shapepoly.h"

/* Prints the error and exits: the demo has no recovery path. */
static void check(shp_error_t* err) {
  if (err == NULL) return;
  fprintf(stderr, "error %s: %s\n", shp_code_string(shp_error_code(err)), shp_error_message(err));
  shp_error_destroy(err);
  exit(1);
}

/* The function being traced: a row softmax of x: f32[rows, cols] whose path depends on the
 * shape. shp_dim_guard decides `cols <= 16`: from the scope's assumptions when they decide
 * it, else on the hints (recording the guard). */
static const shp_tensor_t* row_softmax(shp_scope_t* s, const shp_tensor_t* x) {
  const shp_dim_t *cols, *sixteen;
  check(shp_dim_parse(s, "cols", &cols));
  check(shp_dim_constant(s, 16, &sixteen));
  bool short_rows = false;
  check(shp_dim_guard(cols, SHP_CMP_LE, sixteen, "short rows take the softmax op", &short_rows));
  const shp_tensor_t* y;
  if (short_rows) {
    check(shp_tensor_softmax(x, -1, &y));
    return y;
  }
  const int64_t last = -1;
  const shp_tensor_t *m, *d, *e, *sum;
  check(shp_tensor_reduce(SHP_REDUCE_MAX, x, &last, 1, true, &m));
  check(shp_tensor_binary(SHP_SUB, x, m, &d));
  check(shp_tensor_unary(SHP_EXP, d, &e));
  check(shp_tensor_reduce(SHP_REDUCE_SUM, e, &last, 1, true, &sum));
  check(shp_tensor_binary(SHP_DIV, e, sum, &y));
  return y;
}

/* Traces row_softmax in a new scope. `assume` is SHP_CMP_LE or SHP_CMP_GT for an explicit
 * assumption `cols op 16`, or -1 to decide on the hints rows = 1, cols = 8 instead. */
static shp_program_t* trace(int assume) {
  shp_scope_t* s;
  check(shp_scope_create(NULL, 0, &s));
  if (assume >= 0) {
    const shp_dim_t *cols, *sixteen;
    check(shp_dim_parse(s, "cols", &cols));
    check(shp_dim_constant(s, 16, &sixteen));
    check(shp_scope_assume(
        s, cols, (shp_cmp_t)assume, sixteen,
        assume == SHP_CMP_LE ? "variant for short rows" : "variant for long rows"));
  } else {
    check(shp_scope_set_hint(s, "rows", 1));
    check(shp_scope_set_hint(s, "cols", 8));
  }
  const shp_tensor_t* x;
  check(shp_tensor_input(s, "x", SHP_F32, "rows, cols", &x));
  const shp_tensor_t* y = row_softmax(s, x);
  const char* name = "y";
  shp_program_t* p;
  check(shp_program_create(s, &x, 1, &y, &name, 1, &p));
  shp_scope_destroy(s);
  return p;
}

/* Deterministic inputs in [-4, 4). */
static void fill(float* v, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = 8.0f * ((float)(seed >> 8) / 16777216.0f) - 4.0f;
  }
}

/* Runs `rt` on x: f32[rows, cols]; returns the largest |y - softmax(x)| (reference in double),
 * or -1 with the error printed when the run fails (the error code goes to *code). */
static double run_and_compare(shp_runtime_t* rt, int64_t rows, int64_t cols, int* code) {
  const size_t n = (size_t)(rows * cols);
  float* data = malloc(n * sizeof(float));
  fill(data, n, (unsigned)(rows * 131 + cols));
  const int64_t shape[2] = {rows, cols};
  shp_array_t* x;
  check(shp_array_wrap(SHP_F32, shape, 2, data, n * sizeof(float), &x));
  const char* name = "x";
  const shp_array_t* in[1] = {x};
  shp_array_t* y = NULL;
  shp_error_t* err = shp_runtime_run(rt, &name, in, 1, &y, 1);
  shp_array_destroy(x);
  *code = 0;
  if (err != NULL) {
    *code = shp_error_code(err);
    printf("  rows %-4lld cols %-3lld -> %s:\n    %s\n", (long long)rows, (long long)cols,
           shp_code_string(*code), shp_error_message(err));
    shp_error_destroy(err);
    free(data);
    return -1.0;
  }
  const float* out = shp_array_data(y);
  double worst = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = data + r * cols;
    double mx = row[0], sum = 0.0;
    for (int64_t c = 1; c < cols; ++c) mx = row[c] > mx ? row[c] : mx;
    for (int64_t c = 0; c < cols; ++c) sum += exp(row[c] - mx);
    for (int64_t c = 0; c < cols; ++c) {
      double diff = fabs(out[r * cols + c] - exp(row[c] - mx) / sum);
      worst = diff > worst ? diff : worst;
    }
  }
  shp_array_destroy(y);
  free(data);
  return worst;
}

static shp_runtime_t* new_runtime(const shp_program_t* p) {
  shp_runtime_t* rt;
  check(shp_runtime_create(p, NULL, &rt));
  return rt;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "row_softmax.shpoly";
  const double tol = 1e-6;
  int failures = 0;

  /* ---- 1. Both branches in one file ---- */
  shp_program_t* v[2] = {trace(SHP_CMP_LE), trace(SHP_CMP_GT)};
  shp_program_t* both;
  check(shp_program_create_variants((const shp_program_t* const*)v, 2, &both));
  shp_program_destroy(v[0]);
  shp_program_destroy(v[1]);
  printf("traced row_softmax twice and combined the variants:\n");
  for (size_t k = 0; k < shp_program_variant_count(both); ++k) {
    printf("  variant %zu runs where %s  (%s)\n", k, shp_program_variant_guard_text(both, k, 0),
           shp_program_variant_guard_message(both, k, 0));
  }
  shp_truth_t covered = shp_program_variants_exhaustive(both);
  printf("  guards cover every shape: %s\n", covered == SHP_TRUE    ? "yes (proven)"
                                             : covered == SHP_FALSE ? "NO"
                                                                    : "unknown");
  failures += covered != SHP_TRUE;

  shp_buffer_t* buf;
  check(shp_program_serialize(both, &buf));
  FILE* f = fopen(path, "wb");
  if (f == NULL ||
      fwrite(shp_buffer_data(buf), 1, shp_buffer_size(buf), f) != shp_buffer_size(buf)) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  fclose(f);
  printf("saved both variants in %s (%zu bytes, schema version 3)\n", path, shp_buffer_size(buf));
  shp_program_t* loaded;
  check(shp_program_load(shp_buffer_data(buf), shp_buffer_size(buf), &loaded));
  shp_buffer_destroy(buf);
  shp_program_destroy(both);

  printf("loaded it; one runtime, four shapes:\n");
  shp_runtime_t* rt = new_runtime(loaded);
  const int64_t cols[4] = {8, 16, 17, 64};
  for (int i = 0; i < 4; ++i) {
    int code;
    double err = run_and_compare(rt, 4, cols[i], &code);
    int64_t ran = shp_runtime_last_variant(rt);
    int64_t want = cols[i] <= 16 ? 0 : 1;
    printf("  rows 4    cols %-3lld -> variant %lld (%s), max |y - reference| = %.2g%s\n",
           (long long)cols[i], (long long)ran, ran == 0 ? "softmax op" : "max/exp/sum/div", err,
           err >= 0 && err <= tol && ran == want ? "" : "  MISMATCH");
    failures += !(err >= 0 && err <= tol && ran == want);
  }
  printf(failures ? "  MISMATCH: a path disagrees with the reference\n"
                  : "  both paths agree with the reference within %.0e\n",
         tol);
  shp_runtime_destroy(rt);
  shp_program_destroy(loaded);

  /* ---- 2. Hints and a guard ---- */
  shp_program_t* hinted = trace(-1);
  printf("\ntraced once with hints rows = 1, cols = 8: the branch became the guard %s (from %s)\n",
         shp_program_guard_text(hinted, 0), shp_program_guard_origin(hinted, 0));
  rt = new_runtime(hinted);
  const int64_t shapes[3][2] = {{1, 8}, {1000, 8}, {4, 17}};
  for (int i = 0; i < 3; ++i) {
    int code;
    double err = run_and_compare(rt, shapes[i][0], shapes[i][1], &code);
    if (err >= 0) {
      printf("  rows %-4lld cols %-3lld -> ran, max |y - reference| = %.2g\n",
             (long long)shapes[i][0], (long long)shapes[i][1], err);
    }
    int ok = shapes[i][1] <= 16 ? err >= 0 && err <= tol : code == SHP_GUARD_FAILED;
    failures += !ok;
  }
  printf("  a hint of 1 did not specialize rows; cols = 17 needs the variants above\n");
  shp_runtime_destroy(rt);
  shp_program_destroy(hinted);

  printf("%s\n", failures ? "FAILED" : "all results match");
  return failures ? 1 : 0;
}
