"""tools/gen_ffi.py: the checked-in raw declarations of the Rust, C# and Python bindings are
what the generator makes from shapepoly.h, and the generator maps or refuses (never drops)
every declaration of a header."""

import importlib.util
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("gen_ffi", os.path.join(ROOT, "tools", "gen_ffi.py"))
gen = importlib.util.module_from_spec(_spec)
sys.modules["gen_ffi"] = gen  # dataclasses look the module up by name
_spec.loader.exec_module(gen)

with open(os.path.join(ROOT, gen.HEADER), encoding="utf-8") as _f:
    HEADER_TEXT = _f.read()


def test_checked_in_files_are_up_to_date(capsys):
    """The same check as `tools/gen_ffi.py --check`: run tools/gen_ffi.py after a header edit."""
    rc = gen.main(["--check"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "up to date" in out


def test_every_header_function_is_declared_in_every_binding():
    h = gen.parse_header(HEADER_TEXT)
    names = {f.name for f in h.functions}
    # Independent of the parser: every `SHP_API ... shp_x(` of the header.
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", HEADER_TEXT, flags=re.S)
    assert names == set(re.findall(r"SHP_API\b[^;]*?\b(shp_\w+)\s*\(", code))
    assert len(names) > 200
    for path, (_, pattern) in gen.GENERATED_FILES.items():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        assert gen.NOTICE in text.splitlines()[0], path
        assert names <= set(re.findall(pattern, text, re.M)), path


def test_stale_and_missing_files_fail_the_check(tmp_path, capsys):
    assert gen.main(["--out", str(tmp_path)]) == 0
    assert gen.main(["--check", "--out", str(tmp_path)]) == 0
    rust = tmp_path / gen.RUST_OUT
    rust.write_text(rust.read_text().replace("pub fn shp_dim_add(", "pub fn shp_dim_plus("))
    os.remove(tmp_path / gen.PYTHON_OUT)
    capsys.readouterr()
    assert gen.main(["--check", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "generated.rs is stale (2 lines differ)" in out
    assert "-    pub fn shp_dim_plus(" in out and "+    pub fn shp_dim_add(" in out
    assert "_lib_generated.py is missing" in out
    assert "2 generated file(s) out of date" in out


NEW_OP = """
/// A new op, as the op spec will generate them.
SHP_API SHP_MUST_USE_RESULT shp_error_t* shp_tensor_frobnicate(const shp_tensor_t* x,
                                                               const shp_dim_t* const* dims,
                                                               size_t rank, double alpha,
                                                               bool flag,
                                                               const shp_tensor_t** tensor_out);
#ifdef __cplusplus
"""


def test_a_new_op_in_the_usual_style_needs_no_change():
    text = HEADER_TEXT.replace("\n#ifdef __cplusplus\n}", NEW_OP + "}", 1)
    assert text != HEADER_TEXT
    files = gen.generate(text)
    assert ("    pub fn shp_tensor_frobnicate(\n        x: *const shp_tensor_t,\n"
            "        dims: *const *const shp_dim_t,\n        rank: usize,\n        alpha: f64,\n"
            "        flag: bool,\n        tensor_out: *mut *const shp_tensor_t,\n"
            "    ) -> *mut shp_error_t;\n") in files[gen.RUST_OUT]
    assert ("internal static extern IntPtr shp_tensor_frobnicate(IntPtr x, IntPtr[] dims, "
            "UIntPtr rank, double alpha, [MarshalAs(UnmanagedType.U1)] bool flag, "
            "out IntPtr tensor_out);") in " ".join(files[gen.CSHARP_OUT].split())
    assert ('"shp_tensor_frobnicate": (_p, [_p, _p, _size, _f64, _bool, _p]),'
            in files[gen.PYTHON_OUT])


MINI = """
#include <stdint.h>
#define SHP_API
#define SHP_ANSWER 42
#define SHP_BIG ((uint64_t)1 << 40)
#define SHP_NAME "mini"
#define SHP_MASK 0xFFu
#define SHP_ALL ((uint32_t)-1)
typedef struct shp_thing shp_thing_t;
typedef struct shp_point { int64_t x; const char* label; } shp_point_t;
typedef enum { SHP_A = 0, SHP_B, SHP_C = 7 } shp_letter_t;
typedef int32_t shp_code_t;
enum shp_code { SHP_OK = 0, SHP_BAD = 1 };
typedef void (*shp_visit_fn)(const shp_point_t* point, void* user_data);
/* ---- Things ---- */
SHP_API shp_code_t shp_thing_move(shp_thing_t* thing, const shp_point_t* to,
                                  shp_letter_t letter);
SHP_API void shp_thing_visit(const shp_thing_t* thing, shp_visit_fn fn, void* user_data);
SHP_API const char* shp_thing_name(void);
SHP_API void shp_thing_flags(const bool* flags, bool* out, size_t n, bool* any_out);
"""


@pytest.fixture
def no_overrides(monkeypatch):
    """MINI has none of the functions the C# override table names (which would be stale)."""
    monkeypatch.setattr(gen, "CSHARP_PARAM_TYPES", {})
    monkeypatch.setattr(gen, "CSHARP_NULL_OVERLOADS", {})


def test_structs_enums_callbacks_and_constants(no_overrides):
    files = gen.generate(MINI)
    rust, cs, py = files[gen.RUST_OUT], files[gen.CSHARP_OUT], files[gen.PYTHON_OUT]
    assert "pub const SHP_BIG: u64 = 1 << 40;" in rust
    assert "pub const SHP_MASK: i32 = 255;" in rust and "pub const SHP_ALL: u32 = 4294967295;" in rust
    assert 'pub const SHP_NAME: &str = "mini";' in rust
    assert "pub struct shp_point_t {\n    pub x: i64,\n    pub label: *const c_char,\n}" in rust
    assert "pub const SHP_C: shp_letter_t = 7;" in rust and "pub const SHP_B: shp_letter_t = 1;" in rust
    assert "pub const SHP_BAD: shp_code_t = 1;" in rust
    assert "pub type shp_visit_fn = Option<" in rust
    assert 'extern "C" {\n    // ---- Things ----\n    pub fn shp_thing_move(' in rust  # sections
    assert ("pub fn shp_thing_move(\n        thing: *mut shp_thing_t,\n"
            "        to: *const shp_point_t,\n        letter: shp_letter_t,\n"
            "    ) -> shp_code_t;") in rust
    assert "pub fn shp_thing_visit(thing: *const shp_thing_t, r#fn: shp_visit_fn," in rust
    assert "internal delegate void VisitFn(IntPtr point, IntPtr user_data);" in cs
    cs = " ".join(cs.split())
    assert "internal static extern int shp_thing_move(IntPtr thing, ref shp_point_t to, int letter);" in cs
    assert "internal static extern void shp_thing_visit(IntPtr thing, VisitFn fn, IntPtr user_data);" in cs
    assert "internal const ulong SHP_BIG = 1099511627776;" in cs  # C# would shift an int
    assert "internal const int SHP_MASK = 255;" in cs and "internal const uint SHP_ALL = 4294967295;" in cs
    assert ("[StructLayout(LayoutKind.Sequential)] internal struct shp_point_t { internal long x; "
            "internal IntPtr label; }") in cs
    assert ("shp_thing_flags([MarshalAs(UnmanagedType.LPArray, ArraySubType = UnmanagedType.U1)] "
            "bool[] flags, [In, Out] [MarshalAs(UnmanagedType.LPArray, ArraySubType = UnmanagedType.U1)] "
            "bool[] @out, UIntPtr n, [MarshalAs(UnmanagedType.U1)] out bool any_out);") in cs
    ns: dict = {}
    exec(compile(py, "_lib_generated.py", "exec"), ns)  # noqa: S102 (our own generated code)
    assert ns["SHP_BIG"] == 1 << 40 and ns["SHP_C"] == 7 and ns["SHP_NAME"] == "mini"
    assert ns["SHP_MASK"] == 255 and ns["SHP_ALL"] == (1 << 32) - 1
    assert ns["FUNCTIONS"]["shp_thing_name"] == (ns["_str"], [])
    assert ns["FUNCTIONS"]["shp_thing_visit"] == (None, [ns["_p"], ns["_p"], ns["_p"]])
    assert [f[0] for f in ns["shp_point_t"]._fields_] == ["x", "label"]
    assert ns["VISIT_FN"]._restype_ is None


@pytest.mark.parametrize("bad, message", [
    # A function without SHP_API is not exported: the check must not silently accept it.
    ("shp_code_t shp_forgot_api(int64_t x);", "cannot read the declaration 'shp_code_t shp_forgot_api("),
    ("SHP_API int64_t shp_unknown(shp_mystery_t* m);", "unknown type 'shp_mystery_t'"),
    ("typedef struct { shp_mystery_t* m; } shp_box_t;", "shp_box_t: unknown type 'shp_mystery_t'"),
    ("SHP_API int64_t shp_array_param(int64_t xs[4]);", "unsupported parameter 'int64_t xs[4]'"),
    ("SHP_API int64_t shp_no_void();", "write (void)"),
    ("SHP_API int64_t shp_struct_kw(struct shp_thing* t);", "unsupported type"),
    ("enum shp_other { SHP_X = 1 };", "enum shp_other has no typedef"),
    ("#define SHP_WEIRD foo(3)", "#define SHP_WEIRD foo(3): not an integer expression"),
    ("int shp_global_variable;", "cannot read the declaration"),
    ("SHP_API int64_t shp_thing_name(void);", "functions declared twice: shp_thing_name"),
    ("#define SHP_TOO_BIG (1 << 31)", "#define SHP_TOO_BIG (1 << 31): 2147483648 does not fit int32_t"),
])
def test_irregular_declarations_are_refused_by_name(no_overrides, bad, message):
    with pytest.raises(gen.HeaderError, match=re.escape(message)):
        gen.generate(MINI + bad + "\n")


def test_a_stale_override_is_an_error(no_overrides):
    gen.CSHARP_PARAM_TYPES[("shp_thing_gone", "data")] = "byte[]"
    with pytest.raises(gen.HeaderError, match=re.escape("stale C# override(s): shp_thing_gone(data)")):
        gen.generate(MINI)


def test_mini_outputs_compile(no_overrides, tmp_path):
    """What the generator writes for structs, callbacks, bool arrays and constants compiles
    (the real outputs are compiled by the binding suites)."""
    import shutil
    import subprocess
    files = gen.generate(MINI)
    if shutil.which("rustc"):
        (tmp_path / "generated.rs").write_text(files[gen.RUST_OUT])
        (tmp_path / "lib.rs").write_text('#![allow(non_camel_case_types)]\ninclude!("generated.rs");\n')
        r = subprocess.run(["rustc", "--edition", "2021", "--crate-type", "lib", "-D", "warnings",
                            "--out-dir", str(tmp_path), str(tmp_path / "lib.rs")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0, r.stdout
    if shutil.which("mcs"):
        (tmp_path / "g.cs").write_text(files[gen.CSHARP_OUT])
        (tmp_path / "lib.cs").write_text("namespace ShapePoly { internal static partial class "
                                         'NativeMethods { internal const string Lib = "mini"; } }\n')
        r = subprocess.run(["mcs", "-nologo", "-warn:4", "-warnaserror+", "-target:library",
                            "-out:" + str(tmp_path / "mini.dll"), str(tmp_path / "g.cs"),
                            str(tmp_path / "lib.cs")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0, r.stdout
