"""Programs (create, inspect, serialize, load, transform) and the Runtime that runs them."""

import ctypes
import enum
import json
import os
import sys
import threading
import types
import weakref
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._core import (DTYPE_OF_NUMPY, DType, Scope, Tensor, Truth, _range_out, as_tensors,
                    bindings_dict, borrowed, closed_error, cstrings, int64s, read_string)
from ._errors import (INT32, SIZE_T, DtypeMismatch, InvalidArgument, InvalidProgram, NotFound,
                      check, int_arg, raise_error)

L = _lib.lib
_byref = ctypes.byref
_vp = ctypes.c_void_p


class InputRole(enum.IntEnum):
    """The role of a program input (shp_input_role_t); str() is the lower-case name."""
    DATA = _lib.SHP_INPUT_DATA
    DIM = _lib.SHP_INPUT_DIM
    PARAMETER = _lib.SHP_INPUT_PARAMETER
    TANGENT = _lib.SHP_INPUT_TANGENT
    COTANGENT = _lib.SHP_INPUT_COTANGENT

    def __str__(self) -> str:
        return self.name.lower()


class OutputRole(enum.IntEnum):
    """The role of a program output (shp_output_role_t); str() is the lower-case name."""
    PRIMAL = _lib.SHP_OUTPUT_PRIMAL
    TANGENT = _lib.SHP_OUTPUT_TANGENT
    GRAD = _lib.SHP_OUTPUT_GRAD

    def __str__(self) -> str:
        return self.name.lower()


class CostKind(enum.IntEnum):
    """What Program.cost and Runtime.cost measure (shp_cost_kind_t); str() is the lower-case
    name, which the cost methods also accept ("flops")."""
    # Floating-point operations, a multiply-add counted as 2 (docs/ops.md, column FLOPs).
    FLOPS = _lib.SHP_COST_FLOPS
    # Per operation as traced: the bytes of its operands read plus its result written.
    BYTES_ACCESSED = _lib.SHP_COST_BYTES_ACCESSED
    # The outputs plus the runtime's arena for intermediates (never exceeded by a run).
    PEAK_BYTES = _lib.SHP_COST_PEAK_BYTES
    # The inputs with the parameter role plus the constants (the weights).
    PARAMETER_BYTES = _lib.SHP_COST_PARAMETER_BYTES

    def __str__(self) -> str:
        return self.name.lower()


CostKindLike = Union[CostKind, str, int]


def as_cost_kind(kind: CostKindLike) -> int:
    """The shp_cost_kind_t value of a CostKind, its name ("flops", "PEAK_BYTES") or an int.
    An int that is no kind is passed on for the library to reject (InvalidArgument), except
    outside int32, where ctypes would wrap it silently into a valid kind (ArgumentOutOfRange)."""
    if isinstance(kind, str):
        try:
            return CostKind[kind.upper()]
        except KeyError:
            raise ValueError("shapepoly: unknown cost kind %r (%s)" %
                             (kind, ", ".join(str(k) for k in CostKind))) from None
    return int_arg(kind, "cost kind", INT32)


class InputDefault(NamedTuple):
    """The default of an input (InputInfo.default). kind "array": a stored array (parameters,
    grad's cotangent; Program.input_default copies it). kind "fill": every element is `fill`, in
    the shape the other inputs give the input in a run (Program.jvp's default_tangents)."""
    kind: str
    fill: Optional[float] = None


class InputInfo(NamedTuple):
    name: str
    dtype: DType
    role: InputRole
    shape: str  # symbolic, e.g. "(batch, 784)"
    has_default: bool
    default: Optional[InputDefault] = None  # None: no default (a run must give the input)


class OutputInfo(NamedTuple):
    name: str
    dtype: DType
    role: OutputRole
    shape: str


class Assertion(NamedTuple):
    text: str
    message: str


class Guard(NamedTuple):
    text: str
    message: str
    origin: str  # "shp_dim_guard", "shp_scope_assume", or the op and axis ("" for variants)


# ---- Arrays handed out by the library --------------------------------------------------------

_array_destroy = L.shp_array_destroy
_destroy = _lib.fast.shp_array_destroy  # the same without releasing the GIL (the call path's)
_array_data = L.shp_array_data
_NUMPY_OF = {int(d): d.numpy for d in DType}
_buffer_types: Dict[int, Any] = {}


def _owned_buffer_type(nbytes: int) -> Any:
    """A ctypes byte-array type whose instances destroy the shp_array_t* in their _shp_ptr when
    they die: a numpy array over such a buffer (its base) owns the library's array."""
    t = _buffer_types.get(nbytes)
    if t is None:
        if len(_buffer_types) > 256:
            _buffer_types.clear()
        # A slot, not an instance dict: about 0.3 us less per output and call.
        t = _buffer_types[nbytes] = type("OwnedBuffer%d" % nbytes, (ctypes.c_char * nbytes,),
                                         {"__slots__": ("_shp_ptr",),
                                          "__del__": _release_buffer})
    return t


def _release_buffer(buf: Any) -> None:
    p = getattr(buf, "_shp_ptr", None)  # unset if the buffer died before it was adopted
    if p:
        buf._shp_ptr = None
        _destroy(p)


def adopt_array(ptr: int, shape: Optional[Tuple[int, ...]] = None,
                dtype: Optional[np.dtype] = None, nbytes: Optional[int] = None) -> np.ndarray:
    """A numpy array over the memory of the library's array `ptr`, without a copy; the array
    is destroyed when the numpy array (and every view of it) is gone."""
    if shape is None:
        rank = L.shp_array_rank(ptr)
        sp = L.shp_array_shape(ptr)
        shape = tuple(ctypes.cast(sp, ctypes.POINTER(ctypes.c_int64))[:rank]) if rank else ()
        dtype = _NUMPY_OF[L.shp_array_dtype(ptr)]
        nbytes = L.shp_array_nbytes(ptr)
    if not nbytes:
        _array_destroy(ptr)
        return np.empty(shape, dtype)
    buf = _owned_buffer_type(nbytes).from_address(_array_data(ptr))
    buf._shp_ptr = ptr
    return np.ndarray(shape, dtype, buf)


# ---- Program -------------------------------------------------------------------------------

OutputsLike = Union[Mapping[str, Tensor], Sequence[Tuple[str, Tensor]]]
ShapesLike = Mapping[str, Union[Sequence[int], int]]


class Program:
    """An immutable program: named inputs and outputs with symbolic shapes, constraints and
    assertions. Independent of the scope it was traced in; safe to share between threads.
    Close it with close() or `with` (or leave it to the finalizer); a closed program raises
    ValueError."""

    def __init__(self, ptr: int) -> None:
        self._ptr: Optional[int] = ptr

    @classmethod
    def create(cls, scope: Scope, inputs: Sequence[Tensor], outputs: OutputsLike) -> "Program":
        pairs = list(outputs.items()) if isinstance(outputs, Mapping) else list(outputs)
        ins = as_tensors(inputs)
        outs = as_tensors(t for _, t in pairs)
        in_arr = (_vp * max(len(ins), 1))(*[t._ptr for t in ins])
        out_arr = (_vp * max(len(outs), 1))(*[t._ptr for t in outs])
        names = cstrings([n for n, _ in pairs])
        out = _vp()
        with scope._lock:
            check(L.shp_program_create(scope._h(), in_arr, len(ins), out_arr, names, len(outs),
                                       _byref(out)))
        return cls(out.value)

    def _h(self) -> int:
        p = self._ptr
        if p is None:
            raise closed_error("Program")
        return p

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        """Releases the program (idempotent); runtimes made from it keep working."""
        p, self._ptr = self._ptr, None
        if p:
            L.shp_program_destroy(p)

    def __del__(self) -> None:
        p = getattr(self, "_ptr", None)
        if p:
            self._ptr = None
            L.shp_program_destroy(p)

    def __enter__(self) -> "Program":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # Signature.
    @property
    def inputs(self) -> List[InputInfo]:
        h = self._h()
        out = []
        for i in range(L.shp_program_input_count(h)):
            has_default = bool(L.shp_program_input_has_default(h, i))
            default = None
            if has_default:
                fill = ctypes.c_double()
                err = L.shp_program_input_default_fill(h, i, ctypes.byref(fill))
                if err:  # no fill default: a stored array
                    L.shp_error_destroy(err)
                    default = InputDefault("array")
                else:
                    default = InputDefault("fill", fill.value)
            out.append(InputInfo(borrowed(L.shp_program_input_name(h, i)),
                                 DType(L.shp_program_input_dtype(h, i)),
                                 InputRole(L.shp_program_input_role(h, i)),
                                 read_string(L.shp_program_input_shape_string, h, i),
                                 has_default, default))
        return out

    @property
    def outputs(self) -> List[OutputInfo]:
        h = self._h()
        return [OutputInfo(borrowed(L.shp_program_output_name(h, i)),
                           DType(L.shp_program_output_dtype(h, i)),
                           OutputRole(L.shp_program_output_role(h, i)),
                           read_string(L.shp_program_output_shape_string, h, i))
                for i in range(L.shp_program_output_count(h))]

    @property
    def input_names(self) -> List[str]:
        h = self._h()
        return [borrowed(L.shp_program_input_name(h, i))
                for i in range(L.shp_program_input_count(h))]

    @property
    def output_names(self) -> List[str]:
        h = self._h()
        return [borrowed(L.shp_program_output_name(h, i))
                for i in range(L.shp_program_output_count(h))]

    def _input_index(self, input: Union[int, str]) -> int:
        if not isinstance(input, str):
            return int_arg(input, "input (an index)", SIZE_T)
        names = self.input_names
        if input not in names:
            raise NotFound("program has no input '%s' (inputs: %s)" % (input, ", ".join(names)),
                           _lib.SHP_NOT_FOUND)
        return names.index(input)

    def input_default(self, input: Union[int, str]) -> np.ndarray:
        """A copy of the default value of an input (by name or index), as a numpy array. A fill
        default over a symbolic shape has no array (InvalidArgument): see input_default_fill."""
        out = _vp()
        check(L.shp_program_input_default(self._h(), self._input_index(input), _byref(out)))
        return adopt_array(out.value)

    def input_default_fill(self, input: Union[int, str]) -> float:
        """The value of an input's fill default (by name or index): a run that leaves the input
        out uses it in every element. InvalidArgument for an input without a fill default."""
        v = ctypes.c_double()
        check(L.shp_program_input_default_fill(self._h(), self._input_index(input),
                                               ctypes.byref(v)))
        return v.value

    @property
    def variables(self) -> List[str]:
        h = self._h()
        return [borrowed(L.shp_program_variable_name(h, i))
                for i in range(L.shp_program_variable_count(h))]

    def _variable_index(self, var: Union[int, str]) -> int:
        names = self.variables
        if isinstance(var, str):
            if var not in names:
                raise NotFound("program has no variable '%s' (variables: %s)" %
                               (var, ", ".join(names)), _lib.SHP_NOT_FOUND)
            return names.index(var)
        i = int_arg(var, "var (an index)")
        if not 0 <= i < len(names):
            raise IndexError("shapepoly: variable %d out of range (%d variables)" %
                             (i, len(names)))
        return i

    def variable_is_unbacked(self, var: Union[int, str]) -> bool:
        """Whether a variable (by index or name) is data-dependent: a run reads its value from
        the op that produces it (nonzero, boolean_mask, size_from_value), never from shapes."""
        return bool(L.shp_program_variable_is_unbacked(self._h(), self._variable_index(var)))

    def variable_origin(self, var: Union[int, str]) -> Optional[str]:
        """The op that produces an unbacked variable ("nonzero of a (n, 4) f32 tensor"), or
        None for a variable that is not unbacked."""
        s = L.shp_program_variable_origin(self._h(), self._variable_index(var))
        return None if s is None else borrowed(s)

    @property
    def unbacked(self) -> Dict[str, str]:
        """{name: origin} of the program's unbacked (data-dependent) variables."""
        h = self._h()
        return {borrowed(L.shp_program_variable_name(h, i)):
                borrowed(L.shp_program_variable_origin(h, i))
                for i in range(L.shp_program_variable_count(h))
                if L.shp_program_variable_is_unbacked(h, i)}

    def variable_bounds(self, var: Union[int, str]) -> Tuple[Optional[int], Optional[int]]:
        """Sound inclusive bounds of a variable (by index or name) under the program's
        declared ranges and constraints (of variant 0), as Dim.bounds (None: unbounded)."""
        h = self._h()
        i = self._variable_index(var)
        lo, hi = ctypes.c_int64(), ctypes.c_int64()
        check(L.shp_program_variable_bounds(h, i, _byref(lo), _byref(hi)))
        return _range_out(lo.value), _range_out(hi.value)

    @property
    def constraints(self) -> List[str]:
        h = self._h()
        return [borrowed(L.shp_program_constraint_text(h, i))
                for i in range(L.shp_program_constraint_count(h))]

    @property
    def assertions(self) -> List[Assertion]:
        h = self._h()
        return [Assertion(borrowed(L.shp_program_assertion_text(h, i)),
                          borrowed(L.shp_program_assertion_message(h, i)))
                for i in range(L.shp_program_assertion_count(h))]

    @property
    def guards(self) -> List[Guard]:
        """The guards of the program (of variant 0 for a multi-variant program)."""
        h = self._h()
        return [Guard(borrowed(L.shp_program_guard_text(h, i)),
                      borrowed(L.shp_program_guard_message(h, i)),
                      borrowed(L.shp_program_guard_origin(h, i)))
                for i in range(L.shp_program_guard_count(h))]

    # Metadata.
    @property
    def metadata(self) -> Mapping[str, str]:
        """The program's metadata (string key/value pairs saved with it, schema version 14), a
        read-only mapping in increasing key order; with_metadata makes a copy with others."""
        h = self._h()
        out = {}
        for i in range(L.shp_program_metadata_count(h)):
            key = L.shp_program_metadata_key(h, i)
            out[borrowed(key)] = borrowed(L.shp_program_metadata_value(h, key))
        return types.MappingProxyType(out)

    def with_metadata(self, entries: Optional[Mapping[str, Optional[str]]] = None,
                      **kv: Optional[str]) -> "Program":
        """A copy of this program with metadata keys set (a value None removes the key):
        `p.with_metadata(author="me")` or `p.with_metadata({"onnx.names": "..."})`. Keys are
        non-empty printable UTF-8 of at most 256 bytes, values str of at most 1 MiB (UTF-8),
        at most 1024 entries (InvalidArgument naming the key and the limit). This program is
        unchanged (programs are immutable); each key set copies the program (about the cost
        of copying its constants)."""
        items = dict(entries) if entries is not None else {}
        items.update(kv)
        for key, value in items.items():
            if not isinstance(key, str):
                raise TypeError("with_metadata: keys are str, not %s" % type(key).__name__)
            if value is not None and not isinstance(value, str):
                raise TypeError("with_metadata: the value of %r is a %s, not a str (or None "
                                "to remove the key)" % (key, type(value).__name__))
        cur: Optional[Program] = None
        try:
            for key, value in items.items():
                out = _vp()
                src = cur._h() if cur is not None else self._h()
                try:
                    k, v = key.encode(), None if value is None else value.encode()
                except UnicodeEncodeError as e:  # lone surrogates
                    raise InvalidArgument("with_metadata: the key or value of %r is not UTF-8 "
                                          "text: %s" % (key, e)) from None
                if b"\0" in k or (v is not None and b"\0" in v):  # C strings end at NUL
                    raise InvalidArgument("with_metadata: the %s of %r contains NUL (metadata "
                                          "is NUL-free UTF-8 text)" %
                                          ("key" if b"\0" in k else "value", key))
                check(L.shp_program_with_metadata(src, k, v, _byref(out)))
                if cur is not None:
                    cur.close()
                cur = Program(out.value)
            return cur if cur is not None else loads(self.serialize())  # a copy all the same
        except BaseException:
            if cur is not None:
                cur.close()
            raise

    @property
    def onnx_names(self) -> Optional[Dict[str, Dict[str, str]]]:
        """For a program imported from ONNX (shapepoly.onnx.import_model): its input and output
        names -> the ONNX names they came from, {"inputs": {...}, "outputs": {...}} (metadata
        "onnx.names", saved with the program); None for other programs. A malformed entry (a
        file edited by hand) raises InvalidProgram naming it."""
        return _onnx_map(self.metadata, "onnx.names")

    @property
    def onnx_types(self) -> Optional[Dict[str, Dict[str, str]]]:
        """For a program imported from ONNX: its input and output names -> their ONNX element
        types' names ("FLOAT", "FLOAT8E4M3FN"), {"inputs": {...}, "outputs": {...}} (metadata
        "onnx.types"); None for other programs. Malformed: InvalidProgram."""
        return _onnx_map(self.metadata, "onnx.types")

    @property
    def variant_count(self) -> int:
        """Number of variants (1 for a program made by Scope.program)."""
        return L.shp_program_variant_count(self._h())

    def variant_guards(self, v: int) -> List[Guard]:
        """The guards of variant `v` (origin is "")."""
        h = self._h()
        v = int_arg(v, "variant_guards: v", SIZE_T)
        if not 0 <= v < L.shp_program_variant_count(h):
            raise IndexError("shapepoly: variant %d out of range" % v)
        return [Guard(borrowed(L.shp_program_variant_guard_text(h, v, i)),
                      borrowed(L.shp_program_variant_guard_message(h, v, i)), "")
                for i in range(L.shp_program_variant_guard_count(h, v))]

    @property
    def variants_exhaustive(self) -> Truth:
        """Whether the variants' guards cover every valuation the constraints allow."""
        return Truth(L.shp_program_variants_exhaustive(self._h()))

    @property
    def counterexample(self) -> str:
        """A valuation no variant covers, when variants_exhaustive is FALSE; else ""."""
        return read_string(L.shp_program_variants_counterexample, self._h())

    def select_variant(self, shapes: ShapesLike) -> int:
        """The variant a run on these input shapes would use (as check_shapes)."""
        b = self._bindings(shapes)
        try:
            return L.shp_bindings_variant(b)
        finally:
            L.shp_bindings_destroy(b)

    @property
    def text(self) -> str:
        """The readable listing (signature, variables, constraints, operations)."""
        return read_string(L.shp_program_to_text, self._h())

    def __str__(self) -> str:
        return self.text

    def to_dot(self) -> str:
        """The program as a Graphviz DOT graph (one node per operation, edges labelled with
        dtypes and symbolic shapes, a legend with the variables and facts); render it with
        `dot -Tsvg` or `shapepoly graph FILE -o out.svg`."""
        return read_string(L.shp_program_to_dot, self._h())

    # Cost.
    def cost(self, kind: CostKindLike) -> str:
        """What the program costs for every shape at once: a dim expression over its variables,
        e.g. "92*batch" for CostKind.FLOPS (of variant 0 for a multi-variant program).
        Unsupported for PEAK_BYTES of a program the runtime cannot plan."""
        return read_string(L.shp_program_cost, self._h(), as_cost_kind(kind))

    def cost_bounds(self, kind: CostKindLike) -> Tuple[int, Optional[int]]:
        """Sound bounds (lo, hi) of cost(kind) under the declared ranges and constraints:
        every shape the program accepts costs within them. hi is None when the worst case is
        unbounded; cost_unbounded_reason(kind) then says which variables make it so."""
        lo, hi = ctypes.c_int64(), ctypes.c_int64()
        check(L.shp_program_cost_bounds(self._h(), as_cost_kind(kind), _byref(lo), _byref(hi)))
        return lo.value, (None if hi.value == _lib.INT64_MAX else hi.value)

    def cost_unbounded_reason(self, kind: CostKindLike) -> str:
        """Why cost_bounds(kind) has no upper bound, e.g. "no upper bound on batch; declare a
        range ... or add a constraint such as batch <= 4096 ..."; "" when it has one."""
        return read_string(L.shp_program_cost_unbounded_reason, self._h(), as_cost_kind(kind))

    def __repr__(self) -> str:
        if self._ptr is None:
            return "Program(<closed>)"
        return "Program(inputs=%s, outputs=%s)" % (self.input_names, self.output_names)

    # Shapes.
    def _bindings(self, shapes: ShapesLike) -> int:
        names, ptrs, ranks, keep = shape_args(shapes, self._dim_inputs())
        out = _vp()
        check(L.shp_program_check_shapes(self._h(), names, ptrs, ranks, len(shapes),
                                         _byref(out)))
        return out.value

    def _dim_inputs(self) -> List[str]:
        return [i.name for i in self.inputs if i.role == InputRole.DIM]

    def check_shapes(self, shapes: ShapesLike) -> Dict[str, int]:
        """Checks concrete input shapes ({name: shape}, an int for a dim input) without
        running; returns the values of the program's variables."""
        return bindings_dict(self._bindings(shapes))

    def output_shapes(self, shapes: ShapesLike) -> Dict[str, Tuple[int, ...]]:
        """The concrete output shapes for the given input shapes (as check_shapes)."""
        b = self._bindings(shapes)
        try:
            out = {}
            for i, name in enumerate(self.output_names):
                rank = ctypes.c_size_t()
                check(L.shp_program_output_shape(self._h(), i, b, None, 0, _byref(rank)))
                dims = int64s([0] * rank.value)
                check(L.shp_program_output_shape(self._h(), i, b, dims, rank.value,
                                                 _byref(rank)))
                out[name] = tuple(dims[k] for k in range(rank.value))
            return out
        finally:
            L.shp_bindings_destroy(b)

    # Serialization.
    def serialize(self) -> bytes:
        """The portable bytes (deterministic)."""
        out = _vp()
        check(L.shp_program_serialize(self._h(), _byref(out)))
        try:
            return ctypes.string_at(L.shp_buffer_data(out.value), L.shp_buffer_size(out.value))
        finally:
            L.shp_buffer_destroy(out.value)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the program to `path` (conventionally *.shpoly) with shp_program_save_file:
        written next to it and renamed, so a failed save leaves an existing file intact; OS
        errors raise NotFound (a missing folder) or InvalidArgument naming the path."""
        check(L.shp_program_save_file(self._h(), os.fsencode(path)))

    # Transformations.
    def _derived(self, fn: Any, *args: Any) -> "Program":
        out = _vp()
        check(fn(self._h(), *args, _byref(out)))
        return Program(out.value)

    def jvp(self, wrt: Sequence[str],
            default_tangents: Union[None, float, Sequence[float], Mapping[str, float]] = None
            ) -> "Program":
        """Forward mode: adds inputs `x.tangent` for x in wrt and outputs `y.tangent`.

        default_tangents gives the tangents defaults, as grad's seed has the default 1: one
        number for every tangent (1.0: the derivative along all ones), one per name of wrt, or a
        dict with every name of wrt. A run that leaves `x.tangent` out then uses that value in
        every element of x's shape; inputs[i].default is InputDefault("fill", value). None (the
        default): tangents without defaults, which every run must give."""
        wrt = _names(wrt)
        if default_tangents is None:
            return self._derived(L.shp_program_jvp, cstrings(wrt), len(wrt))
        if isinstance(default_tangents, Mapping):
            extra = [k for k in default_tangents if k not in wrt]
            missing = [w for w in wrt if w not in default_tangents]
            if extra or missing:
                raise ValueError("shapepoly: default_tangents must give every input of wrt and no "
                                 "other (missing: %s; not in wrt: %s)"
                                 % (", ".join(missing) or "none", ", ".join(map(str, extra)) or
                                    "none"))
            values = [default_tangents[w] for w in wrt]
        elif isinstance(default_tangents, (int, float, np.number)):
            values = [default_tangents] * len(wrt)
        else:
            values = list(default_tangents)
            if len(values) != len(wrt):
                raise ValueError("shapepoly: %d default tangents for %d inputs in wrt"
                                 % (len(values), len(wrt)))
        fills = (ctypes.c_double * max(len(values), 1))(*[float(v) for v in values])
        return self._derived(L.shp_program_jvp_with_default_tangents, cstrings(wrt), len(wrt),
                             fills)

    def vjp(self, of: Sequence[str], wrt: Sequence[str]) -> "Program":
        """Reverse mode: adds inputs `y.cotangent` for y in of and outputs `x.grad`."""
        of, wrt = _names(of), _names(wrt)
        return self._derived(L.shp_program_vjp, cstrings(of), len(of), cstrings(wrt), len(wrt))

    def grad(self, of: str, wrt: Sequence[str]) -> "Program":
        """The gradient of the scalar output `of` with respect to the inputs `wrt`."""
        wrt = _names(wrt)
        return self._derived(L.shp_program_grad, of.encode(), cstrings(wrt), len(wrt))

    def vmap(self, in_axes: "AxesLike" = 0, out_axes: Optional["AxesLike"] = None,
             batch_dim_name: Optional[str] = None) -> "Program":
        """The program for a batch of examples (shp_program_vmap): each batched input gains a
        batch axis whose size is a new dimension variable (batch_dim_name, default "vmap0", or
        "vmap1", ... when taken), so one program serves every batch size, 0 included.

        in_axes: an int (that axis of every data input; dimension inputs stay unbatched), one
        entry per input, or a dict from input names to axes (inputs left out are not batched).
        An entry of None or -1 means not batched: the same value for every example (weights).
        out_axes: None (every output's batch axis first), an int, one entry per output, or a
        dict by output name (outputs left out: 0); None or -1 for an output that does not
        depend on a batched input (it keeps its shape).

        Per-example gradients: ``loss.grad("loss", ["w"]).vmap({"x": 0, "y": 0})``."""
        ins = self.inputs
        names = [i.name for i in ins]
        if isinstance(in_axes, Mapping):
            unknown = [k for k in in_axes if k not in names]
            if unknown:
                raise NotFound("shapepoly: in_axes names no input %s (the inputs: %s)"
                               % (", ".join(map(repr, unknown)), ", ".join(names)))
            axes_in = [in_axes.get(n) for n in names]
        elif isinstance(in_axes, (int, np.integer)):
            axes_in = [None if i.role == InputRole.DIM else int(in_axes) for i in ins]
        else:
            axes_in = list(in_axes)
        outs = [o.name for o in self.outputs]
        if out_axes is None:
            axes_out: List[Optional[int]] = []
        elif isinstance(out_axes, Mapping):
            unknown = [k for k in out_axes if k not in outs]
            if unknown:
                raise NotFound("shapepoly: out_axes names no output %s (the outputs: %s)"
                               % (", ".join(map(repr, unknown)), ", ".join(outs)))
            axes_out = [out_axes.get(n, 0) for n in outs]
        elif isinstance(out_axes, (int, np.integer)):
            axes_out = [int(out_axes)] * len(outs)
        else:
            axes_out = list(out_axes)

        def c_axes(axes: Sequence[Optional[int]], what: str) -> Any:
            return int64s([-1 if a is None else int_arg(a, what) for a in axes], what)
        ci = c_axes(axes_in, "in_axes")
        co = c_axes(axes_out, "out_axes") if axes_out else None
        return self._derived(L.shp_program_vmap, ci, len(axes_in), co, len(axes_out),
                             None if batch_dim_name is None else batch_dim_name.encode())

    def runtime(self, num_threads: Optional[int] = None,
                plan_cache_capacity: Optional[int] = None,
                bound_allocation: Optional[int] = None,
                max_loop_iterations: Optional[int] = None) -> "Runtime":
        return Runtime(self, num_threads=num_threads, plan_cache_capacity=plan_cache_capacity,
                       bound_allocation=bound_allocation, max_loop_iterations=max_loop_iterations)


# vmap's axes: one int for all, one entry per input/output, or a dict by name (None: -1).
AxesLike = Union[int, Sequence[Optional[int]], Mapping[str, Optional[int]]]


def _names(xs: Union[str, Sequence[str]]) -> List[str]:
    return [xs] if isinstance(xs, str) else list(xs)


def shape_args(shapes: ShapesLike, dim_inputs: Sequence[str]) -> Tuple[Any, Any, Any, Any]:
    """(names, shape pointers, ranks, keep-alive) for check_shapes / dry_run: a dim input
    has rank 0 and points to its value."""
    names = list(shapes)
    arrays, ranks = [], []
    for n in names:
        v = shapes[n]
        if (n in dim_inputs or not hasattr(v, "__iter__") or
                (isinstance(v, np.ndarray) and v.ndim == 0)):
            arrays.append(int64s([int_arg(v, "shapes[%r] (a dim value)" % n)]))
            ranks.append(0)
        else:
            arrays.append(int64s(list(v), "shapes[%r]" % n))  # type: ignore[arg-type]
            ranks.append(len(v))  # type: ignore[arg-type]
    ptrs = (_vp * max(len(names), 1))(*[ctypes.addressof(a) for a in arrays])
    rk = (ctypes.c_size_t * max(len(names), 1))(*ranks)
    return cstrings(names), ptrs, rk, arrays


def _onnx_map(metadata: Mapping[str, str], key: str) -> Optional[Dict[str, Dict[str, str]]]:
    """Metadata `key` read as {"inputs": {str: str}, "outputs": {str: str}} (JSON), or None."""
    text = metadata.get(key)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise InvalidProgram("metadata %r is not valid JSON (%s): %r" % (key, e, text[:100])) \
            from None
    if not isinstance(value, dict) or set(value) != {"inputs", "outputs"} or not all(
            isinstance(m, dict) and all(isinstance(a, str) and isinstance(b, str)
                                        for a, b in m.items()) for m in value.values()):
        raise InvalidProgram("metadata %r is not an object {\"inputs\": {name: text}, "
                             "\"outputs\": {name: text}}: %r" % (key, text[:100]))
    return {"inputs": dict(value["inputs"]), "outputs": dict(value["outputs"])}


def create_variants(variants: Sequence[Program]) -> Program:
    """One program whose variants are `variants` (each traced under its own guards); a run
    uses the first variant whose guards hold."""
    vs = list(variants)
    arr = (_vp * max(len(vs), 1))(*[p._h() for p in vs])
    out = _vp()
    check(L.shp_program_create_variants(arr, len(vs), _byref(out)))
    return Program(out.value)


def loads(data: bytes, max_bytes: Optional[int] = None) -> Program:
    """Loads a serialized program; `max_bytes` caps its inflated constants (default 1 GiB)."""
    data = bytes(data)
    out = _vp()
    if max_bytes is not None:  # -1 would become SIZE_MAX: no cap at all
        max_bytes = int_arg(max_bytes, "max_bytes", SIZE_T)
    if max_bytes is None:
        check(L.shp_program_load(data, len(data), _byref(out)))
    else:
        opts = _vp()
        check(L.shp_load_options_create(_byref(opts)))
        try:
            check(L.shp_load_options_set_max_bytes(opts, max_bytes))
            check(L.shp_program_load_with_options(data, len(data), opts, _byref(out)))
        finally:
            L.shp_load_options_destroy(opts)
    return Program(out.value)


def load(path: Union[str, "os.PathLike[str]"], max_bytes: Optional[int] = None) -> Program:
    """Loads a program file written by Program.save (or any binding); without `max_bytes`
    through shp_program_load_file (errors name the path)."""
    if max_bytes is not None:
        with open(path, "rb") as f:
            return loads(f.read(), max_bytes)
    out = _vp()
    check(L.shp_program_load_file(os.fsencode(path), _byref(out)))
    return Program(out.value)


# ---- Runtime -------------------------------------------------------------------------------

_run = _lib.raw.shp_runtime_run  # no argtypes: every argument is a ctypes object
_run_into = _lib.raw.shp_runtime_run_into
_data = _lib.fast.shp_array_data  # a c_void_p (a slot) in, an int out
# shp_array_wrap without the integer checks of _lib (every argument here comes from numpy: a
# dtype code, dims and a rank, a pointer and a byte count, all within their C types).
_wrap = getattr(L.shp_array_wrap, "__wrapped__", L.shp_array_wrap)
_dims_of = {n: ctypes.c_int64 * max(n, 1) for n in range(33)}
_wrap_raw = _lib.raw.shp_array_wrap  # no argtypes: every argument a ctypes object
_ndarray = np.ndarray
_PTR_SIZE = ctypes.sizeof(_vp)


def _array_layout() -> Optional[int]:
    """The offset of numpy's array fields (data, nd, dimensions, strides, base, descr, flags in
    this order, as numpy's PyArrayObject_fields) right after the object header, if they read
    right here for probe arrays (CPython), else None: arrays are then compared through their
    Python attributes (_PortableState)."""
    off = object.__basicsize__
    ptr, i32, i64 = _vp.from_address, ctypes.c_int.from_address, ctypes.c_int64
    try:
        probes = [np.arange(5, dtype=np.float32), np.zeros((3, 2)), np.arange(9)[2:7],
                  np.empty(0, np.int8), np.zeros((2, 3, 4), np.int16)[:, ::2].T, np.zeros(())]
        for a in probes:
            base = id(a) + off
            nd = i32(base + 8).value
            dims, strides = ptr(base + 16).value, ptr(base + 24).value
            if (ptr(base).value != a.__array_interface__["data"][0] or nd != a.ndim or
                    ptr(base + 40).value != id(a.dtype)):
                return None
            if nd and (tuple((i64 * nd).from_address(dims)) != a.shape or
                       tuple((i64 * nd).from_address(strides)) != a.strides):
                return None
            for writeable in (False, True):
                a.flags.writeable = writeable
                if bool(i32(base + 48).value & _NPY_WRITEABLE) != writeable:
                    return None
        return off
    except Exception:  # noqa: BLE001 - any trouble: the portable comparison
        return None


_NPY_WRITEABLE = 0x0400  # NPY_ARRAY_WRITEABLE
_HEADER_BYTES = 56  # data, nd, dimensions, strides, base, descr, flags (with their padding)
_LAYOUT = _array_layout()


class _NoBytes:
    """The dims view of a 0-d array (it has no dims)."""
    __slots__ = ()
    raw = b""


_NO_BYTES = _NoBytes()


class _PortableState:
    """The portable form of an array's header view: `.raw` is what identifies its layout."""
    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    @property
    def raw(self) -> Any:
        a = self.a
        return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype,
                a.flags.writeable)


def _data_pointer(a: np.ndarray) -> int:
    """The data pointer of array `a` (from numpy's field where _LAYOUT says it is)."""
    if _LAYOUT is not None:
        return _vp.from_address(id(a) + _LAYOUT).value or 0
    return a.__array_interface__["data"][0]


def _state_views(a: np.ndarray) -> Tuple[Any, Any, Any, Any]:
    """(header view, its bytes now, dims view, its bytes now) of array `a`: views over numpy's
    own fields of `a` (data pointer, rank, dims and strides pointers, base, dtype, flags) and
    over the memory its dims and strides are in, read again at each call (`.raw`, about 0.04
    us each, where a.shape, a.strides, a.dtype and the data pointer take 0.15 us). Both bytes
    equal to those of the record => `a` has the same data, shape, strides, dtype and flags:
    the header holds the pointers to the dims and strides, so equal header bytes mean the dims
    view still reads the array's current dims and strides (only then is it read: the record
    compares the header first), and equal dims bytes mean those did not change in place (as
    a.shape =, a.strides = or resize() do). The views are read only while the record that
    holds them also holds `a`. Dims and strides not in one block: the portable comparison."""
    if _LAYOUT is not None:
        base = id(a) + _LAYOUT
        head = (ctypes.c_char * _HEADER_BYTES).from_address(base)
        nd = a.ndim
        if nd == 0:
            return head, head.raw, _NO_BYTES, b""
        dims, strides = _vp.from_address(base + 16).value, _vp.from_address(base + 24).value
        if dims and strides == dims + 8 * nd:
            block = (ctypes.c_char * (16 * nd)).from_address(dims)
            return head, head.raw, block, block.raw
    state = _PortableState(a)
    return state, state.raw, _NO_BYTES, b""


# A wrap record: what one argument of a binding was wrapped from. Fields (a tuple):
#   0 the array object passed (_NEVER: wrap again at every call: a converted copy, a dim input)
#   1, 2, 3, 4 its _state_views; 5 its shape then
#   6 the shp_array_t* wrapping the memory; 7 the array that owns that memory (held);
#   8 the wrap's other arguments for its dtype and shape (inputs; None for outputs).
# The record is still exact for the next call's argument `a` iff (_same)
#   a is w[0] and w[1].raw == w[2] and w[3].raw == w[4]
# that is, the same object with the same data pointer, shape, strides, dtype and flags. The
# data pointer counts, since resize(refcheck=False) moves the data of the very same object
# (and frees the old buffer) despite the reference the record holds, possibly ending with the
# same shape; a shape, strides or dtype assigned in place is seen by the others.
_NEVER = object()
_UNWRAPPED = (_NEVER, None, None, None, None, None, None, None, None)


class _Binding:
    """The arguments of one call signature (the input names in order; for run_into the outputs
    too): the C arrays of the run, built once, with a wrap record per array, and the output
    info (name, shape, dtype, buffer type, slot) of the held inputs' shapes (None: unknown, or
    the program's output shapes depend on the data)."""
    __slots__ = ("key", "names", "handles", "count", "wraps", "dims", "info", "outs",
                 "out_wraps", "args", "pool", "pool_args")

    def __init__(self, key: Tuple[str, ...], dim_inputs: Any, runtime: "Runtime",
                 into: bool) -> None:
        n, nout = len(key), runtime._nout
        self.key = key
        self.names = cstrings(list(key))
        self.handles = (_vp * max(n, 1))()
        self.count = ctypes.c_size_t(n)
        self.wraps = [_UNWRAPPED] * n
        self.dims = [k in dim_inputs for k in key]
        self.info: Optional[List[Any]] = None
        # A call's reusable outputs (see _OutputPool) where info is known, else None.
        self.pool: Optional[List[Any]] = None
        self.outs = (_vp * max(nout, 1))()
        self.out_wraps = [_UNWRAPPED] * nout if into else []
        # Every argument of the run, made once; the arrays by reference (a byref object is
        # passed to C as it is, an array would be converted into one at every call).
        self.args = (runtime._hv, _byref(self.names), _byref(self.handles), self.count,
                     _byref(self.outs) if into else runtime._out_ref, runtime._nout_c)
        # A call writing into pooled outputs: shp_runtime_run_into with `outs`.
        self.pool_args = self.args[:4] + (_byref(self.outs), runtime._nout_c)

    def release(self) -> None:
        for w in self.wraps + self.out_wraps:
            if w[6] is not None:
                _array_destroy(w[6])
        self.wraps = [_UNWRAPPED] * len(self.wraps)
        self.out_wraps = [_UNWRAPPED] * len(self.out_wraps)
        self.info = self.pool = None


# _OutputPool: a call of a signature seen before whose outputs are small (at most _POOL_BYTES in
# all, none empty) writes into arrays of earlier calls that nothing references any more, instead
# of having the library allocate new ones and wrapping each in a new numpy array: about 0.7 us
# less per call (when all are still in use, as when every result is kept, the call allocates as
# without a pool). Each output keeps up to _POOL_SIZE records [array, its 4 _state_views,
# shp_array_t*, reference counts of the array and of its base]; the arrays are made as zeros()
# makes them (the library's memory, owned by the base, a ctypes buffer that nothing else can reach
# but the array). A record is reused only when the array and its base have exactly the references
# the pool itself holds (so neither the caller, nor a view, a memoryview or a ctypes object made
# from it, nor anything else references it: numpy's temporary elision rests on the same counts),
# it has no weak reference, and its shape, strides, dtype, data and writability are those it was
# made with. CPython only (reference counts), with numpy's array layout read (_LAYOUT: the views
# hold no reference).
# Not on a free-threaded build (its reference counts are split between threads).
_refcount = (getattr(sys, "getrefcount", None)
             if getattr(sys, "_is_gil_enabled", lambda: True)() else None)
_weakrefs = weakref.getweakrefcount
_POOL_BYTES = 16384
_POOL_SIZE = 3


def _pool_add(recs: List[Any], make: Tuple[int, Tuple[int, ...], np.dtype, int]) -> List[Any]:
    """A new record in the pool of one output (which holds fewer than _POOL_SIZE)."""
    r = _pool_record(*make)
    o = r[0]  # counted as in Runtime.__call__, which holds the array in `o` the same way
    r[6], r[7] = _refcount(o), _refcount(o.base)
    recs.append(r)
    return r


def _pool_record(code: int, shape: Tuple[int, ...], dt: np.dtype, nbytes: int) -> List[Any]:
    out = _vp()
    check(L.shp_array_create(code, int64s(shape), len(shape), _byref(out)))
    a = adopt_array(out.value, shape, dt, nbytes)
    return [a, *_state_views(a), out.value, 0, 0]


def _same(a: Any, w: Tuple[Any, ...]) -> bool:
    """Whether wrap record `w` is still exact for argument `a` (see the record's comment)."""
    return a is w[0] and w[1].raw == w[2] and w[3].raw == w[4]


class Runtime:
    """Runs a program on numpy arrays of any shape it accepts.

    `runtime(x=a, ...)` binds inputs by keyword only and returns a dict {output name: numpy
    array} in the program's output order. Inputs that are C-contiguous, aligned numpy arrays
    of the input's dtype are passed without a copy; anything else (a list, a strided view, an
    unaligned or byte-swapped array, a Python int for a dim input) is converted once with
    np.require(a, dtype, ["C", "A"]). Outputs are numpy arrays over the library's own buffers
    (no copy), released when the array and its views are gone. When the input signature was
    seen before and the outputs are small (16 KiB in all at most), a call writes into outputs
    of earlier calls that nothing references any more (by reference count, as numpy's
    temporary elision does; never one still reachable through the array, a view, its base
    buffer, a memoryview, a ctypes object or a weak reference), so a raw data pointer kept
    from a dropped output may see new values. An input with a default may be
    left out. The runtime holds the arrays of its last call until a call with other arrays or
    close(), so that passing the same arrays again skips re-wrapping them (an array that was
    reshaped, resized or otherwise moved in place since is wrapped again), and it caches the
    output shapes per input signature (names, shapes, dim values). One thread at a time per
    runtime (calls are serialized by a lock); make one runtime per thread from a shared
    Program to run in parallel.

    A program with data-dependent sizes (nonzero, boolean_mask, size_from_value) is planned
    in stages as the values are read from the data; its output shapes are read after every
    call. `bound_allocation` (bytes) lets each data-dependent stage whose arena needs at most
    that much at the sizes' upper bounds be allocated for them once (results never depend
    on it; default 0: allocate for the actual sizes). `max_loop_iterations` bounds every
    while_loop and scan per call (ConstraintViolation beyond it; for untrusted files).
    """

    def __init__(self, program: Program, num_threads: Optional[int] = None,
                 plan_cache_capacity: Optional[int] = None,
                 bound_allocation: Optional[int] = None,
                 max_loop_iterations: Optional[int] = None) -> None:
        self._ptr: Optional[int] = None
        self._lock = threading.Lock()
        self._acquire, self._release = self._lock.acquire, self._lock.release
        self._calls: Dict[Tuple[str, ...], _Binding] = {}  # input names -> binding of calls
        self._intos: Dict[Tuple[str, ...], _Binding] = {}  # the same for run_into
        opts = None
        if (num_threads is not None or plan_cache_capacity is not None or
                bound_allocation is not None or max_loop_iterations is not None):
            o = _vp()
            check(L.shp_runtime_options_create(_byref(o)))
            opts = o.value
        try:
            if num_threads is not None:
                check(L.shp_runtime_options_set_num_threads(
                    opts, int_arg(num_threads, "num_threads", INT32)))
            if plan_cache_capacity is not None:
                check(L.shp_runtime_options_set_plan_cache_capacity(
                    opts, int_arg(plan_cache_capacity, "plan_cache_capacity", SIZE_T)))
            if bound_allocation is not None:  # a byte count: -1 would become SIZE_MAX
                check(L.shp_runtime_options_set_bound_allocation(
                    opts, int_arg(bound_allocation, "bound_allocation", SIZE_T)))
            if max_loop_iterations is not None:
                check(L.shp_runtime_options_set_max_loop_iterations(
                    opts, int_arg(max_loop_iterations, "max_loop_iterations", lo=-1)))
            out = _vp()
            check(L.shp_runtime_create(program._h(), opts, _byref(out)))
        finally:
            L.shp_runtime_options_destroy(opts)
        self._ptr = out.value
        self._hv = _vp(out.value)
        ins = program.inputs
        self._input_dtypes = {i.name: i.dtype.numpy for i in ins}
        # By name: the element type; a BF16 input without ml_dtypes takes uint16 bits.
        self._input_codes = {i.name: i.dtype for i in ins}
        self._dim_inputs = frozenset(i.name for i in ins if i.role == InputRole.DIM)
        outs = program.outputs
        self.output_names: Tuple[str, ...] = tuple(o.name for o in outs)
        self._nout = len(outs)
        self._nout_c = ctypes.c_size_t(len(outs))
        self._out_arr = (_vp * max(self._nout, 1))()
        self._out_ref = _byref(self._out_arr)
        # A c_void_p over each slot of _out_arr: passed to the C API as it is, no object made.
        base = ctypes.addressof(self._out_arr)
        self._out_slots = [_vp.from_address(base + j * _PTR_SIZE) for j in range(self._nout)]
        self._shapes: Dict[Any, Any] = {}  # (names, input shapes) -> output info
        self._pools: Dict[Any, Any] = {}  # the same -> reusable outputs (_OutputPool)
        # Output shapes that depend on the data are never cached by input shapes.
        self.data_dependent = bool(program.unbacked)

    def _h(self) -> int:
        p = self._ptr
        if p is None:
            raise closed_error("Runtime")
        return p

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def _release_wraps(self) -> None:
        for b in list(self._calls.values()) + list(self._intos.values()):
            b.release()
        self._calls.clear()
        self._intos.clear()
        self._pools.clear()  # outputs still referenced elsewhere live on

    def close(self) -> None:
        """Releases the runtime (idempotent); arrays it returned stay valid."""
        with self._lock:
            p, self._ptr = self._ptr, None
            self._release_wraps()
            if p:
                L.shp_runtime_destroy(p)

    def __del__(self) -> None:
        p = getattr(self, "_ptr", None)
        if p:
            self._ptr = None
            self._release_wraps()
            L.shp_runtime_destroy(p)

    def __enter__(self) -> "Runtime":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _code(self, name: str, dtype: np.dtype) -> DType:
        """The element type of an array of numpy `dtype` given for input `name`: the input's
        own when the dtypes match (BF16 as uint16 bits without ml_dtypes), else numpy's."""
        want = self._input_codes.get(name)
        if want is not None and dtype == self._input_dtypes[name]:
            return want
        return DTYPE_OF_NUMPY[dtype]

    def _host(self, name: str, a: Any) -> np.ndarray:
        """The one copy for inputs that cannot be passed as they are. The value of a dim input
        given as a scalar must be an integer within int64_t (3.7 is refused, not truncated)."""
        want = self._input_dtypes.get(name)
        if name in self._dim_inputs and not isinstance(a, np.ndarray):
            return np.array(int_arg(a, "input %r (a dim value)" % name), np.int64)
        if isinstance(a, np.ndarray):
            dt = a.dtype.newbyteorder("=")
            if dt not in DTYPE_OF_NUMPY:
                raise DtypeMismatch("input '%s': numpy dtype %s has no shapepoly element type"
                                    % (name, a.dtype), _lib.SHP_DTYPE_MISMATCH)
            return np.require(a, dt, ["C", "A"])
        return np.require(a, want, ["C", "A"])

    def run(self, inputs: Mapping[str, Any]) -> Dict[str, np.ndarray]:
        """Runs with inputs by name; returns {output name: array} (see the class doc)."""
        return self(**inputs)

    def __call__(self, /, **inputs: Any) -> Dict[str, np.ndarray]:
        """runtime(x=a, ...): runs with inputs by keyword (see the class doc)."""
        self._acquire()  # as `with self._lock`, 0.15 us faster
        try:
            # The hot path: the same arrays as the last call with these names, unchanged
            # (_same, inlined), bound to the same C arrays; the output info is cached.
            b = self._calls.get(tuple(inputs))
            if b is None:
                b = self._binding(self._calls, tuple(inputs), False)
                self._bind_inputs(b, inputs, True)
            else:
                for a, w in zip(inputs.values(), b.wraps):
                    if a is not w[0] or w[1].raw != w[2] or w[3].raw != w[4]:
                        self._bind_inputs(b, inputs, True)
                        break
            pool = b.pool
            if pool is not None:
                # Outputs of a known signature: arrays of earlier calls that nothing else
                # references any more are written again (see _OutputPool).
                outs = b.outs
                result = {}
                j = 0
                for name, recs, make in pool:
                    for r in recs:
                        o = r[0]
                        if (_refcount(o) == r[6] and _refcount(o.base) == r[7] and
                                not _weakrefs(o) and r[1].raw == r[2] and r[3].raw == r[4]):
                            break
                    else:
                        if len(recs) >= _POOL_SIZE:
                            break  # all still in use (kept by the caller): new arrays below
                        r = _pool_add(recs, make)
                        o = r[0]
                    outs[j] = r[5]
                    result[name] = o
                    j += 1
                else:
                    err = _run_into(*b.pool_args)
                    if err:
                        b.info = b.pool = None
                        raise_error(err)
                    return result
            err = _run(*b.args)
            if err:
                b.info = b.pool = None
                raise_error(err)
            info = b.info
            if info is None:
                info = self._call_info(b)
            result = {}
            for name, shape, dt, btype, slot, _, _ in info:
                if btype is None:  # no bytes: numpy's own empty array
                    _destroy(slot)
                    result[name] = np.empty(shape, dt)
                    continue
                buf = btype.from_address(_data(slot))
                buf._shp_ptr = slot.value
                result[name] = _ndarray(shape, dt, buf)
            return result
        finally:
            self._release()

    def _binding(self, table: Dict[Tuple[str, ...], _Binding], key: Tuple[str, ...],
                 into: bool) -> _Binding:
        """A new binding for input names `key` in `table` (self._calls or self._intos); the
        runtime must be open. At most 16 bindings are held: beyond, all are released."""
        self._h()  # closed: an error
        if len(self._calls) + len(self._intos) >= 16:
            self._release_wraps()
        b = table[key] = _Binding(key, self._dim_inputs, self, into)
        return b

    def _bind_inputs(self, b: _Binding, inputs: Mapping[str, Any], call: bool) -> None:
        """Wraps again every input whose wrap record is no longer exact (every dim input: its
        record holds _NEVER). For a call, the output info (and pool) of the new input shapes
        if a run had them before, else None (read after the run)."""
        b.info = b.pool = None  # before _rewrap may raise: shapes are changing
        wraps = b.wraps
        i = 0
        for name, a in inputs.items():
            if not _same(a, wraps[i]):
                self._rewrap(name, a, wraps, b.handles, i)
            i += 1
        if call and not self.data_dependent:
            skey = self._shape_key(b)
            b.info = self._shapes.get(skey)
            if b.info is not None:
                b.pool = self._pools.get(skey)

    def _shape_key(self, b: _Binding) -> Any:
        """What the output shapes of a call are a function of: the input names in order, each
        data input's shape and each dim input's value."""
        return (b.key, tuple(int(w[7]) if d else w[5] for w, d in zip(b.wraps, b.dims)))

    def _rewrap(self, name: str, a: Any, wraps: List[Any], arr: Any, i: int) -> None:
        """Wraps input `a` (converted once if it must be) into slot i of the binding."""
        orig = a
        if (type(a) is not _ndarray or a.dtype not in DTYPE_OF_NUMPY or
                not a.flags.c_contiguous or not a.flags.aligned):
            a = self._host(name, a)
        views = _state_views(a)
        old = wraps[i]
        shape, dt = a.shape, a.dtype
        sig = old[8]
        if sig is None or sig[0] is not dt or sig[1] != shape:
            # The wrap's arguments but the pointer, made once per dtype and shape of the slot.
            nd = len(shape)
            dims = (_dims_of.get(nd) or ctypes.c_int64 * nd)(*shape)
            sig = (dt, shape, ctypes.c_int32(int(self._code(name, dt))), dims, _byref(dims),
                   ctypes.c_size_t(nd), ctypes.c_size_t(a.nbytes))
        out = _vp()
        check(_wrap_raw(sig[2], sig[4], sig[5], _vp(_data_pointer(a)), sig[6], _byref(out)))
        if old[6] is not None:
            _destroy(old[6])
        # A converted copy never matches the next call's object (_NEVER); it is held for this
        # one. A dim input is read again at every call (its value may have changed in place).
        held = a if a is orig and name not in self._dim_inputs else _NEVER
        wraps[i] = (held, *views, shape, out.value, a, sig)
        arr[i] = out.value

    def _call_info(self, b: _Binding) -> List[Any]:
        """The output info of a call that just ran: read from the outputs when the shapes come
        from the data (every time), else cached by the input shapes and dim values."""
        if self.data_dependent:
            return self._output_info(None)
        skey = self._shape_key(b)
        info = self._shapes.get(skey)
        if info is None:
            info = self._output_info(skey)
        b.info = info
        b.pool = self._pools.get(skey)
        if (b.pool is None and _refcount is not None and _LAYOUT is not None and
                all(e[6] for e in info) and sum(e[6] for e in info) <= _POOL_BYTES):
            b.pool = self._pools[skey] = [(e[0], [], (e[5], e[1], e[2], e[6])) for e in info]
        return info

    def _output_info(self, skey: Any) -> List[Any]:
        info = []
        for j, name in enumerate(self.output_names):
            p = self._out_arr[j]
            rank = L.shp_array_rank(p)
            sp = L.shp_array_shape(p)
            shape = tuple(ctypes.cast(sp, ctypes.POINTER(ctypes.c_int64))[:rank]) if rank else ()
            nbytes = L.shp_array_nbytes(p)
            code = L.shp_array_dtype(p)
            info.append((name, shape, _NUMPY_OF[code],
                         _owned_buffer_type(nbytes) if nbytes else None, self._out_slots[j],
                         code, nbytes))
        if skey is None:
            return info
        if len(self._shapes) >= 64:
            self._shapes.clear()
            self._pools.clear()
        self._shapes[skey] = info
        return info

    def run_into(self, inputs: Mapping[str, Any], outputs: Mapping[str, np.ndarray]) -> None:
        """Runs and writes every output into the given arrays (by output name), which must have
        exactly the output's dtype and shape. As with calls, the arrays of the last run_into
        (inputs and outputs) are held so that passing the same ones again skips re-wrapping
        them (~1 us for a tiny program)."""
        self._acquire()
        try:
            # The hot path: the same input and output arrays as the last run_into with these
            # input names, unchanged (_same, inlined), and the outputs still writable.
            b = self._intos.get(tuple(inputs))
            if b is not None and len(outputs) == self._nout:
                for a, w in zip(inputs.values(), b.wraps):
                    if a is not w[0] or w[1].raw != w[2] or w[3].raw != w[4]:
                        b = None
                        break
                else:
                    # The flags are in the header: an output made read-only is wrapped again
                    # (and refused) by _bind_into.
                    for name, w in zip(self.output_names, b.out_wraps):
                        a = outputs.get(name)
                        if a is not w[0] or w[1].raw != w[2] or w[3].raw != w[4]:
                            b = None
                            break
            else:
                b = None
            if b is None:
                b = self._bind_into(inputs, outputs)
            err = _run_into(*b.args)
            if err:
                raise_error(err)
        finally:
            self._release()

    def _bind_into(self, inputs: Mapping[str, Any], outputs: Mapping[str, np.ndarray]
                   ) -> _Binding:
        """run_into's binding of these inputs and outputs, every argument checked and wrapped
        again where its record is no longer exact."""
        self._h()  # closed: an error
        if len(outputs) != self._nout or any(n not in outputs for n in self.output_names):
            missing = [n for n in self.output_names if n not in outputs]
            extra = [n for n in outputs if n not in self.output_names]
            raise NotFound("run_into needs exactly the outputs %s (missing %s, unknown %s)"
                           % (list(self.output_names), missing, extra), _lib.SHP_NOT_FOUND)
        key = tuple(inputs)
        b = self._intos.get(key)
        if b is None:
            b = self._binding(self._intos, key, True)
        self._bind_inputs(b, inputs, False)
        for j, name in enumerate(self.output_names):
            a = outputs[name]
            if not _same(a, b.out_wraps[j]) or not a.flags.writeable:
                self._wrap_output(name, a, b.out_wraps, b.outs, j)
        return b

    def _wrap_output(self, name: str, a: Any, wraps: List[Any], outs: Any, j: int) -> None:
        """Wraps output array `a` (never copied: it must be writable, C-contiguous, aligned and
        of a shapepoly dtype) into slot j of run_into's binding."""
        if (not isinstance(a, np.ndarray) or not a.flags.c_contiguous or not a.flags.aligned or
                not a.flags.writeable or a.dtype not in DTYPE_OF_NUMPY):
            raise ValueError("shapepoly: output '%s' must be a writable, C-contiguous, aligned "
                             "numpy array of a shapepoly dtype" % name)
        ptr = a.__array_interface__["data"][0]
        out = _vp()
        nd = a.ndim
        dims = (_dims_of.get(nd) or ctypes.c_int64 * nd)(*a.shape)
        check(_wrap(int(self._code(name, a.dtype)), dims, nd, ptr, a.nbytes, _byref(out)))
        old = wraps[j][6]
        if old is not None:
            _array_destroy(old)
        wraps[j] = (a, *_state_views(a), a.shape, out.value, a, None)
        outs[j] = out.value

    def dry_run(self, shapes: ShapesLike, dtypes: Optional[Mapping[str, Any]] = None
                ) -> Dict[str, Tuple[int, ...]]:
        """Every check of a run on input shapes alone ({name: shape}, an int for a dim input);
        returns the output shapes. Plans and caches like a run. A data-dependent dim (the data
        is never read) is -1; output_dim_bounds gives its bounds at these shapes."""
        with self._lock:
            h = self._h()
            names, dts, ptrs, ranks, keep = self._shape_args(shapes, dtypes)
            check(L.shp_runtime_dry_run(h, names, dts, ptrs, ranks, len(shapes)))
            return {n: self._output_shape(h, i) for i, n in enumerate(self.output_names)}

    def cost(self, kind: CostKindLike, shapes: ShapesLike,
             dtypes: Optional[Mapping[str, Any]] = None) -> int:
        """The cost `kind` (Program.cost) for concrete input shapes, without running: the
        arguments and every check are dry_run's, then the formula of the variant that would
        run is evaluated. For PEAK_BYTES it bounds the memory that run would use. Plans and
        caches like a dry run."""
        k = as_cost_kind(kind)
        with self._lock:
            h = self._h()
            names, dts, ptrs, ranks, keep = self._shape_args(shapes, dtypes)
            value = ctypes.c_int64()
            check(L.shp_runtime_cost(h, k, names, dts, ptrs, ranks, len(shapes),
                                     _byref(value)))
            return value.value

    def _shape_args(self, shapes: ShapesLike, dtypes: Optional[Mapping[str, Any]]
                    ) -> Tuple[Any, Any, Any, Any, Any]:
        """(names, dtypes or None, shape pointers, ranks, keep-alive) of dry_run and cost."""
        from ._core import as_dtype
        names, ptrs, ranks, keep = shape_args(shapes, self._dim_inputs)
        dts = None
        if dtypes is not None:
            dts = (ctypes.c_int32 * max(len(shapes), 1))(
                *[as_dtype(dtypes[n]) if n in dtypes else
                  self._input_codes.get(n, DType.F32)
                  for n in shapes])
        return names, dts, ptrs, ranks, keep

    def _output_shape(self, h: int, i: int) -> Tuple[int, ...]:
        rank = ctypes.c_size_t()
        check(L.shp_runtime_output_shape(h, i, None, 0, _byref(rank)))
        dims = int64s([0] * rank.value)
        check(L.shp_runtime_output_shape(h, i, dims, rank.value, _byref(rank)))
        return tuple(dims[k] for k in range(rank.value))

    def output_shape(self, i: Union[int, str]) -> Tuple[int, ...]:
        """The shape of output i (index or name) from the last successful run or dry run."""
        if isinstance(i, str):
            if i not in self.output_names:
                raise NotFound("runtime has no output '%s'" % i, _lib.SHP_NOT_FOUND)
            i = self.output_names.index(i)
        i = int_arg(i, "output_shape: i", SIZE_T)
        with self._lock:
            return self._output_shape(self._h(), i)

    def output_dim_bounds(self, i: Union[int, str], axis: int
                          ) -> Tuple[bool, int, Optional[int]]:
        """(data_dependent, min, max) of dim `axis` of output i (index or name) from the last
        successful run or dry run: after a dry run a data-dependent dim (-1 in output_shape)
        has the bounds it can take at those input shapes (max None: unbounded); after a run,
        min == max == the computed size. Other dims: (False, size, size)."""
        if isinstance(i, str):
            if i not in self.output_names:
                raise NotFound("runtime has no output '%s'" % i, _lib.SHP_NOT_FOUND)
            i = self.output_names.index(i)
        i = int_arg(i, "output_dim_bounds: i", SIZE_T)
        axis = int_arg(axis, "output_dim_bounds: axis", SIZE_T)
        dd, lo, hi = ctypes.c_bool(), ctypes.c_int64(), ctypes.c_int64()
        with self._lock:
            check(L.shp_runtime_output_dim_bounds(self._h(), i, axis, _byref(dd), _byref(lo),
                                                  _byref(hi)))
        return dd.value, lo.value, None if hi.value == _lib.INT64_MAX else hi.value

    # Plan statistics.
    @property
    def plans_built(self) -> int:
        """Calls whose binding was not in the plan cache."""
        return L.shp_runtime_plans_built(self._h())

    @property
    def cache_hits(self) -> int:
        return L.shp_runtime_cache_hits(self._h())

    @property
    def last_plan_build_ns(self) -> int:
        return L.shp_runtime_last_plan_build_ns(self._h())

    @property
    def num_threads(self) -> int:
        return L.shp_runtime_num_threads(self._h())

    @property
    def last_variant(self) -> int:
        """The variant the last successful run used (0 for one variant; -1 before a run)."""
        return L.shp_runtime_last_variant(self._h())

    def variant_plans_built(self, v: int) -> int:
        return L.shp_runtime_variant_plans_built(self._h(), int_arg(v, "variant_plans_built: v",
                                                                    SIZE_T))

    def variant_cache_hits(self, v: int) -> int:
        return L.shp_runtime_variant_cache_hits(self._h(), int_arg(v, "variant_cache_hits: v",
                                                                   SIZE_T))

    @property
    def simd_target(self) -> str:
        return borrowed(L.shp_runtime_simd_target(self._h()))


def zeros(dtype: Any, shape: Sequence[int]) -> np.ndarray:
    """A zeroed numpy array over memory the library allocates (64-byte aligned, shp_array_create),
    released like a run's outputs."""
    from ._core import as_dtype
    out = _vp()
    check(L.shp_array_create(as_dtype(dtype), int64s(list(shape), "zeros: shape"), len(shape),
                             _byref(out)))
    return adopt_array(out.value)
