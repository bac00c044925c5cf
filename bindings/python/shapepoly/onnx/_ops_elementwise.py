"""ONNX converters: elementwise ops, activations, Cast, Where, Clip, Einsum."""

from typing import Any, Dict, Optional

import numpy as np

from .._core import BOOL, I64, Tensor
from ._import import (FLOATS, _dtype_name, ONNX_DTYPES, ImportError_, Importer, Val,
                      _asserting, _axis, _const_like, _pair, _same_sizes, converter)


# ---- Elementwise -------------------------------------------------------------------------

def _legacy_broadcast(ctx: Importer, a: Tensor, b: Tensor, at: Dict[str, Any]) -> Tensor:
    """Opsets < 7: B is aligned with A at `axis` when broadcast=1."""
    if ctx.opset >= 7 or not at.get("broadcast", 0):
        return b
    ra, rb = a.ndim, b.ndim
    if rb == 0 or "axis" not in at:
        return b  # trailing alignment: numpy's
    axis = _axis(at["axis"], ra)
    return b.reshape(ctx.shape(b) + [1] * (ra - axis - rb))


BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow",
          "And": "logical_and", "Or": "logical_or", "Xor": "logical_xor",
          "Equal": "__eq__", "Less": "__lt__", "Greater": "__gt__", "LessOrEqual": "__le__",
          "GreaterOrEqual": "__ge__", "BitwiseAnd": "logical_and", "BitwiseOr": "logical_or",
          "BitwiseXor": "logical_xor"}


@converter(*BINARY)
def _binary(ctx, node, ins, at):
    a, b = _pair(ctx, ins)
    if node.op_type == "Pow" and b.dtype != a.dtype:
        b = b.astype(a.dtype)
    b = _legacy_broadcast(ctx, a, b, at)
    return [Val(_asserting(ctx, lambda: getattr(a, BINARY[node.op_type])(b),
                           lambda: _same_sizes(ctx, [a, b]), "the sizes must be equal"))]


_BITS = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64}


@converter("BitShift")
def _bit_shift(ctx, node, ins, at):
    """x << s as x * 2^s and x >> s as floor(x / 2^s), wrapping in x's type; shifts outside
    [0, bits) give 0 (or -1 for a negative x shifted right), as ONNX's reference does."""
    if len(ins) < 2 or ins[0] is None or ins[1] is None:
        raise ImportError_("needs its 2 inputs X and Y, got %d" % len(ins))
    x, s = _pair(ctx, ins)
    name = x.dtype.name.lower()
    if name not in _BITS:
        raise ImportError_("BitShift of %s (an integer type is needed)" % name)
    bits, signed, left = _BITS[name], name[0] == "i", at.get("direction") == "LEFT"
    if name == "u64" and not left:
        raise ImportError_("BitShift RIGHT of uint64 is not supported (no unsigned 64-bit "
                           "division)")
    si = s.astype(I64)
    k = lambda v: ctx.scope.constant(np.array(v, np.int64))  # noqa: E731
    valid = (si >= k(0)) & (si < k(bits))
    top = bits - 2 if signed and not left else bits - 1  # 2^top must stay positive to divide
    two = ctx.scope.constant(np.array(2, np.int64))
    p = two.pow(si.maximum(k(0)).minimum(k(top))).astype(x.dtype)
    zero = _const_like(ctx, 0, x)
    if left:
        return [Val(valid.select(x * p, zero))]
    if not signed:
        return [Val(valid.select(x / p, zero))]
    sign = (x < zero).select(_const_like(ctx, -1, x), zero)  # x >> (bits - 1) and beyond
    rem = x.rem(p)
    floor = (x - (rem < zero).select(rem + p, rem)) / p  # rem with the divisor's sign
    return [Val((valid & (si < k(bits - 1))).select(floor, sign))]


@converter("Mod")
def _mod(ctx, node, ins, at):
    a, b = _pair(ctx, ins)
    r = a.rem(b)  # C's fmod: the sign of a
    if at.get("fmod", 0):
        return [Val(r)]
    # fmod=0 (integers; floats too in ONNX's tests): the sign of b, as Python's %.
    zero = _const_like(ctx, 0, r)
    fix = (r != zero) & ((r < zero) ^ (b < _const_like(ctx, 0, b)))
    return [Val(fix.select(r + b, r))]


@converter("Max", "Min", "Sum", "Mean")
def _variadic(ctx, node, ins, at):
    ts = [ctx.t(v) for v in ins if v is not None]
    ts = [ts[0]] + [t if t.dtype == ts[0].dtype else t.astype(ts[0].dtype) for t in ts[1:]]
    r = ts[0]
    for t in ts[1:]:
        fn = {"Max": r.maximum, "Min": r.minimum}.get(node.op_type, r.add)
        r = _asserting(ctx, lambda fn=fn, t=t: fn(t), lambda r=r, t=t: _same_sizes(ctx, [r, t]),
                       "the sizes must be equal")
    if node.op_type == "Mean":
        r = r / _const_like(ctx, len(ts), r)
    return [Val(r)]


UNARY = {"Tanh": "tanh", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs", "Neg": "neg",
         "Floor": "floor", "Ceil": "ceil", "Sign": "sign", "Round": "round", "Sin": "sin",
         "Cos": "cos", "Sigmoid": "logistic", "Not": "logical_not", "BitwiseNot": "logical_not",
         "Erf": "erf", "Softplus": "softplus", "Softsign": "softsign", "Tan": "tan",
         "Sinh": "sinh", "Cosh": "cosh", "Asin": "asin", "Acos": "acos", "Atan": "atan",
         "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh"}


@converter(*UNARY)
def _unary(ctx, node, ins, at):
    return [Val(getattr(ctx.t(ins[0]), UNARY[node.op_type])())]


@converter("Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "HardSigmoid", "ThresholdedRelu",
           "Reciprocal", "HardSwish", "Celu", "Mish")
def _activation(ctx, node, ins, at):
    x = ctx.t(ins[0])
    op = node.op_type
    c = lambda v: _const_like(ctx, v, x)  # noqa: E731
    zero = c(0)
    if op == "Relu":
        return [Val(x.maximum(zero))]
    if op == "LeakyRelu":
        return [Val(x.leaky_relu(at.get("alpha", 0.01)))]
    if op == "PRelu":
        slope = ctx.t(ins[1], x.dtype)
        if ctx.opset < 7 and slope.ndim == 1 and x.ndim > 2:  # one slope per channel
            slope = slope.reshape(ctx.shape(slope) + [1] * (x.ndim - 2))
        return [Val(x.prelu(slope))]
    if op == "Elu":
        return [Val(x.elu(at.get("alpha", 1.0)))]
    if op == "Celu":
        alpha = at.get("alpha", 1.0)
        return [Val((x < zero).select((x / c(alpha)).expm1() * c(alpha), x))]
    if op == "Selu":
        return [Val(x.selu(at.get("alpha", 1.67326319217681884765625),
                           at.get("gamma", 1.05070102214813232421875)))]
    if op == "HardSigmoid":
        return [Val(x.hard_sigmoid(at.get("alpha", 0.2), at.get("beta", 0.5)))]
    if op == "HardSwish":
        return [Val(x * x.hard_sigmoid(1 / 6, 0.5))]
    if op == "ThresholdedRelu":
        return [Val((x > c(at.get("alpha", 1.0))).select(x, zero))]
    if op == "Mish":
        return [Val(x * x.softplus().tanh())]
    return [Val(c(1) / x)]  # Reciprocal


@converter("IsNaN")
def _isnan(ctx, node, ins, at):
    x = ctx.t(ins[0])
    return [Val(x != x)]


@converter("Trilu")
def _trilu(ctx, node, ins, at):
    """The triangle of the matrices in the last two axes. A constant k (or none: 0) is the trilu
    op's attribute; a k computed at run time keeps where iota(cols) - iota(rows) >= k (upper)
    or <= k (lower), the same definition."""
    x = ctx.t(ins[0])
    upper = bool(at.get("upper", 1))
    kv = ins[1] if len(ins) > 1 else None
    if kv is None or kv.host is not None:
        k = ctx.ints(kv, "input 'k'")[0] if kv is not None else 0
        return [Val(x.trilu(k, upper))]
    if x.ndim < 2:
        raise ImportError_("Trilu: needs an input of rank >= 2, got rank %d" % x.ndim)
    rows, cols = ctx.shape(x)[-2:]
    d = ctx.scope.iota(I64, [rows, cols], 1) - ctx.scope.iota(I64, [rows, cols], 0)
    k = ctx.t(kv).convert(I64).reshape(1, 1)
    keep = d >= k if upper else d <= k
    return [Val(keep.select(x, _const_like(ctx, 0, x)))]


@converter("CumSum")
def _cumsum(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if ins[1].host is None:  # the axis is run-time data
        from ._ops_runtime_axes import cumsum
        return [Val(cumsum(ctx, x, ins[1], bool(at.get("exclusive", 0)),
                           bool(at.get("reverse", 0))))]
    if at.get("exclusive", 0) or at.get("reverse", 0):
        axis = _axis(ctx.ints(ins[1], "input 'axis'")[0], x.ndim)
        if at.get("reverse", 0):
            x = x.reverse(axis)
        y = x.cumsum(axis)
        if at.get("exclusive", 0):  # shifted by one (y - x would turn a NaN's slot to NaN)
            low = [0] * x.ndim
            low[axis] = 1
            y = y.pad(low, [0] * x.ndim).slice(None, ctx.shape(x))
        return [Val(y.reverse(axis) if at.get("reverse", 0) else y)]
    return [Val(x.cumsum(_axis(ctx.ints(ins[1], "input 'axis'")[0], x.ndim)))]


@converter("Shrink")
def _shrink(ctx, node, ins, at):
    x = ctx.t(ins[0])
    lambd, bias = at.get("lambd", 0.5), at.get("bias", 0.0)
    c = lambda v: _const_like(ctx, v, x)  # noqa: E731
    inner = (x > c(lambd)).select(x - c(bias), c(0))
    return [Val((x < c(-lambd)).select(x + c(bias), inner))]


def _host_scalar(v: Optional[Val]) -> Optional[float]:
    """The value of a constant scalar input (a Clip bound), or None when it is traced."""
    if v is None or v.tensor is not None or v.host is None or v.host.dtype == object or \
            v.host.size != 1:
        return None
    return float(v.host.reshape(-1)[0])


@converter("Clip")
def _clip(ctx, node, ins, at):
    x = ctx.t(ins[0])
    if ctx.opset < 11:
        lo_v, hi_v = at.get("min"), at.get("max")
        known = True
    else:
        given = [ins[i] if len(ins) > i else None for i in (1, 2)]
        lo_v, hi_v = (_host_scalar(v) for v in given)
        known = all(v is None or b is not None for v, b in zip(given, (lo_v, hi_v)))
    if known and x.dtype in FLOATS:  # constant bounds: one op
        return [Val(x.clip(float("-inf") if lo_v is None else lo_v,
                           float("inf") if hi_v is None else hi_v))]
    if ctx.opset < 11:
        lo = None if lo_v is None else _const_like(ctx, lo_v, x)
        hi = None if hi_v is None else _const_like(ctx, hi_v, x)
    else:
        lo = ctx.t(ins[1], x.dtype) if len(ins) > 1 and ins[1] is not None else None
        hi = ctx.t(ins[2], x.dtype) if len(ins) > 2 and ins[2] is not None else None
    if lo is not None:
        x = x.maximum(lo)
    if hi is not None:
        x = x.minimum(hi)
    return [Val(x)]


@converter("Where")
def _where(ctx, node, ins, at):
    x = ctx.t(ins[1]) if ins[1].tensor is not None or ins[2].tensor is None else None
    y = ctx.t(ins[2], None if x is None else x.dtype)
    x = ctx.t(ins[1], y.dtype)
    return [Val(ctx.t(ins[0], BOOL).select(x, y))]


@converter("Cast", "CastLike")
def _cast(ctx, node, ins, at):
    if node.op_type == "CastLike":
        to = ctx.t(ins[1]).dtype
    else:
        to = ONNX_DTYPES.get(at["to"])
        if to is None:
            raise ImportError_("cast to %s: shapepoly has f32, f64, i32, i64 and bool" %
                               _dtype_name(at["to"]))
    x = ctx.t(ins[0])
    # A cast to the same type is the value itself (function bodies such as Attention's cast
    # every intermediate with CastLike): no copy of it in the program.
    return [Val(x if x.dtype == to else x.astype(to))]


@converter("Identity", "Dropout")
def _identity(ctx, node, ins, at):
    """Identity, and Dropout at inference (a copy, its mask all true). Dropout in training
    mode draws random numbers: refused unless its ratio is 0."""
    v = ins[0]
    outs = [v]
    if node.op_type == "Dropout" and len(ins) > 2 and ins[2] is not None:
        train = _host_scalar(ins[2])
        ratio = _host_scalar(ins[1]) if len(ins) > 1 and ins[1] is not None else 0.5
        if train is None or (train and ratio != 0.0):
            raise ImportError_("Dropout in training mode (random; training_mode is %s) is not "
                               "supported; export the model for inference" %
                               ("computed at run time" if train is None else "true"))
    if node.op_type == "Dropout" and len(node.output) > 1 and node.output[1]:
        t = ctx.t(v)
        outs.append(Val(ctx.scope.constant(np.array(True)).broadcast_to(t.shape)))
    return outs
