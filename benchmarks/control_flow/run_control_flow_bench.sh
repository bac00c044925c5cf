#!/usr/bin/env bash
# Control flow (picked up by benchmarks/run_all.sh / make bench): builds libshapepoly.so with
# `bazel build -c opt` (benchmarks/bench_build.sh) and runs benchmarks/control_flow/
# control_flow_bench.py with .venv-bench's Python (JAX, numpy): a 1,000-step GRU as our
# shapepoly.scan against jax.lax.scan under jax.jit (hidden 64 and 256, batch 1 and 16; both
# results checked against each other and a float64 numpy loop before timing), a 10,000-step scan
# of a small body against the same body unrolled in one straight-line program (target: the scan
# within 2x, ratio >= 0.50), the per-iteration overhead in microseconds, and JAX's scans of the
# same bodies; one thread on both sides (XLA_FLAGS=--xla_cpu_multi_thread_eigen=false). It prints
# one table
#   scenario ours peer ratio rounds target verdict
# (median times; ratio = peer time / our time, > 1: ours faster, the median of alternating
# rounds' ratios, 'rounds' their spread), the CPU, our SIMD target and JAX's backend and XLA's
# codegen target; the last line is
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/control_flow/run_control_flow_bench.sh [--quick]   (--quick: 3 rounds, not 7)
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
source benchmarks/bench_build.sh
bench_stage_lib || exit 1
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
# numpy is only the checks' oracle here: one OpenBLAS thread.
OPENBLAS_NUM_THREADS=1 SHAPEPOLY_LIB="$work/libshapepoly.so" "$py" \
  benchmarks/control_flow/control_flow_bench.py "$@"
