"""ONNX import of the signal ops (DFT, STFT, Hann/Hamming/Blackman windows, MelWeightMatrix),
the training ops of ai.onnx.preview.training (Adagrad, Adam, Momentum), Det and MaxUnpool, from
the outside in: models built with onnx.helper, imported (with symbolic sizes where the op
allows), run, and compared with numpy (np.fft, np.linalg), onnxruntime, or the onnx wheel's
reference evaluator (for the training ops, which onnxruntime lacks); and the refusals."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from shapepoly import onnx as spx
from shapepoly.onnx import models

F, D, I64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64
RNG = np.random.default_rng(7)
TRAINING = "ai.onnx.preview.training"


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def model(nodes, inputs, inits=(), opset=20, outputs=("y",), extra_opsets=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(o, F, None) for o in outputs],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def run(m, feeds, **kw):
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        return rt(**feeds)


def ort(m, feeds):
    return models.ort_session(m, threads=1).run(None, feeds)


def complex_of(x):
    """The complex array of an ONNX (..., 1 or 2) real/imaginary tensor."""
    return x[..., 0].astype(np.complex128) + (1j * x[..., 1] if x.shape[-1] == 2 else 0)


def as_pairs(z):
    return np.stack([z.real, z.imag], -1)


# ---- DFT --------------------------------------------------------------------------------

def dft_model(shape, axis=None, length=None, opset=20, dtype=F, **attrs):
    """A DFT of x (its shape may hold names) with a constant axis (opset 20: an initializer)
    and dft_length."""
    inits, names = [], ["x", "", ""]
    if length is not None:
        inits.append(("n", np.array(length, np.int64)))
        names[1] = "n"
    if axis is not None and opset >= 20:
        inits.append(("axis", np.array(axis, np.int64)))
        names[2] = "axis"
    elif axis is not None:
        attrs["axis"] = axis
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node("DFT", names, ["y"], name="dft", **attrs)
    return model([node], [("x", dtype, shape)], inits, opset)


def np_dft(x, axis, length, inverse, onesided):
    z = complex_of(x)
    if inverse and onesided:
        return np.fft.irfft(z, n=length, axis=axis)[..., None]
    out = (np.fft.ifft if inverse else np.fft.fft)(z, n=length, axis=axis)
    if onesided:
        out = np.take(out, np.arange(length // 2 + 1), axis=axis)
    return as_pairs(out)


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("inverse,onesided", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("c", [1, 2])
@pytest.mark.parametrize("length", [None, 5, 8, 11])
def test_dft_against_numpy(opset, inverse, onesided, c, length):
    shape = (3, 8, 4, c)
    m = dft_model(["batch", 8, 4, c], 1, length, opset, inverse=inverse, onesided=onesided)
    for b in (1, 3):
        x = rand(b, *shape[1:])
        want = np_dft(x, 1, length or (14 if inverse and onesided else 8), inverse, onesided)
        got = run(m, {"x": x})["y"]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, 2, -2, -3, -4])
def test_dft_axes_and_double(axis):
    x = rand(3, 5, 6, 2, dtype=np.float64)
    m = dft_model(list(x.shape), axis, dtype=D)
    m.graph.output[0].type.tensor_type.elem_type = D
    got = run(m, {"x": x})["y"]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np_dft(x, axis % 4, x.shape[axis % 4], 0, 0), atol=1e-12)


def test_dft_opset17_default_axis_and_ort():
    x = rand(2, 6, 3, 1)
    m = dft_model([2, 6, 3, 1], opset=17)
    np.testing.assert_allclose(run(m, {"x": x})["y"], ort(m, {"x": x})[0], rtol=1e-5,
                               atol=1e-5)
    m20 = dft_model([2, 6, 3, 1], opset=20)  # opset 20: the last signal axis
    np.testing.assert_allclose(run(m20, {"x": x})["y"], np_dft(x, 2, 3, 0, 0), atol=1e-5)


def test_dft_size_one_edges():
    x = rand(1, 1, 1)
    np.testing.assert_allclose(run(dft_model([1, 1, 1], 1), {"x": x})["y"],
                               np_dft(x, 1, 1, 0, 0), atol=1e-6)
    # dft_length 1 of a longer axis keeps only its first value.
    x = rand(2, 4, 2)
    np.testing.assert_allclose(run(dft_model([2, 4, 2], 1, 1), {"x": x})["y"],
                               x[:, :1], atol=1e-6)


def test_dft_symbolic_other_axes():
    m = dft_model(["b", 6, "w", 2], 1)
    x = rand(2, 6, 3, 2)
    np.testing.assert_allclose(run(m, {"x": x})["y"], np_dft(x, 1, 6, 0, 0), atol=1e-5)


def refusal(m, *words, **kw):
    with pytest.raises(spx.OnnxImportError) as e:
        spx.import_model(m, **kw)
    msg = str(e.value)
    for w in words:
        assert w in msg, msg
    return msg


def test_dft_refusals():
    refusal(dft_model(["b", "n", 2], 1), "'dft'", "symbolic")  # transformed length symbolic
    refusal(dft_model([2, 8, 2], 2), "'dft'", "axis 2")  # the re/im axis
    refusal(dft_model([2, 8, 3], 1), "'dft'", "1 or 2")
    refusal(dft_model([2, 8, "c"], 1), "'dft'", "1 or 2")
    refusal(dft_model([2, 8, 2], 1, 0), "'dft'", "dft_length")


@pytest.mark.parametrize("inverse,onesided", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("c", [1, 2])
def test_dft_length_from_run_time_data(inverse, onesided, c):
    """dft_length is a graph input: one program, whose cos/sin matrix it computes for each
    run's length (shorter than the axis: cut; longer: zero-padded), over a symbolic batch."""
    node = helper.make_node("DFT", ["x", "n"], ["y"], name="dft", axis=1, inverse=inverse,
                            onesided=onesided)
    m = model([node], [("x", F, ["b", 6, 3, c]), ("n", I64, [])], opset=17)
    with spx.import_model(m) as p, p.runtime() as rt:
        for b, length in ((2, 6), (1, 4), (3, 9), (2, 1)):
            x = rand(b, 6, 3, c)
            want = np_dft(x, 1, length, inverse, onesided)
            got = rt(x=x, n=np.array(length, np.int64))["y"]
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        with pytest.raises(Exception, match="dft.*dft_length' must be >= 1"):
            rt(x=rand(1, 6, 3, c), n=np.array(0, np.int64))
        with pytest.raises(Exception, match="dft.*at most 16777216 elements"):
            rt(x=rand(1, 6, 3, c), n=np.array(1 << 23, np.int64))


@pytest.mark.parametrize("inverse,onesided", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_dft_axis_from_run_time_data(inverse, onesided):
    """The axis is a graph input: one program transforms the axis each run names (negative
    ones too); the output's sizes follow it (onesided: n // 2 + 1; inverse onesided:
    2 (n - 1)). An axis whose length is symbolic (b) is refused when a run names it."""
    node = helper.make_node("DFT", ["x", "", "a"], ["y"], name="dft", inverse=inverse,
                            onesided=onesided)
    m = model([node], [("x", F, ["b", 6, 5, 2]), ("a", I64, [])])
    x = rand(3, 6, 5, 2)
    with spx.import_model(m) as p, p.runtime() as rt:
        for a in (1, 2, -2, -3):
            n = x.shape[a % 4]
            length = 2 * (n - 1) if inverse and onesided else n
            want = np_dft(x, a % 4, length, inverse, onesided)
            got = rt(x=x, a=np.array(a, np.int64))["y"]
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        for bad in (0, 3, -4, 7):
            with pytest.raises(Exception, match="dft"):
                rt(x=x, a=np.array(bad, np.int64))
    if not inverse and not onesided:
        m = model([node], [("x", F, [4, 6, 5, 1]), ("a", I64, [])])
        x = rand(4, 6, 5, 1)
        for a in (0, 1, 2):
            feeds = {"x": x, "a": np.array(a, np.int64)}
            np.testing.assert_allclose(run(m, feeds)["y"], ort(m, feeds)[0], rtol=1e-5,
                                       atol=1e-5)


# ---- STFT --------------------------------------------------------------------------------

def np_stft(x, step, window, fl, onesided):
    frames = (x.shape[1] - fl) // step + 1
    fr = np.stack([x[:, f * step:f * step + fl] for f in range(frames)], 1)
    z = complex_of(fr) * (1.0 if window is None else window[:, None][..., 0])
    out = np.fft.fft(z, axis=2)
    return as_pairs(out[:, :, :fl // 2 + 1] if onesided else out)


@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("with_window", [False, True])
def test_stft_frame_length_from_run_time_data(onesided, with_window):
    """frame_length (and frame_step) are graph inputs: one program for every frame length;
    a window must have that length (checked at run time)."""
    names = ["x", "step", "w" if with_window else "", "fl"]
    inputs = [("x", F, ["batch", "len", 1]), ("step", I64, []), ("fl", I64, [])]
    if with_window:
        inputs.append(("w", F, ["wl"]))
    node = helper.make_node("STFT", names, ["y"], name="stft", onesided=onesided)
    m = model([node], inputs, opset=17)
    with spx.import_model(m) as p, p.runtime() as rt:
        for b, n, step, fl in ((1, 32, 4, 8), (2, 20, 3, 5), (1, 9, 2, 9)):
            x = rand(b, n, 1)
            w = np.hanning(fl).astype(np.float32) if with_window else None
            feeds = {"x": x, "step": np.array(step, np.int64), "fl": np.array(fl, np.int64)}
            if with_window:
                feeds["w"] = w
            want = np_stft(x, step, w, fl, onesided)
            got = rt(**feeds)["y"]
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        bad = {"x": rand(1, 8, 1), "step": np.array(2, np.int64), "fl": np.array(9, np.int64)}
        if with_window:
            bad["w"] = np.ones(9, np.float32)
        with pytest.raises(Exception, match="stft.*at least one frame"):
            rt(**bad)
        if with_window:
            with pytest.raises(Exception, match="stft.*window's length must equal"):
                rt(**dict(bad, x=rand(1, 12, 1), w=np.ones(4, np.float32)))


@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("c", [1, 2])
@pytest.mark.parametrize("with_window", [False, True])
def test_stft_symbolic_signal(onesided, c, with_window):
    fl, step = 8, 3
    inits = [("step", np.array(step, np.int64)), ("fl", np.array(fl, np.int64))]
    names = ["x", "step", "w" if with_window else "", "fl"]
    inputs = [("x", F, ["batch", "len", c])]
    if with_window:
        inputs.append(("w", F, [fl]))
    m = model([helper.make_node("STFT", names, ["y"], onesided=onesided)], inputs, inits, 17)
    for b, n in [(1, 8), (2, 20), (3, 31)]:
        feeds = {"x": rand(b, n, c)}
        if with_window:
            feeds["w"] = np.hanning(fl).astype(np.float32)
        want = np_stft(feeds["x"], step, feeds.get("w"), fl, onesided)
        got = run(m, feeds)["y"]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_stft_against_ort_and_run_time_step():
    # frame_step given at run time: the frame count is a data-dependent size.
    x = rand(2, 40, 1)
    w = np.hamming(16).astype(np.float32)
    n = helper.make_node("STFT", ["x", "step", "w"], ["y"])
    m = model([n], [("x", F, [2, 40, 1]), ("step", I64, []), ("w", F, [16])], opset=17)
    for step in (4, 5, 24):
        feeds = {"x": x, "step": np.array(step, np.int64), "w": w}
        want = ort(m, feeds)[0]
        got = run(m, feeds)["y"]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_stft_refusals():
    n = helper.make_node("STFT", ["x", "step", "", "fl"], ["y"], name="stft")
    refusal(model([n], [("x", F, [1, 16, 1]), ("step", I64, []), ("fl", F, [])], opset=17),
            "'stft'", "frame_length' must be an int scalar")
    n = helper.make_node("STFT", ["x", "step"], ["y"], name="stft")
    refusal(model([n], [("x", F, [1, "n", 1])], [("step", np.array(2, np.int64))], 17),
            "'stft'", "symbolic")
    n = helper.make_node("STFT", ["x", "step", "", "fl"], ["y"], name="stft")
    refusal(model([n], [("x", F, [1, 4, 1])], [("step", np.array(2, np.int64)),
                                                ("fl", np.array(8, np.int64))], 17),
            "'stft'", "shorter")


# ---- Windows -------------------------------------------------------------------------------

WINDOWS = ["HannWindow", "HammingWindow", "BlackmanWindow"]


def np_window(op, n, periodic):
    d = n if periodic else n - 1
    k = np.arange(n, dtype=np.float64)
    with np.errstate(all="ignore"):
        if op == "HannWindow":
            return np.sin(np.pi * k / d) ** 2
        if op == "HammingWindow":
            return 25 / 46 - 21 / 46 * np.cos(2 * np.pi * k / d)
        return 0.42 - 0.5 * np.cos(2 * np.pi * k / d) + 0.08 * np.cos(4 * np.pi * k / d)


@pytest.mark.parametrize("op", WINDOWS)
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("size", [1, 2, 10])
def test_window_constant_size(op, periodic, size):
    m = model([helper.make_node(op, ["s"], ["y"], periodic=periodic)], [],
              [("s", np.array(size, np.int64))], 17)
    got = run(m, {})["y"]
    np.testing.assert_allclose(got, np_window(op, size, periodic), rtol=1e-6, atol=1e-6)
    # Not evaluated while importing (over the fold cap): the traced formula, same values.
    np.testing.assert_allclose(run(m, {}, max_fold_elements=0)["y"], got, rtol=1e-6, atol=1e-6)
    if size > 1:
        np.testing.assert_allclose(got, ort(m, {})[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", WINDOWS)
def test_window_symbolic_and_run_time_size(op):
    # The size from a symbolic shape (iota arithmetic), and from a run-time input.
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Squeeze", ["sh"], ["s"]),
             helper.make_node(op, ["s"], ["y"], periodic=0, output_datatype=D)]
    m = model(nodes, [("x", F, ["n"])], opset=17)
    for n in (2, 7):
        got = run(m, {"x": rand(n)})["y"]
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, np_window(op, n, 0), atol=1e-12)
    m = model([helper.make_node(op, ["s"], ["y"])], [("s", TensorProto.INT32, [])], opset=17)
    for n in (1, 5):
        got = run(m, {"s": np.array(n, np.int32)})["y"]
        np.testing.assert_allclose(got, np_window(op, n, 1), atol=1e-6)


def test_window_refuses_an_unknown_output_type():
    m = model([helper.make_node("HannWindow", ["s"], ["y"], name="w",
                                output_datatype=TensorProto.FLOAT8E4M3FN)], [],
              [("s", np.array(4, np.int64))], 17)
    refusal(m, "HannWindow", "output_datatype")


# ---- MelWeightMatrix ---------------------------------------------------------------------

@pytest.mark.parametrize("bins,length,rate,low,high", [(8, 16, 8192, 0.0, 4096.0),
                                                       (5, 64, 16000, 100.0, 7000.0),
                                                       (1, 1, 100, 0.0, 40.0)])
def test_mel_weight_matrix(bins, length, rate, low, high):
    inits = [("b", np.array(bins, np.int64)), ("n", np.array(length, np.int64)),
             ("r", np.array(rate, np.int64)), ("lo", np.array(low, np.float32)),
             ("hi", np.array(high, np.float32))]
    m = model([helper.make_node("MelWeightMatrix", ["b", "n", "r", "lo", "hi"], ["y"])], [],
              inits, 17)
    want = ReferenceEvaluator(m).run(None, {})[0]
    got = run(m, {})["y"]
    assert got.shape == (length // 2 + 1, bins)
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(got, ort(m, {})[0], atol=1e-6)


def test_mel_weight_matrix_from_run_time_data():
    """Every input a graph input: one program, whose output sizes (dft_length // 2 + 1,
    num_mel_bins) and filters follow each run's values; onnx's reference and onnxruntime as
    oracles; bad values fail the run naming the node."""
    n = helper.make_node("MelWeightMatrix", ["b", "n", "r", "lo", "hi"], ["y"], name="mel")
    m = model([n], [("b", I64, []), ("n", I64, []), ("r", I64, []), ("lo", F, []),
                    ("hi", F, [])], opset=17)
    with spx.import_model(m) as p, p.runtime() as rt:
        for bins, length, rate, low, high in ((8, 16, 8192, 0.0, 4096.0),
                                              (5, 64, 16000, 100.0, 7000.0),
                                              (1, 1, 100, 0.0, 40.0), (12, 255, 22050, 30.0,
                                                                      11000.0)):
            feeds = {"b": np.array(bins, np.int64), "n": np.array(length, np.int64),
                     "r": np.array(rate, np.int64), "lo": np.array(low, np.float32),
                     "hi": np.array(high, np.float32)}
            got = rt(**feeds)["y"]
            assert got.shape == (length // 2 + 1, bins) and got.dtype == np.float32
            np.testing.assert_allclose(got, ReferenceEvaluator(m).run(None, feeds)[0],
                                       atol=1e-6)
            np.testing.assert_allclose(got, ort(m, feeds)[0], atol=1e-6)
        with pytest.raises(Exception, match="mel.*num_mel_bins >= 1"):
            rt(**dict(feeds, lo=np.array(20000.0, np.float32)))


# ---- Training ops ------------------------------------------------------------------------

def training_model(op, n_tensors, groups, shape, **attrs):
    """R, T, then `groups` groups of n_tensors tensors; outputs in ONNX's order."""
    names = ["R", "T"] + ["in%d" % i for i in range(n_tensors * groups)]
    outs = ["out%d" % i for i in range(n_tensors * (groups - 1))]
    node = helper.make_node(op, names, outs, domain=TRAINING, name="train", **attrs)
    inputs = [("R", F, []), ("T", I64, [])] + [(nm, F, shape) for nm in names[2:]]
    return model([node], inputs, outputs=outs, extra_opsets=[(TRAINING, 1)]), names, outs


CASES = [("Adagrad", 3, dict(decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01)),
         ("Adam", 4, dict(alpha=0.8, beta=0.95, epsilon=1e-4, norm_coefficient=0.02,
                          norm_coefficient_post=0.03)),
         ("Adam", 4, {}),
         ("Momentum", 3, dict(alpha=0.9, beta=0.5, mode="standard", norm_coefficient=0.01)),
         ("Momentum", 3, dict(alpha=0.9, beta=0.5, mode="nesterov", norm_coefficient=0.01))]


@pytest.mark.parametrize("op,groups,attrs", CASES)
@pytest.mark.parametrize("n_tensors", [1, 2])
def test_training_ops_against_reference(op, groups, attrs, n_tensors):
    m, names, outs = training_model(op, n_tensors, groups, ["batch", 3], **attrs)
    ref = ReferenceEvaluator(m)
    with spx.import_model(m) as p, p.runtime() as rt:
        for b, t in [(1, 0), (4, 3), (2, 1)]:
            feeds = {"R": np.array(0.1, np.float32), "T": np.array(t, np.int64)}
            for nm in names[2:]:
                x = rand(b, 3)
                feeds[nm] = np.abs(x) if nm in names[2 + n_tensors * (groups - 1):] else x
            want = ref.run(None, feeds)
            got = rt(**feeds)
            for o, w in zip(outs, want):
                np.testing.assert_allclose(got[o], w, rtol=1e-5, atol=1e-6)


def test_training_refusals():
    m, _, _ = training_model("Momentum", 1, 3, [2], alpha=0.9, beta=0.5, mode="other",
                             norm_coefficient=0.0)
    refusal(m, "'train'", "mode")
    m, _, _ = training_model("Momentum", 1, 3, [2], alpha=0.9, beta=0.5, mode="standard")
    refusal(m, "'train'", "norm_coefficient")
    # An odd input count: the groups do not split evenly.
    node = helper.make_node("Adagrad", ["R", "T", "x", "g"], ["xo"], domain=TRAINING,
                            name="train")
    m = model([node], [("R", F, []), ("T", I64, []), ("x", F, [2]), ("g", F, [2])],
              outputs=["xo"], extra_opsets=[(TRAINING, 1)])
    refusal(m, "'train'", "groups")


# ---- Det ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 6])
def test_det_symbolic_batch(n):
    m = model([helper.make_node("Det", ["x"], ["y"])], [("x", F, ["b", 2, n, n])], opset=22)
    for b in (1, 3):
        x = rand(b, 2, n, n)
        got = run(m, {"x": x})["y"]
        assert got.shape == (b, 2)
        np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)), rtol=1e-4,
                                   atol=1e-5)


def test_det_single_matrix_double_and_singular():
    m = model([helper.make_node("Det", ["x"], ["y"])], [("x", D, [3, 3])], opset=22)
    m.graph.output[0].type.tensor_type.elem_type = D
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float64)
    assert run(m, {"x": x})["y"].shape == ()
    assert abs(run(m, {"x": x})["y"]) < 1e-12
    x = rand(3, 3, dtype=np.float64)
    np.testing.assert_allclose(run(m, {"x": x})["y"], np.linalg.det(x), rtol=1e-12)


def test_det_refusals():
    n = helper.make_node("Det", ["x"], ["y"], name="det")
    refusal(model([n], [("x", F, [7, 7])], opset=22), "'det'", "up to 6")
    refusal(model([n], [("x", F, ["k", "k"])], opset=22), "'det'", "constant")
    refusal(model([n], [("x", F, [2, 3])], opset=22), "'det'", "square")


# ---- MaxUnpool ---------------------------------------------------------------------------

@pytest.mark.parametrize("size,kernel,strides,pads", [(6, [2, 2], [2, 2], [0, 0, 0, 0]),
                                                      (7, [3, 3], [2, 2], [1, 1, 1, 1]),
                                                      (7, [2, 2], [1, 1], [0, 0, 0, 0])])
def test_max_pool_then_unpool_against_ort(size, kernel, strides, pads):
    # Sizes the unpool gives back exactly (else MaxPool's indices can point past its output).
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=kernel,
                              strides=strides, pads=pads),
             helper.make_node("MaxUnpool", ["p", "i"], ["y"], kernel_shape=kernel,
                              strides=strides, pads=pads)]
    m = model(nodes, [("x", F, [2, 3, size, size])], opset=12)
    x = rand(2, 3, size, size)
    want = ort(m, {"x": x})[0]
    # The unpool on its own (MaxPool's Indices output is not imported): ORT's pool feeds it.
    pool = model(nodes[:1], [("x", F, [2, 3, size, size])], opset=12, outputs=("p", "i"))
    pool.graph.output[1].type.tensor_type.elem_type = I64
    p, i = ort(pool, {"x": x})
    un = model(nodes[1:], [("p", F, ["batch", 3, "h", "w"]), ("i", I64, ["batch", 3, "h", "w"])],
               opset=12)
    got = run(un, {"p": p, "i": i})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_max_unpool_output_shape_constant_and_run_time():
    x = np.array([[[[5, 6], [7, 8]]]], np.float32)
    i = np.array([[[[5, 7], [13, 15]]]], np.int64)
    n = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2],
                         strides=[2, 2])
    want = ReferenceEvaluator(model([n], [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2])],
                                    [("s", np.array([1, 1, 5, 5], np.int64))], 12)
                              ).run(None, {"x": x, "i": i})[0]
    m = model([n], [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2])],
              [("s", np.array([1, 1, 5, 5], np.int64))], 12)
    np.testing.assert_array_equal(run(m, {"x": x, "i": i})["y"], want)
    m = model([n], [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2]), ("s", I64, [4])],
              opset=12)
    got = run(m, {"x": x, "i": i, "s": np.array([1, 1, 5, 5], np.int64)})["y"]
    np.testing.assert_array_equal(got, want)


def test_max_unpool_refusals():
    n = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], name="unpool",
                         kernel_shape=[2, 2], strides=[2, 2])
    m = model([n], [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2])],
              [("s", np.array([1, 1, 3, 3], np.int64))], 12)
    refusal(m, "'unpool'", "smaller")
    n = helper.make_node("MaxUnpool", ["x", "i"], ["y"], name="unpool", kernel_shape=[2])
    refusal(model([n], [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2])], opset=12),
            "'unpool'", "kernel_shape")



# ---- RoiAlign ----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [1, 2])
def test_roi_align_against_ort(mode, ctm, ratio):
    n = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], mode=mode, output_height=3,
                         output_width=4, sampling_ratio=ratio, spatial_scale=0.5,
                         coordinate_transformation_mode=ctm)
    m = model([n], [("x", F, ["n", 3, "h", "w"]), ("rois", F, ["r", 4]), ("bi", I64, ["r"])],
              opset=16)
    for b, h, w, r in [(2, 8, 10, 5), (1, 5, 6, 1)]:
        x = rand(b, 3, h, w)
        # Corners in input pixels (scale 0.5), some past the edges, one degenerate.
        x1y1 = RNG.uniform(-4, 2 * w, (r, 2)) * [1, h / w]
        rois = np.concatenate([x1y1, x1y1 + RNG.uniform(0, 12, (r, 2))], 1).astype(np.float32)
        rois[0, 2:] = rois[0, :2]
        feeds = {"x": x, "rois": rois, "bi": RNG.integers(0, b, r).astype(np.int64)}
        want = ort(m, feeds)[0]
        got = run(m, feeds)["y"]
        assert got.shape == want.shape == (r, 3, 3, 4)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_roi_align_refuses_adaptive_sampling():
    n = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], name="roi")
    m = model([n], [("x", F, [1, 1, 4, 4]), ("rois", F, [1, 4]), ("bi", I64, [1])], opset=16)
    refusal(m, "RoiAlign", "sampling_ratio=0")
