#!/usr/bin/env python3
"""`make demo-onnx`: a real CNN with symbolic batch and image sizes.

Imports the light ResNet-50 of the onnx wheel (onnx/backend/test/data/light; its weights,
constant fills there, are replaced by seeded random ones) once, with batch, height and width
as variables; prints the symbolic shape of each stage; then runs that one program at
1x3x224x224, 4x3x320x240 and 2x3x160x160, printing the output shapes, the plan build time of
each new shape and the time per call (and, when onnxruntime is installed, how far the
outputs are from its on the same model).

Usage: examples/onnx_demo/onnx_demo.py [--model resnet50] [--threads N] [--out FILE.shpoly]
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))

import onnx  # noqa: E402

from shapepoly import onnx as spx  # noqa: E402
from shapepoly.onnx import models  # noqa: E402

SHAPES = [(1, 3, 224, 224), (4, 3, 320, 240), (2, 3, 160, 160)]
# The node types whose outputs end a stage of a CNN (a residual sum, a pooling, the head).
STAGE_OPS = ("MaxPool", "AveragePool", "GlobalAveragePool", "Sum", "Add", "Concat", "Gemm",
             "Softmax")


def stages(model, shapes_of):
    """[(node label, symbolic shape)] at the ends of stages: the first conv, then each stage
    op whose output shape differs from the previous line's."""
    rows, last = [], None
    first_conv = True
    for i, node in enumerate(model.graph.node):
        out = node.output[0] if node.output else ""
        if out not in shapes_of:
            continue
        if not (node.op_type in STAGE_OPS or (node.op_type == "Conv" and first_conv)):
            continue
        first_conv = first_conv and node.op_type != "Conv"
        shape = shapes_of[out]
        if shape != last:
            rows.append(("%s %s" % (node.op_type, node.name or out), shape))
            last = shape
    return rows


def ms(seconds):
    return "%.1f ms" % (seconds * 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet50", choices=models.LIGHT)
    ap.add_argument("--threads", type=int, default=None,
                    help="runtime threads (default: the library's choice)")
    ap.add_argument("--reps", type=int, default=3, help="timed calls per shape")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "onnx_demo.shpoly"),
                    help="where the imported program is saved (for `shapepoly inspect`)")
    args = ap.parse_args()

    path = models.light_model_path(args.model)
    t0 = time.perf_counter()
    model = models.randomize_weights(models.dynamic_head(onnx.load(path)), seed=0)
    print("model: %s (%d nodes, weights randomized with seed 0)" % (
        os.path.relpath(path, os.path.dirname(onnx.__file__)), len(model.graph.node)))

    shapes_of = {}
    t1 = time.perf_counter()
    program = spx.import_model(model, dynamic="batch,height,width", shapes=shapes_of)
    t2 = time.perf_counter()
    print("imported with symbolic batch, height, width in %s (model preparation %s)" % (
        ms(t2 - t1), ms(t1 - t0)))
    data = [i for i in program.inputs if not i.has_default]
    params = [i for i in program.inputs if i.has_default]
    print("  input  %s: %s %s" % (data[0].name, data[0].dtype.name.lower(), data[0].shape))
    for o in program.outputs:
        print("  output %s: %s %s" % (o.name, o.dtype.name.lower(), o.shape))
    print("  %d parameters (the weights, folded batch norms included), constraints: %s" % (
        len(params), ", ".join(program.constraints) or "none"))
    if program.assertions:
        print("  run-time assertions: %s" % "; ".join(a.text for a in program.assertions))
    print("\nsymbolic shape of each stage:")
    for label, shape in stages(model, shapes_of):
        print("  %-34s (%s)" % (label[:34], ", ".join(shape)))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    program.save(args.out)
    print("saved %s (`build/bin/shapepoly inspect %s` lists every op with its shape)" % (
        os.path.relpath(args.out), os.path.relpath(args.out)))

    sess = None
    try:
        sess = models.ort_session(models.dynamic_inputs(model), threads=args.threads or 2)
    except ImportError:
        pass
    inp = data[0].name
    rt = program.runtime(num_threads=args.threads)
    print("\nruns of the one program (%d threads, %s):" % (rt.num_threads, rt.simd_target))
    print("  %-14s %-12s %-12s %-12s %-14s %s" % ("input", "output", "first call",
                                                   "plan build", "time per call", "vs onnxruntime"))
    for i, shape in enumerate(SHAPES):
        x = models.image(shape, seed=i)
        t = time.perf_counter()
        out = rt(**{inp: x})
        first = time.perf_counter() - t
        build_ns = rt.last_plan_build_ns
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            out = rt(**{inp: x})
            times.append(time.perf_counter() - t)
        y = next(iter(out.values()))
        cmp = "-"
        if sess is not None:
            want = sess.run(None, {sess.get_inputs()[0].name: x})[0]
            cmp = "max rel. error %.1e" % models.max_rel_error(y, want)
        print("  %-14s %-12s %-12s %-12s %-14s %s" % (
            "x".join(map(str, shape)), "x".join(map(str, y.shape)), ms(first),
            "%.0f us" % (build_ns / 1e3), ms(statistics.median(times)), cmp))
    print("plans built: %d (one per shape), cache hits: %d; no re-import, no recompilation" % (
        rt.plans_built, rt.cache_hits))
    rt.close()
    program.close()


if __name__ == "__main__":
    main()
