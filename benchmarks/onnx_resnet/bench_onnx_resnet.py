"""Light ResNet-50 (the onnx wheel's, seeded random weights) run by shapepoly against
onnxruntime, both measured in this run on the same model (issue 16):

  1. steady state at 1x3x224x224 and 8x3x224x224, on 1 and 2 threads: the median time per
     call of --reps calls (after warm-up), ours and ORT's alternating so that both see the
     same machine load; the spread is min-max of the calls;
  2. the first call at a new image size (1x3x320x240) after warm-up calls at 224x224: ours
     is a program imported once with symbolic batch, height and width (the call builds a plan
     for the new shape); ORT's is a session created with dynamic axes (the call makes its
     allocations and kernel choices for the new shape). --first-reps fresh runtimes/sessions.

Both compute the same function: the outputs are compared (max error relative to the
output's scale) before timing. Prints INFO lines and one line per row
  ROW scenario | ours ms | spread | ORT ms | spread | ratio | target | verdict
with ratio = ORT time / our time (> 1: ours is faster), target ratio >= 1.0.
Usage: bench_onnx_resnet.py [--quick] [--reps N] [--first-reps N] [--threads 1,2]
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

from shapepoly import onnx as spx  # noqa: E402
from shapepoly.onnx import models  # noqa: E402

TARGET = 1.0


def cpu_model():
    """The CPU model from /proc/cpuinfo ("unknown" elsewhere): results differ by CPU."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def spread(ts):
    return "%.1f-%.1f" % (min(ts) * 1e3, max(ts) * 1e3)


def row(scenario, ours, peer, target=TARGET):
    o, p = statistics.median(ours), statistics.median(peer)
    ratio = p / o
    verdict = "met" if ratio >= target else "MISSED"
    print("ROW %s | %.1f | %s | %.1f | %s | %.2f | >= %.1f | %s" % (
        scenario, o * 1e3, spread(ours), p * 1e3, spread(peer), ratio, target, verdict),
        flush=True)


CLOCK = time.perf_counter  # --cpu-time: time.process_time (the process's CPU time)


def timed(fn):
    t = CLOCK()
    fn()
    return CLOCK() - t


def alternate(ours, peer, reps, warmup=2):
    """Times ours() and peer() alternately, after `warmup` calls of each."""
    for _ in range(warmup):
        ours()
        peer()
    a, b = [], []
    for _ in range(reps):
        a.append(timed(ours))
        b.append(timed(peer))
    return a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--first-reps", type=int, default=None)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time the steady-state calls by the process's CPU time (a loaded "
                         "machine; meaningful on 1 thread)")
    ap.add_argument("--steady-only", action="store_true", help="skip the first-call rows")
    args = ap.parse_args()
    reps = args.reps or (3 if args.quick else 10)
    first_reps = args.first_reps or (2 if args.quick else 5)
    threads = [int(t) for t in args.threads.split(",")]
    if args.cpu_time:
        global CLOCK
        CLOCK = time.process_time

    t0 = time.perf_counter()
    model = models.randomize_weights(
        models.dynamic_head(onnx.load(models.light_model_path("resnet50"))), seed=0)
    dyn = models.dynamic_inputs(model)
    program = spx.import_model(model, dynamic="batch,height,width")
    print("INFO light ResNet-50, random weights (seed 0): imported with symbolic batch, "
          "height, width in %.2f s; input %s" % (time.perf_counter() - t0,
                                                  program.inputs[0].shape))
    print("INFO CPU: %s, %d cores" % (cpu_model(), os.cpu_count() or 0))
    print("INFO onnxruntime %s (CPU, all graph optimizations, intra-op threads as the "
          "row says, no spinning), onnx %s; %d repetitions (%d for first calls)" % (
              ort.__version__, onnx.__version__, reps, first_reps))
    name = program.inputs[0].name
    ort_name = dyn.graph.input[0].name

    for n in threads:
        rt = program.runtime(num_threads=n)
        sess = models.ort_session(dyn, threads=n)
        print("INFO %d thread(s): ours on %s" % (n, rt.simd_target))
        for batch in (1, 8):
            x = models.image((batch, 3, 224, 224), seed=batch)
            got = rt(**{name: x})
            want = sess.run(None, {ort_name: x})
            err = models.max_rel_error(next(iter(got.values())), want[0])
            if err > 1e-3:
                print("ERROR outputs differ from onnxruntime at batch %d: %.3g" % (batch, err))
                sys.exit(1)
            r = max(2, reps // 2) if batch == 8 else reps
            ours, peer = alternate(lambda: rt(**{name: x}),
                                   lambda: sess.run(None, {ort_name: x}), r,
                                   warmup=1 if batch == 8 else 2)
            row("%dx3x224x224 steady, %d thread%s" % (batch, n, "s" * (n > 1)), ours, peer)
        rt.close()
        if args.steady_only:
            continue

        # First call at a new image size: fresh runtime / session, warmed at 224x224.
        x224 = models.image((1, 3, 224, 224), seed=1)
        x320 = models.image((1, 3, 320, 240), seed=2)
        ours, peer, builds = [], [], []
        for _ in range(first_reps):
            rt = program.runtime(num_threads=n)
            for _ in range(2):
                rt(**{name: x224})
            ours.append(timed(lambda: rt(**{name: x320})))
            builds.append(rt.last_plan_build_ns / 1e3)
            rt.close()
            sess = models.ort_session(dyn, threads=n)
            for _ in range(2):
                sess.run(None, {ort_name: x224})
            peer.append(timed(lambda: sess.run(None, {ort_name: x320})))
            del sess
        row("first call at 1x3x320x240, %d thread%s" % (n, "s" * (n > 1)), ours, peer)
        print("INFO %d thread(s): our plan build for 320x240: median %.0f us of the first "
              "call" % (n, statistics.median(builds)))
    program.close()


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
