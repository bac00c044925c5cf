"""ONNX converter: Attention (opset 23) onto the library's fused `attention` op.

The op computes softmax(scale * q.k^T + bias) . v per head, with grouped-query heads (query head
h reads kv head h // (hq / hkv), as ONNX's np.repeat), a bool or additive mask, a causal
frontier aligned top-left (j <= i) or bottom-right (j <= i + l - s), and ONNX's zero row for a
fully masked query. Around it: 3-D inputs with q_num_heads / kv_num_heads are reshaped to
[batch, heads, sequence, head_size] and back; past_key / past_value are concatenated along the
sequence (present_key / present_value are those concatenations).

ONNX's causal frontier is j <= i + past_sequence_length: top-left without a past cache, and
bottom-right with one when the new keys are as many as the queries. Everything the op does not
express imports through ONNX's function body, as before: softcap, a qk_matmul_output output, a
softmax_precision other than the inputs' type, nonpad_kv_seqlen, an explicit scale of 0, a mask
whose key axis is not provably the keys' length (ONNX pads it), a causal cache whose new key
count is not provably the query count, head counts whose ratio is not a known integer, f16/bf16
inputs, and opset 24/25's nonpad_kv_seqlen and sliding windows.

Registered in FUNCTION_OPS (tried by Importer.call_function before the function body) rather than
as a converter: a node the op does not express then imports exactly as before (the converter path
would refuse opset-25 attributes and widen f16/bf16 inputs before the body sees them).
"""

from typing import Any, Dict, List, Optional

import numpy as np
from onnx import TensorProto

from .._core import BOOL, F32, F64, Dim, Tensor, Truth, concatenate
from ._import import FUNCTION_OPS, ImportError_, Importer, Val, _attr, _int

_CAUSAL_NONE, _CAUSAL_UPPER_LEFT, _CAUSAL_LOWER_RIGHT = 0, 1, 2


def _equal(ctx: Importer, a: Any, b: Any) -> bool:
    a, b = _int(a), _int(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return (a if isinstance(a, Dim) else ctx.scope.dim(a)).compare("==", b) is Truth.TRUE


def _plan(ctx: Importer, node: Any, ins: List[Optional[Val]], at: Dict[str, Any]
          ) -> Optional[Dict[str, Any]]:
    """What the fused op needs, or None when only the function body expresses the node."""
    def given(i: int) -> bool:
        return len(ins) > i and ins[i] is not None

    if float(at.get("softcap", 0.0)) != 0.0 or int(at.get("qk_matmul_output_mode", 0)) != 0:
        return None
    if len(node.output) > 3 and node.output[3]:
        return None
    if given(6) or "scale" in at and float(at["scale"]) == 0.0:
        return None
    if int(at.get("left_window_size", -1)) != -1 or int(at.get("right_window_size", -1)) != -1:
        return None
    if any(ins[i] is None or ins[i].tensor is None and ins[i].host is None for i in range(3)):
        return None
    q = ctx.t(ins[0])
    if q.dtype not in (F32, F64) or ctx.t(ins[1]).dtype != q.dtype or \
            ctx.t(ins[2]).dtype != q.dtype:
        return None
    if "softmax_precision" in at:
        want = {TensorProto.FLOAT: "f32", TensorProto.DOUBLE: "f64", TensorProto.FLOAT16: "f16",
                TensorProto.BFLOAT16: "bf16"}.get(int(at["softmax_precision"]))
        if want != str(q.dtype):
            return None
    return {"q": q}


def _attention(ctx: Importer, node: Any, ins: List[Optional[Val]], at: Dict[str, Any]
               ) -> Optional[List[Val]]:
    """The node's outputs through the fused op, or None for the function body."""
    plan = _plan(ctx, node, ins, at)
    if plan is None:
        return None
    q = plan["q"]
    k, v = ctx.t(ins[1], q.dtype), ctx.t(ins[2], q.dtype)
    given = [i < len(ins) and ins[i] is not None for i in range(7)]
    three = q.ndim == 3
    if three:
        if "q_num_heads" not in at or "kv_num_heads" not in at:
            raise ImportError_("Attention: 3-D inputs need q_num_heads and kv_num_heads")
        hq, hkv = int(at["q_num_heads"]), int(at["kv_num_heads"])
        if hq <= 0 or hkv <= 0:
            raise ImportError_("Attention: q_num_heads (%d) and kv_num_heads (%d) must be "
                               "positive" % (hq, hkv))

        def heads(x: Tensor, h: int) -> Tensor:
            b, s, hidden = ctx.shape(x)
            return x.reshape((b, s, h, -1)).transpose((0, 2, 1, 3))
        q, k, v = heads(q, hq), heads(k, hkv), heads(v, hkv)
    elif q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ImportError_("Attention: Q, K and V must be 3-D or 4-D, got ranks %d, %d and %d"
                           % (q.ndim, k.ndim, v.ndim))
    hq, hkv = _int(ctx.shape(q)[1]), _int(ctx.shape(k)[1])
    if not _equal(ctx, hq, hkv) and not (isinstance(hq, int) and isinstance(hkv, int) and
                                          hkv > 0 and hq % hkv == 0):
        return None
    s_len, l_new = ctx.shape(q)[2], ctx.shape(k)[2]
    presents: List[Optional[Tensor]] = [None, None]
    if given[4] != given[5]:
        raise ImportError_("Attention: past_key and past_value must be given together")
    if given[4]:
        k = concatenate([ctx.t(ins[4], q.dtype), k], 2)
        v = concatenate([ctx.t(ins[5], q.dtype), v], 2)
    presents = [k, v]
    causal = _CAUSAL_NONE
    if int(at.get("is_causal", 0)):
        if not given[4]:
            causal = _CAUSAL_UPPER_LEFT  # j <= i: no cached keys
        elif _equal(ctx, l_new, s_len):
            causal = _CAUSAL_LOWER_RIGHT  # j <= i + past = i + (l - s)
        else:
            return None
    l_all = ctx.shape(k)[2]
    if given[3]:
        mask = ctx.t(ins[3])
        if mask.dtype != BOOL:
            mask = ctx.t(ins[3], q.dtype)
        ml = ctx.shape(mask)[-1] if mask.ndim else 1
        if mask.ndim > 4 or not (_equal(ctx, ml, l_all) or _int(ml) == 1):
            return None  # ONNX pads a shorter mask
    else:
        mask = ctx.scope.constant(np.array(True))
    scale = float(at["scale"]) if "scale" in at else 0.0
    y = q.attention(k, v, mask, scale, causal)
    if three:
        b, h, s, dv = ctx.shape(y)
        y = y.transpose((0, 2, 1, 3)).reshape((b, s, -1))
    return [Val(y), Val(presents[0]), Val(presents[1])]


def _direct(ctx: Importer, node: Any, ins: List[Optional[Val]]) -> Optional[List[Val]]:
    return _attention(ctx, node, ins, {a.name: _attr(a) for a in node.attribute})


FUNCTION_OPS["Attention"] = _direct
