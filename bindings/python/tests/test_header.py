"""The declarations of shapepoly/_lib.py match c_api/include/shapepoly/shapepoly.h: every
function of the header is declared, and every enum constant and numeric version macro has the
header's value (the same check as the Rust and C# bindings)."""

import os
import re

import shapepoly as sp
from shapepoly import _lib

from conftest import REPO

HEADER = os.path.join(REPO, "c_api", "include", "shapepoly", "shapepoly.h")
# Test-only functions (no ABI promise); the binding declares them too (its tests call them).
EXPERIMENTAL = os.path.join(REPO, "c_api", "include", "shapepoly", "shapepoly_experimental.h")


def header_code() -> str:
    text = ""
    for path in (HEADER, EXPERIMENTAL):
        with open(path, encoding="utf-8") as f:
            text += f.read() + "\n"
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def header_functions():
    return sorted(set(re.findall(r"(?<![A-Za-z0-9_])(shp_\w+)\s*\(", header_code())))


def header_constants():
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"#define (SHP_\w+) (-?\d+)$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
        for item in re.split(r"[,{}]", line):
            item = item.split("/*")[0].strip()
            m = re.match(r"(SHP_\w+)\s*=\s*(-?\d+)$", item)
            if m:
                out[m.group(1)] = int(m.group(2))
    return out


# Functions of shapepoly.h the binding does not declare yet, each with the reason (none now:
# the issue 13/14 catch-up wrapped the data-dependent and error-explanation functions).
NOT_WRAPPED: dict = {}


def test_every_header_function_is_declared():
    names = header_functions()
    assert len(names) > 100, "parsed only %d functions" % len(names)
    missing = [n for n in names if n not in _lib.FUNCTIONS and n not in NOT_WRAPPED]
    assert not missing, "functions of shapepoly.h not declared in shapepoly/_lib.py: %s" % missing
    extra = [n for n in _lib.FUNCTIONS if n not in names]
    assert not extra, "declared but not in shapepoly.h: %s" % extra


def test_every_header_constant_matches():
    consts = header_constants()
    assert len(consts) > 60, "parsed only %d constants" % len(consts)
    for name, value in consts.items():
        assert hasattr(_lib, name), "%s = %d of shapepoly.h is not declared" % (name, value)
        assert getattr(_lib, name) == value, name
    assert _lib.SHP_VERSION_STRING == "%d.%d.%d" % (
        consts["SHP_VERSION_MAJOR"], consts["SHP_VERSION_MINOR"], consts["SHP_VERSION_PATCH"])
    assert _lib.SHP_LOAD_DEFAULT_MAX_BYTES == 1 << 30


def test_every_error_code_has_its_class():
    """Each code of enum shp_code but SHP_OK has a class named after it in CamelCase
    (SHP_SHAPE_MISMATCH -> ShapeMismatch) with that .code."""
    with open(HEADER, encoding="utf-8") as f:
        body = re.search(r"enum shp_code \{(.*?)\};", f.read(), re.S).group(1)
    codes = re.findall(r"(SHP_\w+) = (\d+)", body)
    assert len(codes) > 17
    for name, value in codes:
        if name == "SHP_OK":
            continue
        cls = sp.error_class(int(value))
        camel = "".join(w.capitalize() for w in name[len("SHP_"):].split("_"))
        assert cls is not sp.Error, "no exception class for %s" % name
        assert cls.__name__ == camel and cls.code == int(value), name
        assert getattr(sp, camel) is cls and issubclass(cls, sp.Error)
    assert len(sp.Error.__subclasses__()) == len(codes) - 1


def test_abi_and_versions():
    assert sp.abi_version() == _lib.SHP_ABI_VERSION == sp.ABI_VERSION
    assert sp.version() == _lib.SHP_VERSION_STRING
    assert sp.schema_version() >= 2
    assert sp.code_string(1).startswith("SHP_INVALID_ARGUMENT")
    assert sp.simd_target()
    assert sp.simd_sum_f32([1e8, 1, -1e8]) == 1.0
    assert sp.simd_sum_f32([]) == 0.0


def test_library_lookup_order(tmp_path, monkeypatch):
    monkeypatch.setenv("SHAPEPOLY_LIB", str(tmp_path / "x.so"))
    paths = _lib.candidate_paths()
    assert paths[0] == str(tmp_path / "x.so")
    assert paths[1].endswith(os.path.join("shapepoly", "libshapepoly.so"))
    assert paths[2].endswith(os.path.join("build", "lib", "libshapepoly.so"))
    assert not os.path.isabs(os.path.relpath(paths[2], REPO))


def test_every_declared_function_is_wrapped():
    """Declaring is not enough: each function is called by the package's API somewhere."""
    pkg = os.path.dirname(sp.__file__)
    code = ""
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") and name != "_lib.py":
            with open(os.path.join(pkg, name), encoding="utf-8") as f:
                code += f.read()
    unused = [n for n in _lib.FUNCTIONS if not re.search(r"\b%s\b" % n, code)]
    assert not unused, "declared but not wrapped by any API of the package: %s" % unused
