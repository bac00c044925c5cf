/* The C reference of the cross-language test (see MLP_CONTRACT.md):
 *   mlp_ref export OUT.shpoly          traces the contract's MLP and serializes it
 *   mlp_ref run FILE BATCH OUT.bin     loads FILE, runs it at batch BATCH, writes "probs"
 *   mlp_ref grad-run FILE BATCH OUT.bin
 *                                      loads the derived grad program FILE, prints its
 *                                      signature, runs it at batch BATCH (defaults left out,
 *                                      then given by name: the same bits), writes every output */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapepoly/shapepoly.h"

static void check(shp_error_t* err, const char* what) {
  if (err) {
    fprintf(stderr, "mlp_ref: %s: %s\n", what, shp_error_message(err));
    shp_error_destroy(err);
    exit(1);
  }
}

static float weight(int64_t k, int64_t seed) {
  return (float)(((k * 7919 + seed * 104729) % 2001) - 1000) / 10000.0f;
}

static const shp_tensor_t* constant(shp_scope_t* scope, int64_t rows, int64_t cols, int rank,
                                    int64_t seed) {
  int64_t shape[2] = {rows, cols};
  int64_t n = rank == 2 ? rows * cols : rows;
  float* data = malloc(sizeof(float) * (size_t)n);
  for (int64_t k = 0; k < n; ++k) data[k] = weight(k, seed);
  const shp_tensor_t* t;
  check(
      shp_tensor_constant(scope, SHP_F32, shape, (size_t)rank, data, sizeof(float) * (size_t)n, &t),
      "constant");
  free(data);
  return t;
}

static const shp_tensor_t* layer(const shp_tensor_t* x, const shp_tensor_t* w,
                                 const shp_tensor_t* b, const shp_tensor_t* zero) {
  const shp_tensor_t *h, *r;
  check(shp_tensor_matmul(x, w, &h), "matmul");
  check(shp_tensor_binary(SHP_ADD, h, b, &h), "add");
  if (!zero) return h;
  check(shp_tensor_binary(SHP_MAX, h, zero, &r), "max");
  return r;
}

static int export_mlp(const char* path) {
  shp_scope_t* scope;
  check(shp_scope_create(NULL, 0, &scope), "scope");
  const shp_tensor_t* x;
  check(shp_tensor_input(scope, "x", SHP_F32, "batch, 64", &x), "input");
  const shp_tensor_t* w1 = constant(scope, 64, 32, 2, 1);
  const shp_tensor_t* b1 = constant(scope, 32, 0, 1, 2);
  const shp_tensor_t* w2 = constant(scope, 32, 32, 2, 3);
  const shp_tensor_t* b2 = constant(scope, 32, 0, 1, 4);
  const shp_tensor_t* w3 = constant(scope, 32, 10, 2, 5);
  const shp_tensor_t* b3 = constant(scope, 10, 0, 1, 6);
  const float zero_value = 0.0f;
  const shp_tensor_t* zero;
  check(shp_tensor_constant(scope, SHP_F32, NULL, 0, &zero_value, sizeof zero_value, &zero),
        "zero");
  const shp_tensor_t* h1 = layer(x, w1, b1, zero);
  const shp_tensor_t* h2 = layer(h1, w2, b2, zero);
  const shp_tensor_t* logits = layer(h2, w3, b3, NULL);
  const shp_tensor_t* probs;
  check(shp_tensor_softmax(logits, 1, &probs), "softmax");
  const char* names[] = {"probs"};
  shp_program_t* program;
  check(shp_program_create(scope, &x, 1, &probs, names, 1, &program), "program");
  shp_scope_destroy(scope); /* the program is independent of its scope */
  shp_buffer_t* buffer;
  check(shp_program_serialize(program, &buffer), "serialize");
  FILE* f = fopen(path, "wb");
  if (!f ||
      fwrite(shp_buffer_data(buffer), 1, shp_buffer_size(buffer), f) != shp_buffer_size(buffer)) {
    fprintf(stderr, "mlp_ref: cannot write %s\n", path);
    return 1;
  }
  fclose(f);
  shp_buffer_destroy(buffer);
  shp_program_destroy(program);
  return 0;
}

static shp_program_t* load(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "mlp_ref: cannot read %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = malloc((size_t)size);
  if (fread(bytes, 1, (size_t)size, f) != (size_t)size) exit(1);
  fclose(f);
  shp_program_t* program;
  check(shp_program_load(bytes, (size_t)size, &program), "load");
  free(bytes);
  return program;
}

static int run_mlp(const char* path, int64_t batch, const char* out_path) {
  shp_program_t* program = load(path);
  shp_runtime_t* runtime;
  check(shp_runtime_create(program, NULL, &runtime), "runtime");
  shp_program_destroy(program); /* the runtime keeps it alive */
  int64_t shape[2] = {batch, 64};
  size_t n = (size_t)(batch * 64);
  float* x = malloc(sizeof(float) * n);
  for (size_t k = 0; k < n; ++k) x[k] = (float)((((int64_t)k * 31 + 7) % 17) - 8) / 8.0f;
  shp_array_t* input;
  check(shp_array_wrap(SHP_F32, shape, 2, x, sizeof(float) * n, &input), "wrap");
  const char* names[] = {"x"};
  shp_array_t* output;
  check(shp_runtime_run(runtime, names, (const shp_array_t* const*)&input, 1, &output, 1), "run");
  size_t out_n = (size_t)(batch * 10);
  FILE* o = fopen(out_path, "wb");
  if (!o || fwrite(shp_array_data(output), sizeof(float), out_n, o) != out_n) return 1;
  fclose(o);
  shp_array_destroy(output);
  shp_array_destroy(input);
  free(x);
  shp_runtime_destroy(runtime);
  return 0;
}

static const char* input_role(shp_input_role_t r) {
  switch (r) {
    case SHP_INPUT_DATA:
      return "data";
    case SHP_INPUT_DIM:
      return "dim";
    case SHP_INPUT_PARAMETER:
      return "parameter";
    case SHP_INPUT_TANGENT:
      return "tangent";
    case SHP_INPUT_COTANGENT:
      return "cotangent";
  }
  return "unknown";
}

static const char* output_role(shp_output_role_t r) {
  switch (r) {
    case SHP_OUTPUT_PRIMAL:
      return "primal";
    case SHP_OUTPUT_TANGENT:
      return "tangent";
    case SHP_OUTPUT_GRAD:
      return "grad";
  }
  return "unknown";
}

/* Runs the derived grad program at `batch` with "x" and "labels" by name; with
 * `give_defaults`, every input with a default is also given by name, as a copy of its
 * default. Returns the outputs (num_outputs arrays, owned by the caller). */
static shp_array_t** run_grad_once(shp_runtime_t* runtime, const shp_program_t* program,
                                   int64_t batch, int give_defaults) {
  size_t n_in = shp_program_input_count(program);
  const char** names = malloc(sizeof(char*) * (n_in + 2));
  shp_array_t** inputs = malloc(sizeof(shp_array_t*) * (n_in + 2));
  size_t n = 0;
  int64_t x_shape[2] = {batch, 64};
  float* x = malloc(sizeof(float) * (size_t)(batch * 64));
  for (int64_t k = 0; k < batch * 64; ++k) x[k] = (float)(((k * 31 + 7) % 17) - 8) / 8.0f;
  check(shp_array_wrap(SHP_F32, x_shape, 2, x, sizeof(float) * (size_t)(batch * 64), &inputs[n]),
        "wrap x");
  names[n++] = "x";
  int64_t labels_shape[2] = {batch, 10};
  float* labels = malloc(sizeof(float) * (size_t)(batch * 10));
  for (int64_t k = 0; k < batch * 10; ++k)
    labels[k] = k % 10 == ((k / 10) * 3 + 1) % 10 ? 1.0f : 0.0f;
  check(shp_array_wrap(SHP_F32, labels_shape, 2, labels, sizeof(float) * (size_t)(batch * 10),
                       &inputs[n]),
        "wrap labels");
  names[n++] = "labels";
  for (size_t i = 0; give_defaults && i < n_in; ++i) {
    if (!shp_program_input_has_default(program, i)) continue;
    check(shp_program_input_default(program, i, &inputs[n]), "input default");
    names[n++] = shp_program_input_name(program, i);
  }
  size_t n_out = shp_program_output_count(program);
  shp_array_t** outputs = malloc(sizeof(shp_array_t*) * n_out);
  check(shp_runtime_run(runtime, names, (const shp_array_t* const*)inputs, n, outputs, n_out),
        "run");
  for (size_t k = 0; k < n; ++k) shp_array_destroy(inputs[k]);
  free(x);
  free(labels);
  free(inputs);
  free(names);
  return outputs;
}

static int run_grad(const char* path, int64_t batch, const char* out_path) {
  shp_program_t* program = load(path);
  for (size_t i = 0; i < shp_program_input_count(program); ++i) {
    printf("input %s %s%s\n", shp_program_input_name(program, i),
           input_role(shp_program_input_role(program, i)),
           shp_program_input_has_default(program, i) ? " default" : "");
  }
  size_t n_out = shp_program_output_count(program);
  for (size_t i = 0; i < n_out; ++i) {
    printf("output %s %s\n", shp_program_output_name(program, i),
           output_role(shp_program_output_role(program, i)));
  }
  shp_runtime_t* runtime;
  check(shp_runtime_create(program, NULL, &runtime), "runtime");
  shp_array_t** plain = run_grad_once(runtime, program, batch, 0);
  shp_array_t** given = run_grad_once(runtime, program, batch, 1);
  FILE* o = fopen(out_path, "wb");
  if (!o) return 1;
  for (size_t i = 0; i < n_out; ++i) {
    size_t nbytes = shp_array_nbytes(plain[i]);
    if (nbytes != shp_array_nbytes(given[i]) ||
        memcmp(shp_array_data(plain[i]), shp_array_data(given[i]), nbytes) != 0) {
      fprintf(stderr, "mlp_ref: giving the defaults by name changed output %s\n",
              shp_program_output_name(program, i));
      return 1;
    }
    if (fwrite(shp_array_data(plain[i]), 1, nbytes, o) != nbytes) return 1;
    shp_array_destroy(plain[i]);
    shp_array_destroy(given[i]);
  }
  fclose(o);
  free(plain);
  free(given);
  shp_runtime_destroy(runtime);
  shp_program_destroy(program);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "export") == 0) return export_mlp(argv[2]);
  if (argc == 5 && strcmp(argv[1], "run") == 0) return run_mlp(argv[2], atoll(argv[3]), argv[4]);
  if (argc == 5 && strcmp(argv[1], "grad-run") == 0) {
    return run_grad(argv[2], atoll(argv[3]), argv[4]);
  }
  fprintf(stderr,
          "usage: mlp_ref export OUT.shpoly | mlp_ref run FILE.shpoly BATCH OUT.bin | "
          "mlp_ref grad-run FILE.shpoly BATCH OUT.bin\n");
  return 2;
}
