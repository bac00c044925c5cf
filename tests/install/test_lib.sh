# Shared by the tests/install/*_test.sh scripts (sourced after `cd` to the repository root):
# ROOT, a temporary WORK folder removed on exit, and the PASS/FAIL counting that ends with the
# line 'N passed, M failed' (finish: print it and exit, 1 if anything failed); check NAME CMD...
# passes when CMD succeeds.
ROOT=$(pwd -P)
WORK=$(mktemp -d)
WORK=$(cd "$WORK" && pwd -P)
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit; }
check() {  # name, command... (the command's output is shown on failure)
  local name=$1; shift
  if out=$("$@" 2>&1); then pass "$name"; else fail "$name"; echo "$out" | sed 's/^/    /'; fi
}
