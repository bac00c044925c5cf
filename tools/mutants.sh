#!/usr/bin/env bash
# Mutation testing (`make mutants`): of the dimension engine, and of the fused elementwise
# evaluator (tools/mutants/fusion_*.patch, issue 36).
#
# Plants each mutant of tools/mutants/*.patch in a copy of the tree and runs its tests on it: a
# mutant is killed when at least one test target fails. A patch's second line may name its
# targets ("Targets: //a:b //c:d"); otherwise they are the dim tests. The shared checkout is
# never modified: the copy (tracked and untracked-not-ignored files of the working tree) lives
# in a temporary directory with its own Bazel output base, both removed at the end.
# Prints, per mutant, the target(s) that killed it and the first failure line, then
# `N killed, M survived`. Exits 1 if a mutant survived, does not apply, or does not build.
#
#   tools/mutants.sh [name ...]    # only these mutants (file names without .patch)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BAZEL="${BAZEL:-bazel}"
DIM_TARGETS=(//cc/dim:dim_test //cc/dim:soundness_test)
TIMEOUT="${MUTANT_TEST_TIMEOUT:-180}"  # seconds per test: a mutant that hangs is killed too

WORK="$(mktemp -d "${TMPDIR:-/tmp}/shp-mutants.XXXXXX")"
TREE="$WORK/tree"
OUTPUT_BASE="$WORK/output_base"
cleanup() {
  if [ -d "$TREE" ]; then
    (cd "$TREE" && "$BAZEL" --output_base="$OUTPUT_BASE" shutdown >/dev/null 2>&1) || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$TREE"
# Files deleted in the working tree but still tracked are skipped (--ignore-failed-read).
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$TREE"

# Runs the dim tests in the copy; sets KILLERS (failed targets) and BUILD_OK.
run_tests() {
  local log="$WORK/bazel.log"
  set +e
  (cd "$TREE" && "$BAZEL" --output_base="$OUTPUT_BASE" test --keep_going --test_timeout="$TIMEOUT" \
    --test_env=SHP_DIFF_FRESH_SECONDS=0 --test_env=SHP_PYDIFF_FRESH_SECONDS=0 \
    --test_output=summary --noshow_progress "${TARGETS[@]}") >"$log" 2>&1
  set -e
  KILLERS=()
  BUILD_OK=1
  local t
  for t in "${TARGETS[@]}"; do
    if grep -Eq "^$t +FAILED TO BUILD" "$log"; then
      BUILD_OK=0
    elif grep -Eq "^$t +(FAILED|TIMEOUT)( |$)" "$log"; then
      KILLERS+=("$t")
    elif ! grep -Eq "^$t +(PASSED|\(cached\) PASSED)" "$log"; then
      BUILD_OK=0
    fi
  done
}

# What the killing test said: the soundness test's case description ("seed N: ..."), else
# the line after the first gtest failure, else the end of the log (crash, timeout).
first_failure() {
  local name="${1#//}"
  local logf="$TREE/bazel-testlogs/${name/://}/test.log"
  [ -f "$logf" ] || return 0
  local msg
  msg="$(grep -m1 -E "seed [0-9]+:" "$logf" || true)"
  if [ -z "$msg" ]; then
    local test_name
    test_name="$(grep -m1 -E "^\[  FAILED  \] " "$logf" | sed -E 's/^\[  FAILED  \] ([^ ]+).*/\1/' || true)"
    msg="$(grep -m1 -A1 -E ": Failure$" "$logf" | tail -1 || true)"
    [ -z "$test_name" ] || msg="$test_name: $msg"
  fi
  [ -n "$msg" ] || msg="$(tail -1 "$logf")"
  printf '%s' "$msg" | cut -c1-160
}

patches=()
if [ "$#" -gt 0 ]; then
  for n in "$@"; do patches+=("$ROOT/tools/mutants/$n.patch"); done
else
  patches=("$ROOT"/tools/mutants/*.patch)
fi

# The targets of patch $1: its "Targets:" line, else the dim tests.
targets_of() {
  local line
  line="$(sed -n '2{/^Targets: /s/^Targets: //p}' "$1")"
  if [ -n "$line" ]; then echo "$line"; else echo "${DIM_TARGETS[*]}"; fi
}

# The baseline runs every target any chosen mutant uses (the fixed-seed tests: the
# differential test's fresh-seed part is off, SHP_DIFF_FRESH_SECONDS=0).
declare -A all_targets=()
for p in "${patches[@]}"; do
  [ -f "$p" ] || continue
  for t in $(targets_of "$p"); do all_targets[$t]=1; done
done
TARGETS=("${!all_targets[@]}")
echo "mutants: baseline (no mutant): ${TARGETS[*]} ..."
run_tests
if [ "${#KILLERS[@]}" -ne 0 ] || [ "$BUILD_OK" -ne 1 ]; then
  echo "mutants: the unmutated tree does not pass ${TARGETS[*]}:"
  tail -30 "$WORK/bazel.log"
  exit 1
fi

killed=0
survived=0
broken=0
for p in "${patches[@]}"; do
  name="$(basename "$p" .patch)"
  what="$(head -1 "$p" | sed 's/^Mutant: //')"
  if ! (cd "$TREE" && patch -p1 --quiet --forward <"$p" >/dev/null); then
    printf '%-34s DOES NOT APPLY  (%s)\n' "$name" "$what"
    broken=$((broken + 1))
    continue
  fi
  read -r -a TARGETS <<<"$(targets_of "$p")"
  start=$(date +%s)
  run_tests
  secs=$(( $(date +%s) - start ))
  (cd "$TREE" && patch -p1 -R --quiet <"$p" >/dev/null)
  if [ "$BUILD_OK" -ne 1 ] && [ "${#KILLERS[@]}" -eq 0 ]; then
    printf '%-34s DOES NOT BUILD  (%s)\n' "$name" "$what"
    grep -m3 "error" "$WORK/bazel.log" | sed 's/^/    /' || true
    broken=$((broken + 1))
  elif [ "${#KILLERS[@]}" -eq 0 ]; then
    printf '%-34s SURVIVED        (%s)\n' "$name" "$what"
    survived=$((survived + 1))
  else
    printf '%-34s killed by %s in %ss  (%s)\n' "$name" "${KILLERS[*]}" "$secs" "$what"
    for k in "${KILLERS[@]}"; do
      msg="$(first_failure "$k")"
      [ -n "$msg" ] && printf '    %s: %s\n' "${k#//*:}" "$msg"
    done
    killed=$((killed + 1))
  fi
done

echo "$killed killed, $survived survived$([ "$broken" -gt 0 ] && echo ", $broken broken (do not apply or build)")"
[ "$survived" -eq 0 ] && [ "$broken" -eq 0 ]
