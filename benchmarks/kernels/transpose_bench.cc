// Transpose f32 (and other element sizes): shp::kernels::Transpose against numpy
// `a.T.copy()` (or `np.ascontiguousarray(a.transpose(perm))`) measured in the same run.
// numpy runs in a child process (.venv-bench/bin/python, or $SHP_BENCH_PYTHON) that prints
// its median seconds per call; our figure is the median over the same number of repetitions.
// Figures are GB/s of array data moved (read + write = 2 * bytes / time).
// Buffers are 2 MiB-aligned and madvise(MADV_HUGEPAGE)d, as numpy does for arrays >= 4 MiB
// (with THP in "madvise" mode, the Debian default, plain malloc'd memory gets 4 KiB pages and a
// large transpose is then bound by TLB misses rather than memory bandwidth).
// Run through benchmarks/kernels/run_matmul_bench.sh (bazel build -c opt).
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cc/kernels/parallel.h"
#include "cc/kernels/simd_target.h"
#include "cc/kernels/transpose.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kReps = 9;

// A zero-filled buffer of `bytes` bytes on transparent huge pages where the kernel allows.
struct HugeBuffer {
  explicit HugeBuffer(size_t bytes) : size(bytes) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    data = static_cast<uint8_t*>(std::aligned_alloc(kHuge, rounded));
    if (data == nullptr) std::abort();
    madvise(data, rounded, MADV_HUGEPAGE);
    std::memset(data, 0, bytes);
  }
  ~HugeBuffer() { std::free(data); }
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  uint8_t* data;
  size_t size;
};

double MedianSeconds(const std::function<void()>& fn) {
  fn();  // warm-up: page faults of the output
  std::vector<double> t;
  for (int r = 0; r < kReps; ++r) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Median seconds per numpy transpose-copy, or a negative value if the peer could not run.
double NumpySeconds(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm,
                    const char* dtype) {
  const char* env = std::getenv("SHP_BENCH_PYTHON");
  const std::string python = env != nullptr ? env : ".venv-bench/bin/python";
  std::string shape_s, perm_s;
  for (int64_t s : shape) shape_s += std::to_string(s) + ",";
  for (int64_t p : perm) perm_s += std::to_string(p) + ",";
  const std::string script =
      "import time, numpy as np\n"
      "a = np.random.default_rng(0).standard_normal((" +
      shape_s + ")).astype('" + dtype +
      "')\n"
      "perm = (" +
      perm_s +
      ")\n"
      "f = (lambda: a.T.copy()) if perm == tuple(reversed(range(a.ndim))) else "
      "(lambda: np.ascontiguousarray(a.transpose(perm)))\n"
      "f()\n"
      "t = []\n"
      "for _ in range(" +
      std::to_string(kReps) +
      "):\n"
      "    t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)\n"
      "print(sorted(t)[len(t) // 2])\n";
  const std::string cmd = "'" + python + "' -c \"$SHP_TRANSPOSE_SCRIPT\" 2>/dev/null";
  setenv("SHP_TRANSPOSE_SCRIPT", script.c_str(), 1);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[128] = {};
  const bool got = std::fgets(buf, sizeof(buf), p) != nullptr;
  const int rc = pclose(p);
  if (!got || rc != 0) return -1;
  return std::atof(buf);
}

}  // namespace

int main() {
  struct Case {
    const char* name;
    std::vector<int64_t> shape;
    std::vector<int64_t> perm;
    int64_t elem_size;
    const char* dtype;
    double target;  // ratio ours / peer with 1 thread (issue 5), or 0: no target
  };
  const Case cases[] = {
      {"transpose 4096x4096 f32", {4096, 4096}, {1, 0}, 4, "float32", 5.0},
      {"transpose 4096x4096 f64", {4096, 4096}, {1, 0}, 8, "float64", 0},
      {"transpose 4096x4096 u8", {4096, 4096}, {1, 0}, 1, "uint8", 0},
      {"permute 64x256x256 f32 (2,0,1)", {64, 256, 256}, {2, 0, 1}, 4, "float32", 0},
      {"permute 64x512x64 f32 (1,0,2)", {64, 512, 64}, {1, 0, 2}, 4, "float32", 0},
  };
  std::printf("# transpose / permute; SIMD target %s; peer numpy (copy of the transposed view)\n",
              shp::kernels::SimdTargetName());
  std::printf("# figures: GB/s moved (2 * bytes / median time of %d reps); ratio = ours / peer\n",
              kReps);
  std::printf("%-40s %10s %10s %8s  %-7s  %s\n", "scenario", "ours", "peer", "ratio", "target",
              "verdict");
  shp::kernels::ThreadPool pool2(2);
  {
    // Ceiling for a copy of this size on this machine: plain memcpy of a 64 MiB array.
    const size_t bytes = size_t{4096} * 4096 * 4;
    HugeBuffer in(bytes), out(bytes);
    const double t = MedianSeconds([&] { std::memcpy(out.data, in.data, bytes); });
    std::printf("# memcpy of 64 MiB (bandwidth ceiling, 1 thread): %.2f GB/s\n",
                2.0 * static_cast<double>(bytes) * 1e-9 / t);
  }
  for (const Case& c : cases) {
    int64_t total = 1;
    for (int64_t s : c.shape) total *= s;
    const int64_t bytes = total * c.elem_size;
    HugeBuffer in(static_cast<size_t>(bytes)), out(static_cast<size_t>(bytes));
    for (size_t i = 0; i < in.size; ++i) in.data[i] = static_cast<uint8_t>(i * 131 + 7);
    const double peer = NumpySeconds(c.shape, c.perm, c.dtype);
    const double gb = 2.0 * static_cast<double>(bytes) * 1e-9;
    for (int threads : {1, 2}) {
      shp::kernels::ThreadPool* pool = threads == 1 ? nullptr : &pool2;
      const double ours = MedianSeconds([&] {
        shp::kernels::Transpose(in.data, c.shape.data(), c.perm.data(),
                                static_cast<int>(c.shape.size()), c.elem_size, out.data, pool);
      });
      const std::string name = std::string(c.name) + (threads == 1 ? ", 1 thread" : ", 2 threads");
      const double target = threads == 1 ? c.target : 0;
      char target_s[16] = "-";
      if (target > 0) std::snprintf(target_s, sizeof(target_s), ">=%.1fx", target);
      if (peer > 0) {
        const char* verdict = target <= 0 ? "-" : peer / ours >= target ? "met" : "MISSED";
        std::printf("%-40s %10.2f %10.2f %7.2fx  %-7s  %s\n", name.c_str(), gb / ours, gb / peer,
                    peer / ours, target_s, verdict);
      } else {
        std::printf("%-40s %10.2f %10s %8s  %-7s  %s\n", name.c_str(), gb / ours, "n/a", "n/a",
                    target_s, target > 0 ? "n/a" : "-");
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
