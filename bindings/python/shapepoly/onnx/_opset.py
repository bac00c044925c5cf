"""Which opsets the importer reads, and the rule for opsets past the range it was written for.

The converters implement the ops' semantics of opsets MIN_OPSET..MAX_OPSET (6..24). A model of
a newer opset (up to the newest the installed onnx package knows) imports when every one of its
ops means the same there as at MAX_OPSET: the op's newer versions only add element types, or add
attributes that the node leaves at their defaults (the defaults keep the old behaviour), and keep
the inputs and outputs. Ops that first appeared after MAX_OPSET are read by their converter (or
their function body) at the version they appeared. Anything else is refused naming the op, the
version where it changed and what changed, with the advice to re-export at MAX_OPSET. A model
older than MIN_OPSET imports when none of its ops changed between its opset and MIN_OPSET.
"""

from typing import Any, Dict, List, Optional

import onnx
from onnx import defs

MIN_OPSET, MAX_OPSET = 6, 24
NEWEST_KNOWN = defs.onnx_opset_version()
# Converters that implement a version newer than MAX_OPSET: op -> the newest version they read.
HANDLES: Dict[str, int] = {"SpaceToDepth": 28}  # its CRD mode


def check_opset(opset: int) -> Optional[str]:
    """Why a model of `opset` (its default domain) cannot be imported at all, or None."""
    if opset < 1:
        return "ONNX opset %d is not an opset (they start at 1)" % opset
    if opset > NEWEST_KNOWN:
        return ("ONNX opset %d is newer than the installed onnx package knows (%d), so whether "
                "its ops changed cannot be checked; re-export the model at opset %d (or upgrade "
                "onnx)" % (opset, NEWEST_KNOWN, MAX_OPSET))
    return None


def _schema(op: str, version: int, domain: str) -> Optional[Any]:
    try:
        return defs.get_schema(op, version, domain)
    except defs.SchemaError:
        return None


def _default(a: Any) -> Any:
    """An attribute's default value as a Python value, or None when it has none."""
    d = a.default_value
    if d is None or not d.name and d.type == 0:
        return None
    return onnx.helper.get_attribute_value(d)


def changed_before(node: Any, opset: int) -> Optional[str]:
    """Why `node` of a model older than MIN_OPSET cannot be read as its opset-MIN_OPSET self
    (its op changed in between), or None."""
    old = _schema(node.op_type, opset, "")
    new = _schema(node.op_type, MIN_OPSET, "")
    if old is None or new is None or old.since_version == new.since_version:
        return None
    return ("%s of opset %d changed at opset %d; upgrade the model with "
            "onnx.version_converter.convert_version(model, %d)" %
            (node.op_type, opset, new.since_version, MAX_OPSET))


def changed_since(node: Any, opset: int) -> Optional[str]:
    """Why `node` (an op of the default domain in a model of `opset` > MAX_OPSET) means something
    other than at MAX_OPSET, or None when it means the same (see the module doc)."""
    new = _schema(node.op_type, opset, "")
    if new is None or new.since_version <= max(MAX_OPSET, HANDLES.get(node.op_type, 0)):
        return None  # unchanged since MAX_OPSET (or unknown: the converter lookup reports it)
    old = _schema(node.op_type, MAX_OPSET, "")
    if old is None:
        return None  # first appeared after MAX_OPSET: its converter reads that version
    given = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    why: List[str] = []
    if [(i.name, i.option) for i in old.inputs] != [(i.name, i.option) for i in new.inputs]:
        why.append("its inputs changed")
    if [(o.name, o.option) for o in old.outputs] != [(o.name, o.option) for o in new.outputs]:
        why.append("its outputs changed")
    for name, a in new.attributes.items():
        if name in old.attributes:
            if _default(a) != _default(old.attributes[name]):
                why.append("attribute %s has a new default" % name)
        elif name in given and given[name] != _default(a):
            why.append("new attribute %s=%r is not its default %r" % (name, given[name],
                                                                       _default(a)))
    if not why:
        return None
    return ("%s changed at opset %d (%s); re-export the model at opset %d" %
            (node.op_type, new.since_version, "; ".join(why), MAX_OPSET))
