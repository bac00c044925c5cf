#!/usr/bin/env bash
# Builds the elementwise / softmax / layer-norm benchmarks with `bazel build -c opt`, runs them
# (each times ours and its peers run by run in alternation: numpy from .venv-bench, a plain C++
# triad loop, an Eigen row loop), and prints one table `scenario ours peer ratio` where
# ratio = peer time / our time (> 1 means ours is faster). 1 thread unless the scenario says.
# Installs the peers first if missing (tools/setup.sh --bench for Eigen, benchmarks/setup_env.sh
# for numpy).
# Usage: benchmarks/kernels/run_kernels_bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/setup.sh --bench
benchmarks/setup_env.sh
targets=(//benchmarks:elementwise_bench //benchmarks:softmax_bench //benchmarks:layernorm_bench)
bazel build -c opt "${targets[@]}" 2>&1 | grep -E '^(ERROR|FAILED)' || true
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/benchmarks"

export SHP_BENCH_PYTHON="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for b in elementwise_bench softmax_bench layernorm_bench; do
  echo "==== $b"
  "$bin/$b" | tee -a "$log" | grep -v '^RESULT'
done

echo
echo "==== summary (median ms; ratio = peer / ours, > 1 means ours is faster)"
printf '%-26s %10s  %-6s %10s %7s\n' scenario ours peer "peer ms" ratio
# RESULT lines: RESULT <scenario words...> <ours ms> <peer> <peer ms> <ratio>
awk '/^RESULT/ {
  n = NF; scen = $2; for (i = 3; i <= n - 4; ++i) scen = scen " " $i;
  printf "%-26s %10s  %-6s %10s %7s\n", scen, $(n-3), $(n-2), $(n-1), $n
}' "$log"
