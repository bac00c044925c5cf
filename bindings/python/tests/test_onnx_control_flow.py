"""ONNX If, Loop and Scan against onnxruntime: a condition known while importing (a constant or
decided by the shapes) takes one branch; a run-time condition becomes a cond; loops with a
constant trip count and scans of a constant length are unrolled; other loops become a
while_loop (or a scan, with scan outputs), other scans a scan; what cannot be is refused naming
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


def test_if_with_branches_of_different_ranks_and_a_run_time_condition_is_refused():
    other = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["e"], keepdims=0)], "else",
                              [], [vi("e", F, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], name="pick", then_branch=branch("t", "Relu"),
                              else_branch=other)]
    m = model(nodes, [vi("c", B, []), vi("x", F, [2, 3])], [vi("y", F, None)])
    with pytest.raises(spx.OnnxImportError,
                       match="'pick' \\(If\\).*true branch is f32 \\(2, 3\\).*false branch "
                             "f32 \\(\\).*equal ranks"):
        spx.import_model(m)


def _sizes_model(n_dim):
    """then: x[0:1] along axis 0 (keepdims sum), else: x (Relu) then Tile x2 along axis 1:
    results (1, 3) and (N, 6), sizes set by the branch that runs."""
    then = helper.make_graph([helper.make_node("ReduceSum", ["x", "ax"], ["t"], keepdims=1)],
                             "then", [], [vi("t", F, None)],
                             [numpy_helper.from_array(np.array([0], np.int64), "ax")])
    other = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                               helper.make_node("Tile", ["r", "reps"], ["e"])], "else", [],
                              [vi("e", F, None)],
                              [numpy_helper.from_array(np.array([1, 2], np.int64), "reps")])
    nodes = [helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then,
                              else_branch=other),
             helper.make_node("Shape", ["y"], ["s"]),
             helper.make_node("Neg", ["y"], ["z"])]
    return model(nodes, [vi("c", B, []), vi("x", F, [n_dim, 3])],
                 [vi("z", F, None), vi("s", I64, None)])


@pytest.mark.parametrize("n_dim", ["N", 4])
def test_if_with_branches_of_different_shapes_and_a_run_time_condition(n_dim):
    """ONNX allows branches of different shapes: each differing dim is a data-dependent size
    set by the branch that runs (and Shape reads it); onnxruntime agrees."""
    m = _sizes_model(n_dim)
    rng = np.random.default_rng(3)
    sizes = (1, 4, 7) if n_dim == "N" else (4,)
    feeds = [{"c": np.array(c), "x": rng.standard_normal((n, 3)).astype(np.float32)}
             for n in sizes for c in (True, False)]
    compare(m, feeds)
    with spx.import_model(m) as p:
        dims = [d.strip() for d in p.outputs[0].shape.strip("()").split(",")]
        assert len(dims) == 2 and dims[0] != dims[1]
        for d in dims:
            assert p.variable_is_unbacked(d) and "cond" in p.variable_origin(d)


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


def test_loop_with_a_run_time_trip_count_and_scan_outputs_is_a_scan():
    """M computed at run time (and a run-time initial condition): a scan whose length is a
    data-dependent size."""
    nodes = [helper.make_node("Loop", ["M", "c0", "x"], ["y", "ys"], name="lp",
                              body=_loop_body())]
    m = model(nodes, [vi("x", F, ["N", 2]), vi("M", I64, []), vi("c0", B, [])],
              [vi("y", F, None), vi("ys", F, None)])
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    compare(m, [{"x": x, "M": np.array(k, np.int64), "c0": np.array(True)} for k in (4, 1)])
    # No iteration: onnxruntime makes the scan outputs (0,); here they have their shape.
    with spx.import_model(m) as p, p.runtime() as rt:
        for k, c in ((0, True), (-2, True), (3, False)):
            y, ys = rt(x=x, M=np.array(k, np.int64), c0=np.array(c)).values()
            np.testing.assert_array_equal(y, x)
            assert ys.shape == (0, 3, 2)


def test_loop_with_a_symbolic_trip_count_is_a_scan_of_that_length():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["M"]),
             helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], body=_loop_body())]
    m = model(nodes, [vi("x", F, ["N", 2])], [vi("y", F, None), vi("ys", F, None)],
              inits=[("zero", np.array(0, np.int64))])
    with spx.import_model(m) as p:
        assert p.outputs[1].shape == "(N, N, 2)"
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    compare(m, [{"x": x}, {"x": x[:1]}])


@pytest.mark.parametrize("trip", ["runtime", "absent", "large", "neither"])
def test_loop_with_a_data_dependent_condition_is_a_while_loop(trip):
    """carry = carry * 2 + i while its sum < 100 (and i < M)."""
    if trip == "neither":  # no trip count, no condition input: the body's condition decides
        nodes = [helper.make_node("Loop", ["", "", "x"], ["y"], body=_loop_body(True))]
        inputs, inits = [vi("x", F, [2]), vi("c0", B, [])], []
    elif trip == "absent":
        nodes = [helper.make_node("Loop", ["", "c0", "x"], ["y"], body=_loop_body(True))]
        inputs, inits = [vi("x", F, [2]), vi("c0", B, [])], []
    elif trip == "large":  # over the unroll limit
        nodes = [helper.make_node("Loop", ["M", "c0", "x"], ["y"], body=_loop_body(True))]
        inputs, inits = [vi("x", F, [2]), vi("c0", B, [])], [("M", np.array(5000, np.int64))]
    else:
        nodes = [helper.make_node("Loop", ["M", "c0", "x"], ["y"], body=_loop_body(True))]
        inputs, inits = [vi("x", F, [2]), vi("c0", B, []), vi("M", I64, [])], []
    m = model(nodes, inputs, [vi("y", F, None)], inits=inits)
    feeds = [{"x": np.array([1, 2], np.float32), "c0": np.array(True)},
             {"x": np.array([30, 40], np.float32), "c0": np.array(True)},
             {"x": np.array([1, 2], np.float32), "c0": np.array(False)},
             {"x": np.array([0.1, 0], np.float32), "c0": np.array(True)}]
    if trip == "runtime":
        feeds = [dict(f, M=np.array(k, np.int64)) for f in feeds for k in (0, 2, 10)]
    compare(m, feeds)


def test_loop_without_a_condition_input_follows_the_body_condition():
    """M given, no condition input: the body's condition output still ends the loop, as in
    onnxruntime and onnx's reference implementation (the spec's pseudo-code ignores it)."""
    nodes = [helper.make_node("Loop", ["M", "", "x"], ["y"], body=_loop_body(True))]
    for inputs, inits, feeds in (
            ([vi("x", F, [2])], [("M", np.array(6, np.int64))], [{}]),
            ([vi("x", F, [2]), vi("M", I64, [])], [], [{"M": np.array(6, np.int64)}])):
        m = model(nodes, inputs, [vi("y", F, None)], inits=inits)
        compare(m, [dict(f, x=np.array([10, 20], np.float32)) for f in feeds])


def test_loops_that_cannot_be_imported_are_refused():
    # Scan outputs of a loop that may stop early: a run-time length the scan op cannot stack.
    body = _loop_body(True)
    body.output.append(vi("carry_out", F, None))
    nodes = [helper.make_node("Loop", ["M", "c", "x"], ["y", "ys"], name="lp", body=body)]
    m = model(nodes, [vi("x", F, [2]), vi("M", I64, []), vi("c", B, [])],
              [vi("y", F, None), vi("ys", F, None)])
    with pytest.raises(spx.OnnxImportError, match="'lp' \\(Loop\\).*may stop early"):
        spx.import_model(m)
    nodes = [helper.make_node("Loop", ["", "c", "x"], ["y", "ys"], name="lp", body=body)]
    m = model(nodes, [vi("x", F, [2]), vi("c", B, [])], [vi("y", F, None), vi("ys", F, None)])
    with pytest.raises(spx.OnnxImportError, match="'lp' \\(Loop\\).*no trip count"):
        spx.import_model(m)


def test_if_with_a_run_time_condition_reads_the_enclosing_values():
    """The branches read a graph input, a float initializer (a parameter, read as a closure)
    and an int initializer used as a shape; the enclosing graph uses both initializers too."""
    then = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t0"]),
                              helper.make_node("Reshape", ["t0", "shape"], ["t"])], "then", [],
                             [vi("t", F, None)])
    other = helper.make_graph([helper.make_node("Sub", ["x", "w"], ["e0"]),
                               helper.make_node("Reshape", ["e0", "shape"], ["e"])], "else", [],
                              [vi("e", F, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
             helper.make_node("Add", ["x", "w"], ["z0"]),
             helper.make_node("Reshape", ["z0", "shape"], ["z"])]
    m = model(nodes, [vi("c", B, []), vi("x", F, [2, 3])], [vi("y", F, None), vi("z", F, None)],
              inits=[("w", np.array([1.5, -2, 3], np.float32)),
                     ("shape", np.array([3, 2], np.int64))])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    compare(m, [{"c": np.array(True), "x": x}, {"c": np.array(False), "x": x}])


def test_if_with_a_run_time_condition_inside_a_loop_body():
    """A while_loop whose body holds a cond (nested bodies): carry += 1 if carry is even,
    else carry * 3, M times."""
    then = helper.make_graph([helper.make_node("Add", ["carry", "one"], ["t"])], "then", [],
                             [vi("t", F, None)])
    other = helper.make_graph([helper.make_node("Mul", ["carry", "three"], ["e"])], "else", [],
                              [vi("e", F, None)])
    body = helper.make_graph(
        [helper.make_node("Mod", ["carry", "two"], ["r"], fmod=1),
         helper.make_node("ReduceSum", ["r"], ["rs"], keepdims=0),
         helper.make_node("Equal", ["rs", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["carry_out"], then_branch=then, else_branch=other),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond", B, []), vi("carry", F, None)],
        [vi("cond_out", B, []), vi("carry_out", F, None)],
        [numpy_helper.from_array(np.array(2, np.float32), "two"),
         numpy_helper.from_array(np.array(0, np.float32), "zero")])
    nodes = [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)]
    m = model(nodes, [vi("x", F, [1]), vi("M", I64, [])], [vi("y", F, None)],
              inits=[("one", np.array(1, np.float32)), ("three", np.array(3, np.float32))])
    compare(m, [{"x": np.array([v], np.float32), "M": np.array(k, np.int64)}
                for v in (1, 2, 7) for k in (0, 1, 5)])


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


@pytest.mark.parametrize("attrs", [
    {},
    {"scan_input_directions": [1]},
    {"scan_output_directions": [1]},
    {"scan_input_directions": [1], "scan_output_directions": [1]},
    {"scan_input_axes": [1]},
    {"scan_output_axes": [1]},
    {"scan_input_axes": [-1], "scan_input_directions": [1], "scan_output_axes": [-1]},
])
def test_scan_of_a_symbolic_length_is_a_scan(attrs):
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=_scan_body(),
                              num_scan_inputs=1, **attrs)]
    axis = attrs.get("scan_input_axes", [0])[0]
    m = model(nodes, [vi("s0", F, [3]), vi("x", F, ["T", 3] if axis == 0 else [3, "T"])],
              [vi("s", F, None), vi("ys", F, None)], opset=16)
    rng = np.random.default_rng(2)
    feeds = [{"s0": rng.standard_normal(3).astype(np.float32),
              "x": rng.standard_normal((t, 3) if axis == 0 else (3, t)).astype(np.float32)}
             for t in (5, 1)]
    compare(m, feeds)


def test_scan_with_inputs_of_mixed_directions_and_axes():
    """Two scan inputs, one reversed and on axis 1; two outputs in both directions."""
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["ab"]),
         helper.make_node("Add", ["s", "ab"], ["s_out"]),
         helper.make_node("Mul", ["a", "b"], ["p"])],
        "body", [vi("s", F, None), vi("a", F, None), vi("b", F, None)],
        [vi("s_out", F, None), vi("s_out2", F, None), vi("p", F, None)])
    body.node.append(helper.make_node("Identity", ["s_out"], ["s_out2"]))
    nodes = [helper.make_node("Scan", ["s0", "a", "b"], ["s", "y1", "y2"], body=body,
                              num_scan_inputs=2, scan_input_axes=[0, 1],
                              scan_input_directions=[0, 1], scan_output_directions=[1, 0],
                              scan_output_axes=[0, 1])]
    m = model(nodes, [vi("s0", F, [2]), vi("a", F, ["T", 2]), vi("b", F, [2, "T"])],
              [vi("s", F, None), vi("y1", F, None), vi("y2", F, None)], opset=16)
    rng = np.random.default_rng(3)
    compare(m, [{"s0": rng.standard_normal(2).astype(np.float32),
                 "a": rng.standard_normal((t, 2)).astype(np.float32),
                 "b": rng.standard_normal((2, t)).astype(np.float32)} for t in (4, 1)])
