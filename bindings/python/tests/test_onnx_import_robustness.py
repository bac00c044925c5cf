"""The ONNX importer as today's exporters and hostile files meet it: opsets past 24, model-local
functions, ops defined by function bodies, outputs that must not be lost, constant folding
caps, and every failure an OnnxImportError (the CLI: one line, exit 2)."""

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from shapepoly import onnx as spx

F = TensorProto.FLOAT
HERE = os.path.dirname(os.path.abspath(__file__))


def model(nodes, inputs, outputs, inits=(), opset=18, functions=(), extra_opsets=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, v) for d, v in extra_opsets], functions=list(functions))
    m.ir_version = 10
    return m


def ort_run(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def run(m, feeds, **kw):
    with spx.import_model(m, **kw) as p, p.runtime() as rt:
        return list(rt(**feeds).values()), p.onnx_names


# ---- Opsets -----------------------------------------------------------------------------

def test_newer_opsets_import_when_the_ops_did_not_change():
    """Relu, MatMul, Softmax at opsets 22..28: their newer versions only add element types."""
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    for opset in range(18, onnx.defs.onnx_opset_version() + 1):
        nodes = [helper.make_node("Relu", ["x"], ["r"]),
                 helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
        got, _ = run(model(nodes, [("x", F, ["N", 3])], [("y", F, None)], opset=opset),
                     {"x": x})
        r = np.maximum(x, 0)
        e = np.exp(r - r.max(-1, keepdims=True))
        np.testing.assert_allclose(got[0], e / e.sum(-1, keepdims=True), rtol=1e-6)


def test_an_op_that_changed_after_24_is_refused_naming_it():
    newest = onnx.defs.onnx_opset_version()
    s = onnx.defs.get_schema("Range", newest, "")
    if s.since_version <= 24 or "stash_type" not in s.attributes:
        pytest.skip("this onnx has no Range newer than opset 24 with a stash_type")
    ins = [("start", F, []), ("limit", F, []), ("delta", F, [])]
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="r",
                            stash_type=TensorProto.DOUBLE)
    m = model([node], ins, [("y", F, None)], opset=newest)
    with pytest.raises(spx.OnnxImportError, match="'r' \\(Range\\): Range changed at opset "
                       "%d .*stash_type.*re-export the model at opset 24" % s.since_version):
        spx.import_model(m)
    # Left at its default, the attribute keeps opset 24's meaning: imported.
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="r")
    m = model([node], ins, [("y", F, None)], opset=newest)
    with spx.import_model(m) as p, p.runtime() as rt:
        got = rt(start=np.float32(1), limit=np.float32(4), delta=np.float32(1))["y"]
    np.testing.assert_array_equal(got, [1, 2, 3])


def test_space_to_depth_crd_of_opset_28():
    """SpaceToDepth gained a CRD mode at opset 28: read as such (against its definition)."""
    if onnx.defs.get_schema("SpaceToDepth", onnx.defs.onnx_opset_version(), "").since_version < 28:
        pytest.skip("this onnx has no SpaceToDepth of opset 28")
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    for mode in ("DCR", "CRD"):
        node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode=mode)
        m = model([node], [("x", F, ["N", 3, 4, 6])], [("y", F, None)], opset=28)
        t = x.reshape(2, 3, 2, 2, 3, 2)  # n, c, h', i, w', j
        want = (t.transpose(0, 3, 5, 1, 2, 4) if mode == "DCR" else
                t.transpose(0, 1, 3, 5, 2, 4)).reshape(2, 12, 2, 3)
        got, _ = run(m, {"x": x})
        np.testing.assert_array_equal(got[0], want)


# ---- Functions --------------------------------------------------------------------------

def _scaled_tanh_function(domain="custom.ScaledTanh.1", opset=13):
    """y = alpha * tanh(x) + bias, alpha an attribute reference (default 2.0)."""
    alpha = helper.make_node("Constant", [], ["a"], value_float=0.0)
    alpha.attribute[0].ref_attr_name = "alpha"
    alpha.attribute[0].name = "value_float"
    return helper.make_function(
        domain, "ScaledTanh", ["x", "bias"], ["y"],
        [alpha, helper.make_node("Tanh", ["x"], ["t"]),
         helper.make_node("Mul", ["t", "a"], ["m"]), helper.make_node("Add", ["m", "bias"], ["y"])],
        [helper.make_opsetid("", opset)], attributes=[],
        attribute_protos=[helper.make_attribute("alpha", 2.0)])


def _outer_function():
    """Outer(x, b) = ScaledTanh(ScaledTanh(x, b; alpha=0.5), b): a function calling a function,
    at another opset than the model's."""
    return helper.make_function(
        "custom.Outer.1", "Outer", ["x", "b"], ["y"],
        [helper.make_node("ScaledTanh", ["x", "b"], ["h"], domain="custom.ScaledTanh.1",
                          alpha=0.5),
         helper.make_node("ScaledTanh", ["h", "b"], ["y"], domain="custom.ScaledTanh.1")],
        [helper.make_opsetid("", 15), helper.make_opsetid("custom.ScaledTanh.1", 1)])


def test_model_local_functions_are_inlined():
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    b = np.float32(0.25)
    nodes = [helper.make_node("Outer", ["x", "bias"], ["y"], domain="custom.Outer.1"),
             helper.make_node("ScaledTanh", ["x", "bias"], ["z"], domain="custom.ScaledTanh.1",
                              alpha=3.0)]
    m = model(nodes, [("x", F, ["batch", 4])], [("y", F, None), ("z", F, None)],
              inits=[("bias", np.array(b))], opset=18,
              functions=[_scaled_tanh_function(), _outer_function()],
              extra_opsets=[("custom.Outer.1", 1), ("custom.ScaledTanh.1", 1)])
    want = ort_run(m, {"x": x})
    got, _ = run(m, {"x": x})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    h = 0.5 * np.tanh(x) + b
    np.testing.assert_allclose(got[0], 2.0 * np.tanh(h) + b, rtol=1e-6)
    x5 = np.ones((5, 4), np.float32)  # the batch stays symbolic through the bodies
    np.testing.assert_allclose(run(m, {"x": x5})[0][1], 3.0 * np.tanh(x5) + b, rtol=1e-6)


def test_a_recursive_function_is_refused():
    f = helper.make_function("rec", "Loop1", ["x"], ["y"],
                             [helper.make_node("Loop1", ["x"], ["y"], domain="rec")],
                             [helper.make_opsetid("", 18), helper.make_opsetid("rec", 1)])
    m = model([helper.make_node("Loop1", ["x"], ["y"], domain="rec", name="r")],
              [("x", F, [2])], [("y", F, None)], functions=[f], extra_opsets=[("rec", 1)])
    with pytest.raises(spx.OnnxImportError, match="nested more than 32 deep"):
        spx.import_model(m)


def test_ops_with_function_bodies_match_onnxruntime():
    """Gelu (opset 20), MeanVarianceNormalization, Swish-free composites: their ONNX function
    bodies are imported when no converter exists."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    cases = [
        ([helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")], 20),
        ([helper.make_node("Gelu", ["x"], ["y"])], 20),
        ([helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2, 3])], 18),
    ]
    for nodes, opset in cases:
        m = model(nodes, [("x", F, ["N", 3, 4, 5])], [("y", F, None)], opset=opset)
        want = ort_run(m, {"x": x})[0]
        np.testing.assert_allclose(run(m, {"x": x})[0][0], want, rtol=1e-4, atol=1e-5)


# ---- Outputs and names ------------------------------------------------------------------

def test_no_output_is_lost():
    """The same tensor listed twice, and 'y.z' next to 'y_z': four program outputs."""
    nodes = [helper.make_node("Relu", ["x"], ["y.z"]), helper.make_node("Neg", ["x"], ["y_z"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [3])],
                          [helper.make_tensor_value_info(n, F, None)
                           for n in ("y.z", "y_z", "y.z", "y_z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([-1, 0, 2], np.float32)
    with spx.import_model(m) as p, p.runtime() as rt:
        out = rt(x=x)
        assert list(out) == ["y_z", "y_z_2", "y_z_3", "y_z_4"]
        assert p.onnx_names["outputs"] == {"y_z": "y.z", "y_z_2": "y_z", "y_z_3": "y.z",
                                           "y_z_4": "y_z"}
        for name, v in out.items():
            want = np.maximum(x, 0) if p.onnx_names["outputs"][name] == "y.z" else -x
            np.testing.assert_array_equal(v, want)


def test_duplicate_initializers_and_doubly_written_values_are_refused():
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", F, [2])], [("y", F, None)],
              inits=[("w", np.ones(2, np.float32)), ("w", np.zeros(2, np.float32))])
    with pytest.raises(spx.OnnxImportError, match="initializer 'w' is given twice"):
        spx.import_model(m)
    m = model([helper.make_node("Relu", ["x"], ["y"], name="a"),
               helper.make_node("Neg", ["x"], ["y"], name="b")],
              [("x", F, [2])], [("y", F, None)])
    with pytest.raises(spx.OnnxImportError, match="'b' \\(Neg\\) writes 'y', which node 'a' "
                       "\\(Relu\\) already defines"):
        spx.import_model(m)
    m = model([helper.make_node("Relu", ["x"], ["x"], name="self")], [("x", F, [2])],
              [("x", F, None)])
    with pytest.raises(spx.OnnxImportError, match="which graph input already defines"):
        spx.import_model(m)


# ---- Limits and hostile input -----------------------------------------------------------

def test_constant_folding_is_capped():
    """A 171-byte model: ConstantOfShape [40000, 40000] -> ReduceSum. Over the cap it becomes
    program ops (no host memory at import); a run at that size is the user's choice."""
    shape = numpy_helper.from_array(np.array([40000, 40000], np.int64), "s")
    nodes = [helper.make_node("Constant", [], ["s"], value=shape),
             helper.make_node("ConstantOfShape", ["s"], ["c"],
                              value=numpy_helper.from_array(np.array([1.0], np.float32))),
             helper.make_node("ReduceSum", ["c"], ["y"], keepdims=0)]
    m = model(nodes, [], [("y", F, None)])
    with spx.import_model(m) as p:  # fast and small: nothing evaluated on the host
        assert len(p.outputs) == 1
    # Under a cap that allows it, a small one is folded to a constant.
    shape2 = numpy_helper.from_array(np.array([3, 4], np.int64), "s")
    nodes[0] = helper.make_node("Constant", [], ["s"], value=shape2)
    got, _ = run(model(nodes, [], [("y", F, None)]), {}, max_fold_elements=100)
    assert float(got[0]) == 12.0
    got, _ = run(model(nodes, [], [("y", F, None)]), {}, max_fold_elements=5)
    assert float(got[0]) == 12.0  # traced instead of folded: the same value
    with pytest.raises(spx.OnnxImportError, match="max_fold_elements must be an int"):
        spx.import_model(m, max_fold_elements=-1)


def _meta(m, key, value):
    p = m.metadata_props.add()
    p.key, p.value = key, value
    return m


def test_hostile_attributes_and_metadata_are_import_errors():
    base = lambda: model([helper.make_node("Relu", ["x"], ["y"])],  # noqa: E731
                         [("x", F, [2])], [("y", F, None)])
    bad = [
        (model([helper.make_node("Cast", ["x"], ["y"], to=999, name="c")], [("x", F, [2])],
               [("y", F, None)]), "Cast\\(to=999\\)"),
        (_meta(base(), "shapepoly.variables", "{not json"),
         "metadata 'shapepoly.variables' is not valid JSON"),
        (_meta(base(), "shapepoly.variables", json.dumps([{"name": "n", "declared": True,
                                                            "min": "x", "max": 3}])),
         "metadata 'shapepoly.variables' does not have the form"),
        (_meta(base(), "shapepoly.constraints", json.dumps(5)),
         "metadata 'shapepoly.constraints' does not have the form"),
        (_meta(base(), "shapepoly.guards", "[" * 100000 + "]" * 100000),
         "metadata 'shapepoly.guards' is not valid JSON"),
        (_meta(base(), "shapepoly.guards", json.dumps([{"text": 5}])),
         "metadata 'shapepoly.guards' does not have the form"),
    ]
    for m, match in bad:
        with pytest.raises(spx.OnnxImportError, match=match):
            spx.import_model(m)


def test_command_line_failures_are_one_line_and_exit_2(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    cases = []
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x99\xff\xff not a model")
    cases.append(str(garbage))
    hostile = tmp_path / "hostile.onnx"
    onnx.save(_meta(model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2])],
                          [("y", F, None)]), "shapepoly.variables", "{not json"), str(hostile))
    cases.append(str(hostile))
    unsupported = tmp_path / "unsupported.onnx"
    onnx.save(model([helper.make_node("StringNormalizer", ["x"], ["y"], name="sn")],
                    [("x", F, [2])], [("y", F, None)]), str(unsupported))
    cases.append(str(unsupported))
    for path in cases:
        r = subprocess.run([sys.executable, "-m", "shapepoly.onnx", "import", path, "-o",
                            str(tmp_path / "out.shpoly")], capture_output=True, text=True,
                           env=env, timeout=120)
        assert r.returncode == 2, (path, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith("shapepoly-onnx: "), r.stderr


def test_unsupported_ops_say_what_to_do():
    def refused(op, domain="", opset=18):
        node = helper.make_node(op, ["x"], ["y"], domain=domain, name="n1")
        extra = [(domain, 1)] if domain else []
        m = model([node], [("x", F, [2])], [("y", F, None)], opset=opset, extra_opsets=extra)
        with pytest.raises(spx.UnsupportedOps) as e:
            spx.import_model(m)
        return str(e.value)
    assert "no string element type" in refused("StringNormalizer")
    assert "deterministic" in refused("RandomUniformLike")
    assert "model-local function" in refused("Foo", "custom.x")
    assert "Gelu first appears at opset 20 but the model declares opset 19" in refused(
        "Gelu", opset=19)
    assert "reinterpret" in refused("BitCast")
