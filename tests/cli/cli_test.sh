#!/usr/bin/env bash
# Tests of the `shapepoly` command-line tool (tools/shapepoly_cli.cc): inspect, check, run, and
# jvp/vjp/grad with parameters and defaults (schema version 2), their exit codes (0 ok, 1
# rejected or invalid, 2 usage) and messages, on the golden programs and on hostile files
# (corrupt programs, .npy headers that lie). A crash (exit >= 128) is always a failure.
# Guards and variants (schema version 3): inspect's dispatch summary and coverage, the variant
# check and run pick, SHP_GUARD_FAILED; on the golden file and on programs that GUARD_PROGRAMS
# (tests/cli/guard_programs.cc) writes. Help and --version on stdout, shapes as dtype[dims],
# --output-dir created (mkdir -p), file errors with the OS reason.
#   usage: cli_test.sh SHAPEPOLY GOLDEN_FILE [GUARD_PROGRAMS]
#          (GOLDEN_FILE: any file of tests/golden, to find the folder)
set -u

CLI=$1
G=$(dirname "$2")
GUARD_PROGRAMS=${3:-}
T=${TEST_TMPDIR:-$(mktemp -d)}
passed=0
failed=0
cases=()  # one JUnit <testcase> per check, for $XML_OUTPUT_FILE (so runners count each check)

xml_escape() {
  sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' -e "s/'/\&apos;/g" <<<"$1"
}

pass() {
  passed=$((passed + 1))
  cases+=("<testcase name=\"$(xml_escape "$1")\" classname=\"cli_test\"/>")
}

fail() {  # fail NAME WHY
  echo "FAIL: $1: $2"
  failed=$((failed + 1))
  local failure="<failure message=\"$(xml_escape "$2")\"/>"
  cases+=("<testcase name=\"$(xml_escape "$1")\" classname=\"cli_test\">$failure</testcase>")
}

# expect NAME RC PATTERN CMD...: runs CMD; its exit code must be RC and its output (stdout and
# stderr together) must contain PATTERN (a fixed string; "" matches anything).
expect() {
  local name=$1 rc=$2 pattern=$3
  shift 3
  local out got
  out=$("$@" 2>&1)
  got=$?
  if [ "$got" != "$rc" ]; then
    fail "$name" "exit code $got, expected $rc; output:"
    echo "$out" | sed 's/^/    /'
  elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" <<<"$out"; then
    fail "$name" "output lacks '$pattern'; output:"
    echo "$out" | sed 's/^/    /'
  else
    pass "$name"
  fi
}

# expect_stdout NAME EXPECTED CMD...: exit code 0 and exactly EXPECTED on stdout.
expect_stdout() {
  local name=$1 want=$2
  shift 2
  local out
  out=$("$@")
  local rc=$?
  if [ "$rc" != 0 ] || [ "$out" != "$want" ]; then
    fail "$name" "exit code $rc; stdout:"
    echo "$out" | sed 's/^/    /'
    echo "  expected:"
    echo "$want" | sed 's/^/    /'
  else
    pass "$name"
  fi
}

# same_file NAME GOT WANT: the two files are byte-identical.
same_file() {
  if cmp -s "$2" "$3"; then
    pass "$1"
  else
    fail "$1" "$2 differs from $3"
  fi
}

# Little-endian int32 values as printf escapes.
le32() {
  local v
  for v in "$@"; do
    printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24 & 255))
  done
}

# npy FILE HEADER [DATA (printf escapes)] [MAGIC (printf escapes)]: an .npy file (format 1.0
# unless MAGIC gives another prefix) whose header is the dict text HEADER.
npy() {
  local file=$1 header=$2 data=${3:-} magic=${4:-'\x93NUMPY\x01\x00'}
  local len=${#header}
  printf "$magic" >"$file"
  printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))" >>"$file"
  printf '%s' "$header" >>"$file"
  printf "$data" >>"$file"
}

header() {  # header DESCR SHAPE [FORTRAN]
  echo "{'descr': '$1', 'fortran_order': ${3:-False}, 'shape': $2, }"
}

I32=$G/dtype_i32_v1.shpoly
CONS=$G/constraints_v1.shpoly

# ---- usage --------------------------------------------------------------------------------
expect "no arguments" 2 "usage: shapepoly inspect [--cost] FILE.shpoly" "$CLI"
expect "unknown command" 2 "usage:" "$CLI" frobnicate "$I32"
expect "inspect with an extra argument" 2 "usage:" "$CLI" inspect "$I32" extra
expect "check with an unknown flag" 2 "usage:" "$CLI" check "$I32" --shapes x=1,4
expect "run without --output-dir" 2 "usage:" "$CLI" run "$I32" --input "x=$G/dtype_i32_v1.0.in.x.npy"
expect "run with an --input without '='" 2 "usage:" "$CLI" run "$I32" --input x --output-dir "$T"

# ---- help and version ---------------------------------------------------------------------
# Asked-for help is on stdout with exit 0 (no "2>&1": stderr would not count).
for h in -h --help help; do
  out=$("$CLI" $h 2>/dev/null)
  rc=$?
  if [ "$rc" = 0 ] && grep -qF "usage: shapepoly inspect [--cost] FILE.shpoly" <<<"$out" &&
    grep -qF "shapepoly help [COMMAND] | COMMAND --help | --version" <<<"$out"; then
    pass "help: $h"
  else
    fail "help: $h" "exit $rc, stdout: $out"
  fi
done
for c in inspect check graph run jvp vjp grad vmap; do
  for form in "help $c" "$c --help" "$c -h"; do
    out=$("$CLI" $form 2>/dev/null)
    rc=$?
    if [ "$rc" = 0 ] && grep -q "^usage: shapepoly $c \(\[--cost\] \)\?FILE.shpoly" <<<"$out"; then
      pass "help: $form"
    else
      fail "help: $form" "exit $rc, stdout: $out"
    fi
  done
done
expect "help check: output format" 0 "NAME: DTYPE[DIMS] [(tangent)|(grad)]" "$CLI" help check
expect "help run: the folder is created" 0 "DIR is created if missing" "$CLI" run --help
expect "help inspect: the listing" 0 "program(NAME: DTYPE[DIMS], ...)" "$CLI" inspect -h
expect "help with a file too" 0 "usage: shapepoly check FILE.shpoly" "$CLI" check "$I32" --help
expect "help of an unknown command" 2 "shapepoly: unknown command 'frobnicate'" "$CLI" help frobnicate
expect "help with two commands" 2 "usage:" "$CLI" help run check
version=$("$CLI" --version 2>/dev/null)
if [[ "$version" =~ ^shapepoly\ [0-9]+\.[0-9]+\.[0-9]+\ \(ABI\ version\ [0-9]+,\ \.shpoly\ schema\ version\ [0-9]+\)$ ]]; then
  pass "--version"
else
  fail "--version" "stdout: $version"
fi
expect "--version takes no argument" 2 "usage:" "$CLI" --version "$I32"

# ---- inspect ------------------------------------------------------------------------------
expect_stdout "inspect dtype_i32" "program(x: i32[n, 4]) -> (y: i32[n, 4], r: i32[n])
variables:
  n >= 1  (from input 'x' axis 0 = n)
%0 = input 'x' : i32[n, 4]
%1 = constant() buffer=0 : i32[4]
%2 = mul(%0, %1) : i32[n, 4]
%3 = reduce_max(%2) axes=[1] keepdims=false : i32[n]
output 'y' = %2
output 'r' = %3" "$CLI" inspect "$I32"
expect "inspect mlp" 0 "program(x: f32[batch, 784]) -> (probs: f32[batch, 10])" "$CLI" inspect "$G/mlp_v1.shpoly"
expect "inspect constraints: assertion" 0 'm <= n  "y must not be longer than x"' "$CLI" inspect "$CONS"
expect "inspect constraints: dimension input" 0 "k >= 1  (given by input 'k')" "$CLI" inspect "$CONS"
# Empty integer lists once saved but did not load; the tool must list them.
expect "inspect dot_general without batch axes" 0 \
  "dot_general(%0, %1) lhs_batch=[] rhs_batch=[] lhs_contracting=[1] rhs_contracting=[0] : f32[m, n]" \
  "$CLI" inspect "$G/dot_general_v1.shpoly"
expect "inspect transpose of a scalar" 0 "transpose(%5) permutation=[] : f32[]" "$CLI" inspect "$G/transpose_v1.shpoly"
expect "inspect reduce of a scalar" 0 "reduce_sum(%0) axes=[] keepdims=false : f32[]" \
  "$CLI" inspect "$G/scalars_v1.shpoly"

expect "inspect a missing file" 1 "shapepoly: cannot open '$T/missing.shpoly': No such file or directory" \
  "$CLI" inspect "$T/missing.shpoly"
expect "inspect a directory" 1 "shapepoly: cannot open '$T': Is a directory" "$CLI" inspect "$T"
: >"$T/empty.shpoly"
expect "inspect an empty file" 1 "the data is too short (0 bytes)" "$CLI" inspect "$T/empty.shpoly"
head -c 100 "$G/mlp_v1.shpoly" >"$T/truncated.shpoly"
expect "inspect a truncated file" 1 "SHP_INVALID_PROGRAM" "$CLI" inspect "$T/truncated.shpoly"
printf 'SHP1garbagegarbagegarbage' >"$T/junk.shpoly"
expect "inspect a file with another identifier" 1 "file identifier 'garb', expected 'SHP1'" \
  "$CLI" inspect "$T/junk.shpoly"
# Corrupt bytes anywhere: the tool loads the program (the verifier may not notice a changed
# value) or rejects it with exit code 1, never crashes.
size=$(stat -c %s "$I32")
crashes=0
for ((off = 0; off < size; off += 7)); do
  cp "$I32" "$T/corrupt.shpoly"
  printf '\xff' | dd of="$T/corrupt.shpoly" bs=1 seek=$off conv=notrunc status=none
  "$CLI" inspect "$T/corrupt.shpoly" >/dev/null 2>&1
  rc=$?
  if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
    fail "inspect a corrupt file" "byte $off set to 0xff gives exit code $rc"
    crashes=$((crashes + 1))
  fi
done
[ "$crashes" = 0 ] && pass "inspect a corrupt file"

# ---- check --------------------------------------------------------------------------------
expect_stdout "check accepts" "accepted
variables:
  p = 2
  n = 6
  m = 6
  k = 4
outputs:
  pairs: f32[9, 2]
  joined: f32[12, 3]
  odd_rows: f32[3, 2]
  padded: f32[5]
  range: i64[4]" "$CLI" check "$CONS" --shape x=6,3 --shape y=6,3 --shape pad=2 --shape k=4
expect_stdout "check with --shape=NAME=..." "accepted
variables:
  n = 5
outputs:
  y: i32[5, 4]
  r: i32[5]" "$CLI" check "$I32" --shape=x=5,4
expect "check scalar inputs" 0 "min_all_keepdims: f32[1]" \
  "$CLI" check "$G/scalars_v1.shpoly" --shape s= --shape si= --shape sb= --shape x=5
expect "check: reshape assertion" 1 "must be divisible by 2" \
  "$CLI" check "$CONS" --shape x=7,3 --shape y=7,3 --shape pad=2 --shape k=4
expect "check: prints rejected" 1 "rejected" "$CLI" check "$CONS" --shape x=7,3 --shape y=7,3 --shape pad=2 --shape k=4
expect "check: user assertion" 1 "y must not be longer than x" \
  "$CLI" check "$CONS" --shape x=6,3 --shape y=8,3 --shape pad=2 --shape k=4
expect "check: declared range" 1 "SHP_CONSTRAINT_VIOLATION" \
  "$CLI" check "$CONS" --shape x=6,3 --shape y=6,3 --shape pad=9 --shape k=4
expect "check: wrong rank" 1 "input 'x': rank is 1 but the program requires rank 2 (shape (n, 4))" \
  "$CLI" check "$I32" --shape x=3
expect "check: wrong constant dim" 1 "SHP_SHAPE_MISMATCH" "$CLI" check "$I32" --shape x=3,5
expect "check: negative dim" 1 "input 'x': axis 0 has negative size -3" "$CLI" check "$I32" --shape x=-3,4
expect "check: unknown input" 1 "SHP_NOT_FOUND" "$CLI" check "$I32" --shape z=3,4
expect "check: missing input" 1 "input 'y' is missing" "$CLI" check "$CONS" --shape x=6,3 --shape pad=2 --shape k=4
expect "check: bad --shape" 2 "bad --shape 'x=3,,4'" "$CLI" check "$I32" --shape x=3,,4
expect "check: non-numeric dim" 2 "bad --shape" "$CLI" check "$I32" --shape x=3,four
expect "check: dim too large for int64" 2 "bad --shape" "$CLI" check "$I32" --shape x=99999999999999999999,4
expect "check: two values for a dimension input" 2 "pass one value (--shape k=N)" \
  "$CLI" check "$CONS" --shape x=6,3 --shape y=6,3 --shape pad=2 --shape k=4,4
expect "check: a missing file" 1 "cannot open" "$CLI" check "$T/missing.shpoly" --shape x=1,4

# ---- run ----------------------------------------------------------------------------------
# Outputs that are exact (integers, data movement) must be byte-identical to the golden
# expectations, which numpy wrote: same header, same data.
mkdir -p "$T/out_i32" "$T/out_cons"
expect "run dtype_i32" 0 "y: $T/out_i32/y.npy" \
  "$CLI" run "$I32" --input "x=$G/dtype_i32_v1.0.in.x.npy" --output-dir "$T/out_i32"
same_file "run dtype_i32: y" "$T/out_i32/y.npy" "$G/dtype_i32_v1.0.out.y.npy"
same_file "run dtype_i32: r" "$T/out_i32/r.npy" "$G/dtype_i32_v1.0.out.r.npy"
# The narrow element types (schema version 9): .npy inputs and outputs of f16, u8, i8, u64 and
# u16; the exact outputs byte-identical to numpy's files.
mkdir -p "$T/out_narrow"
narrow_inputs=()
for x in h q i u w; do narrow_inputs+=(--input "$x=$G/narrow_v9.0.in.$x.npy"); done
expect "run narrow_v9" 0 "u8_add_wraps: $T/out_narrow/u8_add_wraps.npy" \
  "$CLI" run "$G/narrow_v9.shpoly" "${narrow_inputs[@]}" --output-dir "$T/out_narrow"
for o in u8_add_wraps i8_mul_wraps i8_neg_abs u64_lt u64_max u64_reduce_max f16_to_i16 \
  u16_concat_u32 f16_via_bf16_to_f32; do
  same_file "run narrow_v9: $o" "$T/out_narrow/$o.npy" "$G/narrow_v9.0.out.$o.npy"
done
cons_inputs=()
for x in x y pad k; do cons_inputs+=(--input "$x=$G/constraints_v1.0.in.$x.npy"); done
expect "run constraints (a 0-d dimension input)" 0 "range: $T/out_cons/range.npy" \
  "$CLI" run "$CONS" "${cons_inputs[@]}" --output-dir "$T/out_cons"
for o in pairs joined odd_rows padded range; do
  same_file "run constraints: $o" "$T/out_cons/$o.npy" "$G/constraints_v1.0.out.$o.npy"
done

X=$G/dtype_i32_v1.0.in.x.npy
run_x() {  # run_x NAME RC PATTERN FILE: runs dtype_i32 with x=FILE
  expect "$1" "$2" "$3" "$CLI" run "$I32" --input "x=$4" --output-dir "$T"
}
npy "$T/ok.npy" "$(header '<i4' '(2, 4)')" "$(le32 1 2 3 4 5 6 7 8)"
run_x "run a hand-written .npy" 0 "r: $T/r.npy" "$T/ok.npy"
# Format 2.0: a 4-byte header length.
h=$(header '<i4' '(1, 4)')
{
  printf '\x93NUMPY\x02\x00'
  printf "\\x$(printf %02x ${#h})\\x00\\x00\\x00"
  printf '%s' "$h"
  printf "$(le32 1 2 3 4)"
} >"$T/v2.npy"
run_x "run a format 2.0 .npy" 0 "y: $T/y.npy" "$T/v2.npy"

# Hostile headers: each is rejected with exit code 1 and a reason, before any allocation of
# the size the header claims.
npy "$T/magic.npy" "$(header '<i4' '(2, 4)')" "$(le32 1 2 3 4 5 6 7 8)" '\x93NUMPX\x01\x00'
run_x "npy: bad magic" 1 "not an .npy file" "$T/magic.npy"
printf '\x93NUM' >"$T/short.npy"
run_x "npy: 4 bytes" 1 "not an .npy file" "$T/short.npy"
npy "$T/v9.npy" "$(header '<i4' '(2, 4)')" "" '\x93NUMPY\x09\x00'
run_x "npy: unknown format version" 1 "unsupported .npy version" "$T/v9.npy"
{ printf '\x93NUMPY\x01\x00\xff\x7f'; header '<i4' '(2, 4)'; } >"$T/hlen.npy"
run_x "npy: header length beyond the file" 1 "truncated header" "$T/hlen.npy"
{ printf '\x93NUMPY\x02\x00\xff\xff\xff\xff'; header '<i4' '(2, 4)'; } >"$T/hlen2.npy"
run_x "npy: 4 GiB header length" 1 "truncated header" "$T/hlen2.npy"
npy "$T/trunc.npy" "$(header '<i4' '(2, 4)')" "$(le32 1 2 3)"
run_x "npy: truncated data" 1 "truncated data" "$T/trunc.npy"
npy "$T/c8.npy" "$(header '<c8' '(2, 4)')" "$(le32 1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8)"
run_x "npy: complex64" 1 "unsupported dtype" "$T/c8.npy"
npy "$T/be.npy" "$(header '>i4' '(2, 4)')" "$(le32 1 2 3 4 5 6 7 8)"
run_x "npy: big-endian" 1 "unsupported dtype" "$T/be.npy"
npy "$T/str.npy" "$(header '<U3' '(2, 4)')" "$(le32 1 2 3 4 5 6 7 8)"
run_x "npy: unicode strings" 1 "unsupported dtype" "$T/str.npy"
npy "$T/nodescr.npy" "{'fortran_order': False, 'shape': (2, 4), }" "$(le32 1 2 3 4 5 6 7 8)"
run_x "npy: no descr" 1 "unsupported dtype" "$T/nodescr.npy"
npy "$T/fortran.npy" "$(header '<i4' '(2, 4)' True)" "$(le32 1 2 3 4 5 6 7 8)"
run_x "npy: Fortran order" 1 "Fortran order is not supported" "$T/fortran.npy"
npy "$T/noshape.npy" "{'descr': '<i4', 'fortran_order': False, }" "$(le32 1 2 3 4 5 6 7 8)"
run_x "npy: no shape" 1 "malformed shape" "$T/noshape.npy"
npy "$T/neg.npy" "$(header '<i4' '(-1, 4)')" "$(le32 1 2 3 4)"
run_x "npy: negative dim" 1 "dimension 0 is negative (-1)" "$T/neg.npy"
npy "$T/word.npy" "$(header '<i4' '(two, 4)')" "$(le32 1 2 3 4 5 6 7 8)"
run_x "npy: non-numeric dim" 1 "malformed shape" "$T/word.npy"
npy "$T/range.npy" "$(header '<i4' '(99999999999999999999, 4)')" ""
run_x "npy: dim beyond int64" 1 "malformed shape" "$T/range.npy"
npy "$T/overflow.npy" "$(header '<i4' '(4294967296, 4294967296)')" ""
run_x "npy: byte size overflows" 1 "SHP_OVERFLOW" "$T/overflow.npy"
# 16 GiB claimed by a 70-byte file: rejected from the file size, without allocating. Run
# under a 1 GiB address-space limit so that an allocation first would be an out-of-memory
# error (not under ASan, which reserves terabytes of address space).
npy "$T/huge.npy" "$(header '<i4' '(4294967296,)')" "$(le32 1)"
if grep -qa __asan_init "$CLI"; then
  run_x "npy: huge claim" 1 "truncated data" "$T/huge.npy"
else
  expect "npy: huge claim" 1 "truncated data" \
    bash -c 'ulimit -v 1048576 && exec "$0" run "$1" --input "x=$2" --output-dir "$3"' "$CLI" "$I32" "$T/huge.npy" "$T"
fi

# Valid files that do not fit the program.
npy "$T/i64.npy" "$(header '<i8' '(1, 4)')" "$(le32 1 0 2 0 3 0 4 0)"
run_x "run: wrong dtype" 1 "input 'x' has dtype i64 but the program requires i32" "$T/i64.npy"
npy "$T/rank3.npy" "$(header '<i4' '(1, 1, 4)')" "$(le32 1 2 3 4)"
run_x "run: wrong rank" 1 "input 'x': rank is 3 but the program requires rank 2 (shape (n, 4))" "$T/rank3.npy"
npy "$T/cols.npy" "$(header '<i4' '(1, 3)')" "$(le32 1 2 3)"
run_x "run: wrong dim" 1 "SHP_SHAPE_MISMATCH" "$T/cols.npy"
npy "$T/empty_rows.npy" "$(header '<i4' '(0, 4)')" ""
run_x "run: n = 0 below its range" 1 "Expected value >= 1 for dimension variable 'n', but found 0" "$T/empty_rows.npy"
expect "run: unknown input" 1 "the program has no input named 'z' (its inputs: 'x')" \
  "$CLI" run "$I32" --input "z=$X" --output-dir "$T"
expect "run: missing inputs" 1 "inputs 'y', 'pad', 'k' are missing" \
  "$CLI" run "$CONS" --input "x=$G/constraints_v1.0.in.x.npy" --output-dir "$T"
expect "run: repeated input" 1 "SHP_INVALID_ARGUMENT" "$CLI" run "$I32" --input "x=$X" --input "x=$X" --output-dir "$T"
npy "$T/k1.npy" "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }" '\x04\x00\x00\x00\x00\x00\x00\x00'
expect "run: dimension input of rank 1" 1 "input 'k' gives a dimension variable: it must be a scalar (rank 0)" \
  "$CLI" run "$CONS" --input "x=$G/constraints_v1.0.in.x.npy" --input "y=$G/constraints_v1.0.in.y.npy" \
  --input "pad=$G/constraints_v1.0.in.pad.npy" --input "k=$T/k1.npy" --output-dir "$T"
odd=()
for x in y pad k; do odd+=(--input "$x=$G/constraints_v1.0.in.$x.npy"); done
npy "$T/x7.npy" "$(header '<f4' '(7, 3)')" "$(le32 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)"
expect "run: assertion violated" 1 "SHP_CONSTRAINT_VIOLATION" "$CLI" run "$CONS" --input "x=$T/x7.npy" "${odd[@]}" \
  --output-dir "$T"
nn_inputs=()
for x in a w u c ad ai al idx2; do nn_inputs+=(--input "$x=$G/nn_v1.0.in.$x.npy"); done
npy "$T/idx.npy" "$(header '<i4' '(3,)')" "$(le32 0 1 6)"  # axis 1 of 'a' has 6 entries
expect "run: take index out of range" 1 "take: index 6 (position 2 of the indices) is outside [0, 6)" \
  "$CLI" run "$G/nn_v1.shpoly" "${nn_inputs[@]}" --input "idx=$T/idx.npy" --output-dir "$T"
expect "run: missing input file" 1 "'$T/none.npy': cannot read: No such file or directory" \
  "$CLI" run "$I32" --input "x=$T/none.npy" --output-dir "$T"
expect "run: input is a directory" 1 "'$T': cannot read: Is a directory" "$CLI" run "$I32" --input "x=$T" --output-dir "$T"
# --output-dir is created with its parents (mkdir -p); a path that cannot be a folder, or an
# output file that cannot be written, is an error with the OS reason.
expect "run: output folder missing is created" 0 "y: $T/no/such/dir/y.npy" \
  "$CLI" run "$I32" --input "x=$X" --output-dir "$T/no/such/dir"
same_file "run: output in the created folder" "$T/out_i32/y.npy" "$T/no/such/dir/y.npy"
expect "run: existing output folder" 0 "r: $T/no/such/dir/r.npy" \
  "$CLI" run "$I32" --input "x=$X" --output-dir "$T/no/such/dir/"
: >"$T/plain_file"
expect "run: output folder under a file" 1 "cannot create '$T/plain_file': Not a directory" \
  "$CLI" run "$I32" --input "x=$X" --output-dir "$T/plain_file/out"
mkdir -p "$T/blocked/y.npy"
expect "run: output file cannot be written" 1 "cannot write '$T/blocked/y.npy': Is a directory" \
  "$CLI" run "$I32" --input "x=$X" --output-dir "$T/blocked"
expect "run: failed run creates no folder" 1 "input 'x' is missing" \
  "$CLI" run "$I32" --output-dir "$T/not_created"
if [ -e "$T/not_created" ]; then
  fail "run: failed run leaves no folder" "$T/not_created exists"
else
  pass "run: failed run leaves no folder"
fi

# ---- schema version 2: parameters, defaults, roles ----------------------------------------
GRAD=$G/grad_v2.shpoly
MLPP=$G/mlp_params_v2.shpoly
expect "inspect: a parameter with a default" 0 "%2 = input 'w' (parameter) with a default : f64[6, 3]" \
  "$CLI" inspect "$GRAD"
expect "inspect: grad's cotangent" 0 "%4 = input 'loss.cotangent' (cotangent) with a default : f64[]" \
  "$CLI" inspect "$GRAD"
expect "inspect: a grad output" 0 "output 'x.grad' (grad) = %" "$CLI" inspect "$GRAD"
expect_stdout "check: defaults left out" "accepted
variables:
  batch = 4
defaults used:
  w: f64[6, 3]
  b: f64[3]
  loss.cotangent: f64[]
outputs:
  loss: f64[]
  x.grad: f64[4, 6] (grad)
  w.grad: f64[6, 3] (grad)" "$CLI" check "$GRAD" --shape x=4,6 --shape y=4,3
expect "check: a parameter given with its shape" 0 "accepted" \
  "$CLI" check "$MLPP" --shape x=2,8 --shape w1=8,16
expect "check: a parameter given with another shape" 1 "w1" "$CLI" check "$MLPP" --shape x=2,8 --shape w1=8,15
mkdir -p "$T/p0" "$T/p1" "$T/g0" "$T/g1" "$T/g2"
expect "run: parameters left out" 0 "probs: $T/p0/probs.npy" \
  "$CLI" run "$MLPP" --input "x=$G/mlp_params_v2.0.in.x.npy" --output-dir "$T/p0"
expect "run: parameters given by name" 0 "probs: $T/p1/probs.npy" \
  "$CLI" run "$MLPP" --input "w1=$G/mlp_params_v2.1.in.w1.npy" --input "x=$G/mlp_params_v2.1.in.x.npy" \
  --input "b2=$G/mlp_params_v2.1.in.b2.npy" --output-dir "$T/p1"
expect "run: a parameter of another shape" 1 "input 'w1'" \
  "$CLI" run "$MLPP" --input "x=$G/mlp_params_v2.0.in.x.npy" --input "w1=$G/mlp_params_v2.0.in.x.npy" \
  --output-dir "$T"
expect "run: a parameter of another dtype" 1 "input 'b2' has dtype f64 but the program requires f32" \
  "$CLI" run "$MLPP" --input "x=$G/mlp_params_v2.0.in.x.npy" --input "b2=$G/grad_v2.2.in.b.npy" \
  --output-dir "$T"
# No input at all still binds by name (an empty list, not the positional NULL).
expect "run: nothing given" 1 "inputs 'x', 'y' are missing" "$CLI" run "$GRAD" --output-dir "$T"
npy "$T/one.npy" "$(header '<f8' '()')" '\x00\x00\x00\x00\x00\x00\xf0\x3f'
npy "$T/two.npy" "$(header '<f8' '()')" '\x00\x00\x00\x00\x00\x00\x00\x40'
gin=(--input "x=$G/grad_v2.0.in.x.npy" --input "y=$G/grad_v2.0.in.y.npy")
expect "run grad: default cotangent" 0 "x.grad: $T/g0/x.grad.npy (grad)" "$CLI" run "$GRAD" "${gin[@]}" --output-dir "$T/g0"
expect "run grad: cotangent 1 by name" 0 "w.grad: $T/g1/w.grad.npy (grad)" \
  "$CLI" run "$GRAD" "${gin[@]}" --input "loss.cotangent=$T/one.npy" --output-dir "$T/g1"
expect "run grad: cotangent 2 by name" 0 "loss: $T/g2/loss.npy" \
  "$CLI" run "$GRAD" "${gin[@]}" --input "loss.cotangent=$T/two.npy" --output-dir "$T/g2"
for o in loss x.grad w.grad; do same_file "run grad: the default cotangent is 1: $o" "$T/g0/$o.npy" "$T/g1/$o.npy"; done
same_file "run grad: the cotangent leaves the loss" "$T/g2/loss.npy" "$T/g0/loss.npy"
if cmp -s "$T/g2/w.grad.npy" "$T/g0/w.grad.npy"; then
  fail "run grad: the cotangent scales the gradient" "w.grad did not change"
else
  pass "run grad: the cotangent scales the gradient"
fi

# ---- jvp, vjp, grad ---------------------------------------------------------------------------
MLP=$G/mlp_v1.shpoly
expect "jvp" 0 "program(x: f32[batch, 784], x.tangent: f32[batch, 784]) -> (probs: f32[batch, 10], probs.tangent: f32[batch, 10])" \
  "$CLI" jvp "$MLP" --wrt x -o "$T/jvp.shpoly"
expect "jvp: inspect the tangent input" 0 "input 'x.tangent' (tangent) : f32[batch, 784]" "$CLI" inspect "$T/jvp.shpoly"
expect "jvp: inspect the tangent output" 0 "output 'probs.tangent' (tangent) = %" "$CLI" inspect "$T/jvp.shpoly"
expect "jvp: check" 0 "probs.tangent: f32[3, 10] (tangent)" \
  "$CLI" check "$T/jvp.shpoly" --shape x=3,784 --shape x.tangent=3,784
mkdir -p "$T/j"
expect "jvp: run" 0 "probs.tangent: $T/j/probs.tangent.npy (tangent)" "$CLI" run "$T/jvp.shpoly" \
  --input "x=$G/mlp_v1.0.in.x.npy" --input "x.tangent=$G/mlp_v1.0.in.x.npy" --output-dir "$T/j"
expect "vjp" 0 "-> (probs: f32[batch, 10], x.grad: f32[batch, 784])" \
  "$CLI" vjp "$MLP" --of probs --wrt x -o "$T/vjp.shpoly"
expect "vjp: inspect the cotangent" 0 "input 'probs.cotangent' (cotangent) : f32[batch, 10]" \
  "$CLI" inspect "$T/vjp.shpoly"
expect "vjp: the cotangent has no default" 1 "input 'probs.cotangent' (the cotangent of 'probs') is missing" \
  "$CLI" run "$T/vjp.shpoly" --input "x=$G/mlp_v1.0.in.x.npy" --output-dir "$T"
expect "grad of a grad program (loaded, second order)" 0 \
  "loss.cotangent.cotangent: f64[]) -> (loss: f64[], w.grad: f64[6, 3])" \
  "$CLI" grad "$GRAD" --of loss --wrt w -o "$T/grad2.shpoly"
expect "grad: --output and a --wrt list" 0 "wrote $T/grad3.shpoly" \
  "$CLI" grad "$GRAD" --of loss --wrt x,b --output "$T/grad3.shpoly"
# Symbolic shapes survive: the derived program keeps variables, constraints and assertions.
expect "jvp of a constrained program" 0 "pad.tangent: f32[p]" "$CLI" jvp "$CONS" --wrt x,pad -o "$T/cj.shpoly"
expect "jvp keeps the constraints" 0 "  m >= n" "$CLI" inspect "$T/cj.shpoly"
expect "jvp keeps the assertions" 0 'm <= n  "y must not be longer than x"' "$CLI" inspect "$T/cj.shpoly"
expect "jvp keeps the declared range" 0 "0 <= p <= 8  (from input 'pad' axis 0 = p)" "$CLI" inspect "$T/cj.shpoly"
expect "jvp: the reshape assertion still holds" 1 "must be divisible by 2" "$CLI" check "$T/cj.shpoly" \
  --shape x=7,3 --shape y=7,3 --shape pad=2 --shape k=4 --shape x.tangent=7,3 --shape pad.tangent=2
expect "grad: unknown --wrt name" 1 "wrt names no input 'zz'" "$CLI" jvp "$MLP" --wrt x,zz -o "$T/bad.shpoly"
expect "grad: unknown --of name" 1 "SHP_NOT_FOUND" "$CLI" grad "$GRAD" --of lost --wrt x -o "$T/bad.shpoly"
expect "grad: a non-scalar output" 1 "grad needs a scalar output, but 'probs' has rank 2" \
  "$CLI" grad "$MLP" --of probs --wrt x -o "$T/bad.shpoly"
expect "jvp: an integer input" 1 "SHP_DTYPE_MISMATCH" "$CLI" jvp "$I32" --wrt x -o "$T/bad.shpoly"
expect "grad: a missing file" 1 "cannot open" "$CLI" grad "$T/missing.shpoly" --of loss --wrt x -o "$T/bad.shpoly"
expect "grad: output folder missing" 1 "cannot write '$T/absent/dir/g.shpoly': No such file or directory" \
  "$CLI" grad "$GRAD" --of loss --wrt x -o "$T/absent/dir/g.shpoly"
[ -e "$T/bad.shpoly" ] && fail "failed derivations write nothing" "$T/bad.shpoly exists" || pass "failed derivations write nothing"
expect "grad without --of" 2 "grad needs --of Y: the scalar output to differentiate" \
  "$CLI" grad "$GRAD" --wrt x -o "$T/bad.shpoly"
expect "vjp without --of" 2 "vjp needs --of Y[,Y...]" "$CLI" vjp "$MLP" --wrt x -o "$T/bad.shpoly"
expect "grad with two --of" 2 "grad takes one --of output" "$CLI" grad "$GRAD" --of loss,x.grad --wrt x -o "$T/bad.shpoly"
expect "jvp with --of" 2 "jvp takes no --of" "$CLI" jvp "$MLP" --of probs --wrt x -o "$T/bad.shpoly"
expect "jvp without --wrt" 2 "jvp needs --wrt X[,X...]" "$CLI" jvp "$MLP" -o "$T/bad.shpoly"
expect "grad without -o" 2 "grad needs -o OUT.shpoly" "$CLI" grad "$GRAD" --of loss --wrt x
expect "bad --wrt list" 2 "bad --wrt 'x,,w'" "$CLI" grad "$GRAD" --of loss --wrt x,,w -o "$T/bad.shpoly"
expect "jvp: unknown flag" 2 "unexpected argument '--with'" "$CLI" jvp "$MLP" --with x -o "$T/bad.shpoly"
# ---- vmap --------------------------------------------------------------------------------------
# The grad program of one loss batched over x and y (w shared): per-example gradients.
expect "vmap" 0 "program(x: f64[vmap0, batch, 6], y: f64[vmap0, batch, 3], w: f64[6, 3]" \
  "$CLI" vmap "$GRAD" --in-axes x=0,y=0 -o "$T/vmap.shpoly"
expect "vmap: the grads carry the batch" 0 "w.grad: f64[5, 6, 3] (grad)" \
  "$CLI" check "$T/vmap.shpoly" --shape x=5,4,6 --shape y=5,4,3
expect "vmap: --name, --out-axes and a later axis" 0 "x: f64[batch, 6, examples], y: f64[batch, 3]" \
  "$CLI" vmap "$GRAD" --in-axes x=2 --out-axes w.grad=2,loss=0,x.grad=0 --name examples -o "$T/vmap2.shpoly"
expect "vmap of a vmap" 0 "w.grad: f64[vmap1, vmap0, 6, 3])" \
  "$CLI" vmap "$T/vmap.shpoly" --in-axes x=1,y=1 -o "$T/vmap3.shpoly"
expect "vmap: an axis out of range" 1 "in_axes[0] = 3 for input 'x'" \
  "$CLI" vmap "$GRAD" --in-axes x=3 -o "$T/bad.shpoly"
expect "vmap: an unknown input" 1 "--in-axes names no input 'z'" \
  "$CLI" vmap "$GRAD" --in-axes z=0 -o "$T/bad.shpoly"
expect "vmap: a batched output asked to be shared" 1 "depends on a batched input" \
  "$CLI" vmap "$GRAD" --in-axes x=0 --out-axes loss=-1 -o "$T/bad.shpoly"
expect "vmap without --in-axes" 2 "vmap needs --in-axes" "$CLI" vmap "$GRAD" -o "$T/bad.shpoly"
expect "vmap: bad --in-axes" 2 "bad --in-axes 'x'" "$CLI" vmap "$GRAD" --in-axes x -o "$T/bad.shpoly"
[ -e "$T/bad.shpoly" ] && fail "failed vmaps write nothing" "$T/bad.shpoly exists" || pass "failed vmaps write nothing"
expect "usage lists grad" 2 "shapepoly grad FILE.shpoly --of Y --wrt X[,X...] -o OUT.shpoly" "$CLI"

# ---- guards and variants (schema version 3) -----------------------------------------------
RS=$G/row_softmax_variants_v3.shpoly
expect "inspect variants: header" 0 \
  "program with 2 variants (the first whose guards hold runs; exhaustive: yes)" "$CLI" inspect "$RS"
expect "inspect variants: guard, message and origin" 0 \
  'cols > 16  "row softmax: max-subtract, exp, sum, divide for long rows"  (from shp_scope_assume)' \
  "$CLI" inspect "$RS"
out=$("$CLI" inspect "$RS")
if [ "$(sed -n '/^dispatch:$/,$p' <<<"$out")" = 'dispatch:
  2 variants; a run takes the first whose guards all hold
  variant 0: cols <= 16  "row softmax: the softmax op for short rows"
  variant 1: cols > 16  "row softmax: max-subtract, exp, sum, divide for long rows"
  exhaustive: yes (every shape the constraints allow has a variant)' ]; then
  pass "inspect variants: dispatch summary"
else
  fail "inspect variants: dispatch summary" "got:"
  echo "$out" | sed 's/^/    /'
fi
expect_stdout "check variants: cols 16 runs variant 0" "accepted
variant: 0 of 2 (cols <= 16)
variables:
  cols = 16
  rows = 3
outputs:
  y: f32[3, 16]" "$CLI" check "$RS" --shape x=3,16
expect_stdout "check variants: cols 17 runs variant 1" "accepted
variant: 1 of 2 (cols > 16)
variables:
  cols = 17
  rows = 2
outputs:
  y: f32[2, 17]" "$CLI" check "$RS" --shape x=2,17
expect "check variants: cols 1" 0 "variant: 0 of 2 (cols <= 16)" "$CLI" check "$RS" --shape x=1,1
expect "check variants: cols 64" 0 "variant: 1 of 2 (cols > 16)" "$CLI" check "$RS" --shape x=5,64
expect "check variants: a wrong rank is variant 0's error" 1 \
  "SHP_SHAPE_MISMATCH: shape mismatch
  input 'x': rank is 1 but the program requires rank 2" "$CLI" check "$RS" --shape x=16
expect "check: single-variant programs print no variant" 0 "" "$CLI" check "$I32" --shape x=2,4
if "$CLI" check "$I32" --shape x=2,4 | grep -q '^variant'; then
  fail "check: no variant line without variants" "a variant line was printed"
else
  pass "check: no variant line without variants"
fi
expect "inspect: no dispatch without guards" 0 "" "$CLI" inspect "$G/grad_v2.shpoly"
if "$CLI" inspect "$G/grad_v2.shpoly" | grep -q '^dispatch:'; then
  fail "inspect: no dispatch section without guards" "printed one"
else
  pass "inspect: no dispatch section without guards"
fi
for c in 2 3; do  # cases 2 (2 x 17) and 3 (5 x 64) of the golden file: variant 1
  expect "run variants: case $c" 0 "ran variant 1 of 2 (cols > 16)" \
    "$CLI" run "$RS" --input "x=$G/row_softmax_variants_v3.$c.in.x.npy" --output-dir "$T"
done
expect "run variants: case 1 (cols 16)" 0 "ran variant 0 of 2 (cols <= 16)" \
  "$CLI" run "$RS" --input "x=$G/row_softmax_variants_v3.1.in.x.npy" --output-dir "$T"
[ -s "$T/y.npy" ] && pass "run variants: wrote y.npy" || fail "run variants: wrote y.npy" "missing"

if [ -n "$GUARD_PROGRAMS" ]; then
  mkdir -p "$T/guards"
  if "$GUARD_PROGRAMS" "$T/guards"; then
    pass "guard programs written"
  else
    fail "guard programs written" "$GUARD_PROGRAMS failed"
  fi
  GAP=$T/guards/gap.shpoly
  HINTED=$T/guards/hinted.shpoly
  UNKNOWN=$T/guards/unknown.shpoly
  expect "inspect gap: counterexample" 0 \
    "  exhaustive: no: cols = 9 satisfies the constraints and no variant's guards (variant 0: cols <= 8 is false; variant 1: cols >= 17 is false)" \
    "$CLI" inspect "$GAP"
  expect "inspect gap: variant messages" 0 '  variant 1: cols >= 17  "long rows"' "$CLI" inspect "$GAP"
  expect "check gap: cols 8" 0 "variant: 0 of 2 (cols <= 8)" "$CLI" check "$GAP" --shape x=3,8
  expect "check gap: cols 17" 0 "variant: 1 of 2 (cols >= 17)" "$CLI" check "$GAP" --shape x=3,17
  expect "check gap: cols 12 is SHP_GUARD_FAILED" 1 "SHP_GUARD_FAILED: guard failed
  no variant of the program applies to these shapes (the first failure of each):
  variant 0: guard cols <= 8 does not hold: cols = 12 (12 <= 8 is false); guard message: short rows" \
    "$CLI" check "$GAP" --shape x=3,12
  expect "check gap: each variant's failure" 1 \
    "variant 1: guard cols >= 17 does not hold: cols = 12 (12 >= 17 is false); guard message: long rows" \
    "$CLI" check "$GAP" --shape x=3,12
  expect "check gap: rejected" 1 "rejected" "$CLI" check "$GAP" --shape x=3,9
  expect "inspect hinted: guard from the op" 0 \
    "  s0 == s1  (from mul: axis 0 of the result when broadcasting (s0,) and (s1,))" "$CLI" inspect "$HINTED"
  expect "inspect hinted: dispatch of one variant" 0 \
    "  runs where s0 == s1 holds; other shapes fail with SHP_GUARD_FAILED
  guards cover every allowed shape: no: s0 = 2, s1 = 1 satisfies the constraints and not the program's guards (s0 == s1 is false)" \
    "$CLI" inspect "$HINTED"
  expect "check hinted: equal sizes" 0 "  z: f32[7]" "$CLI" check "$HINTED" --shape x=7 --shape y=7
  expect "check hinted: a hint of 5 does not specialize" 0 "  s0 = 1000" "$CLI" check "$HINTED" --shape x=1000 --shape y=1000
  expect "check hinted: the guard fails" 1 \
    "guard s0 == s1 does not hold: s0 = 5, s1 = 6 (5 == 6 is false); recorded by mul: axis 0" \
    "$CLI" check "$HINTED" --shape x=5 --shape y=6
  expect "inspect unknown: coverage unknown" 0 \
    "  exhaustive: unknown (neither proven nor refuted; a shape that no variant covers fails with SHP_GUARD_FAILED)" \
    "$CLI" inspect "$UNKNOWN"
  expect "check unknown: n 4" 0 "variant: 0 of 2 (mod(n^2, 7) != 3)" "$CLI" check "$UNKNOWN" --shape x=4
  expect "check unknown: n 5 (mod(25, 7) == 4)" 0 "variant: 0 of 2" "$CLI" check "$UNKNOWN" --shape x=5
else
  fail "guard programs" "no GUARD_PROGRAMS argument"
fi

# ---- Cost (shp_program_cost, shp_runtime_cost) and the picture (shp_program_to_dot) ----
expect "inspect --cost: flops formula" 0 "flops            25500*batch; no worst case (unbounded)" \
  "$CLI" inspect --cost "$G/mlp_v1.shpoly"
expect "inspect --cost: parameter bytes are a constant" 0 "parameter bytes  50924 bytes (50.9 kB)" \
  "$CLI" inspect --cost "$G/mlp_v1.shpoly"
expect "inspect --cost: the unbounded variable is named once" 0 \
  "unbounded: no upper bound on batch; declare a range" "$CLI" inspect --cost "$G/mlp_v1.shpoly"
expect "inspect FILE --cost (flag after the file)" 0 "peak bytes" \
  "$CLI" inspect "$G/mlp_v1.shpoly" --cost
# n <= 4096 and p <= 8 bound everything but k (a dimension input without a bound).
expect "inspect --cost: only the unbounded variable" 0 "unbounded: no upper bound on k;" \
  "$CLI" inspect --cost "$G/constraints_v1.shpoly"
expect "check --cost: the numbers for one shape" 0 "  flops: 76500 (76.5 kFLOP)" \
  "$CLI" check "$G/mlp_v1.shpoly" --shape x=3,784 --cost
expect "check --cost: peak bytes" 0 "  peak bytes: " "$CLI" check "$G/mlp_v1.shpoly" --shape x=3,784 --cost
expect "check --cost on rejected shapes" 1 "input 'x': axis 1 is 8" \
  "$CLI" check "$G/mlp_v1.shpoly" --shape x=3,8 --cost
expect "inspect --cost on a missing file" 1 "No such file or directory" \
  "$CLI" inspect --cost "$T/missing.shpoly"
expect "graph: DOT on stdout" 0 "digraph program {" "$CLI" graph "$G/mlp_v1.shpoly"
expect "graph: edges carry symbolic shapes" 0 "f32[batch, 784]" "$CLI" graph "$G/mlp_v1.shpoly"
expect "graph -o OUT.dot" 0 "wrote $T/g.dot" "$CLI" graph "$G/mlp_v1.shpoly" -o "$T/g.dot"
if grep -q "digraph program" "$T/g.dot" 2>/dev/null; then pass "graph -o OUT.dot: the file"; else fail "graph -o OUT.dot: the file" "no DOT in $T/g.dot"; fi
if command -v dot >/dev/null 2>&1; then
  expect "graph -o OUT.svg (Graphviz)" 0 "wrote $T/g.svg" "$CLI" graph "$G/mlp_v1.shpoly" -o "$T/g.svg"
  if grep -q "<svg" "$T/g.svg" 2>/dev/null; then pass "graph -o OUT.svg: the file"; else fail "graph -o OUT.svg: the file" "no SVG in $T/g.svg"; fi
else
  expect "graph -o OUT.svg without Graphviz: DOT next to it" 0 "writing the DOT text to '$T/g2.dot'" \
    "$CLI" graph "$G/mlp_v1.shpoly" -o "$T/g2.svg"
fi
expect "graph: a bad argument is a usage error" 2 "unexpected argument '--bogus' for graph" \
  "$CLI" graph "$G/mlp_v1.shpoly" --bogus
expect "graph --help" 0 "usage: shapepoly graph FILE.shpoly" "$CLI" graph --help
expect "graph into a new folder (created)" 0 "wrote $T/new/dir/g.dot" \
  "$CLI" graph "$G/mlp_v1.shpoly" -o "$T/new/dir/g.dot"
mkdir -p "$T/adir.dot"
expect "graph onto a folder: the OS reason" 1 "Is a directory" \
  "$CLI" graph "$G/mlp_v1.shpoly" -o "$T/adir.dot"

echo "cli_test: $passed passed, $failed failed"
if [ -n "${XML_OUTPUT_FILE:-}" ]; then
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuites><testsuite name=\"cli_test\" tests=\"$((passed + failed))\" failures=\"$failed\">"
    printf '%s\n' "${cases[@]}"
    echo '</testsuite></testsuites>'
  } >"$XML_OUTPUT_FILE"
fi
[ "$failed" = 0 ]
