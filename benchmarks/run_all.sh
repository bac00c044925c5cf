#!/usr/bin/env bash
# Runs every benchmark driver (benchmarks/*/run_*.sh; `make bench`, `make bench-quick`).
#
# First it builds every benchmark target and the library in ONE `bazel build -c opt` call (the
# drivers then skip their own builds: benchmarks/bench_build.sh) and prints once what the figures depend on: the CPU
# model and cpus, the SIMD target Highway chose, the OpenBLAS version and core kernel of the
# matmul peer, the thread counts, the load average, and the mode.
#
# Each driver prints one table whose rows carry their target and verdict (met, MISSED, n/a
# when not measured, "-" for rows without a target); its last line is
# `targets: N met, M MISSED, K not measured`, and this script adds them up:
#   <driver>  N met, M MISSED, K not measured  (S s)      (or: FAILED, exit code E; or: skipped)
#   bench targets: T rows, N met, M MISSED, K not measured; F driver(s) failed; W s in all
# A MISSED target does not fail the run (it is reported); a driver that fails (a build error,
# a result check such as softmax vs Eigen, a peer that crashed) or prints no `targets:` line
# does, after the other drivers ran.
#
# --quick (development): every driver gets its --quick (fewer repetitions; select_bench one
# density; function_bench without the peer stream), the matmul driver two shapes, and the drivers
# without a short mode are skipped with the reason printed. Measured on the 2-core AVX2 machine
# at load 4-6 (shared): the drivers take ~4 minutes together (ONNX ResNet 62 s, kernels 38 s,
# matmul 32 s, training 30 s, cost 24 s); each bazel call waits for the server's lock while
# another build holds it, which the one up-front build and bench_build.sh keep to one wait.
# Quick figures are noisier: use the full run for the issue's tables.
# SHP_BENCH_ONLY=<regex>: run only the drivers whose path matches (both modes).
# Usage: benchmarks/run_all.sh [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    *)
      echo "usage: benchmarks/run_all.sh [--quick] (unknown argument '$arg')" >&2
      exit 2
      ;;
  esac
done
t_start=$SECONDS

# ---- peers and one build ---------------------------------------------------------------------
tools/setup.sh --bench >/dev/null || { echo "tools/setup.sh --bench failed"; exit 1; }
benchmarks/setup_env.sh || { echo "benchmarks/setup_env.sh failed"; exit 1; }
targets=(//:libshapepoly.so)
for b in matmul dim transpose elementwise softmax sum select layernorm runtime large_scope \
  train variant staged function cost; do
  targets+=("//benchmarks:${b}_bench")
done
build_log="$(mktemp)"
log="$(mktemp)"
trap 'rm -f "$log" "$build_log"' EXIT
# --keep_going: a target that fails to build fails its driver only. After a clean build the
# drivers take the binaries from SHP_BENCH_BIN_DIR and call bazel no more (bench_build.sh).
if bazel build -c opt --jobs=2 --keep_going "${targets[@]}" >"$build_log" 2>&1; then
  bin_dir="$(bazel info -c opt bazel-bin 2>/dev/null)"
  export SHP_BENCH_BIN_DIR="$bin_dir"
else
  echo "WARN: some benchmark targets failed to build (their drivers will fail):"
  grep -E '^(ERROR|FAILED)|error:' "$build_log" | head -20
  bin_dir="$(bazel info -c opt bazel-bin 2>/dev/null)"
fi
t_build=$((SECONDS - t_start))

# ---- what the figures depend on --------------------------------------------------------------
py="${SHP_BENCH_PYTHON:-$PWD/.venv-bench/bin/python}"
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
# The SIMD target from the library itself (shp_simd_target), as every driver's kernels see it.
simd="$("$py" - "$bin_dir/libshapepoly.so" <<'PY' 2>/dev/null || echo "unknown (library not built)"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.shp_simd_target.restype = ctypes.c_char_p
print(lib.shp_simd_target().decode())
PY
)"
# The matmul peer's OpenBLAS (the system library matmul_bench links): version and the core
# kernel it picked at load time for this CPU.
blas="$("$py" - <<'PY' 2>/dev/null || echo "unknown (libopenblas not found)"
import ctypes, ctypes.util
name = ctypes.util.find_library("openblas") or "libopenblas.so.0"
lib = ctypes.CDLL(name)
lib.openblas_get_corename.restype = ctypes.c_char_p
lib.openblas_get_config.restype = ctypes.c_char_p
print("core %s (%s; %s)" % (lib.openblas_get_corename().decode(),
                            lib.openblas_get_config().decode().strip(), name))
PY
)"
echo "==== machine"
echo "cpu: ${cpu:-unknown}, $(nproc) cpus; load average:$(uptime | sed 's/.*load average://')"
echo "SIMD target (Highway's choice, shp_simd_target): $simd"
echo "OpenBLAS (matmul peer): $blas; OPENBLAS_NUM_THREADS=2 for the matmul driver"
echo "threads: every scenario names its count (1 or 2; the MLP/ResNet/conv rows run both);" \
  "numpy peers 1 thread (OMP/OPENBLAS_NUM_THREADS=1), ORT/JAX peers as their rows say"
echo "mode: $([[ $quick -eq 1 ]] && echo 'quick (fewer repetitions, fewer shapes; noisier)' ||
  echo full); build: ${t_build} s"

# ---- drivers ---------------------------------------------------------------------------------
# The arguments of each driver in quick mode; "SKIP <reason>" skips it.
quick_args() {
  case "$1" in
    benchmarks/dim/run_dim_bench.sh)
      echo "SKIP no short mode (Google Benchmark repetitions plus the JAX and sympy engines)" ;;
    benchmarks/dim/run_large_scope_bench.sh) echo "--seeds=1" ;;
    benchmarks/kernels/run_matmul_bench.sh) echo "512 64x256x784" ;;
    *) echo "--quick" ;;
  esac
}

summary=()
met=0 missed=0 na=0 failed=0 skipped=0
for s in benchmarks/*/run_*.sh; do
  if [[ -n "${SHP_BENCH_ONLY:-}" && ! "$s" =~ ${SHP_BENCH_ONLY} ]]; then continue; fi
  args=()
  if ((quick)); then
    a="$(quick_args "$s")"
    if [[ "$a" == SKIP* ]]; then
      echo "==== $s: skipped in quick mode: ${a#SKIP }"
      summary+=("$(printf '  %-42s skipped (quick mode): %s' "$s" "${a#SKIP }")")
      skipped=$((skipped + 1))
      continue
    fi
    read -r -a args <<<"$a"
  fi
  echo "==== $s ${args[*]}"
  t0=$SECONDS
  # Quick mode: no multi-GB torch install for the torch.compile peer (its row says n/a).
  SHP_BENCH_NO_TORCH="${SHP_BENCH_NO_TORCH:-$quick}" "$s" "${args[@]}" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  dt=$((SECONDS - t0))
  line="$(grep -E '^targets: [0-9]+ met, [0-9]+ MISSED, [0-9]+ not measured$' "$log" | tail -1)"
  if [[ $rc -ne 0 || -z "$line" ]]; then
    failed=$((failed + 1))
    summary+=("$(printf '  %-42s FAILED, exit code %d%s (%d s)' "$s" "$rc" \
      "$([[ -z "$line" ]] && echo ', no targets line')" "$dt")")
    continue
  fi
  read -r m x n <<<"$(sed -E 's/^targets: ([0-9]+) met, ([0-9]+) MISSED, ([0-9]+) not measured$/\1 \2 \3/' <<<"$line")"
  met=$((met + m)) missed=$((missed + x)) na=$((na + n))
  summary+=("$(printf '  %-42s %s (%d s)' "$s" "${line#targets: }" "$dt")")
done
echo
echo "==== bench summary ($([[ $quick -eq 1 ]] && echo quick || echo full) mode; cpu ${cpu:-unknown};" \
  "SIMD $simd; OpenBLAS ${blas%% (*})"
printf '%s\n' "${summary[@]}"
echo "bench targets: $((met + missed + na)) rows, $met met, $missed MISSED, $na not measured;" \
  "$failed driver(s) failed$([[ $skipped -gt 0 ]] && echo ", $skipped skipped");" \
  "$((SECONDS - t_start)) s in all (build ${t_build} s)"
[[ $failed -eq 0 ]]
