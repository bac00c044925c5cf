"""ONNX's own node conformance suite, generated (not copied): the cases that the onnx wheel's
generators in onnx.backend.test.case.node make, each imported as the model it is (its opset,
its element types) and run on each of its data sets at the case's own tolerances.

Every case ends in one of:
  pass     every output of every data set matches (shape and values, NaN == NaN);
  wrong    imported and ran, but a value or shape differs: a bug unless the case is listed in
           EXPECTED_WRONG (random ops, whose reference is one draw);
  refused  the importer refused it with an OnnxImportError (UnsupportedOps, RuntimeShape, ...)
           or the runtime refused the inputs with a shapepoly error; the reason is grouped
           into a family (`reason_family`).
  crash    anything else (a raw Python exception): always a bug.

Run as a script for the table by op family (`python onnx_node_suite.py [--op Name] [-v]`);
test_onnx_node_suite.py asserts the pass rate and that nothing is wrong or crashes.
"""

import argparse
import collections
import os
import re
import sys
import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import shapepoly as sp  # noqa: E402
from shapepoly import onnx as spx  # noqa: E402
from shapepoly.onnx._ops_sequence import onnx_values, sequence_inputs  # noqa: E402

# Cases whose reference output is one random draw (or a training-mode mask): they can only
# match by chance. Listed by name prefix.
EXPECTED_WRONG = ("test_dropout_random", "test_training_dropout", "test_bernoulli",
                  "test_random")


# Cases whose stored reference is less exact than the case's tolerance: (rtol, atol) to use.
# test_dft_inverse(_opset19): the exact values are 0; the reference is numpy's complex64 FFT
# (1.9e-7 off, over the case's atol of 1e-7); the DFT here is a double-precision matrix
# product (3e-15 off).
# Attention in f16/bf16: the reference (ml_dtypes arithmetic) rounds after each step of the
# attention; the library computes the node in f32 and rounds once: up to 2 ulp apart.
TOLERANCE = {"test_dft_inverse_opset19": (1e-3, 1e-6), "test_dft_inverse": (1e-3, 1e-6)}
for _shape in ("4d_causal", "4d_padded_kv", "4d_causal_padded_kv", "4d_attn_mask_causal",
               "3d_causal"):
    for _t, _tol in (("bf16", 2.0 ** -7), ("fp16", 2.0 ** -10)):
        for _suffix in ("", "_expanded"):
            TOLERANCE["test_attention_%s_%s%s" % (_shape, _t, _suffix)] = (_tol, 2 * _tol)


def cases() -> List[Any]:
    """The node cases, in the generators' order, one per name."""
    from onnx.backend.test.case import node as onnx_node
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            all_cases = onnx_node.collect_testcases(None)
    out, seen = [], set()
    for c in all_cases:
        if c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


def op_family(case: Any) -> str:
    """The op a case tests: the op type of its (first) node, e.g. Attention, Resize."""
    ops = [n.op_type for n in case.model.graph.node]
    return ops[0] if len(ops) == 1 else (case.name.split("_")[1].capitalize() if not ops
                                         else ops[-1] if len(set(ops)) > 1 else ops[0])


# The ONNX-only element types (ml_dtypes arrays in onnx; u8 bits or i8/u8 values in programs).
ONNX_ONLY = {np.dtype(onnx.helper.tensor_dtype_to_np_dtype(getattr(onnx.TensorProto, t)))
             for t in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                       "FLOAT8E8M0", "FLOAT4E2M1", "INT4", "UINT4", "INT2", "UINT2")}


def _compare_only(got: np.ndarray, want: np.ndarray) -> Optional[str]:
    """An output of an ONNX-only type (ml_dtypes: float8, float4, int4, ...): bit-exact for the
    float types (any NaN equals any NaN), equal values for the int types."""
    if got.dtype != want.dtype:
        return "element type %s, expected %s" % (got.dtype, want.dtype)
    g, w = got.astype(np.float32), want.astype(np.float32)
    nan = np.isnan(w)
    bad = np.isnan(g) != nan
    if want.dtype.name.startswith("float"):
        bad |= ~nan & (got.view(np.uint8) != want.view(np.uint8))
    else:
        bad |= ~nan & (g != w)
    if np.any(bad):
        return "values differ (%d of %d)" % (int(bad.sum()), want.size)
    return None


def _compare(got: np.ndarray, want: Any, rtol: float, atol: float) -> Optional[str]:
    want = np.asarray(want)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if want.dtype in ONNX_ONLY:
        return _compare_only(got, want)
    if want.dtype == object or want.dtype.kind in "SUO":
        return "element type %s" % want.dtype
    if want.dtype.kind == "b" or want.dtype.kind in "iu":
        if not np.array_equal(got.astype(want.dtype), want):
            return "values differ (%d of %d)" % (int(np.sum(got.astype(want.dtype) != want)),
                                                 want.size)
        return None
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if want.dtype.itemsize == 2 and np.any(bad):
        # f16 and bf16: within one unit in the last place of the type (the library computes a
        # node in f32 and rounds once; a reference computed otherwise can round the other way).
        with np.errstate(invalid="ignore", over="ignore"):
            ulp = np.abs(np.nextafter(want, np.array(np.inf, want.dtype)).astype(np.float64) - w)
        bad &= ~(np.abs(g - w) <= np.where(np.isfinite(ulp), ulp, 0))
    if np.any(bad):
        return "max error %g (%d of %d values)" % (
            float(np.nanmax(np.abs(g - w)[bad])) if np.any(bad) else 0.0, int(bad.sum()),
            w.size)
    return None


def _array(x: Any) -> Any:
    """A data set's value as numpy: the generators store some (f16, bf16 casts) as TensorProto."""
    if isinstance(x, np.generic):
        return np.asarray(x)
    if isinstance(x, onnx.TensorProto):
        return numpy_helper.to_array(x)
    return x


def _value(x: Any) -> Any:
    """A data set's value: an array, a list of arrays (a sequence) or None (an empty
    optional)."""
    if isinstance(x, list):
        return [_array(e) for e in x]
    return _array(x)


def _compare_value(got: Any, want: Any, rtol: float, atol: float) -> Optional[str]:
    """A tensor, a sequence (a list: its length, then each element) or an empty optional."""
    if want is None or got is None:
        return None if want is None and got is None else "%s, expected %s" % (
            "empty" if got is None else "a value", "empty" if want is None else "a value")
    if isinstance(want, list):
        if not isinstance(got, list):
            return "a tensor, expected a sequence"
        if len(got) != len(want):
            return "a sequence of %d, expected %d" % (len(got), len(want))
        for j, (g, w) in enumerate(zip(got, want)):
            err = _compare(np.asarray(g), w, rtol, atol)
            if err:
                return "element %d: %s" % (j, err)
        return None
    if isinstance(got, list):
        return "a sequence, expected a tensor"
    return _compare(np.asarray(got), want, rtol, atol)


def run(case: Any) -> Tuple[str, str]:
    """(outcome, detail) of one case: see the module doc."""
    m = case.model
    inits = {i.name for i in m.graph.initializer}
    graph_inputs = [i.name for i in m.graph.input if i.name not in inits]
    # A sequence input is imported with the elements' shapes of the first data set (a program
    # has one input per element); an optional input given None is refused below.
    first = [_array(x) for x in case.data_sets[0][0]] if case.data_sets else []
    sequences: Dict[str, Any] = {n: [np.shape(e) for e in x] for n, x in
                                 zip(graph_inputs, first) if isinstance(x, list)}
    sequences.update({n: None for n, x in zip(graph_inputs, first) if x is None})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = spx.import_model(m, sequences=sequences)
    except spx.UnsupportedOps as e:
        return "refused", "unsupported op: " + ", ".join(sorted(e.ops))
    except spx.OnnxImportError as e:
        return "refused", str(e)
    except Exception as e:  # noqa: BLE001 - a raw exception is the finding
        return "crash", "import: %s: %s" % (type(e).__name__, e)
    names = [i.name for i in program.inputs]
    try:
        with program, program.runtime() as rt:
            for k, (inputs, outputs) in enumerate(case.data_sets):
                inputs = [_value(x) for x in inputs]
                outputs = [_value(x) for x in outputs]
                try:
                    args = sequence_inputs(program, dict(zip(graph_inputs, inputs)))
                except ValueError as e:  # another data set's sequence of another length
                    return "refused", "a sequence input: %s" % e
                for pname in args:
                    if pname not in names:
                        return "crash", "input %s has no program input" % pname
                try:
                    got = spx.to_onnx_outputs(program, rt(**spx.to_program_inputs(program, args)))
                except sp.Error as e:
                    return "refused", "run: %s: %s" % (type(e).__name__, e)
                got = list(onnx_values(program, got).values())
                if len(got) != len(outputs):
                    return "wrong", "%d outputs, expected %d" % (len(got), len(outputs))
                rtol, atol = TOLERANCE.get(case.name, (case.rtol, case.atol))
                for i, (g, w) in enumerate(zip(got, outputs)):
                    err = _compare_value(g, w, rtol, atol)
                    if err:
                        return "wrong", "data set %d output %d: %s" % (k, i, err)
    except Exception as e:  # noqa: BLE001
        return "crash", "run: %s: %s" % (type(e).__name__, e)
    return "pass", ""


_FAMILIES = [
    (r"Cast(Like)?\(to=", lambda m: "element type"),
    (r"^unsupported op: (.*)", lambda m: "unsupported op " + m.group(1).split(",")[0]),
    (r"computed from run-time data", lambda m: "shape from run-time data"),
    (r"element type|FLOAT16|BFLOAT16|UINT|INT8|INT16|FLOAT8|FLOAT4|INT4|STRING|COMPLEX",
     lambda m: "element type"),
    (r"opset \d+ is outside", lambda m: "opset"),
    (r"sequence or optional|is not a tensor", lambda m: "sequence/optional"),
    (r"training mode", lambda m: "random (training mode)"),
    (r"cond: result \d+ of the true branch is .* equal ranks",
     lambda m: "If branches of different ranks"),
    (r"length of the sequence|carries (a sequence|an optional)|same form from both branches",
     lambda m: "a sequence's length or an optional's presence known only at run time"),
    (r"run time|run-time", lambda m: "a size or count computed at run time"),
]


def reason_family(detail: str) -> str:
    for pat, name in _FAMILIES:
        m = re.search(pat, detail)
        if m:
            return name(m)
    return "other: " + detail[:90]


def run_all(only: Optional[List[str]] = None) -> List[Tuple[Any, str, str]]:
    out = []
    for c in cases():
        if only and op_family(c) not in only:
            continue
        outcome, detail = run(c)
        out.append((c, outcome, detail))
    return out


def summary(results: List[Tuple[Any, str, str]]) -> Dict[str, int]:
    return dict(collections.Counter(o for _, o, _ in results))


def is_expected_wrong(name: str) -> bool:
    return name.startswith(EXPECTED_WRONG)


DOC_MARKER = "<!-- node-suite-table -->"


def markdown(results: List[Tuple[Any, str, str]]) -> str:
    """One row per op with a case that does not pass: passed/total and the reasons."""
    by_op: Dict[str, List[Tuple[str, str]]] = collections.defaultdict(list)
    for c, outcome, detail in results:
        by_op[op_family(c)].append((outcome, detail))
    rows = ["| Op | passed | why the others do not |", "|---|---|---|"]
    for op in sorted(by_op):
        cases = by_op[op]
        bad = collections.Counter(reason_family(d) if o == "refused" else o
                                  for o, d in cases if o != "pass")
        if not bad:
            continue
        why = "; ".join("%s (%d)" % (r.replace("|", "/"), n) for r, n in bad.most_common())
        rows.append("| %s | %d/%d | %s |" % (op, len(cases) - sum(bad.values()), len(cases),
                                             why))
    return "\n".join(rows)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", action="append", help="only the cases of this op (repeatable)")
    ap.add_argument("-v", action="store_true", help="print every case that does not pass")
    ap.add_argument("--update-doc", metavar="PATH",
                    help="rewrite the table of docs/onnx.md (after its marker line)")
    ap.add_argument("--markdown", action="store_true",
                    help="print the table of docs/onnx.md: each op with a case that does not "
                         "pass, and why")
    args = ap.parse_args(argv)
    results = run_all(args.op)
    if args.markdown:
        print(markdown(results))
        return 0
    if args.update_doc:  # rewrite the table after the marker line of docs/onnx.md
        with open(args.update_doc) as f:
            doc = f.read()
        head = doc[:doc.index(DOC_MARKER) + len(DOC_MARKER)]
        s = summary(results)
        with open(args.update_doc, "w") as f:
            f.write("%s\n\n%d cases: %d pass, %d refused, %d wrong, %d crash.\n\n%s\n" % (
                head, len(results), s.get("pass", 0), s.get("refused", 0), s.get("wrong", 0),
                s.get("crash", 0), markdown(results)))
        return 0
    fam: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    reasons: collections.Counter = collections.Counter()
    for c, outcome, detail in results:
        fam[op_family(c)][outcome] += 1
        if outcome == "refused":
            reasons[reason_family(detail)] += 1
        if args.v and outcome != "pass":
            print("%-8s %s: %s" % (outcome, c.name, detail[:300]))
    s = summary(results)
    total = len(results)
    print("node suite: %d cases, %d pass (%.1f%%), %d refused, %d wrong, %d crash" % (
        total, s.get("pass", 0), 100.0 * s.get("pass", 0) / max(total, 1), s.get("refused", 0),
        s.get("wrong", 0), s.get("crash", 0)))
    print("refusals by reason:")
    for r, n in reasons.most_common():
        print("  %5d  %s" % (n, r))
    print("by op (pass/total, not passing):")
    for op in sorted(fam, key=lambda o: (-sum(fam[o].values()) + fam[o]["pass"], o)):
        c = fam[op]
        n = sum(c.values())
        if c["pass"] != n:
            print("  %-32s %3d/%-3d %s" % (op, c["pass"], n, ", ".join(
                "%s %d" % (k, v) for k, v in c.items() if k != "pass")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
