"""ONNX sequences and optionals (shapepoly/onnx/_ops_sequence.py) against onnxruntime: a
sequence of a length known while importing is a list of tensors, an optional is empty or one
value; sequence inputs take their length from import_model's `sequences` and become one program
input per element ('x[0]', ...), sequence outputs one program output per element, regrouped by
`onnx_values`; what needs a length or presence known only at run time is refused naming the
node."""

import json

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapepoly as sp
from shapepoly import onnx as spx
from shapepoly.onnx._ops_sequence import onnx_values, sequence_inputs

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def seq_vi(name, t, shape=None):
    return helper.make_tensor_sequence_value_info(name, t, shape)


def model(nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(nodes, "g", inputs, outputs,
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def const(name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value)))


def same(got, want):
    """A value (array, list of arrays) equal to onnxruntime's, shapes included."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w)
        return
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def compare(m, feeds_list, **kw):
    """Each feeds (ONNX names; a list for a sequence input) run by onnxruntime and by the
    imported program, whose outputs are regrouped by ONNX name."""
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        for feeds in feeds_list:
            want = s.run(None, feeds)
            got = list(onnx_values(p, rt(**sequence_inputs(p, feeds))).values())
            assert len(got) == len(want)
            for g, w in zip(got, want):
                same(g, w)


def rng(seed=0):
    return np.random.default_rng(seed)


def test_split_to_sequence_at_concat_and_length_on_a_symbolic_batch():
    """SplitToSequence with a constant split, SequenceAt (negative position), SequenceLength,
    ConcatFromSequence (with and without a new axis) over an input of symbolic batch."""
    nodes = [const("two", np.array(2, np.int64)), const("m1", np.array(-1, np.int64)),
             helper.make_node("SplitToSequence", ["x", "two"], ["s"], axis=1),
             helper.make_node("SequenceAt", ["s", "m1"], ["last"]),
             helper.make_node("SequenceLength", ["s"], ["n"]),
             helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=1),
             helper.make_node("SplitToSequence", ["x"], ["ones"], axis=1, keepdims=0),
             helper.make_node("ConcatFromSequence", ["ones"], ["stk"], axis=-1, new_axis=1),
             helper.make_node("ConcatFromSequence", ["ones"], ["ones_cat"], axis=0)]
    m = model(nodes, [vi("x", F, ["N", 5])],
              [vi("last", F, None), vi("n", I64, []), vi("cat", F, None), vi("stk", F, None),
               vi("ones_cat", F, None)])
    compare(m, [{"x": rng().standard_normal((k, 5)).astype(np.float32)} for k in (1, 3)])


def test_a_sequence_input_of_a_given_length_and_a_sequence_output():
    """sequences={"xs": 3}: three program inputs xs[0..2] of the element type's shape; the
    output sequence is three program outputs, regrouped as a list."""
    nodes = [const("zero", np.array(0, np.int64)),
             helper.make_node("SequenceInsert", ["xs", "y", "zero"], ["a"]),
             helper.make_node("SequenceErase", ["a"], ["b"]),  # the last
             helper.make_node("SequenceInsert", ["b", "y"], ["out"])]
    m = model(nodes, [seq_vi("xs", F, ["N", 2]), vi("y", F, ["N", 2])],
              [seq_vi("out", F, None)])
    r = rng(1)
    feeds = [{"xs": [r.standard_normal((n, 2)).astype(np.float32) for _ in range(3)],
              "y": r.standard_normal((n, 2)).astype(np.float32)} for n in (1, 4)]
    compare(m, feeds, sequences={"xs": 3})
    with spx.import_model(m, sequences={"xs": 3}) as p:
        assert [i.name for i in p.inputs][:4] == ["xs[0]", "xs[1]", "xs[2]", "y"]
        assert list(p.outputs) == ["out[0]", "out[1]", "out[2]", "out[3]"] or \
            [o.name for o in p.outputs] == ["out[0]", "out[1]", "out[2]", "out[3]"]
        meta = json.loads(p.metadata["onnx.sequences"])
        assert meta["inputs"] == {"xs": ["xs[0]", "xs[1]", "xs[2]"]}
        assert meta["outputs"] == {"out": ["out[0]", "out[1]", "out[2]", "out[3]"]}
        with pytest.raises(ValueError, match="sequence of 3 elements"):
            sequence_inputs(p, {"xs": feeds[0]["xs"][:2], "y": feeds[0]["y"]})


def test_sequence_elements_of_their_own_shapes():
    """sequences={"xs": [shapes]}: each element its own shape (names or numbers)."""
    nodes = [helper.make_node("ConcatFromSequence", ["xs"], ["y"], axis=0)]
    m = model(nodes, [seq_vi("xs", F, None)], [vi("y", F, None)])
    r = rng(2)
    feeds = [{"xs": [r.standard_normal(s).astype(np.float32) for s in ((a, 3), (b, 3))]}
             for a, b in ((1, 2), (4, 1))]
    compare(m, feeds, sequences={"xs": [("a", 3), ("b", 3)]})


def test_a_sequence_input_needs_its_length():
    m = model([helper.make_node("SequenceLength", ["xs"], ["n"])], [seq_vi("xs", F, [2])],
              [vi("n", I64, [])])
    with pytest.raises(spx.OnnxImportError, match=r"graph input 'xs' is a sequence: its length "
                       r"is needed while importing \(import_model's sequences="):
        spx.import_model(m)
    m2 = model([helper.make_node("SequenceLength", ["xs"], ["n"])], [seq_vi("xs", F, None)],
               [vi("n", I64, [])])
    with pytest.raises(spx.OnnxImportError, match="element type has no shape"):
        spx.import_model(m2, sequences={"xs": 2})
    with spx.import_model(m2, sequences={"xs": [(3,)] * 4}) as p, p.runtime() as rt:
        # A length known while importing: the output is a constant.
        got = onnx_values(p, rt(**sequence_inputs(p, {"xs": [np.zeros(3, np.float32)] * 4})))
        assert int(got["n"]) == 4


def test_a_sequence_given_to_a_tensor_op_is_refused_naming_the_input():
    nodes = [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    m = model(nodes, [vi("x", F, [2])], [vi("y", F, None)])
    with pytest.raises(spx.OnnxImportError, match=r"\(Relu\): input 's' is a sequence, which "
                       r"Relu does not take"):
        spx.import_model(m)


def test_run_time_positions_pick_with_conds():
    """SequenceAt, SequenceInsert and SequenceErase at a position the data gives: conds pick
    the elements (of different sizes: data-dependent sizes); a position out of range fails
    at run time."""
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceAt", ["s", "p"], ["at"]),
             helper.make_node("SequenceInsert", ["s", "b", "q"], ["ins"]),
             helper.make_node("SequenceErase", ["s", "p"], ["era"]),
             helper.make_node("ConcatFromSequence", ["ins"], ["ins_cat"], axis=0),
             helper.make_node("ConcatFromSequence", ["era"], ["era_cat"], axis=0)]
    m = model(nodes, [vi("a", F, [1]), vi("b", F, [2]), vi("c", F, [3]), vi("p", I64, []),
                      vi("q", I64, [])],
              [vi("at", F, None), vi("ins_cat", F, None), vi("era_cat", F, None)])
    abc = {"a": np.array([1], np.float32), "b": np.array([2, 3], np.float32),
           "c": np.array([4, 5, 6], np.float32)}
    feeds = [dict(abc, p=np.array(p, np.int64), q=np.array(q, np.int64))
             for p, q in ((0, 0), (1, 3), (2, -1), (-3, -3), (-1, 2))]
    compare(m, feeds)
    with spx.import_model(m) as p, p.runtime() as rt:
        with pytest.raises(sp.ConstraintViolation, match=r"input 'position' is in \[-3, 2\]"):
            rt(**dict(abc, p=np.array(3, np.int64), q=np.array(0, np.int64)))
        with pytest.raises(sp.ConstraintViolation, match=r"input 'position' is in \[-3, 3\]"):
            rt(**dict(abc, p=np.array(0, np.int64), q=np.array(-4, np.int64)))


def test_a_loop_of_a_constant_trip_count_building_a_sequence_is_unrolled():
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("SequenceInsert", ["s", "xi"], ["s_out"])],
        "body", [vi("i", I64, []), vi("c", B, []), seq_vi("s", F, None)],
        [vi("c_out", B, []), seq_vi("s_out", F, None)])
    nodes = [const("m", np.array(3, np.int64)),
             helper.make_node("SequenceEmpty", [], ["s0"], dtype=F),
             helper.make_node("Loop", ["m", "", "s0"], ["s"], body=body),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1)]
    m = model(nodes, [vi("x", F, ["N"])], [vi("y", F, None), seq_vi("s", F, None)])
    compare(m, [{"x": rng(3).standard_normal(k).astype(np.float32)} for k in (2, 5)])


def test_a_loop_of_a_run_time_trip_count_carrying_a_sequence_is_refused():
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("SequenceInsert", ["s", "x"], ["s_out"])],
        "body", [vi("i", I64, []), vi("c", B, []), seq_vi("s", F, None)],
        [vi("c_out", B, []), seq_vi("s_out", F, None)])
    nodes = [helper.make_node("SequenceEmpty", [], ["s0"], dtype=F),
             helper.make_node("Loop", ["m", "", "s0"], ["s"], body=body, name="grow")]
    m = model(nodes, [vi("x", F, [2]), vi("m", I64, [])], [seq_vi("s", F, None)])
    with pytest.raises(spx.OnnxImportError, match=r"'grow' \(Loop\) carries a sequence "
                       r"\(carried value 0\).*the trip count is computed at run time"):
        spx.import_model(m)


def test_if_over_sequences_of_one_length_becomes_a_cond():
    def branch(name, op):
        return helper.make_graph(
            [helper.make_node(op, ["x"], [name + "_y"]),
             helper.make_node("SequenceConstruct", ["x", name + "_y"], [name])],
            name, [], [seq_vi(name, F, None)])
    nodes = [helper.make_node("If", ["c"], ["s"], then_branch=branch("t", "Relu"),
                              else_branch=branch("e", "Neg"))]
    m = model(nodes, [vi("c", B, []), vi("x", F, ["N"])], [seq_vi("s", F, None)])
    x = rng(4).standard_normal(4).astype(np.float32)
    compare(m, [{"c": np.array(v), "x": x[:k]} for v in (True, False) for k in (4, 1)])

    short = helper.make_graph([helper.make_node("SequenceConstruct", ["x"], ["e"])], "e", [],
                              [seq_vi("e", F, None)])
    bad = model([helper.make_node("If", ["c"], ["s"], then_branch=branch("t", "Relu"),
                                  else_branch=short)],
                [vi("c", B, []), vi("x", F, ["N"])], [seq_vi("s", F, None)])
    with pytest.raises(spx.OnnxImportError, match="output 0 of the branches is a sequence of "
                       "2 and a sequence of 1"):
        spx.import_model(bad)


def test_optionals_known_while_importing():
    """Optional, OptionalHasElement (a constant), OptionalGetElement; an empty optional
    output has no program output and comes back as None."""
    opt_t = helper.make_tensor_type_proto(F, [2])
    nodes = [helper.make_node("Optional", ["x"], ["o"]),
             helper.make_node("Optional", [], ["e"], type=opt_t),
             helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("OptionalHasElement", ["e"], ["has_e"]),
             helper.make_node("OptionalGetElement", ["o"], ["y"])]
    m = model(nodes, [vi("x", F, [2])],
              [vi("has", B, []), vi("has_e", B, []), vi("y", F, [2]),
               helper.make_value_info("e", helper.make_optional_type_proto(opt_t))])
    with spx.import_model(m) as p, p.runtime() as rt:
        x = np.array([1, -2], np.float32)
        got = onnx_values(p, rt(x=x))
        assert list(got) == ["has", "has_e", "y", "e"]
        assert bool(got["has"]) and not bool(got["has_e"]) and got["e"] is None
        np.testing.assert_array_equal(got["y"], x)
    m2 = model([helper.make_node("Optional", [], ["e"], type=opt_t),
                helper.make_node("OptionalGetElement", ["e"], ["y"], name="get")],
               [], [vi("y", F, [2])])
    with pytest.raises(spx.OnnxImportError, match=r"'get' \(OptionalGetElement\): the "
                       r"optional is empty"):
        spx.import_model(m2)


def test_split_to_sequence_of_run_time_sizes():
    """A split of known length whose sizes the data gives: data-dependent pieces, their sum
    checked against the axis; a single run-time size (a length known only at run time) is
    refused."""
    nodes = [helper.make_node("SplitToSequence", ["x", "split"], ["s"], axis=0),
             helper.make_node("SequenceAt", ["s", "one"], ["y"]),
             const("one", np.array(1, np.int64))]
    nodes = [nodes[2], nodes[0], nodes[1]]
    m = model(nodes, [vi("x", F, [5, 2]), vi("split", I64, [2])], [vi("y", F, None)])
    x = rng(5).standard_normal((5, 2)).astype(np.float32)
    compare(m, [{"x": x, "split": np.array(s, np.int64)} for s in ((1, 4), (5, 0), (3, 2))])
    with spx.import_model(m) as p, p.runtime() as rt:
        with pytest.raises(sp.ConstraintViolation, match="split sizes sum to the axis"):
            rt(x=x, split=np.array([1, 1], np.int64))
    m1 = model([helper.make_node("SplitToSequence", ["x", "k"], ["s"], name="cut")],
               [vi("x", F, [6]), vi("k", I64, [])], [seq_vi("s", F, None)])
    with pytest.raises(spx.OnnxImportError, match=r"'cut' \(SplitToSequence\): input 'split' "
                       r"is a single size that the data gives"):
        spx.import_model(m1)


def test_models_run_onnx_takes_and_gives_lists():
    from shapepoly.onnx.models import run_onnx
    nodes = [helper.make_node("SequenceMap", ["xs", "y"], ["out"], body=helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])], "add",
        [vi("a", F, ["N"]), vi("b", F, ["N"])], [vi("c", F, ["N"])]))]
    m = model(nodes, [seq_vi("xs", F, ["N"]), vi("y", F, ["N"])], [seq_vi("out", F, None)])
    xs = [np.arange(3, dtype=np.float32) * k for k in range(4)]
    y = np.ones(3, np.float32)
    with spx.import_model(m, sequences={"xs": 4}) as p:
        got = run_onnx(p, {"xs": xs, "y": y})
        with p.runtime() as rt:
            again = run_onnx(p, {"xs": xs, "y": y}, rt)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]
                                ).run(None, {"xs": xs, "y": y})
    same(got["out"], want[0])
    same(again["out"], want[0])
