"""shapepoly: trace shape-polymorphic tensor programs, solve, transform, serialize and run
them, from Python (ctypes over libshapepoly.so; see README.md).

    >>> import numpy as np, shapepoly as sp
    >>> with sp.Scope() as scope:
    ...     x = scope.input("x", sp.F32, "b, 8")
    ...     program = scope.program([x], {"y": (x + x).sum(1)})
    >>> program.runtime()(x=np.ones((2, 8), np.float32))["y"]
    array([16., 16.], dtype=float32)
"""

from . import _lib
from ._core import (BF16, BOOL, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, AutoPad,
                    Cmp, DepthToSpaceMode, Dim, DType,
                    GuardPolicy, PadMode, ScatterReduction, Scope, Tensor, Truth, as_dtype,
                    concatenate,
                    dim_max as max, dim_min as min, where)
from ._errors import (ArgumentNotInteger, ArgumentOutOfRange, ConstraintViolation, DivisionByZero,
                      DtypeMismatch, Error, GuardFailed, Inconclusive, Internal, InvalidArgument,
                      InvalidProgram, NotFound, OutOfMemory, Overflow, ParseError, ScopeMismatch,
                      ShapeMismatch, Unsatisfiable, Unsolvable,
                      Unsupported, VersionMismatch, Witness, error_class)
from ._control_flow import cond, scan, while_loop
from ._function import DynamicMode, Function, Stance, function
from ._program import (Assertion, CostKind, Guard, InputDefault, InputInfo, InputRole,
                       OutputInfo, OutputRole, Program, Runtime, create_variants, load, loads,
                       zeros)

__version__ = _lib.SHP_VERSION_STRING
ABI_VERSION = _lib.SHP_ABI_VERSION
library_path: str = _lib.path  # the libshapepoly.so that was loaded


def version() -> str:
    """The version of the loaded library, e.g. "0.1.0"."""
    return _lib.lib.shp_version_string().decode()


def abi_version() -> int:
    """The ABI version of the loaded library (checked against ABI_VERSION at import)."""
    return int(_lib.lib.shp_abi_version())


def schema_version() -> int:
    """The newest program schema version the library reads and writes."""
    return int(_lib.lib.shp_program_schema_version())


def code_string(code: int) -> str:
    """The fixed text of an error code, e.g. "SHP_INVALID_ARGUMENT: invalid argument"."""
    from ._errors import INT32, int_arg
    return _lib.lib.shp_code_string(int_arg(code, "code", INT32)).decode()


def simd_target() -> str:
    """The SIMD target the kernels dispatch to on this CPU, e.g. "AVX2"."""
    return _lib.lib.shp_simd_target().decode()


def set_simd_target(name: "str | None") -> None:
    """Makes every kernel dispatch to exactly the SIMD target `name` ("AVX2", "SSE4", ...);
    "best" or None lifts the cap. Process-wide (shp_set_simd_target; also SHP_SIMD_TARGET)."""
    from ._errors import check
    check(_lib.lib.shp_set_simd_target(None if name is None else name.encode()))


def simd_sum_f32(values: "object") -> float:
    """Sums float32 values with the dispatched SIMD kernel (accumulated in double)."""
    import ctypes

    import numpy as np

    from ._errors import check
    a = np.require(values, np.float32, ["C", "A"])
    out = ctypes.c_float()
    check(_lib.lib.shp_simd_sum_f32(a.ctypes.data if a.size else None, a.size,
                                    ctypes.byref(out)))
    return float(out.value)


__all__ = [
    "BOOL", "F32", "F64", "I32", "I64", "F16", "BF16", "I8", "U8", "I16", "U16", "U32", "U64",
    "ABI_VERSION", "ArgumentNotInteger", "ArgumentOutOfRange",
    "Assertion", "AutoPad", "Cmp",
    "ConstraintViolation", "DepthToSpaceMode", "PadMode", "ScatterReduction",
    "CostKind",
    "Dim", "DivisionByZero", "DType", "DtypeMismatch", "Error", "Guard", "GuardFailed",
    "GuardPolicy", "Inconclusive", "InputDefault", "InputInfo", "create_variants", "DynamicMode",
    "Function", "Stance", "function",
    "InputRole", "Internal", "InvalidArgument", "InvalidProgram", "NotFound", "OutOfMemory",
    "OutputInfo", "OutputRole", "Overflow", "ParseError", "Program", "Runtime", "Scope",
    "ScopeMismatch", "ShapeMismatch", "Tensor", "Truth", "Unsatisfiable", "Unsolvable",
    "Unsupported", "VersionMismatch", "Witness", "abi_version", "as_dtype", "code_string",
    "concatenate", "cond", "scan", "while_loop",
    "error_class", "library_path", "load", "loads", "max", "min", "schema_version",
    "set_simd_target", "simd_sum_f32", "simd_target", "version", "where", "zeros",
]
