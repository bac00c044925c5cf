#!/usr/bin/env bash
# docs/ops.md must be exactly what tools/gen_ops_table.cc prints from the op definitions.
#   usage: ops_table_test.sh GEN_OPS_TABLE DOCS_OPS_MD
set -u
want=$("$1") || { echo "FAIL: $1 exited with $?"; exit 1; }
if diff -u "$2" <(printf '%s\n' "$want"); then
  echo "ops_table_test: docs/ops.md is up to date"
else
  echo "FAIL: docs/ops.md differs from the op definitions (diff above: - file, + generated)."
  echo "Regenerate it: bazel run //tools:gen_ops_table > docs/ops.md"
  exit 1
fi
