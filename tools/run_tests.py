#!/usr/bin/env python3
"""Runs every test suite of the project and prints one closing line
'N passed, M failed, K skipped'.

Used by `make test` (and so by CI). The suites, in order: format (tools/check_format.sh), lint
(go vet, cargo clippy, ruff, mcs -warnaserror: tools/lint.py), bazel (unit, golden, CLI and C
API tests), pytest (every op, the oracle, the reader, the generated FFI declarations), fuzz
(corpus replay and a short fixed-time run per fuzzer), asan (the C++ tests under ASan+UBSan),
csharp, go, rust, python, cross-language, install (make install into a temporary prefix, used
from pkg-config, CMake and gcc), rust-project, go-project, csharp-project (fresh projects outside
the repository made from each binding's README).
Each suite in SUITES has a command and a parser that turns the command's output into Counts
(passed, failed, skipped, and problems: reasons the suite did not really run, each counted as
one failure). Skipped means skipped or disabled:
gtest DISABLED_ and GTEST_SKIP, Go `--- SKIP`, pytest skipped/xfailed, cargo `ignored`, and a
runner's own ', K skipped'. A suite fails (counts one failure) when:
  - its runner printed no closing line, or said it collected no test (pytest exit 5, cargo
    with 0 tests, a Go package with no test files, bazel exit 4), or ran no test at all;
  - its command is missing, crashed, or exited non-zero without reporting a failed test;
  - its files exist (`root`) but its `present` check cannot find it.
A suite whose `present` check is false and whose root does not exist is listed as absent
(its tests do not exist yet). The exit status is non-zero if anything failed.

To add a suite, append a Suite(...) to SUITES below, e.g. for the Rust binding:

    Suite(
        name="rust",
        cmd=["cargo", "test", "--offline", "--no-fail-fast"],
        cwd="bindings/rust",
        parse=parse_cargo,            # parse_cargo(output, returncode) -> Counts
        present=exists("bindings/rust/Cargo.toml"),
        root="bindings/rust",
        needs_lib=True,               # stage build/lib/libshapepoly.so first
        env={"SHAPEPOLY_LIB_DIR": os.path.join(ROOT, "build", "lib")},
    ),

Only the standard library is used, so any Python 3.8+ can run it; `make test` uses .venv.
The parsers are tested on captured outputs by tools/python/test_run_tests.py.
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


@dataclasses.dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0  # skipped or disabled tests (not run, not counted as passed)
    problems: List[str] = dataclasses.field(default_factory=list)  # each one is a failure

    def add(self, other: "Counts") -> None:
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.problems += other.problems


@dataclasses.dataclass
class Suite:
    name: str
    cmd: Union[List[str], Callable[[], List[str]]]  # a callable is evaluated when the suite runs
    parse: Callable[[str, int], Counts]  # (combined output, return code) -> counts
    present: Callable[[], bool] = lambda: True
    root: Optional[str] = None  # if this path exists, the suite must be present and run
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


def parse_test_xml(path: str) -> Optional[Counts]:
    """Counts the cases of one test.xml (gtest's own, or bazel's one-case file for other tests).

    Disabled gtest cases (status="notrun", result="suppressed") and GTEST_SKIP cases
    (result="skipped" or a <skipped> child) count as skipped. None if the file is unreadable.
    """
    try:
        cases = list(ET.parse(path).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        return None
    c = Counts()
    for case in cases:
        if (case.get("status") == "notrun" or case.get("result") in ("suppressed", "skipped") or
                case.find("skipped") is not None):
            c.skipped += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            c.failed += 1
        else:
            c.passed += 1
    return c


def bazel_testlogs() -> str:
    return subprocess.run(["bazel", "info", "bazel-testlogs"], cwd=ROOT, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()


def parse_bazel(output: str, returncode: int, testlogs: Optional[str] = None) -> Counts:
    """Counts gtest cases from each target's test.xml (cached targets keep theirs).

    A target without a readable test.xml counts as one test; FAILED TO BUILD, NO STATUS,
    TIMEOUT and INCOMPLETE count as one failure each, a SKIPPED target as one skipped test. A
    target that passed without running a single case, and a run that reports no target at
    all (bazel exit 4: no test targets), are problems.
    """
    if testlogs is None:
        testlogs = bazel_testlogs()
    total = Counts()
    targets = 0
    for line in output.splitlines():
        m = BAZEL_STATUS.match(line)
        if not m:
            continue
        targets += 1
        label, status = m.groups()
        if status == "SKIPPED":
            total.skipped += 1
            continue
        if status not in ("PASSED", "FAILED", "FLAKY"):
            total.failed += 1
            continue
        pkg, _, name = label.lstrip("/").partition(":")
        c = parse_test_xml(os.path.join(testlogs, pkg, name, "test.xml"))
        if c is None:  # no case information: the target's status is the one test
            c = Counts(passed=int(status != "FAILED"), failed=int(status == "FAILED"))
        elif status == "FAILED" and c.failed == 0:
            c.failed += 1  # crashed after its cases, or a non-gtest failure
        elif c.passed + c.failed == 0:
            c.problems.append(f"{label} ran no test case")
        total.add(c)
    if targets == 0:
        total.problems.append("bazel reported no test target" +
                              (" (exit 4: no test targets)" if returncode == 4 else ""))
    return total


SUMMARY_LINE = re.compile(r"^(?:\w+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$")


def parse_summary_line(output: str, returncode: int) -> Counts:
    """Reads the last 'N passed, M failed' line a script prints (', K skipped' may follow)."""
    for line in reversed(output.splitlines()):
        m = SUMMARY_LINE.match(line.strip())
        if m:
            return Counts(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    return Counts(problems=["no 'N passed, M failed' line"])


ASAN_TESTLOGS = re.compile(r"^asan testlogs: (\S+)\s*$", re.M)


def parse_asan(output: str, returncode: int) -> Counts:
    """parse_bazel for tools/run_sanitizers.sh, whose own output base's test logs are named on
    its 'asan testlogs: DIR' line; without that line, each target counts as one test."""
    m = ASAN_TESTLOGS.search(output)
    c = parse_bazel(output, returncode, testlogs=m.group(1) if m else "")
    if not m:
        c.problems.append("no 'asan testlogs:' line")
    return c


PYTEST_WORDS = r"passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?"
PYTEST_SUMMARY = re.compile(rf"^=*\s*((?:\d+ (?:{PYTEST_WORDS}),? ?)+|no tests ran)\b.* in [\d.]+s")


def parse_pytest(output: str, returncode: int) -> Counts:
    """Reads pytest's closing line, e.g. '=== 3 passed, 1 failed, 2 skipped in 0.1s ==='.

    xpassed counts as passed; errors as failed; skipped, xfailed and deselected as skipped.
    'no tests ran' (exit 5) is a problem, and so is a missing closing line.
    """
    for line in reversed(output.splitlines()):
        m = PYTEST_SUMMARY.match(line.strip())
        if not m:
            continue
        counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (\w+)", m.group(1)))
        c = Counts(
            passed=counts.get("passed", 0) + counts.get("xpassed", 0),
            failed=counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0),
            skipped=counts.get("skipped", 0) + counts.get("xfailed", 0) +
            counts.get("deselected", 0))
        if m.group(1) == "no tests ran" or returncode == 5:
            c.problems.append("pytest collected no test")
        return c
    return Counts(problems=["no pytest closing line"])


def parse_go_test(output: str, returncode: int) -> Counts:
    """Counts the '--- PASS' / '--- FAIL' lines of `go test -v` for tests and examples (indented
    subtest lines are not counted); every '--- SKIP', subtests included, counts as skipped. A
    package that fails to build counts as one failure; a package without test files, or with no
    test to run, is a problem, and so is output without any package result line."""
    c = Counts(passed=len(re.findall(r"^--- PASS", output, re.M)),
               failed=len(re.findall(r"^--- FAIL", output, re.M)),
               skipped=len(re.findall(r"^\s*--- SKIP", output, re.M)))
    c.failed += len(re.findall(r"^FAIL\s+\S+\s+\[(?:build|setup) failed\]", output, re.M))
    for pkg in re.findall(r"^\?\s+(\S+)\s+\[no test files\]", output, re.M):
        c.problems.append(f"go package {pkg} has no test files")
    for pkg in re.findall(r"^ok\s+(\S+)\s.*\[no tests to run\]", output, re.M):
        c.problems.append(f"go package {pkg} ran no test")
    if not re.search(r"^(ok|FAIL|\?)\s+\S+", output, re.M):
        c.problems.append("no go package result line")
    return c


def parse_cargo(output: str, returncode: int) -> Counts:
    """Sums cargo's 'test result: ok. N passed; M failed; K ignored; ...' lines (one per test
    binary and doctest run; ignored counts as skipped). Output without any such line (a build
    failure) is a problem; a run whose binaries hold no test at all is caught by the runner."""
    c = Counts()
    for m in re.finditer(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored",
                         output, re.M):
        c.passed += int(m.group(1))
        c.failed += int(m.group(2))
        c.skipped += int(m.group(3))
    if not re.search(r"^test result: ", output, re.M):
        c.problems.append("no cargo 'test result' line")
    return c


# ---- Suites -----------------------------------------------------------------------------------

PYTEST_DIRS = ["tools/python", "tests/python"]

SUITES: List[Suite] = [
    Suite(
        name="format",  # every C/C++ file as .clang-format has it (one test per file)
        cmd=[os.path.join(ROOT, "tools", "check_format.sh")],
        parse=parse_summary_line,
        present=exists(".clang-format"),
        root=".clang-format",
    ),
    Suite(
        # go vet, cargo clippy -D warnings, ruff check, mcs -warnaserror: one test per linter
        # (tools/lint.py). Needs build/lib: clippy builds shapepoly-sys, whose build script
        # looks for the library.
        name="lint",
        cmd=[sys.executable, os.path.join(ROOT, "tools", "lint.py")],
        parse=parse_summary_line,
        present=exists("tools/lint.py"),
        root="tools/lint.py",
        needs_lib=True,
    ),
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
        root="tools/python",
        ok_codes=(0,),  # 5: no tests collected, a failure
        needs_lib=True,
        env={"SHAPEPOLY_LIB": os.path.join(ROOT, "build", "lib", "libshapepoly.so")},
    ),
    Suite(
        # Replays the libFuzzer corpora (clang-14, ASan+UBSan), one test per corpus input, then
        # fuzzes each target for FUZZ_TEST_SECONDS (default 20), one test per target.
        name="fuzz",
        cmd=[os.path.join(ROOT, "tools", "run_fuzzers.sh")],
        parse=parse_summary_line,
        present=exists("tests/fuzz/BUILD"),
        root="tests/fuzz",
    ),
    Suite(
        name="asan",  # the C++ tests under ASan+UBSan (clang-14, own output base), one per case
        cmd=[os.path.join(ROOT, "tools", "run_sanitizers.sh")],
        parse=parse_asan,
        present=exists("tools/run_sanitizers.sh"),
        root="tools/run_sanitizers.sh",
    ),
    Suite(
        name="csharp",  # mono mcs build + our own runner (bindings/csharp/tests/TestRunner.cs)
        cmd=[os.path.join(ROOT, "bindings", "csharp", "run_tests.sh")],
        parse=parse_summary_line,
        present=exists("bindings/csharp/run_tests.sh"),
        root="bindings/csharp",
        needs_lib=True,
        env={"SHAPEPOLY_LIB_DIR": os.path.join(ROOT, "build", "lib")},
    ),
    Suite(
        name="go",  # cgo binding (bindings/go), linked against build/lib/libshapepoly.so
        cmd=["go", "test", "-count=1", "-v", "./..."],
        cwd="bindings/go",
        parse=parse_go_test,
        present=exists("bindings/go/go.mod"),
        root="bindings/go",
        needs_lib=True,
        env={"GOPROXY": "off", "GOFLAGS": "-mod=mod"},
    ),
    Suite(
        name="rust",  # bindings/rust: shapepoly-sys + shapepoly (tests, doctests, README example)
        # --no-fail-fast: a failing test binary must not hide the counts of the ones after it.
        cmd=["cargo", "test", "--offline", "--no-fail-fast"],
        cwd="bindings/rust",
        parse=parse_cargo,
        present=exists("bindings/rust/Cargo.toml"),
        root="bindings/rust",
        needs_lib=True,
        env={"SHAPEPOLY_LIB_DIR": os.path.join(ROOT, "build", "lib")},
    ),
    Suite(
        name="python",  # bindings/python: the ctypes package, imported from the tree (no install)
        cmd=[os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pytest", "-p",
             "no:cacheprovider", "-q", "bindings/python/tests"],
        parse=parse_pytest,
        present=exists("bindings/python/tests"),
        root="bindings/python",
        needs_lib=True,
        env={"SHAPEPOLY_LIB": os.path.join(ROOT, "build", "lib", "libshapepoly.so"),
             "PYTHONPATH": os.path.join(ROOT, "bindings", "python")},
    ),
    Suite(
        name="cross-language",  # one MLP exported and run by C, Rust, Go and C#
        cmd=[os.path.join(ROOT, "tests", "cross_language", "run_cross_language.sh")],
        parse=parse_summary_line,
        present=exists("tests/cross_language/run_cross_language.sh"),
        root="tests/cross_language",
        needs_lib=True,
    ),
    Suite(
        name="install",  # make install into a temporary prefix; pkg-config, CMake and gcc users
        cmd=[os.path.join(ROOT, "tests", "install", "install_test.sh")],
        parse=parse_summary_line,
        present=exists("tests/install/install_test.sh"),
        root="tests/install",
    ),
    # Fresh projects outside the repository made from each binding's README (its marked
    # stanzas), built and run against the clone's build/lib and a `make install` prefix.
    Suite(
        name="rust-project",
        cmd=[os.path.join(ROOT, "tests", "install", "rust_project_test.sh")],
        parse=parse_summary_line,
        present=exists("tests/install/rust_project_test.sh"),
        root="tests/install",
    ),
    Suite(
        name="go-project",
        cmd=[os.path.join(ROOT, "tests", "install", "go_project_test.sh")],
        parse=parse_summary_line,
        present=exists("tests/install/go_project_test.sh"),
        root="tests/install",
    ),
    Suite(
        name="csharp-project",
        cmd=[os.path.join(ROOT, "tests", "install", "csharp_project_test.sh")],
        parse=parse_summary_line,
        present=exists("tests/install/csharp_project_test.sh"),
        root="tests/install",
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


def judge(suite: Suite, output: str, rc: int) -> Tuple[Counts, List[str]]:
    """A suite's counts with its problems folded into `failed`, and the notes to print."""
    c = suite.parse(output, rc)
    notes = list(c.problems)
    failed = c.failed + len(c.problems)
    if c.passed + c.failed == 0 and not c.problems:
        notes.append("ran no test")
        failed += 1
    if rc not in suite.ok_codes and failed == 0:
        notes.append(f"exited with code {rc} without reporting a failed test")
        failed += 1
    elif rc in suite.ok_codes and c.failed:
        notes.append(f"exited with code {rc} although {c.failed} test(s) failed")
    return Counts(c.passed, failed, c.skipped), notes


def summary_lines(results: List[Tuple[str, Counts, List[str], float]]) -> List[str]:
    """One line per suite, the summary 'N passed, M failed, K skipped', and last the plain
    'N passed, M failed' that CI reads (a parser anchored on that form keeps working)."""
    lines = []
    total = Counts()
    for name, c, notes, seconds in results:
        total.add(c)
        line = (f"  {name:14s} {c.passed:5d} passed, {c.failed:4d} failed, {c.skipped:4d} skipped"
                f"  ({seconds:.1f} s)")
        lines.append(line + (f"  [{'; '.join(notes)}]" if notes else ""))
    lines.append(f"{total.passed} passed, {total.failed} failed, {total.skipped} skipped")
    lines.append(f"{total.passed} passed, {total.failed} failed")
    return lines


def main(argv: List[str]) -> int:
    wanted = set(argv)
    unknown = wanted - {s.name for s in SUITES}
    if unknown:
        print(f"unknown suite(s): {' '.join(sorted(unknown))}; known: "
              f"{' '.join(s.name for s in SUITES)}")
        return 2
    results = []  # (name, counts, notes, seconds)
    lib_staged: Optional[bool] = None
    for suite in SUITES:
        if wanted and suite.name not in wanted:
            continue
        if not suite.present():
            if suite.root and os.path.exists(os.path.join(ROOT, suite.root)):
                results.append((suite.name, Counts(failed=1),
                                [f"{suite.root} exists but the suite's files are missing"], 0.0))
            else:
                results.append((suite.name, Counts(), ["absent: no tests yet"], 0.0))
            continue
        cmd = suite.cmd() if callable(suite.cmd) else suite.cmd
        print(f"==== {suite.name}: {' '.join(cmd)}", flush=True)
        start = time.monotonic()
        if suite.needs_lib and lib_staged is None:
            _, rc = run([os.path.join(ROOT, "tools", "stage_lib.sh")], ROOT)
            lib_staged = rc == 0
        if suite.needs_lib and not lib_staged:
            results.append((suite.name, Counts(failed=1),
                            ["could not stage build/lib/libshapepoly.so"],
                            time.monotonic() - start))
            continue
        output, rc = run(cmd, os.path.join(ROOT, suite.cwd), suite.env)
        counts, notes = judge(suite, output, rc)
        results.append((suite.name, counts, notes, time.monotonic() - start))

    print("==== summary")
    lines = summary_lines(results)
    print("\n".join(lines), flush=True)
    total_passed = sum(r[1].passed for r in results)
    total_failed = sum(r[1].failed for r in results)
    return 0 if total_failed == 0 and total_passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
