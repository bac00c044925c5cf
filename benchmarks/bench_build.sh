# Sourced by the benchmark drivers (bash). `bench_build <label>...` builds the labels with
# `bazel build -c opt` and sets BENCH_BIN_DIR to the -c opt bazel-bin; when
# benchmarks/run_all.sh has already built every benchmark target in its one bazel call, it
# exports SHP_BENCH_BIN_DIR and the drivers skip bazel (each bazel call waits for the server's
# lock, which other builds on a shared machine may hold for minutes). A failed build prints its
# errors and returns 1: a stale binary must not run.
bench_build() {
  if [[ -n "${SHP_BENCH_BIN_DIR:-}" ]]; then
    BENCH_BIN_DIR="$SHP_BENCH_BIN_DIR"
    return 0
  fi
  local log
  log="$(mktemp)"
  if ! bazel build -c opt --jobs=2 "$@" >"$log" 2>&1; then
    grep -E '^(ERROR|FAILED)|error:' "$log"
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  BENCH_BIN_DIR="$(bazel info -c opt bazel-bin 2>/dev/null)"
}

# `bench_stage_lib`: builds libshapepoly.so (bench_build) and copies it into a new temporary
# folder $work, removed when the driver exits; the copy, $work/libshapepoly.so, is what the
# driver loads (bazel-bin follows the last build's configuration). Returns 1 on a failed build.
bench_stage_lib() {
  bench_build //:libshapepoly.so || return 1
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  install -m 0755 "$BENCH_BIN_DIR/libshapepoly.so" "$work/libshapepoly.so"
}
