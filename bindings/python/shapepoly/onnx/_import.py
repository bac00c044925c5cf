"""ONNX -> shapepoly: one converter per ONNX op type (CONVERTERS), traced in a Scope.

Every ONNX value becomes a `Val`: a traced Tensor, or a host value known while importing (a
numpy array: initializers, Constant nodes, and shape computations, whose object arrays hold
ints and symbolic Dims). A node whose inputs are all host values (and no float initializer)
is evaluated on the host by its HOST entry: that is how Shape -> Gather -> Concat -> Reshape
chains become dim expressions instead of run-time tensors. A host value used as an operand of a
traced op is materialized: an initializer as a named parameter (its default is its value), a
shape as dim_value tensors, anything else as a constant.
"""

import collections
import json
import os
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .._core import (BF16, BFLOAT16, BOOL, F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Dim,
                     DType, Scope, Tensor, concatenate)
from .._errors import Error, Inconclusive

from ._coverage import advice
from ._functions import MAX_DEPTH as MAX_FUNCTION_DEPTH
from ._functions import body as function_body
from ._functions import body_opset, has_body, inline, local_functions
from ._opset import MAX_OPSET, MIN_OPSET, changed_before, changed_since, check_opset  # noqa: F401 (re-exported)
MAX_FOLD_ELEMENTS = 1 << 24  # the default cap of a value evaluated while importing
BIG = 1 << 62  # slice bounds beyond this mean "to the end"

ONNX_DTYPES = {TensorProto.FLOAT: F32, TensorProto.DOUBLE: F64, TensorProto.INT32: I32,
               TensorProto.INT64: I64, TensorProto.BOOL: BOOL, TensorProto.FLOAT16: F16,
               TensorProto.BFLOAT16: BF16, TensorProto.INT8: I8, TensorProto.UINT8: U8,
               TensorProto.INT16: I16, TensorProto.UINT16: U16, TensorProto.UINT32: U32,
               TensorProto.UINT64: U64}
ONNX_OF_NUMPY = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
                 np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
                 np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.float16): TensorProto.FLOAT16,
                 np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
                 np.dtype(np.int16): TensorProto.INT16, np.dtype(np.uint16): TensorProto.UINT16,
                 np.dtype(np.uint32): TensorProto.UINT32, np.dtype(np.uint64): TensorProto.UINT64}
if BFLOAT16 is not None:
    ONNX_OF_NUMPY[BFLOAT16] = TensorProto.BFLOAT16
FLOATS = (F32, F64, F16, BF16)  # the floating-point element types


class ImportError_(ValueError):
    """The model cannot be imported; the message names the node (and its op type)."""


class UnsupportedOps(ImportError_):
    """Ops without a converter, all at once: `ops` maps op type -> [node names]."""

    def __init__(self, ops: Dict[str, List[str]], hints: Optional[Dict[str, str]] = None
                 ) -> None:
        self.ops = ops
        self.hints = dict(hints or {})
        parts = ["%s (%s)%s" % (op, ", ".join(names[:5]) + (", ..." if len(names) > 5 else ""),
                                " [%s]" % self.hints[op] if self.hints.get(op) else "")
                 for op, names in sorted(ops.items())]
        super().__init__("unsupported ONNX ops: " + "; ".join(parts))


class RuntimeShape(ImportError_):
    """A shape, axes or pads input is computed from run-time data (a graph input or a tensor
    op), so it cannot become a dim expression: programs have symbolic, not data-dependent,
    shapes."""


class Val:
    """One ONNX value: `tensor` (traced), `host` (numpy array known now), or both once a host
    value has been materialized. `param` is the initializer name of a weight. `etype` is the
    ONNX element type of an object (shape) array. `narrow` is the ONNX type of a value of an
    ONNX-only type (float8, float4, int4, ...), which tensor and host hold in their storage type
    (_narrow_types.py); None otherwise."""

    __slots__ = ("tensor", "host", "param", "etype", "narrow")

    def __init__(self, tensor: Optional[Tensor] = None, host: Optional[np.ndarray] = None,
                 param: Optional[str] = None, etype: int = TensorProto.INT64,
                 narrow: Optional[int] = None) -> None:
        self.tensor, self.host, self.param, self.etype = tensor, host, param, etype
        self.narrow = narrow


Converter = Callable[["Importer", Any, List[Optional[Val]], Dict[str, Any]], List[Val]]
HostFn = Callable[["Importer", Any, List[Optional[np.ndarray]], Dict[str, Any]],
                  Optional[List[np.ndarray]]]
CONVERTERS: Dict[str, Converter] = {}
HOST: Dict[str, HostFn] = {}
# Attribute values (or outputs) a converter does not handle: op -> fn(importer, attributes,
# node) -> reason or None; checked with the op types before converting, so that every gap is
# listed at once.
CHECKS: Dict[str, Callable[["Importer", Dict[str, Any], Any], Optional[str]]] = {
    "Pad": lambda imp, at, node: None if at.get("mode", "constant") in PAD_MODES else
    "mode=%s" % at["mode"],
    "Cast": lambda imp, at, node: None if at.get("to") in ONNX_DTYPES or
    at.get("to") in _narrow_types.ONLY else "to=%s" % _dtype_name(at.get("to", 0)),
    "BatchNormalization": lambda imp, at, node: "spatial=0" if at.get("spatial", 1) == 0
    else None,
    "LpNormalization": lambda imp, at, node: None if at.get("p", 2) in (1, 2) else
    "p=%s" % at.get("p"),
}

# Ops that ONNX defines by a function body but that have a library op: key -> converter
# (importer, node, ins) -> outputs, or None to import the body instead (attributes the op does not
# express). _ops_attention registers Attention.
FUNCTION_OPS: Dict[str, Callable[..., Optional[List[Optional[Val]]]]] = {}

PAD_MODES = ("constant", "reflect", "edge", "wrap")


def _dtype_name(elem: Any) -> str:
    """An ONNX element type's name, or the number when it names none (a hostile model)."""
    try:
        return TensorProto.DataType.Name(elem)
    except (ValueError, TypeError):
        return repr(elem)


def converter(*ops: str) -> Callable[[Converter], Converter]:
    def reg(fn: Converter) -> Converter:
        for op in ops:
            CONVERTERS[op] = fn
        return fn
    return reg


def host(*ops: str) -> Callable[[HostFn], HostFn]:
    def reg(fn: HostFn) -> HostFn:
        for op in ops:
            HOST[op] = fn
        return fn
    return reg


def supported_ops() -> List[str]:
    return sorted(CONVERTERS)


# ---- Dims: ints and Dims mixed -------------------------------------------------------------

def _int(d: Any) -> Any:
    """A Python int for an int-like or a constant Dim; a symbolic Dim as it is."""
    if isinstance(d, Dim):
        c = d.constant
        return d if c is None else c
    if isinstance(d, (np.integer, int)) and not isinstance(d, bool):
        return int(d)
    if isinstance(d, (bool, np.bool_)):
        return int(d)
    raise TypeError("not a size: %r" % (d,))


def dmax(a: Any, b: Any) -> Any:
    a, b = _int(a), _int(b)
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return _int(a.max(b) if isinstance(a, Dim) else b.max(a))


def dmin(a: Any, b: Any) -> Any:
    a, b = _int(a), _int(b)
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return _int(a.min(b) if isinstance(a, Dim) else b.min(a))


def prod(xs: Sequence[Any]) -> Any:
    p: Any = 1
    for x in xs:
        p = _int(p * x) if isinstance(p, Dim) or isinstance(x, Dim) else p * int(x)
    return p


def _norm(a: np.ndarray) -> np.ndarray:
    """An object array of ints and Dims with its constants folded; int64 if all are ints."""
    if a.dtype != object:
        return a
    flat = [_int(x) for x in a.reshape(-1)]
    if all(isinstance(x, int) for x in flat):
        return np.array(flat, dtype=np.int64).reshape(a.shape)
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(a.shape)


def _name(s: str) -> str:
    """A program input/output name: '.' is reserved for derived names."""
    return s.replace(".", "_") or "_"


_EXPRESSION = re.compile(r"^[\w\s+*()/%,-]+$")


def _var_name(s: str) -> str:
    s = re.sub(r"\W", "_", s)
    return s if s and not s[0].isdigit() else "d_" + s


# ---- The importer ------------------------------------------------------------------------

WELL_KNOWN_AXES = {"batch": (0, 1), "n": (0, 1), "channels": (1, 2), "c": (1, 2),
                   "height": (-2, 3), "h": (-2, 3), "width": (-1, 3), "w": (-1, 3),
                   "depth": (-3, 5), "d": (-3, 5), "seq": (1, 2), "sequence": (1, 2)}


def _dynamic_axes(dynamic: Union[None, str, Sequence[str], Mapping[str, int]]
                  ) -> List[Tuple[str, int, int]]:
    """[(variable, axis, minimum rank)] from names ("batch", "height", ...) or name=axis."""
    if dynamic is None:
        return []
    if isinstance(dynamic, str):
        dynamic = [s for s in dynamic.split(",") if s.strip()]
    if isinstance(dynamic, Mapping):
        items = [(k, int(v)) for k, v in dynamic.items()]
    else:
        items = []
        for s in dynamic:
            name, eq, axis = s.strip().partition("=")
            if eq:
                items.append((name.strip(), int(axis)))
            elif name.lower() in WELL_KNOWN_AXES:
                items.append((name, None))
            else:
                raise ImportError_("--dynamic %r: not a known axis name (%s); write NAME=AXIS"
                                   % (name, ", ".join(sorted(WELL_KNOWN_AXES))))
    out = []
    for name, axis in items:
        if axis is None:
            axis, min_rank = WELL_KNOWN_AXES[name.lower()]
        else:
            min_rank = axis + 1 if axis >= 0 else -axis
        out.append((_var_name(name), axis, min_rank))
    return out


class Importer:
    def __init__(self, model: onnx.ModelProto, dynamic: Any = None,
                 dims: Optional[Mapping[str, Union[str, int]]] = None, parameters: bool = True,
                 constraints: Sequence[str] = (), fold_batch_norm: bool = True,
                 max_fold_elements: int = MAX_FOLD_ELEMENTS,
                 sequences: Optional[Mapping[str, Any]] = None) -> None:
        self.model = model
        self.graph = model.graph
        opsets = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
        # No default-domain import: the graph may only use other domains' ops.
        self.opset = opsets[0] if opsets else MAX_OPSET
        why = check_opset(self.opset)
        if why:
            raise ImportError_(why)
        self.parameters = parameters
        self.dims = dict(dims or {})
        self.dynamic = _dynamic_axes(dynamic)
        # A model that export wrote carries the program's facts: restore them.
        self.meta = _read_meta(model)
        ranges = {v["name"]: (None if v["min"] <= -(1 << 63) else v["min"],
                              None if v["max"] >= (1 << 63) - 1 else v["max"])
                  for v in self.meta.get("shapepoly.variables", [])
                  if v.get("declared") and "unbacked" not in v}  # those: made by their ops
        constraints = list(self.meta.get("shapepoly.constraints", [])) + list(constraints)
        self.scope = Scope(constraints, ranges=ranges or None)
        # Values by name; function bodies and subgraphs run in child scopes (run_nodes).
        self.vals: "collections.ChainMap[str, Val]" = collections.ChainMap()
        self.params: List[Tensor] = []
        self.param_names: Dict[str, str] = {}
        self.label = ""
        # Conv output -> the BatchNormalization node that may fold into the conv's weights;
        # `folded` holds the BatchNormalization nodes that did (they pass their input on).
        self.bn_after_conv = _bn_after_conv(model.graph) if fold_batch_norm else {}
        self.folded: set = set()
        self.local = local_functions(model)
        self.max_fold_elements = max_fold_elements
        # Program input/output name -> the ONNX name it came from (Program.onnx_names).
        self.onnx_names: Dict[str, Dict[str, str]] = {"inputs": {}, "outputs": {}}
        # Program input/output name -> its ONNX element type's name (Program.onnx_types).
        self.onnx_types: Dict[str, Dict[str, str]] = {"inputs": {}, "outputs": {}}
        self.depth = 0  # nested function calls being imported
        self.calls = 0  # function calls imported (a unique prefix for each one's values)
        self.shapes: Optional[Dict[str, Tuple[str, ...]]] = None
        # Sequence inputs' lengths (import_model's `sequences`) and what the program's inputs
        # and outputs of sequences and optionals are (metadata "onnx.sequences").
        self.sequence_lengths = dict(sequences or {})
        self.sequences: Dict[str, Any] = {"inputs": {}, "outputs": {}, "order": []}
        self.data_inputs: List[Tensor] = []

    # Values.
    def t(self, v: Val, dtype: Optional[DType] = None) -> Tensor:
        """The tensor of `v`, materializing a host value (see the module doc)."""
        if v.tensor is None:
            a = v.host
            if a.dtype == object:
                v.tensor = self._shape_tensor(a, v.etype)
            elif a.dtype.newbyteorder("=") not in ONNX_OF_NUMPY:
                raise ImportError_("a tensor of element type %s, which shapepoly does not have "
                                   "(f32, f64, f16, bf16, i8-i64, u8-u64, bool)" % a.dtype)
            elif v.param is not None and self.parameters:
                name = _name(v.param)
                while name in self.param_names.values() or name in self.input_names:
                    name += "_"
                self.param_names[v.param] = name
                v.tensor = self.scope.parameter(name, a)
                self.onnx_types["inputs"][name] = _dtype_name(
                    v.narrow if v.narrow is not None else ONNX_OF_NUMPY[a.dtype.newbyteorder("=")])
                self.params.append(v.tensor)
            else:
                v.tensor = self.scope.constant(a)
        t = v.tensor
        if dtype is not None and t.dtype != dtype:
            t = t.astype(dtype)
        return t

    def _shape_tensor(self, a: np.ndarray, etype: int) -> Tensor:
        parts = [self.scope.dim_value(x).reshape(1) if isinstance(x, Dim) else
                 self.scope.constant(np.array([x], np.int64)) for x in a.reshape(-1)]
        t = parts[0] if len(parts) == 1 else concatenate(parts, 0)
        t = t.reshape(tuple(a.shape))
        return t.astype(ONNX_DTYPES.get(etype, I64)) if etype != TensorProto.INT64 else t

    def h(self, v: Optional[Val], what: str) -> np.ndarray:
        """The host value of `v` (a shape, axes, pads...): an error when it is computed at run
        time, since shapes must be known symbolically."""
        if v is None or v.host is None:
            raise RuntimeShape("%s is computed from run-time data, not from shapes and "
                               "constants, so it cannot become a dim expression" % what)
        return v.host

    def ints(self, v: Optional[Val], what: str) -> List[Any]:
        return [_int(x) for x in self.h(v, what).reshape(-1).tolist()]

    def shape(self, t: Tensor) -> List[Any]:
        return [_int(d) for d in t.shape]

    # The graph.
    def run(self) -> Any:
        g = self.graph
        self.unsupported()
        self.check_names()
        inits = {i.name for i in g.initializer}
        for init in g.initializer:
            a = numpy_helper.to_array(init)
            self.vals[init.name] = _narrow_types.host_val(a, param=init.name)
        data_inputs, self.input_names = self.data_inputs, set()
        roles = self.meta.get("shapepoly.input_roles", {})
        for inp in g.input:
            if inp.name in inits:
                continue
            if roles.get(inp.name) == "dim":  # a dimension input: known as a Dim too
                t = self.scope.dim_input(inp.name)
                d = np.empty((), dtype=object)
                d[()] = self.scope.var(inp.name)
                self.vals[inp.name] = Val(tensor=t, host=d)
            elif not inp.type.HasField("tensor_type") and (
                    inp.type.HasField("sequence_type") or inp.type.HasField("optional_type")):
                self.label = "graph input '%s'" % inp.name
                self.vals[inp.name] = _ops_sequence.graph_input(self, inp,
                                                                self.sequence_lengths)
                continue
            else:
                t = self._input(inp)
                etype = inp.type.tensor_type.elem_type
                self.vals[inp.name] = Val(tensor=t, narrow=etype if etype in
                                          _narrow_types.ONLY else None)
                self.onnx_types["inputs"][_name(inp.name)] = _dtype_name(etype)
            data_inputs.append(t)
        # Facts over data-dependent sizes wait until the ops that make those variables ran.
        unbacked = {v["name"] for v in self.meta.get("shapepoly.variables", []) if "unbacked" in v}
        pending = []
        for kind in ("shapepoly.assertions", "shapepoly.guards"):
            for fact in self.meta.get(kind, []):
                m = re.match(r"^(.*) (==|!=|<=|>=|<|>) (.*)$", fact["text"])
                if m:
                    fn = self.scope.check if kind.endswith("assertions") else self.scope.assume
                    names = set(re.findall(r"[A-Za-z_]\w*", fact["text"])) & unbacked
                    pending.append((names, fn, m.groups(), fact.get("message") or None))
        pending = self._restore_facts(pending)
        for i, node in enumerate(g.node):
            self.node(node, i)
            if pending:
                pending = self._restore_facts(pending)
        outputs = {}
        for o in g.output:
            v = self.vals.get(o.name)
            if v is None:
                raise ImportError_("graph output '%s' is produced by no node" % o.name)
            self.label = "graph output '%s'" % o.name
            self.sequences["order"].append(o.name)
            if _ops_sequence.is_value(v):
                for name, item in _ops_sequence.graph_output(
                        self, o.name, v, lambda n: n in outputs or n in self.input_names
                        ).items():
                    outputs[name] = self._wrap(lambda item=item: self.t(item))
                    self.onnx_names["outputs"][name] = o.name
                    self.onnx_types["outputs"][name] = _dtype_name(
                        item.narrow if item.narrow is not None else
                        _onnx_type(outputs[name].dtype))
                continue
            # A name listed twice, or two names equal once sanitized ('y.z', 'y_z'): each
            # output stays, the later ones renamed '<name>_2', ... (see onnx_names).
            base = name = _name(o.name)
            k = 1
            while name in outputs or name in self.input_names:
                k += 1
                name = "%s_%d" % (base, k)
            outputs[name] = self._wrap(lambda v=v: self.t(v))
            self.onnx_names["outputs"][name] = o.name
            self.onnx_types["outputs"][name] = _dtype_name(
                v.narrow if v.narrow is not None else _onnx_type(outputs[name].dtype))
        for inp in g.input:
            if inp.name not in inits and inp.name not in self.sequences["inputs"]:
                self.onnx_names["inputs"][_name(inp.name)] = inp.name
        for onnx_name, name in self.param_names.items():
            self.onnx_names["inputs"][name] = onnx_name
        return self.scope.program(data_inputs + self.params, outputs)

    def check_names(self) -> None:
        """Refuses what would make a value ambiguous: an initializer given twice, two nodes
        (or a node and a graph input or initializer) writing the same name."""
        g = self.graph
        seen: Dict[str, str] = {}
        for init in g.initializer:
            if init.name in seen:
                raise ImportError_("initializer '%s' is given twice" % init.name)
            seen[init.name] = "initializer"
        for inp in g.input:
            if inp.name in seen and seen[inp.name] != "initializer":
                raise ImportError_("graph input '%s' is listed twice" % inp.name)
            seen.setdefault(inp.name, "graph input")
        for i, node in enumerate(g.node):
            for out in node.output:
                if not out:
                    continue
                if out in seen:
                    raise ImportError_("ONNX node '%s' (%s) writes '%s', which %s already "
                                       "defines (each value has one producer in ONNX)" %
                                       (node.name or "#%d" % i, node.op_type, out, seen[out]))
                seen[out] = "node '%s' (%s)" % (node.name or "#%d" % i, node.op_type)

    def _restore_facts(self, pending: List[Any]) -> List[Any]:
        """Restores each fact whose data-dependent variables the scope has now; the rest."""
        have = set(self.scope.unbacked)
        rest = []
        for names, fn, (a, op, b), message in pending:
            if names <= have:
                fn(a, op, b, message)
            else:
                rest.append((names, fn, (a, op, b), message))
        return rest

    def unsupported(self) -> None:
        missing: Dict[str, List[str]] = {}
        hints: Dict[str, Optional[str]] = {}
        for i, node in enumerate(self.graph.node):
            op = node.op_type if node.domain in ("", "ai.onnx") else \
                "%s::%s" % (node.domain, node.op_type)
            if op in CONVERTERS and not MIN_OPSET <= self.opset <= MAX_OPSET:
                why = (changed_since if self.opset > MAX_OPSET else changed_before)(
                    node, self.opset)
                if why:
                    raise ImportError_("ONNX node '%s' (%s): %s" % (node.name or "#%d" % i,
                                                                    node.op_type, why))
            if op in CONVERTERS and op in CHECKS:
                at = {a.name: _attr(a) for a in node.attribute}
                why = CHECKS[op](self, at, node)
                op = op if why is None else "%s(%s)" % (op, why)
            if op not in CONVERTERS and not has_body(node, self.opset, self.local):
                missing.setdefault(op, []).append(node.name or "#%d" % i)
                if op == node.op_type or "::" in op:
                    hints.setdefault(op, advice(node.op_type, node.domain, self.opset))
        if missing:
            raise UnsupportedOps(missing, hints)

    def _input(self, inp: Any, program_name: Optional[str] = None) -> Tensor:
        """The program input of tensor graph input `inp` (named `program_name`, or after
        it)."""
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise ImportError_("graph input '%s' is not a tensor" % inp.name)
        dt = ONNX_DTYPES.get(tt.elem_type)
        if dt is None and tt.elem_type in _narrow_types.ONLY:
            dt = _narrow_types.storage(tt.elem_type)
        if dt is None:
            raise ImportError_("graph input '%s' has element type %s, which shapepoly does not "
                               "have (f32, f64, f16, bf16, i8-i64, u8-u64, bool)" %
                               (inp.name, _dtype_name(tt.elem_type)))
        pname = program_name or _name(inp.name)
        self.input_names.add(pname)
        rank = len(tt.shape.dim)
        dims: List[Any] = []
        for axis, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                dyn = [v for v, ax, mr in self.dynamic
                       if rank >= mr and (ax if ax >= 0 else rank + ax) == axis]
                dims.append(self.var(dyn[0]) if dyn else int(d.dim_value))
            elif d.HasField("dim_param"):
                dims.append(self.var(d.dim_param))
            else:
                dims.append(self.var("%s_%d" % (pname, axis)))
        return self.scope.input(pname, dt, dims)

    def var(self, name: str) -> Any:
        if name in self.dims:
            return self.scope.dim(self.dims[name])
        if _EXPRESSION.match(name) and re.search(r"[*+()/%]| - ", name):
            try:  # a dim_param written as an expression ("2*k + 1", as export writes them)
                return self.scope.dim(name)
            except Error:
                pass
        return self.scope.var(_var_name(name))

    def _wrap(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except UnsupportedOps:
            raise
        except ImportError_ as e:
            raise type(e)("%s: %s" % (self.label, e)) from None
        except (Error, ValueError, TypeError, IndexError, ZeroDivisionError) as e:
            raise ImportError_("%s: %s" % (self.label, e)) from None

    def fold_batch_norm(self, conv: Any, ins: List[Optional[Val]]) -> List[Optional[Val]]:
        """The inputs of `conv` with the next BatchNormalization folded into its weight and
        bias, when it is the conv's only consumer and every weight is known now (an
        initializer or a constant): w' = w * a, b' = (b - mean) * a + bias with a = scale /
        sqrt(var + epsilon) per output channel. Else `ins` unchanged."""
        bn = self.bn_after_conv.get(conv.output[0])
        if bn is None:
            return ins
        w = ins[1]
        b = ins[2] if len(ins) > 2 else None
        p = [self.vals.get(n) for n in bn.input[1:5]]
        known = [v for v in [w, b] + p if v is not None]
        if len(p) != 4 or any(v is None for v in p) or not all(
                v.host is not None and v.host.dtype.kind == "f" for v in known):
            return ins
        at = {a.name: _attr(a) for a in bn.attribute}
        wa = w.host.astype(np.float64)
        scale, bias, mean, var = (v.host.astype(np.float64).reshape(-1) for v in p)
        o = wa.shape[0] if wa.ndim else 0
        if wa.ndim < 3 or any(a.size != o for a in (scale, bias, mean, var)) or (
                b is not None and b.host.size != o):
            return ins  # not per output channel: the converters report the shapes
        a = scale / np.sqrt(var + at.get("epsilon", 1e-5))
        wf = (wa * a.reshape((o,) + (1,) * (wa.ndim - 1))).astype(w.host.dtype)
        b0 = np.zeros(o) if b is None else b.host.astype(np.float64).reshape(-1)
        bf = ((b0 - mean) * a + bias).astype(w.host.dtype)
        self.folded.add(id(bn))
        bname = b.param if b is not None and b.param else p[1].param
        return [ins[0], Val(host=wf, param=w.param and w.param + "_folded"),
                Val(host=bf, param=bname and bname + "_folded")]

    def node(self, node: Any, index: int) -> None:
        self.label = "ONNX node '%s' (%s)" % (node.name or "#%d" % index, node.op_type)
        if id(node) in self.folded:  # folded into the conv before it
            self.vals[node.output[0]] = self.vals[node.input[0]]
            return
        ins = [self.vals.get(n) if n else None for n in node.input]
        for n, v in zip(node.input, ins):
            if n and v is None:
                raise ImportError_("%s: input '%s' is produced by no earlier node" %
                                   (self.label, n))
        key = node.op_type if node.domain in ("", "ai.onnx") else \
            "%s::%s" % (node.domain, node.op_type)
        if key not in CONVERTERS or (node.domain, node.op_type) in self.local:
            self.call_function(node, index, key, ins)
            return
        at = {a.name: _attr(a) for a in node.attribute}
        if any(_ops_sequence.is_value(v) for v in ins) or key in _ops_sequence.CONVERTED:
            # Sequences and optionals (_ops_sequence.py): only the ops that take them.
            for n, v in zip(node.input, ins):
                if _ops_sequence.is_value(v) and node.op_type not in _ops_sequence.SEQUENCE_OPS:
                    raise ImportError_("%s: input '%s' is %s, which %s does not take" % (
                        self.label, n, _ops_sequence.kind(v), node.op_type))
            if node.op_type == "Identity" and _ops_sequence.is_value(ins[0]):
                outs = [ins[0]]
            else:
                outs = self._wrap(lambda: CONVERTERS[key](self, node, ins, at))
            for name, v in zip(node.output, outs):
                if name:
                    self.vals[name] = v
            return
        outs: Optional[List[Any]] = None
        narrow = _narrow_types.involved(node, ins, at)
        fold = node.op_type in HOST and all(
            v is None or (v.host is not None and not (v.param and v.host.dtype.kind == "f"))
            for v in ins) and any(v is not None for v in ins) and not narrow or \
            node.op_type in ("Constant", "Shape", "Size")
        if fold and node.op_type in HOST:
            hs = [None if v is None else v.host for v in ins]
            n = _fold_elements(node.op_type, hs)
            if n > self.max_fold_elements:  # traced instead: no host memory at import
                fold = False
                if node.op_type not in CONVERTERS or node.op_type in ("Constant", "Shape",
                                                                      "Size"):
                    raise ImportError_("%s: evaluating it while importing would make %d "
                                       "elements, over the cap of %d (import_model's "
                                       "max_fold_elements)" % (self.label, n,
                                                               self.max_fold_elements))
        if fold and node.op_type in HOST:
            res = self._wrap(lambda: HOST[node.op_type](self, node, hs, at))
            if res is not None:
                outs = [r if isinstance(r, Val) else _narrow_types.host_val(_norm(np.asarray(r)))
                        for r in res]
        if outs is None and narrow:  # float8, int4, ...: _narrow_types.py
            outs = self._wrap(lambda: _narrow_types.convert(
                self, key, node, ins, at, lambda: CONVERTERS[key](self, node, ins, at)))
        if outs is None:
            outs = self._wrap(lambda: _convert_once(self, key, node, ins, at))
        for name, v in zip(node.output, outs):
            if name:
                self.vals[name] = v
                if self.shapes is not None and v.tensor is not None:
                    self.shapes[name] = tuple(str(d) for d in v.tensor.shape)

    def call_function(self, node: Any, index: int, key: str, ins: List[Optional[Val]]) -> None:
        """Imports `node` as the nodes of the function that defines it (_functions.py), at the
        opset the function's body is written for; or, for an op of FUNCTION_OPS that the
        model does not define itself, as that op when its converter takes the node."""
        direct = FUNCTION_OPS.get(key)
        if direct is not None and (node.domain, node.op_type) not in self.local:
            outs = self._wrap(lambda: direct(self, node, ins))
            if outs is not None:
                for name, v in zip(node.output, outs):
                    if name:
                        self.vals[name] = v
                return
        if not has_body(node, self.opset, self.local):
            raise UnsupportedOps({key: ["%s in %s" % (node.name or "#%d" % index, self.label)
                                        if self.depth else node.name or "#%d" % index]})
        if self.depth >= MAX_FUNCTION_DEPTH:
            raise ImportError_("%s: function calls nested more than %d deep (a recursive "
                               "function?)" % (self.label, MAX_FUNCTION_DEPTH))
        f, defaults = self._wrap(lambda: function_body(node, self.opset, self.local, ins))
        nodes = self._wrap(lambda: inline(node, f, defaults, node.name or node.op_type))
        bound = {formal: v for formal, v in zip(f.input, ins) if v is not None}
        saved = self.opset, self.depth
        self.opset, self.depth = body_opset(f, self.opset), self.depth + 1
        try:
            outs = self.run_nodes(nodes, bound, list(f.output))
        finally:
            self.opset, self.depth = saved
        for name, formal, v in zip(node.output, f.output, outs):
            if name:
                if v is None:
                    raise ImportError_("%s: the function's body does not compute its output "
                                       "'%s'" % (self.label, formal))
                self.vals[name] = v

    def run_nodes(self, nodes: Sequence[Any], bound: Mapping[str, Val], outputs: List[str]
                  ) -> List[Optional[Val]]:
        """Imports `nodes` (a function body or a subgraph) in a scope of their own: `bound`
        names visible there, every enclosing value readable, what they write gone afterwards;
        returns the values of `outputs`."""
        self.vals = self.vals.new_child(dict(bound))
        try:
            for k, n in enumerate(nodes):
                self.node(n, k)
            return [self.vals.get(o) for o in outputs]
        finally:
            self.vals = self.vals.parents

    def run_graph(self, graph: Any, inputs: Sequence[Optional[Val]], where: str,
                  outer: Optional[Mapping[str, Val]] = None) -> List[Val]:
        """The outputs of a subgraph (an If branch, a Loop or Scan body) run on `inputs`; its
        initializers are constants; values of the enclosing graphs are visible (`outer` binds
        some of their names to other values: the copies a traced body reads). `where` names
        it in errors ("the then_branch of 'if1' (If)")."""
        if len(inputs) != len(graph.input):
            raise ImportError_("%s takes %d inputs, given %d" % (where, len(graph.input),
                                                                 len(inputs)))
        bound = dict(outer or {})
        bound.update({gi.name: v for gi, v in zip(graph.input, inputs) if v is not None})
        for init in graph.initializer:
            bound[init.name] = _narrow_types.host_val(numpy_helper.to_array(init))
        if self.depth >= MAX_FUNCTION_DEPTH:
            raise ImportError_("%s: subgraphs nested more than %d deep" % (where,
                                                                         MAX_FUNCTION_DEPTH))
        saved_label, self.depth = self.label, self.depth + 1
        try:
            outs = self.run_nodes(list(graph.node), bound, [o.name for o in graph.output])
        finally:
            self.depth -= 1
            self.label = saved_label
        for o, v in zip(graph.output, outs):
            if v is None:
                raise ImportError_("%s: output '%s' is produced by no node" % (where, o.name))
            if v.narrow is not None:  # control flow rebuilds its outputs: the type would be lost
                raise ImportError_("%s: output '%s' has element type %s, which control flow "
                                   "does not carry (an ONNX-only type)" %
                                   (where, o.name, _dtype_name(v.narrow)))
        return outs


def _meta_ok(key: str, v: Any) -> bool:
    """Whether metadata `key` (written by export) has the form the importer reads."""
    def ints(d: Dict[str, Any], *ks: str) -> bool:
        return all(isinstance(d.get(k), int) and not isinstance(d.get(k), bool) for k in ks)
    if key == "shapepoly.variables":
        return isinstance(v, list) and all(
            isinstance(x, dict) and isinstance(x.get("name"), str) and
            (not x.get("declared") or ints(x, "min", "max")) for x in v)
    if key == "shapepoly.constraints":
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if key == "shapepoly.input_roles":
        return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
    if key in ("shapepoly.assertions", "shapepoly.guards"):
        return isinstance(v, list) and all(
            isinstance(x, dict) and isinstance(x.get("text"), str) and
            isinstance(x.get("message") or "", str) for x in v)
    return True  # other keys are not read


def _read_meta(model: onnx.ModelProto) -> Dict[str, Any]:
    """The shapepoly.* metadata export writes (the program's facts), parsed and checked."""
    out = {}
    for p in model.metadata_props:
        if not p.key.startswith("shapepoly."):
            continue
        try:
            out[p.key] = json.loads(p.value)
        except (ValueError, RecursionError) as e:
            raise ImportError_("metadata '%s' is not valid JSON (%s)" %
                               (p.key, type(e).__name__)) from None
        if not _meta_ok(p.key, out[p.key]):
            raise ImportError_("metadata '%s' does not have the form shapepoly's export "
                               "writes" % p.key)
    return out


def _count(shape: Sequence[Any]) -> int:
    """The element count of a host shape; a symbolic or negative entry counts as 0 (the host
    evaluation gives up on those by itself)."""
    n = 1
    for d in shape:
        d = _int(d) if not isinstance(d, float) else int(d)
        if not isinstance(d, int) or d < 0:
            return 0
        n *= d
    return n


def _fold_elements(op: str, hs: List[Optional[np.ndarray]]) -> int:
    """How many elements evaluating `op` on the host values `hs` makes (an upper bound for the
    ops whose size comes from values: ConstantOfShape, Expand, Tile, Range; the broadcast
    size for the others)."""
    xs = [h for h in hs if h is not None]
    try:
        if op == "ConstantOfShape":
            return _count(xs[0].reshape(-1).tolist())
        if op == "Expand" and len(xs) > 1:
            target = [_int(d) for d in xs[1].reshape(-1).tolist()]
            if _count(target) == 0:
                return 0
            return _count(np.broadcast_shapes(xs[0].shape, tuple(target)))
        if op == "Tile" and len(xs) > 1:
            return xs[0].size * _count(xs[1].reshape(-1).tolist())
        if op == "Range" and len(xs) == 3 and all(x.dtype != object for x in xs):
            start, limit, delta = (float(x.reshape(-1)[0]) for x in xs)
            if delta == 0 or not np.isfinite([start, limit, delta]).all():
                return 0
            return max(int(np.ceil((limit - start) / delta)), 0)
        return _count(np.broadcast_shapes(*[x.shape for x in xs])) if xs else 0
    except (ValueError, TypeError, OverflowError, IndexError):
        return 0  # not broadcastable or not sizes: the evaluation reports it


def _bn_after_conv(g: Any) -> Dict[str, Any]:
    """Conv output -> BatchNormalization node reading it, where that is the output's only
    use (not a graph output either) and the BatchNormalization has a single output."""
    uses: Dict[str, int] = {}
    for node in g.node:
        for n in node.input:
            uses[n] = uses.get(n, 0) + 1
    outputs = {o.name for o in g.output}
    convs = {n.output[0] for n in g.node if n.op_type == "Conv" and n.output}
    return {n.input[0]: n for n in g.node
            if n.op_type == "BatchNormalization" and n.input and n.input[0] in convs and
            uses.get(n.input[0]) == 1 and n.input[0] not in outputs and
            len([o for o in n.output if o]) == 1}


def _attr(a: Any) -> Any:
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    return v


def import_model(model: Union[str, "os.PathLike[str]", onnx.ModelProto], dynamic: Any = None,
                 dims: Optional[Mapping[str, Union[str, int]]] = None, parameters: bool = True,
                 constraints: Sequence[str] = (), fold_batch_norm: bool = True,
                 shapes: Optional[Dict[str, Tuple[str, ...]]] = None,
                 max_fold_elements: Optional[int] = None,
                 sequences: Optional[Mapping[str, Any]] = None) -> Any:
    """Converts an ONNX model (a path or a ModelProto) into a shapepoly Program.

    dim_params become variables (`dims` maps a dim_param to another name, an expression or an
    int: {"N": "batch"}); `dynamic` makes fixed axes of the inputs symbolic: names
    ("batch" = axis 0; "height", "width", "depth" = the spatial axes of inputs of rank >= 3) or
    "name=axis". Initializers become named parameters with their value as default
    (`parameters=False`: constants). `constraints` are added to the scope ("batch <= 64").
    A BatchNormalization whose input is a Conv used by nothing else is folded into the conv's
    weight and bias when all of them are initializers or constants (`fold_batch_norm=False`:
    never); the folded ones become parameters named <weight>_folded and <bias>_folded.
    Shape computations and constants are evaluated while importing (numpy), up to
    `max_fold_elements` elements per value (default MAX_FOLD_ELEMENTS, 2^24): a bigger one
    (ConstantOfShape of a large shape, Expand, Tile, Range, a broadcast) becomes program ops
    instead, evaluated when the program runs, and an op that can only be evaluated on the
    host is refused naming the node.
    `sequences` gives each graph input of sequence type its length, or its elements' shapes
    ({"xs": 3} or {"xs": [("a", 3), ("b", 3)]}; an optional input mapped to None is imported
    empty): sequences and optionals are lists and values known while importing, and a
    sequence input or output is one program input or output per element, "xs[0]", "xs[1]",
    ... (metadata "onnx.sequences"; _ops_sequence.py, docs/onnx.md).
    `shapes`, a dict, receives the symbolic shape of every ONNX value the program computes
    (name -> tuple of dim texts), to see what each stage of a model becomes.
    The program's `onnx_names` maps its input and output names back to the ONNX names
    ({"inputs": {...}, "outputs": {...}}): '.' becomes '_', and an output listed twice or
    whose sanitized name is taken gets '_2', '_3', ... (saved with the program as its metadata
    "onnx.names", JSON, so a saved and loaded program has them too).
    `onnx_types` maps them to their ONNX element types' names ("FLOAT", "FLOAT8E4M3FN"):
    an input or output of an ONNX-only type (float8, float4, int4, uint4, int2, uint2) is its
    storage in the program (u8 bit patterns, i8/u8 values); `to_program_inputs` and
    `to_onnx_outputs` convert ml_dtypes arrays to and from it.
    Raises UnsupportedOps (every op without a converter, with node names) or OnnxImportError
    naming the node that cannot be converted; nothing else (a model that is not ONNX, hostile
    attributes or metadata: OnnxImportError too)."""
    if not isinstance(model, onnx.ModelProto):
        try:
            model = onnx.load(str(model))
        except OSError:
            raise
        except Exception as e:  # a file that is not an ONNX model (protobuf's DecodeError)
            raise ImportError_("%s is not a readable ONNX model: %s: %s" %
                               (model, type(e).__name__, e)) from None
    imp = None
    try:
        cap = MAX_FOLD_ELEMENTS if max_fold_elements is None else max_fold_elements
        if isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or cap < 0:
            raise ImportError_("max_fold_elements must be an int >= 0, not %r" % (cap,))
        if sequences is not None and not isinstance(sequences, Mapping):
            raise ImportError_("sequences must map graph input names to lengths or lists of "
                               "shapes, not %r" % (sequences,))
        imp = Importer(model, dynamic, dims, parameters, constraints, fold_batch_norm,
                       int(cap), sequences)
        imp.shapes = shapes
        program = imp.run()
        # Saved with the program (metadata "onnx.names" / "onnx.types", JSON in the model's
        # order), so a program loaded elsewhere still knows them (Program.onnx_names / types).
        try:
            return program.with_metadata({
                "onnx.names": json.dumps(imp.onnx_names, separators=(",", ":"),
                                         ensure_ascii=False),
                "onnx.types": json.dumps(imp.onnx_types, separators=(",", ":"),
                                         ensure_ascii=False),
                **({"onnx.sequences": json.dumps(imp.sequences, separators=(",", ":"),
                                                 ensure_ascii=False)}
                   if imp.sequences["inputs"] or imp.sequences["outputs"] else {})})
        finally:
            program.close()
    except (ImportError_, Error):
        raise
    except Exception as e:  # hostile metadata or attributes: RecursionError, JSON, types
        where = imp.label if imp is not None and imp.label else "reading the model"
        raise ImportError_("%s: %s: %s" % (where, type(e).__name__, str(e)[:300])) from None
    finally:
        if imp is not None:
            imp.scope.close()



# ---- Helpers for converters --------------------------------------------------------------

def _axis(a: int, rank: int) -> int:
    if not -rank <= a < max(rank, 1):
        raise ImportError_("axis %d is out of range for rank %d" % (a, rank))
    return a + rank if a < 0 else a


def _axes_arg(ctx: Importer, ins: List[Optional[Val]], at: Dict[str, Any], input_opset: int,
              index: int = 1) -> Optional[List[int]]:
    """Axes from the attribute (before `input_opset`) or the input at `index`."""
    if ctx.opset < input_opset:
        return list(at["axes"]) if "axes" in at else None
    if len(ins) > index and ins[index] is not None:
        return [int(x) for x in ctx.ints(ins[index], "input 'axes'")]
    return None


def _scalar(ctx: Importer, v: Val, like: Tensor) -> Tensor:
    return ctx.t(v, like.dtype)


# Nodes on f16/bf16 compute in f32 and round once per node, as the library's own ops do
# (cc/trace/narrow.cc): a node written as several library ops would otherwise round after each
# (attention, normalizations, losses). Nodes that move or convert elements keep their inputs, as
# do nodes whose output type is an attribute; LayerNormalization's mean and inverse standard
# deviation stay f32 (stash_type).
NARROW_AS_IS = {"Cast", "CastLike", "Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze",
                "Flatten", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND",
                "Expand", "Tile", "Pad", "Shape", "Size", "DepthToSpace", "SpaceToDepth",
                "Where", "Compress", "If", "Loop", "Scan", "IsNaN", "IsInf", "Equal"}


def _convert_once(ctx: Importer, key: str, node: Any, ins: List[Optional[Val]],
                  at: Dict[str, Any]) -> List[Val]:
    narrow = next((v.tensor.dtype for v in ins if v is not None and v.tensor is not None
                   and v.tensor.dtype in (F16, BF16)), None)
    if narrow is None or node.op_type in NARROW_AS_IS or \
            any(a in at for a in ("to", "dtype", "output_datatype")):
        return CONVERTERS[key](ctx, node, ins, at)
    wide = [v if v is None or v.tensor is None or v.tensor.dtype != narrow else
            Val(v.tensor.astype(F32), v.host, v.param, v.etype) for v in ins]
    outs = CONVERTERS[key](ctx, node, wide, at)
    keep_f32 = 1 if node.op_type == "LayerNormalization" else len(outs)
    return [o if i >= keep_f32 or o.tensor is None or o.tensor.dtype != F32 else
            Val(o.tensor.astype(narrow)) for i, o in enumerate(outs)]


def _const_like(ctx: Importer, value: float, like: Tensor) -> Tensor:
    return ctx.scope.constant(np.array(value, dtype=like.dtype.numpy))


def _pair(ctx: Importer, ins: List[Optional[Val]]) -> Tuple[Tensor, Tensor]:
    """Two operands of one dtype: a host operand takes the traced one's dtype."""
    a, b = ins[0], ins[1]
    if a.tensor is None and b.tensor is not None:
        tb = ctx.t(b)
        return ctx.t(a, tb.dtype if a.host.dtype.kind != "b" else None), tb
    ta = ctx.t(a)
    return ta, ctx.t(b, ta.dtype if b.tensor is None and b.host.dtype.kind != "b" else None)


def _asserting(ctx: Importer, fn: Callable[[], Tensor],
               pairs: Callable[[], List[Tuple[Any, Any]]], what: str) -> Tensor:
    """fn(), and when it cannot decide that sizes the ONNX op requires to be equal are (the
    symbolic `pairs`, such as floordiv(h, 2) and floordiv(h + 1, 2), equal for even h only),
    asserts those equalities, checked at run time, and tries again: the model promises them,
    so the program states them instead of refusing the model."""
    try:
        return fn()
    except Inconclusive:
        todo = [(a, b) for a, b in pairs() if (isinstance(a, Dim) or isinstance(b, Dim)) and
                str(a) != str(b)]
        if not todo:
            raise
        for a, b in todo:
            ctx.scope.check(a, "==", b, "%s: %s (%s == %s)" % (ctx.label, what, a, b))
        return fn()


def _matmul_checked(ctx: Importer, a: Tensor, b: Tensor) -> Tensor:
    return _asserting(ctx, lambda: a.matmul(b), lambda: [
        (ctx.shape(a)[-1], ctx.shape(b)[-2 if b.ndim > 1 else -1])],
        "the contracting sizes must be equal")


def _same_sizes(ctx: Importer, ts: List[Tensor], skip: Optional[int] = None
                ) -> List[Tuple[Any, Any]]:
    """Pairs of sizes that ONNX requires equal: the trailing-aligned axes of `ts` (but
    `skip`) where neither is 1, against the first tensor's."""
    shapes = [ctx.shape(t) for t in ts]
    n = max(len(d) for d in shapes)
    out = []
    for i in range(1, n + 1):
        if skip is not None and n - i == skip:
            continue
        sizes = [d[-i] for d in shapes if len(d) >= i and not (isinstance(d[-i], int) and
                                                               d[-i] == 1)]
        out += [(x, sizes[0]) for x in sizes[1:]]
    return out


def _onnx_type(dtype: DType) -> int:
    """The ONNX element type of a library element type."""
    return next(k for k, v in ONNX_DTYPES.items() if v == dtype)


# The converters register themselves in CONVERTERS/HOST when imported.
from . import _narrow_types  # noqa: E402
from . import (_ops_control, _ops_einsum, _ops_elementwise, _ops_index, _ops_nn, _ops_recurrent,  # noqa: E402,F401
               _ops_misc, _ops_quant, _ops_resize, _ops_sequence, _ops_shape)
