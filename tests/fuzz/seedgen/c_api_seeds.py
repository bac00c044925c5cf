# One-off helper (not run in CI; its outputs are committed): hand-written call sequences for
# c_api_sequence_fuzzer in tests/fuzz/corpus/c_api. SHP_FUZZ_TRACE=1 lists the calls a seed makes.
# Usage: python3 c_api_seeds.py tests/fuzz/corpus/c_api
# Each list mirrors the fuzzer's reads (see Reader and Session::Step); 0xFF is "not NULL".
import os, sys
out = sys.argv[1]
N = 0xFF  # a Null() read that is not NULL
seeds = {}

scope = [0, 0, 0]                              # shp_scope_create, no constraints
x_input = [12, 0, N, 0, 0, 3, 1, 0, N, 0]      # x: f32 (n, 3)
program_core = (
    scope + x_input +
    [12, 4, 0, 2, N] +                         # exp(x)
    [12, 5, 0, 0, N, 1, 1, N] +                # exp(x) + x
    [12, 19, 0, 1, 3, N, 0] +                  # softmax(., axis 1)
    [16, 0, N, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1] + # program (x) -> (softmax, add)
    [19, 0, 1, 1, 0, 2] +                      # runtime options: 1 thread, cache 2
    [20, 0, 0, 1, 0, N] +                      # runtime
    [21, 0, 0, 1, 10, 20, 30, 40, 50, 60, 1]   # run at n = 2
)
seeds["seed-trace-run-reload"] = program_core + (
    [17, 0, 0] +                               # serialize
    [18, 0, 0, 5, 0] +                         # load
    [20, 0, 1, 1, 0, N] +                      # runtime of the loaded program
    [21, 0, 1, 0, 5, 6, 7, 1] +                # run it at n = 1
    [21, 3, 0, 0, 0] +                         # re-run the first (run_into)
    [21, 1, 0, 0, 1, 2, 3, 1, 0, 0, 0, 1] +    # wrong dtype: fails
    [21, 3, 0, 1, 1] +                         # re-run after the failure
    [23, 0, 0] +                               # destroy the first program
    [21, 3, 0, 0, 1]                           # re-run: the runtime keeps it
)
seeds["seed-load-altered"] = program_core + (
    [17, 0, 0] + [18, 0, 0, 1, 40, 0, 0, 0, 7, 1] +     # flipped byte
    [18, 0, 0, 0, 100, 0, 1] +                          # truncated
    [19, 1, 1, 30, N, 1] +                              # load options, max_bytes 30
    [18, 0, 0, 5, 0, 0, 1] +                            # load with them
    [21, 2, 0, 2, 0, 0, 2, 0, 2, 3, 1, 1, 1, 1, 0, 1]   # dry run on fuzzed shapes
)
seeds["seed-dims"] = (
    [0, 0, 2, 1, 1, N] +                       # scope: "a <= 16", "n >= 2"
    [5, 0, N, 0, 3, 35, 14, 2, N] +            # parse "2*a + 1*n"
    [6, 1, N, 0, 8] +                          # constant 4
    [6, 0, N, 0, 0, 2] +                       # variable n
    [7, 2, 0, 1, 1, N, N] +                    # n * 4
    [8, 3, 0, 1, 2, N, N] +                    # floordiv(4*n, 4)
    [8, 5, 0, 1, 1, N, N] +                    # max
    [9, 0, 0, 5, 1, 0] + [9, 0, 2, 7, 0, 3, 1] +   # print/parse, bounds, compare
    [10, 0, 0, 1, 1, N, 2, N, 2] +             # compare <, evaluate
    [3, 0, N, 0, 1, 0, 1, 1, 2, 0, 1, N, 5, N, 1] +  # scope_check >= with a message
    [4, 0, N, 0, 1, 0] +                       # scope queries
    [11, 1, N, 0, 3, 0, 19, 8, 1, 1, 4, 3, 2, 1] +   # shape "a, 2", solved from (3, 2)
    [7, 0, 0, 1, 0, N, N] + [9, 0, 0, 0, 1, 0] + [23, 5]
)
seeds["seed-dim-input-iota"] = (
    scope +
    [12, 2, N, 0, 0, 2] +                      # dim input n
    [6, 0, N, 0, 0, 2] +                       # dim n
    [12, 18, 0, N, 0, 1, 1, 0, 3, 2] +         # iota i64 (n,), axis 0
    [12, 20, 0, 2, N, 1, 1, 1, 3] +            # reverse axis 0
    [12, 15, 0, 0, 0, N, 1] +                  # sum
    [16, 0, N, 0, 1, 1, 0, 1, 0, 1] +          # program (n) -> sum
    [19, 0, 1, 1, 0, 0] + [20, 0, 0, 1, 0, N] +  # 1 thread, no plan cache
    [21, 0, 0, 3, 0] +                         # run at n = 4, positional
    [21, 2, 0, 1, 1, 1, 0, 2, 1, 1, 0, 3] +    # dry run n = 3, output shape
    [21, 3, 0, 1, 1]                           # re-run
)
seeds["seed-errors"] = (
    scope + scope +                            # two scopes
    [6, 0, N, 0, 0, 0] + [6, 0, N, 1, 0, 1] +  # a in scope 0, b in scope 1
    [7, 0, 1, 0, 1, N, N] +                    # a + b: scope mismatch
    [12, 0, N, 0, 0, 3, 1, 0, N, 9] +          # bad dtype
    [12, 4, 0, 200] +                          # unary without tensors
    [5, 0, N, 0, 3, 19, 19, 19, N] +           # parse "((("
    [22, 0, 1, 2, 3, 4] + [22, 1, 4, 1, 2, 1, 2, 3, 4, 5, 6, 7, 8] + [22, 2, 0] +
    [19, 0, 0, 250, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] +   # threads out of range
    [2, 0, N, 0, 0, 0, 1, 0, 1, 0, 0] +        # declare after use
    [23, 3, 0] + [23, 5] + [1, 0, 0, 0]
)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes(data))
    print(name, len(data))
