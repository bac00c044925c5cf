# Sourced by tools/run_fuzzers.sh and tools/run_sanitizers.sh: the one clang ASan+UBSan build
# both use. They share its output base and flags, so the library is compiled once under the
# sanitizers for the fuzzers and the C++ tests alike (two configurations compiled it twice and
# took ~9 of .ci/run's minutes on 2 cores). Expects ROOT (the checkout).
#
# --config=fuzz is clang + ASan + UBSan + libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link); the instrumentation needs no runtime of its own, so ordinary
# test binaries link and run with it. Only the fuzz targets link libFuzzer (their linkopts).
#
# Highway kernels are built for this machine's target only: every SIMD target under ASan took
# ~13 min to compile on 2 cores (elementwise.cc alone ~9), and each target's code is tested by
# the default build's kernel suites. -march=native makes that static target the one this machine
# dispatches to (without it, Highway 1.0's static x86 target is EMU128, whose double-to-int32
# DemoteTo is UB on NaN, as no real target is). The binaries are built and run on one machine.
# No -c opt: the tests keep their assertions; 20-second fuzz runs do not need the speed.
# -DSHP_CONTRACT_ABORT: a fused elementwise layout that breaks the evaluator's contract aborts
# (elementwise_program.cc; other builds run that program unfused and count it).
SANITIZER_OUTPUT_BASE=${SANITIZER_OUTPUT_BASE:-$HOME/.cache/shapepoly-sanitizers/$(echo "$ROOT" | md5sum | cut -c1-12)}
SANITIZER_FLAGS=(--config=fuzz --copt=-DHWY_COMPILE_ONLY_STATIC=1 --copt=-march=native --copt=-DSHP_CONTRACT_ABORT=1)
