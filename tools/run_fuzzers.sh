#!/usr/bin/env bash
# Builds every libFuzzer target under tests/fuzz with clang (--config=fuzz) in a separate
# Bazel output base without convenience symlinks (so the default build, its libshapepoly.so and
# the bazel-* links stay untouched), runs each
# for FUZZ_SECONDS (default 20) on its seed corpus, and prints 'N passed, M failed' (one test
# per fuzzer: passed = no crash, leak, timeout or broken invariant).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${FUZZ_SECONDS:-20}
OUTPUT_BASE=${FUZZ_OUTPUT_BASE:-$HOME/.cache/shapepoly-fuzz/$(echo "$ROOT" | md5sum | cut -c1-12)}
# fuzzer target name -> seed corpus folder (under tests/fuzz/corpus)
FUZZERS=(dim_fuzzer:dim)
[ -f tests/fuzz/program_load_fuzzer.cc ] && FUZZERS+=(program_load_fuzzer:program)

targets=()
for f in "${FUZZERS[@]}"; do targets+=("//tests/fuzz:${f%%:*}"); done
if ! bazel --output_base="$OUTPUT_BASE" build --symlink_prefix=/ --config=fuzz -c opt "${targets[@]}"; then
  echo "fuzz: build failed"
  echo "0 passed, ${#FUZZERS[@]} failed"
  exit 1
fi
bin=$(bazel --output_base="$OUTPUT_BASE" info -c opt --config=fuzz bazel-bin 2>/dev/null)
passed=0
failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in "${FUZZERS[@]}"; do
  name=${f%%:*}
  seeds=tests/fuzz/corpus/${f##*:}
  mkdir -p "$work/$name"
  cp -r "$seeds/." "$work/$name/" 2>/dev/null || true
  echo "==== $name: ${SECONDS_EACH}s"
  if "$bin/tests/fuzz/$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=512 -artifact_prefix="$work/" -print_final_stats=1 "$work/$name" \
      > "$work/$name.log" 2>&1; then
    passed=$((passed + 1))
    grep -E "stat::number_of_executed_units|Done" "$work/$name.log" | tail -2
  else
    failed=$((failed + 1))
    tail -40 "$work/$name.log"
    for a in "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/leak-*; do
      [ -f "$a" ] && { echo "reproducer: $a"; xxd "$a" | head -20; }
    done
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
