"""Function bodies: ops without a converter that are defined by a function are imported as that
function's nodes, inlined in place.

Two kinds: model-local functions (`model.functions`, any domain, nested, with attribute
references and their own opset imports), and ops of the ai.onnx domain whose schema carries a
function body (Gelu, MeanVarianceNormalization, RMSNormalization, NegativeLogLikelihoodLoss,
...), some of which depend on the node's attributes and input types (context-dependent
functions, asked for with the element types and shapes the importer knows). A body runs at
the opset its function declares; its inner names are prefixed with the calling node's outputs so
that two calls never share a value.
"""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import onnx
from onnx import AttributeProto, defs, helper

MAX_DEPTH = 32  # nested function calls (a recursive model is refused, not followed forever)



def local_functions(model: onnx.ModelProto) -> Dict[Tuple[str, str], onnx.FunctionProto]:
    """(domain, name) -> the model's function of that name (the last one if repeated)."""
    return {(f.domain, f.name): f for f in model.functions}


def _schema(node: Any, opset: int) -> Optional[Any]:
    if node.domain not in ("", "ai.onnx"):
        return None
    try:
        return defs.get_schema(node.op_type, opset, "")
    except defs.SchemaError:
        return None


def has_body(node: Any, opset: int, local: Dict[Tuple[str, str], Any]) -> bool:
    """True if `node` can be imported as a function body."""
    if (node.domain, node.op_type) in local:
        return True
    s = _schema(node, opset)
    return s is not None and (s.has_function or s.has_context_dependent_function)


def _type_of(val: Any) -> onnx.TypeProto:
    """The ONNX type of an importer value: element type and shape (symbolic sizes by name)."""
    if val is None:
        return onnx.TypeProto()
    if val.tensor is not None:
        t = val.tensor
        elem = helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype.numpy))
        dims = [d.constant if d.constant is not None else str(d) for d in t.shape]
    else:
        a = val.host
        elem = val.etype if a.dtype == object else helper.np_dtype_to_tensor_dtype(a.dtype)
        dims = list(a.shape)
    return helper.make_tensor_type_proto(elem, dims)


def body(node: Any, opset: int, local: Dict[Tuple[str, str], Any],
         types: List[Any]) -> Tuple[onnx.FunctionProto, Dict[str, Any]]:
    """(the function that defines `node`, the attribute defaults of its schema)."""
    f = local.get((node.domain, node.op_type))
    if f is not None:
        return f, {}
    s = _schema(node, opset)
    defaults = {name: a.default_value for name, a in s.attributes.items()
                if a.default_value is not None and a.default_value.name}
    if s.has_context_dependent_function:
        versions = [v for v in s.context_dependent_function_opset_versions if v <= opset]
        data = s.get_context_dependent_function_with_opset_version(
            max(versions) if versions else opset, node.SerializeToString(),
            [_type_of(v).SerializeToString() for v in types])
    else:
        versions = [v for v in s.function_opset_versions if v <= opset]
        data = s.get_function_with_opset_version(max(versions) if versions else opset)
    if not data:
        raise ValueError("onnx gives no function body for %s at opset %d with these inputs" %
                         (node.op_type, opset))
    return onnx.FunctionProto.FromString(data), defaults


def inline(node: Any, f: onnx.FunctionProto, defaults: Dict[str, Any], prefix: str
           ) -> List[Any]:
    """The nodes of `f` instantiated for `node`, to run in a scope of their own where the
    function's inputs are bound (inner names stay; an input the node leaves out becomes ''),
    attribute references replaced by the node's attributes (or the function's or schema's
    defaults; an attribute with neither is left out, as ONNX says). Node names get `prefix`."""
    absent = {name for i, name in enumerate(f.input)
              if i >= len(node.input) or not node.input[i]}
    given = {a.name: a for a in node.attribute}
    for a in f.attribute_proto:  # the function's own defaults
        given.setdefault(a.name, a)
    for name, a in defaults.items():
        given.setdefault(name, a)
    out = []
    for k, b in enumerate(f.node):
        n = onnx.NodeProto()
        n.CopyFrom(b)
        n.name = "%s/%s" % (prefix, b.name or "#%d" % k)
        if absent & set(b.input):
            del n.input[:]
            n.input.extend("" if x in absent else x for x in b.input)
        del n.attribute[:]
        for a in b.attribute:
            if a.ref_attr_name:
                src = given.get(a.ref_attr_name)
                if src is None:
                    continue
                c = AttributeProto()
                c.CopyFrom(src)
                c.name = a.name
                n.attribute.append(c)
            else:
                n.attribute.append(a)
        out.append(n)
    return out


def body_opset(f: onnx.FunctionProto, outer: int) -> int:
    """The default-domain opset the body is written for (the caller's when it names none)."""
    v = [o.version for o in f.opset_import if o.domain in ("", "ai.onnx")]
    return v[0] if v else outer

