#!/usr/bin/env bash
# Checks that every C/C++ file of the repository is formatted by .clang-format (clang-format-14).
# One test per file; ends with `N passed, M failed` (tools/run_tests.py's "format" suite).
# Usage: tools/check_format.sh          check, print the files that differ
#        tools/check_format.sh --fix    reformat them in place
set -uo pipefail
cd "$(dirname "$0")/.."
fmt="$(command -v clang-format-14 || command -v clang-format || true)"
if [[ -z "$fmt" ]]; then
  echo "clang-format-14 is missing: run tools/setup.sh (it installs it)"
  echo "0 passed, 1 failed"
  exit 1
fi
fix=0
[[ "${1:-}" == "--fix" ]] && fix=1
passed=0 failed=0
while IFS= read -r f; do
  if "$fmt" --style=file "$f" | cmp -s - "$f"; then
    passed=$((passed + 1))
  elif [[ $fix -eq 1 ]]; then
    "$fmt" --style=file -i "$f"
    echo "formatted $f"
    passed=$((passed + 1))
  else
    echo "FAILED: $f is not formatted (see: $fmt --style=file $f | diff $f -)"
    failed=$((failed + 1))
  fi
done < <(git ls-files '*.c' '*.cc' '*.h' | grep -v '^third_party/')
if [[ $failed -gt 0 ]]; then
  echo "to fix: tools/check_format.sh --fix (then review and commit)"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
