"""The C API's NN building blocks (c_api/nn_api.cc) and erf against onnxruntime on random cases.

Each case traces one function through the C API (ctypes) with every axis of x symbolic (C a
multiple of blocksize^2 for depth_to_space, H and W multiples of blocksize for
space_to_depth), runs the program at the case's concrete shape and compares with onnxruntime
running a one-node ONNX model built with onnx.helper: Erf, LeakyRelu, PRelu, Elu, Selu,
Softplus, Softsign, Clip, HardSigmoid, LogSoftmax, BatchNormalization, LRN, Pad (constant,
reflect, edge), DepthToSpace (DCR, CRD) and SpaceToDepth. Random shapes, attributes and
values; f32 and f64 (LRN: f32, the only type onnxruntime has), Clip also on i32 and i64.
"""

import ctypes
import math

import numpy as np
import pytest

import capi_trace as ct

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ONNX_DTYPE = {"f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE, "i32": TensorProto.INT32,
              "i64": TensorProto.INT64}
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
TOL = {"f32": dict(rtol=2e-6, atol=2e-6), "f64": dict(rtol=1e-13, atol=1e-14),
       "i32": dict(rtol=0, atol=0), "i64": dict(rtol=0, atol=0)}
SHP_CONSTRAINT_VIOLATION = 7
D, F = ctypes.c_double, ctypes.c_int


@pytest.fixture(scope="module")
def api():
    return ct.Api()


def ort_run(op, inputs, attrs, opset=18, extra_inputs=()):
    """Runs one node `op` on `inputs` ([(name, array)]); `extra_inputs` are constant inputs
    ([(name, array)], given as initializers; an empty name is an omitted optional input)."""
    vis = [helper.make_tensor_value_info(n, ONNX_DTYPE[key_of(a)], list(a.shape)) for n, a in inputs]
    inits = [numpy_helper.from_array(a, n) for n, a in extra_inputs if n]
    names = [n for n, _ in inputs] + [n for n, _ in extra_inputs]
    node = helper.make_node(op, names, ["y"], **attrs)
    out = helper.make_tensor_value_info("y", ONNX_DTYPE[key_of(inputs[0][1])], None)
    graph = helper.make_graph([node], op, vis, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, dict(inputs))[0]


def key_of(a):
    return {np.dtype(v): k for k, v in NP.items()}[a.dtype]


def ours(api, inputs, specs, build, constraints=()):
    """Traces build(tracer, *handles) with inputs of the given shape specs and runs it on
    `inputs` (arrays)."""
    t = ct.Tracer(api, constraints)
    hs = [t.input(f"x{i}", key_of(a), s) for i, (a, s) in enumerate(zip(inputs, specs))]
    data = t.program(hs, [build(t, *hs)])
    return ct.run_cpp(api, data, [list(inputs)])[0][0]


def sym(ndim, prefix="d"):
    return ", ".join(f"{prefix}{i}" for i in range(ndim))


def rand_shape(rng, lo=1, hi=5, rank=None):
    rank = rank if rank is not None else int(rng.integers(1, 5))
    return tuple(int(v) for v in rng.integers(lo, hi + 1, size=rank))


def rand(rng, shape, key, scale=3.0):
    return (rng.standard_normal(shape) * scale).astype(NP[key])


def check(got, want, key, what):
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, err_msg=what, **TOL[key])


SEEDS = range(6)
FLOATS = ["f32", "f64"]


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_erf(api, key, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, rand_shape(rng), key)
    x.flat[:min(x.size, 4)] = np.array([0.0, -0.0, 5.0, -1e-30])[:min(x.size, 4)]
    got = ours(api, [x], [sym(x.ndim)], lambda t, h: t.unary("ERF", h))
    # onnxruntime has no f64 Erf kernel: math.erf (libm) is the f64 reference.
    want = ort_run("Erf", [("x", x)], {}) if key == "f32" else np.vectorize(math.erf)(x)
    check(got, want, key, f"erf {x.shape}")


# (ONNX op, attributes drawn from rng, our C function and its extra ctypes arguments)
def _alpha(rng):
    return float(rng.uniform(0.01, 2.0))


ACTIVATIONS = {
    "LeakyRelu": lambda rng: ({"alpha": _alpha(rng)}, lambda t, h, a: t.op("shp_tensor_leaky_relu", h,
                                                                             D(a["alpha"]))),
    "Elu": lambda rng: ({"alpha": _alpha(rng)}, lambda t, h, a: t.op("shp_tensor_elu", h, D(a["alpha"]))),
    "Selu": lambda rng: ({"alpha": _alpha(rng), "gamma": _alpha(rng)},
                         lambda t, h, a: t.op("shp_tensor_selu", h, D(a["alpha"]), D(a["gamma"]))),
    "Softplus": lambda rng: ({}, lambda t, h, a: t.op("shp_tensor_softplus", h)),
    "Softsign": lambda rng: ({}, lambda t, h, a: t.op("shp_tensor_softsign", h)),
    "HardSigmoid": lambda rng: ({"alpha": _alpha(rng), "beta": float(rng.uniform(-1, 1))},
                                lambda t, h, a: t.op("shp_tensor_hard_sigmoid", h, D(a["alpha"]),
                                                     D(a["beta"]))),
}


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
@pytest.mark.parametrize("seed", SEEDS)
def test_activation(api, op, key, seed):
    rng = np.random.default_rng(seed)
    attrs, build = ACTIVATIONS[op](rng)
    x = rand(rng, rand_shape(rng), key, scale=4.0)
    x.flat[0] = 0.0
    # Attributes are f32 in ONNX: give our side the same rounded values.
    attrs = {k: float(np.float32(v)) for k, v in attrs.items()}
    got = ours(api, [x], [sym(x.ndim)], lambda t, h: build(t, h, attrs))
    check(got, ort_run(op, [("x", x)], attrs), key, f"{op} {attrs} {x.shape}")


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_prelu(api, key, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, rand_shape(rng, rank=int(rng.integers(2, 5))), key)
    # A slope of x's trailing shape with some axes 1 (per-channel: [C, 1, 1] for NCHW).
    k = int(rng.integers(0, x.ndim + 1))
    sshape = tuple(1 if rng.random() < 0.5 else d for d in x.shape[x.ndim - k:])
    slope = rng.uniform(-1, 1, size=sshape).astype(NP[key])
    sspec = ", ".join("1" if s == 1 else f"d{x.ndim - k + i}" for i, s in enumerate(sshape))
    got = ours(api, [x, slope], [sym(x.ndim), sspec], lambda t, h, s: t.op("shp_tensor_prelu", h, s))
    check(got, ort_run("PRelu", [("x", x), ("slope", slope)], {}), key, f"prelu {x.shape} {sshape}")


@pytest.mark.parametrize("key", FLOATS + ["i32", "i64"])
@pytest.mark.parametrize("seed", SEEDS)
def test_clip(api, key, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, rand_shape(rng), key, scale=10.0)
    lo, hi = sorted(float(v) for v in rng.integers(-8, 9, size=2))
    if key in FLOATS:
        lo, hi = lo + 0.25, hi + 0.5
    which = seed % 4  # both bounds, min only, max only, none
    cmin = lo if which in (0, 1) else -np.inf
    cmax = hi if which in (0, 2) else np.inf
    extra = [("min" if cmin != -np.inf else "", np.array(cmin, dtype=NP[key]) if cmin != -np.inf else None),
             ("max" if cmax != np.inf else "", np.array(cmax, dtype=NP[key]) if cmax != np.inf else None)]
    while extra and not extra[-1][0]:  # trailing omitted optional inputs are left out
        extra.pop()
    got = ours(api, [x], [sym(x.ndim)], lambda t, h: t.op("shp_tensor_clip", h, D(cmin), D(cmax)))
    check(got, ort_run("Clip", [("x", x)], {}, extra_inputs=extra), key, f"clip [{cmin}, {cmax}]")


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_log_softmax(api, key, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, rand_shape(rng), key, scale=20.0)
    axis = int(rng.integers(-x.ndim, x.ndim))
    got = ours(api, [x], [sym(x.ndim)], lambda t, h: t.op("shp_tensor_log_softmax", h, ct.i64(axis)))
    check(got, ort_run("LogSoftmax", [("x", x)], {"axis": axis}), key, f"log_softmax axis {axis}")


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_batch_norm(api, key, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, rand_shape(rng, rank=int(rng.integers(2, 5))), key)
    c = x.shape[1]
    scale, bias, mean = (rand(rng, (c,), key, 1.0) for _ in range(3))
    var = rng.uniform(0.1, 3, size=c).astype(NP[key])
    eps = float(np.float32(10.0 ** rng.uniform(-6, -2)))
    ps = [scale, bias, mean, var]
    got = ours(api, [x] + ps, [sym(x.ndim)] + ["d1"] * 4,
               lambda t, h, *p: t.op("shp_tensor_batch_norm", h, *p, D(eps)))
    want = ort_run("BatchNormalization", [("x", x)] + list(zip(["s", "b", "m", "v"], ps)), {"epsilon": eps},
                   opset=15)
    check(got, want, key, f"batch_norm {x.shape} eps {eps}")


@pytest.mark.parametrize("seed", SEEDS)
def test_lrn(api, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, (int(rng.integers(1, 3)), int(rng.integers(1, 9))) + rand_shape(rng, rank=2), "f32")
    # onnxruntime takes odd sizes only (test_lrn_every_size_matches_the_onnx_definition: even).
    attrs = {"size": 2 * int(rng.integers(0, 4)) + 1, "alpha": float(np.float32(rng.uniform(1e-4, 0.5))),
             "beta": float(np.float32(rng.uniform(0.5, 1))), "bias": float(np.float32(rng.uniform(0.5, 2)))}
    got = ours(api, [x], [sym(4)], lambda t, h: t.op("shp_tensor_lrn", h, ct.i64(attrs["size"]), D(attrs["alpha"]),
                                                      D(attrs["beta"]), D(attrs["bias"])))
    check(got, ort_run("LRN", [("x", x)], attrs, opset=13), "f32", f"lrn {x.shape} {attrs}")


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("seed", SEEDS)
def test_pad_mode(api, key, mode, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, rand_shape(rng, lo=2), key)
    top = {"constant": 4, "reflect": None, "edge": 4}[mode]
    lo = [int(rng.integers(0, (top or d - 1) + 1)) for d in x.shape]
    hi = [int(rng.integers(0, (top or d - 1) + 1)) for d in x.shape]
    value = float(np.float32(rng.uniform(-5, 5)))
    code = ["constant", "reflect", "edge"].index(mode)
    got = ours(api, [x], [sym(x.ndim)],
               lambda t, h: t.op("shp_tensor_pad_mode", h, t.dims(lo), t.dims(hi), ct.sz(x.ndim), F(code),
                                 D(value)))
    extra = [("pads", np.array(lo + hi, dtype=np.int64))]
    if mode == "constant":
        extra.append(("value", np.array(value, dtype=NP[key])))
    check(got, ort_run("Pad", [("x", x)], {"mode": mode}, extra_inputs=extra), key, f"pad {mode} {lo} {hi}")


def test_reflect_pad_checks_the_size_at_run_time(api):
    t = ct.Tracer(api)
    h = t.input("x", "f32", "n")
    data = t.program([h], [t.op("shp_tensor_pad_mode", h, t.dims([3]), t.dims([0]), ct.sz(1), F(1), D(0))])
    ct.run_cpp(api, data, [[np.arange(4, dtype=np.float32)]])  # 3 <= 4 - 1
    with pytest.raises(ct.ShpError) as e:
        ct.run_cpp(api, data, [[np.arange(3, dtype=np.float32)]])
    assert e.value.code == SHP_CONSTRAINT_VIOLATION
    assert "reflect padding of axis 0" in str(e.value)


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("seed", SEEDS)
def test_depth_to_space(api, key, mode, seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(1, 4))
    x = rand(rng, (int(rng.integers(1, 3)), b * b * int(rng.integers(1, 4))) + rand_shape(rng, rank=2), key)
    got = ours(api, [x], [f"n, {b * b}*c, h, w"],
               lambda t, h: t.op("shp_tensor_depth_to_space", h, ct.i64(b), F(["DCR", "CRD"].index(mode))))
    check(got, ort_run("DepthToSpace", [("x", x)], {"blocksize": b, "mode": mode}, opset=13), key,
          f"depth_to_space {mode} b={b} {x.shape}")


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_space_to_depth(api, key, seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(1, 4))
    x = rand(rng, (int(rng.integers(1, 3)), int(rng.integers(1, 4))) +
             tuple(b * int(v) for v in rng.integers(1, 4, size=2)), key)
    got = ours(api, [x], [f"n, c, {b}*h, {b}*w"], lambda t, h: t.op("shp_tensor_space_to_depth", h, ct.i64(b)))
    check(got, ort_run("SpaceToDepth", [("x", x)], {"blocksize": b}, opset=13), key,
          f"space_to_depth b={b} {x.shape}")


def lrn_reference(x, size, alpha, beta, bias):
    """ONNX LRN's definition, in f64: the sum of squares over channels
    [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C)."""
    x64 = x.astype(np.float64)
    c = x.shape[1]
    s = np.zeros_like(x64)
    for i in range(c):
        a, b = max(0, i - (size - 1) // 2), min(c - 1, i + size // 2)
        s[:, i] = np.sum(x64[:, a:b + 1] ** 2, axis=1)
    return x64 / (bias + alpha / size * s) ** beta


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("size", [1, 2, 3, 4, 6, 9])
def test_lrn_every_size_matches_the_onnx_definition(api, key, size):
    """Even sizes (which onnxruntime rejects) and f64 against the ONNX formula itself."""
    rng = np.random.default_rng(size)
    x = rand(rng, (2, 5, 3, 2), key)
    got = ours(api, [x], [sym(4)], lambda t, h: t.op("shp_tensor_lrn", h, ct.i64(size), D(0.3), D(0.75), D(1.5)))
    want = lrn_reference(x, size, 0.3, 0.75, 1.5)
    np.testing.assert_allclose(got, want, rtol=1e-5 if key == "f32" else 1e-13, atol=1e-6 if key == "f32" else 0)


# Every float composite, differentiated through its primitives' rules: the gradient of
# sum(w * f(x)) against central finite differences in f64 (points kept away from the kinks).
GRAD_CASES = {
    "erf": lambda t, h: t.unary("ERF", h),
    "leaky_relu": lambda t, h: t.op("shp_tensor_leaky_relu", h, D(0.1)),
    "prelu": lambda t, h: t.op("shp_tensor_prelu", h, t.constant(np.array([[0.2], [-0.3], [0.5]]))),
    "elu": lambda t, h: t.op("shp_tensor_elu", h, D(0.7)),
    "selu": lambda t, h: t.op("shp_tensor_selu", h, D(1.6732632423543772), D(1.0507009873554805)),
    "softplus": lambda t, h: t.op("shp_tensor_softplus", h),
    "softsign": lambda t, h: t.op("shp_tensor_softsign", h),
    "clip": lambda t, h: t.op("shp_tensor_clip", h, D(-1.0), D(1.5)),
    "hard_sigmoid": lambda t, h: t.op("shp_tensor_hard_sigmoid", h, D(0.2), D(0.5)),
    "log_softmax": lambda t, h: t.op("shp_tensor_log_softmax", h, ct.i64(1)),
    "batch_norm": lambda t, h: t.op("shp_tensor_batch_norm", h, *[t.constant(np.array(v)) for v in (
        [1.5, -0.5, 2.0], [0.1, 0.2, 0.3], [0.5, -1.0, 0.0], [0.8, 2.0, 1.2])], D(1e-5)),
    "lrn": lambda t, h: t.op("shp_tensor_lrn", h, ct.i64(3), D(0.5), D(0.75), D(1.0)),
    "pad_reflect": lambda t, h: t.op("shp_tensor_pad_mode", h, t.dims([0, 1, 1]), t.dims([0, 1, 0]), ct.sz(3),
                                     F(1), D(0)),
    "pad_edge": lambda t, h: t.op("shp_tensor_pad_mode", h, t.dims([1, 0, 2]), t.dims([0, 2, 1]), ct.sz(3),
                                  F(2), D(0)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradient_matches_finite_differences(api, name):
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, size=(2, 3, 4))
    x[np.abs(x) < 0.05] += 0.1  # away from the kinks at 0 (relu family) ...
    for kink in (-1.0, 1.5, -2.5, 2.5):  # ... and from clip's and hard_sigmoid's corners
        x[np.abs(x - kink) < 0.05] += 0.1
    t = ct.Tracer(api)
    h = t.input("x", "f64", "n, 3, m")
    y = GRAD_CASES[name](t, h)
    w_spec = {"pad_reflect": "n, 5, m + 1", "pad_edge": "n + 1, 5, m + 3"}.get(name, "n, 3, m")
    w = t.input("w", "f64", w_spec)
    loss = t.reduce("REDUCE_SUM", t.binary("MUL", y, w), [], False)
    data = t.program([h, w], [loss], names=["loss"])
    wv = rng.uniform(-1, 1, size={"pad_reflect": (2, 5, 5), "pad_edge": (3, 5, 7)}.get(name, x.shape))
    grad = ct.derive(api, data, "grad", ["x"], of="loss")
    _, g = ct.run_cpp(api, grad, [{"x": x, "w": wv}])[0]  # outputs: loss, x.grad
    eps = 1e-6
    fd = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        fp, = ct.run_cpp(api, data, [[xp, wv]])[0]
        fm, = ct.run_cpp(api, data, [[xm, wv]])[0]
        fd[i] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7, err_msg=name)
