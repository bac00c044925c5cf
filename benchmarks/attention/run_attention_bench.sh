#!/usr/bin/env bash
# ONNX Attention (opset 23) benchmark (issue 37; picked up by benchmarks/run_all.sh / make bench):
# the model imported by shapepoly.onnx (one fused attention op, run through the C API, -c opt
# library) against onnxruntime's Attention in the same process, on 1 and 2 threads. Prints
#   scenario | ours us | spread | ort us | spread | ratio | target | verdict
# (medians of alternating rounds, spread = min-max; ratio = ort / ours: > 1 means ours is
# faster), the CPU and SIMD target, and last
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/attention/run_attention_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
source benchmarks/bench_build.sh
bench_stage_lib || exit 1
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
SHAPEPOLY_LIB="$work/libshapepoly.so" "$py" benchmarks/attention/attention_bench.py "$@" > "$work/out"

grep '^INFO' "$work/out" | sed 's/^INFO //' || true
awk -F' [|] ' '
  BEGIN { fmt = "%-72s | %9s | %-9s | %9s | %-9s | %6s | %-8s | %s\n"
          printf fmt, "scenario", "ours us", "spread", "ort us", "spread", "ratio", "target", "verdict" }
  /^ROW / { sub(/^ROW /, "", $1);
            printf fmt, $1, $2, $3, $4, $5, $6, $7, $8
            if ($8 == "met") met++; else if ($8 == "MISSED") missed++; else if ($8 ~ /^n\/a/) na++ }
  END { if (met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$work/out"
