/*
 * The demo MLP (784-256-256-10, relu, softmax) in half precision: an f16 copy and a bf16 copy of
 * the f32 model (weights rounded to nearest even), each traced once with a symbolic batch, saved
 * and loaded, and run at batch 1, 7, 64 and 1000. Inputs, weights and outputs are 16-bit; the
 * library computes every op in f32 and rounds its result once. Each result must be within 1e-2
 * (max-norm relative) of the f32 model's on the same inputs; the program exits 1 otherwise.
 *
 * Usage: mlp_narrow [DIR]   (where the .shpoly files go; default: the current directory)
 */
#include <math.h>
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

enum { IN = 784, H = 256, OUT = 10 };
static const int64_t kDims[4] = {IN, H, H, OUT};
static const char* const kNames[6] = {"w1", "b1", "w2", "b2", "w3", "b3"};

/* ---- 16-bit floats: this example's own conversions (round to nearest even) ---- */

static uint16_t f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static float bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static uint16_t f32_to_f16(float f) {
  /* Through the exact scaling of frexp: the weights and inputs here are finite and small. */
  uint16_t sign = signbit(f) ? 0x8000u : 0;
  float a = fabsf(f);
  if (a == 0) return sign;
  if (a >= 65520.0f) return sign | 0x7c00u;
  int e;
  frexpf(a, &e); /* a in [2^(e-1), 2^e) */
  int exp = e - 1 < -14 ? -14 : e - 1;
  float q = nearbyintf(ldexpf(a, 10 - exp)); /* the significand, rounded to nearest even */
  if (q >= 2048.0f) {
    q /= 2;
    exp += 1;
  }
  if (exp > 15) return sign | 0x7c00u;
  if (q < 1024.0f) return sign | (uint16_t)q; /* subnormal */
  return sign | (uint16_t)((exp + 15) << 10) | (uint16_t)((int)q - 1024);
}

static float f16_to_f32(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v = exp == 0 ? ldexpf((float)mant, -24) : ldexpf((float)(mant | 0x400), exp - 25);
  if (exp == 31) v = mant ? NAN : INFINITY;
  return (h & 0x8000u) ? -v : v;
}

/* Elements of dtype t (f32, f16 or bf16) from floats, and back. */
static void* encode(shp_dtype_t t, const float* v, size_t n) {
  if (t == SHP_F32) {
    float* out = malloc(n * sizeof(float));
    memcpy(out, v, n * sizeof(float));
    return out;
  }
  uint16_t* out = malloc(n * sizeof(uint16_t));
  for (size_t i = 0; i < n; ++i) out[i] = t == SHP_F16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
  return out;
}

static float decode(shp_dtype_t t, const void* p, size_t i) {
  if (t == SHP_F32) return ((const float*)p)[i];
  uint16_t h = ((const uint16_t*)p)[i];
  return t == SHP_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

static size_t esize(shp_dtype_t t) { return t == SHP_F32 ? 4 : 2; }

static float* random_floats(size_t n, float scale, unsigned* seed) {
  float* v = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    *seed = *seed * 1664525u + 1013904223u;
    v[i] = scale * ((float)(*seed >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

/* Traces softmax(relu(relu(x w1 + b1) w2 + b2) w3 + b3) in dtype t, saves it to `path`, and
 * returns the program loaded back from that file. */
static shp_program_t* build(shp_dtype_t t, float* const* params, const char* path) {
  shp_scope_t* s;
  check(shp_scope_create(NULL, 0, &s));
  const shp_tensor_t* ins[7];
  check(shp_tensor_input(s, "x", t, "batch, 784", &ins[0]));
  const shp_tensor_t* h = ins[0];
  for (int l = 0; l < 3; ++l) {
    int64_t ws[2] = {kDims[l], kDims[l + 1]}, bs[1] = {kDims[l + 1]};
    size_t nw = (size_t)(ws[0] * ws[1]), nb = (size_t)bs[0];
    void* w = encode(t, params[2 * l], nw);
    void* b = encode(t, params[2 * l + 1], nb);
    check(shp_tensor_parameter(s, kNames[2 * l], t, ws, 2, w, nw * esize(t), &ins[1 + 2 * l]));
    check(shp_tensor_parameter(s, kNames[2 * l + 1], t, bs, 1, b, nb * esize(t), &ins[2 + 2 * l]));
    free(w);
    free(b);
    const shp_tensor_t *y, *z;
    check(shp_tensor_matmul(h, ins[1 + 2 * l], &y));
    check(shp_tensor_binary(SHP_ADD, y, ins[2 + 2 * l], &z));
    h = z;
    if (l < 2) {
      float zero = 0.0f;
      void* zb = encode(t, &zero, 1);
      const shp_tensor_t *zt, *r;
      check(shp_tensor_constant(s, t, NULL, 0, zb, esize(t), &zt));
      free(zb);
      check(shp_tensor_binary(SHP_MAX, z, zt, &r));
      h = r;
    }
  }
  const shp_tensor_t* probs;
  check(shp_tensor_softmax(h, -1, &probs));
  const char* out_name = "probs";
  shp_program_t* p;
  check(shp_program_create(s, ins, 7, &probs, &out_name, 1, &p));
  check(shp_program_save_file(p, path));
  shp_program_destroy(p);
  shp_scope_destroy(s);
  shp_program_t* loaded;
  check(shp_program_load_file(path, &loaded));
  return loaded;
}

/* Runs `p` (dtype t) on the floats x (batch x 784) and returns the probabilities as floats. */
static float* run(shp_runtime_t* rt, shp_dtype_t t, const float* x, int64_t batch) {
  void* xs = encode(t, x, (size_t)(batch * IN));
  int64_t shape[2] = {batch, IN};
  shp_array_t *xa, *out;
  check(shp_array_wrap(t, shape, 2, xs, (size_t)(batch * IN) * esize(t), &xa));
  const char* name = "x";
  check(shp_runtime_run(rt, &name, (const shp_array_t* const*)&xa, 1, &out, 1));
  float* probs = malloc(sizeof(float) * (size_t)(batch * OUT));
  const void* data = shp_array_data(out);
  if (shp_array_dtype(out) != t) {
    fprintf(stderr, "output dtype %d, expected %d\n", (int)shp_array_dtype(out), (int)t);
    exit(1);
  }
  for (int64_t i = 0; i < batch * OUT; ++i) probs[i] = decode(t, data, (size_t)i);
  shp_array_destroy(out);
  shp_array_destroy(xa);
  free(xs);
  return probs;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  unsigned seed = 42;
  float* params[6];
  for (int l = 0; l < 3; ++l) {
    params[2 * l] =
        random_floats((size_t)(kDims[l] * kDims[l + 1]), 1.0f / sqrtf((float)kDims[l]), &seed);
    params[2 * l + 1] = random_floats((size_t)kDims[l + 1], 0.1f, &seed);
  }
  const shp_dtype_t types[3] = {SHP_F32, SHP_F16, SHP_BF16};
  const char* names[3] = {"f32", "f16", "bf16"};
  shp_runtime_t* rts[3];
  for (int k = 0; k < 3; ++k) {
    char path[4096];
    snprintf(path, sizeof path, "%s/mlp_%s.shpoly", dir, names[k]);
    shp_program_t* p = build(types[k], params, path);
    check(shp_runtime_create(p, NULL, &rts[k]));
    shp_program_destroy(p);
  }
  const int64_t batches[4] = {1, 7, 64, 1000};
  int failed = 0;
  for (int i = 0; i < 4; ++i) {
    int64_t n = batches[i];
    float* x = random_floats((size_t)(n * IN), 1.0f, &seed);
    float* want = run(rts[0], SHP_F32, x, n);
    double scale = 0;
    for (int64_t j = 0; j < n * OUT; ++j) scale = fmax(scale, fabs(want[j]));
    for (int k = 1; k < 3; ++k) {
      float* got = run(rts[k], types[k], x, n);
      double err = 0;
      for (int64_t j = 0; j < n * OUT; ++j) err = fmax(err, fabs(got[j] - want[j]));
      const double rel = err / scale;
      printf("batch %4lld  %-4s  max |p - p_f32| / max |p_f32| = %.2e  %s\n", (long long)n,
             names[k], rel, rel <= 1e-2 ? "ok" : "TOO FAR");
      failed |= !(rel <= 1e-2);
      free(got);
    }
    free(want);
    free(x);
  }
  for (int k = 0; k < 3; ++k) shp_runtime_destroy(rts[k]);
  for (int k = 0; k < 6; ++k) free(params[k]);
  printf(failed ? "FAILED\n" : "f16 and bf16 MLPs agree with f32 within 1e-2 at every batch\n");
  return failed;
}
