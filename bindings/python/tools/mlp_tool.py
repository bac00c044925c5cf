#!/usr/bin/env python3
"""tests/cross_language/MLP_CONTRACT.md with the Python binding:

    mlp_tool.py export OUT.shpoly             trace the MLP and serialize it
    mlp_tool.py run FILE.shpoly BATCH OUT.bin load FILE, run it at batch BATCH, write "probs"
                                              as raw little-endian float32
    mlp_tool.py grad-run FILE.shpoly BATCH OUT.bin
                                              load the derived grad program FILE, print its
                                              signature, run it at batch BATCH (defaults left
                                              out, then given by name: the same bits), write
                                              every output in order as raw little-endian float32
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import shapepoly as sp  # noqa: E402


def constant(seed: int, *shape: int) -> np.ndarray:
    """The contract's constant: ((k*7919 + s*104729) % 2001 - 1000) / 10000 in float32."""
    k = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    v = ((k * 7919 + seed * 104729) % 2001) - 1000
    return (v.astype(np.float32) / np.float32(10000)).reshape(shape)


def mlp_input(batch: int) -> np.ndarray:
    k = np.arange(batch * 64, dtype=np.int64)
    return ((((k * 31 + 7) % 17) - 8).astype(np.float32) / np.float32(8)).reshape(batch, 64)


def labels(batch: int) -> np.ndarray:
    out = np.zeros((batch, 10), np.float32)
    r = np.arange(batch)
    out[r, (3 * r + 1) % 10] = 1
    return out


def export(path: str) -> None:
    with sp.Scope() as scope:
        x = scope.input("x", sp.F32, "batch, 64")
        specs = [(1, (64, 32)), (2, (32,)), (3, (32, 32)), (4, (32,)), (5, (32, 10)), (6, (10,))]
        c = [scope.constant(constant(s, *shape)) for s, shape in specs]
        zero = scope.constant(np.float32(0))
        h1 = x.matmul(c[0]).add(c[1]).maximum(zero)
        h2 = h1.matmul(c[2]).add(c[3]).maximum(zero)
        logits = h2.matmul(c[4]).add(c[5])
        probs = logits.softmax(1)
        with scope.program([x], {"probs": probs}) as program:
            program.save(path)


def run(path: str, batch: int, out: str) -> None:
    with sp.load(path) as program, program.runtime() as rt:
        probs = rt(x=mlp_input(batch))["probs"]
        with open(out, "wb") as f:
            f.write(probs.astype("<f4").tobytes())


def grad_run(path: str, batch: int, out: str) -> None:
    with sp.load(path) as program, program.runtime() as rt:
        for i in program.inputs:
            print("input %s %s%s" % (i.name, i.role, " default" if i.has_default else ""))
        for o in program.outputs:
            print("output %s %s" % (o.name, o.role))
        inputs = {"x": mlp_input(batch), "labels": labels(batch)}
        plain = rt.run(inputs)
        for i in program.inputs:
            if i.has_default:
                inputs[i.name] = program.input_default(i.name)
        given = rt.run(inputs)
        data = b""
        for name in program.output_names:
            a, b = plain[name], given[name]
            if a.shape != b.shape or a.tobytes() != b.tobytes():
                raise RuntimeError("giving the defaults by name changed output %s" % name)
            data += a.astype("<f4").tobytes()
        with open(out, "wb") as f:
            f.write(data)


def main(argv: list) -> int:
    usage = ("usage: mlp_tool.py export OUT.shpoly | mlp_tool.py run FILE.shpoly BATCH OUT.bin |"
             " mlp_tool.py grad-run FILE.shpoly BATCH OUT.bin")
    try:
        if len(argv) == 2 and argv[0] == "export":
            export(argv[1])
        elif len(argv) == 4 and argv[0] in ("run", "grad-run"):
            try:
                batch = int(argv[2])
            except ValueError:
                batch = 0
            if batch < 1:
                print("mlp_tool: BATCH must be a positive integer, got %r" % argv[2],
                      file=sys.stderr)
                return 2
            (run if argv[0] == "run" else grad_run)(argv[1], batch, argv[3])
        else:
            print(usage, file=sys.stderr)
            return 2
    except (sp.Error, OSError, RuntimeError) as e:
        print("mlp_tool:", e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
