/* Shared helpers of the benchmark programs, C (c99 and later) and C++: the machine line (CPU
 * model, online cpus, the SIMD target), a monotonic clock, quantiles and spreads of repeated
 * timings, the verdict of a row against its target, and (when shapepoly.h was included first)
 * the exit-on-error check of C API calls. Header-only, every function static inline: each
 * benchmark is one translation unit.
 *
 * The row format every driver prints and benchmarks/run_all.sh counts: a row with a target
 * ends with "met" or "MISSED" ("n/a" when its figure or peer is missing), a row without one
 * carries "-" as both target and verdict.
 *
 * C users need _POSIX_C_SOURCE >= 199309L before the first system header (clock_gettime). */
#ifndef SHAPEPOLY_BENCHMARKS_BENCH_UTIL_H_
#define SHAPEPOLY_BENCHMARKS_BENCH_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Monotonic wall clock in nanoseconds. */
static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* The q-quantile (0 <= q <= 1, linear interpolation between neighbours) of v[0..n); v is left
 * as it was. q = 0.5 is the median (the mean of the middle two for even n), 0 the minimum, 1
 * the maximum. n < 1 gives -1 (no figure). */
static inline double bench_quantile(const double* v, int n, double q) {
  if (n < 1) return -1;
  double* s = (double*)malloc(sizeof(double) * (size_t)n);
  if (s == NULL) abort();
  memcpy(s, v, sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof *s, bench_cmp_double);
  const double at = q * (n - 1);
  const int lo = (int)at;
  const double r = lo + 1 < n ? s[lo] + (at - lo) * (s[lo + 1] - s[lo]) : s[lo];
  free(s);
  return r;
}

static inline double bench_median(const double* v, int n) { return bench_quantile(v, n, 0.5); }

/* "min-max" of v[0..n) with `digits` decimals, into out. */
static inline void bench_spread(const double* v, int n, int digits, char* out, size_t cap) {
  snprintf(out, cap, "%.*f-%.*f", digits, bench_quantile(v, n, 0.0), digits,
           bench_quantile(v, n, 1.0));
}

/* The CPU model from /proc/cpuinfo ("unknown CPU" when unavailable). */
static inline void bench_cpu_model(char* out, size_t cap) {
  snprintf(out, cap, "unknown CPU");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    const char* colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
      snprintf(out, cap, "%.250s", colon + (colon[1] == ' ' ? 2 : 1));
      out[strcspn(out, "\n")] = '\0';
      break;
    }
  }
  fclose(f);
}

static inline int bench_cpus(void) { return (int)sysconf(_SC_NPROCESSORS_ONLN); }

/* One line naming the machine: "INFO cpu: <model>, <n> cpus; SIMD target: <target>; <threads>"
 * (prefix "INFO " only when `info`, for the drivers that keep INFO lines). */
static inline void bench_print_machine(int info, const char* simd_target, const char* threads) {
  char cpu[256];
  bench_cpu_model(cpu, sizeof cpu);
  printf("%scpu: %s, %d cpus; SIMD target: %s; %s\n", info ? "INFO " : "", cpu, bench_cpus(),
         simd_target, threads);
}

/* Verdicts. have: the figure (and its peer) was measured. */
static inline const char* bench_verdict_at_most(int have, double value, double limit) {
  return !have ? "n/a" : value <= limit ? "met" : "MISSED";
}
static inline const char* bench_verdict_at_least(int have, double value, double floor) {
  return !have ? "n/a" : value >= floor ? "met" : "MISSED";
}

/* Exit-on-error wrappers of C API calls: the code's name, the message and what was being done
 * (`what` may be NULL). */
#ifdef SHAPEPOLY_SHAPEPOLY_H_
static inline void bench_check_what(shp_error_t* err, const char* what) {
  if (err == NULL) return;
  fprintf(stderr, "%s%serror %s: %s\n", what ? what : "", what ? ": " : "",
          shp_code_string(shp_error_code(err)), shp_error_message(err));
  shp_error_destroy(err);
  exit(1);
}
static inline void bench_check(shp_error_t* err) { bench_check_what(err, NULL); }
#endif

#endif /* SHAPEPOLY_BENCHMARKS_BENCH_UTIL_H_ */
