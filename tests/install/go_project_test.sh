#!/usr/bin/env bash
# The Go binding used the way bindings/go/README.md says, in fresh projects in a temporary folder
# outside the repository. The README's marked blocks (<!-- go_project_test: NAME -->) are taken
# out of the README and used as written:
#   go.mod           the stanza (require + replace), with /path/to/libshapepoly -> this clone
#   go mod edit      the same from the command line
#   main.go          the example; its '// Output:' lines are what the program must print
#   build-clone      `make lib`, build and run against the clone's build/lib
#   build-installed  pkg-config (-tags shapepoly_pkgconfig) against `make install PREFIX=...`
# Every program runs WITHOUT LD_LIBRARY_PATH, and ldd must resolve libshapepoly.so.0 to the
# intended folder. Also: the pkg-config route with the binding copied out of the clone, and
# `go doc` from the project. Only the user's settings differ from the README: SHAPEPOLY= is this
# clone and PREFIX= a temporary folder. Offline: GOPROXY=off; GOFLAGS is cleared so that the
# stanza must be complete as written (Go's default -mod=readonly).
# Prints PASS/FAIL lines and 'N passed, M failed' last; the exit code is 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/install/test_lib.sh
README=$ROOT/bindings/go/README.md
show() { sed 's/^/    /' "$1" | tail -n 40; }
unset LD_LIBRARY_PATH GOFLAGS PKG_CONFIG_PATH CGO_LDFLAGS CGO_CFLAGS
export GOPROXY=off

# The fenced block right after '<!-- go_project_test: NAME -->' in the README.
block() {
  awk -v tag="<!-- go_project_test: $1 -->" '
    $0 == tag { want = 1; next }
    want && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$README"
}

for name in go.mod "go mod edit" main.go build-clone build-installed; do
  if [[ -n "$(block "$name")" ]]; then pass "README block '$name'"; else fail "README block '$name' is missing"; fi
done
block go.mod | grep -q '^replace example.com/shapepoly => /path/to/libshapepoly/bindings/go$' &&
  pass "go.mod stanza replaces example.com/shapepoly with the clone's bindings/go" ||
  fail "go.mod stanza has no 'replace example.com/shapepoly => /path/to/libshapepoly/bindings/go'"
block build-clone | grep -q '^SHAPEPOLY=' && pass "README build-clone block sets SHAPEPOLY=" ||
  fail "README build-clone block does not set SHAPEPOLY="
block build-installed | grep -q '^PREFIX=' && pass "README build-installed block sets PREFIX=" ||
  fail "README build-installed block does not set PREFIX="
[[ $failed -eq 0 ]] || finish

export SHAPEPOLY="$ROOT" PREFIX="$WORK/prefix"
# A README block as a script: the user's SHAPEPOLY= and PREFIX= lines give way to ours, and the
# clone's placeholder path is this clone.
script() { block "$1" | sed -E -e '/^(SHAPEPOLY|PREFIX)=/d' -e "s|/path/to/libshapepoly|$ROOT|g"; }
expected=$(block main.go | sed -n '/^\t\/\/ Output:$/,/^}/{/Output:$/d; s|^\t// ||p}')
[[ -n "$expected" ]] && pass "the example lists its output" || fail "the example has no '// Output:' lines"

# new_project DIR: a project folder with the README's main.go and (unless 'bare') go.mod.
new_project() {
  mkdir -p "$1"
  block main.go > "$1/main.go"
  [[ "${2:-}" == bare ]] || script go.mod > "$1/go.mod"
}
# run_block NAME DIR: runs the block in DIR; stdout in $WORK/NAME.out, both streams in .log.
run_block() {
  local name=$1 dir=$2 log=$WORK/${1// /_}
  script "$name" > "$log.sh"
  (cd "$dir" && bash -e "$log.sh") > "$log.out" 2> "$log.err"
  local rc=$?
  cat "$log.out" "$log.err" > "$log.log"
  return $rc
}
# check_run NAME DIR WHAT: the block runs, and the last lines of its stdout are the expected output.
check_run() {
  local name=$1 dir=$2 what=$3 log=$WORK/${1// /_}
  if ! run_block "$name" "$dir"; then
    fail "$what: the '$name' block fails"; show "$log.log"; return 1
  fi
  local got
  got=$(tail -n "$(printf '%s\n' "$expected" | wc -l)" "$log.out")
  if [[ "$got" == "$expected" ]]; then pass "$what: prints the README's output"; else
    fail "$what: output differs"; diff <(printf '%s\n' "$expected") <(printf '%s\n' "$got") | show /dev/stdin
  fi
}
# check_lib BINARY DIR WHAT: ldd resolves libshapepoly.so.0 into DIR.
check_lib() {
  local resolved
  resolved=$(ldd "$1" 2>&1 | sed -n 's/^[[:space:]]*libshapepoly\.so\.0 => \([^ ]*\).*/\1/p')
  if [[ "$(dirname "$resolved" 2>/dev/null)" -ef "$2" ]]; then pass "$3: loads $resolved"; else
    fail "$3: libshapepoly.so.0 resolves to '${resolved:-nothing}', not into $2"; fi
}

# 1. Against the clone (the default build), go.mod written from the stanza.
new_project "$WORK/hello"
if check_run build-clone "$WORK/hello" "clone"; then
  check_lib "$WORK/hello/hello" "$ROOT/build/lib" "clone"
fi
# go doc works from the project (the README's API reference).
if out=$(cd "$WORK/hello" && go doc example.com/shapepoly.NewArray 2>&1) &&
  grep -q '^func NewArray' <<< "$out"; then pass "go doc example.com/shapepoly.NewArray"; else
  fail "go doc example.com/shapepoly.NewArray"; echo "$out" | sed 's/^/    /'; fi

# 2. The go.mod made with the README's `go mod init` + `go mod edit` line instead.
new_project "$WORK/hello-edit" bare
if run_block "go mod edit" "$WORK/hello-edit"; then
  pass "go mod edit line"
  check_run build-clone "$WORK/hello-edit" "go mod edit project"
else
  fail "go mod edit line"; show "$WORK/go_mod_edit.log"
fi

# 3. Against an installed library: make install into a temporary prefix, pkg-config route.
if out=$(make -s install PREFIX="$PREFIX" 2>&1); then pass "make install PREFIX=\$tmp/prefix"; else
  fail "make install PREFIX=\$tmp/prefix"; echo "$out" | tail -n 20 | sed 's/^/    /'; finish; fi
new_project "$WORK/hello-installed"
if check_run build-installed "$WORK/hello-installed" "installed"; then
  check_lib "$WORK/hello-installed/hello" "$PREFIX/lib" "installed"
  runpath=$(readelf -d "$WORK/hello-installed/hello" | sed -n 's/.*R.*PATH.*\[\(.*\)\]/\1/p')
  [[ "$runpath" != *"$ROOT"* ]] && pass "installed: the binary's rpath ($runpath) leaves the clone out" ||
    fail "installed: the binary's rpath names the clone: $runpath"
fi

# 4. The pkg-config route needs nothing of the clone but the Go files: a copy of bindings/go
# elsewhere (without tests and tools), replaced in go.mod.
mkdir -p "$WORK/vendor/shapepoly-go"
cp "$ROOT"/bindings/go/go.mod "$WORK/vendor/shapepoly-go/"
for f in "$ROOT"/bindings/go/*.go; do
  [[ "$f" == *_test.go ]] || cp "$f" "$WORK/vendor/shapepoly-go/"
done
new_project "$WORK/hello-vendored"
sed -i "s|^replace example.com/shapepoly => .*|replace example.com/shapepoly => $WORK/vendor/shapepoly-go|" \
  "$WORK/hello-vendored/go.mod"
if check_run build-installed "$WORK/hello-vendored" "installed, binding copied out of the clone"; then
  check_lib "$WORK/hello-vendored/hello" "$PREFIX/lib" "installed, binding copied out of the clone"
fi
finish
