"""Models exported from JAX and Flax (nnx) by jax2onnx (opset 23, symbolic B and T), for
tests/exporter_zoo/jax2onnx (see zoo_common.py). Needs jax, flax and jax2onnx (not in CI: the
models are checked in; jax2onnx 0.17.1 with jax 0.10.2 made them). Run:
python tools/exporter_zoo/jax_models.py [NAME...]
A function the exporter cannot write is reported and skipped."""

import sys

import jax
import jax.numpy as jnp
import zoo_common
from flax import nnx
from jax import lax
from jax2onnx import to_onnx

ROUNDS = ({"B": 1, "T": 3}, {"B": 3, "T": 7}, {"B": 2, "T": 4})
rngs = nnx.Rngs(0)
W = jax.random.normal(jax.random.PRNGKey(0), (16, 16)) * 0.3
CASES = {}
SEQ = [("B", "T", 16)]


def case(name, spec, tol=1e-4, dtypes=None):
    def deco(fn):
        CASES[name] = (fn, spec, tol, dtypes or ["float32"] * len(spec))
        return fn
    return deco


mlp = nnx.Sequential(nnx.Linear(16, 32, rngs=rngs), jax.nn.relu, nnx.Linear(32, 4, rngs=rngs))
conv = nnx.Conv(3, 8, (3, 3), strides=(2, 2), rngs=rngs)
conv_groups = nnx.Conv(8, 8, (3, 3), feature_group_count=4, padding="VALID", rngs=rngs)
mha = nnx.MultiHeadAttention(num_heads=4, in_features=16, qkv_features=16, decode=False,
                             rngs=rngs)
ln, rms = nnx.LayerNorm(16, rngs=rngs), nnx.RMSNorm(16, rngs=rngs)
gn = nnx.GroupNorm(16, num_groups=4, rngs=rngs)
bn = nnx.BatchNorm(16, use_running_average=True, rngs=rngs)
emb = nnx.Embed(50, 16, rngs=rngs)
CASES["nnx_mlp"] = (lambda x: mlp(x), [("B", 16)], 1e-4, ["float32"])
CASES["nnx_conv"] = (lambda x: jax.nn.relu(conv(x)), [("B", 16, 16, 3)], 1e-4, ["float32"])
CASES["nnx_conv_groups"] = (lambda x: conv_groups(x), [("B", 12, 12, 8)], 1e-4, ["float32"])
CASES["nnx_mha"] = (lambda x: mha(x), SEQ, 1e-4, ["float32"])
CASES["nnx_norms"] = (lambda x: ln(x) + rms(x) + gn(x), SEQ, 1e-4, ["float32"])
CASES["nnx_batchnorm"] = (lambda x: bn(x), SEQ, 1e-4, ["float32"])
CASES["nnx_embed"] = (lambda i: emb(i).mean(1), [("B", "T")], 1e-4, ["int32"])


@case("gelu_mlp", [("B", 16)])
def _gelu(x):
    return jax.nn.gelu(x @ W) @ W + 1.0


@case("einsum_ellipsis", [("B", "T", 4, 8)])
def _einsum(q):
    return jnp.einsum("...qhd,...khd->...hqk", q, q)


@case("einsum_three_operands", [("B", 8), (8, 6), (6, 5)])
def _einsum3(a, b, c):
    return jnp.einsum("ij,jk,kl->il", a, b, c)


@case("scan_rnn", [("T", "B", 16)])
def _scan(xs):
    def step(h, x):
        h = jnp.tanh(x @ W + h @ W)
        return h, h
    h, ys = lax.scan(step, jnp.zeros(xs.shape[1:]), xs)
    return ys.sum(0) + h


@case("cond", [("B", 16)])
def _cond(x):
    return lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)


@case("fori_loop", [("B", 16)])
def _fori(x):
    return lax.fori_loop(0, 5, lambda i, v: v * 0.5 + jnp.sin(v), x)


@case("while_loop", [("B", 16)])
def _while(x):
    return lax.while_loop(lambda c: c[1] < 10.0,
                          lambda c: (c[0] * 1.1, c[1] + jnp.abs(c[0]).mean() + 1.0), (x, 0.0))[0]


@case("sort_top_k", SEQ)
def _sort(x):
    return jnp.sort(x, -1)[..., :3] + lax.top_k(x, 3)[0] + \
        jnp.argsort(x, -1)[..., :3].astype(jnp.float32)


@case("argmax_one_hot", SEQ)
def _onehot(x):
    return jax.nn.one_hot(jnp.argmax(x, -1), 16) * x + jnp.argmin(x, 1, keepdims=True)


@case("take_along_axis", SEQ)
def _take(x):
    return jnp.take_along_axis(x, jnp.argsort(x, -1), -1)


@case("fancy_gather", SEQ)
def _fancy(x):
    return x[:, :, jnp.array([3, 1, 4])] + x[:, ::-1, :3]


@case("where_softmax", SEQ)
def _where(x):
    return jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), jnp.clip(x, -0.5, 0.5)) + \
        jax.nn.log_softmax(x) + jax.scipy.special.logsumexp(x, -1, keepdims=True)


@case("batched_dot_general", [("B", "T", 16), ("B", 16, 5)])
def _dot(a, b):
    return lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))


@case("split_concat", SEQ)
def _split(x):
    a, b = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([b, a, a * b], -1)


@case("tril_triu", [("B", 8, 8)])
def _tri(x):
    return jnp.tril(x) - jnp.triu(x, 1)


@case("math", SEQ)
def _math(x):
    return lax.erf(x) + lax.rsqrt(jnp.abs(x) + 1) + jnp.expm1(x * 0.1) + \
        jnp.log1p(jnp.abs(x)) + jnp.arctan2(x, 1.0 + x * x)


@case("dynamic_slices", SEQ)
def _dyn(x):
    return lax.dynamic_slice_in_dim(x, 1, 2, axis=2) + lax.dynamic_update_slice_in_dim(
        x[..., :2], jnp.ones_like(x[..., :1]), 1, axis=2)


@case("repeat_tile", SEQ)
def _repeat(x):
    return jnp.repeat(x, 2, axis=-1) + jnp.tile(x, (1, 1, 2))


@case("symbolic_reshape", SEQ)
def _reshape(x):
    return x.reshape(x.shape[0], -1, 4, 4).transpose(0, 2, 1, 3).reshape(x.shape[0] * 4, -1)


@case("moments", SEQ)
def _stats(x):
    return jnp.var(x, 1, keepdims=True) + jnp.std(x, -1, keepdims=True) + jnp.mean(x)


@case("activations", SEQ)
def _acts(x):
    return jax.nn.silu(x) + jax.nn.softplus(x) + jax.nn.elu(x) + jax.nn.selu(x) + \
        jax.nn.hard_tanh(x) + jax.nn.leaky_relu(x) + jax.nn.celu(x) + jax.nn.mish(x)


@case("conv_transpose", [("B", 8, 8, 4)])
def _convt(x):
    return lax.conv_transpose(x, jnp.ones((3, 3, 4, 2)) * 0.1, (2, 2), "SAME",
                              dimension_numbers=("NHWC", "HWIO", "NHWC"))


@case("dilated_conv1d", [("B", "T", 4)])
def _conv1d(x):
    return lax.conv_general_dilated(x, jnp.ones((3, 4, 6)) * 0.1, (1,), "SAME",
                                    rhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NWC"))


def main(only):
    for name, (fn, spec, tol, dtypes) in CASES.items():
        if only and name not in only:
            continue
        try:
            # A shape tuple is an f32 input; other types need a ShapeDtypeStruct.
            inputs = [tuple(s) if d == "float32" else jax.ShapeDtypeStruct(tuple(s), jnp.dtype(d))
                      for s, d in zip(spec, dtypes)]
            m = to_onnx(fn, inputs, model_name=name, return_mode="proto")
        except Exception as e:  # noqa: BLE001 - the exporter's own refusal: reported
            print("%-24s not exported: %s" % (name, " ".join(str(e).split())[:120]))
            continue
        rounds = [[[r.get(d, d) if isinstance(d, str) else d for d in s] for s in spec]
                  for r in ROUNDS]
        zoo_common.write("jax2onnx", name, m.SerializeToString(), rounds, dtypes, (0, 50), tol)
        print("%-24s written" % name)


if __name__ == "__main__":
    main(sys.argv[1:])
