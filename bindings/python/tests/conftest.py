"""Shared fixtures: the package is imported from bindings/python (no install needed)."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

import shapepoly as sp  # noqa: E402


@pytest.fixture
def dense():
    """A dense layer y = relu(x @ w + b) with x: (batch, 4), traced in its own scope."""
    with sp.Scope() as scope:
        x = scope.input("x", sp.F32, "batch, 4")
        w = scope.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
        b = scope.constant(np.array([0.5, -1.0, 0.0], np.float32))
        y = (x @ w + b).maximum(np.float32(0))
        program = scope.program([x], {"y": y})
    yield program
    program.close()


def dense_ref(x: np.ndarray) -> np.ndarray:
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    return np.maximum(x @ w + np.array([0.5, -1.0, 0.0], np.float32), 0)
