"""ONNX If, Loop and Scan against onnxruntime: a condition known while importing (a constant or
decided by the shapes) takes one branch; a run-time condition selects between both; loops with a
constant trip count and scans of a constant length are unrolled; the rest is refused naming
the node."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from shapepoly import onnx as spx

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(nodes, "g", inputs, outputs,
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def compare(m, feeds_list, **kw):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        for feeds in feeds_list:
            want = s.run(None, feeds)
            got = list(rt(**feeds).values())
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == w.shape, (g.shape, w.shape)
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def branch(name, node_type, out="y"):
    return helper.make_graph([helper.make_node(node_type, ["x"], [name])], name, [],
                             [vi(name, F, None)])


def test_if_with_a_run_time_condition_selects():
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=branch("t", "Relu"),
                              else_branch=branch("e", "Neg"))]
    m = model(nodes, [vi("c", B, []), vi("x", F, ["N", 3])], [vi("y", F, None)])
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    compare(m, [{"c": np.array(True), "x": x}, {"c": np.array(False), "x": x},
                {"c": np.array(False), "x": x[:1]}])


def test_if_decided_by_the_shapes_takes_one_branch():
    """Shape(x)[0] > 0 is true for every x of a batch >= 1: only then_branch is imported, so
    branches of different shapes are fine."""
    then = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0)], "then",
                             [], [vi("t", F, None)])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                              [vi("e", F, None)])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"]),
             helper.make_node("Greater", ["n", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    m = model(nodes, [vi("x", F, ["N", 3])], [vi("y", F, None)],
              inits=[("zero", np.array(0, np.int64))])
    x = np.ones((5, 3), np.float32)
    compare(m, [{"x": x}, {"x": x[:2]}])


def test_if_with_branches_of_different_shapes_and_a_run_time_condition_is_refused():
    other = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["e"], keepdims=0)], "else",
                              [], [vi("e", F, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], name="pick", then_branch=branch("t", "Relu"),
                              else_branch=other)]
    m = model(nodes, [vi("c", B, []), vi("x", F, [2, 3])], [vi("y", F, None)])
    with pytest.raises(spx.OnnxImportError, match="'pick' \\(If\\).*not provably equal"):
        spx.import_model(m)


def _loop_body(with_cond_from_data=False):
    """carry = carry * 2 + i; scan output: carry; the condition: carry sum < 100 (data) or
    true."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Mul", ["carry", "two"], ["m"]),
             helper.make_node("Add", ["m", "fi"], ["carry_out"]),
             helper.make_node("Identity", ["carry_out"], ["scan_out"])]
    if with_cond_from_data:
        nodes += [helper.make_node("ReduceSum", ["carry_out"], ["s"], keepdims=0),
                  helper.make_node("Less", ["s", "hundred"], ["cond_out"])]
        outs = [vi("cond_out", B, []), vi("carry_out", F, None)]
    else:
        nodes += [helper.make_node("Identity", ["cond"], ["cond_out"])]
        outs = [vi("cond_out", B, []), vi("carry_out", F, None), vi("scan_out", F, None)]
    return helper.make_graph(
        nodes, "body", [vi("i", I64, []), vi("cond", B, []), vi("carry", F, None)], outs,
        [numpy_helper.from_array(np.array(2, np.float32), "two"),
         numpy_helper.from_array(np.array(100, np.float32), "hundred")])


def test_loop_with_a_constant_trip_count_is_unrolled():
    nodes = [helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], body=_loop_body())]
    m = model(nodes, [vi("x", F, ["N", 2])], [vi("y", F, None), vi("ys", F, None)],
              inits=[("M", np.array(5, np.int64))])
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    compare(m, [{"x": x}, {"x": x[:1]}])


def test_loop_with_a_run_time_condition_masks_the_later_iterations():
    nodes = [helper.make_node("Loop", ["M", "c0", "x"], ["y"], body=_loop_body(True))]
    m = model(nodes, [vi("x", F, [2]), vi("c0", B, [])], [vi("y", F, None)],
              inits=[("M", np.array(10, np.int64))])
    feeds = [{"x": np.array([1, 2], np.float32), "c0": np.array(True)},
             {"x": np.array([30, 40], np.float32), "c0": np.array(True)},
             {"x": np.array([1, 2], np.float32), "c0": np.array(False)},
             {"x": np.array([0.1, 0], np.float32), "c0": np.array(True)}]
    compare(m, feeds)


def test_loops_without_a_constant_trip_count_are_refused():
    nodes = [helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], name="lp",
                              body=_loop_body())]
    m = model(nodes, [vi("x", F, [2]), vi("M", I64, [])], [vi("y", F, None), vi("ys", F, None)])
    with pytest.raises(spx.OnnxImportError, match="'lp' \\(Loop\\).*computed at run time"):
        spx.import_model(m)
    m = model([helper.make_node("Loop", ["", "c", "x"], ["y"], name="lp",
                                body=_loop_body(True))],
              [vi("x", F, [2]), vi("c", B, [])], [vi("y", F, None)])
    with pytest.raises(spx.OnnxImportError, match="without a trip count"):
        spx.import_model(m)


def _scan_body():
    """state += x_t; scan outputs: state and x_t * 2."""
    return helper.make_graph(
        [helper.make_node("Add", ["s", "xt"], ["s_out"]),
         helper.make_node("Add", ["xt", "xt"], ["d"])],
        "body", [vi("s", F, None), vi("xt", F, None)],
        [vi("s_out", F, None), vi("d", F, None)])


@pytest.mark.parametrize("attrs", [
    {},
    {"scan_input_directions": [1]},
    {"scan_output_directions": [1]},
    {"scan_input_axes": [1]},
    {"scan_output_axes": [1]},
    {"scan_input_axes": [-1], "scan_input_directions": [1], "scan_output_axes": [-1]},
])
def test_scan_of_a_constant_length_is_unrolled(attrs):
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=_scan_body(),
                              num_scan_inputs=1, **attrs)]
    axis = attrs.get("scan_input_axes", [0])[0]
    shape = [4, "N"] if axis == 0 else ["N", 4]
    m = model(nodes, [vi("s0", F, ["N"]), vi("x", F, shape)],
              [vi("s", F, None), vi("ys", F, None)], opset=16)
    rng = np.random.default_rng(1)
    feeds = [{"s0": rng.standard_normal(n).astype(np.float32),
              "x": rng.standard_normal((4, n) if axis == 0 else (n, 4)).astype(np.float32)}
             for n in (3, 1)]
    compare(m, feeds)


def test_scan_of_a_symbolic_length_is_refused():
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], name="sc", body=_scan_body(),
                              num_scan_inputs=1)]
    m = model(nodes, [vi("s0", F, [3]), vi("x", F, ["T", 3])],
              [vi("s", F, None), vi("ys", F, None)], opset=16)
    with pytest.raises(spx.OnnxImportError, match="'sc' \\(Scan\\).*scan length is T"):
        spx.import_model(m)
