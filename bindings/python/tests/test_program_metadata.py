"""Program metadata (string pairs saved with the program): Program.metadata / with_metadata,
saved and loaded, kept by transformations; an imported ONNX model's names and types saved with
it (onnx_names, onnx_types, to_onnx_outputs and to_program_inputs on a loaded program)."""

import json

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

import shapepoly as sp
from shapepoly import onnx as spx


def small():
    s = sp.Scope()
    x = s.input("x", sp.F32, "(n, 3)")
    w = s.input("w", sp.F32, "(3,)")
    return sp.Program.create(s, [x, w], {"y": (x * w).sum()})


def test_set_read_save_load():
    p = small()
    assert dict(p.metadata) == {}
    q = p.with_metadata({"b": "2", "onnx.names": "{}"}, a="\u00e9\n")
    assert dict(p.metadata) == {}  # programs are immutable
    assert list(q.metadata) == ["a", "b", "onnx.names"]  # increasing key order
    assert q.metadata["a"] == "\u00e9\n"
    with pytest.raises(TypeError):
        q.metadata["c"] = "3"  # read-only
    data = q.serialize()
    assert data == p.with_metadata(a="\u00e9\n").with_metadata(**{"onnx.names": "{}"}, b="2") \
        .serialize()  # canonical bytes
    loaded = sp.loads(data)
    assert dict(loaded.metadata) == dict(q.metadata)
    assert loaded.serialize() == data
    r = loaded.with_metadata(a=None, b="x", missing=None)
    assert dict(r.metadata) == {"b": "x", "onnx.names": "{}"}
    assert p.with_metadata().serialize() == p.serialize()  # nothing set: an equal copy
    assert r.with_metadata(b=None, **{"onnx.names": None}).serialize() == p.serialize()


def test_runs_and_transformations_keep_it(tmp_path):
    q = small().with_metadata(k="v")
    path = tmp_path / "m.shpoly"
    q.save(path)
    loaded = sp.load(path)
    assert dict(loaded.metadata) == {"k": "v"}
    for t in (loaded.jvp(["x"]), loaded.vjp(["y"], ["x"]), loaded.grad("y", ["x"]),
              loaded.vmap([0, None])):
        assert dict(t.metadata) == {"k": "v"}
        assert dict(sp.loads(t.serialize()).metadata) == {"k": "v"}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.array([1, 2, 3], np.float32)
    with loaded.runtime() as rt:
        np.testing.assert_allclose(rt(x=x, w=w)["y"], (x * w).sum())


def test_errors_name_the_key_and_the_limit():
    p = small()
    with pytest.raises(sp.InvalidArgument, match="key must not be empty"):
        p.with_metadata({"": "v"})
    with pytest.raises(sp.InvalidArgument, match="has 257 bytes, above the limit of 256"):
        p.with_metadata({"k" * 257: "v"})
    with pytest.raises(sp.InvalidArgument, match="control character 9"):
        p.with_metadata({"a\tb": "v"})
    with pytest.raises(sp.InvalidArgument, match="above the limit of 1048576"):
        p.with_metadata(k="v" * ((1 << 20) + 1))
    with pytest.raises(sp.InvalidArgument, match="value of 'k' contains NUL"):
        p.with_metadata(k="a\0b")
    with pytest.raises(sp.InvalidArgument, match="not UTF-8"):
        p.with_metadata(k="\ud800")
    with pytest.raises(TypeError, match="not a str"):
        p.with_metadata(k=3)
    assert dict(p.metadata) == {}


# ---- ONNX names and types saved with the program ---------------------------------------

def dotted_model():
    """Outputs 'y.z' (twice) and 'y_z' (twice), a float8 output and a dotted input name."""
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["in.x"], ["y.z"]),
             helper.make_node("Neg", ["in.x"], ["y_z"]),
             helper.make_node("Cast", ["in.x"], ["f8"], to=TensorProto.FLOAT8E4M3FN)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("in.x", F, ["n"])],
                          [helper.make_tensor_value_info(n, t, None)
                           for n, t in (("y.z", F), ("y_z", F), ("y.z", F), ("y_z", F),
                                        ("f8", TensorProto.FLOAT8E4M3FN))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])


NAMES = {"inputs": {"in_x": "in.x"},
         "outputs": {"y_z": "y.z", "y_z_2": "y_z", "y_z_3": "y.z", "y_z_4": "y_z", "f8": "f8"}}
TYPES = {"inputs": {"in_x": "FLOAT"},
         "outputs": {"y_z": "FLOAT", "y_z_2": "FLOAT", "y_z_3": "FLOAT", "y_z_4": "FLOAT",
                     "f8": "FLOAT8E4M3FN"}}


def test_onnx_names_and_types_survive_save_and_load(tmp_path):
    with spx.import_model(dotted_model()) as p:
        assert p.onnx_names == NAMES
        assert p.onnx_types == TYPES
        assert json.loads(p.metadata["onnx.names"]) == NAMES
        path = tmp_path / "model.shpoly"
        p.save(path)
    loaded = sp.load(path)  # a fresh object, nothing but the file
    assert loaded.onnx_names == NAMES
    assert loaded.onnx_types == TYPES
    assert list(loaded.onnx_names["outputs"]) == list(NAMES["outputs"])  # the model's order
    x = np.array([-1.5, 0, 2, 448], np.float32)
    with loaded.runtime() as rt:
        out = spx.to_onnx_outputs(loaded, rt(**spx.to_program_inputs(loaded, {"in_x": x})))
    assert out["f8"].dtype == ml_dtypes.float8_e4m3fn
    np.testing.assert_array_equal(out["f8"].astype(np.float32),
                                  x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32))
    for name, onnx_name in loaded.onnx_names["outputs"].items():
        if name != "f8":
            want = np.maximum(x, 0) if onnx_name == "y.z" else -x
            np.testing.assert_array_equal(out[name], want)


def test_float8_input_converted_on_a_loaded_program():
    F8 = TensorProto.FLOAT8E4M3FN
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], "g",
                          [helper.make_tensor_value_info("x", F8, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    with spx.import_model(m) as p:
        loaded = sp.loads(p.serialize())
    x = np.array([0.5, -2.0, 448.0], np.float32).astype(ml_dtypes.float8_e4m3fn)
    with loaded.runtime() as rt:
        y = rt(**spx.to_program_inputs(loaded, {"x": x}))["y"]
    np.testing.assert_array_equal(y, x.astype(np.float32))


def test_programs_without_onnx_metadata():
    p = small()
    assert p.onnx_names is None and p.onnx_types is None
    x = {"x": np.ones((2, 3), np.float32)}
    assert spx.to_program_inputs(p, x) == x


@pytest.mark.parametrize("text, what", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "is not an object"),
    ('{"inputs": {}}', "is not an object"),
    ('{"inputs": {"x": 1}, "outputs": {}}', "is not an object"),
    ("[" * 100000 + "]" * 100000, "is not valid JSON"),
])
def test_hostile_onnx_metadata_gives_a_clear_error(text, what):
    with spx.import_model(dotted_model()) as p:
        bad = sp.loads(p.with_metadata(**{"onnx.names": text, "onnx.types": text}).serialize())
    for attr in ("onnx_names", "onnx_types"):
        with pytest.raises(sp.InvalidProgram, match="metadata 'onnx.%s' %s" % (attr[5:], what)):
            getattr(bad, attr)
    with pytest.raises(sp.InvalidProgram, match="onnx.types"):
        spx.to_onnx_outputs(bad, {})
