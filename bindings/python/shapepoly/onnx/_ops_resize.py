"""ONNX converters: resampling (Resize, GridSample, ...)."""
