#!/usr/bin/env bash
# Conv micro-benchmarks (issue 16): builds libshapepoly.so with `bazel build -c opt`, then runs
# benchmarks/conv/conv_bench.py, which times our runtime's conv and onnxruntime's Conv (from
# .venv-bench) on the same shapes in the same process, 1 and 2 threads: 3x3 (1x64x56x56 -> 64),
# 1x1 (1x256x56x56 -> 64) and depthwise 3x3 (1x128x56x56, groups 128). It prints GFLOP/s, the
# ratio ours / ORT (target >= 1.0x per row) and our fraction of the machine's f32 peak, and
# checks both sides agree. Last line: targets: N met, M MISSED, K not measured
# Usage: benchmarks/conv/run_conv_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
source benchmarks/bench_build.sh
bench_build //:libshapepoly.so || exit 1
lib="$BENCH_BIN_DIR/libshapepoly.so"
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
SHAPEPOLY_LIB="$lib" "$py" benchmarks/conv/conv_bench.py "$@"
