"""Peers of benchmarks/function/function_bench.c: JAX jax.jit and torch.compile on the same stream.

Run by function_bench (a child process, in the same run as our measurements) with the work
directory holding the MLP's weights (w0..w2, b0..b2, raw little-endian f32), the 512-row input
x512.f32 (call k uses its first rows), the stream's 1,000 batch sizes stream.i64 and our output
of the first call y_first_ours.f32. Prints `PEER <key> <value>` lines on stdout (times in ms),
and `NOTE torch <text>` when torch.compile is not measured (why); progress and checks on stderr.

Each repetition of a stream runs in its own child process, pinned to one CPU (taskset -c 0) with
OPENBLAS / OMP / MKL / XLA thread counts and torch.set_num_threads at 1, like our side (a
1-thread function). A child first makes one untimed compile of an unrelated function (the
engine's start-up, as our side has none to pay), then times the whole stream from a cold start
of the MLP's function: the same closure, a new jit / torch.compile object.
  jax    jax.jit of the MLP; every new batch size is a new trace and XLA compile.
  torch  torch.compile of the MLP with the defaults (automatic dynamic shapes: static first,
         then a dynamic batch; sizes 0 and 1 specialized). Inductor's caches point to a fresh
         directory per child and the FX graph cache is off, so each repetition compiles cold,
         as ours traces cold. Not measured (with the reason) when torch cannot be imported.
Each child checks its first call's output against ours and reports the number of compiles, then
times the same stream again on the compiled object (compute and dispatch only: information).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

IN, H, OUT = 784, 256, 10
DIMS = [IN, H, H, OUT]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def load(workdir):
    import numpy as np

    def f32(name):
        return np.fromfile(os.path.join(workdir, name), dtype="<f4")

    ws = [f32(f"w{l}.f32").reshape(DIMS[l], DIMS[l + 1]) for l in range(3)]
    bs = [f32(f"b{l}.f32") for l in range(3)]
    x = f32("x512.f32").reshape(512, IN)
    stream = np.fromfile(os.path.join(workdir, "stream.i64"), dtype="<i8").tolist()
    y0 = f32("y_first_ours.f32").reshape(stream[0], OUT)
    return ws, bs, x, stream, y0


def check_close(name, got, want):
    import numpy as np

    err = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - want)))
    log(f"  {name}: first call, max |peer - ours| = {err:.2e}")
    if not err < 1e-4:
        raise SystemExit(f"{name}: the peer's MLP result differs from ours (max error {err})")


def stream_jax(ws, bs, x, stream, y0):
    import jax
    import jax.numpy as jnp

    wj = [jnp.asarray(w) for w in ws]
    bj = [jnp.asarray(b) for b in bs]

    def mlp(v):
        h = v
        for l in range(3):
            h = h @ wj[l] + bj[l]
            if l < 2:
                h = jnp.maximum(h, 0.0)
        return jax.nn.softmax(h, axis=-1)

    jax.jit(lambda v: v * 2.0 + 1.0)(x[:3, :5]).block_until_ready()  # start-up, not timed
    f = jax.jit(mlp)
    t0 = time.perf_counter_ns()
    first = None
    for n in stream:
        y = f(x[:n]).block_until_ready()
        if first is None:
            first = y
    ms = (time.perf_counter_ns() - t0) / 1e6
    check_close("JAX jax.jit", first, y0)
    t0 = time.perf_counter_ns()
    for n in stream:
        f(x[:n]).block_until_ready()
    again = (time.perf_counter_ns() - t0) / 1e6
    return ms, again, f._cache_size()


def stream_torch(ws, bs, x, stream, y0):
    import torch
    import torch._dynamo.utils

    torch.set_num_threads(1)
    wt = [torch.from_numpy(w) for w in ws]
    bt = [torch.from_numpy(b) for b in bs]

    def mlp(v):
        h = v
        for l in range(3):
            h = h @ wt[l] + bt[l]
            if l < 2:
                h = torch.relu(h)
        return torch.softmax(h, dim=-1)

    xt = torch.from_numpy(x)
    with torch.no_grad():
        torch.compile(lambda v: v * 2.0 + 1.0)(xt[:3, :5])  # start-up, not timed
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        f = torch.compile(mlp)
        t0 = time.perf_counter_ns()
        first = None
        for n in stream:
            y = f(xt[:n])
            if first is None:
                first = y.numpy().copy()
        ms = (time.perf_counter_ns() - t0) / 1e6
        t0 = time.perf_counter_ns()
        for n in stream:
            f(xt[:n])
        again = (time.perf_counter_ns() - t0) / 1e6
    check_close("torch.compile", first, y0)
    return ms, again, torch._dynamo.utils.counters["stats"]["unique_graphs"]


def child(engine, workdir):
    ws, bs, x, stream, y0 = load(workdir)
    ms, again, compiles = (stream_jax if engine == "jax" else stream_torch)(ws, bs, x, stream, y0)
    log(f"  {engine}: stream {ms:.1f} ms, {compiles} compiles; again, compiled: {again:.1f} ms")
    print(f"RESULT {ms:.3f} {compiles} {again:.3f}")


def torch_missing():
    """None if torch imports in the benchmark environment, else why not."""
    r = subprocess.run([sys.executable, "-c", "import torch"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode == 0:
        return None
    last = (r.stderr.strip().splitlines() or ["import failed"])[-1]
    return f"torch cannot be imported in this environment ({last})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--engine", choices=["jax", "torch"])
    args = ap.parse_args()
    if args.engine:
        child(args.engine, args.workdir)
        return
    if args.quick:
        # A peer's stream compiles once per new batch size (~450 here): minutes, more than the
        # whole quick run may take. Its rows say n/a.
        log("peers: not run in quick mode (the JAX stream alone compiles ~450 shapes: minutes)")
        return
    reps = 3
    engines = ["jax"]
    why = torch_missing()
    if why:
        print(f"NOTE torch not measured: {why}", flush=True)
    else:
        engines.append("torch")
    for engine in engines:
        times, compiles, again = [], [], []
        for r in range(reps):
            env = dict(os.environ)
            env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                       XLA_FLAGS="--xla_cpu_multi_thread_eigen=false "
                       "intra_op_parallelism_threads=1",
                       TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
            with tempfile.TemporaryDirectory(prefix="shp_function_peer_") as cache:
                env["TORCHINDUCTOR_CACHE_DIR"] = cache
                env["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
                cmd = ["taskset", "-c", "0", sys.executable, os.path.abspath(__file__),
                       "--engine", engine, "--workdir", args.workdir]
                log(f"peers: {engine} stream, repetition {r + 1} of {reps}")
                out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True,
                                     check=True).stdout
            line = [l for l in out.splitlines() if l.startswith("RESULT ")][-1].split()
            times.append(float(line[1]))
            compiles.append(int(line[2]))
            again.append(float(line[3]))
        print(f"PEER stream_{engine}_ms {median(times):.1f}")
        print(f"PEER stream_again_{engine}_ms {median(again):.1f}")
        print(f"PEER stream_{engine}_compiles {max(compiles)}", flush=True)


if __name__ == "__main__":
    main()
