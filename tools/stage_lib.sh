#!/usr/bin/env bash
# Builds libshapepoly.so with the DEFAULT configuration and stages it in build/lib/ with the
# installed layout (what `make install` puts in PREFIX/lib):
#   build/lib/libshapepoly.so.MAJOR.MINOR.PATCH   the library, SONAME libshapepoly.so.MAJOR
#   build/lib/libshapepoly.so.MAJOR -> libshapepoly.so.MAJOR.MINOR.PATCH
#   build/lib/libshapepoly.so       -> libshapepoly.so.MAJOR        (what -lshapepoly finds)
# The language bindings and the Python tests load it from there.
# Why a copy: bazel-bin follows the last build's configuration, and --config=asan overwrites
# bazel-bin/libshapepoly.so with an ASan build that other runtimes cannot load.
# --no-build stages what bazel-bin holds (the caller has just built it).
set -euo pipefail
cd "$(dirname "$0")/.."

[[ "${1:-}" == --no-build ]] || bazel build //:libshapepoly.so
header=c_api/include/shapepoly/shapepoly.h
major=$(sed -n 's/^#define SHP_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
minor=$(sed -n 's/^#define SHP_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")
patch=$(sed -n 's/^#define SHP_VERSION_PATCH \([0-9]*\)$/\1/p' "$header")
lib="libshapepoly.so.$major.$minor.$patch"
mkdir -p build/lib
# Write next to the target and rename, so a process loading build/lib never sees half a file.
install -m 0755 bazel-bin/libshapepoly.so "build/lib/.$lib.tmp"
if command -v patchelf >/dev/null; then
  patchelf --set-soname "libshapepoly.so.$major" "build/lib/.$lib.tmp"
fi
mv -f "build/lib/.$lib.tmp" "build/lib/$lib"
ln -sfn "$lib" "build/lib/.so.major.tmp" && mv -Tf "build/lib/.so.major.tmp" "build/lib/libshapepoly.so.$major"
ln -sfn "libshapepoly.so.$major" "build/lib/.so.tmp" && mv -Tf "build/lib/.so.tmp" "build/lib/libshapepoly.so"
# Older stages left other versions behind; they would only confuse a reader of build/lib.
find build/lib -maxdepth 1 -name 'libshapepoly.so.*.*.*' ! -name "$lib" -delete
