#!/usr/bin/env bash
# Compares the dynamic symbols that libshapepoly.so defines with the checked-in list.
# Usage: abi_test.sh <libshapepoly.so> <exported_symbols.txt>
# After an intended change of the C API, regenerate the list with tools/update_abi_symbols.sh.
set -euo pipefail

lib="$1"
expected="$2"

# Keep this pipeline identical to the one in tools/update_abi_symbols.sh. Local symbols (nm's
# lowercase b, d, r, s, t) are in the dynamic table only for relocations (an initial-exec
# thread-local variable needs one): nothing can link against them, so they are not exported.
actual="$(nm -D --defined-only "$lib" | awk '$2 !~ /^[bdrst]$/ {print $3}' | LC_ALL=C sort)"

if diff -u "$expected" <(printf '%s\n' "$actual"); then
  echo "ABI OK: $(printf '%s\n' "$actual" | wc -l) exported symbols match $expected"
  exit 0
fi
echo "ABI MISMATCH: exported symbols of $lib differ from $expected (diff above: -expected +actual)." >&2
echo "If the change is intended, run tools/update_abi_symbols.sh and commit the file." >&2
exit 1
