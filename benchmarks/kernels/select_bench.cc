// Data-dependent selection (issue 13), 1 thread: ours vs numpy in the same run, timed run by run
// in alternation (numpy is a child process running select_bench_numpy.py):
//   - nonzero of 16M f32 at 1%, 50%, 99% density: CountNonzero + Nonzero (the count plans the
//     output, as the runtime does) vs np.nonzero(x) on the 1-D array, and vs np.argwhere(x)
//     on the [4096, 4096] array (our layout: [count, 2] int64); np.nonzero on the 2-D array
//     (one index array per axis) is an information row;
//   - mask-select of 1M x 16 f32 rows with a 1-D mask: CountNonzero(mask) + MaskSelect vs
//     x[mask].
// Target of each compared row: >= 2x numpy (issue 13). Our 2-thread time is printed too.
// Both sides build the same data: element i is nonzero when the splitmix64 hash of i is below
// density * 2^32. Before timing, our output is checked against a scalar loop (a mismatch fails
// the bench, exit 1). Our outputs are preallocated (the runtime plans them from the count);
// numpy allocates its result per call, as a numpy user's call does.
// Run from the repository root, normally through benchmarks/kernels/run_kernels_bench.sh.
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/kernels/elementwise_bench_util.h"
#include "cc/kernels/parallel.h"
#include "cc/kernels/select.h"
#include "cc/kernels/simd_target.h"

namespace {

using shp::kernels::DType;

constexpr int64_t kN = int64_t{16} << 20;                // nonzero: 16M f32, also [4096, 4096]
constexpr int64_t kRows = int64_t{1} << 20, kCols = 16;  // mask select: x is [1M, 16] f32

// A buffer of `bytes` bytes on transparent huge pages where the kernel allows it (numpy does
// the same for arrays >= 4 MiB), zero-filled.
struct HugeBytes {
  explicit HugeBytes(size_t bytes) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge + kHuge;
    data = static_cast<uint8_t*>(std::aligned_alloc(kHuge, rounded));
    if (data == nullptr) std::abort();
    madvise(data, rounded, MADV_HUGEPAGE);
    std::memset(data, 0, rounded);
  }
  ~HugeBytes() { std::free(data); }
  HugeBytes(const HugeBytes&) = delete;
  HugeBytes& operator=(const HugeBytes&) = delete;
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(data);
  }
  uint8_t* data;
};

// True when element i of the pattern is nonzero: splitmix64(i + seed) >> 32 < percent% of 2^32
// (select_bench_numpy.py computes the same).
bool Pattern(uint64_t i, int percent, uint64_t seed) {
  uint64_t z = (i + seed) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z >> 32) < (uint64_t{1} << 32) * static_cast<uint64_t>(percent) / 100;
}

// Our timing against the numpy scenario `scenario`, whose count must be `count`.
void Compare(const std::string& row, const std::string& scenario, int64_t count,
             const std::function<void()>& ours_fn, double target, const char* peer = "numpy") {
  setenv("SHP_SELECT_COUNT", std::to_string(count).c_str(), 1);
  double ours, np_s;
  shp_bench::NumpyPeer np(scenario);
  shp_bench::Interleaved(
      ours_fn, [&] { return np.RunOnce(); }, &ours, &np_s);
  shp_bench::Report(row, ours, peer, np_s, target);
}

void PrintThreads(const std::function<void(shp::kernels::ThreadPool*)>& fn) {
  shp::kernels::ThreadPool pool2(2);
  std::printf("  (2 threads: %.3f ms)\n", shp_bench::MedianSeconds([&] { fn(&pool2); }) * 1e3);
}

// CountNonzero then Nonzero, as the runtime runs the op; aborts on a kernel error.
void RunNonzero(const float* x, const int64_t* shape, int rank, int64_t* out,
                shp::kernels::ThreadPool* pool) {
  int64_t count = 0;
  if (!shp::kernels::CountNonzero(DType::kF32, x, kN, pool, &count) ||
      !shp::kernels::Nonzero(DType::kF32, x, shape, rank, count, out, pool)) {
    std::abort();
  }
}

void RunMaskSelect(const float* x, const uint8_t* mask, float* out,
                   shp::kernels::ThreadPool* pool) {
  int64_t count = 0;
  if (!shp::kernels::CountNonzero(DType::kBool, mask, kRows, pool, &count) ||
      !shp::kernels::MaskSelect(x, 1, kRows, kCols, sizeof(float), mask, count, out, pool)) {
    std::abort();
  }
}

}  // namespace

int main(int argc, char** argv) {
  shp_bench::ParseArgs(argc, argv);
  // This bench's numpy peer (run from the repository root).
  setenv("SHP_BENCH_NUMPY_SCRIPT", "benchmarks/kernels/select_bench_numpy.py", 1);
  shp_bench::PrintMachine(shp::kernels::SimdTargetName(), "1 thread (2: information)");
  std::printf("selection kernels, median of %d\n", shp_bench::Reps());
  HugeBytes xbuf(kN * sizeof(float));
  HugeBytes obuf(kN * 2 * sizeof(int64_t));
  float* x = xbuf.as<float>();
  int64_t* out = obuf.as<int64_t>();
  const int64_t shape1[1] = {kN}, shape2[2] = {4096, 4096};
  // --quick: the middle density only (the three take ~35 s of a quick run).
  const std::vector<int> percents =
      shp_bench::Quick() ? std::vector<int>{50} : std::vector<int>{1, 50, 99};
  for (int percent : percents) {
    int64_t count = 0;
    for (int64_t i = 0; i < kN; ++i) {
      x[i] = Pattern(static_cast<uint64_t>(i), percent, 1) ? 1.5f : 0.0f;
      count += x[i] != 0;
    }
    // Check both layouts against a scalar loop before timing.
    RunNonzero(x, shape1, 1, out, nullptr);
    for (int64_t i = 0, k = 0; i < kN; ++i) {
      if (x[i] != 0 && out[k++] != i) {
        std::printf("ERROR: nonzero 1-D at %d%%: row %ld is %ld, want %ld\n", percent,
                    static_cast<long>(k - 1), static_cast<long>(out[k - 1]), static_cast<long>(i));
        return 1;
      }
    }
    RunNonzero(x, shape2, 2, out, nullptr);
    for (int64_t i = 0, k = 0; i < kN; ++i) {
      if (x[i] == 0) continue;
      if (out[2 * k] != i / 4096 || out[2 * k + 1] != i % 4096) {
        std::printf("ERROR: argwhere 2-D at %d%%: row %ld is wrong\n", percent,
                    static_cast<long>(k));
        return 1;
      }
      ++k;
    }
    const std::string p = std::to_string(percent);
    std::printf("density %d%%: %ld nonzero of %ld\n", percent, static_cast<long>(count),
                static_cast<long>(kN));
    Compare(
        "nonzero 16M f32 1-D " + p + "%", "nonzero_1d_" + p, count,
        [&] { RunNonzero(x, shape1, 1, out, nullptr); }, 2.0);
    PrintThreads([&](shp::kernels::ThreadPool* pool) { RunNonzero(x, shape1, 1, out, pool); });
    Compare(
        "argwhere 4096x4096 f32 " + p + "%", "argwhere_2d_" + p, count,
        [&] { RunNonzero(x, shape2, 2, out, nullptr); }, 2.0);
    PrintThreads([&](shp::kernels::ThreadPool* pool) { RunNonzero(x, shape2, 2, out, pool); });
    Compare(
        "argwhere 4096x4096 f32 " + p + "%", "nonzero_2d_" + p, count,
        [&] { RunNonzero(x, shape2, 2, out, nullptr); }, 0, "np.nz-2d");
  }

  // Mask select: x is N(0, 1) f32 [1M, 16]; the output reuses `out`'s memory.
  shp_bench::FloatBuffer xm(kRows * kCols, 3);
  HugeBytes mbuf(kRows);
  uint8_t* mask = mbuf.data;
  float* y = reinterpret_cast<float*>(out);
  for (int percent : percents) {
    int64_t count = 0;
    for (int64_t i = 0; i < kRows; ++i) {
      mask[i] = Pattern(static_cast<uint64_t>(i), percent, 2) ? 1 : 0;
      count += mask[i];
    }
    RunMaskSelect(xm.data, mask, y, nullptr);
    for (int64_t i = 0, k = 0; i < kRows; ++i) {
      if (mask[i] == 0) continue;
      if (std::memcmp(y + k * kCols, xm.data + i * kCols, kCols * sizeof(float)) != 0) {
        std::printf("ERROR: mask select at %d%%: row %ld is wrong\n", percent,
                    static_cast<long>(k));
        return 1;
      }
      ++k;
    }
    const std::string p = std::to_string(percent);
    std::printf("mask density %d%%: %ld of %ld rows\n", percent, static_cast<long>(count),
                static_cast<long>(kRows));
    Compare(
        "mask-select 1Mx16 f32 " + p + "%", "mask_" + p, count,
        [&] { RunMaskSelect(xm.data, mask, y, nullptr); }, 2.0);
    PrintThreads([&](shp::kernels::ThreadPool* pool) { RunMaskSelect(xm.data, mask, y, pool); });
  }
  return 0;
}
