"""Issue 38, tenferro users: transformed programs bind inputs by name (tenferro's
p10_default_inputs pitfall), derivative names name one order, and every version number the
header and READMEs state is the library's. Written as tenferro's tests are: build a program,
transform it, run it with named inputs, and compare numbers."""

import ctypes
import os
import re

import numpy as np
import pytest

import shapepoly as sp
from shapepoly import _lib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))


def cube():
    with sp.Scope() as s:
        x = s.input("x", sp.F64, "")
        return s.program([x], {"y": x * x * x})


def run_positional(program, arrays):
    """shp_runtime_run with input_names NULL (what a C caller may write)."""
    L = _lib.lib
    rt = ctypes.c_void_p()
    sp._errors.check(L.shp_runtime_create(program._h(), None, ctypes.byref(rt)))
    handles = []
    try:
        for a in arrays:
            h = ctypes.c_void_p()
            sp._errors.check(L.shp_array_wrap(_lib.SHP_F64, None, 0, a.ctypes.data, a.nbytes,
                                              ctypes.byref(h)))
            handles.append(h.value)
        ins = (ctypes.c_void_p * len(handles))(*handles)
        outs = (ctypes.c_void_p * len(program.output_names))()
        sp._errors.check(L.shp_runtime_run(rt, None, ins, len(handles), outs,
                                           len(program.output_names)))
        for o in outs:
            L.shp_array_destroy(o)
    finally:
        for h in handles:
            L.shp_array_destroy(h)
        L.shp_runtime_destroy(rt)


# Item 11: a jvp program refuses positional inputs; names are the way.
def test_11_transformed_programs_bind_by_name_only():
    jp = cube().jvp(["x"])
    assert jp.input_names == ["x", "x.tangent"]
    x, v = np.array(2.0), np.array(5.0)
    with pytest.raises(sp.InvalidArgument, match="bind every input by name"):
        run_positional(jp, [v, x])  # swapped: would be 3 * 5^2 * 2 = 150
    out = jp.runtime()(**{"x.tangent": v, "x": x})
    assert out["y.tangent"] == 60.0
    run_positional(cube(), [x])  # a plain data-input program still runs positionally


# Item 12: tangents may have defaults (shp_program_jvp_with_default_tangents), as grad's seed
# has the default 1; a run that leaves the tangent out (by name) uses it. Without
# default_tangents a tangent has none, so nothing takes its place silently.
def test_12_tangents_may_have_defaults():
    jp = cube().jvp(["x"], default_tangents=1.0)
    assert jp.inputs[1].default is not None
    assert jp.inputs[1].default == sp.InputDefault("fill", 1.0)
    out = jp.runtime()(x=np.array(2.0))
    assert out["y"] == 8.0 and out["y.tangent"] == 3 * 2.0 ** 2
    assert jp.runtime()(**{"x": np.array(2.0), "x.tangent": np.array(5.0)})["y.tangent"] == 60.0
    assert cube().jvp(["x"]).inputs[1].default is None


# Item 13: the third derivative is x.grad.grad.grad, never x.grad again.
def test_13_derivative_names_stay_unique_across_orders():
    with sp.Scope() as s:
        x = s.input("x", sp.F64, "")
        p = s.program([x], {"y": x * x * x * x})
    g1 = p.grad("y", ["x"])
    g2 = g1.grad("x.grad", ["x"])
    g3 = g2.grad("x.grad.grad", ["x"])
    assert g1.output_names == ["y", "x.grad"]
    assert g2.output_names == ["x.grad", "x.grad.grad"]
    assert g3.output_names == ["x.grad.grad", "x.grad.grad.grad"]
    out = g3.runtime()(x=np.array(2.0))
    assert out["x.grad.grad"] == 12 * 2.0 ** 2 and out["x.grad.grad.grad"] == 24 * 2.0


def _read(*path):
    with open(os.path.join(REPO, *path), encoding="utf-8") as f:
        return f.read()


# Item 14: every version number and count the header and READMEs state.
def test_14_stated_versions_and_counts_are_the_librarys():
    header = _read("c_api", "include", "shapepoly", "shapepoly.h")
    newest = int(re.search(r"#define SHP_NEWEST_OP_SCHEMA_VERSION (\d+)",
                           _read("cc", "ops", "op_list.h")).group(1))
    assert sp.schema_version() == newest
    # No document pins the newest schema version to another number.
    docs = {"shapepoly.h": header, "README.md": _read("README.md"),
            "flatbuffers/README.md": _read("flatbuffers", "README.md"),
            "c_api/README.md": _read("c_api", "README.md"),
            "bindings/python/README.md": _read("bindings", "python", "README.md")}
    for name, text in docs.items():
        for m in re.finditer(r"newest schema version[^(.]*\((\d+)\)", text):
            assert int(m.group(1)) == newest, (name, m.group(0))
    # The schema_version row names each version up to the newest, and each op's version is
    # its `since` in ops.toml.
    row = [ln for ln in docs["flatbuffers/README.md"].splitlines()
           if ln.startswith("| `schema_version` |")][0]
    stated = [int(v) for v in re.findall(r"(\d+) (?:with|when)", row)]
    assert max(stated) == newest, row
    since = {m.group(1).upper(): int(m.group(2)) for m in re.finditer(
        r'fb = "(\w+)",[^}]*since = (\d+)', _read("cc", "ops", "ops.toml"))}
    for m in re.finditer(r"(\d+) (?:with|when it uses) ([^;:]*)", row):
        for op in re.findall(r"`([A-Z_]+)`", m.group(2)):
            assert since[op] == int(m.group(1)), (op, m.group(0))
    # Library version and ABI.
    v = {k: int(re.search(r"#define SHP_VERSION_%s (\d+)" % k, header).group(1))
         for k in ("MAJOR", "MINOR", "PATCH")}
    assert re.search(r'#define SHP_VERSION_STRING "%d\.%d\.%d"' % (v["MAJOR"], v["MINOR"],
                     v["PATCH"]), header)
    assert sp.version() == "%d.%d.%d" % (v["MAJOR"], v["MINOR"], v["PATCH"])
    abi = int(re.search(r"#define SHP_ABI_VERSION (\d+)", header).group(1))
    assert sp.abi_version() == abi == _lib.SHP_ABI_VERSION
    # Counts the header states, against cc/base/limits.h.
    limits = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"constexpr size_t (k\w+) = (\d+);", _read("cc", "base", "limits.h"))}
    for m in re.finditer(r"At most (\d+) variants", header):
        assert int(m.group(1)) == limits["kMaxVariants"]
    for m in re.finditer(r"(\d+) (?:constraints|facts)\b", header):
        assert int(m.group(1)) == limits["kMaxFacts"], m.group(0)
    # docs/data_dependent.md's "schema version N" is the since of the ops it describes.
    for m in re.finditer(r"schema version (\d+)", _read("docs", "data_dependent.md")):
        assert int(m.group(1)) == since["NONZERO"]
