#!/usr/bin/env python3
"""Runs the linter of every language, one test per linter, and prints 'N passed, M failed' last.

  go-vet        go vet ./...                                  (bindings/go)
  rust-clippy   cargo clippy --all-targets -- -D warnings      (bindings/rust workspace)
  python-ruff   ruff check (ruff.toml) bindings/python tools/python tools/*.py
  csharp-mcs    bindings/csharp/build.sh: mcs -warn:4 -warnaserror+ on the binding, its tool
                and its tests (mono has no offline `dotnet format`; the compiler's warnings at
                the highest level, as errors, are the check)

The `lint` suite of tools/run_tests.py (`make test`) runs it after staging build/lib (clippy
builds shapepoly-sys, whose build script needs build/lib/libshapepoly.so; SHAPEPOLY_LIB_DIR
overrides it as for `cargo test`). tools/setup.sh installs what is missing: ruff (pinned in
tools/requirements.txt, into .venv) and clippy (rustup component). A linter that is not
installed is a failure that says so. Usage: tools/lint.py [linter ...]   (default: all)
"""

import glob
import os
import shutil
import subprocess
import sys
from typing import Dict, List, NamedTuple, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Linter(NamedTuple):
    name: str
    cmd: List[str]
    cwd: str  # relative to ROOT
    env: Optional[Dict[str, str]] = None
    needs: Optional[str] = None  # the program that must be on PATH


def linters() -> List[Linter]:
    py_files = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "tools", "*.py")))
    return [
        Linter("go-vet", ["go", "vet", "./..."], "bindings/go",
               {"GOPROXY": "off", "GOFLAGS": "-mod=mod"}, "go"),
        Linter("rust-clippy", ["cargo", "clippy", "--offline", "--all-targets", "--", "-D", "warnings"],
               "bindings/rust", None, "cargo"),
        Linter("python-ruff", [sys.executable, "-m", "ruff", "check", "--no-cache", "bindings/python",
                               "tools/python"] + py_files, "."),
        Linter("csharp-mcs", [os.path.join(ROOT, "bindings", "csharp", "build.sh")], ".", None, "mcs"),
        # The size gate of the C++ library: files <= 800 lines, functions <= 150, or a reason.
        Linter("cpp-size-gate", [sys.executable, os.path.join(ROOT, "tools", "check_sizes.py")], "."),
    ]


def run(linter: Linter) -> bool:
    print("==== lint %s: %s" % (linter.name, " ".join(linter.cmd)), flush=True)
    if linter.needs and not shutil.which(linter.needs):
        print("%s is not installed (tools/setup.sh installs it)" % linter.needs)
        return False
    if linter.name == "python-ruff":
        probe = subprocess.run([sys.executable, "-m", "ruff", "--version"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        if probe.returncode != 0:
            print("ruff is not installed in %s (tools/setup.sh installs the pinned version from "
                  "tools/requirements.txt)" % sys.executable)
            return False
    env = dict(os.environ, **(linter.env or {}))
    try:
        proc = subprocess.run(linter.cmd, cwd=os.path.join(ROOT, linter.cwd), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              stdin=subprocess.DEVNULL, errors="replace")
    except OSError as e:
        print("cannot run %s: %s" % (linter.cmd[0], e))
        return False
    out = proc.stdout.rstrip()
    if out:
        print(out)
    ok = proc.returncode == 0
    print("%s lint.%s" % ("PASS" if ok else "FAIL", linter.name), flush=True)
    return ok


def main(argv: List[str]) -> int:
    chosen = linters()
    if argv:
        known = {lt.name for lt in chosen}
        unknown = [a for a in argv if a not in known]
        if unknown:
            print("unknown linter(s): %s; known: %s" % (" ".join(unknown), " ".join(sorted(known))))
            return 2
        chosen = [lt for lt in chosen if lt.name in argv]
    results = [run(lt) for lt in chosen]
    passed = sum(results)
    print("%d passed, %d failed" % (passed, len(results) - passed))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
