"""The training step of benchmarks/autodiff, written for the peers: JAX and numpy by hand.

The model is the MLP of examples/mlp (784-256-256-10, f32; relu, or tanh) with a softmax
cross-entropy loss averaged over the batch; the labels are integer class indices (an input).
Parameters are the list [w0, b0, w1, b1, w2, b2] (w: (in, out), b: (out,)).

    loss = -mean_i log_softmax(mlp(x))[i, labels[i]]

Both jax_crosscheck.py and peers.py import this module, so the cross-check and the benchmark
compare ours against the same definitions.
"""

IN, H, OUT = 784, 256, 10
DIMS = [IN, H, H, OUT]
PARAM_NAMES = ["w0", "b0", "w1", "b1", "w2", "b2"]


def jax_loss_fn(activation):
    """loss(params, x, labels) in JAX (jax.nn.log_softmax, jnp.maximum for relu)."""
    import jax
    import jax.numpy as jnp

    act = (lambda z: jnp.maximum(z, 0.0)) if activation == "relu" else jnp.tanh

    def loss(params, x, labels):
        h = x
        for l in range(3):
            h = h @ params[2 * l] + params[2 * l + 1]
            if l < 2:
                h = act(h)
        logp = jax.nn.log_softmax(h, axis=-1)
        onehot = jax.nn.one_hot(labels, OUT, dtype=h.dtype)
        return -jnp.mean(jnp.sum(onehot * logp, axis=-1))

    return loss


def numpy_step(params, x, labels, activation="relu"):
    """(loss, [grads in PARAM_NAMES order]) by hand-written backprop, in the dtype of x.

    relu'(0) is taken as 0 here (JAX and ours give 0.5 at an exact tie; with real-valued random
    data a pre-activation is never exactly 0)."""
    import numpy as np

    n = x.shape[0]
    ws, bs = params[0::2], params[1::2]
    acts, pre = [x], []
    h = x
    for l in range(3):
        z = h @ ws[l]
        z += bs[l]
        pre.append(z)
        if l < 2:
            h = np.maximum(z, 0) if activation == "relu" else np.tanh(z)
            acts.append(h)
        else:
            h = z
    d = h - h.max(axis=1, keepdims=True)
    e = np.exp(d)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = -(d[rows, labels] - np.log(s[:, 0])).sum() / n
    g = e / s  # softmax; the gradient of the loss wrt the logits is (softmax - onehot) / n
    g[rows, labels] -= 1
    g /= n
    grads = [None] * 6
    for l in (2, 1, 0):
        grads[2 * l] = acts[l].T @ g
        grads[2 * l + 1] = g.sum(axis=0)
        if l > 0:
            g = g @ ws[l].T
            if activation == "relu":
                g *= pre[l - 1] > 0
            else:
                a = acts[l]
                g *= 1 - a * a
    return loss, grads
