"""Threads: one runtime per thread over a Program shared by several; a runtime or scope used by
several threads is serialized by its lock."""

import threading

import numpy as np

import shapepoly as sp

from conftest import dense_ref


def run_threads(n, target):
    errors = []

    def wrapped(k):
        try:
            target(k)
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=wrapped, args=(k,)) for k in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_one_runtime_per_thread_sharing_a_program(dense):
    def work(k):
        rt = dense.runtime(num_threads=1)
        for i in range(200):
            x = np.full((k + 1 + i % 3, 4), float(k), np.float32)
            np.testing.assert_allclose(rt(x=x)["y"], dense_ref(x), rtol=1e-6)
        # Reading the shared program concurrently is fine too.
        assert dense.input_names == ["x"]
        rt.close()

    run_threads(4, work)


def test_a_shared_runtime_and_scope_are_serialized(dense):
    rt = dense.runtime(num_threads=1)
    scope = sp.Scope()
    n = scope.var("n")

    def work(k):
        for i in range(200):
            x = np.full((2, 4), float(i % 7), np.float32)
            np.testing.assert_allclose(rt(x=x)["y"], dense_ref(x), rtol=1e-6)
            assert (n * (k + 1)).evaluate(n=i + 1) == (i + 1) * (k + 1)

    run_threads(4, work)


def test_programs_traced_in_parallel_scopes():
    def work(k):
        with sp.Scope() as s:
            x = s.input("x", sp.F32, "b")
            with s.program([x], {"y": x * float(k)}) as p:
                out = p.runtime(num_threads=1)(x=np.ones(3, np.float32))["y"]
                assert out.tolist() == [k, k, k]

    run_threads(4, work)
