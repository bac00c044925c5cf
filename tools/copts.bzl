"""Shared compiler options."""

# For every cc_library that ends up in libshapepoly.so: only SHP_API (shp_*) functions are
# visible; c_api/version_script.lds hides everything else a second time.
# Tests of internal C++ symbols of such libraries must set linkstatic = True (with Bazel's
# default dynamic test linking, hidden symbols are not found across the per-library .so).
SHP_LIBRARY_COPTS = [
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
]
