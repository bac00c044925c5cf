"""ONNX converters: index and selection ops (ArgMax/ArgMin, TopK, GatherElements,
ScatterElements, GatherND, OneHot, Hardmax, ...)."""
