#!/usr/bin/env bash
# Creates (idempotently) the benchmark virtualenv .venv-bench at the repository root
# and installs benchmarks/requirements.txt into it, only when that file changed.
# Silent when already up to date. Callers use .venv-bench/bin/python.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
venv="$root/.venv-bench"
req="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
py="${PYTHON:-python3}"

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
  "$py" -m venv "$venv"
  printf '*\n' > "$venv/.gitignore"  # keep the venv out of git status
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
printf '%s\n' "$want" > "$stamp"
