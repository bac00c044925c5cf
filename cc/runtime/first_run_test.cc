// The first run on an unseen shape: the arena (ScratchArena) grows in place, in huge pages
// when large, and never shrinks; results of a first run are bit-identical to a cached run and
// to a fresh runtime's run, at every batch, with 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/runtime/arena.h"
#include "cc/runtime/runtime.h"
#include "cc/trace/trace.h"

namespace shp {
namespace runtime {
namespace {

using trace::DType;
using trace::OpKind;
using trace::Tensor;

void Fill(uint8_t* p, size_t n, uint8_t v) { std::memset(p, v, n); }

TEST(ScratchArena, GrowsKeepsTheLargestAndIsWritable) {
  ScratchArena a;
  EXPECT_EQ(a.size(), 0u);
  uint8_t* p = a.Reserve(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_GT(a.size(), 0u);
  size_t prev = a.size();
  for (size_t bytes : {size_t{100}, size_t{5000}, size_t{70000}, size_t{300000}, size_t{900001}}) {
    const size_t reserved = a.reserved();
    uint8_t* q = a.Reserve(bytes);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u);
    EXPECT_GE(a.size(), bytes);
    EXPECT_GE(a.size(), prev);
    EXPECT_GE(a.reserved(), a.size());
    // A growth within the reserved range keeps the block (nothing moves, nothing is copied;
    // these sizes stay below kHugeBlockBytes).
    if (bytes <= reserved) {
      EXPECT_EQ(q, p) << bytes;
    }
    Fill(q, a.size(), static_cast<uint8_t>(bytes));  // every byte committed
    p = q;
    prev = a.size();
  }
  // A smaller request keeps the block and its size.
  const size_t big = a.size();
  EXPECT_EQ(a.Reserve(10), p);
  EXPECT_EQ(a.Reserve(big), p);
  EXPECT_EQ(a.size(), big);
}

TEST(ScratchArena, LargeBlocksAreWholeHugePages) {
  const size_t huge = ScratchArena::HugePageBytes();
  ScratchArena a;
  uint8_t* p = a.Reserve(4096);
  Fill(p, a.size(), 1);
  p = a.Reserve(ScratchArena::kHugeBlockBytes + 1);
  Fill(p, a.size(), 2);
  if (huge == 0 || a.reserved() == a.size()) {
    // No huge pages here (or a heap block under a sanitizer): the pages only.
    EXPECT_GE(a.size(), ScratchArena::kHugeBlockBytes + 1);
    return;
  }
  EXPECT_EQ(a.size() % huge, 0u) << a.size();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % huge, 0u);
  // Growing again stays in whole huge pages, in place.
  uint8_t* q = a.Reserve(a.size() + 1);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.size() % huge, 0u);
  Fill(q, a.size(), 3);
}

TEST(ScratchArena, BeyondTheReservedRange) {
  ScratchArena a;
  uint8_t* p = a.Reserve(1000);
  const size_t reserved = a.reserved();
  ASSERT_GE(reserved, a.size());
  // (A sanitizer's heap block reserves exactly its size: every growth is a new block.)
  const size_t beyond = reserved + 12345;
  uint8_t* q = a.Reserve(beyond);
  ASSERT_NE(q, nullptr);
  EXPECT_GE(a.size(), beyond);
  Fill(q, a.size(), 7);
  EXPECT_EQ(a.Reserve(1000), q);
  (void)p;
}

// ---- An MLP with a symbolic batch: matmul + bias + relu (fused), softmax ----

struct Net {
  std::unique_ptr<dim::Scope> scope = dim::Scope::Create({});
  std::unique_ptr<trace::Trace> t{new trace::Trace(scope.get())};
  std::vector<std::vector<float>> w, b;
  std::shared_ptr<const program::Program> p;
};

std::vector<float> Random(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

constexpr int64_t kIn = 64, kH = 256, kOut = 10;

std::unique_ptr<Net> MakeNet() {
  std::unique_ptr<Net> n(new Net);
  trace::Trace& t = *n->t;
  const int64_t dims[4] = {kIn, kH, kH, kOut};
  const Tensor* x = t.Input("x", DType::kF32, "batch, 64");
  const Tensor* h = x;
  float zero = 0;
  const Tensor* z = t.Constant(DType::kF32, {}, &zero, sizeof zero);
  for (int l = 0; l < 3; ++l) {
    n->w.push_back(Random(static_cast<size_t>(dims[l] * dims[l + 1]), 10 + l, 0.125f));
    n->b.push_back(Random(static_cast<size_t>(dims[l + 1]), 20 + l, 0.1f));
    const Tensor* w = t.Constant(DType::kF32, {dims[l], dims[l + 1]}, n->w.back().data(),
                                 n->w.back().size() * sizeof(float));
    const Tensor* b = t.Constant(DType::kF32, {dims[l + 1]}, n->b.back().data(),
                                 n->b.back().size() * sizeof(float));
    h = t.Binary(OpKind::kAdd, t.MatMul(h, w), b);
    if (l < 2) h = t.Binary(OpKind::kMax, h, z);
  }
  const Tensor* y = t.Softmax(h, -1);
  n->p =
      std::shared_ptr<const program::Program>(program::Program::FromTrace(t, {x}, {y}, {"probs"}));
  return n;
}

class Sink : public OutputSink {
 public:
  void* Output(size_t, DType, const int64_t* shape, size_t rank) override {
    size_t n = 1;
    for (size_t i = 0; i < rank; ++i) n *= static_cast<size_t>(shape[i]);
    out.assign(n, -1.0f);
    return out.data();
  }
  std::vector<float> out;
};

std::vector<float> RunNet(Runtime& rt, const std::vector<float>& x, int64_t batch) {
  const int64_t shape[2] = {batch, kIn};
  ArrayView v{DType::kF32, shape, 2, x.data()};
  Sink s;
  rt.Run(nullptr, &v, 1, &s);
  return s.out;
}

// Batches that grow the arena (past the huge-page size: 2 x 1 KiB per row), shrink, and grow
// again: each first run equals the cached rerun and a fresh runtime's run, bit for bit.
TEST(FirstRun, BitIdenticalToCachedAndFreshRuns) {
  std::unique_ptr<Net> net = MakeNet();
  for (int threads : {1, 2}) {
    Options o;
    o.num_threads = threads;
    Runtime rt(net->p, o);
    uint64_t built = 0;
    for (int64_t batch : {1, 3, 77, 513, 40, 1100, 2600, 5, 2601, 700}) {
      const std::vector<float> x =
          Random(static_cast<size_t>(batch * kIn), static_cast<uint32_t>(batch), 1.0f);
      const std::vector<float> first = RunNet(rt, x, batch);
      ASSERT_EQ(rt.stats().plans_built, ++built) << "batch " << batch << " was not new";
      const std::vector<float> cached = RunNet(rt, x, batch);
      Runtime fresh(net->p, o);
      const std::vector<float> alone = RunNet(fresh, x, batch);
      ASSERT_EQ(first.size(), static_cast<size_t>(batch * kOut));
      EXPECT_EQ(0, std::memcmp(first.data(), cached.data(), first.size() * sizeof(float)))
          << "batch " << batch << ", " << threads << " threads";
      EXPECT_EQ(0, std::memcmp(first.data(), alone.data(), first.size() * sizeof(float)))
          << "batch " << batch << ", " << threads << " threads";
      // A probability row: the softmax ran on this run's logits.
      double sum = 0;
      for (int64_t j = 0; j < kOut; ++j) sum += first[static_cast<size_t>(j)];
      EXPECT_NEAR(sum, 1.0, 1e-5) << "batch " << batch;
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace shp
