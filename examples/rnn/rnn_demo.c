/*
 * Recurrent networks with shp_tensor_scan over a symbolic sequence length, through the C API:
 * an Elman RNN (h' = tanh(x Wx + h Wh + b)) and a GRU (z = sigmoid(x Wz + h Uz + bz),
 * r = sigmoid(x Wr + h Ur + br), n = tanh(x Wn + (r*h) Un + bn), h' = (1-z)*n + z*h) over the same
 * input xs[seq, B, I], traced ONCE with `seq` declared >= 0. The two bodies are built the two
 * ways the API offers:
 *   - Elman: shp_program_create in the same scope, on inputs of its own (the carry h, the slice
 *     x, and the weights, which the scan passes as consts);
 *   - GRU: shp_program_create_body after shp_scope_trace_mark, traced on two fresh inputs (h, x)
 *     straight from the enclosing scope's weight tensors, which become the body's captures (the
 *     scan's consts), as closures do in JAX.
 * The weights are parameters (their values are stored in the program). The program is saved to
 * a .shpoly file, loaded back, and run by one runtime at sequence lengths 0, 1, 7 and 100; each
 * output (the last h and every h of both networks) is compared with a plain C loop in double.
 * Exits 1 on any mismatch.
 *
 * Usage: rnn_demo [FILE.shpoly]   (default: rnn.shpoly in the current directory)
 */
#include <math.h>
#include <stdint.h>
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

/* Deterministic pseudo-random values in [-scale, scale]. */
static float* random_floats(size_t n, float scale, unsigned* seed) {
  float* v = malloc((n > 0 ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    *seed = *seed * 1664525u + 1013904223u;
    v[i] = scale * ((float)(*seed >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

enum { B = 3, I = 5, H = 8 };
#define TOL 1e-5

/* The weights, [in, out] row-major: Elman wx[I,H], wh[H,H], b[H]; GRU W*[I,H], U*[H,H], b*[H]
 * for the gates z, r, n (index 0, 1, 2). */
typedef struct {
  float *wx, *wh, *b;
  float *w[3], *u[3], *bg[3];
} weights_t;

static const char* const kGate = "zrn";

static const shp_tensor_t* param(shp_scope_t* s, const char* name, const float* v, int64_t rows,
                                 int64_t cols) {
  int64_t shape[2] = {rows, cols};
  size_t rank = rows > 0 ? 2 : 1;
  const int64_t* sh = rows > 0 ? shape : shape + 1;
  size_t n = (size_t)((rows > 0 ? rows : 1) * cols);
  const shp_tensor_t* t;
  check(shp_tensor_parameter(s, name, SHP_F32, sh, rank, v, n * sizeof(float), &t));
  return t;
}

static const shp_tensor_t* bin(shp_binary_op_t op, const shp_tensor_t* a, const shp_tensor_t* b) {
  const shp_tensor_t* r;
  check(shp_tensor_binary(op, a, b, &r));
  return r;
}

static const shp_tensor_t* un(shp_unary_op_t op, const shp_tensor_t* a) {
  const shp_tensor_t* r;
  check(shp_tensor_unary(op, a, &r));
  return r;
}

static const shp_tensor_t* mm(const shp_tensor_t* a, const shp_tensor_t* b) {
  const shp_tensor_t* r;
  check(shp_tensor_matmul(a, b, &r));
  return r;
}

/* act(x w + h u + b) */
static const shp_tensor_t* gate(shp_unary_op_t act, const shp_tensor_t* x, const shp_tensor_t* w,
                                const shp_tensor_t* h, const shp_tensor_t* u,
                                const shp_tensor_t* b) {
  return un(act, bin(SHP_ADD, bin(SHP_ADD, mm(x, w), mm(h, u)), b));
}

/* The Elman body as a program of the scope: (h, x, wx, wh, b) -> (h', h'). */
static shp_program_t* elman_body(shp_scope_t* s) {
  const shp_tensor_t* in[5];
  check(shp_tensor_input(s, "elman_h", SHP_F32, "3, 8", &in[0]));
  check(shp_tensor_input(s, "elman_x", SHP_F32, "3, 5", &in[1]));
  check(shp_tensor_input(s, "elman_wx", SHP_F32, "5, 8", &in[2]));
  check(shp_tensor_input(s, "elman_wh", SHP_F32, "8, 8", &in[3]));
  check(shp_tensor_input(s, "elman_b", SHP_F32, "8", &in[4]));
  const shp_tensor_t* h = gate(SHP_TANH, in[1], in[2], in[0], in[3], in[4]);
  const shp_tensor_t* out[2] = {h, h};
  const char* names[2] = {"h", "y"};
  shp_program_t* body;
  check(shp_program_create(s, in, 5, out, names, 2, &body));
  return body;
}

/* The GRU body traced from the enclosing weights (w[g], u[g], b[g] made before the mark):
 * (h, x, captures...) -> (h', h'); *captures receives the tensors to pass as consts. */
static shp_program_t* gru_body(shp_scope_t* s, const shp_tensor_t* const* w,
                               const shp_tensor_t* const* u, const shp_tensor_t* const* b,
                               const shp_tensor_t*** captures, size_t* num_captures) {
  size_t mark = shp_scope_trace_mark(s);
  const shp_tensor_t *in[2], *one;
  check(shp_tensor_input(s, "gru_h", SHP_F32, "3, 8", &in[0]));
  check(shp_tensor_input(s, "gru_x", SHP_F32, "3, 5", &in[1]));
  const shp_tensor_t *h = in[0], *x = in[1];
  float one_f = 1.0f;
  check(shp_tensor_constant(s, SHP_F32, NULL, 0, &one_f, sizeof one_f, &one));
  const shp_tensor_t* z = gate(SHP_LOGISTIC, x, w[0], h, u[0], b[0]);
  const shp_tensor_t* r = gate(SHP_LOGISTIC, x, w[1], h, u[1], b[1]);
  const shp_tensor_t* n = gate(SHP_TANH, x, w[2], bin(SHP_MUL, r, h), u[2], b[2]);
  const shp_tensor_t* hn = bin(SHP_ADD, bin(SHP_MUL, bin(SHP_SUB, one, z), n), bin(SHP_MUL, z, h));
  const shp_tensor_t* out[2] = {hn, hn};
  *captures = malloc((mark > 0 ? mark : 1) * sizeof(**captures));
  *num_captures = 0;
  shp_program_t* body;
  check(shp_program_create_body(s, mark, in, 2, out, 2, *captures, mark, num_captures, &body));
  return body;
}

/* Traces both networks over xs[seq, 3, 5] and h0[3, 8]; outputs elman_h, elman_ys, gru_h,
 * gru_ys. */
static shp_program_t* trace_rnns(const weights_t* wt) {
  shp_scope_t* s;
  check(shp_scope_create(NULL, 0, &s));
  check(shp_scope_declare(s, "seq", 0, INT64_MAX));
  const shp_tensor_t *xs, *h0;
  check(shp_tensor_input(s, "xs", SHP_F32, "seq, 3, 5", &xs));
  check(shp_tensor_input(s, "h0", SHP_F32, "3, 8", &h0));
  /* The weights: parameters of the outer program. */
  const shp_tensor_t* ew[3] = {param(s, "wx", wt->wx, I, H), param(s, "wh", wt->wh, H, H),
                               param(s, "b", wt->b, 0, H)};
  const shp_tensor_t *gw[3], *gu[3], *gb[3];
  for (int g = 0; g < 3; ++g) {
    char name[8];
    snprintf(name, sizeof name, "W%c", kGate[g]);
    gw[g] = param(s, name, wt->w[g], I, H);
    snprintf(name, sizeof name, "U%c", kGate[g]);
    gu[g] = param(s, name, wt->u[g], H, H);
    snprintf(name, sizeof name, "b%c", kGate[g]);
    gb[g] = param(s, name, wt->bg[g], 0, H);
  }

  /* Elman: the body is a program over its own inputs; the weights go in as consts. */
  shp_program_t* eb = elman_body(s);
  const shp_tensor_t* e_out[2];
  check(shp_tensor_scan(s, eb, &h0, 1, &xs, 1, ew, 3, 0, NULL, false, e_out, 2));
  shp_program_destroy(eb);

  /* GRU: the body's captures (the weights it used) are the consts, in the order given. */
  const shp_tensor_t** caps;
  size_t ncaps;
  shp_program_t* gbody = gru_body(s, gw, gu, gb, &caps, &ncaps);
  const shp_tensor_t* g_out[2];
  check(shp_tensor_scan(s, gbody, &h0, 1, &xs, 1, caps, ncaps, 0, NULL, false, g_out, 2));
  shp_program_destroy(gbody);
  free(caps);

  const shp_tensor_t* ins[2 + 3 + 9] = {xs, h0, ew[0], ew[1], ew[2]};
  for (int g = 0; g < 3; ++g) {
    ins[5 + 3 * g] = gw[g];
    ins[6 + 3 * g] = gu[g];
    ins[7 + 3 * g] = gb[g];
  }
  const shp_tensor_t* outs[4] = {e_out[0], e_out[1], g_out[0], g_out[1]};
  const char* names[4] = {"elman_h", "elman_ys", "gru_h", "gru_ys"};
  shp_program_t* p;
  check(shp_program_create(s, ins, 14, outs, names, 4, &p));
  shp_scope_destroy(s);
  return p;
}

/* ---- the plain C reference (double accumulation) ------------------------------------------- */

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* acc[b][j] = bias[j] + sum_k x[b][k] w[k][j] + sum_k h[b][k] u[k][j] */
static void affine(const float* x, const float* w, const double* h, const float* u,
                   const float* bias, double acc[B][H]) {
  for (int r = 0; r < B; ++r) {
    for (int j = 0; j < H; ++j) {
      double a = bias[j];
      for (int k = 0; k < I; ++k) a += (double)x[r * I + k] * w[k * H + j];
      for (int k = 0; k < H; ++k) a += h[r * H + k] * u[k * H + j];
      acc[r][j] = a;
    }
  }
}

/* Runs both networks over `len` steps: elman_ys/gru_ys [len, B, H], the last h in *_h. */
static void reference(const weights_t* wt, const float* xs, const float* h0, int64_t len,
                      double* elman_ys, double* elman_h, double* gru_ys, double* gru_h) {
  double he[B * H], hg[B * H], a[B][H], z[B][H], r[B][H], rh[B * H];
  for (int k = 0; k < B * H; ++k) he[k] = hg[k] = h0[k];
  for (int64_t t = 0; t < len; ++t) {
    const float* x = xs + t * B * I;
    affine(x, wt->wx, he, wt->wh, wt->b, a);
    for (int k = 0; k < B * H; ++k) he[k] = tanh(a[k / H][k % H]);
    affine(x, wt->w[0], hg, wt->u[0], wt->bg[0], z);
    affine(x, wt->w[1], hg, wt->u[1], wt->bg[1], r);
    for (int k = 0; k < B * H; ++k) {
      z[k / H][k % H] = sigmoid(z[k / H][k % H]);
      rh[k] = sigmoid(r[k / H][k % H]) * hg[k];
    }
    affine(x, wt->w[2], rh, wt->u[2], wt->bg[2], a);
    for (int k = 0; k < B * H; ++k) {
      double zz = z[k / H][k % H];
      hg[k] = (1 - zz) * tanh(a[k / H][k % H]) + zz * hg[k];
    }
    memcpy(elman_ys + t * B * H, he, sizeof he);
    memcpy(gru_ys + t * B * H, hg, sizeof hg);
  }
  memcpy(elman_h, he, sizeof he);
  memcpy(gru_h, hg, sizeof hg);
}

/* Max |got - want| over n values, and whether got has the expected shape. */
static double max_abs_err(const shp_array_t* got, const int64_t* shape, size_t rank,
                          const double* want, int64_t n) {
  if (shp_array_rank(got) != rank) return INFINITY;
  for (size_t d = 0; d < rank; ++d) {
    if (shp_array_shape(got)[d] != shape[d]) return INFINITY;
  }
  const float* g = shp_array_data(got);
  double e = 0;
  for (int64_t k = 0; k < n; ++k) e = fmax(e, fabs(g[k] - want[k]));
  return e;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "rnn.shpoly";
  printf("libshapepoly %s (ABI %d)\n", shp_version_string(), (int)shp_abi_version());
  unsigned seed = 7;
  weights_t wt;
  float sx = 1.0f / sqrtf((float)I), sh = 1.0f / sqrtf((float)H);
  wt.wx = random_floats(I * H, sx, &seed);
  wt.wh = random_floats(H * H, sh, &seed);
  wt.b = random_floats(H, 0.1f, &seed);
  for (int g = 0; g < 3; ++g) {
    wt.w[g] = random_floats(I * H, sx, &seed);
    wt.u[g] = random_floats(H * H, sh, &seed);
    wt.bg[g] = random_floats(H, 0.1f, &seed);
  }

  /* 1. Trace once (symbolic seq >= 0), save, load. */
  shp_program_t* traced = trace_rnns(&wt);
  shp_buffer_t* bytes;
  check(shp_program_serialize(traced, &bytes));
  shp_program_destroy(traced);
  FILE* f = fopen(path, "wb");
  if (f == NULL ||
      fwrite(shp_buffer_data(bytes), 1, shp_buffer_size(bytes), f) != shp_buffer_size(bytes)) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  fclose(f);
  printf("saved %s (%zu bytes)\n", path, shp_buffer_size(bytes));
  shp_buffer_destroy(bytes);
  f = fopen(path, "rb");
  if (f == NULL) return 1;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* data = malloc((size_t)size);
  if (fread(data, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  shp_program_t* program;
  check(shp_program_load(data, (size_t)size, &program));
  free(data);
  char shape[64];
  size_t len;
  printf("loaded:");
  for (size_t i = 0; i < 2; ++i) {
    check(shp_program_input_shape_string(program, i, shape, sizeof shape, &len));
    printf(" %s: f32%s", shp_program_input_name(program, i), shape);
  }
  printf(" ->");
  for (size_t i = 0; i < shp_program_output_count(program); ++i) {
    check(shp_program_output_shape_string(program, i, shape, sizeof shape, &len));
    printf(" %s: f32%s", shp_program_output_name(program, i), shape);
  }
  printf("\n");

  /* 2. One runtime, four sequence lengths (0: the outputs are h0 and empty ys). */
  shp_runtime_t* rt;
  check(shp_runtime_create(program, NULL, &rt));
  shp_program_destroy(program);
  const int64_t lengths[4] = {0, 1, 7, 100};
  const char* in_names[2] = {"xs", "h0"};
  int failures = 0;
  for (int i = 0; i < 4; ++i) {
    int64_t n = lengths[i];
    int64_t xshape[3] = {n, B, I}, hshape[2] = {B, H}, yshape[3] = {n, B, H};
    float* xs = random_floats((size_t)(n * B * I), 1.0f, &seed);
    float* h0 = random_floats(B * H, 1.0f, &seed);
    shp_array_t *xa, *ha, *out[4];
    check(shp_array_wrap(SHP_F32, xshape, 3, xs, sizeof(float) * (size_t)(n * B * I), &xa));
    check(shp_array_wrap(SHP_F32, hshape, 2, h0, sizeof(float) * B * H, &ha));
    const shp_array_t* ins[2] = {xa, ha};
    check(shp_runtime_run(rt, in_names, ins, 2, out, 4));
    size_t ny = (size_t)(n > 0 ? n : 1) * B * H;
    double *eys = malloc(ny * sizeof(double)), *gys = malloc(ny * sizeof(double));
    double eh[B * H], gh[B * H];
    reference(&wt, xs, h0, n, eys, eh, gys, gh);
    double err[4] = {
        max_abs_err(out[0], hshape, 2, eh, B * H), max_abs_err(out[1], yshape, 3, eys, n * B * H),
        max_abs_err(out[2], hshape, 2, gh, B * H), max_abs_err(out[3], yshape, 3, gys, n * B * H)};
    double elman = fmax(err[0], err[1]), gru = fmax(err[2], err[3]);
    int ok = elman < TOL && gru < TOL;
    failures += !ok;
    printf("seq %3lld -> ys (%lld, %d, %d)  Elman max |err| %.1e  GRU max |err| %.1e  %s\n",
           (long long)n, (long long)(shp_array_rank(out[1]) == 3 ? shp_array_shape(out[1])[0] : -1),
           B, H, elman, gru, ok ? "ok" : "MISMATCH");
    for (int k = 0; k < 4; ++k) shp_array_destroy(out[k]);
    shp_array_destroy(xa);
    shp_array_destroy(ha);
    free(xs);
    free(h0);
    free(eys);
    free(gys);
  }
  printf("plan cache: %llu plans built, %llu hits\n",
         (unsigned long long)shp_runtime_plans_built(rt),
         (unsigned long long)shp_runtime_cache_hits(rt));
  shp_runtime_destroy(rt);
  free(wt.wx);
  free(wt.wh);
  free(wt.b);
  for (int g = 0; g < 3; ++g) {
    free(wt.w[g]);
    free(wt.u[g]);
    free(wt.bg[g]);
  }
  if (failures) printf("%d length(s) MISMATCH\n", failures);
  return failures ? 1 : 0;
}
