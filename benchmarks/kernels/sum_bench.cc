// Float sum: shp::kernels::SumF32 (Highway, dispatched) against peers measured in the same
// run, printed as ratios at the end (machines are noisy; absolute times are not compared).
//   peer "double loop": std::accumulate in double -- the plain C++ way to get the same
//                       accuracy as SumF32;
//   peer "float loop":  std::accumulate in float -- faster-looking but inaccurate.
// Run: make bench   (or: bazel build //benchmarks:sum_bench && bazel-bin/benchmarks/sum_bench)
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "cc/kernels/sum.h"

namespace {

std::vector<float> Input(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1000) * 0.001f;
  return v;
}

void BM_SumF32(benchmark::State& state) {
  const std::vector<float> v = Input(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(shp::kernels::SumF32(v.data(), v.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(v.size() * sizeof(float)));
}

void BM_PeerDoubleLoop(benchmark::State& state) {
  const std::vector<float> v = Input(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(static_cast<float>(std::accumulate(v.begin(), v.end(), 0.0)));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(v.size() * sizeof(float)));
}

void BM_PeerFloatLoop(benchmark::State& state) {
  const std::vector<float> v = Input(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0.0f));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(v.size() * sizeof(float)));
}

const int64_t kSizes[] = {1 << 10, 1 << 16, 1 << 20};

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : kSizes) b->Arg(n);
}

BENCHMARK(BM_SumF32)->Apply(Sizes);
BENCHMARK(BM_PeerDoubleLoop)->Apply(Sizes);
BENCHMARK(BM_PeerFloatLoop)->Apply(Sizes);

// Console output as usual, plus the real time per run name for the ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) times_[run.benchmark_name()] = run.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  double Time(const std::string& name) const {
    const auto it = times_.find(name);
    return it == times_.end() ? 0.0 : it->second;
  }

 private:
  std::map<std::string, double> times_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf("\nSpeed-up of SumF32 (SIMD target %s); >1 means SumF32 is faster:\n",
              shp::kernels::SimdTargetName());
  std::printf("%10s  %18s  %18s\n", "n", "vs double loop", "vs float loop");
  for (int64_t n : kSizes) {
    const std::string suffix = "/" + std::to_string(n);
    const double ours = reporter.Time("BM_SumF32" + suffix);
    const double dbl = reporter.Time("BM_PeerDoubleLoop" + suffix);
    const double flt = reporter.Time("BM_PeerFloatLoop" + suffix);
    if (ours <= 0.0 || dbl <= 0.0 || flt <= 0.0) continue;  // filtered out
    std::printf("%10lld  %17.2fx  %17.2fx\n", static_cast<long long>(n), dbl / ours, flt / ours);
  }
  return 0;
}
