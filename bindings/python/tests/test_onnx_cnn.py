"""ONNX import of the CNN ops (issue 16): Conv, ConvTranspose (output_shape), MaxPool,
AveragePool (opset differences), global pools, BatchNormalization (folded into a conv, or
not), LRN, Erf (GELU), DepthToSpace/SpaceToDepth, Pad modes, LpNormalization and the
activations, each imported once with symbolic sizes and compared with onnxruntime at several
shapes; the sizes ONNX requires equal become run-time assertions naming the node."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapepoly as sp
from shapepoly import onnx as spx
from shapepoly.onnx import models

F = TensorProto.FLOAT
RNG = np.random.default_rng(161)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def model(nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(o, F, None) for o in outputs],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, shapes, rtol=1e-4, **kw):
    """Imports `m` once (kw to import_model) and compares it with onnxruntime on an input
    `x` of each shape; returns the program's input and output infos."""
    sess = models.ort_session(m, threads=1)
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        for s in shapes:
            x = rand(*s)
            want = sess.run(None, {"x": x})
            got = list(rt(x=x).values())
            for g, w in zip(got, want):
                assert g.shape == w.shape, (s, g.shape, w.shape)
                assert models.max_rel_error(g, w) <= rtol, (s, models.max_rel_error(g, w))
        assert rt.plans_built == len(shapes)
        return p.inputs, p.outputs


def test_conv_pads_strides_groups_and_auto_pad():
    w, b = rand(6, 2, 3, 3), rand(6)
    for attrs in ({"pads": [1, 0, 2, 1], "strides": [2, 1]}, {"group": 2, "dilations": [1, 2]},
                  {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
                  {"auto_pad": "SAME_LOWER", "strides": [2, 3], "group": 2},
                  {"auto_pad": "VALID", "strides": [3, 1]}):
        group = attrs.get("group", 1)
        ww = w if group == 2 else rand(6, 4, 3, 3)
        m = model([helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3],
                                    **attrs)], [("x", F, ["N", 4, "H", "W"])], ["y"],
                  [("w", ww), ("b", b)])
        ins, outs = check(m, [(1, 4, 9, 8), (2, 4, 12, 5)])
        assert ins[0].shape == "(N, 4, H, W)" and outs[0].shape.startswith("(N, 6, ")


def test_conv_1d_3d_depthwise_without_bias():
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], group=3)],
              [("x", F, ["N", 3, "L"])], ["y"], [("w", rand(6, 1, 4))])
    check(m, [(2, 3, 9), (1, 3, 4)])
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 0, 1, 0, 1, 1])],
              [("x", F, [1, 2, "D", "H", "W"])], ["y"], [("w", rand(3, 2, 2, 3, 2))])
    check(m, [(1, 2, 4, 5, 6), (1, 2, 3, 3, 3)])


def test_conv_transpose_and_output_shape():
    w = rand(4, 3, 3, 3)
    m = model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2],
                                pads=[1, 0, 0, 1], output_padding=[1, 0])],
              [("x", F, ["N", 4, "H", "W"])], ["y"], [("w", w)])
    check(m, [(1, 4, 5, 6), (2, 4, 3, 3)])
    # output_shape: the pads follow from it (fixed input sizes).
    for auto_pad in ("NOTSET", "SAME_UPPER"):
        m = model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2],
                                    output_shape=[10, 9], auto_pad=auto_pad)],
                  [("x", F, ["N", 4, 5, 5])], ["y"], [("w", w)])
        check(m, [(1, 4, 5, 5), (3, 4, 5, 5)])
    m = model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                                strides=[2, 2], output_shape=[10, 9])],
              [("x", F, ["N", 4, "H", 5])], ["y"], [("w", w)])
    with pytest.raises(spx.OnnxImportError, match="'up'.*output_shape.*symbolic"):
        spx.import_model(m)


@pytest.mark.parametrize("opset", [9, 10, 18, 19])
def test_pooling_by_opset(opset):
    nodes = [helper.make_node("MaxPool", ["x"], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 0, 1]),
             helper.make_node("AveragePool", ["x"], ["ap"], kernel_shape=[3, 2],
                              strides=[2, 1], pads=[1, 0, 1, 1], count_include_pad=1),
             helper.make_node("AveragePool", ["x"], ["ap0"], kernel_shape=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("GlobalMaxPool", ["x"], ["gmp"]),
             helper.make_node("GlobalAveragePool", ["x"], ["gap"])]
    if opset >= 10:
        nodes += [helper.make_node("MaxPool", ["x"], ["mpc"], kernel_shape=[3, 3],
                                   strides=[2, 2], ceil_mode=1, dilations=[1, 2]),
                  helper.make_node("AveragePool", ["x"], ["apc"], kernel_shape=[2, 3],
                                   strides=[2, 2], ceil_mode=1)]
    if opset >= 19:
        nodes.append(helper.make_node("AveragePool", ["x"], ["apd"], kernel_shape=[2, 2],
                                      dilations=[2, 1]))
    m = model(nodes, [("x", F, ["N", "C", "H", "W"])], [n.output[0] for n in nodes],
              opset=opset)
    check(m, [(1, 2, 7, 8), (2, 3, 10, 9)])


def conv_bn(opset=18):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["y"],
                              epsilon=1e-3),
             helper.make_node("Relu", ["y"], ["r"])]
    return model(nodes, [("x", F, ["N", 3, "H", "W"])], ["r"],
                 [("w", rand(4, 3, 3, 3)), ("b", rand(4)), ("s", rand(4)), ("bb", rand(4)),
                  ("m", rand(4)), ("v", np.abs(rand(4)) + 0.5)], opset)


def test_batch_norm_folded_into_the_conv():
    m = conv_bn()
    ins, _ = check(m, [(1, 3, 6, 5), (2, 3, 4, 4)])
    assert [i.name for i in ins if i.has_default] == ["w_folded", "b_folded"]
    ins, _ = check(m, [(1, 3, 6, 5)], fold_batch_norm=False)
    assert [i.name for i in ins if i.has_default] == ["w", "b", "s", "bb", "m", "v"]
    # Not folded when the conv's output has another use, or the scale is computed.
    m.graph.output.append(helper.make_tensor_value_info("c", F, None))
    ins, _ = check(m, [(1, 3, 6, 5)])
    assert "w" in [i.name for i in ins]


def test_batch_norm_alone_and_opset_9():
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["y"])]
    inits = [("s", rand(3)), ("bb", rand(3)), ("m", rand(3)), ("v", np.abs(rand(3)) + 0.1)]
    for opset in (9, 15):
        m = model(nodes, [("x", F, ["N", 3, "L"])], ["y"], inits, opset)
        check(m, [(2, 3, 5), (1, 3, 1)])


def test_lrn_erf_gelu_and_activations():
    nodes = [helper.make_node("LRN", ["x"], ["lrn"], size=3, alpha=1e-2, beta=0.7, bias=1.5),
             helper.make_node("Div", ["x", "sqrt2"], ["xs"]),
             helper.make_node("Erf", ["xs"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["x", "e1"], ["xe"]),
             helper.make_node("Mul", ["xe", "half"], ["gelu"]),
             helper.make_node("LeakyRelu", ["x"], ["lr"], alpha=0.2),
             helper.make_node("PRelu", ["x", "slope"], ["pr"]),
             helper.make_node("Elu", ["x"], ["elu"], alpha=0.5),
             helper.make_node("Selu", ["x"], ["selu"]),
             helper.make_node("Softplus", ["x"], ["sp"]),
             helper.make_node("Softsign", ["x"], ["ss"]),
             helper.make_node("HardSigmoid", ["x"], ["hs"], alpha=0.3),
             helper.make_node("Clip", ["x", "lo", "hi"], ["cl"]),
             helper.make_node("Clip", ["x", "", "hi"], ["clh"]),
             helper.make_node("LogSoftmax", ["x"], ["ls"], axis=1),
             helper.make_node("LpNormalization", ["x"], ["l2"], axis=1),
             helper.make_node("LpNormalization", ["x"], ["l1"], axis=-1, p=1)]
    m = model(nodes, [("x", F, ["N", 4, "H", "W"])], [n.output[0] for n in nodes
                                                      if n.output[0] not in ("xs", "e", "e1",
                                                                             "xe")],
              [("sqrt2", np.float32(np.sqrt(2))), ("one", np.float32(1)),
               ("half", np.float32(0.5)), ("slope", rand(4, 1, 1)),
               ("lo", np.float32(-0.3)), ("hi", np.float32(0.6))])
    check(m, [(1, 4, 3, 5), (2, 4, 2, 2)])


def test_depth_space_and_pad_modes():
    nodes = [helper.make_node("DepthToSpace", ["x"], ["d2s"], blocksize=2),
             helper.make_node("DepthToSpace", ["x"], ["crd"], blocksize=2, mode="CRD"),
             helper.make_node("SpaceToDepth", ["d2s"], ["back"], blocksize=2),
             helper.make_node("Pad", ["x", "pads"], ["refl"], mode="reflect"),
             helper.make_node("Pad", ["x", "pads"], ["edge"], mode="edge"),
             helper.make_node("Pad", ["x", "negpads"], ["crop"], mode="edge")]
    m = model(nodes, [("x", F, ["N", 8, "H", "W"])], [n.output[0] for n in nodes],
              [("pads", np.array([0, 0, 2, 1, 0, 0, 1, 2], np.int64)),
               ("negpads", np.array([0, 0, -1, 1, 0, 0, 1, -1], np.int64))])
    check(m, [(1, 8, 4, 5), (2, 8, 3, 3)])
    m = model([helper.make_node("Pad", ["x"], ["y"], mode="reflect", pads=[0, 1, 0, 2])],
              [("x", F, ["N", "L"])], ["y"], opset=10)
    check(m, [(2, 5), (1, 3)])


def test_sizes_onnx_requires_equal_become_assertions():
    """A pooling branch and a strided conv branch agree on even sizes only (as in Inception
    v2): the import asserts it, the run checks it and names the node."""
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[0, 0, 1, 1]),
             helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["p", "c"], ["y"], axis=1, name="mix")]
    m = model(nodes, [("x", F, ["N", 2, "H", "W"])], ["y"], [("w", rand(3, 2, 3, 3))])
    check(m, [(1, 2, 8, 6), (2, 2, 4, 10)])
    with spx.import_model(m) as p, p.runtime() as rt:
        assert any("mix" in a.message for a in p.assertions), p.assertions
        with pytest.raises(sp.ConstraintViolation, match="'mix' \\(Concat\\)"):
            rt(x=rand(1, 2, 7, 6))


def test_light_model_helpers():
    """randomize_weights replaces every constant fill; dynamic_head keeps the function."""
    m = onnx.load(models.light_model_path("squeezenet"))
    r = models.randomize_weights(m, seed=1)
    assert not [n for n in r.graph.node if n.op_type == "ConstantOfShape"]
    again = models.randomize_weights(m, seed=1)
    a = {i.name: numpy_helper.to_array(i) for i in r.graph.initializer}
    b = {i.name: numpy_helper.to_array(i) for i in again.graph.initializer}
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    w = a["conv1_w_0"]
    assert w.shape == (64, 3, 3, 3) and 0.5 < w.std() * np.sqrt(27 / 2) < 1.5  # He
    head = models.dynamic_head(onnx.load(models.light_model_path("resnet50")))
    assert "GlobalAveragePool" in [n.op_type for n in head.graph.node]
    assert "AveragePool" not in [n.op_type for n in head.graph.node]
    with pytest.raises(ValueError, match="no light model"):
        models.light_model_path("lenet")


def test_space_to_depth_of_a_symbolic_size_asserts_divisibility():
    m = model([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, name="s2d")],
              [("x", F, ["N", 3, "H", "W"])], ["y"])
    check(m, [(1, 3, 4, 6), (2, 3, 2, 2)])
    with spx.import_model(m) as p, p.runtime() as rt:
        with pytest.raises(sp.ConstraintViolation, match="'s2d' \\(SpaceToDepth\\)"):
            rt(x=rand(1, 3, 5, 4))


def test_export_of_cnn_ops_runs_alike_in_onnxruntime():
    """Programs with conv (f32, f64, transposed, SAME pads), pooling (max, average, min and
    sum windows, dilated, ceil mode) and erf: exported, run by onnxruntime at two shapes."""
    with sp.Scope() as s:
        x = s.input("x", sp.F32, "n, 4, h, w")
        xd = s.input("xd", sp.F64, "n, 2, h, w")
        w = s.constant(rand(6, 2, 3, 3))
        outs = {
            "conv": x.conv(w, s.constant(rand(6)), strides=[2, 1], groups=2,
                           auto_pad="SAME_UPPER"),
            "conv64": xd.conv(s.constant(rand(3, 2, 2, 3).astype(np.float64)),
                              pads=[1, 0, 0, 2], dilations=[1, 2]),
            "convt": x.conv_transpose(s.constant(rand(4, 3, 3, 2)), strides=[2, 2],
                                      pads=[1, 0, 0, 1], output_padding=[1, 0]),
            "maxp": x.max_pool([3, 3], strides=[2, 2], pads=[1, 1, 1, 0], ceil_mode=True),
            "avgp": x.avg_pool([2, 3], strides=[1, 2], pads=[1, 1, 0, 1],
                               count_include_pad=True),
            "maxd": x.max_pool([2, 2], dilations=[2, 1]),
            "minw": x.reduce_window("min", [1, 1, 2, 2], strides=[1, 1, 2, 1]),
            "sumw": x.reduce_window("sum", [1, 1, 3, 1], pad_low=[0, 0, 1, 0],
                                    pad_high=[0, 0, 1, 0]),
            "erf": x.erf(),
        }
        program = s.program([x, xd], outs)
    with program, program.runtime() as rt:
        sess = models.ort_session(spx.export_model(program))
        for shape in ((1, 4, 7, 8), (2, 4, 10, 5)):
            feeds = {"x": rand(*shape), "xd": rand(shape[0], 2, *shape[2:]).astype(np.float64)}
            got = rt(**feeds)
            want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
            for name, g in got.items():
                assert g.shape == want[name].shape, (name, shape)
                assert models.max_rel_error(g, want[name]) < 1e-5, (name, shape)


def test_command_line_batch_norm_folding(tmp_path, capsys):
    from shapepoly.onnx.__main__ import main
    path = tmp_path / "convbn.onnx"
    onnx.save(conv_bn(), str(path))
    for flags, params in (([], ["w_folded", "b_folded"]),
                          (["--no-fold-batch-norm"], ["w", "b", "s", "bb", "m", "v"])):
        out = tmp_path / "p.shpoly"
        assert main(["import", str(path), "-o", str(out), "--dynamic", "batch"] + flags) == 0
        with sp.load(str(out)) as p:
            assert [i.name for i in p.inputs if i.has_default] == params
            assert p.inputs[0].shape == "(N, 3, H, W)"
    assert "p.shpoly" in capsys.readouterr().out
