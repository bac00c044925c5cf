// Matmul with a pre-packed B (see matmul_prepacked.h), on the packing routines and micro-kernel
// of matmul-inl.h. foreach_target.h re-includes this file once per Highway target; the
// HWY_ONCE pass emits the dispatch tables and the PackedMatrixF32 members.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/matmul_prepacked.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/matmul-inl.h"
#include "cc/kernels/matmul_prepacked.h"

#include <cstdlib>
#include <new>
#include <utility>

HWY_BEFORE_NAMESPACE();
namespace shp {
namespace kernels {
namespace HWY_NAMESPACE {

// The tile width (vectors per tile row) for n columns: the one that pads n least (ties: the
// wider tile), e.g. 2 x 16 lanes for n = 256 on AVX-512 where 3 x 16 would compute 288
// columns. Any width gives the same bits: every C element is accumulated in the same p order.
inline int PrepackedNRV(int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int best = kGemmNRV;
  int64_t best_cols = (n + kGemmNRV * N - 1) / (kGemmNRV * N) * (kGemmNRV * N);
  for (int nrv : {2, 1}) {
    const int64_t cols = (n + nrv * N - 1) / (nrv * N) * (nrv * N);
    if (cols < best_cols) {
      best = nrv;
      best_cols = cols;
    }
  }
  return best;
}

template <int NRV>
void PackNRV(const float* b, int64_t k, int64_t n, int64_t rs, int64_t cs, PackedMatrixF32* out) {
  const hn::ScalableTag<float> d;
  using B = GemmBlocking<float>;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));
  const int64_t n_padded = (n + NR - 1) / NR * NR;
  const size_t size = static_cast<size_t>(k * n_padded);
  const size_t bytes = (std::max<size_t>(size, 1) * sizeof(float) + 63) / 64 * 64;
  float* data = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (data == nullptr) throw std::bad_alloc();
  GemmOperands<float> g{};
  g.b = b;
  g.b_rs = rs;
  g.b_cs = cs;
  g.k = k;
  if (n > 0) {
    for (int64_t pc = 0; pc < k; pc += B::kKC) {
      const int64_t kc = std::min<int64_t>(B::kKC, k - pc);
      GemmPackB<NRV>(d, g, pc, kc, 0, n, data + pc * n_padded);
    }
  }
  out->data_ = data;
  out->size_ = size;
  out->k_ = k;
  out->n_ = n;
  out->n_padded_ = n_padded;
  out->nrv_ = NRV;
  out->lanes_ = static_cast<int32_t>(hn::Lanes(d));
}

void PackF32Target(const float* b, int64_t k, int64_t n, int64_t rs, int64_t cs,
                   PackedMatrixF32* out) {
  switch (PrepackedNRV(n)) {
    case 1: PackNRV<1>(b, k, n, rs, cs, out); return;
    case 2: PackNRV<2>(b, k, n, rs, cs, out); return;
    default: PackNRV<kGemmNRV>(b, k, n, rs, cs, out); return;
  }
}

// Rows [i0, i1) x columns [j0, j1) of one product (j0 a multiple of NR), all of k.
template <int NRV>
HWY_NOINLINE void PrepackedBlock(const GemmOperands<float>& g, const PackedMatrixF32& pb,
                                 int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                                 float* HWY_RESTRICT apack) {
  const hn::ScalableTag<float> d;
  using B = GemmBlocking<float>;
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));
  if (g.k == 0) {
    if (!g.accumulate) {
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) g.c[i * g.c_rs + j] = 0.0f;
      }
    }
    return;
  }
  for (int64_t pc = 0; pc < g.k; pc += B::kKC) {
    const int64_t kc = std::min<int64_t>(B::kKC, g.k - pc);
    const bool accumulate = g.accumulate || pc > 0;
    const float* bblock = pb.data_ + pc * pb.n_padded_;
    for (int64_t ic = i0; ic < i1; ic += B::kMC) {
      const int64_t mc = std::min<int64_t>(B::kMC, i1 - ic);
      GemmPackA(g, ic, mc, pc, kc, apack);
      for (int64_t jr = j0; jr < j1; jr += NR) {
        const float* bp = bblock + (jr / NR) * kc * NR;
        for (int64_t ir = 0; ir < mc; ir += MR) {
          GemmMicroKernel<NRV>(d, kc, apack + (ir / MR) * kc * MR, bp, g.c + (ic + ir) * g.c_rs + jr,
                               g.c_rs, std::min<int64_t>(MR, mc - ir),
                               std::min<int64_t>(NR, j1 - jr), accumulate);
        }
      }
    }
  }
}

// The prepacked twin of MatmulFloatNRV (matmul-inl.h), with the same work split.
template <int NRV>
void PrepackedNRVImpl(const MatmulParams& prm, int64_t batch, const float* a,
                      const PackedMatrixF32& pb, float* c, ThreadPool* pool) {
  const hn::ScalableTag<float> d;
  using B = GemmBlocking<float>;
  constexpr int64_t MR = kGemmMR;
  const int64_t NR = NRV * static_cast<int64_t>(hn::Lanes(d));
  const GemmSplit sp = SplitGemmWork(prm, batch, MR, NR, pool);
  const auto run = [&](int64_t begin, int64_t end) {
    const int64_t mc_max = std::min<int64_t>(B::kMC, sp.m_step);
    const int64_t kc_max = std::min<int64_t>(B::kKC, std::max<int64_t>(prm.k, 1));
    float* apack = GemmScratch<float>(0, static_cast<size_t>((mc_max + MR) * kc_max));
    for (int64_t item = begin; item < end; ++item) {
      const GemmItem it = GemmItemAt(prm, sp, item);
      GemmOperands<float> g{};
      g.a = a == nullptr ? nullptr : a + it.off_a;
      g.a_rs = prm.a_row_stride;
      g.a_cs = prm.a_col_stride;
      g.c = c + it.off_c;
      g.c_rs = prm.c_row_stride;
      g.k = prm.k;
      g.accumulate = prm.accumulate;
      PrepackedBlock<NRV>(g, pb, it.i0, it.i1, it.j0, it.j1, apack);
    }
  };
  RunGemmItems(sp, pool, run);
}

bool MatmulF32PrepackedTarget(const MatmulParams& prm, const float* a, const PackedMatrixF32& pb,
                              float* c, ThreadPool* pool) {
  if (!ValidMatmulParams(prm) || pb.data_ == nullptr || prm.k != pb.k_ || prm.n != pb.n_) return false;
  for (int i = 0; i < prm.batch_rank; ++i) {
    if (prm.b_batch_strides[i] != 0) return false;
  }
  const hn::ScalableTag<float> d;
  if (pb.lanes_ != static_cast<int32_t>(hn::Lanes(d)) || pb.nrv_ != PrepackedNRV(prm.n)) return false;
  int64_t batch = 1;
  for (int i = 0; i < prm.batch_rank; ++i) batch *= prm.batch_dims[i];
  if (batch == 0 || prm.m == 0 || prm.n == 0) return true;
  switch (pb.nrv_) {
    case 1: PrepackedNRVImpl<1>(prm, batch, a, pb, c, pool); break;
    case 2: PrepackedNRVImpl<2>(prm, batch, a, pb, c, pool); break;
    default: PrepackedNRVImpl<kGemmNRV>(prm, batch, a, pb, c, pool); break;
  }
  return true;
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace shp
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace shp {
namespace kernels {

HWY_EXPORT(PackF32Target);
HWY_EXPORT(MatmulF32PrepackedTarget);

PackedMatrixF32::~PackedMatrixF32() { std::free(data_); }

PackedMatrixF32::PackedMatrixF32(PackedMatrixF32&& o) noexcept { *this = std::move(o); }

PackedMatrixF32& PackedMatrixF32::operator=(PackedMatrixF32&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    size_ = o.size_;
    k_ = o.k_;
    n_ = o.n_;
    n_padded_ = o.n_padded_;
    nrv_ = o.nrv_;
    lanes_ = o.lanes_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

PackedMatrixF32 PackedMatrixF32::Pack(const float* b, int64_t k, int64_t n, int64_t row_stride,
                                      int64_t col_stride) {
  PackedMatrixF32 out;
  if (k < 0 || n < 0) return out;
  HWY_DYNAMIC_DISPATCH(PackF32Target)(b, k, n, row_stride, col_stride, &out);
  return out;
}

bool MatmulF32Prepacked(const MatmulParams& params, const float* a, const PackedMatrixF32& b,
                        float* c, ThreadPool* pool) {
  return HWY_DYNAMIC_DISPATCH(MatmulF32PrepackedTarget)(params, a, b, c, pool);
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
