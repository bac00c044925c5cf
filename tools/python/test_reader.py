"""The pure-Python reader agrees with the C library on every golden program.

The C library is loaded with ctypes from SHAPEPOLY_LIB (default build/lib/libshapepoly.so,
staged by tools/stage_lib.sh).
"""

import ctypes
import glob
import os

import numpy as np
import pytest

import shapepoly_reader as reader

ROOT = reader.ROOT
LIB_PATH = os.environ.get("SHAPEPOLY_LIB", os.path.join(ROOT, "build", "lib", "libshapepoly.so"))
GOLDEN = sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "*.shpoly")))


@pytest.fixture(scope="module")
def lib():
    L = ctypes.CDLL(LIB_PATH)
    vp, sz, cp = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
    L.shp_program_load.argtypes = [ctypes.c_char_p, sz, ctypes.POINTER(vp)]
    L.shp_program_load.restype = vp
    L.shp_program_destroy.argtypes = [vp]
    L.shp_error_message.argtypes = [vp]
    L.shp_error_message.restype = cp
    L.shp_error_code.argtypes = [vp]
    L.shp_error_code.restype = ctypes.c_int32
    L.shp_error_destroy.argtypes = [vp]
    for name in ["input", "output", "variable", "constraint", "assertion"]:
        getattr(L, f"shp_program_{name}_count").argtypes = [vp]
        getattr(L, f"shp_program_{name}_count").restype = sz
    for name in ["input_name", "output_name", "variable_name", "constraint_text", "assertion_text",
                 "assertion_message"]:
        getattr(L, f"shp_program_{name}").argtypes = [vp, sz]
        getattr(L, f"shp_program_{name}").restype = cp
    L.shp_program_input_has_default.argtypes = [vp, sz]
    L.shp_program_input_has_default.restype = ctypes.c_bool
    for name in ["input_dtype", "output_dtype", "input_role", "output_role"]:
        getattr(L, f"shp_program_{name}").argtypes = [vp, sz]
        getattr(L, f"shp_program_{name}").restype = ctypes.c_int
    for name in ["input_shape_string", "output_shape_string"]:
        getattr(L, f"shp_program_{name}").argtypes = [vp, sz, ctypes.c_char_p, sz, ctypes.POINTER(sz)]
        getattr(L, f"shp_program_{name}").restype = vp
    L.shp_program_to_text.argtypes = [vp, ctypes.c_char_p, sz, ctypes.POINTER(sz)]
    L.shp_program_to_text.restype = vp
    L.shp_program_schema_version.restype = ctypes.c_int32
    for name in ["guard_count", "variant_count"]:
        getattr(L, f"shp_program_{name}").argtypes = [vp]
        getattr(L, f"shp_program_{name}").restype = sz
    for name in ["guard_text", "guard_message", "guard_origin"]:
        getattr(L, f"shp_program_{name}").argtypes = [vp, sz]
        getattr(L, f"shp_program_{name}").restype = cp
    L.shp_program_metadata_count.argtypes = [vp]
    L.shp_program_metadata_count.restype = sz
    L.shp_program_metadata_key.argtypes = [vp, sz]
    L.shp_program_metadata_key.restype = cp
    L.shp_program_metadata_value.argtypes = [vp, cp]
    L.shp_program_metadata_value.restype = cp
    L.shp_program_variant_guard_count.argtypes = [vp, sz]
    L.shp_program_variant_guard_count.restype = sz
    for name in ["variant_guard_text", "variant_guard_message"]:
        getattr(L, f"shp_program_{name}").argtypes = [vp, sz, sz]
        getattr(L, f"shp_program_{name}").restype = cp
    return L


def load(lib, data):
    p = ctypes.c_void_p()
    err = lib.shp_program_load(data, len(data), ctypes.byref(p))
    if err:
        msg = lib.shp_error_message(err).decode()
        code = lib.shp_error_code(err)
        lib.shp_error_destroy(err)
        raise RuntimeError(f"code {code}: {msg}")
    return p


def text_call(lib, fn, *args):
    n = ctypes.c_size_t()
    assert fn(*args, None, 0, ctypes.byref(n)) is None
    buf = ctypes.create_string_buffer(n.value + 1)
    assert fn(*args, buf, n.value + 1, ctypes.byref(n)) is None
    return buf.value.decode()


def test_golden_files_exist():
    assert len(GOLDEN) >= 7


def test_schema_version_matches(lib):
    assert lib.shp_program_schema_version() == reader.SUPPORTED_SCHEMA_VERSION


@pytest.mark.parametrize("path", GOLDEN, ids=os.path.basename)
def test_reader_agrees_with_the_library(lib, path):
    data = open(path, "rb").read()
    info = reader.ProgramInfo(data)
    p = load(lib, data)
    try:
        listing = text_call(lib, lib.shp_program_to_text, p)
        lines = listing.splitlines()
        if len(info.variants) == 1:
            assert lines[0] == info.signature()
        else:  # a header line, then each variant's listing after "== variant v =="
            assert lines[0].startswith(f"program with {len(info.variants)} variants")
            assert [lines[i + 1] for i, line in enumerate(lines) if line.startswith("== variant ")] == \
                [q.signature() for q in info.variants]
        assert lib.shp_program_input_count(p) == len(info.inputs)
        for i, (name, role, dtype, shape, _) in enumerate(info.inputs):
            assert lib.shp_program_input_name(p, i).decode() == name
            assert reader.DTYPES[lib.shp_program_input_dtype(p, i)] == dtype
            assert lib.shp_program_input_role(p, i) == reader.INPUT_ROLES.index(role)
            # A stored default or a fill default (schema 11: the jvp's default tangents).
            assert lib.shp_program_input_has_default(p, i) == (name in info.defaults or
                                                               name in info.fills)
            assert text_call(lib, lib.shp_program_input_shape_string, p, i) == info.shape_text(shape)
        assert lib.shp_program_output_count(p) == len(info.outputs)
        for i, (name, dtype, shape) in enumerate(info.outputs):
            assert lib.shp_program_output_name(p, i).decode() == name
            assert reader.DTYPES[lib.shp_program_output_dtype(p, i)] == dtype
            assert reader.OUTPUT_ROLES[lib.shp_program_output_role(p, i)] == info.output_roles[i]
            assert text_call(lib, lib.shp_program_output_shape_string, p, i) == info.shape_text(shape)
        assert [lib.shp_program_constraint_text(p, i).decode()
                for i in range(lib.shp_program_constraint_count(p))] == info.constraints
        assert [(lib.shp_program_assertion_text(p, i).decode(), lib.shp_program_assertion_message(p, i).decode())
                for i in range(lib.shp_program_assertion_count(p))] == info.assertions
        c_vars = sorted(lib.shp_program_variable_name(p, i).decode()
                        for i in range(lib.shp_program_variable_count(p)))
        # The variables the shapes use: those solved from inputs, and the data-dependent ones.
        assert c_vars == sorted([v for v, _, _ in info.solve] + [info.variables[i][0] for i in info.unbacked])
        assert [(lib.shp_program_guard_text(p, i).decode(), lib.shp_program_guard_message(p, i).decode(),
                 lib.shp_program_guard_origin(p, i).decode())
                for i in range(lib.shp_program_guard_count(p))] == info.guards
        keys = [lib.shp_program_metadata_key(p, i) for i in range(lib.shp_program_metadata_count(p))]
        assert {k.decode(): lib.shp_program_metadata_value(p, k).decode() for k in keys} == info.metadata
        assert lib.shp_program_variant_count(p) == len(info.variants)
        for v, q in enumerate(info.variants):
            assert [(lib.shp_program_variant_guard_text(p, v, i).decode(),
                     lib.shp_program_variant_guard_message(p, v, i).decode())
                    for i in range(lib.shp_program_variant_guard_count(p, v))] == [(t, m) for t, m, _ in q.guards]
    finally:
        lib.shp_program_destroy(p)


def test_reader_decodes_constants():
    info = reader.read(os.path.join(ROOT, "tests", "golden", "dtype_f32_v1.shpoly"))
    np.testing.assert_array_equal(np.frombuffer(info.buffers[0], dtype="<f4"), [1, 2, 3, 4])
    mlp = reader.read(os.path.join(ROOT, "tests", "golden", "mlp_v1.shpoly"))
    assert len(mlp.buffers[0]) == 784 * 16 * 4  # zlib-compressed in the file


def test_reader_reads_version_2():
    """Roles, defaults (inflated like constants) and output roles of the version-2 files."""
    grad = reader.read(os.path.join(ROOT, "tests", "golden", "grad_v2.shpoly"))
    assert grad.schema_version == 2
    assert [(n, r) for n, r, _, _, _ in grad.inputs] == [
        ("x", "data"), ("y", "data"), ("w", "parameter"), ("b", "parameter"), ("loss.cotangent", "cotangent")]
    assert sorted(grad.defaults) == ["b", "loss.cotangent", "w"]
    assert np.frombuffer(grad.buffers[grad.defaults["loss.cotangent"]], dtype="<f8").tolist() == [1.0]
    np.testing.assert_array_equal(np.frombuffer(grad.buffers[grad.defaults["b"]], dtype="<f8"), [0.25, -0.5, 0.125])
    assert grad.output_roles == ["primal", "grad", "grad"]
    assert "  input 'loss.cotangent' (cotangent) with a default" in grad.describe().splitlines()
    mlp = reader.read(os.path.join(ROOT, "tests", "golden", "mlp_params_v2.shpoly"))
    assert [r for _, r, _, _, _ in mlp.inputs] == ["data"] + ["parameter"] * 4
    assert len(mlp.buffers[mlp.defaults["w1"]]) == 8 * 16 * 4
    v1 = reader.read(os.path.join(ROOT, "tests", "golden", "mlp_v1.shpoly"))
    assert v1.schema_version == 1 and not v1.defaults and v1.output_roles == ["primal"]


def test_reader_reads_version_3():
    """Guards (text, message, origin; apart from the assertions) and the variants of the
    version-3 golden file; older files have no guards and one variant."""
    rs = reader.read(os.path.join(ROOT, "tests", "golden", "row_softmax_variants_v3.shpoly"))
    assert rs.schema_version == 3 and len(rs.variants) == 2
    assert [q.guards for q in rs.variants] == [
        [("cols <= 16", "row softmax: the softmax op for short rows", "shp_scope_assume")],
        [("cols > 16", "row softmax: max-subtract, exp, sum, divide for long rows", "shp_scope_assume")]]
    assert [len(q.nodes) for q in rs.variants] == [1, 5]
    assert all(q.signature() == rs.signature() for q in rs.variants)
    assert not rs.assertions and not rs.variants[1].assertions
    text = rs.describe().splitlines()
    assert "  2 variants (the first whose guards hold runs):" in text
    assert "    guard cols > 16  \"row softmax: max-subtract, exp, sum, divide for long rows\"  " \
           "(from shp_scope_assume)" in text
    v2 = reader.read(os.path.join(ROOT, "tests", "golden", "grad_v2.shpoly"))
    assert v2.guards == [] and v2.variants == [v2]


def test_reader_rejects_other_data():
    with pytest.raises(reader.FormatError):
        reader.ProgramInfo(b"not a program at all")
