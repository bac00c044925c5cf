/*
 * Compiled-function benchmarks of issue 12, our side through the public C API of
 * libshapepoly.so, with the peers (JAX jax.jit, torch.compile when PyTorch is installed) run in a
 * child Python process (peers.py) in the same run:
 *
 *   overhead  a cached shp_function_call against a direct shp_runtime_run of the program that
 *             shp_function_export gives for the same function (the same variants), 1 thread, per
 *             call (output created + destroyed on both sides), on
 *             tiny  x + x on 8 f32 (input "x" of rank 1), and
 *             mlp   the MLP of examples/mlp (784-256-256-10, f32, relu, softmax) at batch 64.
 *   stream    1,000 calls of the MLP with random batch sizes 1..512 (fixed seed), 1 thread, each
 *             repetition on a fresh function (so its traces are timed): the number of traces and
 *             the whole stream's wall time, against the same stream through JAX jax.jit (a new
 *             XLA compile per new batch size) and torch.compile (default automatic dynamic);
 *             then the same stream again through the same compiled objects (information).
 *
 * Our timings are taken before and after the peers (interleaved halves); every figure is the
 * median of several repetitions, and in the overhead scenarios the function's and the runtime's
 * timed loops alternate. The MLP's weights, the stream's batch sizes, a 512-row input (call k
 * uses its first rows) and our outputs are written to a work directory for the peers, which
 * check their results against ours.
 *
 * Output: human-readable progress on stderr; machine-readable lines on stdout:
 *   ROW <scenario> | <ours> | <peer name> | <peer> | <ratio> | <target> | <verdict>
 * The verdict is met, MISSED, n/a (figure missing: not measured) or - (no target). In overhead
 * rows the peer is our own direct runtime and ratio = function / runtime (target <= 1.2x); in
 * stream rows ratio = peer / ours (> 1: ours is faster).
 *
 * Usage: function_bench --python PY --peers peers.py [--workdir DIR] [--quick]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shapepoly/shapepoly.h"

/* After shapepoly.h, for bench_check. */
#include "benchmarks/bench_util.h"

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

/* ---- trace functions ---- */

static shp_error_t* trace_double(shp_scope_t* scope, const shp_tensor_t* const* inputs,
                                 size_t num_inputs, const shp_tensor_t** outputs,
                                 size_t num_outputs, void* user_data) {
  (void)scope, (void)num_inputs, (void)num_outputs, (void)user_data;
  return shp_tensor_binary(SHP_ADD, inputs[0], inputs[0], &outputs[0]);
}

/* The MLP of examples/mlp with the weights of benchmarks/runtime/runtime_bench.c (same seed). */
enum { IN = 784, H = 256, OUT = 10, MAX_BATCH = 512, STREAM = 1000 };
static const int64_t kDims[4] = {IN, H, H, OUT};
static float *g_w[3], *g_b[3];

static shp_error_t* dense(shp_scope_t* s, const shp_tensor_t* x, int layer,
                          const shp_tensor_t** y_out) {
  int64_t ws[2] = {kDims[layer], kDims[layer + 1]}, bs[1] = {kDims[layer + 1]};
  const shp_tensor_t *wt, *bt, *y, *z, *zt;
  shp_error_t* e;
  float zero = 0.0f;
  if ((e = shp_tensor_constant(s, SHP_F32, ws, 2, g_w[layer],
                               (size_t)(ws[0] * ws[1]) * sizeof(float), &wt)))
    return e;
  if ((e = shp_tensor_constant(s, SHP_F32, bs, 1, g_b[layer], (size_t)bs[0] * sizeof(float), &bt)))
    return e;
  if ((e = shp_tensor_matmul(x, wt, &y))) return e;
  if ((e = shp_tensor_binary(SHP_ADD, y, bt, &z))) return e;
  if (layer == 2) {
    *y_out = z;
    return NULL;
  }
  if ((e = shp_tensor_constant(s, SHP_F32, NULL, 0, &zero, sizeof zero, &zt))) return e;
  return shp_tensor_binary(SHP_MAX, z, zt, y_out);
}

static shp_error_t* trace_mlp(shp_scope_t* scope, const shp_tensor_t* const* inputs,
                              size_t num_inputs, const shp_tensor_t** outputs, size_t num_outputs,
                              void* user_data) {
  const shp_tensor_t* h = inputs[0];
  shp_error_t* e;
  (void)num_inputs, (void)num_outputs, (void)user_data;
  for (int l = 0; l < 3; ++l) {
    if ((e = dense(scope, h, l, &h))) return e;
  }
  return shp_tensor_softmax(h, -1, &outputs[0]);
}

static const char* kIn = "x";
static const char* kOut = "y";

/* A function with one f32 input "x" of rank `rank` and one output, 1 thread per kernel call. */
static shp_function_t* make_function(shp_trace_fn fn, size_t rank) {
  shp_function_options_t* o;
  bench_check(shp_function_options_create(&o));
  bench_check(shp_function_options_set_num_threads(o, 1));
  const shp_dtype_t dt = SHP_F32;
  shp_function_t* f;
  bench_check(shp_function_create(fn, NULL, &kIn, &dt, &rank, 1, &kOut, 1, o, &f));
  shp_function_options_destroy(o);
  return f;
}

/* A 1-thread runtime on the program the function exports (the same variants). */
static shp_runtime_t* export_runtime(const shp_function_t* f, shp_program_t** program_out) {
  bench_check(shp_function_export(f, program_out));
  shp_runtime_options_t* o;
  bench_check(shp_runtime_options_create(&o));
  bench_check(shp_runtime_options_set_num_threads(o, 1));
  shp_runtime_t* rt;
  bench_check(shp_runtime_create(*program_out, o, &rt));
  shp_runtime_options_destroy(o);
  return rt;
}

/* ---- overhead: cached function call vs direct runtime run ---- */

typedef struct {
  shp_function_t* fn;
  shp_program_t* program;
  shp_runtime_t* rt;
  shp_array_t* x;
  int calls;
  double fn_us[64], rt_us[64];
  int k;
} Overhead;

/* Traces `fn` once at the input's shape, exports it and checks that both paths agree. */
static void overhead_init(Overhead* o, shp_trace_fn fn, const int64_t* shape, size_t rank,
                          float* data, int calls) {
  size_t n = 1;
  for (size_t i = 0; i < rank; ++i) n *= (size_t)shape[i];
  memset(o, 0, sizeof *o);
  o->fn = make_function(fn, rank);
  bench_check(shp_array_wrap(SHP_F32, shape, rank, data, n * sizeof(float), &o->x));
  o->calls = calls;
  shp_array_t *a, *b;
  bench_check(shp_function_call(o->fn, &kIn, (const shp_array_t* const*)&o->x, 1, &a, 1));
  o->rt = export_runtime(o->fn, &o->program);
  bench_check(shp_runtime_run(o->rt, &kIn, (const shp_array_t* const*)&o->x, 1, &b, 1));
  if (shp_array_nbytes(a) != shp_array_nbytes(b) ||
      memcmp(shp_array_data(a), shp_array_data(b), shp_array_nbytes(a)) != 0) {
    fprintf(stderr, "overhead: the function and its exported program disagree\n");
    exit(1);
  }
  shp_array_destroy(a);
  shp_array_destroy(b);
}

static double time_function(Overhead* o) {
  shp_array_t* out;
  double t0 = bench_now_ns();
  for (int i = 0; i < o->calls; ++i) {
    bench_check(shp_function_call(o->fn, &kIn, (const shp_array_t* const*)&o->x, 1, &out, 1));
    shp_array_destroy(out);
  }
  return (bench_now_ns() - t0) / o->calls / 1e3;
}

static double time_runtime(Overhead* o) {
  shp_array_t* out;
  double t0 = bench_now_ns();
  for (int i = 0; i < o->calls; ++i) {
    bench_check(shp_runtime_run(o->rt, &kIn, (const shp_array_t* const*)&o->x, 1, &out, 1));
    shp_array_destroy(out);
  }
  return (bench_now_ns() - t0) / o->calls / 1e3;
}

/* `reps` repetitions; each times both paths, in alternating order, so drift hits both alike. */
static void overhead_measure(Overhead* o, int reps) {
  for (int r = 0; r < reps && o->k < 64; ++r, ++o->k) {
    if (r % 2 == 0) {
      o->fn_us[o->k] = time_function(o);
      o->rt_us[o->k] = time_runtime(o);
    } else {
      o->rt_us[o->k] = time_runtime(o);
      o->fn_us[o->k] = time_function(o);
    }
  }
}

static void overhead_destroy(Overhead* o) {
  uint64_t traces = shp_function_trace_count(o->fn);
  if (traces != 1) {
    fprintf(stderr, "overhead: %llu traces, expected 1 (a cached call traced)\n",
            (unsigned long long)traces);
    exit(1);
  }
  shp_runtime_destroy(o->rt);
  shp_program_destroy(o->program);
  shp_array_destroy(o->x);
  shp_function_destroy(o->fn);
}

/* ---- stream: 1,000 calls with random batch sizes on a fresh function ---- */

static int64_t g_stream[STREAM];
static float* g_x512;

/* One pass of the stream through `f`; its wall time in ms. The output of call `keep` is copied
 * to `kept` (NULL: none). */
static double stream_pass(shp_function_t* f, int keep, float* kept) {
  double t0 = bench_now_ns();
  for (int i = 0; i < STREAM; ++i) {
    int64_t shape[2] = {g_stream[i], IN};
    shp_array_t *xa, *out;
    bench_check(
        shp_array_wrap(SHP_F32, shape, 2, g_x512, (size_t)(g_stream[i] * IN) * sizeof(float), &xa));
    bench_check(shp_function_call(f, &kIn, (const shp_array_t* const*)&xa, 1, &out, 1));
    if (i == keep && kept) memcpy(kept, shp_array_data(out), shp_array_nbytes(out));
    shp_array_destroy(out);
    shp_array_destroy(xa);
  }
  return (bench_now_ns() - t0) / 1e6;
}

/* One whole stream on a fresh function (its traces timed), then the same stream again (every
 * size covered, only plans and compute: information). Returns the first pass in ms; the second
 * goes to `again_ms`, the number of traces of the first pass to `traces`. */
static double stream_once(uint64_t* traces, int keep, float* kept, double* again_ms) {
  shp_function_t* f = make_function(trace_mlp, 2);
  double ms = stream_pass(f, keep, kept);
  *traces = shp_function_trace_count(f);
  *again_ms = stream_pass(f, -1, NULL);
  if (shp_function_trace_count(f) != *traces) {
    fprintf(stderr, "stream: the second pass traced again\n");
    exit(1);
  }
  if (*traces > 2 || getenv("SHAPEPOLY_BENCH_EVENTS")) {
    for (size_t e = 0; e < shp_function_event_count(f); ++e)
      fprintf(stderr, "  event: %s\n", shp_function_event_text(f, e));
  }
  shp_function_destroy(f);
  return ms;
}

/* ---- peers ---- */

typedef struct {
  char key[64];
  double value;
} PeerValue;
static PeerValue g_peer[64];
static int g_npeer;
static char g_torch_note[256] = "";

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
    if (strncmp(line, "NOTE torch ", 11) == 0) {
      line[strcspn(line, "\n")] = '\0';
      snprintf(g_torch_note, sizeof g_torch_note, "%.250s", line + 11);
    } else if (sscanf(line, "PEER %63s %lf", key, &v) == 2 && g_npeer < 64) {
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

/* A row's target: none (information only), a maximum of ours / peer (overhead), a minimum of
 * peer / ours (speed against a peer), or a maximum of our own figure (no peer). */
typedef enum { NO_TARGET, MAX_OURS_OVER_PEER, MIN_PEER_OVER_OURS, MAX_OURS } TargetKind;

static void row(const char* scenario, double ours, const char* peer_name, double peer_v,
                TargetKind kind, double target) {
  char peer_s[32] = "-", ratio_s[32] = "-", target_s[32] = "-";
  const char* verdict = "-";
  const int have_peer = isfinite(peer_v) && peer_v > 0;
  const double ratio = kind == MAX_OURS_OVER_PEER ? ours / peer_v : peer_v / ours;
  if (peer_name[0] == '\0') peer_name = "-";
  if (have_peer) {
    snprintf(peer_s, sizeof peer_s, "%.4g", peer_v);
    snprintf(ratio_s, sizeof ratio_s, "%.3g", ratio);
  }
  if (kind == MAX_OURS_OVER_PEER) {
    snprintf(target_s, sizeof target_s, "<= %gx", target);
    verdict = bench_verdict_at_most(have_peer, ratio, target);
  } else if (kind == MIN_PEER_OVER_OURS) {
    snprintf(target_s, sizeof target_s, ">= %gx", target);
    verdict = bench_verdict_at_least(have_peer, ratio, target);
  } else if (kind == MAX_OURS) {
    snprintf(target_s, sizeof target_s, "<= %g", target);
    verdict = bench_verdict_at_most(1, ours, target);
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
    else {
      fprintf(stderr, "usage: %s [--python PY --peers peers.py] [--workdir DIR] [--quick]\n",
              argv[0]);
      return 2;
    }
  }
  char tmpdir[] = "/tmp/shp_function_bench.XXXXXX";
  if (workdir == NULL) {
    if (mkdtemp(tmpdir) == NULL) {
      perror("mkdtemp");
      return 1;
    }
    workdir = tmpdir;
  }
  printf("INFO libshapepoly %s\n", shp_version_string());
  bench_print_machine(1, shp_simd_target(), "1 thread on both sides");

  /* Weights as runtime_bench.c makes them (seed 42), then the inputs. */
  unsigned seed = 42;
  for (int l = 0; l < 3; ++l) {
    g_w[l] = random_floats((size_t)(kDims[l] * kDims[l + 1]), 1.0f / sqrtf((float)kDims[l]), &seed);
    g_b[l] = random_floats((size_t)kDims[l + 1], 0.1f, &seed);
  }
  g_x512 = random_floats((size_t)MAX_BATCH * IN, 1.0f, &seed);
  unsigned bseed = 12;
  for (int i = 0; i < STREAM; ++i) {
    bseed = bseed * 1664525u + 1013904223u;
    g_stream[i] = 1 + (int64_t)((bseed >> 8) % MAX_BATCH);
  }
  char name[32];
  for (int l = 0; l < 3; ++l) {
    snprintf(name, sizeof name, "w%d.f32", l);
    write_file(workdir, name, g_w[l], sizeof(float) * (size_t)(kDims[l] * kDims[l + 1]));
    snprintf(name, sizeof name, "b%d.f32", l);
    write_file(workdir, name, g_b[l], sizeof(float) * (size_t)kDims[l + 1]);
  }
  write_file(workdir, "x512.f32", g_x512, sizeof(float) * MAX_BATCH * IN);
  write_file(workdir, "stream.i64", g_stream, sizeof g_stream);

  const int reps = quick ? 3 : 7;
  const int stream_reps = quick ? 1 : 3; /* per half: 2 or 6 whole streams in all */

  float tiny_x[8];
  for (int i = 0; i < 8; ++i) tiny_x[i] = (float)i;
  const int64_t tiny_shape[1] = {8}, mlp_shape[2] = {64, IN};
  Overhead tiny, mlp;
  overhead_init(&tiny, trace_double, tiny_shape, 1, tiny_x, quick ? 20000 : 200000);
  overhead_init(&mlp, trace_mlp, mlp_shape, 2, g_x512, quick ? 20 : 100);
  time_function(&tiny), time_runtime(&tiny); /* warm-up */

  /* First half of ours. */
  overhead_measure(&tiny, reps);
  overhead_measure(&mlp, reps);
  double stream_ms[64], again_ms[64];
  uint64_t traces[64];
  int ks = 0;
  float* kept = malloc(sizeof(float) * (size_t)g_stream[0] * OUT);
  for (int r = 0; r < stream_reps; ++r, ++ks) {
    stream_ms[ks] = stream_once(&traces[ks], r == 0 ? 0 : -1, r == 0 ? kept : NULL, &again_ms[ks]);
    fprintf(stderr, "ours: stream %d: %.1f ms, %llu traces\n", ks, stream_ms[ks],
            (unsigned long long)traces[ks]);
  }
  write_file(workdir, "y_first_ours.f32", kept, sizeof(float) * (size_t)g_stream[0] * OUT);

  if (python && script) run_peers(python, script, workdir, quick);

  /* Second half of ours. */
  overhead_measure(&tiny, reps);
  overhead_measure(&mlp, reps);
  for (int r = 0; r < stream_reps; ++r, ++ks) {
    stream_ms[ks] = stream_once(&traces[ks], -1, NULL, &again_ms[ks]);
    fprintf(stderr, "ours: stream %d: %.1f ms, %llu traces\n", ks, stream_ms[ks],
            (unsigned long long)traces[ks]);
  }
  uint64_t max_traces = 0;
  for (int i = 0; i < ks; ++i) max_traces = traces[i] > max_traces ? traces[i] : max_traces;

  int distinct = 0;
  for (int i = 0; i < STREAM; ++i) {
    int seen = 0;
    for (int j = 0; j < i && !seen; ++j) seen = g_stream[j] == g_stream[i];
    distinct += !seen;
  }
  printf(
      "INFO stream: %d calls, batch sizes 1..%d (fixed seed), %d distinct sizes, first %lld, "
      "second %lld; 1 thread on both sides\n",
      STREAM, MAX_BATCH, distinct, (long long)g_stream[0], (long long)g_stream[1]);
  const double t_tiny_fn = bench_median(tiny.fn_us, tiny.k),
               t_tiny_rt = bench_median(tiny.rt_us, tiny.k);
  const double t_mlp_fn = bench_median(mlp.fn_us, mlp.k), t_mlp_rt = bench_median(mlp.rt_us, mlp.k);
  const double t_stream = bench_median(stream_ms, ks), t_again = bench_median(again_ms, ks);
  printf("INFO overhead per call (function - runtime, medians): tiny %.4f us, MLP b64 %.2f us\n",
         t_tiny_fn - t_tiny_rt, t_mlp_fn - t_mlp_rt);
  if (g_torch_note[0]) printf("INFO torch.compile: %s\n", g_torch_note);
  printf("OURS tiny_fn_us %.4f\nOURS tiny_rt_us %.4f\n", t_tiny_fn, t_tiny_rt);
  printf("OURS mlp64_fn_us %.3f\nOURS mlp64_rt_us %.3f\n", t_mlp_fn, t_mlp_rt);
  printf("OURS stream_ms %.1f\nOURS stream_again_ms %.1f\nOURS stream_traces %llu\n", t_stream,
         t_again, (unsigned long long)max_traces);

  /* Targets of issue 12: the cached call within 1.2x of a direct run; at most 2 traces over the
   * stream (the most over every repetition). The stream against the peers, whose whole point is
   * recompiling less, is held to >= 1x (ours no slower over the whole stream). */
  row("tiny x+x 8 f32: cached call (us)", t_tiny_fn, "shp_runtime_run", t_tiny_rt,
      MAX_OURS_OVER_PEER, 1.2);
  row("MLP batch 64, 1 thread: cached call (us)", t_mlp_fn, "shp_runtime_run", t_mlp_rt,
      MAX_OURS_OVER_PEER, 1.2);
  row("MLP stream 1000 calls: traces", (double)max_traces, "", NAN, MAX_OURS, 2);
  if (python && script) {
    row("MLP stream 1000 calls: whole (ms)", t_stream, "JAX jax.jit", peer("stream_jax_ms"),
        MIN_PEER_OVER_OURS, 1.0);
    row("MLP stream 1000 calls: whole (ms)", t_stream, "torch.compile", peer("stream_torch_ms"),
        MIN_PEER_OVER_OURS, 1.0);
    row("MLP stream again, compiled (ms)", t_again, "JAX jax.jit", peer("stream_again_jax_ms"),
        NO_TARGET, 0);
    row("MLP stream again, compiled (ms)", t_again, "torch.compile", peer("stream_again_torch_ms"),
        NO_TARGET, 0);
    row("MLP stream: peer compiles", (double)max_traces, "JAX jax.jit", peer("stream_jax_compiles"),
        NO_TARGET, 0);
    row("MLP stream: peer compiles", (double)max_traces, "torch.compile",
        peer("stream_torch_compiles"), NO_TARGET, 0);
  }
  overhead_destroy(&tiny);
  overhead_destroy(&mlp);
  free(kept);
  return 0;
}
