"""ONNX sequences and optionals, in the importer only (programs hold tensors).

A sequence whose length is known while importing is a list of values (SeqVal): SequenceEmpty,
SequenceConstruct, SequenceInsert / SequenceErase / SequenceAt at positions known while
importing (a constant, or a size; a position computed at run time picks its element with
conds, whose sizes may then become data-dependent), SequenceLength (a constant),
ConcatFromSequence, SplitToSequence with a split known while importing, and SequenceMap
(its body imported once per element). An optional is empty or holds one value, known while
importing (OptVal): Optional, OptionalHasElement (a constant), OptionalGetElement.
Identity passes both on; Loop unrolls over them (a trip count known while importing), If
takes them from a branch known while importing, or from a cond over their elements when
both branches give sequences of one length (_ops_control.py).

A graph input of sequence type needs its length (import_model's `sequences`: an int, the
length, the elements' shapes coming from the sequence's element type; or a list of the
elements' shapes) and becomes one program input per element, '<name>[0]', '<name>[1]', ...;
an optional graph input is imported present, or empty when `sequences` maps it to None. A
graph output of sequence type becomes one program output per element, named the same way; an
empty optional output becomes none. The program's metadata "onnx.sequences" (JSON) records
them: {"inputs": {onnx name: [program names] or null (an empty optional)}, "outputs": {onnx
name: [program names] (a sequence), program name (an optional holding a tensor) or null (an
empty optional)}, "order": [the graph's output names]}; `sequence_inputs` and `onnx_values`
convert a run's inputs and outputs.
"""

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import TensorProto

from .._control_flow import cond as sp_cond
from .._core import I64, Dim, Tensor, concatenate
from ._ops_shape import _entries, _require, _size
from ._import import (ONNX_DTYPES, ImportError_, Importer, Val, _axis, _dtype_name, _int,
                      _narrow_types, _name, _onnx_type, converter)

META_KEY = "onnx.sequences"


class SeqVal:
    """A sequence of a length known while importing: its elements (Vals) and the ONNX element
    type of its tensors."""

    tensor = host = param = narrow = None  # not a tensor (generic code tests these)

    def __init__(self, items: Sequence[Any], etype: int = TensorProto.FLOAT) -> None:
        self.items: List[Any] = list(items)
        self.etype = etype


class OptVal:
    """An optional known while importing: `value` (a Val or SeqVal) or None (empty)."""

    tensor = host = param = narrow = None

    def __init__(self, value: Any) -> None:
        self.value = value


def is_value(v: Any) -> bool:
    """Whether `v` is a sequence or an optional (not a tensor)."""
    return isinstance(v, (SeqVal, OptVal))


def kind(v: Any) -> str:
    return "a sequence" if isinstance(v, SeqVal) else "an optional"


def flatten(v: Any) -> Any:
    """(structure, [Val]) of a value: a tensor is "t", a sequence ("seq", etype, [its
    elements' structures]), an optional ("opt", structure or None)."""
    if isinstance(v, SeqVal):
        parts = [flatten(x) for x in v.items]
        return ("seq", v.etype, [p[0] for p in parts]), [x for p in parts for x in p[1]]
    if isinstance(v, OptVal):
        if v.value is None:
            return ("opt", None), []
        st, xs = flatten(v.value)
        return ("opt", st), xs
    return "t", [v]


def unflatten(structure: Any, xs: List[Val]) -> Any:
    """The value of `structure` (flatten's) made of the Vals `xs` (consumed from the front)."""
    if structure == "t":
        return xs.pop(0)
    if structure[0] == "seq":
        return SeqVal([unflatten(st, xs) for st in structure[2]], structure[1])
    return OptVal(None if structure[1] is None else unflatten(structure[1], xs))


def describe(structure: Any) -> str:
    """A structure in words, for errors."""
    if structure == "t":
        return "a tensor"
    if structure[0] == "seq":
        return "a sequence of %d" % len(structure[2])
    return "an empty optional" if structure[1] is None else \
        "an optional holding %s" % describe(structure[1])


# Ops that take sequences or optionals as inputs (the others refuse them, naming the input).
SEQUENCE_OPS = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase",
                "SequenceAt", "SequenceLength", "ConcatFromSequence", "SplitToSequence",
                "SequenceMap", "Optional", "OptionalHasElement", "OptionalGetElement",
                "Identity", "If", "Loop"}
# The ops converted here (never evaluated on the host).
CONVERTED = SEQUENCE_OPS - {"Identity", "If", "Loop"}


def _seq(v: Any, what: str) -> SeqVal:
    if isinstance(v, OptVal) and isinstance(v.value, SeqVal):
        return v.value
    if not isinstance(v, SeqVal):
        raise ImportError_("%s is not a sequence" % what)
    return v


def _tensor_val(v: Any, what: str) -> Val:
    if isinstance(v, OptVal) and isinstance(v.value, Val):
        return v.value
    if v is None or is_value(v):
        raise ImportError_("%s must be a tensor, not %s" % (
            what, "absent" if v is None else kind(v)))
    return v


def _position(ctx: Importer, v: Optional[Val], n: int, hi: int, what: str) -> Any:
    """A position in [-n, hi] known while importing (normalized to >= 0), or the traced i64
    scalar of one computed at run time (normalized by the conds that use it)."""
    if v is None:
        return None
    if v.host is not None:
        a = v.host.reshape(-1)
        if a.size != 1:
            raise ImportError_("%s has %d elements, not 1" % (what, a.size))
        p = _int(a[0])
        if isinstance(p, Dim):
            raise ImportError_("%s is the symbolic size %s, not a number known while "
                               "importing" % (what, p))
        if not -n <= p <= hi:
            raise ImportError_("%s %d is out of range for a sequence of %d" % (what, p, n))
        return p + n if p < 0 else p
    t = ctx.t(v, I64)
    if t.ndim > 1 or (t.ndim == 1 and _int(t.shape[0]) != 1):
        raise ImportError_("%s must have one element" % what)
    t = t.reshape(())
    lo, top = ctx.scope.constant(np.array(-n, np.int64)), ctx.scope.constant(np.array(hi,
                                                                                    np.int64))
    _require(ctx, (t >= lo).logical_and(t <= top),
             "%s is in [%d, %d] (a sequence of %d)" % (what, -n, hi, n))
    return t


def _pick(ctx: Importer, p: Tensor, choices: List[Val], what: str) -> Val:
    """choices[p] for a run-time i64 scalar p in [0, len(choices)), as nested conds (a dim
    whose sizes differ between the choices becomes a data-dependent size). Beyond the range,
    the last choice."""
    if not choices:
        raise ImportError_("%s: no element to pick" % what)
    ts = [ctx.t(c) for c in choices]
    dtypes = {t.dtype for t in ts}
    ranks = {t.ndim for t in ts}
    if len(dtypes) > 1 or len(ranks) > 1:
        raise ImportError_("%s is computed at run time and the elements it may pick have "
                           "different element types or ranks" % what)
    out = ts[-1]
    for k in range(len(ts) - 2, -1, -1):
        hit = p == ctx.scope.constant(np.array(k, np.int64))
        take, rest = ts[k], out
        out = sp_cond(hit, lambda take=take: take, lambda rest=rest: rest)
    return Val(out)


def _normalized(ctx: Importer, p: Tensor, n: int) -> Tensor:
    """A run-time position in [-n, n) (or [-n, n] for an insertion) made >= 0."""
    zero = ctx.scope.constant(np.array(0, np.int64))
    return (p < zero).select(p + ctx.scope.constant(np.array(n, np.int64)), p)


@converter("SequenceEmpty")
def _sequence_empty(ctx, node, ins, at):
    etype = at.get("dtype", TensorProto.FLOAT)
    if etype not in ONNX_DTYPES:
        raise ImportError_("dtype=%s, which shapepoly does not have" % _dtype_name(etype))
    return [SeqVal([], etype)]


def _etype(v: Val) -> int:
    if v.narrow is not None:
        return v.narrow
    if v.tensor is not None:
        return _onnx_type(v.tensor.dtype)
    if v.host.dtype == object:
        return v.etype
    from ._import import ONNX_OF_NUMPY
    return ONNX_OF_NUMPY.get(v.host.dtype.newbyteorder("="), TensorProto.FLOAT)


@converter("SequenceConstruct")
def _sequence_construct(ctx, node, ins, at):
    items = [_tensor_val(v, "input %d" % k) for k, v in enumerate(ins)]
    if not items:
        raise ImportError_("SequenceConstruct needs at least one input")
    return [SeqVal(items, _etype(items[0]))]


@converter("SequenceInsert")
def _sequence_insert(ctx, node, ins, at):
    s = _seq(ins[0], "input 'input_sequence'")
    x = _tensor_val(ins[1], "input 'tensor'")
    n = len(s.items)
    p = _position(ctx, ins[2] if len(ins) > 2 else None, n, n, "input 'position'")
    if p is None:
        return [SeqVal(s.items + [x], s.etype)]
    if isinstance(p, int):
        return [SeqVal(s.items[:p] + [x] + s.items[p:], s.etype)]
    # A run-time position: element k is s[k] before it, x at it, s[k - 1] after it.
    p = _normalized(ctx, p, n)
    out = []
    for k in range(n + 1):
        before = [s.items[k]] if k < n else []
        after = [s.items[k - 1]] if k > 0 else []
        # p < k: s[k - 1]; p == k: x; p > k: s[k]. As choices over min(max(p - k + 1, 0), 2).
        sel = (p - ctx.scope.constant(np.array(k - 1, np.int64))).maximum(
            ctx.scope.constant(np.array(0, np.int64))).minimum(
            ctx.scope.constant(np.array(2, np.int64)))
        choices = (after or [x]) + [x] + (before or [x])
        out.append(_pick(ctx, sel, choices, "input 'position'"))
    return [SeqVal(out, s.etype)]


@converter("SequenceErase")
def _sequence_erase(ctx, node, ins, at):
    s = _seq(ins[0], "input 'input_sequence'")
    n = len(s.items)
    if n == 0:
        raise ImportError_("erasing from an empty sequence")
    p = _position(ctx, ins[1] if len(ins) > 1 else None, n, n - 1, "input 'position'")
    if p is None:
        return [SeqVal(s.items[:-1], s.etype)]
    if isinstance(p, int):
        return [SeqVal(s.items[:p] + s.items[p + 1:], s.etype)]
    p = _normalized(ctx, p, n)
    out = []
    for k in range(n - 1):
        # p > k: s[k]; p <= k: s[k + 1].
        sel = (p - ctx.scope.constant(np.array(k, np.int64))).maximum(
            ctx.scope.constant(np.array(0, np.int64))).minimum(
            ctx.scope.constant(np.array(1, np.int64)))
        out.append(_pick(ctx, sel, [s.items[k + 1], s.items[k]], "input 'position'"))
    return [SeqVal(out, s.etype)]


@converter("SequenceAt")
def _sequence_at(ctx, node, ins, at):
    s = _seq(ins[0], "input 'input_sequence'")
    n = len(s.items)
    if n == 0:
        raise ImportError_("SequenceAt on an empty sequence")
    p = _position(ctx, ins[1], n, n - 1, "input 'position'")
    if p is None:
        raise ImportError_("SequenceAt needs a position")
    if isinstance(p, int):
        return [s.items[p]]
    return [_pick(ctx, _normalized(ctx, p, n), s.items, "input 'position'")]


@converter("SequenceLength")
def _sequence_length(ctx, node, ins, at):
    return [Val(host=np.array(len(_seq(ins[0], "input 'input_sequence'").items), np.int64))]


@converter("ConcatFromSequence")
def _concat_from_sequence(ctx, node, ins, at):
    s = _seq(ins[0], "input 'input_sequence'")
    if not s.items:
        raise ImportError_("concatenating an empty sequence (the result's shape is unknown)")
    ts = [ctx.t(v) for v in s.items]
    axis = int(at["axis"])
    if at.get("new_axis", 0):
        rank = ts[0].ndim + 1
        a = _axis(axis, rank)
        ts = [t.reshape(ctx.shape(t)[:a] + [1] + ctx.shape(t)[a:]) for t in ts]
    else:
        a = _axis(axis, ts[0].ndim)
    return [Val(ts[0] if len(ts) == 1 else concatenate(ts, a))]


@converter("SplitToSequence")
def _split_to_sequence(ctx, node, ins, at):
    x = ctx.t(_tensor_val(ins[0], "input 'input'"))
    shape = ctx.shape(x)
    a = _axis(int(at.get("axis", 0)), x.ndim)
    size = shape[a]
    split = ins[1] if len(ins) > 1 else None
    keep = at.get("keepdims", 1)
    if split is not None and split.host is None:
        t = ctx.t(split, I64)
        if t.ndim == 0:
            raise ImportError_("input 'split' is a single size that the data gives, so the "
                               "length of the sequence (the number of pieces) is known only "
                               "at run time (sequences need a length known while importing)")
        # A list of sizes computed at run time: as many pieces as it has entries (a length
        # known while importing), each size data-dependent, summing to the axis (checked).
        sizes = [_size(e) for e in _entries(ctx, split, "input 'split'")]
        total: Any = 0
        for d in sizes:
            total = _int(total + d)
        ctx.scope.check(total, "==", size, "%s: the split sizes sum to the axis" % ctx.label)
        out, lo = [], 0
        for d in sizes:
            start, stop = [0] * x.ndim, list(shape)
            start[a], stop[a] = lo, _int(lo + d)
            out.append(Val(x.slice(start, stop)))
            lo = stop[a]
        return [SeqVal(out, _etype(Val(x)))]
    if split is None or split.host.ndim == 0:
        if not isinstance(size, int):
            raise ImportError_("axis %d has the symbolic size %s, so the length of the "
                               "sequence is known only at run time (sequences need a length "
                               "known while importing)" % (a, size))
        step = 1 if split is None else _int(split.host.reshape(-1)[0])
        if not isinstance(step, int) or step < 1:
            raise ImportError_("input 'split' must be a positive number, not %s" % (step,))
        sizes = [min(step, size - i) for i in range(0, size, step)]
    else:
        sizes = [_int(d) for d in split.host.reshape(-1).tolist()]
        keep = 1  # keepdims is ignored when split is given
    lo: Any = 0
    out = []
    for d in sizes:
        if isinstance(d, int) and d < 0:
            raise ImportError_("input 'split' has the negative size %d" % d)
        start, stop = [0] * x.ndim, list(shape)
        start[a], stop[a] = lo, _int(lo + d) if not isinstance(lo, int) or \
            not isinstance(d, int) else lo + d
        piece = x.slice(start, stop)
        if not keep and split is None:
            piece = piece.reshape(shape[:a] + shape[a + 1:])
        out.append(Val(piece))
        lo = stop[a]
    if split is not None and split.host.ndim > 0:
        total = lo
        if not (isinstance(total, int) and isinstance(size, int) and total == size) and \
                str(total) != str(size):
            ctx.scope.check(total, "==", size, "%s: the split sizes add up to the axis size" %
                            ctx.label)
    return [SeqVal(out, _etype(Val(x)))]


@converter("SequenceMap")
def _sequence_map(ctx, node, ins, at):
    body = at["body"]
    if not ins or not isinstance(ins[0], SeqVal):
        raise ImportError_("input 0 must be a sequence")
    n = len(ins[0].items)
    for k, v in enumerate(ins):
        if isinstance(v, SeqVal) and len(v.items) != n:
            raise ImportError_("input %d is a sequence of %d elements, input 0 of %d" %
                               (k, len(v.items), n))
    name = "'%s' (SequenceMap)" % (node.name or node.output[0])
    outs: List[List[Any]] = [[] for _ in body.output]
    for i in range(n):
        args = [v.items[i] if isinstance(v, SeqVal) else v for v in ins]
        res = ctx.run_graph(body, args, "the body of %s, element %d" % (name, i))
        for k, r in enumerate(res):
            outs[k].append(r)
    etypes = [o.type.tensor_type.elem_type or TensorProto.FLOAT for o in body.output]
    return [SeqVal(items, e) for items, e in zip(outs, etypes)]


@converter("Optional")
def _optional(ctx, node, ins, at):
    if ins and ins[0] is not None:
        return [OptVal(ins[0])]
    if "type" not in at:
        raise ImportError_("an empty Optional needs the attribute 'type'")
    return [OptVal(None)]


@converter("OptionalHasElement")
def _optional_has_element(ctx, node, ins, at):
    v = ins[0] if ins else None
    has = v is not None and not (isinstance(v, OptVal) and v.value is None)
    return [Val(host=np.array(has))]


@converter("OptionalGetElement")
def _optional_get_element(ctx, node, ins, at):
    v = ins[0] if ins else None
    if v is None:
        raise ImportError_("OptionalGetElement needs an input")
    if isinstance(v, OptVal):
        if v.value is None:
            raise ImportError_("the optional is empty (known while importing)")
        return [v.value]
    return [v]


# ---- Graph inputs and outputs -----------------------------------------------------------

Lengths = Mapping[str, Union[int, Sequence[Sequence[Any]]]]


def graph_input(ctx: Importer, inp: Any, lengths: Lengths) -> Any:
    """The value of graph input `inp` of sequence or optional type, and its program inputs
    (recorded in ctx.sequences)."""
    tp = inp.type
    if tp.HasField("optional_type"):
        elem = tp.optional_type.elem_type
        if inp.name in lengths and lengths[inp.name] is None:
            ctx.sequences["inputs"][inp.name] = None  # imported empty
            return OptVal(None)
        if elem.HasField("tensor_type"):
            fake = onnx.ValueInfoProto(name=inp.name, type=elem)
            return OptVal(_tensor_input(ctx, fake, inp.name, None))
        if elem.HasField("sequence_type"):
            return OptVal(_sequence_input(ctx, inp.name, elem.sequence_type, lengths))
        raise ImportError_("graph input '%s' is an optional of a type shapepoly does not "
                           "import" % inp.name)
    if tp.HasField("sequence_type"):
        return _sequence_input(ctx, inp.name, tp.sequence_type, lengths)
    raise ImportError_("graph input '%s' is not a tensor, sequence or optional" % inp.name)


def _tensor_input(ctx: Importer, inp: Any, onnx_name: str, program_name: Optional[str]) -> Val:
    t = ctx._input(inp, program_name)
    etype = inp.type.tensor_type.elem_type
    ctx.onnx_types["inputs"][program_name or _name(onnx_name)] = _dtype_name(etype)
    ctx.data_inputs.append(t)
    return Val(tensor=t, narrow=etype if etype in _narrow_types.ONLY else None)


def _sequence_input(ctx: Importer, name: str, st: Any, lengths: Lengths) -> SeqVal:
    if name not in lengths:
        raise ImportError_("graph input '%s' is a sequence: its length is needed while "
                           "importing (import_model's sequences={'%s': length or [shapes of "
                           "the elements]})" % (name, name))
    spec = lengths[name]
    elem = st.elem_type
    if not elem.HasField("tensor_type"):
        raise ImportError_("graph input '%s' is a sequence of non-tensors" % name)
    tt = elem.tensor_type
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if spec < 0:
            raise ImportError_("sequences['%s'] = %d is not a length" % (name, spec))
        if not tt.HasField("shape"):
            raise ImportError_("graph input '%s' is a sequence whose element type has no "
                               "shape: give the elements' shapes (sequences={'%s': [shape, "
                               "...]})" % (name, name))
        shapes: List[Any] = [None] * int(spec)
    elif isinstance(spec, (list, tuple)):
        shapes = list(spec)
    else:
        raise ImportError_("sequences['%s'] must be a length or a list of shapes, not %r" %
                           (name, spec))
    items = []
    names = []
    for k, shape in enumerate(shapes):
        pname = "%s[%d]" % (_name(name), k)
        t = onnx.TypeProto()
        t.tensor_type.elem_type = tt.elem_type
        if shape is None:
            t.tensor_type.shape.CopyFrom(tt.shape)
        else:
            t.tensor_type.shape.SetInParent()
            for d in shape:
                dim = t.tensor_type.shape.dim.add()
                if isinstance(d, (int, np.integer)):
                    dim.dim_value = int(d)
                else:
                    dim.dim_param = str(d)
        vi = onnx.ValueInfoProto(name=name, type=t)
        items.append(_tensor_input(ctx, vi, name, pname))
        ctx.onnx_names["inputs"][pname] = name
        names.append(pname)
    ctx.sequences["inputs"][name] = names
    return SeqVal(items, tt.elem_type)


def graph_output(ctx: Importer, onnx_name: str, v: Any, taken: Any) -> Dict[str, Any]:
    """The program outputs of graph output `onnx_name` holding a sequence or an optional:
    program name -> Val (recorded in ctx.sequences)."""
    base = _name(onnx_name)
    if isinstance(v, OptVal):
        if v.value is None:
            ctx.sequences["outputs"][onnx_name] = None
            return {}
        if isinstance(v.value, Val):
            name = base
            while taken(name):
                name += "_"
            ctx.sequences["outputs"][onnx_name] = name
            return {name: v.value}
        v = v.value
    out = {}
    for k, item in enumerate(v.items):
        name = "%s[%d]" % (base, k)
        while taken(name):
            name = "%s_[%d]" % (name.rsplit("[", 1)[0], k)
        out[name] = item
    ctx.sequences["outputs"][onnx_name] = list(out)
    return out


# ---- Running a program with ONNX values ---------------------------------------------------

def _meta(program: Any) -> Dict[str, Any]:
    md = getattr(program, "metadata", None) or {}
    raw = md.get(META_KEY)
    if not raw:
        return {"inputs": {}, "outputs": {}}
    return json.loads(raw)


def sequence_inputs(program: Any, feeds: Mapping[str, Any]) -> Dict[str, Any]:
    """`feeds` (ONNX input name -> array, or a list of arrays for a sequence input) as the
    program's inputs (sequence elements as '<name>[k]'; others as they are named)."""
    seqs = _meta(program).get("inputs", {})
    out: Dict[str, Any] = {}
    for name, x in feeds.items():
        if name in seqs and seqs[name] is None:  # an optional imported empty
            if x is not None:
                raise ValueError("input '%s' is an optional imported empty, given a value" %
                                 name)
            continue
        if name in seqs:
            names = seqs[name]
            if not isinstance(x, (list, tuple)) or len(x) != len(names):
                raise ValueError("input '%s' is a sequence of %d elements (as imported), "
                                 "given %s" % (name, len(names), "%d" % len(x) if isinstance(
                                     x, (list, tuple)) else type(x).__name__))
            out.update(zip(names, x))
        else:
            out[_name(name)] = x
    return out


def onnx_values(program: Any, outputs: Mapping[str, Any]) -> Dict[str, Any]:
    """A run's outputs (program output name -> array) by ONNX output name, in the graph's
    order: a sequence as a list of its elements, an empty optional as None."""
    meta = _meta(program)
    seqs = meta.get("outputs", {})
    names = (getattr(program, "onnx_names", None) or {}).get("outputs", {})
    grouped = set()
    res: Dict[str, Any] = {}
    for onnx_name, spec in seqs.items():
        if spec is None:
            res[onnx_name] = None
        elif isinstance(spec, str):
            res[onnx_name] = outputs[spec]
            grouped.add(spec)
        else:
            res[onnx_name] = [outputs[n] for n in spec]
            grouped.update(spec)
    for pname, y in outputs.items():
        if pname not in grouped:
            res[names.get(pname, pname)] = y
    order = meta.get("order") or list(res)
    return {k: res[k] for k in order if k in res}
