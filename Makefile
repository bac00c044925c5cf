# libshapepoly: the two quick-start commands are `make demo` and `make test`.
# Every target runs tools/setup.sh first (idempotent and quiet once the machine is set up).

VENV_PY := .venv/bin/python
BAZEL   ?= bazel

.PHONY: all setup build lib cli demo test bench clean distclean install uninstall

PREFIX ?= /usr/local

all: build

setup:
	@tools/setup.sh

# Stages the CLI at build/bin/shapepoly next to build/lib (rpath $ORIGIN/../lib), so the path
# works whatever configuration bazel-bin last held.
STAGE_CLI = install -D -m 0755 bazel-bin/tools/shapepoly build/bin/shapepoly && \
	patchelf --replace-needed libshapepoly.so libshapepoly.so.0 --set-rpath '$$ORIGIN/../lib' build/bin/shapepoly

# Build everything with the default configuration and stage build/lib/ (libshapepoly.so.0.x.y
# and its links, the installed layout) and build/bin/shapepoly.
build: setup
	$(BAZEL) build //...
	tools/stage_lib.sh --no-build
	$(STAGE_CLI)

# Only the library and the `shapepoly` tool: build/lib/libshapepoly.so, build/bin/shapepoly.
cli: setup
	@$(BAZEL) build //:libshapepoly.so //tools:shapepoly
	@tools/stage_lib.sh --no-build
	@$(STAGE_CLI)

# Only the shared library, staged in build/lib/ as libshapepoly.so.0.x.y with the links
# libshapepoly.so.0 and libshapepoly.so (what the bindings load).
lib: setup
	@tools/stage_lib.sh

# Traces a 3-layer MLP once with a symbolic batch, saves/loads build/mlp.shpoly and runs it
# at batch 1, 7, 64 and 1000 with one runtime (examples/mlp/mlp_demo.c).
demo: setup
	@$(BAZEL) build //:libshapepoly.so //examples/mlp:mlp_demo
	@tools/stage_lib.sh --no-build
	@bazel-bin/examples/mlp/mlp_demo build/mlp.shpoly

# Imports the onnx wheel's light ResNet-50 (random weights) once with symbolic batch, height
# and width, prints each stage's symbolic shape, and runs it at 1x3x224x224, 4x3x320x240 and
# 2x3x160x160 (examples/onnx_demo/onnx_demo.py; .venv from tools/setup.sh has onnx and ORT).
.PHONY: demo-onnx
demo-onnx: setup
	@$(BAZEL) build //:libshapepoly.so //tools:shapepoly
	@tools/stage_lib.sh --no-build
	@$(STAGE_CLI)
	@SHAPEPOLY_LIB=$(CURDIR)/build/lib/libshapepoly.so $(VENV_PY) examples/onnx_demo/onnx_demo.py

# Every test suite; ends with `N passed, M failed, K skipped` and then `N passed, M failed`.
test: setup
	@$(VENV_PY) tools/run_tests.py

# Benchmarks: each prints ratios against a peer measured in the same run, and met or MISSED for
# each row with a target; benchmarks/run_all.sh first prints the CPU, the SIMD target, the
# OpenBLAS core and the thread counts, and ends with the count of misses. BENCH_ARGS=--quick (or
# `make bench-quick`): fewer repetitions and shapes, for development (benchmarks/run_all.sh).
# SIMD_TARGET=AVX2 (AVX3, SSE4, ...): the kernels dispatch to exactly that Highway target; on a
# CPU without it the run prints one line and succeeds without running the drivers.
SIMD_TARGET ?=
BENCH_SIMD = $(if $(SIMD_TARGET),--simd-target $(SIMD_TARGET))
bench: setup
	@tools/setup.sh --bench
	@benchmarks/setup_env.sh
	@benchmarks/run_all.sh $(BENCH_ARGS) $(BENCH_SIMD)

.PHONY: bench-quick
bench-quick: setup
	@tools/setup.sh --bench
	@benchmarks/setup_env.sh
	@benchmarks/run_all.sh --quick $(BENCH_SIMD)

# Only the ONNX ResNet-50 benchmark (also part of `make bench`); BENCH_ARGS=--quick: fewer reps.
.PHONY: bench-onnx
bench-onnx: setup
	@tools/setup.sh --bench
	@benchmarks/onnx_resnet/run_onnx_resnet.sh $(BENCH_ARGS)

# Fuzzes each libFuzzer target for FUZZ_SECONDS (default 300) and merges new coverage into
# tests/fuzz/corpus/<fuzzer>/ (commit it); `make test` replays those corpora, then fuzzes each
# target for FUZZ_TEST_SECONDS (default 20) without touching them.
.PHONY: fuzz
fuzz: setup
	@tools/run_fuzzers.sh --fuzz

# Differential soak of the runtime (tests/differential/program_fuzz): random programs as users
# write them, fused against unfused (SHP_FUSION=off), 1 and 2 threads, saved and loaded, every
# SIMD target, for SECONDS (default 60) on 2 jobs; prints the seed, programs/s and the coverage,
# and a failure's minimized program (saved to tests/differential/corpus/). FUZZ_ARGS adds flags
# (e.g. --seed S).
SECONDS ?= 60
.PHONY: fuzz-programs
fuzz-programs: setup
	@$(BAZEL) build //tests/differential:program_fuzz
	@bazel-bin/tests/differential/program_fuzz --seconds $(SECONDS) --jobs 2 --print-coverage \
		--save-failures $(FUZZ_ARGS)

# The concurrency stress tests (tests/stress) and the C API's thread-sharing test under
# ThreadSanitizer, with a clang-built library in its own output base (minutes on 2 cores).
.PHONY: tsan
tsan: setup
	@tools/run_tsan.sh

# Mutation testing of the dim engine: plants each wrong engine of tools/mutants/ in a copy of
# the tree and runs the dim tests on it (minutes); prints which test killed each mutant.
.PHONY: mutants
mutants: setup
	@tools/mutants.sh

# A wheel of the Python binding (bindings/python) in build/python/, with build/lib/libshapepoly.so
# bundled inside the package. pip fetches setuptools and wheel for the isolated build; offline,
# install them into .venv and add PIP_NO_BUILD_ISOLATION=0 to the environment.
.PHONY: python-wheel
python-wheel: lib
	@rm -rf bindings/python/build build/python
	@$(VENV_PY) -m pip wheel -q --disable-pip-version-check --no-deps -w build/python bindings/python
	@ls build/python/*.whl

# Installs the header, libshapepoly.so.MAJOR.MINOR.PATCH (SONAME libshapepoly.so.MAJOR) and its
# links, pkg-config and CMake files and bin/shapepoly into $(DESTDIR)$(PREFIX) (default
# /usr/local); `make uninstall` removes them. See tools/install/install.sh.
install: setup
	@tools/install/install.sh install $(PREFIX)

uninstall:
	@tools/install/install.sh uninstall $(PREFIX)

clean:
	$(BAZEL) clean
	rm -rf build

distclean: clean
	rm -rf .venv
