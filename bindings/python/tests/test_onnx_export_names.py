"""Export of an imported program under its original ONNX names (metadata "onnx.names"):
inputs, outputs and initializers get their ONNX names back, onnxruntime runs the exported model
under them, and importing it again gives the same program names."""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapepoly as sp
from shapepoly import onnx as spx

from conftest import REPO


def session(model):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def dotted_model(with_loop=False):
    """x.in [n, 3] @ w.0 [3, 4] + b -> relu as 'y.z', negation as 'y_z' (a name that collides
    once sanitized), the relu listed a second time, and (with_loop) an If reading x.in from
    its branches by name."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "w.0")
    nodes = [helper.make_node("MatMul", ["x.in", "w.0"], ["h"]),
             helper.make_node("Relu", ["h"], ["y.z"]),
             helper.make_node("Neg", ["h"], ["y_z"])]
    outputs = [helper.make_tensor_value_info("y.z", TensorProto.FLOAT, ["n", 4]),
               helper.make_tensor_value_info("y_z", TensorProto.FLOAT, ["n", 4]),
               helper.make_tensor_value_info("y.z", TensorProto.FLOAT, ["n", 4])]
    inputs = [helper.make_tensor_value_info("x.in", TensorProto.FLOAT, ["n", 3])]
    if with_loop:
        then = helper.make_graph([helper.make_node("Abs", ["x.in"], ["t"])], "then", [],
                                 [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
        other = helper.make_graph([helper.make_node("Neg", ["x.in"], ["e"])], "else", [],
                                  [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
        nodes += [helper.make_node("ReduceSum", ["x.in"], ["s"], keepdims=0),
                  helper.make_node("Greater", ["s", "zero"], ["c"]),
                  helper.make_node("If", ["c"], ["k.out"], then_branch=then, else_branch=other)]
        zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
        outputs.append(helper.make_tensor_value_info("k.out", TensorProto.FLOAT, ["n", 3]))
        inits = [w, zero]
    else:
        inits = [w]
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("parameters", [False, True])
@pytest.mark.parametrize("with_loop", [False, True])
def test_export_restores_onnx_names(parameters, with_loop):
    model = dotted_model(with_loop)
    p = spx.import_model(model, parameters=parameters)
    assert "y_z_2" in p.output_names  # the program's names differ from the model's
    out = spx.export_model(p)
    onnx.checker.check_model(out)
    g = out.graph
    params = (["w.0"] + (["zero"] if with_loop else [])) if parameters else []
    assert [i.name for i in g.input] == ["x.in"] + params
    assert [i.name for i in g.initializer] == params
    # 'y.z' once (the second listing keeps its program name: two outputs cannot share one),
    # 'y_z' as the model had it.
    names = [o.name for o in g.output]
    assert names[:3] == ["y.z", "y_z", "y_z_3"], names
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    got = dict(zip(names, session(out).run(None, {"x.in": x})))
    want = dict(zip(p.output_names, p.runtime()(x_in=x).values()))
    np.testing.assert_allclose(got["y.z"], want["y_z"], rtol=1e-6)
    np.testing.assert_allclose(got["y_z"], want["y_z_2"], rtol=1e-6)
    np.testing.assert_allclose(got["y_z_3"], want["y_z_3"], rtol=1e-6)
    if with_loop:
        np.testing.assert_allclose(got["k.out"], want["k_out"], rtol=1e-6)
    # Imported again: the same program names, every ONNX name recoverable.
    q = spx.import_model(out, parameters=parameters)
    assert q.input_names == p.input_names
    assert q.output_names[:2] == p.output_names[:2]
    assert q.onnx_names["inputs"]["x_in"] == "x.in"
    assert q.onnx_names["outputs"]["y_z"] == "y.z"


def test_export_keeps_program_names_when_asked_or_not_imported():
    p = spx.import_model(dotted_model(), parameters=False)
    out = spx.export_model(p, onnx_names=False)
    assert [i.name for i in out.graph.input] == ["x_in"]
    assert [o.name for o in out.graph.output] == list(p.output_names)
    s = sp.Scope()
    x = s.input("x", sp.F32, ["n"])
    traced = s.program([x], {"y": x * 2})
    out = spx.export_model(traced)
    assert [i.name for i in out.graph.input] == ["x"]
    assert [o.name for o in out.graph.output] == ["y"]


def test_saved_and_loaded_program_exports_under_onnx_names(tmp_path):
    p = spx.import_model(dotted_model(), parameters=True)
    path = tmp_path / "m.shpoly"
    p.save(str(path))
    out = spx.export_model(str(path))
    assert [i.name for i in out.graph.input] == ["x.in", "w.0"]
    assert out.graph.output[0].name == "y.z"
    # The metadata keyed by input name follows the rename (the importer reads it back).
    props = {m.key: m.value for m in out.metadata_props}
    assert '"x.in"' in props["shapepoly.input_roles"]


def test_command_line_export_names(tmp_path):
    p = spx.import_model(dotted_model(), parameters=False)
    p.save(str(tmp_path / "m.shpoly"))
    launcher = os.path.join(REPO, "tools", "onnx", "shapepoly-onnx")
    for flag, name in (([], "x.in"), (["--program-names"], "x_in")):
        out = tmp_path / "m.onnx"
        r = subprocess.run([sys.executable, launcher, "export", str(tmp_path / "m.shpoly"),
                            "-o", str(out)] + flag, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert onnx.load(str(out)).graph.input[0].name == name
