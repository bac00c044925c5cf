"""The narrow element types (f16, bf16, i8, u8, i16, u16, u32, u64) through every op.

An op on a narrow type computes in the type's compute type (f32, i32 or i64) and converts its
result once (cc/trace/narrow.cc). Each case of test_every_op.py whose operands are a compute type
is traced again with each narrow type that computes in it, saved, reloaded and run; the reference
is the same case traced in the compute type, interpreted by the numpy oracle on the same (exactly
widened) inputs, its results converted to the narrow type by numpy (astype; ml_dtypes for bf16).
Integers and bools must agree bit for bit, f16 and bf16 within one unit in the last place of the
narrow type. Conversions between every pair of the 13 types are checked against numpy element by
element, and u64's ordered operations (which the tracer maps by flipping the sign bit) against
numpy's own uint64 arithmetic.
"""

import zlib

import numpy as np
import pytest

import capi_trace as ct
import oracle
import test_every_op as every

NARROW_OF = {c: [n for n in ct.NARROW if ct.COMPUTE_OF[n] == c] for c in ("f32", "i32", "i64")}
# Conversions and constants: below (a constant's values are drawn per dtype); i64 only.
SKIPPED_OPS = {"CONVERT", "CONSTANT", "DIM_VALUE", "SIZE_FROM_VALUE"}
U64_REFUSED = {"DIV", "REM", "POW"}
# Where u64 differs from i64 on the same bits (checked against numpy's uint64 below). SCAN: its
# every-op case's body keeps a running maximum (a comparison).
U64_ORDERED = {"LT", "LE", "GT", "GE", "MAXIMUM", "MINIMUM", "REDUCE_MAX", "REDUCE_MIN", "TOP_K_VALUES",
               "TOP_K_INDICES", "REDUCE_WINDOW", "ABS", "SIGN", "SCAN"}


def _split(key):
    """(data dtype, suffix) of a case key: "f32" -> ("f32", ""), "f32[i64]" -> ("f32", "[i64]")."""
    i = key.find("[")
    return (key, "") if i < 0 else (key[:i], key[i:])


def _narrow_cases():
    cases = []
    for op, key, label in every.ALL_CASES:
        data, suffix = _split(key)
        if op in SKIPPED_OPS or data not in NARROW_OF:
            continue
        for n in NARROW_OF[data]:
            if n == "u64" and (op in U64_REFUSED or op in U64_ORDERED):
                continue
            if op == "PAD" and n[0] == "u" and label == "rank3":
                continue  # pads with -1.5, which is 0 in an unsigned type: test_pad_value below

            cases.append((op, key, label, n + suffix))
    return cases


CASES = _narrow_cases()


@pytest.fixture(scope="module")
def api():
    return ct.Api()


def assert_narrow_agree(got, want, what, ulps=1):
    """Same dtype and shape; integers exact; f16/bf16 within `ulps` ulp of that type (NaN ==
    NaN)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs reference {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs reference {want.shape}"
    if got.dtype not in (np.float16, oracle.BF16):
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    with np.errstate(invalid="ignore", over="ignore"):
        _assert_within_ulp(got, want, what, ulps)


def _assert_within_ulp(got, want, what, ulps):
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    # One step of the narrow type around the reference: the next value away from it.
    up = np.abs(np.nextafter(want, np.array(np.inf, want.dtype)).astype(np.float64) - w)
    down = np.abs(w - np.nextafter(want, np.array(-np.inf, want.dtype)).astype(np.float64))
    ulp = np.maximum(np.where(np.isfinite(up), up, 0), np.where(np.isfinite(down), down, 0))
    close = (g == w) | both_nan | (np.abs(g - w) <= ulps * ulp)
    bad = np.flatnonzero(~close)
    assert bad.size == 0, (f"{what}: {bad.size} elements beyond 1 ulp, first at {bad[0]}: "
                           f"{g.flat[bad[0]]} vs {w.flat[bad[0]]}")


def _case(op, key, label):
    (_, _, build, envs, _), = [c for c in every.CASES[op] if c[0] == key and c[1] == label]
    return build, envs


@pytest.mark.parametrize("op,key,label,narrow", CASES,
                         ids=[f"{o}-{n}-{lab}" for o, _, lab, n in CASES])
def test_op_in_narrow_type(api, op, key, label, narrow):
    build, envs = _case(op, key, label)
    c = every.Ctx(api)
    outs = build(c, narrow)
    data = c.t.program(c.ins, outs)
    ref_ctx = every.Ctx(api)
    ref_data = ref_ctx.t.program(ref_ctx.ins, build(ref_ctx, key))
    ref = oracle.Program(ref_data)
    seed = zlib.crc32(f"{op} {narrow} {label}".encode())
    rng = np.random.default_rng(seed)
    feeds = [c.feeds(env, rng) for env in envs]
    got = ct.run_cpp(api, data, feeds, capacity=1)
    for env, feed, out in zip(envs, feeds, got):
        wide = [f if (g[0] is None or g[0] == r[0]) else f.astype(ct.NP_DTYPES[ct.CODE[r[0]]])
                for f, g, r in zip(feed, c.gens, ref_ctx.gens)]
        want = ref.run({x.Name().decode(): v for x, v in zip(ref.inputs, wide)})
        assert len(out) == len(want)
        for o, w in zip(out, want):
            if w.dtype != o.dtype:
                w = oracle.convert(w, o.dtype)
            assert_narrow_agree(o, w, f"{op} {narrow} {label} at {env} (seed {seed}); inputs {feed}")


# ---- Conversions: every pair of the 13 types, element by element against numpy ----

PAIRS = [(a, b) for a in ct.DTYPE_NAMES for b in ct.DTYPE_NAMES if a in ct.NARROW or b in ct.NARROW]


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_convert_pair(api, src, dst):
    t = ct.Tracer(api)
    x = t.input("x", src, "n")
    data = t.program([x], [t.convert(x, dst)])
    rng = np.random.default_rng(zlib.crc32(f"{src}->{dst}".encode()))
    feeds = [[ct.values(src, (n,), kind, rng)] for n, kind in ((40, "range"), (1031, "any"))]
    if src in ("f32", "f64", "f16", "bf16"):  # values around the narrow types' limits
        edges = np.array([65504, 65519.99, 65520, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, 3.4e38, 1e-40,
                          -128.5, -129, 255.9, 256, 32767.5, 65535.7, 4294967295.5, -1e-30],
                         np.float64)
        feeds.append([oracle.convert(edges, ct.NP_DTYPES[ct.CODE[src]])])
    for feed, (out,) in zip(feeds, ct.run_cpp(api, data, feeds)):
        want = oracle.convert(feed[0], ct.NP_DTYPES[ct.CODE[dst]])
        assert out.dtype == want.dtype
        if out.dtype.kind == "f" or out.dtype == oracle.BF16:  # bits, any NaN for NaN
            g, w = out.astype(np.float64), want.astype(np.float64)
            ok = (g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))
            assert ok.all(), f"{src}->{dst}: {feed[0][~ok][:5]} -> {out[~ok][:5]}, numpy {want[~ok][:5]}"
        else:
            np.testing.assert_array_equal(out, want, err_msg=f"{src}->{dst} of {feed[0]}")


@pytest.mark.parametrize("dtype", ct.NARROW)
def test_constants_keep_their_bits(api, dtype):
    for shape in ((), (2, 3, 2), (0, 3)):
        arr = ct.values(dtype, shape, "range" if dtype[0] in "iu" else "any", np.random.default_rng(3))
        t = ct.Tracer(api)
        x = t.input("x", dtype, "n")
        data = t.program([x], [t.constant(arr), t.concatenate([x, t.constant(arr.reshape(-1))], 0)])
        feed = ct.values(dtype, (3,), "any", np.random.default_rng(4))
        const, cat = ct.run_cpp(api, data, [[feed]])[0]
        assert const.dtype == arr.dtype and const.tobytes() == arr.tobytes(), (dtype, shape)
        assert cat.tobytes() == feed.tobytes() + arr.tobytes(), (dtype, shape)


@pytest.mark.parametrize("dtype", ["u8", "i8", "u16", "f16", "bf16", "u64"])
def test_pad_value(api, dtype):
    """The padding value converts as the convert op does: saturating, rounded once."""
    for value in (-1.5, 300.7, 1e30, -1e30, 0.1):
        t = ct.Tracer(api)
        x = t.input("x", dtype, "n")
        data = t.program([x], [t.pad(x, [1], [0], value)])
        feed = ct.values(dtype, (2,), "any", np.random.default_rng(1))
        out, = ct.run_cpp(api, data, [[feed]])[0]
        want = oracle.convert(np.array([value]), out.dtype)
        assert out[:1].tobytes() == want.tobytes(), (dtype, value, out[0], want[0])
        assert out[1:].tobytes() == feed.tobytes()


# ---- u64: ordered operations against numpy's uint64, refusals ----

U64_EDGES = np.array([0, 1, 2 ** 63 - 1, 2 ** 63, 2 ** 63 + 1, 2 ** 64 - 1, 5, 2 ** 62], np.uint64)


def _run(api, build, *arrays):
    t = ct.Tracer(api)
    xs = [t.input(f"x{i}", "u64", ", ".join(f"d{j}" for j in range(a.ndim))) for i, a in enumerate(arrays)]
    outs = build(t, *xs)
    return ct.run_cpp(api, t.program(xs, outs), [list(arrays)])[0]


def test_u64_ordered_operations(api):
    a = np.repeat(U64_EDGES, len(U64_EDGES))
    b = np.tile(U64_EDGES, len(U64_EDGES))
    for op, ref in (("LT", np.less), ("LE", np.less_equal), ("GT", np.greater), ("GE", np.greater_equal),
                    ("EQ", np.equal), ("NE", np.not_equal)):
        out, = _run(api, lambda t, x, y, op=op: [t.compare(op, x, y)], a, b)
        np.testing.assert_array_equal(out, ref(a, b), err_msg=op)
    for op, ref in (("MAXIMUM", np.maximum), ("MINIMUM", np.minimum), ("ADD", np.add), ("SUB", np.subtract),
                    ("MUL", np.multiply)):
        out, = _run(api, lambda t, x, y, op=op: [t.binary(op, x, y)], a, b)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out, ref(a, b), err_msg=op)
    m = U64_EDGES.reshape(2, 4)
    for op, ref in (("REDUCE_MAX", np.max), ("REDUCE_MIN", np.min), ("REDUCE_SUM", np.sum)):
        out, = _run(api, lambda t, x, op=op: [t.reduce(op, x, [1], False)], m)
        np.testing.assert_array_equal(out, ref(m, axis=1), err_msg=op)
    for op, ref in (("ABS", lambda v: v), ("SIGN", lambda v: (v != 0).astype(np.uint64)),
                    ("NEG", np.negative)):
        out, = _run(api, lambda t, x, op=op: [t.unary(op, x)], U64_EDGES)
        np.testing.assert_array_equal(out, ref(U64_EDGES), err_msg=op)
    for dst in ("f32", "f64", "f16", "bf16"):
        out, = _run(api, lambda t, x, dst=dst: [t.convert(x, dst)], U64_EDGES)
        want = oracle.convert(U64_EDGES, ct.NP_DTYPES[ct.CODE[dst]])
        np.testing.assert_array_equal(out.astype(np.float64), want.astype(np.float64), err_msg=dst)


@pytest.mark.parametrize("op", sorted(U64_REFUSED))
def test_u64_division_is_refused(api, op):
    t = ct.Tracer(api)
    x = t.input("x", "u64", "n")
    with pytest.raises(ct.ShpError) as e:
        t.binary(op, x, x)
    assert "u64" in str(e.value) and "i64 or f64" in str(e.value)
    t.close()


def test_mixed_narrow_and_compute_operands_are_refused(api):
    for a, b in (("f16", "f32"), ("f16", "bf16"), ("u8", "i32"), ("u8", "i8"), ("f32", "f16")):
        t = ct.Tracer(api)
        with pytest.raises(ct.ShpError) as e:
            t.binary("ADD", t.input("x", a, "n"), t.input("y", b, "n"))
        assert e.value.code == ct.SHP_DTYPE_MISMATCH, str(e.value)
        t.close()


def test_schema_version(api):
    """A program with a narrow value declares schema version 9; one without keeps its version."""
    import shapepoly_reader as reader
    for dtype, newest in (("f16", True), ("f32", False)):
        t = ct.Tracer(api)
        x = t.input("x", dtype, "n")
        info = reader.ProgramInfo(t.program([x], [t.unary("NEG", x)]))
        assert (info.schema_version == 9) == newest, (dtype, info.schema_version)
