#!/usr/bin/env bash
# A fresh cargo project outside the repository, made from the stanzas of bindings/rust/README.md
# (the blocks after its `<!-- rust_project_test: NAME -->` markers, so they cannot drift): the
# Cargo.toml dependency on the clone's `shapepoly` crate, the build.rs and the example program.
# Built against the clone's build/lib (`make lib`) and against an installed prefix (`make
# install`, then the README's SHAPEPOLY_LIB_DIR line); each binary runs WITHOUT LD_LIBRARY_PATH
# and prints the README's output. Also: a relative SHAPEPOLY_LIB_DIR is resolved against the
# directory cargo runs in (even when PWD is stale), a wrong one fails with a clear message, the
# README's .cargo/config.toml sets it, and unsetting it relinks the project against the clone.
# Offline; prints 'N passed, M failed'.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/install/test_lib.sh
README=bindings/rust/README.md
PREFIX="$WORK/prefix"
expect() {  # name, wanted, got: exact comparison
  if [[ "$2" == "$3" ]]; then pass "$1"; else
    fail "$1"; diff <(echo "$2") <(echo "$3") | sed 's/^/    /'; fi
}
contains() {  # name, text, needle
  if [[ "$2" == *"$3"* ]]; then pass "$1"; else
    fail "$1: no '$3' in"; echo "$2" | sed 's/^/    /'; fi
}
block() {  # the fenced block after '<!-- rust_project_test: NAME -->' in the README
  awk -v m="<!-- rust_project_test: $1 -->" '
    $0 == m { found = 1; next }
    found == 1 && /^```/ { found = 2; next }
    found == 2 && /^```/ { exit }
    found == 2 { print }' "$README"
}
runpath() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p'; }
loaded_from() { ldd "$1" 2>/dev/null | sed -n 's/.*libshapepoly\.so\.0 => \(.*\) (0x.*/\1/p'; }
unset LD_LIBRARY_PATH SHAPEPOLY_LIB_DIR CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR
export CARGO_NET_OFFLINE=true CARGO_TERM_COLOR=never

CARGO_TOML=$(block Cargo.toml) BUILD_RS=$(block build.rs) MAIN_RS=$(block src/main.rs)
OUTPUT=$(block output) INSTALLED=$(block installed) CONFIG=$(block .cargo/config.toml)
for b in CARGO_TOML BUILD_RS MAIN_RS OUTPUT INSTALLED CONFIG; do
  [[ -n "${!b}" ]] && pass "README block $b" || fail "README block $b is missing or empty"
done
[[ "$CARGO_TOML" == *"/path/to/libshapepoly"* ]] && pass "the stanza names /path/to/libshapepoly" ||
  fail "the Cargo.toml stanza no longer says /path/to/libshapepoly"

new_project() {  # dir: `cargo new`, then the README's Cargo.toml stanza, build.rs and main.rs
  cargo new --vcs none --quiet "$1" || return 1
  # The stanza has its own [dependencies] header: it replaces cargo new's empty one.
  sed -i '/^\[dependencies\]$/d' "$1/Cargo.toml"
  printf '\n%s\n' "${CARGO_TOML//\/path\/to\/libshapepoly/$ROOT}" >> "$1/Cargo.toml"
  printf '%s\n' "$BUILD_RS" > "$1/build.rs"
  printf '%s\n' "$MAIN_RS" > "$1/src/main.rs"
}

# 1. The clone's build/lib.
check "make lib" make -s lib
check "cargo new + the README's stanza (clone)" new_project "$WORK/myapp"
cd "$WORK/myapp"
check "cargo build (clone)" cargo build
check "RUNPATH is the clone's build/lib" test "$(runpath target/debug/myapp)" = "$ROOT/build/lib"
expect "libshapepoly.so.0 loads from the clone" "$ROOT/build/lib/libshapepoly.so.0" \
  "$(loaded_from target/debug/myapp)"
expect "the binary prints the README's output (clone, no LD_LIBRARY_PATH)" "$OUTPUT" \
  "$(./target/debug/myapp 2>&1)"
expect "cargo run prints the README's output" "$OUTPUT" "$(cargo run -q 2>&1)"

# 2. An installed prefix, with the README's command (its $HOME/.local is our prefix).
cd "$ROOT"
check "make install PREFIX=$PREFIX" make -s install PREFIX="$PREFIX"
check "cargo new + the README's stanza (installed)" new_project "$WORK/app2"
cd "$WORK/app2"
INSTALLED=${INSTALLED//\$HOME\/.local/$PREFIX}
log=$(bash -c "$INSTALLED" 2>&1) && pass "README: $INSTALLED" ||
  { fail "README: $INSTALLED"; echo "$log" | sed 's/^/    /'; }
contains "the build says which library it links" "$log" \
  "SHAPEPOLY_LIB_DIR=$PREFIX/lib: linking $PREFIX/lib/libshapepoly.so"
expect "RUNPATH is the prefix's lib" "$PREFIX/lib" "$(runpath target/debug/app2)"
expect "libshapepoly.so.0 loads from the prefix" "$PREFIX/lib/libshapepoly.so.0" \
  "$(loaded_from target/debug/app2)"
expect "the binary prints the README's output (installed, no LD_LIBRARY_PATH)" "$OUTPUT" \
  "$(./target/debug/app2 2>&1)"

# 3. Relative SHAPEPOLY_LIB_DIR: resolved against cargo's directory, not the -sys crate's folder,
# and not PWD (stale here, as when a program starts cargo in another directory).
name="relative SHAPEPOLY_LIB_DIR builds"
log=$(SHAPEPOLY_LIB_DIR=../prefix/lib cargo build 2>&1) && pass "$name" ||
  { fail "$name"; echo "$log" | sed 's/^/    /'; }
contains "relative SHAPEPOLY_LIB_DIR is resolved and shown" "$log" \
  "SHAPEPOLY_LIB_DIR=../prefix/lib: linking $PREFIX/lib/libshapepoly.so"
log=$(cd "$WORK" && PWD=/ SHAPEPOLY_LIB_DIR=prefix/lib cargo build \
  --manifest-path app2/Cargo.toml 2>&1)
contains "relative SHAPEPOLY_LIB_DIR ignores a stale PWD" "$log" \
  "SHAPEPOLY_LIB_DIR=prefix/lib: linking $PREFIX/lib/libshapepoly.so"
expect "the binary still runs" "$OUTPUT" "$(./target/debug/app2 2>&1)"
log=$(SHAPEPOLY_LIB_DIR=nowhere cargo build 2>&1) && fail "a wrong SHAPEPOLY_LIB_DIR must fail" ||
  contains "a wrong SHAPEPOLY_LIB_DIR fails clearly" "$log" \
    "$WORK/app2/nowhere/libshapepoly.so not found: SHAPEPOLY_LIB_DIR must name the folder"

# 4. Unsetting it relinks against the clone (the project's build.rs reruns).
check "cargo build without SHAPEPOLY_LIB_DIR" cargo build
expect "RUNPATH is the clone's build/lib again" "$ROOT/build/lib" "$(runpath target/debug/app2)"
expect "the relinked binary runs" "$OUTPUT" "$(./target/debug/app2 2>&1)"

# 5. The README's .cargo/config.toml sets it for every cargo command of the project.
mkdir -p .cargo
printf '%s\n' "${CONFIG//\/home\/me\/.local/$PREFIX}" > .cargo/config.toml
check "cargo build with the README's .cargo/config.toml" cargo build
expect "RUNPATH is the prefix's lib (.cargo/config.toml)" "$PREFIX/lib" \
  "$(runpath target/debug/app2)"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
