"""Conformance against the test data the onnx wheel ships (onnx/backend/test/data: node,
pytorch-converted, pytorch-operator, simple, light; the onnx 1.23 wheel has no `node` folder).
Every case whose ops all have a converter is imported, run on each stored data set and
compared with the stored outputs at onnx's backend-test tolerances (rtol 1e-3, atol 1e-7).
The others are skipped with their reason (the unsupported op, or a shape computed from run-time
data); the summary line gives the counts and the skipped ops.

The light models' reference outputs are the uniform softmax of constant-filled weights, so
test_light_models also gives them seeded random weights and compares with onnxruntime on the
same model, imported once with symbolic batch, height and width and run at the reference
shape and two others (SHAPEPOLY_SKIP_LIGHT=1 skips that part, the slowest of the file)."""

import collections
import glob
import json
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import shapepoly as sp
from shapepoly import onnx as spx
from shapepoly.onnx import models

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
                    def load(pat, ds=ds):
                        return [numpy_helper.to_array(onnx.load_tensor(f))
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
    if any(0 in np.shape(a) for inputs, _ in sets for a in inputs):
        # A data set with an empty axis: the model's dim_params may be 0 (the importer makes
        # them >= 1 unless declared; this declares them as export's metadata would).
        params = sorted({d.dim_param for i in m.graph.input for d in
                         i.type.tensor_type.shape.dim if d.dim_param})
        onnx.helper.set_model_props(m, {"shapepoly.variables": json.dumps(
            [{"name": n, "min": 0, "max": 1 << 40, "declared": True} for n in params])})
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
        if name not in [p for p, _ in passed] or name.startswith("light/"):
            continue  # the light models: test_light_models makes all their sizes symbolic
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
    assert len([p for p, _ in passed if p.startswith("light/")]) == len(models.LIGHT)
    # The cases the op set covers today, so that a regression cannot hide as a skip.
    assert len(passed) >= 70
    for must in ("pytorch-converted/test_Linear", "pytorch-converted/test_Softmax",
                 "pytorch-converted/test_PReLU_2d_multiparam",
                 "pytorch-operator/test_operator_view", "pytorch-operator/test_operator_chunk",
                 "simple/test_single_relu_model"):
        assert must in [p for p, _ in passed], must


# The light models at the reference shape (1, 3, 224, 224) and two others. The networks with
# fully connected layers (AlexNet, ZFNet, VGG) need the last feature map at its reference size,
# which other image sizes give too (floordiv: 224..231 for AlexNet, 224..255 for VGG); the
# others end with a global pooling and take any size.
LIGHT_SHAPES = {
    "bvlc_alexnet": [(2, 3, 227, 227), (1, 3, 235, 231)],
    "zfnet512": [(2, 3, 227, 227), (1, 3, 235, 231)],
    "vgg19": [(2, 3, 224, 224), (1, 3, 255, 232)],
}
OTHER_SHAPES = [(1, 3, 96, 128), (2, 3, 64, 64)]
LIGHT_RTOL = 1e-3  # max |ours - ort| relative to max |ort| of each output


def light_case(name):
    """(randomized model, the same with dynamic inputs and its logits as outputs, input
    name, output names, shapes to run)."""
    m = models.randomize_weights(models.dynamic_head(onnx.load(models.light_model_path(name))),
                                 seed=0)
    m = models.with_outputs(m, models.softmax_inputs(m))
    inits = {i.name for i in m.graph.initializer}
    inp = [i.name for i in m.graph.input if i.name not in inits]
    assert len(inp) == 1, inp
    return (m, models.dynamic_inputs(m), inp[0], [o.name for o in m.graph.output],
            [(1, 3, 224, 224)] + LIGHT_SHAPES.get(name, OTHER_SHAPES))


def compare(name, shape, got, want, outputs):
    for out, w in zip(outputs, want):
        g = got[out.replace(".", "_")]
        assert g.shape == w.shape, (name, shape, out, g.shape, w.shape)
        err = models.max_rel_error(g, w)
        assert err <= LIGHT_RTOL, "%s at %s: output %s differs from onnxruntime by %.3g of " \
            "its scale" % (name, shape, out, err)


@pytest.mark.skipif(os.environ.get("SHAPEPOLY_SKIP_LIGHT", "") not in ("", "0"),
                    reason="SHAPEPOLY_SKIP_LIGHT is set")
@pytest.mark.parametrize("name", models.LIGHT)
def test_light_models(name, capsys):
    """Random weights, onnxruntime as the oracle: the model imported with fixed sizes matches
    at the reference shape; imported once with symbolic batch, height and width, it matches
    at every shape without a new import."""
    m, dyn, inp, outputs, shapes = light_case(name)
    sess = models.ort_session(dyn, threads=2)
    want = {s: sess.run(None, {inp: models.image(s, seed=i)}) for i, s in enumerate(shapes)}
    ref = shapes[0]
    with spx.import_model(m) as program, program.runtime(num_threads=2) as rt:
        compare(name, ref, rt(**{inp.replace(".", "_"): models.image(ref, 0)}), want[ref],
                outputs)
    shapes_of = {}
    with spx.import_model(m, dynamic="batch,height,width", shapes=shapes_of) as program, \
            program.runtime(num_threads=2) as rt:
        sig = program.inputs[0].shape
        for i, s in enumerate(shapes):
            compare(name, s, rt(**{inp.replace(".", "_"): models.image(s, i)}), want[s],
                    outputs)
        assert rt.plans_built == len(shapes)
    with capsys.disabled():
        print("\nlight %s: matches onnxruntime (random weights) at %s; input %s -> %s" % (
            name, ", ".join("x".join(map(str, s)) for s in shapes), sig,
            program_outputs(shapes_of, outputs)))


def program_outputs(shapes_of, outputs):
    return ", ".join("(%s)" % ", ".join(shapes_of.get(o, ("?",))) for o in outputs[:1])


def node_cases(*ops):
    """ONNX's own node test cases of `ops`, made by the generators the onnx wheel ships
    (onnx.backend.test.case.node: importing an op's module records its cases), as (name,
    model, [(inputs, outputs)]). Their models declare the newest opset; the ops here have not
    changed since opset 13, so they are imported as opset 21, the newest this importer reads."""
    import importlib
    from onnx.backend.test.case import node as onnx_node
    for op in ops:
        importlib.import_module("onnx.backend.test.case.node." + op.lower())
    out, seen = [], set()
    for c in onnx_node._NodeTestCases:
        if c.name in seen or not {n.op_type for n in c.model.graph.node} & set(ops):
            continue
        seen.add(c.name)
        m = onnx.ModelProto()
        m.CopyFrom(c.model)
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = min(o.version, 21)
        out.append((c.name, m, [(list(i), list(o)) for i, o in c.data_sets]))
    return out


def test_onnx_node_cases_of_data_dependent_ops(tmp_path):
    """NonZero and Compress (with and without axis, negative axis, a condition shorter than
    the axis) on ONNX's node test data, at fixed shapes and with a symbolic batch where the
    condition masks it; the bfloat16 case is refused (no such element type)."""
    cases = node_cases("NonZero", "Compress")
    passed, refused = [], []
    for name, m, sets in cases:
        path = str(tmp_path / (name + ".onnx"))
        onnx.save(m, path)
        try:
            err = run_case(path, sets)
        except spx.OnnxImportError as e:
            assert "BFLOAT16" in str(e), (name, e)
            refused.append(name)
            continue
        assert err is None, (name, err)
        # A symbolic batch: where x's axis 0 and the condition's are the same axis (in the
        # others the condition masks axis 1 or the flat elements, and a symbolic length of
        # it is not provably within the axis: refused at import).
        if name in ("test_compress_0", "test_nonzero_example"):
            assert run_case(path, sets, dynamic="batch") is None, name
        passed.append(name)
    assert sorted(passed) == ["test_compress_0", "test_compress_1", "test_compress_bfloat16",
                              "test_compress_default_axis",
                              "test_compress_negative_axis", "test_nonzero_example"], passed
    assert refused == [], refused


def test_onnx_node_cases_of_trilu(tmp_path):
    """Trilu on ONNX's node test data: upper and lower, k positive, negative, zero, out of range
    and absent, square, 1-row and batched inputs, k given as a graph input (run-time data: the
    iota mask) and as a constant (the trilu op); the batched (rank-3) cases also with a
    symbolic batch."""
    cases = node_cases("Trilu")
    assert len(cases) >= 18
    for name, m, sets in cases:
        path = str(tmp_path / (name + ".onnx"))
        onnx.save(m, path)
        assert run_case(path, sets) is None, name
        if sets[0][0][0].ndim == 3:
            assert run_case(path, sets, dynamic="batch") is None, name
    # k as a constant: the graph's k input made an initializer of each case.
    for name, m, sets in cases:
        if len(m.graph.input) < 2:
            continue
        k_name = m.graph.input[1].name
        const = onnx.ModelProto()
        const.CopyFrom(m)
        const.graph.initializer.append(onnx.numpy_helper.from_array(sets[0][0][1], k_name))
        del const.graph.input[1]
        path = str(tmp_path / (name + "_const_k.onnx"))
        onnx.save(const, path)
        assert run_case(path, [([ins[0]], outs) for ins, outs in sets]) is None, name
