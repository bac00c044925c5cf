"""ONNX converters: shapes and indexing (Reshape, Slice, Gather, Pad, ...), constants and the host
evaluation of shape computations."""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from onnx import TensorProto

from .._core import BOOL, F64, I32, I64, Dim, Tensor, Truth, concatenate
from .._errors import Inconclusive
from ._import import (BIG, HOST, ONNX_DTYPES, ONNX_OF_NUMPY, ImportError_, Importer,
                      RuntimeShape, Val, _asserting, _axes_arg, _axis, _const_like, _int, _norm,
                      _same_sizes, converter, dmax, dmin, host, prod)


# ---- Shapes computed at run time --------------------------------------------------------
# A shape-like input computed from data (a graph input, a tensor op) becomes data-dependent
# sizes: each size is computed as an i64 scalar at run time, then size_from_value makes it an
# unbacked variable (range-checked at run time). ONNX's rules (Reshape's 0 and -1, Expand's
# broadcast, Slice's clamping) are computed with tensor ops before that.

I64_MAX = (1 << 63) - 1


def _runtime(v: Optional[Val]) -> bool:
    return v is not None and v.host is None


def _c(ctx: Importer, value: int) -> Tensor:
    return ctx.scope.constant(np.array(value, np.int64))


def _entries(ctx: Importer, v: Val, what: str) -> List[Tensor]:
    """The entries of a rank-1 input computed at run time, as i64 scalars."""
    t = ctx.t(v, I64)
    n = _int(t.shape[0]) if t.ndim == 1 else None
    if not isinstance(n, int):
        raise RuntimeShape("%s is computed from run-time data and its length (the number of "
                           "axes) is not a known constant" % what)
    return [t.slice([i], [i + 1]).reshape(()) for i in range(n)]


def _scalar_i64(ctx: Importer, v: Val) -> Tensor:
    t = ctx.t(v)
    return (t.reshape(()) if t.ndim else t).astype(I64)


def _size(t: Tensor, max: Optional[int] = None) -> Any:
    """A size from an i64 scalar: a new unbacked variable in [0, max], checked at run time."""
    return _int(t.size_from_value(None, 0, max))


def _require(ctx: Importer, cond: Tensor, message: str) -> None:
    """Checks a bool scalar at run time (ConstraintViolation when false). It is made a 0/1 size
    with a check over it, since a check is kept even when nothing uses the size."""
    u = cond.astype(I64).size_from_value(None, 0, 1)
    ctx.scope.check(u, "==", 1, "%s: %s" % (ctx.label, message))


def _dim_t(ctx: Importer, d: Any) -> Tensor:
    return ctx.scope.dim_value(d) if isinstance(d, Dim) else _c(ctx, d)


def _clamp(t: Tensor, lo: Any, hi: Any) -> Tensor:
    return t.maximum(lo).minimum(hi)


def checked_axes(ctx: Importer, v: Val, rank: int) -> List[Tensor]:
    """The run-time axes `v` as i64 scalars made non-negative, checked at run time to be
    distinct and within `rank`."""
    axes = [(a < 0).select(a + rank, a) for a in _entries(ctx, v, "input 'axes'")]
    ok = _c(ctx, 1) == 1
    for i, a in enumerate(axes):
        ok = ok & (a >= 0) & (a < rank)
        for b in axes[:i]:
            ok = ok & (a != b)
    _require(ctx, ok, "the axes must be distinct and within the rank %d" % rank)
    return axes


def _by_axis(ctx: Importer, v: Val, rank: int, lists: List[List[Tensor]],
             defaults: List[Tensor]) -> Dict[int, List[Tensor]]:
    """Run-time axes: for every axis, the entries of `lists` at the position naming it (or
    `defaults`). The axes must be distinct and within the rank: checked at run time."""
    axes = checked_axes(ctx, v, rank)
    if any(len(xs) != len(axes) for xs in lists):
        raise ImportError_("%d axes for %d entries" % (len(axes), len(lists[0])))
    out = {}
    for j in range(rank):
        vals = list(defaults)
        for i, a in enumerate(axes):
            m = a == j
            vals = [m.select(xs[i], old) for xs, old in zip(lists, vals)]
        out[j] = vals
    return out


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


def _reshape_runtime(ctx: Importer, x: Tensor, v: Val, allowzero: bool) -> List[Any]:
    """Reshape's sizes from a shape computed at run time: 0 copies the input's size (unless
    allowzero), -1 is the element count over the product of the others (a wrong shape then
    fails the element count check)."""
    dims = ctx.shape(x)
    sizes = []
    for i, e in enumerate(_entries(ctx, v, "input 'shape'")):
        if not allowzero:  # a 0 past the input's rank has no size to copy: -2, out of range
            e = (e == 0).select(_dim_t(ctx, dims[i]) if i < len(dims) else _c(ctx, -2), e)
        sizes.append(e)
    others, inferred_count = _c(ctx, 1), _c(ctx, 0)
    for e in sizes:
        others = others * (e == -1).select(1, e)
        inferred_count = inferred_count + (e == -1).astype(I64)
    # -1 beside a 0 is ambiguous (onnxruntime and numpy refuse it too).
    _require(ctx, (inferred_count == 0) | ((inferred_count == 1) & (others != 0)),
             "at most one entry of the shape may be -1, and not beside a 0")
    inferred = _dim_t(ctx, prod(dims)) / others
    return [_size((e == -1).select(inferred, e)) for e in sizes]


@converter("Reshape")
def _reshape(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if ctx.opset >= 5 and _runtime(ins[1]):
        dims = _reshape_runtime(ctx, x, ins[1], at.get("allowzero", 0))
    else:
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
    d = dims[axis]
    if ctx.opset < 13:
        sizes = list(at["split"]) if "split" in at else None
    elif len(ins) > 1 and _runtime(ins[1]):  # data-dependent sizes that must sum to the axis
        sizes = [_size(e) for e in _entries(ctx, ins[1], "input 'split'")]
        total = sizes[0] if sizes else 0
        for u in sizes[1:]:
            total = _int(total + u)
        ctx.scope.check(total, "==", d, "%s: the split sizes sum to the axis" % ctx.label)
    else:
        sizes = ctx.ints(ins[1], "input 'split'") if len(ins) > 1 and ins[1] is not None \
            else None
    if sizes is None:
        n = at.get("num_outputs", n)
        chunk = (d + (n - 1)) // n if "num_outputs" in at else d // n
        sizes = [chunk] * (n - 1) + [d - chunk * (n - 1)]
    elif not isinstance(d, int) and all(isinstance(u, int) for u in sizes):
        # Constant sizes of a symbolic axis (torch's unbind of x[:, :3], of size min(t, 3)):
        # ONNX requires that they sum to the axis, so that is checked at run time and known
        # from here on (the slices below are decided by it).
        ctx.scope.check(sum(sizes), "==", d, "%s: the split sizes sum to the axis" % ctx.label)
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


def _slice_axis(ctx: Importer, x: Tensor, axis: int, s: Tensor, e: Tensor, k: Tensor,
                check_step: bool) -> Tensor:
    """x sliced along `axis` by run-time start, end and step (i64 scalars), with ONNX's
    clamping, as a gather of start + i * step for i < count."""
    d = ctx.shape(x)[axis]
    dt = _dim_t(ctx, d)
    if check_step:
        _require(ctx, k != 0, "slice step 0 on axis %d" % axis)
    pos = k > 0
    s = (s < 0).select(s + dt, s)
    e = (e < 0).select(e + dt, e)
    # A positive step walks [b, f) up, a negative one (b, f] down: b in [0, d - 1].
    b = pos.select(_clamp(s, 0, dt), _clamp(s, 0, dt - 1))
    f = pos.select(_clamp(e, 0, dt), _clamp(e, -1, dt - 1))
    k = k.maximum(-I64_MAX)  # |k| fits
    gap, mag = pos.select(f - b, b - f), pos.select(k, -k)
    count = (gap > 0).select((gap - 1) / mag + 1, 0)
    u = _size(count, d if isinstance(d, int) else None)
    if isinstance(d, Dim):
        ctx.scope.check(u, "<=", d, "%s: a slice is within its axis" % ctx.label)
    return x.take(ctx.scope.iota(I64, [u], 0) * k + b, axis)


def _slice_runtime(ctx: Importer, x: Tensor, ins: List[Optional[Val]]) -> Tensor:
    """Slice whose starts, ends, steps or axes are computed at run time. Run-time axes (which
    must be distinct and in range: checked) may pick any axis: every axis is then sliced, by
    the entry naming it or in full."""
    rank = x.ndim
    starts = _entries(ctx, ins[1], "input 'starts'")
    ends = _entries(ctx, ins[2], "input 'ends'")
    n = len(starts)
    steps = _entries(ctx, ins[4], "input 'steps'") if len(ins) > 4 and ins[4] is not None \
        else [_c(ctx, 1)] * n
    known = len(ins) <= 4 or ins[4] is None or ins[4].host is not None and \
        ins[4].host.dtype != object
    if known and len(ins) > 4 and ins[4] is not None and not ins[4].host.all():
        raise ImportError_("slice step 0")
    if len(ends) != n or len(steps) != n:
        raise ImportError_("Slice needs as many ends and steps as starts")
    if len(ins) > 3 and _runtime(ins[3]):
        per = _by_axis(ctx, ins[3], rank, [starts, ends, steps],
                       [_c(ctx, 0), _c(ctx, I64_MAX), _c(ctx, 1)])
    else:
        axes = [int(a) for a in ctx.ints(ins[3], "input 'axes'")] \
            if len(ins) > 3 and ins[3] is not None else list(range(n))
        per = {}
        for a, s, e, k in zip(axes, starts, ends, steps):
            if _axis(a, rank) in per:
                raise ImportError_("Slice axis %d is repeated" % a)
            per[_axis(a, rank)] = [s, e, k]
    for j, (s, e, k) in sorted(per.items()):
        x = _slice_axis(ctx, x, j, s, e, k, not known)
    return x


@converter("Slice")
def _slice(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if ctx.opset >= 10 and any(_runtime(v) for v in ins[1:5]):
        return [Val(_slice_runtime(ctx, x, ins))]
    dims = ctx.shape(x)
    args = _slice_args(ctx, ins, at, x.ndim)
    lo, hi, st, rev = _slice_params(ctx, dims, *args)
    try:
        return [Val((x.reverse(*rev) if rev else x).slice(lo, hi, st))]
    except Inconclusive:
        # A bound the dim rules cannot place within its axis (min(u, 2) against a
        # data-dependent u): ONNX's clamping computed at run time instead.
        starts, ends, axes, steps = args
        for a, s_, e, k in zip(axes, starts, ends, steps):
            x = _slice_axis(ctx, x, _axis(a, x.ndim), _dim_t(ctx, s_), _dim_t(ctx, e),
                            _c(ctx, k), False)
        return [Val(x)]


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
        if isinstance(dims[a], Dim) and dims[a].compare("==", 1) is not Truth.FALSE:
            # The model promises size 1 (ONNX requires it): checked when the program runs.
            ctx.scope.check(dims[a], "==", 1, "%s: squeezed axis %d must have size 1" %
                            (ctx.label, a))
        elif not (isinstance(dims[a], int) and dims[a] == 1):
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
    if ctx.opset >= 13 and len(ins) > 1 and _runtime(ins[1]):
        from ._ops_runtime_axes import squeeze
        return [Val(squeeze(ctx, x, ins[1], node.op_type == "Unsqueeze"))]
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


def _expand_runtime(ctx: Importer, x: Tensor, v: Val) -> Tensor:
    """Expand to a shape computed at run time: per axis, a size-1 axis takes the entry, an
    entry 1 keeps the axis; else they must be equal (checked at run time)."""
    es = _entries(ctx, v, "input 'shape'")
    n = max(len(es), x.ndim)
    x = x.reshape([1] * (n - x.ndim) + ctx.shape(x))
    es = [None] * (n - len(es)) + es
    out: List[Any] = []
    for axis, (d, e) in enumerate(zip(ctx.shape(x), es)):
        one = Truth.TRUE if isinstance(d, int) and d == 1 else Truth.FALSE if isinstance(
            d, int) else d.compare("==", 1)
        if e is None:
            out.append(d)
        elif one is Truth.TRUE:
            out.append(_size(e))
        else:
            dt = _dim_t(ctx, d)
            _require(ctx, (e == 1) | (e == dt) | (dt == 1),
                     "the shape's entry for axis %d must be 1 or %s" % (axis, d))
            if one is Truth.FALSE:
                out.append(d)
            else:  # d may be 1 (then broadcast) or not (then kept): gather to the new size
                u = _size((e == 1).select(dt, e))
                idx = ctx.scope.iota(I64, [u], 0) * (dt != 1).astype(I64)
                x = x.take(idx, axis)
                out.append(u)
    return x.broadcast_to(out)


@converter("Expand")
def _expand(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if _runtime(ins[1]):
        return [Val(_expand_runtime(ctx, x, ins[1]))]
    shape = ctx.ints(ins[1], "input 'shape'")
    return [Val(x.broadcast_to(_broadcast_dims(ctx.shape(x), shape)))]


@converter("Tile")
def _tile(ctx, node, ins, at):
    x = ctx.t(ins[0])
    reps = [_size(e) for e in _entries(ctx, ins[1], "input 'repeats'")] \
        if _runtime(ins[1]) else ctx.ints(ins[1], "input 'repeats'")
    if len(reps) != x.ndim:
        raise ImportError_("Tile has %d repeats for rank %d" % (len(reps), x.ndim))
    dims = ctx.shape(x)
    if all(isinstance(r, int) and r == 1 for r in reps):
        return [Val(x)]
    inter = [z for d in dims for z in (1, d)]
    big = [z for r, d in zip(reps, dims) for z in (r, d)]
    y = x.reshape(inter).broadcast_to(big)
    return [Val(y.reshape([_int(r * d) if isinstance(d, Dim) or isinstance(r, Dim) else r * d
                           for r, d in zip(reps, dims)]))]


def _pad_runtime(ctx: Importer, x: Tensor, ins: List[Optional[Val]]
                 ) -> Tuple[Tensor, List[Any], List[Any]]:
    """Pads (or axes) computed at run time: each pad is split into a crop (its negative part)
    and a growth (its positive part), both data-dependent sizes. x cropped, the low and high
    growths."""
    rank = x.ndim
    es = _entries(ctx, ins[1], "input 'pads'")
    n = len(es) // 2
    if len(ins) > 3 and _runtime(ins[3]):
        per = _by_axis(ctx, ins[3], rank, [es[:n], es[n:]], [_c(ctx, 0), _c(ctx, 0)])
    else:
        axes = [int(a) for a in ctx.ints(ins[3], "input 'axes'")] \
            if len(ins) > 3 and ins[3] is not None else list(range(rank))
        if len(es) != 2 * len(axes):
            raise ImportError_("Pad has %d pads for %d axes" % (len(es), len(axes)))
        per = {_axis(a, rank): [es[i], es[n + i]] for i, a in enumerate(axes)}
    dims = ctx.shape(x)
    lo, hi = [0] * rank, list(dims)
    low: List[Any] = [0] * rank
    high: List[Any] = [0] * rank
    for a, pads in sorted(per.items()):
        d = dims[a]
        # A crop beyond the axis is kept at d + 1 (no overflow), which the check refuses.
        crop = [_size(_clamp(-p.maximum(-I64_MAX), 0, _dim_t(ctx, d) + 1)) for p in pads]
        ctx.scope.check(_int(crop[0] + crop[1]), "<=", d,
                        "%s: negative pads remove at most the axis %d" % (ctx.label, a))
        lo[a], hi[a] = crop[0], _int(d - crop[1])
        low[a], high[a] = (_size(p.maximum(0)) for p in pads)
    return x.slice(lo, hi), low, high


def _pad_fill(ctx: Importer, x: Tensor, low: List[Any], high: List[Any], mode: str,
              value: float, value_t: Optional[Tensor]) -> Tensor:
    if mode == "wrap":
        return _pad_wrap(ctx, x, low, high)
    if mode != "constant":
        return x.pad_mode(low, high, mode)
    if value_t is None:
        return x.pad(low, high, float(value))
    # A run-time value: pad with 0, then select the value where a padded mask of ones is 0.
    ones = ctx.scope.constant(np.ones((), np.float32)).broadcast_to(ctx.shape(x))
    inside = ones.pad(low, high, 0.0) > np.float32(0.5)
    return inside.select(x.pad(low, high, 0.0), value_t)


def _pad_wrap(ctx: Importer, x: Tensor, low: List[Any], high: List[Any]) -> Tensor:
    """Circular padding, one axis at a time: the axis's last `low` elements before it and its
    first `high` after it (two slices when the pads are constants within the axis size, else
    a gather)."""
    for a, (lo, hi) in enumerate(zip(low, high)):
        if (isinstance(lo, int) and lo == 0) and (isinstance(hi, int) and hi == 0):
            continue
        dims = ctx.shape(x)
        d = dims[a]
        if not all(isinstance(p, int) and (p == 0 or p > 0 and (
                d >= p if isinstance(d, int) else d.compare(">=", p) is Truth.TRUE))
                for p in (lo, hi)):
            x = _wrap_gather(ctx, x, a, lo, hi)
            continue
        start, stop = [0] * len(dims), list(dims)
        start[a] = _int(d - lo)
        head = x.slice(start, stop)
        start, stop = [0] * len(dims), list(dims)
        stop[a] = hi
        tail = x.slice(start, stop)
        x = concatenate([t for t, n in ((head, lo), (x, 1), (tail, hi)) if n], a)
    return x


def _wrap_gather(ctx: Importer, x: Tensor, a: int, lo: Any, hi: Any) -> Tensor:
    """Circular padding of axis a by pads that are symbolic or data-dependent (or past the
    axis size: the axis repeats, as numpy's wrap): output j reads ((j - lo) mod d). An empty
    axis can only take empty pads (checked at run time)."""
    d = ctx.shape(x)[a]
    dt, lo_t = _dim_t(ctx, d), _dim_t(ctx, lo)
    _require(ctx, (dt > 0) | (lo_t + _dim_t(ctx, hi) == 0),
             "mode=wrap cannot pad the empty axis %d" % a)
    safe = (dt > 0).select(dt, _c(ctx, 1))
    j = ctx.scope.iota(I64, [_int(lo + d + hi)], 0) - lo_t
    return x.take((j.rem(safe) + safe).rem(safe), a)


@converter("Pad")
def _pad(ctx, node, ins, at):
    x = ctx.t(ins[0])
    rank = x.ndim
    mode = at.get("mode", "constant")
    value_t = None
    if ctx.opset < 11:
        pads, value = list(at.get("pads", at.get("paddings", []))), at.get("value", 0.0)
        axes = list(range(rank))
    else:
        value = 0.0
        if len(ins) > 2 and ins[2] is not None and mode == "constant":
            if _runtime(ins[2]):
                value_t = ctx.t(ins[2], x.dtype).reshape(())
            else:
                value = ins[2].host.reshape(-1)
                value = value[0].item() if value.size else 0.0
        if _runtime(ins[1]) or len(ins) > 3 and _runtime(ins[3]):
            x, low, high = _pad_runtime(ctx, x, ins)
            return [Val(_pad_fill(ctx, x, low, high, mode, value, value_t))]
        axes = [int(a) for a in ctx.ints(ins[3], "input 'axes'")] \
            if len(ins) > 3 and ins[3] is not None else list(range(rank))
        pads = ctx.ints(ins[1], "input 'pads'")
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
    return [Val(_pad_fill(ctx, x, low, high, mode, value, value_t))]


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
    shape = [_size(e) for e in _entries(ctx, ins[0], "input 'shape'")] if _runtime(ins[0]) \
        else ctx.ints(ins[0], "input 'shape'")
    value = _constant_value(at)
    return [Val(ctx.scope.constant(value).broadcast_to(shape))]


@host("ConstantOfShape")
def _h_constant_of_shape(ctx, node, hs, at):
    shape = [_int(s) for s in hs[0].reshape(-1).tolist()]
    if not all(isinstance(s, int) for s in shape):
        return None
    return [np.full(shape, _constant_value(at))]


def _range_runtime(ctx: Importer, ins: List[Optional[Val]]) -> Tensor:
    """Range of run-time bounds: n = max(ceil((limit - start) / delta), 0) computed as a
    tensor (exactly for integers; floats divide in f64), then start + i * delta."""
    dt = ctx.t(ins[0]).dtype
    start, limit, delta = (ctx.t(v, dt).reshape(()) for v in ins[:3])
    known = ins[2].host is not None and ins[2].host.dtype != object
    if known and not ins[2].host.all():
        raise ImportError_("Range's delta is 0")
    if not known:
        _require(ctx, delta != 0, "Range's delta must not be 0")
    if dt.numpy.kind == "f":
        q = (limit - start).astype(F64) / delta.astype(F64)
        n = q.ceil().astype(I64)  # saturating: an infinite count fails as too large
    else:
        lo, hi = start.astype(I64), limit.astype(I64)
        diff = hi - lo
        if not (dt == I32 or ins[0].host is not None and ins[0].host.dtype != object and
                not ins[0].host.any()):  # no overflow from i32 or from a start of 0
            _require(ctx, ~(((hi > lo) & (diff < 0)) | ((hi < lo) & (diff > 0))),
                     "Range's limit - start overflows int64")
        d = delta.astype(I64)
        q, r = diff / d, diff.rem(d)  # toward zero: round up when the quotient is positive
        up = ((r > 0) & (d > 0)) | ((r < 0) & (d < 0))
        n = q + up.astype(I64)
    r = ctx.scope.iota(dt, [_size(n.maximum(0))], 0)
    return r * delta + start


@converter("Range")
def _range(ctx, node, ins, at):
    if any(_runtime(v) for v in ins[:3]):
        return [Val(_range_runtime(ctx, ins))]
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


def _undecided(op: str, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the shape facts leave a comparison of sizes `a` op `b` (elementwise) open."""
    sym = {"Equal": "==", "Less": "<", "Greater": ">", "LessOrEqual": "<=",
           "GreaterOrEqual": ">="}[op]
    for x, y in np.nditer([a.astype(object), b.astype(object)], ["refs_ok"]):
        x, y, s = x.item(), y.item(), sym
        if isinstance(y, Dim) and not isinstance(x, Dim):
            x, y, s = y, x, {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(sym, sym)
        if isinstance(x, Dim) and x.compare(s, y) is Truth.UNKNOWN:
            return True
    return False


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
        # A comparison of sizes the facts leave open is computed at run time (the export of a
        # scan that may have length 0 guards it with an If on length > 0).
        if obj and _undecided(op, a, xs[1]):
            return None
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
