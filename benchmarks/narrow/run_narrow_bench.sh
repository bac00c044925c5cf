#!/usr/bin/env bash
# Matmul on the narrow element types (picked up by benchmarks/run_all.sh / make bench): f16 and
# bf16 (computed in f32, rounded once) and u8 x i8 -> i32 (as MatMulInteger) through the Python
# binding, against our f32 matmul of the same shape and onnxruntime (MatMul on float16,
# MatMulInteger; it has no bf16 MatMul on the CPU) in the same process, 1024^3 and 256x256x784,
# 1 and 2 threads. Builds libshapepoly.so with `bazel build -c opt` (benchmarks/bench_build.sh)
# and runs benchmarks/narrow/narrow_bench.py, which checks every result against numpy first and
# prints one table
#   scenario ours peer ratio rounds target verdict
# (median GFLOP/s, GOP/s for int8; ratio = ours / peer = peer time / our time, > 1: ours is
# faster, the median of alternating rounds' ratios, 'rounds' their spread), the SIMD target and
# the instructions compiled into it, and what each side's time is made of. The rows carry no
# target ("-"); the last line is
#   targets: 0 met, 0 MISSED, 0 not measured
# Usage: benchmarks/narrow/run_narrow_bench.sh [--quick] [--cpu-time] [--int-only]
#   (--quick: 3 rounds instead of 7; --int-only: the u8xi8 rows only)
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
source benchmarks/bench_build.sh
bench_stage_lib || exit 1
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
# numpy is only the checks' oracle here: one OpenBLAS thread, so that no spinning BLAS worker
# takes a core from the timed calls.
OPENBLAS_NUM_THREADS=1 SHAPEPOLY_LIB="$work/libshapepoly.so" "$py" \
  benchmarks/narrow/narrow_bench.py "$@"
