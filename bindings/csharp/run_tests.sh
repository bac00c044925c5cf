#!/usr/bin/env bash
# Builds the C# binding (build.sh) and runs its tests against the staged library
# build/lib/libshapepoly.so (tools/stage_lib.sh; tools/run_tests.py stages it first).
# The last line is 'N passed, M failed' (a build failure counts as one failed test).
set -uo pipefail
cd "$(dirname "$0")"
ROOT="$(cd ../.. && pwd)"
LIBDIR="${SHAPEPOLY_LIB_DIR:-$ROOT/build/lib}"
if ! ./build.sh; then
  echo "C# build failed"
  echo "0 passed, 1 failed"
  exit 1
fi
LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SHAPEPOLY_ROOT="$ROOT" mono --debug out/TestRunner.exe "$@"
