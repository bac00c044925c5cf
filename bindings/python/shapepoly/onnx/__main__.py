"""shapepoly-onnx: convert ONNX models to shapepoly programs and back.

  shapepoly-onnx import MODEL.onnx -o OUT.shpoly [--dynamic batch,height,width] [--dim N=batch]
                 [--constraint "batch <= 64"] [--constants] [--no-fold-batch-norm]
  shapepoly-onnx export PROG.shpoly -o OUT.onnx [--opset 18] [--program-names]

Exits 0 on success and 2 on any failure (bad arguments, a model that cannot be imported), with
one line on stderr naming the node and op.
"""

import argparse
import sys
from typing import List, Optional


def _dims(pairs: List[str]) -> dict:
    out = {}
    for p in pairs:
        name, eq, value = p.partition("=")
        if not eq or not name or not value:
            raise SystemExit("shapepoly-onnx: --dim takes DIM_PARAM=NAME_OR_EXPRESSION, not %r" % p)
        out[name] = int(value) if value.lstrip("-").isdigit() else value
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="shapepoly-onnx", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="ONNX model -> shapepoly program (.shpoly)")
    imp.add_argument("model")
    imp.add_argument("-o", "--output", required=True)
    imp.add_argument("--dynamic", default=None,
                     help="fixed input axes to make symbolic: batch, height, width, depth, "
                          "channels, or NAME=AXIS (comma-separated)")
    imp.add_argument("--dim", action="append", default=[],
                     help="DIM_PARAM=NAME: rename an ONNX dim_param (or fix it: N=4)")
    imp.add_argument("--constraint", action="append", default=[],
                     help="a constraint on the variables, e.g. 'batch <= 64'")
    imp.add_argument("--constants", action="store_true",
                     help="initializers become constants instead of named parameters")
    imp.add_argument("--no-fold-batch-norm", action="store_true",
                     help="keep each BatchNormalization (by default one that follows a conv "
                          "with known weights is folded into the conv's weight and bias)")
    exp = sub.add_parser("export", help="shapepoly program (.shpoly) -> ONNX model")
    exp.add_argument("program")
    exp.add_argument("-o", "--output", required=True)
    exp.add_argument("--opset", type=int, default=None)
    exp.add_argument("--program-names", action="store_true",
                     help="write the program's input/output names (by default a program "
                          "imported from ONNX is written under its original ONNX names)")
    args = ap.parse_args(argv)

    from . import ExportError, OnnxImportError, export_program, import_model
    from .._errors import Error
    try:
        if args.command == "import":
            program = import_model(args.model, dynamic=args.dynamic, dims=_dims(args.dim),
                                   parameters=not args.constants, constraints=args.constraint,
                                   fold_batch_norm=not args.no_fold_batch_norm)
            program.save(args.output)
            sig = ", ".join("%s: %s%s" % (i.name, i.dtype.name.lower(), i.shape)
                            for i in program.inputs)
            outs = ", ".join("%s: %s%s" % (o.name, o.dtype.name.lower(), o.shape)
                             for o in program.outputs)
            print("%s: (%s) -> (%s)" % (args.output, sig, outs))
        else:
            from .. import load
            kw = {} if args.opset is None else {"opset": args.opset}
            if args.program_names:
                kw["onnx_names"] = False
            with load(args.program) as program:
                export_program(program, args.output, **kw)
            print("%s: written" % args.output)
    except (OnnxImportError, ExportError, Error, OSError) as e:
        print("shapepoly-onnx: %s" % _one_line(e), file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        print("shapepoly-onnx: %s: %s" % (type(e).__name__, _one_line(e)), file=sys.stderr)
        return 2
    return 0


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:2000]


if __name__ == "__main__":
    sys.exit(main())
