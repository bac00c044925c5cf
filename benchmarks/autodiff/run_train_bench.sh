#!/usr/bin/env bash
# Training-step benchmark of issue 10: builds //benchmarks:train_bench and libshapepoly.so with
# `bazel build -c opt`, first runs the JAX cross-check (jax_crosscheck.py: loss and gradients of
# the MLP at batch 1, 7 and 64 against jax.value_and_grad; a FAIL fails this driver), then our
# side (C API) with the peers (JAX, numpy from .venv-bench, benchmarks/autodiff/peers.py) in
# the same run, and prints one table
#   scenario | ours | peer | peer us | ratio | target | verdict
# with times in microseconds and ratio = peer time / our time (> 1 means ours is faster); each
# row with a target says met or MISSED, and the last line counts them:
#   targets: N met, M MISSED, K not measured
# Usage: benchmarks/autodiff/run_train_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
source benchmarks/bench_build.sh
bench_build //:libshapepoly.so //benchmarks:train_bench || exit 1
bin_dir="$BENCH_BIN_DIR"
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"

echo "== JAX cross-check (benchmarks/autodiff/jax_crosscheck.py)"
"$py" benchmarks/autodiff/jax_crosscheck.py --lib "$bin_dir/libshapepoly.so" --activations relu
echo

out="$(mktemp)"
work="$(mktemp -d)"
trap 'rm -rf "$out" "$work"' EXIT
"$bin_dir/benchmarks/train_bench" --python "$py" --peers "$PWD/benchmarks/autodiff/peers.py" \
  --workdir "$work" "$@" > "$out"

grep '^INFO' "$out" | sed 's/^INFO //'
echo
echo "times in us (median of repetitions); ratio = peer / ours (> 1: ours is faster)"
awk -F' [|] ' '
  BEGIN { fmt = "%-40s | %10s | %-30s | %10s | %8s | %-10s | %s\n"
          printf fmt, "scenario", "ours", "peer", "peer us", "ratio", "target", "verdict" }
  /^ROW / { sub(/^ROW /, "", $1);
            printf fmt, $1, $2, $3, $4, $5, $6, $7
            if ($7 == "met") met++; else if ($7 == "MISSED") missed++; else if ($7 == "n/a") na++ }
  END { if (NR == 0 || met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$out"
