// MatmulF32Prepacked must equal MatmulF32 on the unpacked B bitwise (same micro-kernel and
// accumulation order), for any thread count, stride layout of B, batch and accumulate mode,
// and reject what it cannot compute.
#include "cc/kernels/matmul_prepacked.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cc/kernels/matmul.h"
#include "cc/kernels/parallel.h"
#include "gtest/gtest.h"

namespace shp {
namespace kernels {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void ExpectBitwise(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << what;
}

TEST(MatmulPrepacked, MatchesMatmulF32Bitwise) {
  ThreadPool pool(3);
  const int64_t ms[] = {1, 7, 64, 130};
  const int64_t ns[] = {1, 10, 16, 17, 33, 48, 50, 256, 300};
  const int64_t ks[] = {0, 1, 5, 256, 300, 784};
  uint32_t seed = 1;
  for (int64_t m : ms) {
    for (int64_t n : ns) {
      for (int64_t k : ks) {
        for (bool transposed : {false, true}) {
          for (bool accumulate : {false, true}) {
            std::vector<float> a = Random(static_cast<size_t>(m * k), seed++);
            std::vector<float> b = Random(static_cast<size_t>(k * n), seed++);
            std::vector<float> c0 = Random(static_cast<size_t>(m * n), seed++);
            MatmulParams p = RowMajorMatmul(m, n, k, transposed);
            p.accumulate = accumulate;
            PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, p.b_row_stride, p.b_col_stride);
            ASSERT_FALSE(packed.empty());
            EXPECT_EQ(packed.k(), k);
            EXPECT_EQ(packed.n(), n);
            std::vector<float> want = c0, got1 = c0, got3 = c0;
            ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), want.data(), nullptr));
            ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got1.data(), nullptr));
            ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got3.data(), &pool));
            std::string what = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                               (transposed ? " Bt" : "") + (accumulate ? " acc" : "");
            ExpectBitwise(got1, want, what.c_str());
            ExpectBitwise(got3, want, (what + " (3 threads)").c_str());
          }
        }
      }
    }
  }
}

TEST(MatmulPrepacked, BatchedABroadcastB) {
  ThreadPool pool(2);
  const int64_t batch = 3, m = 20, n = 40, k = 300;
  std::vector<float> a = Random(static_cast<size_t>(batch * m * k), 7);
  std::vector<float> b = Random(static_cast<size_t>(k * n), 8);
  MatmulParams p = BatchedRowMajorMatmul(batch, m, n, k, m * k, 0);
  PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), k, n, n, 1);
  std::vector<float> want(static_cast<size_t>(batch * m * n)), got(want.size()), got2(want.size());
  ASSERT_TRUE(MatmulF32(p, a.data(), b.data(), want.data(), nullptr));
  ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got.data(), nullptr));
  ASSERT_TRUE(MatmulF32Prepacked(p, a.data(), packed, got2.data(), &pool));
  ExpectBitwise(got, want, "batched");
  ExpectBitwise(got2, want, "batched, 2 threads");
}

TEST(MatmulPrepacked, RejectsWhatItCannotCompute) {
  std::vector<float> a(64), b(64), c(64, 5.0f);
  PackedMatrixF32 packed = PackedMatrixF32::Pack(b.data(), 8, 8, 8, 1);
  MatmulParams p = RowMajorMatmul(8, 8, 4);  // k differs from the packed B
  EXPECT_FALSE(MatmulF32Prepacked(p, a.data(), packed, c.data(), nullptr));
  p = BatchedRowMajorMatmul(2, 4, 8, 8, 32, 64);  // B not broadcast over the batch
  EXPECT_FALSE(MatmulF32Prepacked(p, a.data(), packed, c.data(), nullptr));
  PackedMatrixF32 none;
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(MatmulF32Prepacked(RowMajorMatmul(8, 8, 8), a.data(), none, c.data(), nullptr));
  for (float x : c) EXPECT_EQ(x, 5.0f);
  PackedMatrixF32 moved = std::move(packed);
  EXPECT_TRUE(packed.empty());
  EXPECT_TRUE(MatmulF32Prepacked(RowMajorMatmul(8, 8, 8), a.data(), moved, c.data(), nullptr));
}

}  // namespace
}  // namespace kernels
}  // namespace shp
