"""tools/gen_ops.py: the generated files are up to date with cc/ops/ops.toml, and the spec's
consistency checks refuse broken specs (duplicate codes, gaps, unknown attribute sets or
parameter fields) with a message that names the op."""

import copy
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, "tools", "gen_ops.py")

_spec = importlib.util.spec_from_file_location("gen_ops", GEN)
gen_ops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_ops)


def test_generated_files_are_up_to_date():
    r = subprocess.run([sys.executable, GEN, "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _raw_spec():
    import tomllib
    with open(gen_ops.SPEC, "rb") as f:
        return tomllib.load(f)


def _check(raw, tmp_path):
    path = tmp_path / "ops.toml"
    path.write_text(_to_toml(raw))
    return gen_ops.load_spec(str(path))


def _to_toml(raw):
    """A minimal TOML writer for the spec's shapes (tables of scalars, arrays of tables)."""
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return '"""%s"""' % v if "\n" in v else '"%s"' % v.replace('"', '\\"')
        if isinstance(v, list):
            return "[%s]" % ", ".join(val(x) for x in v)
        if isinstance(v, dict):
            return "{ %s }" % ", ".join("%s = %s" % (k, val(x)) for k, x in v.items())
        raise TypeError(v)
    out = []
    for k, v in raw.items():
        if k in ("attrs", "c_function"):
            continue
        out.append("%s = %s" % (k, val(v)))
    for k in ("attrs", "c_function"):
        for t in raw.get(k, []):
            out.append("[[%s]]" % k)
            out += ["%s = %s" % (a, val(b)) for a, b in t.items()]
    return "\n".join(out) + "\n"


def _fn(raw, op):
    return next(f for f in raw["c_function"] if f["op"] == op)


def test_the_spec_round_trips_through_the_test_writer(tmp_path):
    spec = _check(_raw_spec(), tmp_path)
    assert len(spec["ops"]) == len(gen_ops.load_spec()["ops"])


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["other"].append(dict(r["other"][-1], name="dup", cpp="Dup", fb="DUP")),
     "share code"),
    (lambda r: r["other"].append(dict(r["other"][-1], name="gap", cpp="Gap", fb="GAP",
                                      code=1000)), "without gaps"),
    (lambda r: r["other"][-1].update(attrs="NoSuchAttrs"), "is not an [[attrs]] entry"),
    (lambda r: r["unary"][0].update(c_value=99), "C enum values"),
    (lambda r: r["other"][-1].update(since=99), "since 99"),
    (lambda r: r["other"][-1].update(ad="maybe"), "ad must be"),
    (lambda r: _fn(r, "reverse")["params"][-1].update(attr="no_such_field"),
     "names no field"),
    (lambda r: r["c_function"][0]["params"][0].update(type="int", attr="axis"),
     "first parameter must be a tensor"),
])
def test_broken_specs_are_refused(tmp_path, mutate, message):
    raw = copy.deepcopy(_raw_spec())
    mutate(raw)
    with pytest.raises(gen_ops.SpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _check(raw, tmp_path)


def test_schema_versions_match_the_reader():
    sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
    import ops_spec
    spec = gen_ops.load_spec()
    for o in spec["ops"]:
        assert ops_spec.SINCE[o["code"]] == o["since"]
    assert ops_spec.NEWEST_SCHEMA_VERSION == spec["newest_schema_version"]
