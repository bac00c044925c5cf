#!/usr/bin/env bash
# Per-example gradients (issue 44; picked up by benchmarks/run_all.sh / make bench): vmap of
# grad of the examples/mlp loss against JAX's jit(vmap(grad)), values checked first
# (per_example_grads.py). Prints
#   scenario | ours us | peer | peer us | ratio | target | verdict
# and last `targets: N met, M MISSED, K not measured`.
# Usage: benchmarks/vmap/run_vmap_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
source benchmarks/bench_build.sh
bench_stage_lib || exit 1
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
# JAX on one thread, as ours.
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
SHAPEPOLY_LIB="$work/libshapepoly.so" "$py" benchmarks/vmap/per_example_grads.py "$@" > "$work/out"

grep '^INFO' "$work/out" | sed 's/^INFO //'
grep '^ERROR' "$work/out" || true
echo
printf '%s\n' "scenario | ours us | peer | peer us | ratio | target | verdict"
grep '^ROW' "$work/out" | sed 's/^ROW //'
met=$(grep -c '^ROW.*| met$' "$work/out" || true)
missed=$(grep -c '^ROW.*| MISSED$' "$work/out" || true)
echo "targets: $met met, $missed MISSED, 0 not measured"
grep -q '^ERROR' "$work/out" && exit 1
exit 0
