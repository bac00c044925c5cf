"""Export of an imported program under its original ONNX names.

A program imported from ONNX keeps, in its metadata "onnx.names", the ONNX name of each of its
inputs and outputs (the importer turns '.' into '_' and renames an output listed twice or whose
sanitized name is taken to '<name>_2', ...). Export writes the program's own names; this pass then
renames the model's graph inputs, outputs and initializers back to the ONNX names, with every
reference to them (nodes of the graph and of its subgraphs, which may read outer values by name,
and the shapepoly.* metadata keyed by input/output name). A name is restored only where that is
unambiguous: an ONNX name that two program names map to (a tensor the model listed twice as an
output) or that another value of the exported graph already uses keeps the program's name.
"""

import json
from typing import Any, Dict, Optional

from onnx import ModelProto, helper

ROLE_KEYS = ("shapepoly.input_roles", "shapepoly.output_roles")


def read_onnx_names(metadata: Dict[Any, Any]) -> Optional[Dict[str, Dict[str, str]]]:
    """The {"inputs": {...}, "outputs": {...}} map of metadata "onnx.names", or None when
    absent or not of that form (a program not imported from ONNX, or edited by hand)."""
    meta = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes)
                                                          else v) for k, v in metadata.items()}
    text = meta.get("onnx.names")
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or set(value) != {"inputs", "outputs"} or not all(
            isinstance(m, dict) and all(isinstance(a, str) and isinstance(b, str) and b
                                        for a, b in m.items()) for m in value.values()):
        return None
    return value


def _value_names(graph: Any, out: set) -> None:
    """Every value name defined or read in `graph` and its subgraphs."""
    for v in list(graph.input) + list(graph.output):
        out.add(v.name)
    for init in graph.initializer:
        out.add(init.name)
    for node in graph.node:
        out.update(n for n in node.input if n)
        out.update(n for n in node.output if n)
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _value_names(g, out)


def _rename_refs(graph: Any, renames: Dict[str, str]) -> None:
    """Renames node inputs/outputs in `graph` and, for reads, in its subgraphs (a subgraph that
    defines a value of the same name shadows the outer one: its own names are kept)."""
    for node in graph.node:
        for i, n in enumerate(node.input):
            if n in renames:
                node.input[i] = renames[n]
        for i, n in enumerate(node.output):
            if n in renames:
                node.output[i] = renames[n]
        for attr in node.attribute:
            subs = ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)
            for g in subs:
                own = {v.name for v in g.input} | {i.name for i in g.initializer} | {
                    o for nd in g.node for o in nd.output}
                inner = {k: v for k, v in renames.items() if k not in own}
                if inner:
                    _rename_refs(g, inner)


def restore_onnx_names(model: ModelProto, names: Dict[str, Dict[str, str]]) -> Dict[str, str]:
    """Renames `model`'s graph inputs, initializers and outputs to their ONNX names (see the
    module doc) in place; returns the renames made (program name -> ONNX name)."""
    g = model.graph
    wanted: Dict[str, str] = {}
    for v in list(g.input) + list(g.initializer):
        if v.name in names["inputs"]:
            wanted[v.name] = names["inputs"][v.name]
    for v in g.output:
        if v.name in names["outputs"]:
            wanted[v.name] = names["outputs"][v.name]
    used: set = set()
    _value_names(g, used)
    # The first program name (in the graph's order) that wants an ONNX name gets it; a rename
    # is dropped while its target is a name that stays (repeated until none is dropped: names
    # may swap, 'y_z' -> 'y.z' and 'y_z_2' -> 'y_z').
    renames: Dict[str, str] = {}
    for old, new in wanted.items():
        if old != new and new not in renames.values():
            renames[old] = new
    while True:
        staying = used - set(renames)
        kept = {o: n for o, n in renames.items() if n not in staying}
        if len(kept) == len(renames):
            break
        renames = kept
    if not renames:
        return {}
    for v in list(g.input) + list(g.output):
        v.name = renames.get(v.name, v.name)
    for init in g.initializer:
        init.name = renames.get(init.name, init.name)
    _rename_refs(g, renames)
    props = {p.key: p.value for p in model.metadata_props}
    for key in ROLE_KEYS:
        if key in props:
            roles = json.loads(props[key])
            props[key] = json.dumps({renames.get(k, k): r for k, r in roles.items()})
    if "shapepoly.solve" in props:
        solve = json.loads(props["shapepoly.solve"])
        for s in solve:
            if isinstance(s, dict) and s.get("input") in renames:
                s["input"] = renames[s["input"]]
        props["shapepoly.solve"] = json.dumps(solve)
    del model.metadata_props[:]
    helper.set_model_props(model, props)
    return renames
