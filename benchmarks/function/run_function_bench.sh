#!/usr/bin/env bash
# Compiled-function benchmarks of issue 12: builds //benchmarks:function_bench and libshapepoly.so
# with `bazel build -c opt`, runs our side (C API) with the peers (JAX jax.jit, torch.compile from
# .venv-bench, benchmarks/function/peers.py) in the same run, and prints one table
#   scenario | ours | peer | peer value | ratio | target | verdict
# (medians of repetitions). Overhead rows: the peer is our own direct shp_runtime_run of the
# exported program and ratio = function / runtime; stream rows: ratio = peer / ours (> 1: ours is
# faster). Each row with a target says met or MISSED (n/a: not measured), and the last line counts
# them:
#   targets: N met, M MISSED, K not measured
# PyTorch is not in benchmarks/requirements.txt (its PyPI wheel pulls ~3 GB of CUDA libraries):
# this script installs it into .venv-bench once (pinned, time-bounded); SHP_BENCH_NO_TORCH=1
# skips that, and the torch.compile row then says why it was not measured.
# --quick: fewer repetitions, and no peer stream (JAX compiles ~450 shapes: minutes); the peer
# rows then say n/a.
# Usage: benchmarks/function/run_function_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
torch_pin="torch==2.15.0"
if [[ "${SHP_BENCH_NO_TORCH:-0}" != 1 ]] && ! "$py" -c 'import torch' 2>/dev/null; then
  echo "installing $torch_pin into .venv-bench for the torch.compile peer (once)" >&2
  timeout 900 "$py" -m pip install --quiet --disable-pip-version-check "$torch_pin" >&2 ||
    echo "torch install failed: the torch.compile row will be not measured" >&2
fi
source benchmarks/bench_build.sh
bench_build //benchmarks:function_bench || exit 1
bin="$BENCH_BIN_DIR/benchmarks/function_bench"

out="$(mktemp)"
work="$(mktemp -d)"
trap 'rm -rf "$out" "$work"' EXIT
"$bin" --python "$py" --peers "$PWD/benchmarks/function/peers.py" --workdir "$work" "$@" > "$out"

grep '^INFO' "$out" | sed 's/^INFO //'
echo
echo "medians of repetitions; overhead rows: times in us, ratio = function / direct runtime;"
echo "stream rows: times in ms, ratio = peer / ours (> 1: ours is faster)"
awk -F' [|] ' '
  BEGIN { fmt = "%-42s | %10s | %-16s | %10s | %8s | %-8s | %s\n"
          printf fmt, "scenario", "ours", "peer", "peer value", "ratio", "target", "verdict" }
  /^ROW / { sub(/^ROW /, "", $1);
            printf fmt, $1, $2, $3, $4, $5, $6, $7
            if ($7 == "met") met++; else if ($7 == "MISSED") missed++; else if ($7 == "n/a") na++ }
  END { if (NR == 0 || met + missed + na == 0) { print "no target row"; exit 1 }
        printf "targets: %d met, %d MISSED, %d not measured\n", met, missed, na }' "$out"
