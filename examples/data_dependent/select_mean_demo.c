/*
 * Data-dependent sizes: select the rows of x whose score exceeds a threshold, then average
 * them. The number of selected rows comes from the data, not from the input shapes:
 * shp_tensor_boolean_mask makes a new unbacked dimension u0 (0 <= u0 <= batch). The program
 * is traced once, saved, loaded, and run on batches where the count varies from 0 to all;
 * the runtime plans the part after the mask once the count is known (and caches it).
 *
 * Also shown: shp_dim_guard on u0 fails with a message that teaches shp_scope_check; a dry
 * run reports the selected-rows dim as data-dependent with its bounds. Every result is
 * checked against a mean computed in double in plain C.
 *
 * Usage: select_mean_demo [FILE.shpoly]   (default: select_mean.shpoly in the current dir)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapepoly/shapepoly.h"

static void check(shp_error_t* err) {
  if (err == NULL) return;
  fprintf(stderr, "error %s: %s\n", shp_code_string(shp_error_code(err)), shp_error_message(err));
  shp_error_destroy(err);
  exit(1);
}

enum { kFeatures = 4 };

/* Traces mean(x[score > threshold], axis 0) and saves the program to `path`. */
static void trace_and_save(const char* path) {
  shp_scope_t* s;
  check(shp_scope_create(NULL, 0, &s));
  const shp_tensor_t *x, *score, *threshold, *mask, *rows, *sum, *count, *countf, *mean;
  check(shp_tensor_input(s, "x", SHP_F32, "batch, 4", &x));
  check(shp_tensor_input(s, "score", SHP_F32, "batch", &score));
  const float t = 0.5f;
  check(shp_tensor_constant(s, SHP_F32, NULL, 0, &t, sizeof t, &threshold));
  check(shp_tensor_compare(score, SHP_CMP_GT, threshold, &mask));
  check(shp_tensor_boolean_mask(x, mask, 0, &rows)); /* f32[u0, 4] */
  const int64_t axis0 = 0;
  check(shp_tensor_reduce(SHP_REDUCE_SUM, rows, &axis0, 1, false, &sum));
  const shp_dim_t* dims[2];
  size_t rank;
  check(shp_tensor_shape(rows, dims, 2, &rank));
  char text[64];
  size_t len;
  check(shp_dim_to_string(dims[0], text, sizeof text, &len));
  int64_t lo, hi;
  check(shp_dim_bounds(dims[0], &lo, &hi));
  char hi_text[32] = "inf";
  if (hi != INT64_MAX) snprintf(hi_text, sizeof hi_text, "%lld", (long long)hi);
  printf("traced: the selected rows are f32[%s, 4]; %s is data-dependent, in [%lld, %s]\n", text,
         text, (long long)lo, hi_text);
  /* Branching on it cannot be decided: the error says which call fixes it. */
  const shp_dim_t* one;
  check(shp_dim_constant(s, 1, &one));
  bool b;
  shp_error_t* e = shp_dim_guard(dims[0], SHP_CMP_GE, one, NULL, &b);
  if (e == NULL || shp_error_code(e) != SHP_INCONCLUSIVE) {
    fprintf(stderr, "expected SHP_INCONCLUSIVE from a guard on %s\n", text);
    exit(1);
  }
  printf("guard on %s >= 1: %s\n", text, shp_error_message(e));
  shp_error_destroy(e);
  check(shp_tensor_dim_value(s, dims[0], &count));
  check(shp_tensor_convert(count, SHP_F32, &countf));
  check(shp_tensor_binary(SHP_DIV, sum, countf, &mean)); /* NaN when nothing is selected */
  const shp_tensor_t* ins[2] = {x, score};
  const shp_tensor_t* outs[2] = {mean, rows};
  const char* names[2] = {"mean", "rows"};
  shp_program_t* p;
  check(shp_program_create(s, ins, 2, outs, names, 2, &p));
  shp_buffer_t* buf;
  check(shp_program_serialize(p, &buf));
  FILE* f = fopen(path, "wb");
  if (f == NULL ||
      fwrite(shp_buffer_data(buf), 1, shp_buffer_size(buf), f) != shp_buffer_size(buf)) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
  printf("saved %s (%zu bytes)\n", path, shp_buffer_size(buf));
  shp_buffer_destroy(buf);
  shp_program_destroy(p);
  shp_scope_destroy(s);
}

static shp_program_t* load(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)size);
  if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) exit(1);
  fclose(f);
  shp_program_t* p;
  check(shp_program_load(data, (size_t)size, &p));
  free(data);
  return p;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "select_mean.shpoly";
  trace_and_save(path);
  shp_program_t* p = load(path);
  shp_runtime_t* r;
  check(shp_runtime_create(p, NULL, &r));

  /* A dry run knows the batch but not the count: -1, with bounds. */
  const int64_t xs[2] = {1000, kFeatures}, ss[1] = {1000};
  const int64_t* shapes[2] = {xs, ss};
  const size_t ranks[2] = {2, 1};
  check(shp_runtime_dry_run(r, NULL, NULL, shapes, ranks, 2));
  int64_t dims[2];
  size_t rank;
  bool dd;
  int64_t lo, hi;
  check(shp_runtime_output_shape(r, 1, dims, 2, &rank));
  check(shp_runtime_output_dim_bounds(r, 1, 0, &dd, &lo, &hi));
  printf(
      "dry run at batch 1000: rows is [%lld, %lld], axis 0 data-dependent: %s, in [%lld, %lld]\n",
      (long long)dims[0], (long long)dims[1], dd ? "yes" : "no", (long long)lo, (long long)hi);

  int failures = 0;
  const int64_t batches[3] = {8, 1000, 3};
  for (int bi = 0; bi < 3; ++bi) {
    const int64_t batch = batches[bi];
    const int64_t counts[4] = {0, 1, batch / 2, batch};
    for (int ci = 0; ci < 4; ++ci) {
      const int64_t want_count = counts[ci];
      shp_array_t *xa, *sa;
      const int64_t xshape[2] = {batch, kFeatures};
      check(shp_array_create(SHP_F32, xshape, 2, &xa));
      check(shp_array_create(SHP_F32, &batch, 1, &sa));
      float* xd = shp_array_data(xa);
      float* sd = shp_array_data(sa);
      double sums[kFeatures] = {0};
      for (int64_t i = 0; i < batch; ++i) {
        /* Every third row first, then the rest, until want_count rows are selected. */
        int64_t rank_i = (i % 3 == 0) ? i / 3 : (batch + 2) / 3 + (i - i / 3 - 1);
        int selected = rank_i < want_count;
        sd[i] = selected ? 0.9f : 0.1f;
        for (int c = 0; c < kFeatures; ++c) {
          xd[i * kFeatures + c] = (float)(i % 17) + 0.25f * (float)c;
          if (selected) sums[c] += xd[i * kFeatures + c];
        }
      }
      const shp_array_t* ins[2] = {xa, sa};
      shp_array_t* outs[2];
      check(shp_runtime_run(r, NULL, ins, 2, outs, 2));
      const int64_t* rows_shape = shp_array_shape(outs[1]);
      const float* mean = shp_array_data(outs[0]);
      int ok = rows_shape[0] == want_count;
      for (int c = 0; c < kFeatures; ++c) {
        if (want_count == 0) {
          ok = ok && isnan(mean[c]);
        } else {
          double want = sums[c] / (double)want_count;
          ok = ok && fabs(mean[c] - want) <= 1e-4 * (1 + fabs(want));
        }
      }
      printf("batch %4lld: %4lld rows selected, mean [%.4g, %.4g, %.4g, %.4g] %s\n",
             (long long)batch, (long long)rows_shape[0], mean[0], mean[1], mean[2], mean[3],
             ok ? "OK" : "MISMATCH");
      failures += !ok;
      shp_array_destroy(outs[0]);
      shp_array_destroy(outs[1]);
      shp_array_destroy(xa);
      shp_array_destroy(sa);
    }
  }
  printf("plans built: %llu (one per input shape, one per (shape, count)), cache hits: %llu\n",
         (unsigned long long)shp_runtime_plans_built(r),
         (unsigned long long)shp_runtime_cache_hits(r));
  shp_runtime_destroy(r);
  shp_program_destroy(p);
  if (failures) {
    fprintf(stderr, "%d mismatches\n", failures);
    return 1;
  }
  printf("all results match\n");
  return 0;
}
