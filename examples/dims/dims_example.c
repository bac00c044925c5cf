/* The symbolic dimension engine from C: the README's example, compiled and run by the tests. */
#include <stdio.h>
#include <stdlib.h>

#include "shapepoly/shapepoly.h"

/* Prints the error (if any), destroys it, and exits. */
static void check(shp_error_t* err) {
  if (err) {
    fprintf(stderr, "error %d: %s\n", (int)shp_error_code(err), shp_error_message(err));
    shp_error_destroy(err);
    exit(1);
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

  const shp_dim_t *lhs, *seq;
  shp_truth_t t;
  check(shp_dim_parse(scope, "8*floordiv(seq, 8)", &lhs));
  check(shp_dim_parse(scope, "seq", &seq));
  check(shp_dim_compare(lhs, SHP_CMP_EQ, seq, &t));
  printf("8*floordiv(seq, 8) == seq: %s\n", t == SHP_TRUE ? "TRUE" : t == SHP_FALSE ? "FALSE" : "UNKNOWN");

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
  shp_bindings_destroy(b);
  const int64_t bad[] = {256, 60};
  const int64_t* bad_shapes[] = {bad, y};
  shp_error_t* err = shp_scope_solve(scope, 2, specs, bad_shapes, ranks, &b);
  printf("%s\n", shp_error_message(err));
  shp_error_destroy(err);
  shp_scope_destroy(scope);
  return 0;
}
