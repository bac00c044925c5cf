// Fused elementwise evaluator: program builder and plan (once), per-target tile loop
// (foreach_target.h re-includes this file per Highway target), and the dispatcher.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cc/kernels/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cc/kernels/elementwise-inl.h"

// ---- Target-independent plan (once) ----
#ifndef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_PLAN_
#define SHAPEPOLY_CC_KERNELS_ELEMENTWISE_PLAN_
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "cc/kernels/elementwise.h"

namespace shp {
namespace kernels {
namespace ew_plan {

constexpr int64_t kTile = 1024;       // elements per tile
constexpr int64_t kGrainTiles = 64;   // minimum tiles per thread chunk
constexpr size_t kSlotBytes = kTile * 8;

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
    case DType::kF64: memcpy(out, &in.f, 8); return;
    case DType::kI32: {
      const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(in.i)));
      memcpy(out, &v, 4);
      return;
    }
    case DType::kI64: memcpy(out, &in.i, 8); return;
    case DType::kBool: {
      const uint8_t v = in.i != 0;
      memcpy(out, &v, 1);
      return;
    }
  }
}

}  // namespace ew_plan
}  // namespace kernels
}  // namespace shp
#endif  // SHAPEPOLY_CC_KERNELS_ELEMENTWISE_PLAN_

// ---- Per-target tile loop ----
HWY_BEFORE_NAMESPACE();
namespace shp {
namespace kernels {
namespace HWY_NAMESPACE {

// Evaluates tiles [tile_begin, tile_end) of the plan.
void EvalTilesTarget(const ew_plan::Plan& plan, int64_t tile_begin, int64_t tile_end) {
  using ew_plan::kSlotBytes;
  using ew_plan::kTile;
  const ElementwiseProgram& prog = *plan.program;
  const std::vector<ElementwiseInstr>& code = prog.instrs();
  const std::vector<int>& slots = prog.slots();
  const size_t nregs = code.size();

  thread_local std::vector<uint8_t> scratch;
  thread_local std::vector<const uint8_t*> regs;
  const size_t need = static_cast<size_t>(prog.num_slots()) * kSlotBytes + 64;
  if (scratch.size() < need) scratch.resize(need);
  if (regs.size() < nregs) regs.resize(nregs);
  const std::vector<char>& is_output = prog.is_output();
  const std::vector<int>& fused = prog.fused_mul();
  const size_t last = nregs == 0 ? 0 : nregs - 1;
  const int direct_out = prog.direct_output();
  // Fusion (fused/skip) and the direct output are decided by the program builder (see
  // ElementwiseProgram::AssignSlots).
  uint8_t* base = scratch.data();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
  auto slot = [&](size_t r) { return base + static_cast<size_t>(slots[r]) * kSlotBytes; };

  // Constants and scalar inputs are the same for every tile: splat them once.
  for (size_t r = 0; r < nregs; ++r) {
    const ElementwiseInstr& in = code[r];
    if (in.kind == ElementwiseInstr::Kind::kConst) {
      uint8_t value[8];
      ew_plan::ConstValue(in, value);
      ew_plan::Splat(value, DTypeSize(in.dtype), kTile, slot(r));
      regs[r] = slot(r);
    } else if (in.kind == ElementwiseInstr::Kind::kInput) {
      const ew_plan::In& src = plan.ins[static_cast<size_t>(in.input)];
      if (src.mode == ew_plan::InMode::kScalar) {
        ew_plan::Splat(src.data, src.esize, kTile, slot(r));
        regs[r] = slot(r);
      }
    }
  }

  int64_t idx0[kElementwiseMaxRank];
  for (int64_t t = tile_begin; t < tile_end; ++t) {
    const int64_t f0 = t * kTile;
    const int64_t len = std::min(kTile, plan.total - f0);
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
        case K::kConst: break;
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
          UnaryArray(static_cast<UnaryOp>(in.op), in.dtype, regs[in.a], dst, n);
          regs[r] = dst;
          break;
        case K::kBinary:
          if (prog.fused_into_next()[r]) break;  // computed inside the Add that uses it
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
          CompareAny(static_cast<CompareOp>(in.op), code[in.a].dtype, regs[in.a], regs[in.b],
                     dst, n);
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
      if (dst != src) memmove(dst, src, n * es);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace shp
HWY_AFTER_NAMESPACE();

// ---- Builder and dispatcher (once) ----
#if HWY_ONCE
#include <stdexcept>
#include <string>

namespace shp {
namespace kernels {

HWY_EXPORT(EvalTilesTarget);

namespace {
[[noreturn]] void Fail(const std::string& msg) {
  throw std::invalid_argument("elementwise: " + msg);
}
const char* UnaryName(UnaryOp op) {
  static const char* const kNames[] = {"neg",  "abs",  "exp",      "log",   "log1p", "expm1",
                                       "sqrt", "rsqrt", "sin",     "cos",   "tanh",  "logistic",
                                       "floor", "ceil", "round",   "sign",  "not"};
  const int i = static_cast<int>(op);
  return i >= 0 && i <= static_cast<int>(UnaryOp::kNot) ? kNames[i] : "invalid";
}
const char* BinaryName(BinaryOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "floordiv", "pow", "max",
                                       "min", "rem", "and", "or",       "xor", "fmod"};
  const int i = static_cast<int>(op);
  return i >= 0 && i <= static_cast<int>(BinaryOp::kFmod) ? kNames[i] : "invalid";
}
bool ValidDType(DType t) { return DTypeSize(t) != 0; }
}  // namespace

void ElementwiseProgram::CheckReg(int reg) const {
  if (reg < 0 || reg >= num_registers()) {
    Fail("register " + std::to_string(reg) + " does not exist (program has " +
         std::to_string(num_registers()) + ")");
  }
}

DType ElementwiseProgram::dtype(int reg) const {
  CheckReg(reg);
  return instrs_[static_cast<size_t>(reg)].dtype;
}

int ElementwiseProgram::Push(const ElementwiseInstr& in) {
  instrs_.push_back(in);
  AssignSlots();
  return num_registers() - 1;
}

int ElementwiseProgram::Input(int input_index, DType dtype) {
  if (input_index < 0) Fail("negative input index " + std::to_string(input_index));
  if (!ValidDType(dtype)) Fail("invalid dtype for input " + std::to_string(input_index));
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kInput;
  in.dtype = dtype;
  in.input = input_index;
  num_inputs_ = std::max(num_inputs_, input_index + 1);
  return Push(in);
}

int ElementwiseProgram::Constant(DType dtype, double value) {
  if (!ValidDType(dtype)) Fail("invalid dtype for constant");
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kConst;
  in.dtype = dtype;
  in.f = value;
  if (dtype == DType::kI32) {
    in.i = ew_scalar::FloatToInt<int32_t>(value);
  } else if (dtype == DType::kBool) {
    in.i = value != 0.0 ? 1 : 0;  // NaN != 0: true
  } else {
    in.i = ew_scalar::FloatToInt<int64_t>(value);
  }
  return Push(in);
}

int ElementwiseProgram::ConstantInt(DType dtype, int64_t value) {
  if (!ValidDType(dtype)) Fail("invalid dtype for constant");
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kConst;
  in.dtype = dtype;
  in.i = value;
  if (dtype == DType::kI32) in.i = static_cast<int32_t>(static_cast<uint32_t>(value));
  if (dtype == DType::kBool) in.i = value != 0;
  in.f = static_cast<double>(value);
  return Push(in);
}

int ElementwiseProgram::Unary(UnaryOp op, int x) {
  CheckReg(x);
  const DType t = dtype(x);
  const int o = static_cast<int>(op);
  if (o < 0 || o > static_cast<int>(UnaryOp::kNot)) Fail("invalid unary op");
  bool ok;
  if (IsFloat(t)) {
    ok = op != UnaryOp::kNot;
  } else if (IsInt(t)) {
    ok = op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kSign ||
         op == UnaryOp::kNot || op == UnaryOp::kFloor || op == UnaryOp::kCeil ||
         op == UnaryOp::kRound;
  } else {
    ok = op == UnaryOp::kNot;
  }
  if (!ok) Fail(std::string("unary ") + UnaryName(op) + " is not defined for " + DTypeName(t));
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kUnary;
  in.dtype = t;
  in.op = o;
  in.a = x;
  return Push(in);
}

int ElementwiseProgram::Binary(BinaryOp op, int x, int y) {
  CheckReg(x);
  CheckReg(y);
  const DType t = dtype(x);
  const int o = static_cast<int>(op);
  if (o < 0 || o > static_cast<int>(BinaryOp::kFmod)) Fail("invalid binary op");
  if (dtype(y) != t) {
    Fail(std::string("binary ") + BinaryName(op) + " of " + DTypeName(t) + " and " +
         DTypeName(dtype(y)) + ": operands must have one dtype");
  }
  bool ok;
  const bool bitwise = op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kXor;
  if (IsFloat(t)) {
    ok = !bitwise;
  } else if (IsInt(t)) {
    ok = true;
  } else {
    ok = bitwise || op == BinaryOp::kMax || op == BinaryOp::kMin;
  }
  if (!ok) Fail(std::string("binary ") + BinaryName(op) + " is not defined for " + DTypeName(t));
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kBinary;
  in.dtype = t;
  in.op = o;
  in.a = x;
  in.b = y;
  return Push(in);
}

int ElementwiseProgram::Compare(CompareOp op, int x, int y) {
  CheckReg(x);
  CheckReg(y);
  const int o = static_cast<int>(op);
  if (o < 0 || o > static_cast<int>(CompareOp::kGe)) Fail("invalid compare op");
  if (dtype(x) != dtype(y)) {
    Fail(std::string("compare of ") + DTypeName(dtype(x)) + " and " + DTypeName(dtype(y)) +
         ": operands must have one dtype");
  }
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kCompare;
  in.dtype = DType::kBool;
  in.op = o;
  in.a = x;
  in.b = y;
  return Push(in);
}

int ElementwiseProgram::Select(int cond, int if_true, int if_false) {
  CheckReg(cond);
  CheckReg(if_true);
  CheckReg(if_false);
  if (dtype(cond) != DType::kBool) {
    Fail(std::string("select condition must be bool, got ") + DTypeName(dtype(cond)));
  }
  if (dtype(if_true) != dtype(if_false)) {
    Fail(std::string("select of ") + DTypeName(dtype(if_true)) + " and " +
         DTypeName(dtype(if_false)) + ": branches must have one dtype");
  }
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kSelect;
  in.dtype = dtype(if_true);
  in.a = cond;
  in.b = if_true;
  in.c = if_false;
  return Push(in);
}

int ElementwiseProgram::Convert(int x, DType to) {
  CheckReg(x);
  if (!ValidDType(to)) Fail("invalid dtype for convert");
  ElementwiseInstr in;
  in.kind = ElementwiseInstr::Kind::kConvert;
  in.dtype = to;
  in.a = x;
  return Push(in);
}

int ElementwiseProgram::AddOutput(int reg) {
  CheckReg(reg);
  outputs_.push_back(reg);
  AssignSlots();
  return num_outputs() - 1;
}

// Inputs and constants get dedicated slots (constants and scalar inputs are splatted once per
// thread and must survive every tile). Computed registers share slots by liveness: a slot is
// released after the last instruction that reads it (never reused by that same instruction, so
// operands never alias results); output registers stay live to the end of the tile.
void ElementwiseProgram::AssignSlots() {
  const int n = num_registers();
  std::vector<int> last_use(static_cast<size_t>(n), -1);
  for (int r = 0; r < n; ++r) {
    const ElementwiseInstr& in = instrs_[static_cast<size_t>(r)];
    for (int o : {in.a, in.b, in.c}) {
      if (o >= 0) last_use[static_cast<size_t>(o)] = r;
    }
  }
  for (int r : outputs_) last_use[static_cast<size_t>(r)] = n;
  slots_.assign(static_cast<size_t>(n), -1);
  std::vector<int> free_slots;
  int count = 0;
  for (int r = 0; r < n; ++r) {
    const ElementwiseInstr& in = instrs_[static_cast<size_t>(r)];
    using K = ElementwiseInstr::Kind;
    if (in.kind == K::kInput || in.kind == K::kConst) {
      slots_[static_cast<size_t>(r)] = count++;
      continue;
    }
    if (!free_slots.empty()) {
      slots_[static_cast<size_t>(r)] = free_slots.back();
      free_slots.pop_back();
    } else {
      slots_[static_cast<size_t>(r)] = count++;
    }
    for (int o : {in.a, in.b, in.c}) {
      if (o < 0 || last_use[static_cast<size_t>(o)] != r) continue;
      const K k = instrs_[static_cast<size_t>(o)].kind;
      if (k == K::kInput || k == K::kConst) continue;
      if (std::find(free_slots.begin(), free_slots.end(), slots_[static_cast<size_t>(o)]) ==
          free_slots.end()) {
        free_slots.push_back(slots_[static_cast<size_t>(o)]);
      }
    }
    if (last_use[static_cast<size_t>(r)] < r) free_slots.push_back(slots_[static_cast<size_t>(r)]);
  }
  num_slots_ = count;

  // Evaluator decisions (see EvalElementwise): outputs, Mul+Add fusion, direct output write.
  is_output_.assign(static_cast<size_t>(n), 0);
  for (int r : outputs_) is_output_[static_cast<size_t>(r)] = 1;
  fused_mul_.assign(static_cast<size_t>(n), -1);
  fused_into_next_.assign(static_cast<size_t>(n), 0);
  std::vector<int> uses(static_cast<size_t>(n), 0);
  for (const ElementwiseInstr& in : instrs_) {
    for (int o : {in.a, in.b, in.c}) {
      if (o >= 0) ++uses[static_cast<size_t>(o)];
    }
  }
  // A Mul immediately followed by an Add (floats) that is the mul's only use: evaluated as
  // one MulAdd pass (same two roundings), skipping the temporary. Adjacency guarantees the
  // mul's operand slots are still intact at the add (the add's own slot may reuse one of
  // them: an exact in-place elementwise pass is safe).
  for (int r = 1; r < n; ++r) {
    const ElementwiseInstr& in = instrs_[static_cast<size_t>(r)];
    if (in.kind != ElementwiseInstr::Kind::kBinary || !IsFloat(in.dtype) ||
        static_cast<BinaryOp>(in.op) != BinaryOp::kAdd || in.a == in.b) {
      continue;
    }
    const int m = r - 1;
    const ElementwiseInstr& mi = instrs_[static_cast<size_t>(m)];
    if ((in.a == m || in.b == m) && mi.kind == ElementwiseInstr::Kind::kBinary &&
        static_cast<BinaryOp>(mi.op) == BinaryOp::kMul && uses[static_cast<size_t>(m)] == 1 &&
        !is_output_[static_cast<size_t>(m)] && !fused_into_next_[static_cast<size_t>(m)] &&
        fused_mul_[static_cast<size_t>(m)] < 0) {
      fused_mul_[static_cast<size_t>(r)] = m;
      fused_into_next_[static_cast<size_t>(m)] = 1;
    }
  }
  // The last instruction, if it computes an output, writes straight into that output (every
  // read of the tile's inputs has happened by then, and it reads its own operands elementwise
  // at the same positions, so an exactly aliased in-place input is still safe).
  direct_output_ = -1;
  if (n > 0 && is_output_[static_cast<size_t>(n - 1)]) {
    const ElementwiseInstr::Kind k = instrs_[static_cast<size_t>(n - 1)].kind;
    if (k != ElementwiseInstr::Kind::kInput && k != ElementwiseInstr::Kind::kConst) {
      for (size_t j = 0; j < outputs_.size(); ++j) {
        if (outputs_[j] == n - 1) {
          direct_output_ = static_cast<int>(j);
          break;
        }
      }
    }
  }
}

void EvalElementwise(const ElementwiseProgram& program, int rank, const int64_t* shape,
                     const ElementwiseInput* inputs, int num_inputs, void* const* outputs,
                     int num_outputs, ThreadPool* pool) {
  if (rank < 0 || rank > kElementwiseMaxRank) {
    Fail("rank " + std::to_string(rank) + " is outside [0, " +
         std::to_string(kElementwiseMaxRank) + "]");
  }
  if (num_inputs < program.num_inputs()) {
    Fail("the program reads " + std::to_string(program.num_inputs()) + " inputs but " +
         std::to_string(num_inputs) + " were given");
  }
  if (num_outputs != program.num_outputs()) {
    Fail("the program has " + std::to_string(program.num_outputs()) + " outputs but " +
         std::to_string(num_outputs) + " were given");
  }
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0) Fail("negative extent " + std::to_string(shape[d]));
    total *= shape[d];
  }
  if (total == 0 || program.num_outputs() == 0) return;
  for (int j = 0; j < num_outputs; ++j) {
    if (outputs[j] == nullptr) Fail("output " + std::to_string(j) + " is null");
  }

  ew_plan::Plan plan;
  plan.program = &program;
  plan.outputs = outputs;
  plan.total = total;
  const int nin = program.num_inputs();
  if (nin <= ew_plan::kSmallInputs) {
    plan.ins = plan.small_ins;
  } else {
    plan.big_ins.resize(static_cast<size_t>(nin));
    plan.ins = plan.big_ins.data();
  }
  for (const ElementwiseInstr& in : program.instrs()) {
    if (in.kind == ElementwiseInstr::Kind::kInput) {
      plan.ins[in.input].used = true;
      plan.ins[in.input].esize = DTypeSize(in.dtype);
    }
  }
  // Row-major strides of the full shape (for inputs given without strides).
  int64_t dense[kElementwiseMaxRank];
  {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      dense[d] = s;
      s *= shape[d];
    }
  }
  auto stride_of = [&](int k, int d) -> int64_t {
    const int64_t* st = inputs[k].strides;
    return st == nullptr ? dense[d] : st[d];
  };
  // Collapse: drop extent-1 dims; merge a dim into the previous one when every used input
  // can (prev stride == stride * extent).
  int r = 0;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 1) continue;
    bool merge = r > 0;
    for (int k = 0; merge && k < nin; ++k) {
      if (plan.ins[k].used && plan.ins[k].strides[r - 1] != stride_of(k, d) * shape[d]) {
        merge = false;
      }
    }
    if (merge) {
      plan.shape[r - 1] *= shape[d];
      for (int k = 0; k < nin; ++k) {
        plan.ins[k].strides[r - 1] = plan.ins[k].used ? stride_of(k, d) : 0;
      }
    } else {
      plan.shape[r] = shape[d];
      for (int k = 0; k < nin; ++k) plan.ins[k].strides[r] = plan.ins[k].used ? stride_of(k, d) : 0;
      ++r;
    }
  }
  if (r == 0) {  // every extent is 1
    plan.shape[0] = 1;
    for (int k = 0; k < nin; ++k) plan.ins[k].strides[0] = 0;
    r = 1;
  }
  plan.rank = r;
  for (int k = 0; k < nin; ++k) {
    ew_plan::In& in = plan.ins[k];
    if (!in.used) continue;
    if (inputs[k].data == nullptr) Fail("input " + std::to_string(k) + " is null");
    in.data = static_cast<const uint8_t*>(inputs[k].data);
    bool scalar = true, direct = true;
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) {
      if (in.strides[d] != 0) scalar = false;
      if (in.strides[d] != s) direct = false;
      s *= plan.shape[d];
    }
    in.mode = scalar ? ew_plan::InMode::kScalar
                     : (direct ? ew_plan::InMode::kDirect : ew_plan::InMode::kGather);
    if (in.mode == ew_plan::InMode::kGather) plan.any_gather = true;
  }

  const int64_t tiles = (total + ew_plan::kTile - 1) / ew_plan::kTile;
  auto* fn = &HWY_DYNAMIC_DISPATCH(EvalTilesTarget);
  if (pool == nullptr || tiles < 2 * ew_plan::kGrainTiles) {
    fn(plan, 0, tiles);
    return;
  }
  pool->ParallelFor(tiles, ew_plan::kGrainTiles,
                    [&](int64_t begin, int64_t end) { fn(plan, begin, end); });
}

}  // namespace kernels
}  // namespace shp
#endif  // HWY_ONCE
