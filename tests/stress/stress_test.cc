// Concurrency stress through the shipped shared library (issue 17, "Stress"): many runtimes on
// one const program in parallel, and thread churn over scopes, parsing and loading. Run under
// ThreadSanitizer by `make tsan`; in `make test` they run as ordinary tests.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

std::string Message(shp_error_t* err) {
  std::string m = err ? shp_error_message(err) : "";
  shp_error_destroy(err);
  return m;
}

constexpr int kThreads = 8;

// softmax(tanh(x @ w + b)) and reduce_sum(x * x, axis 1) with a symbolic batch; w and b are
// inputs too, so every run reads five arrays.
struct Program {
  shp_program_t* p = nullptr;
  std::vector<uint8_t> bytes;
  Program() {
    shp_scope_t* s = nullptr;
    EXPECT_EQ(Message(shp_scope_create(nullptr, 0, &s)), "");
    const shp_tensor_t *x, *w, *b, *h, *a, *t, *y, *sq, *r;
    EXPECT_EQ(Message(shp_tensor_input(s, "x", SHP_F32, "batch, 24", &x)), "");
    EXPECT_EQ(Message(shp_tensor_input(s, "w", SHP_F32, "24, 10", &w)), "");
    EXPECT_EQ(Message(shp_tensor_input(s, "b", SHP_F32, "10", &b)), "");
    EXPECT_EQ(Message(shp_tensor_matmul(x, w, &h)), "");
    EXPECT_EQ(Message(shp_tensor_binary(SHP_ADD, h, b, &a)), "");
    EXPECT_EQ(Message(shp_tensor_unary(SHP_TANH, a, &t)), "");
    EXPECT_EQ(Message(shp_tensor_softmax(t, -1, &y)), "");
    EXPECT_EQ(Message(shp_tensor_binary(SHP_MUL, x, x, &sq)), "");
    const int64_t axis[] = {1};
    EXPECT_EQ(Message(shp_tensor_reduce(SHP_REDUCE_SUM, sq, axis, 1, false, &r)), "");
    const shp_tensor_t* ins[] = {x, w, b};
    const shp_tensor_t* outs[] = {y, r};
    const char* names[] = {"probs", "norms"};
    EXPECT_EQ(Message(shp_program_create(s, ins, 3, outs, names, 2, &p)), "");
    shp_scope_destroy(s);
    shp_buffer_t* buf = nullptr;
    EXPECT_EQ(Message(shp_program_serialize(p, &buf)), "");
    const uint8_t* d = static_cast<const uint8_t*>(shp_buffer_data(buf));
    bytes.assign(d, d + shp_buffer_size(buf));
    shp_buffer_destroy(buf);
  }
  ~Program() { shp_program_destroy(p); }
};

struct Inputs {
  std::vector<float> x, w, b;
  explicit Inputs(int64_t batch, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    x.resize(static_cast<size_t>(batch * 24));
    w.resize(24 * 10);
    b.resize(10);
    for (float& v : x) v = u(rng);
    for (float& v : w) v = u(rng);
    for (float& v : b) v = u(rng);
  }
};

// Runs `rt` on a batch; returns the bytes of both outputs (empty on error, with `err` set).
std::vector<uint8_t> RunBatch(shp_runtime_t* rt, int64_t batch, const Inputs& in,
                              std::string* err) {
  const int64_t xs[] = {batch, 24}, ws[] = {24, 10}, bs[] = {10};
  shp_array_t *xa = nullptr, *wa = nullptr, *ba = nullptr;
  std::vector<uint8_t> out;
  *err = Message(
      shp_array_wrap(SHP_F32, xs, 2, const_cast<float*>(in.x.data()), in.x.size() * 4, &xa));
  if (err->empty()) {
    *err = Message(shp_array_wrap(SHP_F32, ws, 2, const_cast<float*>(in.w.data()), 960, &wa));
  }
  if (err->empty()) {
    *err = Message(shp_array_wrap(SHP_F32, bs, 1, const_cast<float*>(in.b.data()), 40, &ba));
  }
  if (err->empty()) {
    const char* names[] = {"x", "w", "b"};
    const shp_array_t* arrays[] = {xa, wa, ba};
    shp_array_t* outs[2] = {nullptr, nullptr};
    *err = Message(shp_runtime_run(rt, names, arrays, 3, outs, 2));
    for (shp_array_t* o : outs) {
      if (!o) continue;
      const uint8_t* d = static_cast<const uint8_t*>(shp_array_data(o));
      out.insert(out.end(), d, d + shp_array_nbytes(o));
      shp_array_destroy(o);
    }
  }
  shp_array_destroy(xa);
  shp_array_destroy(wa);
  shp_array_destroy(ba);
  return out;
}

shp_runtime_t* SingleThreadRuntime(const shp_program_t* p) {
  shp_runtime_options_t* opt = nullptr;
  EXPECT_EQ(Message(shp_runtime_options_create(&opt)), "");
  EXPECT_EQ(Message(shp_runtime_options_set_num_threads(opt, 1)), "");
  EXPECT_EQ(Message(shp_runtime_options_set_plan_cache_capacity(opt, 4)), "");
  shp_runtime_t* rt = nullptr;
  EXPECT_EQ(Message(shp_runtime_create(p, opt, &rt)), "");
  shp_runtime_options_destroy(opt);
  return rt;
}

// 8 runtimes of one program in 8 threads at random batch sizes (a small plan cache, so plans
// are built and evicted all the time) give the bytes a single-thread reference gives.
TEST(Stress, EightRuntimesOnOneProgram) {
  Program prog;
  constexpr int64_t kMaxBatch = 40;
  std::vector<Inputs> inputs;
  std::vector<std::vector<uint8_t>> want;
  shp_runtime_t* ref = SingleThreadRuntime(prog.p);
  inputs.emplace_back(1, 0u);  // index 0 unused: batch sizes are >= 1
  want.emplace_back();
  for (int64_t batch = 1; batch <= kMaxBatch; ++batch) {
    inputs.emplace_back(batch, static_cast<uint32_t>(batch) * 7919u + 1u);
    std::string err;
    want.push_back(RunBatch(ref, batch, inputs.back(), &err));
    ASSERT_EQ(err, "") << "batch " << batch;
  }
  shp_runtime_destroy(ref);
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      shp_runtime_t* rt = SingleThreadRuntime(prog.p);
      std::mt19937 rng(static_cast<uint32_t>(t) + 11u);
      std::uniform_int_distribution<int64_t> pick(1, kMaxBatch);
      for (int i = 0; i < 150; ++i) {
        const int64_t batch = pick(rng);
        std::string err;
        std::vector<uint8_t> got = RunBatch(rt, batch, inputs[static_cast<size_t>(batch)], &err);
        if (!err.empty()) ++errors;
        if (got != want[static_cast<size_t>(batch)]) ++mismatches;
      }
      shp_runtime_destroy(rt);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Threads create and destroy scopes, parse and compare dims, and load, run and destroy
// programs from the same bytes, all at once.
TEST(Stress, ThreadChurnOverScopesParsingAndLoading) {
  Program prog;
  const Inputs in(5, 3u);
  std::string ref_err;
  shp_runtime_t* ref = SingleThreadRuntime(prog.p);
  const std::vector<uint8_t> want = RunBatch(ref, 5, in, &ref_err);
  ASSERT_EQ(ref_err, "");
  shp_runtime_destroy(ref);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const char* constraints[] = {"a >= 2", "b >= a + 1"};
        shp_scope_t* s = nullptr;
        if (shp_error_t* e = shp_scope_create(constraints, 2, &s)) {
          shp_error_destroy(e);
          ++failures;
          continue;
        }
        const shp_dim_t *d = nullptr, *e2 = nullptr;
        shp_truth_t truth = SHP_UNKNOWN;
        std::string spec = "floordiv(b + " + std::to_string(t + i) + ", 2) - a";
        bool ok = Message(shp_dim_parse(s, spec.c_str(), &d)).empty() &&
                  Message(shp_dim_parse(s, "0", &e2)).empty() &&
                  Message(shp_dim_compare(d, SHP_CMP_GE, e2, &truth)).empty();
        shp_scope_destroy(s);
        if (!ok) ++failures;
        shp_program_t* p = nullptr;
        if (shp_error_t* e = shp_program_load(prog.bytes.data(), prog.bytes.size(), &p)) {
          shp_error_destroy(e);
          ++failures;
          continue;
        }
        shp_runtime_t* rt = SingleThreadRuntime(p);
        std::string err;
        if (RunBatch(rt, 5, in, &err) != want || !err.empty()) ++failures;
        shp_runtime_destroy(rt);
        shp_program_destroy(p);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
