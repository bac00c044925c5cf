#!/usr/bin/env bash
# `make install` into a temporary prefix, then a C program outside the repository built three
# ways (pkg-config, CMake, the plain gcc line and the Makefile of the README), each run WITHOUT LD_LIBRARY_PATH;
# the installed CLI runs; `make uninstall` removes everything. Prints 'N passed, M failed'.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/install/test_lib.sh
PREFIX="$WORK/prefix"
unset LD_LIBRARY_PATH

check "make install PREFIX=$PREFIX" make -s install PREFIX="$PREFIX"
for f in include/shapepoly/shapepoly.h include/shapepoly/shapepoly_experimental.h \
  lib/libshapepoly.so lib/libshapepoly.so.0 lib/pkgconfig/shapepoly.pc \
  lib/cmake/shapepoly/shapepolyConfig.cmake bin/shapepoly; do
  [[ -e "$PREFIX/$f" ]] && pass "installed $f" || fail "missing $f"
done
soname=$(readelf -d "$PREFIX/lib/libshapepoly.so.0" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ "$soname" == libshapepoly.so.0 ]] && pass "SONAME libshapepoly.so.0" || fail "SONAME is '$soname'"

mkdir -p "$WORK/app"
cp tests/install/hello.c tests/install/CMakeLists.txt "$WORK/app/"
cd "$WORK/app"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
# 1. pkg-config (the rpath makes it run without LD_LIBRARY_PATH)
check "pkg-config build" sh -c 'cc hello.c -o hello_pc $(pkg-config --cflags --libs shapepoly) -Wl,-rpath,$(pkg-config --variable=libdir shapepoly)'
check "pkg-config binary runs" ./hello_pc
# 2. CMake (imported target; CMake sets the build rpath itself)
check "cmake configure" cmake -S . -B build -DCMAKE_PREFIX_PATH="$PREFIX"
check "cmake build" cmake --build build
check "cmake binary runs" ./build/hello
# 3. The plain gcc line of the README
check "gcc build" gcc hello.c -I"$PREFIX/include" -L"$PREFIX/lib" -lshapepoly -Wl,-rpath,"$PREFIX/lib" -o hello_gcc
check "gcc binary runs" ./hello_gcc
# 4. The README's Makefile
printf '%s\n' 'CFLAGS += $(shell pkg-config --cflags shapepoly)' \
  'LDLIBS += $(shell pkg-config --libs shapepoly)' \
  'LDFLAGS += -Wl,-rpath,$(shell pkg-config --variable=libdir shapepoly)' 'hello: hello.c' > Makefile
check "Makefile build" make -s hello
check "Makefile binary runs" ./hello
# The installed CLI finds its library through $ORIGIN/../lib.
check "installed shapepoly runs" sh -c "'$PREFIX/bin/shapepoly' --help >/dev/null 2>&1 || '$PREFIX/bin/shapepoly' 2>&1 | grep -q usage"
cd "$ROOT"
check "make uninstall" make -s uninstall PREFIX="$PREFIX"
left=$(find "$PREFIX" -type f -o -type l 2>/dev/null | wc -l)
[[ "$left" == 0 ]] && pass "uninstall removed every file" || fail "uninstall left $left files"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
