#!/usr/bin/env bash
# Builds libshapepoly.so with the DEFAULT configuration and stages a copy at
# build/lib/libshapepoly.so, which the language bindings and Python tests load.
# Why a copy: bazel-bin follows the last build's configuration, and --config=asan overwrites
# bazel-bin/libshapepoly.so with an ASan build that other runtimes cannot load.
set -euo pipefail
cd "$(dirname "$0")/.."

bazel build //:libshapepoly.so
install -D -m 0755 bazel-bin/libshapepoly.so build/lib/libshapepoly.so
