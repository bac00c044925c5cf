"""ONNX-only element types (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ,
FLOAT8E8M0, FLOAT4E2M1, INT4, UINT4, INT2, UINT2), imported as u8 bit patterns and i8/u8 values
(shapepoly/onnx/_narrow_types.py): every conversion checked against onnx's reference
implementation (onnx.reference.ReferenceEvaluator, which converts with ml_dtypes) as the oracle:
all bit patterns decoded, all float16 values and a dense float32/float64 sweep encoded (ties,
subnormals, NaN, +-inf, out of range) in both saturate modes and FLOAT8E8M0's three rounding
modes; QuantizeLinear, DequantizeLinear, Equal and data movement on them; the refusals; the
conversions at the program's boundary."""

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnx_node_suite
from shapepoly import onnx as spx

OPSET = 25
FLOAT8 = [T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ]
FLOATS = FLOAT8 + [T.FLOAT4E2M1, T.FLOAT8E8M0]
INTS = [T.INT4, T.UINT4, T.INT2, T.UINT2]
NAME = T.DataType.Name


def np_type(etype):
    return np.dtype(helper.tensor_dtype_to_np_dtype(etype))


def model(nodes, inputs, outputs, inits=(), opset=OPSET):
    """inputs: (name, type, shape): a shape of dim_params and sizes."""
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, shape) for n, t, shape in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def cast_model(src, dst, op="Cast", **attrs):
    if op == "CastLike":
        node = helper.make_node("CastLike", ["x", "like"], ["y"], **attrs)
        return model([node], [("x", src, ["n"]), ("like", dst, ["k"])], [("y", dst)])
    node = helper.make_node("Cast", ["x"], ["y"], to=dst, **attrs)
    return model([node], [("x", src, ["n"])], [("y", dst)])


def ours(m, feeds):
    """The outputs of `m` imported and run, in the ONNX types (ml_dtypes arrays)."""
    with spx.import_model(m) as p, p.runtime() as rt:
        names = {v: k for k, v in p.onnx_names["inputs"].items()}
        args = spx.to_program_inputs(p, {names[k]: v for k, v in feeds.items()})
        out = spx.to_onnx_outputs(p, rt(**args))
        return [out[k] for k in p.onnx_names["outputs"]]


def reference(m, feeds):
    return ReferenceEvaluator(m).run(None, feeds)


def assert_same(got, want, what=""):
    """Bit-exact for floats (every NaN equals every NaN), equal values for ints and bools."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer) or \
            want.dtype in (np_type(t) for t in INTS):
        bad = got.astype(np.int64) != want.astype(np.int64)
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan = np.isnan(w)
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
        bad = (np.isnan(g) != nan) | (~nan & (got.view(bits) != want.view(bits)))
    if np.any(bad):
        i = np.flatnonzero(bad)[:8]
        raise AssertionError("%s: %d of %d differ, e.g. at %s: got %s, expected %s" % (
            what, int(bad.sum()), bad.size, i.tolist(), got.reshape(-1)[i].tolist(),
            want.reshape(-1)[i].tolist()))


def check(m, feeds, what, want=None):
    want = reference(m, feeds) if want is None else want
    got = ours(m, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w, what)


def all_codes(etype):
    n = 16 if etype == T.FLOAT4E2M1 else 256
    return np.arange(n, dtype=np.uint8).view(np_type(etype))


def all_ints(etype):
    info = ml_dtypes.iinfo(np_type(etype))
    return np.arange(int(info.min), int(info.max) + 1).astype(np_type(etype))


def f32_sweep():
    """float32 values around every representable value of the float types: the values, the
    midpoints between neighbours (ties), the floats next to both, a dense sweep past the
    largest value (overflow), powers of two and 1.5 times them (E8M0's thresholds) with their
    neighbours, float32 subnormals, random bit patterns, specials; both signs."""
    parts = []
    for etype in FLOATS:
        v = np.unique(np.abs(all_codes(etype).astype(np.float64)))
        v = v[np.isfinite(v)]
        mids = (v[:-1] + v[1:]) / 2
        top = v[-1]
        parts += [v, mids, np.linspace(top * 0.9, top * 1.2, 3001)]
    p2 = np.ldexp(1.0, np.arange(-149, 128))
    parts += [p2, 1.5 * p2[:-1], np.ldexp(1.0, -127) * np.arange(0, 9) / 4]
    x = np.concatenate([np.asarray(a, np.float64).astype(np.float32) for a in parts])
    x = np.concatenate([x, np.nextafter(x, np.float32(np.inf)), np.nextafter(x, np.float32(0))])
    rng = np.random.default_rng(3)
    x = np.concatenate([x, rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(
        np.uint32).view(np.float32), np.array([0, np.inf, np.nan, 3.4028235e38, 1e-45, 1e-40,
                                               1.17549435e-38], np.float32)])
    x = np.unique(x[~np.isnan(x)])
    return np.concatenate([x, -x, np.array([np.nan], np.float32)])


F32 = f32_sweep()
F16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)  # every float16


def f64_sweep():
    """float64 values that round to a float32 tie (double rounding) or near it, and the
    float32 sweep."""
    x = F32[np.isfinite(F32)].astype(np.float64)
    ulp = np.abs(x) * 2.0 ** -30
    return np.concatenate([x, x + ulp, x - ulp, [np.nan, np.inf, -np.inf, 1e300, -1e300]])


F64 = f64_sweep()
SWEEPS = {T.FLOAT: F32, T.FLOAT16: F16, T.DOUBLE: F64,
          T.BFLOAT16: F32.astype(ml_dtypes.bfloat16)}


# ---- Decoding: every bit pattern ---------------------------------------------------------

@pytest.mark.parametrize("src", FLOATS, ids=NAME)
@pytest.mark.parametrize("dst", [T.FLOAT, T.FLOAT16, T.DOUBLE, T.BFLOAT16], ids=NAME)
def test_decode_every_code(src, dst):
    check(cast_model(src, dst), {"x": all_codes(src)}, "%s -> %s" % (NAME(src), NAME(dst)))


@pytest.mark.parametrize("src", INTS, ids=NAME)
@pytest.mark.parametrize("dst", [T.FLOAT, T.FLOAT16, T.DOUBLE, T.INT8, T.UINT8, T.INT16,
                                 T.UINT16, T.INT32, T.INT64, T.UINT32, T.UINT64, T.BOOL],
                         ids=NAME)
def test_decode_every_int(src, dst):
    check(cast_model(src, dst), {"x": all_ints(src)}, "%s -> %s" % (NAME(src), NAME(dst)))


@pytest.mark.parametrize("src", FLOAT8 + [T.FLOAT4E2M1], ids=NAME)
@pytest.mark.parametrize("dst", [T.INT8, T.UINT8, T.INT32, T.INT64, T.BOOL], ids=NAME)
def test_decode_to_integers(src, dst):
    """Float types to integers: truncation; values out of the target's range (and NaN, inf)
    are undefined in ONNX and differ between ml_dtypes' conversions: not compared."""
    x = all_codes(src)
    v = x.astype(np.float64)
    info = np.iinfo(np_type(dst)) if dst != T.BOOL else None
    keep = np.isfinite(v) if info is None else np.isfinite(v) & (v > info.min - 1) & (
        v < info.max + 1)
    check(cast_model(src, dst), {"x": x[keep]}, "%s -> %s" % (NAME(src), NAME(dst)))


# ---- Encoding: dense sweeps --------------------------------------------------------------

def without_negative_nans(x):
    """FLOAT4E2M1 has no NaN: ml_dtypes turns NaN into -0 and a NaN with its sign bit set into
    +0; the library cannot see a NaN's sign (every NaN gives code 8), so those are left out."""
    return x[~(np.isnan(x.astype(np.float32)) & np.signbit(x.astype(np.float32)))]


@pytest.mark.parametrize("dst", FLOAT8 + [T.FLOAT4E2M1], ids=NAME)
@pytest.mark.parametrize("src", [T.FLOAT, T.FLOAT16, T.DOUBLE, T.BFLOAT16], ids=NAME)
@pytest.mark.parametrize("saturate", [1, 0])
def test_encode_sweep(dst, src, saturate):
    x = SWEEPS[src] if dst != T.FLOAT4E2M1 else without_negative_nans(SWEEPS[src])
    check(cast_model(src, dst, saturate=saturate), {"x": x},
          "%s -> %s saturate=%d" % (NAME(src), NAME(dst), saturate))


@pytest.mark.parametrize("src", [T.FLOAT, T.FLOAT16, T.DOUBLE], ids=NAME)
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_encode_e8m0(src, mode, saturate):
    check(cast_model(src, T.FLOAT8E8M0, saturate=saturate, round_mode=mode),
          {"x": SWEEPS[src]}, "%s -> E8M0 %s saturate=%d" % (NAME(src), mode, saturate))


@pytest.mark.parametrize("dst", INTS, ids=NAME)
@pytest.mark.parametrize("src", [T.FLOAT, T.FLOAT16, T.DOUBLE], ids=NAME)
def test_encode_ints_from_floats(dst, src):
    """Truncation toward zero, wrapping (two's complement) to the type's bits; NaN, inf and
    values whose truncation leaves int32: 0 (ml_dtypes)."""
    x = np.concatenate([np.arange(-40, 40, 0.25), [1e6 + 3, -1e6 - 5, 2.0 ** 31 - 1,
                                                   -2.0 ** 31, 2.0 ** 31, 1e10, 1000000005]])
    x = np.concatenate([x.astype(np_type(src)), SWEEPS[src][::7]])
    check(cast_model(src, dst), {"x": x.astype(np_type(src))}, "%s -> %s" % (NAME(src),
                                                                           NAME(dst)))


@pytest.mark.parametrize("dst", INTS, ids=NAME)
@pytest.mark.parametrize("src", [T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.UINT32,
                                 T.INT64, T.BOOL], ids=NAME)
def test_encode_ints_from_ints(dst, src):
    dt = np_type(src)
    if src == T.BOOL:
        x = np.array([True, False, True])
    else:
        info = np.iinfo(dt)
        x = np.unique(np.concatenate([np.arange(max(int(info.min), -300),
                                                min(int(info.max), 300) + 1),
                                      [int(info.min), int(info.max)]])).astype(dt)
    check(cast_model(src, dst), {"x": x}, "%s -> %s" % (NAME(src), NAME(dst)))


@pytest.mark.parametrize("src", FLOATS + INTS, ids=NAME)
@pytest.mark.parametrize("dst", FLOAT8 + [T.FLOAT4E2M1] + INTS, ids=NAME)
def test_between_onnx_only_types(src, dst):
    """Between two ONNX-only types (every code or value of the source)."""
    if src == dst:
        return
    x = all_ints(src) if src in INTS else all_codes(src)
    if dst in INTS and src in FLOATS:
        x = x[np.isfinite(x.astype(np.float32))]  # NaN, inf: undefined, see above
    if dst == T.FLOAT4E2M1:
        x = without_negative_nans(x)
    m = cast_model(src, dst)
    try:
        want = reference(m, {"x": x})
    except TypeError:  # ml_dtypes converts some pairs only through float32 or int32
        wide = T.INT32 if src in INTS else T.FLOAT
        want = reference(cast_model(wide, dst), {"x": x.astype(np_type(wide))})
    check(m, {"x": x}, "%s -> %s" % (NAME(src), NAME(dst)), want)


@pytest.mark.parametrize("etype", FLOATS + INTS, ids=NAME)
def test_castlike(etype):
    like = (all_ints(etype) if etype in INTS else all_codes(etype))[:3]
    check(cast_model(T.FLOAT, etype, op="CastLike"), {"x": F32, "like": like},
          "CastLike FLOAT -> %s" % NAME(etype))
    x = all_ints(etype) if etype in INTS else all_codes(etype)
    check(cast_model(etype, T.FLOAT, op="CastLike"),
          {"x": x, "like": np.zeros(2, np.float32)}, "CastLike %s -> FLOAT" % NAME(etype))


# ---- QuantizeLinear, DequantizeLinear ----------------------------------------------------

def quant_model(etype, per_axis, zero_point=True, xtype=T.FLOAT, **attrs):
    ins = ["x", "scale"] + (["zp"] if zero_point else [])
    shape = [4] if per_axis else []
    inits = [("scale", np.array([0.5, 2.0, 0.125, 3.0] if per_axis else 0.75,
                                np_type(xtype)))]
    if zero_point:
        z = np.array([1, 0, -1, 1] if per_axis else 1, np.float64)
        if etype in (T.UINT4, T.UINT2):
            z = np.abs(z)
        if etype in FLOAT8 or etype == T.FLOAT4E2M1:
            z = z * 0
        inits.append(("zp", z.reshape(shape).astype(np_type(etype))))
    node = helper.make_node("QuantizeLinear", ins, ["y"], axis=1 if per_axis else 1, **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", xtype, ["n", 4])],
                          [helper.make_tensor_value_info("y", etype, None)],
                          [numpy_helper.from_array(v.reshape(shape), n) for n, v in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])


@pytest.mark.parametrize("etype", FLOAT8 + [T.FLOAT4E2M1] + INTS, ids=NAME)
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize(etype, per_axis):
    """Into the int types, values whose x / scale leaves int32, and NaN, are left out: onnx's
    reference converts them to int32 first (undefined: int32's minimum on x86), ONNX says
    saturate, and the importer saturates."""
    x = F32
    if etype in INTS:
        x = x[np.abs(x) < 1e8]
    x = x[: len(x) // 4 * 4].reshape(-1, 4)
    check(quant_model(etype, per_axis), {"x": x}, "QuantizeLinear %s" % NAME(etype))
    if etype in FLOAT8:
        check(quant_model(etype, per_axis, saturate=0), {"x": x}, "saturate=0")
    check(quant_model(etype, per_axis, zero_point=False, output_dtype=etype), {"x": x},
          "QuantizeLinear output_dtype=%s" % NAME(etype))
    # x and scale of float16: onnx's reference divides in float16 (rounded), so does the import
    h = F16[np.abs(F16.astype(np.float32)) < 4000] if etype in INTS else F16  # / 0.125: finite
    h = without_negative_nans(h) if etype == T.FLOAT4E2M1 else h
    h = h[: len(h) // 4 * 4].reshape(-1, 4)
    check(quant_model(etype, per_axis, xtype=T.FLOAT16), {"x": h}, "float16 x")


@pytest.mark.parametrize("etype", FLOAT8 + [T.FLOAT4E2M1] + INTS, ids=NAME)
@pytest.mark.parametrize("scale_type", [T.FLOAT, T.FLOAT16, T.DOUBLE], ids=NAME)
def test_dequantize(etype, scale_type):
    x = all_ints(etype) if etype in INTS else all_codes(etype)
    x = np.resize(x, (len(x), 3))
    inits = [("scale", np.array([0.5, 2.0, 0.125], np_type(scale_type)))]
    ins = ["x", "scale"]
    if etype in INTS:
        inits.append(("zp", np.array([1, 0, 1], np.int8).astype(np_type(etype))))
        ins.append("zp")
    node = helper.make_node("DequantizeLinear", ins, ["y"], axis=1)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", etype, ["n", 3])],
                          [helper.make_tensor_value_info("y", scale_type, None)],
                          [numpy_helper.from_array(v, n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    check(m, {"x": x}, "DequantizeLinear %s" % NAME(etype))


# ---- Equal, data movement, initializers ---------------------------------------------------

@pytest.mark.parametrize("etype", FLOATS + INTS, ids=NAME)
def test_equal(etype):
    x = all_ints(etype) if etype in INTS else all_codes(etype)
    a = np.repeat(x, len(x))
    b = np.tile(x, len(x))
    m = model([helper.make_node("Equal", ["a", "b"], ["y"])],
              [("a", etype, ["n"]), ("b", etype, ["n"])], [("y", T.BOOL)])
    check(m, {"a": a, "b": b}, "Equal %s" % NAME(etype))


@pytest.mark.parametrize("etype", FLOATS + INTS, ids=NAME)
def test_data_movement(etype):
    """Reshape, Transpose, Concat with an initializer, Gather, Slice keep the bits; a Constant
    of the type; Shape and Size are plain int64."""
    x = (all_ints(etype) if etype in INTS else all_codes(etype))
    x = np.resize(x, (4, 8))
    init = x[:1]
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        helper.make_node("Concat", ["x", "init"], ["c"], axis=0),
        helper.make_node("Gather", ["c", "idx"], ["g"], axis=1),
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(x[1])),
        helper.make_node("Identity", ["k"], ["ki"]),
        helper.make_node("Shape", ["c"], ["s"]),
    ]
    m = model(nodes, [("x", etype, ["a", 8])], [("r", etype), ("g", etype), ("ki", etype),
                                          ("s", T.INT64)],
              inits=[("shape", np.array([2, 16], np.int64)), ("init", init),
                     ("idx", np.array([7, 0, 3], np.int64))])
    check(m, {"x": x}, "moves of %s" % NAME(etype))


def test_initializer_parameter_and_types():
    """A float8 initializer becomes a parameter holding its bits; onnx_types names every input
    and output's ONNX type."""
    w = np.array([0.5, -2.0, 448.0], np.float32).astype(ml_dtypes.float8_e4m3fn)
    m = model([helper.make_node("Cast", ["w"], ["y"], to=T.FLOAT),
               helper.make_node("Cast", ["x"], ["z"], to=T.INT4)],
              [("x", T.FLOAT, ["n"])], [("y", T.FLOAT), ("z", T.INT4)], inits=[("w", w)])
    with spx.import_model(m) as p:
        assert p.onnx_types == {"inputs": {"x": "FLOAT", "w": "FLOAT8E4M3FN"},
                                "outputs": {"y": "FLOAT", "z": "INT4"}}
        dtypes = {t.name: t.dtype.name for t in p.inputs}
        assert dtypes["w"].lower() == "u8"
    check(m, {"x": np.array([1.5, -9.0, 8.0], np.float32)}, "initializer")


# ---- The boundary ------------------------------------------------------------------------

@pytest.mark.parametrize("etype", FLOATS + INTS, ids=NAME)
def test_storage_roundtrip(etype):
    from shapepoly.onnx import _narrow_types as nt
    x = all_ints(etype) if etype in INTS else all_codes(etype)
    s = nt.to_storage(x, etype)
    assert s.dtype == nt.storage(etype).numpy
    assert_same(nt.from_storage(s, etype), x, NAME(etype))
    assert_same(nt.to_storage(s, etype), s, NAME(etype))  # storage given as it is


def test_boundary_refuses_bad_arrays():
    m = cast_model(T.INT4, T.FLOAT)
    with spx.import_model(m) as p:
        with pytest.raises(ValueError, match="INT4"):
            spx.to_program_inputs(p, {"x": np.array([1.0], np.float32)})
        with pytest.raises(ValueError, match=r"\[-8, 7\]"):
            spx.to_program_inputs(p, {"x": np.array([9], np.int8)})
    with spx.import_model(cast_model(T.FLOAT4E2M1, T.FLOAT)) as p:
        with pytest.raises(ValueError, match="FLOAT4E2M1"):
            spx.to_program_inputs(p, {"x": np.array([16], np.uint8)})


# ---- Refusals ----------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["Add", "Relu", "MatMul"])
def test_arithmetic_refused_naming_the_type(op):
    n = 2 if op in ("Add", "MatMul") else 1
    m = model([helper.make_node(op, ["a", "b"][:n], ["y"])],
              [(k, T.FLOAT8E4M3FN, [2, 2]) for k in ["a", "b"][:n]], [("y", T.FLOAT8E4M3FN)])
    with pytest.raises(spx.OnnxImportError, match="%s of FLOAT8E4M3FN is not supported" % op):
        spx.import_model(m)


def test_control_flow_output_refused():
    branch = helper.make_graph([helper.make_node("Cast", ["x"], ["b"], to=T.FLOAT8E5M2)], "b", [],
                               [helper.make_tensor_value_info("b", T.FLOAT8E5M2, None)])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)],
              [("c", T.BOOL, []), ("x", T.FLOAT, ["n"])], [("y", T.FLOAT8E5M2)])
    with pytest.raises(spx.OnnxImportError, match="FLOAT8E5M2"):
        spx.import_model(m)


def test_suite_compare_is_bit_exact():
    """The node suite's comparison of ONNX-only outputs: NaN equals NaN, -0 differs from +0."""
    a = np.array([0x7F, 0x80, 0x01], np.uint8).view(ml_dtypes.float8_e4m3fn)
    b = np.array([0xFF, 0x80, 0x01], np.uint8).view(ml_dtypes.float8_e4m3fn)
    c = np.array([0x7F, 0x00, 0x01], np.uint8).view(ml_dtypes.float8_e4m3fn)
    assert onnx_node_suite._compare(a, b, 0, 0) is None
    assert onnx_node_suite._compare(a, c, 0, 0) is not None
    i = np.array([-8, 7], ml_dtypes.int4)
    assert onnx_node_suite._compare(i, i.copy(), 0, 0) is None
    assert onnx_node_suite._compare(i, np.array([-8, 6], ml_dtypes.int4), 0, 0) is not None
