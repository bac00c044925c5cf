#!/usr/bin/env bash
# The C# binding used the way bindings/csharp/README.md ("Use it from your own project") says:
# the README's marked blocks (<!-- csharp-project-test: NAME -->) are taken out of the README and
# run as written in fresh projects in a temporary folder outside the repository:
#   build          builds ShapePoly.dll in the clone, copies it, compiles the README's app.cs
#   run-clone      runs it with LD_LIBRARY_PATH=<clone>/build/lib
#   run-installed  `make install` into a temporary prefix, the ShapePoly.dll.config dllmap, and a
#                  run without LD_LIBRARY_PATH
# The app must print the README's output block. Also: run with no library on any path, the
# binding's DllNotFoundException says what to set. Only the user's settings differ from the
# README: SHAPEPOLY= is this clone and PREFIX= a temporary folder.
# Prints PASS/FAIL lines and 'N passed, M failed' last; the exit code is 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/install/test_lib.sh
README=$ROOT/bindings/csharp/README.md
unset LD_LIBRARY_PATH MONO_PATH

# The fenced block right after '<!-- csharp-project-test: NAME -->' in the README.
block() {
  awk -v tag="<!-- csharp-project-test: $1 -->" '
    $0 == tag { want = 1; next }
    want && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$README"
}

for name in build run-clone run-installed app.cs output; do
  text=$(block "$name")
  if [[ -n "$text" ]]; then pass "README block '$name'"; else fail "no README block '$name'"; fi
done
block build | grep -q '^SHAPEPOLY=' && pass "README build block sets SHAPEPOLY=" ||
  fail "README build block does not set SHAPEPOLY="
block run-installed | grep -q '^PREFIX=' && pass "README run-installed block sets PREFIX=" ||
  fail "README run-installed block does not set PREFIX="
[[ $failed -eq 0 ]] || finish

# A README block as a script: the user's own SHAPEPOLY= and PREFIX= lines give way to ours.
script() { block "$1" | sed -E '/^(SHAPEPOLY|PREFIX)=/d'; }
export SHAPEPOLY="$ROOT" PREFIX="$WORK/prefix"
expected=$(block output)
lines=$(printf '%s\n' "$expected" | wc -l)

# run_block NAME DIR: runs the block in DIR; stdout in $WORK/NAME.out, both streams in .log.
run_block() {
  local name=$1 dir=$2
  script "$name" > "$WORK/$name.sh"
  (cd "$dir" && bash -e "$WORK/$name.sh") > "$WORK/$name.out" 2> "$WORK/$name.err"
  local rc=$?
  cat "$WORK/$name.out" "$WORK/$name.err" > "$WORK/$name.log"
  return $rc
}
show() { sed 's/^/    /' "$1" | tail -n 40; }
# check_output NAME WHAT: the last lines of the block's stdout are the README's output.
check_output() {
  local got
  got=$(tail -n "$lines" "$WORK/$1.out")
  if [[ "$got" == "$expected" ]]; then
    pass "$2 prints the README's output"
  else
    fail "$2 prints something else"
    diff <(printf '%s\n' "$expected") <(printf '%s\n' "$got") | sed 's/^/    /'
  fi
}
new_project() {  # a fresh project folder holding the README's app.cs
  mkdir -p "$1" && block app.cs > "$1/app.cs"
}

# 1. Against the clone's build/lib.
app="$WORK/app-clone"
new_project "$app"
if run_block build "$app" && [[ -f "$app/app.exe" && -f "$app/ShapePoly.dll" ]]; then
  pass "clone: the build block compiles app.exe against ShapePoly.dll"
else
  fail "clone: the build block"; show "$WORK/build.log"; finish
fi

# 2. No library anywhere: the first call says what to set.
system_lib=$(ldconfig -p 2>/dev/null | grep 'libshapepoly\.so ')
if [[ -n "$system_lib" || -e /usr/lib/libshapepoly.so || -e /lib/libshapepoly.so ]]; then
  echo "SKIP missing library: a system-wide libshapepoly.so is installed, mono would find it"
else
  out=$(cd "$app" && mono app.exe 2>&1)
  rc=$?
  message="System.DllNotFoundException: the C# binding ShapePoly.dll could not load libshapepoly.so"
  if [[ $rc -ne 0 && "$out" == *"$message"* &&
        "$out" == *"set LD_LIBRARY_PATH=<directory containing libshapepoly.so>"* &&
        "$out" == *'<dllmap dll="shapepoly" target="PREFIX/lib/libshapepoly.so.0" />'* ]]; then
    pass "no library: DllNotFoundException names libshapepoly.so, LD_LIBRARY_PATH and the dllmap"
  else
    fail "no library: exit $rc, message:"; printf '%s\n' "$out" | sed 's/^/    /' | head -n 20
  fi
fi

if run_block run-clone "$app"; then pass "clone: the run-clone block runs"; else
  fail "clone: the run-clone block"; show "$WORK/run-clone.log"; fi
check_output run-clone "clone: app.exe with LD_LIBRARY_PATH=\$SHAPEPOLY/build/lib"

# 3. Against an installed prefix, in another fresh project, without LD_LIBRARY_PATH.
app="$WORK/app-installed"
new_project "$app"
if run_block build "$app"; then pass "installed: the build block"; else
  fail "installed: the build block"; show "$WORK/build.log"; finish; fi
if run_block run-installed "$app"; then
  pass "installed: the run-installed block (make install, dllmap)"
else
  fail "installed: the run-installed block"; show "$WORK/run-installed.log"
fi
check_output run-installed "installed: app.exe without LD_LIBRARY_PATH"
[[ -f "$PREFIX/lib/libshapepoly.so.0" ]] && pass "installed: \$PREFIX/lib/libshapepoly.so.0" ||
  fail "installed: \$PREFIX/lib/libshapepoly.so.0 is missing"
# The run took the library from the prefix (the dllmap), not from the clone.
if (cd "$app" && MONO_LOG_LEVEL=debug MONO_LOG_MASK=dll mono app.exe 2>&1) |
    grep "DllImport loaded library '$PREFIX/lib/libshapepoly.so.0'" >/dev/null; then
  pass "installed: mono loaded \$PREFIX/lib/libshapepoly.so.0 through the dllmap"
else
  fail "installed: mono did not load \$PREFIX/lib/libshapepoly.so.0"
fi
# The other documented route: no config, LD_LIBRARY_PATH=$PREFIX/lib.
rm -f "$app/ShapePoly.dll.config"
got=$(cd "$app" && LD_LIBRARY_PATH="$PREFIX/lib" mono app.exe 2>&1)
if [[ "$got" == "$expected" ]]; then
  pass "installed: app.exe with LD_LIBRARY_PATH=\$PREFIX/lib"
else
  fail "installed: app.exe with LD_LIBRARY_PATH=\$PREFIX/lib"
  printf '%s\n' "$got" | sed 's/^/    /'
fi
finish
