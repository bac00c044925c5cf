"""Program.vmap (shp_program_vmap) from Python: batched programs against the unbatched program
run once per example, per-example gradients of the demo MLP's loss against a numpy backprop,
batch axes at both ends, vmap of vmap, save/load, and the errors users hit."""

import numpy as np
import pytest

import shapepoly as sp

RNG = np.random.default_rng(11)
F32, F64 = sp.DType.F32, sp.DType.F64


def _mlp_loss(dtype=F64):
    """The demo MLP's loss for one example: x[784] -> 32 (relu) -> 10, squared error vs y."""
    s = sp.Scope()
    x = s.input("x", dtype, "784")
    y = s.input("y", dtype, "10")
    w1 = s.input("w1", dtype, "784, 32")
    b1 = s.input("b1", dtype, "32")
    w2 = s.input("w2", dtype, "32, 10")
    h = (x @ w1 + b1).maximum(0.0)
    d = h @ w2 - y
    return s.program([x, y, w1, b1, w2], {"loss": (d * d).sum()})


def _weights(dtype=np.float64):
    return {"w1": (RNG.standard_normal((784, 32)) * 0.05).astype(dtype),
            "b1": (RNG.standard_normal(32) * 0.1).astype(dtype),
            "w2": (RNG.standard_normal((32, 10)) * 0.2).astype(dtype)}


def _np_grads(x, y, w):
    """Per-example gradients of the loss by hand (numpy backprop), batched over axis 0."""
    z = x @ w["w1"] + w["b1"]
    h = np.maximum(z, 0)
    d = h @ w["w2"] - y
    g_out = 2 * d                                       # [B, 10]
    g_w2 = h[:, :, None] * g_out[:, None, :]            # [B, 32, 10]
    g_h = g_out @ w["w2"].T
    g_z = g_h * (z > 0)
    g_w1 = x[:, :, None] * g_z[:, None, :]              # [B, 784, 32]
    return {"w1.grad": g_w1, "b1.grad": g_z, "w2.grad": g_w2, "loss": (d * d).sum(1)}


@pytest.mark.parametrize("batch", [0, 1, 7, 64])
def test_per_example_gradients_match_numpy_backprop(batch):
    loss = _mlp_loss()
    g = loss.grad("loss", ["w1", "b1", "w2"])
    vg = g.vmap({"x": 0, "y": 0})
    assert vg.variables == ["vmap0"]
    w = _weights()
    x = RNG.standard_normal((batch, 784))
    y = RNG.standard_normal((batch, 10))
    got = vg.runtime()(x=x, y=y, **w)
    want = _np_grads(x, y, w)
    for k, v in want.items():
        assert got[k].shape == v.shape, k
        np.testing.assert_allclose(got[k], v, rtol=1e-10, atol=1e-12, err_msg=k)


def test_batched_matches_per_example_runs_with_axes_at_both_ends():
    s = sp.Scope()
    x = s.input("x", F32, "n, 3")
    w = s.input("w", F32, "3, 4")
    i = s.input("i", sp.DType.I32, "2")
    h = (x @ w).tanh().softmax(axis=1)
    out = {"h": h, "g": h.take(i, axis=1).sum(axes=0), "w2": w * 2.0}
    p = s.program([x, w, i], out)
    vp = p.vmap({"x": 2, "i": 0}, out_axes={"h": 1, "g": 1, "w2": None})
    rt, rt1 = vp.runtime(), p.runtime()
    for batch in (0, 1, 7):
        xs = RNG.standard_normal((5, 3, batch)).astype(np.float32)
        ws = RNG.standard_normal((3, 4)).astype(np.float32)
        idx = RNG.integers(0, 4, (batch, 2)).astype(np.int32)
        got = rt(x=xs, w=ws, i=idx)
        assert got["h"].shape == (5, batch, 4)
        assert got["g"].shape == (2, batch)
        np.testing.assert_array_equal(got["w2"], ws * 2)
        for e in range(batch):
            one = rt1(x=xs[:, :, e], w=ws, i=idx[e])
            np.testing.assert_allclose(got["h"][:, e], one["h"], rtol=1e-6)
            np.testing.assert_allclose(got["g"][:, e], one["g"], rtol=1e-6)


def test_vmap_of_vmap_and_save_load(tmp_path):
    loss = _mlp_loss()
    v2 = loss.vmap({"x": 0, "y": 0}).vmap({"x": 1, "y": 1}, out_axes=1)
    assert v2.variables == ["vmap0", "vmap1"]
    assert v2.inputs[0].shape == "(vmap0, vmap1, 784)"
    path = tmp_path / "v2.shpoly"
    v2.save(str(path))
    loaded = sp.load(str(path))
    w = _weights()
    x = RNG.standard_normal((2, 3, 784))
    y = RNG.standard_normal((2, 3, 10))
    got = loaded.runtime()(x=x, y=y, **w)["loss"]
    rt = loss.runtime()
    for a in range(2):
        for b in range(3):
            assert got[a, b] == pytest.approx(rt(x=x[a, b], y=y[a, b], **w)["loss"], rel=1e-12)


def test_int_in_axes_batches_data_inputs_and_names_are_kept():
    s = sp.Scope()
    x = s.input("x", F64, "n")
    p = s.program([x], {"y": x.exp().sum()})
    v = p.vmap(0, batch_dim_name="examples")
    assert [i.name for i in v.inputs] == ["x"]
    assert v.inputs[0].shape == "(examples, n)"
    assert v.outputs[0].shape == "(examples,)"
    got = v.runtime()(x=np.ones((4, 3)))["y"]
    np.testing.assert_allclose(got, np.full(4, 3 * np.e))


def test_errors_name_the_argument_and_leave_the_program_usable():
    loss = _mlp_loss()
    with pytest.raises(sp.InvalidArgument, match="2 in_axes for a program with 5 inputs"):
        loss.vmap([0, 0])
    with pytest.raises(sp.InvalidArgument, match="input 'x'"):
        loss.vmap({"x": 3})
    with pytest.raises(sp.InvalidArgument, match="no input is batched"):
        loss.vmap({})
    with pytest.raises(sp.NotFound, match="names no input 'z'"):
        loss.vmap({"z": 0})
    with pytest.raises(sp.InvalidArgument, match="depends on a batched input"):
        loss.vmap({"x": 0}, out_axes={"loss": None})
    with pytest.raises(sp.InvalidArgument, match="already a dimension variable"):
        loss.vmap({"x": 0}).vmap({"x": 0}, batch_dim_name="vmap0")
    with pytest.raises(sp.InvalidArgument, match="batch_dim_name"):
        loss.vmap({"x": 0}, batch_dim_name="")
    s = sp.Scope()
    x = s.input("x", F64, "n")
    nz = s.program([x], {"i": x.nonzero()})
    with pytest.raises(sp.Unsupported, match="nonzero"):
        nz.vmap(0)
    assert loss.vmap({"x": 0}).variables == ["vmap0"]


def test_vmapped_programs_cross_the_onnx_bridge_both_ways(tmp_path):
    """A vmapped program exports to ONNX (onnxruntime runs it at any batch, the batch a
    symbolic dim), and an imported ONNX model (one example) is vmapped like a traced one."""
    ort = pytest.importorskip("onnxruntime")
    from shapepoly import onnx as spx
    loss = _mlp_loss(F32)
    v = loss.grad("loss", ["w1"]).vmap({"x": 0, "y": 0})
    model = spx.export_program(v, tmp_path / "v.onnx")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    w = _weights(np.float32)
    rt = v.runtime()
    for batch in (1, 7):
        x = RNG.standard_normal((batch, 784)).astype(np.float32)
        y = RNG.standard_normal((batch, 10)).astype(np.float32)
        feeds = {i.name: a for i, a in zip(sess.get_inputs(), [x, y, w["w1"], w["b1"], w["w2"]])
                 if i.name in ("x", "y", "w1", "b1", "w2")}
        got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        ours = rt(x=x, y=y, **w)
        for k in ("loss", "w1.grad"):
            match = [n for n in got if n.replace("_", ".") == k or n == k]
            assert match, (k, list(got))
            np.testing.assert_allclose(got[match[0]], ours[k], rtol=1e-4, atol=1e-5, err_msg=k)
    # Import: the one-example program, from ONNX, batched.
    one = spx.import_model(spx.export_program(loss, tmp_path / "one.onnx"))
    vb = one.vmap({"x": 0, "y": 0})
    x = RNG.standard_normal((5, 784)).astype(np.float32)
    y = RNG.standard_normal((5, 10)).astype(np.float32)
    got = vb.runtime()(x=x, y=y, **w)["loss"]
    r1 = loss.runtime()
    want = np.array([r1(x=x[e], y=y[e], **w)["loss"] for e in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-5)
