#!/usr/bin/env python3
"""The size gate (make test): no library file over 800 lines, no function over 150 lines,
unless the file says why.

Library code is every .h/.cc under cc/ and c_api/ except tests (*_test.cc, test_util.h,
testing.h) and the test-support libraries that only tests link (ad_check.*). A file that must
stay longer carries `// size-gate: file: <reason>` in its first 30 lines; a function (or a
lambda) that must stay longer carries `// size-gate: <reason>` on one of the 3 lines above it.
A marker without a reason is refused. Prints every violation and `N passed, M failed`.

Functions are found by their braces: a `{` that closes a parameter list (`) {`, `) const {`,
`) override {`, a lambda's `] (...) {`), not a control statement, up to its matching `}`.
Comments and string literals are skipped so braces in them do not count.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150
DIRS = ("cc", "c_api")
NOT_LIBRARY = re.compile(r"(_test\.cc|/test_util\.h|/testing\.h|/ad_check\.(h|cc))$")
CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|else|do|catch|try)\b")
OPENS_BODY = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(->\s*[\w:<>,\s*&]+)?\{\s*$")
MARK = re.compile(r"(?://|/\*|\*)\s*size-gate:\s*(file:)?\s*(.*?)\s*(?:\*/)?$")


def strip_code(lines):
    """The lines with comments and string/char literals blanked (same line count)."""
    out, in_block = [], False
    for line in lines:
        res, i = [], 0
        while i < len(line):
            if in_block:
                j = line.find("*/", i)
                if j < 0:
                    i = len(line)
                    continue
                in_block, i = False, j + 2
                continue
            c = line[i]
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            if c in "\"'":
                j = i + 1
                while j < len(line) and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                res.append(c + c)
                i = j + 1
                continue
            res.append(c)
            i += 1
        out.append("".join(res))
    return out


def functions(lines):
    """(first line index, line count) of every function body (lambdas included)."""
    code = strip_code(lines)
    found, stack = [], []
    for n, line in enumerate(code):
        for m in re.finditer(r"[{}]", line):
            if m.group() == "{":
                head = line[:m.end()]
                is_fn = bool(OPENS_BODY.search(head)) and not CONTROL.match(line)
                stack.append((n, is_fn))
            elif stack:
                start, is_fn = stack.pop()
                if is_fn:
                    found.append((start, n - start + 1))
    return found


def check_file(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    problems = []
    for n, line in enumerate(lines):
        m = MARK.search(line)
        if m and not m.group(2).strip():
            problems.append("%s:%d: a size-gate marker needs a reason" % (rel, n + 1))
    file_reason = any((MARK.search(x) and MARK.search(x).group(1)) for x in lines[:30])
    if len(lines) > MAX_FILE_LINES and not file_reason:
        problems.append("%s: %d lines (> %d; split it by job, or say why in its first 30 lines: "
                        "// size-gate: file: <reason>)" % (rel, len(lines), MAX_FILE_LINES))
    for start, count in functions(lines):
        if count <= MAX_FUNCTION_LINES:
            continue
        above = lines[max(0, start - 3):start + 1]
        if any(MARK.search(x) and not MARK.search(x).group(1) for x in above):
            continue
        problems.append("%s:%d: a function of %d lines (> %d; split it, or say why on the line "
                        "above: // size-gate: <reason>)" % (rel, start + 1, count, MAX_FUNCTION_LINES))
    return problems


def library_files():
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(ROOT, d)):
            for name in sorted(files):
                if name.endswith((".h", ".cc")):
                    rel = os.path.relpath(os.path.join(base, name), ROOT)
                    if not NOT_LIBRARY.search(rel):
                        yield rel


def main():
    passed = failed = 0
    for rel in sorted(library_files()):
        problems = check_file(rel)
        if problems:
            failed += 1
            for p in problems:
                print("FAIL " + p)
        else:
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
