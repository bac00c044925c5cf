"""Scopes, dims and traced tensors (the tracing half of the C API)."""

import ctypes
import enum
import os
import sys
import threading
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple, Union)

import numpy as np

from . import _lib
from ._ops import TensorOps
from ._errors import (INT32, Inconclusive, InvalidArgument, ParseError, ShapeMismatch, check,
                      int_arg, int_args)

if TYPE_CHECKING:
    from ._program import Program

L = _lib.lib
_byref = ctypes.byref
_vp = ctypes.c_void_p


class DType(enum.IntEnum):
    """Element types (shp_dtype_t)."""
    F32 = _lib.SHP_F32
    F64 = _lib.SHP_F64
    I32 = _lib.SHP_I32
    I64 = _lib.SHP_I64
    BOOL = _lib.SHP_BOOL
    # The narrow (storage) types: computed in f32, i32 or i64, rounded or wrapped once on store.
    F16 = _lib.SHP_F16
    BF16 = _lib.SHP_BF16
    I8 = _lib.SHP_I8
    U8 = _lib.SHP_U8
    I16 = _lib.SHP_I16
    U16 = _lib.SHP_U16
    U32 = _lib.SHP_U32
    U64 = _lib.SHP_U64

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype of this element type (BF16: ml_dtypes.bfloat16 where installed,
        else uint16 holding the bits)."""
        return _NUMPY_OF[self]

    @property
    def itemsize(self) -> int:
        return _NUMPY_OF[self].itemsize


try:  # bfloat16 as a numpy dtype (JAX's ml_dtypes), when installed
    import ml_dtypes as _ml_dtypes
    BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    BFLOAT16 = None

_NUMPY_OF = {
    DType.F32: np.dtype(np.float32),
    DType.F64: np.dtype(np.float64),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.BOOL: np.dtype(np.bool_),
    DType.F16: np.dtype(np.float16),
    DType.BF16: BFLOAT16 if BFLOAT16 is not None else np.dtype(np.uint16),
    DType.I8: np.dtype(np.int8),
    DType.U8: np.dtype(np.uint8),
    DType.I16: np.dtype(np.int16),
    DType.U16: np.dtype(np.uint16),
    DType.U32: np.dtype(np.uint32),
    DType.U64: np.dtype(np.uint64),
}
# numpy dtype -> DType (native byte order only; others are converted once). uint16 is U16
# (a BF16 without ml_dtypes is passed as uint16 bits where a BF16 is expected).
DTYPE_OF_NUMPY = {v: k for k, v in _NUMPY_OF.items() if k != DType.BF16 or BFLOAT16 is not None}
DTYPE_OF_NUMPY[np.dtype(np.uint16)] = DType.U16

F32, F64, I32, I64, BOOL = DType.F32, DType.F64, DType.I32, DType.I64, DType.BOOL
F16, BF16, I8, U8, I16, U16, U32, U64 = (DType.F16, DType.BF16, DType.I8, DType.U8, DType.I16,
                                         DType.U16, DType.U32, DType.U64)

DTypeLike = Union[DType, str, type, np.dtype]


def as_dtype(d: DTypeLike) -> DType:
    """DType from a DType, a name ("f32", "float32", "bool") or a numpy dtype."""
    if isinstance(d, DType):
        return d
    if isinstance(d, str):
        short = {t.name.lower(): t for t in DType}
        short["bfloat16"] = BF16
        if d.lower() in short:
            return short[d.lower()]
    try:
        return DTYPE_OF_NUMPY[np.dtype(d).newbyteorder("=")]
    except (TypeError, KeyError):
        raise TypeError("shapepoly: no element type for %r (f32, f64, i32, i64, bool, f16, bf16, "
                        "i8, u8, i16, u16, u32, u64)" % (d,)) from None


class Cmp(enum.IntEnum):
    """Comparison operators (shp_cmp_t)."""
    EQ = _lib.SHP_CMP_EQ
    NE = _lib.SHP_CMP_NE
    LT = _lib.SHP_CMP_LT
    LE = _lib.SHP_CMP_LE
    GT = _lib.SHP_CMP_GT
    GE = _lib.SHP_CMP_GE


_CMP_TEXT = {"==": Cmp.EQ, "!=": Cmp.NE, "<": Cmp.LT, "<=": Cmp.LE, ">": Cmp.GT, ">=": Cmp.GE}
CmpLike = Union[Cmp, str]


def as_cmp(op: CmpLike) -> Cmp:
    if isinstance(op, str):
        try:
            return _CMP_TEXT[op]
        except KeyError:
            raise ValueError("shapepoly: unknown comparison %r (==, !=, <, <=, >, >=)"
                             % op) from None
    return Cmp(op)


class Truth(enum.IntEnum):
    """Three-valued truth (shp_truth_t): UNKNOWN is never turned into FALSE."""
    FALSE = _lib.SHP_FALSE
    TRUE = _lib.SHP_TRUE
    UNKNOWN = _lib.SHP_UNKNOWN


class GuardPolicy(enum.IntEnum):
    """What an op does with a shape comparison it cannot decide (shp_guard_policy_t)."""
    NEVER = _lib.SHP_GUARDS_NEVER  # fail with Inconclusive (the default)
    FROM_HINTS = _lib.SHP_GUARDS_FROM_HINTS  # decide on the hints and record a guard


class AutoPad(enum.IntEnum):
    """How conv and pooling pad their spatial axes (shp_auto_pad_t): NOTSET uses the explicit
    pads; SAME_UPPER/SAME_LOWER pad so that out = ceil(in / stride), the odd one at the end
    (upper) or the beginning (lower); VALID pads nothing."""
    NOTSET = _lib.SHP_AUTO_PAD_NOTSET
    SAME_UPPER = _lib.SHP_AUTO_PAD_SAME_UPPER
    SAME_LOWER = _lib.SHP_AUTO_PAD_SAME_LOWER
    VALID = _lib.SHP_AUTO_PAD_VALID


class PadMode(enum.IntEnum):
    """What pad_mode() fills with (shp_pad_mode_t): a constant, the mirror image without the
    edge (reflect), or copies of the edge."""
    CONSTANT = _lib.SHP_PAD_CONSTANT
    REFLECT = _lib.SHP_PAD_REFLECT
    EDGE = _lib.SHP_PAD_EDGE


class ScatterReduction(enum.IntEnum):
    """How Tensor.scatter combines an update with the element it hits (shp_scatter_reduction_t):
    REPLACE (among repeated indices the last position's update wins), ADD, MUL, MAX, MIN."""
    REPLACE = _lib.SHP_SCATTER_REPLACE
    ADD = _lib.SHP_SCATTER_ADD
    MUL = _lib.SHP_SCATTER_MUL
    MAX = _lib.SHP_SCATTER_MAX
    MIN = _lib.SHP_SCATTER_MIN


class DepthToSpaceMode(enum.IntEnum):
    """The channel order of depth_to_space (shp_depth_to_space_mode_t), as ONNX's modes:
    DCR (depth-column-row, the default) or CRD (column-row-depth, PyTorch's pixel shuffle)."""
    DCR = _lib.SHP_DEPTH_TO_SPACE_DCR
    CRD = _lib.SHP_DEPTH_TO_SPACE_CRD


def _enum(cls: Any, v: Any, what: str) -> Any:
    """An enum member from a member, its value or its name (case-insensitive)."""
    if isinstance(v, str):
        try:
            return cls[v.upper()]
        except KeyError:
            raise ValueError("shapepoly: %s %r is not one of %s" %
                             (what, v, ", ".join(m.name for m in cls))) from None
    return cls(int_arg(v, what, INT32))


def _opt_int64s(values: Optional[Sequence[int]], n: int, what: str) -> Any:
    """An int64 array of exactly n entries, or None (the C default)."""
    if values is None:
        return None
    values = int_args(values, what)
    if len(values) != n:
        raise ValueError("shapepoly: %s needs %d entries, got %d" % (what, n, len(values)))
    return int64s(values)


# ---- Small ctypes helpers ------------------------------------------------------------------

def cstrings(strs: Sequence[str]) -> "ctypes.Array[ctypes.c_char_p]":
    """A `const char* const*` array (kept alive by the caller for the call)."""
    return (ctypes.c_char_p * max(len(strs), 1))(*[s.encode() for s in strs])


def int64s(values: Sequence[int], what: str = "values") -> "ctypes.Array[ctypes.c_int64]":
    """An int64_t array; each entry is checked (int_arg, named what[i]) before ctypes, which
    would wrap it silently."""
    vals = int_args(values, what)
    return (ctypes.c_int64 * max(len(vals), 1))(*vals)


def _axes(axes: Any, what: str = "axes") -> List[int]:
    """A list of int64_t axes from one axis or a sequence of them."""
    if axes is None:
        return []
    if hasattr(axes, "__iter__") and not isinstance(axes, (str, bytes)):
        return int_args(axes, what)
    return [int_arg(axes, what)]


def read_string(fn: Callable[..., Any], *args: Any) -> str:
    """Calls an snprintf-style function (..., buf, cap, len_out) twice: size, then text."""
    n = ctypes.c_size_t()
    check(fn(*args, None, 0, _byref(n)))
    buf = ctypes.create_string_buffer(n.value + 1)
    check(fn(*args, buf, n.value + 1, _byref(n)))
    return buf.value.decode("utf-8", "replace")


def borrowed(s: Optional[bytes]) -> str:
    return "" if s is None else s.decode("utf-8", "replace")


def _range_value(v: Optional[int], unbounded: int, what: str = "bound") -> int:
    return unbounded if v is None else int_arg(v, what)


def _range_out(v: int) -> Optional[int]:
    return None if v in (_lib.INT64_MIN, _lib.INT64_MAX) else v


def closed_error(what: str) -> ValueError:
    return ValueError("shapepoly: operation on a closed %s" % what)


# ---- Scope ---------------------------------------------------------------------------------

DimLike = Union["Dim", int, str]
ShapeLike = Union[str, Sequence[DimLike]]


class Scope:
    """Dimension variables, their constraints, and the dims and tensors traced in them.

    Closing a scope (close(), `with`, or the finalizer) releases every dim and tensor built
    in it; using one afterwards raises ValueError. A scope serializes its calls with a lock, so
    sharing one between threads is safe (but not concurrent).
    """

    _borrowed = False  # a scope lent by the library (a compiled function's trace): never destroyed
    _from_hints = False  # guard policy FROM_HINTS: Python comparisons guard on the hints

    def __init__(self, constraints: Sequence[str] = (),
                 ranges: Optional[Mapping[str, Tuple[Optional[int], Optional[int]]]] = None
                 ) -> None:
        self._ptr: Optional[int] = None
        self._lock = threading.RLock()
        if isinstance(constraints, str):
            raise TypeError("shapepoly: constraints is a list of strings")
        constraints = list(constraints)
        out = _vp()
        cs = cstrings(constraints)
        if ranges:
            names = list(ranges)
            lo = int64s([_range_value(ranges[n][0], _lib.INT64_MIN, "ranges[%r] min" % n)
                         for n in names])
            hi = int64s([_range_value(ranges[n][1], _lib.INT64_MAX, "ranges[%r] max" % n)
                         for n in names])
            check(L.shp_scope_create_with_ranges(cs, len(constraints), cstrings(names), lo, hi,
                                                 len(names), _byref(out)))
        else:
            check(L.shp_scope_create(cs, len(constraints), _byref(out)))
        self._ptr = out.value

    # Handle management.
    def _h(self) -> int:
        p = self._ptr
        if p is None:
            raise closed_error("Scope")
        return p

    @property
    def closed(self) -> bool:
        return self._ptr is None

    @classmethod
    def _borrow(cls, ptr: int) -> "Scope":
        """A Scope over a scope the library owns; _release() ends the loan."""
        s = cls.__new__(cls)
        s._ptr = ptr
        s._lock = threading.RLock()
        s._borrowed = True
        return s

    def close(self) -> None:
        """Destroys the scope and every dim and tensor built in it (idempotent)."""
        with self._lock:
            p, self._ptr = self._ptr, None
            if p and not self._borrowed:
                L.shp_scope_destroy(p)

    def __del__(self) -> None:
        p = getattr(self, "_ptr", None)
        if p and not self._borrowed:
            self._ptr = None
            L.shp_scope_destroy(p)

    def __enter__(self) -> "Scope":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._ptr is None:
            return "Scope(<closed>)"
        return "Scope(constraints=%r)" % (self.constraints,)

    # Variables and facts.
    def declare(self, name: str, min: Optional[int] = None, max: Optional[int] = None) -> None:
        """Declares variable `name` with the inclusive range [min, max] (None: unbounded)."""
        with self._lock:
            check(L.shp_scope_declare(self._h(), name.encode(),
                                      _range_value(min, _lib.INT64_MIN, "declare: min"),
                                      _range_value(max, _lib.INT64_MAX, "declare: max")))

    def check(self, a: DimLike, op: CmpLike, b: DimLike, message: Optional[str] = None) -> None:
        """Asserts `a op b` (like torch._check): used from now on, and checked at run time."""
        with self._lock:
            da, db = self.dim(a), self.dim(b)
            check(L.shp_scope_check(self._h(), da._ptr, as_cmp(op), db._ptr,
                                    None if message is None else message.encode()))

    # Hints, guards and assumptions.
    def set_hint(self, name: str, value: int) -> None:
        """Gives variable `name` an example value (never a fact: only guard() and the
        FROM_HINTS policy read it)."""
        with self._lock:
            check(L.shp_scope_set_hint(self._h(), name.encode(),
                                       int_arg(value, "set_hint: value")))

    def hint(self, name: str) -> Optional[int]:
        """The hint of variable `name`, or None."""
        has, v = ctypes.c_bool(), ctypes.c_int64()
        with self._lock:
            check(L.shp_scope_hint(self._h(), name.encode(), _byref(has), _byref(v)))
        return v.value if has.value else None

    def set_guard_policy(self, policy: Union[GuardPolicy, int]) -> None:
        """Sets what ops do with a comparison they cannot decide (GuardPolicy)."""
        with self._lock:
            check(L.shp_scope_set_guard_policy(self._h(),
                                               int_arg(policy, "set_guard_policy: policy", INT32)))
            self._from_hints = int(policy) == GuardPolicy.FROM_HINTS

    def assume(self, a: DimLike, op: CmpLike, b: DimLike, message: Optional[str] = None) -> None:
        """Adds the guard `a op b` (to trace one variant of a program)."""
        with self._lock:
            da, db = self.dim(a), self.dim(b)
            check(L.shp_scope_assume(self._h(), da._ptr, as_cmp(op), db._ptr,
                                     None if message is None else message.encode()))

    @property
    def variables(self) -> List[str]:
        """The variables the scope knows, in order of first mention."""
        with self._lock:
            h = self._h()
            return [borrowed(L.shp_scope_variable_name(h, i))
                    for i in range(L.shp_scope_variable_count(h))]

    def variable_range(self, name: str) -> Tuple[Optional[int], Optional[int]]:
        """The declared range of `name` (None: unbounded)."""
        with self._lock:
            i = self._variable_index(name)
            lo, hi = ctypes.c_int64(), ctypes.c_int64()
            check(L.shp_scope_variable_range(self._h(), i, _byref(lo), _byref(hi)))
            return _range_out(lo.value), _range_out(hi.value)

    def _variable_index(self, name: str) -> int:
        names = self.variables
        if name not in names:
            from ._errors import NotFound
            raise NotFound("variable '%s' is not in the scope (it has %s)" %
                           (name, ", ".join(names) or "none"), _lib.SHP_NOT_FOUND)
        return names.index(name)

    def is_unbacked(self, name: str) -> bool:
        """Whether variable `name` is data-dependent (made by nonzero, boolean_mask or
        size_from_value): its value comes from the data at run time, never from shapes."""
        with self._lock:
            return bool(L.shp_scope_variable_is_unbacked(self._h(), self._variable_index(name)))

    def variable_origin(self, name: str) -> Optional[str]:
        """The op that produces unbacked variable `name` ("nonzero of a (n, 4) f32 tensor"),
        or None for a variable that is not unbacked."""
        with self._lock:
            s = L.shp_scope_variable_origin(self._h(), self._variable_index(name))
            return None if s is None else borrowed(s)

    @property
    def unbacked(self) -> Dict[str, str]:
        """{name: origin} of the unbacked (data-dependent) variables, in the scope's order."""
        with self._lock:
            h = self._h()
            return {borrowed(L.shp_scope_variable_name(h, i)):
                    borrowed(L.shp_scope_variable_origin(h, i))
                    for i in range(L.shp_scope_variable_count(h))
                    if L.shp_scope_variable_is_unbacked(h, i)}

    @property
    def constraints(self) -> List[str]:
        """The constraints given at creation, then the assertions added by check()."""
        with self._lock:
            h = self._h()
            return [borrowed(L.shp_scope_constraint_text(h, i))
                    for i in range(L.shp_scope_constraint_count(h))]

    # Dims.
    def _new_dim(self, fn: Callable[..., Any], *args: Any) -> "Dim":
        out = _vp()
        with self._lock:
            check(fn(*args, _byref(out)))
        return Dim(self, out.value)

    def dim(self, x: DimLike) -> "Dim":
        """A dim of this scope from a Dim, an int (constant) or text ("2*b + 1")."""
        if isinstance(x, Dim):
            x._h()
            return x
        if isinstance(x, str):
            return self._new_dim(L.shp_dim_parse, self._h(), x.encode())
        # Anything else must be an integer within int64_t (ArgumentNotInteger, a TypeError, for
        # a float, a bool or another type; ArgumentOutOfRange beyond int64_t).
        return self._new_dim(L.shp_dim_constant, self._h(), int_arg(x, "dim value"))

    def var(self, name: str) -> "Dim":
        """The variable `name` (created on first mention)."""
        return self._new_dim(L.shp_dim_variable, self._h(), name.encode())

    def parse_shape(self, spec: str, like: Optional[Sequence[Optional[int]]] = None
                    ) -> Tuple["Dim", ...]:
        """Parses "b, 2*b, _, ..." (`_` and `...` take dims of `like`; a None in `like` is an
        unknown size, as in JAX: a constant of the spec must equal every known size)."""
        with self._lock:
            h = self._h()
            sizes = int_args([0 if d is None else d for d in like or []], "parse_shape: like")
            for i, d in enumerate(sizes):
                if d < 0:
                    raise InvalidArgument("shapepoly: parse_shape: like[%d] is %d; a size is >= 0"
                                          " (None: unknown)" % (i, d), _lib.SHP_INVALID_ARGUMENT)
            lk = int64s([-1 if d is None else s for d, s in zip(like or [], sizes)],
                        "parse_shape: like")
            nl = 0 if like is None else len(like)
            lkp = None if like is None else lk
            rank = ctypes.c_size_t()
            check(L.shp_shape_parse(h, spec.encode(), lkp, nl, None, 0, _byref(rank)))
            dims = (_vp * max(rank.value, 1))()
            check(L.shp_shape_parse(h, spec.encode(), lkp, nl, dims, rank.value, _byref(rank)))
            return tuple(Dim(self, dims[i]) for i in range(rank.value))

    def dims(self, shape: ShapeLike) -> Tuple["Dim", ...]:
        """Dims from a shape spec string or a sequence of Dim/int/str."""
        if isinstance(shape, str):
            return self.parse_shape(shape)
        return tuple(self.dim(d) for d in shape)

    def solve(self, shapes: Union[Mapping[str, Sequence[int]],
                                  Sequence[Tuple[str, Sequence[int]]]]) -> Dict[str, int]:
        """Solves the variables from concrete shapes: {spec: shape}, e.g.
        scope.solve({"b, 2*b": (3, 6)}) == {"b": 3}. A list of (spec, shape) pairs may repeat
        a spec."""
        pairs = list(shapes.items()) if isinstance(shapes, Mapping) else list(shapes)
        specs = cstrings([s for s, _ in pairs])
        arrays = [int64s(list(sh), "solve: shape of %r" % spec) for spec, sh in pairs]
        ptrs = (_vp * max(len(pairs), 1))(*[ctypes.addressof(a) for a in arrays])
        ranks = (ctypes.c_size_t * max(len(pairs), 1))(*[len(sh) for _, sh in pairs])
        out = _vp()
        with self._lock:
            check(L.shp_scope_solve(self._h(), len(pairs), specs, ptrs, ranks, _byref(out)))
        return bindings_dict(out.value)

    # Tensors.
    def _new_tensor(self, fn: Callable[..., Any], *args: Any) -> "Tensor":
        out = _vp()
        with self._lock:
            self._h()
            check(fn(*args, _byref(out)))
        return Tensor(self, out.value)

    def input(self, name: str, dtype: DTypeLike, shape: ShapeLike,
              like: Optional[Sequence[int]] = None, rank: Optional[int] = None) -> "Tensor":
        """A named data input: `shape` is a spec ("batch, 784") or a sequence of dims. As in
        JAX's symbolic_args_specs, `_` takes one dim of `like` and `...` (last) the rest of
        it; with `rank` instead of `like`, `_` and the axes of `...` become fresh variables
        named after the input and the axis (x_1, x_2, ...)."""
        dt = as_dtype(dtype)
        if isinstance(shape, str) and (like is not None or rank is not None):
            shape = self._fill_spec(name, shape, like, rank)
        if isinstance(shape, str):
            return self._new_tensor(L.shp_tensor_input, self._h(), name.encode(), dt,
                                    shape.encode())
        ds = self.dims(shape)
        arr = (_vp * max(len(ds), 1))(*[d._ptr for d in ds])
        return self._new_tensor(L.shp_tensor_input_dims, self._h(), name.encode(), dt, arr,
                                len(ds))

    def _fill_spec(self, name: str, spec: str, like: Optional[Sequence[int]],
                   rank: Optional[int]) -> Union[str, Tuple["Dim", ...]]:
        if like is not None:
            if rank is not None and rank != len(like):
                raise InvalidArgument("input '%s': rank %d but like has %d dims" %
                                      (name, rank, len(like)), _lib.SHP_INVALID_ARGUMENT)
            return self.parse_shape(spec, like)
        n = int_arg(rank, "input: rank")
        parts, depth, cur = [], 0, ""
        body = spec.strip()
        if body.startswith("(") and body.endswith(")"):
            body = body[1:-1]
        for ch in body:  # top-level commas only: max(a, b) is one dim
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                parts.append(cur.strip())
                cur = ""
            else:
                cur += ch
        if cur.strip():
            parts.append(cur.strip())
        if "..." in parts[:-1]:
            raise ParseError("input '%s': '...' must be the last dim of %r" % (name, spec),
                             _lib.SHP_PARSE_ERROR)
        if parts and parts[-1] == "...":
            parts = parts[:-1] + ["_"] * (n - len(parts) + 1)
        if len(parts) != n:
            raise ShapeMismatch("input '%s': spec %r has %d dims but the rank is %d" %
                                (name, spec, len(parts), n), _lib.SHP_SHAPE_MISMATCH)
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
        return tuple(self.var("%s_%d" % (base, k)) if p == "_" else self.dim(p)
                     for k, p in enumerate(parts))

    def symbolic_inputs(self, args: Any, shapes_specs: Any = None, prefix: str = "") -> Any:
        """Inputs for a dict/list/tuple (nested) of arrays in one call, as JAX's
        symbolic_args_specs: every leaf has .shape and .dtype (a numpy array, a
        jax.ShapeDtypeStruct); `shapes_specs` is one spec for every leaf, None (static
        shapes), or the same structure of specs (`_` and `...` take the leaf's dims). Names
        are the key path joined by '_' (`params_w`, `args_0`); the result has args' structure."""
        if isinstance(args, Mapping):
            return {k: self.symbolic_inputs(
                v, shapes_specs[k] if isinstance(shapes_specs, Mapping) else shapes_specs,
                "%s_%s" % (prefix, k) if prefix else str(k)) for k, v in args.items()}
        if isinstance(args, (list, tuple)):
            out = [self.symbolic_inputs(
                v, shapes_specs[i] if isinstance(shapes_specs, (list, tuple)) else shapes_specs,
                "%s_%d" % (prefix or "args", i)) for i, v in enumerate(args)]
            return type(args)(out) if isinstance(args, tuple) else out
        shape = [int(v) for v in args.shape]
        dtype = as_dtype(np.dtype(args.dtype))
        spec = shapes_specs if shapes_specs is not None else "..."
        return self.input(prefix or "x", dtype, self.parse_shape(spec, shape))

    def dim_input(self, var_name: str) -> "Tensor":
        """A scalar i64 input named `var_name` that gives that variable's value at run time."""
        return self._new_tensor(L.shp_tensor_dim_input, self._h(), var_name.encode())

    def constant(self, value: Any, dtype: Optional[DTypeLike] = None) -> "Tensor":
        """A constant (copied) from a numpy array or anything np.asarray takes."""
        a = host_array(value, dtype)
        shape = int64s(a.shape)
        return self._new_tensor(L.shp_tensor_constant, self._h(), DTYPE_OF_NUMPY[a.dtype],
                                shape, a.ndim, a.ctypes.data if a.nbytes else None, a.nbytes)

    def parameter(self, name: str, value: Any, dtype: Optional[DTypeLike] = None) -> "Tensor":
        """A named input with a concrete shape and a default value (copied): a run may leave
        it out or give new weights by name."""
        a = host_array(value, dtype)
        shape = int64s(a.shape)
        return self._new_tensor(L.shp_tensor_parameter, self._h(), name.encode(),
                                DTYPE_OF_NUMPY[a.dtype], shape, a.ndim,
                                a.ctypes.data if a.nbytes else None, a.nbytes)

    def iota(self, dtype: DTypeLike, shape: ShapeLike, axis: int) -> "Tensor":
        """Counts 0, 1, ... along `axis` of a tensor of shape `shape`."""
        ds = self.dims(shape)
        arr = (_vp * max(len(ds), 1))(*[d._ptr for d in ds])
        return self._new_tensor(L.shp_tensor_iota, self._h(), as_dtype(dtype), arr, len(ds),
                                int_arg(axis, "iota: axis"))

    def dim_value(self, dim: DimLike) -> "Tensor":
        """The value of `dim` as a scalar i64 tensor."""
        d = self.dim(dim)
        return self._new_tensor(L.shp_tensor_dim_value, self._h(), d._ptr)

    def program(self, inputs: Sequence["Tensor"],
                outputs: Union[Mapping[str, "Tensor"], Sequence[Tuple[str, "Tensor"]]]
                ) -> "Program":
        """Creates a Program from `inputs` (in order) and named outputs."""
        from ._program import Program
        return Program.create(self, inputs, outputs)


def host_array(value: Any, dtype: Optional[DTypeLike] = None) -> np.ndarray:
    """`value` as a C-contiguous, native-order numpy array of a supported dtype."""
    if dtype is not None:
        dt = as_dtype(dtype).numpy
        a = np.asarray(value, dtype=dt, order="C")
    else:
        a = np.asarray(value, order="C")
        if a.dtype.newbyteorder("=") not in DTYPE_OF_NUMPY:
            raise TypeError("shapepoly: no element type for numpy dtype %s" % a.dtype)
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
    return a


def bindings_dict(ptr: int) -> Dict[str, int]:
    """Reads and releases an shp_bindings_t*."""
    try:
        return {borrowed(L.shp_bindings_name(ptr, i)): L.shp_bindings_value(ptr, i)
                for i in range(L.shp_bindings_count(ptr))}
    finally:
        L.shp_bindings_destroy(ptr)


# ---- Dims ----------------------------------------------------------------------------------

class Dim:
    """A symbolic dimension of a scope, in normal form: `+ - * // %`, `-d`, `d ** k`.
    `==`/`!=` are total, as JAX's: True only for the same normal form (or the same constant),
    so dims work as dict keys and in lists; `<`, `<=`, `>`, `>=` and bool() return True/False
    when provable and raise Inconclusive otherwise. compare() is the three-valued form and
    guard() the guarding one. Under the FROM_HINTS policy (a compiled function's trace), an
    undecided comparison, `==` included, is decided on the hints and guarded, as Dynamo does."""

    __slots__ = ("_scope", "_ptr")

    def __init__(self, scope: Scope, ptr: int) -> None:
        self._scope = scope
        self._ptr = ptr

    def _h(self) -> int:
        if self._scope._ptr is None:
            raise closed_error("Scope (this dim belongs to it)")
        return self._ptr

    @property
    def scope(self) -> Scope:
        return self._scope

    def _other(self, b: DimLike) -> "Dim":
        if isinstance(b, Dim):
            b._h()
            return b
        return self._scope.dim(b)

    def _value(self, b: Any) -> Optional["Tensor"]:
        """As JAX's dims in array arithmetic: with a float operand the dim becomes a scalar
        tensor (dim_value) of that operand's dtype (a Python float: f32). None otherwise."""
        if isinstance(b, (float, np.floating)):
            return self._scope.dim_value(self).astype(F64 if isinstance(b, np.float64)
                                                      else F32)
        return None

    def _bin(self, fn: Callable[..., Any], b: DimLike, swap: bool = False) -> "Dim":
        if isinstance(b, Tensor):
            return NotImplemented  # type: ignore[return-value]  # Tensor's reflected op
        v = self._value(b) if fn in (L.shp_dim_add, L.shp_dim_sub, L.shp_dim_mul) else None
        if v is not None:
            op = (_lib.SHP_ADD if fn is L.shp_dim_add else _lib.SHP_SUB if fn is L.shp_dim_sub
                  else _lib.SHP_MUL if fn is L.shp_dim_mul else None)
            if op is not None:
                return v.binary(op, b, swap)  # type: ignore[return-value]
        # Anything else must be an integer dim (a float here is ArgumentNotInteger).
        o = self._other(b)
        x, y = (o, self) if swap else (self, o)
        out = _vp()
        with self._scope._lock:
            x._h()
            y._h()
            check(fn(x._ptr, y._ptr, _byref(out)))
        return Dim(self._scope, out.value)

    def __add__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_add, b)

    def __radd__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_add, b, True)

    def __sub__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_sub, b)

    def __rsub__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_sub, b, True)

    def __mul__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_mul, b)

    def __rmul__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_mul, b, True)

    def __floordiv__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_floordiv, b)

    def __rfloordiv__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_floordiv, b, True)

    def __mod__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_mod, b)

    def __rmod__(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_mod, b, True)

    def max(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_max, b)

    def min(self, b: DimLike) -> "Dim":
        return self._bin(L.shp_dim_min, b)

    def __neg__(self) -> "Dim":
        out = _vp()
        with self._scope._lock:
            check(L.shp_dim_neg(self._h(), _byref(out)))
        return Dim(self._scope, out.value)

    def __pos__(self) -> "Dim":
        return self

    def __pow__(self, exponent: int) -> "Dim":
        if not isinstance(exponent, (int, np.integer)):
            return NotImplemented
        out = _vp()
        with self._scope._lock:
            check(L.shp_dim_pow(self._h(), int_arg(exponent, "exponent"), _byref(out)))
        return Dim(self._scope, out.value)

    # Queries.
    def __str__(self) -> str:
        with self._scope._lock:
            return read_string(L.shp_dim_to_string, self._h())

    def __repr__(self) -> str:
        if self._scope._ptr is None:
            return "Dim(<closed scope>)"
        return "Dim(%r)" % str(self)

    @property
    def constant(self) -> Optional[int]:
        """The value when the dim is a constant, else None."""
        v = ctypes.c_int64()
        with self._scope._lock:
            return v.value if L.shp_dim_is_constant(self._h(), _byref(v)) else None

    def __int__(self) -> int:
        c = self.constant
        if c is None:
            raise TypeError("shapepoly: dim %s is not a constant" % self)
        return c

    @property
    def variables(self) -> List[str]:
        """The variables of the dim, in order of first mention in the scope."""
        n = ctypes.c_size_t()
        with self._scope._lock:
            check(L.shp_dim_variables(self._h(), None, 0, _byref(n)))
            names = (ctypes.c_char_p * max(n.value, 1))()
            check(L.shp_dim_variables(self._ptr, names, n.value, _byref(n)))
        return [borrowed(names[i]) for i in range(n.value)]

    def bounds(self) -> Tuple[Optional[int], Optional[int]]:
        """Sound inclusive bounds under the scope's facts (None: unbounded)."""
        lo, hi = ctypes.c_int64(), ctypes.c_int64()
        with self._scope._lock:
            check(L.shp_dim_bounds(self._h(), _byref(lo), _byref(hi)))
        return _range_out(lo.value), _range_out(hi.value)

    def compare(self, op: CmpLike, b: DimLike) -> Truth:
        """The three-valued answer to `self op b` under the scope's facts."""
        o = self._other(b)
        t = ctypes.c_int32()
        with self._scope._lock:
            o._h()
            check(L.shp_dim_compare(self._h(), as_cmp(op), o._ptr, _byref(t)))
        return Truth(t.value)

    def guard(self, op: CmpLike, b: DimLike, message: Optional[str] = None) -> bool:
        """Decides `self op b` for code that branches on shapes: a decided comparison records
        nothing; an undecidable one is answered on the hints and recorded as a guard that
        programs built afterwards check at run time (GuardFailed)."""
        o = self._other(b)
        out = ctypes.c_bool()
        with self._scope._lock:
            o._h()
            check(L.shp_dim_guard(self._h(), as_cmp(op), o._ptr,
                                  None if message is None else message.encode(), _byref(out)))
        return out.value

    def _same(self, b: Any) -> bool:
        """JAX's `==`: the same normal form (interned: one pointer per expression of a scope),
        or the same constant as an int. Total and consistent with __hash__."""
        if isinstance(b, Dim):
            return self._ptr == b._ptr and self._scope._ptr == b._scope._ptr
        if isinstance(b, (int, np.integer)) and not isinstance(b, bool):
            return self.constant == int(b)
        return NotImplemented  # type: ignore[return-value]

    def _decide(self, op: Cmp, b: Any, what: Optional[str] = None) -> bool:
        # An ordering with a non-integer (3.7, a bool) is refused by Scope.dim
        # (ArgumentNotInteger), never truncated.
        t = self.compare(op, b)
        if t != Truth.UNKNOWN:
            return t == Truth.TRUE
        o = self._other(b)
        sym = {v: k for k, v in _CMP_TEXT.items()}[op]
        text = "%s %s %s" % (self, sym, o)
        if self._scope._from_hints:
            # As Dynamo: a Python `if` in a trace is decided on the hints and guarded.
            return self.guard(op, o, "Python %s at %s" % (what or "comparison %s" % text,
                                                          _caller()))
        # No hint for some variable: .guard() raises, with witnesses and fixes; reuse it so
        # the operator's error carries the same detail.
        if any(self._scope.hint(v) is None for v in self.variables + o.variables):
            try:
                self.guard(op, o)
            except Inconclusive as e:
                raise Inconclusive("%s: cannot decide %s under the scope's constraints; use "
                                   "compare() for a three-valued answer, or .guard() with hints"
                                   ". %s" % (what or "comparison", text, e.message), e.code,
                                   e.witnesses, e.fixes) from None
        raise Inconclusive("%s: cannot decide %s under the scope's constraints %s; use "
                           "compare() for a three-valued answer, or .guard() to decide it on "
                           "the hints (it records a guard)" %
                           (what or "comparison", text, self._scope.constraints),
                           _lib.SHP_INCONCLUSIVE)

    def __eq__(self, b: Any) -> bool:  # type: ignore[override]
        if self._scope._from_hints and isinstance(b, (Dim, int, np.integer)) and \
                not isinstance(b, bool):
            return self._decide(Cmp.EQ, b, "'=='")  # Dynamo's rule inside a trace
        return self._same(b)

    def __ne__(self, b: Any) -> bool:  # type: ignore[override]
        if self._scope._from_hints and isinstance(b, (Dim, int, np.integer)) and \
                not isinstance(b, bool):
            return self._decide(Cmp.NE, b, "'!='")
        r = self._same(b)
        return r if r is NotImplemented else not r

    def __lt__(self, b: DimLike) -> bool:
        return self._decide(Cmp.LT, b)

    def __le__(self, b: DimLike) -> bool:
        return self._decide(Cmp.LE, b)

    def __gt__(self, b: DimLike) -> bool:
        return self._decide(Cmp.GT, b)

    def __ge__(self, b: DimLike) -> bool:
        return self._decide(Cmp.GE, b)

    def __bool__(self) -> bool:
        """True/False when the dim is provably non-zero/zero, else Inconclusive (guarded on
        the hints under the FROM_HINTS policy)."""
        return self._decide(Cmp.NE, 0, "bool()")

    def __hash__(self) -> int:
        # Equal dims (same normal form) hash equal; a constant hashes as its int.
        c = self.constant
        return hash(c) if c is not None else hash(("shapepoly.Dim", self._ptr))

    def evaluate(self, values: Optional[Mapping[str, int]] = None, **kw: int) -> int:
        """The value for the variables given by name (constraints are not checked)."""
        vals = dict(values or {}, **kw)
        names = cstrings(list(vals))
        v = int64s(list(vals.values()), "evaluate: values")
        out = ctypes.c_int64()
        with self._scope._lock:
            check(L.shp_dim_evaluate(self._h(), names, v, len(vals), _byref(out)))
        return out.value


def _caller() -> str:
    """file:line of the user code that made a comparison (outside this package)."""
    f = sys._getframe(1)
    here = os.path.dirname(os.path.abspath(__file__))
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(here):
        f = f.f_back
    return "%s:%d" % (f.f_code.co_filename, f.f_lineno) if f is not None else "?"


def dim_max(a: DimLike, b: DimLike, *more: DimLike) -> Dim:
    """max of dims (at least one of them a Dim), folded when the comparison is decided."""
    d = _first_dim(a, b, *more)
    r = d._scope.dim(a).max(b)
    for m in more:
        r = r.max(m)
    return r


def dim_min(a: DimLike, b: DimLike, *more: DimLike) -> Dim:
    """min of dims (at least one of them a Dim)."""
    d = _first_dim(a, b, *more)
    r = d._scope.dim(a).min(b)
    for m in more:
        r = r.min(m)
    return r


def _first_dim(*xs: DimLike) -> Dim:
    for x in xs:
        if isinstance(x, Dim):
            return x
    raise TypeError("shapepoly.max/min need at least one Dim")


# ---- Tensors -------------------------------------------------------------------------------

class Tensor(TensorOps):
    """A traced tensor: a dtype and a symbolic shape. Operators: + - * / ** @, unary -, abs(),
    ~ (not), & | ^ (and/or/xor), < <= > >= == != (elementwise, bool tensors). Python scalars
    become constants of the tensor's dtype. bool() of a tensor is an error."""

    __slots__ = ("_scope", "_ptr")
    __array_priority__ = 1000  # numpy scalars on the left defer to our reflected operators

    def __init__(self, scope: Scope, ptr: int) -> None:
        self._scope = scope
        self._ptr = ptr

    def _h(self) -> int:
        if self._scope._ptr is None:
            raise closed_error("Scope (this tensor belongs to it)")
        return self._ptr

    @property
    def scope(self) -> Scope:
        return self._scope

    @property
    def dtype(self) -> DType:
        with self._scope._lock:
            return DType(L.shp_tensor_dtype(self._h()))

    @property
    def shape(self) -> Tuple[Dim, ...]:
        rank = ctypes.c_size_t()
        with self._scope._lock:
            check(L.shp_tensor_shape(self._h(), None, 0, _byref(rank)))
            dims = (_vp * max(rank.value, 1))()
            check(L.shp_tensor_shape(self._ptr, dims, rank.value, _byref(rank)))
        return tuple(Dim(self._scope, dims[i]) for i in range(rank.value))

    @property
    def ndim(self) -> int:
        rank = ctypes.c_size_t()
        with self._scope._lock:
            check(L.shp_tensor_shape(self._h(), None, 0, _byref(rank)))
        return rank.value

    def __repr__(self) -> str:
        if self._scope._ptr is None:
            return "Tensor(<closed scope>)"
        return "Tensor(%s, (%s))" % (self.dtype.name.lower(),
                                     ", ".join(str(d) for d in self.shape))

    def __bool__(self) -> bool:
        raise TypeError("shapepoly: the truth value of a traced tensor is unknown when tracing; "
                        "branch on it with shapepoly.cond(pred, true_fn, false_fn, *operands) "
                        "(or shapepoly.where to select elementwise)")

    __hash__ = object.__hash__

    def _t(self, x: Any) -> "Tensor":
        if isinstance(x, Tensor):
            x._h()
            return x
        if isinstance(x, Dim):  # as JAX: the dim's value, in this tensor's dtype
            v = self._scope.dim_value(x)
            return v if self.dtype == DType.I64 else v.astype(self.dtype)
        return self._scope.constant(x, None if isinstance(x, np.ndarray) else self.dtype)

    def _new(self, fn: Callable[..., Any], *args: Any) -> "Tensor":
        out = _vp()
        with self._scope._lock:
            self._h()
            check(fn(*args, _byref(out)))
        return Tensor(self._scope, out.value)

    # Elementwise.
    def unary(self, op: int) -> "Tensor":
        return self._new(L.shp_tensor_unary, int_arg(op, "unary: op", INT32), self._h())

    def binary(self, op: int, b: Any, swap: bool = False) -> "Tensor":
        o = self._t(b)
        x, y = (o, self) if swap else (self, o)
        return self._new(L.shp_tensor_binary, int_arg(op, "binary: op", INT32), x._h(), y._h())

    def neg(self) -> "Tensor":
        return self.unary(_lib.SHP_NEG)

    def abs(self) -> "Tensor":
        return self.unary(_lib.SHP_ABS)

    def exp(self) -> "Tensor":
        return self.unary(_lib.SHP_EXP)

    def log(self) -> "Tensor":
        return self.unary(_lib.SHP_LOG)

    def log1p(self) -> "Tensor":
        return self.unary(_lib.SHP_LOG1P)

    def expm1(self) -> "Tensor":
        return self.unary(_lib.SHP_EXPM1)

    def sqrt(self) -> "Tensor":
        return self.unary(_lib.SHP_SQRT)

    def rsqrt(self) -> "Tensor":
        return self.unary(_lib.SHP_RSQRT)

    def sin(self) -> "Tensor":
        return self.unary(_lib.SHP_SIN)

    def cos(self) -> "Tensor":
        return self.unary(_lib.SHP_COS)

    def tanh(self) -> "Tensor":
        return self.unary(_lib.SHP_TANH)

    def logistic(self) -> "Tensor":
        return self.unary(_lib.SHP_LOGISTIC)

    def tan(self) -> "Tensor":
        return self.unary(_lib.SHP_TAN)

    def sinh(self) -> "Tensor":
        return self.unary(_lib.SHP_SINH)

    def cosh(self) -> "Tensor":
        return self.unary(_lib.SHP_COSH)

    def asin(self) -> "Tensor":
        """Arc sine (NaN outside [-1, 1])."""
        return self.unary(_lib.SHP_ASIN)

    def acos(self) -> "Tensor":
        """Arc cosine (NaN outside [-1, 1])."""
        return self.unary(_lib.SHP_ACOS)

    def atan(self) -> "Tensor":
        return self.unary(_lib.SHP_ATAN)

    def asinh(self) -> "Tensor":
        return self.unary(_lib.SHP_ASINH)

    def acosh(self) -> "Tensor":
        """Inverse hyperbolic cosine (NaN below 1)."""
        return self.unary(_lib.SHP_ACOSH)

    def atanh(self) -> "Tensor":
        """Inverse hyperbolic tangent (NaN outside [-1, 1], +-inf at +-1)."""
        return self.unary(_lib.SHP_ATANH)

    def floor(self) -> "Tensor":
        return self.unary(_lib.SHP_FLOOR)

    def ceil(self) -> "Tensor":
        return self.unary(_lib.SHP_CEIL)

    def round(self) -> "Tensor":
        return self.unary(_lib.SHP_ROUND)

    def sign(self) -> "Tensor":
        return self.unary(_lib.SHP_SIGN)

    def logical_not(self) -> "Tensor":
        """Logical not (bool) or bitwise not (integers)."""
        return self.unary(_lib.SHP_NOT)

    def add(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_ADD, b)

    def sub(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_SUB, b)

    def mul(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_MUL, b)

    def div(self, b: Any) -> "Tensor":
        """Division (integers round toward zero, as in C)."""
        return self.binary(_lib.SHP_DIV, b)

    def pow(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_POW, b)

    def maximum(self, b: Any) -> "Tensor":
        """Elementwise max (NaN if either is NaN, as numpy.maximum)."""
        return self.binary(_lib.SHP_MAX, b)

    def minimum(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_MIN, b)

    def rem(self, b: Any) -> "Tensor":
        """Remainder with the sign of the dividend (C fmod / %, not Python's %)."""
        return self.binary(_lib.SHP_REM, b)

    def logical_and(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_AND, b)

    def logical_or(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_OR, b)

    def logical_xor(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_XOR, b)

    __add__ = add
    __sub__ = sub
    __mul__ = mul
    __truediv__ = div
    __pow__ = pow
    __and__ = logical_and
    __or__ = logical_or
    __xor__ = logical_xor
    __neg__ = neg
    __abs__ = abs
    __invert__ = logical_not

    def __radd__(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_ADD, b, True)

    def __rsub__(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_SUB, b, True)

    def __rmul__(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_MUL, b, True)

    def __rtruediv__(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_DIV, b, True)

    def __rpow__(self, b: Any) -> "Tensor":
        return self.binary(_lib.SHP_POW, b, True)

    def compare(self, op: CmpLike, b: Any) -> "Tensor":
        """Elementwise `self op b`; a bool tensor."""
        o = self._t(b)
        return self._new(L.shp_tensor_compare, self._h(), as_cmp(op), o._h())

    def __lt__(self, b: Any) -> "Tensor":
        return self.compare(Cmp.LT, b)

    def __le__(self, b: Any) -> "Tensor":
        return self.compare(Cmp.LE, b)

    def __gt__(self, b: Any) -> "Tensor":
        return self.compare(Cmp.GT, b)

    def __ge__(self, b: Any) -> "Tensor":
        return self.compare(Cmp.GE, b)

    def __eq__(self, b: Any) -> "Tensor":  # type: ignore[override]
        return self.compare(Cmp.EQ, b)

    def __ne__(self, b: Any) -> "Tensor":  # type: ignore[override]
        return self.compare(Cmp.NE, b)

    def select(self, on_true: Any, on_false: Any) -> "Tensor":
        """`self ? on_true : on_false` elementwise (self is a bool tensor). A branch that is a
        Python or numpy scalar takes the dtype of the other branch when that is a Tensor
        (`where(x > 0, x, 0.0)`), as numpy and JAX do; two scalar branches take numpy's dtypes."""
        if isinstance(on_true, Tensor) and not isinstance(on_false, Tensor):
            t, f = self._t(on_true), on_true._t(on_false)
        elif isinstance(on_false, Tensor) and not isinstance(on_true, Tensor):
            t, f = on_false._t(on_true), self._t(on_false)
        elif isinstance(on_true, Tensor):
            t, f = self._t(on_true), self._t(on_false)
        else:
            t, f = self._scope.constant(on_true), self._scope.constant(on_false)
        return self._new(L.shp_tensor_select, self._h(), t._h(), f._h())

    def astype(self, dtype: DTypeLike) -> "Tensor":
        """Converts the elements (shp_tensor_convert)."""
        return self._new(L.shp_tensor_convert, self._h(), as_dtype(dtype))

    convert = astype

    # Shapes.
    def _dims(self, shape: Sequence[Optional[DimLike]]) -> Tuple[Any, int]:
        ptrs = [None if d is None else self._scope.dim(d)._ptr for d in shape]
        return (_vp * max(len(ptrs), 1))(*ptrs), len(ptrs)

    def broadcast_to(self, *shape: DimLike) -> "Tensor":
        shape = _flatten(shape)
        arr, n = self._dims(shape)
        return self._new(L.shp_tensor_broadcast_to, self._h(), arr, n)

    def reshape(self, *shape: Optional[DimLike]) -> "Tensor":
        """Reshapes; one entry may be None (or -1): inferred, with a run-time assertion when
        its divisibility cannot be decided."""
        shape = tuple(None if (isinstance(d, int) and d == -1) else d for d in _flatten(shape))
        arr, n = self._dims(shape)
        return self._new(L.shp_tensor_reshape, self._h(), arr, n)

    def transpose(self, *permutation: int) -> "Tensor":
        perm = _flatten(permutation)
        if not perm:
            perm = tuple(reversed(range(self.ndim)))
        return self._new(L.shp_tensor_transpose, self._h(), int64s(perm, "transpose: permutation"),
                         len(perm))

    @property
    def T(self) -> "Tensor":
        return self.transpose()

    def slice(self, start: Optional[Sequence[Optional[DimLike]]] = None,
              limit: Optional[Sequence[Optional[DimLike]]] = None,
              strides: Optional[Sequence[int]] = None) -> "Tensor":
        """x[start:limit:stride] on every axis; None entries take the defaults."""
        rank = self.ndim
        s = self._dims(start)[0] if start is not None else None
        lim = self._dims(limit)[0] if limit is not None else None
        st = int64s(strides, "slice: strides") if strides is not None else None
        for seq in (start, limit, strides):
            if seq is not None and len(seq) != rank:
                raise ValueError("shapepoly: slice needs %d entries per list" % rank)
        return self._new(L.shp_tensor_slice, self._h(), s, lim, st, rank)

    def pad(self, low: Sequence[DimLike], high: Sequence[DimLike], value: float = 0.0
            ) -> "Tensor":
        if len(low) != len(high):
            raise ValueError("shapepoly: pad needs as many low as high entries")
        lo, n = self._dims(low)
        hi, _ = self._dims(high)
        return self._new(L.shp_tensor_pad, self._h(), lo, hi, n, float(value))

    # Reductions.
    def reduce(self, op: int, axes: Union[None, int, Sequence[int]] = None,
               keepdims: bool = False) -> "Tensor":
        ax = _axes(axes, "reduce: axes")
        return self._new(L.shp_tensor_reduce, int_arg(op, "reduce: op", INT32), self._h(),
                         int64s(ax), len(ax), keepdims)

    def sum(self, axes: Union[None, int, Sequence[int]] = None, keepdims: bool = False
            ) -> "Tensor":
        return self.reduce(_lib.SHP_REDUCE_SUM, axes, keepdims)

    def mean(self, axes: Union[None, int, Sequence[int]] = None, keepdims: bool = False
             ) -> "Tensor":
        return self.reduce(_lib.SHP_REDUCE_MEAN, axes, keepdims)

    def max(self, axes: Union[None, int, Sequence[int]] = None, keepdims: bool = False
            ) -> "Tensor":
        """Reduce max (elementwise max is maximum())."""
        return self.reduce(_lib.SHP_REDUCE_MAX, axes, keepdims)

    def min(self, axes: Union[None, int, Sequence[int]] = None, keepdims: bool = False
            ) -> "Tensor":
        return self.reduce(_lib.SHP_REDUCE_MIN, axes, keepdims)

    def prod(self, axes: Union[None, int, Sequence[int]] = None, keepdims: bool = False
             ) -> "Tensor":
        return self.reduce(_lib.SHP_REDUCE_PROD, axes, keepdims)

    # Linear algebra and the rest.
    __matmul__ = TensorOps.matmul

    def __rmatmul__(self, b: Any) -> "Tensor":
        return self._t(b).matmul(self)

    def dot_general(self, b: "Tensor", lhs_batch: Sequence[int], rhs_batch: Sequence[int],
                    lhs_contracting: Sequence[int], rhs_contracting: Sequence[int]
                    ) -> "Tensor":
        if len(lhs_batch) != len(rhs_batch) or len(lhs_contracting) != len(rhs_contracting):
            raise ValueError("shapepoly: dot_general needs pairwise batch and contracting axes")
        o = self._t(b)
        return self._new(L.shp_tensor_dot_general, self._h(), o._h(),
                         int64s(lhs_batch, "dot_general: lhs_batch"),
                         int64s(rhs_batch, "dot_general: rhs_batch"), len(lhs_batch),
                         int64s(lhs_contracting, "dot_general: lhs_contracting"),
                         int64s(rhs_contracting, "dot_general: rhs_contracting"),
                         len(lhs_contracting))

    # Data-dependent sizes: each op makes a new unbacked variable (u0, u1, ...).
    def nonzero(self) -> "Tensor":
        """np.argwhere(x): the indices of the nonzero elements (floats: -0.0 is zero, NaN is
        not; bool: true) as an i64 tensor (u, rank) in row-major order, u a new unbacked
        variable with 0 <= u <= numel(x)."""
        return self._new(L.shp_tensor_nonzero, self._h())

    def boolean_mask(self, mask: "Tensor", axis: int = 0) -> "Tensor":
        """x[mask] along `axis` (numpy's x[(slice(None),) * axis + (mask,)]): the bool `mask`
        covers axes axis..axis+mask.ndim-1 (its shape must provably equal theirs), which are
        replaced by one axis of a new unbacked length u (0 <= u <= numel(mask)) holding the
        slices where the mask is true. A negative axis counts from the end."""
        m = self._t(mask)
        return self._new(L.shp_tensor_boolean_mask, self._h(), m._h(),
                         int_arg(axis, "boolean_mask: axis"))

    def size_from_value(self, name: Optional[str] = None, min: int = 0,
                        max: Optional[int] = None) -> Dim:
        """A dim whose value is this scalar i64 tensor (like torch's .item() used as a size):
        a new unbacked variable `name` (None: u0, u1, ...) with the declared range [min, max]
        (None: unbounded), checked when a run computes the value (ConstraintViolation)."""
        out = _vp()
        with self._scope._lock:
            check(L.shp_tensor_size_from_value(self._h(), None if not name else name.encode(),
                                               int_arg(min, "size_from_value: min"),
                                               _range_value(max, _lib.INT64_MAX,
                                                            "size_from_value: max"),
                                               _byref(out)))
        return Dim(self._scope, out.value)

    def top_k(self, k: DimLike, axis: int = -1, largest: bool = True, sorted: bool = True
              ) -> Tuple["Tensor", "Tensor"]:
        """ONNX TopK, torch.topk: (values, i64 indices) of the k largest (or smallest) elements
        along `axis`, best first; equal values by the lower index; NaN is larger than +inf (as
        numpy's sort). k is a dim (int, spec text or Dim; a data-dependent one must be checked
        <= the axis's size first) with 0 <= k <= the size, asserted at run time when not
        provable. sorted=False gives the sorted order too. (shp_tensor_top_k)"""
        d = self._scope.dim(k)
        values, indices = _vp(), _vp()
        with self._scope._lock:
            self._h()
            check(L.shp_tensor_top_k(self._h(), d._ptr, int_arg(axis, "top_k: axis"),
                                     bool(largest), bool(sorted), _byref(values),
                                     _byref(indices)))
        return Tensor(self._scope, values.value), Tensor(self._scope, indices.value)

    # Convolutions and pooling (NCHW: x is (N, C, *spatial)).
    def _spatial(self) -> int:
        n = self.ndim - 2
        if n < 1:
            raise ValueError("shapepoly: conv and pooling need an input of rank >= 3 "
                             "(N, C, *spatial), got rank %d" % self.ndim)
        return n

    def conv(self, w: "Tensor", bias: Optional["Tensor"] = None,
             strides: Optional[Sequence[int]] = None, dilations: Optional[Sequence[int]] = None,
             pads: Optional[Sequence[int]] = None,
             auto_pad: Union[AutoPad, str, int] = AutoPad.NOTSET, groups: int = 1) -> "Tensor":
        """Convolution (cross-correlation) of x = (N, C, *spatial) with w = (O, C/groups, *k)
        plus an optional bias (O,). `pads` lists the 2*len(spatial) begin pads then end pads;
        None means strides and dilations 1 and no padding. The output sizes are dims such as
        floordiv(H + pads - dilation*(k-1) - 1, stride) + 1."""
        n = self._spatial()
        wt = self._t(w)
        b = None if bias is None else self._t(bias)
        return self._new(L.shp_tensor_conv, self._h(), wt._h(), None if b is None else b._h(),
                         n, _opt_int64s(strides, n, "strides"),
                         _opt_int64s(dilations, n, "dilations"), _opt_int64s(pads, 2 * n, "pads"),
                         _enum(AutoPad, auto_pad, "auto_pad"), int_arg(groups, "groups"))

    def conv_transpose(self, w: "Tensor", bias: Optional["Tensor"] = None,
                       strides: Optional[Sequence[int]] = None,
                       dilations: Optional[Sequence[int]] = None,
                       pads: Optional[Sequence[int]] = None,
                       output_padding: Optional[Sequence[int]] = None,
                       auto_pad: Union[AutoPad, str, int] = AutoPad.NOTSET,
                       groups: int = 1) -> "Tensor":
        """Transposed convolution of x = (N, C, *spatial) with w = (C, O/groups, *k): out =
        stride*(in - 1) + output_padding + dilation*(k - 1) + 1 - pads per axis."""
        n = self._spatial()
        wt = self._t(w)
        b = None if bias is None else self._t(bias)
        return self._new(L.shp_tensor_conv_transpose, self._h(), wt._h(),
                         None if b is None else b._h(), n, _opt_int64s(strides, n, "strides"),
                         _opt_int64s(dilations, n, "dilations"), _opt_int64s(pads, 2 * n, "pads"),
                         _opt_int64s(output_padding, n, "output_padding"),
                         _enum(AutoPad, auto_pad, "auto_pad"), int_arg(groups, "groups"))

    def max_pool(self, kernel_shape: Sequence[int], strides: Optional[Sequence[int]] = None,
                 dilations: Optional[Sequence[int]] = None, pads: Optional[Sequence[int]] = None,
                 auto_pad: Union[AutoPad, str, int] = AutoPad.NOTSET,
                 ceil_mode: bool = False) -> "Tensor":
        """Max over windows of `kernel_shape` on the spatial axes (padding never wins)."""
        n = self._spatial()
        return self._new(L.shp_tensor_max_pool, self._h(), n,
                         _opt_int64s(kernel_shape, n, "kernel_shape"),
                         _opt_int64s(strides, n, "strides"), _opt_int64s(dilations, n, "dilations"),
                         _opt_int64s(pads, 2 * n, "pads"), _enum(AutoPad, auto_pad, "auto_pad"),
                         bool(ceil_mode))

    def avg_pool(self, kernel_shape: Sequence[int], strides: Optional[Sequence[int]] = None,
                 dilations: Optional[Sequence[int]] = None, pads: Optional[Sequence[int]] = None,
                 auto_pad: Union[AutoPad, str, int] = AutoPad.NOTSET, ceil_mode: bool = False,
                 count_include_pad: bool = False) -> "Tensor":
        """Mean over windows of `kernel_shape`; padded elements count in the divisor only with
        count_include_pad."""
        n = self._spatial()
        return self._new(L.shp_tensor_avg_pool, self._h(), n,
                         _opt_int64s(kernel_shape, n, "kernel_shape"),
                         _opt_int64s(strides, n, "strides"), _opt_int64s(dilations, n, "dilations"),
                         _opt_int64s(pads, 2 * n, "pads"), _enum(AutoPad, auto_pad, "auto_pad"),
                         bool(ceil_mode), bool(count_include_pad))

    def reduce_window(self, op: Union[int, str], window: Sequence[int],
                      strides: Optional[Sequence[int]] = None,
                      window_dilation: Optional[Sequence[int]] = None,
                      base_dilation: Optional[Sequence[int]] = None,
                      pad_low: Optional[Sequence[DimLike]] = None,
                      pad_high: Optional[Sequence[DimLike]] = None) -> "Tensor":
        """XLA's ReduceWindow: `op` ("sum", "max", "min" or an SHP_REDUCE_* value) over a
        window on every axis (one entry per axis in each list); pads are dims (negative
        crops) filled with the reduction's identity."""
        rank = self.ndim
        if isinstance(op, str):
            ops = {"sum": _lib.SHP_REDUCE_SUM, "max": _lib.SHP_REDUCE_MAX,
                   "min": _lib.SHP_REDUCE_MIN}
            if op.lower() not in ops:
                raise ValueError("shapepoly: reduce_window op %r is not sum, max or min" % op)
            op = ops[op.lower()]
        op = int_arg(op, "reduce_window: op", INT32)
        pads = []
        for what, v in (("pad_low", pad_low), ("pad_high", pad_high)):
            if v is not None and len(v) != rank:
                raise ValueError("shapepoly: %s needs %d entries, got %d" % (what, rank, len(v)))
            pads.append(None if v is None else self._dims(v)[0])
        return self._new(L.shp_tensor_reduce_window, int(op), self._h(),
                         _opt_int64s(window, rank, "window"), _opt_int64s(strides, rank, "strides"),
                         _opt_int64s(window_dilation, rank, "window_dilation"),
                         _opt_int64s(base_dilation, rank, "base_dilation"), pads[0], pads[1],
                         rank)

    def global_avg_pool(self) -> "Tensor":
        """Mean over all spatial axes, kept as size 1: (N, C, *spatial) -> (N, C, 1, ...)."""
        return self._new(L.shp_tensor_global_avg_pool, self._h())

    def global_max_pool(self) -> "Tensor":
        """Max over all spatial axes, kept as size 1."""
        return self._new(L.shp_tensor_global_max_pool, self._h())

    # Activations and normalizations.
    def erf(self) -> "Tensor":
        return self.unary(_lib.SHP_ERF)

    def leaky_relu(self, alpha: float = 0.01) -> "Tensor":
        """x if x >= 0 else alpha * x."""
        return self._new(L.shp_tensor_leaky_relu, self._h(), float(alpha))

    def prelu(self, slope: Any) -> "Tensor":
        """x if x >= 0 else slope * x, `slope` broadcast against x."""
        s = self._t(slope)
        return self._new(L.shp_tensor_prelu, self._h(), s._h())

    def elu(self, alpha: float = 1.0) -> "Tensor":
        """x if x >= 0 else alpha * (exp(x) - 1)."""
        return self._new(L.shp_tensor_elu, self._h(), float(alpha))

    def selu(self, alpha: float = 1.67326319217681884765625,
             gamma: float = 1.05070102214813232421875) -> "Tensor":
        """gamma * (x if x > 0 else alpha * (exp(x) - 1)); the defaults are ONNX's."""
        return self._new(L.shp_tensor_selu, self._h(), float(alpha), float(gamma))

    def softplus(self) -> "Tensor":
        """log(1 + exp(x)), without overflow for large x."""
        return self._new(L.shp_tensor_softplus, self._h())

    def softsign(self) -> "Tensor":
        """x / (1 + |x|)."""
        return self._new(L.shp_tensor_softsign, self._h())

    def clip(self, min: float = float("-inf"), max: float = float("inf")) -> "Tensor":
        """min(max(x, min), max) with scalar bounds (infinite: no bound)."""
        return self._new(L.shp_tensor_clip, self._h(), float(min), float(max))

    def hard_sigmoid(self, alpha: float = 0.2, beta: float = 0.5) -> "Tensor":
        """max(0, min(1, alpha * x + beta))."""
        return self._new(L.shp_tensor_hard_sigmoid, self._h(), float(alpha), float(beta))

    def log_softmax(self, axis: int = -1) -> "Tensor":
        """x - log(sum(exp(x))) along `axis`, computed stably."""
        return self._new(L.shp_tensor_log_softmax, self._h(), int_arg(axis, "log_softmax: axis"))

    def batch_norm(self, scale: Any, bias: Any, mean: Any, var: Any, epsilon: float = 1e-5
                   ) -> "Tensor":
        """Inference batch normalization of x = (N, C, ...) with per-channel (C,) tensors:
        scale * (x - mean) / sqrt(var + epsilon) + bias."""
        s, b, m, v = self._t(scale), self._t(bias), self._t(mean), self._t(var)
        return self._new(L.shp_tensor_batch_norm, self._h(), s._h(), b._h(), m._h(), v._h(),
                         float(epsilon))

    def lrn(self, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0
            ) -> "Tensor":
        """Local response normalization across `size` channels (ONNX LRN): x / (bias +
        alpha / size * sum of squares) ** beta."""
        return self._new(L.shp_tensor_lrn, self._h(), int_arg(size, "lrn: size"), float(alpha),
                         float(beta), float(bias))

    # Rearrangements.
    def pad_mode(self, low: Sequence[DimLike], high: Sequence[DimLike],
                 mode: Union[PadMode, str, int] = PadMode.CONSTANT, value: float = 0.0
                 ) -> "Tensor":
        """Pads each axis by low/high elements (dims) filled per `mode`: CONSTANT (`value`),
        REFLECT (mirror without the edge: needs pads < the axis size) or EDGE."""
        if len(low) != len(high):
            raise ValueError("shapepoly: pad needs as many low as high entries")
        lo, n = self._dims(low)
        hi, _ = self._dims(high)
        return self._new(L.shp_tensor_pad_mode, self._h(), lo, hi, n,
                         _enum(PadMode, mode, "pad mode"), float(value))

    def depth_to_space(self, blocksize: int,
                       mode: Union[DepthToSpaceMode, str, int] = DepthToSpaceMode.DCR
                       ) -> "Tensor":
        """(N, C*b*b, H, W) -> (N, C, H*b, W*b) (pixel shuffle; b = blocksize)."""
        return self._new(L.shp_tensor_depth_to_space, self._h(),
                         int_arg(blocksize, "depth_to_space: blocksize"),
                         _enum(DepthToSpaceMode, mode, "depth_to_space mode"))

    def space_to_depth(self, blocksize: int) -> "Tensor":
        """(N, C, H*b, W*b) -> (N, C*b*b, H, W), the inverse of depth_to_space (DCR)."""
        return self._new(L.shp_tensor_space_to_depth, self._h(),
                         int_arg(blocksize, "space_to_depth: blocksize"))


def _flatten(xs: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """Accepts f(a, b, c) and f((a, b, c))."""
    if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
        return tuple(xs[0])
    return tuple(xs)


def concatenate(xs: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Concatenates tensors of one dtype and rank along `axis`."""
    xs = list(xs)
    if not xs:
        raise ValueError("shapepoly: concatenate needs at least one tensor")
    first = xs[0]
    arr = (_vp * len(xs))(*[t._h() for t in xs])
    return first._new(L.shp_tensor_concatenate, arr, len(xs), int_arg(axis, "concatenate: axis"))


def where(pred: Tensor, on_true: Any, on_false: Any) -> Tensor:
    """`pred ? on_true : on_false` elementwise (shp_tensor_select)."""
    return pred.select(on_true, on_false)


def as_tensors(xs: Iterable[Tensor]) -> List[Tensor]:
    out = list(xs)
    for t in out:
        if not isinstance(t, Tensor):
            raise TypeError("shapepoly: expected a Tensor, got %r" % type(t).__name__)
        t._h()
    return out
