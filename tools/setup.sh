#!/usr/bin/env bash
# One-time (and idempotent) machine setup for libshapepoly, run by `make demo` / `make test`.
#  1. Installs the Debian packages the build needs, if any is missing (apt-get update only then).
#  2. Installs clippy (rustup component) when cargo lacks it.
#  3. Creates the Python virtualenv .venv from tools/requirements.txt (pinned, ruff included),
#     and reinstalls it only when that file (or the Python it was made with) changes.
# Prints nothing when everything is already in place.
# Usage: tools/setup.sh [--bench]   (--bench also installs the benchmark peers listed in `bench`)
set -euo pipefail
cd "$(dirname "$0")/.."

with_bench=0
for arg in "$@"; do
  case "$arg" in
    --bench) with_bench=1 ;;
    *) echo "usage: tools/setup.sh [--bench]" >&2; exit 2 ;;
  esac
done

# ---- 1. Debian packages ---------------------------------------------------------------------
# Go and Rust come with the machine (do not install golang-go: it is older).
packages=(
  bazel-bootstrap        # Bazel 4.2.3 (fully offline with the shims in third_party/bazel)
  libhwy-dev             # Highway SIMD
  libflatbuffers-dev flatbuffers-compiler
  zlib1g-dev
  libgtest-dev
  libbenchmark-dev
  clang libclang-rt-14-dev  # --config=clang / asan-clang / fuzz
  clang-format-14        # tools/check_format.sh (the "format" suite of make test)
  mono-mcs mono-devel    # C# bindings
  patchelf               # make install: the versioned SONAME and the CLI's rpath
  cmake pkgconf          # tests/install: find_package(shapepoly) and pkg-config
  graphviz               # shapepoly graph: dot renders the program's picture as SVG
)
# Benchmark peers (only with --bench; never linked into libshapepoly.so).
bench=(
  libopenblas-dev        # matmul_bench's fallback peer (its own: .venv-bench's scipy-openblas32)
  libeigen3-dev          # Eigen: peer of kernel benchmarks
)
if ((with_bench)); then
  packages+=("${bench[@]}")
fi

# The Python that makes the venv: pyenv's CPython (on PATH as python3), not Debian's.
find_python() {
  local candidate
  for candidate in "${SHP_PYTHON:-}" "$(command -v python3 || true)" \
    "${PYENV_ROOT:-$HOME/.pyenv}/shims/python3"; do
    if [[ -n "$candidate" && -x "$candidate" && "$candidate" != /usr/bin/python3 ]] &&
      "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return
    fi
  done
  echo /usr/bin/python3  # fallback: Debian's Python (3.11 on Debian 12) + python3-venv
}
python="$(find_python)"
if [[ "$python" == /usr/bin/python3 ]]; then
  packages+=(python3 python3-venv)
fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---- 2. Linters (tools/lint.py, the lint suite of make test) -----------------------------------
# go vet comes with Go and mcs with mono-mcs above; ruff is pinned in tools/requirements.txt
# (step 3). clippy is a rustup component, missing from a minimal Rust install.
if command -v rustup >/dev/null && ! cargo clippy --version >/dev/null 2>&1; then
  echo "setup: installing clippy (rustup component add clippy)"
  if ! out="$(rustup component add clippy 2>&1)"; then
    echo "$out" >&2
    exit 1
  fi
fi

# ---- 3. Python virtualenv -------------------------------------------------------------------
venv=.venv
stamp="$venv/.requirements.stamp"
want="$(sha256sum tools/requirements.txt | cut -d' ' -f1) $("$python" -c 'import sys; print(sys.version.split()[0])')"
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c '' 2>/dev/null &&
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
echo "setup: creating Python virtualenv $venv from tools/requirements.txt"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input \
  -r tools/requirements.txt
echo "$want" > "$stamp"
