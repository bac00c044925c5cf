// Fused elementwise kernels vs peers measured in the same run (1 thread unless noted):
//   a*b + c, 16M f32: numpy `a*b + c`, and a plain C++ STREAM-triad-style loop
//     out[i] = a[i]*b[i] + c[i] (one clone per ISA level, chosen at run time for this CPU: the
//     machine's streaming limit, without building for the build machine's CPU);
//   tanh(a*x + b) * c, 16M f32: numpy;
//   exp(x) and logistic(x) = 1 / (1 + exp(-x)), 16M f32: numpy (information rows).
// Also our 2-thread figures (information rows: numpy's elementwise ops run on one thread). Run from
// the repository root (the numpy peer is a child process), normally through
// benchmarks/kernels/run_kernels_bench.sh. `elementwise_bench --profile-chain [--quick]` times only
// our tanh chain (1 and 2 threads, no peers), for `perf record`.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "benchmarks/kernels/elementwise_bench_util.h"
#include "cc/kernels/elementwise.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"

namespace {

using shp::kernels::BinaryOp;
using shp::kernels::DType;
using shp::kernels::ElementwiseInput;
using shp::kernels::ElementwiseProgram;
using shp::kernels::EvalElementwise;
using shp::kernels::ThreadPool;
using shp::kernels::UnaryOp;

constexpr size_t kN = 16 << 20;

// The peer loop; noinline so the compiler cannot hoist it out of the timing loop. GCC compiles
// one clone per ISA level and the loader picks the best the CPU has (as Highway does for us).
__attribute__((noinline, target_clones("arch=skylake-avx512", "arch=haswell", "default"))) void
TriadLoop(const float* __restrict a, const float* __restrict b, const float* __restrict c,
          float* __restrict out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = a[i] * b[i] + c[i];
}

// A closure evaluating program p over kN elements of `ins` into out.
std::function<void()> Runner(const ElementwiseProgram& p, const std::vector<const float*>& ins,
                             float* out, ThreadPool* pool) {
  return [&p, ins, out, pool] {
    const int64_t shape[1] = {static_cast<int64_t>(kN)};
    std::vector<ElementwiseInput> in;
    for (const float* x : ins) in.push_back({x, nullptr});
    void* outs[1] = {out};
    EvalElementwise(p, 1, shape, in.data(), static_cast<int>(in.size()), outs, 1, pool);
  };
}

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// tanh(a*x + b) * c over inputs (a, x, b, c).
ElementwiseProgram TanhChain() {
  ElementwiseProgram chain;
  const int ia = chain.Input(0, DType::kF32), ix = chain.Input(1, DType::kF32);
  const int ib = chain.Input(2, DType::kF32), ic = chain.Input(3, DType::kF32);
  chain.AddOutput(chain.Binary(
      BinaryOp::kMul,
      chain.Unary(UnaryOp::kTanh,
                  chain.Binary(BinaryOp::kAdd, chain.Binary(BinaryOp::kMul, ia, ix), ib)),
      ic));
  return chain;
}

// The tanh chain alone, ours only, 1 thread then 2: for `perf record` (no numpy child).
int ProfileChain() {
  shp_bench::FloatBuffer a(kN, 1), b(kN, 2), c(kN, 3), x(kN, 4), out(kN, 5);
  const ElementwiseProgram chain = TanhChain();
  ThreadPool pool2(2);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
    const auto run = Runner(chain, {a.data, x.data, b.data, c.data}, out.data, pool);
    run();
    // Wall time, and the calling thread's CPU time (less disturbed by other processes on a
    // shared machine: time spent descheduled is not counted).
    std::vector<double> t, cpu;
    for (int r = 0; r < shp_bench::Reps(); ++r) {
      const double c0 = ThreadCpuMs();
      t.push_back(shp_bench::Seconds(run) * 1e3);
      cpu.push_back(ThreadCpuMs() - c0);
    }
    std::sort(t.begin(), t.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf(
        "tanh chain, %d thread(s): median %.3f ms (min %.3f, max %.3f); calling thread's CPU "
        "time: median %.3f ms (min %.3f)\n",
        pool == nullptr ? 1 : 2, t[t.size() / 2], t.front(), t.back(), cpu[cpu.size() / 2],
        cpu.front());
  }
  // The compute alone: tanh, exp and logistic over 64K elements (L2-resident, no memory
  // streams), so a change to a kernel's arithmetic shows even when other processes load the
  // memory bus. Minimum CPU time of the calling thread per element.
  constexpr size_t kSmallN = 64 << 10;
  for (const auto& [op, name] : {std::pair{UnaryOp::kTanh, "tanh"}, std::pair{UnaryOp::kExp, "exp"},
                                 std::pair{UnaryOp::kLogistic, "logistic"}}) {
    ElementwiseProgram unary;
    unary.AddOutput(unary.Unary(op, unary.Input(0, DType::kF32)));
    const int64_t shape[1] = {static_cast<int64_t>(kSmallN)};
    const ElementwiseInput in[1] = {{x.data, nullptr}};
    void* outs[1] = {out.data};
    double best = 1e30;
    for (int r = 0; r < 10 * shp_bench::Reps(); ++r) {
      const double c0 = ThreadCpuMs();
      for (int k = 0; k < 20; ++k) EvalElementwise(unary, 1, shape, in, 1, outs, 1, nullptr);
      best = std::min(best, ThreadCpuMs() - c0);
    }
    std::printf("%s over %zu L2-resident f32, 1 thread: %.3f ns per element (min CPU time)\n", name,
                kSmallN, best * 1e6 / (20.0 * kSmallN));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--profile-chain") == 0) {
    argv[1] = argv[0];  // the remaining arguments (--quick) as usual
    shp_bench::ParseArgs(argc - 1, argv + 1);
    return ProfileChain();
  }
  shp_bench::ParseArgs(argc, argv);
  shp_bench::PrintMachine(shp::kernels::SimdTargetName(), "1 thread, and 2 where a row says");
  std::printf("elementwise kernels, %zu f32 elements, median of %d\n", kN, shp_bench::Reps());
  shp_bench::FloatBuffer a(kN, 1), b(kN, 2), c(kN, 3), x(kN, 4), out(kN, 5);
  ThreadPool pool2(2);

  // a*b + c
  ElementwiseProgram fma;
  fma.AddOutput(
      fma.Binary(BinaryOp::kAdd,
                 fma.Binary(BinaryOp::kMul, fma.Input(0, DType::kF32), fma.Input(1, DType::kF32)),
                 fma.Input(2, DType::kF32)));
  const auto ours_fma = Runner(fma, {a.data, b.data, c.data}, out.data, nullptr);
  std::printf("triad peer: the %s clone (GCC target_clones, chosen at run time)\n",
              __builtin_cpu_supports("avx512f") ? "skylake-avx512"
              : __builtin_cpu_supports("avx2")  ? "haswell (AVX2+FMA)"
                                                : "default (SSE2)");
  double ours_s, triad_s, np_s;
  shp_bench::Interleaved(
      ours_fma,
      [&] { return shp_bench::Seconds([&] { TriadLoop(a.data, b.data, c.data, out.data, kN); }); },
      &ours_s, &triad_s);
  {
    shp_bench::NumpyPeer np("fma");
    double ours2;
    shp_bench::Interleaved(
        ours_fma, [&] { return np.RunOnce(); }, &ours2, &np_s);
    shp_bench::Report("a*b+c 16M f32", ours2, "numpy", np_s, 1.5);
  }
  shp_bench::Report("a*b+c 16M f32", ours_s, "triad", triad_s, 0.9);
  std::printf(
      "  (ours: %.1f GB/s of array traffic, triad loop %.1f GB/s; 2 threads: %.3f ms)\n",
      16.0 * kN / ours_s / 1e9, 16.0 * kN / triad_s / 1e9,
      shp_bench::MedianSeconds(Runner(fma, {a.data, b.data, c.data}, out.data, &pool2)) * 1e3);

  // tanh(a*x + b) * c
  const ElementwiseProgram chain = TanhChain();
  const auto ours_chain = Runner(chain, {a.data, x.data, b.data, c.data}, out.data, nullptr);
  const auto ours_chain2 = Runner(chain, {a.data, x.data, b.data, c.data}, out.data, &pool2);
  {
    shp_bench::NumpyPeer np("tanh_chain");
    shp_bench::Interleaved(
        ours_chain, [&] { return np.RunOnce(); }, &ours_s, &np_s);
    shp_bench::Report("tanh(a*x+b)*c 16M f32", ours_s, "numpy", np_s, 3.0);
    // Ours split over 2 threads (the pool) against the same single-threaded numpy: information.
    shp_bench::Interleaved(
        ours_chain2, [&] { return np.RunOnce(); }, &ours_s, &np_s);
    shp_bench::Report("tanh(a*x+b)*c 16M f32 2thr", ours_s, "numpy", np_s, 0);
  }

  // exp(x) and logistic(x): information rows (their accuracy: elementwise.h).
  for (const auto& [op, name, scenario] :
       {std::tuple{UnaryOp::kExp, "exp(x) 16M f32", "exp"},
        std::tuple{UnaryOp::kLogistic, "logistic(x) 16M f32", "logistic"}}) {
    ElementwiseProgram unary;
    unary.AddOutput(unary.Unary(op, unary.Input(0, DType::kF32)));
    shp_bench::NumpyPeer np(scenario);
    shp_bench::Interleaved(
        Runner(unary, {x.data}, out.data, nullptr), [&] { return np.RunOnce(); }, &ours_s, &np_s);
    shp_bench::Report(name, ours_s, "numpy", np_s, 0);
  }
  return 0;
}
