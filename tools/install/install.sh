#!/usr/bin/env bash
# `make install` / `make uninstall`: installs libshapepoly into PREFIX (DESTDIR honoured):
#   include/shapepoly/shapepoly.h
#   include/shapepoly/shapepoly_experimental.h  (experimental and test-only functions, no ABI
#                                         promise; see the header)
#   lib/libshapepoly.so.MAJOR.MINOR.PATCH (SONAME libshapepoly.so.MAJOR) and the links
#       lib/libshapepoly.so.MAJOR and lib/libshapepoly.so
#   lib/pkgconfig/shapepoly.pc            (pkg-config --cflags --libs shapepoly)
#   lib/cmake/shapepoly/shapepolyConfig.cmake and shapepolyConfigVersion.cmake
#                                         (find_package(shapepoly): target shapepoly::shapepoly)
#   bin/shapepoly                         (the CLI, rpath $ORIGIN/../lib)
# The in-tree build keeps the SONAME libshapepoly.so (tests and bindings load build/lib); the
# installed copy gets its versioned SONAME with patchelf, so nothing is linked twice.
# Usage: tools/install/install.sh install|uninstall PREFIX
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:?usage: install.sh install|uninstall PREFIX}
prefix=${2:?usage: install.sh install|uninstall PREFIX}
case "$prefix" in /*) ;; *) echo "install: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;; esac
root="${DESTDIR:-}$prefix"
header=c_api/include/shapepoly/shapepoly.h
experimental_header=c_api/include/shapepoly/shapepoly_experimental.h
major=$(sed -n 's/^#define SHP_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
minor=$(sed -n 's/^#define SHP_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")
patch=$(sed -n 's/^#define SHP_VERSION_PATCH \([0-9]*\)$/\1/p' "$header")
version="$major.$minor.$patch"
lib="libshapepoly.so.$version"
files=(
  "include/shapepoly/shapepoly.h" "include/shapepoly/shapepoly_experimental.h"
  "lib/$lib" "lib/libshapepoly.so.$major" "lib/libshapepoly.so"
  "lib/pkgconfig/shapepoly.pc"
  "lib/cmake/shapepoly/shapepolyConfig.cmake" "lib/cmake/shapepoly/shapepolyConfigVersion.cmake"
  "bin/shapepoly"
)

if [[ "$mode" == uninstall ]]; then
  for f in "${files[@]}"; do rm -f "$root/$f"; done
  rmdir "$root/include/shapepoly" "$root/lib/cmake/shapepoly" 2>/dev/null || true
  echo "uninstalled libshapepoly $version from $root"
  exit 0
fi
[[ "$mode" == install ]] || { echo "install: unknown mode '$mode'" >&2; exit 2; }
command -v patchelf >/dev/null || { echo "install: patchelf is missing (tools/setup.sh installs it)" >&2; exit 1; }

bazel build //:libshapepoly.so //tools:shapepoly >/dev/null 2>&1 || bazel build //:libshapepoly.so //tools:shapepoly
bin="$(bazel info bazel-bin 2>/dev/null)"
install -d "$root/include/shapepoly" "$root/lib/pkgconfig" "$root/lib/cmake/shapepoly" "$root/bin"
install -m 0644 "$header" "$root/include/shapepoly/shapepoly.h"
install -m 0644 "$experimental_header" "$root/include/shapepoly/shapepoly_experimental.h"
install -m 0755 "$bin/libshapepoly.so" "$root/lib/$lib"
patchelf --set-soname "libshapepoly.so.$major" "$root/lib/$lib"
ln -sf "$lib" "$root/lib/libshapepoly.so.$major"
ln -sf "libshapepoly.so.$major" "$root/lib/libshapepoly.so"
install -m 0755 "$bin/tools/shapepoly" "$root/bin/shapepoly"
patchelf --replace-needed libshapepoly.so "libshapepoly.so.$major" --set-rpath '$ORIGIN/../lib' \
  "$root/bin/shapepoly"

# pkg-config: the paths are the final ones (PREFIX, not DESTDIR). Highway and zlib are linked
# into the shared library already; they are private requirements for static-minded tools.
cat > "$root/lib/pkgconfig/shapepoly.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: shapepoly
Description: Shape-polymorphic tensor programs with a stable C ABI
Version: $version
Requires.private: libhwy zlib
Cflags: -I\${includedir}
Libs: -L\${libdir} -lshapepoly
PC

# CMake: relocatable (paths relative to this file), one imported target.
cat > "$root/lib/cmake/shapepoly/shapepolyConfig.cmake" <<'CMAKE'
# find_package(shapepoly) -> the imported target shapepoly::shapepoly (C API, libshapepoly.so).
get_filename_component(_shapepoly_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET shapepoly::shapepoly)
  add_library(shapepoly::shapepoly SHARED IMPORTED)
  set_target_properties(shapepoly::shapepoly PROPERTIES
    IMPORTED_LOCATION "${_shapepoly_prefix}/lib/libshapepoly.so.@VERSION@"
    IMPORTED_SONAME "libshapepoly.so.@MAJOR@"
    INTERFACE_INCLUDE_DIRECTORIES "${_shapepoly_prefix}/include")
endif()
set(shapepoly_VERSION "@VERSION@")
unset(_shapepoly_prefix)
CMAKE
sed -i "s/@VERSION@/$version/g; s/@MAJOR@/$major/g" "$root/lib/cmake/shapepoly/shapepolyConfig.cmake"
cat > "$root/lib/cmake/shapepoly/shapepolyConfigVersion.cmake" <<CMAKE
# 0.x: only the same minor version is compatible (semver for 0.x).
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION_MAJOR STREQUAL "$major" AND PACKAGE_FIND_VERSION_MINOR STREQUAL "$minor"
   AND NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
elseif(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
CMAKE
echo "installed libshapepoly $version into $root"
