"""numpy side of the selection kernel benchmark (benchmarks/kernels/select_bench.cc).

Usage: select_bench_numpy.py SCENARIO   (nonzero_1d_P, argwhere_2d_P, nonzero_2d_P, mask_P; P is
the density in percent)
Prints "ready", then for each line read from stdin runs the scenario once and prints the seconds
it took. The data is the C++ side's, bit for bit: element i is nonzero when the splitmix64 hash
of i falls below density * 2^32 (Pattern in select_bench.cc). The C++ side passes its count of
nonzero elements / selected rows in $SHP_SELECT_COUNT; a different count here exits with an
error (the C++ side then reports the peer as unavailable).
"""
import os
import sys
import time

import numpy as np

N = 16 << 20                 # elements of the nonzero scenarios (also as 4096 x 4096)
ROWS, COLS = 1 << 20, 16     # x of the mask scenario


def pattern(n, percent, seed):
    """Bool array: splitmix64(i + seed) >> 32 < percent / 100 * 2^32 (see select_bench.cc)."""
    with np.errstate(over="ignore"):
        z = np.arange(n, dtype=np.uint64) + np.uint64(seed)
        z = z * np.uint64(0x9E3779B97F4A7C15)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z >> np.uint64(32)) < np.uint64(int(percent * (1 << 32) // 100))


def main():
    name = sys.argv[1]
    kind, percent = name.rsplit("_", 1)
    percent = int(percent)
    if kind in ("nonzero_1d", "argwhere_2d", "nonzero_2d"):
        x = np.where(pattern(N, percent, 1), np.float32(1.5), np.float32(0))
        if kind == "nonzero_1d":
            fn = lambda: np.nonzero(x)
        else:
            x = x.reshape(4096, 4096)
            fn = (lambda: np.argwhere(x)) if kind == "argwhere_2d" else (lambda: np.nonzero(x))
        count = int(np.count_nonzero(x))
    elif kind == "mask":
        rng = np.random.default_rng(0)
        x = rng.standard_normal((ROWS, COLS), dtype=np.float32)
        mask = pattern(ROWS, percent, 2)
        fn = lambda: x[mask]
        count = int(mask.sum())
    else:
        raise SystemExit("unknown scenario " + name)
    want = os.environ.get("SHP_SELECT_COUNT")
    if want is not None and int(want) != count:
        raise SystemExit(f"{name}: numpy counts {count}, the C++ side {want}: patterns differ")
    fn()
    print("ready", flush=True)
    for _ in sys.stdin:
        t0 = time.perf_counter()
        fn()
        print(time.perf_counter() - t0, flush=True)


if __name__ == "__main__":
    main()
