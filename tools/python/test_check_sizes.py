"""tools/check_sizes.py: finds long functions (not control blocks, not braces in comments or
strings), honours reasons, refuses markers without one."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("check_sizes", os.path.join(ROOT, "tools", "check_sizes.py"))
cs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cs)


def _fn(name, body_lines, head="int %s(int a) {"):
    return [head % name] + ["  a += 1;"] * body_lines + ["  return a;", "}"]


def test_functions_and_lambdas_are_measured_but_not_control_blocks():
    lines = _fn("f", 10) + ["void g() {", "  if (x) {", "    y();", "  }",
                            "  auto h = [&](int v) {", "    return v;", "  };", "}"]
    found = {(s, n) for s, n in cs.functions(lines)}
    assert (0, 13) in found          # f
    assert (13, 8) in found          # g, whole
    assert (17, 3) in found          # the lambda
    assert all(n != 3 or s == 17 for s, n in found)  # the if block is no function


def test_braces_in_comments_and_strings_do_not_count():
    lines = ["void f() {", '  const char* s = "{ ) {";  // } ) {', "  /* { */", "}"]
    assert cs.functions(lines) == [(0, 4)]


def _check(tmp_path, text, monkeypatch):
    (tmp_path / "cc").mkdir(exist_ok=True)
    (tmp_path / "cc" / "x.cc").write_text(text)
    monkeypatch.setattr(cs, "ROOT", str(tmp_path))
    return cs.check_file("cc/x.cc")


def test_long_function_fails_unless_a_reason_is_given(tmp_path, monkeypatch):
    long_fn = "\n".join(_fn("f", 160)) + "\n"
    assert any("a function of 163 lines" in p for p in _check(tmp_path, long_fn, monkeypatch))
    ok = "// size-gate: one table, read top to bottom\n" + long_fn
    assert _check(tmp_path, ok, monkeypatch) == []
    empty = "// size-gate:\n" + long_fn
    assert any("needs a reason" in p for p in _check(tmp_path, empty, monkeypatch))


def test_long_file_fails_unless_its_head_says_why(tmp_path, monkeypatch):
    body = "\n".join("int v%d = %d;" % (i, i) for i in range(900)) + "\n"
    assert any("900 lines" in p for p in _check(tmp_path, body, monkeypatch))
    assert _check(tmp_path, "/* size-gate: file: a generated table */\n" + body, monkeypatch) == []
