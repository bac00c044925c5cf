/* The symbolic dimension engine from C: the README's example, compiled and run by the tests.
 * Every value it prints is also checked (expect_*): it exits with status 1 on any mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapepoly/shapepoly.h"

/* Prints the error (if any), destroys it, and exits. */
static void check(shp_error_t* err) {
  if (err) {
    fprintf(stderr, "error %d: %s\n", (int)shp_error_code(err), shp_error_message(err));
    shp_error_destroy(err);
    exit(1);
  }
}

static int mismatches = 0;

static void expect_int(const char* what, long long got, long long want) {
  if (got != want) {
    fprintf(stderr, "MISMATCH: %s is %lld, expected %lld\n", what, got, want);
    ++mismatches;
  }
}

static void expect_str(const char* what, const char* got, const char* want) {
  if (got == NULL || strcmp(got, want) != 0) {
    fprintf(stderr, "MISMATCH: %s is \"%s\", expected \"%s\"\n", what, got ? got : "(null)", want);
    ++mismatches;
  }
}

static void expect_contains(const char* what, const char* got, const char* want) {
  if (got == NULL || strstr(got, want) == NULL) {
    fprintf(stderr, "MISMATCH: %s is \"%s\", expected it to contain \"%s\"\n", what,
            got ? got : "(null)", want);
    ++mismatches;
  }
}

int main(void) {
  const char* constraints[] = {"batch >= 128", "batch <= 1024", "mod(seq, 8) == 0"};
  shp_scope_t* scope;
  check(shp_scope_create(constraints, 3, &scope));

  const shp_dim_t *batch, *e;
  check(shp_dim_parse(scope, "batch", &batch));
  check(shp_dim_parse(scope, "2*batch + 1", &e));
  int64_t lo, hi;
  check(shp_dim_bounds(e, &lo, &hi));
  char text[64];
  size_t len;
  check(shp_dim_to_string(e, text, sizeof text, &len));
  printf("%s is in [%lld, %lld]\n", text, (long long)lo, (long long)hi); /* [257, 2049] */
  expect_str("the text of 2*batch + 1", text, "2*batch + 1");
  expect_int("the text's length", (long long)len, 11);
  expect_int("lower bound of 2*batch + 1", lo, 257);
  expect_int("upper bound of 2*batch + 1", hi, 2049);

  const shp_dim_t *lhs, *seq;
  shp_truth_t t;
  check(shp_dim_parse(scope, "8*floordiv(seq, 8)", &lhs));
  check(shp_dim_parse(scope, "seq", &seq));
  check(shp_dim_compare(lhs, SHP_CMP_EQ, seq, &t));
  printf("8*floordiv(seq, 8) == seq: %s\n", t == SHP_TRUE    ? "TRUE"
                                            : t == SHP_FALSE ? "FALSE"
                                                             : "UNKNOWN");
  expect_int("8*floordiv(seq, 8) == seq (SHP_TRUE = 1)", t, SHP_TRUE);

  /* Solve the variables from concrete shapes; a bad shape gets a precise message. */
  const char* specs[] = {"batch, seq", "seq, 2*seq + 1"};
  const int64_t x[] = {256, 64}, y[] = {64, 129};
  const int64_t* shapes[] = {x, y};
  const size_t ranks[] = {2, 2};
  shp_bindings_t* b;
  check(shp_scope_solve(scope, 2, specs, shapes, ranks, &b));
  for (size_t i = 0; i < shp_bindings_count(b); ++i) {
    printf("%s = %lld\n", shp_bindings_name(b, i), (long long)shp_bindings_value(b, i));
  }
  expect_int("the number of solved variables", (long long)shp_bindings_count(b), 2);
  expect_str("variable 0", shp_bindings_name(b, 0), "batch");
  expect_int("batch", shp_bindings_value(b, 0), 256);
  expect_str("variable 1", shp_bindings_name(b, 1), "seq");
  expect_int("seq", shp_bindings_value(b, 1), 64);
  shp_bindings_destroy(b);
  const int64_t bad[] = {256, 60};
  const int64_t* bad_shapes[] = {bad, y};
  shp_error_t* err = shp_scope_solve(scope, 2, specs, bad_shapes, ranks, &b);
  printf("%s\n", shp_error_message(err));
  expect_int("the error code of the bad shapes", err ? (long long)shp_error_code(err) : 0,
             SHP_SHAPE_MISMATCH);
  expect_contains(
      "the error message of the bad shapes", shp_error_message(err),
      "Found inconsistency between dimension size args[1].shape[0] (= 64) and the specification "
      "'seq' (= 60)");
  shp_error_destroy(err);
  shp_scope_destroy(scope);
  if (mismatches) fprintf(stderr, "%d mismatch(es)\n", mismatches);
  return mismatches ? 1 : 0;
}
