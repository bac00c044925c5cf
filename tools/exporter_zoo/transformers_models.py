"""Tiny Hugging Face transformers (random weights from small configs: no download) exported by
torch.export's ONNX exporter (`dynamo=True`, opset 18) with a symbolic batch and sequence, for
tests/exporter_zoo/transformers (see zoo_common.py). Needs torch, onnxscript and transformers
(5.25 made them; not in CI: the models are checked in). Run:
python tools/exporter_zoo/transformers_models.py [NAME...]"""

import sys
import warnings

import torch
import transformers as T
import zoo_common

SMALL = dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=64, max_position_embeddings=64)
# name -> (model class, config class, config fields over SMALL)
CASES = {
    "bert": (T.BertModel, T.BertConfig, {}),
    "distilbert": (T.DistilBertModel, T.DistilBertConfig,
                   dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64)),
    "gpt2": (T.GPT2Model, T.GPT2Config, dict(n_embd=32, n_layer=2, n_head=4, n_positions=64)),
    "llama_gqa": (T.LlamaModel, T.LlamaConfig, dict(num_key_value_heads=2)),
    "qwen2_gqa": (T.Qwen2Model, T.Qwen2Config, dict(num_key_value_heads=2)),
    "t5_encoder": (T.T5EncoderModel, T.T5Config,
                   dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)),
    "vit": (T.ViTModel, T.ViTConfig, dict(image_size=32, patch_size=8)),
}
TEXT_ROUNDS = ((1, 1), (3, 7), (2, 16))  # (batch, tokens)


class LastHidden(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x).last_hidden_state


def export(name, model_cls, config_cls, fields):
    config = config_cls(**dict(SMALL, **fields))
    config.use_cache = False
    config._attn_implementation = "eager"
    model = LastHidden(model_cls(config).eval())
    auto = torch.export.Dim.AUTO
    if name == "vit":
        x, ds = (torch.randn(2, 3, 32, 32),), ({0: auto},)
        rounds, dtypes = [[[b, 3, 32, 32]] for b, _ in TEXT_ROUNDS], ["float32"]
    else:
        x, ds = (torch.randint(0, 64, (2, 9)),), ({0: auto, 1: auto},)
        rounds, dtypes = [[[b, t]] for b, t in TEXT_ROUNDS], ["int64"]
    with torch.no_grad():
        prog = torch.onnx.export(model, x, dynamo=True, dynamic_shapes=ds, opset_version=18)
    zoo_common.write("transformers", name, prog.model_proto.SerializeToString(), rounds, dtypes,
                     (0, 64), 1e-4)


def main(only):
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    for name, (model_cls, config_cls, fields) in CASES.items():
        if only and name not in only:
            continue
        try:
            export(name, model_cls, config_cls, fields)
            print("%-12s written" % name)
        except Exception as e:  # noqa: BLE001 - the exporter's own refusal: reported
            print("%-12s not exported: %s" % (name, " ".join(str(e).split())[:120]))


if __name__ == "__main__":
    main(sys.argv[1:])
