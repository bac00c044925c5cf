#!/usr/bin/env bash
# Builds the kernel benchmarks with `bazel build -c opt` and prints one table
# `scenario ours peer ratio target verdict` (ratio = ours / peer: >1 means ours is faster):
#   - matmul f32 squares 64..2048 and MLP layer shapes (m = batch, 784 -> 256, 256 -> 10), 1 and
#     2 threads, vs OpenBLAS cblas_sgemm (scipy-openblas32's native core) and vs ONNX Runtime
#     (MLAS, a one-MatMul model; "n/a" when onnx/onnxruntime are not in .venv-bench) with the
#     same threads; target >= 1.0x on every row (issues 18, 40); squares from 1024 up also
#     against the measured FMA peak (target >= 0.85); and for the MLP shapes a 'dense' row (pre-packed B with the fused
#     bias + relu epilogue vs cblas_sgemm followed by a bias + relu loop); for squares from 512
#     up a '2 threads / 1 thread' row (our speed-up, target >= 1.7x). Each row's ratio is the
#     median of per-round ratios (both sides back to back in each round), 'rounds' their spread;
#   - transpose 4096x4096 f32 (and other shapes/dtypes) vs numpy `.T.copy()`; target >= 5x for
#     the f32 4096x4096 1-thread row (issue 5), the other rows are information.
# Each row with a target says met or MISSED; the last line counts them:
#   targets: N met, M MISSED, K not measured
# Installs the peers first if missing (tools/setup.sh --bench, benchmarks/setup_env.sh).
# Usage: benchmarks/kernels/run_matmul_bench.sh [--no-ort] [matmul sizes N or MxNxK...]
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/setup.sh --bench
benchmarks/setup_env.sh
build_log="$(mktemp)"
if ! bazel build -c opt //benchmarks:matmul_bench //benchmarks:transpose_bench >"$build_log" 2>&1
then
  grep -E '^(ERROR|FAILED)|error:' "$build_log" | head -20
  rm -f "$build_log"
  exit 1
fi
rm -f "$build_log"
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/benchmarks"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# The GEMM peer: the scipy-openblas32 wheel's OpenBLAS (0.3.34, a core kernel for every current
# x86 CPU, AVX-512 ones included), not Debian's 0.3.21 (SSE3 "Prescott" on Sapphire Rapids).
# matmul_bench prints the core it picked and marks rows whose core is not native.
if [[ -z "${SHP_OPENBLAS_LIB:-}" ]]; then
  SHP_OPENBLAS_LIB="$("${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}" -c \
    'import os, scipy_openblas32 as s; print(os.path.join(s.get_lib_dir(), "libscipy_openblas.so"))' \
    2>/dev/null)" || echo "# scipy-openblas32 missing from .venv-bench: the system OpenBLAS is the peer"
  export SHP_OPENBLAS_LIB
fi
# Pin OpenBLAS's own threading to what each scenario asks for (the bench calls
# openblas_set_num_threads); this keeps its startup from spawning extra threads.
export OPENBLAS_NUM_THREADS=2
SHP_BENCH_PYTHON="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}" "$bin/matmul_bench" "$@" |
  tee "$log"
echo
SHP_BENCH_PYTHON="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}" "$bin/transpose_bench" |
  tee -a "$log"
echo
# A row's last field is its verdict: met, MISSED, n/a (peer missing) or - (no target).
awk '$NF == "met" { met++ } $NF == "MISSED" { missed++ } $NF == "n/a" { na++ }
     END { if (met + missed + na == 0) { print "no target row"; exit 1 }
           printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$log"
