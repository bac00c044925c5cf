#!/usr/bin/env bash
# Builds the elementwise / softmax / layer-norm / sum / select benchmarks with `bazel build -c
# opt`, runs them (each times ours and its peers run by run in alternation: numpy from
# .venv-bench, a plain C++ triad loop or double loop, an Eigen row loop; select_bench: numpy's
# nonzero, argwhere and x[mask]), and prints one table
#   scenario ours peer ratio target verdict
# where ratio = peer time / our time (> 1 means ours is faster); each row with a target says
# met or MISSED, and the last line counts them: `targets: N met, M MISSED, K not measured`.
# 1 thread unless the scenario says. A bench whose result check fails (softmax vs Eigen, sum vs
# a long double sum) fails the driver. Installs the peers first if missing (tools/setup.sh
# --bench for Eigen, benchmarks/setup_env.sh for numpy).
# --quick: 5 timed repetitions per figure instead of 11, select_bench at 50% density only
# (make bench-quick).
# Usage: benchmarks/kernels/run_kernels_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

args=()
case "${1:-}" in
  "") ;;
  --quick) args=(--quick) ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

tools/setup.sh --bench
benchmarks/setup_env.sh
benches=(elementwise_bench softmax_bench layernorm_bench sum_bench select_bench)
source benchmarks/bench_build.sh
bench_build "${benches[@]/#/\/\/benchmarks:}" || exit 1
bin="$BENCH_BIN_DIR/benchmarks"

export SHP_BENCH_PYTHON="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# With pipefail, a bench that exits non-zero (a failed result check) stops the driver.
for b in "${benches[@]}"; do
  echo "==== $b"
  "$bin/$b" "${args[@]}" | tee -a "$log" | { grep -v '^RESULT' || true; }
done

echo
echo "==== summary (median ms; ratio = peer / ours, > 1 means ours is faster)"
# RESULT lines: RESULT <scenario words...> <ours ms> <peer> <peer ms> <ratio> <target> <verdict>
awk '
  BEGIN { fmt = "%-26s %10s  %-8s %10s %7s  %-7s %s\n"
          printf fmt, "scenario", "ours", "peer", "peer ms", "ratio", "target", "verdict" }
  /^RESULT/ {
    n = NF; scen = $2; for (i = 3; i <= n - 6; ++i) scen = scen " " $i;
    printf fmt, scen, $(n-5), $(n-4), $(n-3), $(n-2), $(n-1), $n
    if ($n == "met") met++; else if ($n == "MISSED") missed++; else if ($n == "n/a") na++
  }
  END { if (met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$log"
