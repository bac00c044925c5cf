"""Conformance against the test data the onnx wheel ships (onnx/backend/test/data: node,
pytorch-converted, pytorch-operator, simple, light; the onnx 1.23 wheel has no `node` folder).
Every case whose ops all have a converter is imported, run on each stored data set and
compared with the stored outputs at onnx's backend-test tolerances (rtol 1e-3, atol 1e-7).
The others are skipped with their reason (the unsupported op, or a shape computed from run-time
data); the summary line gives the counts and the skipped ops."""

import collections
import glob
import os

import numpy as np
import onnx
from onnx import numpy_helper

import shapepoly as sp
from shapepoly import onnx as spx

DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple", "light")
RTOL, ATOL = 1e-3, 1e-7


def cases():
    """(name, model path, [(inputs, outputs)]) of every case."""
    out = []
    for suite in SUITES:
        for d in sorted(glob.glob(os.path.join(DATA, suite, "*"))):
            if os.path.isdir(d):
                sets = []
                for ds in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
                    load = lambda pat: [numpy_helper.to_array(onnx.load_tensor(f))  # noqa: E731
                                        for f in sorted(glob.glob(os.path.join(ds, pat)))]
                    sets.append((load("input_*.pb"), load("output_*.pb")))
                out.append(("%s/%s" % (suite, os.path.basename(d)),
                            os.path.join(d, "model.onnx"), sets))
            elif d.endswith(".onnx"):
                out.append(("%s/%s" % (suite, os.path.basename(d)), d, light_data(d)))
    return out


def light_data(path):
    """A light model's one data set: the inputs onnx's runner makes (arange / size, not
    random) and the stored reference outputs <model>_output_<i>.pb."""
    from onnx.backend.test.runner import Runner
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    inputs = [Runner.generate_dummy_data(x, seed=0, name=path, random=False)
              for x in m.graph.input if x.name not in inits]
    outputs = [numpy_helper.to_array(onnx.load_tensor("%s_output_%d.pb" % (path[:-5], i)))
               for i in range(len(m.graph.output))]
    return [(inputs, outputs)]


def run_case(path, sets, **kw):
    """None when every data set matches; else the first mismatch. `kw` goes to import_model."""
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    names = [i.name.replace(".", "_") for i in m.graph.input if i.name not in inits]
    with spx.import_model(m, **kw) as program, program.runtime() as rt:
        for k, (inputs, outputs) in enumerate(sets):
            got = rt(**dict(zip(names, inputs)))
            for (name, g), w in zip(got.items(), outputs):
                if g.shape != w.shape:
                    return "data set %d output %s: shape %s, expected %s" % (k, name, g.shape,
                                                                               w.shape)
                if not np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True):
                    return "data set %d output %s: max error %g" % (
                        k, name, float(np.max(np.abs(g.astype(np.float64) - w))))
    return None


def test_onnx_conformance(capsys):
    passed, failed, skipped = [], [], []
    reasons = collections.Counter()
    for name, path, sets in cases():
        try:
            err = run_case(path, sets)
        except spx.UnsupportedOps as e:
            skipped.append(name)
            reasons.update(e.ops.keys())
            continue
        except spx.RuntimeShape:
            skipped.append(name)
            reasons["run-time shape"] += 1
            continue
        except Exception as e:  # an import or run error on a supported case is a failure
            err = "%s: %s" % (type(e).__name__, e)
        (failed if err else passed).append((name, err))
    # The same cases with axis 0 of every input made symbolic (--dynamic batch). Models whose
    # inputs do not share a batch axis (a (2, 3) + (3,) broadcast, a reshape to a fixed size)
    # are refused with an error naming the node; the others must still match.
    symbolic, refused = [], []
    for name, path, sets in cases():
        if name not in [p for p, _ in passed]:
            continue
        try:
            err = run_case(path, sets, dynamic="batch")
        except (spx.OnnxImportError, sp.ShapeMismatch) as e:
            assert "ONNX node" in str(e) or "batch" in str(e), e
            refused.append(name)
            continue
        assert err is None, (name, err)
        symbolic.append(name)
    summary = ", ".join("%s %d" % (op, n) for op, n in reasons.most_common())
    with capsys.disabled():
        print("\nonnx-conformance: %d passed, %d failed, %d skipped (unsupported op: %s)" %
              (len(passed), len(failed), len(skipped), summary))
        print("onnx-conformance with a symbolic batch: %d of the %d passed cases match, %d "
              "refused (no common batch axis)" % (len(symbolic), len(passed), len(refused)))
        for name, err in failed:
            print("  FAILED %s: %s" % (name, err))
    assert not failed, failed
    assert len(symbolic) >= 55
    # The cases the op set covers today, so that a regression cannot hide as a skip.
    assert len(passed) >= 70
    for must in ("pytorch-converted/test_Linear", "pytorch-converted/test_Softmax",
                 "pytorch-converted/test_PReLU_2d_multiparam",
                 "pytorch-operator/test_operator_view", "pytorch-operator/test_operator_chunk",
                 "simple/test_single_relu_model"):
        assert must in [p for p, _ in passed], must
