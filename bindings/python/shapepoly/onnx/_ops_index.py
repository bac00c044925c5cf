"""ONNX converters: index and selection ops (ArgMax/ArgMin, TopK, GatherElements,
ScatterElements, ScatterND, GatherND, OneHot, Hardmax, ...).

TopK is the library's top_k; GatherElements its take_along_axis; ScatterElements and
ScatterND its scatter (at flat positions). The library has take, iota, select and reductions
but no argmax: the other ops are composites of those. Element-wise
indexing goes through flat indices (iota arithmetic over the index tensor's shape, then `take`
on the flattened data); an index out of its axis's range becomes the flat index -1, so that
take/scatter stop the run with a clean InvalidArgument instead of reading a neighbouring
row.
"""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._core import BOOL, F64, I32, I64, Dim, Tensor, Truth
from ._import import (FLOATS, CHECKS, ONNX_DTYPES, ImportError_, Importer, Val, _axis, _const_like,
                      _int, converter, prod)
from ._ops_nn import _softmax_axis, _window
from ._ops_shape import _dim_t as _size_t
from ._ops_shape import _require

# ---- Helpers ---------------------------------------------------------------------------

def _dim_t(ctx: Importer, d: Any) -> Any:
    """A size as an operand of i64 arithmetic: a Python int, or a dim_value tensor."""
    d = _int(d)
    return ctx.scope.dim_value(d) if isinstance(d, Dim) else d


def _zeros(ctx: Importer, dtype: Any, shape: List[Any]) -> Tensor:
    return ctx.scope.constant(np.zeros((), dtype.numpy)).broadcast_to(shape)


def _index(ctx: Importer, v: Val) -> Tensor:
    t = ctx.t(v)
    if t.dtype not in (I32, I64):
        raise ImportError_("indices must be int32 or int64, got %s" % t.dtype.name.lower())
    return t.astype(I64)


def _wrap_index(ctx: Importer, i: Tensor, d: Any) -> Tuple[Tensor, Tensor]:
    """(i with negative entries counted from the end of an axis of size d, i in range)."""
    size = _dim_t(ctx, d)
    i = (i < 0).select(i + size, i)
    return i, (i >= 0) & (i < size)


def _nonempty(ctx: Importer, d: Any, what: str) -> None:
    """ONNX's arg/top ops are undefined on an empty axis: refuse size 0, check a symbolic size
    at run time."""
    d = _int(d)
    if isinstance(d, int):
        if d < 1:
            raise ImportError_("%s over an axis of size 0" % what)
    elif d.compare(">=", 1) is not Truth.TRUE:
        ctx.scope.check(d, ">=", 1, "%s: %s needs a non-empty axis" % (ctx.label, what))


def _check_le(ctx: Importer, a: Any, b: Any, what: str) -> None:
    """Asserts size a <= size b (an ImportError_ when both are constants and it fails)."""
    a, b = _int(a), _int(b)
    if isinstance(a, int) and isinstance(b, int):
        if a > b:
            raise ImportError_("%s (%d > %d)" % (what, a, b))
        return
    da = a if isinstance(a, Dim) else ctx.scope.dim(a)
    if da.compare("<=", b) is not Truth.TRUE:
        ctx.scope.check(a, "<=", b, "%s: %s" % (ctx.label, what))


def _numeric(x: Tensor) -> Tensor:
    return x.astype(I32) if x.dtype == BOOL else x


def _lowest(ctx: Importer, like: Tensor, high: bool) -> Tensor:
    """The value that never wins a max (high=False) or a min (high=True)."""
    if like.dtype in FLOATS:
        v = np.inf if high else -np.inf
    else:
        info = np.iinfo(like.dtype.numpy)
        v = info.max if high else info.min
    return _const_like(ctx, v, like)


def _arg_best(ctx: Importer, x: Tensor, axis: int, largest: bool, nan_wins: bool,
              last: bool = False, taken: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """(index, value) of the max (largest) or min along `axis`, both with the axis kept as 1.
    Ties: the lowest index (`last`: the highest). A NaN wins when nan_wins (numpy's argmax and
    argmin return the first NaN) and else loses to every number. `taken` (bool like x) masks
    out elements, which never win; at least one per row must remain."""
    floating = x.dtype in FLOATS
    y = x
    if floating and not nan_wins:  # NaN loses: the losing end of the order stands for it
        y = (x != x).select(_lowest(ctx, x, not largest), x)
    if taken is not None:
        y = taken.select(_lowest(ctx, x, not largest), y)
    best = y.max(axis, True) if largest else y.min(axis, True)  # NaN if any NaN (nan_wins)
    hit = y == best
    if floating and nan_wins:
        hit = hit | (y != y)  # best is NaN exactly when a NaN is left
    left = None if taken is None else ~taken
    if left is not None:
        hit = hit & left
    iota = ctx.scope.iota(I64, ctx.shape(x), axis)
    d = _dim_t(ctx, ctx.shape(x)[axis])
    if last:
        idx = hit.select(iota, -1).max(axis, True)
    elif floating and not nan_wins:
        # A NaN loses even to the sentinel-valued infinity: numbers first, then NaNs.
        num = x == x
        first = (hit & num).select(iota, d).min(axis, True)
        nan = ~num if left is None else ~num & left
        idx = (first < d).select(first, nan.select(iota, d).min(axis, True))
        # The winner's value read back (NaN when only NaNs were left).
        best = (iota == idx).select(x, _lowest(ctx, x, not largest))
        best = best.max(axis, True) if largest else best.min(axis, True)
    else:
        idx = hit.select(iota, d).min(axis, True)
    return idx, best


def _drop_axis(ctx: Importer, t: Tensor, axis: int) -> Tensor:
    dims = ctx.shape(t)
    return t.reshape(dims[:axis] + dims[axis + 1:])


def _flat_elements(ctx: Importer, dims_x: List[Any], idx: Tensor, axis: int) -> Tensor:
    """The flat (row-major) position in a tensor of shape dims_x of every element of the index
    tensor `idx` (same rank; its entries index `axis`, the other coordinates are their own);
    -1 where an index is out of range."""
    dims_i = ctx.shape(idx)
    for k, (a, b) in enumerate(zip(dims_i, dims_x)):
        if k != axis:
            _check_le(ctx, a, b, "the indices' axis %d is longer than the data's" % k)
    i, ok = _wrap_index(ctx, idx, dims_x[axis])
    flat: Any = None
    for k in range(len(dims_x)):
        c = i if k == axis else ctx.scope.iota(I64, dims_i, k)
        stride = prod(dims_x[k + 1:])
        term = c if isinstance(stride, int) and stride == 1 else c * _dim_t(ctx, stride)
        flat = term if flat is None else flat + term
    return ok.select(i if flat is None else flat, -1)  # None: rank 0


def _provably_equal(ctx: Importer, a: Any, b: Any) -> bool:
    a, b = _int(a), _int(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return (a if isinstance(a, Dim) else ctx.scope.dim(a)).compare("==", b) is Truth.TRUE


def _gather_elements(ctx: Importer, x: Tensor, idx: Tensor, axis: int) -> Tensor:
    """ONNX GatherElements: the library's take_along_axis, whose index rule is ONNX's ([-s,
    s - 1], negative ones from the end; others fail the run). ONNX lets the indices be shorter
    than the data off the axis (only their leading part is read): x is sliced to them there
    (each such size checked <= the data's, at run time when symbolic)."""
    dims_x, dims_i = ctx.shape(x), ctx.shape(idx)
    limit: List[Any] = list(dims_x)
    shorter = False
    for k, (a, b) in enumerate(zip(dims_i, dims_x)):
        if k != axis and not _provably_equal(ctx, a, b):
            _check_le(ctx, a, b, "the indices' axis %d is longer than the data's" % k)
            limit[k], shorter = a, True
    if shorter:
        x = x.slice(None, limit)
    return x.take_along_axis(idx, axis)


# ---- ArgMax, ArgMin, Hardmax, TopK -------------------------------------------------------

@converter("ArgMax", "ArgMin")
def _argmax(ctx, node, ins, at):
    x = _numeric(ctx.t(ins[0]))
    axis = _axis(at.get("axis", 0), x.ndim)
    _nonempty(ctx, ctx.shape(x)[axis], node.op_type)
    idx, _ = _arg_best(ctx, x, axis, node.op_type == "ArgMax", nan_wins=True,
                       last=bool(at.get("select_last_index", 0)))
    return [Val(idx if at.get("keepdims", 1) else _drop_axis(ctx, idx, axis))]


@converter("Hardmax")
def _hardmax(ctx, node, ins, at):
    """1 at the first maximum along the axis (opsets < 13: of the rows of x flattened to 2-D,
    as Softmax), 0 elsewhere."""
    x, (axis, dims) = _softmax_axis(ctx, ctx.t(ins[0]), at)
    axis = _axis(axis, x.ndim)
    size = _int(ctx.shape(x)[axis]) if x.ndim else 0
    if isinstance(size, int) and size == 0:
        y = x  # empty: nothing to mark
    else:
        idx, _ = _arg_best(ctx, x, axis, True, nan_wins=True)
        one = ctx.scope.iota(I64, ctx.shape(x), axis) == idx
        y = one.select(_const_like(ctx, 1, x), _const_like(ctx, 0, x))
    return [Val(y if dims is None else y.reshape(dims))]


@converter("TopK")
def _topk(ctx, node, ins, at):
    """The library's top_k: values and int64 indices, best first, ties by the lower index, NaN
    the greatest value (as ONNX's reference); sorted=0 gives the sorted order too. k is a
    constant, a symbolic size, or computed at run time (a data-dependent size); k larger than
    the axis is refused, or asserted at run time when not known."""
    x = _numeric(ctx.t(ins[0]))
    axis = _axis(at.get("axis", -1), x.ndim)
    d = _int(ctx.shape(x)[axis])
    if ctx.opset < 10:
        k = at.get("k")
    elif ins[1].host is None:  # run-time k: a data-dependent size, checked <= the axis
        from ._ops_runtime_axes import run_time_size
        k = run_time_size(ctx, ins[1], "k", 0)
    else:
        k = _int(ins[1].host.reshape(-1)[0])
    if isinstance(k, int) and k < 0:
        raise ImportError_("TopK with k=%d: k must be >= 0" % k)
    _check_le(ctx, k, d, "TopK: k is larger than the axis")
    vals, idxs = x.top_k(k, axis, bool(at.get("largest", 1)), bool(at.get("sorted", 1)))
    return [Val(vals), Val(idxs)]


# ---- Gathers and scatters ----------------------------------------------------------------

@converter("GatherElements")
def _gather_elements_op(ctx, node, ins, at):
    x = ctx.t(ins[0])
    idx = ctx.t(ins[1])
    if idx.dtype not in (I32, I64):  # both as they are: no conversion
        raise ImportError_("indices must be int32 or int64, got %s" % idx.dtype.name.lower())
    if idx.ndim != x.ndim:
        raise ImportError_("indices have rank %d, data rank %d (expected equal)" %
                           (idx.ndim, x.ndim))
    return [Val(_gather_elements(ctx, x, idx, _axis(at.get("axis", 0), x.ndim)))]


# ONNX's reduction attribute -> the library scatter's (shp_scatter_reduction_t).
_SCATTER_REDUCTIONS = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}


def _scatter_check(imp, at, node):
    r = at.get("reduction", "none")
    return None if r in _SCATTER_REDUCTIONS else "reduction=%s" % r


CHECKS["ScatterElements"] = _scatter_check


@converter("ScatterElements", "Scatter")
def _scatter_elements(ctx, node, ins, at):
    """The library's scatter at the flat positions of the elements the indices name (negative
    indices count from the end; one out of range fails the run). reduction 'none' replaces:
    among duplicate indices (undefined in ONNX) the update latest in the indices' row-major
    order wins, as onnxruntime's sequential loop; 'add', 'mul', 'max' and 'min' combine in that
    order."""
    x = ctx.t(ins[0])
    idx = _index(ctx, ins[1])
    reduction = at.get("reduction", "none")
    if reduction not in _SCATTER_REDUCTIONS:
        raise ImportError_("reduction=%s has no shapepoly form" % reduction)
    if idx.ndim != x.ndim:
        raise ImportError_("indices have rank %d, data rank %d (expected equal)" %
                           (idx.ndim, x.ndim))
    upd = ctx.t(ins[2], x.dtype)
    dims = ctx.shape(x)
    flat = _flat_elements(ctx, dims, idx, _axis(at.get("axis", 0), x.ndim))
    return [Val(_scatter_flat(ctx, x, flat, upd, [prod(dims)], reduction))]


def _scatter_flat(ctx: Importer, x: Tensor, flat: Tensor, upd: Tensor, lead: List[Any],
                  reduction: str) -> Tensor:
    """x viewed as lead + rest, combined along its axis 0 at `flat` (updates: flat's shape +
    rest) by the library's scatter with ONNX's reduction (bool data as 0/1: max is or, min and
    mul are and, add is or after the cast back)."""
    dims = ctx.shape(x)
    rest = dims[len(dims) - (len(ctx.shape(upd)) - flat.ndim):]
    xf = _numeric(x).reshape(lead + rest)
    y = xf.scatter(flat, _numeric(upd), 0, _SCATTER_REDUCTIONS[reduction])
    return y.astype(BOOL).reshape(dims) if x.dtype == BOOL else y.reshape(dims)


CHECKS["ScatterND"] = _scatter_check


@converter("ScatterND")
def _scatter_nd(ctx, node, ins, at):
    """data with the slices data[i0, ..., ik-1, ...] of each index tuple (the indices' last
    axis, of constant length k) combined with the updates (shape: the indices' shape without
    its last axis + data's shape after k) by the reduction (_scatter_flat; 'none' replaces, the
    tuple latest in row-major order winning among duplicates): the tuples' flat positions over
    the first k axes, then the library's scatter. Negative components count from the end; one
    out of range fails the run."""
    x = ctx.t(ins[0])
    idx = _index(ctx, ins[1])
    reduction = at.get("reduction", "none")
    if reduction not in _SCATTER_REDUCTIONS:
        raise ImportError_("reduction=%s has no shapepoly form" % reduction)
    dx, di = ctx.shape(x), ctx.shape(idx)
    if idx.ndim < 1 or not isinstance(di[-1], int):
        raise ImportError_("ScatterND needs indices whose last axis has a constant length")
    k = di[-1]
    if not 1 <= k <= x.ndim:
        raise ImportError_("index tuples of length %d do not fit data of rank %d" % (k, x.ndim))
    upd = ctx.t(ins[2], x.dtype)
    if upd.ndim != len(di) - 1 + x.ndim - k:
        raise ImportError_("updates have rank %d, expected %d (indices %d - 1 + data %d - %d)" %
                           (upd.ndim, len(di) - 1 + x.ndim - k, len(di), x.ndim, k))
    flat = _flat_nd(ctx, dx, idx, 0)
    return [Val(_scatter_flat(ctx, x, flat, upd, [prod(dx[:k])], reduction))]


@converter("GatherND")
def _gather_nd(ctx, node, ins, at):
    """x[batch..., i0, ..., ik-1, :] for each index tuple (the last axis of the indices, of
    constant length k): a flat index over the first b + k axes of x, then take."""
    x = ctx.t(ins[0])
    idx = _index(ctx, ins[1])
    b = int(at.get("batch_dims", 0))
    dx, di = ctx.shape(x), ctx.shape(idx)
    if idx.ndim < 1 or not isinstance(di[-1], int):
        raise ImportError_("GatherND needs indices whose last axis has a constant length")
    k = di[-1]
    if not 0 <= b < min(x.ndim, idx.ndim) or b + k > x.ndim:
        raise ImportError_("batch_dims=%d and index length %d do not fit data of rank %d and "
                           "indices of rank %d" % (b, k, x.ndim, idx.ndim))
    flat = _flat_nd(ctx, dx, idx, b)
    return [Val(x.reshape([prod(dx[:b + k])] + dx[b + k:]).take(flat, 0))]


def _flat_nd(ctx: Importer, dx: List[Any], idx: Tensor, b: int) -> Tensor:
    """The flat position over the first b + k axes of a tensor of shape dx of every index
    tuple of `idx` (shape batch + m + (k,); its first b axes are the batch axes of x); -1
    where a component is out of range."""
    di = ctx.shape(idx)
    k = di[-1]
    out = di[:-1]
    for j in range(b):
        _check_le(ctx, di[j], dx[j], "the indices' batch axis %d is longer than the data's" % j)
    flat = _zeros(ctx, I64, out)
    ok: Any = None
    terms = [(ctx.scope.iota(I64, out, j), None) for j in range(b)]
    for j in range(k):
        lo = [0] * (len(di) - 1) + [j]
        c = idx.slice(lo, out + [j + 1]).reshape(out)
        terms.append(_wrap_index(ctx, c, dx[b + j]))
    for a, (c, valid) in enumerate(terms):
        stride = prod(dx[a + 1:b + k])
        flat = flat + (c if isinstance(stride, int) and stride == 1 else c * _dim_t(ctx, stride))
        if valid is not None:
            ok = valid if ok is None else ok & valid
    return flat if ok is None else ok.select(flat, -1)


@converter("ReverseSequence")
def _reverse_sequence(ctx, node, ins, at):
    """Element (b, t) reads (b, len[b] - 1 - t) for t < len[b]: a GatherElements along the
    time axis (a length beyond the axis is a run-time error)."""
    x = ctx.t(ins[0])
    lens = _index(ctx, ins[1])
    baxis = _axis(at.get("batch_axis", 1), x.ndim)
    taxis = _axis(at.get("time_axis", 0), x.ndim)
    dims = ctx.shape(x)
    t = ctx.scope.iota(I64, dims, taxis)
    shape = [1] * x.ndim
    shape[baxis] = dims[baxis]
    n = lens.reshape(shape)
    return [Val(_gather_elements(ctx, x, (t < n).select(n - 1 - t, t), taxis))]


# ---- Constructors and predicates ---------------------------------------------------------

@converter("OneHot")
def _one_hot(ctx, node, ins, at):
    """on where iota along the new axis equals the index (negative: from depth's end), off
    elsewhere (out-of-range indices: all off). depth is a constant or a dim expression."""
    idx = ctx.t(ins[0]).astype(I64)  # float indices truncate, as a cast does
    if ins[1].host is None:  # run-time depth: a data-dependent size
        from ._ops_runtime_axes import run_time_size
        depth = run_time_size(ctx, ins[1], "depth", 1)
    else:
        h = ctx.h(ins[1], "input 'depth'").reshape(-1)
        depth = _int(h[0]) if h.dtype == object else int(h[0])
    vals = ctx.t(ins[2])
    if isinstance(depth, int) and depth < 1:
        raise ImportError_("OneHot depth %d is not positive" % depth)
    rank = idx.ndim + 1
    axis = _axis(at.get("axis", -1), rank)
    dims = ctx.shape(idx)
    idx = (idx < 0).select(idx + _dim_t(ctx, depth), idx)
    shape = dims[:axis] + [depth] + dims[axis:]
    hit = ctx.scope.iota(I64, shape, axis) == idx.reshape(dims[:axis] + [1] + dims[axis:])
    off, on = (vals.slice([i], [i + 1]).reshape(()) for i in (0, 1))
    return [Val(hit.select(on, off))]


@converter("EyeLike")
def _eye_like(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if x.ndim != 2:
        raise ImportError_("EyeLike needs a 2-D input, got rank %d" % x.ndim)
    dt = x.dtype
    if "dtype" in at:
        dt = ONNX_DTYPES.get(at["dtype"])
        if dt is None:
            raise ImportError_("EyeLike dtype %d: shapepoly has f32, f64, i32, i64 and bool" %
                               at["dtype"])
    dims = ctx.shape(x)
    diag = ctx.scope.iota(I64, dims, 1) - ctx.scope.iota(I64, dims, 0) == int(at.get("k", 0))
    return [Val(diag.astype(dt))]


@converter("IsInf")
def _is_inf(ctx, node, ins, at):
    x = ctx.t(ins[0])
    pos, neg = at.get("detect_positive", 1), at.get("detect_negative", 1)
    if x.dtype not in FLOATS:  # integers are never infinite
        return [Val(ctx.scope.constant(np.array(False)).broadcast_to(ctx.shape(x)))]
    r = ctx.scope.constant(np.array(False)).broadcast_to(ctx.shape(x))
    if pos:
        r = r | (x == _const_like(ctx, np.inf, x))
    if neg:
        r = r | (x == _const_like(ctx, -np.inf, x))
    return [Val(r)]


# ---- Scans and pooling ----------------------------------------------------------------

@converter("CumProd")
def _cumprod(ctx, node, ins, at):
    """A log-depth scan (y *= y shifted by 1, 2, 4, ... with ones shifted in): exact for
    zeros and signs; float products are associated differently from a sequential loop. The
    axis size must be a constant (it fixes the number of steps)."""
    x = _numeric(ctx.t(ins[0]))
    if ins[1].host is None:  # a run-time axis: every axis's product, the named one selected
        from ._ops_runtime_axes import select_axis
        return [Val(select_axis(ctx, ins[1], x.ndim, lambda a: _cumprod_along(ctx, x, a, at)))]
    return [Val(_cumprod_along(ctx, x, _axis(ctx.ints(ins[1], "input 'axis'")[0], x.ndim),
                               at))]


def _cumprod_along(ctx: Importer, x: Tensor, axis: int, at: Dict[str, Any]) -> Tensor:
    dims = ctx.shape(x)
    d = dims[axis]
    if not isinstance(d, int):
        raise ImportError_("CumProd over a symbolic axis (%s): the scan's step count needs a "
                           "constant size" % d)
    rev, excl = at.get("reverse", 0), at.get("exclusive", 0)
    if rev:
        x = x.reverse(axis)
    one = [0] * x.ndim

    def shifted(t: Tensor, s: int) -> Tensor:
        low = list(one)
        low[axis] = s
        return t.pad(low, one, 1.0).slice(None, dims)

    y = shifted(x, 1) if excl else x
    s = 1
    while s < d:
        y = y * shifted(y, s)
        s *= 2
    return y.reverse(axis) if rev else y


@converter("LpPool")
def _lp_pool(ctx, node, ins, at):
    """(sum over the window of |x|^p)^(1/p): average pooling counting the padding (zeros)
    times the kernel size. ceil_mode is refused: its partial windows average over fewer."""
    x = ctx.t(ins[0])
    if "kernel_shape" not in at:
        raise ImportError_("kernel_shape is required")
    if at.get("ceil_mode", 0):
        raise ImportError_("LpPool with ceil_mode=1 is not supported")
    kernel = [int(a) for a in at["kernel_shape"]]
    kw = _window(ctx, x, at, kernel, dilations=ctx.opset >= 18)
    p = float(at.get("p", 2))
    a = x.abs()
    a = a if p == 1 else a * a if p == 2 else a.pow(_const_like(ctx, p, a))
    s = a.avg_pool(kernel, count_include_pad=True, **kw) * _const_like(ctx, prod(kernel), a)
    y = s if p == 1 else s.sqrt() if p == 2 else s.pow(_const_like(ctx, 1.0 / p, s))
    return [Val(y)]


@converter("TensorScatter")
def _tensor_scatter(ctx, node, ins, at):
    """The KV-cache update: present = past with update written at write_indices[b] (0 when
    absent; modulo the cache length for mode='circular') along `axis`. Every cache position c
    of batch b reads update at j = c - write_indices[b] when 0 <= j < S (a take through the
    flattened batch and sequence axes), the past elsewhere. A linear write past the cache end
    is an error at run time (ONNX leaves it undefined)."""
    past, upd = ctx.t(ins[0]), ctx.t(ins[1])
    upd = upd.astype(past.dtype) if upd.dtype != past.dtype else upd
    rank = past.ndim
    if rank < 2 or upd.ndim != rank:
        raise ImportError_("past_cache and update must have the same rank >= 2 (got %d and %d)"
                           % (rank, upd.ndim))
    axis = _axis(at.get("axis", -2), rank)
    if axis == 0:
        raise ImportError_("axis 0 is the batch axis; the sequence axis must come after it")
    mode = at.get("mode", "linear")
    if mode not in ("linear", "circular"):
        raise ImportError_("mode=%s is not linear or circular" % mode)
    pd, ud = ctx.shape(past), ctx.shape(upd)
    b, cache_len, seq = pd[0], pd[axis], ud[axis]
    p, r = prod(pd[1:axis]), prod(pd[axis + 1:])
    # update as (B*S, P, R); the index of position c of batch b: b*S + j.
    u = upd.reshape([b, p, seq, r]).transpose(0, 2, 1, 3).reshape([_int(b * seq), p, r])
    w = ctx.t(ins[2]).astype(I64).reshape([b, 1]) if len(ins) > 2 and ins[2] is not None \
        else ctx.scope.constant(np.zeros((1, 1), np.int64))
    c = ctx.scope.iota(I64, [1, cache_len], 1)
    j = c - w
    lt = _size_t(ctx, cache_len)
    if mode == "circular":
        j = j - (j.astype(F64) / lt.astype(F64)).floor().astype(I64) * lt
    else:
        _require(ctx, ((w >= 0) & (w + _size_t(ctx, seq) <= lt)).astype(I64).min() > 0,
                 "write_indices + the update's length must stay within the cache")
    seq_t = _size_t(ctx, seq)
    valid = (j >= 0) & (j < seq_t)
    jj = valid.select(j, ctx.scope.constant(np.zeros((1, 1), np.int64)))
    idx = ctx.scope.iota(I64, [b, cache_len], 0) * seq_t + jj
    got = u.take(idx, 0)  # (B, L, P, R)
    got = got.transpose(0, 2, 1, 3).reshape(pd)
    mask = valid.broadcast_to([b, cache_len]).reshape([b, 1, cache_len, 1]).broadcast_to(
        [b, p, cache_len, r]).reshape(pd)
    return [Val(mask.select(got, past))]
