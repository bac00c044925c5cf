// The runtime and array C API through the shipped shared library: runs, strict binding and
// every error path with its message, dry runs, caller-provided outputs, statistics, NULL
// safety, untouched out-params, runtimes outliving their program handle, threads.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cc/base/testing.h"  // SHP_TEST_SANITIZED
#include "shapepoly/shapepoly.h"

namespace {

int32_t Code(shp_error_t* err) {
  int32_t c = shp_error_code(err);
  shp_error_destroy(err);
  return c;
}

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

#define OK(call) ASSERT_EQ(Message(call), "")

// y = softmax(max(x @ w + b, 0)) with a symbolic batch; w and b are inputs.
shp_program_t* MakeProgram() {
  shp_scope_t* scope;
  EXPECT_EQ(shp_scope_create(nullptr, 0, &scope), nullptr);
  const shp_tensor_t *x, *w, *b, *h, *a, *z, *r, *y;
  EXPECT_EQ(shp_tensor_input(scope, "x", SHP_F32, "batch, 4", &x), nullptr);
  EXPECT_EQ(shp_tensor_input(scope, "w", SHP_F32, "4, 3", &w), nullptr);
  EXPECT_EQ(shp_tensor_input(scope, "b", SHP_F32, "3", &b), nullptr);
  float zero = 0;
  EXPECT_EQ(shp_tensor_constant(scope, SHP_F32, nullptr, 0, &zero, 4, &z), nullptr);
  EXPECT_EQ(shp_tensor_matmul(x, w, &h), nullptr);
  EXPECT_EQ(shp_tensor_binary(SHP_ADD, h, b, &a), nullptr);
  EXPECT_EQ(shp_tensor_binary(SHP_MAX, a, z, &r), nullptr);
  EXPECT_EQ(shp_tensor_softmax(r, -1, &y), nullptr);
  const shp_tensor_t* ins[] = {x, w, b};
  const char* names[] = {"probs"};
  shp_program_t* p = nullptr;
  EXPECT_EQ(shp_program_create(scope, ins, 3, &y, names, 1, &p), nullptr);
  shp_scope_destroy(scope);
  return p;
}

struct Inputs {
  std::vector<float> x, w, b;
  shp_array_t *xa = nullptr, *wa = nullptr, *ba = nullptr;
  explicit Inputs(int64_t batch) : x(static_cast<size_t>(batch * 4)), w(12), b(3) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i));
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(float(i)) * 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * float(i);
    int64_t xs[] = {batch, 4}, ws[] = {4, 3}, bs[] = {3};
    EXPECT_EQ(shp_array_wrap(SHP_F32, xs, 2, x.data(), x.size() * 4, &xa), nullptr);
    EXPECT_EQ(shp_array_wrap(SHP_F32, ws, 2, w.data(), w.size() * 4, &wa), nullptr);
    EXPECT_EQ(shp_array_wrap(SHP_F32, bs, 1, b.data(), b.size() * 4, &ba), nullptr);
  }
  ~Inputs() {
    shp_array_destroy(xa);
    shp_array_destroy(wa);
    shp_array_destroy(ba);
  }
  std::vector<float> Reference() const {
    int64_t batch = static_cast<int64_t>(x.size() / 4);
    std::vector<float> out;
    for (int64_t r = 0; r < batch; ++r) {
      double l[3], mx = -1e30, s = 0;
      for (int j = 0; j < 3; ++j) {
        double acc = b[j];
        for (int k = 0; k < 4; ++k) acc += double(x[r * 4 + k]) * w[k * 3 + j];
        l[j] = std::max(0.0, acc);
        mx = std::max(mx, l[j]);
      }
      for (double v : l) s += std::exp(v - mx);
      for (double v : l) out.push_back(static_cast<float>(std::exp(v - mx) / s));
    }
    return out;
  }
};

void ExpectClose(const shp_array_t* a, const std::vector<float>& want) {
  ASSERT_EQ(shp_array_nbytes(a), want.size() * 4);
  const float* d = static_cast<const float*>(shp_array_data(a));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(d[i], want[i], 1e-5f) << i;
}

TEST(RuntimeApi, RunsAtSeveralBatchesAndCountsPlans) {
  shp_program_t* p = MakeProgram();
  shp_runtime_options_t* o;
  OK(shp_runtime_options_create(&o));
  OK(shp_runtime_options_set_num_threads(o, 2));
  OK(shp_runtime_options_set_plan_cache_capacity(o, 4));
  shp_runtime_t* rt;
  OK(shp_runtime_create(p, o, &rt));
  shp_runtime_options_destroy(o);
  shp_program_destroy(p);  // the runtime keeps the program alive
  EXPECT_EQ(shp_runtime_num_threads(rt), 2);
  EXPECT_STRNE(shp_runtime_simd_target(rt), "");
  const char* names[] = {"b", "x", "w"};
  for (int64_t batch : {1, 5, 1, 64}) {
    Inputs in(batch);
    const shp_array_t* args[] = {in.ba, in.xa, in.wa};
    shp_array_t* out = nullptr;
    OK(shp_runtime_run(rt, names, args, 3, &out, 1));
    ASSERT_EQ(shp_array_rank(out), 2u);
    EXPECT_EQ(shp_array_shape(out)[0], batch);
    EXPECT_EQ(shp_array_shape(out)[1], 3);
    EXPECT_EQ(shp_array_dtype(out), SHP_F32);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(shp_array_data(out)) % 64, 0u);
    ExpectClose(out, in.Reference());
    shp_array_destroy(out);
    // Positional binding (declared order x, w, b).
    const shp_array_t* pos[] = {in.xa, in.wa, in.ba};
    OK(shp_runtime_run(rt, nullptr, pos, 3, &out, 1));
    ExpectClose(out, in.Reference());
    shp_array_destroy(out);
  }
  EXPECT_EQ(shp_runtime_plans_built(rt), 3u);
  EXPECT_EQ(shp_runtime_cache_hits(rt), 5u);
  EXPECT_GT(shp_runtime_last_plan_build_ns(rt), 0);
  shp_runtime_destroy(rt);
}

TEST(RuntimeApi, EveryBindingErrorLeavesOutputsUntouchedAndRuntimeUsable) {
  shp_program_t* p = MakeProgram();
  shp_runtime_t* rt;
  OK(shp_runtime_create(p, nullptr, &rt));
  Inputs in(2);
  shp_array_t* sentinel = reinterpret_cast<shp_array_t*>(0x1);
  shp_array_t* out = sentinel;
  {
    const char* names[] = {"x", "w", "c"};
    const shp_array_t* args[] = {in.xa, in.wa, in.ba};
    shp_error_t* e = shp_runtime_run(rt, names, args, 3, &out, 1);
    EXPECT_EQ(shp_error_code(e), SHP_NOT_FOUND);
    EXPECT_EQ(Message(e), "the program has no input named 'c' (its inputs: 'x', 'w', 'b')");
  }
  {
    const char* names[] = {"x", "w", "w"};
    const shp_array_t* args[] = {in.xa, in.wa, in.wa};
    EXPECT_EQ(Message(shp_runtime_run(rt, names, args, 3, &out, 1)),
              "input 'w' given more than once");
  }
  {
    const char* names[] = {"x"};
    const shp_array_t* args[] = {in.xa};
    shp_error_t* e = shp_runtime_run(rt, names, args, 1, &out, 1);
    EXPECT_EQ(shp_error_code(e), SHP_INVALID_ARGUMENT);
    EXPECT_EQ(Message(e), "inputs 'w', 'b' are missing");
    e = shp_runtime_run(rt, nullptr, args, 1, &out, 1);
    EXPECT_EQ(shp_error_code(e), SHP_INVALID_ARGUMENT);
    shp_error_destroy(e);
  }
  {
    std::vector<int32_t> xi(8);
    int64_t xs[] = {2, 4};
    shp_array_t* xa;
    OK(shp_array_wrap(SHP_I32, xs, 2, xi.data(), 32, &xa));
    const shp_array_t* args[] = {xa, in.wa, in.ba};
    shp_error_t* e = shp_runtime_run(rt, nullptr, args, 3, &out, 1);
    EXPECT_EQ(shp_error_code(e), SHP_DTYPE_MISMATCH);
    EXPECT_EQ(Message(e), "input 'x' has dtype i32 but the program requires f32");
    shp_array_destroy(xa);
  }
  {
    shp_array_t* xa;
    int64_t xs[] = {2, 5};
    OK(shp_array_create(SHP_F32, xs, 2, &xa));
    const shp_array_t* args[] = {xa, in.wa, in.ba};
    shp_error_t* e = shp_runtime_run(rt, nullptr, args, 3, &out, 1);
    EXPECT_EQ(shp_error_code(e), SHP_SHAPE_MISMATCH);
    EXPECT_NE(Message(e).find("input 'x': axis 1 is 5 but the program requires 4"),
              std::string::npos);
    shp_array_destroy(xa);
  }
  {
    const shp_array_t* args[] = {in.xa, nullptr, in.ba};
    EXPECT_EQ(Code(shp_runtime_run(rt, nullptr, args, 3, &out, 1)), SHP_INVALID_ARGUMENT);
    const shp_array_t* ok[] = {in.xa, in.wa, in.ba};
    EXPECT_EQ(Code(shp_runtime_run(rt, nullptr, ok, 3, &out, 2)), SHP_INVALID_ARGUMENT);
    EXPECT_EQ(Code(shp_runtime_run(rt, nullptr, ok, 3, nullptr, 1)), SHP_INVALID_ARGUMENT);
    EXPECT_EQ(Code(shp_runtime_run(nullptr, nullptr, ok, 3, &out, 1)), SHP_INVALID_ARGUMENT);
    EXPECT_EQ(Code(shp_runtime_run(rt, nullptr, nullptr, 3, &out, 1)), SHP_INVALID_ARGUMENT);
  }
  EXPECT_EQ(out, sentinel);
  EXPECT_EQ(shp_runtime_plans_built(rt), 0u);
  size_t rank = 7;
  EXPECT_EQ(Code(shp_runtime_output_shape(rt, 0, nullptr, 0, &rank)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(rank, 7u);
  const shp_array_t* ok[] = {in.xa, in.wa, in.ba};
  OK(shp_runtime_run(rt, nullptr, ok, 3, &out, 1));
  ExpectClose(out, in.Reference());
  shp_array_destroy(out);
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
}

TEST(RuntimeApi, DryRunAndRunInto) {
  shp_program_t* p = MakeProgram();
  shp_runtime_t* rt;
  OK(shp_runtime_create(p, nullptr, &rt));
  const char* names[] = {"x", "w", "b"};
  int64_t xs[] = {9, 4}, ws[] = {4, 3}, bs[] = {3};
  const int64_t* shapes[] = {xs, ws, bs};
  size_t ranks[] = {2, 2, 1};
  OK(shp_runtime_dry_run(rt, names, nullptr, shapes, ranks, 3));
  int64_t dims[4] = {0, 0, 0, 0};
  size_t rank = 0;
  OK(shp_runtime_output_shape(rt, 0, dims, 4, &rank));
  EXPECT_EQ(rank, 2u);
  EXPECT_EQ(dims[0], 9);
  EXPECT_EQ(dims[1], 3);
  EXPECT_EQ(Code(shp_runtime_output_shape(rt, 1, dims, 4, &rank)), SHP_INVALID_ARGUMENT);
  shp_dtype_t bad[] = {SHP_F32, SHP_F64, SHP_F32};
  shp_error_t* e = shp_runtime_dry_run(rt, names, bad, shapes, ranks, 3);
  EXPECT_EQ(shp_error_code(e), SHP_DTYPE_MISMATCH);
  EXPECT_EQ(Message(e), "input 'w' has dtype f64 but the program requires f32");
  int64_t ws2[] = {5, 3};
  const int64_t* shapes2[] = {xs, ws2, bs};
  EXPECT_EQ(Code(shp_runtime_dry_run(rt, names, nullptr, shapes2, ranks, 3)), SHP_SHAPE_MISMATCH);
  EXPECT_EQ(shp_runtime_plans_built(rt), 1u);

  Inputs in(9);
  const shp_array_t* args[] = {in.xa, in.wa, in.ba};
  int64_t os[] = {9, 3};
  shp_array_t* out;
  OK(shp_array_create(SHP_F32, os, 2, &out));
  OK(shp_runtime_run_into(rt, nullptr, args, 3, &out, 1));
  ExpectClose(out, in.Reference());
  EXPECT_EQ(shp_runtime_cache_hits(rt), 1u);
  shp_array_t* wrong;
  int64_t os2[] = {9, 2};
  OK(shp_array_create(SHP_F32, os2, 2, &wrong));
  e = shp_runtime_run_into(rt, nullptr, args, 3, &wrong, 1);
  EXPECT_EQ(shp_error_code(e), SHP_SHAPE_MISMATCH);
  EXPECT_EQ(Message(e), "output 'probs' has shape (9, 3) but outputs[0] has shape (9, 2)");
  const float* wd = static_cast<const float*>(shp_array_data(wrong));
  for (int i = 0; i < 18; ++i) EXPECT_EQ(wd[i], 0.f);  // untouched
  shp_array_t* wrong_dtype;
  OK(shp_array_create(SHP_F64, os, 2, &wrong_dtype));
  EXPECT_EQ(Code(shp_runtime_run_into(rt, nullptr, args, 3, &wrong_dtype, 1)), SHP_DTYPE_MISMATCH);
  shp_array_destroy(wrong_dtype);
  shp_array_destroy(wrong);
  shp_array_destroy(out);
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
}

TEST(RuntimeApi, DimensionInputs) {
  shp_scope_t* scope;
  OK(shp_scope_create(nullptr, 0, &scope));
  const shp_tensor_t *n, *io;
  OK(shp_tensor_dim_input(scope, "n", &n));
  const shp_dim_t* nd;
  OK(shp_dim_parse(scope, "2*n", &nd));
  OK(shp_tensor_iota(scope, SHP_I32, &nd, 1, 0, &io));
  const char* out_names[] = {"r"};
  shp_program_t* p;
  OK(shp_program_create(scope, &n, 1, &io, out_names, 1, &p));
  shp_scope_destroy(scope);
  shp_runtime_t* rt;
  OK(shp_runtime_create(p, nullptr, &rt));
  shp_program_destroy(p);
  int64_t three = 3;
  shp_array_t* na;
  OK(shp_array_wrap(SHP_I64, nullptr, 0, &three, 8, &na));
  const shp_array_t* args[] = {na};
  shp_array_t* out;
  OK(shp_runtime_run(rt, nullptr, args, 1, &out, 1));
  ASSERT_EQ(shp_array_shape(out)[0], 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<const int32_t*>(shp_array_data(out))[i], i);
  shp_array_destroy(out);
  const int64_t* shapes[] = {&three};
  size_t ranks[] = {0};
  OK(shp_runtime_dry_run(rt, nullptr, nullptr, shapes, ranks, 1));
  EXPECT_EQ(shp_runtime_cache_hits(rt), 1u);
  shp_array_destroy(na);
  shp_runtime_destroy(rt);
}

TEST(RuntimeApi, ArraysAndNullSafety) {
  shp_array_t* a = reinterpret_cast<shp_array_t*>(0x1);
  int64_t neg[] = {2, -1};
  shp_error_t* e = shp_array_create(SHP_F32, neg, 2, &a);
  EXPECT_EQ(shp_error_code(e), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Message(e), "dimension 1 is negative (-1)");
  // An out-of-range dtype is tested from C (c_api_test.c).
  EXPECT_EQ(Code(shp_array_create(SHP_F32, nullptr, 1, &a)), SHP_INVALID_ARGUMENT);
  int64_t huge[] = {INT64_MAX / 2, 4};
  EXPECT_EQ(Code(shp_array_create(SHP_F32, huge, 2, &a)), SHP_OVERFLOW);
  float buf[6];
  int64_t s23[] = {2, 3};
  e = shp_array_wrap(SHP_F32, s23, 2, buf, 20, &a);
  EXPECT_EQ(Message(e), "nbytes is 20 but the shape and dtype need 24 bytes");
  EXPECT_EQ(Code(shp_array_wrap(SHP_F32, s23, 2, nullptr, 24, &a)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(a, reinterpret_cast<shp_array_t*>(0x1));
  OK(shp_array_wrap(SHP_F32, s23, 2, buf, 24, &a));
  EXPECT_EQ(shp_array_data(a), buf);
  shp_array_destroy(a);
  int64_t empty[] = {0, 5};
  OK(shp_array_create(SHP_BOOL, empty, 2, &a));
  EXPECT_EQ(shp_array_nbytes(a), 0u);
  EXPECT_NE(shp_array_data(a), nullptr);
  shp_array_destroy(a);
  EXPECT_EQ(shp_array_data(nullptr), nullptr);
  EXPECT_EQ(shp_array_rank(nullptr), 0u);
  EXPECT_EQ(shp_array_shape(nullptr), nullptr);
  EXPECT_EQ(shp_array_nbytes(nullptr), 0u);
  shp_array_destroy(nullptr);
  shp_runtime_destroy(nullptr);
  shp_runtime_options_destroy(nullptr);
  EXPECT_EQ(shp_runtime_plans_built(nullptr), 0u);
  EXPECT_EQ(shp_runtime_cache_hits(nullptr), 0u);
  EXPECT_EQ(shp_runtime_last_plan_build_ns(nullptr), 0);
  EXPECT_STREQ(shp_runtime_simd_target(nullptr), "");
  EXPECT_EQ(Code(shp_runtime_options_create(nullptr)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_runtime_options_set_num_threads(nullptr, 1)), SHP_INVALID_ARGUMENT);
  shp_runtime_options_t* o;
  OK(shp_runtime_options_create(&o));
  EXPECT_EQ(Code(shp_runtime_options_set_num_threads(o, -1)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(Code(shp_runtime_options_set_plan_cache_capacity(nullptr, 1)), SHP_INVALID_ARGUMENT);
  shp_runtime_options_destroy(o);
  shp_runtime_t* rt = reinterpret_cast<shp_runtime_t*>(0x1);
  EXPECT_EQ(Code(shp_runtime_create(nullptr, nullptr, &rt)), SHP_INVALID_ARGUMENT);
  EXPECT_EQ(rt, reinterpret_cast<shp_runtime_t*>(0x1));
  EXPECT_EQ(Code(shp_runtime_dry_run(nullptr, nullptr, nullptr, nullptr, nullptr, 0)),
            SHP_INVALID_ARGUMENT);
}

// An array keeps up to 6 dims in its object and more on the heap: every rank reads back its
// dims, created or wrapped.
TEST(RuntimeApi, ArrayShapesOfEveryRank) {
  for (size_t rank = 0; rank <= 9; ++rank) {
    std::vector<int64_t> dims;
    for (size_t k = 0; k < rank; ++k) dims.push_back(1 + static_cast<int64_t>(k % 3));
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    shp_array_t* a;
    OK(shp_array_create(SHP_I32, dims.data(), rank, &a));
    ASSERT_EQ(shp_array_rank(a), rank);
    EXPECT_EQ(std::vector<int64_t>(shp_array_shape(a), shp_array_shape(a) + rank), dims);
    EXPECT_EQ(shp_array_nbytes(a), static_cast<size_t>(n) * 4);
    shp_array_destroy(a);
    std::vector<int32_t> buf(static_cast<size_t>(n));
    OK(shp_array_wrap(SHP_I32, dims.data(), rank, buf.data(), buf.size() * 4, &a));
    ASSERT_EQ(shp_array_rank(a), rank);
    EXPECT_EQ(std::vector<int64_t>(shp_array_shape(a), shp_array_shape(a) + rank), dims);
    EXPECT_EQ(shp_array_data(a), buf.data());
    shp_array_destroy(a);
  }
}

// The thread cap documented at shp_runtime_options_set_num_threads.
constexpr int32_t kMaxThreads = 256;

TEST(RuntimeApi, ThreadCountIsCapped) {
  shp_runtime_options_t* o;
  OK(shp_runtime_options_create(&o));
  for (int32_t n : {kMaxThreads + 1, INT32_MAX}) {
    const std::string m = Message(shp_runtime_options_set_num_threads(o, n));
    EXPECT_NE(m.find("num_threads must be in [0, 256]"), std::string::npos) << m;
    EXPECT_NE(m.find("got " + std::to_string(n)), std::string::npos) << m;
  }
  EXPECT_EQ(Code(shp_runtime_options_set_num_threads(o, kMaxThreads + 1)), SHP_INVALID_ARGUMENT);
  OK(shp_runtime_options_set_num_threads(o, kMaxThreads));
  shp_program_t* p = MakeProgram();
  shp_runtime_t* rt;
  OK(shp_runtime_create(p, o, &rt));
  EXPECT_EQ(shp_runtime_num_threads(rt), kMaxThreads);
  Inputs in(300);
  const shp_array_t* args[] = {in.xa, in.wa, in.ba};
  shp_array_t* out = nullptr;
  OK(shp_runtime_run(rt, nullptr, args, 3, &out, 1));
  shp_array_destroy(out);
  shp_runtime_destroy(rt);
  shp_program_destroy(p);
  shp_runtime_options_destroy(o);
}

// The bytes of address space this process maps (the first field of /proc/self/statm, pages).
size_t MappedBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// In a child process under an address-space limit that leaves room for a few thread stacks
// only: creating a runtime with kMaxThreads threads fails with SHP_OUT_OF_MEMORY
// saying it was threads (no hang: the pool used to deadlock unwinding, or abort), and once
// the limit is lifted the process creates and runs a runtime again. Returns the child's
// failure, or "" on success.
std::string RunUnderAddressSpaceLimit(shp_program_t* p) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    alarm(60);  // a hang ends the child (SIGALRM) instead of the test run
    shp_runtime_options_t* o;
    if (shp_runtime_options_create(&o) != nullptr) _exit(10);
    if (shp_runtime_options_set_num_threads(o, kMaxThreads) != nullptr) _exit(11);
    rlimit old;
    if (getrlimit(RLIMIT_AS, &old) != 0) _exit(12);
    rlimit lim = old;
    lim.rlim_cur = MappedBytes() + (64u << 20);
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(13);
    shp_runtime_t* rt = nullptr;
    shp_error_t* err = shp_runtime_create(p, o, &rt);
    if (err == nullptr) _exit(14);
    const int32_t code = shp_error_code(err);
    const std::string m = shp_error_message(err);
    shp_error_destroy(err);
    std::fprintf(stderr, "under the limit: %s\n", m.c_str());
    if (code != SHP_OUT_OF_MEMORY) _exit(15);
    if (m.find("could not create threads: asked for 256") == std::string::npos) _exit(16);
    if (rt != nullptr) _exit(17);
    if (setrlimit(RLIMIT_AS, &old) != 0) _exit(18);
    if (shp_runtime_options_set_num_threads(o, 2) != nullptr) _exit(19);
    if (shp_runtime_create(p, o, &rt) != nullptr) _exit(20);
    Inputs in(64);
    const shp_array_t* args[] = {in.xa, in.wa, in.ba};
    shp_array_t* out = nullptr;
    if (shp_runtime_run(rt, nullptr, args, 3, &out, 1) != nullptr) _exit(21);
    shp_array_destroy(out);
    shp_runtime_destroy(rt);
    shp_runtime_options_destroy(o);
    _exit(0);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return "waitpid failed";
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "the child hung";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFSIGNALED(status)) return "the child died of signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0)
    return "the child failed check " + std::to_string(WEXITSTATUS(status));
  return "";
}

TEST(RuntimeApi, ThreadsRefusedUnderAnAddressSpaceLimitAreOutOfMemory) {
#ifdef SHP_TEST_SANITIZED
  GTEST_SKIP() << "sanitizers reserve terabytes of address space";
#else
  shp_program_t* p = MakeProgram();
  EXPECT_EQ(RunUnderAddressSpaceLimit(p), "");
  shp_program_destroy(p);
#endif
}

TEST(RuntimeApi, RuntimesShareAProgramAcrossThreads) {
  shp_program_t* p = MakeProgram();
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      shp_runtime_t* rt;
      if (shp_runtime_create(p, nullptr, &rt) != nullptr) {
        bad[t] = 1;
        return;
      }
      for (int i = 0; i < 30; ++i) {
        Inputs in(1 + (i + t) % 6);
        const shp_array_t* args[] = {in.xa, in.wa, in.ba};
        shp_array_t* out;
        if (shp_runtime_run(rt, nullptr, args, 3, &out, 1) != nullptr) {
          ++bad[t];
          continue;
        }
        std::vector<float> want = in.Reference();
        const float* d = static_cast<const float*>(shp_array_data(out));
        for (size_t k = 0; k < want.size(); ++k) bad[t] += std::fabs(d[k] - want[k]) > 1e-5f;
        shp_array_destroy(out);
      }
      shp_runtime_destroy(rt);
    });
  }
  for (std::thread& th : threads) th.join();
  for (int b : bad) EXPECT_EQ(b, 0);
  shp_program_destroy(p);
}

}  // namespace
