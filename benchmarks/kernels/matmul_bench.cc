// Matmul f32: shp::kernels::MatmulF32 against OpenBLAS cblas_sgemm measured in the same run
// (OpenBlasPeer: the scipy-openblas32 wheel's OpenBLAS through SHP_OPENBLAS_LIB, else the
// system one; the header prints the core it picked, and rows against a core without the CPU's
// widest vectors print "peer not native" instead of a verdict),
// for row-major C[m,n] = A[m,k] * B[k,n]. Each row runs several rounds; a round times ours and the
// peer back to back (the peer first in every other round), and the row's ratio is the median of
// the rounds' ratios, printed with their spread (lowest..highest), so that drift of a shared
// machine between rounds hits both sides of each ratio alike. The GFLOP/s columns (2*m*n*k /
// time) are each side's median over the rounds.
//   "1 thread":    MatmulF32 with pool = nullptr vs OpenBLAS with 1 thread.
//   "2 threads":   MatmulF32 on a 2-thread ThreadPool vs OpenBLAS with 2 threads.
//   "2 threads / 1 thread": squares from 512 up: our speed-up, MatmulF32 on the 2-thread pool
//                  against MatmulF32 alone (target >= 1.7x); 'ours' is the 2-thread GFLOP/s and
//                  'peer' the 1-thread one.
//   "1 thread AVX2": MatmulF32 with Highway dispatch forced to AVX2 (1 thread), for an
//                  apples-to-apples figure when OpenBLAS picks an AVX2 core kernel (printed in
//                  the header) on a CPU that also has AVX-512.
//   "dense <n> thread(s)": MLP (non-square) shapes only: a dense layer relu(A*B + bias) as the
//                  runtime runs it, MatmulF32Prepacked with the fused bias/relu epilogue on a B
//                  packed once, against cblas_sgemm followed by a bias + relu loop over C.
//   "<n> thread(s) vs ORT": the same call of ours against ONNX Runtime (MLAS) running a one-MatMul
//                  ONNX model with A and B as inputs and as many intra-op threads, in a child
//                  python process (benchmarks/kernels/matmul_bench_ort.py, python from
//                  $SHP_BENCH_PYTHON, else .venv-bench/bin/python); "n/a" with the reason when
//                  onnx or onnxruntime is missing. The child reports its own time per call.
//   "<n> thread(s) of FMA peak": squares from 1024 up: our GFLOP/s against the FMA peak of as
//                  many threads, measured at start (FmaPeak; target >= 0.85).
// Before timing, the two results are compared (max relative difference).
// Usage: matmul_bench [--no-ort] [--cpu-time] [--loop=ours|peer:THREADS:SECONDS] [N | MxNxK ...]
// (default: squares 64..2048 and MLP layer shapes). --no-ort skips the ORT rows, for quick A/B
// runs against OpenBLAS alone. --cpu-time, for A/B runs on a loaded machine: 1-thread rows only,
// no ORT, and each figure is the best of 21 reps of the calling thread's CPU time, which time
// slices lost to other processes do not count in. --loop runs one side alone on the first shape
// (64 by default) for about SECONDS and prints its GFLOP/s (wall time, or the caller's CPU time
// with --cpu-time): for `perf record`, and for A/B runs of two builds. Run from the repository root
// (the ORT child's script path is relative to it), through benchmarks/kernels/run_matmul_bench.sh
// (bazel build -c opt).
#include <immintrin.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cc/kernels/matmul.h"
#include "cc/kernels/matmul_prepacked.h"
#include "cc/kernels/parallel.h"
#include "benchmarks/kernels/openblas_peer.h"
#include "cc/kernels/simd_target.h"
#include "hwy/targets.h"

namespace {

using shp_bench::OpenBlasPeer;
using Clock = std::chrono::steady_clock;

struct Shape {
  int64_t m, n, k;
  // Floating-point operations of one product: 2*m*n*k.
  double Flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

// --cpu-time: time the calling thread's CPU time and keep the best rep (see the file comment).
bool g_cpu_time = false;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Seconds per call of fn over `calls` back-to-back calls (wall time, or the thread's CPU time).
double Seconds(const std::function<void()>& fn, int calls) {
  if (g_cpu_time) {
    const double t0 = ThreadCpuSeconds();
    for (int i = 0; i < calls; ++i) fn();
    return (ThreadCpuSeconds() - t0) / calls;
  }
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - t0).count() / calls;
}

// The median time (the best one with --cpu-time).
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return g_cpu_time ? v[0] : v[v.size() / 2];
}

struct Pair {
  double ours;    // GFLOP/s (median, or best with --cpu-time)
  double peer;    // GFLOP/s; < 0 when the peer failed
  double ratio;   // the median of the rounds' ratios ours / peer
  double lo, hi;  // the rounds' lowest and highest ratio
};

// One round's samples: seconds per call of ours and of the peer, measured back to back.
struct Round {
  double ours, peer;
};

// Round r: ours and the peer (each returning seconds per call) back to back, the peer first
// when r is odd, so that neither side always runs right after the other's warm caches.
Round TimeRound(int r, const std::function<double()>& ours, const std::function<double()>& peer) {
  Round out;
  if (r % 2 == 0) {
    out.ours = ours();
    out.peer = peer();
  } else {
    out.peer = peer();
    out.ours = ours();
  }
  return out;
}

// Medians of both sides' times, and the median and spread of the rounds' ratios: a row's
// ratio compares ours and the peer measured next to each other, so that drift of the machine
// between rounds (other agents' work, frequency) hits both sides of each ratio alike.
Pair Summarize(const Shape& s, const std::vector<Round>& rounds) {
  const double flops = s.Flops();
  std::vector<double> t_ours, t_peer, ratio;
  for (const Round& r : rounds) {
    t_ours.push_back(r.ours);
    t_peer.push_back(r.peer);
    ratio.push_back(r.peer / r.ours);
  }
  std::sort(ratio.begin(), ratio.end());
  return {flops / Median(t_ours) * 1e-9, flops / Median(t_peer) * 1e-9, ratio[ratio.size() / 2],
          ratio.front(), ratio.back()};
}

// `reps` rounds (each side >= ~50 ms of calls per round); in each round ours and the peer run
// back to back, the peer first in every other round.
Pair Measure(const Shape& s, const std::function<void()>& ours, const std::function<void()>& peer,
             int reps, const OpenBlasPeer* blas = nullptr) {
  ours();  // warm-up (page faults, thread start, pack buffers)
  peer();
  const double one = std::max(Seconds(ours, 1), 1e-7);
  const int calls = std::max(1, static_cast<int>((g_cpu_time ? 0.02 : 0.05) / one));
  // OpenBLAS's worker threads busy-wait after a call (about 2^28 cycles, ~0.1 s) before they
  // sleep; on 2 cores they would take our second thread's core during our next block. Let them
  // park after each of its blocks (ours sleep at once, so the peer's block needs no pause).
  const auto peer_block = [&] {
    const double t = Seconds(peer, calls);
    if (blas != nullptr && blas->threads() > 1) usleep(300000);
    return t;
  };
  const auto ours_block = [&] { return Seconds(ours, calls); };
  std::vector<Round> rounds;
  for (int r = 0; r < reps; ++r) rounds.push_back(TimeRound(r, ours_block, peer_block));
  return Summarize(s, rounds);
}

// ONNX Runtime in a child process that stays up for one shape and thread count (see the file
// comment): Time(calls) asks it for `calls` runs and returns its seconds per call, or -1.
class OrtPeer {
 public:
  OrtPeer(const Shape& s, int threads) {
    const char* py = std::getenv("SHP_BENCH_PYTHON");
    const std::string python = py != nullptr ? py : ".venv-bench/bin/python";
    const std::string script = "benchmarks/kernels/matmul_bench_ort.py";
    const std::string args[4] = {std::to_string(s.m), std::to_string(s.n), std::to_string(s.k),
                                 std::to_string(threads)};
    int to_child[2], from_child[2];
    if (access(python.c_str(), X_OK) != 0) {
      why_ = "no python at " + python;
      return;
    }
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      execl(python.c_str(), python.c_str(), script.c_str(), args[0].c_str(), args[1].c_str(),
            args[2].c_str(), args[3].c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
    char line[256] = {};
    if (out_ == nullptr || std::fgets(line, sizeof(line), out_) == nullptr) {
      why_ = "the python child did not start";
      return;
    }
    line[std::strcspn(line, "\n")] = 0;
    if (std::strncmp(line, "ready ", 6) == 0) {
      ok_ = true;
      version_ = line + 6;
    } else {
      why_ = std::strncmp(line, "unavailable ", 12) == 0 ? line + 12 : line;
    }
  }
  ~OrtPeer() {
    if (in_ != nullptr) std::fclose(in_);
    if (out_ != nullptr) std::fclose(out_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  OrtPeer(const OrtPeer&) = delete;
  OrtPeer& operator=(const OrtPeer&) = delete;

  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }          // when !ok()
  const std::string& version() const { return version_; }  // e.g. "onnxruntime 1.32.0"

  double Time(int calls) {
    if (!ok_) return -1;
    std::fprintf(in_, "%d\n", calls);
    std::fflush(in_);
    char line[64];
    if (std::fgets(line, sizeof(line), out_) == nullptr) {
      ok_ = false;
      why_ = "the python child stopped";
      return -1;
    }
    return std::atof(line);
  }

 private:
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
  bool ok_ = false;
  std::string why_ = "could not start the python child";
  std::string version_;
};

// Like Measure, against the ORT child (which times its own calls). peer < 0 if it failed.
Pair MeasureOrt(const Shape& s, const std::function<void()>& ours, OrtPeer* ort, int reps) {
  ours();
  const double one = std::max(Seconds(ours, 1), 1e-7);
  const int calls = std::max(1, static_cast<int>(0.05 / one));
  ort->Time(calls);  // warm-up
  const auto ours_block = [&] { return Seconds(ours, calls); };
  const auto ort_block = [&] { return ort->Time(calls); };
  std::vector<Round> rounds;
  for (int r = 0; r < reps && ort->ok(); ++r) rounds.push_back(TimeRound(r, ours_block, ort_block));
  if (!ort->ok()) {
    return {s.Flops() / Seconds(ours, calls) * 1e-9, -1, 0, 0, 0};
  }
  return Summarize(s, rounds);
}

// Target of issue 18 for every row: at or above OpenBLAS (ratio >= 1.0) at every size, with 1 and
// 2 threads, on AVX2 as on AVX-512.
constexpr double kTargetRatio = 1.0;
// Target of issue 18 for our own 2-thread speed-up over 1 thread, on squares from 512 up.
constexpr double kTargetScaling = 1.7;
constexpr int64_t kScalingMinSize = 512;

// Target of issue 40: at least this share of the measured FMA peak from 1024^3 up.
constexpr double kTargetPeakShare = 0.85;
constexpr int64_t kPeakMinSize = 1024;

// The FMA peak of one core in GFLOP/s, measured: independent fused multiply-add chains in
// registers (24 zmm accumulators with AVX-512, 12 ymm with AVX2: enough to cover the FMA
// latency on every x86 core with two FMA pipes), the best of 5 runs of ~0.1 s. The widest
// vectors the CPU has, not our --simd-target cap: the peak is the machine's.
// Keeps the accumulators of the peak loops alive.
volatile float g_peak_sink;

// One run of the peak loop: `iters` rounds of kAccs independent FMAs on vectors of `lanes`
// floats, by the macro below (a function taking vector arguments would change the ABI across
// target attributes). Returns GFLOP/s.
#define SHP_FMA_PEAK_RUN(V, kAccs, lanes, set1, fmadd, first)                                      \
  V acc[kAccs];                                                                                    \
  for (int i = 0; i < kAccs; ++i) acc[i] = set1(static_cast<float>(i));                            \
  const V mul = set1(0.999999f), add = set1(1e-7f);                                                \
  const int64_t iters = 4 << 20;                                                                   \
  const auto t0 = Clock::now();                                                                    \
  for (int64_t it = 0; it < iters; ++it) {                                                         \
    _Pragma("GCC unroll 32") for (int i = 0; i < kAccs; ++i) { acc[i] = fmadd(acc[i], mul, add); } \
  }                                                                                                \
  const double t = std::chrono::duration<double>(Clock::now() - t0).count();                       \
  float sink = 0;                                                                                  \
  for (int i = 0; i < kAccs; ++i) sink += first(acc[i]);                                           \
  g_peak_sink = sink;                                                                              \
  return 2.0 * (lanes) * (kAccs) * static_cast<double>(iters) / t * 1e-9;

__attribute__((target("avx512f"))) double FmaPeakRunAvx512() {
  SHP_FMA_PEAK_RUN(__m512, 24, 16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_cvtss_f32)
}
__attribute__((target("avx2,fma"))) double FmaPeakRunAvx2() {
  SHP_FMA_PEAK_RUN(__m256, 12, 8, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_cvtss_f32)
}
#undef SHP_FMA_PEAK_RUN

// The FMA peak of one core in GFLOP/s, measured: independent fused multiply-add chains in
// registers (24 zmm accumulators with AVX-512, 12 ymm with AVX2: enough to cover the FMA
// latency on every x86 core with two FMA pipes), the best of 5 runs of ~0.1 s. The widest
// vectors the CPU has, not our --simd-target cap: the peak is the machine's.
double FmaPeakBest(double (*run)()) {
  double best = 0;
  for (int r = 0; r < 5; ++r) best = std::max(best, run());
  return best;
}

// The peak of `threads` threads running the loop at once (their sum: two vCPUs that share a
// core's FMA units give less than twice one), and the instruction set it was measured with;
// 0 on a CPU without AVX2.
double FmaPeak(int threads, const char** isa) {
  const int64_t cpu = hwy::SupportedTargets();
  double (*run)() = nullptr;
  if ((cpu & HWY_AVX3) != 0) {
    *isa = "AVX-512";
    run = FmaPeakRunAvx512;
  } else if ((cpu & HWY_AVX2) != 0) {
    *isa = "AVX2";
    run = FmaPeakRunAvx2;
  } else {
    *isa = "none";
    return 0;
  }
  std::vector<double> peaks(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) {
    workers.emplace_back([&peaks, run, t] { peaks[static_cast<size_t>(t)] = FmaPeakBest(run); });
  }
  peaks[0] = FmaPeakBest(run);
  for (std::thread& w : workers) w.join();
  double sum = 0;
  for (double p : peaks) sum += p;
  return sum;
}

// peer_native false: the OpenBLAS core does not use the CPU's widest vectors (OpenBlasPeer::
// NativeCore); the row prints its figures and "peer not native" instead of a verdict.
void PrintRow(const Shape& s, const char* what, const Pair& r, double target = kTargetRatio,
              bool peer_native = true) {
  char name[96];
  if (s.m == s.n && s.n == s.k) {
    std::snprintf(name, sizeof(name), "matmul %lld %s", static_cast<long long>(s.m), what);
  } else {
    std::snprintf(name, sizeof(name), "matmul %lldx%lldx%lld %s", static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), what);
  }
  if (r.peer < 0) {  // the peer is missing: no verdict
    std::printf("%-32s %10.1f %10s %8s %11s  >=%.1fx   n/a\n", name, r.ours, "-", "-", "-", target);
    std::fflush(stdout);
    return;
  }
  char spread[32];
  std::snprintf(spread, sizeof(spread), "%.2f..%.2f", r.lo, r.hi);
  char target_text[16];
  std::snprintf(target_text, sizeof(target_text),
                std::fabs(target * 10 - std::round(target * 10)) < 1e-9 ? ">=%.1fx" : ">=%.2fx",
                target);
  std::printf("%-32s %10.1f %10.1f %7.2fx %11s  %-7s  %s\n", name, r.ours, r.peer, r.ratio, spread,
              target_text,
              !peer_native        ? "peer not native, n/a"
              : r.ratio >= target ? "met"
                                  : "MISSED");
  std::fflush(stdout);
}

// --loop=SIDE:THREADS:SECONDS, for profiling one side under perf: calls ours (MatmulF32) or the
// peer (cblas_sgemm) on the first shape for about SECONDS and prints its GFLOP/s.
int Loop(const Shape& s, const std::string& side, int threads, double seconds,
         const OpenBlasPeer& blas) {
  std::vector<float> a(static_cast<size_t>(s.m * s.k), 0.5f),
      b(static_cast<size_t>(s.k * s.n), 0.25f);
  std::vector<float> c(static_cast<size_t>(s.m * s.n));
  const shp::kernels::MatmulParams p = shp::kernels::RowMajorMatmul(s.m, s.n, s.k);
  shp::kernels::ThreadPool pool2(2);
  shp::kernels::ThreadPool* pool = threads == 1 ? nullptr : &pool2;
  if (side == "peer") blas.set_threads(threads);
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const std::function<void()> fn =
      side == "ours"
          ? std::function<void()>(
                [&] { shp::kernels::MatmulF32(p, a.data(), b.data(), c.data(), pool); })
          : std::function<void()>([&] { blas.Gemm(m, n, k, a.data(), b.data(), c.data()); });
  fn();
  const double one = std::max(Seconds(fn, 1), 1e-7);
  const int calls = std::max(1, static_cast<int>(seconds / one));
  const double t = Seconds(fn, calls);
  std::printf("%s %d thread(s) %lldx%lldx%lld: %.1f GFLOP/s (%d calls)\n", side.c_str(), threads,
              static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
              s.Flops() / t * 1e-9, calls);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  bool with_ort = true;
  char loop_side[8] = "";
  int loop_threads = 0;
  double loop_seconds = 0;
  for (int i = 1; i < argc; ++i) {
    long long m = 0, n = 0, k = 0;
    if (std::strcmp(argv[i], "--no-ort") == 0) {
      with_ort = false;
    } else if (std::strncmp(argv[i], "--loop=", 7) == 0) {
      if (std::sscanf(argv[i] + 7, "%4[a-z]:%d:%lf", loop_side, &loop_threads, &loop_seconds) !=
              3 ||
          (std::strcmp(loop_side, "ours") != 0 && std::strcmp(loop_side, "peer") != 0) ||
          loop_threads < 1 || loop_threads > 2 || !(loop_seconds > 0)) {
        std::fprintf(stderr,
                     "matmul_bench: bad '%s' (want --loop=ours|peer:THREADS:SECONDS, THREADS 1 "
                     "or 2)\n",
                     argv[i]);
        return 2;
      }
    } else if (std::strcmp(argv[i], "--cpu-time") == 0) {
      g_cpu_time = true;
      with_ort = false;
    } else if (std::sscanf(argv[i], "%lldx%lldx%lld", &m, &n, &k) == 3) {
      shapes.push_back({m, n, k});
    } else if ((m = std::atoll(argv[i])) > 0) {
      shapes.push_back({m, m, m});
    } else {
      std::fprintf(stderr,
                   "matmul_bench: bad argument '%s' (want --no-ort, --cpu-time, N or MxNxK)\n",
                   argv[i]);
      return 2;
    }
  }
  if (shapes.empty()) {  // squares, then MLP layers (m = batch; 784 -> 256 and 256 -> 10)
    shapes = {{64, 64, 64},       {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
              {2048, 2048, 2048}, {1, 256, 784},   {16, 256, 784},  {64, 256, 784},
              {256, 256, 784},    {64, 10, 256}};
  }
  const OpenBlasPeer blas;
  if (!blas.ok()) {
    std::printf("ERROR: the OpenBLAS peer: %s\n", blas.why().c_str());
    return 1;
  }
  if (loop_threads > 0) return Loop(shapes[0], loop_side, loop_threads, loop_seconds, blas);
  const int reps = g_cpu_time ? 21 : 7;
  int mr = 0, nr = 0;
  shp::kernels::MatmulF32TileShape(&mr, &nr);
  std::printf(
      "# matmul f32 C[m,n] = A[m,k]*B[k,n] (row-major); SIMD target %s, tile %dx%d\n"
      "# peer OpenBLAS: core kernel %s (%s), %s; %s\n",
      shp::kernels::SimdTargetName(), mr, nr, blas.core().c_str(),
      blas.NativeCore() ? "native for this CPU"
                        : "NOT native for this CPU: its rows print 'peer not native'",
      blas.config().c_str(), blas.path().c_str());
  const char* peak_isa = "none";
  const double peak1 = g_cpu_time ? 0 : FmaPeak(1, &peak_isa);
  const double peak2 = g_cpu_time ? 0 : FmaPeak(2, &peak_isa);
  if (peak1 > 0) {
    std::printf("# FMA peak (measured, %s registers): %.1f GFLOP/s on 1 thread, %.1f on 2\n",
                peak_isa, peak1, peak2);
  }
  std::printf(
      "# figures: %s GFLOP/s of %d rounds (ours and the peer back to back in each round, the "
      "peer first in every other one); ratio = ours / peer (>1: ours faster), the median of the "
      "rounds' ratios, 'rounds' their lowest..highest; peer OpenBLAS, or ONNX Runtime (MLAS) on "
      "rows 'vs ORT'\n",
      g_cpu_time ? "best thread-CPU-time" : "median", reps);
  std::printf("%-32s %10s %10s %8s %11s  %-7s  %s\n", "scenario", "ours", "peer", "ratio", "rounds",
              "target", "verdict");
  shp::kernels::ThreadPool pool2(2);
  // The target every row but "1 thread AVX2" runs on (the cap of SHP_SIMD_TARGET, or "best").
  const std::string process_target = shp::kernels::SimdTargetRequested();
  for (const Shape& s : shapes) {
    std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n));
    std::vector<float> c(static_cast<size_t>(s.m * s.n)), c_ref(c.size());
    uint32_t state = 1;
    for (auto* v : {&a, &b}) {
      for (float& x : *v) {
        state = state * 1664525u + 1013904223u;
        x = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
      }
    }
    const shp::kernels::MatmulParams p = shp::kernels::RowMajorMatmul(s.m, s.n, s.k);
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    const auto peer = [&] { blas.Gemm(m, n, k, a.data(), b.data(), c_ref.data()); };
    for (const int threads : {1, 2}) {
      if (g_cpu_time && threads > 1) continue;
      shp::kernels::ThreadPool* pool = threads == 1 ? nullptr : &pool2;
      blas.set_threads(threads);
      const auto ours = [&] { shp::kernels::MatmulF32(p, a.data(), b.data(), c.data(), pool); };
      ours();
      peer();
      double max_rel = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        max_rel = std::max(max_rel, std::fabs(static_cast<double>(c[i]) - c_ref[i]) /
                                        (std::fabs(static_cast<double>(c_ref[i])) + 1.0));
      }
      if (max_rel > 1e-3) {
        std::printf("ERROR: %dx%dx%d: results differ from OpenBLAS (max rel %g)\n", m, n, k,
                    max_rel);
        return 1;
      }
      const Pair r = Measure(s, ours, peer, reps, &blas);
      PrintRow(s, threads == 1 ? "1 thread" : "2 threads", r, kTargetRatio, blas.NativeCore());
      if (peak1 > 0 && s.m == s.n && s.n == s.k && s.m >= kPeakMinSize) {
        // Our GFLOP/s against the measured peak of as many threads (ours: the round median).
        const double cores_peak = threads == 1 ? peak1 : peak2;
        PrintRow(
            s, threads == 1 ? "1 thread of FMA peak" : "2 threads of FMA peak",
            {r.ours, cores_peak, r.ours / cores_peak, r.ours / cores_peak, r.ours / cores_peak},
            kTargetPeakShare);
      }
      if (!with_ort) continue;
      OrtPeer ort(s, threads);
      static bool ort_named = false;
      if (!ort.ok()) {
        std::printf("# ORT row n/a: %s\n", ort.why().c_str());
      } else if (!ort_named) {
        ort_named = true;
        std::printf("# ORT peer: %s (CPU provider, MLAS), one MatMul node\n",
                    ort.version().c_str());
      }
      PrintRow(s, threads == 1 ? "1 thread vs ORT" : "2 threads vs ORT",
               MeasureOrt(s, ours, &ort, reps));
    }
    if (s.m != s.n ||
        s.n != s.k) {  // an MLP layer: the fused dense layer against sgemm + bias + relu
      std::vector<float> bias(static_cast<size_t>(s.n));
      for (size_t j = 0; j < bias.size(); ++j) bias[j] = static_cast<float>(j % 7) * 0.25f - 0.75f;
      const shp::kernels::PackedMatrixF32 packed =
          shp::kernels::PackedMatrixF32::Pack(b.data(), s.k, s.n, s.n, 1);
      const shp::kernels::MatmulEpilogue ep{bias.data(), true};
      const auto dense_peer = [&] {
        peer();
        for (int64_t i = 0; i < s.m; ++i) {
          float* row = c_ref.data() + i * s.n;
          for (int64_t j = 0; j < s.n; ++j) row[j] = std::max(row[j] + bias[j], 0.0f);
        }
      };
      for (const int threads : {1, 2}) {
        if (g_cpu_time && threads > 1) continue;
        shp::kernels::ThreadPool* pool = threads == 1 ? nullptr : &pool2;
        blas.set_threads(threads);
        const auto ours = [&] {
          shp::kernels::MatmulF32Prepacked(p, a.data(), packed, c.data(), ep, pool);
        };
        ours();
        dense_peer();
        for (size_t i = 0; i < c.size(); ++i) {
          if (std::fabs(static_cast<double>(c[i]) - c_ref[i]) >
              1e-3 * (std::fabs(static_cast<double>(c_ref[i])) + 1.0)) {
            std::printf("ERROR: %dx%dx%d dense: results differ from OpenBLAS + bias + relu\n", m, n,
                        k);
            return 1;
          }
        }
        PrintRow(s, threads == 1 ? "dense 1 thread" : "dense 2 threads",
                 Measure(s, ours, dense_peer, reps, &blas), kTargetRatio, blas.NativeCore());
      }
    }
    if (s.m == s.n && s.n == s.k && s.m >= kScalingMinSize && !g_cpu_time) {
      // Our 2 threads against our 1 thread, in rounds like the peer rows (no OpenBLAS threads
      // about): 'ours' is the 2-thread figure, 'peer' the 1-thread one.
      blas.set_threads(1);
      const auto two = [&] { shp::kernels::MatmulF32(p, a.data(), b.data(), c.data(), &pool2); };
      const auto one = [&] { shp::kernels::MatmulF32(p, a.data(), b.data(), c.data(), nullptr); };
      PrintRow(s, "2 threads / 1 thread", Measure(s, two, one, reps), kTargetScaling);
    }
    if ((hwy::SupportedTargets() & HWY_AVX2) != 0 &&
        std::string(shp::kernels::SimdTargetName()) != "AVX2") {
      blas.set_threads(1);
      shp::kernels::SetSimdTarget("AVX2", nullptr);  // supported: checked above
      const auto ours = [&] { shp::kernels::MatmulF32(p, a.data(), b.data(), c.data(), nullptr); };
      const Pair r = Measure(s, ours, peer, reps, &blas);
      // Back to the process's target: the cap of SHP_SIMD_TARGET / --simd-target if any (its
      // mock and mask), else the CPU's best. Read before the switch: SimdTargetRequested() now
      // says AVX2, and restoring that kept every later shape's rows on AVX2 (on AVX-512 CPUs
      // every row after the first shape measured the AVX2 kernels: Sapphire Rapids' "GEMM at
      // half of onnxruntime" in issue 40).
      shp::kernels::SetSimdTarget(process_target.c_str(), nullptr);
      PrintRow(s, "1 thread AVX2", r, kTargetRatio, blas.NativeCore());
    }
  }
  return 0;
}
