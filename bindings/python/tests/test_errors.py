"""Every error path maps to its exception class, with .code and the library's message; closed
handles raise ValueError, never crash."""

import numpy as np
import pytest

import shapepoly as sp
from shapepoly import _lib


def test_error_classes_and_codes():
    assert issubclass(sp.ShapeMismatch, sp.Error)
    assert sp.error_class(6) is sp.ShapeMismatch
    assert sp.error_class(999) is sp.Error
    e = sp.Error("boom", 999)
    assert e.code == 999 and e.message == "boom" and str(e) == "boom"
    assert sp.Internal("x").code == _lib.SHP_INTERNAL
    import pickle
    e2 = pickle.loads(pickle.dumps(sp.NotFound("gone", 12)))
    assert type(e2) is sp.NotFound and e2.code == 12 and e2.message == "gone"


def test_invalid_argument():
    s = sp.Scope()
    with pytest.raises(sp.InvalidArgument) as e:
        s.declare("n", 5, 1)
    assert e.value.code == _lib.SHP_INVALID_ARGUMENT and "n" in e.value.message
    with pytest.raises(sp.InvalidArgument):
        s.input("", sp.F32, "3")
    with pytest.raises(sp.InvalidArgument):
        sp.Runtime(s.program([], {"c": s.constant(np.float32(1))}), num_threads=-1)


def test_parse_error():
    with pytest.raises(sp.ParseError) as e:
        sp.Scope(["b >= "])
    assert e.value.code == 2
    with pytest.raises(sp.ParseError):
        sp.Scope().dim("2 * * b")


def test_inconclusive_from_an_op():
    s = sp.Scope()
    x = s.input("x", sp.F32, "a")
    y = s.input("y", sp.F32, "b")
    with pytest.raises(sp.Inconclusive) as e:
        x.matmul(y)
    assert e.value.code == 3


def test_scope_mismatch():
    s1, s2 = sp.Scope(), sp.Scope()
    with pytest.raises(sp.ScopeMismatch):
        s1.var("a") + s2.var("a")
    with pytest.raises(sp.ScopeMismatch):
        s1.input("x", sp.F32, "3") + s2.input("y", sp.F32, "3")


def test_unsatisfiable():
    with pytest.raises(sp.Unsatisfiable):
        sp.Scope(["a >= 5", "a <= 2"])
    with pytest.raises(sp.Unsatisfiable):
        sp.Scope(["a >= 5"], ranges={"a": (0, 3)})
    with pytest.raises(TypeError):
        sp.Scope("a >= 5")


def test_shape_mismatch(dense):
    s = sp.Scope()
    with pytest.raises(sp.ShapeMismatch) as e:
        s.input("x", sp.F32, "3") + s.input("y", sp.F32, "4")
    assert "add" in e.value.message
    with pytest.raises(sp.ShapeMismatch) as e:
        dense.runtime()(x=np.zeros((2, 5), np.float32))
    assert "'x'" in e.value.message


def test_constraint_violation():
    s = sp.Scope(["b >= 2"])
    x = s.input("x", sp.F32, "b")
    p = s.program([x], {"y": x + 1.0})
    with pytest.raises(sp.ConstraintViolation):
        p.runtime()(x=np.zeros(1, np.float32))
    with pytest.raises(sp.ConstraintViolation):
        p.check_shapes({"x": (1,)})


def test_unsolvable():
    s = sp.Scope()
    x = s.input("x", sp.F32, "a * b")
    with pytest.raises(sp.Unsolvable):
        s.program([x], {"y": x})


def test_division_by_zero():
    s = sp.Scope(ranges={"z": (0, 3)})
    with pytest.raises(sp.DivisionByZero):
        s.dim("b // 0")
    # A divisor that may be 0 is accepted; evaluating it where it is 0 raises.
    q = s.var("b") // s.var("z")
    assert q.evaluate(b=7, z=3) == 2
    with pytest.raises(sp.DivisionByZero):
        q.evaluate(b=7, z=0)


def test_overflow():
    s = sp.Scope()
    with pytest.raises(sp.Overflow):
        s.dim(2 ** 62) * 4
    with pytest.raises(sp.Overflow):
        sp.zeros(sp.F32, (1 << 62,))


def test_dtype_mismatch(dense):
    s = sp.Scope()
    with pytest.raises(sp.DtypeMismatch):
        s.input("x", sp.F32, "3") + s.input("y", sp.I32, "3")
    rt = dense.runtime()
    with pytest.raises(sp.DtypeMismatch):
        rt(x=np.zeros((2, 4), np.float64))
    with pytest.raises(sp.DtypeMismatch):
        rt(x=np.zeros((2, 4), np.float16))


def test_not_found(dense):
    with pytest.raises(sp.NotFound) as e:
        dense.runtime()(x=np.zeros((2, 4), np.float32), nope=np.zeros(1, np.float32))
    assert "nope" in e.value.message
    with pytest.raises(sp.NotFound):
        dense.grad("nope", ["x"])
    with pytest.raises(sp.NotFound):
        sp.Scope().dim("b").evaluate(c=1)


def test_invalid_program_and_version_mismatch(dense):
    with pytest.raises(sp.InvalidProgram):
        sp.loads(b"not a program")
    data = dense.serialize()
    with pytest.raises(sp.InvalidProgram):
        sp.loads(data[: len(data) // 2])
    # Some byte of the header holds the schema version: raising it gives VersionMismatch.
    codes = set()
    for i in range(len(data)):
        b = bytearray(data)
        b[i] = (b[i] + 7) & 0xFF
        try:
            sp.loads(bytes(b)).close()
        except (sp.InvalidProgram, sp.VersionMismatch) as e:
            codes.add(type(e))
    assert codes == {sp.InvalidProgram, sp.VersionMismatch}


def test_load_max_bytes(dense):
    with pytest.raises(sp.InvalidProgram) as e:
        sp.loads(dense.serialize(), max_bytes=4)
    assert "max" in e.value.message.lower()
    sp.loads(dense.serialize(), max_bytes=1 << 20).close()


def test_unsupported():
    s = sp.Scope()
    with pytest.raises(sp.Unsupported):
        s.dim("(a+b+c+d+e)^40")


def test_out_of_memory():
    with pytest.raises(sp.OutOfMemory):
        sp.zeros(sp.F32, (1 << 40,))


def test_guard_failed():
    s = sp.Scope()
    x = s.input("x", sp.F32, "n")
    s.assume(x.shape[0], ">", 4, "big")
    p = s.program([x], {"y": x * 2.0})
    with pytest.raises(sp.GuardFailed) as e:
        p.runtime()(x=np.ones(2, np.float32))
    assert e.value.code == 18 and "big" in e.value.message


def test_closed_handles_raise_value_error(dense):
    s = sp.Scope()
    d = s.var("b")
    t = s.input("x", sp.F32, "b")
    s.close()
    s.close()  # idempotent
    assert s.closed
    for f in (lambda: d + 1, lambda: str(d), lambda: d.bounds(), lambda: t + t, lambda: t.shape,
              lambda: t.dtype, lambda: s.var("c"), lambda: s.constraints,
              lambda: s.input("y", sp.F32, "3"), lambda: d == 1, lambda: t.sum(),
              lambda: d.guard(">", 1), lambda: s.set_hint("b", 2)):
        with pytest.raises(ValueError):
            f()
    assert "closed" in repr(d) and "closed" in repr(t) and "closed" in repr(s)
    other = sp.Scope()
    with pytest.raises(ValueError):
        other.var("a") + d  # a dim of a closed scope, even as the right operand
    rt = dense.runtime()
    dense.close()
    assert dense.closed and "closed" in repr(dense)
    for f in (lambda: dense.inputs, lambda: dense.serialize(), lambda: dense.runtime(),
              lambda: dense.grad("y", ["x"]), lambda: dense.text):
        with pytest.raises(ValueError):
            f()
    # The runtime keeps its program alive.
    assert rt(x=np.ones((1, 4), np.float32))["y"].shape == (1, 3)
    rt.close()
    for f in (lambda: rt(x=np.ones((1, 4), np.float32)), lambda: rt.plans_built,
              lambda: rt.dry_run({"x": (1, 4)}), lambda: rt.output_shape(0)):
        with pytest.raises(ValueError):
            f()
