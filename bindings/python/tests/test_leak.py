"""10,000 objects of every kind, released by finalizers or close(): RSS stays bounded."""

import gc
import os

import numpy as np

import shapepoly as sp


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def churn(n: int, program: sp.Program) -> None:
    x = np.ones((256, 4), np.float32)  # 3 KB outputs: 10,000 leaked ones would be 30 MB
    rt = program.runtime(num_threads=1)
    for i in range(n):
        s = sp.Scope(["b >= 1"])  # dropped: the finalizer destroys it
        d = s.var("b") * 2 + i
        t = s.input("x", sp.F32, [d, 4])
        str(d)
        if i % 2:
            s.close()
        out = rt(x=x)["y"]  # an output array, released with its base
        assert out.shape == (256, 3)
        fresh = np.ones((i % 5 + 1, 4), np.float32)  # new arrays: new wrappers each time
        rt(x=fresh)
        if i % 50 == 0:
            p = sp.loads(program.serialize())  # programs, buffers, runtimes
            r = p.runtime(num_threads=1)
            r(x=x)
            if i % 100 == 0:
                p.close()
                r.close()
            try:
                s2 = sp.Scope()
                s2.dim("b //")
            except sp.ParseError:
                pass  # an error object, released
            f = sp.Function(lambda scope, v: v * 2.0, {"v": (sp.F32, 1)}, ["w"])  # callbacks
            f(v=np.ones(i % 7 + 1, np.float32))
            del f
        del s, d, t, out
    rt.close()


def test_ten_thousand_objects_rss_bounded(dense):
    churn(1000, dense)  # warm up allocator pools and caches
    gc.collect()
    before = rss_bytes()
    churn(10000, dense)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 16 << 20, "RSS grew by %d KB over 10,000 iterations" % (grown >> 10)
