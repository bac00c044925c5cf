"""Peers of benchmarks/runtime/runtime_bench.c: numpy, onnxruntime and JAX on the same programs.

Run by runtime_bench (a child process, in the same run as our measurements) with the work
directory holding the MLP's weights (w0..w2, b0..b2), the batch-1/64/256 inputs x1, x64, x256
and our outputs y1_ours, y64_ours, y256_ours (raw little-endian f32). Prints `PEER <key> <microseconds>` lines on stdout; progress
and checks on stderr.

Each measurement runs in its own child process so that thread counts can be fixed before numpy
or JAX is imported: `--threads 1` pins the process to one CPU (sched_setaffinity) and sets
OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / XLA_FLAGS / onnxruntime intra_op_num_threads to 1;
`--threads 0` leaves every core to the library defaults.

Scenarios (each figure is the median of several repetitions of a timed loop):
  tiny    onnxruntime InferenceSession.run of an ONNX Add graph with a symbolic dim "n" (built
          with the onnx package); 8 f32. numpy's np.add(a, b) and np.add(a, b, out=c) per call
          come from --serve-tiny, a child that runtime_bench keeps and asks for one sample at a
          time, between its own (alternating rounds).
  first   the MLP exported once with jax.export and a symbolic batch; exp.call at unseen
          batches (each one a new XLA compile), after a warm-up call at another batch; the
          median, and each batch's time (first_jax_b<batch>_us).
  steady  the MLP at batch 64: JAX exp.call (cached), onnxruntime, numpy (x @ w + b ...); at
          batch 1 and 256: onnxruntime (steady<batch>_<t1|tall>_ort_us).
"""

import argparse
import os
import subprocess
import sys
import time

IN, H, OUT = 784, 256, 10
DIMS = [IN, H, H, OUT]


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


def load_weights(workdir):
    import numpy as np

    ws, bs = [], []
    for l in range(3):
        ws.append(np.fromfile(os.path.join(workdir, f"w{l}.f32"), dtype="<f4").reshape(DIMS[l], DIMS[l + 1]))
        bs.append(np.fromfile(os.path.join(workdir, f"b{l}.f32"), dtype="<f4"))
    x = np.fromfile(os.path.join(workdir, "x64.f32"), dtype="<f4").reshape(64, IN)
    y = np.fromfile(os.path.join(workdir, "y64_ours.f32"), dtype="<f4").reshape(64, OUT)
    return ws, bs, x, y


def load_batch(workdir, n):
    """The batch-n input and our output for it."""
    import numpy as np

    x = np.fromfile(os.path.join(workdir, f"x{n}.f32"), dtype="<f4").reshape(n, IN)
    y = np.fromfile(os.path.join(workdir, f"y{n}_ours.f32"), dtype="<f4").reshape(n, OUT)
    return x, y


def check_close(name, got, want):
    import numpy as np

    err = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - want)))
    log(f"  {name}: max |peer - ours| = {err:.2e}")
    if not err < 1e-4:
        raise SystemExit(f"{name}: the peer's MLP result differs from ours (max error {err})")


def mlp_onnx(ws, bs):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    cur = "x"
    for l in range(3):
        inits.append(numpy_helper.from_array(ws[l], f"w{l}"))
        inits.append(numpy_helper.from_array(bs[l], f"b{l}"))
        nodes.append(helper.make_node("MatMul", [cur, f"w{l}"], [f"mm{l}"]))
        nodes.append(helper.make_node("Add", [f"mm{l}", f"b{l}"], [f"z{l}"]))
        cur = f"z{l}"
        if l < 2:
            nodes.append(helper.make_node("Relu", [cur], [f"h{l}"]))
            cur = f"h{l}"
    nodes.append(helper.make_node("Softmax", [cur], ["probs"], axis=-1))
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", IN])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", OUT])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def add_onnx():
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["z"])],
        "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def ort_session(model_bytes, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads  # 0: onnxruntime's default (every physical core)
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def jax_mlp(ws, bs):
    import jax
    import jax.numpy as jnp

    wj = [jnp.asarray(w) for w in ws]
    bj = [jnp.asarray(b) for b in bs]

    def f(x):
        h = x
        for l in range(3):
            h = h @ wj[l] + bj[l]
            if l < 2:
                h = jnp.maximum(h, 0.0)
        return jax.nn.softmax(h, axis=-1)

    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape(f"batch, {IN}"), jnp.float32)
    return jax.export.export(jax.jit(f))(spec)


def child(mode, threads, workdir, quick):
    import numpy as np

    reps = 3 if quick else 7
    if mode == "tiny":
        # numpy's tiny rows are measured in rounds alternating with ours (serve_tiny).
        calls = 20000 if quick else 200000
        a = np.arange(8, dtype=np.float32)
        b = 0.5 * np.arange(8, dtype=np.float32)
        sess = ort_session(add_onnx(), 1)
        feeds = {"x": a, "y": b}
        run = sess.run
        assert np.array_equal(run(None, feeds)[0], a + b)
        print(f"PEER tiny_ort_us {per_call_us(lambda: run(None, feeds), calls // 10, reps):.4f}")
        return
    ws, bs, x, y = load_weights(workdir)
    if mode == "first":
        import jax
        import jax.numpy as jnp

        exp = jax_mlp(ws, bs)
        exp.call(jnp.zeros((1, IN), jnp.float32)).block_until_ready()  # JAX start-up, not timed
        batches = [4, 18, 46, 78, 129, 258, 514]
        if quick:
            batches = batches[:3]
        times = []
        rng = np.random.default_rng(0)
        for n in batches:
            xb = jnp.asarray(rng.standard_normal((n, IN), dtype=np.float32))
            t0 = time.perf_counter_ns()
            exp.call(xb).block_until_ready()
            times.append((time.perf_counter_ns() - t0) / 1e3)
            log(f"  JAX first exp.call at batch {n}: {times[-1] / 1e3:.2f} ms")
            print(f"PEER first_jax_b{n}_us {times[-1]:.1f}")
        print(f"PEER first_jax_us {median(times):.1f}")
        return
    # steady
    tag = "t1" if threads == 1 else "tall"
    calls = 20 if quick else 100
    import jax
    import jax.numpy as jnp

    exp = jax_mlp(ws, bs)
    xj = jnp.asarray(x)
    call = exp.call
    check_close(f"JAX ({tag})", call(xj), y)
    print(f"PEER steady64_{tag}_jax_us {per_call_us(lambda: call(xj).block_until_ready(), calls, reps):.3f}")
    sess = ort_session(mlp_onnx(ws, bs), threads)
    feeds = {"x": x}
    run = sess.run
    check_close(f"onnxruntime ({tag})", run(None, feeds)[0], y)
    print(f"PEER steady64_{tag}_ort_us {per_call_us(lambda: run(None, feeds), calls, reps):.3f}")
    # Batch 1 and 256, the same session (a symbolic batch); calls scaled like ours.
    for n, n_calls in [(1, calls * 10), (256, max(1, calls // 4))]:
        xn, yn = load_batch(workdir, n)
        feeds_n = {"x": xn}
        check_close(f"onnxruntime batch {n} ({tag})", run(None, feeds_n)[0], yn)
        us = per_call_us(lambda: run(None, feeds_n), n_calls, reps)
        print(f"PEER steady{n}_{tag}_ort_us {us:.3f}")

    def numpy_mlp():
        h = x
        for l in range(3):
            h = h @ ws[l]
            h += bs[l]
            if l < 2:
                np.maximum(h, 0, out=h)
        h -= h.max(axis=1, keepdims=True)
        np.exp(h, out=h)
        h /= h.sum(axis=1, keepdims=True)
        return h

    check_close(f"numpy ({tag})", numpy_mlp(), y)
    print(f"PEER steady64_{tag}_numpy_us {per_call_us(numpy_mlp, calls, reps):.3f}")


def serve_tiny():
    """numpy's side of the tiny rows, one sample per request, so that runtime_bench can alternate
    its own samples with numpy's in the same seconds (the VM's CPU speed moves between phases).
    Reads lines "CALLS BATCH" on stdin and answers "TINY <add> <add out=> <add mean> <out mean>"
    in us per call: np.add(a, b) and np.add(a, b, out=c), each over CALLS calls timed in batches
    of BATCH calls (the call written inline in the loop, as timeit does: no lambda around it);
    the first two figures are the median of the batches' per-call times, the last two the whole
    sample's (all batches) per-call mean. runtime_bench times its own calls the same way. Ends at
    end of input."""
    import numpy as np

    a = np.arange(8, dtype=np.float32)
    b = 0.5 * np.arange(8, dtype=np.float32)
    c = np.empty(8, dtype=np.float32)
    add = np.add
    clock = time.perf_counter_ns
    for _ in range(1000):
        add(a, b)
        add(a, b, out=c)
    assert np.array_equal(add(a, b), a + b)
    print("READY", flush=True)
    for line in sys.stdin:
        calls, batch = (int(v) for v in line.split())
        if batch < 1 or calls < batch:
            raise SystemExit(f"serve-tiny: bad request {line!r}")
        rng = range(batch)
        t_add, t_out = [], []
        for _ in range(calls // batch):
            t0 = clock()
            for _ in rng:
                add(a, b)
            t_add.append(clock() - t0)
        for _ in range(calls // batch):
            t0 = clock()
            for _ in rng:
                add(a, b, out=c)
            t_out.append(clock() - t0)
        n = len(t_add) * batch
        print(f"TINY {median(t_add) / batch / 1e3:.5f} {median(t_out) / batch / 1e3:.5f} "
              f"{sum(t_add) / n / 1e3:.5f} {sum(t_out) / n / 1e3:.5f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mode", choices=["tiny", "first", "steady"])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--serve-tiny", action="store_true")
    args = ap.parse_args()
    if args.serve_tiny:
        serve_tiny()
        return
    if args.mode:
        sys.stdout.flush()
        child(args.mode, args.threads, args.workdir, args.quick)
        return
    for mode, threads in [("tiny", 1), ("first", 0), ("steady", 1), ("steady", 0)]:
        env = dict(os.environ)
        env.pop("XLA_FLAGS", None)
        if threads == 1:
            env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                       XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
        cmd = [sys.executable, os.path.abspath(__file__), "--mode", mode, "--threads", str(threads),
               "--workdir", args.workdir] + (["--quick"] if args.quick else [])
        if threads == 1:
            cmd = ["taskset", "-c", "0"] + cmd
        log(f"peers: {mode}, threads {threads or 'all'}")
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
        sys.stdout.write(out)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
