"""ONNX converters: linear quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear)
and the integer products built on it (MatMulInteger, QLinearMatMul, QLinearConv).

Quantized values are the library's narrow integers (i8, u8, i16, u16, ...). The arithmetic is
ONNX's: q = saturate(round_half_even(x / scale) + zero_point) and x = (q - zero_point) * scale,
with per-tensor, per-axis or blocked scales (block_size > 0: the scale and zero point have x's
rank, and each entry along `axis` covers block_size consecutive elements of x). Integer
products accumulate in i32 (MatMulInteger) or exactly in f64 (QLinearConv: the library's conv is
floating-point, and f64 holds every u8 x i8 sum of up to 2^37 terms exactly), then requantize.
"""

from typing import Any, Dict, List, Optional

import numpy as np
from onnx import TensorProto

from .._core import F32, F64, I8, I16, I32, U8, U16, U32, Tensor
from ._import import ONNX_DTYPES, ImportError_, Importer, Val, _asserting, converter

_RANGES = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767), U16: (0, 65535),
           I32: (-2 ** 31, 2 ** 31 - 1), U32: (0, 2 ** 32 - 1)}


def _along(ctx: Importer, s: Tensor, x: Tensor, axis: int) -> Tensor:
    """A per-tensor scale as it is; a 1-D per-axis one shaped to broadcast along `axis` of x."""
    if s.ndim == 0 or (s.ndim == 1 and x.ndim <= 1):
        return s
    axis = axis + x.ndim if axis < 0 else axis
    return s.reshape(*[ctx.shape(s)[0] if i == axis else 1 for i in range(x.ndim)])


def _inputs(ins: List[Optional[Val]], n: int, what: str) -> None:
    if len(ins) < n or any(v is None for v in ins[:n]):
        raise ImportError_("needs its %d inputs %s, got %d" % (n, what, len(ins)))


def _blocked(ctx: Importer, s: Tensor, x: Tensor, axis: int, block: int, what: str) -> Tensor:
    """A blocked scale or zero point (x's rank, ceil(D / block) entries along `axis` where x has
    D) repeated block times along `axis` and cut to D: one entry per element of x."""
    if s.ndim != x.ndim:
        raise ImportError_("%s has rank %d; with block_size=%d it must have x's rank %d" %
                           (what, s.ndim, block, x.ndim))
    if not -x.ndim <= axis < x.ndim:
        raise ImportError_("axis=%d is out of range for x of rank %d" % (axis, x.ndim))
    axis = axis + x.ndim if axis < 0 else axis
    sd, xd = ctx.shape(s), ctx.shape(x)
    for i, (a, b) in enumerate(zip(sd, xd)):
        if i == axis:
            if isinstance(a, int) and isinstance(b, int) and a != -(-b // block):
                raise ImportError_("%s has %d entries on axis %d; with block_size=%d and x's "
                                   "%d it must have ceil(%d / %d) = %d" %
                                   (what, a, axis, block, b, b, block, -(-b // block)))
        elif isinstance(a, int) and isinstance(b, int) and a != b:
            raise ImportError_("%s has shape %s; with block_size it must match x's %s on every "
                               "axis but %d" % (what, _dims(sd), _dims(xd), axis))
    up = s.reshape(sd[:axis + 1] + [1] + sd[axis + 1:])
    up = up.broadcast_to(sd[:axis + 1] + [block] + sd[axis + 1:])
    up = up.reshape(sd[:axis] + [sd[axis] * block] + sd[axis + 1:])
    # Sizes that only the run decides (symbolic) are asserted, checked at run time.
    need = [(a, (b + block - 1) // block if i == axis else b) for i, (a, b) in
            enumerate(zip(sd, xd))]
    return _asserting(ctx, lambda: up.slice([0] * x.ndim, xd), lambda: need,
                      "%s's sizes must be x's, with ceil(size / %d) on axis %d" %
                      (what, block, axis))


def _block(at: Dict[str, Any]) -> None:
    """Blocked quantization to or from the ONNX-only types (_narrow_types) is refused."""
    if at.get("block_size", 0):
        raise ImportError_("blocked quantization (block_size=%d) to or from an ONNX-only element "
                           "type (float8, int4, ...) is not supported" % at["block_size"])


def _dims(ds: List[Any]) -> str:
    return "(%s)" % ", ".join(str(d) for d in ds)


def _param(ctx: Importer, v: Val, x: Tensor, at: Dict[str, Any], what: str) -> Tensor:
    """A scale or zero point shaped to broadcast against x: per tensor, per axis or blocked."""
    block = at.get("block_size", 0)
    if block < 0:
        raise ImportError_("block_size=%d is negative" % block)
    if block:
        return _blocked(ctx, ctx.t(v), x, at.get("axis", 1), block, what)
    return _along(ctx, ctx.t(v), x, at.get("axis", 1))


def _saturate(v: Tensor, zp: Optional[Tensor], dtype: Any) -> Tensor:
    """saturate(round(v) + zp) as `dtype`, in v's floating-point type."""
    q = v.round()
    if zp is not None:
        q = q + zp.astype(v.dtype)
    lo, hi = _RANGES[dtype]
    return q.clip(lo, hi).astype(dtype)


def _quantize(x: Tensor, scale: Tensor, zp: Optional[Tensor], dtype: Any) -> Tensor:
    """saturate(round(x / scale) + zp) as `dtype`, computed in f32 (f64 for f64 x)."""
    ft = F64 if x.dtype == F64 else F32
    return _saturate(x.astype(ft) / scale.astype(ft), zp, dtype)


def _dequantize(q: Tensor, scale: Tensor, zp: Optional[Tensor]) -> Tensor:
    ft = F64 if scale.dtype == F64 else F32
    v = q.astype(ft)
    if zp is not None:
        v = v - zp.astype(ft)
    return (v * scale.astype(ft)).astype(scale.dtype)


@converter("QuantizeLinear")
def _quantize_linear(ctx, node, ins, at):
    _inputs(ins, 2, "x and y_scale")
    x = ctx.t(ins[0])
    scale = _param(ctx, ins[1], x, at, "y_scale")
    zp = None
    if len(ins) > 2 and ins[2] is not None:
        zp = _param(ctx, ins[2], x, at, "y_zero_point")
        dtype = zp.dtype
    else:
        dtype = ONNX_DTYPES.get(at.get("output_dtype", TensorProto.UINT8))
    if dtype not in _RANGES:
        raise ImportError_("QuantizeLinear to %s is not supported (int8, uint8, int16, uint16, "
                           "int32 and uint32 are)" % getattr(dtype, "name", dtype))
    return [Val(_quantize(x, scale, zp, dtype))]


@converter("DequantizeLinear")
def _dequantize_linear(ctx, node, ins, at):
    _inputs(ins, 2, "x and x_scale")
    x = ctx.t(ins[0])
    scale = _param(ctx, ins[1], x, at, "x_scale")
    zp = None
    if len(ins) > 2 and ins[2] is not None:
        zp = _param(ctx, ins[2], x, at, "x_zero_point")
    return [Val(_dequantize(x, scale, zp))]


@converter("DynamicQuantizeLinear")
def _dynamic_quantize_linear(ctx, node, ins, at):
    x = ctx.t(ins[0]).astype(F32)
    lo = x.min().minimum(ctx.scope.constant(np.array(0, np.float32)))
    hi = x.max().maximum(ctx.scope.constant(np.array(0, np.float32)))
    scale = (hi - lo) / ctx.scope.constant(np.array(255, np.float32))
    zp = (-(lo / scale)).round().clip(0, 255)
    return [Val(_quantize(x, scale, zp, U8)), Val(scale), Val(zp.astype(U8))]


def _centered(ctx: Importer, ins: List[Optional[Val]], k: int, zk: int, along: int) -> Tensor:
    """Operand k minus its zero point (operand zk), in i32; a 1-D zero point applies along
    axis `along` (rows of A: -2 as a column; columns of B: the last axis)."""
    v = ctx.t(ins[k]).astype(I32)
    if len(ins) > zk and ins[zk] is not None:
        z = ctx.t(ins[zk]).astype(I32)
        if z.ndim == 1 and along == -2:
            z = z.reshape(ctx.shape(z)[0], 1)
        v = v - z
    return v


@converter("MatMulInteger")
def _matmul_integer(ctx, node, ins, at):
    _inputs(ins, 2, "A and B")
    return [Val(_centered(ctx, ins, 0, 2, -2) @ _centered(ctx, ins, 1, 3, -1))]


@converter("QLinearMatMul")
def _qlinear_matmul(ctx, node, ins, at):
    _inputs(ins, 8, "a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point")
    a = _centered(ctx, [ins[0], None, ins[2]], 0, 2, -2)
    b = _centered(ctx, [ins[3], None, ins[5]], 0, 2, -1)
    acc = (a @ b).astype(F64)
    scale = ctx.t(ins[1]).astype(F64) * ctx.t(ins[4]).astype(F64) / ctx.t(ins[6]).astype(F64)
    zp = ctx.t(ins[7])
    return [Val(_saturate(acc * scale, zp, zp.dtype))]


@converter("QLinearConv")
def _qlinear_conv(ctx, node, ins, at):
    _inputs(ins, 8, "x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point")
    from ._ops_nn import _conv_args  # the float Conv's attribute handling
    x = ctx.t(ins[0]).astype(F64) - ctx.t(ins[2]).astype(F64)
    w = ctx.t(ins[3])
    wz = ctx.t(ins[5]).astype(F64)
    w = w.astype(F64) - _along(ctx, wz, w, 0)
    bias = Val(ctx.t(ins[8]).astype(F64)) if len(ins) > 8 and ins[8] is not None else None
    x, kw = _conv_args(ctx, node, [Val(x), Val(w), bias], at)
    acc = x.conv(**kw)
    ws = _along(ctx, ctx.t(ins[4]).astype(F64), acc, 1)
    scale = ctx.t(ins[1]).astype(F64) * ws / ctx.t(ins[6]).astype(F64)
    zp = ctx.t(ins[7])
    return [Val(_saturate(acc * scale, zp, zp.dtype))]
