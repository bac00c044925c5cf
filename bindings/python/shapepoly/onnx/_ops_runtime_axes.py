"""Axes computed from run-time data (a graph input): reductions, CumSum, Squeeze/Unsqueeze.

The number of axes is the (constant) length of the axes input; which axes they are is known
when the program runs. Each axis j of the input gets a run-time flag f_j ("j is one of the
axes"; the axes are checked to be distinct and within the rank). A reduction is then done one
axis at a time: along axis j, the result keeps the axis (f_j false) or its reduction to one
element (f_j true), chosen by a take from [y, reduce_j(y)] of a data-dependent length u_j
(1 or the size). Every ONNX reduction is a chain of per-axis reductions and a final map
(LogSumExp is LogSumExp of LogSumExp, L2 is the sqrt of summed squares, Mean the sum over the
count). Without keepdims the sizes of the axes that remain are computed at run time too.
"""

from typing import Any, Callable, List, Optional

from .._core import I64, Tensor, concatenate
from ._import import ImportError_, Importer, RuntimeShape, Val, _asserting, _int, prod
from ._ops_shape import _c, _dim_t, _entries, _require, _size, checked_axes


def axis_flags(ctx: Importer, v: Val, rank: int) -> List[Tensor]:
    """Per axis of a tensor of `rank`, a bool scalar: named by the run-time axes `v`."""
    axes = checked_axes(ctx, v, rank)
    flags = []
    for j in range(rank):
        f = _c(ctx, 0) == 1
        for a in axes:
            f = f | (a == j)
        flags.append(f)
    return flags


def _one_axis(ctx: Importer, y: Tensor, j: int, flag: Tensor, reduce_j: Any) -> Tensor:
    """y along axis j as is (flag false) or reduced to one element (flag true)."""
    d = ctx.shape(y)[j]
    r = reduce_j(y, j)
    z = concatenate([y, r], j)
    dt = _dim_t(ctx, d)
    u = _size(flag.select(_c(ctx, 1), dt), None)
    idx = ctx.scope.iota(I64, [u], 0) + flag.select(dt, _c(ctx, 0))
    return z.take(idx, j)


def _lse(y: Tensor, j: int) -> Tensor:
    m = y.max(j, True)
    return (y - m).exp().sum(j, True).log() + m


STEP = {"ReduceSum": lambda y, j: y.sum(j, True), "ReduceMean": lambda y, j: y.sum(j, True),
        "ReduceMax": lambda y, j: y.max(j, True), "ReduceMin": lambda y, j: y.min(j, True),
        "ReduceProd": lambda y, j: y.prod(j, True), "ReduceSumSquare": lambda y, j: y.sum(j, True),
        "ReduceL1": lambda y, j: y.sum(j, True), "ReduceL2": lambda y, j: y.sum(j, True),
        "ReduceLogSum": lambda y, j: y.sum(j, True), "ReduceLogSumExp": _lse}


def _kept_sizes(ctx: Importer, dims: List[Any], flags: List[Tensor], k: int) -> List[Any]:
    """The sizes of the axes that no flag names, in order (k of the axes are named)."""
    before = _c(ctx, 0)
    pos = []
    for j, f in enumerate(flags):  # the output position of each kept axis
        pos.append(_c(ctx, j) - before)
        before = before + f.astype(I64)
    out = []
    for i in range(len(dims) - k):
        v = _c(ctx, 0)
        for d, f, p in zip(dims, flags, pos):
            v = v + ((~f) & (p == i)).select(_dim_t(ctx, d), _c(ctx, 0))
        out.append(_size(v, None))
    return out


def reduce(ctx: Importer, op: str, x: Tensor, axes: Val, keep: bool, noop_empty: bool
           ) -> Tensor:
    entries = ctx.shape(ctx.t(axes))
    k = entries[0] if len(entries) == 1 else None
    if not isinstance(k, int):
        raise RuntimeShape("input 'axes' is computed from run-time data and its length (the "
                           "number of axes) is not a known constant")
    if k == 0:  # no axes: all, or none
        if noop_empty:
            return x
        return None  # the caller reduces over every axis
    dims = ctx.shape(x)
    flags = axis_flags(ctx, axes, x.ndim)
    y = x
    if op in ("ReduceSumSquare", "ReduceL2"):
        y = y * y
    elif op == "ReduceL1":
        y = y.abs()
    for j, f in enumerate(flags):
        y = _one_axis(ctx, y, j, f, STEP[op])
    if op == "ReduceMean":
        count = _c(ctx, 1)
        for d, f in zip(dims, flags):
            count = count * f.select(_dim_t(ctx, d), _c(ctx, 1))
        y = y / count.astype(y.dtype)
    elif op == "ReduceL2":
        y = y.sqrt()
    elif op == "ReduceLogSum":
        y = y.log()
    if not keep:
        y = _reshape(ctx, y, _kept_sizes(ctx, dims, flags, k))
    return y


def select_axis(ctx: Importer, axis: Val, rank: int, along: Callable[[int], Tensor]
                ) -> Tensor:
    """along(a) for the axis a named at run time by the scalar `axis` (checked to be within
    the rank): every axis's result computed, the named one selected (same shapes)."""
    a = _entries(ctx, Val(tensor=ctx.t(axis).reshape([1])), "input 'axis'")[0]
    a = (a < 0).select(a + rank, a)
    _require(ctx, (a >= 0) & (a < rank), "the axis must be within the rank %d" % rank)
    out: Optional[Tensor] = None
    for j in range(rank):
        c = along(j)
        out = c if out is None else (a == j).select(c, out)
    return out


def select_axis_sized(ctx: Importer, axis: Val, rank: int, count: int,
                      along: Callable[[int], Tensor]) -> Tensor:
    """along(a) for the axis a named at run time by the scalar `axis` (negative counts from
    `rank`; checked to be one of the first `count` axes), when the results' shapes may differ
    by axis: each result zero-padded to the largest sizes, the named one selected, then cut to
    its own sizes (data-dependent sizes where the candidates differ). An axis along which the
    op cannot be built (along raises ImportError_, before it adds any check) is refused when
    the program runs."""
    a = _entries(ctx, Val(tensor=ctx.t(axis).reshape([1])), "input 'axis'")[0]
    a = (a < 0).select(a + rank, a)
    _require(ctx, (a >= 0) & (a < count), "the axis must be in [-%d, %d)" % (rank, count))
    outs, axes, last = [], [], None
    for j in range(count):
        try:
            outs.append(along(j))
            axes.append(j)
        except ImportError_ as e:
            last = e
    if not outs:
        raise last
    if last is not None:
        for j in range(count):
            if j not in axes:
                _require(ctx, a != j, "axis %d cannot be transformed (at import: %s)" %
                         (j, last))
    shapes = [ctx.shape(o) for o in outs]
    if any(len(s) != len(shapes[0]) for s in shapes):
        raise RuntimeShape("input 'axis' is computed from run-time data, and the results along "
                           "different axes have different ranks")
    same = [all(str(s[i]) == str(shapes[0][i]) for s in shapes)
            for i in range(len(shapes[0]))]
    if not all(same[i] or all(isinstance(s[i], int) for s in shapes) for i in range(len(same))):
        raise RuntimeShape("input 'axis' is computed from run-time data, and the results along "
                           "the candidate axes have sizes %s: where they differ they must be "
                           "known" % [[str(d) for d in s] for s in shapes])
    top = [shapes[0][i] if same[i] else max(s[i] for s in shapes) for i in range(len(same))]
    out: Optional[Tensor] = None
    for j, o, s in zip(axes, outs, shapes):
        if not all(same):
            o = o.pad([0] * len(s), [0 if same[i] else top[i] - s[i] for i in range(len(s))])
        out = o if out is None else (a == j).select(o, out)
    if all(same):
        return out
    sizes: List[Any] = []
    for i, t in enumerate(top):
        if same[i]:
            sizes.append(t)
            continue
        v = _c(ctx, shapes[0][i])
        for j, s in zip(axes[1:], shapes[1:]):
            v = (a == j).select(_c(ctx, s[i]), v)
        sizes.append(_size(v, t))
    return out.slice([0] * len(top), sizes)


def cumsum(ctx: Importer, x: Tensor, axis: Val, exclusive: bool, reverse: bool) -> Tensor:
    """CumSum along an axis chosen at run time."""
    rank = x.ndim

    def along(j: int) -> Tensor:
        y = x.reverse(j) if reverse else x
        c = y.cumsum(j)
        if exclusive:  # shifted by one along j
            low = [0] * rank
            low[j] = 1
            c = c.pad(low, [0] * rank).slice(None, ctx.shape(y))
        return c.reverse(j) if reverse else c
    return select_axis(ctx, axis, rank, along)


def run_time_size(ctx: Importer, v: Val, what: str, minimum: int) -> Any:
    """A size given as a scalar computed at run time (OneHot's depth): a data-dependent size,
    checked to be >= `minimum` (a float is truncated as ONNX says)."""
    t = ctx.t(v).reshape([1]).reshape(())
    if t.dtype.numpy.kind == "f":
        t = (t < _c(ctx, 0).astype(t.dtype)).select(t.ceil(), t.floor())
    d = t.astype(I64)
    _require(ctx, d >= minimum, "%s must be >= %d" % (what, minimum))
    return _size(d, None)


def squeeze(ctx: Importer, x: Tensor, axes: Val, unsqueeze: bool) -> Tensor:
    """Squeeze (each named axis checked to have size 1) or Unsqueeze along run-time axes: the
    element order does not change, so a reshape to sizes computed at run time."""
    k = _int(ctx.shape(ctx.t(axes))[0]) if ctx.t(axes).ndim == 1 else None
    if not isinstance(k, int):
        raise RuntimeShape("input 'axes' is computed from run-time data and its length (the "
                           "number of axes) is not a known constant")
    dims = ctx.shape(x)
    if not unsqueeze:
        flags = axis_flags(ctx, axes, len(dims))
        ok = _c(ctx, 1) == 1
        for d, f in zip(dims, flags):
            ok = ok & (~f | (_dim_t(ctx, d) == 1))
        _require(ctx, ok, "a squeezed axis must have size 1")
        return _reshape(ctx, x, _kept_sizes(ctx, dims, flags, k))
    rank = len(dims) + k
    flags = axis_flags(ctx, axes, rank)
    # Output axis j is a new 1 (flagged) or the next input axis: its size is the input size at
    # position j - (flags before j).
    out = []
    before = _c(ctx, 0)
    for j, f in enumerate(flags):
        v = _c(ctx, 0)
        for i, d in enumerate(dims):
            v = v + ((~f) & (before == j - i)).select(_dim_t(ctx, d), _c(ctx, 0))
        out.append(_size(f.select(_c(ctx, 1), v), None))
        before = before + f.astype(I64)
    return _reshape(ctx, x, out)


def _reshape(ctx: Importer, x: Tensor, dims: List[Any]) -> Tensor:
    """x reshaped to sizes computed at run time: the element count asserted equal."""
    return _asserting(ctx, lambda: x.reshape(dims), lambda: [(prod(ctx.shape(x)), prod(dims))],
                      "the element count must not change")
