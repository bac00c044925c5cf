#!/usr/bin/env bash
# The C++ tests (//cc/... //c_api/... //tests/...) under AddressSanitizer + UndefinedBehavior-
# Sanitizer (clang-14, the fuzzers' build: tools/sanitizer_build.sh), in a separate Bazel output
# base without convenience symlinks, so the default build, its bazel-bin/libshapepoly.so and the bazel-* links stay
# untouched (--config=asan in the default output base would overwrite them). `make test` runs it
# as the "asan" suite; it prints bazel's per-target status lines and then the test logs'
# directory as "asan testlogs: DIR", from which tools/run_tests.py reads each test.xml.
#
# The build (flags, output base) is tools/sanitizer_build.sh's, shared with the fuzzers: Highway
# kernels are built for this machine's target only (see there why).
# Excluded for that reason: the kernels' SeveralTargetsAreTested cases (they check that several
# SIMD targets were compiled in). To keep .ci/run within 30 minutes on 2 cores, the kernels' own
# tests (//cc/kernels/...) and the dim engine's long brute-force test (//cc/dim:soundness_test)
# are left out too: the kernels still run under ASan through the runtime, golden and C API
# tests and the fuzzers, and the dim engine through dim_test and the dim fuzzer.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
source "$ROOT/tools/sanitizer_build.sh"  # the build the fuzzers use: compiled once for both
OUTPUT_BASE=${ASAN_OUTPUT_BASE:-$SANITIZER_OUTPUT_BASE}
FLAGS=("${SANITIZER_FLAGS[@]}")
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
