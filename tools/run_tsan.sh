#!/usr/bin/env bash
# `make tsan`: the concurrency tests (tests/stress, the C API's thread-sharing test, and the
# kernels' and runtime's threaded evaluation: elementwise_fusion_test found a layout race) under
# ThreadSanitizer, with a clang-built library. Uses its own Bazel output base so that the
# default bazel-bin/libshapepoly.so is not overwritten. Ends with bazel's test summary.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUTPUT_BASE=${TSAN_OUTPUT_BASE:-$HOME/.cache/shapepoly-tsan/$(echo "$ROOT" | md5sum | cut -c1-12)}
exec bazel --output_base="$OUTPUT_BASE" test --symlink_prefix=/ --config=tsan \
  --test_output=errors --jobs=2 //tests/stress:stress_test //tests/c_api:program_api_test \
  //cc/kernels:elementwise_fusion_test //cc/runtime:runtime_test
