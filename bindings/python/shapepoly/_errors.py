"""Exceptions: one class per shp_code, all under shapepoly.Error."""

from typing import Dict, Optional, Type

from . import _lib


class Error(Exception):
    """An error reported by libshapepoly: `.code` (an shp_code value) and `.message`."""

    code: int = _lib.SHP_INTERNAL

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __reduce__(self):  # keeps .code through pickling (multiprocessing)
        return (_rebuild, (self.code, self.message))


def _rebuild(code: int, message: str) -> "Error":
    return error_class(code)(message, code)


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


_code = _lib.lib.shp_error_code
_message = _lib.lib.shp_error_message
_destroy = _lib.lib.shp_error_destroy


def raise_error(err: int) -> None:
    """Turns a non-NULL shp_error_t* into the matching exception (and releases it)."""
    code = _code(err)
    msg = _message(err).decode("utf-8", "replace")
    _destroy(err)
    raise error_class(code)(msg, code)


def check(err: Optional[int]) -> None:
    """Raises if `err` (the return value of a fallible call) is an error."""
    if err:
        raise_error(err)
