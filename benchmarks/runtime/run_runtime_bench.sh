#!/usr/bin/env bash
# Runtime benchmarks of issues 5 and 18: builds //benchmarks:runtime_bench and libshapepoly.so
# with `bazel build -c opt`, runs our side (C API) with the peers (numpy, onnxruntime, JAX from
# .venv-bench, benchmarks/runtime/peers.py) in the same run, and prints one table
#   scenario | ours | peer | peer us | ratio | target | verdict | rounds
#   (and rounds: the spread of the per-round ratios, for rows measured in alternating rounds)
# with times in microseconds and ratio = peer time / our time (> 1 means ours is faster); each
# row with a target says met or MISSED, and the last line counts them:
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/runtime/run_runtime_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
bazel build -c opt //benchmarks:runtime_bench 2>&1 | grep -E '^(ERROR|FAILED)' || true
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/benchmarks/runtime_bench"
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"

out="$(mktemp)"
work="$(mktemp -d)"
trap 'rm -rf "$out" "$work"' EXIT
"$bin" --python "$py" --peers "$PWD/benchmarks/runtime/peers.py" --workdir "$work" "$@" > "$out"

grep '^INFO' "$out" | sed 's/^INFO //'
echo
echo "times in us (median of repetitions); ratio = peer / ours (> 1: ours is faster); rows"
echo "measured in alternating rounds: ratio = median of the rounds' ratios, rounds = their spread"
awk -F' [|] ' '
  BEGIN { fmt = "%-36s | %10s | %-22s | %10s | %8s | %-10s | %-7s | %s\n"
          printf fmt, "scenario", "ours", "peer", "peer us", "ratio", "target", "verdict", "rounds" }
  /^ROW / { sub(/^ROW /, "", $1);
            printf fmt, $1, $2, $3, $4, $5, $6, $7, $8
            if ($7 == "met") met++; else if ($7 == "MISSED") missed++; else if ($7 == "n/a") na++ }
  END { if (NR == 0 || met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$out"
