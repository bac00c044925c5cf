#!/usr/bin/env python3
"""Runs every test suite of the project and prints one closing line 'N passed, M failed'.

Used by `make test` (and so by CI). Each suite in SUITES has a command and a parser that
turns the command's output into (passed, failed) counts. A suite whose `present` check is
false is skipped (its tests do not exist yet). The exit status is non-zero if any test
failed or any suite could not run (command missing, crashed, or exited non-zero without
reporting a failure).

To add a suite, append a Suite(...) to SUITES below, e.g. for the Rust binding:

    Suite(
        name="rust",
        cmd=["cargo", "test", "--offline"],
        cwd="bindings/rust",
        parse=parse_cargo,            # write parse_cargo(output, returncode) -> Counts
        present=exists("bindings/rust/Cargo.toml"),
        needs_lib=True,               # stage build/lib/libshapepoly.so first
        env={"SHAPEPOLY_LIB_DIR": os.path.join(ROOT, "build", "lib")},
    ),

Only the standard library is used, so any Python 3.8+ can run it; `make test` uses .venv.
Usage: tools/run_tests.py [suite-name ...]   (default: all suites)
"""

import dataclasses
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from typing import Callable, Dict, List, Optional, Tuple, Union

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

Counts = Tuple[int, int]  # (passed, failed)


@dataclasses.dataclass
class Suite:
    name: str
    cmd: Union[List[str], Callable[[], List[str]]]  # a callable is evaluated when the suite runs
    parse: Callable[[str, int], Counts]  # (combined output, return code) -> counts
    present: Callable[[], bool] = lambda: True
    cwd: str = "."  # relative to the repository root
    env: Optional[Dict[str, str]] = None  # added to the environment
    ok_codes: Tuple[int, ...] = (0,)  # return codes that mean "ran, no failure"
    needs_lib: bool = False  # stage build/lib/libshapepoly.so (tools/stage_lib.sh) first


def exists(*paths: str) -> Callable[[], bool]:
    return lambda: any(os.path.exists(os.path.join(ROOT, p)) for p in paths)


def has_tests(*dirs: str) -> Callable[[], bool]:
    """True if a directory holds pytest files (test_*.py or *_test.py) anywhere below it."""

    def check() -> bool:
        for d in dirs:
            for _, _, files in os.walk(os.path.join(ROOT, d)):
                if any(re.match(r"(test_.*|.*_test)\.py$", f) for f in files):
                    return True
        return False

    return check


# ---- Parsers ----------------------------------------------------------------------------------

BAZEL_STATUS = re.compile(
    r"^(//\S+|@\S+)\s+(?:\(cached\)\s+)?"
    r"(PASSED|FAILED TO BUILD|FAILED|FLAKY|TIMEOUT|NO STATUS|INCOMPLETE|SKIPPED)\b")


def parse_bazel(output: str, returncode: int) -> Counts:
    """Counts gtest cases from each target's test.xml (cached targets keep theirs).

    A target without case information counts as one test; FAILED TO BUILD, NO STATUS,
    TIMEOUT and INCOMPLETE count as one failure each.
    """
    testlogs = subprocess.run(["bazel", "info", "bazel-testlogs"], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
    passed = failed = 0
    for line in output.splitlines():
        m = BAZEL_STATUS.match(line)
        if not m:
            continue
        label, status = m.groups()
        if status == "SKIPPED":
            continue
        if status not in ("PASSED", "FAILED", "FLAKY"):
            failed += 1
            continue
        pkg, _, name = label.lstrip("/").partition(":")
        total = bad = 0
        try:
            for case in ET.parse(os.path.join(testlogs, pkg, name, "test.xml")).getroot().iter(
                    "testcase"):
                if case.get("status") == "notrun" or case.find("skipped") is not None:
                    continue
                total += 1
                if case.find("failure") is not None or case.find("error") is not None:
                    bad += 1
        except (OSError, ET.ParseError):
            total = 0
        if total:
            passed += total - bad
            failed += bad
            if status == "FAILED" and bad == 0:
                failed += 1  # crashed after its cases, or a non-gtest failure
        elif status == "FAILED":
            failed += 1
        else:
            passed += 1
    return passed, failed


def parse_summary_line(output: str, returncode: int) -> Counts:
    """Reads the last 'N passed, M failed' line a script prints."""
    for line in reversed(output.splitlines()):
        m = re.match(r"^(\d+) passed, (\d+) failed$", line.strip())
        if m:
            return int(m.group(1)), int(m.group(2))
    return 0, 0


def parse_pytest(output: str, returncode: int) -> Counts:
    """Reads pytest's closing line, e.g. '=== 3 passed, 1 failed, 2 errors in 0.1s ==='."""
    passed = failed = 0
    for line in reversed(output.splitlines()):
        if re.search(r"\b(passed|failed|errors?|no tests ran)\b.* in [\d.]+s", line):
            counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (\w+)", line))
            passed = counts.get("passed", 0)
            failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
            break
    return passed, failed


def parse_go_test(output: str, returncode: int) -> Counts:
    """Counts the '--- PASS' / '--- FAIL' lines of `go test -v` for tests and examples (indented
    subtest lines are not counted); a package that fails to build counts as one failure."""
    passed = len(re.findall(r"^--- PASS", output, re.M))
    failed = len(re.findall(r"^--- FAIL", output, re.M))
    failed += len(re.findall(r"^FAIL\s+\S+\s+\[(?:build|setup) failed\]", output, re.M))
    return passed, failed


def parse_cargo(output: str, returncode: int) -> Counts:
    """Sums cargo's 'test result: ok. N passed; M failed; ...' lines (one per test binary and
    doctest run); a build failure prints none and is counted by the runner from the exit code."""
    passed = failed = 0
    for m in re.finditer(r"^test result: \w+\. (\d+) passed; (\d+) failed", output, re.M):
        passed += int(m.group(1))
        failed += int(m.group(2))
    return passed, failed


# ---- Suites -----------------------------------------------------------------------------------

PYTEST_DIRS = ["tools/python", "tests/python"]

SUITES: List[Suite] = [
    Suite(
        name="bazel",
        cmd=["bazel", "test", "--keep_going", "--test_summary=short", "//..."],
        parse=parse_bazel,
        ok_codes=(0,),  # 1 build failed, 3 tests failed, 4 no tests
    ),
    Suite(
        name="pytest",
        cmd=lambda: [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"] +
        [d for d in PYTEST_DIRS if os.path.isdir(os.path.join(ROOT, d))],
        parse=parse_pytest,
        present=has_tests(*PYTEST_DIRS),
        ok_codes=(0, 5),  # 5: no tests collected
        needs_lib=True,
        env={"SHAPEPOLY_LIB": os.path.join(ROOT, "build", "lib", "libshapepoly.so")},
    ),
    Suite(
        name="fuzz",  # short libFuzzer runs (clang-14, ASan+UBSan), one test per fuzzer
        cmd=[os.path.join(ROOT, "tools", "run_fuzzers.sh")],
        parse=parse_summary_line,
        present=exists("tests/fuzz/BUILD"),
    ),
    Suite(
        name="csharp",  # mono mcs build + our own runner (bindings/csharp/tests/TestRunner.cs)
        cmd=[os.path.join(ROOT, "bindings", "csharp", "run_tests.sh")],
        parse=parse_summary_line,
        present=exists("bindings/csharp/run_tests.sh"),
        needs_lib=True,
        env={"SHAPEPOLY_LIB_DIR": os.path.join(ROOT, "build", "lib")},
    ),
    Suite(
        name="go",  # cgo binding (bindings/go), linked against build/lib/libshapepoly.so
        cmd=["go", "test", "-count=1", "-v", "./..."],
        cwd="bindings/go",
        parse=parse_go_test,
        present=exists("bindings/go/go.mod"),
        needs_lib=True,
        env={"GOPROXY": "off", "GOFLAGS": "-mod=mod"},
    ),
    Suite(
        name="rust",  # bindings/rust: shapepoly-sys + shapepoly (tests, doctests, README example)
        cmd=["cargo", "test", "--offline"],
        cwd="bindings/rust",
        parse=parse_cargo,
        present=exists("bindings/rust/Cargo.toml"),
        needs_lib=True,
        env={"SHAPEPOLY_LIB_DIR": os.path.join(ROOT, "build", "lib")},
    ),
    Suite(
        name="cross-language",  # one MLP exported and run by C, Rust, Go and C#
        cmd=[os.path.join(ROOT, "tests", "cross_language", "run_cross_language.sh")],
        parse=parse_summary_line,
        present=exists("tests/cross_language/run_cross_language.sh"),
        needs_lib=True,
    ),
]


# ---- Runner -----------------------------------------------------------------------------------

def run(cmd: List[str], cwd: str, env: Optional[Dict[str, str]] = None) -> Tuple[str, int]:
    """Runs cmd, echoing its output live, and returns (output, returncode)."""
    full_env = dict(os.environ, **(env or {}))
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                errors="replace")
    except OSError as e:
        msg = f"cannot run {cmd[0]}: {e}\n"
        sys.stdout.write(msg)
        return msg, 127
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    return "".join(lines), proc.wait()


def main(argv: List[str]) -> int:
    wanted = set(argv)
    unknown = wanted - {s.name for s in SUITES}
    if unknown:
        print(f"unknown suite(s): {' '.join(sorted(unknown))}; known: "
              f"{' '.join(s.name for s in SUITES)}")
        return 2
    results = []  # (name, passed, failed, note, seconds)
    lib_staged: Optional[bool] = None
    for suite in SUITES:
        if wanted and suite.name not in wanted:
            continue
        if not suite.present():
            results.append((suite.name, 0, 0, "skipped: no tests yet", 0.0))
            continue
        cmd = suite.cmd() if callable(suite.cmd) else suite.cmd
        print(f"==== {suite.name}: {' '.join(cmd)}", flush=True)
        start = time.monotonic()
        if suite.needs_lib and lib_staged is None:
            _, rc = run([os.path.join(ROOT, "tools", "stage_lib.sh")], ROOT)
            lib_staged = rc == 0
        if suite.needs_lib and not lib_staged:
            results.append((suite.name, 0, 1, "could not stage build/lib/libshapepoly.so",
                            time.monotonic() - start))
            continue
        output, rc = run(cmd, os.path.join(ROOT, suite.cwd), suite.env)
        passed, failed = suite.parse(output, rc)
        note = ""
        if rc not in suite.ok_codes and failed == 0:
            failed += 1
            note = f"exited with code {rc} without reporting a failed test"
        elif rc in suite.ok_codes and failed:
            note = f"exited with code {rc} although {failed} test(s) failed"
        results.append((suite.name, passed, failed, note, time.monotonic() - start))

    print("==== summary")
    total_passed = sum(r[1] for r in results)
    total_failed = sum(r[2] for r in results)
    for name, passed, failed, note, seconds in results:
        line = f"  {name:8s} {passed:4d} ok, {failed:4d} bad  ({seconds:.1f} s)"
        print(line + (f"  [{note}]" if note else ""))
    print(f"{total_passed} passed, {total_failed} failed", flush=True)
    return 0 if total_failed == 0 and total_passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
