#!/usr/bin/env bash
# Symbolic cost (issue 19): builds //benchmarks:cost_bench with `bazel build -c opt`, runs our side
# (the four cost formulas of a 1,000-op program with their bounds, then FLOPs at batch 1, 64 and
# 4096 through shp_runtime_cost) and the peer (JAX: lower + compile + cost_analysis per shape,
# benchmarks/cost/peers.py from .venv-bench) in the same run, and prints
#   scenario | ours | peer | ratio | target | verdict
# (medians of repetitions; ratio = peer / ours, > 1: ours is faster), then
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/cost/run_cost_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

reps=21 peer_reps=3
[[ "${1:-}" == --quick ]] && reps=5 peer_reps=1
benchmarks/setup_env.sh
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
source benchmarks/bench_build.sh
bench_build //benchmarks:cost_bench || exit 1
bin="$BENCH_BIN_DIR/benchmarks/cost_bench"

ours="$(mktemp)" peer="$(mktemp)"
trap 'rm -f "$ours" "$peer"' EXIT
"$bin" --reps "$reps" > "$ours"
"$py" benchmarks/cost/peers.py --reps "$peer_reps" > "$peer" || echo "PEER failed" >> "$peer"

grep '^INFO' "$ours" | sed 's/^INFO //'
grep '^PEER jax' "$peer" | sed 's/^PEER jax/JAX/' || true
for b in 1 64 4096; do
  o=$(awk -v b=$b '$1 == "OURS" && $2 == "flops" && $3 == b { print $4 }' "$ours")
  p=$(awk -v b=$b '$1 == "PEER" && $2 == "flops" && $3 == b { print $4 }' "$peer")
  echo "FLOPs at batch $b: ours $o (formula, docs/ops.md rules), JAX ${p:-n/a} (XLA's own count)"
done
formulas=$(awk '$1 == "OURS" && $2 == "formulas_ms" { print $3 }' "$ours")
shapes=$(awk '$1 == "OURS" && $2 == "shapes_ms" { print $3 }' "$ours")
peer_shapes=$(awk '$1 == "PEER" && $2 == "shapes_ms" { print $3 }' "$peer")
echo
awk -v f="$formulas" -v s="$shapes" -v p="$peer_shapes" 'BEGIN {
  fmt = "%-52s | %10s | %12s | %9s | %-9s | %s\n"
  printf fmt, "scenario", "ours (ms)", "peer (ms)", "ratio", "target", "verdict"
  v = (f <= 10) ? "met" : "MISSED"; (v == "met") ? met++ : missed++
  printf fmt, "cost formulas of a 1,000-op program (4 kinds)", f, "-", "-", "<= 10 ms", v
  both = f + s
  if (p == "") { printf fmt, "cost at 3 shapes: formulas + 3 evaluations", both, "n/a", "-", "-", "n/a"; na++ }
  else { printf fmt, "cost at 3 shapes: formulas + 3 evaluations", both, "JAX " p, sprintf("%.0fx", p / both), "-", "-" }
  printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na
}'
