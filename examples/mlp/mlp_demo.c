/*
 * The point of libshapepoly in one short session: trace a 3-layer MLP (784-256-256-10, f32,
 * relu, softmax) ONCE with a symbolic batch, save it to a .shpoly file, load it back, and run
 * it at batch 1, 7, 64 and 1000 with one runtime -- no recompilation, a new shape only costs a
 * plan of a few microseconds. The weights are parameters: runs use their stored defaults, and
 * one run swaps in new weights by name without re-exporting. Last, the grad program of the
 * cross-entropy loss gives the gradients of every weight. Every result is checked against a
 * plain C computation.
 *
 * Usage: mlp_demo [FILE.shpoly]   (default: mlp.shpoly in the current directory)
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shapepoly/shapepoly.h"

/* Prints the error and exits: the demo has no recovery path. */
static void check(shp_error_t* err) {
  if (err == NULL) return;
  fprintf(stderr, "error %s: %s\n", shp_code_string(shp_error_code(err)), shp_error_message(err));
  shp_error_destroy(err);
  exit(1);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Deterministic pseudo-random weights in [-scale, scale]. */
static float* random_floats(size_t n, float scale, unsigned* seed) {
  float* v = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    *seed = *seed * 1664525u + 1013904223u;
    v[i] = scale * ((float)(*seed >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

enum { IN = 784, H = 256, OUT = 10 };
static const int64_t kDims[4] = {IN, H, H, OUT};
static const char* const kW[3] = {"w1", "w2", "w3"};
static const char* const kB[3] = {"b1", "b2", "b3"};

/* One dense layer: x @ w + b, then relu (max with 0) unless it is the last layer. The weights
 * are parameters: named inputs whose defaults (w, b) are stored in the program. */
static const shp_tensor_t* dense(shp_scope_t* s, const shp_tensor_t* x, const float* w,
                                 const float* b, int layer, const shp_tensor_t** params) {
  int64_t ws[2] = {kDims[layer], kDims[layer + 1]}, bs[1] = {kDims[layer + 1]};
  size_t wbytes = (size_t)(ws[0] * ws[1]) * sizeof(float), bbytes = (size_t)bs[0] * sizeof(float);
  const shp_tensor_t *wt, *bt, *y, *z;
  check(shp_tensor_parameter(s, kW[layer], SHP_F32, ws, 2, w, wbytes, &wt));
  check(shp_tensor_parameter(s, kB[layer], SHP_F32, bs, 1, b, bbytes, &bt));
  params[0] = wt;
  params[1] = bt;
  check(shp_tensor_matmul(x, wt, &y));
  check(shp_tensor_binary(SHP_ADD, y, bt, &z));
  if (layer == 2) return z;
  float zero = 0.0f;
  const shp_tensor_t *zt, *r;
  check(shp_tensor_constant(s, SHP_F32, NULL, 0, &zero, sizeof zero, &zt));
  check(shp_tensor_binary(SHP_MAX, z, zt, &r));
  return r;
}

/* Traces the logits of the MLP from x; params receives w1, b1, w2, b2, w3, b3. */
static const shp_tensor_t* logits(shp_scope_t* s, const shp_tensor_t* x, float* const* w,
                                  float* const* b, const shp_tensor_t** params) {
  const shp_tensor_t* h = x;
  for (int l = 0; l < 3; ++l) h = dense(s, h, w[l], b[l], l, params + 2 * l);
  return h;
}

/* Max |got - want| over n floats. */
static double max_abs_err(const float* got, const float* want, int64_t n) {
  double e = 0;
  for (int64_t k = 0; k < n; ++k) e = fmax(e, fabs(got[k] - want[k]));
  return e;
}

/* The plain reference: the same MLP with loops, accumulating in double. */
static void reference(const float* x, int64_t batch, float* const* w, float* const* b, float* out) {
  double* cur = malloc(sizeof(double) * (size_t)batch * H);
  double* next = malloc(sizeof(double) * (size_t)batch * H);
  for (int layer = 0; layer < 3; ++layer) {
    int64_t n_in = kDims[layer], n_out = kDims[layer + 1];
    for (int64_t r = 0; r < batch; ++r) {
      for (int64_t j = 0; j < n_out; ++j) {
        double acc = b[layer][j];
        for (int64_t k = 0; k < n_in; ++k) {
          double a = layer == 0 ? x[r * IN + k] : cur[r * H + k];
          acc += a * w[layer][k * n_out + j];
        }
        next[r * H + j] = (layer < 2 && acc < 0) ? 0 : acc;
      }
    }
    double* t = cur;
    cur = next;
    next = t;
  }
  for (int64_t r = 0; r < batch; ++r) {
    double mx = cur[r * H], sum = 0;
    for (int j = 1; j < OUT; ++j) mx = fmax(mx, cur[r * H + j]);
    for (int j = 0; j < OUT; ++j) sum += exp(cur[r * H + j] - mx);
    for (int j = 0; j < OUT; ++j) out[r * OUT + j] = (float)(exp(cur[r * H + j] - mx) / sum);
  }
  free(cur);
  free(next);
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "mlp.shpoly";
  printf("libshapepoly %s (ABI %d)\n", shp_version_string(), (int)shp_abi_version());
  unsigned seed = 42;
  float *w[3], *b[3];
  for (int l = 0; l < 3; ++l) {
    w[l] = random_floats((size_t)(kDims[l] * kDims[l + 1]), 1.0f / sqrtf((float)kDims[l]), &seed);
    b[l] = random_floats((size_t)kDims[l + 1], 0.1f, &seed);
  }

  /* 1. Trace once, with a symbolic batch; the weights are parameters (x, then 6 of them). */
  shp_scope_t* scope;
  check(shp_scope_create(NULL, 0, &scope));
  const shp_tensor_t *ins[7], *probs;
  check(shp_tensor_input(scope, "x", SHP_F32, "batch, 784", &ins[0]));
  check(shp_tensor_softmax(logits(scope, ins[0], w, b, ins + 1), -1, &probs));
  const char* out_name = "probs";
  shp_program_t* traced;
  check(shp_program_create(scope, ins, 7, &probs, &out_name, 1, &traced));
  shp_scope_destroy(scope);

  /* 2. Export to a .shpoly file and load it back. */
  shp_buffer_t* bytes;
  check(shp_program_serialize(traced, &bytes));
  FILE* f = fopen(path, "wb");
  if (f == NULL ||
      fwrite(shp_buffer_data(bytes), 1, shp_buffer_size(bytes), f) != shp_buffer_size(bytes)) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  fclose(f);
  printf("saved %s (%zu bytes)\n", path, shp_buffer_size(bytes));
  shp_buffer_destroy(bytes);
  shp_program_destroy(traced);

  f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* data = malloc((size_t)size);
  if (fread(data, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  shp_program_t* program;
  check(shp_program_load(data, (size_t)size, &program));
  free(data);
  char in_shape[64], out_shape[64];
  size_t len;
  check(shp_program_input_shape_string(program, 0, in_shape, sizeof in_shape, &len));
  check(shp_program_output_shape_string(program, 0, out_shape, sizeof out_shape, &len));
  size_t n_params = 0;
  for (size_t i = 0; i < shp_program_input_count(program); ++i) {
    n_params += shp_program_input_role(program, i) == SHP_INPUT_PARAMETER;
  }
  printf("loaded: %s: f32%s -> %s: f32%s, %zu parameters with defaults (%s, ...)\n",
         shp_program_input_name(program, 0), in_shape, shp_program_output_name(program, 0),
         out_shape, n_params, shp_program_input_name(program, 1));

  /* 3. One runtime, four batch sizes, each run twice (new shape, then cached plan). */
  shp_runtime_t* rt;
  check(shp_runtime_create(program, NULL, &rt));
  shp_program_destroy(program); /* the runtime keeps it alive */
  printf("runtime: %d threads, SIMD target %s\n", shp_runtime_num_threads(rt),
         shp_runtime_simd_target(rt));
  const int64_t batches[4] = {1, 7, 64, 1000};
  const char* x_name = "x";
  int failures = 0;
  for (int i = 0; i < 4; ++i) {
    int64_t shape[2] = {batches[i], IN};
    float* xs = random_floats((size_t)(batches[i] * IN), 1.0f, &seed);
    shp_array_t* xa;
    check(shp_array_wrap(SHP_F32, shape, 2, xs, sizeof(float) * (size_t)(batches[i] * IN), &xa));
    double times[2];
    shp_array_t* out = NULL;
    for (int rep = 0; rep < 2; ++rep) {
      shp_array_destroy(out);
      double t0 = now_us();
      /* By name: the parameters are left out, so their stored defaults are used. */
      check(shp_runtime_run(rt, &x_name, (const shp_array_t* const*)&xa, 1, &out, 1));
      times[rep] = now_us() - t0;
    }
    float* want = malloc(sizeof(float) * (size_t)(batches[i] * OUT));
    reference(xs, batches[i], w, b, want);
    double max_err = max_abs_err(shp_array_data(out), want, batches[i] * OUT);
    int ok = max_err < 1e-5;
    failures += !ok;
    printf(
        "batch %4lld -> (%lld, %lld)  first call %8.1f us (plan %5.1f us)  cached %8.1f us  max "
        "|err| %.1e %s\n",
        (long long)batches[i], (long long)shp_array_shape(out)[0],
        (long long)shp_array_shape(out)[1], times[0], shp_runtime_last_plan_build_ns(rt) / 1e3,
        times[1], max_err, ok ? "ok" : "MISMATCH");
    free(want);
    shp_array_destroy(out);
    shp_array_destroy(xa);
    free(xs);
  }
  printf("plan cache: %llu plans built, %llu hits\n",
         (unsigned long long)shp_runtime_plans_built(rt),
         (unsigned long long)shp_runtime_cache_hits(rt));

  /* 4. New weights by name, same program and runtime: no re-export. */
  enum { SWAP_BATCH = 7 };
  float* w3_new = random_floats((size_t)(H * OUT), 0.5f, &seed);
  float* xs = random_floats((size_t)SWAP_BATCH * IN, 1.0f, &seed);
  int64_t xshape[2] = {SWAP_BATCH, IN}, wshape[2] = {H, OUT};
  shp_array_t *xa, *wa, *out;
  check(shp_array_wrap(SHP_F32, xshape, 2, xs, sizeof(float) * SWAP_BATCH * IN, &xa));
  check(shp_array_wrap(SHP_F32, wshape, 2, w3_new, sizeof(float) * H * OUT, &wa));
  const char* swap_names[2] = {"w3", "x"}; /* any order: bound by name */
  const shp_array_t* swap_in[2] = {wa, xa};
  check(shp_runtime_run(rt, swap_names, swap_in, 2, &out, 1));
  float* w_swapped[3] = {w[0], w[1], w3_new};
  float want_swap[SWAP_BATCH * OUT];
  reference(xs, SWAP_BATCH, w_swapped, b, want_swap);
  double swap_err = max_abs_err(shp_array_data(out), want_swap, SWAP_BATCH * OUT);
  failures += !(swap_err < 1e-5);
  printf("new weights by name: run(x, w3 = new) at batch %d  max |err| %.1e %s\n", SWAP_BATCH,
         swap_err, swap_err < 1e-5 ? "ok" : "MISMATCH");
  shp_array_destroy(out);
  shp_array_destroy(wa);
  shp_runtime_destroy(rt);

  /* 5. The gradient of the cross-entropy loss -mean(sum(labels * log(probs))) with respect to
   *    every weight: a program transformation (shp_program_grad), run like any program. The
   *    gradient of b3 is mean(probs - labels) over the batch, checked with the reference. */
  check(shp_scope_create(NULL, 0, &scope));
  const shp_tensor_t *lins[8], *p2, *lp, *prod, *loss;
  check(shp_tensor_input(scope, "x", SHP_F32, "batch, 784", &lins[0]));
  check(shp_tensor_input(scope, "labels", SHP_F32, "batch, 10", &lins[7]));
  check(shp_tensor_softmax(logits(scope, lins[0], w, b, lins + 1), -1, &p2));
  check(shp_tensor_unary(SHP_LOG, p2, &lp));
  check(shp_tensor_binary(SHP_MUL, lp, lins[7], &prod));
  int64_t last = -1;
  check(shp_tensor_reduce(SHP_REDUCE_SUM, prod, &last, 1, false, &prod));
  check(shp_tensor_reduce(SHP_REDUCE_MEAN, prod, NULL, 0, false, &loss));
  check(shp_tensor_unary(SHP_NEG, loss, &loss));
  const char* loss_name = "loss";
  shp_program_t *loss_prog, *grad;
  check(shp_program_create(scope, lins, 8, &loss, &loss_name, 1, &loss_prog));
  shp_scope_destroy(scope);
  const char* wrt[6] = {"w1", "b1", "w2", "b2", "w3", "b3"};
  check(shp_program_grad(loss_prog, "loss", wrt, 6, &grad));
  shp_program_destroy(loss_prog);
  float labels[SWAP_BATCH * OUT] = {0};
  for (int r = 0; r < SWAP_BATCH; ++r) labels[r * OUT + (r * 3) % OUT] = 1.0f;
  int64_t lshape[2] = {SWAP_BATCH, OUT};
  shp_array_t* la;
  check(shp_array_wrap(SHP_F32, lshape, 2, labels, sizeof labels, &la));
  check(shp_runtime_create(grad, NULL, &rt));
  size_t n_grad = shp_program_output_count(grad);
  shp_array_t* gouts[7];
  const char* gnames[2] = {"x", "labels"};
  const shp_array_t* gin[2] = {xa, la};
  check(shp_runtime_run(rt, gnames, gin, 2, gouts, n_grad));
  float want_probs[SWAP_BATCH * OUT], want_db3[OUT] = {0};
  reference(xs, SWAP_BATCH, w, b, want_probs);
  for (int k = 0; k < SWAP_BATCH * OUT; ++k) {
    want_db3[k % OUT] += (want_probs[k] - labels[k]) / SWAP_BATCH;
  }
  double grad_err = max_abs_err(shp_array_data(gouts[6]), want_db3, OUT);
  failures += !(grad_err < 1e-5) || strcmp(shp_program_output_name(grad, 6), "b3.grad") != 0;
  printf(
      "grad program: %zu inputs -> loss + %zu grads (%s ... %s), loss %.4f at batch %d, "
      "b3.grad max |err| %.1e %s\n",
      shp_program_input_count(grad), n_grad - 1, shp_program_output_name(grad, 1),
      shp_program_output_name(grad, n_grad - 1), *(const float*)shp_array_data(gouts[0]),
      SWAP_BATCH, grad_err, grad_err < 1e-5 ? "ok" : "MISMATCH");
  for (size_t j = 0; j < n_grad; ++j) shp_array_destroy(gouts[j]);
  shp_array_destroy(la);
  shp_array_destroy(xa);
  shp_runtime_destroy(rt);
  shp_program_destroy(grad);
  free(w3_new);
  free(xs);
  for (int l = 0; l < 3; ++l) {
    free(w[l]);
    free(b[l]);
  }
  return failures ? 1 : 0;
}
