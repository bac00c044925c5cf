"""Models exported by PyTorch's two ONNX exporters (TorchScript, `dynamo=False`, opset 17, and
torch.export, `dynamo=True`, opset 18) with symbolic batch and sequence/spatial axes, for
tests/exporter_zoo/torch (see zoo_common.py). Needs torch and onnxscript (not in CI: the models
are checked in). Run: python tools/exporter_zoo/torch_models.py [NAME...]
A model an exporter cannot write is reported and skipped (e.g. the TorchScript exporter has no
aten::_native_multi_head_attention)."""

import sys
import warnings

import torch
import zoo_common

nn = torch.nn
F = torch.nn.functional
ROUNDS = ((1, 3), (3, 7), (2, 4))  # (batch, length) per round


def fn_module(fn):
    class _M(nn.Module):
        def forward(self, x):
            return fn(x)
    return _M()


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        return self.m(x, x, x, need_weights=False)[0]


class FirstOutput(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]


class TwoInputs(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, y):
        return self.m(x, y)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                               nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2, groups=2), nn.GELU(),
                               nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))

    def forward(self, x):
        return self.c(x)


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.r = nn.LayerNorm(16), nn.GroupNorm(4, 16), nn.RMSNorm(16)

    def forward(self, x):
        return self.r(self.a(x)) + self.b(x.transpose(1, 2)).transpose(1, 2)


class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.e, self.lin = nn.Embedding(50, 8), nn.Linear(8, 3)

    def forward(self, i):
        return self.lin(self.e(i)).mean(1)


def causal(x):
    t = x.shape[1]
    m = torch.tril(torch.ones(t, t))
    return (x @ x.transpose(1, 2)).masked_fill(m == 0, float("-inf")).softmax(-1)


def seq(b, t):
    return (torch.randn(b, t, 16),)


SEQ = {0: "b", 1: "t"}
IMG = {0: "b", 2: "h", 3: "w"}
# name -> (module, inputs of (batch, length), dynamic axes, tolerance)
CASES = {
    "mlp": (nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)),
            lambda b, t: (torch.randn(b, 16),), {0: "b"}, 1e-4),
    "mha": (Attn(), seq, SEQ, 1e-4),
    "encoder_layer": (nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, dropout=0.0), seq,
                      SEQ, 1e-4),
    "decoder_layer": (TwoInputs(nn.TransformerDecoderLayer(16, 4, 32, batch_first=True,
                                                           dropout=0.0)),
                      lambda b, t: (torch.randn(b, t, 16), torch.randn(b, t + 2, 16)), SEQ, 1e-4),
    "sdpa_causal": (fn_module(lambda q: F.scaled_dot_product_attention(q, q, q, is_causal=True)),
                    lambda b, t: (torch.randn(b, 4, t, 8),), {0: "b", 2: "t"}, 1e-4),
    "lstm_2layer": (FirstOutput(nn.LSTM(8, 12, num_layers=2, batch_first=True)),
                    lambda b, t: (torch.randn(b, t, 8),), SEQ, 1e-4),
    "gru_bidirectional": (FirstOutput(nn.GRU(8, 12, bidirectional=True, batch_first=True)),
                          lambda b, t: (torch.randn(b, t, 8),), SEQ, 1e-4),
    "embedding": (Emb(), lambda b, t: (torch.randint(0, 50, (b, t)),), SEQ, 1e-4),
    "cnn": (CNN(), lambda b, t: (torch.randn(b, 3, 2 * t + 8, 2 * t + 9),), IMG, 1e-4),
    "norms": (Norms(), seq, SEQ, 1e-4),
    "conv_transpose2d": (nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
                         lambda b, t: (torch.randn(b, 4, t + 3, t + 4),), IMG, 1e-4),
    "depthwise_mish": (nn.Sequential(nn.Conv2d(4, 4, 3, groups=4, padding=1), nn.Hardswish(),
                                     nn.Conv2d(4, 8, 1), nn.Mish()),
                       lambda b, t: (torch.randn(b, 4, t + 3, t + 4),), IMG, 1e-4),
    "pixel_shuffle": (nn.Sequential(nn.Conv2d(4, 16, 1), nn.PixelShuffle(2)),
                      lambda b, t: (torch.randn(b, 4, t + 3, t + 4),), IMG, 1e-4),
    "instance_norm_prelu": (nn.Sequential(nn.InstanceNorm2d(4, affine=True), nn.PReLU(4)),
                            lambda b, t: (torch.randn(b, 4, t + 3, t + 4),), IMG, 1e-4),
    "pools_ceil": (nn.Sequential(nn.AvgPool2d(3, 2, ceil_mode=True), nn.MaxPool2d(2, 1)),
                   lambda b, t: (torch.randn(b, 4, t + 5, t + 6),), IMG, 1e-4),
    "bilinear_upsample": (fn_module(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")),
                          lambda b, t: (torch.randn(b, 3, t, t + 1),), IMG, 1e-4),
    "nearest_upsample": (fn_module(lambda x: F.interpolate(x, scale_factor=2, mode="nearest")),
                         lambda b, t: (torch.randn(b, 3, t, t + 1),), IMG, 1e-4),
    "grid_sample": (fn_module(lambda x: F.grid_sample(x, torch.tanh(x[:, :2].permute(0, 2, 3, 1)),
                                                      align_corners=False)),
                    lambda b, t: (torch.randn(b, 4, t + 3, t + 4),), IMG, 1e-3),
    "conv1d_transpose1d": (nn.Sequential(nn.Conv1d(16, 16, 3, padding=1), nn.ReLU(),
                                         nn.ConvTranspose1d(16, 4, 4, stride=2)),
                           lambda b, t: (torch.randn(b, 16, t),), {0: "b", 2: "t"}, 1e-4),
    "conv3d": (nn.Conv3d(2, 3, 3, padding=1),
               lambda b, t: (torch.randn(b, 2, t + 2, 5, t + 1),), {0: "b", 2: "d", 4: "w"}, 1e-4),
    "pool1d": (nn.Sequential(nn.MaxPool1d(3, 2, padding=1), nn.AvgPool1d(2)),
               lambda b, t: (torch.randn(b, 4, 2 * t + 4),), {0: "b", 2: "t"}, 1e-4),
    "batchnorm1d": (nn.Sequential(nn.Flatten(0, 1), nn.BatchNorm1d(16), nn.Linear(16, 4)), seq,
                    SEQ, 1e-4),
    "misc_elementwise": (fn_module(lambda x: torch.cat(
        [torch.cumsum(x, 1) + torch.flip(x, [1]) + x.softmax(-1) + F.silu(x),
         x.argmax(-1, keepdim=True).float()], -1)), seq, SEQ, 1e-4),
    "activations": (fn_module(lambda x: F.gelu(x, approximate="tanh") + F.softplus(x) + F.elu(x)
                              + F.selu(x) + F.celu(x) + F.hardtanh(x) + F.leaky_relu(x)),
                    seq, SEQ, 1e-4),
    "masked_math": (fn_module(lambda x: x.masked_fill(x < 0, 0.5).clamp(0, 1).pow(2)
                              + torch.atan2(x, x + 2)), seq, SEQ, 1e-4),
    "normalize_cosine": (fn_module(lambda x: F.normalize(x, dim=-1) + F.cosine_similarity(
        x, x.flip(1), dim=-1).unsqueeze(-1)), seq, SEQ, 1e-4),
    "cdist": (fn_module(lambda x: torch.cdist(x, x)), seq, SEQ, 1e-3),  # sqrt of a cancellation
    "topk_sort": (fn_module(lambda x: torch.topk(x, 3, dim=-1).values
                            + torch.sort(x, -1).values[..., :3]), seq, SEQ, 1e-4),
    "gather_argsort": (fn_module(lambda x: torch.gather(x, 2, x.argsort(-1)[..., :4])), seq, SEQ,
                       1e-4),
    "scatter_onehot": (fn_module(lambda x: torch.zeros_like(x).scatter(
        2, x.argmax(-1, keepdim=True), 1.0)), seq, SEQ, 1e-4),
    "index_select": (fn_module(lambda x: x.index_select(2, torch.tensor([0, 3, 5]))
                               + x[:, :, [1, 1, 2]]), seq, SEQ, 1e-4),
    "repeat": (fn_module(lambda x: x.repeat(1, 2, 1) + x.repeat_interleave(2, dim=1)), seq, SEQ,
               1e-4),
    "roll_chunk": (fn_module(lambda x: torch.roll(x, 2, 1) * torch.roll(x, -1, 2)
                             + sum(c * (i + 1) for i, c in enumerate(x.chunk(4, -1))).repeat(
                                 1, 1, 4)), seq, SEQ, 1e-4),
    "unbind_stack": (fn_module(lambda x: torch.stack(list(x[:, :3].unbind(1)), -1).sum(-1)),
                     seq, SEQ, 1e-4),
    "causal_mask_softmax": (fn_module(causal), seq, SEQ, 1e-4),
    "einsum_bmm": (fn_module(lambda x: torch.einsum("btc,bsc->bts", x, x).softmax(-1) @ x), seq,
                   SEQ, 1e-4),
    "arange_add": (fn_module(lambda x: x + torch.arange(x.shape[1]).unsqueeze(-1).float()), seq,
                   SEQ, 1e-4),
    "triu": (fn_module(lambda x: torch.triu(x @ x.transpose(1, 2), 1)), seq, SEQ, 1e-4),
    "cross_entropy": (fn_module(lambda x: F.cross_entropy(
        x.reshape(-1, 16), x.reshape(-1, 16).argmax(-1), reduction="none")), seq, SEQ, 1e-4),
    "nan_to_num": (fn_module(lambda x: torch.where(torch.isnan(x.log()), torch.zeros_like(x),
                                                   x.log()).nan_to_num()), seq, SEQ, 1e-4),
    "nonzero": (fn_module(lambda x: torch.nonzero(x > 1.0).float().sum(0)), seq, SEQ, 1e-4),
    "boolean_index": (fn_module(lambda x: x[x > 0].sum().reshape(1)), seq, SEQ, 1e-4),
    "min_max": (fn_module(lambda x: torch.amax(x, 1) - torch.amin(x, (1, 2)).unsqueeze(-1)
                          + x.min(1).values * x.max(-1).values.sum(-1, keepdim=True)), seq, SEQ,
                1e-4),
    "view_transpose": (fn_module(lambda x: x.flatten(1).view(x.shape[0], -1, 8).transpose(1, 2)
                                 .contiguous().view(x.shape[0], 8, -1)), seq, SEQ, 1e-4),
    "expand_mul": (fn_module(lambda x: x.unsqueeze(2).expand(-1, -1, 3, -1)
                             * torch.ones(1, 1, 3, 1)), seq, SEQ, 1e-4),
    "reflect_pad": (fn_module(lambda x: F.pad(x, (1, 2), mode="reflect") * 2),
                    lambda b, t: (torch.randn(b, 4, t + 3),), {0: "b", 2: "t"}, 1e-4),
}


def export(name, module, make, axes, tol, dynamo):
    import io
    module.eval()
    x = make(2, 5)
    f = io.BytesIO()
    with torch.no_grad():
        if dynamo:
            ds = tuple({k: torch.export.Dim.AUTO for k in axes} for _ in x)
            prog = torch.onnx.export(module, x, dynamo=True, dynamic_shapes=ds, opset_version=18)
            data = prog.model_proto.SerializeToString()
        else:
            names = ["in%d" % i for i in range(len(x))]
            torch.onnx.export(module, x, f, dynamo=False, input_names=names,
                              dynamic_axes={n: axes for n in names}, opset_version=17)
            data = f.getvalue()
    rounds = [[list(a.shape) for a in make(b, t)] for b, t in ROUNDS]
    dtypes = [str(a.dtype).replace("torch.", "") for a in x]
    folder = "torch_dynamo" if dynamo else "torch_script"
    zoo_common.write(folder, name, data, rounds, dtypes, (0, 50), tol)


def main(only):
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    for name, (module, make, axes, tol) in CASES.items():
        if only and name not in only:
            continue
        for dynamo in (False, True):
            try:
                export(name, module, make, axes, tol, dynamo)
                print("%-24s %s written" % (name, "dynamo" if dynamo else "torchscript"))
            except Exception as e:  # noqa: BLE001 - the exporter's own refusal: reported
                print("%-24s %s not exported: %s" % (name, "dynamo" if dynamo else "torchscript",
                                                     str(e).splitlines()[0][:120]))


if __name__ == "__main__":
    main(sys.argv[1:])
