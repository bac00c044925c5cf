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
# --simd-target NAME (or SHP_SIMD_TARGET=NAME in the environment; `make bench SIMD_TARGET=NAME`):
# every driver's kernels dispatch to exactly that Highway target (AVX3, AVX2, SSE4, ...; "best":
# the CPU's best), through SHP_SIMD_TARGET, which libshapepoly.so and the statically linked
# kernel drivers apply when they load. The header prints the target requested and the one the
# library reports. A target this CPU cannot run prints one line and exits 0 without running
# any driver (an honest skip); an unknown or not compiled name is an error (exit 2). The peers
# (OpenBLAS, ORT, numpy, JAX) are not capped.
# Usage: benchmarks/run_all.sh [--quick] [--simd-target NAME]
set -uo pipefail
cd "$(dirname "$0")/.."

usage="usage: benchmarks/run_all.sh [--quick] [--simd-target NAME]"
quick=0
simd_req="${SHP_SIMD_TARGET:-}"
simd_from="${SHP_SIMD_TARGET:+SHP_SIMD_TARGET}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --simd-target)
      [[ $# -ge 2 && -n "$2" ]] || { echo "$usage (--simd-target needs a target name)" >&2; exit 2; }
      simd_req="$2" simd_from="--simd-target"
      shift
      ;;
    --simd-target=*)
      simd_req="${1#--simd-target=}" simd_from="--simd-target"
      [[ -n "$simd_req" ]] || { echo "$usage (--simd-target needs a target name)" >&2; exit 2; }
      ;;
    *)
      echo "$usage (unknown argument '$1')" >&2
      exit 2
      ;;
  esac
  shift
done
t_start=$SECONDS
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"

# ---- a forced SIMD target: check it before the long build ------------------------------------
# The library itself says whether it can run the target (shp_set_simd_target's error), and
# whether SHP_SIMD_TARGET reached it at load (shp_simd_target as its first call).
simd_line=""
if [[ -n "$simd_req" ]]; then
  export SHP_SIMD_TARGET="$simd_req"
  if ! lib_log="$(bazel build -c opt --jobs=2 //:libshapepoly.so 2>&1)"; then
    echo "ERROR: --simd-target: building //:libshapepoly.so failed (bazel build -c opt):"
    grep -E '^(ERROR|FAILED)|error:' <<<"$lib_log" | head -5
    exit 1
  fi
  probe="$(python3 - "$(bazel info -c opt bazel-bin 2>/dev/null)/libshapepoly.so" "$simd_req" <<'PY' 2>/dev/null
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])  # applies SHP_SIMD_TARGET (an invalid value: ignored, stderr)
lib.shp_simd_target.restype = ctypes.c_char_p
lib.shp_set_simd_target.restype = ctypes.c_void_p
lib.shp_set_simd_target.argtypes = [ctypes.c_char_p]
lib.shp_error_code.restype = ctypes.c_int32
lib.shp_error_code.argtypes = [ctypes.c_void_p]
lib.shp_error_message.restype = ctypes.c_char_p
lib.shp_error_message.argtypes = [ctypes.c_void_p]
lib.shp_error_destroy.argtypes = [ctypes.c_void_p]
reported = lib.shp_simd_target().decode()
err = lib.shp_set_simd_target(sys.argv[2].encode())
status = "ok"
if err:
    status = "%d %s" % (lib.shp_error_code(err), lib.shp_error_message(err).decode())
    lib.shp_error_destroy(err)
err = lib.shp_set_simd_target(None)
print("reported %s" % reported)
print("best %s" % lib.shp_simd_target().decode())
print("status %s" % status)
PY
)"
  reported="$(sed -n 's/^reported //p' <<<"$probe")"
  best="$(sed -n 's/^best //p' <<<"$probe")"
  status="$(sed -n 's/^status //p' <<<"$probe")"
  if [[ -z "$status" ]]; then
    echo "ERROR: --simd-target $simd_req: could not ask the library (python3 ctypes probe failed)"
    exit 1
  elif [[ "$status" == *"is not supported by this CPU"* ]]; then
    echo "$simd_req: not supported by this CPU (${cpu:-unknown}), best is $best: not run"
    exit 0
  elif [[ "$status" != ok ]]; then
    echo "ERROR: $simd_from $simd_req: ${status#* }"
    exit 2
  fi
  shopt -s nocasematch
  if [[ "$simd_req" != best && "$reported" != "$simd_req" ]] ||
    [[ "$simd_req" == best && "$reported" != "$best" ]]; then
    shopt -u nocasematch
    echo "ERROR: $simd_from $simd_req: the library reports $reported after loading with" \
      "SHP_SIMD_TARGET=$simd_req"
    exit 1
  fi
  shopt -u nocasematch
  simd_line="requested $simd_req ($simd_from), library reports $reported (the CPU's best: $best)"
fi

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
# The SIMD target from the library itself (shp_simd_target), as every driver's kernels see it.
simd="$("$py" - "$bin_dir/libshapepoly.so" <<'PY' 2>/dev/null || echo "unknown (library not built)"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.shp_simd_target.restype = ctypes.c_char_p
print(lib.shp_simd_target().decode())
PY
)"
# The matmul peer's OpenBLAS (the scipy-openblas32 wheel's, which matmul_bench loads; the
# system one without it): version and the core kernel it picked at load time for this CPU.
blas="$("$py" - <<'PY' 2>/dev/null || echo "unknown (no OpenBLAS found)"
import ctypes, ctypes.util, os
try:
    import scipy_openblas32 as s
    name, prefix = os.path.join(s.get_lib_dir(), "libscipy_openblas.so"), "scipy_"
except ImportError:
    name, prefix = ctypes.util.find_library("openblas") or "libopenblas.so.0", ""
lib = ctypes.CDLL(name)
core = getattr(lib, prefix + "openblas_get_corename")
config = getattr(lib, prefix + "openblas_get_config")
core.restype = config.restype = ctypes.c_char_p
print("core %s (%s; %s)" % (core().decode(), config().decode().strip(), name))
PY
)"
echo "==== machine"
echo "cpu: ${cpu:-unknown}, $(nproc) cpus; load average:$(uptime | sed 's/.*load average://')"
if [[ -n "$simd_line" ]]; then
  echo "SIMD target: $simd_line; shp_simd_target in the drivers' environment: $simd"
else
  echo "SIMD target (Highway's choice, shp_simd_target): $simd (not forced: --simd-target NAME)"
fi
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
  "SIMD $simd$([[ -n "$simd_req" ]] && echo " (forced: $simd_req)"); OpenBLAS ${blas%% (*})"
printf '%s\n' "${summary[@]}"
echo "bench targets: $((met + missed + na)) rows, $met met, $missed MISSED, $na not measured;" \
  "$failed driver(s) failed$([[ $skipped -gt 0 ]] && echo ", $skipped skipped");" \
  "$((SECONDS - t_start)) s in all (build ${t_build} s)"
[[ $failed -eq 0 ]]
