#!/usr/bin/env bash
# The cross-language test (issue 6): the MLP of MLP_CONTRACT.md is exported by C (the
# reference), Rust, Go, C# and Python; every export must be byte-identical to C's. Then every
# file is loaded and run by every language at batch 1, 7 and 64, and each output must equal the
# C runtime's result on the C file. Then the derived grad program (the gradient of the MLP's
# cross-entropy with respect to its weights, as parameters) is written by Rust, and C, Rust,
# Go, C# and Python each print its signature and run it at batch 1, 7 and 64 (its parameters
# left out, then given their defaults by name: the same bits); every signature must be the
# contract's and every output must equal C's bit for bit. Prints one line per check and
# 'N passed, M failed' last.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
LIB="$ROOT/build/lib"
tools/stage_lib.sh >/dev/null || { echo "cannot stage build/lib/libshapepoly.so"; echo "0 passed, 1 failed"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# Build every tool once.
bazel build //tests/cross_language:mlp_ref >/dev/null 2>&1 || bazel build //tests/cross_language:mlp_ref
C_TOOL="$(bazel info bazel-bin 2>/dev/null)/tests/cross_language/mlp_ref"
(cd bindings/rust && SHAPEPOLY_LIB_DIR="$LIB" cargo build --offline -q --example mlp_tool) || fail "rust: build"
RUST_TOOL="$ROOT/bindings/rust/target/debug/examples/mlp_tool"
(cd bindings/go && GOPROXY=off go build -o "$WORK/go_mlp_tool" ./cmd/mlp_tool) || fail "go: build"
bindings/csharp/build.sh >/dev/null || fail "csharp: build"

run_tool() {  # language, args...
  local lang=$1
  shift
  case $lang in
    c) "$C_TOOL" "$@" ;;
    rust) "$RUST_TOOL" "$@" ;;
    go) "$WORK/go_mlp_tool" "$@" ;;
    csharp) LD_LIBRARY_PATH="$LIB" mono "$ROOT/bindings/csharp/out/MlpTool.exe" "$@" ;;
    python) SHAPEPOLY_LIB="$LIB/libshapepoly.so" "$ROOT/.venv/bin/python" \
      "$ROOT/bindings/python/tools/mlp_tool.py" "$@" ;;
  esac
}

LANGS="c rust go csharp python"
for lang in $LANGS; do
  if run_tool "$lang" export "$WORK/$lang.shpoly"; then
    if [ "$lang" = c ] || cmp -s "$WORK/c.shpoly" "$WORK/$lang.shpoly"; then
      pass "$lang: export"
    else
      fail "$lang: export differs from C's ($(stat -c %s "$WORK/$lang.shpoly") vs $(stat -c %s "$WORK/c.shpoly") bytes)"
    fi
  else
    fail "$lang: export failed"
  fi
done

for batch in 1 7 64; do
  run_tool c run "$WORK/c.shpoly" "$batch" "$WORK/ref_$batch.bin" || fail "c: reference run at batch $batch"
  for file in $LANGS; do
    [ -f "$WORK/$file.shpoly" ] || continue
    for lang in $LANGS; do
      out="$WORK/out_${file}_${lang}_$batch.bin"
      if ! run_tool "$lang" run "$WORK/$file.shpoly" "$batch" "$out"; then
        fail "$lang runs $file's file at batch $batch: run failed"
      elif cmp -s "$out" "$WORK/ref_$batch.bin"; then
        pass "$lang runs $file's file at batch $batch"
      else
        fail "$lang runs $file's file at batch $batch: output differs from C's"
      fi
    done
  done
done
# The derived grad program (MLP_CONTRACT.md, "The derived grad program").
cat >"$WORK/grad_signature.txt" <<'SIGNATURE'
input x data
input labels data
input W1 parameter default
input b1 parameter default
input W2 parameter default
input b2 parameter default
input W3 parameter default
input b3 parameter default
input loss.cotangent cotangent default
output loss primal
output W1.grad grad
output b1.grad grad
output W2.grad grad
output b2.grad grad
output W3.grad grad
output b3.grad grad
SIGNATURE
if run_tool rust grad-export "$WORK/grad.shpoly"; then
  pass "rust: grad-export"
else
  fail "rust: grad-export failed"
fi
if [ -f "$WORK/grad.shpoly" ]; then
  for batch in 1 7 64; do
    ref="$WORK/grad_ref_$batch.bin"
    run_tool c grad-run "$WORK/grad.shpoly" "$batch" "$ref" >/dev/null ||
      fail "c: grad reference run at batch $batch"
    for lang in $LANGS; do
      out="$WORK/grad_${lang}_$batch.bin"
      sig="$WORK/grad_${lang}_$batch.txt"
      if ! run_tool "$lang" grad-run "$WORK/grad.shpoly" "$batch" "$out" >"$sig"; then
        fail "$lang runs rust's grad file at batch $batch: run failed"
      elif ! cmp -s "$sig" "$WORK/grad_signature.txt"; then
        fail "$lang runs rust's grad file at batch $batch: signature differs from the contract's"
        diff "$WORK/grad_signature.txt" "$sig"
      elif cmp -s "$out" "$ref"; then
        pass "$lang runs rust's grad file at batch $batch"
      else
        fail "$lang runs rust's grad file at batch $batch: outputs differ from C's"
      fi
    done
  done
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
