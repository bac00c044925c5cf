"""Helpers to test and benchmark real ONNX models: the `light` architectures the onnx wheel
ships (onnx/backend/test/data/light), given random weights and made ready for dynamic sizes.

The light models hold no weights: each weight is a ConstantOfShape node filling it with 0.02,
so every reference output is the uniform softmax and proves little. `randomize_weights`
replaces those fills with seeded random initializers (He-scaled for conv and gemm weights,
positive for the 1-D parameters of normalizations and biases). `dynamic_head` rewrites the few
nodes that pin a model to its reference size, the way a model exported with dynamic axes is
written: a Reshape to a constant shape follows the batch and the trailing spatial axes of its
input, and an AveragePool whose window covers its whole input becomes a GlobalAveragePool.
`dynamic_inputs` turns axes of the graph inputs into dim_params, for onnxruntime (shapepoly's
importer does that itself with `dynamic=`). The rewritten model computes the same function at
the reference size, so onnxruntime and shapepoly run the very same model.
"""

import os
from typing import Dict, List, Sequence, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

LIGHT = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
         "shufflenet", "squeezenet", "vgg19", "zfnet512")


def light_model_path(name: str) -> str:
    """The path of light model `name` ("resnet50" or "light_resnet50") in the onnx wheel."""
    base = name[len("light_"):] if name.startswith("light_") else name
    if base not in LIGHT:
        raise ValueError("no light model %r (the onnx wheel has %s)" % (name, ", ".join(LIGHT)))
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                        "light_%s.onnx" % base)


def _consumers(graph: onnx.GraphProto) -> Dict[str, List[Tuple[onnx.NodeProto, int]]]:
    out: Dict[str, List[Tuple[onnx.NodeProto, int]]] = {}
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name:
                out.setdefault(name, []).append((node, i))
    return out


def _normal(rng: np.random.Generator, std: float, shape: Tuple[int, ...]) -> np.ndarray:
    a = rng.standard_normal(shape, dtype=np.float32)
    a *= np.float32(std)
    return a


def _uniform(rng: np.random.Generator, lo: float, hi: float, shape: Tuple[int, ...]
             ) -> np.ndarray:
    return (rng.random(shape, dtype=np.float32) * np.float32(hi - lo) + np.float32(lo))


def _fill(shape: Sequence[int], users: List[Tuple[onnx.NodeProto, int]],
          rng: np.random.Generator, residual: set) -> np.ndarray:
    """Random float32 values for a weight of `shape`, scaled by what its first consumer does.
    Conv and gemm weights keep the variance through a relu (He); a batch norm's gain
    scale^2 / var stays near 1, and near 0.1 for the last one of a residual branch (whose
    output is summed, names in `residual`), so that activations neither vanish nor grow
    2x per residual block (random weights know nothing of the statistics a trained batch
    norm holds)."""
    node, index = users[0] if users else (None, -1)
    op = node.op_type if node is not None else ""
    attrs = {} if node is None else {a.name: helper.get_attribute_value(a)
                                     for a in node.attribute}
    shape = tuple(int(s) for s in shape)
    if op in ("Conv", "ConvTranspose") and index == 1 and len(shape) >= 3:
        return _normal(rng, np.sqrt(2.0 / int(np.prod(shape[1:]))), shape)
    if op in ("Gemm", "MatMul") and index == 1 and len(shape) == 2:
        fan_in = shape[1] if op == "Gemm" and attrs.get("transB", 0) else shape[0]
        return _normal(rng, np.sqrt(2.0 / fan_in), shape)
    if op == "BatchNormalization" and index == 1 and node.output[0] in residual:
        return _uniform(rng, 0.2, 0.4, shape)
    if op == "BatchNormalization" and index in (1, 4):  # scale, variance
        return _uniform(rng, 0.8, 1.2, shape)
    if op == "BatchNormalization" and index == 3:  # mean
        return _uniform(rng, -0.1, 0.1, shape)
    if len([s for s in shape if s != 1]) <= 1:  # biases and per-channel factors: positive
        if op in ("Add", "Sum", "Conv", "Gemm") or (op == "BatchNormalization" and index == 2):
            return _uniform(rng, 0.0, 0.2, shape)
        return _uniform(rng, 0.5, 1.5, shape)
    return _normal(rng, np.sqrt(2.0 / max(int(np.prod(shape[1:])), 1)), shape)


def randomize_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` whose constant-filled float weights (ConstantOfShape of a constant
    shape, or an initializer whose elements are all equal) are seeded random initializers.
    The scale of each weight follows its consumer (see the module doc); the same seed gives
    the same model."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    rng = np.random.default_rng(seed)
    inits = {i.name: i for i in g.initializer}
    users = _consumers(g)
    residual = {n.output[0] for n in g.node if n.output and any(
        u.op_type in ("Sum", "Add") for u, _ in users.get(n.output[0], []))}
    keep, new_inits = [], []
    for node in g.node:
        if node.op_type == "ConstantOfShape" and node.input and node.input[0] in inits:
            value = [helper.get_attribute_value(a) for a in node.attribute if a.name == "value"]
            dtype = value[0].data_type if value else TensorProto.FLOAT
            if dtype in (TensorProto.FLOAT, TensorProto.DOUBLE):
                shape = numpy_helper.to_array(inits[node.input[0]]).reshape(-1).tolist()
                a = _fill(shape, users.get(node.output[0], []), rng, residual)
                if dtype == TensorProto.DOUBLE:
                    a = a.astype(np.float64)
                new_inits.append((node.output[0], dtype, a))
                continue
        keep.append(node)
    for init in g.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype.kind == "f" and a.size > 1 and init.name in users and np.all(a == a.flat[0]):
            r = _fill(a.shape, users[init.name], rng, residual).astype(a.dtype)
            init.CopyFrom(numpy_helper.from_array(r, init.name))
    del g.node[:]
    g.node.extend(keep)
    for name, dtype, a in new_inits:  # filled in place: no copy of a large TensorProto
        t = g.initializer.add()
        t.name, t.data_type = name, dtype
        t.dims.extend(a.shape)
        t.raw_data = a.tobytes()
    # The shape initializers of the removed fills are no longer used by any node.
    used = {n for node in g.node for n in node.input} | {o.name for o in g.output}
    dead = [i for i in g.initializer if i.name not in used]
    for i in dead:
        g.initializer.remove(i)
    dead_names = {i.name for i in dead}
    for inp in [i for i in g.input if i.name in dead_names]:
        g.input.remove(inp)
    return m


def _static_shapes(model: onnx.ModelProto) -> Dict[str, List[int]]:
    """The static shapes onnx's shape inference finds. Large float initializers become typed
    graph inputs first: inference needs their shapes, not their data (serializing them made
    this take seconds on VGG-19)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    big = [i for i in g.initializer if i.data_type in (TensorProto.FLOAT, TensorProto.DOUBLE)
           and int(np.prod(i.dims)) > 4096]
    declared = {i.name for i in g.input}
    for i in big:
        g.initializer.remove(i)
        if i.name not in declared:
            g.input.append(helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)))
    g = shape_inference.infer_shapes(m).graph
    out = {}
    for v in list(g.value_info) + list(g.input) + list(g.output):
        dims = v.type.tensor_type.shape.dim
        if v.type.HasField("tensor_type") and all(d.HasField("dim_value") for d in dims):
            out[v.name] = [d.dim_value for d in dims]
    return out


def _data_dependent(g: onnx.GraphProto) -> set:
    """The values computed from a graph input (not from initializers and constants alone)."""
    inits = {i.name for i in g.initializer}
    live = {i.name for i in g.input if i.name not in inits}
    for node in g.node:
        if any(n in live for n in node.input):
            live.update(node.output)
    return live


def dynamic_head(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` that runs at other batch and image sizes (see the module doc):
    an AveragePool whose window covers its whole (padded) input becomes a GlobalAveragePool,
    and a Reshape of data to a constant shape takes its leading entry from the input's batch
    and its trailing entries from the input's trailing axes where they match at the
    reference size (Shape -> Gather -> Concat). Nothing else changes."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    shapes = _static_shapes(m)
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    live = _data_dependent(g)
    nodes: List[onnx.NodeProto] = []
    extra_inits = []
    for node in g.node:
        at = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        x = node.input[0] if node.input else ""
        if node.op_type == "AveragePool" and x in shapes and node.output[0] in shapes:
            spatial = shapes[x][2:]
            n = len(spatial)
            pads = list(at.get("pads", [0] * 2 * n))
            covers = all(k >= d for k, d in zip(at.get("kernel_shape", []), spatial))
            if (all(d == 1 for d in shapes[node.output[0]][2:]) and covers and
                    at.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET") and
                    (not any(pads) or not at.get("count_include_pad", 0)) and
                    all(pads[i] == 0 for i in range(n))):  # no begin pad: the window starts at 0
                nodes.append(helper.make_node("GlobalAveragePool", [x], list(node.output),
                                              name=node.name))
                continue
        if (node.op_type == "Reshape" and len(node.input) > 1 and node.input[1] in inits and
                x in live and x in shapes):
            target = inits[node.input[1]].reshape(-1).tolist()
            src = shapes[x]
            lead = 1 if target and src and target[0] == src[0] else 0
            trail = 0  # trailing entries equal to spatial axes (axis >= 2) of the input
            while (lead + trail < len(target) - 1 and len(src) - 1 - trail >= 2 and
                   target[-1 - trail] == src[-1 - trail]):
                trail += 1
            if lead or trail:
                base = node.name or node.output[0]
                shape_name, parts = base + "_shape", []
                nodes.append(helper.make_node("Shape", [x], [shape_name]))
                if lead:
                    parts.append(_gather(nodes, extra_inits, shape_name, [0], base + "_lead"))
                middle = target[lead:len(target) - trail]
                if middle:
                    c = numpy_helper.from_array(np.array(middle, np.int64), base + "_middle")
                    extra_inits.append(c)
                    parts.append(c.name)
                if trail:
                    parts.append(_gather(nodes, extra_inits, shape_name,
                                         list(range(len(src) - trail, len(src))),
                                         base + "_trail"))
                nodes.append(helper.make_node("Concat", parts, [base + "_target"], axis=0))
                nodes.append(helper.make_node("Reshape", [x, base + "_target"],
                                              list(node.output), name=node.name))
                continue
        nodes.append(node)
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(extra_inits)
    del g.value_info[:]
    return m


def _gather(nodes: List[onnx.NodeProto], inits: List[onnx.TensorProto], shape: str,
            idx: List[int], name: str) -> str:
    c = numpy_helper.from_array(np.array(idx, np.int64), name + "_idx")
    inits.append(c)
    nodes.append(helper.make_node("Gather", [shape, c.name], [name], axis=0))
    return name


def dynamic_inputs(model: onnx.ModelProto,
                   axes: Sequence[Tuple[int, str]] = ((0, "batch"), (-2, "height"),
                                                      (-1, "width")),
                   min_rank: int = 3) -> onnx.ModelProto:
    """A copy of `model` whose graph inputs of rank >= min_rank (not initializers) have the
    given axes as dim_params, and whose outputs have no fixed sizes (for onnxruntime)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name for i in g.initializer}
    for inp in g.input:
        if inp.name in inits:
            continue
        dims = inp.type.tensor_type.shape.dim
        if len(dims) < min_rank:
            continue
        for axis, name in axes:
            d = dims[axis]
            d.Clear()
            d.dim_param = name
    for out in g.output:
        for d in out.type.tensor_type.shape.dim:
            d.Clear()
    del g.value_info[:]
    return m


def with_outputs(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """A copy of `model` with the intermediate values `names` as extra graph outputs (of
    unknown shape): to compare logits before a softmax, or to see a stage's shape."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
    return m


def softmax_inputs(model: onnx.ModelProto) -> List[str]:
    """The inputs of the Softmax nodes that produce graph outputs (the logits)."""
    outs = {o.name for o in model.graph.output}
    return [n.input[0] for n in model.graph.node if n.op_type == "Softmax" and
            n.output[0] in outs]


def ort_session(model: onnx.ModelProto, threads: int = 1, optimize: bool = True
                ) -> "object":
    """An onnxruntime CPU session of `model` on `threads` intra-op threads that do not spin
    between runs (spinning workers steal the cores of whatever runs next)."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def image(shape: Sequence[int], seed: int = 0) -> np.ndarray:
    """A seeded random float32 input of `shape` (standard normal)."""
    return np.random.default_rng(seed).standard_normal(tuple(shape)).astype(np.float32)


def max_rel_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max(|want|.max(), tiny): the error relative to the output's scale."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    return float(np.max(np.abs(got - want))) / scale if want.size else 0.0


__all__ = ["LIGHT", "dynamic_head", "dynamic_inputs", "image", "light_model_path",
           "max_rel_error", "ort_session", "randomize_weights", "softmax_inputs",
           "with_outputs"]


def run_onnx(program: "object", feeds: Dict[str, object], runtime: "object" = None
             ) -> Dict[str, object]:
    """Runs a program that import_model made on ONNX feeds (ONNX input names; a list of arrays
    for a sequence input; ml_dtypes arrays for the ONNX-only element types) and returns its
    outputs by ONNX output name, in the graph's order: a sequence as a list of arrays, an empty
    optional as None (the program's metadata "onnx.sequences", docs/onnx.md). `runtime`: one
    of the program's runtimes to reuse (default: a new one for this call)."""
    from ._narrow_types import to_onnx_outputs, to_program_inputs
    from ._ops_sequence import onnx_values, sequence_inputs
    args = to_program_inputs(program, sequence_inputs(program, feeds))
    if runtime is None:
        with program.runtime() as rt:  # type: ignore[attr-defined]
            outs = rt(**args)
    else:
        outs = runtime(**args)  # type: ignore[operator]
    return onnx_values(program, to_onnx_outputs(program, outs))
