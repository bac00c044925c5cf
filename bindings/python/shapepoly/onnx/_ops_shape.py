"""ONNX converters: shapes and indexing (Reshape, Slice, Gather, Pad, ...), constants and the host
evaluation of shape computations."""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from onnx import TensorProto

from .._core import BOOL, I64, Dim, Tensor, Truth, concatenate
from ._import import (BIG, HOST, ONNX_DTYPES, ONNX_OF_NUMPY, ImportError_, Importer, Val,
                      _asserting, _axes_arg, _axis, _const_like, _int, _norm,
                      _same_sizes, converter, dmax, dmin, host, prod)


# ---- Shapes ------------------------------------------------------------------------------

def _reshape_dims(ctx: Importer, in_dims: List[Any], shape: List[Any], allowzero: bool
                  ) -> List[Any]:
    out: List[Any] = []
    for i, s in enumerate(shape):
        if isinstance(s, int) and s == 0 and not allowzero:
            out.append(in_dims[i])
        elif isinstance(s, int) and s == -1:
            out.append(None)
        else:
            out.append(s)
    return out


@converter("Reshape")
def _reshape(ctx, node, ins, at):
    x = ctx.t(ins[0])
    shape = list(at["shape"]) if ctx.opset < 5 else ctx.ints(ins[1], "input 'shape'")
    dims = _reshape_dims(ctx, ctx.shape(x), shape, at.get("allowzero", 0))
    if None in dims:
        return [Val(x.reshape(dims))]
    return [Val(_asserting(ctx, lambda: x.reshape(dims), lambda: [(prod(ctx.shape(x)),
                                                                    prod(dims))],
                           "the element count must not change"))]


@host("Reshape")
def _h_reshape(ctx, node, hs, at):
    shape = [_int(s) for s in hs[1].reshape(-1).tolist()]
    dims = _reshape_dims(ctx, list(hs[0].shape), shape, at.get("allowzero", 0))
    if not all(isinstance(d, int) or d is None for d in dims):
        return None
    return [hs[0].reshape([-1 if d is None else d for d in dims])]


@converter("Flatten")
def _flatten(ctx, node, ins, at):
    x = ctx.t(ins[0])
    dims = ctx.shape(x)
    axis = at.get("axis", 1)
    axis = axis + len(dims) if axis < 0 else axis  # in [-rank, rank]
    if not 0 <= axis <= len(dims):
        raise ImportError_("axis %d is out of range for rank %d" % (at.get("axis", 1),
                                                                    len(dims)))
    return [Val(x.reshape([prod(dims[:axis]), prod(dims[axis:])]))]


@host("Flatten")
def _h_flatten(ctx, node, hs, at):
    a = hs[0]
    axis = at.get("axis", 1)
    axis = axis + a.ndim if axis < 0 else axis
    return [a.reshape(int(np.prod(a.shape[:axis])), -1)]


@converter("Transpose")
def _transpose(ctx, node, ins, at):
    x = ctx.t(ins[0])
    perm = at.get("perm") or list(reversed(range(x.ndim)))
    return [Val(x.transpose(*perm))]


@host("Transpose")
def _h_transpose(ctx, node, hs, at):
    return [np.transpose(hs[0], at.get("perm"))]


@converter("Concat")
def _concat(ctx, node, ins, at):
    vs = [v for v in ins if v is not None]
    first = next((v for v in vs if v.tensor is not None), vs[0])
    t0 = ctx.t(first)
    ts = [ctx.t(v, t0.dtype) for v in vs]
    axis = _axis(at["axis"], t0.ndim)
    return [Val(_asserting(ctx, lambda: concatenate(ts, axis),
                           lambda: _same_sizes(ctx, ts, axis),
                           "the sizes off the concatenation axis must be equal"))]


@host("Concat")
def _h_concat(ctx, node, hs, at):
    hs = [h for h in hs if h is not None]
    if any(h.dtype == object for h in hs):
        hs = [h.astype(object) for h in hs]
    return [np.concatenate(hs, axis=at["axis"])]


@converter("Split")
def _split(ctx, node, ins, at):
    x = ctx.t(ins[0])
    dims = ctx.shape(x)
    axis = _axis(at.get("axis", 0), x.ndim)
    n = len(node.output)
    if ctx.opset < 13:
        sizes = list(at["split"]) if "split" in at else None
    else:
        sizes = ctx.ints(ins[1], "input 'split'") if len(ins) > 1 and ins[1] is not None \
            else None
    d = dims[axis]
    if sizes is None:
        n = at.get("num_outputs", n)
        chunk = (d + (n - 1)) // n if "num_outputs" in at else d // n
        sizes = [chunk] * (n - 1) + [d - chunk * (n - 1)]
    outs, start = [], 0
    for s in sizes:
        lo = [None] * x.ndim
        hi = [None] * x.ndim
        lo[axis], hi[axis] = start, _int(start + s)
        outs.append(Val(x.slice(lo, hi)))
        start = _int(start + s)
    return outs


def _clamp_start(s: Any, d: Any) -> Any:
    if isinstance(s, int):
        if s >= BIG:
            return d
        if s <= -BIG:
            return 0
        return dmax(_int(d + s), 0) if s < 0 else dmin(s, d)
    return dmin(s, d)


def _slice_params(ctx: Importer, dims: List[Any], starts: List[Any], ends: List[Any],
                  axes: List[int], steps: List[int]) -> Tuple[List[Any], List[Any], List[int],
                                                              List[int]]:
    """Per axis start, limit, stride (>= 1) and the axes to reverse first (negative steps)."""
    rank = len(dims)
    lo: List[Any] = [0] * rank
    hi: List[Any] = list(dims)
    st = [1] * rank
    rev = []
    for s, e, a, k in zip(starts, ends, axes, steps):
        a = _axis(a, rank)
        d = dims[a]
        if k == 0:
            raise ImportError_("slice step 0")
        if k > 0:
            b = _clamp_start(s, d)
            f = _clamp_start(e, d)
        else:
            # In the reversed axis, index i is d - 1 - i.
            rev.append(a)
            if isinstance(s, int) and s >= BIG:
                b = 0
            else:
                sc = _int(d + s) if isinstance(s, int) and s < 0 else s
                b = dmax(_int(d - 1 - dmin(sc, _int(d - 1))), 0)
            if isinstance(e, int) and e <= -BIG:
                f = d
            else:
                ec = _int(d + e) if isinstance(e, int) and e < 0 else e
                f = dmin(_int(d - 1 - dmax(ec, -1)), d)
            k = -k
        lo[a], hi[a], st[a] = b, dmax(f, b), k
    return lo, hi, st, rev


def _slice_args(ctx: Importer, ins: List[Optional[Val]], at: Dict[str, Any], rank: int
                ) -> Tuple[List[Any], List[Any], List[int], List[int]]:
    if ctx.opset < 10:
        starts, ends = list(at["starts"]), list(at["ends"])
        axes = list(at.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = ctx.ints(ins[1], "input 'starts'")
        ends = ctx.ints(ins[2], "input 'ends'")
        axes = [int(a) for a in ctx.ints(ins[3], "input 'axes'")] \
            if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
        steps = [int(a) for a in ctx.ints(ins[4], "input 'steps'")] \
            if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    return starts, ends, axes, steps


@converter("Slice")
def _slice(ctx, node, ins, at):
    x = ctx.t(ins[0])
    dims = ctx.shape(x)
    lo, hi, st, rev = _slice_params(ctx, dims, *_slice_args(ctx, ins, at, x.ndim))
    if rev:
        x = x.reverse(*rev)
    return [Val(x.slice(lo, hi, st))]


@host("Slice")
def _h_slice(ctx, node, hs, at):
    a = hs[0]
    vals = [None if h is None else Val(host=h) for h in hs]
    starts, ends, axes, steps = _slice_args(ctx, vals, at, a.ndim)
    idx = [slice(None)] * a.ndim
    for s, e, ax, k in zip(starts, ends, axes, steps):
        if not all(isinstance(v, int) for v in (s, e)):
            return None
        idx[_axis(ax, a.ndim)] = slice(max(min(s, 1 << 62), -(1 << 62)),
                                       max(min(e, 1 << 62), -(1 << 62)), k)
    return [a[tuple(idx)]]


def _gather_indices(ctx: Importer, v: Val, d: Any) -> Tensor:
    if v.tensor is None and v.host.dtype != object:
        idx = v.host
        if idx.dtype.kind not in "iu":
            raise ImportError_("Gather indices must be integers")
        if not (idx < 0).any():
            return ctx.scope.constant(idx.astype(np.int64))
        if isinstance(d, int):
            return ctx.scope.constant(np.where(idx < 0, idx + d, idx).astype(np.int64))
    # Negative indices into a symbolic axis (or run-time indices): fixed at run time.
    t = ctx.t(v)
    zero = _const_like(ctx, 0, t)
    size = ctx.scope.dim_value(d).astype(t.dtype) if isinstance(d, Dim) else _const_like(ctx, d, t)
    return (t < zero).select(t + size, t)


@converter("Gather")
def _gather(ctx, node, ins, at):
    x = ctx.t(ins[0])
    axis = _axis(at.get("axis", 0), x.ndim)
    idx = _gather_indices(ctx, ins[1], ctx.shape(x)[axis])
    return [Val(x.take(idx, axis))]


@host("Gather")
def _h_gather(ctx, node, hs, at):
    a, idx = hs
    axis = at.get("axis", 0)
    idx = np.where(idx < 0, idx + a.shape[axis], idx)
    return [np.take(a, idx, axis=axis)]


# Data-dependent sizes: each makes an unbacked variable (u0, u1, ...) for the count.
@converter("NonZero")
def _nonzero(ctx, node, ins, at):
    """int64 [rank, u]: ONNX's layout is the transpose of argwhere's [u, rank]."""
    return [Val(ctx.t(ins[0]).nonzero().transpose(1, 0))]


@host("NonZero")
def _h_nonzero(ctx, node, hs, at):
    a = hs[0]
    return None if a.dtype == object else [np.argwhere(a).T.astype(np.int64)]


@converter("Compress")
def _compress(ctx, node, ins, at):
    """The slices of x along `axis` (x flattened without it) where the rank-1 `condition` is
    true. A condition shorter than the axis selects among the first entries only (ONNX): x is
    sliced to the condition's length first, which must then be provably <= the axis."""
    x, cond = ctx.t(ins[0]), ctx.t(ins[1], BOOL)
    if cond.ndim != 1:
        raise ImportError_("%s: the condition has rank %d, not 1" % (ctx.label, cond.ndim))
    if "axis" in at:
        axis = _axis(at["axis"], x.ndim)
    else:
        x, axis = x.reshape(None), 0
    d, c = x.shape[axis], cond.shape[0]
    if d.compare("==", c) is not Truth.TRUE:
        limit: List[Any] = [None] * x.ndim
        limit[axis] = c
        x = x.slice(None, limit)
    return [Val(x.boolean_mask(cond, axis))]


@host("Compress")
def _h_compress(ctx, node, hs, at):
    a, cond = hs
    if a.dtype == object:
        return None
    return [np.compress(cond.astype(bool), a, axis=at.get("axis"))]


def _squeeze_dims(ctx: Importer, dims: List[Any], axes: Optional[List[int]]) -> List[Any]:
    if axes is None:
        return [d for d in dims if not (isinstance(d, int) and d == 1)]
    axes = {_axis(a, len(dims)) for a in axes}
    for a in axes:
        if not (isinstance(dims[a], int) and dims[a] == 1):
            raise ImportError_("squeezed axis %d has size %s, not 1" % (a, dims[a]))
    return [d for i, d in enumerate(dims) if i not in axes]


def _unsqueeze_dims(ctx: Importer, dims: List[Any], axes: List[int]) -> List[Any]:
    rank = len(dims) + len(axes)
    axes = sorted(_axis(a, rank) for a in axes)
    out = list(dims)
    for a in axes:
        out.insert(a, 1)
    return out


@converter("Squeeze", "Unsqueeze")
def _squeeze(ctx, node, ins, at):
    x = ctx.t(ins[0])
    axes = _axes_arg(ctx, ins, at, 13)
    dims = ctx.shape(x)
    if node.op_type == "Squeeze":
        return [Val(x.reshape(_squeeze_dims(ctx, dims, axes)))]
    if axes is None:
        raise ImportError_("Unsqueeze needs axes")
    return [Val(x.reshape(_unsqueeze_dims(ctx, dims, axes)))]


@host("Squeeze", "Unsqueeze")
def _h_squeeze(ctx, node, hs, at):
    vals = [None if h is None else Val(host=h) for h in hs]
    axes = _axes_arg(ctx, vals, at, 13)
    dims = list(hs[0].shape)
    if node.op_type == "Squeeze":
        return [hs[0].reshape(_squeeze_dims(ctx, dims, axes))]
    return [hs[0].reshape(_unsqueeze_dims(ctx, dims, axes))]


def _broadcast_dims(a: List[Any], b: List[Any]) -> List[Any]:
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if isinstance(y, int) and y == 1:
            out.append(x)
        elif isinstance(x, int) and x == 1:
            out.append(y)
        else:
            out.append(x if isinstance(x, Dim) or not isinstance(y, Dim) else y)
    return out


@converter("Expand")
def _expand(ctx, node, ins, at):
    x = ctx.t(ins[0])
    shape = ctx.ints(ins[1], "input 'shape'")
    return [Val(x.broadcast_to(_broadcast_dims(ctx.shape(x), shape)))]


@converter("Tile")
def _tile(ctx, node, ins, at):
    x = ctx.t(ins[0])
    reps = ctx.ints(ins[1], "input 'repeats'")
    dims = ctx.shape(x)
    if all(isinstance(r, int) and r == 1 for r in reps):
        return [Val(x)]
    inter = [z for d in dims for z in (1, d)]
    big = [z for r, d in zip(reps, dims) for z in (r, d)]
    y = x.reshape(inter).broadcast_to(big)
    return [Val(y.reshape([_int(r * d) if isinstance(d, Dim) or isinstance(r, Dim) else r * d
                           for r, d in zip(reps, dims)]))]


@converter("Pad")
def _pad(ctx, node, ins, at):
    x = ctx.t(ins[0])
    rank = x.ndim
    mode = at.get("mode", "constant")
    if ctx.opset < 11:
        pads, value = list(at.get("pads", at.get("paddings", []))), at.get("value", 0.0)
        axes = list(range(rank))
    else:
        pads = ctx.ints(ins[1], "input 'pads'")
        value = 0.0
        if len(ins) > 2 and ins[2] is not None:
            value = ctx.h(ins[2], "input 'constant_value'").reshape(-1)
            value = value[0].item() if value.size else 0.0
        axes = [int(a) for a in ctx.ints(ins[3], "input 'axes'")] \
            if len(ins) > 3 and ins[3] is not None else list(range(rank))
    n = len(axes)
    low, high = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        low[_axis(a, rank)], high[_axis(a, rank)] = pads[i], pads[n + i]
    neg = any(isinstance(p, int) and p < 0 for p in low + high)
    if neg:  # negative pads crop
        dims = ctx.shape(x)
        lo = [-p if isinstance(p, int) and p < 0 else 0 for p in low]
        hi = [_int(d + p) if isinstance(p, int) and p < 0 else d for d, p in zip(dims, high)]
        x = x.slice(lo, hi)
        low = [0 if isinstance(p, int) and p < 0 else p for p in low]
        high = [0 if isinstance(p, int) and p < 0 else p for p in high]
    if mode == "constant":
        return [Val(x.pad(low, high, float(value)))]
    return [Val(x.pad_mode(low, high, mode, float(value)))]


# ---- Constants and shape values -----------------------------------------------------------

@converter("Constant", "Shape", "Size")
def _known(ctx, node, ins, at):
    """Ops whose results are always known while importing: their HOST entry."""
    return [Val(host=_norm(np.asarray(r)))
            for r in HOST[node.op_type](ctx, node, [None if v is None else v.host
                                                    for v in ins], at)]


@host("Constant")
def _constant(ctx, node, hs, at):
    for k in ("value", "sparse_value"):
        if k in at:
            if k == "sparse_value":
                raise ImportError_("sparse constants are not supported")
            return [np.asarray(at[k])]
    if "value_float" in at:
        return [np.array(at["value_float"], np.float32)]
    if "value_floats" in at:
        return [np.array(at["value_floats"], np.float32)]
    if "value_int" in at:
        return [np.array(at["value_int"], np.int64)]
    if "value_ints" in at:
        return [np.array(at["value_ints"], np.int64)]
    raise ImportError_("Constant without a numeric value")


@host("Shape", "Size")
def _shape(ctx, node, hs, at):
    v = ctx.vals[node.input[0]]
    dims = list(v.host.shape) if v.tensor is None else ctx.shape(v.tensor)
    if node.op_type == "Size":
        return [np.array(prod(dims), dtype=object)]
    rank = len(dims)
    start, end = at.get("start", 0), at.get("end", rank)
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = max(0, min(rank, end + rank if end < 0 else end))
    out = np.empty(max(end - start, 0), dtype=object)
    out[:] = dims[start:end]
    return [out]


def _constant_value(at: Dict[str, Any]) -> np.ndarray:
    v = at.get("value")
    return np.zeros((), np.float32) if v is None else np.asarray(v).reshape(())


@converter("ConstantOfShape")
def _constant_of_shape(ctx, node, ins, at):
    shape = ctx.ints(ins[0], "input 'shape'")
    value = _constant_value(at)
    return [Val(ctx.scope.constant(value).broadcast_to(shape))]


@host("ConstantOfShape")
def _h_constant_of_shape(ctx, node, hs, at):
    shape = [_int(s) for s in hs[0].reshape(-1).tolist()]
    if not all(isinstance(s, int) for s in shape):
        return None
    return [np.full(shape, _constant_value(at))]


@converter("Range")
def _range(ctx, node, ins, at):
    start, limit, delta = (ctx.ints(v, "input %s" % w)[0]
                           for v, w in zip(ins, ("start", "limit", "delta")))
    if not isinstance(delta, int) or delta <= 0 or not all(
            isinstance(v, (int, Dim)) for v in (start, limit)):
        raise ImportError_("Range with a symbolic bound needs integer bounds and a positive "
                           "constant delta")
    n = dmax(_int((limit - start + delta - 1) // delta), 0)
    dt = ONNX_DTYPES[ONNX_OF_NUMPY.get(ins[0].host.dtype, TensorProto.INT64)] \
        if ins[0].host.dtype != object else I64
    r = ctx.scope.iota(dt, [n], 0)
    if delta != 1:
        r = r * _const_like(ctx, delta, r)
    s = ctx.t(Val(host=_norm(np.array([start], dtype=object))), dt).reshape(())
    return [Val(r + s)]


@host("Range")
def _h_range(ctx, node, hs, at):
    if any(h.dtype == object for h in hs):
        return None
    return [np.arange(hs[0].item(), hs[1].item(), hs[2].item(), dtype=hs[0].dtype)]


def _tdiv(a: Any, b: Any) -> Any:
    """ONNX integer Div (toward zero); a Dim is a size, >= 0, so floordiv."""
    if isinstance(a, Dim) or isinstance(b, Dim):
        return _int(a // b)
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@host("Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Not", "Neg", "Abs", "Where", "Cast",
      "Identity", "Sum", "Floor", "Ceil", "Sqrt", "Expand", "Tile", "ReduceProd", "ReduceSum",
      "ReduceMax", "ReduceMin", "Dropout")
def _h_elementwise(ctx, node, hs, at):
    op = node.op_type
    xs = [h for h in hs if h is not None]
    obj = any(h.dtype == object for h in xs)
    a = xs[0]
    if op == "Cast":
        to = at["to"]
        if to not in ONNX_DTYPES:
            return None
        if obj:
            if to not in (TensorProto.INT64, TensorProto.INT32):
                return None
            return [Val(host=a, etype=to)]
        return [a.astype(ONNX_DTYPES[to].numpy)]
    if op in ("Identity", "Dropout"):
        return [a] if op == "Identity" or len(node.output) < 2 or not node.output[1] else \
            [a, np.ones(a.shape, np.bool_)]
    if op in ("Max", "Min", "Sum") and len(xs) == 1:
        return [a]
    if op in ("Add", "Sub", "Mul", "Max", "Min", "Sum") and len(xs) >= 2:
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Sum": np.add,
             "Max": np.vectorize(dmax, otypes=[object]) if obj else np.maximum,
             "Min": np.vectorize(dmin, otypes=[object]) if obj else np.minimum}[op]
        r = a
        for b in xs[1:]:
            if obj:
                r, b = r.astype(object), b.astype(object)
            r = f(r, b)
        return [r]
    if op == "Div":
        b = xs[1]
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            return [a / b]
        return [np.vectorize(_tdiv, otypes=[object])(a.astype(object), b.astype(object))]
    if op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
        f = {"Equal": np.equal, "Less": np.less, "Greater": np.greater,
             "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal}[op]
        r = f(a.astype(object), xs[1].astype(object)) if obj else f(a, xs[1])
        return [np.asarray(r, dtype=np.bool_)]
    if op == "Where":
        c, x, y = hs
        if obj:
            x, y = x.astype(object), y.astype(object)
        return [np.where(c, x, y)]
    if op == "Mod" and obj:  # sizes: ONNX's integer Mod (fmod=0) is Python's %
        if at.get("fmod", 0):
            return None
        return [np.vectorize(lambda x, y: _int(x % y), otypes=[object])(
            a.astype(object), xs[1].astype(object))]
    if obj and op not in ("Neg", "Expand", "Tile", "ReduceProd", "ReduceSum", "ReduceMax",
                          "ReduceMin"):
        return None
    if op == "Mod":
        b = xs[1]
        return [np.fmod(a, b) if at.get("fmod", 0) else np.mod(a, b)]
    if op in ("And", "Or"):
        return [(np.logical_and if op == "And" else np.logical_or)(a, xs[1])]
    if op in ("Not", "Neg", "Abs", "Floor", "Ceil", "Sqrt"):
        f = {"Not": np.logical_not, "Neg": np.negative, "Abs": np.abs, "Floor": np.floor,
             "Ceil": np.ceil, "Sqrt": np.sqrt}[op]
        return [f(a) if not obj else np.vectorize(lambda x: -x, otypes=[object])(a)]
    if op in ("Expand", "Tile"):
        shape = [_int(s) for s in xs[1].reshape(-1).tolist()]
        if not all(isinstance(s, int) for s in shape):
            return None
        if op == "Tile":
            return [np.tile(a, shape)]
        return [a * np.ones(shape, dtype=a.dtype if not obj else np.int64)]
    # Reductions of host values: axes from the attribute or the input.
    vals = [None if h is None else Val(host=h) for h in hs]
    axes = _axes_arg(ctx, vals, at, 13 if op == "ReduceSum" else 18)
    keep = bool(at.get("keepdims", 1))
    if not axes:
        if at.get("noop_with_empty_axes", 0):
            return [a]
        axes = list(range(a.ndim))
    f = {"ReduceProd": np.prod, "ReduceSum": np.sum, "ReduceMax": np.max,
         "ReduceMin": np.min}[op]
    if obj and op in ("ReduceMax", "ReduceMin"):
        return None
    return [f(a, axis=tuple(axes), keepdims=keep)]
