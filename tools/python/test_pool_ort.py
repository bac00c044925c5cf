"""The C API's ONNX pools against onnxruntime on random cases.

Each case traces shp_tensor_max_pool / shp_tensor_avg_pool (or a global pool) through the C
API with symbolic N, C and spatial sizes, so the output sizes, SAME pads and the ceil-mode rule
are dim expressions; runs the program at the case's concrete shape and compares with
onnxruntime running a one-node ONNX model (opset 19: dilations for both pools) built with
onnx.helper. Random kernels, strides, dilations, explicit pads (smaller than the kernel
extent, as ONNX requires), auto_pad, ceil_mode and count_include_pad; f32 and f64.
"""

import numpy as np
import pytest

import capi_trace as ct

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

AUTO_PAD = ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]  # index = shp_auto_pad_t
SHP_CONSTRAINT_VIOLATION = 7  # shp_error_code_t
ONNX_DTYPE = {"f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE}


@pytest.fixture(scope="module")
def api():
    return ct.Api()


def ort_run(op, x, attrs):
    dt = ONNX_DTYPE["f32" if x.dtype == np.float32 else "f64"]
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", dt, list(x.shape))],
                              [helper.make_tensor_value_info("y", dt, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def ours(api, key, x, build):
    """Traces build(tracer, input) with every axis symbolic and runs it at x's shape."""
    t = ct.Tracer(api)
    names = ", ".join(f"d{i}" for i in range(x.ndim))
    h = t.input("x", key, names)
    data = t.program([h], [build(t, h)])
    return ct.run_cpp(api, data, [[x]])[0][0]


def out_size(h, k, s, d, pb, pe, ceil_mode):
    ext = (k - 1) * d + 1
    if not ceil_mode:
        return (h + pb + pe - ext) // s + 1
    o = -(-(h + pb + pe - ext) // s) + 1
    return min(o, (h + pb - 1) // s + 1)


def valid(case):
    """Every output size >= 1, and SAME padding onnxruntime accepts (the library pads by
    max(0, ...); onnxruntime rejects a negative amount)."""
    key, shape, kernel, strides, dilations, pads, auto_pad, ceil_mode = case
    ns = len(kernel)
    for i in range(ns):
        h, k, s = shape[i + 2], kernel[i], strides[i]
        if auto_pad == 0 and out_size(h, k, s, dilations[i], pads[i], pads[i + ns], ceil_mode) < 1:
            return False
        if auto_pad in (1, 2) and (-(-h // s) - 1) * s + k < h:
            return False
    return True


def random_case(rng):
    while True:
        case = draw_case(rng)
        if valid(case):
            return case


def draw_case(rng):
    ns = int(rng.choice([1, 2, 2, 2, 3]))
    key = str(rng.choice(["f32", "f64"]))
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))]
    kernel, strides, dilations, pads_b, pads_e = [], [], [], [], []
    auto_pad = int(rng.choice([0, 0, 0, 1, 2, 3]))
    ceil_mode = bool(rng.integers(0, 2))
    for _ in range(ns):
        k, s, d = int(rng.integers(1, 5)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
        if auto_pad in (1, 2):
            # onnxruntime sizes SAME pads with the undilated kernel (the ONNX spec, and the
            # library, with the dilated extent: out = ceil(in / stride)); they agree at d = 1.
            d = 1
        ext = (k - 1) * d + 1
        # onnxruntime wants pads < kernel (the library: < the dilated extent).
        pb, pe = (int(rng.integers(0, k)), int(rng.integers(0, k))) if auto_pad == 0 else (0, 0)
        h = int(rng.integers(max(1, ext - pb - pe), ext + 12))
        kernel.append(k)
        strides.append(s)
        dilations.append(d)
        pads_b.append(pb)
        pads_e.append(pe)
        shape.append(h)
    return key, shape, kernel, strides, dilations, pads_b + pads_e, auto_pad, ceil_mode


def attrs_of(kernel, strides, dilations, pads, auto_pad, ceil_mode):
    a = dict(kernel_shape=kernel, strides=strides, dilations=dilations, ceil_mode=int(ceil_mode))
    if auto_pad:
        a["auto_pad"] = AUTO_PAD[auto_pad]
    else:
        a["pads"] = pads
    return a


@pytest.mark.parametrize("seed", range(60))
def test_pools_match_onnxruntime(api, seed):
    rng = np.random.default_rng(seed)
    key, shape, kernel, strides, dilations, pads, auto_pad, ceil_mode = random_case(rng)
    x = rng.standard_normal(shape).astype(ct.NP_DTYPES[ct.DTYPE_NAMES.index(key)])
    attrs = attrs_of(kernel, strides, dilations, pads, auto_pad, ceil_mode)
    what = f"{key} x{shape} {attrs}"
    want = ort_run("MaxPool", x, attrs)
    got = ours(api, key, x, lambda t, h: t.max_pool(h, kernel, strides, dilations, None if auto_pad else pads,
                                                    auto_pad, ceil_mode))
    assert got.shape == want.shape, what
    np.testing.assert_array_equal(got, want, err_msg="MaxPool " + what)
    for include in (False, True):
        # onnxruntime's AveragePool is f32 only: f64 cases compare with it on the f32 values.
        want = ort_run("AveragePool", x.astype(np.float32), dict(attrs, count_include_pad=int(include)))
        got = ours(api, key, x, lambda t, h, include=include: t.avg_pool(
            h, kernel, strides, dilations, None if auto_pad else pads, auto_pad, ceil_mode, include))
        assert got.shape == want.shape, what
        tol = 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                   err_msg=f"AveragePool count_include_pad={include} " + what)


# ResNet's stem pool and VGG's, with ceil mode and SAME padding: the cases models use.
@pytest.mark.parametrize("shape,kernel,strides,pads,auto_pad,ceil_mode", [
    ([1, 4, 112, 112], [3, 3], [2, 2], [1, 1, 1, 1], 0, False),
    ([2, 3, 224, 224], [2, 2], [2, 2], [0, 0, 0, 0], 0, False),
    ([1, 2, 13, 13], [3, 3], [2, 2], [0, 0, 0, 0], 0, True),
    ([1, 2, 15, 9], [3, 3], [2, 2], None, 1, False),
])
def test_model_pools_match_onnxruntime(api, shape, kernel, strides, pads, auto_pad, ceil_mode):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    attrs = attrs_of(kernel, strides, [1, 1], pads, auto_pad, ceil_mode)
    np.testing.assert_array_equal(
        ours(api, "f32", x, lambda t, h: t.max_pool(h, kernel, strides, None, pads, auto_pad, ceil_mode)),
        ort_run("MaxPool", x, attrs))
    np.testing.assert_allclose(
        ours(api, "f32", x, lambda t, h: t.avg_pool(h, kernel, strides, None, pads, auto_pad, ceil_mode)),
        ort_run("AveragePool", x, attrs), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [[2, 3, 5, 7], [1, 4, 9], [1, 2, 3, 4, 5]])
def test_global_pools_match_onnxruntime(api, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    for key in ("f32", "f64"):
        xk = x.astype(np.float32 if key == "f32" else np.float64)
        for kind, op in (("avg", "GlobalAveragePool"), ("max", "GlobalMaxPool")):
            got = ours(api, key, xk, lambda t, h, kind=kind: t.global_pool(kind, h))
            want = ort_run(op, xk.astype(np.float32), {})  # onnxruntime: f32 only
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_bad_arguments_name_the_argument_and_axis(api):
    t = ct.Tracer(api)
    x = t.input("x", "f32", "n, 3, 8, 8")
    cases = [
        (lambda: t.max_pool(x, [3]), "rank num_spatial + 2"),
        (lambda: t.max_pool(x, [3, 0]), "kernel_shape[1]"),
        (lambda: t.max_pool(x, [3, 3], strides=[1, 0]), "strides[1]"),
        (lambda: t.max_pool(x, [3, 3], dilations=[0, 1]), "dilations[0]"),
        (lambda: t.max_pool(x, [3, 3], pads=[1, 1, 1, 1], auto_pad=1), "pads must be NULL"),
        (lambda: t.max_pool(x, [3, 3], pads=[0, 3, 0, 0]), "spatial axis 1 (3) must be smaller than the kernel"),
        (lambda: t.avg_pool(x, [2, 2], pads=[0, 0, -1, 0]), "must be >= 0"),
        (lambda: t.max_pool(x, [3, 3], auto_pad=7), "auto_pad"),
        (lambda: t.max_pool(x, [9, 3]), "output size"),
    ]
    for f, want in cases:
        with pytest.raises(ct.ShpError) as e:
            f()
        assert want in str(e.value), str(e.value)
    xi = t.input("xi", "i32", "n, 3, 8, 8")
    with pytest.raises(ct.ShpError) as e:
        t.avg_pool(xi, [2, 2])
    assert e.value.code == ct.SHP_DTYPE_MISMATCH
    with pytest.raises(ct.ShpError) as e:
        t.global_pool("avg", t.input("v", "f32", "n, 3"))
    assert "rank >= 3" in str(e.value)
    t.close()


def test_output_size_checked_at_run_time(api):
    """A spatial size that may give no window is a shape assertion: SHP_CONSTRAINT_VIOLATION
    naming reduce_window and the axis when the size is too small."""
    t = ct.Tracer(api)
    h = t.input("x", "f32", "1, 1, h, 4")
    data = t.program([h], [t.max_pool(h, [3, 3])])
    ct.run_cpp(api, data, [[np.zeros((1, 1, 3, 4), np.float32)]])
    with pytest.raises(ct.ShpError) as e:
        ct.run_cpp(api, data, [[np.zeros((1, 1, 2, 4), np.float32)]])
    assert e.value.code == SHP_CONSTRAINT_VIOLATION, str(e.value)
    assert "reduce_window" in str(e.value) and "axis 2" in str(e.value), str(e.value)
