"""Models written by real exporters (tests/exporter_zoo: PyTorch's TorchScript and torch.export
ONNX exporters, tiny Hugging Face transformers through torch.export, jax2onnx from JAX and Flax;
made by tools/exporter_zoo/*_models.py), each with
symbolic batch and sequence or spatial axes. Each is imported once and run at the sizes of its
manifest's rounds; every output must match onnxruntime's: max|ours - ort| <= tol * max(1,
max|ort|) (tol from the manifest: 1e-4, or 1e-3 where the model takes a square root of a
cancellation), integers and shapes exactly."""

import glob
import json
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from shapepoly import onnx as spx

from conftest import REPO

ZOO = os.path.join(REPO, "tests", "exporter_zoo")
MODELS = sorted(os.path.relpath(p, ZOO)[:-len(".onnx")]
                for p in glob.glob(os.path.join(ZOO, "*", "*.onnx")))


# Models not imported yet, and why.
KNOWN_GAPS = {"torch_dynamo/unbind_stack": "SplitToSequence over an axis of symbolic size "
                                           "min(s27, 3): a sequence of a length known only at "
                                           "run time"}


def test_the_zoo_is_there():
    folders = {m.split("/")[0] for m in MODELS}
    assert folders == {"torch_script", "torch_dynamo", "jax2onnx", "transformers"}, folders
    assert len(MODELS) >= 100


def feeds_for(sess, manifest, k, rng):
    lo, hi = manifest["int_range"]
    feeds = {}
    for inp, shape, dtype in zip(sess.get_inputs(), manifest["rounds"][k], manifest["dtypes"]):
        if dtype.startswith("int"):
            feeds[inp.name] = rng.integers(lo, hi, shape).astype(dtype)
        else:
            feeds[inp.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


@pytest.mark.parametrize("name", [pytest.param(m, marks=pytest.mark.xfail(
    reason=KNOWN_GAPS[m], raises=spx.OnnxImportError, strict=True)) if m in KNOWN_GAPS else m
    for m in MODELS])
def test_exported_model_matches_onnxruntime(name):
    path = os.path.join(ZOO, name + ".onnx")
    with open(path[:-len(".onnx")] + ".json") as f:
        manifest = json.load(f)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    with spx.import_model(onnx.load(path)) as p, p.runtime() as rt:
        program_name = {v: k for k, v in p.onnx_names["inputs"].items()}
        # The sizes vary: the program must keep the exporter's symbolic axes.
        assert any(any(c.isalpha() for c in i.shape) for i in p.inputs), name
        for k in range(len(manifest["rounds"])):
            feeds = feeds_for(sess, manifest, k, rng)
            want = sess.run(None, feeds)
            got = rt(**{program_name[n]: a for n, a in feeds.items()})
            got = [got[o] for o in p.onnx_names["outputs"]]
            assert len(got) == len(want)
            for j, (g, w) in enumerate(zip(got, want)):
                g = np.asarray(g)
                what = "%s round %d output %d" % (name, k, j)
                assert g.shape == w.shape, (what, g.shape, w.shape)
                if w.dtype.kind != "f":
                    np.testing.assert_array_equal(g, w, err_msg=what)
                elif w.size:
                    scale = max(1.0, float(np.max(np.abs(w[np.isfinite(w)]), initial=0)))
                    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
                    err = float(np.max(np.abs(np.where(np.isnan(w), 0, g - w)), initial=0))
                    assert err <= manifest["tol"] * scale, (what, err, scale)
