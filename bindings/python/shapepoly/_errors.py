"""Exceptions: one class per shp_code, all under shapepoly.Error."""

import operator
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Type

from . import _lib


class Witness(NamedTuple):
    """Concrete variable values that satisfy every fact of the scope, under which the
    undecided comparison is true (`holds`) or false: `values` lists (name, value) pairs in the
    scope's variable order (dict(w.values) gives them by name)."""
    holds: bool
    values: Tuple[Tuple[str, int], ...]


class Error(Exception):
    """An error reported by libshapepoly: `.code` (an shp_code value) and `.message`.

    An Inconclusive error (and some run-time ConstraintViolation errors) explains itself:
    `.witnesses` (0 to 2 Witness, the one that makes the comparison true first) and `.fixes`
    (sentences, each verified to decide the comparison); both are empty for other errors."""

    code: int = _lib.SHP_INTERNAL

    def __init__(self, message: str, code: Optional[int] = None,
                 witnesses: Sequence[Witness] = (), fixes: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.witnesses: List[Witness] = list(witnesses)
        self.fixes: List[str] = list(fixes)

    def __reduce__(self):  # keeps .code and the explanation through pickling (multiprocessing)
        return (_rebuild, (self.code, self.message, self.witnesses, self.fixes))


def _rebuild(code: int, message: str, witnesses: Sequence[Witness] = (),
             fixes: Sequence[str] = ()) -> "Error":
    return error_class(code)(message, code, [Witness(h, tuple(map(tuple, v)))
                                             for h, v in witnesses], fixes)


class InvalidArgument(Error):
    """SHP_INVALID_ARGUMENT: a NULL, out-of-range or otherwise invalid argument."""
    code = _lib.SHP_INVALID_ARGUMENT


class ParseError(Error):
    """SHP_PARSE_ERROR: text (a dim, a shape, a constraint) could not be parsed."""
    code = _lib.SHP_PARSE_ERROR


class Inconclusive(Error):
    """SHP_INCONCLUSIVE: a symbolic comparison could not be decided."""
    code = _lib.SHP_INCONCLUSIVE


class ScopeMismatch(Error):
    """SHP_SCOPE_MISMATCH: objects from different scopes were combined."""
    code = _lib.SHP_SCOPE_MISMATCH


class Unsatisfiable(Error):
    """SHP_UNSATISFIABLE: the constraints of a scope admit no assignment."""
    code = _lib.SHP_UNSATISFIABLE


class ShapeMismatch(Error):
    """SHP_SHAPE_MISMATCH: shapes are incompatible (symbolically or concretely)."""
    code = _lib.SHP_SHAPE_MISMATCH


class ConstraintViolation(Error):
    """SHP_CONSTRAINT_VIOLATION: concrete shapes violate a constraint or assertion."""
    code = _lib.SHP_CONSTRAINT_VIOLATION


class Unsolvable(Error):
    """SHP_UNSOLVABLE: dimension variables cannot be solved from the inputs."""
    code = _lib.SHP_UNSOLVABLE


class DivisionByZero(Error):
    """SHP_DIVISION_BY_ZERO: a dimension expression divides by zero."""
    code = _lib.SHP_DIVISION_BY_ZERO


class Overflow(Error):
    """SHP_OVERFLOW: a dimension value or size overflows int64."""
    code = _lib.SHP_OVERFLOW


class DtypeMismatch(Error):
    """SHP_DTYPE_MISMATCH: element types are incompatible."""
    code = _lib.SHP_DTYPE_MISMATCH


class NotFound(Error):
    """SHP_NOT_FOUND: a named input, output or symbol does not exist."""
    code = _lib.SHP_NOT_FOUND


class InvalidProgram(Error):
    """SHP_INVALID_PROGRAM: a serialized program is malformed or fails verification."""
    code = _lib.SHP_INVALID_PROGRAM


class VersionMismatch(Error):
    """SHP_VERSION_MISMATCH: a serialized program needs a newer library or schema."""
    code = _lib.SHP_VERSION_MISMATCH


class Unsupported(Error):
    """SHP_UNSUPPORTED: a valid request that this build does not support."""
    code = _lib.SHP_UNSUPPORTED


class OutOfMemory(Error):
    """SHP_OUT_OF_MEMORY: an allocation failed."""
    code = _lib.SHP_OUT_OF_MEMORY


class Internal(Error):
    """SHP_INTERNAL: a bug in libshapepoly."""
    code = _lib.SHP_INTERNAL


class GuardFailed(Error):
    """SHP_GUARD_FAILED: concrete shapes violate a guard, or no variant applies."""
    code = _lib.SHP_GUARD_FAILED


class ArgumentOutOfRange(InvalidArgument, ValueError):
    """An integer argument outside the range of its C type (or of the values the argument
    takes, e.g. a byte count >= 0), refused before ctypes, which would wrap it silently. Also
    a ValueError. The message names the argument, the range and the value."""


class ArgumentNotInteger(InvalidArgument, TypeError):
    """A value that is no integer (a float such as 3.7, a bool, a string) where an integer
    argument is meant, refused before it is truncated. Also a TypeError."""


ERROR_CLASSES: Dict[int, Type[Error]] = {
    cls.code: cls
    for cls in (InvalidArgument, ParseError, Inconclusive, ScopeMismatch, Unsatisfiable,
                ShapeMismatch, ConstraintViolation, Unsolvable, DivisionByZero, Overflow,
                DtypeMismatch, NotFound, InvalidProgram, VersionMismatch, Unsupported,
                OutOfMemory, Internal, GuardFailed)
}


def error_class(code: int) -> Type[Error]:
    """The class of `code`; codes this binding does not know map to Error itself."""
    return ERROR_CLASSES.get(code, Error)


_L = _lib.lib
_code = _L.shp_error_code
_message = _L.shp_error_message
_destroy = _L.shp_error_destroy


def _text(s: Optional[bytes]) -> str:
    return "" if s is None else s.decode("utf-8", "replace")


def explanation(err: int) -> Tuple[List[Witness], List[str]]:
    """The witnesses and fixes of a live shp_error_t*, copied out (its strings are borrowed)."""
    witnesses = []
    for i in range(_L.shp_error_witness_count(err)):
        values = tuple((_text(_L.shp_error_witness_variable_name(err, i, j)),
                        int(_L.shp_error_witness_variable_value(err, i, j)))
                       for j in range(_L.shp_error_witness_variable_count(err, i)))
        witnesses.append(Witness(bool(_L.shp_error_witness_holds(err, i)), values))
    fixes = [_text(_L.shp_error_fix(err, i)) for i in range(_L.shp_error_fix_count(err))]
    return witnesses, fixes


def raise_error(err: int) -> None:
    """Turns a non-NULL shp_error_t* into the matching exception (and releases it)."""
    try:
        code = _code(err)
        msg = _message(err).decode("utf-8", "replace")
        witnesses, fixes = explanation(err)
    finally:
        _destroy(err)
    raise error_class(code)(msg, code, witnesses, fixes)


def check(err: Optional[int]) -> None:
    """Raises if `err` (the return value of a fallible call) is an error."""
    if err:
        raise_error(err)


# ---- Integer arguments -----------------------------------------------------------------------
# ctypes converts a Python int to a C integer type modulo 2^bits without a word (2**64 + 5 -> 5,
# -1 -> SIZE_MAX), and the binding's own int() truncates floats (3.7 -> 3). Every integer
# argument passes through int_arg() first: the range below is its C type's, or narrower.

class CInt(NamedTuple):
    name: str  # the C type, as in shapepoly.h
    lo: int
    hi: int


INT32 = CInt("int32_t", -(1 << 31), (1 << 31) - 1)
INT64 = CInt("int64_t", -(1 << 63), (1 << 63) - 1)
UINT64 = CInt("uint64_t", 0, (1 << 64) - 1)
SIZE_T = CInt("size_t", 0, (1 << (8 * _lib.ctypes.sizeof(_lib.ctypes.c_size_t))) - 1)


def int_arg(value: Any, what: str, ctype: CInt = INT64, lo: Optional[int] = None,
            hi: Optional[int] = None) -> int:
    """`value` as a Python int if it is an integer (int, numpy integer, anything with
    __index__ but bool) within [lo, hi] (default: the range of `ctype`); else
    ArgumentNotInteger or ArgumentOutOfRange naming `what`, the range and the value."""
    if type(value) is int:  # the common case, fast
        v = value
    else:
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            raise ArgumentNotInteger("shapepoly: %s must be an integer (%s), got the bool %r" %
                                     (what, ctype.name, value), _lib.SHP_INVALID_ARGUMENT)
        try:
            v = operator.index(value)
        except TypeError:
            raise ArgumentNotInteger("shapepoly: %s must be an integer (%s), got %r of type %s" %
                                     (what, ctype.name, value, type(value).__name__),
                                     _lib.SHP_INVALID_ARGUMENT) from None
    low = ctype.lo if lo is None else lo
    high = ctype.hi if hi is None else hi
    if not low <= v <= high:
        raise ArgumentOutOfRange("shapepoly: %s = %d is out of range: it must be in [%d, %d] "
                                 "(%s)" % (what, v, low, high, ctype.name),
                                 _lib.SHP_INVALID_ARGUMENT)
    return v


def int_args(values: Any, what: str, ctype: CInt = INT64, lo: Optional[int] = None,
             hi: Optional[int] = None) -> List[int]:
    """int_arg() of every entry of a sequence (named what[i]); a lone integer is refused."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ArgumentNotInteger("shapepoly: %s must be a sequence of integers (%s), got %r" %
                                 (what, ctype.name, values), _lib.SHP_INVALID_ARGUMENT)
    return [int_arg(v, "%s[%d]" % (what, i), ctype, lo, hi) for i, v in enumerate(values)]
