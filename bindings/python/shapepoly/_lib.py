"""Loads libshapepoly.so and declares every function of shapepoly.h through ctypes.

The constants and declarations (FUNCTIONS, TRACE_FN) are generated from
c_api/include/shapepoly/shapepoly.h by tools/gen_ffi.py into _lib_generated.py, and re-exported
here under the same names (`make test` fails when that file is stale). Lookup order of the
library: the SHAPEPOLY_LIB environment variable, then libshapepoly.so next to this file (bundled
by `make python-wheel` or by `pip install bindings/python` after `make lib`), then
build/lib/libshapepoly.so of the repository that holds this package.
"""

import ctypes
import os
from typing import Any, Dict, List, Tuple

# The header's constants (SHP_*), FUNCTIONS (name: (restype, argtypes)) and TRACE_FN.
from ._lib_generated import *  # noqa: F403 (every SHP_* constant of the header, by design)
from ._lib_generated import FUNCTIONS, SHP_ABI_VERSION, _i32, _i64, _size
# The ctypes aliases are private to the generated module; re-exported for the tests.
from ._lib_generated import _bool, _f64, _p, _pp, _str, _u64  # noqa: F401

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

LIBRARY_NAME = "libshapepoly.so"


def candidate_paths() -> List[str]:
    """The places searched for the library, in order (see the module docstring)."""
    paths = []
    env = os.environ.get("SHAPEPOLY_LIB")
    if env:
        paths.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    paths.append(os.path.join(here, LIBRARY_NAME))
    # <repo>/bindings/python/shapepoly/_lib.py -> <repo>/build/lib/libshapepoly.so
    repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    paths.append(os.path.join(repo, "build", "lib", LIBRARY_NAME))
    return paths


def _load() -> Tuple[ctypes.CDLL, str]:
    env = os.environ.get("SHAPEPOLY_LIB")
    tried = []
    for path in candidate_paths():
        if not os.path.exists(path):
            tried.append(path)
            if env and path == env:
                # An explicit choice that does not exist is an error, not a fallback.
                raise ImportError("shapepoly: SHAPEPOLY_LIB=%s does not exist" % env)
            continue
        return ctypes.CDLL(path), path
    raise ImportError("shapepoly: cannot find %s (tried %s); run `make lib` or set "
                      "SHAPEPOLY_LIB" % (LIBRARY_NAME, ", ".join(tried)))


# The C integer types of the declarations above, by ctypes type: (C name, min, max). ctypes
# converts a Python int into them modulo 2^bits without a word, so every function with such a
# parameter is called through a wrapper that refuses an argument outside its type's range (or
# no integer at all) before ctypes sees it: the last line of defence behind the API's own
# checks, which name the Python argument (_errors.int_arg).
INT_PARAMS: Dict[Any, Tuple[str, int, int]] = {
    _i32: ("int32_t", -(1 << 31), (1 << 31) - 1),
    _i64: ("int64_t", INT64_MIN, INT64_MAX),
    _size: ("size_t", 0, (1 << (8 * ctypes.sizeof(_size))) - 1),
}


def int_positions(argtypes: List[Any]) -> List[Tuple[int, str, int, int]]:
    """(index, C type, min, max) of each integer parameter of a declaration."""
    return [(i, ) + INT_PARAMS[t] for i, t in enumerate(argtypes) if t in INT_PARAMS]


def _checked(name: str, fn: Any, positions: List[Tuple[int, str, int, int]]) -> Any:
    def call(*args: Any) -> Any:
        for i, cname, lo, hi in positions:
            v = args[i]
            if type(v) is int and lo <= v <= hi:
                continue
            if isinstance(v, ctypes._SimpleCData):  # already a C value: ctypes checks its type
                continue
            from ._errors import CInt, int_arg
            # A bool is 0 or 1 here (the API refuses bools where it means integers).
            int_arg(int(v) if isinstance(v, bool) else v,
                    "argument %d of %s" % (i + 1, name), CInt(cname, lo, hi))
        return fn(*args)

    call.__name__ = name
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


lib, path = _load()
_missing = []
for _name, (_res, _args) in FUNCTIONS.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        _missing.append(_name)
        continue
    _fn.restype = _res
    _fn.argtypes = _args
    _pos = int_positions(_args)
    if _pos:
        _fn = _checked(_name, _fn, _pos)
        setattr(lib, _name, _fn)  # lib.shp_x is the checked function from now on
    globals()[_name] = _fn

# The same functions without argtypes, for the hot path of Runtime.run: called with ctypes
# objects built once, they skip the per-call argument conversion (about 1 us per call).
raw = ctypes.CDLL(path)
raw.shp_runtime_run.restype = ctypes.c_void_p
raw.shp_runtime_run_into.restype = ctypes.c_void_p
raw.shp_array_wrap.restype = ctypes.c_void_p
# Two getters of the call path that cannot block, through PyDLL (the GIL is kept: about 0.05 us
# less per call); the run itself releases the GIL (CDLL), so other threads go on meanwhile.
fast = ctypes.PyDLL(path)
fast.shp_array_data.restype = ctypes.c_void_p
fast.shp_array_destroy.restype = None
fast.shp_array_destroy.argtypes = [ctypes.c_void_p]

abi_version = lib.shp_abi_version()
if abi_version != SHP_ABI_VERSION:
    raise ImportError("shapepoly: %s has ABI version %d, this binding needs %d" %
                      (path, abi_version, SHP_ABI_VERSION))
if _missing:
    raise ImportError("shapepoly: %s lacks %s (an older library?)" % (path, ", ".join(_missing)))
