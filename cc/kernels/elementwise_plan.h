// The target-independent plan of one EvalElementwise call (see elementwise.h): the output index
// space collapsed, and each input's layout and access mode; plus the tile helpers the per-target
// evaluator (elementwise-inl.h) uses. Plain C++ (no Highway). Internal to the elementwise family.
#ifndef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_PLAN_H_
#define SHAPEPOLY_CC_KERNELS_ELEMENTWISE_PLAN_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/narrow.h"

namespace shp {
namespace kernels {
namespace ew_plan {

constexpr int64_t kTile = 1024;      // elements per tile: the unit of the thread split
constexpr int64_t kGrainTiles = 64;  // minimum tiles per thread chunk
// Elements evaluated per pass of the program (a tile is evaluated kChunk at a time). Short
// passes keep the memory streams busy: a pass that touches no memory (a unary op of a longer
// chain) leaves them idle, and the hardware prefetchers run ahead of the input streams far
// enough to cover a 256-element pass but not a 1024-element one (AVX2, Zen 3: with streamed
// outputs, the 1-thread tanh(a*x+b)*c about 20% faster before it became one fused pass).
constexpr int64_t kChunk = 256;
static_assert(kTile % kChunk == 0, "chunks must not straddle tiles");
constexpr size_t kSlotBytes = kChunk * 8;
// Outputs of at least this many bytes are written with non-temporal stores (see StreamOutputs in
// elementwise-inl.h): about the size of a server CPU's last-level cache (32 MiB here).
constexpr uint64_t kStreamMinBytes = uint64_t{32} << 20;

enum class InMode { kDirect, kScalar, kGather };

// Per-input layout. strides[0..rank) are written before use (left uninitialized otherwise,
// to keep a call on a tiny array cheap).
struct In {
  const uint8_t* data = nullptr;
  size_t esize = 0;
  bool used = false;
  InMode mode = InMode::kDirect;
  int64_t strides[kElementwiseMaxRank];  // per collapsed dim, in elements
};

constexpr int kSmallInputs = 6;

struct Plan {
  const ElementwiseProgram* program = nullptr;
  int rank = 1;  // collapsed rank, >= 1
  int64_t shape[kElementwiseMaxRank];
  int64_t total = 0;
  bool any_gather = false;
  In* ins = nullptr;  // by input index: small_ins or big_ins
  In small_ins[kSmallInputs];
  std::vector<In> big_ins;
  void* const* outputs = nullptr;
  // One chunk (total <= kChunk) of a program that is a single binary op of two direct inputs
  // written straight into its output (a tiny add): RunPlan makes EvalTiles' one BinaryArray
  // call without EvalTiles' set-up (per-thread scratch, the splat pass, the register walk).
  bool one_binary = false;
};

// Copies tile [f0, f0 + len) of a strided input into dst (contiguous). idx0 is the multi-index
// of flat element f0 in the collapsed shape.
inline void GatherTile(const In& in, const Plan& plan, const int64_t* idx0, int64_t len,
                       uint8_t* dst) {
  const int last = plan.rank - 1;
  int64_t idx[kElementwiseMaxRank];
  int64_t off = 0;
  for (int d = 0; d <= last; ++d) {
    idx[d] = idx0[d];
    off += idx[d] * in.strides[d];
  }
  const int64_t s = in.strides[last];
  const size_t es = in.esize;
  int64_t pos = 0;
  while (pos < len) {
    const int64_t seg = std::min(len - pos, plan.shape[last] - idx[last]);
    const uint8_t* src = in.data + off * static_cast<int64_t>(es);
    uint8_t* out = dst + pos * static_cast<int64_t>(es);
    if (s == 1) {
      memcpy(out, src, static_cast<size_t>(seg) * es);
    } else {
      const int64_t sb = s * static_cast<int64_t>(es);
      switch (es) {
        case 1:
          for (int64_t k = 0; k < seg; ++k) out[k] = src[k * sb];
          break;
        case 2:
          for (int64_t k = 0; k < seg; ++k) memcpy(out + 2 * k, src + k * sb, 2);
          break;
        case 4:
          for (int64_t k = 0; k < seg; ++k) memcpy(out + 4 * k, src + k * sb, 4);
          break;
        default:
          for (int64_t k = 0; k < seg; ++k) memcpy(out + 8 * k, src + k * sb, 8);
          break;
      }
    }
    pos += seg;
    // Advance the multi-index by seg along the last dim, carrying into outer dims.
    idx[last] += seg;
    off += seg * s;
    for (int d = last; d > 0 && idx[d] == plan.shape[d]; --d) {
      off -= idx[d] * in.strides[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += in.strides[d - 1];
    }
  }
}

// Fills n elements of esize bytes at dst with the element at src.
inline void Splat(const void* src, size_t esize, int64_t n, uint8_t* dst) {
  for (int64_t k = 0; k < n; ++k) memcpy(dst + k * static_cast<int64_t>(esize), src, esize);
}

// The typed constant of a kConst instruction, written to `out` (8 bytes available).
inline void ConstValue(const ElementwiseInstr& in, void* out) {
  switch (in.dtype) {
    case DType::kF32: {
      const float v = static_cast<float>(in.f);
      memcpy(out, &v, 4);
      return;
    }
    case DType::kF64:
      memcpy(out, &in.f, 8);
      return;
    case DType::kI32: {
      const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(in.i)));
      memcpy(out, &v, 4);
      return;
    }
    case DType::kI64:
      memcpy(out, &in.i, 8);
      return;
    case DType::kBool: {
      const uint8_t v = in.i != 0;
      memcpy(out, &v, 1);
      return;
    }
    case DType::kF16:
    case DType::kBF16:
      StoreScalar(in.dtype, in.f, out);  // narrow.h: rounded once
      return;
    default: {  // the narrow integers: the low bytes of the two's complement value
      const uint64_t v = static_cast<uint64_t>(in.i);
      const size_t size = DTypeSize(in.dtype);
      for (size_t b = 0; b < size; ++b)
        static_cast<uint8_t*>(out)[b] = static_cast<uint8_t>(v >> (8 * b));
      return;
    }
  }
}

// Validates the arguments of EvalElementwise and fills *plan (which must not move afterwards:
// plan->ins may point into it). Returns false for rejected arguments (bad counts or rank, a
// negative extent, null data with a non-empty shape); true otherwise, with plan->total == 0 when
// there is nothing to compute.
bool BuildPlan(const ElementwiseProgram& program, int rank, const int64_t* shape,
               const ElementwiseInput* inputs, int num_inputs, void* const* outputs,
               int num_outputs, Plan* plan);

// Runs a plan BuildPlan accepted, as EvalElementwise would (bit-identical results), after the
// caller may have pointed ins[k].data (of used inputs) and outputs at other arrays of the same
// shapes: a caller evaluating one shape many times builds the plan once (the runtime does at
// plan time). The pointers must be non-null when plan.total > 0. Defined with the dispatch
// (elementwise.cc).
void RunPlan(const Plan& plan, ThreadPool* pool);

}  // namespace ew_plan
}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_ELEMENTWISE_PLAN_H_
