#!/usr/bin/env bash
# SHP_SIMD_TARGET is applied when libshapepoly.so loads, before the first kernel call: the
# probe's first call reports each target this CPU runs when the variable names it (any case),
# with nothing on stderr; an empty value keeps the best; an unknown name, a target not
# compiled and (where the CPU lacks one) a target the CPU cannot run are ignored with the one
# stderr line shapepoly.h documents, and the kernels run on the best target.
set -euo pipefail
probe="$1"
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out="$(env -u SHP_SIMD_TARGET "$probe" 2>"$err")" || fail "probe failed: $out"
[[ ! -s "$err" ]] || fail "stderr without the variable: $(cat "$err")"
best="$(sed -n 's/^best: //p' <<<"$out")"
runnable="$(sed -n 's/^runnable: //p' <<<"$out")"
[[ -n "$best" && -n "$runnable" ]] || fail "unexpected probe output: $out"
[[ "$(sed -n 's/^first: //p' <<<"$out")" == "$best" ]] || fail "default is not the best: $out"
echo "best $best; runnable: $runnable"

expect() {  # expect VALUE FIRST_TARGET STDERR_PREFIX_OR_EMPTY
  local value="$1" want="$2" warn="$3" o
  o="$(SHP_SIMD_TARGET="$value" "$probe" 2>"$err")" || fail "probe failed for '$value': $o"
  [[ "$(sed -n 's/^first: //p' <<<"$o")" == "$want" ]] ||
    fail "SHP_SIMD_TARGET='$value': first call reports '$(sed -n 's/^first: //p' <<<"$o")', want '$want'"
  if [[ -z "$warn" ]]; then
    [[ ! -s "$err" ]] || fail "SHP_SIMD_TARGET='$value': unexpected stderr: $(cat "$err")"
  else
    [[ "$(wc -l <"$err")" -eq 1 ]] || fail "SHP_SIMD_TARGET='$value': want one stderr line: $(cat "$err")"
    [[ "$(cat "$err")" == "$warn"* ]] || fail "SHP_SIMD_TARGET='$value': stderr '$(cat "$err")', want '$warn...'"
    [[ "$(cat "$err")" == *"; using $best" ]] || fail "SHP_SIMD_TARGET='$value': stderr does not end '; using $best'"
  fi
  echo "ok: SHP_SIMD_TARGET='$value' -> $want${warn:+ (warned)}"
}

for t in $runnable; do
  expect "$t" "$t" ""
  expect "${t,,}" "$t" ""
done
expect "" "$best" ""
expect "best" "$best" ""
expect "bogus" "$best" "libshapepoly: SHP_SIMD_TARGET=bogus ignored: unknown SIMD target 'bogus': expected \"best\" or one of "
# Names Highway knows that are not runnable here: not compiled (AVX3_DL, EMU128 with Debian's
# Highway 1.0.3) or not run by this CPU (AVX3 on an AVX2-only machine).
checked=0
for t in AVX3_DL AVX3 AVX2 SSE4 SSSE3 EMU128 SCALAR; do
  [[ " $runnable " == *" $t "* ]] && continue
  o="$(SHP_SIMD_TARGET="$t" "$probe" 2>"$err")" || fail "probe failed for '$t'"
  if grep -q "is not supported by this CPU; it supports: " "$err"; then
    expect "$t" "$best" "libshapepoly: SHP_SIMD_TARGET=$t ignored: $t is not supported by this CPU; it supports: "
  else
    expect "$t" "$best" "libshapepoly: SHP_SIMD_TARGET=$t ignored: $t is not compiled into this library; it is compiled for: "
  fi
  checked=$((checked + 1))
done
[[ $checked -gt 0 ]] || echo "note: every x86 target Highway names is runnable here"
echo PASS
