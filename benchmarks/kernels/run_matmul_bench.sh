#!/usr/bin/env bash
# Builds the kernel benchmarks with `bazel build -c opt` and prints one table
# `scenario ours peer ratio` (ratio = ours / peer: >1 means ours is faster):
#   - matmul f32 256/512/1024/2048, 1 and 2 threads, vs OpenBLAS cblas_sgemm (same threads);
#   - transpose 4096x4096 f32 (and other shapes/dtypes) vs numpy `.T.copy()`.
# Installs the peers first if missing (tools/setup.sh --bench, benchmarks/setup_env.sh).
# Usage: benchmarks/kernels/run_matmul_bench.sh [matmul sizes...]
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/setup.sh --bench
benchmarks/setup_env.sh
bazel build -c opt //benchmarks:matmul_bench //benchmarks:transpose_bench 2>&1 |
  grep -E '^(ERROR|FAILED)' || true
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/benchmarks"

# Pin OpenBLAS's own threading to what each scenario asks for (the bench calls
# openblas_set_num_threads); this keeps its startup from spawning extra threads.
export OPENBLAS_NUM_THREADS=2
"$bin/matmul_bench" "$@"
echo
SHP_BENCH_PYTHON="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}" "$bin/transpose_bench"
