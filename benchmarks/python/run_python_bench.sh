#!/usr/bin/env bash
# Benchmark of the Python binding (issue 15; picked up by benchmarks/run_all.sh / make bench):
# runtime(x=...) on a tiny program (8 floats) against numpy's np.add and onnxruntime in the
# same run, and the binding's overhead on the examples/mlp MLP at batch 64 against the same
# program run from C (mlp_c_time.c, compiled here against the -c opt libshapepoly.so). Prints
#   scenario | ours | peer | peer us | ratio | target | verdict
# (times in microseconds, medians; ratio = peer / ours) and last
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/python/run_python_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
# The -c opt library, as the other drivers use (one build for `make bench`).
source benchmarks/bench_build.sh
bench_stage_lib || exit 1
lib="$work/libshapepoly.so"
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"

cc -O2 -o "$work/mlp_c_time" benchmarks/python/mlp_c_time.c -Ic_api/include \
  -L"$work" -lshapepoly -Wl,-rpath,"$work"
SHAPEPOLY_LIB="$lib" "$py" benchmarks/python/bench.py --c-tool "$work/mlp_c_time" "$@" \
  > "$work/out"

grep '^INFO' "$work/out" | sed 's/^INFO //'
echo
echo "times in us (median of repetitions); ratio = peer / ours (> 1: ours is faster)"
awk -F' [|] ' '
  BEGIN { fmt = "%-44s | %8s | %-24s | %8s | %6s | %-19s | %s\n"
          printf fmt, "scenario", "ours", "peer", "peer us", "ratio", "target", "verdict" }
  /^ROW / { sub(/^ROW /, "", $1);
            printf fmt, $1, $2, $3, $4, $5, $6, $7
            if ($7 == "met") met++; else if ($7 == "MISSED") missed++; else if ($7 == "n/a") na++ }
  END { if (NR == 0 || met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$work/out"
