"""Shared by the exporter-zoo generators: writes a model and its manifest.

The manifest (<name>.json beside <name>.onnx) lists, for each of a few rounds, the concrete
shape of every graph input (the exporter's dims are symbolic; the rounds pick different sizes),
its element type, the integer range for integer inputs, and the tolerance of the comparison
(max|ours - onnxruntime| <= tol * max(1, max|onnxruntime|) per output). The test
(bindings/python/tests/test_exporter_zoo.py) imports each model once and compares every round
with onnxruntime; it needs neither torch nor JAX.
"""

import json
import os
from typing import Any, Dict, List, Sequence

ZOO = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "tests", "exporter_zoo")


def write(folder: str, name: str, model_bytes: bytes, rounds: Sequence[List[Any]],
          dtypes: Sequence[str], int_range: Sequence[int] = (0, 10), tol: float = 1e-4,
          note: str = "") -> str:
    """Writes <ZOO>/<folder>/<name>.onnx and .json; rounds: per round, each input's shape."""
    out = os.path.join(ZOO, folder)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model_bytes)
    manifest: Dict[str, Any] = {"rounds": [[list(s) for s in r] for r in rounds],
                                "dtypes": list(dtypes), "int_range": list(int_range),
                                "tol": tol}
    if note:
        manifest["note"] = note
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return os.path.join(out, name + ".onnx")
