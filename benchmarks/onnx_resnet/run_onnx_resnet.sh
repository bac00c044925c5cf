#!/usr/bin/env bash
# Light ResNet-50 (random weights) against onnxruntime in the same run (issue 16; picked up by
# benchmarks/run_all.sh / make bench): steady state at 1x3x224x224 and 8x3x224x224 on 1 and 2
# threads, and the first call at a new image size (320x240) against ORT's first call on a
# session with dynamic axes. Prints
#   scenario | ours ms | spread | ORT ms | spread | ratio | target | verdict
# (medians; spread = min-max; ratio = ORT / ours, > 1: ours is faster) and last
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/onnx_resnet/run_onnx_resnet.sh [--quick] [--reps N] [--threads 1,2]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
# The -c opt library, as the other drivers use (one build for `make bench`); a copy, because
# bazel-bin follows the last build's configuration.
source benchmarks/bench_build.sh
bench_stage_lib || exit 1
lib="$work/libshapepoly.so"
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
out="$work/out"
if ! SHAPEPOLY_LIB="$lib" "$py" benchmarks/onnx_resnet/bench_onnx_resnet.py "$@" > "$out"; then
  cat "$out"
  echo "bench_onnx_resnet.py failed"
  exit 1
fi
grep '^INFO' "$out" | sed 's/^INFO //' || true

echo
echo "times in ms (median; spread = min-max); ratio = ORT / ours (> 1: ours is faster)"
awk -F' [|] ' '
  BEGIN { fmt = "%-40s | %9s | %-15s | %9s | %-15s | %6s | %-6s | %s\n"
          printf fmt, "scenario", "ours", "spread", "ORT", "spread", "ratio", "target", "verdict" }
  /^ROW / { sub(/^ROW /, "", $1);
            printf fmt, $1, $2, $3, $4, $5, $6, $7, $8
            if ($8 == "met") met++; else if ($8 == "MISSED") missed++; else na++ }
  END { if (met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$out"
