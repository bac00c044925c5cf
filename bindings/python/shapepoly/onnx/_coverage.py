"""Which ai.onnx ops are refused on purpose, by family, and the advice an unsupported op's error
gives (docs/onnx.md lists the same families)."""

from typing import Dict, Optional

from onnx import defs

# family -> (ops, why). Ops not listed here and without a converter are gaps, not decisions.
REFUSED_FAMILIES = {
    "sequences and optionals": (
        ["ConcatFromSequence", "Optional", "OptionalGetElement", "OptionalHasElement",
         "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
         "SequenceLength", "SequenceMap", "SplitToSequence"],
        "program values are tensors; a sequence or optional has no program type"),
    "strings": (
        ["RegexFullMatch", "StringConcat", "StringNormalizer", "StringSplit",
         "TfIdfVectorizer"],
        "there is no string element type"),
    "random numbers": (
        ["Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
         "RandomUniformLike"],
        "programs are deterministic functions of their inputs; pass random draws as inputs"),
    "image decoding": (["ImageDecoder"], "decode images before the program (it takes pixels)"),
    "bit-level integer ops": (
        ["BitCast", "ConvInteger"],
        "the library has no bit reinterpretation op yet (ConvInteger: not written; "
        "QLinearConv with unit scales computes the same)"),
    "data-dependent sorting": (
        ["NonMaxSuppression", "Unique"],
        "their result sizes come from a sort of the data; no sort op in the library yet"),
}
REFUSED: Dict[str, str] = {op: "%s: %s" % (family, why)
                           for family, (ops, why) in REFUSED_FAMILIES.items() for op in ops}


def advice(op: str, domain: str, opset: int) -> Optional[str]:
    """What to do about an op without a converter: its refusal family, or the lower opset at
    which exporters write it as smaller ops (an op that first appeared after opset 1)."""
    if domain in ("", "ai.onnx"):
        if op in REFUSED:
            return REFUSED[op]
        versions = sorted(x.since_version for x in defs.get_all_schemas_with_history()
                          if x.name == op and x.domain == "")
        if not versions:
            return "not an op of the ai.onnx domain"
        if opset < versions[0]:
            return ("%s first appears at opset %d but the model declares opset %d" %
                    (op, versions[0], opset))
        s = defs.get_schema(op, opset, "")
        if versions[0] > 1 and (s.has_function or s.has_context_dependent_function):
            return ("new at opset %d: exporting at opset %d makes exporters write it as "
                    "smaller ops" % (versions[0], versions[0] - 1))
        return None
    if domain in ("ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"):
        return "domain %s: only the ops with a converter are imported" % domain
    return ("custom domain '%s': give the op's body as a model-local function "
            "(model.functions), which the importer inlines" % domain)
