"""Compiled functions (shp_function_*): a Python trace function, traced again when a call's
shapes fit no variant traced so far, like torch.compile with automatic dynamic shapes."""

import ctypes
import enum
import threading
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._core import DTypeLike, Scope, Tensor, as_dtype, borrowed, closed_error, cstrings
from ._errors import (INT32, SIZE_T, Error, InvalidArgument, check, int_arg, int_args,
                      raise_error)
from ._program import Program, adopt_array

L = _lib.lib
_byref = ctypes.byref
_vp = ctypes.c_void_p


class DynamicMode(enum.IntEnum):
    """Which axes are symbolic in a new trace (shp_dynamic_mode_t)."""
    AUTO = _lib.SHP_DYNAMIC_AUTO  # static first; an axis whose size changes becomes symbolic
    ALL = _lib.SHP_DYNAMIC_ALL
    NONE = _lib.SHP_DYNAMIC_NONE


class Stance(enum.IntEnum):
    """What a call does when no variant covers its shapes (shp_stance_t)."""
    DEFAULT = _lib.SHP_STANCE_DEFAULT
    FAIL_ON_RECOMPILE = _lib.SHP_STANCE_FAIL_ON_RECOMPILE
    DYNAMIC_ON_LIMIT = _lib.SHP_STANCE_DYNAMIC_ON_LIMIT
    FORCE_TRACE = _lib.SHP_STANCE_FORCE_TRACE


TraceResult = Union[Tensor, Sequence[Tensor], Mapping[str, Tensor]]


class Function:
    """A compiled function: `fn(scope, **inputs)` builds the outputs from traced input tensors
    (it may branch on shapes with Dim.guard); calling the Function with numpy arrays by keyword
    runs the first variant whose guards hold, or traces a new one. `fn` returns a Tensor (one
    output), a sequence in output order, or a dict by output name. The scope and tensors it
    receives are valid only during the trace (ValueError afterwards). An exception raised by
    `fn` propagates out of the call. Calls from several threads are serialized by a lock.
    The trace function must not re-enter its own Function: calling it is refused with the
    library's own InvalidArgument (shp_function_call refuses a call from the trace function),
    and close(), mark_dynamic(), mark_static() and set_stance() called from it raise
    InvalidArgument too; none of them ever blocks."""

    def __init__(self, fn: Callable[..., TraceResult], inputs: Mapping[str, Tuple[DTypeLike, int]],
                 outputs: Sequence[str], dynamic: Union[DynamicMode, int] = DynamicMode.AUTO,
                 duck_sizing: bool = True, recompile_limit: int = 8,
                 stance: Union[Stance, int] = Stance.DEFAULT,
                 num_threads: Optional[int] = None) -> None:
        self._ptr: Optional[int] = None
        # Reentrant: a trace function that calls back into this Function on the calling thread
        # must reach the refusal below (or the C layer's), not deadlock on the lock it holds.
        self._lock = threading.RLock()
        self._tracing: Optional[int] = None  # the thread running the trace function, if any
        self._fn = fn
        self._error: Optional[BaseException] = None
        self.input_names: Tuple[str, ...] = tuple(inputs)
        self.output_names: Tuple[str, ...] = tuple(outputs)
        self._dtypes = {n: as_dtype(inputs[n][0]) for n in self.input_names}
        me = weakref.ref(self)  # no reference cycle: a dropped Function is released at once

        def trampoline(*args: Any) -> int:
            f = me()
            if f is None:
                return L.shp_error_create(_lib.SHP_INVALID_ARGUMENT, b"function released")
            return f._trace(*args)

        self._callback = _lib.TRACE_FN(trampoline)  # kept alive as long as the function
        o = _vp()
        check(L.shp_function_options_create(_byref(o)))
        try:
            check(L.shp_function_options_set_dynamic(o, int_arg(dynamic, "dynamic", INT32)))
            check(L.shp_function_options_set_duck_sizing(o, bool(duck_sizing)))
            check(L.shp_function_options_set_recompile_limit(
                o, int_arg(recompile_limit, "recompile_limit", INT32)))
            check(L.shp_function_options_set_stance(o, int_arg(stance, "stance", INT32)))
            if num_threads is not None:
                check(L.shp_function_options_set_num_threads(
                    o, int_arg(num_threads, "num_threads", INT32)))
            n = len(self.input_names)
            dts = (ctypes.c_int32 * max(n, 1))(*[self._dtypes[k] for k in self.input_names])
            ranks = (ctypes.c_size_t * max(n, 1))(*int_args(
                [inputs[k][1] for k in self.input_names], "rank of inputs", SIZE_T))
            out = _vp()
            check(L.shp_function_create(
                ctypes.cast(self._callback, _vp), None, cstrings(list(self.input_names)), dts,
                ranks, n, cstrings(list(self.output_names)), len(self.output_names), o,
                _byref(out)))
        finally:
            L.shp_function_options_destroy(o)
        self._ptr = out.value

    def _trace(self, scope_ptr: int, inputs: Any, num_inputs: int, outputs: Any,
               num_outputs: int, user_data: Any) -> int:
        """The shp_trace_fn: runs the Python trace function on a borrowed scope."""
        scope = Scope._borrow(scope_ptr)
        scope._from_hints = True  # the library traces under FROM_HINTS: `if` guards on hints
        self._tracing = threading.get_ident()
        try:
            ts = {self.input_names[i]: Tensor(scope, inputs[i]) for i in range(num_inputs)}
            result = self._fn(scope, **ts)
            if isinstance(result, Tensor):
                result = [result]
            elif isinstance(result, Mapping):
                missing = [n for n in self.output_names if n not in result]
                if missing:
                    raise ValueError("shapepoly: the trace function returned no output %s" %
                                     ", ".join(missing))
                result = [result[n] for n in self.output_names]
            result = list(result)
            if len(result) != num_outputs:
                raise ValueError("shapepoly: the trace function returned %d outputs, expected %d"
                                 % (len(result), num_outputs))
            for j, t in enumerate(result):
                if not isinstance(t, Tensor):
                    raise TypeError("shapepoly: output %s is a %s, not a Tensor" %
                                    (self.output_names[j], type(t).__name__))
                outputs[j] = t._h()
            return 0
        except Error as e:  # a library error: its code goes back through the call
            return L.shp_error_create(e.code, e.message.encode())
        except BaseException as e:  # re-raised by __call__ once the library returns
            self._error = e
            return L.shp_error_create(_lib.SHP_INVALID_ARGUMENT,
                                      ("%s: %s" % (type(e).__name__, e)).encode())
        finally:
            self._tracing = None
            scope._ptr = None  # the loan ends: kept dims and tensors raise ValueError

    def _refuse_reentry(self, what: str) -> None:
        """Raises InvalidArgument when called from this function's own trace function (on the
        thread that runs it); other threads wait for the lock as for any call."""
        if self._tracing is not None and self._tracing == threading.get_ident():
            raise InvalidArgument("shapepoly: Function.%s: the function was called from its own "
                                  "trace function" % what, _lib.SHP_INVALID_ARGUMENT)

    def _h(self) -> int:
        p = self._ptr
        if p is None:
            raise closed_error("Function")
        return p

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        """Releases the function, its variants and its runtime (idempotent)."""
        with self._lock:
            self._refuse_reentry("close")  # destroying it under its own trace: use after free
            p, self._ptr = self._ptr, None
            if p:
                L.shp_function_destroy(p)

    def __del__(self) -> None:
        p = getattr(self, "_ptr", None)
        if p:
            self._ptr = None
            L.shp_function_destroy(p)

    def __enter__(self) -> "Function":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __call__(self, /, **inputs: Any) -> Dict[str, np.ndarray]:
        """Calls with numpy arrays by keyword; returns {output name: array}. Inputs are passed
        without a copy when C-contiguous and aligned (else converted once). Called from the
        trace function, it reaches shp_function_call, which refuses it (InvalidArgument)."""
        with self._lock:
            h = self._h()
            names = list(inputs)
            arrays, handles = [], []
            try:
                for n in names:
                    a = inputs[n]
                    dt = self._dtypes.get(n)
                    want = dt.numpy if dt is not None else None
                    if (not isinstance(a, np.ndarray) or not a.flags.c_contiguous or
                            not a.flags.aligned or not a.dtype.isnative):
                        a = np.require(a, want if not isinstance(a, np.ndarray) else
                                       a.dtype.newbyteorder("="), ["C", "A"])
                    arrays.append(a)
                    try:
                        code = as_dtype(a.dtype)
                    except TypeError:
                        from ._errors import DtypeMismatch
                        raise DtypeMismatch("input '%s': numpy dtype %s has no shapepoly "
                                            "element type" % (n, a.dtype),
                                            _lib.SHP_DTYPE_MISMATCH) from None
                    out = _vp()
                    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
                    check(L.shp_array_wrap(code, shape, a.ndim, a.__array_interface__["data"][0],
                                           a.nbytes, _byref(out)))
                    handles.append(out.value)
                arr = (_vp * max(len(handles), 1))(*handles)
                nout = len(self.output_names)
                outs = (_vp * max(nout, 1))()
                self._error = None
                err = L.shp_function_call(h, cstrings(names), arr, len(handles), outs, nout)
                if err:
                    e, self._error = self._error, None
                    if e is not None:
                        L.shp_error_destroy(err)
                        raise e
                    raise_error(err)
                return {n: adopt_array(outs[j]) for j, n in enumerate(self.output_names)}
            finally:
                for p in handles:
                    L.shp_array_destroy(p)

    def mark_dynamic(self, input: str, axis: int, min: int = 0, max: Optional[int] = None
                     ) -> None:
        """Makes an axis symbolic in every later trace, with sizes in [min, max]."""
        with self._lock:
            self._refuse_reentry("mark_dynamic")
            check(L.shp_function_mark_dynamic(
                self._h(), input.encode(), int_arg(axis, "mark_dynamic: axis"),
                int_arg(min, "mark_dynamic: min"),
                _lib.INT64_MAX if max is None else int_arg(max, "mark_dynamic: max")))

    def mark_static(self, input: str, axis: int) -> None:
        """Keeps an axis static in every later trace (a new size, a new variant)."""
        with self._lock:
            self._refuse_reentry("mark_static")
            check(L.shp_function_mark_static(self._h(), input.encode(),
                                             int_arg(axis, "mark_static: axis")))

    def maybe_mark_dynamic(self, input: str, axis: int) -> None:
        """torch._dynamo.maybe_mark_dynamic: the axis is symbolic in every later trace, but a
        trace function that specializes it is not an error (unlike mark_dynamic)."""
        with self._lock:
            self._refuse_reentry("maybe_mark_dynamic")
            check(L.shp_function_maybe_mark_dynamic(self._h(), input.encode(),
                                                    int_arg(axis, "maybe_mark_dynamic: axis")))

    def mark_unbacked(self, input: str, axis: int) -> None:
        """torch._dynamo.mark_unbacked: the axis is symbolic in every later trace, sizes 0 and 1
        included, with no hint: a comparison on it that cannot be decided raises Inconclusive
        instead of guarding on the call's size, and it is never duck-sized."""
        with self._lock:
            self._refuse_reentry("mark_unbacked")
            check(L.shp_function_mark_unbacked(self._h(), input.encode(),
                                               int_arg(axis, "mark_unbacked: axis")))

    def set_stance(self, stance: Union[Stance, int]) -> None:
        with self._lock:
            self._refuse_reentry("set_stance")
            check(L.shp_function_set_stance(self._h(), int_arg(stance, "set_stance: stance",
                                                               INT32)))

    @property
    def events(self) -> List[str]:
        """The event log: traces and why, static axes, guards, refused traces."""
        h = self._h()
        return [borrowed(L.shp_function_event_text(h, i))
                for i in range(L.shp_function_event_count(h))]

    @property
    def trace_count(self) -> int:
        return L.shp_function_trace_count(self._h())

    @property
    def cache_hits(self) -> int:
        """Calls served by an existing variant."""
        return L.shp_function_cache_hits(self._h())

    @property
    def variant_count(self) -> int:
        return L.shp_function_variant_count(self._h())

    def export(self) -> Program:
        """The variants so far as one multi-variant Program (runs without the trace function)."""
        out = _vp()
        check(L.shp_function_export(self._h(), _byref(out)))
        return Program(out.value)


def function(inputs: Mapping[str, Tuple[DTypeLike, int]], outputs: Sequence[str],
             **options: Any) -> Callable[[Callable[..., TraceResult]], Function]:
    """Decorator: @shapepoly.function(inputs={"x": (F32, 2)}, outputs=["y"]) turns
    `def f(scope, x): ...` into a Function (options as Function's)."""
    def wrap(fn: Callable[..., TraceResult]) -> Function:
        return Function(fn, inputs, outputs, **options)
    return wrap
