// Shared helpers of the elementwise / softmax / layer-norm / sum / select benchmarks: the
// command line (--quick), huge-page buffers, interleaved median timing, the numpy peer (a child
// process running elementwise_bench_numpy.py with the benchmark virtualenv's python, timed run
// by run in alternation with ours), and the result line format. The machine line, medians and
// verdicts come from benchmarks/bench_util.h (shared with the C benchmarks).
#ifndef SHAPEPOLY_BENCHMARKS_KERNELS_ELEMENTWISE_BENCH_UTIL_H_
#define SHAPEPOLY_BENCHMARKS_KERNELS_ELEMENTWISE_BENCH_UTIL_H_

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/bench_util.h"

namespace shp_bench {

// Timed repetitions per figure: 11, or 5 with --quick (make bench-quick), where a bench may
// also measure fewer cases (Quick()).
inline int g_reps = 11;
inline int Reps() { return g_reps; }
inline bool Quick() { return g_reps < 11; }

// The benchmarks' command line: [--quick]. Anything else is a usage error (exit 2).
inline void ParseArgs(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      g_reps = 5;
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s'\nusage: %s [--quick]\n", argv[0], argv[i],
                   argv[0]);
      std::exit(2);
    }
  }
}

// "cpu: <model>, <n> cpus; SIMD target: <target>; <threads>" (bench_util.h).
inline void PrintMachine(const char* simd_target, const char* threads) {
  bench_print_machine(0, simd_target, threads);
}

// A float buffer on transparent huge pages where the kernel allows it (numpy's allocator does
// the same for arrays >= 4 MiB), filled with N(0, 1) values from `seed`.
struct FloatBuffer {
  FloatBuffer(size_t n, uint32_t seed) : size(n) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t bytes = (n * sizeof(float) + kHuge - 1) / kHuge * kHuge;
    data = static_cast<float*>(std::aligned_alloc(kHuge, bytes));
    if (data == nullptr) std::abort();
    madvise(data, bytes, MADV_HUGEPAGE);
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (size_t i = 0; i < n; ++i) data[i] = nd(rng);
  }
  ~FloatBuffer() { std::free(data); }
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  float* data;
  size_t size;
};

inline double Seconds(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The median of t (-1 when empty).
inline double Median(const std::vector<double>& t) {
  return bench_median(t.data(), static_cast<int>(t.size()));
}

// Median wall seconds of fn over Reps() runs after one warm-up run.
inline double MedianSeconds(const std::function<void()>& fn) {
  fn();
  std::vector<double> t;
  for (int r = 0; r < Reps(); ++r) t.push_back(Seconds(fn));
  return Median(t);
}

// Medians of `a` and `b` timed in alternation (a, b, a, b, ...) after one warm-up each, so
// both sides see the same machine state (this machine is shared and noisy). b returns its own
// measured seconds (a child process reports its time), or a negative value on failure.
inline void Interleaved(const std::function<void()>& a, const std::function<double()>& b,
                        double* a_s, double* b_s) {
  a();
  const bool b_ok = b() >= 0;
  std::vector<double> ta, tb;
  for (int r = 0; r < Reps(); ++r) {
    ta.push_back(Seconds(a));
    if (b_ok) tb.push_back(b());
  }
  *a_s = Median(ta);
  *b_s = b_ok ? Median(tb) : -1;
  // The spread next to the medians (this machine is shared: say how much the runs moved).
  char sa[64], sb[64] = "n/a";
  for (double& t : ta) t *= 1e3;
  bench_spread(ta.data(), static_cast<int>(ta.size()), 3, sa, sizeof(sa));
  if (b_ok) {
    for (double& t : tb) t *= 1e3;
    bench_spread(tb.data(), static_cast<int>(tb.size()), 3, sb, sizeof(sb));
  }
  std::printf("  spread of %d runs (min-max ms): ours %s, peer %s\n", Reps(), sa, sb);
}

// The numpy scenario `name` of elementwise_bench_numpy.py in a child python process that stays
// up: each RunOnce() asks it for one timed run and returns the seconds it measured (negative
// if the child could not start). Python: $SHP_BENCH_PYTHON, else .venv-bench/bin/python
// (relative to the working directory, normally the repository root). Script:
// $SHP_BENCH_NUMPY_SCRIPT, else benchmarks/kernels/elementwise_bench_numpy.py. numpy runs
// single-threaded (OMP/OPENBLAS_NUM_THREADS=1; its elementwise ops are single-threaded anyway).
class NumpyPeer {
 public:
  explicit NumpyPeer(const std::string& name) {
    const char* py = std::getenv("SHP_BENCH_PYTHON");
    const char* script = std::getenv("SHP_BENCH_NUMPY_SCRIPT");
    const std::string python = py != nullptr ? py : ".venv-bench/bin/python";
    const std::string path =
        script != nullptr ? script : "benchmarks/kernels/elementwise_bench_numpy.py";
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      setenv("OMP_NUM_THREADS", "1", 1);
      setenv("OPENBLAS_NUM_THREADS", "1", 1);
      execl(python.c_str(), python.c_str(), path.c_str(), name.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
    char line[64];
    ok_ = out_ != nullptr && std::fgets(line, sizeof(line), out_) != nullptr &&
          std::strncmp(line, "ready", 5) == 0;
  }
  ~NumpyPeer() {
    if (in_ != nullptr) std::fclose(in_);
    if (out_ != nullptr) std::fclose(out_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  NumpyPeer(const NumpyPeer&) = delete;
  NumpyPeer& operator=(const NumpyPeer&) = delete;

  double RunOnce() {
    if (!ok_) return -1;
    std::fputs("run\n", in_);
    std::fflush(in_);
    char line[64];
    if (std::fgets(line, sizeof(line), out_) == nullptr) {
      ok_ = false;
      return -1;
    }
    return std::atof(line);
  }

 private:
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
  bool ok_ = false;
};

// Prints "RESULT <scenario> <ours ms> <peer> <peer ms> <ratio> <target> <verdict>" (ratio =
// peer time / our time: > 1 means ours is faster; target ">=Nx", or "-" when target <= 0, an
// information row; verdict met, MISSED, n/a when the peer is missing, or "-" without a target)
// plus a readable line.
inline void Report(const std::string& scenario, double ours_s, const std::string& peer,
                   double peer_s, double target) {
  char target_s[32] = "-";
  if (target > 0) std::snprintf(target_s, sizeof(target_s), ">=%.1fx", target);
  if (peer_s <= 0) {
    std::printf("RESULT %s %.3f %s n/a n/a %s %s\n", scenario.c_str(), ours_s * 1e3, peer.c_str(),
                target_s, target > 0 ? "n/a" : "-");
    std::printf("  %-34s ours %9.3f ms   %-8s  (peer unavailable)\n", scenario.c_str(),
                ours_s * 1e3, peer.c_str());
    return;
  }
  const double ratio = peer_s / ours_s;
  const char* verdict = target <= 0 ? "-" : bench_verdict_at_least(1, ratio, target);
  std::printf("RESULT %s %.3f %s %.3f %.2f %s %s\n", scenario.c_str(), ours_s * 1e3, peer.c_str(),
              peer_s * 1e3, ratio, target_s, verdict);
  std::printf("  %-34s ours %9.3f ms   %-8s %9.3f ms   ratio %5.2fx", scenario.c_str(),
              ours_s * 1e3, peer.c_str(), peer_s * 1e3, ratio);
  if (target > 0) {
    std::printf("  (target %s: %s)\n", target_s, verdict);
  } else {
    std::printf("  (no target)\n");
  }
}

}  // namespace shp_bench

#endif  // SHAPEPOLY_BENCHMARKS_KERNELS_ELEMENTWISE_BENCH_UTIL_H_
