#!/usr/bin/env bash
# Builds every libFuzzer target under tests/fuzz with clang (--config=fuzz: ASan + UBSan) in a
# separate Bazel output base without convenience symlinks (so the default build, its
# libshapepoly.so and the bazel-* links stay untouched), then:
#
#   tools/run_fuzzers.sh                   test (what `make test` does): runs every input of
#                                          tests/fuzz/corpus/<fuzzer>/ once (one test per
#                                          corpus input; a crash, leak, timeout or broken
#                                          invariant fails that input), then fuzzes each
#                                          fuzzer for FUZZ_TEST_SECONDS (default 20; 0 skips
#                                          it), one test per fuzzer. New inputs go to a
#                                          temporary directory, never to the corpus; a crash
#                                          fails the test and prints the reproducer's path
#                                          (kept under FUZZ_ARTIFACTS, default
#                                          ${TMPDIR:-/tmp}/shapepoly-fuzz-artifacts) and its
#                                          bytes in base64, so a CI log alone reproduces it.
#   tools/run_fuzzers.sh --fuzz [NAME...]  fuzz (every fuzzer, or the named ones): replays,
#                                          then fuzzes for FUZZ_SECONDS (default 300) and
#                                          rewrites the corpus as the named seeds (golden
#                                          files, crash-* regressions) plus a minimal set of
#                                          generated inputs (sha1 names) that reach new edges,
#                                          within FUZZ_CORPUS_KB (default 160) per corpus
#                                          (`make fuzz`). A crash found is saved in the corpus
#                                          as crash-<sha1>: the replay then fails until it is
#                                          fixed (then rename it crash-<what>).
#
# The last line is 'N passed, M failed'.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=test
[ "${1:-}" = "--fuzz" ] && MODE=fuzz && shift
ONLY=("$@")  # optional fuzzer names: run only those
SECONDS_EACH=${FUZZ_SECONDS:-300}
TEST_SECONDS=${FUZZ_TEST_SECONDS:-20}
ARTIFACTS=${FUZZ_ARTIFACTS:-${TMPDIR:-/tmp}/shapepoly-fuzz-artifacts}
# shared with tools/run_sanitizers.sh (one sanitizer build for both)
source "$ROOT/tools/sanitizer_build.sh"
OUTPUT_BASE=${FUZZ_OUTPUT_BASE:-$SANITIZER_OUTPUT_BASE}
# fuzzer target name -> corpus folder (under tests/fuzz/corpus)
FUZZERS=(dim_fuzzer:dim program_load_fuzzer:program c_api_sequence_fuzzer:c_api program_gen_fuzzer:program_gen)
if [ ${#ONLY[@]} -gt 0 ]; then
  selected=()
  for f in "${FUZZERS[@]}"; do [[ " ${ONLY[*]} " == *" ${f%%:*} "* ]] && selected+=("$f"); done
  FUZZERS=("${selected[@]}")
fi
# Generated inputs kept per corpus (the named seeds come on top), so the repository stays small.
BUDGET_KB=${FUZZ_CORPUS_KB:-160}
generated_bytes() {
  find "$1" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -printf '%s\n' |
    awk '{s += $1} END {print s + 0}'
}
# Limits for every run: a hang, a runaway allocation or RSS growth is a failure.
LIMITS=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512)

BUILD_FLAGS=("${SANITIZER_FLAGS[@]}")

targets=()
for f in "${FUZZERS[@]}"; do targets+=("//tests/fuzz:${f%%:*}"); done
if ! bazel --output_base="$OUTPUT_BASE" build --symlink_prefix=/ "${BUILD_FLAGS[@]}" "${targets[@]}"; then
  echo "fuzz: build failed"
  echo "0 passed, ${#FUZZERS[@]} failed"
  exit 1
fi
bin=$(bazel --output_base="$OUTPUT_BASE" info "${BUILD_FLAGS[@]}" bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# replay NAME FILE...: runs each file once (libFuzzer's file mode prints "Running: F" and
# "Executed F"); after a failure, reports the input and goes on with the rest.
replay() {
  local name=$1
  shift
  local files=("$@") log="$work/$name.replay.log" start=$SECONDS
  local ok=0 bad=0
  while [ ${#files[@]} -gt 0 ]; do
    if SHP_FUZZ_STATS=1 "$bin/tests/fuzz/$name" "${LIMITS[@]}" "${files[@]}" > "$log" 2>&1; then
      ok=$((ok + ${#files[@]}))
      grep -aE "^$name stats:" "$log"
      break
    fi
    local done_count culprit
    done_count=$(grep -c '^Executed ' "$log")
    culprit=$(grep '^Running: ' "$log" | tail -1 | sed 's/^Running: //')
    if [ "$done_count" -ge ${#files[@]} ] || [ -z "$culprit" ]; then
      # Every input ran, the process still failed (e.g. a leak reported at exit).
      echo "FAILED $name: the replay process failed after its inputs ran"
      tail -40 "$log"
      bad=$((bad + 1))
      ok=$((ok + done_count))
      break
    fi
    echo "FAILED $name: $culprit"
    grep -aE 'invariant broken|ERROR: |SUMMARY: |runtime error' "$log" | head -8
    tail -25 "$log"
    ok=$((ok + done_count))
    bad=$((bad + 1))
    files=("${files[@]:$((done_count + 1))}")
  done
  echo "==== $name: replayed ${ok}/$((ok + bad)) corpus inputs in $((SECONDS - start))s, $bad failed"
  passed=$((passed + ok))
  failed=$((failed + bad))
  return "$bad"
}

# timed_run NAME CORPUS: fuzzes for TEST_SECONDS from the corpus (read only: new inputs go
# to a temporary directory, the first one given); one test. A crash is kept under ARTIFACTS
# and printed in base64.
timed_run() {
  local name=$1 corpus=$2 log="$work/$name.timed.log"
  local artifacts="$ARTIFACTS/$name/"
  mkdir -p "$work/$name.new" "$artifacts"
  echo "==== $name: fuzzing for ${TEST_SECONDS}s (new inputs in a temporary directory)"
  if "$bin/tests/fuzz/$name" "${LIMITS[@]}" -max_total_time="$TEST_SECONDS" -print_final_stats=1 \
      -artifact_prefix="$artifacts" "$work/$name.new" "$corpus" > "$log" 2>&1; then
    passed=$((passed + 1))
    echo "==== $name: timed run passed"
  else
    failed=$((failed + 1))
    echo "FAILED $name: ${TEST_SECONDS}s of fuzzing found a failure:"
    grep -aE 'invariant broken|ERROR: |SUMMARY: |runtime error' "$log" | head -10
    tail -40 "$log"
    local crash
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    if [ -n "$crash" ] && [ -f "$crash" ]; then
      echo "reproducer: $crash ($(stat -c %s "$crash") bytes); run it with"
      echo "  $bin/tests/fuzz/$name $crash"
      echo "reproducer in base64 (base64 -d > input):"
      head -c 65536 "$crash" | base64 -w 100
    fi
  fi
  grep -aE '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1
}

for f in "${FUZZERS[@]}"; do
  name=${f%%:*}
  corpus=tests/fuzz/corpus/${f##*:}
  mkdir -p "$corpus"
  mapfile -t files < <(find "$corpus" -maxdepth 1 -type f | sort)
  if [ ${#files[@]} -eq 0 ]; then
    echo "FAILED $name: empty corpus $corpus"
    failed=$((failed + 1))
    continue
  fi
  replay "$name" "${files[@]}" || continue
  if [ "$MODE" = test ]; then
    [ "$TEST_SECONDS" -gt 0 ] && timed_run "$name" "$corpus"
    continue
  fi

  # Fuzz on a copy of the corpus; crashes go straight into the corpus as regressions.
  echo "==== $name: fuzzing for ${SECONDS_EACH}s"
  mkdir -p "$work/$name.gen"
  cp "${files[@]}" "$work/$name.gen/"
  if "$bin/tests/fuzz/$name" "${LIMITS[@]}" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
      -artifact_prefix="$corpus/" "$work/$name.gen" > "$work/$name.fuzz.log" 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED $name: fuzzing found a failure (saved in $corpus/):"
    grep -aE 'invariant broken|ERROR: |SUMMARY: |runtime error|Test unit written' "$work/$name.fuzz.log" | head -10
    tail -40 "$work/$name.fuzz.log"
  fi
  grep -aE '^#[0-9]+.*(DONE|cov:)' "$work/$name.fuzz.log" | tail -1
  grep -aE 'stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/$name.fuzz.log"

  # Minimal corpus: the named seeds first (kept whatever they cover), then whatever reaches
  # new edges (-use_counters=0: hit counts alone do not count) from the old generated inputs
  # and the fuzzing run; then the largest generated inputs go until they fit the budget.
  mkdir -p "$work/$name.seeds" "$work/$name.old" "$work/$name.merged"
  for file in "$corpus"/*; do
    if [[ $(basename "$file") =~ ^[0-9a-f]{40}$ ]]; then cp "$file" "$work/$name.old/"; else cp "$file" "$work/$name.seeds/"; fi
  done
  cp "$work/$name.seeds/." "$work/$name.merged/" -r
  if "$bin/tests/fuzz/$name" "${LIMITS[@]}" -merge=1 -use_counters=0 "$work/$name.merged" "$work/$name.old" \
      "$work/$name.gen" > "$work/$name.merge.log" 2>&1; then
    find "$corpus" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
    for file in "$work/$name.merged"/*; do
      [ -e "$work/$name.seeds/$(basename "$file")" ] || cp "$file" "$corpus/"
    done
    dropped=0
    while [ "$(generated_bytes "$corpus")" -gt $((BUDGET_KB * 1024)) ]; do
      rm "$(find "$corpus" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -printf '%s %p\n' |
        sort -n | tail -1 | cut -d' ' -f2-)"
      dropped=$((dropped + 1))
    done
    echo "==== $name: corpus $(find "$corpus" -type f | wc -l) files, $(($(du -sb "$corpus" | cut -f1) / 1024)) KB" \
      "($dropped largest generated inputs dropped for the ${BUDGET_KB} KB budget)"
  else
    echo "merge failed for $name (corpus left as it was)"
    tail -20 "$work/$name.merge.log"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
