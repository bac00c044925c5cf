"""ONNX shape-like inputs computed at run time (Reshape's shape, Expand, Tile, Range,
ConstantOfShape, Slice, Pad, Split given as graph inputs) imported as data-dependent sizes:
each model is imported once and run at several shape values against onnxruntime, and hostile
values (negative sizes, inconsistent shapes, huge ranges) fail cleanly with a shapepoly error
that leaves the runtime usable."""

from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import pytest
from onnx import TensorProto, helper

import shapepoly as sp
from shapepoly import onnx as spx

ort = pytest.importorskip("onnxruntime")

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
MAX, MIN = (1 << 63) - 1, -(1 << 63)


def model(nodes: List[Any], inputs: Sequence[Tuple[str, int, Any]], out_type: int = F,
          opset: int = 18, inits: Sequence[Tuple[str, np.ndarray]] = ()) -> Any:
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("y", out_type, None)],
        [helper.make_tensor(n, I64, a.shape, a.reshape(-1).tolist()) for n, a in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


class Both:
    """One model imported once, run by shapepoly and by onnxruntime."""

    def __init__(self, m: Any) -> None:
        self.program = spx.import_model(m)
        self.rt = self.program.runtime()
        self.sess = ort.InferenceSession(m.SerializeToString(),
                                         providers=["CPUExecutionProvider"])

    def close(self) -> None:
        self.rt.close()
        self.program.close()

    def check(self, **inputs: Any) -> np.ndarray:
        feeds = {k: np.asarray(v) for k, v in inputs.items()}
        got = self.rt(**feeds)["y"]
        want = self.sess.run(None, feeds)[0]
        assert got.shape == want.shape, (inputs, got.shape, want.shape)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
        return got

    def refuses(self, **inputs: Any) -> sp.Error:
        with pytest.raises(sp.Error) as e:
            self.rt(**{k: np.asarray(v) for k, v in inputs.items()})
        return e.value


@pytest.fixture
def both():
    made: List[Both] = []

    def make(m: Any) -> Both:
        made.append(Both(m))
        return made[-1]
    yield make
    for b in made:
        b.close()


def i64(*xs: int) -> np.ndarray:
    return np.array(xs, np.int64)


X234 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_reshape_shape_input(both):
    b = both(model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                   [("x", F, [2, 3, 4]), ("s", I64, [3])]))
    assert all(b.program.variable_is_unbacked(v) for v in b.program.unbacked)
    for s in ([4, 3, 2], [0, -1, 2], [2, 0, -1], [-1, 1, 1], [24, 1, 1], [2, 0, 0]):
        b.check(x=X234, s=i64(*s))
    # inconsistent element counts, negative sizes, two -1s
    for s in ([5, 5, 1], [1, 0, 0], [3, -1, 5], [-2, -12, 1], [-1, -1, 24], [-1, 0, -1]):
        b.refuses(x=X234, s=i64(*s))
    e = b.refuses(x=X234, s=i64(5, 5, 1))
    assert isinstance(e, sp.ConstraintViolation) and "Reshape" in e.message
    # sizes whose product wraps to 24 in int64: refused, not a view of 24 elements
    b.refuses(x=X234, s=i64((1 << 62) + 6, 4, 1))
    b.refuses(x=X234, s=i64(1 << 32, 1 << 32, -1))
    b.check(x=X234, s=i64(6, 2, 2))  # still usable


def test_reshape_zero_sizes_and_allowzero(both):
    b = both(model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                   [("x", F, [0, 3, 4]), ("s", I64, [2])]))
    x = np.zeros((0, 3, 4), np.float32)
    for s in ([0, 12], [0, 5], [7, -1]):
        assert b.check(x=x, s=i64(*s)).size == 0
    # 0 copies the input's 3: 9 elements, not 0; -1 beside a 0 is ambiguous
    for s in ([3, 0], [12, 0], [-3, 0], [0, -1]):
        b.refuses(x=x, s=i64(*s))
    z = both(model([helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)],
                   [("x", F, [0, 3, 4]), ("s", I64, [3])]))
    for s in ([3, 4, 0], [0, 3, 4], [4, 0, 3]):
        z.check(x=x, s=i64(*s))
    z.refuses(x=x, s=i64(3, 4, 1))  # 12 elements, not 0
    # a 4-dim shape input of a symbolic input
    n = both(model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                   [("x", F, ["N", 6]), ("s", I64, [4])]))
    for rows in (1, 2, 5):
        x = np.arange(rows * 6, dtype=np.float32).reshape(rows, 6)
        n.check(x=x, s=i64(-1, 2, 3, 1))
        n.check(x=x, s=i64(rows, 0, 1, 1))
    n.refuses(x=np.zeros((2, 6), np.float32), s=i64(-1, 5, 1, 1))


def test_expand_shape_input(both):
    b = both(model([helper.make_node("Expand", ["x", "s"], ["y"])],
                   [("x", F, [3, 1]), ("s", I64, [3])]))
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    for s in ([2, 1, 6], [1, 3, 4], [1, 1, 1], [2, 3, 0], [0, 3, 1]):
        b.check(x=x, s=i64(*s))
    for s in ([1, 2, 4], [1, 4, 1], [1, 0, 1], [1, 3, -1]):
        b.refuses(x=x, s=i64(*s))
    b.check(x=x, s=i64(5, 3, 2))
    # a symbolic axis that may be 1 (broadcast) or not (kept)
    n = both(model([helper.make_node("Expand", ["x", "s"], ["y"])],
                   [("x", F, ["N", 1]), ("s", I64, [2])]))
    for rows, s in ((1, [4, 5]), (1, [1, 2]), (3, [1, 2]), (3, [3, 0]), (1, [0, 2])):
        n.check(x=np.arange(rows, dtype=np.float32).reshape(rows, 1), s=i64(*s))
    n.refuses(x=np.ones((3, 1), np.float32), s=i64(4, 2))
    n.check(x=np.ones((2, 1), np.float32), s=i64(2, 2))


def test_tile_repeats_input(both):
    b = both(model([helper.make_node("Tile", ["x", "r"], ["y"])],
                   [("x", F, [2, 3]), ("r", I64, [2])]))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for r in ([1, 1], [2, 3], [0, 4], [3, 0]):
        b.check(x=x, r=i64(*r))
    b.refuses(x=x, r=i64(-1, 2))
    b.refuses(x=x, r=i64(1 << 62, 1 << 62))
    b.check(x=x, r=i64(2, 1))


@pytest.mark.parametrize("etype,dtype", [(I64, np.int64), (I32, np.int32)])
def test_range_integer(both, etype, dtype):
    b = both(model([helper.make_node("Range", ["a", "l", "d"], ["y"])],
                   [("a", etype, []), ("l", etype, []), ("d", etype, [])], etype))
    for a, lim, d in ((0, 10, 3), (0, 9, 3), (10, 0, -3), (10, 1, -3), (5, 5, 1), (0, 10, -1),
                      (-7, 7, 2), (3, -4, -7), (0, 1, 100)):
        b.check(a=dtype(a), l=dtype(lim), d=dtype(d))
    b.refuses(a=dtype(0), l=dtype(5), d=dtype(0))
    if dtype is np.int64:
        e = b.refuses(a=dtype(0), l=dtype(1 << 62), d=dtype(1))  # too many to allocate
        assert isinstance(e, (sp.Overflow, sp.OutOfMemory))
        b.refuses(a=dtype(MIN), l=dtype(MAX), d=dtype(1))  # limit - start overflows
        b.refuses(a=dtype(MIN), l=dtype(MAX), d=dtype(-1))
    b.check(a=dtype(1), l=dtype(4), d=dtype(1))


@pytest.mark.parametrize("etype,dtype", [(F, np.float32), (TensorProto.DOUBLE, np.float64)])
def test_range_float(both, etype, dtype):
    b = both(model([helper.make_node("Range", ["a", "l", "d"], ["y"])],
                   [("a", etype, []), ("l", etype, []), ("d", etype, [])], etype))
    for a, lim, d in ((0.5, 3.1, 0.7), (1.0, -2.0, -0.5), (1.0, 1.0, 0.1), (0.0, 1.0, -1.0),
                      (0.0, 1.0, 1.0), (-1.5, 1.5, 0.25)):
        b.check(a=dtype(a), l=dtype(lim), d=dtype(d))
    b.refuses(a=dtype(0), l=dtype(1), d=dtype(0))
    b.refuses(a=dtype(0), l=dtype(1e30), d=dtype(1))
    b.refuses(a=dtype(0), l=dtype(np.inf), d=dtype(1))
    b.check(a=dtype(2), l=dtype(3), d=dtype(0.5))


def test_constant_of_shape_input(both):
    value = helper.make_tensor("value", I32, [1], [7])
    b = both(model([helper.make_node("ConstantOfShape", ["s"], ["y"], value=value)],
                   [("s", I64, [2])], I32))
    for s in ([2, 3], [0, 3], [4, 0], [1, 1]):
        b.check(s=i64(*s))
    b.refuses(s=i64(-1, 3))
    b.refuses(s=i64(1 << 62, 1 << 62))
    b.check(s=i64(3, 2))
    scalar = both(model([helper.make_node("ConstantOfShape", ["s"], ["y"])],
                        [("s", I64, [0])]))
    assert scalar.check(s=np.zeros(0, np.int64)).shape == ()


X = np.arange(20 * 10 * 5, dtype=np.float32).reshape(20, 10, 5)


def test_slice_all_inputs_at_run_time(both):
    b = both(model([helper.make_node("Slice", ["x", "s", "e", "a", "k"], ["y"])],
                   [("x", F, [20, 10, 5]), ("s", I64, [2]), ("e", I64, [2]),
                    ("a", I64, [2]), ("k", I64, [2])]))
    for s, e, a, k in (([0, 0], [3, 10], [0, 1], [1, 1]),
                       ([20, 10], [0, 0], [0, 1], [-1, -3]),
                       ([-1, 1], [MIN, 1000], [0, -2], [-4, 2]),
                       ([1000, -100], [MAX, MAX], [2, 1], [1, 3]),
                       ([5, 2], [5, 9], [1, 0], [1, MAX]),
                       ([3, 2], [1, 9], [-1, 0], [MIN, MIN]),
                       ([0, 0], [-1, -1], [2, 0], [1, 1])):
        b.check(x=X, s=i64(*s), e=i64(*e), a=i64(*a), k=i64(*k))
    good = dict(s=i64(0, 0), e=i64(3, 3))
    b.refuses(x=X, a=i64(0, 1), k=i64(1, 0), **good)  # a step 0
    b.refuses(x=X, a=i64(1, 1), k=i64(1, 1), **good)  # a repeated axis
    b.check(x=X, a=i64(1, -1), k=i64(1, 1), **good)  # -1 is axis 2
    b.refuses(x=X, a=i64(2, -1), k=i64(1, 1), **good)  # so is -1
    b.refuses(x=X, a=i64(0, 3), k=i64(1, 1), **good)  # out of range
    b.refuses(x=X, a=i64(-4, 0), k=i64(1, 1), **good)
    b.check(x=X, a=i64(2, 0), k=i64(1, 1), **good)


def test_slice_constant_axes_and_symbolic_axis(both):
    axes = ("axes", i64(0, -1))
    b = both(model([helper.make_node("Slice", ["x", "s", "e", "axes"], ["y"])],
                   [("x", F, ["N", 4]), ("s", I64, [2]), ("e", I64, [2])], inits=[axes]))
    for rows in (1, 3, 6):
        x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        for s, e in (([0, 1], [2, 3]), ([-2, 0], [MAX, -1]), ([5, 4], [6, 9]),
                     ([1, 3], [0, 1])):
            b.check(x=x, s=i64(*s), e=i64(*e))
    # only the sliced axes become data-dependent
    one = both(model([helper.make_node("Slice", ["x", "s", "e", "axes"], ["y"])],
                     [("x", F, ["N", 4]), ("s", I64, [1]), ("e", I64, [1])],
                     inits=[("axes", i64(0))]))
    assert one.rt.dry_run({"x": (5, 4), "s": (1,), "e": (1,)})["y"] == (-1, 4)
    one.check(x=np.ones((5, 4), np.float32), s=i64(-2), e=i64(MAX))
    d = both(model([helper.make_node("Slice", ["x", "s", "e"], ["y"])],
                   [("x", F, [0, 3]), ("s", I64, [2]), ("e", I64, [2])]))
    d.check(x=np.zeros((0, 3), np.float32), s=i64(0, 1), e=i64(5, 2))


def test_pad_pads_value_and_axes_at_run_time(both):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    c = both(model([helper.make_node("Pad", ["x", "p", "v"], ["y"])],
                   [("x", F, [3, 4]), ("p", I64, [4]), ("v", F, [])]))
    for p in ([0, 0, 0, 0], [1, 2, 0, 3], [-1, 0, 2, -3], [0, -4, 0, 1], [-3, 0, 2, 0]):
        c.check(x=x, p=i64(*p), v=np.float32(2.5))
    c.refuses(x=x, p=i64(-2, 0, -2, 0), v=np.float32(0))  # crops more than the axis
    c.refuses(x=x, p=i64(MIN, 0, 0, 0), v=np.float32(0))
    c.refuses(x=x, p=i64(0, 1 << 62, 0, 1 << 62), v=np.float32(0))
    c.check(x=x, p=i64(1, 1, 1, 1), v=np.float32(-1))
    for mode in ("edge", "reflect"):
        m = both(model([helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)],
                       [("x", F, [3, 4]), ("p", I64, [4])]))
        for p in ([0, 0, 0, 0], [1, 2, 2, 3], [-1, 1, 0, -2]):
            m.check(x=x, p=i64(*p))
        if mode == "reflect":
            m.refuses(x=x, p=i64(0, 4, 0, 0))  # a reflection needs pads < the axis
        m.check(x=x, p=i64(2, 0, 0, 1))
    a = both(model([helper.make_node("Pad", ["x", "p", "", "a"], ["y"])],
                   [("x", F, [3, 4]), ("p", I64, [2]), ("a", I64, [1])]))
    for axis in (0, 1, -1, -2):
        a.check(x=x, p=i64(1, 2), a=i64(axis))
    a.refuses(x=x, p=i64(1, 2), a=i64(2))


def test_split_sizes_at_run_time(both):
    m = helper.make_model(helper.make_graph(
        [helper.make_node("Split", ["x", "s"], ["y", "z"], axis=1)], "g",
        [helper.make_tensor_value_info("x", F, [2, 6]),
         helper.make_tensor_value_info("s", I64, [2])],
        [helper.make_tensor_value_info(n, F, None) for n in ("y", "z")]),
        opset_imports=[helper.make_opsetid("", 18)])
    b = both(m)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for s in ([2, 4], [0, 6], [6, 0], [3, 3]):
        out = b.rt(x=x, s=i64(*s))
        want = b.sess.run(None, {"x": x, "s": i64(*s)})
        for g, w in zip(out.values(), want):
            np.testing.assert_array_equal(g, w)
    for s in ([2, 3], [-1, 7], [7, -1]):
        b.refuses(x=x, s=i64(*s))
    assert b.rt(x=x, s=i64(1, 5))["z"].shape == (2, 5)


def test_chained_run_time_shapes(both):
    """A Range's length feeding a Reshape and a Tile: sizes of sizes."""
    nodes = [helper.make_node("Range", ["a", "l", "d"], ["r"]),
             helper.make_node("Reshape", ["r", "s"], ["t"]),
             helper.make_node("Tile", ["t", "k"], ["y"])]
    b = both(model(nodes, [("a", I64, []), ("l", I64, []), ("d", I64, []), ("s", I64, [2]),
                           ("k", I64, [2])], I64))
    feeds: Dict[str, Any] = dict(a=np.int64(0), d=np.int64(1), k=i64(2, 1))
    for n, s in ((6, [2, 3]), (6, [-1, 2]), (0, [0, 5]), (12, [3, -1])):
        b.check(l=np.int64(n), s=i64(*s), **feeds)
    b.refuses(l=np.int64(6), s=i64(4, -1), **feeds)
    b.check(l=np.int64(4), s=i64(2, 2), **feeds)


def test_constant_parts_are_checked_while_importing():
    """A Range with a run-time limit but a constant delta of 0, a Slice with run-time starts
    but a constant step 0: refused while importing, naming the node."""
    m = model([helper.make_node("Range", ["a", "l", "d"], ["y"], name="ramp")],
              [("l", I64, [])], I64, inits=[("a", i64(0).reshape(())),
                                            ("d", i64(0).reshape(()))])
    with pytest.raises(spx.OnnxImportError, match="'ramp' \\(Range\\).*delta is 0"):
        spx.import_model(m)
    m = model([helper.make_node("Slice", ["x", "s", "e", "axes", "k"], ["y"], name="cut")],
              [("x", F, [4]), ("s", I64, [1]), ("e", I64, [1])],
              inits=[("axes", i64(0)), ("k", i64(0))])
    with pytest.raises(spx.OnnxImportError, match="'cut' \\(Slice\\).*step 0"):
        spx.import_model(m)


@pytest.mark.parametrize("undecided", [False, True])
def test_constant_slice_of_a_data_dependent_axis(monkeypatch, undecided):
    """Slice with constant bounds (ends 2, -1, a huge end, negative steps) of an axis whose
    size comes from run-time data. Where the dim rules cannot place a bound such as min(u, 2)
    within u (AffineGrid's function body inside an If; forced here by a slice that cannot
    decide), ONNX's clamping is computed at run time instead."""
    from shapepoly._core import Tensor
    from shapepoly._errors import Inconclusive

    def cannot_decide(self, *args, **kw):
        raise Inconclusive("slice: cannot decide (forced by the test)")
    for starts, ends, steps in (([0], [2], [1]), ([1], [-1], [1]), ([-3], [MAX], [2]),
                                ([MAX], [MIN], [-1]), ([5], [1], [-2])):
        nodes = [helper.make_node("Range", ["zero", "n", "one"], ["r"]),
                 helper.make_node("Slice", ["r", "b", "e", "a", "k"], ["y"])]
        inits = [("b", np.array(starts)), ("e", np.array(ends)), ("a", np.array([0])),
                 ("k", np.array(steps)), ("zero", np.array(0)), ("one", np.array(1))]
        m = model(nodes, [("n", I64, [])], I64, inits=inits)
        if undecided:
            monkeypatch.setattr(Tensor, "slice", cannot_decide)
        b = Both(m)
        monkeypatch.undo()
        try:
            for n in (0, 1, 2, 3, 7):
                b.check(n=np.array(n, np.int64))
        finally:
            b.close()


def test_pad_wrap_with_run_time_pads():
    """mode=wrap with pads computed at run time (negative ones crop first): one import, each
    run's pads gather ((j - low) mod size) along every axis; onnxruntime as the oracle, and
    onnx's reference for pads past the axis size (the axis repeats). An axis cropped to
    nothing takes no pads."""
    from onnx.reference import ReferenceEvaluator
    m = model([helper.make_node("Pad", ["x", "p"], ["y"], mode="wrap")],
              [("x", F, ["a", "b"]), ("p", I64, [4])], opset=19)
    b = Both(m)
    try:
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        for p in ([1, 2, 0, 3], [0, 0, 0, 0], [2, 0, 2, 4], [-1, 1, 0, -2], [0, -3, 1, 2]):
            b.check(x=x, p=np.array(p, np.int64))
        for p in ([4, 0, 7, 9], [0, 5, 3, 0]):
            feeds = {"x": x, "p": np.array(p, np.int64)}
            np.testing.assert_array_equal(b.rt(**feeds)["y"],
                                          ReferenceEvaluator(m).run(None, feeds)[0])
        with pytest.raises(sp.Error, match="wrap cannot pad the empty axis"):
            b.rt(x=x, p=np.array([-3, 0, 1, 0], np.int64))  # crops axis 0 to nothing
    finally:
        b.close()
