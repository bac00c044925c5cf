"""ONNX import (shapepoly.onnx.import_model): each converter against onnx's reference
evaluator at several shapes of one imported program, symbolic shape subgraphs, opset-dependent
semantics, --dynamic and --dim, parameters, and the errors (unsupported ops listed at once, a
run-time shape naming its node)."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import shapepoly as sp
from shapepoly import onnx as spx

from conftest import REPO

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=18):
    """A model of `nodes`; inputs/outputs are (name, elem type, shape with dim_params)."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m, feeds_list, rtol=1e-5, atol=1e-6, ort=False, **kw):
    """Imports `m` once and compares it with onnx's reference evaluator (or onnxruntime) on
    every feed."""
    if ort:
        import onnxruntime
        ref = onnxruntime.InferenceSession(m.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    else:
        ref = ReferenceEvaluator(m)
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        for feeds in feeds_list:
            want = ref.run(None, feeds)
            got = rt(**{k.replace(".", "_"): v for k, v in feeds.items()})
            assert len(got) == len(want)
            for (name, g), w in zip(got.items(), want):
                w = np.asarray(w)
                assert g.shape == w.shape, (name, feeds.keys())
                if w.dtype.kind == "f":
                    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)
                else:
                    np.testing.assert_array_equal(g, w, err_msg=name)
        return p.inputs, p.outputs


RNG = np.random.default_rng(16)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def one(op, n_in=1, shape=("N", 3, 4), attrs=None, opset=18, extra=(), inits=(), outputs=1,
        shapes=((2, 3, 4), (5, 3, 4)), out_type=F):
    """A single-node model over x (and y of the same shape when n_in == 2)."""
    names = ["x", "y"][:n_in] + [n for n, _ in extra]
    node = helper.make_node(op, names, ["z%d" % i for i in range(outputs)], **(attrs or {}))
    ins = [(n, F, list(shape)) for n in ["x", "y"][:n_in]]
    m = model([node], ins, [("z%d" % i, out_type, None) for i in range(outputs)],
              list(inits) + list(extra), opset)
    return m, [{n: rand(*s) for n in ["x", "y"][:n_in]} for s in shapes]


ELEMENTWISE = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"]
UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Floor", "Ceil", "Sign", "Sin",
         "Cos", "Softsign", "Softplus", "Elu", "Selu", "LeakyRelu", "HardSigmoid",
         "Reciprocal", "HardSwish", "Mish", "Shrink"]


@pytest.mark.parametrize("op", ELEMENTWISE)
def test_binary_and_variadic(op):
    check(*one(op, 2))


@pytest.mark.parametrize("op", UNARY)
def test_unary(op):
    check(*one(op))


def test_log_sqrt_pow_on_positive_values():
    for op in ("Log", "Sqrt"):
        m, _ = one(op)
        check(m, [{"x": np.abs(rand(3, 3, 4)) + 0.1}])
    m, _ = one("Pow", 2)
    check(m, [{"x": np.abs(rand(2, 3, 4)) + 0.1, "y": rand(2, 3, 4)}], rtol=1e-4)


def test_comparisons_where_cast_and_logic():
    nodes = [helper.make_node("Less", ["x", "y"], ["lt"]),
             helper.make_node("Where", ["lt", "x", "y"], ["w"]),
             helper.make_node("Cast", ["x"], ["i"], to=TensorProto.INT32),
             helper.make_node("Equal", ["x", "y"], ["eq"]),
             helper.make_node("Or", ["lt", "eq"], ["le"]),
             helper.make_node("Not", ["le"], ["gt"])]
    m = model(nodes, [("x", F, ["N", 3]), ("y", F, ["N", 3])],
              [("w", F, None), ("i", TensorProto.INT32, None), ("gt", TensorProto.BOOL, None)])
    check(m, [{"x": rand(n, 3) * 4, "y": rand(n, 3)} for n in (1, 6)])


def test_gemm_matmul_and_parameters():
    w = rand(4, 5)
    b = rand(5)
    nodes = [helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["h"], transB=1,
                              alpha=0.5, beta=2.0),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "proj"], ["y"])]
    m = model(nodes, [("x", F, ["N", 5])], [("y", F, ["N", 2])],
              [("fc.weight", w), ("fc.bias", b[:4]), ("proj", rand(4, 2))])
    ins, outs = check(m, [{"x": rand(n, 5)} for n in (1, 3, 8)])
    # Initializers are named parameters (a '.' becomes '_') whose defaults are their values.
    assert [(i.name, str(i.role), i.has_default) for i in ins] == [
        ("x", "data", False), ("fc_weight", "parameter", True), ("fc_bias", "parameter", True),
        ("proj", "parameter", True)]
    assert outs[0].shape == "(N, 2)"
    with spx.import_model(m) as p:
        np.testing.assert_array_equal(p.input_default("fc_weight"), w)
        # New weights by name replace the defaults.
        x = rand(2, 5)
        y0 = p.runtime()(x=x)["y"]
        y1 = p.runtime()(x=x, proj=np.zeros((4, 2), np.float32))["y"]
        assert np.abs(y0).sum() > 0 and not y1.any()
    with spx.import_model(m, parameters=False) as p:
        assert [i.name for i in p.inputs] == ["x"]


def test_shape_subgraph_becomes_dim_expressions():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape and Shape -> Slice -> Concat, plus
    arithmetic on a shape (Div), all evaluated while importing: no run-time shape tensors."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("Slice", ["s", "two", "big"], ["hw"]),
        helper.make_node("Concat", ["n1", "three", "hw"], ["same"], axis=0),
        helper.make_node("Reshape", ["flat", "same"], ["back"]),
        helper.make_node("Gather", ["s", "two"], ["h"], axis=0),
        helper.make_node("Div", ["h", "two"], ["half"]),
        helper.make_node("Slice", ["x", "zero", "half", "two"], ["top"]),
    ]
    inits = [("zero", np.array([0], np.int64)[0]), ("axes0", np.array([0], np.int64)),
             ("minus1", np.array([-1], np.int64)), ("two", np.array([2], np.int64)),
             ("big", np.array([1 << 62], np.int64)), ("three", np.array([3], np.int64))]
    inits[0] = ("zero", np.array(0, np.int64))
    nodes[10] = helper.make_node("Slice", ["x", "zero1", "half", "two"], ["top"])
    inits.append(("zero1", np.array([0], np.int64)))
    m = model(nodes, [("x", F, ["N", 3, "H", "W"])],
              [("flat", F, None), ("back", F, None), ("top", F, None)], inits)
    ins, outs = check(m, [{"x": rand(*s)} for s in ((1, 3, 4, 5), (2, 3, 7, 2))])
    assert [o.shape for o in outs] == ["(N, 3*H*W)", "(N, 3, H, W)",
                                       "(N, 3, floordiv(H, 2), W)"]
    with spx.import_model(m) as p:
        assert "dim_value" not in p.text and "parameter" not in p.text


def test_reshape_zero_and_minus_one_flatten_transpose_expand_tile():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Flatten", ["x"], ["f"], axis=-1),
             helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
             helper.make_node("Expand", ["b", "eshape"], ["e"]),
             helper.make_node("Tile", ["x", "reps"], ["tl"])]
    m = model(nodes, [("x", F, ["N", 3, 4])],
              [("r", F, None), ("f", F, None), ("t", F, None), ("e", F, None), ("tl", F, None)],
              [("shape", np.array([0, -1, 2], np.int64)), ("b", rand(3, 1)),
               ("eshape", np.array([2, 1, 5], np.int64)), ("reps", np.array([2, 1, 3]))])
    check(m, [{"x": rand(n, 3, 4)} for n in (1, 4)])


def test_concat_split_slice_gather_squeeze_unsqueeze_pad():
    nodes = [helper.make_node("Concat", ["x", "x"], ["c"], axis=-1),
             helper.make_node("Split", ["c", "sizes"], ["s0", "s1"], axis=2),
             helper.make_node("Slice", ["x", "st", "en", "ax", "stp"], ["sl"]),
             helper.make_node("Gather", ["x", "idx"], ["g"], axis=2),
             helper.make_node("Unsqueeze", ["x", "uax"], ["u"]),
             helper.make_node("Squeeze", ["u", "uax"], ["sq"]),
             helper.make_node("Pad", ["x", "pads", "pv"], ["p"])]
    m = model(nodes, [("x", F, ["N", 3, 4])],
              [(n, F, None) for n in ("s0", "s1", "sl", "g", "sq", "p")],
              [("sizes", np.array([3, 5], np.int64)), ("st", np.array([-1, 3], np.int64)),
               ("en", np.array([-(1 << 63), 0], np.int64)), ("ax", np.array([1, 2], np.int64)),
               ("stp", np.array([-1, -2], np.int64)), ("idx", np.array([[0, -1], [2, 1]])),
               ("uax", np.array([1, -1], np.int64)),
               ("pads", np.array([0, 1, 2, 1, 0, 1], np.int64)), ("pv", np.array(1.5))])
    m.graph.initializer[-1].CopyFrom(numpy_helper.from_array(np.array(1.5, np.float32), "pv"))
    check(m, [{"x": rand(n, 3, 4)} for n in (1, 5)])
    # Negative pads crop (the reference evaluator refuses them: numpy is the reference).
    m = model([helper.make_node("Pad", ["x", "pads"], ["p"])], [("x", F, ["N", 5])],
              [("p", F, None)], [("pads", np.array([0, -1, 1, -2], np.int64))])
    with spx.import_model(m) as p:
        x = rand(3, 5)
        want = np.pad(x[:, 1:3], [(0, 1), (0, 0)])
        np.testing.assert_array_equal(p.runtime()(x=x)["p"], want)


def test_folded_shape_values_of_one_input_and_flatten_ends():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Max", ["s"], ["s1"]),
             helper.make_node("Sum", ["s1"], ["s2"]),
             helper.make_node("Reshape", ["x", "s2"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f0"], axis=0),
             helper.make_node("Flatten", ["r"], ["f2"], axis=2)]
    m = model(nodes, [("x", F, ["N", 3])], [("f0", F, None), ("f2", F, None)])
    check(m, [{"x": rand(n, 3)} for n in (1, 4)])


def test_split_equal_and_gather_of_runtime_indices():
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], axis=1),
             helper.make_node("Gather", ["x", "i"], ["g"], axis=0),
             helper.make_node("Gather", ["x", "last"], ["gl"], axis=0)]
    m = model(nodes, [("x", F, ["N", 6]), ("i", I64, ["K"])],
              [("a", F, None), ("b", F, None), ("g", F, None), ("gl", F, None)],
              [("last", np.array([-1, 0], np.int64))], opset=13)
    check(m, [{"x": rand(4, 6), "i": np.array([0, -1, 2, -4], np.int64)}])


def test_split_of_constant_sizes_on_a_symbolic_axis_checks_their_sum():
    """torch's x[:, :3].unbind(1) exports as a Split of sizes [1, 1, 1] of an axis of size
    min(T, 3): the sum is checked at run time (and known to the slices), not refused."""
    nodes = [helper.make_node("Slice", ["x", "zero", "three", "one"], ["h"]),
             helper.make_node("Split", ["h", "ones"], ["a", "b", "c"], axis=1),
             helper.make_node("Sub", ["a", "c"], ["d"])]
    m = model(nodes, [("x", F, ["N", "T"])], [("d", F, None), ("b", F, None)],
              [("zero", np.array([0], np.int64)), ("three", np.array([3], np.int64)),
               ("one", np.array([1], np.int64)), ("ones", np.array([1, 1, 1], np.int64))],
              opset=13)
    check(m, [{"x": rand(2, t)} for t in (3, 5)], ort=True)
    with spx.import_model(m) as p, p.runtime() as rt:
        assert [a.text for a in p.assertions] == ["3 == min(T, 3)"]
        with pytest.raises(sp.ConstraintViolation, match=r"\(Split\): the split sizes sum to "
                           r"the axis.*change input 'x' axis 1 from 2 to 3"):
            rt(x=rand(2, 2))
        assert rt(x=rand(1, 4))["d"].shape == (1, 1)  # usable after the refusal


@pytest.mark.parametrize("opset", [11, 13])
def test_softmax_semantics_by_opset(opset):
    """Before opset 13 Softmax flattens to 2-D at `axis`; from 13 it normalizes one axis.
    (onnx's reference evaluator applies 13's rule to 11: onnxruntime is the reference.)"""
    for op in ("Softmax", "LogSoftmax"):
        m, feeds = one(op, attrs={"axis": 1}, opset=opset)
        check(m, feeds, ort=True)
        x = feeds[0]["x"]
        with spx.import_model(m) as p:
            got = p.runtime()(x=x)["z0"]
        flat = x.reshape(len(x), -1) if opset < 13 else x
        e = np.exp(flat - flat.max(1, keepdims=True))
        want = (e / e.sum(1, keepdims=True)).reshape(x.shape)
        np.testing.assert_allclose(np.exp(got) if op == "LogSoftmax" else got, want,
                                   rtol=1e-5)


def test_reductions_axes_as_attribute_or_input():
    for opset in (13, 18):
        nodes = []
        inits = [("axes", np.array([1, -1], np.int64))]
        for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                   "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp"):
            by_input = op == "ReduceSum" or opset >= 18
            nodes.append(helper.make_node(op, ["x", "axes"] if by_input else ["x"],
                                          [op], keepdims=int(op != "ReduceMax"),
                                          **({} if by_input else {"axes": [1, -1]})))
        m = model(nodes, [("x", F, ["N", 3, 4])], [(n.output[0], F, None) for n in nodes],
                  inits, opset)
        check(m, [{"x": rand(n, 3, 4)} for n in (1, 3)], rtol=1e-4)


def test_normalizations_clip_dropout_identity_constants():
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=1),
             helper.make_node("InstanceNormalization", ["x", "s3", "b3"], ["inorm"]),
             helper.make_node("BatchNormalization", ["x", "s3", "b3", "m3", "v3"], ["bn"]),
             helper.make_node("Clip", ["x", "lo", "hi"], ["cl"]),
             helper.make_node("Dropout", ["x"], ["dr"]),
             helper.make_node("Identity", ["dr"], ["id"]),
             helper.make_node("Constant", [], ["k"], value_floats=[1.0, 2.0, 3.0, 4.0]),
             helper.make_node("Add", ["x", "k"], ["xk"]),
             helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("ConstantOfShape", ["sh"], ["co"],
                              value=numpy_helper.from_array(np.array([0.5], np.float32))),
             helper.make_node("Mul", ["co", "x"], ["cx"]),
             helper.make_node("GlobalAveragePool", ["x"], ["gap"])]
    m = model(nodes, [("x", F, ["N", 3, 4])],
              [(n, F, None) for n in ("ln", "inorm", "bn", "cl", "id", "xk", "cx", "gap")],
              [("g", rand(3, 4)), ("b", rand(3, 4)), ("s3", rand(3)), ("b3", rand(3)),
               ("m3", rand(3)), ("v3", np.abs(rand(3)) + 0.5),
               ("lo", np.array(-0.5, np.float32)), ("hi", np.array(0.7, np.float32))])
    check(m, [{"x": rand(n, 3, 4)} for n in (1, 3)], rtol=1e-4, atol=1e-5)


def test_dim_params_dynamic_and_dims():
    nodes = [helper.make_node("GlobalAveragePool", ["img"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "w"], ["y"])]
    m = model(nodes, [("img", F, [1, 3, 8, 8])], [("y", F, [1, 2])], [("w", rand(3, 2))])
    with spx.import_model(m) as p:
        assert p.inputs[0].shape == "(1, 3, 8, 8)"
    ins, outs = check(m, [{"img": rand(*s)} for s in ((1, 3, 8, 8), (2, 3, 5, 7))],
                      dynamic="batch,height,width")
    assert ins[0].shape == "(batch, 3, height, width)" and outs[0].shape == "(batch, 2)"
    ins, _ = check(m, [{"img": rand(3, 3, 8, 2)}], dynamic=["n=0", "w=-1"])
    assert ins[0].shape == "(n, 3, 8, w)"
    # dim_params are variables; dims= renames, fixes or relates them.
    m2 = model([helper.make_node("Add", ["a", "b"], ["c"])],
               [("a", F, ["N", "K"]), ("b", F, ["N", "K"])], [("c", F, None)])
    with spx.import_model(m2, dims={"N": "batch", "K": 4}) as p:
        assert [i.shape for i in p.inputs] == ["(batch, 4)", "(batch, 4)"]
    with spx.import_model(m2, constraints=["N <= 8"]) as p:
        assert p.constraints == ["N <= 8"]
        with pytest.raises(sp.ConstraintViolation):
            p.runtime()(a=rand(9, 2), b=rand(9, 2))


def test_unsupported_ops_are_listed_at_once():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv1"),
             helper.make_node("Unique", ["c"], ["e"], name="uniq"),
             helper.make_node("LpNormalization", ["e"], ["p1"], name="pool1", p=3),
             helper.make_node("TfIdfVectorizer", ["p1"], ["p2"], name="hm1"),
             helper.make_node("TfIdfVectorizer", ["p2"], ["p3"], name="hm2"),
             helper.make_node("Pad", ["p3", "pads"], ["y"], name="around", mode="spiral")]
    m = model(nodes, [("x", F, [1, 1, 8])], [("y", F, None)],
              [("w", rand(1, 1, 3)), ("pads", np.zeros(6, np.int64))], opset=19)
    with pytest.raises(spx.UnsupportedOps) as e:
        spx.import_model(m)
    assert e.value.ops == {"Unique": ["uniq"], "LpNormalization(p=3)": ["pool1"],
                           "TfIdfVectorizer": ["hm1", "hm2"], "Pad(mode=spiral)": ["around"]}
    for name in ("uniq", "pool1", "hm1", "hm2", "around"):
        assert name in str(e.value)


def test_errors_name_the_node():
    # Axes computed from run-time data of an unknown count cannot become a program's axes.
    m = model([helper.make_node("ReduceSum", ["x", "s"], ["y"], name="grow")],
              [("x", F, [1]), ("s", I64, ["k"])], [("y", F, None)])
    with pytest.raises(spx.RuntimeShape, match="'grow' \\(ReduceSum\\).*input 'axes'.*its "
                       "length"):
        spx.import_model(m)
    # A provably wrong shape is refused with the node's name and the symbolic shapes.
    m = model([helper.make_node("Add", ["a", "b"], ["c"], name="bad_add")],
              [("a", F, ["N", 3]), ("b", F, ["N", 4])], [("c", F, None)])
    with pytest.raises(spx.OnnxImportError, match="'bad_add' \\(Add\\).*\\(N, 3\\)"):
        spx.import_model(m)
    m = model([helper.make_node("Cast", ["a"], ["c"], name="half", to=TensorProto.COMPLEX64)],
              [("a", F, [2])], [("c", TensorProto.FLOAT16, None)])
    with pytest.raises(spx.UnsupportedOps, match="Cast\\(to=COMPLEX64\\) \\(half\\)"):
        spx.import_model(m)
    m = model([helper.make_node("Relu", ["a"], ["c"])], [("a", F, [2])], [("c", F, None)],
              opset=99)
    with pytest.raises(spx.OnnxImportError, match="opset 99 is newer than the installed onnx "
                       "package knows .*re-export the model at opset 24"):
        spx.import_model(m)
    m = model([helper.make_node("Relu", ["a"], ["c"])], [("a", F, [2])], [("c", F, None)],
              opset=5)
    with pytest.raises(spx.OnnxImportError, match="Relu of opset 5 changed at opset 6; upgrade"):
        spx.import_model(m)


def test_command_line_import_and_launcher(tmp_path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    m = model(nodes, [("x", F, ["N", 3])], [("y", F, None)], [("w", rand(3, 2))])
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    out = tmp_path / "m.shpoly"
    launcher = os.path.join(REPO, "tools", "onnx", "shapepoly-onnx")
    r = subprocess.run([sys.executable, launcher, "import", str(src), "-o", str(out),
                        "--dim", "N=batch", "--constraint", "batch <= 16"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "x: f32(batch, 3)" in r.stdout
    with sp.load(str(out)) as p:
        assert p.constraints == ["batch <= 16"]
        x = rand(4, 3)
        np.testing.assert_allclose(p.runtime()(x=x)["y"], x @ p.input_default("w"), rtol=1e-5)
    bad = tmp_path / "bad.onnx"
    onnx.save(model([helper.make_node("Unique", ["x"], ["y"], name="u1")],
                    [("x", F, [1, 1, 4])], [("y", F, None)]), str(bad))
    r = subprocess.run([sys.executable, launcher, "import", str(bad), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unsupported ONNX ops: Unique (u1)" in r.stderr


def test_einsum_cumsum_isnan():
    nodes = [helper.make_node("Einsum", ["a", "b"], ["bmm"], equation="bij,bjk->bik"),
             helper.make_node("Einsum", ["a", "c"], ["outer"], equation="bij,kj->kbi"),
             helper.make_node("Einsum", ["a", "a"], ["dot"], equation="bij,bij->b"),
             helper.make_node("Einsum", ["a", "c"], ["sum1"], equation="bij, kl -> bi"),
             helper.make_node("CumSum", ["a", "ax"], ["cs"]),
             helper.make_node("CumSum", ["a", "ax"], ["cse"], exclusive=1, reverse=1),
             helper.make_node("IsNaN", ["a"], ["nan"])]
    m = model(nodes, [("a", F, ["N", 3, 4]), ("b", F, ["N", 4, 2]), ("c", F, [5, 4])],
              [(n, F, None) for n in ("bmm", "outer", "dot", "sum1", "cs", "cse")] +
              [("nan", TensorProto.BOOL, None)], [("ax", np.array(-1, np.int64))])
    feeds = []
    for n in (1, 3):
        a = rand(n, 3, 4)
        a[0, 0, 0] = np.nan if n == 3 else a[0, 0, 0]
        feeds.append({"a": a, "b": rand(n, 4, 2), "c": rand(5, 4)})
    check(m, feeds, rtol=1e-4, atol=1e-5)


def _density(shape, density, dtype=np.float32):
    """Values that are nonzero with probability `density` (0: all zero, 1: none zero)."""
    keep = RNG.random(shape) < density
    return np.where(keep, RNG.uniform(0.5, 2, shape), 0).astype(dtype)


@pytest.mark.parametrize("dtype,elem", [(np.float32, F), (np.int64, I64),
                                        (np.bool_, TensorProto.BOOL)], ids=["f32", "i64", "bool"])
def test_nonzero_against_onnxruntime(dtype, elem):
    """NonZero ([rank, u], the transpose of argwhere) with a symbolic shape: empty, partial
    and full density at several shapes, one imported program; the count is unbacked."""
    m = model([helper.make_node("NonZero", ["x"], ["y"])], [("x", elem, ["N", 3])],
              [("y", I64, None)], opset=13)
    feeds = [{"x": _density((n, 3), d, dtype)} for n in (1, 4, 9) for d in (0.0, 0.4, 1.0)]
    _, outs = check(m, feeds, ort=True)
    assert outs[0].shape == "(2, u0)"
    with spx.import_model(m) as p:
        assert list(p.unbacked) == ["u0"] and "nonzero" in p.unbacked["u0"]


@pytest.mark.parametrize("axis", [0, 1, -1, None], ids=["axis0", "axis1", "axis-1", "flat"])
def test_compress_against_onnxruntime(axis):
    """Compress along an axis (negative too) and without one (x flattened), by a condition
    the graph computes (score > 0) and by a condition input shorter than the axis (ONNX keeps
    the first entries only)."""
    attrs = {} if axis is None else {"axis": axis}
    zero = numpy_helper.from_array(np.zeros((), np.float32), "zero")
    nodes = [helper.make_node("Greater", ["score", "zero"], ["cond"]),
             helper.make_node("Compress", ["x", "cond"], ["y"], **attrs),
             helper.make_node("Compress", ["x", "short"], ["z"], **attrs)]
    flat = axis is None
    axis_len = "N" if axis == 0 else 4
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info("x", F, ["N", 4]),
                           helper.make_tensor_value_info("score", F,
                                                         ["S"] if flat else [axis_len]),
                           helper.make_tensor_value_info("short", TensorProto.BOOL, [3])],
                          [helper.make_tensor_value_info(n, F, None) for n in ("y", "z")], [zero])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    feeds = []
    for n in (3, 5):
        for d in (0.0, 0.5, 1.0):
            s = (n * 4 if flat else (n if axis == 0 else 4))
            feeds.append({"x": rand(n, 4), "score": _density((s,), d) - 0.25 * (d == 0.0),
                          "short": RNG.random(3) < d})
    if flat:  # score is as long as x has elements: say so
        check(m, feeds, ort=True, dims={"S": "4*N"})
    elif axis == 0:  # the 3 entries of `short` select among N rows: N >= 3 must be known
        with pytest.raises(spx.OnnxImportError, match="3 <= N"):
            spx.import_model(m)
        check(m, feeds, ort=True, constraints=["N >= 3"])
    else:
        check(m, feeds, ort=True)


def test_compress_condition_longer_than_the_axis_is_refused():
    m = model([helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
              [("x", F, ["N", 4]), ("c", TensorProto.BOOL, [6])], [("y", F, None)], opset=13)
    with pytest.raises(spx.OnnxImportError, match="Compress"):
        spx.import_model(m)


def test_nonzero_and_compress_fold_on_constants():
    """On values known while importing, both are evaluated on the host (np.argwhere().T,
    np.compress) and become constants."""
    c = numpy_helper.from_array(np.array([[0, 3], [2, 0]], np.int64), "c")
    nodes = [helper.make_node("Constant", [], ["k"], value=c),
             helper.make_node("NonZero", ["k"], ["nz"]),
             helper.make_node("Compress", ["k", "m"], ["cp"], axis=1),
             helper.make_node("Cast", ["nz"], ["nzf"], to=F),
             helper.make_node("Add", ["x", "nzf"], ["y"])]
    m = model(nodes, [("x", F, [2, 2])], [("y", F, None), ("cp", I64, None)],
              [("m", np.array([False, True]))], opset=13)
    with spx.import_model(m, parameters=False) as p:
        assert not p.unbacked
        out = p.runtime()(x=np.zeros((2, 2), np.float32))
    np.testing.assert_array_equal(out["y"], [[0, 1], [1, 0]])
    np.testing.assert_array_equal(out["cp"], [[3], [0]])


def test_pad_wrap_matches_onnxruntime():
    """Circular padding (opset 19) of constant pads up to the axis size (N >= 1 takes 1)."""
    for pads in ([0, 1, 2, 1, 0, 3], [1, 0, 0, 1, 3, 1], [0, 0, 4, 0, 0, 4]):
        nodes = [helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")]
        m = model(nodes, [("x", F, ["N", 3, 4])], [("y", F, None)],
                  [("pads", np.array(pads, np.int64))], opset=19)
        check(m, [{"x": rand(2, 3, 4)}, {"x": rand(1, 3, 4)}], ort=True)


def test_batch_norm_in_training_mode():
    """Opset 15: the batch's statistics normalize, the running ones come out blended; a
    symbolic batch (reference: onnx's evaluator)."""
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                              ["y", "rm", "rv"], training_mode=1, momentum=0.8)]
    m = model(nodes, [("x", F, ["N", 3, 4])], [("y", F, None), ("rm", F, None), ("rv", F, None)],
              [("s", rand(3) + 1), ("b", rand(3)), ("m", rand(3)), ("v", rand(3) ** 2 + 1)],
              opset=15)
    check(m, [{"x": rand(2, 3, 4)}, {"x": rand(5, 3, 4)}], rtol=1e-4, atol=1e-5)
