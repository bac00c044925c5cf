#!/usr/bin/env bash
# The JAX cross-check of issue 10 alone: builds libshapepoly.so with `bazel build -c opt` and
# runs benchmarks/autodiff/jax_crosscheck.py (the MLP's loss and gradients wrt all weights from
# shp_program_grad vs jax.value_and_grad at batch 1, 7 and 64; relu and tanh) with JAX from
# .venv-bench. Exits 1 when a case fails. (run_train_bench.sh runs it too, relu only.)
# Usage: benchmarks/autodiff/jax_crosscheck.sh [--activations relu,tanh]
set -euo pipefail
cd "$(dirname "$0")/../.."

benchmarks/setup_env.sh
bazel build -c opt --jobs=2 //:libshapepoly.so 2>&1 | grep -E '^(ERROR|FAILED)' || true
lib="$(bazel info -c opt bazel-bin 2>/dev/null)/libshapepoly.so"
"${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}" benchmarks/autodiff/jax_crosscheck.py \
  --lib "$lib" "$@"
