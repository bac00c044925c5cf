/*
 * Training-step benchmark of issue 10, our side through the public C API of libshapepoly.so,
 * with the peers (JAX, numpy; benchmarks/autodiff/peers.py) run in a child Python process in
 * the same run. The step is loss + gradients wrt all six weights of the MLP of examples/mlp
 * (784-256-256-10, f32, relu) under a softmax cross-entropy loss with integer labels
 * (benchmarks/autodiff/mlp_ref.py has the same definition for the peers):
 *
 *   steady  one step per call at batch 64 and 256, on 1 and 2 threads: shp_runtime_run of
 *           shp_program_grad(loss) with x, labels and the six weights bound by name (a
 *           training loop passes new weights every step), vs JAX jit(value_and_grad) and a
 *           numpy hand-written backprop on the same thread counts.
 *   first   the whole first step on an unseen batch (solve + plan build + compute) after one
 *           warm-up step at batch 1, vs JAX's first call of jit(value_and_grad) on a new shape
 *           (retrace + compile + compute) after its warm-up at batch 1; the plan build alone is
 *           printed as information.
 *   build   the time of shp_program_grad on a traced 1,001-op program (200 residual blocks
 *           h + 0.5 * tanh(h @ w + b) of width 32, then a sum; 400 parameters, the gradient wrt
 *           all of them), against its absolute target; JAX's make_jaxpr(value_and_grad) of the
 *           same function is information.
 *
 * Our timings are taken before and after the peers (interleaved halves); every figure is the
 * median of the repetitions. The weights, batches and our step's results at batch 64 are
 * written to a work directory; the peers check their loss and gradients against ours.
 *
 * Output: progress on stderr; on stdout `INFO ...` lines and
 *   ROW <scenario> | <ours> | <peer name> | <peer> | <ratio> | <target> | <verdict>
 * with times in microseconds, ratio = peer / ours (> 1: ours is faster) and the verdict met,
 * MISSED, n/a (peer figure missing) or - (the row has no target).
 *
 * Usage: train_bench --python PY --peers peers.py [--workdir DIR] [--quick]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shapepoly/shapepoly.h"

static void check(shp_error_t* err) {
  if (err == NULL) return;
  fprintf(stderr, "error %s: %s\n", shp_code_string(shp_error_code(err)), shp_error_message(err));
  shp_error_destroy(err);
  exit(1);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static float* random_floats(size_t n, float scale, unsigned* seed) {
  float* v = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    *seed = *seed * 1664525u + 1013904223u;
    v[i] = scale * ((float)(*seed >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

static void write_file(const char* dir, const char* name, const void* data, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, n, f) != n) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

/* The CPU model from /proc/cpuinfo ("unknown" elsewhere). */
static void cpu_model(char* out, size_t cap) {
  snprintf(out, cap, "unknown");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      const char* v = strchr(line, ':');
      if (v != NULL) {
        v += v[1] == ' ' ? 2 : 1;
        snprintf(out, cap, "%.*s", (int)strcspn(v, "\n"), v);
      }
      break;
    }
  }
  fclose(f);
}

/* ---- the training step ---- */

enum { IN = 784, H = 256, OUT = 10, NPARAM = 6 };
static const int64_t kDims[4] = {IN, H, H, OUT};
static const char* const kParamNames[NPARAM] = {"w0", "b0", "w1", "b1", "w2", "b2"};
static float* g_params[NPARAM]; /* w0, b0, w1, b1, w2, b2 */

static size_t param_size(int i) {
  return i % 2 ? (size_t)kDims[i / 2 + 1] : (size_t)(kDims[i / 2] * kDims[i / 2 + 1]);
}

static const shp_tensor_t* unary(shp_unary_op_t op, const shp_tensor_t* x) {
  const shp_tensor_t* y;
  check(shp_tensor_unary(op, x, &y));
  return y;
}

static const shp_tensor_t* binary(shp_binary_op_t op, const shp_tensor_t* a,
                                  const shp_tensor_t* b) {
  const shp_tensor_t* y;
  check(shp_tensor_binary(op, a, b, &y));
  return y;
}

static const shp_tensor_t* reduce_rows(shp_reduce_op_t op, const shp_tensor_t* x, bool keepdims) {
  const int64_t axis = 1;
  const shp_tensor_t* y;
  check(shp_tensor_reduce(op, x, &axis, 1, keepdims, &y));
  return y;
}

static shp_program_t* reload(shp_program_t* p) {
  shp_buffer_t* bytes;
  check(shp_program_serialize(p, &bytes));
  shp_program_destroy(p);
  shp_program_t* q;
  check(shp_program_load(shp_buffer_data(bytes), shp_buffer_size(bytes), &q));
  shp_buffer_destroy(bytes);
  return q;
}

/* The loss of mlp_ref.py: inputs x f32[batch, 784], labels i32[batch] and the six parameters;
 * loss = -mean(sum(take(eye(10), labels, 0) * log_softmax(mlp(x)), 1)), log_softmax written
 * as d - log(sum(exp(d), 1)) with d = logits - max(logits, 1). Serialized and loaded back, then
 * its gradient wrt every parameter: outputs loss, w0.grad, ..., b2.grad. */
static shp_program_t* train_step_program(void) {
  shp_scope_t* s;
  check(shp_scope_create(NULL, 0, &s));
  const shp_tensor_t *ins[2 + NPARAM], *zero, *eye, *h;
  check(shp_tensor_input(s, "x", SHP_F32, "batch, 784", &ins[0]));
  check(shp_tensor_input(s, "labels", SHP_I32, "batch", &ins[1]));
  for (int i = 0; i < NPARAM; ++i) {
    int64_t shape[2] = {kDims[i / 2], kDims[i / 2 + 1]};
    const int64_t* dims = i % 2 ? shape + 1 : shape;
    check(shp_tensor_parameter(s, kParamNames[i], SHP_F32, dims, i % 2 ? 1 : 2, g_params[i],
                               param_size(i) * sizeof(float), &ins[2 + i]));
  }
  const float zero_v = 0.0f;
  check(shp_tensor_constant(s, SHP_F32, NULL, 0, &zero_v, sizeof zero_v, &zero));
  float eye_v[OUT * OUT] = {0};
  for (int i = 0; i < OUT; ++i) eye_v[i * OUT + i] = 1.0f;
  const int64_t eye_shape[2] = {OUT, OUT};
  check(shp_tensor_constant(s, SHP_F32, eye_shape, 2, eye_v, sizeof eye_v, &eye));
  h = ins[0];
  for (int l = 0; l < 3; ++l) {
    const shp_tensor_t* z;
    check(shp_tensor_matmul(h, ins[2 + 2 * l], &z));
    h = binary(SHP_ADD, z, ins[3 + 2 * l]);
    if (l < 2) h = binary(SHP_MAX, h, zero);
  }
  const shp_tensor_t* d = binary(SHP_SUB, h, reduce_rows(SHP_REDUCE_MAX, h, true));
  const shp_tensor_t* lse = unary(SHP_LOG, reduce_rows(SHP_REDUCE_SUM, unary(SHP_EXP, d), true));
  const shp_tensor_t *onehot, *loss;
  check(shp_tensor_take(eye, ins[1], 0, &onehot));
  const shp_tensor_t* picked =
      reduce_rows(SHP_REDUCE_SUM, binary(SHP_MUL, onehot, binary(SHP_SUB, d, lse)), false);
  check(shp_tensor_reduce(SHP_REDUCE_MEAN, picked, NULL, 0, false, &loss));
  loss = unary(SHP_NEG, loss);
  const char* name = "loss";
  shp_program_t* p;
  check(shp_program_create(s, ins, 2 + NPARAM, &loss, &name, 1, &p));
  shp_scope_destroy(s);
  p = reload(p);
  shp_program_t* g;
  check(shp_program_grad(p, "loss", kParamNames, NPARAM, &g));
  shp_program_destroy(p);
  return g;
}

/* One batch: its data and the arrays bound by name at every step (x, labels, the weights). */
typedef struct {
  int64_t n;
  float* x;
  int32_t* labels;
  shp_array_t* arrays[2 + NPARAM];
} Batch;

static const char* const kInputNames[2 + NPARAM] = {"x",  "labels", "w0", "b0",
                                                    "w1", "b1",     "w2", "b2"};

static void batch_init(Batch* b, int64_t n, unsigned seed) {
  b->n = n;
  b->x = random_floats((size_t)(n * IN), 1.0f, &seed);
  b->labels = malloc(sizeof(int32_t) * (size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    b->labels[i] = (int32_t)((seed >> 8) % OUT);
  }
  int64_t xs[2] = {n, IN};
  check(shp_array_wrap(SHP_F32, xs, 2, b->x, (size_t)(n * IN) * sizeof(float), &b->arrays[0]));
  check(shp_array_wrap(SHP_I32, &n, 1, b->labels, (size_t)n * sizeof(int32_t), &b->arrays[1]));
  for (int i = 0; i < NPARAM; ++i) {
    int64_t shape[2] = {kDims[i / 2], kDims[i / 2 + 1]};
    check(shp_array_wrap(SHP_F32, i % 2 ? shape + 1 : shape, i % 2 ? 1 : 2, g_params[i],
                         param_size(i) * sizeof(float), &b->arrays[2 + i]));
  }
}

static void batch_free(Batch* b) {
  for (int i = 0; i < 2 + NPARAM; ++i) shp_array_destroy(b->arrays[i]);
  free(b->x);
  free(b->labels);
}

/* One training step; `result` (may be NULL) receives the loss then every gradient. */
static void step(shp_runtime_t* rt, const Batch* b, float* result) {
  shp_array_t* outs[1 + NPARAM];
  check(shp_runtime_run(rt, kInputNames, (const shp_array_t* const*)b->arrays, 2 + NPARAM, outs,
                        1 + NPARAM));
  for (int i = 0; i < 1 + NPARAM; ++i) {
    if (result != NULL) {
      memcpy(result, shp_array_data(outs[i]), shp_array_nbytes(outs[i]));
      result += shp_array_nbytes(outs[i]) / sizeof(float);
    }
    shp_array_destroy(outs[i]);
  }
}

static size_t result_floats(void) {
  size_t n = 1;
  for (int i = 0; i < NPARAM; ++i) n += param_size(i);
  return n;
}

static shp_runtime_t* make_runtime(const shp_program_t* p, int threads) {
  shp_runtime_options_t* o;
  check(shp_runtime_options_create(&o));
  check(shp_runtime_options_set_num_threads(o, threads));
  shp_runtime_t* rt;
  check(shp_runtime_create(p, o, &rt));
  shp_runtime_options_destroy(o);
  return rt;
}

/* ---- measurements ---- */

static void steady_measure(shp_runtime_t* rt, const Batch* b, int reps, int calls, double* t,
                           int* k) {
  step(rt, b, NULL); /* plan + warm-up */
  for (int r = 0; r < reps; ++r, ++*k) {
    double t0 = now_ns();
    for (int i = 0; i < calls; ++i) step(rt, b, NULL);
    t[*k] = (now_ns() - t0) / calls / 1e3;
  }
}

/* Whole first steps on unseen batches: a fresh runtime (every thread), warmed up at batch 1 as
 * JAX is; each timed batch is new to it (a plan cache miss). Fills wall and plan-build times. */
static void first_measure(const shp_program_t* p, const int64_t* batches, int nb, double* wall,
                          double* plan, int* k) {
  shp_runtime_t* rt = make_runtime(p, 0);
  Batch warm;
  batch_init(&warm, 1, 3);
  step(rt, &warm, NULL);
  batch_free(&warm);
  for (int i = 0; i < nb; ++i, ++*k) {
    Batch b;
    batch_init(&b, batches[i], 100 + (unsigned)i);
    uint64_t built = shp_runtime_plans_built(rt);
    double t0 = now_ns();
    step(rt, &b, NULL);
    wall[*k] = (now_ns() - t0) / 1e3;
    if (shp_runtime_plans_built(rt) != built + 1) {
      fprintf(stderr, "first: batch %lld was not a new plan\n", (long long)batches[i]);
      exit(1);
    }
    plan[*k] = (double)shp_runtime_last_plan_build_ns(rt) / 1e3;
    batch_free(&b);
  }
  shp_runtime_destroy(rt);
}

enum { DEEP_BLOCKS = 200, DEEP_WIDTH = 32 };

/* The 1,001-op program of the build scenario: h = x (f32[batch, 32]); 200 times
 * h = h + 0.5 * tanh(h @ w_i + b_i) (5 ops); loss = sum(h). The w_i and b_i are parameters. */
static shp_program_t* deep_program(void) {
  shp_scope_t* s;
  check(shp_scope_create(NULL, 0, &s));
  const shp_tensor_t** ins = malloc(sizeof *ins * (1 + 2 * DEEP_BLOCKS));
  check(shp_tensor_input(s, "x", SHP_F32, "batch, 32", &ins[0]));
  unsigned seed = 5;
  float* w = random_floats(DEEP_WIDTH * DEEP_WIDTH, 0.2f, &seed);
  float* bias = random_floats(DEEP_WIDTH, 0.1f, &seed);
  const float half_v = 0.5f;
  const shp_tensor_t *half, *h = ins[0], *loss;
  check(shp_tensor_constant(s, SHP_F32, NULL, 0, &half_v, sizeof half_v, &half));
  const int64_t ws[2] = {DEEP_WIDTH, DEEP_WIDTH};
  for (int i = 0; i < DEEP_BLOCKS; ++i) {
    char wn[16], bn[16];
    snprintf(wn, sizeof wn, "w%d", i);
    snprintf(bn, sizeof bn, "b%d", i);
    const shp_tensor_t **wt = &ins[1 + 2 * i], **bt = &ins[2 + 2 * i], *z;
    check(shp_tensor_parameter(s, wn, SHP_F32, ws, 2, w, sizeof(float) * DEEP_WIDTH * DEEP_WIDTH,
                               wt));
    check(shp_tensor_parameter(s, bn, SHP_F32, ws, 1, bias, sizeof(float) * DEEP_WIDTH, bt));
    check(shp_tensor_matmul(h, *wt, &z));
    h = binary(SHP_ADD, h, binary(SHP_MUL, half, unary(SHP_TANH, binary(SHP_ADD, z, *bt))));
  }
  check(shp_tensor_reduce(SHP_REDUCE_SUM, h, NULL, 0, false, &loss));
  const char* name = "loss";
  shp_program_t* p;
  check(shp_program_create(s, ins, 1 + 2 * DEEP_BLOCKS, &loss, &name, 1, &p));
  shp_scope_destroy(s);
  free(ins);
  free(w);
  free(bias);
  return p;
}

/* Times shp_program_grad of `p` wrt every parameter (inputs 1..). */
static void grad_build_measure(const shp_program_t* p, int reps, double* t, int* k) {
  const size_t n = shp_program_input_count(p) - 1;
  const char** wrt = malloc(sizeof *wrt * n);
  for (size_t i = 0; i < n; ++i) wrt[i] = shp_program_input_name(p, i + 1);
  for (int r = 0; r < reps; ++r, ++*k) {
    shp_program_t* g;
    double t0 = now_ns();
    check(shp_program_grad(p, "loss", wrt, n, &g));
    t[*k] = (now_ns() - t0) / 1e3;
    if (shp_program_output_count(g) != 1 + n) {
      fprintf(stderr, "build: the grad program has %zu outputs, expected %zu\n",
              shp_program_output_count(g), 1 + n);
      exit(1);
    }
    shp_program_destroy(g);
  }
  free(wrt);
}

/* FNV-1a 64 of the serialized bytes of `p`: equal hashes mean the same program. */
static uint64_t serialized_hash(const shp_program_t* p, size_t* size) {
  shp_buffer_t* buf;
  check(shp_program_serialize(p, &buf));
  const unsigned char* d = shp_buffer_data(buf);
  *size = shp_buffer_size(buf);
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < *size; ++i) h = (h ^ d[i]) * 1099511628211ull;
  shp_buffer_destroy(buf);
  return h;
}

/* --build-only N: the build scenario alone (for profiling): N timed grads of the 1,001-op
 * program after one warm-up, then the median, min and max of wall and thread CPU time, and the
 * hash of the serialized grad program (a change that must keep the program can compare it). */
static int build_only(int reps) {
  shp_program_t* deep = deep_program();
  const size_t n = shp_program_input_count(deep) - 1;
  const char** wrt = malloc(sizeof *wrt * n);
  for (size_t i = 0; i < n; ++i) wrt[i] = shp_program_input_name(deep, i + 1);
  double* wall = malloc(sizeof *wall * (size_t)reps);
  double* cpu = malloc(sizeof *cpu * (size_t)reps);
  shp_program_t* g;
  check(shp_program_grad(deep, "loss", wrt, n, &g)); /* warm-up */
  size_t size;
  const uint64_t hash = serialized_hash(g, &size);
  shp_program_destroy(g);
  for (int r = 0; r < reps; ++r) {
    double t0 = now_ns(), c0 = cpu_ns();
    check(shp_program_grad(deep, "loss", wrt, n, &g));
    cpu[r] = (cpu_ns() - c0) / 1e3;
    wall[r] = (now_ns() - t0) / 1e3;
    shp_program_destroy(g);
  }
  const double mw = median(wall, reps), mc = median(cpu, reps); /* sorts both */
  printf(
      "grad build of the 1,001-op program, %d reps (us): wall median %.1f [min %.1f, max %.1f],"
      " cpu median %.1f [min %.1f, max %.1f]\n",
      reps, mw, wall[0], wall[reps - 1], mc, cpu[0], cpu[reps - 1]);
  printf("grad program: %zu serialized bytes, fnv1a64 %016llx\n", size, (unsigned long long)hash);
  free(wall);
  free(cpu);
  free(wrt);
  shp_program_destroy(deep);
  return 0;
}

/* ---- peers ---- */

typedef struct {
  char key[64];
  double value;
} PeerValue;
static PeerValue g_peer[64];
static int g_npeer;

static double peer(const char* key) {
  for (int i = 0; i < g_npeer; ++i) {
    if (strcmp(g_peer[i].key, key) == 0) return g_peer[i].value;
  }
  return NAN;
}

static void run_peers(const char* python, const char* script, const char* dir, int quick) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' '%s' --workdir '%s'%s", python, script, dir,
           quick ? " --quick" : "");
  fprintf(stderr, "peers: %s\n", cmd);
  FILE* f = popen(cmd, "r");
  if (f == NULL) {
    perror("popen");
    exit(1);
  }
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char key[64];
    double v;
    if (sscanf(line, "PEER %63s %lf", key, &v) == 2 && g_npeer < 64) {
      snprintf(g_peer[g_npeer].key, sizeof g_peer[g_npeer].key, "%s", key);
      g_peer[g_npeer++].value = v;
    } else {
      fputs(line, stderr);
    }
  }
  if (pclose(f) != 0) {
    fprintf(stderr, "peers failed\n");
    exit(1);
  }
}

typedef enum { NO_TARGET, MIN_RATIO, MAX_OURS_US } TargetKind;

static void row(const char* scenario, double ours, const char* peer_name, double peer_v,
                TargetKind kind, double target) {
  char peer_s[32] = "-", ratio_s[32] = "-", target_s[32] = "-";
  const char* verdict = "-";
  if (peer_name[0] != '\0') {
    snprintf(peer_s, sizeof peer_s, "%.4g", peer_v);
    snprintf(ratio_s, sizeof ratio_s, "%.3g", peer_v / ours);
  } else {
    peer_name = "-";
  }
  if (kind == MIN_RATIO) {
    snprintf(target_s, sizeof target_s, ">= %gx", target);
    verdict = !(isfinite(peer_v) && peer_v > 0) ? "n/a"
              : peer_v / ours >= target         ? "met"
                                                : "MISSED";
  } else if (kind == MAX_OURS_US) {
    snprintf(target_s, sizeof target_s, "<= %g us", target);
    verdict = ours <= target ? "met" : "MISSED";
  }
  printf("ROW %s | %.4g | %s | %s | %s | %s | %s\n", scenario, ours, peer_name, peer_s, ratio_s,
         target_s, verdict);
}

int main(int argc, char** argv) {
  const char *python = NULL, *script = NULL, *workdir = NULL;
  int quick = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--python") == 0 && i + 1 < argc)
      python = argv[++i];
    else if (strcmp(argv[i], "--peers") == 0 && i + 1 < argc)
      script = argv[++i];
    else if (strcmp(argv[i], "--workdir") == 0 && i + 1 < argc)
      workdir = argv[++i];
    else if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--build-only") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
      return build_only(atoi(argv[i + 1]));
    else {
      fprintf(
          stderr,
          "usage: %s [--python PY --peers peers.py] [--workdir DIR] [--quick] | --build-only N\n",
          argv[0]);
      return 2;
    }
  }
  char tmpdir[] = "/tmp/shp_train_bench.XXXXXX";
  if (workdir == NULL) {
    if (mkdtemp(tmpdir) == NULL) {
      perror("mkdtemp");
      return 1;
    }
    workdir = tmpdir;
  }
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  printf("INFO libshapepoly %s, CPU %s, %d cpus, SIMD target %s\n", shp_version_string(), cpu,
         (int)sysconf(_SC_NPROCESSORS_ONLN), shp_simd_target());

  unsigned seed = 42;
  for (int i = 0; i < NPARAM; ++i) {
    float scale = i % 2 ? 0.1f : 1.0f / sqrtf((float)kDims[i / 2]);
    g_params[i] = random_floats(param_size(i), scale, &seed);
    char name[32];
    snprintf(name, sizeof name, "%s.f32", kParamNames[i]);
    write_file(workdir, name, g_params[i], param_size(i) * sizeof(float));
  }
  enum { NB = 2, NT = 2 };
  const int64_t batches[NB] = {64, 256};
  const int threads[NT] = {1, 2};
  Batch data[NB];
  for (int b = 0; b < NB; ++b) {
    char name[32];
    batch_init(&data[b], batches[b], 1000u + (unsigned)b);
    snprintf(name, sizeof name, "x%lld.f32", (long long)batches[b]);
    write_file(workdir, name, data[b].x, (size_t)(batches[b] * IN) * sizeof(float));
    snprintf(name, sizeof name, "labels%lld.i32", (long long)batches[b]);
    write_file(workdir, name, data[b].labels, (size_t)batches[b] * sizeof(int32_t));
  }

  shp_program_t* grad = train_step_program();
  shp_runtime_t* rts[NT];
  for (int t = 0; t < NT; ++t) rts[t] = make_runtime(grad, threads[t]);
  /* Our step at batch 64, for the peers' check. */
  float* result = malloc(result_floats() * sizeof(float));
  step(rts[0], &data[0], result);
  write_file(workdir, "ours64.f32", result, result_floats() * sizeof(float));
  printf("INFO loss at batch 64: %.6f\n", (double)result[0]);
  free(result);

  const int reps = quick ? 2 : 4; /* per half */
  const int calls[NB] = {quick ? 5 : 20, quick ? 2 : 6};
  const int64_t first_a[] = {3, 17, 45, 77, 130, 257, 513};
  const int64_t first_b[] = {5, 19, 47, 79, 131, 259, 515};
  const int nfirst = quick ? 3 : 7;
  const int build_reps = quick ? 5 : 15; /* per half */

  double st[NB][NT][16], wall[16], plan[16], build[32];
  int kst[NB][NT] = {{0}}, kf = 0, kb = 0;
  shp_program_t* deep = deep_program();
  for (int half = 0; half < 2; ++half) {
    if (half == 1 && python && script) run_peers(python, script, workdir, quick);
    for (int b = 0; b < NB; ++b) {
      for (int t = 0; t < NT; ++t) {
        steady_measure(rts[t], &data[b], reps, calls[b], st[b][t], &kst[b][t]);
      }
    }
    first_measure(grad, half ? first_b : first_a, nfirst, wall, plan, &kf);
    grad_build_measure(deep, build_reps, build, &kb);
  }

  const double t_wall = median(wall, kf), t_plan = median(plan, kf), t_build = median(build, kb);
  printf("INFO first step on an unseen batch: plan build %.1f us (median) of the whole step\n",
         t_plan);
  for (int b = 0; b < NB; ++b) {
    for (int t = 0; t < NT; ++t) {
      printf("OURS steady%lld_t%d_us %.3f\n", (long long)batches[b], threads[t],
             median(st[b][t], kst[b][t]));
    }
  }
  printf("OURS first_wall_us %.3f\nOURS grad_build_us %.3f\n", t_wall, t_build);
  if (!(python && script)) return 0;

  const char* peers[2][2] = {{"jax", "JAX jit(value_and_grad)"}, {"numpy", "numpy backprop"}};
  for (int b = 0; b < NB; ++b) {
    for (int t = 0; t < NT; ++t) {
      char scen[128];
      snprintf(scen, sizeof scen, "train step batch %lld, %d thread%s", (long long)batches[b],
               threads[t], threads[t] > 1 ? "s" : "");
      const double ours = median(st[b][t], kst[b][t]);
      double best = INFINITY;
      const char* best_name = "";
      for (int i = 0; i < 2; ++i) {
        char key[64];
        snprintf(key, sizeof key, "steady%lld_t%d_%s_us", (long long)batches[b], threads[t],
                 peers[i][0]);
        double v = peer(key);
        row(scen, ours, peers[i][1], v, NO_TARGET, 0);
        if (v < best) best = v, best_name = peers[i][1];
      }
      char bn[64];
      snprintf(bn, sizeof bn, "best (%s)", best_name);
      row(scen, ours, bn, best, MIN_RATIO, 1.0);
    }
  }
  row("train step unseen batch: plan build", t_plan, "", NAN, NO_TARGET, 0);
  row("train step unseen batch: first call", t_wall, "JAX first call", peer("first_jax_us"),
      MIN_RATIO, 100.0);
  row("grad of a 1,001-op program", t_build, "", NAN, MAX_OURS_US, 5000.0);
  row("grad of a 1,001-op program", t_build, "JAX make_jaxpr(v_and_g)", peer("grad_build_jax_us"),
      NO_TARGET, 0);

  for (int t = 0; t < NT; ++t) shp_runtime_destroy(rts[t]);
  for (int b = 0; b < NB; ++b) batch_free(&data[b]);
  for (int i = 0; i < NPARAM; ++i) free(g_params[i]);
  shp_program_destroy(deep);
  shp_program_destroy(grad);
  return 0;
}
