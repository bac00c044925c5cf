"""ONNX converters: recurrent layers (LSTM, GRU, RNN)."""
