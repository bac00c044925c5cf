"""ONNX import of the recurrent layers LSTM, GRU and RNN: models built with onnx.helper, imported
once with a symbolic batch (unrolled over their fixed sequence length, or a scan over a symbolic
or long one) and compared with onnxruntime at several batch sizes and sequence lengths."""

import copy
import inspect
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from shapepoly import onnx as spx
from shapepoly.onnx import models

F, D, I32 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT32
RNG = np.random.default_rng(2024)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
BATCHES = (1, 3, 0)


def rand(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def rnn_model(op, seq=4, inp=3, hidden=5, direction="forward", layout=0, bias=True, h0=False,
              c0=False, peep=False, lens=False, outputs=None, batch="N", opset=22,
              elem=F, **attrs):
    """A model of one `op` node: X (and initial states, sequence_lens) are graph inputs with a
    batch axis `batch` (a dim_param, or an int for dynamic="batch"); W, R, B, P initializers.
    Returns the model and a function batch size -> feeds."""
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    dt = np.float32 if elem == F else np.float64
    inits = {"W": rand(dirs, g * hidden, inp, dtype=dt), "R": rand(dirs, g * hidden, hidden,
                                                                   dtype=dt)}
    if bias:
        inits["B"] = rand(dirs, 2 * g * hidden, dtype=dt)
    if peep:
        inits["P"] = rand(dirs, 3 * hidden, dtype=dt)
    x_shape = [seq, batch, inp] if layout == 0 else [batch, seq, inp]
    s_shape = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
    gin = [helper.make_tensor_value_info("X", elem, x_shape)]
    names = ["X", "W", "R", "B" if bias else "", "", "", "", ""]
    if lens:
        names[4] = "L"
        gin.append(helper.make_tensor_value_info("L", I32, [batch]))
    for i, (flag, name) in enumerate(((h0, "H0"), (c0, "C0"))):
        if flag:
            names[5 + i] = name
            gin.append(helper.make_tensor_value_info(name, elem, s_shape))
    if peep:
        names[7] = "P"
    while names and not names[-1]:
        names.pop()
    if outputs is None:
        outputs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    if op != "GRU" and "linear_before_reset" in attrs:
        del attrs["linear_before_reset"]
    if opset >= 14:
        attrs["layout"] = layout
    node = helper.make_node(op, names, outputs, name="rnn1", direction=direction,
                            hidden_size=hidden, **attrs)
    graph = helper.make_graph(
        [node], "g", gin, [helper.make_tensor_value_info(o, elem, None) for o in outputs if o],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8

    def feeds(n):
        f = {"X": rand(*[n if d == batch else d for d in x_shape], dtype=dt)}
        if lens:  # uneven lengths from 1 to seq
            f["L"] = np.array([(seq - k) % seq + 1 for k in range(n)], np.int32)
        for flag, name in ((h0, "H0"), (c0, "C0")):
            if flag:
                f[name] = rand(*[n if d == batch else d for d in s_shape], dtype=dt)
        return f
    return m, feeds


def _layout(m):
    return next((a.i for a in m.graph.node[-1].attribute if a.name == "layout"), 0)


class Reference:
    """onnxruntime on `m` with the input shapes left out (the batch sizes vary, also where the
    program's is a dynamic="batch" one). Its kernels refuse layout=1 (batch-major), so such a
    model runs as its layout=0 twin on transposed inputs, with the outputs transposed back."""

    def __init__(self, m):
        m = copy.deepcopy(m)
        self.batch_major = _layout(m) == 1
        for a in m.graph.node[-1].attribute:
            if a.name == "layout":
                a.i = 0
        for i in m.graph.input:
            i.type.tensor_type.ClearField("shape")
        self.sess = models.ort_session(m)

    def run(self, feeds):
        if not self.batch_major:
            return self.sess.run(None, feeds)
        f = {k: v.swapaxes(0, 1) if k in ("X", "H0", "C0") else v for k, v in feeds.items()}
        out = self.sess.run(None, f)
        return [y.transpose(2, 0, 1, 3) if y.ndim == 4 else y.swapaxes(0, 1) for y in out]


def check(m, feeds, batches=BATCHES, rtol=1e-4, **kw):
    """Imports `m` once (kw to import_model) and compares every output with onnxruntime at
    each batch size; returns the program's input shapes and output names."""
    sess = Reference(m)
    if 0 in batches:  # variables are >= 1 unless declared otherwise (as export records it)
        var = kw.get("dynamic") or "N"
        helper.set_model_props(m, {"shapepoly.variables": json.dumps(
            [{"name": var, "min": 0, "max": 1 << 40, "declared": True}])})
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        for n in batches:
            f = feeds(n)
            got = list(rt(**f).values())
            if n == 0:  # onnxruntime's RNN kernels refuse an empty batch: shapes only
                want = sess.run(feeds(1))
                assert [g.shape for g in got] == [
                    tuple(0 if s == 1 and i == ax else s for i, s in enumerate(w.shape))
                    for g, w, ax in zip(got, want, _batch_axes(m))]
                continue
            want = sess.run(f)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == w.shape, (n, g.shape, w.shape)
                assert models.max_rel_error(g, w) <= rtol, (n, models.max_rel_error(g, w))
        return [i.shape for i in p.inputs], [o.name for o in p.outputs]


def _batch_axes(m):
    """The batch axis of each graph output (Y, then the final states)."""
    layout = _layout(m)
    outs = [o for o in m.graph.node[0].output]
    return [(2 if layout == 0 else 0) if i == 0 else (1 if layout == 0 else 0)
            for i, o in enumerate(outs) if o]


DIRECTIONS = ("forward", "reverse", "bidirectional")


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("layout", [0, 1])
def test_directions_and_layouts(op, direction, layout):
    for bias in (True, False):
        m, feeds = rnn_model(op, direction=direction, layout=layout, bias=bias)
        ins, _ = check(m, feeds)
        assert "N" in ins[0]


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_initial_states_and_peepholes(op, direction):
    for layout in (0, 1):
        m, feeds = rnn_model(op, direction=direction, layout=layout, h0=True,
                             c0=op == "LSTM", peep=op == "LSTM")
        check(m, feeds)
    if op == "LSTM":  # each alone
        check(*rnn_model(op, direction=direction, c0=True))
        check(*rnn_model(op, direction=direction, peep=True, bias=False))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("layout", [0, 1])
def test_sequence_lens_uneven(op, direction, layout):
    m, feeds = rnn_model(op, seq=5, direction=direction, layout=layout, lens=True, h0=True,
                         c0=op == "LSTM")
    check(m, feeds, batches=(1, 3, 5, 0))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_sequence_lens_with_an_empty_sequence(op):
    # onnxruntime's final state of an empty sequence is zeros (the spec says nothing).
    m, feeds = rnn_model(op, direction="bidirectional", lens=True, h0=True, c0=op == "LSTM")

    def with_zero(n):
        f = feeds(n)
        f["L"][n // 2] = 0
        return f
    check(m, with_zero, batches=(1, 3))


def test_sequence_lens_constant_full_and_uneven():
    for values in ([4, 4, 4], [4, 1, 3]):
        m, feeds = rnn_model("GRU", direction="bidirectional", batch=3, h0=True)
        node = m.graph.node[0]
        node.input[4] = "L"
        m.graph.initializer.append(numpy_helper.from_array(np.array(values, np.int32), "L"))
        check(m, feeds, batches=(3,))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_clip(op):
    for direction in ("forward", "bidirectional"):
        m, feeds = rnn_model(op, direction=direction, clip=0.7, h0=True, peep=op == "LSTM")
        check(m, feeds)


ONE = ["Sigmoid", "Tanh", "Relu", "HardSigmoid", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
       "Affine", "Elu", "Softsign", "Softplus"]
ALPHA = {"HardSigmoid": (0.3, 0.4), "LeakyRelu": (0.2, None), "ThresholdedRelu": (0.3, None),
         "ScaledTanh": (0.8, 0.6), "Affine": (0.5, 0.1), "Elu": (0.7, None)}


def _acts(names):
    """activations with explicit alpha and beta for the functions that take them."""
    alphas = [ALPHA[n][0] for n in names if n in ALPHA]
    betas = [ALPHA[n][1] for n in names if n in ALPHA and ALPHA[n][1] is not None]
    at = {"activations": names}
    if alphas:
        at["activation_alpha"] = alphas
    if betas:
        at["activation_beta"] = betas
    return at


@pytest.mark.parametrize("name", ONE)
def test_rnn_activations(name):
    m, feeds = rnn_model("RNN", seq=3, direction="bidirectional",
                         **_acts([name, "Tanh"]))
    check(m, feeds, batches=(1, 3))


def test_lstm_and_gru_activations():
    for names in (["HardSigmoid", "LeakyRelu", "Softsign"], ["Sigmoid", "Elu", "Affine"],
                  ["HardSigmoid", "ScaledTanh", "Relu"]):
        m, feeds = rnn_model("LSTM", seq=3, **_acts(names))
        check(m, feeds, batches=(1, 3))
    m, feeds = rnn_model("LSTM", seq=3, direction="bidirectional", **_acts(
        ["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Softsign", "LeakyRelu"]))
    check(m, feeds, batches=(2,))
    for names in (["HardSigmoid", "Softsign"], ["Sigmoid", "LeakyRelu"]):
        for lbr in (0, 1):
            m, feeds = rnn_model("GRU", seq=3, linear_before_reset=lbr, **_acts(names))
            check(m, feeds, batches=(1, 3))


def test_activation_defaults_are_the_onnx_ops_defaults():
    """LeakyRelu, HardSigmoid and Elu without values: onnxruntime agrees. Affine and
    ThresholdedRelu without values take their ONNX ops' defaults (1, 0) and 1 (onnxruntime
    takes 0): the program equals the model with those values written out."""
    check(*rnn_model("LSTM", seq=3, activations=["HardSigmoid", "LeakyRelu", "Elu"]))
    for name, at in (("Affine", dict(activation_alpha=[1.0], activation_beta=[0.0])),
                     ("ThresholdedRelu", dict(activation_alpha=[1.0]))):
        m, feeds = rnn_model("RNN", seq=3, activations=[name])
        explicit = rnn_model("RNN", seq=3, activations=[name], **at)[0]
        del explicit.graph.initializer[:]
        explicit.graph.initializer.extend(m.graph.initializer)
        f = feeds(3)
        with spx.import_model(m) as p, p.runtime() as rt:
            got = list(rt(**f).values())
        want = models.ort_session(explicit).run(None, f)
        for g, w in zip(got, want):
            assert models.max_rel_error(g, w) <= 1e-5


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_linear_before_reset(lbr):
    for direction in DIRECTIONS:
        m, feeds = rnn_model("GRU", direction=direction, linear_before_reset=lbr, h0=True,
                             lens=True)
        check(m, feeds)
    check(*rnn_model("GRU", linear_before_reset=lbr, bias=False))


def test_lstm_input_forget():
    for direction in ("forward", "bidirectional"):
        check(*rnn_model("LSTM", direction=direction, input_forget=1, peep=True, h0=True,
                         c0=True))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_hidden_size_one_and_single_step(op):
    check(*rnn_model(op, hidden=1, direction="bidirectional", h0=True))
    check(*rnn_model(op, seq=1, inp=1, hidden=2, layout=1, lens=True))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_omitted_outputs(op):
    last = ["Y_h", "Y_c"] if op == "LSTM" else ["Y_h"]
    for outs in (["", *last], ["Y"], ["", "Y_h"], ["Y", "", *last[1:]]):
        if op != "LSTM" and outs == ["Y", ""]:
            continue
        m, feeds = rnn_model(op, direction="bidirectional", outputs=outs, h0=True)
        _, names = check(m, feeds)
        assert names == [o for o in outs if o]


@pytest.mark.parametrize("opset", [7, 14, 22])
@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_opsets(op, opset):
    layouts = (0, 1) if opset >= 14 else (0,)
    for layout in layouts:
        check(*rnn_model(op, opset=opset, layout=layout, direction="bidirectional",
                         lens=True, h0=True, c0=op == "LSTM", peep=op == "LSTM"))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_double(op):
    """onnxruntime's recurrent kernels are f32 only: f64 against its f32 twin on the same
    (f32-rounded) values."""
    m, feeds = rnn_model(op, elem=D, direction="bidirectional", h0=True, lens=True,
                         peep=op == "LSTM")
    m32 = copy.deepcopy(m)
    for t, t32 in zip(m.graph.initializer, m32.graph.initializer):
        if t.data_type == D:
            a = numpy_helper.to_array(t).astype(np.float32)
            t.CopyFrom(numpy_helper.from_array(a.astype(np.float64), t.name))
            t32.CopyFrom(numpy_helper.from_array(a, t.name))
    for v in list(m32.graph.input) + list(m32.graph.output):
        if v.type.tensor_type.elem_type == D:
            v.type.tensor_type.elem_type = F
    f = {k: v.astype(np.float32).astype(v.dtype) for k, v in feeds(3).items()}
    with spx.import_model(m) as p, p.runtime() as rt:
        got = list(rt(**f).values())
    want = Reference(m32).run({k: v.astype(np.float32) if v.dtype == np.float64 else v
                               for k, v in f.items()})
    for g, w in zip(got, want):
        assert g.dtype == np.float64 and models.max_rel_error(g, w) <= 1e-5


def test_dynamic_batch_on_batch_major_inputs():
    """layout=1 puts the batch first on every input: dynamic="batch" makes it symbolic."""
    m, feeds = rnn_model("LSTM", layout=1, batch=2, lens=True, h0=True, c0=True,
                         direction="bidirectional")

    def resized(n):  # feeds(n) replaces only the axes equal to `batch` (2)
        f = feeds(2)
        return {k: np.resize(v, (n,) + v.shape[1:]) if n else v[:0] for k, v in f.items()}
    ins, _ = check(m, resized, dynamic="batch")
    assert ins[0] == "(batch, 4, 3)"


def test_stacked_layers():
    """Two LSTM layers, the second reading the first's Y through Squeeze (seq-major, one
    direction), then a Gemm on the last state: the usual shape of exported models."""
    h = 4
    w1, r1, w2, r2 = rand(1, 16, 3), rand(1, 16, h), rand(1, 16, h), rand(1, 16, h)
    fc = rand(2, h)
    nodes = [helper.make_node("LSTM", ["X", "W1", "R1"], ["Y1"], hidden_size=h),
             helper.make_node("Squeeze", ["Y1", "ax"], ["S1"]),
             helper.make_node("LSTM", ["S1", "W2", "R2"], ["", "H2"], hidden_size=h),
             helper.make_node("Squeeze", ["H2", "ax0"], ["S2"]),
             helper.make_node("Gemm", ["S2", "FC"], ["out"], transB=1)]
    inits = {"W1": w1, "R1": r1, "W2": w2, "R2": r2, "FC": fc, "ax": np.array([1]),
             "ax0": np.array([0])}
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, [6, "N", 3])],
                          [helper.make_tensor_value_info("out", F, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    check(m, lambda n: {"X": rand(6, n, 3)}, batches=(1, 3))


def test_long_sequence():
    """300 steps each way (weights scaled down: with large random weights a long f32
    trajectory is so sensitive that onnxruntime's own rounding grows past the tolerance)."""
    for op in ("LSTM", "GRU"):
        m, feeds = rnn_model(op, seq=300, direction="bidirectional", lens=True, h0=True)
        for t in m.graph.initializer:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(0.4),
                                               t.name))
        check(m, feeds, batches=(3,))


# ---- Refusals -----------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("layout", [0, 1])
def test_symbolic_sequence_length_is_a_scan(op, direction, layout):
    """A symbolic sequence length T (as torch and JAX exports have it) becomes a scan: one
    program for every T, compared with onnxruntime at T = 1, 2, 7 and several batches, with
    and without sequence_lens and initial states; T = 0 gives an empty Y."""
    for lens in (False, True):
        m, _ = rnn_model(op, seq="T", direction=direction, layout=layout, lens=lens, h0=True,
                         c0=op == "LSTM", peep=op == "LSTM")
        helper.set_model_props(m, {"shapepoly.variables": json.dumps(
            [{"name": "T", "min": 0, "max": 1 << 20, "declared": True}])})
        sess = Reference(m)
        dirs = 2 if direction == "bidirectional" else 1
        with spx.import_model(m) as p, p.runtime() as rt:
            assert "T" in p.inputs[0].shape
            for t, n in ((1, 1), (2, 3), (7, 2), (0, 2)):
                x_shape = (t, n, 3) if layout == 0 else (n, t, 3)
                s_shape = (dirs, n, 5) if layout == 0 else (n, dirs, 5)
                f = {"X": rand(*x_shape), "H0": rand(*s_shape)}
                if op == "LSTM":
                    f["C0"] = rand(*s_shape)
                if lens:
                    f["L"] = np.array([(k % t) + 1 if t else 0 for k in range(n)], np.int32)
                got = list(rt(**f).values())
                y_shape = (t, dirs, n, 5) if layout == 0 else (n, t, dirs, 5)
                assert got[0].shape == y_shape, (t, n, got[0].shape)
                if t == 0:  # onnxruntime refuses an empty sequence: shapes only
                    continue
                want = sess.run(f)
                for g, w in zip(got, want):
                    assert g.shape == w.shape, (t, n, g.shape, w.shape)
                    assert models.max_rel_error(g, w) <= 1e-4, (t, n, models.max_rel_error(g, w))


def test_symbolic_sequence_and_batch_both():
    """dynamic="batch" on a layout=0 model makes axis 0 (the sequence) symbolic: a scan."""
    m, feeds = rnn_model("GRU", batch=2)
    with spx.import_model(m, dynamic="batch") as p:
        assert p.inputs[0].shape.startswith("(batch")
    # A symbolic sequence fixed at import unrolls.
    m, feeds = rnn_model("RNN", seq="T")
    with spx.import_model(m, dims={"T": 4}) as p:
        assert p.inputs[0].shape == "(4, N, 3)"


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_gradient_through_the_scan(op):
    """vjp of an imported layer with a symbolic sequence (the scan's reverse scan) against
    central differences of the program itself, in f64."""
    m, _ = rnn_model(op, seq="T", direction="bidirectional", h0=True, c0=op == "LSTM",
                     elem=D, outputs=["", "Y_h"] + (["Y_c"] if op == "LSTM" else []))
    with spx.import_model(m, parameters=False) as p, p.vjp(["Y_h"], ["X", "H0"]) as g, \
            p.runtime() as rt, g.runtime() as grt:
        f = {"X": rand(6, 2, 3, dtype=np.float64), "H0": rand(2, 2, 5, dtype=np.float64)}
        if op == "LSTM":
            f["C0"] = rand(2, 2, 5, dtype=np.float64)
        ct = rand(2, 2, 5, dtype=np.float64)
        got = grt(**f, **{"Y_h.cotangent": ct})
        for name, k in (("X", (0, 1, 2)), ("X", (5, 0, 0)), ("X", (3, 1, 1)), ("H0", (1, 0, 4))):
            eps = 1e-6
            hi, lo = dict(f), dict(f)
            hi[name], lo[name] = f[name].copy(), f[name].copy()
            hi[name][k] += eps
            lo[name][k] -= eps
            fd = ((rt(**hi)["Y_h"] - rt(**lo)["Y_h"]) * ct).sum() / (2 * eps)
            assert abs(got[name + ".grad"][k] - fd) <= 1e-6 * max(1.0, abs(fd)), (name, k)


def test_sequence_longer_than_the_unrolled_limit_is_a_scan():
    m, feeds = rnn_model("RNN", seq=1025, hidden=2, inp=1, direction="bidirectional",
                         lens=True)
    for t in m.graph.initializer:
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(0.4), t.name))
    check(m, feeds, batches=(2,))


def test_bad_attributes_are_refused():
    m, _ = rnn_model("LSTM", activations=["Sigmoid", "Gelu", "Tanh"])
    with pytest.raises(spx.UnsupportedOps, match=r"LSTM\(activations=Gelu\)"):
        spx.import_model(m)
    m, _ = rnn_model("GRU", direction="sideways")
    with pytest.raises(spx.UnsupportedOps, match=r"GRU\(direction=sideways\)"):
        spx.import_model(m)
    m, _ = rnn_model("RNN", direction="bidirectional", activations=["Tanh"])
    with pytest.raises(spx.OnnxImportError, match=r"lists 1 functions.*needs 2"):
        spx.import_model(m)
    m, _ = rnn_model("RNN", activations=["ScaledTanh"])
    with pytest.raises(spx.OnnxImportError, match=r"ScaledTanh needs activation_alpha"):
        spx.import_model(m)
    m, _ = rnn_model("LSTM", hidden=5)
    for a in m.graph.node[0].attribute:
        if a.name == "hidden_size":
            a.i = 6
    with pytest.raises(spx.OnnxImportError, match=r"hidden_size=6 but R has hidden size 5"):
        spx.import_model(m)
    m, _ = rnn_model("GRU", direction="bidirectional")
    for a in m.graph.node[0].attribute:
        if a.name == "direction":
            a.s = b"forward"
    with pytest.raises(spx.OnnxImportError, match=r"W has 2 direction\(s\), direction=forward "
                       r"needs 1"):
        spx.import_model(m)


# ---- A model that torch exports -----------------------------------------------------------

def test_torch_exported_lstm_and_gru(tmp_path):
    torch = pytest.importorskip("torch")
    for cls in (torch.nn.LSTM, torch.nn.GRU):
        torch.manual_seed(0)
        net = cls(3, 5, num_layers=2, bidirectional=True, batch_first=True).eval()
        x = torch.randn(2, 6, 3)
        path = str(tmp_path / "rnn.onnx")
        kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters \
            else {}  # the TorchScript exporter: it writes LSTM and GRU nodes
        torch.onnx.export(net, (x,), path, input_names=["x"], dynamic_axes={"x": {0: "batch"}},
                          opset_version=17, **kw)
        with spx.import_model(path) as p, p.runtime() as rt:
            for n in (1, 3):
                xn = torch.randn(n, 6, 3)
                want = net(xn)
                got = list(rt(x=xn.numpy()).values())
                assert models.max_rel_error(got[0], want[0].detach().numpy()) <= 1e-4
