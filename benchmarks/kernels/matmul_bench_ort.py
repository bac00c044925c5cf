"""ONNX Runtime side of the matmul benchmark: one MatMul node (MLAS's sgemm on the CPU provider).

Usage: matmul_bench_ort.py M N K THREADS
Builds a model with one MatMul of two f32 inputs A[M, K] and B[K, N] (both fed per call, as the
C++ side passes an unpacked B), opens an InferenceSession with THREADS intra-op threads, then
prints "ready". For each line "CALLS" read from stdin it runs the model CALLS times and prints
the seconds per call. If onnx or onnxruntime cannot be imported it prints "unavailable <reason>".
"""
import sys
import time


def main():
    m, n, k, threads = (int(x) for x in sys.argv[1:5])
    try:
        import numpy as np
        import onnx
        from onnx import TensorProto, helper
        import onnxruntime as ort
    except ImportError as e:  # the row says n/a with this reason
        print(f"unavailable {e}", flush=True)
        return
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["C"])], "matmul",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [k, n])],
        [helper.make_tensor_value_info("C", TensorProto.FLOAT, [m, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Idle ORT workers would spin between its runs and steal the cores from ours, which runs
    # in alternation with it on the same machine.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {"A": rng.uniform(-1, 1, (m, k)).astype(np.float32),
             "B": rng.uniform(-1, 1, (k, n)).astype(np.float32)}
    sess.run(None, feeds)
    print(f"ready onnxruntime {ort.__version__}", flush=True)
    for line in sys.stdin:
        calls = max(1, int(line))
        t0 = time.perf_counter()
        for _ in range(calls):
            sess.run(None, feeds)
        print(f"{(time.perf_counter() - t0) / calls:.9g}", flush=True)


if __name__ == "__main__":
    main()
