// shapepoly: command-line tool over the public C API.
//
//   shapepoly inspect FILE.shpoly
//       prints the program's listing (signature with symbolic shapes, variables,
//       constraints, assertions, operations).
//   shapepoly check FILE.shpoly --shape NAME=D0,D1,... [--shape ...]
//       tells whether those input shapes are accepted; if so prints the variable values and
//       the output shapes, otherwise the exact error. A dimension input (which gives a
//       dimension variable) takes its value: --shape k=5. A scalar input: --shape s=
//
// Exit status: 0 accepted / printed, 1 rejected or the file is invalid, 2 usage error.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: shapepoly inspect FILE.shpoly\n"
               "       shapepoly check FILE.shpoly --shape NAME=D0,D1,... [--shape ...]\n");
  return 2;
}

// Prints the error (code and message), destroys it, returns 1.
int Fail(shp_error_t* e, const char* what) {
  std::fprintf(stderr, "%s: %s\n  %s\n", what, shp_code_string(shp_error_code(e)), shp_error_message(e));
  shp_error_destroy(e);
  return 1;
}

shp_program_t* LoadFile(const char* path, int* status) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "shapepoly: cannot open '%s'\n", path);
    *status = 1;
    return nullptr;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  shp_program_t* p = nullptr;
  shp_error_t* e = shp_program_load(bytes.data(), bytes.size(), &p);
  if (e) {
    *status = Fail(e, (std::string("shapepoly: cannot load '") + path + "'").c_str());
    return nullptr;
  }
  return p;
}

bool ParseDims(const std::string& text, std::vector<int64_t>* out) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) return false;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (errno || *end != '\0') return false;
    out->push_back(static_cast<int64_t>(v));
  }
  return true;
}

std::string Join(const int64_t* d, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + (n == 1 ? ",)" : ")");
}

int Inspect(const char* path) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  size_t len = 0;
  shp_error_t* e = shp_program_to_text(p, nullptr, 0, &len);
  if (e) return Fail(e, "shapepoly");
  std::string text(len + 1, '\0');
  e = shp_program_to_text(p, &text[0], text.size(), &len);
  if (e) return Fail(e, "shapepoly");
  text.resize(len);
  std::fputs(text.c_str(), stdout);
  shp_program_destroy(p);
  return 0;
}

int Check(const char* path, const std::vector<std::string>& specs) {
  int status = 0;
  shp_program_t* p = LoadFile(path, &status);
  if (!p) return status;
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> dims;
  for (const std::string& s : specs) {
    size_t eq = s.find('=');
    std::vector<int64_t> d;
    if (eq == std::string::npos || eq == 0 || !ParseDims(s.substr(eq + 1), &d)) {
      std::fprintf(stderr, "shapepoly: bad --shape '%s' (expected NAME=D0,D1,...)\n", s.c_str());
      shp_program_destroy(p);
      return 2;
    }
    names.push_back(s.substr(0, eq));
    dims.push_back(d);
  }
  std::vector<const char*> name_ptrs;
  std::vector<const int64_t*> shape_ptrs;
  std::vector<size_t> ranks;
  for (size_t k = 0; k < names.size(); ++k) {
    bool is_dim = false;
    for (size_t i = 0; i < shp_program_input_count(p); ++i) {
      if (names[k] == shp_program_input_name(p, i)) is_dim = shp_program_input_role(p, i) == SHP_INPUT_DIM;
    }
    if (is_dim && dims[k].size() != 1) {
      std::fprintf(stderr, "shapepoly: input '%s' gives a dimension variable: pass one value (--shape %s=N)\n",
                   names[k].c_str(), names[k].c_str());
      shp_program_destroy(p);
      return 2;
    }
    name_ptrs.push_back(names[k].c_str());
    shape_ptrs.push_back(dims[k].data());
    ranks.push_back(is_dim ? 0 : dims[k].size());
  }
  shp_bindings_t* b = nullptr;
  shp_error_t* e = shp_program_check_shapes(p, name_ptrs.data(), shape_ptrs.data(), ranks.data(), names.size(), &b);
  if (e) {
    std::printf("rejected\n");
    int rc = Fail(e, "shapepoly check");
    shp_program_destroy(p);
    return rc;
  }
  std::printf("accepted\n");
  if (shp_bindings_count(b)) std::printf("variables:\n");
  for (size_t i = 0; i < shp_bindings_count(b); ++i) {
    std::printf("  %s = %lld\n", shp_bindings_name(b, i), static_cast<long long>(shp_bindings_value(b, i)));
  }
  std::printf("outputs:\n");
  for (size_t i = 0; i < shp_program_output_count(p); ++i) {
    int64_t d[64];
    size_t rank = 0;
    e = shp_program_output_shape(p, i, b, d, 64, &rank);
    if (e) {
      int rc = Fail(e, "shapepoly check");
      shp_bindings_destroy(b);
      shp_program_destroy(p);
      return rc;
    }
    static const char* kDtypes[] = {"f32", "f64", "i32", "i64", "bool"};
    int dt = shp_program_output_dtype(p, i);
    std::printf("  %s: %s%s\n", shp_program_output_name(p, i), dt >= 0 && dt < 5 ? kDtypes[dt] : "?",
                Join(d, rank < 64 ? rank : 64).c_str());
  }
  shp_bindings_destroy(b);
  shp_program_destroy(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  std::string cmd = argv[1];
  if (cmd == "inspect" && argc == 3) return Inspect(argv[2]);
  if (cmd == "check") {
    std::vector<std::string> specs;
    for (int i = 3; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--shape" && i + 1 < argc) {
        specs.push_back(argv[++i]);
      } else if (a.rfind("--shape=", 0) == 0) {
        specs.push_back(a.substr(8));
      } else {
        return Usage();
      }
    }
    return Check(argv[2], specs);
  }
  return Usage();
}
