#!/usr/bin/env bash
# The C++ tests (//cc/... //c_api/... //tests/...) under AddressSanitizer + UndefinedBehavior-
# Sanitizer (clang-14, --config=asan-clang), in a separate Bazel output base without convenience
# symlinks, so the default build, its bazel-bin/libshapepoly.so and the bazel-* links stay
# untouched (--config=asan in the default output base would overwrite them). `make test` runs it
# as the "asan" suite; it prints bazel's per-target status lines and then the test logs'
# directory as "asan testlogs: DIR", from which tools/run_tests.py reads each test.xml.
#
# Highway kernels are built for this machine's target only (as the fuzz build does): every
# SIMD target under ASan took ~13 min to compile on 2 cores, and each target's code is tested
# by the default build's kernel tests. -march=native makes the static target the one this
# machine dispatches to (Highway 1.0's EMU128 fallback has UB of its own on NaN conversions).
# Excluded for that reason: the kernels' SeveralTargetsAreTested cases (they check that several
# SIMD targets were compiled in). To keep .ci/run within 30 minutes on 2 cores, the kernels' own
# tests (//cc/kernels/...) and the dim engine's long brute-force test (//cc/dim:soundness_test)
# are left out too: the kernels still run under ASan through the runtime, golden and C API
# tests and the fuzzers, and the dim engine through dim_test and the dim fuzzer.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUTPUT_BASE=${ASAN_OUTPUT_BASE:-$HOME/.cache/shapepoly-asan/$(echo "$ROOT" | md5sum | cut -c1-12)}
FLAGS=(--config=asan-clang --copt=-DHWY_COMPILE_ONLY_STATIC=1 --copt=-march=native)
# Any sanitizer report fails the test; leaks are reported at exit.
ENV=(--test_env=ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
     --test_env=UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
# --output_filter: clang's and gold's warnings on third-party code (hundreds of lines) are not
# shown; failed actions still print their errors.
bazel --output_base="$OUTPUT_BASE" test --symlink_prefix=/ "${FLAGS[@]}" "${ENV[@]}" \
  --output_filter='^//(cc|c_api|tests)[/:]' --jobs=2 --keep_going --test_summary=short \
  --test_output=errors --test_filter='-*.SeveralTargetsAreTested' -- \
  //cc/... //c_api/... //tests/... -//cc/kernels/... -//cc/dim:soundness_test
rc=$?
logs=$(bazel --output_base="$OUTPUT_BASE" info "${FLAGS[@]}" bazel-testlogs 2>/dev/null)
echo "asan testlogs: $logs"
exit $rc
