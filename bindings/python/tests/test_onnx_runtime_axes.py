"""Axes given as run-time data (graph inputs): reductions with and without keepdims, CumSum,
CumProd, Squeeze, Unsqueeze and OneHot's depth, each imported once and run with several axis
values against onnxruntime; bad axes are a clean ConstraintViolation and the runtime stays
usable."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import shapepoly as sp
from shapepoly import onnx as spx

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(node, inputs, opset=18):
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def compare(m, feeds_list, rtol=1e-5):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with spx.import_model(m) as p, p.runtime() as rt:
        for feeds in feeds_list:
            want = s.run(None, feeds)[0]
            got = rt(**feeds)["y"]
            assert got.shape == want.shape, (feeds.get("axes"), got.shape, want.shape)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


X = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
AXES = [[0], [1], [2], [-1], [0, 2], [2, 0], [1, 2], [0, 1, 2]]


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                                "ReduceLogSumExp"])
@pytest.mark.parametrize("keepdims", [1, 0])
def test_reductions_over_run_time_axes(op, keepdims):
    for k in (1, 2, 3):
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)
        m = model(node, [("x", F, [3, 4, 5]), ("axes", I64, [k])])
        compare(m, [{"x": X, "axes": np.array(a, np.int64)} for a in AXES if len(a) == k],
                rtol=1e-4)


def test_reduction_with_a_symbolic_batch_and_run_time_axes():
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)
    m = model(node, [("x", F, ["N", 4, 5]), ("axes", I64, [1])])
    compare(m, [{"x": X[:n], "axes": np.array([a], np.int64)} for n in (1, 3) for a in (0, 2)])


def test_bad_run_time_axes_are_refused_and_the_runtime_stays_usable():
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1)
    m = model(node, [("x", F, [3, 4, 5]), ("axes", I64, [2])])
    with spx.import_model(m) as p, p.runtime() as rt:
        for bad in ([0, 0], [3, 1], [-4, 0]):
            with pytest.raises(sp.ConstraintViolation, match="distinct and within the rank"):
                rt(x=X, axes=np.array(bad, np.int64))
        np.testing.assert_allclose(rt(x=X, axes=np.array([0, 1], np.int64))["y"],
                                   X.sum((0, 1), keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("attrs", [{}, {"exclusive": 1}, {"reverse": 1},
                                   {"exclusive": 1, "reverse": 1}])
def test_cumsum_and_cumprod_along_a_run_time_axis(attrs):
    for op in ("CumSum", "CumProd"):
        if op == "CumProd" and onnx.defs.onnx_opset_version() < 26:
            continue
        node = helper.make_node(op, ["x", "axis"], ["y"], **attrs)
        m = model(node, [("x", F, [3, 4, 5]), ("axis", I64, [])],
                  opset=18 if op == "CumSum" else 26)
        try:
            compare(m, [{"x": X, "axis": np.array(a, np.int64)} for a in (0, 1, 2, -1)],
                    rtol=1e-4)
        except ort.capi.onnxruntime_pybind11_state.NotImplemented:
            pass  # onnxruntime without CumProd


def test_squeeze_and_unsqueeze_along_run_time_axes():
    x = np.ones((1, 3, 1, 5), np.float32)
    node = helper.make_node("Squeeze", ["x", "axes"], ["y"])
    m = model(node, [("x", F, [1, 3, 1, 5]), ("axes", I64, [1])])
    compare(m, [{"x": x, "axes": np.array([a], np.int64)} for a in (0, 2, -2)])
    with spx.import_model(m) as p, p.runtime() as rt:
        with pytest.raises(sp.ConstraintViolation, match="size 1"):
            rt(x=x, axes=np.array([1], np.int64))
    node = helper.make_node("Unsqueeze", ["x", "axes"], ["y"])
    m = model(node, [("x", F, [3, 4, 5]), ("axes", I64, [2])])
    compare(m, [{"x": X, "axes": np.array(a, np.int64)} for a in ([0, 1], [0, 4], [-1, 1],
                                                                   [3, 2])])


def test_one_hot_of_a_run_time_depth():
    node = helper.make_node("OneHot", ["i", "depth", "v"], ["y"], axis=-1)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("i", I64, [4]),
                                        helper.make_tensor_value_info("depth", I64, []),
                                        helper.make_tensor_value_info("v", F, [2])],
                          [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 8
    i = np.array([0, 2, -1, 5], np.int64)
    v = np.array([0, 1], np.float32)
    compare(m, [{"i": i, "depth": np.array(d, np.int64), "v": v} for d in (3, 6, 1)])
