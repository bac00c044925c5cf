"""numpy side of the elementwise / softmax / layer-norm kernel benchmarks.

Usage: elementwise_bench_numpy.py SCENARIO
Prints "ready", then for each line read from stdin runs the scenario once and prints the
seconds it took (so the C++ side can alternate its runs with ours on a noisy machine). The
scenario is written as a numpy user writes it; the inputs have the same sizes as on the C++ side.
"""
import sys
import time

import numpy as np

N = 16 << 20          # elements of the elementwise scenarios
ROWS, COLS = 4096, 1024


def main():
    name = sys.argv[1]
    rng = np.random.default_rng(0)

    def vec():
        return rng.standard_normal(N, dtype=np.float32)

    if name == "fma":  # a*b + c
        a, b, c = vec(), vec(), vec()
        fn = lambda: a * b + c
    elif name == "tanh_chain":  # tanh(a*x + b) * c
        a, x, b, c = vec(), vec(), vec(), vec()
        fn = lambda: np.tanh(a * x + b) * c
    elif name == "exp":
        x = vec()
        fn = lambda: np.exp(x)
    elif name == "logistic":  # as a numpy user writes it (scipy.special.expit is not a peer here)
        x = vec()
        fn = lambda: 1 / (1 + np.exp(-x))
    elif name == "softmax":
        x = rng.standard_normal((ROWS, COLS), dtype=np.float32)

        def fn():
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            e /= e.sum(axis=-1, keepdims=True)
            return e
    elif name == "layernorm":
        x = rng.standard_normal((ROWS, COLS), dtype=np.float32)
        g = rng.standard_normal(COLS, dtype=np.float32)
        b = rng.standard_normal(COLS, dtype=np.float32)

        def fn():
            m = x.mean(axis=-1, keepdims=True)
            v = x.var(axis=-1, keepdims=True)
            return (x - m) / np.sqrt(v + np.float32(1e-5)) * g + b
    elif name == "sum_rows":
        x = rng.standard_normal((ROWS, COLS), dtype=np.float32)
        fn = lambda: x.sum(axis=-1)
    elif name in ("sum_1m", "sum_16m"):  # a whole-array float32 sum (numpy: pairwise)
        x = rng.standard_normal((1 << 20) if name == "sum_1m" else N, dtype=np.float32)
        fn = lambda: x.sum()
    else:
        raise SystemExit("unknown scenario " + name)
    fn()
    print("ready", flush=True)
    for _ in sys.stdin:
        t0 = time.perf_counter()
        fn()
        print(time.perf_counter() - t0, flush=True)


if __name__ == "__main__":
    main()
