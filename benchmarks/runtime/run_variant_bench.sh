#!/usr/bin/env bash
# Variant dispatch benchmark of issue 11: builds //benchmarks:variant_bench and libshapepoly.so
# with `bazel build -c opt`, runs it and prints one table
#   scenario | ours | reference | reference us | ratio | target | verdict
# with times in microseconds (medians); each row with a target says met or MISSED, and the last
# line counts them:
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/runtime/run_variant_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
source benchmarks/bench_build.sh
bench_build //benchmarks:variant_bench || exit 1
bin="$BENCH_BIN_DIR/benchmarks/variant_bench"
"$bin" "$@" > "$out"

grep '^INFO' "$out" | sed 's/^INFO //'
echo
echo "times in us (cached rows: the fastest round; new-shape rows: medians); ratio = reference / ours"
awk -F' [|] ' '
  BEGIN { fmt = "%-44s | %9s | %-10s | %12s | %6s | %-12s | %s\n"
          printf fmt, "scenario", "ours", "reference", "reference us", "ratio", "target", "verdict" }
  /^ROW / { sub(/^ROW /, "", $1);
            printf fmt, $1, $2, $3, $4, $5, $6, $7
            if ($7 == "met") met++; else if ($7 == "MISSED") missed++; else if ($7 == "n/a") na++ }
  END { if (NR == 0 || met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$out"
