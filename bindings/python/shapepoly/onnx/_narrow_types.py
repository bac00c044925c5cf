"""ONNX-only element types: FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ,
FLOAT8E8M0, FLOAT4E2M1, INT4, UINT4, INT2 and UINT2, which the library does not have.

The importer represents each with an existing element type (its storage):
  - the float types are u8 tensors of bit patterns (FLOAT4E2M1: the 4-bit code, 0-15);
  - INT4 and INT2 are i8 tensors of values (-8..7, -2..1), UINT4 and UINT2 u8 tensors of values
    (0..15, 0..3): one value per element, not packed.
A `Val` of such a type carries its ONNX type in `narrow`. Only the nodes below take them; any
other node on one is refused naming the type:
  - Cast and CastLike from and to every type, as onnx's reference implementation does (ml_dtypes
    conversions; `saturate` for the float8 types; FLOAT8E8M0's `round_mode`);
  - QuantizeLinear to, and DequantizeLinear from, the int, float8 and FLOAT4E2M1 types;
  - Equal (the float types compare values: NaN != NaN, -0 == +0);
  - nodes that only move elements (MOVES), whose outputs keep the type.

Decoding a float type is a take from a constant table of the 256 (16) values by the bits.
Encoding one (round to nearest even) is a composite, exact but not fast: the index of the
result among the sorted representable magnitudes is the number of thresholds (the midpoints
between neighbours) that |x| exceeds, counted by comparing each element with a constant vector
of thresholds and summing; a tie rounds up when the upper neighbour's code is even, written as
a strict comparison with the float just below the midpoint. The code then comes from a table
indexed by that count and the sign (NaN has its own entry). So encoding costs about 128 (E8M0:
255) comparisons per element.
"""

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from onnx import TensorProto, helper

from .._core import BF16, F16, F32, F64, I8, I32, U8, DType, Tensor
from ._import import ONNX_DTYPES, ImportError_, Importer, Val, _dtype_name

# Nodes that move elements without reading them: their outputs have their inputs' type.
MOVES = {"Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Concat",
         "Split", "Slice", "Gather", "GatherElements", "GatherND", "Expand", "Tile",
         "DepthToSpace", "SpaceToDepth", "Where", "Compress", "ReverseSequence"}
# Nodes whose outputs say nothing of their input's element values (a shape, a count).
SHAPES = {"Shape", "Size"}


class _Float:
    """A small float format: sign bit, `e` exponent bits, `m` mantissa bits, `bias`; `kind`
    says what the top codes mean: "ieee" (all-ones exponent: inf and NaNs, as E5M2), "fn"
    (only S.1111.111 is NaN), "fnuz" (0x80 is the only NaN, no -0, no inf), "finite" (FLOAT4E2M1:
    every code is a number)."""

    def __init__(self, name: str, e: int, m: int, bias: int, kind: str) -> None:
        self.name, self.e, self.m, self.bias, self.kind = name, e, m, bias, kind
        self.bits = 1 + e + m
        self.sign = 1 << (e + m)

    def value(self, code: int) -> float:
        """The value of the positive-sign code `code` (< self.sign)."""
        ex, frac = code >> self.m, code & ((1 << self.m) - 1)
        top = ex == (1 << self.e) - 1
        if self.kind == "ieee" and top:
            return math.inf if frac == 0 else math.nan
        if self.kind == "fn" and top and frac == (1 << self.m) - 1:
            return math.nan
        if ex == 0:
            return math.ldexp(frac, 1 - self.bias - self.m)
        return math.ldexp((1 << self.m) + frac, ex - self.bias - self.m)

    def nan_code(self) -> int:
        return {"ieee": (self.sign - 1) ^ 1, "fn": self.sign - 1, "fnuz": self.sign,
                "finite": self.sign}[self.kind]

    def table(self) -> np.ndarray:
        """f32 value of every code (2^bits entries)."""
        out = np.empty(1 << self.bits, np.float32)
        for c in range(self.sign):
            v = self.value(c)
            out[c] = v
            out[c | self.sign] = -v
        if self.kind == "fnuz":
            out[self.sign] = np.nan
        return out

    def finite(self) -> List[Tuple[float, int]]:
        """(value, code) of the finite non-negative values, ascending."""
        return [(v, c) for c, v in ((c, self.value(c)) for c in range(self.sign))
                if math.isfinite(v)]


FLOATS8 = {
    TensorProto.FLOAT8E4M3FN: _Float("FLOAT8E4M3FN", 4, 3, 7, "fn"),
    TensorProto.FLOAT8E4M3FNUZ: _Float("FLOAT8E4M3FNUZ", 4, 3, 8, "fnuz"),
    TensorProto.FLOAT8E5M2: _Float("FLOAT8E5M2", 5, 2, 15, "ieee"),
    TensorProto.FLOAT8E5M2FNUZ: _Float("FLOAT8E5M2FNUZ", 5, 2, 16, "fnuz"),
    TensorProto.FLOAT4E2M1: _Float("FLOAT4E2M1", 2, 1, 1, "finite"),
}
E8M0 = TensorProto.FLOAT8E8M0
# The int types: storage, bits, signed.
INTS = {TensorProto.INT4: (I8, 4, True), TensorProto.UINT4: (U8, 4, False),
        TensorProto.INT2: (I8, 2, True), TensorProto.UINT2: (U8, 2, False)}
ONLY = set(FLOATS8) | {E8M0} | set(INTS)  # the ONNX-only types


def is_float(etype: int) -> bool:
    return etype in FLOATS8 or etype == E8M0


def storage(etype: int) -> DType:
    """The library element type that holds values of ONNX-only type `etype`."""
    return INTS[etype][0] if etype in INTS else U8


def _int_range(etype: int) -> Tuple[int, int]:
    _, bits, signed = INTS[etype]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def _numpy(etype: int) -> np.dtype:
    """The ml_dtypes dtype onnx uses for `etype` (float8_e4m3fn, int4, ...)."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(etype))


_OF_NUMPY: Dict[np.dtype, int] = {}
for _t in ONLY:
    _OF_NUMPY[_numpy(_t)] = _t


def _e8m0_table() -> np.ndarray:
    return np.array([math.ldexp(1.0, k - 127) for k in range(255)] + [math.nan], np.float32)


# ---- Host values and the program's boundary ------------------------------------------------

def to_storage(a: Any, etype: int, what: str = "value") -> np.ndarray:
    """An array of ONNX type `etype` as the importer stores it: an ml_dtypes array (the dtype
    onnx.numpy_helper gives) becomes its u8 bits (float types) or i8/u8 values (int types); an
    array already of the storage type is checked (codes and values in range)."""
    a = np.asarray(a)
    st = storage(etype).numpy
    name = _dtype_name(etype)
    if a.dtype == _numpy(etype):
        if is_float(etype):
            return a.view(np.uint8).copy() if etype != TensorProto.FLOAT4E2M1 else \
                (a.view(np.uint8) & np.uint8(15))
        return a.astype(st)
    if a.dtype != st:
        raise ValueError("%s has ONNX type %s: give a %s array (or its storage, %s)" % (
            what, name, _numpy(etype).name, np.dtype(st).name))
    if etype in INTS:
        lo, hi = _int_range(etype)
        if a.size and (a.min() < lo or a.max() > hi):
            raise ValueError("%s has ONNX type %s: values must be in [%d, %d]" % (what, name,
                                                                                  lo, hi))
    elif etype == TensorProto.FLOAT4E2M1 and a.size and a.max() > 15:
        raise ValueError("%s has ONNX type FLOAT4E2M1: codes must be in [0, 15]" % what)
    return a


def from_storage(a: Any, etype: int) -> np.ndarray:
    """The ml_dtypes array of ONNX type `etype` that storage `a` holds."""
    a = np.asarray(a)
    if is_float(etype):
        return np.ascontiguousarray(a.astype(np.uint8)).view(_numpy(etype))
    return a.astype(_numpy(etype))


def host_val(a: np.ndarray, param: Optional[str] = None) -> Val:
    """A host value: an array of an ONNX-only type (ml_dtypes) becomes its storage, tagged."""
    etype = _OF_NUMPY.get(a.dtype)
    if etype is None:
        return Val(host=a, param=param)
    return Val(host=to_storage(a, etype), param=param, narrow=etype)


def type_name(etype: int) -> str:
    return _dtype_name(etype)


def to_program_inputs(program: Any, inputs: Mapping[str, Any]) -> Dict[str, Any]:
    """`inputs` (program input name -> array) with each input of an ONNX-only type converted
    to its storage (program.onnx_types says which): ml_dtypes float8_e4m3fn, int4, ... arrays
    become u8 bits or i8/u8 values. Others pass unchanged."""
    types = (getattr(program, "onnx_types", None) or {}).get("inputs", {})
    out = dict(inputs)
    for name, x in inputs.items():
        etype = _type_of(types.get(name))
        if etype in ONLY:
            out[name] = to_storage(x, etype, "input '%s'" % name)
    return out


def to_onnx_outputs(program: Any, outputs: Mapping[str, Any]) -> Dict[str, Any]:
    """`outputs` (program output name -> array, as a runtime returns them) with each output of
    an ONNX-only type as its ml_dtypes array (float8_e4m3fn, int4, ...)."""
    types = (getattr(program, "onnx_types", None) or {}).get("outputs", {})
    out = dict(outputs)
    for name, y in outputs.items():
        etype = _type_of(types.get(name))
        if etype in ONLY:
            out[name] = from_storage(y, etype)
    return out


def _type_of(name: Optional[str]) -> Optional[int]:
    if name is None:
        return None
    try:
        return TensorProto.DataType.Value(name)
    except ValueError:
        return None


# ---- Conversions as library ops ------------------------------------------------------------

def _const(ctx: Importer, a: Any, dtype: Any) -> Tensor:
    return ctx.scope.constant(np.asarray(a, dtype=dtype))


def _below(t: float) -> np.float32:
    """The f32 just below `t`: `x >= t` is `x > _below(t)` for f32 x."""
    return np.nextafter(np.float32(t), np.float32(-np.inf))


def _count(ctx: Importer, a: Tensor, thresholds: Sequence[Any]) -> Tensor:
    """How many of the (f32) `thresholds` each element of `a` (f32) exceeds strictly, i32."""
    th = _const(ctx, list(thresholds), np.float32)
    return (a.reshape(*ctx.shape(a), 1) > th).astype(I32).sum(-1)


def _to_f32(t: Tensor) -> Tensor:
    """The f32 that onnx's reference encodes from: f16/bf16 and ints exactly; f64 rounded to
    nearest even first, as ml_dtypes converts doubles through float."""
    return t if t.dtype == F32 else t.astype(F32)


def _negative(ctx: Importer, x: Tensor) -> Tensor:
    """Whether x has its sign bit set (-0 included; NaN: false)."""
    one = _const(ctx, 1, np.float32)
    zero = _const(ctx, 0, np.float32)
    return (x < zero).logical_or((one / x) < zero)


def _encode_float(ctx: Importer, x: Tensor, etype: int, saturate: bool) -> Tensor:
    """x (any numeric type) to the bits of float type `etype`, u8: round to nearest even;
    beyond the largest finite value (half an ulp past it, ties to even): inf (E5M2) or NaN
    (the others), or the largest value when `saturate` (and always for FLOAT4E2M1, as
    ml_dtypes does); NaN to the type's NaN (FLOAT4E2M1: code 8, as ml_dtypes)."""
    f = FLOATS8[etype]
    x = _to_f32(x)
    vals = f.finite()
    th = []
    for (v0, _), (v1, c1) in zip(vals, vals[1:]):
        mid = (v0 + v1) / 2
        th.append(_below(mid) if c1 % 2 == 0 else np.float32(mid))
    vmax, cmax = vals[-1]
    mag = [c for _, c in vals]
    if f.kind != "finite":  # past the largest finite value: the next code's rounding
        ulp = math.ldexp(1.0, (cmax >> f.m) - f.bias - f.m)
        mid = vmax + ulp / 2
        th.append(_below(mid) if (cmax + 1) % 2 == 0 else np.float32(mid))
        if saturate:
            mag.append(cmax)
        else:
            mag.append({"ieee": ((1 << f.e) - 1) << f.m,  # inf
                        "fn": f.sign - 1, "fnuz": f.sign}[f.kind])  # NaN
    n = len(mag)
    neg = [c if f.kind == "fnuz" and c in (0, f.sign) else c | f.sign for c in mag]
    table = mag + neg + [f.nan_code()]
    k = _count(ctx, x.abs(), th)
    k = k + _negative(ctx, x).astype(I32) * _const(ctx, n, np.int32)
    k = (x != x).select(_const(ctx, 2 * n, np.int32), k)
    return _const(ctx, table, np.uint8).take(k)


def _encode_e8m0(ctx: Importer, x: Tensor, saturate: bool, mode: str) -> Tensor:
    """x to FLOAT8E8M0 bits as onnx.numpy_helper.to_float8e8m0: the exponent of |x| as f32 (the
    sign is dropped), rounded per `mode` ("up": any fraction rounds up, "down": truncated,
    "nearest": a fraction >= 1/2 rounds up); past 2^127: 2^127 when `saturate`, else NaN (255);
    NaN and inf: 255."""
    x = _to_f32(x)
    if mode == "up":
        th = [np.float32(0)] + [np.float32(math.ldexp(1.0, k - 127)) for k in range(1, 255)]
    elif mode == "down":
        th = [_below(math.ldexp(1.0, k - 127)) for k in range(1, 255)]
    elif mode == "nearest":
        th = [np.float32(math.ldexp(1.0, -127))] + [
            _below(math.ldexp(1.5, k - 127)) for k in range(1, 255)]
    else:
        raise ImportError_("Cast to FLOAT8E8M0: round_mode %r (up, down and nearest are "
                           "defined)" % (mode,))
    a = x.abs()
    table = list(range(255)) + [254 if saturate else 255, 255]
    k = _count(ctx, a, th)
    special = (x != x).logical_or(a == _const(ctx, np.inf, np.float32))
    k = special.select(_const(ctx, 256, np.int32), k)
    return _const(ctx, table, np.uint8).take(k)


def _wrap_int(ctx: Importer, v: Tensor, etype: int) -> Tensor:
    """Integer values v (i32) wrapped to the int type `etype` (two's complement), stored."""
    st, bits, signed = INTS[etype]
    v = v.logical_and(_const(ctx, (1 << bits) - 1, np.int32))
    if signed:
        half = _const(ctx, 1 << (bits - 1), np.int32)
        v = v.logical_xor(half) - half
    return v.astype(st)


def _float_to_int(ctx: Importer, x: Tensor) -> Tensor:
    """A float tensor to i32 as ml_dtypes converts floats to its int types: truncated toward
    zero through a C int (a value whose truncation does not fit, inf and NaN give one whose
    low bits are 0)."""
    if x.dtype not in (F32, F64):
        x = x.astype(F32)
    big = _const(ctx, 2.0 ** 31, x.dtype.numpy)
    return (x.abs() < big).select(x, _const(ctx, 0, x.dtype.numpy)).astype(I32)


def decode(ctx: Importer, t: Tensor, etype: int) -> Tensor:
    """The values of storage `t` of type `etype`: f32 for the float types (a take from the table
    of the type's values), the storage itself for the int types."""
    if etype in INTS:
        return t
    table = _e8m0_table() if etype == E8M0 else FLOATS8[etype].table()
    return _const(ctx, table, np.float32).take(t)


def encode(ctx: Importer, x: Tensor, etype: int, saturate: bool = True,
           round_mode: str = "up") -> Tensor:
    """x (values of a library type) as storage of ONNX-only type `etype`, by ONNX's Cast."""
    if etype == E8M0:
        return _encode_e8m0(ctx, x, saturate, round_mode)
    if etype in FLOATS8:
        return _encode_float(ctx, x, etype, saturate)
    if x.dtype in (F32, F64, F16, BF16):
        return _wrap_int(ctx, _float_to_int(ctx, x), etype)
    return _wrap_int(ctx, x.astype(I32), etype)


def cast(ctx: Importer, v: Val, to: int, saturate: bool = True, round_mode: str = "up"
         ) -> Val:
    """ONNX's Cast of `v` to type `to` (an ONNX type) where either is ONNX-only."""
    src = v.narrow
    if src == to:
        return v
    t = ctx.t(v)
    if src is not None:
        t = decode(ctx, t, src)  # values: f32 or the small ints' storage
    if to in ONLY:
        return Val(encode(ctx, t, to, saturate, round_mode), narrow=to)
    dt = ONNX_DTYPES.get(to)
    if dt is None:
        raise ImportError_("cast to %s: shapepoly has f32, f64, f16, bf16, i8-i64, u8-u64 and "
                           "bool, and the ONNX-only types stored in them" % _dtype_name(to))
    return Val(t if t.dtype == dt else t.astype(dt))


# ---- Converters ----------------------------------------------------------------------------

def involved(node: Any, ins: List[Optional[Val]], at: Dict[str, Any]) -> bool:
    """Whether `node` reads or makes a value of an ONNX-only type."""
    if any(v is not None and v.narrow is not None for v in ins):
        return True
    if node.op_type == "Cast":
        return at.get("to") in ONLY
    if node.op_type == "QuantizeLinear":
        return at.get("output_dtype") in ONLY
    return False


def _refuse(node: Any, ins: List[Optional[Val]]) -> ImportError_:
    types = sorted({_dtype_name(v.narrow) for v in ins if v is not None and v.narrow})
    return ImportError_(
        "%s of %s is not supported: the ONNX-only element types (float8, float4, int4, "
        "uint4, int2, uint2, stored as u8 bit patterns or i8/u8 values) are taken by Cast, "
        "CastLike, QuantizeLinear, DequantizeLinear, Equal and nodes that move elements "
        "(%s)" % (node.op_type, ", ".join(types) or "an ONNX-only type",
                  ", ".join(sorted(MOVES))))


def convert(ctx: Importer, key: str, node: Any, ins: List[Optional[Val]],
            at: Dict[str, Any], regular: Any) -> List[Val]:
    """The outputs of `node`, which reads or makes an ONNX-only type (`involved`); `regular`
    converts a node that only moves elements."""
    op = node.op_type if node.domain in ("", "ai.onnx") else key
    if op == "Cast":
        return [cast(ctx, ins[0], at["to"], bool(at.get("saturate", 1)),
                     at.get("round_mode", "up"))]
    if op == "CastLike":
        like = ins[1]
        to = like.narrow if like.narrow is not None else _onnx_of(ctx.t(like).dtype)
        return [cast(ctx, ins[0], to, bool(at.get("saturate", 1)), at.get("round_mode", "up"))]
    if op == "QuantizeLinear":
        return [_quantize(ctx, ins, at)]
    if op == "DequantizeLinear":
        return [_dequantize(ctx, node, ins, at)]
    if op == "Equal":
        return [_equal(ctx, node, ins)]
    if op in SHAPES:
        return regular()
    if op in MOVES:
        types = {v.narrow for v in ins if v is not None and v.narrow is not None}
        if len(types) != 1:
            raise ImportError_("%s of different element types (%s)" % (
                op, ", ".join(sorted(_dtype_name(t) for t in types))))
        etype = types.pop()
        outs = regular()
        return [o if o.narrow == etype else Val(o.tensor, o.host, o.param, o.etype, narrow=etype)
                for o in outs]
    raise _refuse(node, ins)


def _onnx_of(dtype: DType) -> int:
    for k, v in ONNX_DTYPES.items():
        if v == dtype:
            return k
    raise ImportError_("no ONNX type for %s" % dtype)


def _equal(ctx: Importer, node: Any, ins: List[Optional[Val]]) -> Val:
    a, b = ins[0], ins[1]
    if a.narrow != b.narrow:
        raise ImportError_("Equal of %s and %s" % (
            _dtype_name(a.narrow) if a.narrow else ctx.t(a).dtype,
            _dtype_name(b.narrow) if b.narrow else ctx.t(b).dtype))
    ta, tb = decode(ctx, ctx.t(a), a.narrow), decode(ctx, ctx.t(b), b.narrow)
    return Val(ta == tb)


def _quantize(ctx: Importer, ins: List[Optional[Val]], at: Dict[str, Any]) -> Val:
    """QuantizeLinear to an ONNX-only type (onnx's reference): ints saturate(round_half_even(x /
    scale) + zero_point); float8 the Cast of x / scale (with `saturate`; the zero point, 0 by
    ONNX's rule, is not read); FLOAT4E2M1 the Cast of x / scale + zero_point."""
    from ._ops_quant import _along, _block, _inputs
    _inputs(ins, 2, "x and y_scale")
    _block(at)
    axis = at.get("axis", 1)
    zpv = ins[2] if len(ins) > 2 and ins[2] is not None else None
    etype = zpv.narrow if zpv is not None else at.get("output_dtype", TensorProto.UINT8)
    if etype not in ONLY or etype == E8M0:
        raise ImportError_("QuantizeLinear to %s is not supported" % _dtype_name(etype))
    x = ctx.t(ins[0])
    scale = ctx.t(ins[1])
    if x.dtype == scale.dtype:  # numpy's division, in the common type (rounded once)
        ft = x.dtype
    else:
        ft = F64 if F64 in (x.dtype, scale.dtype) else F32
    v = x.astype(ft) / _along(ctx, scale.astype(ft), x, axis)
    zp = None if zpv is None else _along(ctx, ctx.t(zpv), x, axis)
    if etype in INTS:
        q = v.round()
        if zp is not None:
            q = q + zp.astype(ft)
        lo, hi = _int_range(etype)
        return Val(q.clip(lo, hi).astype(storage(etype)), narrow=etype)
    if etype == TensorProto.FLOAT4E2M1 and zp is not None:
        v = v.astype(F32) + decode(ctx, zp, etype)
    return Val(encode(ctx, v, etype, bool(at.get("saturate", 1))), narrow=etype)


def _dequantize(ctx: Importer, node: Any, ins: List[Optional[Val]], at: Dict[str, Any]) -> Val:
    """DequantizeLinear from an ONNX-only type: (x - zero_point) * scale for the int types,
    x * scale for the float ones (their zero point is 0 by ONNX's rule and not read); in f32
    (f64 with an f64 scale), then the scale's type (or output_dtype)."""
    from ._ops_quant import _along, _block, _inputs
    _inputs(ins, 2, "x and x_scale")
    _block(at)
    x, xs = ins[0], ins[1]
    if x.narrow is None or xs.narrow is not None:
        raise _refuse(node, ins)
    axis = at.get("axis", 1)
    scale = ctx.t(xs)
    ft = F64 if scale.dtype == F64 else F32
    q = ctx.t(x)
    v = decode(ctx, q, x.narrow).astype(ft)
    if x.narrow in INTS and len(ins) > 2 and ins[2] is not None:
        zp = ins[2]
        if zp.narrow != x.narrow:
            raise ImportError_("DequantizeLinear: zero point of another type than x")
        v = v - _along(ctx, ctx.t(zp).astype(ft), q, axis)
    y = v * _along(ctx, scale.astype(ft), q, axis)
    out = ONNX_DTYPES.get(at["output_dtype"]) if at.get("output_dtype") else scale.dtype
    if out is None:
        raise ImportError_("DequantizeLinear to %s" % _dtype_name(at["output_dtype"]))
    return Val(y if y.dtype == out else y.astype(out))

