#!/usr/bin/env bash
# Runs every benchmark driver (benchmarks/*/run_*.sh; `make bench`) and ends with a summary of
# the target rows: each driver's last line is `targets: N met, M MISSED, K not measured`, and
# this script adds them up:
#   <driver>  N met, M MISSED, K not measured        (or: FAILED, exit code E)
#   bench targets: T rows, N met, M MISSED, K not measured; F driver(s) failed
# A MISSED target does not fail the run (it is reported); a driver that fails (a build error,
# a result check such as softmax vs Eigen, a peer that crashed) or prints no `targets:` line
# does, after the other drivers ran.
# Usage: benchmarks/run_all.sh
set -uo pipefail
cd "$(dirname "$0")/.."

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
summary=()
met=0 missed=0 na=0 failed=0
for s in benchmarks/*/run_*.sh; do
  echo "==== $s"
  "$s" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line="$(grep -E '^targets: [0-9]+ met, [0-9]+ MISSED, [0-9]+ not measured$' "$log" | tail -1)"
  if [[ $rc -ne 0 || -z "$line" ]]; then
    failed=$((failed + 1))
    summary+=("$(printf '  %-42s FAILED, exit code %d%s' "$s" "$rc" \
      "$([[ -z "$line" ]] && echo ', no targets line')")")
    continue
  fi
  read -r m x n <<<"$(sed -E 's/^targets: ([0-9]+) met, ([0-9]+) MISSED, ([0-9]+) not measured$/\1 \2 \3/' <<<"$line")"
  met=$((met + m)) missed=$((missed + x)) na=$((na + n))
  summary+=("$(printf '  %-42s %s' "$s" "${line#targets: }")")
done
echo
echo "==== bench summary"
printf '%s\n' "${summary[@]}"
echo "bench targets: $((met + missed + na)) rows, $met met, $missed MISSED, $na not measured;" \
  "$failed driver(s) failed"
[[ $failed -eq 0 ]]
