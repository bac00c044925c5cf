"""Peer of benchmarks/cost/cost_bench.c: JAX's cost analysis of the same 1,000-op program.

JAX reports cost per compiled shape: `jax.jit(f).lower(x).compile().cost_analysis()`. For the
three batch sizes our side evaluates (1, 64, 4096) it lowers and compiles once per shape; the
time of one repetition is those three analyses (as our side's is the formulas plus three
evaluations). Prints `PEER shapes_ms <median>` and `PEER flops <batch> <value>` (JAX's count, for
information: XLA counts transcendental ops and fusions its own way); progress on stderr.
Usage: peers.py [--reps N]
"""

import argparse
import os
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    import jax
    import jax.numpy as jnp
    import numpy as np

    w = jnp.zeros((64, 64), jnp.float32)

    def f(x):
        h = x
        for i in range(1000):
            k = i % 4
            if k == 0:
                h = h @ w
            elif k == 1:
                h = jnp.tanh(h)
            elif k == 2:
                h = h + x
            else:
                h = jax.nn.softmax(h, axis=1)
        return h

    # The engine's start-up (an unrelated compile), as our side has none to pay.
    jax.jit(lambda a: a + 1).lower(np.zeros(3, np.float32)).compile()
    times, flops = [], {}
    for rep in range(args.reps):
        start = time.perf_counter()
        for b in (1, 64, 4096):
            ca = jax.jit(f).lower(jax.ShapeDtypeStruct((b, 64), jnp.float32)).compile().cost_analysis()
            if isinstance(ca, list):
                ca = ca[0]
            flops[b] = int(ca.get("flops", -1))
        times.append((time.perf_counter() - start) * 1e3)
        print("rep %d: %.1f ms" % (rep, times[-1]), file=sys.stderr, flush=True)
    times.sort()
    print("PEER shapes_ms %.3f" % times[len(times) // 2])
    for b, v in flops.items():
        print("PEER flops %d %d" % (b, v))
    print("PEER jax %s" % jax.__version__)


if __name__ == "__main__":
    main()
