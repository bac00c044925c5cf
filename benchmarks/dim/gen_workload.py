#!/usr/bin/env python3
"""Writes benchmarks/dim/workload.txt, the dim-engine benchmark workload.

Deterministic (fixed seed, Python's `random.Random`, no other dependencies):
running it again must reproduce the committed file byte for byte
(`python3 benchmarks/dim/gen_workload.py --check` verifies that).

File format (read by peers.py and by the C++ benchmark):
  * a line `[name]` starts a section; every other line is one item of the
    current section; there are no comments and no blank lines;
  * sections, in this order:
      [spec]              1 line: a 10-dimension shape spec
      [constraints]       10 lines: the constraints of the benchmark scope
      [bounds]            1000 lines: expressions to bound
      [compare]           1000 lines: `LHS >= RHS`
      [solve_specs]       5 lines: one shape spec per argument
      [solve_shapes]      5 lines: the concrete shape of each argument
      [solve_constraints] the constraints of the scope used for the solve
                          scenario: the [constraints] lines that mention only
                          b, s, h, d (the variables of the solve specs).

Expression syntax is the common subset of JAX's parser and ours: identifiers,
integer constants, binary `+ - *`, a leading unary minus,
`floordiv(x, k)`, `mod(x, k)`, `max(x, y)`, `min(x, y)`; no parentheses other
than function-call ones (JAX's parser has no parenthesised sub-expressions).
"""

import argparse
import os
import random
import re
import sys

SEED = 3  # issue 3

SPEC = ("b, s, 2*s + 1, floordiv(n, 4), mod(n, 4), max(b, 8), min(s, 512), "
        "n*b, 3*h + 2*w - 1, floordiv(h - 1, 2) + 1")

CONSTRAINTS = [
    "s >= 2",
    "s <= 4096",
    "b <= 512",
    "h >= 4",
    "d >= h + 8",
    "mod(d, 8) == 0",
    "n >= 2*h",
    "w <= 64",
    "w >= 3",
    "b*s <= 65536",
]

TERM_POOL = [
    "b", "s", "h", "d", "n", "w", "b*s", "h*w", "floordiv(d, 8)", "mod(n, 3)",
    "floordiv(n + 1, 2)", "max(h, w)", "min(s, d)", "max(b, 8)",
]

SOLVE_SPECS = ["b, s", "s, 2*h", "4*h + 1, d", "b*s, d", "b, 3"]
SOLVE_SHAPES = ["8, 16", "16, 10", "21, 32", "128, 32", "8, 3"]
SOLVE_VARS = {"b", "s", "h", "d"}

NUM_BOUNDS = 1000
NUM_COMPARE = 1000

_FUNCS = {"floordiv", "mod", "max", "min"}


def variables_of(text):
    return {t for t in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)
            if t not in _FUNCS}


def random_linear(rng, min_terms, max_terms):
    """Returns (canonical key, text) of a random linear combination of
    distinct pool terms with nonzero coefficients in [-5, 5] plus a constant
    in [-20, 20] (omitted when 0)."""
    nterms = rng.randint(min_terms, max_terms)
    picks = rng.sample(range(len(TERM_POOL)), nterms)
    coeffs = [rng.choice([c for c in range(-5, 6) if c != 0]) for _ in picks]
    const = rng.randint(-20, 20)
    parts = []
    for i, (t, c) in enumerate(zip(picks, coeffs)):
        mag = abs(c)
        body = TERM_POOL[t] if mag == 1 else f"{mag}*{TERM_POOL[t]}"
        if i == 0:
            parts.append(("-" if c < 0 else "") + body)
        else:
            parts.append(("- " if c < 0 else "+ ") + body)
    if const:
        parts.append(("- " if const < 0 else "+ ") + str(abs(const)))
    key = (tuple(sorted(zip(picks, coeffs))), const)
    return key, " ".join(parts)


def generate():
    rng = random.Random(SEED)
    out = ["[spec]", SPEC, "[constraints]", *CONSTRAINTS]

    out.append("[bounds]")
    seen = set()
    while len(seen) < NUM_BOUNDS:
        key, text = random_linear(rng, 2, 4)
        if key in seen:
            continue
        seen.add(key)
        out.append(text)

    out.append("[compare]")
    seen = set()
    while len(seen) < NUM_COMPARE:
        lkey, ltext = random_linear(rng, 1, 3)
        rkey, rtext = random_linear(rng, 1, 3)
        if lkey == rkey or (lkey, rkey) in seen:
            continue
        seen.add((lkey, rkey))
        out.append(f"{ltext} >= {rtext}")

    out += ["[solve_specs]", *SOLVE_SPECS, "[solve_shapes]", *SOLVE_SHAPES]
    out.append("[solve_constraints]")
    out += [c for c in CONSTRAINTS if variables_of(c) <= SOLVE_VARS]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "workload.txt")
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the file differs from what would be written")
    args = ap.parse_args()
    text = generate()
    if args.check:
        try:
            with open(args.out, encoding="utf-8") as f:
                same = f.read() == text
        except FileNotFoundError:
            same = False
        if not same:
            print(f"{args.out} is out of date; run {sys.argv[0]}", file=sys.stderr)
            return 1
        return 0
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
