"""ONNX converters: matrix products, normalizations, convolution, pooling, softmax and
reductions."""

import itertools
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._core import BF16, BOOL, F16, F32, F64, I32, I64, Tensor
from ._import import (ImportError_, Importer, Val, _asserting, _axes_arg, _axis, _const_like, _int,
                      _matmul_checked, _pair, converter, dmax, prod)


# ---- Linear algebra and normalization --------------------------------------------------

@converter("MatMul")
def _matmul(ctx, node, ins, at):
    a, b = _pair(ctx, ins)
    return [Val(_matmul_checked(ctx, a, b))]


@converter("Gemm")
def _gemm(ctx, node, ins, at):
    a, b = _pair(ctx, ins)
    if at.get("transA", 0):
        a = a.transpose(1, 0)
    if at.get("transB", 0):
        b = b.transpose(1, 0)
    y = _matmul_checked(ctx, a, b)
    alpha, beta = at.get("alpha", 1.0), at.get("beta", 1.0)
    if alpha != 1.0:
        y = y * _const_like(ctx, alpha, y)
    if len(ins) > 2 and ins[2] is not None and beta != 0.0:
        cc = ctx.t(ins[2], y.dtype)
        if beta != 1.0:
            cc = cc * _const_like(ctx, beta, cc)
        y = y + cc
    return [Val(y)]


def _norm_last(ctx: Importer, x: Tensor, axis: int, eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the axes from `axis` to the last."""
    dims = ctx.shape(x)
    if axis == len(dims) - 1:
        return x.layer_norm(-1, eps)
    flat = x.reshape(dims[:axis] + [prod(dims[axis:])]).layer_norm(-1, eps)
    return flat.reshape(dims)


@converter("LayerNormalization")
def _layer_norm(ctx, node, ins, at):
    x = ctx.t(ins[0])
    rank, eps = x.ndim, at.get("epsilon", 1e-5)
    axis = _axis(at.get("axis", -1), rank)
    y = _norm_last(ctx, x, axis, eps) * ctx.t(ins[1], x.dtype)
    if len(ins) > 2 and ins[2] is not None:
        y = y + ctx.t(ins[2], x.dtype)
    outs = [Val(y)]
    if len(node.output) > 1:
        axes = list(range(axis, rank))
        mean = x.mean(axes, True)
        d = x - mean
        inv = ((d * d).mean(axes, True) + _const_like(ctx, eps, x)).rsqrt()
        outs += [Val(mean), Val(inv)]
    return outs


def _per_channel(ctx: Importer, v: Val, x: Tensor) -> Tensor:
    """A (C,) parameter shaped (C, 1, ...) against x = (N, C, ...)."""
    t = ctx.t(v, x.dtype)
    return t.reshape(ctx.shape(t) + [1] * (x.ndim - 2))


@converter("InstanceNormalization")
def _instance_norm(ctx, node, ins, at):
    x = ctx.t(ins[0])
    y = _norm_last(ctx, x, 2, at.get("epsilon", 1e-5))
    return [Val(y * _per_channel(ctx, ins[1], x) + _per_channel(ctx, ins[2], x))]


@converter("BatchNormalization")
def _batch_norm(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if x.ndim < 2:
        raise ImportError_("input X has rank %d; BatchNormalization needs (N, C, ...)" % x.ndim)
    p = [ctx.t(v, x.dtype) for v in ins[1:5]]
    eps = at.get("epsilon", 1e-5)
    if at.get("training_mode", 0):
        if ctx.opset < 14:
            raise ImportError_("training mode before opset 14 (its saved_mean/saved_var "
                               "outputs) is not supported")
        return _batch_norm_training(ctx, x, p, eps, at.get("momentum", 0.9))
    if ctx.opset < 9 and not at.get("is_test", 0) and len([o for o in node.output if o]) > 1:
        raise ImportError_("training mode is not supported before opset 14")
    return [Val(x.batch_norm(p[0], p[1], p[2], p[3], eps))]


def _batch_norm_training(ctx: Importer, x: Tensor, p: List[Tensor], eps: float,
                         momentum: float) -> List[Val]:
    """Training mode (opset >= 14): normalized by the batch's mean and (population) variance
    per channel; the running statistics come out blended with `momentum`."""
    scale, bias, mean, var = p
    axes = [0] + list(range(2, x.ndim))
    m = x.mean(axes, True)
    d = x - m
    v = (d * d).mean(axes, True)
    c = ctx.shape(x)[1]
    per_channel = [1, c] + [1] * (x.ndim - 2)
    y = d * (v + _const_like(ctx, eps, x)).rsqrt() * scale.reshape(per_channel) + \
        bias.reshape(per_channel)
    k = _const_like(ctx, momentum, x)
    one_k = _const_like(ctx, 1.0 - momentum, x)
    return [Val(y), Val(mean * k + m.reshape([c]) * one_k),
            Val(var * k + v.reshape([c]) * one_k)]


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx, node, ins, at):
    x = ctx.t(ins[0])
    return [Val(x.global_avg_pool() if node.op_type == "GlobalAveragePool" else
                x.global_max_pool())]


@converter("LpNormalization")
def _lp_normalization(ctx, node, ins, at):
    """x / ||x||_p along `axis` (p 1 or 2); where the norm is 0 the result is 0 (ONNX's
    reference; onnxruntime gives 0/0 = NaN there)."""
    x = ctx.t(ins[0])
    axis = _axis(at.get("axis", -1), x.ndim)
    norm = x.abs().sum(axis, True) if at.get("p", 2) == 1 else (x * x).sum(axis, True).sqrt()
    zero = _const_like(ctx, 0, x)
    return [Val((norm == zero).select(zero.broadcast_to(x.shape), x / norm))]


# ---- Convolution and pooling -----------------------------------------------------------

AUTO_PAD = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def _window(ctx: Importer, x: Tensor, at: Dict[str, Any], kernel: Optional[List[int]],
            dilations: bool = True) -> Dict[str, Any]:
    """strides, dilations, pads and auto_pad of a conv or pool node over x's spatial axes,
    checked against the kernel's rank (ONNX's defaults: 1, 1, 0, NOTSET)."""
    n = x.ndim - 2
    if n < 1:
        raise ImportError_("input X has rank %d; convolution and pooling need (N, C, spatial "
                           "axes...)" % x.ndim)
    if kernel is not None and len(kernel) != n:
        raise ImportError_("kernel_shape has %d entries for %d spatial axes" % (len(kernel), n))
    auto_pad = at.get("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad not in AUTO_PAD:
        raise ImportError_("auto_pad=%s is not one of %s" % (auto_pad, ", ".join(AUTO_PAD)))
    out: Dict[str, Any] = {"auto_pad": auto_pad}
    for key, size, _default in (("strides", n, 1), ("dilations", n, 1), ("pads", 2 * n, 0)):
        v = list(at.get(key, [])) if (key != "dilations" or dilations) else []
        if v and len(v) != size:
            raise ImportError_("%s has %d entries, expected %d (for %d spatial axes)" %
                               (key, len(v), size, n))
        out[key] = [int(a) for a in v] if v else None
    if auto_pad != "NOTSET" and out["pads"] and any(out["pads"]):
        raise ImportError_("pads %s given with auto_pad=%s (ONNX allows only one of them)" %
                           (out["pads"], auto_pad))
    if auto_pad != "NOTSET":
        out["pads"] = None
    return out


def _kernel(ctx: Importer, at: Dict[str, Any], w: Optional[Tensor]) -> Optional[List[int]]:
    """kernel_shape, checked against the weight's spatial sizes when both are known."""
    k = [int(a) for a in at["kernel_shape"]] if "kernel_shape" in at else None
    if w is not None:
        ws = ctx.shape(w)[2:]
        if k is not None and len(k) == len(ws) and any(
                isinstance(b, int) and a != b for a, b in zip(k, ws)):
            raise ImportError_("kernel_shape %s does not match the weight's spatial sizes %s" %
                               (k, [str(d) for d in ws]))
    return k


def _conv_args(ctx: Importer, node: Any, ins: List[Optional[Val]], at: Dict[str, Any]
               ) -> Tuple[Tensor, Dict[str, Any]]:
    x = ctx.t(ins[0])
    w = ctx.t(ins[1], x.dtype)
    kw = _window(ctx, x, at, _kernel(ctx, at, w))
    if w.ndim != x.ndim:
        raise ImportError_("weight W has rank %d, input X rank %d (expected equal)" %
                           (w.ndim, x.ndim))
    kw["groups"] = int(at.get("group", 1))
    kw["w"] = w
    kw["bias"] = ctx.t(ins[2], x.dtype) if len(ins) > 2 and ins[2] is not None else None
    return x, kw


@converter("Conv")
def _conv(ctx, node, ins, at):
    x, kw = _conv_args(ctx, node, ctx.fold_batch_norm(node, ins), at)
    return [Val(x.conv(**kw))]


def _conv_transpose_pads(ctx: Importer, x: Tensor, w: Tensor, at: Dict[str, Any],
                         kw: Dict[str, Any]) -> Optional[List[int]]:
    """ONNX's output_shape: the pads (and auto_pad's split) that give that output size. An
    output_shape past the full transposed convolution (by less than the stride, as
    output_padding could be) gets the extra rows at the end in every auto_pad mode, as
    onnxruntime and onnx's reference (NOTSET) do: returns those counts (None when there are
    none), zeros to add after the convolution (the bias covers them too)."""
    n = x.ndim - 2
    out = [int(a) for a in at["output_shape"]][-n:]
    strides = kw["strides"] or [1] * n
    dil = kw["dilations"] or [1] * n
    opad = kw["output_padding"] or [0] * n
    ins = ctx.shape(x)[2:]
    ks = ctx.shape(w)[2:]
    begin, end, grow = [], [], [0] * n
    for i in range(n):
        if not isinstance(ins[i], int) or not isinstance(ks[i], int):
            raise ImportError_("output_shape with a symbolic input size (axis %d is %s): the "
                               "pads it implies would depend on the size; give pads instead" %
                               (i + 2, ins[i]))
        total = strides[i] * (ins[i] - 1) + opad[i] + (ks[i] - 1) * dil[i] + 1 - out[i]
        if total < 0:
            if -total >= strides[i]:
                raise ImportError_("output_shape %s is %d more than the full transposed "
                                   "convolution on spatial axis %d; at most stride - 1 = %d "
                                   "more is allowed (the input would not be that size)" %
                                   (out, -total, i, strides[i] - 1))
            grow[i], total = -total, 0
        half = total // 2
        if kw["auto_pad"] == "SAME_UPPER":
            begin.append(half)
            end.append(total - half)
        else:
            begin.append(total - half)
            end.append(half)
    kw["pads"], kw["auto_pad"] = begin + end, "NOTSET"
    return grow if any(grow) else None


@converter("ConvTranspose")
def _conv_transpose(ctx, node, ins, at):
    x, kw = _conv_args(ctx, node, ins, at)
    n = x.ndim - 2
    opad = [int(a) for a in at.get("output_padding", [])]
    if opad and len(opad) != n:
        raise ImportError_("output_padding has %d entries, expected %d" % (len(opad), n))
    kw["output_padding"] = opad or None
    grow = _conv_transpose_pads(ctx, x, kw["w"], at, kw) if "output_shape" in at else None
    if grow is None:
        return [Val(x.conv_transpose(**kw))]
    bias, kw["bias"] = kw["bias"], None
    y = x.conv_transpose(**kw).pad([0] * (n + 2), [0, 0] + grow)
    if bias is not None:
        y = y + bias.reshape([ctx.shape(bias)[0]] + [1] * n)
    return [Val(y)]


@converter("MaxPool", "AveragePool")
def _pool(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if "kernel_shape" not in at:
        raise ImportError_("kernel_shape is required")
    kernel = _kernel(ctx, at, None)
    maxpool = node.op_type == "MaxPool"
    # dilations: MaxPool from opset 10, AveragePool from 19; ceil_mode from 10.
    kw = _window(ctx, x, at, kernel, dilations=ctx.opset >= (10 if maxpool else 19))
    kw["ceil_mode"] = bool(at.get("ceil_mode", 0)) if ctx.opset >= 10 else False
    if maxpool and len(node.output) > 1 and node.output[1]:
        order = at.get("storage_order", 0)
        if order not in (0, 1):
            raise ImportError_("storage_order=%s is not 0 (row major) or 1 (column major)" %
                               order)
        return [Val(t) for t in _max_pool_indices(ctx, x, kernel, kw, order)]
    if maxpool:
        return [Val(x.max_pool(kernel, **kw))]
    # count_include_pad from opset 7 (before: padding never counted).
    return [Val(x.avg_pool(kernel, count_include_pad=bool(at.get("count_include_pad", 0))
                           if ctx.opset >= 7 else False, **kw))]


def _flat_index(ctx: Importer, dims: List[Any], column_major: bool) -> Tensor:
    """ONNX's MaxPool index of every element of an (N, C, *spatial) tensor: its row-major flat
    position, or (storage_order 1) (n * C + c) * prod(spatial) plus the spatial position in
    column-major order."""
    if not column_major:
        return ctx.scope.iota(I64, [prod(dims)], 0).reshape(dims)
    idx = ctx.scope.iota(I64, dims, 0) * _const(ctx, dims[1]) + ctx.scope.iota(I64, dims, 1)
    idx = idx * _const(ctx, prod(dims[2:]))
    step: Any = 1
    for i in range(2, len(dims)):
        idx = idx + ctx.scope.iota(I64, dims, i) * _const(ctx, step)
        step = step * dims[i]
    return idx


def _const(ctx: Importer, d: Any) -> Tensor:
    """A dim (an int or a symbolic size) as an i64 scalar tensor."""
    return ctx.scope.dim_value(d)


def _max_pool_indices(ctx: Importer, x: Tensor, kernel: List[int], kw: Dict[str, Any],
                      column_major: bool) -> Tuple[Tensor, Tensor]:
    """MaxPool's (Y, Indices): each window's taps in row-major order, the first in-bounds tap
    then every strictly greater one, so the first of equal maxima (onnx's reference and
    onnxruntime); a NaN propagates as in the library's max_pool (the Y without Indices) and its
    index is the window's first NaN (PyTorch's rule; ONNX leaves NaN open). A window with no
    tap in bounds gives 0 and index -1. One strided slice of the padded input (and of its flat
    indices) per tap."""
    n = x.ndim - 2
    dims = ctx.shape(x)
    outs = ctx.shape(x.max_pool(kernel, **kw))[2:]  # the library's output sizes
    strides, dil = kw["strides"] or [1] * n, kw["dilations"] or [1] * n
    low, high = [], []
    for i in range(n):
        eff = (kernel[i] - 1) * dil[i] + 1
        need = (outs[i] - 1) * strides[i] + eff  # the padded extent the windows cover
        if kw["auto_pad"] in ("SAME_UPPER", "SAME_LOWER"):
            total = dmax(need - dims[2 + i], 0)
            half = total // 2
            b = half if kw["auto_pad"] == "SAME_UPPER" else total - half
        else:
            b = kw["pads"][i] if kw["pads"] else 0
        low.append(_int(b))
        high.append(dmax(need - dims[2 + i] - b, 0))
    xp = x.pad([0, 0] + low, [0, 0] + high)
    ip = _flat_index(ctx, dims, column_major).pad([0, 0] + low, [0, 0] + high, -1)
    best = best_i = have = None
    for tap in itertools.product(*[range(k) for k in kernel]):
        start = [t * d for t, d in zip(tap, dil)]
        limit = [s + (o - 1) * st + 1 for s, o, st in zip(start, outs, strides)]
        cut = ([None, None] + start, [None, None] + limit, [1, 1] + strides)
        v, j = xp.slice(*cut), ip.slice(*cut)
        ok = j >= _const(ctx, 0)
        if best is None:
            best, best_i, have = v, j, ok
            continue
        take = ok & (~have | (v > best))
        if x.dtype in (F16, BF16, F32, F64):  # a NaN wins over every number
            take = take | (ok & (v != v) & (best == best))
        best, best_i, have = take.select(v, best), take.select(j, best_i), have | ok
    return best, best_i


@converter("LRN")
def _lrn(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if "size" not in at:
        raise ImportError_("size is required")
    return [Val(x.lrn(int(at["size"]), at.get("alpha", 1e-4), at.get("beta", 0.75),
                      at.get("bias", 1.0)))]


@converter("DepthToSpace", "SpaceToDepth")
def _depth_to_space(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if "blocksize" not in at:
        raise ImportError_("blocksize is required")
    b = int(at["blocksize"])
    # DepthToSpace has a mode from opset 11, SpaceToDepth from 28 (_opset.HANDLES).
    mode = at.get("mode", "DCR") if ctx.opset >= 11 else "DCR"
    if mode not in ("DCR", "CRD"):
        raise ImportError_("mode=%s is not DCR or CRD" % mode)
    if node.op_type == "SpaceToDepth":  # ONNX requires H and W to be multiples of b
        y = _asserting(ctx, lambda: x.space_to_depth(b), lambda: [
            (_int(d % b), 0) for d in ctx.shape(x)[2:]], "the size must be a multiple of %d"
            % b)
        if mode == "CRD":  # channels c*b*b + i*b + j instead of (i*b + j)*C + c
            n, cbb, h, w = ctx.shape(y)
            c = ctx.shape(x)[1]
            y = y.reshape([n, b * b, c, h, w]).transpose(0, 2, 1, 3, 4).reshape(
                [n, cbb, h, w])
        return [Val(y)]
    return [Val(x.depth_to_space(b, mode))]


def _softmax_axis(ctx: Importer, x: Tensor, at: Dict[str, Any]) -> Tuple[Tensor, Any]:
    """(tensor to normalize along -1 or axis, how to restore): opsets < 13 flatten to 2-D."""
    rank = x.ndim
    if ctx.opset < 13:
        axis = _axis(at.get("axis", 1), rank)
        dims = ctx.shape(x)
        return x.reshape([prod(dims[:axis]), prod(dims[axis:])]), (-1, dims)
    return x, (_axis(at.get("axis", -1), rank), None)


@converter("Softmax", "LogSoftmax")
def _softmax(ctx, node, ins, at):
    x, (axis, dims) = _softmax_axis(ctx, ctx.t(ins[0]), at)
    y = x.softmax(axis) if node.op_type == "Softmax" else x.log_softmax(axis)
    return [Val(y if dims is None else y.reshape(dims))]


REDUCE = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
          "ReduceProd": "prod", "ReduceSumSquare": "sum", "ReduceL1": "sum", "ReduceL2": "sum",
          "ReduceLogSum": "sum", "ReduceLogSumExp": "sum"}


@converter(*REDUCE)
def _reduce(ctx, node, ins, at):
    x = ctx.t(ins[0])
    op = node.op_type
    if x.dtype == BOOL and op in ("ReduceMax", "ReduceMin"):  # any / all, through 0 and 1
        y = _reduce(ctx, node, [Val(x.astype(I32))] + list(ins[1:]), at)[0].tensor
        return [Val(y > _const_like(ctx, 0, y))]  # an empty max is INT_MIN: false
    keep = bool(at.get("keepdims", 1))
    since = 13 if op == "ReduceSum" else 18
    if ctx.opset >= since and len(ins) > 1 and ins[1] is not None and ins[1].host is None:
        from ._ops_runtime_axes import reduce  # the axes are run-time data
        y = reduce(ctx, op, x, ins[1], keep, bool(at.get("noop_with_empty_axes", 0)))
        if y is not None:
            return [Val(y)]
        ins = ins[:1]  # an empty axes input: every axis
    axes = _axes_arg(ctx, ins, at, since)
    if not axes:
        if at.get("noop_with_empty_axes", 0):
            return [Val(x)]
        axes = list(range(x.ndim))
    axes = sorted({_axis(a, x.ndim) for a in axes})
    if op in ("ReduceSumSquare", "ReduceL2"):
        x = x * x
    elif op == "ReduceL1":
        x = x.abs()
    elif op == "ReduceLogSumExp":
        m = x.max(axes, True)
        y = (x - m).exp().sum(axes, True).log() + m
        return [Val(y if keep else y.reshape([d for i, d in enumerate(ctx.shape(y))
                                              if i not in axes]))]
    y = getattr(x, REDUCE[op])(axes, keep)
    if op == "ReduceL2":
        y = y.sqrt()
    elif op == "ReduceLogSum":
        y = y.log()
    return [Val(y)]


@converter("GlobalLpPool")
def _global_lp_pool(ctx, node, ins, at):
    """(sum of |x|^p over the spatial axes)^(1/p), keeping them as size 1."""
    x = ctx.t(ins[0])
    if x.ndim < 3:
        raise ImportError_("input X has rank %d; GlobalLpPool needs (N, C, spatial...)" % x.ndim)
    p = at.get("p", 2)
    axes = list(range(2, x.ndim))
    if p == 1:
        return [Val(x.abs().sum(axes, True))]
    if p == 2:
        return [Val((x * x).sum(axes, True).sqrt())]
    pc = _const_like(ctx, p, x)
    return [Val(x.abs().pow(pc).sum(axes, True).pow(_const_like(ctx, 1.0 / p, x)))]


# ---- Col2Im and DeformConv (composites) ---------------------------------------------------

def _int_attr_list(at: Dict[str, Any], key: str, n: int, default: int, least: int
                   ) -> List[int]:
    """An ints attribute of n entries (or ONNX's default), each checked to be >= least."""
    v = [int(a) for a in at.get(key, [])] or [default] * n
    if len(v) != n:
        raise ImportError_("%s has %d entries, expected %d (for %d spatial axes)" %
                           (key, len(v), n, n if key != "pads" else n // 2))
    if any(a < least for a in v):
        raise ImportError_("%s %s: each must be >= %d" % (key, v, least))
    return v


def _sizes_input(ctx: Importer, v: Optional[Val], what: str, least: int
                 ) -> List[Tuple[Tensor, Any]]:
    """A 1-D i64 input of sizes as (i64 scalar, size) pairs: ints when known at import, else
    data-dependent sizes (checked at run time to be >= least)."""
    from ._ops_shape import _c, _entries, _require, _size
    if v is None:
        raise ImportError_("input %s is required" % what)
    if v.host is not None:
        vals = ctx.ints(v, "input " + what)
        if any(not isinstance(a, int) or a < least for a in vals):
            raise ImportError_("input %s %s: each must be >= %d" % (what, vals, least))
        return [(_c(ctx, a), a) for a in vals]
    out = []
    for t in _entries(ctx, v, "input " + what):
        _require(ctx, t >= least, "every entry of %s must be >= %d" % (what, least))
        out.append((t, _size(t)))
    return out


@converter("Col2Im")
def _col2im(ctx, node, ins, at):
    """Col2Im as a scatter_add: every element (n, c * K + k, l) of the columns goes to the image
    position its block l and kernel offset k name (dropped when it falls in the padding). The
    image and block shapes may be computed at run time (data-dependent sizes)."""
    from ._ops_runtime_axes import _reshape
    from ._ops_shape import _c, _dim_t, _require, _size
    if len(ins) < 3 or any(v is None for v in ins[:3]):
        raise ImportError_("needs its 3 inputs input, image_shape and block_shape")
    x = ctx.t(ins[0])
    if x.ndim != 3:
        raise ImportError_("input has rank %d; Col2Im needs (N, C * prod(block_shape), L)" %
                           x.ndim)
    image = _sizes_input(ctx, ins[1], "image_shape", 1)
    block = _sizes_input(ctx, ins[2], "block_shape", 1)
    n = len(image)
    if len(block) != n or n == 0:
        raise ImportError_("image_shape has %d entries and block_shape %d (expected equal, at "
                           "least 1)" % (n, len(block)))
    strides = _int_attr_list(at, "strides", n, 1, 1)
    dil = _int_attr_list(at, "dilations", n, 1, 1)
    pads = _int_attr_list(at, "pads", 2 * n, 0, 0)
    nb = []  # blocks per spatial axis, as i64 scalars
    for i in range(n):
        eff = (block[i][0] - 1) * dil[i] + 1
        span = image[i][0] + (pads[i] + pads[n + i]) - eff
        _require(ctx, span >= 0, "block %d of axis %d (dilated) is larger than the padded "
                 "image" % (i, i))
        nb.append(span / strides[i] + 1)
    dims = ctx.shape(x)
    count = _c(ctx, 1)
    for b in nb:
        count = count * b
    _require(ctx, count == _dim_t(ctx, dims[2]), "L (the input's axis 2) must be the number "
             "of blocks")
    k_t = _c(ctx, 1)
    for t, _ in block:
        k_t = k_t * t
    k = prod([d for _, d in block]) if all(isinstance(d, int) for _, d in block) else \
        _size(k_t)
    c_t = _dim_t(ctx, dims[1])
    _require(ctx, c_t.rem(k_t) == 0, "the input's axis 1 must be a multiple of "
             "prod(block_shape)")
    c = _int(dims[1] // k) if isinstance(dims[1], int) and isinstance(k, int) else \
        _size(c_t / k_t)
    cols = _reshape(ctx, x, [dims[0], c, k, dims[2]])
    # The image position of every (kernel offset k, block l), row major; P (one past the
    # image) for a position in the padding.
    kk = ctx.scope.iota(I64, [k, dims[2]], 0)
    ll = ctx.scope.iota(I64, [k, dims[2]], 1)
    flat, ok = None, None
    k_after, l_after = _c(ctx, 1), _c(ctx, 1)
    for i in reversed(range(n)):
        ki = (kk / k_after).rem(block[i][0])
        li = (ll / l_after).rem(nb[i])
        k_after, l_after = k_after * block[i][0], l_after * nb[i]
        pos = li * strides[i] - pads[i] + ki * dil[i]
        inside = (pos >= 0) & (pos < image[i][0])
        ok = inside if ok is None else ok & inside
        after = _c(ctx, 1)
        for t, _ in image[i + 1:]:
            after = after * t
        flat = pos * after if flat is None else flat + pos * after
    p = prod([d for _, d in image])
    idx = ok.select(flat, _dim_t(ctx, p))
    base = ctx.scope.constant(np.zeros((), x.dtype.numpy)).broadcast_to(
        [dims[0], c, _int(p + 1)])
    y = base.scatter_add(idx, cols, 2).slice([0, 0, 0], [dims[0], c, p])
    return [Val(y.reshape([dims[0], c] + [d for _, d in image]))]


@converter("DeformConv")
def _deform_conv(ctx, node, ins, at):
    """DeformConv as a composite: every kernel tap of every output position samples X at its
    regular position plus its offset (bilinear, zero outside X: one take_along_axis per corner),
    times the mask; the sampled columns then go through a grouped matmul with W, plus B. Any
    number of spatial axes (onnx's reference and onnxruntime have 2)."""
    if len(ins) < 3 or any(v is None for v in ins[:3]):
        raise ImportError_("needs its inputs X, W and offset")
    x = ctx.t(ins[0])
    if x.dtype not in (F16, BF16, F32, F64):
        raise ImportError_("X must be float, not %s" % x.dtype.name.lower())
    w, off = ctx.t(ins[1], x.dtype), ctx.t(ins[2], x.dtype)
    n = x.ndim - 2
    if n < 1 or w.ndim != x.ndim or off.ndim != x.ndim:
        raise ImportError_("X, W and offset have ranks %d, %d and %d; DeformConv needs (N, C, "
                           "spatial...) for each, with at least one spatial axis" %
                           (x.ndim, w.ndim, off.ndim))
    xs, ws, offs = ctx.shape(x), ctx.shape(w), ctx.shape(off)
    kernel = [int(a) for a in at["kernel_shape"]] if "kernel_shape" in at else ws[2:]
    if len(kernel) != n or not all(isinstance(k, int) and k >= 1 for k in kernel):
        raise ImportError_("kernel_shape %s: expected %d known sizes >= 1" %
                           ([str(k) for k in kernel], n))
    if any(isinstance(a, int) and a != b for a, b in zip(ws[2:], kernel)):
        raise ImportError_("kernel_shape %s does not match W's spatial sizes %s" %
                           (kernel, _shape_str(ws[2:])))
    strides = _int_attr_list(at, "strides", n, 1, 1)
    dil = _int_attr_list(at, "dilations", n, 1, 1)
    pads = _int_attr_list(at, "pads", 2 * n, 0, 0)
    group, og = int(at.get("group", 1)), int(at.get("offset_group", 1))
    if group < 1 or og < 1:
        raise ImportError_("group=%d and offset_group=%d must be >= 1" % (group, og))
    c, oc = xs[1], ws[0]
    kn = prod(kernel)
    outs = [_int((xs[2 + i] + pads[i] + pads[n + i] - (kernel[i] - 1) * dil[i] - 1) //
                 strides[i] + 1) for i in range(n)]
    need = [(c % og, 0), (c % group, 0), (oc % group, 0), (ws[1] * group, c),
            (offs[1], og * kn * n), (offs[0], xs[0])] + list(zip(offs[2:], outs))
    for a, b in need:
        if isinstance(a, int) and isinstance(b, int) and a != b:
            raise ImportError_("shapes X %s, W %s, offset %s do not fit group=%d, "
                               "offset_group=%d, kernel %s (offset must be (N, offset_group * "
                               "%d * %d, %s))" % (_shape_str(xs), _shape_str(ws),
                                                   _shape_str(offs), group, og, kernel, kn, n,
                                                   ", ".join(str(o) for o in outs)))
    for a, b in need:
        if not (isinstance(a, int) and isinstance(b, int)) and str(a) != str(b):
            ctx.scope.check(a, "==", b, "%s: DeformConv's shapes (%s == %s)" %
                            (ctx.label, a, b))
    npos = prod(outs)
    ft = F64 if x.dtype == F64 else F32
    # The regular sampling position of tap k at output position p, per axis: (K, P).
    kk = ctx.scope.iota(I64, [kn, npos], 0)
    pp = ctx.scope.iota(I64, [kn, npos], 1)
    offset = off.astype(ft).reshape([xs[0], og, kn, n, npos])
    corners = []  # per axis: [(index, weight, inside)] for the floor and the next position
    k_after, p_after = 1, _const(ctx, 1)
    for i in reversed(range(n)):
        ki = (kk / k_after).rem(kernel[i])
        oi = (pp / p_after).rem(_const(ctx, outs[i]))
        k_after, p_after = k_after * kernel[i], p_after * _const(ctx, outs[i])
        base = (oi * strides[i] + ki * dil[i] - pads[i]).astype(ft)
        v = offset.slice([0, 0, 0, i, 0], [xs[0], og, kn, i + 1, npos]).reshape(
            [xs[0], og, kn, npos]) + base
        f = v.floor()
        t = v - f
        size = _const(ctx, xs[2 + i])
        axis = []
        for idx, wt in ((f, 1.0 - t), (f + 1.0, t)):
            j = idx.astype(I64)
            inside = (idx >= 0.0) & (idx < size.astype(ft))
            axis.append((inside.select(j, _const(ctx, 0)), wt, inside))
        corners.insert(0, axis)
    # X as (N, offset_group, C / offset_group, prod(spatial)); one gather per corner.
    cg = _int(c // og)
    flat_x = x.reshape([xs[0], og, cg, prod(xs[2:])])
    sampled = None
    for combo in itertools.product(*corners):
        flat, wt, ok = None, None, None
        for i, (j, wi, vi) in enumerate(combo):
            step = _const(ctx, prod(xs[3 + i:]))
            flat = j * step if flat is None else flat + j * step
            wt = wi if wt is None else wt * wi
            ok = vi if ok is None else ok & vi
        wt = ok.select(wt, 0.0)
        idx = flat.reshape([xs[0], og, 1, kn * npos]).broadcast_to(
            [xs[0], og, cg, kn * npos])
        g = flat_x.take_along_axis(idx, 3).reshape([xs[0], og, cg, kn, npos])
        g = g.astype(ft) * wt.reshape([xs[0], og, 1, kn, npos])
        sampled = g if sampled is None else sampled + g
    if len(ins) > 4 and ins[4] is not None:
        mask = ctx.t(ins[4]).astype(ft)
        sampled = sampled * _asserting(
            ctx, lambda: mask.reshape([xs[0], og, 1, kn, npos]),
            lambda: [(prod(ctx.shape(mask)), xs[0] * og * kn * npos)],
            "mask must be (N, offset_group * %d, output sizes...)" % kn)
    cols = sampled.reshape([xs[0], group, _int(c // group) * kn, npos])
    wg = w.astype(ft).reshape([group, _int(oc // group), _int(c // group) * kn])
    y = wg.matmul(cols).reshape([xs[0], oc] + outs)
    if len(ins) > 3 and ins[3] is not None:
        y = y + ctx.t(ins[3]).astype(ft).reshape([oc] + [1] * n)
    return [Val(y.astype(x.dtype) if y.dtype != x.dtype else y)]


def _shape_str(ds: List[Any]) -> str:
    return "(%s)" % ", ".join(str(d) for d in ds)
