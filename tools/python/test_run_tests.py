"""The counting of tools/run_tests.py, on outputs captured from the real runners.

Each fixture below is what a runner printed for a small project with known tests (one
passing, one failing, one skipped or disabled, ...), captured with the versions this project
uses (pytest 9, go 1.26, cargo 1.95, gtest 1.12, bazel 4.2); only absolute paths were cut.
The tests check the counts, that skips are reported, and that a suite that ran nothing fails.
"""

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("run_tests", os.path.join(ROOT, "tools", "run_tests.py"))
rt = importlib.util.module_from_spec(_spec)
sys.modules["run_tests"] = rt  # dataclasses look the module up by name
_spec.loader.exec_module(rt)

# ---- captured outputs -------------------------------------------------------------------------

# pytest -q: test_ok, test_bad (fails), a skip, an xfail, an xpass, a fixture error.
PYTEST_MIXED = """\
.FsxXE                                                                   [100%]
==================================== ERRORS ====================================
_________________________ ERROR at setup of test_error _________________________

    @pytest.fixture
    def broken():
>       raise RuntimeError("fixture")
E       RuntimeError: fixture

py/test_demo.py:23: RuntimeError
=================================== FAILURES ===================================
___________________________________ test_bad ___________________________________

    def test_bad():
>       assert 1 + 1 == 3
E       assert (1 + 1) == 3

py/test_demo.py:7: AssertionError
=========================== short test summary info ============================
FAILED py/test_demo.py::test_bad - assert (1 + 1) == 3
ERROR py/test_demo.py::test_error - RuntimeError: fixture
1 failed, 1 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.05s
"""

PYTEST_EMPTY = """\

no tests ran in 0.00s
"""  # exit 5

PYTEST_ONLY_SKIPPED = """\
s                                                                        [100%]
1 skipped in 0.01s
"""  # exit 0

PYTEST_COLLECTION_ERROR = """\

==================================== ERRORS ====================================
______________________ ERROR collecting pycoll/test_c.py _______________________
ImportError while importing test module 'pycoll/test_c.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
pycoll/test_c.py:1: in <module>
    import no_such_module_xyz
E   ModuleNotFoundError: No module named 'no_such_module_xyz'
=========================== short test summary info ============================
ERROR pycoll/test_c.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.20s
"""  # exit 2

PYTEST_VERBOSE_LONG = """\
tools/python/test_oracle.py::test_a PASSED                               [100%]
=================== 12 passed, 3 skipped, 2 warnings in 75.50s (0:01:15) ===================
"""

# go test -count=1 -v ./... : TestOK, TestBad (fails), TestSkipped, TestSub with a skipped
# subtest; a package without test files; a package with a test and an example.
GO_MIXED = """\
=== RUN   TestOK
--- PASS: TestOK (0.00s)
=== RUN   TestBad
    demo_test.go:6: boom
--- FAIL: TestBad (0.00s)
=== RUN   TestSkipped
    demo_test.go:7: not here
--- SKIP: TestSkipped (0.00s)
=== RUN   TestSub
=== RUN   TestSub/a
=== RUN   TestSub/b
    demo_test.go:10: sub skip
--- PASS: TestSub (0.00s)
    --- PASS: TestSub/a (0.00s)
    --- SKIP: TestSub/b (0.00s)
FAIL
FAIL	example.com/demo	0.003s
?   	example.com/demo/notests	[no test files]
=== RUN   TestSubOK
--- PASS: TestSubOK (0.00s)
=== RUN   Example
--- PASS: Example (0.00s)
PASS
ok  	example.com/demo/sub	0.003s
FAIL
"""  # exit 1

GO_BUILD_FAILED = """\
# example.com/b [example.com/b.test]
./b_test.go:5:28: undefined: undefined
FAIL	example.com/b [build failed]
FAIL
"""  # exit 1

GO_NO_TEST_FILES = """\
?   	example.com/n	[no test files]
"""  # exit 0

GO_ALL_PASS = """\
=== RUN   TestSubOK
--- PASS: TestSubOK (0.00s)
=== RUN   Example
--- PASS: Example (0.00s)
PASS
ok  	example.com/demo/sub	0.003s
"""

# cargo test --offline (fail-fast): unit tests ok, slow (#[ignore]), bad (fails); the integration
# test binary and doctests do not run after the failure.
CARGO_FAIL_FAST = """\
   Compiling demo_crate v0.1.0 (democrate)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.23s
     Running unittests src/lib.rs (target/debug/deps/demo_crate-6061cb6f1e658436)

running 3 tests
test tests::ok ... ok
test tests::slow ... ignored
test tests::bad ... FAILED

failures:

---- tests::bad stdout ----

thread 'tests::bad' (14687) panicked at src/lib.rs:20:16:
assertion `left == right` failed
  left: 2
 right: 3

failures:
    tests::bad

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.16s

error: test failed, to rerun pass `--lib`
"""  # exit 101

# The same crate with --no-fail-fast: every binary runs; the doctests are merged (one ok, one
# `ignore` block).
CARGO_NO_FAIL_FAST = """\
     Running unittests src/lib.rs (target/debug/deps/demo_crate-6061cb6f1e658436)

running 3 tests
test tests::ok ... ok
test tests::slow ... ignored
test tests::bad ... FAILED

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.12s

error: test failed, to rerun pass `--lib`
     Running tests/integ.rs (target/debug/deps/integ-6717064a712b56f6)

running 1 test
test integ ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests demo_crate

running 1 test
test src/lib.rs - add_one (line 3) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s


running 1 test
test src/lib.rs - add_one (line 7) ... ignored

test result: ok. 0 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

all doctests ran in 0.56s; merged doctests compilation took 0.54s
error: 1 target failed:
    `--lib`
"""  # exit 101

CARGO_ZERO_TESTS = """\
   Compiling zero_crate v0.1.0 (zerocrate)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.42s
     Running unittests src/lib.rs (target/debug/deps/zero_crate-a1d40cbcd4b270b9)

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests zero_crate

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

"""  # exit 0

CARGO_BUILD_ERROR = """\
   Compiling zero_crate v0.1.0 (zerocrate)
error[E0308]: mismatched types
 --> src/lib.rs:1:21
  |
1 | pub fn f() -> i32 { "x" }
  |               ---   ^^^ expected `i32`, found `&str`
  |               |
  |               expected `i32` because of return type

For more information about this error, try `rustc --explain E0308`.
error: could not compile `zero_crate` (lib) due to 1 previous error
warning: build failed, waiting for other jobs to finish...
error: could not compile `zero_crate` (lib test) due to 1 previous error
"""  # exit 101

# gtest 1.12 XML (what bazel keeps as test.xml): Ok, Bad (fails), Skipped (GTEST_SKIP),
# DISABLED_Off, and a whole DISABLED_ suite.
GTEST_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" failures="1" disabled="2" errors="0" time="0" timestamp="2026-11-30T13:34:54.443" name="AllTests">
  <testsuite name="Demo" tests="4" failures="1" disabled="1" skipped="1" errors="0" time="0" timestamp="2026-11-30T13:34:54.443">
    <testcase name="Ok" file="gt.cc" line="2" status="run" result="completed" time="0" timestamp="2026-11-30T13:34:54.443" classname="Demo" />
    <testcase name="Bad" file="gt.cc" line="3" status="run" result="completed" time="0" timestamp="2026-11-30T13:34:54.443" classname="Demo">
      <failure message="gt.cc:3&#x0A;Expected equality of these values:&#x0A;  1 + 1&#x0A;    Which is: 2&#x0A;  3" type=""><![CDATA[gt.cc:3
Expected equality of these values:
  1 + 1
    Which is: 2
  3]]></failure>
    </testcase>
    <testcase name="Skipped" file="gt.cc" line="4" status="run" result="skipped" time="0" timestamp="2026-11-30T13:34:54.443" classname="Demo">
      <skipped message="gt.cc:4&#x0A;not here"><![CDATA[gt.cc:4
not here]]></skipped>
    </testcase>
    <testcase name="DISABLED_Off" file="gt.cc" line="5" status="notrun" result="suppressed" time="0" timestamp="1970-01-01T00:00:00.000" classname="Demo" />
  </testsuite>
  <testsuite name="DISABLED_Whole" tests="1" failures="0" disabled="1" skipped="0" errors="0" time="0" timestamp="1970-01-01T00:00:00.000">
    <testcase name="Off" file="gt.cc" line="6" status="notrun" result="suppressed" time="0" timestamp="1970-01-01T00:00:00.000" classname="DISABLED_Whole" />
  </testsuite>
</testsuites>
"""

# gtest XML of a binary whose only test is disabled: it ran nothing.
GTEST_XML_ALL_DISABLED = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" disabled="1" errors="0" time="0" timestamp="2026-11-30T13:34:54.443" name="AllTests">
  <testsuite name="DISABLED_Whole" tests="1" failures="0" disabled="1" skipped="0" errors="0" time="0" timestamp="1970-01-01T00:00:00.000">
    <testcase name="Off" file="gt.cc" line="6" status="notrun" result="suppressed" time="0" timestamp="1970-01-01T00:00:00.000" classname="DISABLED_Whole" />
  </testsuite>
</testsuites>
"""

# bazel test --keep_going --test_summary=short //... over mixed_test (the gtest file above),
# disabled_test (GTEST_XML_ALL_DISABLED), ok_test (two passing cases), plain_test (an sh_test:
# bazel writes a one-case test.xml) and broken_test (does not compile). Progress lines cut.
BAZEL_MIXED = """\
INFO: Analyzed 5 targets (18 packages loaded, 104 targets configured).

INFO: Found 5 test targets...
ERROR: t/BUILD:1:9: Compiling t/broken_test.cc failed: (Exit 1): gcc failed: error executing command /usr/bin/gcc -U_FORTIFY_SOURCE ... (remaining 21 argument(s) skipped)
t/broken_test.cc:2:21: error: 'undefined_call' was not declared in this scope
FAIL: //t:mixed_test (see bazel-out/k8-fastbuild/testlogs/t/mixed_test/test.log)
INFO: Elapsed time: 32.329s, Critical Path: 12.49s
INFO: 27 processes: 16 internal, 11 linux-sandbox.
FAILED: Build did NOT complete successfully
//t:broken_test                                                 FAILED TO BUILD
//t:disabled_test                                                        PASSED in 0.2s
//t:ok_test                                                              PASSED in 0.1s
//t:plain_test                                                           PASSED in 0.5s
//t:mixed_test                                                           FAILED in 0.2s
  bazel-out/k8-fastbuild/testlogs/t/mixed_test/test.log

Executed 4 out of 5 tests: 3 tests pass, 1 fails to build and 1 fails locally.
There were tests whose specified size is too big. Use the --test_verbose_timeout_warnings command line option to see which ones these are.
FAILED: Build did NOT complete successfully
"""  # exit 1

BAZEL_CACHED = """\
INFO: Analyzed 2 targets (0 packages loaded, 0 targets configured).
INFO: Found 2 test targets...
INFO: Elapsed time: 0.614s, Critical Path: 0.01s
INFO: 1 process: 1 internal.
INFO: Build completed successfully, 1 total action
//t:ok_test                                                     (cached) PASSED in 0.1s
//t:plain_test                                                  (cached) PASSED in 0.5s

Executed 0 out of 2 tests: 2 tests pass.
INFO: Build completed successfully, 1 total action
"""  # exit 0

BAZEL_NO_TESTS = """\
INFO: Analyzed target //empty:b (1 packages loaded, 2 targets configured).
INFO: Found 1 target and 0 test targets...
Target //empty:b up-to-date:
  bazel-bin/empty/b
INFO: Elapsed time: 0.464s, Critical Path: 0.07s
INFO: 4 processes: 4 internal.
INFO: Build completed successfully, 4 total actions
ERROR: No test targets were found, yet testing was requested
INFO: Build completed successfully, 4 total actions
"""  # exit 4

GTEST_XML_OK = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="0" disabled="0" errors="0" time="0" timestamp="2026-11-30T13:43:34.315" name="AllTests">
  <testsuite name="Fine" tests="2" failures="0" disabled="0" skipped="0" errors="0" time="0" timestamp="2026-11-30T13:43:34.315">
    <testcase name="One" file="t/ok_test.cc" line="2" status="run" result="completed" time="0" timestamp="2026-11-30T13:43:34.315" classname="Fine" />
    <testcase name="Two" file="t/ok_test.cc" line="3" status="run" result="completed" time="0" timestamp="2026-11-30T13:43:34.315" classname="Fine" />
  </testsuite>
</testsuites>
"""

# bazel's own test.xml for a non-gtest test (sh_test).
BAZEL_PLAIN_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="t/plain_test" tests="1" failures="0" errors="0">
    <testcase name="t/plain_test" status="run" duration="0" time="0"></testcase>
      <system-out>
Generated test.log (if the file is not UTF-8, then this may be unreadable):
<![CDATA[exec ${PAGER:-/usr/bin/less} "$0" || exit 1
Executing tests from //t:plain_test
-----------------------------------------------------------------------------]]>
      </system-out>
    </testsuite>
</testsuites>
"""


def counts(c):
    return (c.passed, c.failed, c.skipped)


def fake_suite(parse, ok_codes=(0,)):
    return rt.Suite(name="x", cmd=["true"], parse=parse, ok_codes=ok_codes)


@pytest.fixture
def testlogs(tmp_path):
    for name, xml in [("mixed_test", GTEST_XML), ("disabled_test", GTEST_XML_ALL_DISABLED),
                      ("ok_test", GTEST_XML_OK), ("plain_test", BAZEL_PLAIN_XML)]:
        d = tmp_path / "t" / name
        d.mkdir(parents=True)
        (d / "test.xml").write_text(xml)
    return str(tmp_path)


# ---- bazel / gtest ----------------------------------------------------------------------------

def test_gtest_xml_counts_disabled_and_skipped(tmp_path):
    path = tmp_path / "test.xml"
    path.write_text(GTEST_XML)
    # Ok passes, Bad fails; GTEST_SKIP and the two DISABLED_ cases are skipped.
    assert counts(rt.parse_test_xml(str(path))) == (1, 1, 3)
    assert rt.parse_test_xml(str(tmp_path / "missing.xml")) is None


def test_bazel_mixed(testlogs):
    c = rt.parse_bazel(BAZEL_MIXED, 1, testlogs)
    # passed: mixed Ok + ok_test 2 + plain_test 1; failed: mixed Bad + broken_test (build);
    # skipped: mixed 3 + disabled_test 1.
    assert counts(c) == (4, 2, 4)
    # disabled_test passed without running a case: a problem, not a pass.
    assert c.problems == ["//t:disabled_test ran no test case"]
    judged, notes = rt.judge(fake_suite(lambda o, r: c), BAZEL_MIXED, 1)
    assert counts(judged) == (4, 3, 4)
    assert "//t:disabled_test ran no test case" in notes


def test_bazel_cached_targets_keep_their_counts(testlogs):
    c = rt.parse_bazel(BAZEL_CACHED, 0, testlogs)
    assert counts(c) == (3, 0, 0) and c.problems == []


def test_bazel_failed_target_without_failed_case_is_a_failure(testlogs):
    # ok_test's cases passed but the target failed (e.g. crashed at exit): one failure.
    out = "//t:ok_test                                                              FAILED in 0.1s\n"
    assert counts(rt.parse_bazel(out, 3, testlogs)) == (2, 1, 0)
    # A failed target without a test.xml is one failure; a passed one is one pass.
    out = "//t:gone_test      FAILED in 0.1s\n//t:other_test     PASSED in 0.1s\n"
    assert counts(rt.parse_bazel(out, 3, testlogs)) == (1, 1, 0)


def test_bazel_statuses_without_cases(testlogs):
    out = "\n".join(["//a:t1   NO STATUS", "//a:t2   TIMEOUT in 300.0s", "//a:t3   INCOMPLETE",
                     "//a:t4   SKIPPED", "//a:t5   FAILED TO BUILD"]) + "\n"
    assert counts(rt.parse_bazel(out, 1, testlogs)) == (0, 4, 1)


def test_bazel_no_test_targets_fails(testlogs):
    c = rt.parse_bazel(BAZEL_NO_TESTS, 4, testlogs)
    assert counts(c) == (0, 0, 0)
    assert c.problems == ["bazel reported no test target (exit 4: no test targets)"]
    judged, _ = rt.judge(fake_suite(lambda o, r: c), BAZEL_NO_TESTS, 4)
    assert judged.failed == 1


def test_asan_reads_the_testlogs_its_script_names(testlogs):
    # tools/run_sanitizers.sh names its own output base's test logs on its last line.
    out = BAZEL_MIXED + f"asan testlogs: {testlogs}\n"
    c = rt.parse_asan(out, 1)
    assert counts(c) == (4, 2, 4)
    assert c.problems == ["//t:disabled_test ran no test case"]


def test_asan_without_testlogs_line_counts_targets_and_fails(testlogs):
    c = rt.parse_asan(BAZEL_CACHED, 0)
    assert counts(c) == (2, 0, 0)
    assert c.problems == ["no 'asan testlogs:' line"]


# ---- pytest -----------------------------------------------------------------------------------

def test_pytest_mixed():
    c = rt.parse_pytest(PYTEST_MIXED, 1)
    # passed + xpassed; failed + error; skipped + xfailed.
    assert counts(c) == (2, 2, 2) and c.problems == []


def test_pytest_no_tests_ran_fails():
    c = rt.parse_pytest(PYTEST_EMPTY, 5)
    assert c.problems == ["pytest collected no test"]
    suite = [s for s in rt.SUITES if s.name == "pytest"][0]
    assert 5 not in suite.ok_codes
    judged, notes = rt.judge(fake_suite(rt.parse_pytest, suite.ok_codes), PYTEST_EMPTY, 5)
    assert judged.failed == 1 and notes == ["pytest collected no test"]


def test_pytest_only_skipped_is_a_failure():
    c = rt.parse_pytest(PYTEST_ONLY_SKIPPED, 0)
    assert counts(c) == (0, 0, 1)
    judged, notes = rt.judge(fake_suite(rt.parse_pytest), PYTEST_ONLY_SKIPPED, 0)
    assert counts(judged) == (0, 1, 1) and notes == ["ran no test"]


def test_pytest_collection_error():
    assert counts(rt.parse_pytest(PYTEST_COLLECTION_ERROR, 2)) == (0, 1, 0)


def test_pytest_long_run_and_warnings():
    assert counts(rt.parse_pytest(PYTEST_VERBOSE_LONG, 0)) == (12, 0, 3)


def test_pytest_missing_closing_line():
    c = rt.parse_pytest("Traceback (most recent call last):\nKilled\n", -9)
    assert c.problems == ["no pytest closing line"]


# ---- go ---------------------------------------------------------------------------------------

def test_go_mixed():
    c = rt.parse_go_test(GO_MIXED, 1)
    # Top-level PASS: TestOK, TestSub, TestSubOK, Example; FAIL: TestBad; SKIP: TestSkipped
    # and the subtest TestSub/b.
    assert counts(c) == (4, 1, 2)
    assert c.problems == ["go package example.com/demo/notests has no test files"]


def test_go_build_failure():
    c = rt.parse_go_test(GO_BUILD_FAILED, 1)
    assert counts(c) == (0, 1, 0) and c.problems == []


def test_go_no_test_files_fails():
    c = rt.parse_go_test(GO_NO_TEST_FILES, 0)
    assert c.problems == ["go package example.com/n has no test files"]
    judged, _ = rt.judge(fake_suite(rt.parse_go_test), GO_NO_TEST_FILES, 0)
    assert judged.failed == 1


def test_go_all_pass_and_missing_result_line():
    assert counts(rt.parse_go_test(GO_ALL_PASS, 0)) == (2, 0, 0)
    assert rt.parse_go_test(GO_ALL_PASS, 0).problems == []
    c = rt.parse_go_test("go: cannot find main module\n", 1)
    assert c.problems == ["no go package result line"]


# ---- cargo ------------------------------------------------------------------------------------

def test_cargo_counts_ignored_as_skipped():
    assert counts(rt.parse_cargo(CARGO_FAIL_FAST, 101)) == (1, 1, 1)
    assert counts(rt.parse_cargo(CARGO_NO_FAIL_FAST, 101)) == (3, 1, 2)


def test_cargo_runs_without_fail_fast():
    suite = [s for s in rt.SUITES if s.name == "rust"][0]
    assert "--no-fail-fast" in suite.cmd


def test_cargo_zero_tests_fails():
    c = rt.parse_cargo(CARGO_ZERO_TESTS, 0)
    assert counts(c) == (0, 0, 0) and c.problems == []
    judged, notes = rt.judge(fake_suite(rt.parse_cargo), CARGO_ZERO_TESTS, 0)
    assert judged.failed == 1 and notes == ["ran no test"]


def test_cargo_build_error_fails():
    c = rt.parse_cargo(CARGO_BUILD_ERROR, 101)
    assert c.problems == ["no cargo 'test result' line"]
    judged, _ = rt.judge(fake_suite(rt.parse_cargo), CARGO_BUILD_ERROR, 101)
    assert judged.failed == 1


# ---- summary lines ('N passed, M failed') -------------------------------------------------------

@pytest.mark.parametrize("out, want", [
    ("...\n36 passed, 0 failed\n", (36, 0, 0)),
    ("3 passed, 1 failed, 2 skipped\nbye\n", (3, 1, 2)),
    ("fuzz: 2 passed, 0 failed\n", (2, 0, 0)),
    ("1 passed, 0 failed\nlater: 5 passed, 2 failed\n", (5, 2, 0)),
])
def test_summary_line(out, want):
    assert counts(rt.parse_summary_line(out, 0)) == want


def test_summary_line_absent_fails():
    c = rt.parse_summary_line("C# build failed\n", 1)
    assert c.problems == ["no 'N passed, M failed' line"]
    judged, _ = rt.judge(fake_suite(rt.parse_summary_line), "C# build failed\n", 1)
    assert judged.failed == 1


def test_exit_code_without_failed_test_fails():
    judged, notes = rt.judge(fake_suite(rt.parse_summary_line), "4 passed, 0 failed\n", 139)
    assert counts(judged) == (4, 1, 0)
    assert notes == ["exited with code 139 without reporting a failed test"]


def test_closing_line_format():
    lines = rt.summary_lines([("a", rt.Counts(3, 0, 1), [], 1.0),
                              ("b", rt.Counts(2, 1, 0), ["why"], 2.0)])
    assert lines[-2:] == ["5 passed, 1 failed, 1 skipped", "5 passed, 1 failed"]
    assert "[why]" in lines[1]
    # The closing line is one the test runner's own parser (and CI's convention) reads back.
    assert counts(rt.parse_summary_line("\n".join(lines[:-1]), 0)) == (5, 1, 1)
    assert counts(rt.parse_summary_line("\n".join(lines), 0)) == (5, 1, 0)


# ---- present / absent suites ------------------------------------------------------------------

def test_every_suite_with_files_is_present():
    """A suite whose directory exists must be found by its `present` check (so it runs)."""
    for suite in rt.SUITES:
        if suite.root is not None and os.path.exists(os.path.join(ROOT, suite.root)):
            assert suite.present(), f"{suite.name}: {suite.root} exists but present() is false"
    assert all(s.root is not None for s in rt.SUITES if s.name != "bazel")


def _main_with(monkeypatch, capsys, suites):
    monkeypatch.setattr(rt, "SUITES", suites)
    rc = rt.main([])
    return rc, capsys.readouterr().out.splitlines()


def test_main_present_suite_runs(monkeypatch, capsys):
    ok = rt.Suite(name="ok", cmd=[sys.executable, "-c", "print('2 passed, 0 failed, 1 skipped')"],
                  parse=rt.parse_summary_line)
    rc, out = _main_with(monkeypatch, capsys, [ok])
    assert rc == 0 and out[-2:] == ["2 passed, 0 failed, 1 skipped", "2 passed, 0 failed"]


def test_main_suite_with_files_but_not_present_fails(monkeypatch, capsys):
    ok = rt.Suite(name="ok", cmd=[sys.executable, "-c", "print('2 passed, 0 failed')"],
                  parse=rt.parse_summary_line)
    hidden = rt.Suite(name="hidden", cmd=["false"], parse=rt.parse_summary_line,
                      present=lambda: False, root="tools")
    absent = rt.Suite(name="absent", cmd=["false"], parse=rt.parse_summary_line,
                      present=lambda: False, root="no/such/dir")
    rc, out = _main_with(monkeypatch, capsys, [ok, hidden, absent])
    assert rc == 1 and out[-2:] == ["2 passed, 1 failed, 0 skipped", "2 passed, 1 failed"]
    assert any("hidden" in line and "exists but" in line for line in out)
    assert any("absent" in line and "absent: no tests yet" in line for line in out)


def test_main_nothing_ran_fails(monkeypatch, capsys):
    empty = rt.Suite(name="empty", cmd=[sys.executable, "-c", "print('0 passed, 0 failed')"],
                     parse=rt.parse_summary_line)
    rc, out = _main_with(monkeypatch, capsys, [empty])
    assert rc == 1 and out[-2:] == ["0 passed, 1 failed, 0 skipped", "0 passed, 1 failed"]
