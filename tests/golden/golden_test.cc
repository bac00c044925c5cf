// Every golden program (tests/golden/*.shpoly, written by released schema versions) loads
// through the C API, serializes back to exactly the same bytes, and computes on its stored
// inputs the outputs stored beside it (<stem>.<case>.in|out.<name>.npy, computed by the numpy
// oracle; see README.md).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

const char kDir[] = "tests/golden";

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> FilesEndingWith(const std::string& suffix) {
  std::vector<std::string> out;
  DIR* d = opendir(kDir);
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (EndsWith(n, suffix)) out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> GoldenFiles() { return FilesEndingWith(".shpoly"); }

std::string Read(const std::string& name) {
  std::ifstream in(std::string(kDir) + "/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

shp_program_t* Load(const std::string& bytes) {
  shp_program_t* p = nullptr;
  shp_error_t* e = shp_program_load(bytes.data(), bytes.size(), &p);
  EXPECT_EQ(e, nullptr) << shp_error_message(e);
  shp_error_destroy(e);
  return p;
}

std::string Text(const shp_program_t* p) {
  size_t len = 0;
  shp_error_destroy(shp_program_to_text(p, nullptr, 0, &len));
  std::string t(len + 1, '\0');
  shp_error_destroy(shp_program_to_text(p, &t[0], t.size(), &len));
  t.resize(len);
  return t;
}

// The released files: deleting or renaming one fails here (files are only ever added).
const char* const kReleased[] = {
    "binary_bool_v1.shpoly",
    "binary_f32_v1.shpoly",
    "binary_f64_v1.shpoly",
    "binary_i32_v1.shpoly",
    "binary_i64_v1.shpoly",
    "constraints_v1.shpoly",
    "convert_v1.shpoly",
    "dot_general_v1.shpoly",
    "empty_v1.shpoly",
    "dtype_bool_v1.shpoly",
    "dtype_f32_v1.shpoly",
    "dtype_f64_v1.shpoly",
    "dtype_i32_v1.shpoly",
    "dtype_i64_v1.shpoly",
    "mlp_v1.shpoly",
    "nn_v1.shpoly",
    "reductions_v1.shpoly",
    "reverse_v1.shpoly",
    "scalars_v1.shpoly",
    "scatter_add_v2.shpoly",
    "shape_ops_v1.shpoly",
    "transpose_v1.shpoly",
    "unary_f32_v1.shpoly",
    "unary_f64_v1.shpoly",
    "unary_int_v1.shpoly",
    "grad_v2.shpoly",
    "mlp_params_v2.shpoly",
    "row_softmax_variants_v3.shpoly",
    "conv_v4.shpoly",
    "pool_v4.shpoly",
    "data_dependent_v5.shpoly",
    "trilu_v6.shpoly",
    "trig_v7.shpoly",
    "topk_v8.shpoly",
    "narrow_v9.shpoly",
    "control_flow_v10.shpoly",
    "jvp_defaults_v11.shpoly",
    "take_along_axis_v12.shpoly",
    "cond_sizes_v13.shpoly",
    "metadata_v14.shpoly",
    "scatter_v15.shpoly",
};

TEST(Golden, EveryReleasedFileIsPresent) {
  std::vector<std::string> files = GoldenFiles();
  for (const char* f : kReleased) {
    EXPECT_TRUE(std::find(files.begin(), files.end(), f) != files.end()) << f << " is missing";
  }
}

TEST(Golden, EveryFileLoadsAndRoundTripsByteIdentically) {
  std::vector<std::string> files = GoldenFiles();
  ASSERT_GE(files.size(), sizeof kReleased / sizeof kReleased[0]);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    std::string bytes = Read(f);
    shp_program_t* p = Load(bytes);
    ASSERT_NE(p, nullptr);
    shp_buffer_t* b = nullptr;
    ASSERT_EQ(shp_program_serialize(p, &b), nullptr);
    EXPECT_EQ(std::string(static_cast<const char*>(shp_buffer_data(b)), shp_buffer_size(b)), bytes);
    shp_buffer_destroy(b);
    shp_program_destroy(p);
  }
}

// ---- Stored inputs and expected outputs ----

// By shp_dtype_t (bf16 is never stored: numpy has no descr for it).
const char* const kDescr[] = {"<f4", "<f8", "<i4", "<i8", "|b1", "<f2", "<V2",
                              "|i1", "|u1", "<i2", "<u2", "<u4", "<u8"};
const size_t kElemSize[] = {4, 8, 4, 8, 1, 2, 2, 1, 1, 2, 2, 4, 8};
constexpr int kNumDescr = 13;

struct Npy {
  int dtype = -1;
  std::vector<int64_t> shape;
  std::string data;
};

// Reads what numpy's np.save writes for our five dtypes (format 1.0, C order); false with the
// reason otherwise, so that a damaged expectation fails loudly instead of comparing nothing.
bool ParseNpy(const std::string& bytes, Npy* out, std::string* why) {
  if (bytes.size() < 10 || bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) != 0) {
    *why = "not an .npy 1.0 file";
    return false;
  }
  size_t hlen = static_cast<unsigned char>(bytes[8]) |
                static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
  if (10 + hlen > bytes.size()) {
    *why = "truncated header";
    return false;
  }
  std::string h = bytes.substr(10, hlen);
  for (int d = 0; d < kNumDescr; ++d) {
    if (h.find(std::string("'descr': '") + kDescr[d] + "'") != std::string::npos) out->dtype = d;
  }
  size_t at = h.find("'shape': (");
  size_t close = at == std::string::npos ? at : h.find(')', at);
  if (out->dtype < 0 || h.find("'fortran_order': False") == std::string::npos ||
      close == std::string::npos) {
    *why = "unexpected header " + h;
    return false;
  }
  std::stringstream ss(h.substr(at + 10, close - at - 10));
  std::string item;
  size_t count = 1;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    out->shape.push_back(std::stoll(item));
    count *= static_cast<size_t>(out->shape.back());
  }
  out->data = bytes.substr(10 + hlen);
  if (out->data.size() != count * kElemSize[out->dtype]) {
    *why = "data has " + std::to_string(out->data.size()) + " bytes, the header says " +
           std::to_string(count * kElemSize[out->dtype]);
    return false;
  }
  return true;
}

Npy LoadNpy(const std::string& name) {
  Npy n;
  std::string why;
  EXPECT_TRUE(ParseNpy(Read(name), &n, &why)) << name << ": " << why;
  return n;
}

// Tolerances for floats (expected.py uses the same): |got - want| <= kAtol + kRtol * |want|.
// NaN matches NaN and infinities match exactly; integers and bools match exactly.
// By dtype: f32, f64, then f16 (index 5: one unit in the last place).
const double kRtol[] = {1e-5, 1e-12, 0, 0, 0, 0.0009765625};
const double kAtol[] = {1e-6, 1e-14, 0, 0, 0, 5.9604644775390625e-8};

// The value of an f16 bit pattern.
double HalfValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(mant | 0x400, exp - 25);
  if (exp == 31) v = mant ? NAN : INFINITY;
  return (h & 0x8000) ? -v : v;
}

double Element(int dtype, const char* p, size_t i) {
  switch (dtype) {
    case SHP_F32: {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case SHP_F64: {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      return v;
    }
    case SHP_F16: {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      return HalfValue(v);
    }
    default:
      return 0;
  }
}

// Compares `n` elements; returns how many differ and describes the first. `worst` receives
// the largest |got - want| / (atol + rtol * |want|) over the floats (1 is the limit).
size_t Mismatches(int dtype, const char* got, const char* want, size_t n, std::string* first,
                  double* worst) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    bool ok;
    std::string g, w;
    if (dtype == SHP_F32 || dtype == SHP_F64 || dtype == SHP_F16) {
      double a = Element(dtype, got, i), b = Element(dtype, want, i);
      double err = std::fabs(a - b), lim = kAtol[dtype] + kRtol[dtype] * std::fabs(b);
      ok = (std::isnan(a) && std::isnan(b)) || a == b ||
           (std::isfinite(a) && std::isfinite(b) && err <= lim);
      if (ok && a != b && !std::isnan(a)) *worst = std::max(*worst, err / lim);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", a);
      g = buf;
      std::snprintf(buf, sizeof buf, "%.17g", b);
      w = buf;
    } else {
      size_t k = kElemSize[dtype];
      ok = std::memcmp(got + k * i, want + k * i, k) == 0;
      int64_t a = 0, b = 0;
      if (dtype == SHP_I32) {
        int32_t x, y;
        std::memcpy(&x, got + 4 * i, 4);
        std::memcpy(&y, want + 4 * i, 4);
        a = x;
        b = y;
      } else if (dtype == SHP_I8 || dtype == SHP_I16) {  // sign-extended
        uint64_t x = 0, y = 0;
        std::memcpy(&x, got + k * i, k);
        std::memcpy(&y, want + k * i, k);
        a = static_cast<int64_t>(x << (64 - 8 * k)) >> (64 - 8 * k);
        b = static_cast<int64_t>(y << (64 - 8 * k)) >> (64 - 8 * k);
      } else {
        std::memcpy(&a, got + k * i, k);
        std::memcpy(&b, want + k * i, k);
      }
      g = std::to_string(a);
      w = std::to_string(b);
    }
    if (!ok && bad++ == 0)
      *first = "element " + std::to_string(i) + ": got " + g + ", expected " + w;
  }
  return bad;
}

TEST(Golden, ComparisonCatchesSmallChanges) {
  double worst = 0;
  std::string first;
  float f[] = {1.0f, -2.5f, NAN, INFINITY}, f2[] = {1.0f, -2.5f, NAN, INFINITY};
  EXPECT_EQ(Mismatches(SHP_F32, reinterpret_cast<char*>(f), reinterpret_cast<char*>(f2), 4, &first,
                       &worst),
            0u);
  f[1] = -2.5f * (1 + 3e-5f);  // beyond the f32 tolerance
  f[3] = -INFINITY;
  EXPECT_EQ(Mismatches(SHP_F32, reinterpret_cast<char*>(f), reinterpret_cast<char*>(f2), 4, &first,
                       &worst),
            2u);
  EXPECT_NE(first.find("element 1"), std::string::npos) << first;
  double d[] = {1.0 + 1e-11}, d2[] = {1.0};
  EXPECT_EQ(Mismatches(SHP_F64, reinterpret_cast<char*>(d), reinterpret_cast<char*>(d2), 1, &first,
                       &worst),
            1u);
  int64_t i[] = {5, 6}, i2[] = {5, 7};
  EXPECT_EQ(Mismatches(SHP_I64, reinterpret_cast<char*>(i), reinterpret_cast<char*>(i2), 2, &first,
                       &worst),
            1u);
  EXPECT_EQ(first, "element 1: got 6, expected 7");
}

// One case of a program: its stored inputs and expected outputs, by name.
struct Case {
  std::map<std::string, std::string> in, out;  // name -> file
};

// <stem>.<case>.<in|out>.<name>.npy, grouped by stem and case; a file that does not follow
// the convention is reported.
std::map<std::string, std::map<int, Case>> Cases() {
  std::map<std::string, std::map<int, Case>> all;
  std::vector<std::string> stems;
  for (const std::string& f : GoldenFiles()) stems.push_back(f.substr(0, f.size() - 7));
  for (const std::string& f : FilesEndingWith(".npy")) {
    bool placed = false;
    for (const std::string& stem : stems) {
      if (f.compare(0, stem.size() + 1, stem + ".") != 0) continue;
      std::string rest =
          f.substr(stem.size() + 1, f.size() - stem.size() - 5);  // <case>.<io>.<name>
      size_t dot = rest.find('.');
      if (dot == std::string::npos || dot == 0 || rest.find_first_not_of("0123456789") != dot)
        continue;
      int c = std::stoi(rest.substr(0, dot));
      std::string io = rest.substr(dot + 1);
      if (io.compare(0, 3, "in.") == 0 && io.size() > 3) {
        all[stem][c].in[io.substr(3)] = f;
      } else if (io.compare(0, 4, "out.") == 0 && io.size() > 4) {
        all[stem][c].out[io.substr(4)] = f;
      } else {
        continue;
      }
      placed = true;
    }
    EXPECT_TRUE(placed) << f
                        << " does not name a golden program, a case and in/out (see README.md)";
  }
  return all;
}

shp_runtime_t* Runtime(const shp_program_t* p, int threads) {
  shp_runtime_options_t* o = nullptr;
  EXPECT_EQ(shp_runtime_options_create(&o), nullptr);
  EXPECT_EQ(shp_runtime_options_set_num_threads(o, threads), nullptr);
  shp_runtime_t* rt = nullptr;
  shp_error_t* e = shp_runtime_create(p, o, &rt);
  EXPECT_EQ(e, nullptr) << shp_error_message(e);
  shp_error_destroy(e);
  shp_runtime_options_destroy(o);
  return rt;
}

// Every golden file has cases, each naming every input and output of the program exactly,
// except inputs with a default (schema version 2), which a case may leave out.
TEST(Golden, EveryProgramHasStoredInputsAndOutputs) {
  auto cases = Cases();
  for (const std::string& f : GoldenFiles()) {
    SCOPED_TRACE(f);
    std::string stem = f.substr(0, f.size() - 7);
    ASSERT_FALSE(cases[stem].empty()) << "no stored case: run tests/golden/expected.py";
    shp_program_t* p = Load(Read(f));
    ASSERT_NE(p, nullptr);
    std::set<std::string> ins, outs, defaulted;
    for (size_t i = 0; i < shp_program_input_count(p); ++i) {
      ins.insert(shp_program_input_name(p, i));
      if (shp_program_input_has_default(p, i)) defaulted.insert(shp_program_input_name(p, i));
    }
    for (size_t i = 0; i < shp_program_output_count(p); ++i)
      outs.insert(shp_program_output_name(p, i));
    for (const auto& c : cases[stem]) {
      std::set<std::string> got_in, got_out;
      for (const auto& kv : c.second.in) got_in.insert(kv.first);
      // An input with a default may be left out (the run uses the stored default).
      for (const std::string& d : defaulted) got_in.insert(d);
      for (const auto& kv : c.second.out) got_out.insert(kv.first);
      EXPECT_EQ(got_in, ins) << "case " << c.first;
      EXPECT_EQ(got_out, outs) << "case " << c.first;
    }
    shp_program_destroy(p);
  }
}

// The heart of the golden set: each program, run by the C runtime on its stored inputs (on one
// thread and on every thread), gives the outputs the numpy oracle computed when it was added.
TEST(Golden, RunsGiveTheStoredOutputs) {
  size_t programs = 0, runs = 0, outputs = 0, elements = 0;
  double worst[2] = {0, 0};
  std::string worst_at[2];
  for (const auto& sc : Cases()) {
    const std::string& stem = sc.first;
    shp_program_t* p = Load(Read(stem + ".shpoly"));
    ASSERT_NE(p, nullptr) << stem;
    ++programs;
    for (int threads : {1, 0}) {
      shp_runtime_t* rt = Runtime(p, threads);
      ASSERT_NE(rt, nullptr) << stem;
      for (const auto& c : sc.second) {
        SCOPED_TRACE(stem + " case " + std::to_string(c.first) + " threads " +
                     std::to_string(threads));
        std::vector<std::string> names;
        std::vector<shp_array_t*> arrays;
        for (const auto& kv : c.second.in) {
          Npy n = LoadNpy(kv.second);
          shp_array_t* a = nullptr;
          ASSERT_EQ(shp_array_create(static_cast<shp_dtype_t>(n.dtype), n.shape.data(),
                                     n.shape.size(), &a),
                    nullptr)
              << kv.second;
          ASSERT_EQ(shp_array_nbytes(a), n.data.size());
          if (!n.data.empty()) std::memcpy(shp_array_data(a), n.data.data(), n.data.size());
          names.push_back(kv.first);
          arrays.push_back(a);
        }
        std::vector<const char*> cnames;
        for (const std::string& n : names) cnames.push_back(n.c_str());
        size_t n_out = shp_program_output_count(p);
        std::vector<shp_array_t*> outs(n_out, nullptr);
        shp_error_t* e =
            shp_runtime_run(rt, cnames.data(), arrays.data(), arrays.size(), outs.data(), n_out);
        bool ran = e == nullptr;
        EXPECT_EQ(e, nullptr) << shp_error_message(e);
        shp_error_destroy(e);
        ++runs;
        for (size_t j = 0; j < n_out && ran; ++j) {
          std::string name = shp_program_output_name(p, j);
          SCOPED_TRACE("output " + name);
          auto it = c.second.out.find(name);
          ASSERT_NE(it, c.second.out.end());
          Npy want = LoadNpy(it->second);
          ASSERT_EQ(static_cast<int>(shp_array_dtype(outs[j])), want.dtype);
          std::vector<int64_t> shape(shp_array_shape(outs[j]),
                                     shp_array_shape(outs[j]) + shp_array_rank(outs[j]));
          ASSERT_EQ(shape, want.shape);
          ASSERT_EQ(shp_array_nbytes(outs[j]), want.data.size());
          size_t n = want.data.size() / kElemSize[want.dtype];
          std::string first;
          double w = 0;
          size_t bad = Mismatches(want.dtype, static_cast<const char*>(shp_array_data(outs[j])),
                                  want.data.data(), n, &first, &w);
          EXPECT_EQ(bad, 0u) << bad << " of " << n << " elements differ; first: " << first;
          if (want.dtype <= SHP_F64 && w > worst[want.dtype]) {
            worst[want.dtype] = w;
            worst_at[want.dtype] = stem + " case " + std::to_string(c.first) + " " + name;
          }
          ++outputs;
          elements += n;
        }
        for (shp_array_t* a : outs) shp_array_destroy(a);
        for (shp_array_t* a : arrays) shp_array_destroy(a);
      }
      shp_runtime_destroy(rt);
    }
    shp_program_destroy(p);
  }
  std::printf("golden: %zu programs, %zu runs, %zu outputs, %zu elements compared\n", programs,
              runs, outputs, elements);
  std::printf("worst float error / tolerance: f32 %.3g (%s), f64 %.3g (%s)\n", worst[0],
              worst_at[0].c_str(), worst[1], worst_at[1].c_str());
  EXPECT_EQ(programs, GoldenFiles().size());
}

// The golden programs (every one has expected outputs, see above) use every op, over several
// result dtypes, and the attribute forms that once saved but failed to load: empty integer
// lists (dot_general without batch or contracting axes, transpose/slice/pad/reduce of a scalar).
TEST(Golden, CoverEveryOpAndTheEmptyListForms) {
  static const char* const kOps[] = {
      "constant", "neg",          "abs",         "exp",         "log",         "log1p",
      "expm1",    "sqrt",         "rsqrt",       "sin",         "cos",         "tanh",
      "logistic", "floor",        "ceil",        "round",       "sign",        "not",
      "add",      "sub",          "mul",         "div",         "pow",         "max",
      "min",      "rem",          "and",         "or",          "xor",         "eq",
      "ne",       "lt",           "le",          "gt",          "ge",          "select",
      "convert",  "broadcast_to", "reshape",     "transpose",   "concatenate", "slice",
      "pad",      "reduce_sum",   "reduce_mean", "reduce_max",  "reduce_min",  "reduce_prod",
      "matmul",   "dot_general",  "iota",        "softmax",     "layer_norm",  "cumsum",
      "take",     "dim_value",    "reverse",     "scatter_add", "trilu",       "take_along_axis"};
  std::map<std::string, std::set<std::string>> result_dtypes;  // op -> dtypes of its results
  std::string all;
  for (const std::string& f : GoldenFiles()) {
    shp_program_t* p = Load(Read(f));
    ASSERT_NE(p, nullptr) << f;
    std::string text = Text(p);
    all += text;
    std::stringstream ss(text);
    std::string line;
    while (std::getline(ss, line)) {
      // "%4 = reduce_sum(%0) axes=[] keepdims=false : f32[]"
      size_t eq = line.find(" = "), paren = line.find('('), colon = line.rfind(" : ");
      if (line.empty() || line[0] != '%' || eq == std::string::npos || paren == std::string::npos ||
          colon == std::string::npos || paren < eq) {
        continue;
      }
      std::string op = line.substr(eq + 3, paren - eq - 3);
      result_dtypes[op].insert(line.substr(colon + 3, line.find('[', colon) - colon - 3));
    }
    shp_program_destroy(p);
  }
  size_t pairs = 0;
  for (const char* op : kOps) {
    EXPECT_TRUE(result_dtypes.count(op)) << op << " has no golden program";
    pairs += result_dtypes[op].size();
  }
  for (const char* form : {"lhs_batch=[] ", "lhs_contracting=[] ", "permutation=[] ", "axes=[] ",
                           "start=[] ", "low=[] ", "shape=[] "}) {
    EXPECT_NE(all.find(form), std::string::npos) << "no golden program has " << form;
  }
  // Several dtypes per family, not one: (op, result dtype) pairs over the 58 ops.
  EXPECT_GE(pairs, 150u);
  std::printf("golden: %zu (op, result dtype) pairs over %zu ops\n", pairs,
              sizeof kOps / sizeof kOps[0]);
}

TEST(Golden, MlpSignature) {
  shp_program_t* p = Load(Read("mlp_v1.shpoly"));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(Text(p).substr(0, 54), "program(x: f32[batch, 784]) -> (probs: f32[batch, 10])");
  int64_t x[] = {3, 784};
  const int64_t* shapes[] = {x};
  size_t ranks[] = {2};
  const char* names[] = {"x"};
  shp_bindings_t* bind = nullptr;
  ASSERT_EQ(shp_program_check_shapes(p, names, shapes, ranks, 1, &bind), nullptr);
  EXPECT_EQ(shp_bindings_value(bind, 0), 3);
  shp_bindings_destroy(bind);
  shp_program_destroy(p);
}

TEST(Golden, ConstraintsAndAssertions) {
  shp_program_t* p = Load(Read("constraints_v1.shpoly"));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(shp_program_constraint_count(p), 3u);
  ASSERT_EQ(shp_program_assertion_count(p), 2u);
  EXPECT_STREQ(shp_program_assertion_text(p, 0), "mod(n, 2) == 0");
  EXPECT_STREQ(shp_program_assertion_message(p, 1), "y must not be longer than x");
  EXPECT_EQ(shp_program_input_role(p, 3), SHP_INPUT_DIM);
  int64_t x[] = {6, 3}, y[] = {6, 3}, pad[] = {2}, k = 4;
  const int64_t* shapes[] = {x, y, pad, &k};
  size_t ranks[] = {2, 2, 1, 0};
  const char* names[] = {"x", "y", "pad", "k"};
  shp_bindings_t* bind = nullptr;
  ASSERT_EQ(shp_program_check_shapes(p, names, shapes, ranks, 4, &bind), nullptr);
  shp_bindings_destroy(bind);
  x[0] = 7;  // odd: violates the reshape assertion (and m <= n holds)
  y[0] = 7;
  shp_error_t* e = shp_program_check_shapes(p, names, shapes, ranks, 4, &bind);
  EXPECT_EQ(shp_error_code(e), SHP_CONSTRAINT_VIOLATION);
  EXPECT_NE(std::string(shp_error_message(e)).find("must be divisible by 2"), std::string::npos)
      << shp_error_message(e);
  shp_error_destroy(e);
  shp_program_destroy(p);
}

TEST(Golden, OnePerDtype) {
  const char* files[] = {"dtype_f32_v1.shpoly", "dtype_f64_v1.shpoly", "dtype_i32_v1.shpoly",
                         "dtype_i64_v1.shpoly", "dtype_bool_v1.shpoly"};
  for (int d = 0; d < 5; ++d) {
    shp_program_t* p = Load(Read(files[d]));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(shp_program_input_dtype(p, 0), static_cast<shp_dtype_t>(d));
    shp_program_destroy(p);
  }
}

// The schema-version-2 set: the files carry what only version 2 expresses (roles, defaults),
// and every file is written with the lowest version that expresses it.
TEST(Golden, Version2FilesCarryRolesAndDefaults) {
  shp_program_t* g = Load(Read("grad_v2.shpoly"));
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(shp_program_input_count(g), 5u);
  EXPECT_EQ(shp_program_input_role(g, 0), SHP_INPUT_DATA);
  EXPECT_EQ(shp_program_input_role(g, 2), SHP_INPUT_PARAMETER);
  EXPECT_EQ(shp_program_input_role(g, 4), SHP_INPUT_COTANGENT);
  EXPECT_STREQ(shp_program_input_name(g, 4), "loss.cotangent");
  shp_array_t* one = nullptr;
  ASSERT_EQ(shp_program_input_default(g, 4, &one), nullptr);
  EXPECT_EQ(*static_cast<const double*>(shp_array_data(one)), 1.0);  // grad's default seed
  shp_array_destroy(one);
  const shp_output_role_t roles[] = {SHP_OUTPUT_PRIMAL, SHP_OUTPUT_GRAD, SHP_OUTPUT_GRAD};
  ASSERT_EQ(shp_program_output_count(g), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(shp_program_output_role(g, i), roles[i]) << i;
  shp_program_destroy(g);
  shp_program_t* m = Load(Read("mlp_params_v2.shpoly"));
  ASSERT_NE(m, nullptr);
  for (size_t i = 1; i < shp_program_input_count(m); ++i) {
    EXPECT_EQ(shp_program_input_role(m, i), SHP_INPUT_PARAMETER) << i;
    EXPECT_TRUE(shp_program_input_has_default(m, i)) << i;
  }
  shp_program_destroy(m);
  for (const std::string& f : GoldenFiles()) {
    std::string bytes = Read(f);
    uint32_t version = 0;  // Program.schema_version: field 0 of the root table
    uint32_t table = 0, field_at = 0;
    int32_t to_vtable = 0;
    uint16_t field = 0;
    std::memcpy(&table, bytes.data(), 4);
    std::memcpy(&to_vtable, bytes.data() + table, 4);
    std::memcpy(&field, bytes.data() + table - to_vtable + 4, 2);
    field_at = table + field;
    if (field) std::memcpy(&version, bytes.data() + field_at, 4);
    EXPECT_EQ("_v" + std::to_string(version) + ".shpoly", f.substr(f.rfind("_v"))) << f;
  }
}

// The schema-version-3 file: two variants with their guards (text, message, origin), proven
// exhaustive, and a run at each stored case takes the variant its guard selects (cols <= 16:
// variant 0, the softmax op; cols > 16: variant 1), also after a round trip.
TEST(Golden, Version3FileCarriesGuardsAndVariants) {
  shp_program_t* p = Load(Read("row_softmax_variants_v3.shpoly"));
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(shp_program_variant_count(p), 2u);
  EXPECT_EQ(shp_program_variants_exhaustive(p), SHP_TRUE);
  ASSERT_EQ(shp_program_guard_count(p), 1u);
  EXPECT_STREQ(shp_program_guard_text(p, 0), "cols <= 16");
  EXPECT_STREQ(shp_program_guard_message(p, 0), "row softmax: the softmax op for short rows");
  EXPECT_STREQ(shp_program_guard_origin(p, 0), "shp_scope_assume");
  ASSERT_EQ(shp_program_variant_guard_count(p, 1), 1u);
  EXPECT_STREQ(shp_program_variant_guard_text(p, 1, 0), "cols > 16");
  EXPECT_STREQ(shp_program_variant_guard_message(p, 1, 0),
               "row softmax: max-subtract, exp, sum, divide for long rows");
  EXPECT_EQ(shp_program_assertion_count(p), 0u);
  shp_runtime_t* rt = nullptr;
  ASSERT_EQ(shp_runtime_create(p, nullptr, &rt), nullptr);
  EXPECT_EQ(shp_runtime_last_variant(rt), -1);
  const int64_t cases[][2] = {{3, 8}, {2, 16}, {2, 17}, {5, 64}, {1, 1}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c[0]) + " x " + std::to_string(c[1]));
    shp_array_t* x = nullptr;
    ASSERT_EQ(shp_array_create(SHP_F32, c, 2, &x), nullptr);
    const char* name = "x";
    const shp_array_t* in[] = {x};
    shp_array_t* out = nullptr;
    shp_error_t* e = shp_runtime_run(rt, &name, in, 1, &out, 1);
    EXPECT_EQ(e, nullptr) << shp_error_message(e);
    shp_error_destroy(e);
    EXPECT_EQ(shp_runtime_last_variant(rt), c[1] <= 16 ? 0 : 1);
    shp_array_destroy(out);
    shp_array_destroy(x);
  }
  EXPECT_EQ(shp_runtime_variant_plans_built(rt, 0), 3u);
  EXPECT_EQ(shp_runtime_variant_plans_built(rt, 1), 2u);
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
}

}  // namespace
