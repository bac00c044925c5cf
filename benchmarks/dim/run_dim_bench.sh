#!/usr/bin/env bash
# Runs the dim-engine workload through our engine (dim_bench, Google Benchmark, -c opt),
# JAX's symbolic engine and sympy (peers.py) in the same run, and prints per scenario our
# median time, each peer's, and the ratios peer/ours (higher = we are faster). Target (issues 3
# and 14): every scenario >= 100x faster than JAX's engine and than sympy; the scenarios no peer
# has (explain_inconclusive, scope30_create, scope30_bound) an absolute limit (LIMIT_US); each
# row says met (both peers it has figures for, or the limit) or MISSED, and the last line
# counts them:
#   targets: N met, M MISSED, K not measured
set -euo pipefail
cd "$(dirname "$0")/../.."
benchmarks/setup_env.sh
bazel build -c opt //benchmarks:dim_bench >/dev/null 2>&1 || bazel build -c opt //benchmarks:dim_bench
BIN=$(bazel info -c opt bazel-bin 2>/dev/null)/benchmarks/dim_bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BIN" --workload=benchmarks/dim/workload.txt --benchmark_repetitions=5 --benchmark_min_time=0.2 \
  --benchmark_report_aggregates_only=true --benchmark_format=json > "$tmp/ours.json"
.venv-bench/bin/python benchmarks/dim/peers.py --engine jax > "$tmp/jax.txt"
.venv-bench/bin/python benchmarks/dim/peers.py --engine sympy > "$tmp/sympy.txt"
.venv-bench/bin/python - "$tmp" <<'PY'
import json, sys, os
tmp = sys.argv[1]
ours = {}
for b in json.load(open(os.path.join(tmp, "ours.json")))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        name = b["run_name"].replace("BM_", "")
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
        ours[name] = b["real_time"] * scale
def peer(fname):
    out = {}
    for line in open(os.path.join(tmp, fname)):
        parts = line.split()
        if len(parts) >= 3 and parts[2] != "n/a":
            out[parts[0]] = float(parts[2])
    return out
jax, sym = peer("jax.txt"), peer("sympy.txt")
TARGET = 100.0  # peer time / ours, for each peer
# Scenarios no peer has (issue 14): an absolute limit on ours, in microseconds.
LIMIT_US = {"explain_inconclusive": 200.0, "scope30_create": 50000.0, "scope30_bound": 50000.0}
print(f"{'scenario':<22}{'ours us':>12}{'jax us':>14}{'sympy us':>14}{'jax/ours':>10}"
      f"{'sympy/ours':>12}  target     verdict")
met = missed = na = 0
for name, us in ours.items():
    j, s = jax.get(name), sym.get(name)
    fmt = lambda v: f"{v:>14.1f}" if v is not None else f"{'n/a':>14}"
    rat = lambda v, w: f"{v / us:>{w}.0f}x" if v is not None else f"{'n/a':>{w + 1}}"
    ratios = [v / us for v in (j, s) if v is not None]
    verdict = "n/a" if not ratios else "met" if min(ratios) >= TARGET else "MISSED"
    limit = LIMIT_US.get(name)
    if limit is not None and not ratios:
        verdict = "met" if us <= limit else "MISSED"
    met, missed, na = met + (verdict == "met"), missed + (verdict == "MISSED"), na + (verdict == "n/a")
    target = f"<={limit:.0f}us" if limit is not None and not ratios else f">={TARGET:.0f}x"
    print(f"{name:<22}{us:>12.2f}{fmt(j)}{fmt(s)}{rat(j, 9)}{rat(s, 11)}  {target:<10} {verdict}")
print(f"targets: {met} met, {missed} MISSED, {na} not measured")
PY
