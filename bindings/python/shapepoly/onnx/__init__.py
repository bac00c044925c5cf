"""The ONNX bridge: import ONNX models as shapepoly programs, export programs to ONNX.

    >>> from shapepoly import onnx as spx                     # doctest: +SKIP
    >>> program = spx.import_model("model.onnx", dynamic=["batch"])   # doctest: +SKIP
    >>> spx.export_program(program, "again.onnx")             # doctest: +SKIP

Needs the `onnx` package (tools/requirements.txt pins it). The command line is
`shapepoly-onnx import|export ...` (or `python -m shapepoly.onnx`); see README.md.
"""

try:
    import onnx  # noqa: F401
except ImportError as e:  # a clear message instead of a bare ModuleNotFoundError
    raise ImportError("shapepoly.onnx needs the onnx package (pip install onnx; "
                      "tools/requirements.txt pins it)") from e

from ._export import ExportError, export_model, export_program
from ._import import (CONVERTERS, ImportError_ as OnnxImportError, RuntimeShape, UnsupportedOps,
                      import_model, supported_ops)
from ._narrow_types import to_onnx_outputs, to_program_inputs
from . import _ops_attention  # noqa: E402,F401 (imports ONNX Attention onto the attention op)

__all__ = ["CONVERTERS", "ExportError", "OnnxImportError", "UnsupportedOps", "export_model",
           "export_program", "import_model", "RuntimeShape", "supported_ops", "to_onnx_outputs",
           "to_program_inputs"]
