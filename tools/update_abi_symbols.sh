#!/usr/bin/env bash
# Rewrites tests/abi/exported_symbols.txt from a default-config build of libshapepoly.so.
# Run it after an intended change of the C API and commit the result with the change.
set -euo pipefail
cd "$(dirname "$0")/.."

bazel build //:libshapepoly.so
# Keep this pipeline identical to the one in tests/abi/abi_test.sh.
nm -D --defined-only bazel-bin/libshapepoly.so | awk '$2 !~ /^[bdrst]$/ {print $3}' | LC_ALL=C sort \
  > tests/abi/exported_symbols.txt
echo "wrote tests/abi/exported_symbols.txt ($(wc -l < tests/abi/exported_symbols.txt) symbols):"
git --no-pager diff --stat -- tests/abi/exported_symbols.txt 2>/dev/null || true
