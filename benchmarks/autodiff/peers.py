"""Peers of benchmarks/autodiff/train_bench.c: JAX jit(value_and_grad) and a numpy backprop.

Run by train_bench (a child process, in the same run as our measurements) with the work
directory holding the weights (w0.f32 ... b2.f32), the batches (x64.f32, labels64.i32, x256.f32,
labels256.i32) and our step's results at batch 64 (ours64.f32: the loss, then the gradients in
mlp_ref.PARAM_NAMES order), all raw little-endian. Prints `PEER <key> <microseconds>` lines on
stdout; progress and checks on stderr.

Each measurement runs in its own child process so that thread counts are fixed before numpy or
JAX is imported: `--threads 1` pins the process to CPU 0 (taskset) with OPENBLAS/OMP/MKL
threads and XLA's Eigen pool at 1; `--threads 2` pins it to CPUs 0-1 with 2 BLAS threads
(XLA's defaults then use both).

Scenarios (each figure the median of several repetitions of a timed loop):
  steady  one training step at batch 64 and 256: JAX jit(value_and_grad) (cached, result
          blocked on), numpy hand-written backprop (mlp_ref.numpy_step); both checked against
          ours at batch 64 (max error <= 1e-4 of each output's largest magnitude).
  first   jit(value_and_grad) warmed up at batch 1, then its first call at each unseen batch
          (a retrace and an XLA compile each).
  build   jax.make_jaxpr(jax.value_and_grad(f)) of the 1,001-op residual program of
          train_bench.c (information: tracing the function and its gradient, no compile).
"""

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_ref  # noqa: E402


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def per_call_us(fn, calls, reps):
    fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter_ns() - t0) / calls / 1e3)
    return median(out)


def load(workdir, batch):
    import numpy as np

    params = []
    for l in range(3):
        params.append(np.fromfile(os.path.join(workdir, f"w{l}.f32"), dtype="<f4")
                      .reshape(mlp_ref.DIMS[l], mlp_ref.DIMS[l + 1]))
        params.append(np.fromfile(os.path.join(workdir, f"b{l}.f32"), dtype="<f4"))
    x = np.fromfile(os.path.join(workdir, f"x{batch}.f32"), dtype="<f4").reshape(batch, mlp_ref.IN)
    labels = np.fromfile(os.path.join(workdir, f"labels{batch}.i32"), dtype="<i4")
    return params, x, labels


def check_close(name, loss, grads, workdir, params):
    """Our batch-64 step against the peer's: loss, then each gradient."""
    import numpy as np

    ours = np.fromfile(os.path.join(workdir, "ours64.f32"), dtype="<f4")
    pos, worst = 1, 0.0
    for g, p in zip([np.asarray(loss).reshape(1)] + [np.asarray(g) for g in grads], [None] + params):
        n = g.size
        want = ours[:1] if p is None else ours[pos:pos + n]
        if p is not None:
            pos += n
        err = float(np.max(np.abs(want.astype(np.float64) - g.reshape(-1))))
        worst = max(worst, err / max(float(np.max(np.abs(g))), 1e-30))
    log(f"  {name}: worst relative error vs ours {worst:.2e}")
    if not worst <= 1e-4:
        raise SystemExit(f"{name}: the peer's training step differs from ours (relative error {worst})")


def child(mode, threads, workdir, quick):
    import numpy as np

    reps = 3 if quick else 5
    if mode == "steady":
        import jax

        step = jax.jit(jax.value_and_grad(mlp_ref.jax_loss_fn("relu")))
        for batch, calls in [(64, 5 if quick else 20), (256, 2 if quick else 6)]:
            params, x, labels = load(workdir, batch)
            pj = [jax.device_put(p) for p in params]
            xj, lj = jax.device_put(x), jax.device_put(labels)
            if batch == 64:
                loss, grads = step(pj, xj, lj)
                check_close(f"JAX (threads {threads})", loss, grads, workdir, params)
                loss, grads = mlp_ref.numpy_step(params, x, labels)
                check_close(f"numpy (threads {threads})", loss, grads, workdir, params)

            def jax_step():
                jax.block_until_ready(step(pj, xj, lj))

            print(f"PEER steady{batch}_t{threads}_jax_us {per_call_us(jax_step, calls, reps):.3f}")
            print(f"PEER steady{batch}_t{threads}_numpy_us "
                  f"{per_call_us(lambda: mlp_ref.numpy_step(params, x, labels), calls, reps):.3f}")
        return
    if mode == "first":
        import jax

        params, _, _ = load(workdir, 64)
        step = jax.jit(jax.value_and_grad(mlp_ref.jax_loss_fn("relu")))
        rng = np.random.default_rng(0)

        def call(n):
            x = rng.standard_normal((n, mlp_ref.IN), dtype=np.float32)
            labels = rng.integers(0, mlp_ref.OUT, size=n).astype(np.int32)
            t0 = time.perf_counter_ns()
            jax.block_until_ready(step(params, x, labels))
            return (time.perf_counter_ns() - t0) / 1e3

        call(1)  # JAX start-up, not timed
        batches = [4, 18, 46, 78, 129, 258, 514]
        if quick:
            batches = batches[:3]
        times = []
        for n in batches:
            times.append(call(n))
            log(f"  JAX first call at batch {n}: {times[-1] / 1e3:.1f} ms")
        print(f"PEER first_jax_us {median(times):.1f}")
        return
    # build: the residual program of train_bench.c's build scenario.
    import jax
    import jax.numpy as jnp

    blocks, width = 200, 32
    rng = np.random.default_rng(1)
    ws = [jnp.asarray(0.2 * rng.standard_normal((width, width), dtype=np.float32)) for _ in range(blocks)]
    bs = [jnp.asarray(0.1 * rng.standard_normal(width, dtype=np.float32)) for _ in range(blocks)]
    x = jnp.ones((8, width), jnp.float32)

    def f(wb, x):
        h = x
        for w, b in zip(wb[0], wb[1]):
            h = h + 0.5 * jnp.tanh(h @ w + b)
        return jnp.sum(h)

    vg = jax.value_and_grad(f)
    times = []
    for _ in range(2 + reps):
        t0 = time.perf_counter_ns()
        jax.make_jaxpr(vg)((ws, bs), x)
        times.append((time.perf_counter_ns() - t0) / 1e3)
    print(f"PEER grad_build_jax_us {median(times[2:]):.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mode", choices=["steady", "first", "build"])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if args.mode:
        child(args.mode, args.threads, args.workdir, args.quick)
        return
    ncpu = os.cpu_count() or 1
    for mode, threads in [("steady", 1), ("steady", 2), ("first", 2), ("build", 1)]:
        env = dict(os.environ)
        env.pop("XLA_FLAGS", None)
        env.update(OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        if threads == 1:
            env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        cmd = [sys.executable, os.path.abspath(__file__), "--mode", mode, "--threads", str(threads),
               "--workdir", args.workdir] + (["--quick"] if args.quick else [])
        cmd = ["taskset", "-c", "0" if threads == 1 else f"0-{min(threads, ncpu) - 1}"] + cmd
        log(f"peers: {mode}, threads {threads}")
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
        sys.stdout.write(out)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
