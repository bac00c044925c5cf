// Per-target evaluator of the fused elementwise programs (see elementwise.h): runs a plan
// (elementwise_plan.h) tile by tile with the array operations of elementwise_ops-inl.h. A
// Highway "-inl.h" header: foreach_target.h re-includes it once per target (from
// elementwise.cc), so it has a per-target include guard and is a textual header in Bazel.
#if defined(SHAPEPOLY_CC_KERNELS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_INL_H_
#undef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_INL_H_
#else
#define SHAPEPOLY_CC_KERNELS_ELEMENTWISE_INL_H_
#endif

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/elementwise_ops-inl.h"
#include "cc/kernels/elementwise_plan.h"
#include "cc/kernels/parallel.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace shp::kernels::HWY_NAMESPACE {

// Whether the outputs of `plan` go out with non-temporal (streaming) stores: only when they
// are larger than a last-level cache (ew_plan::kStreamMinBytes: the result would be evicted
// before anyone reads it anyway, and streaming saves the read-for-ownership of every output
// line, 1/5 of the traffic of tanh(a*x+b)*c).
static inline bool StreamOutputs(const ew_plan::Plan& plan) {
  const ElementwiseProgram& prog = *plan.program;
  const std::vector<int>& outs = prog.outputs();
  for (size_t j = 0; j < outs.size(); ++j) {
    const size_t es = DTypeSize(prog.instrs()[static_cast<size_t>(outs[j])].dtype);
    if (static_cast<uint64_t>(plan.total) * es < ew_plan::kStreamMinBytes) return false;
  }
  return !outs.empty();
}

// Copies n bytes from src to dst with non-temporal stores of whole vectors, and plain copies of
// the unaligned head and tail. src may equal dst (an output computed in place of its input):
// memmove, as the unstreamed path uses, since memcpy onto itself is undefined.
static inline void StreamCopy(const uint8_t* src, uint8_t* dst, size_t n) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t N = hn::Lanes(d8);
  size_t i = std::min(n, (N - reinterpret_cast<uintptr_t>(dst) % N) % N);
  memmove(dst, src, i);
  for (; i + N <= n; i += N) hn::Stream(hn::LoadU(d8, src + i), d8, dst + i);
  if (i < n) memmove(dst + i, src + i, n - i);
}

// The fused unary pass of Unary u (see ElementwiseProgram::unary_muladd and fused_unary):
// its operand is the MulAdd at u-1 when unary_muladd()[u], and the result is multiplied by
// the other operand of Mul `mul` when mul >= 0; writes n elements to dst.
static inline void FusedUnary(const ElementwiseProgram& prog, const uint8_t* const* regs, size_t u,
                              int mul, uint8_t* dst, size_t n) {
  const std::vector<ElementwiseInstr>& code = prog.instrs();
  const ElementwiseInstr& in = code[u];
  const void* a = regs[in.a];
  const void* b = nullptr;
  const void* c = nullptr;
  if (prog.unary_muladd()[u]) {
    const ElementwiseInstr& add = code[u - 1];
    const int m = prog.fused_mul()[u - 1];
    const ElementwiseInstr& mi = code[static_cast<size_t>(m)];
    a = regs[mi.a];
    b = regs[mi.b];
    c = regs[add.a == m ? add.b : add.a];
  }
  const void* factor = nullptr;
  if (mul >= 0) {
    const ElementwiseInstr& mi = code[static_cast<size_t>(mul)];
    factor = regs[mi.a == static_cast<int>(u) ? mi.b : mi.a];
  }
  FusedUnaryAny(static_cast<UnaryOp>(in.op), in.dtype, a, b, c, factor, dst, n);
}

// Evaluates tiles [tile_begin, tile_end) of the plan, kChunk elements at a time.
static inline void EvalTiles(const ew_plan::Plan& plan, int64_t tile_begin, int64_t tile_end) {
  using ew_plan::kChunk;
  using ew_plan::kSlotBytes;
  using ew_plan::kTile;
  const ElementwiseProgram& prog = *plan.program;
  const std::vector<ElementwiseInstr>& code = prog.instrs();
  const std::vector<int>& slots = prog.slots();
  const size_t nregs = code.size();

  // Per-thread buffers (ThreadScratch: no thread_local with a destructor), 64-byte aligned.
  uint8_t* const scratch = static_cast<uint8_t*>(
      ThreadScratch(kScratchElementwise, static_cast<size_t>(prog.num_slots()) * kSlotBytes));
  const uint8_t** const regs = static_cast<const uint8_t**>(
      ThreadScratch(kScratchElementwiseRegs, nregs * sizeof(const uint8_t*)));
  const std::vector<char>& is_output = prog.is_output();
  const std::vector<int>& fused = prog.fused_mul();
  const std::vector<char>& into_next = prog.fused_into_next();
  const std::vector<int>& fused_unary = prog.fused_unary();
  const std::vector<char>& unary_muladd = prog.unary_muladd();
  const size_t last = nregs == 0 ? 0 : nregs - 1;
  const bool stream = StreamOutputs(plan);
  // Streamed outputs are computed into scratch and copied out (one pass over L1).
  const int direct_out = stream ? -1 : prog.direct_output();
  // Fusion (fused/skip) and the direct output are decided by the program builder (see
  // ElementwiseProgram::AssignSlots).
  uint8_t* const base = scratch;
  auto slot = [&](size_t r) { return base + static_cast<size_t>(slots[r]) * kSlotBytes; };

  // Constants and scalar inputs are the same for every tile: splat them once.
  for (size_t r = 0; r < nregs; ++r) {
    const ElementwiseInstr& in = code[r];
    if (in.kind == ElementwiseInstr::Kind::kConst) {
      uint8_t value[8];
      ew_plan::ConstValue(in, value);
      ew_plan::Splat(value, DTypeSize(in.dtype), kChunk, slot(r));
      regs[r] = slot(r);
    } else if (in.kind == ElementwiseInstr::Kind::kInput) {
      const ew_plan::In& src = plan.ins[static_cast<size_t>(in.input)];
      if (src.mode == ew_plan::InMode::kScalar) {
        ew_plan::Splat(src.data, src.esize, kChunk, slot(r));
        regs[r] = slot(r);
      }
    }
  }

  int64_t idx0[kElementwiseMaxRank];
  const int64_t end = std::min(tile_end * kTile, plan.total);
  for (int64_t f0 = tile_begin * kTile; f0 < end; f0 += kChunk) {
    const int64_t len = std::min(kChunk, end - f0);
    const size_t n = static_cast<size_t>(len);
    if (plan.any_gather) {
      int64_t rest = f0;
      for (int d = plan.rank - 1; d >= 0; --d) {
        idx0[d] = rest % plan.shape[d];
        rest /= plan.shape[d];
      }
    }
    for (size_t r = 0; r < nregs; ++r) {
      const ElementwiseInstr& in = code[r];
      using K = ElementwiseInstr::Kind;
      uint8_t* dst = slot(r);
      if (static_cast<int>(r) == static_cast<int>(last) && direct_out >= 0) {
        dst = static_cast<uint8_t*>(plan.outputs[direct_out]) +
              f0 * static_cast<int64_t>(DTypeSize(in.dtype));
      }
      switch (in.kind) {
        case K::kConst:
          break;
        case K::kInput: {
          const ew_plan::In& src = plan.ins[static_cast<size_t>(in.input)];
          if (src.mode == ew_plan::InMode::kDirect) {
            regs[r] = src.data + f0 * static_cast<int64_t>(src.esize);
            if (is_output[r]) {  // copy now: an output may overwrite this input in place
              memcpy(slot(r), regs[r], n * src.esize);
              regs[r] = slot(r);
            }
          } else if (src.mode == ew_plan::InMode::kGather) {
            ew_plan::GatherTile(src, plan, idx0, len, slot(r));
            regs[r] = slot(r);
          }
          break;
        }
        case K::kUnary:
          if (into_next[r]) break;  // computed inside the Mul that uses it
          if (unary_muladd[r]) {
            FusedUnary(prog, regs, r, -1, dst, n);
          } else {
            UnaryArray(static_cast<UnaryOp>(in.op), in.dtype, regs[in.a], dst, n);
          }
          regs[r] = dst;
          break;
        case K::kBinary:
          if (into_next[r]) break;  // computed inside a later instruction that uses it
          if (fused_unary[r] >= 0) {
            FusedUnary(prog, regs, static_cast<size_t>(fused_unary[r]), static_cast<int>(r), dst,
                       n);
            regs[r] = dst;
            break;
          }
          if (fused[r] >= 0) {
            const ElementwiseInstr& mi = code[static_cast<size_t>(fused[r])];
            const int other = in.a == fused[r] ? in.b : in.a;
            MulAddAny(in.dtype, regs[mi.a], regs[mi.b], regs[other], dst, n);
            regs[r] = dst;
            break;
          }
          BinaryArray(static_cast<BinaryOp>(in.op), in.dtype, regs[in.a], regs[in.b], dst, n);
          regs[r] = dst;
          break;
        case K::kCompare:
          CompareAny(static_cast<CompareOp>(in.op), code[in.a].dtype, regs[in.a], regs[in.b], dst,
                     n);
          regs[r] = dst;
          break;
        case K::kSelect:
          SelectAny(in.dtype, regs[in.a], regs[in.b], regs[in.c], dst, n);
          regs[r] = dst;
          break;
        case K::kConvert:
          ConvertArray(code[in.a].dtype, regs[in.a], in.dtype, dst, n);
          regs[r] = dst;
          break;
      }
    }
    // Outputs are written after every input of the tile has been read (in-place safety).
    const std::vector<int>& outs = prog.outputs();
    for (size_t j = 0; j < outs.size(); ++j) {
      const size_t es = DTypeSize(code[static_cast<size_t>(outs[j])].dtype);
      uint8_t* dst = static_cast<uint8_t*>(plan.outputs[j]) + f0 * static_cast<int64_t>(es);
      const uint8_t* src = regs[static_cast<size_t>(outs[j])];
      if (stream) {
        StreamCopy(src, dst, n * es);
      } else if (dst != src) {
        memmove(dst, src, n * es);
      }
    }
  }
  if (stream) hwy::FlushStream();  // before the pool reports this range done
}

// Runs the tiles of a built plan (on the pool when there are enough).
inline void RunPlanImpl(const ew_plan::Plan& plan, ThreadPool* pool) {
  if (plan.total == 0) return;
  if (plan.one_binary) {
    // EvalTiles' one pass (f0 = 0, direct output, too small to stream), bit for bit: the same
    // BinaryArray call on the same arrays (~400 instructions less on an 8-element add).
    const std::vector<ElementwiseInstr>& code = plan.program->instrs();
    const ElementwiseInstr& in = code[2];
    const uint8_t* regs[2] = {plan.ins[static_cast<size_t>(code[0].input)].data,
                              plan.ins[static_cast<size_t>(code[1].input)].data};
    BinaryArray(static_cast<BinaryOp>(in.op), in.dtype, regs[in.a], regs[in.b],
                plan.outputs[plan.program->direct_output()], static_cast<size_t>(plan.total));
    return;
  }
  const int64_t tiles = (plan.total + ew_plan::kTile - 1) / ew_plan::kTile;
  if (pool == nullptr || tiles < 2 * ew_plan::kGrainTiles) {
    EvalTiles(plan, 0, tiles);
    return;
  }
  pool->ParallelFor(tiles, ew_plan::kGrainTiles,
                    [&](int64_t begin, int64_t end) { EvalTiles(plan, begin, end); });
}

// EvalElementwise on this target: plans, then runs the tiles.
inline bool EvalElementwiseImpl(const ElementwiseProgram& program, int rank, const int64_t* shape,
                                const ElementwiseInput* inputs, int num_inputs,
                                void* const* outputs, int num_outputs, ThreadPool* pool) {
  ew_plan::Plan plan;
  if (!ew_plan::BuildPlan(program, rank, shape, inputs, num_inputs, outputs, num_outputs, &plan)) {
    return false;
  }
  RunPlanImpl(plan, pool);
  return true;
}

}  // namespace shp::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
