"""Shared by the Python benchmarks that time a one-op ONNX model against onnxruntime in the
same process (benchmarks/gather, resize, attention): the onnxruntime session on a thread count,
per-call wall and CPU seconds, and the CPU's name for the header."""

import time


def ort_session(m, threads):
    """(session, onnxruntime version) of ModelProto `m` on `threads` intra-op threads, run
    sequentially without spinning (spinning workers would take the other core from ours)."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no stolen cores
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"]), ort.__version__


def seconds(f, calls):
    """(wall seconds, this thread's CPU seconds) per call."""
    t0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t0) / calls, (time.thread_time() - c0) / calls


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"
