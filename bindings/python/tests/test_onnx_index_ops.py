"""ONNX index and selection ops (ArgMax, ArgMin, Hardmax, TopK, GatherElements, GatherND,
ScatterElements, OneHot, EyeLike, IsInf, ReverseSequence, CumProd, LpPool), from the outside:
models built with onnx.helper, imported, run, and compared with onnxruntime or numpy; plus
ONNX's own node cases of these ops."""

import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapepoly as sp
from shapepoly import onnx as spx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_node_suite  # noqa: E402

ort = pytest.importorskip("onnxruntime")

OPS = ("ArgMax", "ArgMin", "Hardmax", "TopK", "GatherElements", "GatherND", "ScatterElements",
       "Scatter", "ScatterND", "OneHot", "EyeLike", "IsInf", "ReverseSequence", "CumProd", "LpPool")
ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
        np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
        np.dtype(np.bool_): TensorProto.BOOL}


def model(op, inputs, n_out=1, opset=17, consts=None, shapes=None, **attrs):
    """One-node model: `inputs` maps name -> example array (graph inputs, with their shapes;
    `shapes` overrides one with dim_params), `consts` name -> array (initializers)."""
    consts = consts or {}
    shapes = shapes or {}
    names = list(inputs) + [n for n in consts if n not in inputs]
    outs = ["y%d" % i for i in range(n_out)]
    node = helper.make_node(op, [n if n else "" for n in names], outs, **attrs)
    g = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, ELEM[a.dtype], shapes.get(n, a.shape))
         for n, a in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in consts.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def run_sp(m, feeds, **kw):
    with spx.import_model(m, **kw) as program, program.runtime() as rt:
        return list(rt(**feeds).values())


def run_ort(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def same(m, feeds, **kw):
    got, want = run_sp(m, feeds, **kw), run_ort(m, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True)


def rnd(shape, dtype, seed=0, lo=-3, hi=4):
    """Small integers (ties are likely) in the requested dtype."""
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


# ---- ONNX's node cases -------------------------------------------------------------------

def _ours():
    return [c for c in onnx_node_suite.cases() if onnx_node_suite.op_family(c) in OPS]


def test_node_suite_cases():
    """No case is wrong or crashes; refusals are element types shapepoly lacks, a k, depth
    or axis fed at run time (the output's size or layout would depend on data), or the
    reductions that scatter_add cannot express."""
    out = {c.name: onnx_node_suite.run(c) for c in _ours()}
    bad = {n: r for n, r in out.items() if r[0] in ("wrong", "crash")}
    assert not bad, bad
    for name, (outcome, detail) in out.items():
        if outcome == "refused":
            fam = onnx_node_suite.reason_family(detail)
            assert fam in ("element type", "shape from run-time data") or "reduction=" in detail \
                or "computed at run time" in detail, (name, detail)
    assert sum(o == "pass" for o, _ in out.values()) >= 67


def test_node_suite_cases_with_symbolic_batch():
    """The passing node cases again with axis 0 of every input symbolic: each matches, or is
    refused naming the node (inputs without a common batch axis)."""
    matched = 0
    for c in _ours():
        if onnx_node_suite.run(c)[0] != "pass":
            continue
        inits = {i.name for i in c.model.graph.initializer}
        names = [i.name for i in c.model.graph.input if i.name not in inits]
        try:
            program = spx.import_model(c.model, dynamic="batch")
        except (spx.OnnxImportError, sp.ShapeMismatch) as e:
            assert "ONNX node" in str(e) or "batch" in str(e), (c.name, e)
            continue
        with program, program.runtime() as rt:
            for ins, outs in c.data_sets:
                try:
                    got = list(rt(**dict(zip(names, ins))).values())
                except sp.Error as e:  # a batch shared by the inputs' symbols, not the data
                    assert "batch" in str(e), (c.name, e)
                    break
                for g, w in zip(got, outs):
                    assert g.shape == w.shape, c.name
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True,
                                               err_msg=c.name)
                matched += 1
    assert matched >= 40


def _freeze_inputs(case, names):
    """The case's model with the graph inputs `names` (k, depth, axis) made initializers
    holding the first data set's values; the other inputs' data sets."""
    m = onnx.ModelProto()
    m.CopyFrom(case.model)
    inputs = [i.name for i in m.graph.input]
    pos = [inputs.index(n) for n in names]
    inputs0 = case.data_sets[0][0]
    for n, p in zip(names, pos):
        m.graph.initializer.append(numpy_helper.from_array(np.asarray(inputs0[p]), n))
    keep = [i for i in m.graph.input if i.name not in names]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    sets = [([x for j, x in enumerate(ins) if j not in pos], outs) for ins, outs in
            case.data_sets]
    return m, [i.name for i in keep], sets


@pytest.mark.parametrize("op,frozen", [("TopK", ["k"]), ("OneHot", ["depth"]),
                                       ("CumProd", ["axis"])])
def test_node_cases_with_constant_inputs(op, frozen):
    """The node cases whose k/depth/axis is a graph input, with it made a constant."""
    cases = [c for c in _ours() if onnx_node_suite.op_family(c) == op]
    n = 0
    for c in cases:
        names = [i.name for i in c.model.graph.input]
        if not all(f in names for f in frozen):
            continue
        try:
            m, inames, sets = _freeze_inputs(c, frozen)
            program = spx.import_model(m)
        except spx.OnnxImportError as e:
            assert "element type" in str(e), (c.name, e)
            continue
        with program, program.runtime() as rt:
            for ins, outs in sets:
                got = list(rt(**dict(zip(inames, ins))).values())
                for g, w in zip(got, outs):
                    assert g.shape == w.shape, c.name
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=c.name)
        n += 1
    assert n >= 5


# ---- ArgMax, ArgMin ---------------------------------------------------------------------

@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("axis,keepdims,last", [(0, 1, 0), (1, 0, 0), (-1, 1, 1), (2, 0, 1)])
def test_arg_matches_onnxruntime(op, dtype, axis, keepdims, last):
    x = rnd((3, 4, 5), dtype)  # small integers: many ties
    same(model(op, {"x": x}, axis=axis, keepdims=keepdims, select_last_index=last), {"x": x})


@pytest.mark.parametrize("op,fn", [("ArgMax", np.argmax), ("ArgMin", np.argmin)])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_nan_is_numpys(op, fn, last):
    """numpy's argmax and argmin return the first NaN (select_last_index: the last)."""
    x = np.array([[1, np.nan, 5, np.nan], [2, 7, 7, -1], [np.nan, 0, 0, 0],
                  [-np.inf, np.inf, np.inf, -np.inf]], np.float32)
    (got,) = run_sp(model(op, {"x": x}, axis=1, keepdims=0, select_last_index=last), {"x": x})
    want = fn(x, axis=1) if not last else 3 - fn(x[:, ::-1], axis=1)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64


def test_arg_size_one_and_empty_axes():
    x = rnd((0, 1, 3), np.float32)
    m = model("ArgMax", {"x": x}, axis=2)
    assert run_sp(m, {"x": x})[0].shape == (0, 1, 1)  # empty other axis: fine
    same(model("ArgMin", {"x": rnd((4, 1), np.int32)}, axis=1), {"x": rnd((4, 1), np.int32)})
    with pytest.raises(spx.OnnxImportError, match="size 0"):
        spx.import_model(model("ArgMax", {"x": x}, axis=0))


def test_arg_symbolic_batch_and_empty_check():
    x = rnd((6, 5), np.float32, seed=3)
    m = model("ArgMax", {"x": x}, shapes={"x": ["n", 5]}, axis=0, keepdims=0)
    with spx.import_model(m) as program, program.runtime() as rt:
        np.testing.assert_array_equal(rt(x=x)["y0"], np.argmax(x, 0))
        np.testing.assert_array_equal(rt(x=x[:1])["y0"], np.zeros(5, np.int64))
        with pytest.raises(sp.Error):
            rt(x=x[:0])  # ArgMax over an empty axis: an error, not garbage


# ---- Hardmax, TopK ----------------------------------------------------------------------

@pytest.mark.parametrize("opset,axis", [(11, 1), (11, 0), (11, 2), (13, -1), (13, 1)])
def test_hardmax(opset, axis):
    x = rnd((2, 3, 4), np.float32, seed=1)
    same(model("Hardmax", {"x": x}, opset=opset, axis=axis), {"x": x})


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("k,axis,largest", [(1, -1, 1), (3, 1, 1), (4, -1, 0), (2, 0, 0),
                                            (5, 2, 1), (0, 1, 1)])
def test_topk_matches_onnxruntime(dtype, k, axis, largest):
    x = rnd((3, 4, 5), dtype, seed=k)  # ties: the lower index first
    m = model("TopK", {"x": x}, n_out=2, consts={"k": np.array([k], np.int64)}, axis=axis,
              largest=largest)
    same(m, {"x": x})


def test_topk_nan_and_infinities():
    """NaN counts as the greatest value (ONNX's reference), as do ties by lower index."""
    from onnx.reference import ReferenceEvaluator
    x = np.array([[1, np.nan, np.inf, -np.inf, np.nan, 1]], np.float32)
    for largest in (1, 0):
        m = model("TopK", {"x": x}, n_out=2, consts={"k": np.array([6], np.int64)},
                  largest=largest)
        got = run_sp(m, {"x": x})
        want = ReferenceEvaluator(m).run(None, {"x": x})
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_topk_opset9_symbolic_batch():
    x = rnd((7, 6), np.float32, seed=5)
    m = model("TopK", {"x": x}, n_out=2, opset=9, shapes={"x": ["n", 6]}, k=2)
    with spx.import_model(m) as program, program.runtime() as rt:
        for n in (7, 1):
            got = rt(x=x[:n])
            want = run_ort(m, {"x": x[:n]})
            np.testing.assert_array_equal(got["y0"], want[0])
            np.testing.assert_array_equal(got["y1"], want[1])


def test_topk_run_time_and_large_k():
    """k as a graph input (a data-dependent size, checked <= the axis at run time) and k
    beyond the old composite's limit of 64."""
    from onnx.reference import ReferenceEvaluator
    x = rnd((2, 200), np.float32, seed=3)
    m = model("TopK", {"x": x}, n_out=2, consts={"k": np.array([100], np.int64)})
    same(m, {"x": x})
    x = rnd((3, 5), np.float32, seed=4)
    m = model("TopK", {"x": x, "k": np.array([2], np.int64)}, n_out=2, largest=0)
    with spx.import_model(m) as program, program.runtime() as rt:
        for k in (0, 2, 5):
            got = rt(x=x, k=np.array([k], np.int64))
            want = ReferenceEvaluator(m).run(None, {"x": x, "k": np.array([k], np.int64)})
            np.testing.assert_array_equal(got["y0"], want[0])
            np.testing.assert_array_equal(got["y1"], want[1])
        with pytest.raises(sp.ConstraintViolation, match="larger than the axis"):
            rt(x=x, k=np.array([6], np.int64))


def test_topk_refusals():
    x = rnd((2, 5), np.float32)
    with pytest.raises(spx.OnnxImportError, match="larger than the axis"):
        spx.import_model(model("TopK", {"x": x}, n_out=2, consts={"k": np.array([6])}))
    with pytest.raises(spx.OnnxImportError, match="k=-1"):
        spx.import_model(model("TopK", {"x": x}, n_out=2, consts={"k": np.array([-1])}))


# ---- Gathers and scatters -----------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements(axis):
    x = rnd((4, 3, 5), np.float32, seed=2)
    d = x.shape[axis]
    shape = list(x.shape)
    shape[axis] = 6
    shape[(axis + 1) % 3] -= 1  # smaller than the data off the axis: allowed
    i = np.random.default_rng(1).integers(-d, d, shape).astype(np.int64)  # negative too
    same(model("GatherElements", {"x": x, "i": i}, axis=axis), {"x": x, "i": i})
    same(model("GatherElements", {"x": x, "i": i.astype(np.int32)}, axis=axis),
         {"x": x, "i": i.astype(np.int32)})


def test_gather_elements_symbolic_and_out_of_range():
    x = rnd((5, 3), np.int64, seed=4)
    i = np.array([[0, -1, 2], [4, 1, -5]], np.int64)
    m = model("GatherElements", {"x": x, "i": i}, shapes={"x": ["n", 3], "i": ["m", 3]})
    with spx.import_model(m) as program, program.runtime() as rt:
        np.testing.assert_array_equal(rt(x=x, i=i)["y0"],
                                      np.take_along_axis(x, np.where(i < 0, i + 5, i), 0))
        # Index 3 into 3 rows would land in another row of the flat data: a clean error.
        with pytest.raises(sp.Error, match="outside"):
            rt(x=x[:3], i=i)


def test_gather_elements_is_one_take_along_axis_and_checks_shorter_symbolic_indices():
    """The import is the library's take_along_axis on the indices as given (no conversion, no
    flat positions); indices shorter than the data off the axis slice it, a symbolic size
    checked at run time."""
    x = rnd((5, 4), np.float32, seed=6)
    i = np.array([[0, -1, 2], [4, 1, -5]], np.int32)
    m = model("GatherElements", {"x": x, "i": i}, shapes={"x": ["n", "k"], "i": ["m", "j"]})
    with spx.import_model(m) as program, program.runtime() as rt:
        text = program.text
        assert text.count("take_along_axis") == 1 and " take " not in text and "convert" not in text
        np.testing.assert_array_equal(rt(x=x, i=i)["y0"], np.take_along_axis(x[:, :3], i, 0))
        with pytest.raises(sp.Error, match="longer than the data"):
            rt(x=x[:, :2], i=i)  # j = 3 > k = 2
        with pytest.raises(sp.Error, match=r"take_along_axis: index 4 \(position 3 of the "
                           r"indices\) is outside \[-4, 4\) on axis 0"):
            rt(x=x[:4], i=i)
    same(m, {"x": x, "i": i})
    m = model("GatherElements", {"x": x, "i": i}, axis=1)  # constant shapes: a constant slice
    same(m, {"x": x, "i": i.clip(-3, 2)})


REDUCTIONS = ["none", "add", "mul", "max", "min"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_scatter_elements(reduction, dtype):
    x = rnd((4, 5), dtype, seed=6)
    rng = np.random.default_rng(2)
    # Unique indices along axis 1 per row for 'none' (duplicates are undefined there).
    i = np.stack([rng.permutation(5)[:3] for _ in range(3)]).astype(np.int64) - 5 * (
        np.arange(3)[:, None] == 1)  # row 1 negative
    u = rnd((3, 3), dtype, seed=7)
    same(model("ScatterElements", {"x": x, "i": i, "u": u}, opset=18, axis=1,
               reduction=reduction), {"x": x, "i": i, "u": u})
    # Duplicates: combined in the indices' row-major order ('none': the last one wins, as
    # onnxruntime's sequential loop).
    i2 = np.zeros((3, 3), np.int64)
    same(model("ScatterElements", {"x": x, "i": i2, "u": u}, opset=18, axis=0,
               reduction=reduction), {"x": x, "i": i2, "u": u})


@pytest.mark.parametrize("seed", range(12))
def test_scatter_matches_onnxruntime_on_random_cases(seed):
    """Random ScatterElements and ScatterND cases (ranks 1-3, any axis, every reduction, float
    and integer data, many duplicate indices, negative ones) against onnxruntime."""
    rng = np.random.default_rng(100 + seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(d) for d in rng.integers(1, 5, rank))
    dtype = [np.float32, np.float64, np.int32, np.int64][seed % 4]
    x = rnd(shape, dtype, seed=seed)
    for reduction in REDUCTIONS:
        axis = int(rng.integers(-rank, rank))
        ishape = list(shape)
        ishape[axis] = int(rng.integers(1, 7))  # more positions than the axis: duplicates
        n = shape[axis]
        i = rng.integers(-n, n, ishape).astype(np.int64)
        u = rnd(tuple(ishape), dtype, seed=seed + 50)
        same(model("ScatterElements", {"x": x, "i": i, "u": u}, opset=18, axis=axis,
                   reduction=reduction), {"x": x, "i": i, "u": u})
        k = int(rng.integers(1, rank + 1))
        m = int(rng.integers(1, 6))
        tup = np.stack([rng.integers(-d, d, m) for d in shape[:k]], -1).astype(np.int64)
        un = rnd((m,) + shape[k:], dtype, seed=seed + 60)
        same(model("ScatterND", {"x": x, "i": tup, "u": un}, opset=18, reduction=reduction),
             {"x": x, "i": tup, "u": un})


def test_scatter_elements_symbolic_and_refusals():
    x = rnd((6, 2), np.float32)
    i = np.array([[5, 0], [-6, 1]], np.int64)
    u = np.ones((2, 2), np.float32)
    m = model("ScatterElements", {"x": x, "i": i, "u": u}, shapes={"x": ["n", 2]},
              reduction="add")
    with spx.import_model(m) as program, program.runtime() as rt:
        np.testing.assert_array_equal(rt(x=x, i=i, u=u)["y0"], run_ort(m, {"x": x, "i": i,
                                                                          "u": u})[0])
        with pytest.raises(sp.Error, match="outside"):
            rt(x=x[:4], i=i, u=u)  # index 5 of 4 rows
    with pytest.raises(spx.UnsupportedOps, match="reduction=median"):
        spx.import_model(model("ScatterElements", {"x": x, "i": i, "u": u}, reduction="median"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("k,ishape", [(1, (2, 1)), (2, (3, 2)), (3, (2, 2, 3)), (2, (2,))])
def test_scatter_nd(reduction, k, ishape):
    """Slices, rows and single elements replaced or added at index tuples of length k (PyTorch
    exports x[i, j] = v and index_put as ScatterND), with negative components."""
    x = rnd((3, 4, 5), np.float32, seed=9)
    rng = np.random.default_rng(k)
    tuples = np.array(sorted({tuple(int(rng.integers(0, d)) for d in x.shape[:k])
                              for _ in range(40)}))[:int(np.prod(ishape[:-1]))]
    i = tuples.reshape(ishape).astype(np.int64)
    i[..., 0] -= 3 * (i[..., 0] % 2)  # odd first components counted from the end
    u = rnd(ishape[:-1] + x.shape[k:], np.float32, seed=10)
    same(model("ScatterND", {"x": x, "i": i, "u": u}, opset=18, reduction=reduction),
         {"x": x, "i": i, "u": u})


def test_scatter_nd_symbolic_and_refusals():
    """A symbolic leading axis; an index tuple outside it is a clean run-time error."""
    x = rnd((5, 3), np.float32)
    i = np.array([[4], [-5]], np.int64)
    u = np.ones((2, 3), np.float32)
    m = model("ScatterND", {"x": x, "i": i, "u": u}, shapes={"x": ["n", 3]}, opset=18)
    with spx.import_model(m) as program, program.runtime() as rt:
        np.testing.assert_array_equal(rt(x=x, i=i, u=u)["y0"],
                                      run_ort(m, {"x": x, "i": i, "u": u})[0])
        with pytest.raises(sp.Error, match="outside"):
            rt(x=x[:4], i=i, u=u)  # index 4 of 4 rows
    with pytest.raises(spx.UnsupportedOps, match="reduction=median"):
        spx.import_model(model("ScatterND", {"x": x, "i": i, "u": u}, opset=18,
                               reduction="median"))


@pytest.mark.parametrize("b,ishape", [(0, (2, 2)), (0, (3, 1)), (0, (2,)), (1, (2, 1)),
                                      (1, (2, 2, 2)), (2, (2, 3, 1))])
def test_gather_nd(b, ishape):
    x = rnd((2, 3, 4), np.float32, seed=8)
    rng = np.random.default_rng(b)
    k = ishape[-1]
    hi = np.array(x.shape[b:b + k])
    i = (rng.integers(0, 1 << 20, ishape) % hi - hi * rng.integers(0, 2, ishape)).astype(
        np.int64)  # some negative
    same(model("GatherND", {"x": x, "i": i}, batch_dims=b), {"x": x, "i": i})


def test_gather_nd_symbolic_batch():
    x = rnd((5, 3, 4), np.float32, seed=9)
    i = np.array([[[2, 1]], [[0, -1]], [[1, 3]], [[0, 0]], [[2, 2]]], np.int64)
    m = model("GatherND", {"x": x, "i": i}, shapes={"x": ["n", 3, 4], "i": ["n", 1, 2]},
              batch_dims=1)
    with spx.import_model(m) as program, program.runtime() as rt:
        for n in (5, 2, 1):
            np.testing.assert_array_equal(rt(x=x[:n], i=i[:n])["y0"],
                                          run_ort(m, {"x": x[:n], "i": i[:n]})[0])


def test_reverse_sequence():
    x = rnd((4, 3, 2), np.float32, seed=10)
    lens = np.array([4, 1, 2], np.int64)
    same(model("ReverseSequence", {"x": x, "lens": lens}, batch_axis=1, time_axis=0),
         {"x": x, "lens": lens})
    xt = np.ascontiguousarray(x.transpose(1, 0, 2))
    same(model("ReverseSequence", {"x": xt, "lens": lens}, batch_axis=0, time_axis=1),
         {"x": xt, "lens": lens})


# ---- Constructors and predicates ----------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    i = np.array([[0, 3, -1], [-4, 5, 2]], np.int64)  # negative and out of range (5, -5)
    vals = np.array([-2.0, 7.0], np.float32)
    same(model("OneHot", {"i": i}, consts={"depth": np.array(4, np.int64), "vals": vals},
               axis=axis), {"i": i})


def test_one_hot_depth_from_a_shape():
    """depth = Shape(x)[1], a symbolic size: the output's axis is that dim."""
    i = np.array([1, 0, -1], np.int64)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["d"], axis=0),
             helper.make_node("OneHot", ["i", "d", "v"], ["y"])]
    g = helper.make_graph(nodes, "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "w"]),
        helper.make_tensor_value_info("i", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(1, np.int64), "one"),
         numpy_helper.from_array(np.array([0, 1], np.float32), "v")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with spx.import_model(m) as program, program.runtime() as rt:
        for w in (3, 5):
            want = run_ort(m, {"x": np.zeros((2, w), np.float32), "i": i})[0]
            np.testing.assert_array_equal(rt(x=np.zeros((2, w), np.float32), i=i)["y"], want)


@pytest.mark.parametrize("k,dtype", [(0, None), (1, TensorProto.INT32), (-2, None),
                                     (5, TensorProto.DOUBLE)])
def test_eye_like(k, dtype):
    x = np.zeros((3, 4), np.float32)
    at = {"k": k} if dtype is None else {"k": k, "dtype": dtype}
    same(model("EyeLike", {"x": x}, **at), {"x": x})


def test_eye_like_symbolic():
    m = model("EyeLike", {"x": np.zeros((2, 3), np.int64)}, shapes={"x": ["r", "c"]}, k=1)
    with spx.import_model(m) as program, program.runtime() as rt:
        np.testing.assert_array_equal(rt(x=np.zeros((4, 2), np.int64))["y0"],
                                      np.eye(4, 2, 1, np.int64))


@pytest.mark.parametrize("pos,neg", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_is_inf(pos, neg):
    x = np.array([np.inf, -np.inf, np.nan, 0, 1e38], np.float32)
    same(model("IsInf", {"x": x}, detect_positive=pos, detect_negative=neg), {"x": x})


# ---- CumProd, LpPool ----------------------------------------------------------------------

@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_cumprod_zeros_and_negatives(exclusive, reverse, dtype):
    x = np.array([[2, -1, 0, 3, -2, 1, 5], [-1, -1, 2, 0.5, 0, 4, 1]]).astype(dtype)
    if dtype == np.int64:
        x[1, 3] = 3
    for axis in (1, 0):
        m = model("CumProd", {"x": x}, opset=21, consts={"axis": np.array(axis)},
                  exclusive=exclusive, reverse=reverse)
        y = np.flip(x, axis) if reverse else x
        want = np.cumprod(y, axis)
        if exclusive:
            want = np.concatenate([np.ones_like(np.take(y, [0], axis)),
                                   np.take(want, range(y.shape[axis] - 1), axis)], axis)
        want = np.flip(want, axis) if reverse else want
        np.testing.assert_allclose(run_sp(m, {"x": x})[0], want)


def test_cumprod_symbolic_axis_refused():
    m = model("CumProd", {"x": np.ones((3, 2), np.float32)}, opset=21, shapes={"x": ["n", 2]},
              consts={"axis": np.array(0)})
    with pytest.raises(spx.OnnxImportError, match="symbolic axis"):
        spx.import_model(m)
    # The other axis may be symbolic.
    m = model("CumProd", {"x": np.ones((3, 2), np.float32)}, opset=21, shapes={"x": ["n", 2]},
              consts={"axis": np.array(1)})
    x = np.array([[1, 2], [-3, 0], [4, 5]], np.float32)
    np.testing.assert_array_equal(run_sp(m, {"x": x})[0], np.cumprod(x, 1))


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("at", [dict(kernel_shape=[2, 2]),
                                dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1]),
                                dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER")])
def test_lp_pool(p, at):
    x = np.random.default_rng(p).standard_normal((2, 3, 5, 6)).astype(np.float32)
    same(model("LpPool", {"x": x}, p=p, **at), {"x": x})


def test_lp_pool_symbolic_batch_and_ceil_mode():
    x = np.random.default_rng(0).standard_normal((3, 2, 5)).astype(np.float32)
    m = model("LpPool", {"x": x}, shapes={"x": ["n", 2, 5]}, kernel_shape=[2], strides=[2])
    with spx.import_model(m) as program, program.runtime() as rt:
        for n in (3, 1):
            np.testing.assert_allclose(rt(x=x[:n])["y0"], run_ort(m, {"x": x[:n]})[0],
                                       rtol=1e-5)
    with pytest.raises(spx.OnnxImportError, match="ceil_mode"):
        spx.import_model(model("LpPool", {"x": x}, opset=18, kernel_shape=[2], ceil_mode=1))


def test_empty_other_axes():
    """Size-0 axes other than the selected one give empty results."""
    x = np.zeros((0, 5), np.float32)
    same(model("TopK", {"x": x}, n_out=2, consts={"k": np.array([2], np.int64)}), {"x": x})
    same(model("Hardmax", {"x": x}, opset=13), {"x": x})
    i = np.zeros((0, 5), np.int64)
    same(model("GatherElements", {"x": x, "i": i}, axis=1), {"x": x, "i": i})


# ---- TensorScatter (the KV-cache update) and GlobalLpPool --------------------------------

@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("axis", [-2, 1, 2])
def test_tensor_scatter_matches_its_definition(mode, axis):
    """Against the ONNX pseudocode, with a symbolic batch; write positions per batch."""

    rng = np.random.default_rng(3)
    shape = [2, 3, 6, 4] if axis in (-2, 2) else [2, 6, 3, 4]
    ax = axis % 4
    upd_shape = list(shape)
    upd_shape[ax] = 2
    node = helper.make_node("TensorScatter", ["past", "upd", "w"], ["y"], axis=axis, mode=mode)
    sym = lambda s: ["B"] + s[1:]  # noqa: E731
    g = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("past", TensorProto.FLOAT, sym(shape)),
        helper.make_tensor_value_info("upd", TensorProto.FLOAT, sym(upd_shape)),
        helper.make_tensor_value_info("w", TensorProto.INT64, ["B"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 24)])
    with spx.import_model(m) as p, p.runtime() as rt:
        for b, writes in ((2, [0, 4]), (1, [5]), (3, [2, 0, 3])):
            if mode == "linear":
                writes = [min(w, shape[ax] - 2) for w in writes]
            past = rng.standard_normal([b] + shape[1:]).astype(np.float32)
            upd = rng.standard_normal([b] + upd_shape[1:]).astype(np.float32)
            w = np.array(writes, np.int64)
            want = past.copy()
            for i in range(b):
                for s in range(2):
                    c = (w[i] + s) % shape[ax] if mode == "circular" else w[i] + s
                    src = [slice(None)] * 4
                    dst = [slice(None)] * 4
                    src[0] = dst[0] = i
                    src[ax], dst[ax] = s, c
                    want[tuple(dst)] = upd[tuple(src)]
            np.testing.assert_array_equal(rt(past=past, upd=upd, w=w)["y"], want)
        if mode == "linear":  # a write past the end of the cache is a clean error
            with pytest.raises(sp.ConstraintViolation, match="within the cache"):
                rt(past=past, upd=upd, w=np.array([5, 0, 0], np.int64))


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool_matches_onnxruntime(p):

    node = helper.make_node("GlobalLpPool", ["x"], ["y"], p=p)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, ["N", 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 5)).astype(np.float32)
    want = (np.abs(x) ** p).sum((2, 3), keepdims=True) ** (1.0 / p)
    with spx.import_model(m) as prog, prog.runtime() as rt:
        np.testing.assert_allclose(rt(x=x)["y"], want, rtol=1e-5)
