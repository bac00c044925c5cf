"""Per-example gradients (issue 44): vmap of grad of the examples/mlp loss, ours against JAX.

The model is benchmarks/autodiff/mlp_ref.py's MLP (784-256-256-10, f32, relu) with a softmax
cross-entropy loss of ONE example (x: f32[784], label: i32 scalar). Ours: the loss traced once
through the Python binding, `grad(loss, weights)`, then `vmap(x=0, label=0)` (weights shared):
one program for every batch size, saved and loaded back as deployed. JAX:
`jit(vmap(grad(loss), in_axes=(None, 0, 0)))` on the same values.

Checks first, at batch 1, 7 and 64: every per-example gradient within 1e-5 of the largest
magnitude of JAX's (f32; the sums run in different orders). Then times the call at batch 64 and
256, one thread each (JAX: XLA_FLAGS single-threaded Eigen, set by the driver), medians over
--reps repetitions, and prints
  ROW scenario | ours us | peer | peer us | ratio | target | verdict
(ratio = peer / ours) and INFO lines. Usage: per_example_grads.py [--reps N] [--quick]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "autodiff"))
import mlp_ref  # noqa: E402
import shapepoly as sp  # noqa: E402


def ours_program():
    """grad of one example's loss wrt the six weights, vmapped over x and label."""
    s = sp.Scope()
    x = s.input("x", sp.F32, "784")
    label = s.input("label", sp.DType.I32, "")
    ws = [s.input(n, sp.F32, "%d, %d" % (mlp_ref.DIMS[i // 2], mlp_ref.DIMS[i // 2 + 1]) if i % 2 == 0
                  else "%d" % mlp_ref.DIMS[i // 2 + 1]) for i, n in enumerate(mlp_ref.PARAM_NAMES)]
    h = x
    for layer in range(3):
        h = h @ ws[2 * layer] + ws[2 * layer + 1]
        if layer < 2:
            h = h.maximum(0.0)
    d = h - h.max()
    logp = d - d.exp().sum().log()
    onehot = s.constant(np.eye(mlp_ref.OUT, dtype=np.float32)).take(label, axis=0)
    loss = -(onehot * logp).sum()
    prog = s.program([x, label] + ws, {"loss": loss})
    v = prog.grad("loss", mlp_ref.PARAM_NAMES).vmap({"x": 0, "label": 0})
    with tempfile.TemporaryDirectory() as tmp:  # as deployed: saved, loaded back
        path = os.path.join(tmp, "per_example_grads.shpoly")
        v.save(path)
        return sp.load(path)


def jax_fn():
    import jax
    import jax.numpy as jnp

    def loss(params, x, label):
        h = x
        for layer in range(3):
            h = h @ params[2 * layer] + params[2 * layer + 1]
            if layer < 2:
                h = jnp.maximum(h, 0.0)
        logp = jax.nn.log_softmax(h)
        return -jnp.sum(jax.nn.one_hot(label, mlp_ref.OUT, dtype=h.dtype) * logp)

    return jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))), jax


def median_us(fn, reps, iters):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    reps = 5 if args.quick else args.reps
    rng = np.random.default_rng(0)
    params = []
    for i in range(3):
        params.append((rng.standard_normal((mlp_ref.DIMS[i], mlp_ref.DIMS[i + 1])) /
                       np.sqrt(mlp_ref.DIMS[i])).astype(np.float32))
        params.append((rng.standard_normal(mlp_ref.DIMS[i + 1]) * 0.1).astype(np.float32))
    weights = dict(zip(mlp_ref.PARAM_NAMES, params))
    prog = ours_program()
    rt = prog.runtime(num_threads=1)
    jfn, jax = jax_fn()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    print("INFO cpu: %s; ours: %s target, 1 thread; peer: jax %s, XLA:%s compiled for this CPU, "
          "1 thread" % (cpu, rt.simd_target, jax.__version__, jax.devices()[0].platform.upper()))
    ok = True
    for batch in (1, 7, 64):
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        labels = rng.integers(0, mlp_ref.OUT, batch).astype(np.int32)
        got = rt(x=x, label=labels, **weights)
        want = [np.asarray(g) for g in jfn(params, x, labels)]
        worst = 0.0
        for name, w in zip(mlp_ref.PARAM_NAMES, want):
            g = got[name + ".grad"]
            assert g.shape == w.shape, (name, g.shape, w.shape)
            err = float(np.max(np.abs(g - w))) / max(float(np.max(np.abs(w))), 1e-30)
            worst = max(worst, err)
        verdict = "PASS" if worst <= 1e-5 else "FAIL"
        ok = ok and verdict == "PASS"
        print("INFO crosscheck batch %d: %s (max error / max |jax| = %.2e over the six gradients)"
              % (batch, verdict, worst))
    for batch in ((64,) if args.quick else (64, 256)):
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        labels = rng.integers(0, mlp_ref.OUT, batch).astype(np.int32)
        ours, lo, hi = median_us(lambda x=x, lab=labels: rt(x=x, label=lab, **weights), reps, 5)
        peer, plo, phi = median_us(
            lambda x=x, lab=labels: [g.block_until_ready() for g in jfn(params, x, lab)], reps, 5)
        ratio = peer / ours
        print("ROW per-example grads batch %d, 1 thread | %.1f | JAX jit(vmap(grad)) | %.1f | %.2f "
              "| >= 1.0x | %s" % (batch, ours, peer, ratio, "met" if ratio >= 1.0 else "MISSED"))
        print("INFO   spread: ours %.1f-%.1f us, JAX %.1f-%.1f us over %d reps" % (lo, hi, plo, phi, reps))
    if not ok:
        print("ERROR the per-example gradients disagree with JAX")
        sys.exit(1)


if __name__ == "__main__":
    main()
