// The cached path of shp_runtime_run_into allocates nothing: a counting allocator replaces
// operator new (every form) and, outside the sanitizers, malloc and its family for the whole
// process (libshapepoly.so included), and counts the allocations of repeated calls on a known
// shape. Also MLP-shaped paths (matmuls, bias, relu, then tanh or softmax) and multi-threaded
// runtimes.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "shapepoly/shapepoly.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_count{0};

void Note() {
  if (g_counting.load(std::memory_order_relaxed)) g_count.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

#ifndef SHP_NO_ALLOC_SANITIZED
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* malloc(size_t n) {
  Note();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  Note();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  Note();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t a, size_t n) {
  Note();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, size_t a, size_t n) {
  Note();
  *p = __libc_memalign(a, n);
  return *p == nullptr ? 12 /* ENOMEM */ : 0;
}
}
#endif

// operator new counts once, then allocates with counting paused only when it was counting.
void* operator new(size_t n) {
  const bool on = g_counting.load();
  if (on) Note();
  g_counting.store(false);
  void* p = std::malloc(n == 0 ? 1 : n);
  g_counting.store(on);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return operator new(n, std::nothrow);
}
void* operator new(size_t n, std::align_val_t a) {
  const bool on = g_counting.load();
  if (on) g_count.fetch_add(1);
  g_counting.store(false);
  size_t al = static_cast<size_t>(a) < sizeof(void*) ? sizeof(void*) : static_cast<size_t>(a);
  void* p = nullptr;
  if (posix_memalign(&p, al, n == 0 ? 1 : n) != 0) p = nullptr;
  g_counting.store(on);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

void Check(shp_error_t* e) {
  if (e != nullptr) {
    ADD_FAILURE() << shp_error_message(e);
    shp_error_destroy(e);
  }
}

// Allocations of `calls` calls of f, after one untimed call.
template <class F>
uint64_t Allocations(int calls, F f) {
  f();
  g_count.store(0);
  g_counting.store(true);
  for (int i = 0; i < calls; ++i) f();
  g_counting.store(false);
  return g_count.load();
}

TEST(NoAllocation, CountingAllocatorSeesAllocations) {
  // The counter sees operator new (a call, which the compiler may not elide) and malloc.
  EXPECT_EQ(Allocations(3, [] { ::operator delete(::operator new(16)); }), 3u);
#ifndef SHP_NO_ALLOC_SANITIZED
  EXPECT_EQ(Allocations(3, [] { std::free(std::malloc(16)); }), 3u);
#endif
}

struct Tiny {
  shp_program_t* p = nullptr;
  Tiny() {
    shp_scope_t* s;
    Check(shp_scope_create(nullptr, 0, &s));
    const shp_tensor_t *x, *y, *z;
    Check(shp_tensor_input(s, "x", SHP_F32, "n", &x));
    Check(shp_tensor_input(s, "y", SHP_F32, "n", &y));
    Check(shp_tensor_binary(SHP_ADD, x, y, &z));
    const shp_tensor_t* ins[2] = {x, y};
    const char* name = "z";
    Check(shp_program_create(s, ins, 2, &z, &name, 1, &p));
    shp_scope_destroy(s);
  }
  ~Tiny() { shp_program_destroy(p); }
};

shp_runtime_t* MakeRuntime(const shp_program_t* p, int threads) {
  shp_runtime_options_t* o;
  Check(shp_runtime_options_create(&o));
  Check(shp_runtime_options_set_num_threads(o, threads));
  shp_runtime_t* rt;
  Check(shp_runtime_create(p, o, &rt));
  shp_runtime_options_destroy(o);
  return rt;
}

TEST(NoAllocation, CachedRunIntoOfTheTinyProgram) {
  Tiny tiny;
  for (int threads : {1, 2}) {
    shp_runtime_t* rt = MakeRuntime(tiny.p, threads);
    float a[8], b[8], c[8];
    for (int i = 0; i < 8; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * static_cast<float>(i);
    int64_t shape[1] = {8};
    shp_array_t *xa, *ya, *za;
    Check(shp_array_wrap(SHP_F32, shape, 1, a, sizeof a, &xa));
    Check(shp_array_wrap(SHP_F32, shape, 1, b, sizeof b, &ya));
    Check(shp_array_wrap(SHP_F32, shape, 1, c, sizeof c, &za));
    const shp_array_t* ins[2] = {xa, ya};
    const char* names[2] = {"x", "y"};
    // By name and by position.
    EXPECT_EQ(Allocations(1000, [&] { Check(shp_runtime_run_into(rt, names, ins, 2, &za, 1)); }),
              0u);
    EXPECT_EQ(Allocations(1000, [&] { Check(shp_runtime_run_into(rt, nullptr, ins, 2, &za, 1)); }),
              0u);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(c[i], a[i] + b[i]);
    // run creates its output: one array (its struct, shape and data), nothing else per call.
    uint64_t per_run = Allocations(100, [&] {
      shp_array_t* out;
      Check(shp_runtime_run(rt, names, ins, 2, &out, 1));
      shp_array_destroy(out);
    });
    // Under a sanitizer only operator new is counted, and run's output is one malloc block.
#ifndef SHP_NO_ALLOC_SANITIZED
    EXPECT_GT(per_run, 0u);
#endif
    EXPECT_LE(per_run, 300u);
    shp_array_destroy(xa);
    shp_array_destroy(ya);
    shp_array_destroy(za);
    shp_runtime_destroy(rt);
  }
}

// A program y = last(relu(x @ w + 0.5) @ w2) over x [batch, 32], w [32, 16], w2 [16, 4], where
// last is tanh or a softmax over the last axis.
shp_program_t* SmallMlp(const std::vector<float>& w, const std::vector<float>& w2, bool softmax) {
  shp_scope_t* s;
  Check(shp_scope_create(nullptr, 0, &s));
  const shp_tensor_t* x;
  Check(shp_tensor_input(s, "x", SHP_F32, "batch, 32", &x));
  std::vector<float> bias(16, 0.5f);
  int64_t ws[2] = {32, 16}, bs[1] = {16}, w2s[2] = {16, 4};
  const shp_tensor_t *wt, *bt, *w2t, *h, *hb, *zero, *r, *l, *y;
  Check(shp_tensor_constant(s, SHP_F32, ws, 2, w.data(), w.size() * 4, &wt));
  Check(shp_tensor_constant(s, SHP_F32, bs, 1, bias.data(), bias.size() * 4, &bt));
  Check(shp_tensor_constant(s, SHP_F32, w2s, 2, w2.data(), w2.size() * 4, &w2t));
  float z0 = 0;
  Check(shp_tensor_constant(s, SHP_F32, nullptr, 0, &z0, 4, &zero));
  Check(shp_tensor_matmul(x, wt, &h));
  Check(shp_tensor_binary(SHP_ADD, h, bt, &hb));
  Check(shp_tensor_binary(SHP_MAX, hb, zero, &r));
  Check(shp_tensor_matmul(r, w2t, &l));
  if (softmax) {
    Check(shp_tensor_softmax(l, -1, &y));
  } else {
    Check(shp_tensor_unary(SHP_TANH, l, &y));
  }
  const char* name = "y";
  shp_program_t* p;
  Check(shp_program_create(s, &x, 1, &y, &name, 1, &p));
  shp_scope_destroy(s);
  return p;
}

// f16 and bf16 softmax, layer_norm and reductions (rows and columns): each runs as one step on
// the narrow arrays (NarrowFusion), whose f32 rows and accumulators are per-thread scratch.
TEST(NoAllocation, CachedRunIntoOfNarrowSoftmaxLayerNormAndSums) {
  for (shp_dtype_t dt : {SHP_F16, SHP_BF16}) {
    shp_scope_t* s;
    Check(shp_scope_create(nullptr, 0, &s));
    const shp_tensor_t *x, *y[4];
    Check(shp_tensor_input(s, "x", dt, "batch, 48", &x));
    const int64_t last = 1, first = 0;
    Check(shp_tensor_softmax(x, -1, &y[0]));
    Check(shp_tensor_layer_norm(x, -1, 1e-5, &y[1]));
    Check(shp_tensor_reduce(SHP_REDUCE_SUM, x, &last, 1, false, &y[2]));
    Check(shp_tensor_reduce(SHP_REDUCE_MAX, x, &first, 1, true, &y[3]));
    const char* names[4] = {"softmax", "layer_norm", "sum", "max"};
    shp_program_t* p;
    Check(shp_program_create(s, &x, 1, y, names, 4, &p));
    shp_scope_destroy(s);
    for (int threads : {1, 2}) {
      shp_runtime_t* rt = MakeRuntime(p, threads);
      for (int64_t batch : {1, 64, 4096}) {
        // 0x3c00 is 1.0 in f16, 0x3f80 in bf16.
        std::vector<uint16_t> xs(static_cast<size_t>(batch * 48), dt == SHP_F16 ? 0x3c00 : 0x3f80);
        std::vector<uint16_t> o0(xs.size()), o1(xs.size()), o2(static_cast<size_t>(batch)), o3(48);
        int64_t xsh[2] = {batch, 48}, ssh[1] = {batch}, msh[2] = {1, 48};
        shp_array_t *xa, *outs[4];
        Check(shp_array_wrap(dt, xsh, 2, xs.data(), xs.size() * 2, &xa));
        Check(shp_array_wrap(dt, xsh, 2, o0.data(), o0.size() * 2, &outs[0]));
        Check(shp_array_wrap(dt, xsh, 2, o1.data(), o1.size() * 2, &outs[1]));
        Check(shp_array_wrap(dt, ssh, 1, o2.data(), o2.size() * 2, &outs[2]));
        Check(shp_array_wrap(dt, msh, 2, o3.data(), o3.size() * 2, &outs[3]));
        const shp_array_t* ins[1] = {xa};
        EXPECT_EQ(
            Allocations(50, [&] { Check(shp_runtime_run_into(rt, nullptr, ins, 1, outs, 4)); }), 0u)
            << (dt == SHP_F16 ? "f16" : "bf16") << ", batch " << batch << ", " << threads
            << " threads";
        EXPECT_EQ(xs[0], o3[0]);                            // max of ones
        EXPECT_EQ(dt == SHP_F16 ? 0x5200 : 0x4240, o2[0]);  // 48
        shp_array_destroy(xa);
        for (shp_array_t* a : outs) shp_array_destroy(a);
      }
      shp_runtime_destroy(rt);
    }
    shp_program_destroy(p);
  }
}

TEST(NoAllocation, CachedRunIntoOfAnMlp) {
  shp_program_t* p = SmallMlp(std::vector<float>(32 * 16, 0.01f),
                              std::vector<float>(16 * 4, -0.02f), /*softmax=*/false);
  for (int threads : {1, 2}) {
    shp_runtime_t* rt = MakeRuntime(p, threads);
    for (int64_t batch : {1, 64}) {
      std::vector<float> xs(static_cast<size_t>(batch * 32), 0.25f);
      std::vector<float> ys(static_cast<size_t>(batch * 4));
      int64_t xsh[2] = {batch, 32}, ysh[2] = {batch, 4};
      shp_array_t *xa, *ya;
      Check(shp_array_wrap(SHP_F32, xsh, 2, xs.data(), xs.size() * 4, &xa));
      Check(shp_array_wrap(SHP_F32, ysh, 2, ys.data(), ys.size() * 4, &ya));
      const shp_array_t* ins[1] = {xa};
      EXPECT_EQ(Allocations(200, [&] { Check(shp_runtime_run_into(rt, nullptr, ins, 1, &ya, 1)); }),
                0u)
          << "batch " << batch << ", " << threads << " threads";
      EXPECT_NEAR(ys[0], std::tanh(16 * -0.02f * (32 * 0.25f * 0.01f + 0.5f)), 1e-6f);
      shp_array_destroy(xa);
      shp_array_destroy(ya);
    }
    shp_runtime_destroy(rt);
  }
  shp_program_destroy(p);
}

TEST(NoAllocation, CachedRunIntoOfAnMlpEndingInSoftmax) {
  std::vector<float> w(32 * 16), w2(16 * 4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.001f * static_cast<float>(i % 7);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.01f * static_cast<float>(i % 5);
  shp_program_t* p = SmallMlp(w, w2, /*softmax=*/true);
  for (int threads : {1, 2}) {
    shp_runtime_t* rt = MakeRuntime(p, threads);
    // 16384 rows: the softmax splits its rows across the 2 threads' pool.
    for (int64_t batch : {1, 64, 16384}) {
      std::vector<float> xs(static_cast<size_t>(batch * 32), 0.25f);
      std::vector<float> ys(static_cast<size_t>(batch * 4));
      int64_t xsh[2] = {batch, 32}, ysh[2] = {batch, 4};
      shp_array_t *xa, *ya;
      Check(shp_array_wrap(SHP_F32, xsh, 2, xs.data(), xs.size() * 4, &xa));
      Check(shp_array_wrap(SHP_F32, ysh, 2, ys.data(), ys.size() * 4, &ya));
      const shp_array_t* ins[1] = {xa};
      // Which thread of the pool claims which chunk is timing: a worker grows its per-thread
      // kernel scratch the first time it gets a chunk of a kernel, once. So windows of calls
      // are counted until one allocates nothing; a per-call allocation never gets there.
      uint64_t total = 0, window = 1;
      for (int w = 0; w < 10 && window != 0; ++w) {
        window = Allocations(batch > 64 ? 20 : 200,
                             [&] { Check(shp_runtime_run_into(rt, nullptr, ins, 1, &ya, 1)); });
        total += window;
      }
      EXPECT_EQ(window, 0u) << "batch " << batch << ", " << threads << " threads";
      EXPECT_LE(total, 8u) << "batch " << batch << ", " << threads << " threads";
      const size_t last = ys.size() - 4;
      EXPECT_NEAR(ys[last] + ys[last + 1] + ys[last + 2] + ys[last + 3], 1.0f, 1e-6f);
      for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(ys[last + j], ys[j], 1e-6f);  // equal rows
      EXPECT_GT(ys[0], 0.0f);
      shp_array_destroy(xa);
      shp_array_destroy(ya);
    }
    shp_runtime_destroy(rt);
  }
  shp_program_destroy(p);
}

// An RNN step h' = tanh(h @ w + x_t) scanned over x [n, 4] along axis 0 and, reversed, over
// its transpose along axis 1 (slices copied through the step's scratch): every iteration runs
// the body's cached plan, so the cached run allocates nothing whatever n is.
TEST(NoAllocation, CachedRunIntoOfControlFlow) {
  shp_scope_t* s;
  Check(shp_scope_create(nullptr, 0, &s));
  Check(shp_scope_declare(s, "n", 0, INT64_MAX));
  const shp_tensor_t *x, *xt, *h0, *w;
  Check(shp_tensor_input(s, "x", SHP_F32, "n, 4", &x));
  Check(shp_tensor_input(s, "xt", SHP_F32, "4, n", &xt));
  Check(shp_tensor_input(s, "h0", SHP_F32, "4", &h0));
  std::vector<float> wv(16, 0.1f);
  int64_t ws[2] = {4, 4};
  Check(shp_tensor_constant(s, SHP_F32, ws, 2, wv.data(), wv.size() * 4, &w));
  // The body: (h, x_t, w) -> (h', h').
  const shp_tensor_t *bh, *bx, *bw, *m, *a, *t;
  Check(shp_tensor_input(s, "bh", SHP_F32, "4", &bh));
  Check(shp_tensor_input(s, "bx", SHP_F32, "4", &bx));
  Check(shp_tensor_input(s, "bw", SHP_F32, "4, 4", &bw));
  Check(shp_tensor_matmul(bh, bw, &m));
  Check(shp_tensor_binary(SHP_ADD, m, bx, &a));
  Check(shp_tensor_unary(SHP_TANH, a, &t));
  const shp_tensor_t* bin[3] = {bh, bx, bw};
  const shp_tensor_t* bout[2] = {t, t};
  const char* bnames[2] = {"h", "y"};
  shp_program_t* body;
  Check(shp_program_create(s, bin, 3, bout, bnames, 2, &body));
  const shp_tensor_t *rows[2], *cols[2];
  Check(shp_tensor_scan(s, body, &h0, 1, &x, 1, &w, 1, 0, nullptr, false, rows, 2));
  Check(shp_tensor_scan(s, body, &h0, 1, &xt, 1, &w, 1, 1, nullptr, true, cols, 2));
  const shp_tensor_t* outs[3] = {rows[0], rows[1], cols[1]};
  const char* names[3] = {"h", "ys", "ys_t"};
  const shp_tensor_t* ins[3] = {x, xt, h0};
  shp_program_t* p;
  Check(shp_program_create(s, ins, 3, outs, names, 3, &p));
  shp_program_destroy(body);
  shp_scope_destroy(s);
  for (int threads : {1, 2}) {
    shp_runtime_t* rt = MakeRuntime(p, threads);
    for (int64_t n : {0, 1, 50}) {
      std::vector<float> xv(static_cast<size_t>(n * 4), 0.25f), hv(4, 0.5f);
      std::vector<float> hout(4), ys(static_cast<size_t>(n * 4)), yst(static_cast<size_t>(n * 4));
      int64_t xsh[2] = {n, 4}, xtsh[2] = {4, n}, hsh[1] = {4};
      shp_array_t *xa, *xta, *ha, *o0, *o1, *o2;
      Check(shp_array_wrap(SHP_F32, xsh, 2, xv.data(), xv.size() * 4, &xa));
      Check(shp_array_wrap(SHP_F32, xtsh, 2, xv.data(), xv.size() * 4, &xta));
      Check(shp_array_wrap(SHP_F32, hsh, 1, hv.data(), 16, &ha));
      Check(shp_array_wrap(SHP_F32, hsh, 1, hout.data(), 16, &o0));
      Check(shp_array_wrap(SHP_F32, xsh, 2, ys.data(), ys.size() * 4, &o1));
      Check(shp_array_wrap(SHP_F32, xtsh, 2, yst.data(), yst.size() * 4, &o2));
      const shp_array_t* args[3] = {xa, xta, ha};
      shp_array_t* out[3] = {o0, o1, o2};
      EXPECT_EQ(Allocations(50, [&] { Check(shp_runtime_run_into(rt, nullptr, args, 3, out, 3)); }),
                0u)
          << "n " << n << ", " << threads << " threads";
      float h = 0.5f;
      for (int64_t i = 0; i < n; ++i) h = std::tanh(4 * 0.1f * h + 0.25f);
      EXPECT_NEAR(hout[0], h, 1e-6f);
      for (shp_array_t* arr : {xa, xta, ha, o0, o1, o2}) shp_array_destroy(arr);
    }
    shp_runtime_destroy(rt);
  }
  shp_program_destroy(p);
}

}  // namespace
