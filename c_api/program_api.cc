// C API of programs: thin thunks over cc/program.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "cc/base/error.h"
#include "cc/program/program.h"
#include "shapepoly/shapepoly.h"

using shp::Code;
using shp::Error;
using shp::capi::TraceOf;
using shp::capi::Unwrap;
using shp::capi::WriteString;
namespace program = shp::program;
namespace trace = shp::trace;

// Options of shp_program_load_with_options.
struct shp_load_options {
  shp::program::LoadOptions options;
};

namespace {

const program::Program& P(const shp_program_t* p) {
  SHP_REQUIRE_ARG(p, "program");
  return *p->program;
}

void CheckIndex(size_t i, size_t n, const char* what) {
  if (i >= n) {
    throw Error(Code::kInvalidArgument, std::string(what) + " index " + std::to_string(i) +
                                            " is out of range (" + std::to_string(n) + " " + what +
                                            "s)");
  }
}

// An OS error on `path`: SHP_NOT_FOUND for a missing file, else SHP_INVALID_ARGUMENT; the
// message names the path and the OS reason.
[[noreturn]] void FileError(const std::string& what, const char* path, int err) {
  throw Error(err == ENOENT ? Code::kNotFound : Code::kInvalidArgument,
              "cannot " + what + " '" + path + "': " + std::strerror(err));
}

std::string ReadFile(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) FileError("open", path, errno);
  std::string bytes;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
    // The format's own limit (2 GiB): a larger file is refused before it is read whole.
    if (bytes.size() + n >= (size_t{1} << 31)) {
      std::fclose(f);
      throw Error(Code::kInvalidProgram, "invalid program: '" + std::string(path) +
                                             "' is larger than 2 GiB, the format's limit");
    }
    bytes.append(chunk, n);
  }
  const int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err != 0) FileError("read", path, err);
  return bytes;
}

// Writes next to `path` first and renames, so that a failed save leaves any old file intact.
void WriteFile(const char* path, const std::string& bytes) {
  const std::string tmp = std::string(path) + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) FileError("write", path, errno);
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int err = wrote ? 0 : errno;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path) != 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    FileError("write", path, err);
  }
}

const char* StringAt(const std::vector<std::string>& v, size_t i) {
  return i < v.size() ? v[i].c_str() : nullptr;
}

}  // namespace

extern "C" {

shp_error_t* shp_program_create(shp_scope_t* scope, const shp_tensor_t* const* inputs,
                                size_t num_inputs, const shp_tensor_t* const* outputs,
                                const char* const* output_names, size_t num_outputs,
                                shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(scope, "scope");
  SHP_REQUIRE_ARG(program_out, "program_out");
  if (num_inputs > 0) SHP_REQUIRE_ARG(inputs, "inputs");
  if (num_outputs > 0) {
    SHP_REQUIRE_ARG(outputs, "outputs");
    SHP_REQUIRE_ARG(output_names, "output_names");
  }
  std::vector<const trace::Tensor*> ins, outs;
  std::vector<std::string> names;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!inputs[i])
      throw Error(Code::kInvalidArgument, "inputs[" + std::to_string(i) + "] is NULL");
    ins.push_back(Unwrap(inputs[i]));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!outputs[i])
      throw Error(Code::kInvalidArgument, "outputs[" + std::to_string(i) + "] is NULL");
    if (!output_names[i])
      throw Error(Code::kInvalidArgument, "output_names[" + std::to_string(i) + "] is NULL");
    outs.push_back(Unwrap(outputs[i]));
    names.emplace_back(output_names[i]);
  }
  auto handle = std::make_unique<shp_program>();
  handle->program = program::Program::FromTrace(*TraceOf(scope), ins, outs, names);
  *program_out = handle.release();
  return nullptr;
  SHP_API_END
}

void shp_program_destroy(shp_program_t* program) { delete program; }

size_t shp_program_input_count(const shp_program_t* p) {
  return p ? p->program->inputs().size() : 0;
}

const char* shp_program_input_name(const shp_program_t* p, size_t i) {
  return (p && i < p->program->inputs().size()) ? p->program->inputs()[i].name.c_str() : nullptr;
}

shp_dtype_t shp_program_input_dtype(const shp_program_t* p, size_t i) {
  if (!p || i >= p->program->inputs().size()) return static_cast<shp_dtype_t>(-1);
  return static_cast<shp_dtype_t>(p->program->inputs()[i].type.dtype);
}

shp_input_role_t shp_program_input_role(const shp_program_t* p, size_t i) {
  if (!p || i >= p->program->inputs().size()) return static_cast<shp_input_role_t>(-1);
  return static_cast<shp_input_role_t>(p->program->inputs()[i].role);
}

shp_error_t* shp_program_input_shape_string(const shp_program_t* p, size_t i, char* buf, size_t cap,
                                            size_t* len_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  CheckIndex(i, prog.inputs().size(), "input");
  WriteString(prog.input_shape_string(i), buf, cap, len_out);
  return nullptr;
  SHP_API_END
}

size_t shp_program_output_count(const shp_program_t* p) {
  return p ? p->program->outputs().size() : 0;
}

const char* shp_program_output_name(const shp_program_t* p, size_t i) {
  return (p && i < p->program->outputs().size()) ? p->program->outputs()[i].name.c_str() : nullptr;
}

shp_dtype_t shp_program_output_dtype(const shp_program_t* p, size_t i) {
  if (!p || i >= p->program->outputs().size()) return static_cast<shp_dtype_t>(-1);
  return static_cast<shp_dtype_t>(p->program->value_type(p->program->outputs()[i].value).dtype);
}

shp_error_t* shp_program_output_shape_string(const shp_program_t* p, size_t i, char* buf,
                                             size_t cap, size_t* len_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  CheckIndex(i, prog.outputs().size(), "output");
  WriteString(prog.output_shape_string(i), buf, cap, len_out);
  return nullptr;
  SHP_API_END
}

size_t shp_program_variable_count(const shp_program_t* p) {
  return p ? p->program->variable_names().size() : 0;
}
const char* shp_program_variable_name(const shp_program_t* p, size_t i) {
  return p ? StringAt(p->program->variable_names(), i) : nullptr;
}
bool shp_program_variable_is_unbacked(const shp_program_t* p, size_t i) {
  return p && p->program->variable_is_unbacked(i);
}
const char* shp_program_variable_origin(const shp_program_t* p, size_t i) {
  if (!shp_program_variable_is_unbacked(p, i)) return nullptr;
  return p->program->variable_origin(i).c_str();
}
shp_error_t* shp_program_variable_bounds(const shp_program_t* p, size_t i, int64_t* lo_out,
                                         int64_t* hi_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(lo_out, "lo_out");
  SHP_REQUIRE_ARG(hi_out, "hi_out");
  CheckIndex(i, prog.variable_names().size(), "variable");
  const std::string& name = prog.variable_names()[i];
  shp::dim::Interval b = prog.WithScope([&](shp::dim::Scope& s) { return s.Bounds(s.Var(name)); });
  *lo_out = b.lo;
  *hi_out = b.hi;
  return nullptr;
  SHP_API_END
}
size_t shp_program_constraint_count(const shp_program_t* p) {
  return p ? p->program->constraint_texts().size() : 0;
}
const char* shp_program_constraint_text(const shp_program_t* p, size_t i) {
  return p ? StringAt(p->program->constraint_texts(), i) : nullptr;
}
size_t shp_program_assertion_count(const shp_program_t* p) {
  return p ? p->program->assertion_texts().size() : 0;
}
const char* shp_program_assertion_text(const shp_program_t* p, size_t i) {
  return p ? StringAt(p->program->assertion_texts(), i) : nullptr;
}
const char* shp_program_assertion_message(const shp_program_t* p, size_t i) {
  return p ? StringAt(p->program->assertion_messages(), i) : nullptr;
}

size_t shp_program_guard_count(const shp_program_t* p) {
  return p ? p->program->guard_texts().size() : 0;
}
const char* shp_program_guard_text(const shp_program_t* p, size_t i) {
  return p ? StringAt(p->program->guard_texts(), i) : nullptr;
}
const char* shp_program_guard_message(const shp_program_t* p, size_t i) {
  return p ? StringAt(p->program->guard_messages(), i) : nullptr;
}
const char* shp_program_guard_origin(const shp_program_t* p, size_t i) {
  return p ? StringAt(p->program->guard_origins(), i) : nullptr;
}

shp_error_t* shp_program_with_metadata(const shp_program_t* p, const char* key, const char* value,
                                       shp_program_t** program_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(key, "key");
  SHP_REQUIRE_ARG(program_out, "program_out");
  const std::string v = value != nullptr ? std::string(value) : std::string();
  std::unique_ptr<shp_program_t> h(new shp_program_t);
  h->program = prog.WithMetadata(key, value != nullptr ? &v : nullptr);
  *program_out = h.release();
  return nullptr;
  SHP_API_END
}
size_t shp_program_metadata_count(const shp_program_t* p) {
  return p ? p->program->metadata().size() : 0;
}
const char* shp_program_metadata_key(const shp_program_t* p, size_t i) {
  if (p == nullptr || i >= p->program->metadata().size()) return nullptr;
  return p->program->metadata()[i].first.c_str();
}
const char* shp_program_metadata_value(const shp_program_t* p, const char* key) {
  if (p == nullptr || key == nullptr) return nullptr;
  const std::string* v = p->program->metadata_value(key);
  return v != nullptr ? v->c_str() : nullptr;
}

shp_error_t* shp_program_create_variants(const shp_program_t* const* variants, size_t num_variants,
                                         shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(program_out, "program_out");
  if (num_variants > 0) SHP_REQUIRE_ARG(variants, "variants");
  std::vector<std::shared_ptr<const program::Program>> list;
  for (size_t k = 0; k < num_variants; ++k) {
    if (!variants[k]) {
      throw Error(Code::kInvalidArgument, "variants[" + std::to_string(k) + "] is NULL");
    }
    list.push_back(variants[k]->program);
  }
  std::unique_ptr<shp_program_t> h(new shp_program_t);
  h->program = program::Program::CreateVariants(list);
  *program_out = h.release();
  return nullptr;
  SHP_API_END
}

size_t shp_program_variant_count(const shp_program_t* p) {
  return p ? p->program->num_variants() : 0;
}
size_t shp_program_variant_guard_count(const shp_program_t* p, size_t v) {
  if (!p || v >= p->program->num_variants()) return 0;
  return p->program->variant(v).guard_texts().size();
}
const char* shp_program_variant_guard_text(const shp_program_t* p, size_t v, size_t i) {
  if (!p || v >= p->program->num_variants()) return nullptr;
  return StringAt(p->program->variant(v).guard_texts(), i);
}
const char* shp_program_variant_guard_message(const shp_program_t* p, size_t v, size_t i) {
  if (!p || v >= p->program->num_variants()) return nullptr;
  return StringAt(p->program->variant(v).guard_messages(), i);
}
shp_truth_t shp_program_variants_exhaustive(const shp_program_t* p) {
  return p ? static_cast<shp_truth_t>(p->program->variants_exhaustive()) : SHP_UNKNOWN;
}
shp_error_t* shp_program_variants_counterexample(const shp_program_t* p, char* buf, size_t cap,
                                                 size_t* len_out) {
  SHP_API_BEGIN
  WriteString(P(p).variants_counterexample(), buf, cap, len_out);
  return nullptr;
  SHP_API_END
}
int64_t shp_bindings_variant(const shp_bindings_t* b) { return b ? b->variant : -1; }

shp_error_t* shp_program_to_text(const shp_program_t* p, char* buf, size_t cap, size_t* len_out) {
  SHP_API_BEGIN
  WriteString(P(p).text(), buf, cap, len_out);
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_check_shapes(const shp_program_t* p, const char* const* input_names,
                                      const int64_t* const* shapes, const size_t* ranks,
                                      size_t num_inputs, shp_bindings_t** bindings_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(bindings_out, "bindings_out");
  if (num_inputs > 0) {
    SHP_REQUIRE_ARG(input_names, "input_names");
    SHP_REQUIRE_ARG(shapes, "shapes");
    SHP_REQUIRE_ARG(ranks, "ranks");
  }
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> dims;
  for (size_t k = 0; k < num_inputs; ++k) {
    if (!input_names[k])
      throw Error(Code::kInvalidArgument, "input_names[" + std::to_string(k) + "] is NULL");
    names.emplace_back(input_names[k]);
    bool is_dim = false;
    for (const program::Input& in : prog.inputs()) {
      if (in.name == names.back()) is_dim = in.role == program::InputRole::kDim;
    }
    size_t n = is_dim ? 1 : ranks[k];
    if (is_dim && ranks[k] != 0) {
      throw Error(Code::kInvalidArgument,
                  "input '" + names.back() +
                      "' gives a dimension variable: its rank must be 0 and shapes[" +
                      std::to_string(k) + "] must point to its value");
    }
    if (n > 0 && !shapes[k])
      throw Error(Code::kInvalidArgument, "shapes[" + std::to_string(k) + "] is NULL");
    dims.emplace_back(shapes[k], shapes[k] + n);
  }
  program::ShapeCheck c = prog.CheckShapes(names, dims);
  auto b = std::make_unique<shp_bindings>();
  b->names = c.var_names;
  b->values = c.var_values;
  b->variant = c.variant;
  *bindings_out = b.release();
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_output_shape(const shp_program_t* p, size_t i,
                                      const shp_bindings_t* bindings, int64_t* dims_out, size_t cap,
                                      size_t* rank_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(bindings, "bindings");
  SHP_REQUIRE_ARG(rank_out, "rank_out");
  if (cap > 0) SHP_REQUIRE_ARG(dims_out, "dims_out");
  std::vector<int64_t> sh = prog.OutputShape(i, bindings->names, bindings->values,
                                             static_cast<int32_t>(bindings->variant));
  for (size_t k = 0; k < sh.size() && k < cap; ++k) dims_out[k] = sh[k];
  *rank_out = sh.size();
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_serialize(const shp_program_t* p, shp_buffer_t** buffer_out) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(buffer_out, "buffer_out");
  auto b = std::make_unique<shp_buffer>();
  b->bytes = prog.Serialize();
  *buffer_out = b.release();
  return nullptr;
  SHP_API_END
}

const void* shp_buffer_data(const shp_buffer_t* b) { return b ? b->bytes.data() : nullptr; }
size_t shp_buffer_size(const shp_buffer_t* b) { return b ? b->bytes.size() : 0; }
void shp_buffer_destroy(shp_buffer_t* b) { delete b; }

shp_error_t* shp_load_options_create(shp_load_options_t** options_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options_out, "options_out");
  *options_out = new shp_load_options;
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_load_options_set_max_bytes(shp_load_options_t* options, size_t max_bytes) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(options, "options");
  options->options.max_bytes = max_bytes;
  return nullptr;
  SHP_API_END
}

void shp_load_options_destroy(shp_load_options_t* options) { delete options; }

shp_error_t* shp_program_load(const void* data, size_t size, shp_program_t** program_out) {
  return shp_program_load_with_options(data, size, nullptr, program_out);
}

shp_error_t* shp_program_load_with_options(const void* data, size_t size,
                                           const shp_load_options_t* options,
                                           shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(data, "data");
  SHP_REQUIRE_ARG(program_out, "program_out");
  auto handle = std::make_unique<shp_program>();
  handle->program =
      program::Program::Load(data, size, options ? options->options : program::LoadOptions());
  *program_out = handle.release();
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_load_file(const char* path, shp_program_t** program_out) {
  SHP_API_BEGIN
  SHP_REQUIRE_ARG(path, "path");
  SHP_REQUIRE_ARG(program_out, "program_out");
  const std::string bytes = ReadFile(path);
  auto handle = std::make_unique<shp_program>();
  try {
    handle->program = program::Program::Load(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(e.code(), "'" + std::string(path) + "': " + e.message());
  }
  *program_out = handle.release();
  return nullptr;
  SHP_API_END
}

shp_error_t* shp_program_save_file(const shp_program_t* p, const char* path) {
  SHP_API_BEGIN
  const program::Program& prog = P(p);
  SHP_REQUIRE_ARG(path, "path");
  WriteFile(path, prog.Serialize());
  return nullptr;
  SHP_API_END
}

int32_t shp_program_schema_version(void) { return static_cast<int32_t>(program::kSchemaVersion); }

}  // extern "C"
