// ElementwiseProgram: the builder of elementwise register programs, its checks, and the
// evaluator decisions it precomputes (slots, Mul+Add fusion, direct output). Plain C++.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/narrow.h"
#include "cc/kernels/elementwise_scalar.h"

namespace shp {
namespace kernels {

namespace {
std::atomic<uint64_t> contract_breaks{0};

[[noreturn]] void Fail(const std::string& msg) {
  throw std::invalid_argument("elementwise: " + msg);
}
const char* UnaryName(UnaryOp op) {
  static const char* const kNames[] = {
      "neg", "abs",  "exp",      "log",   "log1p", "expm1", "sqrt",  "rsqrt", "sin",
      "cos", "tanh", "logistic", "floor", "ceil",  "round", "sign",  "not",   "erf",
      "tan", "sinh", "cosh",     "asin",  "acos",  "atan",  "asinh", "acosh", "atanh"};
  const int i = static_cast<int>(op);
  return i >= 0 && i <= static_cast<int>(UnaryOp::kAtanh) ? kNames[i] : "invalid";
}
const char* BinaryName(BinaryOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "floordiv", "pow", "max",
                                       "min", "rem", "and", "or",  "xor",      "fmod"};
  const int i = static_cast<int>(op);
  return i >= 0 && i <= static_cast<int>(BinaryOp::kFmod) ? kNames[i] : "invalid";
}
bool ValidDType(DType t) { return DTypeSize(t) != 0; }
}  // namespace

uint64_t ElementwiseContractBreaks() { return contract_breaks.load(std::memory_order_relaxed); }

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
  layout_stale_ = true;
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
  if (IsNarrowInt(dtype)) {
    uint64_t bits = 0;
    StoreScalar(dtype, value, &bits);  // narrow.h's rule, in the low bytes (ConstValue)
    in.i = static_cast<int64_t>(bits);
  } else if (dtype == DType::kI32) {
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
  if (o < 0 || o > static_cast<int>(UnaryOp::kAtanh)) Fail("invalid unary op");
  bool ok;
  if (IsFloat(t)) {
    ok = op != UnaryOp::kNot;
  } else if (IsInt(t)) {
    ok = op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kSign ||
         op == UnaryOp::kNot || op == UnaryOp::kFloor || op == UnaryOp::kCeil ||
         op == UnaryOp::kRound;
  } else {
    ok = op == UnaryOp::kNot && t == DType::kBool;  // narrow types: convert, select only
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
    ok = t == DType::kBool && (bitwise || op == BinaryOp::kMax || op == BinaryOp::kMin);
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
  if (IsNarrow(dtype(x))) {
    Fail(std::string("compare is not defined for ") + DTypeName(dtype(x)) +
         " (narrow types are converted to their compute type first)");
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
void ElementwiseProgram::AssignSlots() const {
  layout_stale_ = false;
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

  is_output_.assign(static_cast<size_t>(n), 0);
  for (int r : outputs_) is_output_[static_cast<size_t>(r)] = 1;
  DecideFusions(fusion_);
  const std::string broken = CheckLayout();
  if (broken.empty()) return;
  // A planner bug. The sanitizer and fuzzing builds (-DSHP_CONTRACT_ABORT) stop here with what
  // broke; every other build says so once on stderr, counts it (ElementwiseContractBreaks: the
  // fusion tests require 0) and evaluates this program unfused: never a wrong value.
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    std::fprintf(stderr,
                 "libshapepoly: internal error: a fused elementwise layout breaks the evaluator's "
                 "contract (%s); such programs run unfused\n",
                 broken.c_str());
  }
#ifdef SHP_CONTRACT_ABORT
  std::abort();
#endif
  contract_breaks.fetch_add(1, std::memory_order_relaxed);
  DecideFusions(false);
}

// Evaluator decisions (see EvalElementwise): Mul+Add fusion, the fused unary passes, the direct
// output write. Each fused instruction is skipped by the evaluator and computed by exactly one
// later instruction, which must itself be evaluated (CheckLayout verifies it).
void ElementwiseProgram::DecideFusions(bool fuse) const {
  const int n = num_registers();
  fused_mul_.assign(static_cast<size_t>(n), -1);
  fused_into_next_.assign(static_cast<size_t>(n), 0);
  fused_unary_.assign(static_cast<size_t>(n), -1);
  unary_muladd_.assign(static_cast<size_t>(n), 0);
  direct_output_ = -1;
  if (!fuse) return;
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
  // A float tanh, exp or logistic u evaluates, in its one pass over the chunk, the MulAdd
  // (Add u-1 with its fused Mul u-2) that is its operand and only feeds it, and the Mul u+1
  // that is u's only use: tanh(a*x + b) * c is one pass instead of three, and the memory
  // streams of the MulAdd and the Mul overlap with the arithmetic of the op. Adjacency keeps
  // every operand's slot intact until the fused pass reads it (slots freed earlier are reused
  // only by skipped instructions or by the pass's own result, elementwise in place).
  auto single_internal_use = [&](int r) {
    return uses[static_cast<size_t>(r)] == 1 && !is_output_[static_cast<size_t>(r)];
  };
  for (int u = 0; u < n; ++u) {
    const ElementwiseInstr& in = instrs_[static_cast<size_t>(u)];
    if (in.kind != ElementwiseInstr::Kind::kUnary || !IsFloat(in.dtype)) continue;
    const UnaryOp op = static_cast<UnaryOp>(in.op);
    if (op != UnaryOp::kTanh && op != UnaryOp::kExp && op != UnaryOp::kLogistic) continue;
    if (u >= 2 && in.a == u - 1 && fused_mul_[static_cast<size_t>(u - 1)] >= 0 &&
        single_internal_use(u - 1)) {
      unary_muladd_[static_cast<size_t>(u)] = 1;
      fused_into_next_[static_cast<size_t>(u - 1)] = 1;
    }
    // The Mul must itself be evaluated: a Mul already fused into the Add after it (z + x *
    // tanh(y)) is skipped, so a unary fused into it would never run (issue 36: the Add then
    // read the unary's register, never written in that chunk).
    if (u + 1 < n && single_internal_use(u) && !fused_into_next_[static_cast<size_t>(u + 1)]) {
      const ElementwiseInstr& mi = instrs_[static_cast<size_t>(u + 1)];
      if (mi.kind == ElementwiseInstr::Kind::kBinary &&
          static_cast<BinaryOp>(mi.op) == BinaryOp::kMul && (mi.a == u) != (mi.b == u)) {
        fused_unary_[static_cast<size_t>(u + 1)] = u;
        fused_into_next_[static_cast<size_t>(u)] = 1;
      }
    }
  }
  // The last instruction, if it computes an output, writes straight into that output (every
  // read of the tile's inputs has happened by then, and it reads its own operands elementwise
  // at the same positions, so an exactly aliased in-place input is still safe).
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

// The evaluator's contract (EvalTiles in elementwise-inl.h), checked on the layout by replaying
// one chunk: which register each slot holds after each evaluated instruction. It holds when
//  - every instruction the evaluator skips (fused_into_next) is computed by exactly the later
//    instruction that fuses it, and that instruction is evaluated itself;
//  - every register an evaluated instruction reads (its operands, or those of the instructions
//    it fuses) is evaluated, and its slot still holds it (no later result took the slot): a
//    result may take the slot of a register read by the same pass (elementwise in place);
//  - inputs and constants have slots of their own, never reused (constants and scalar inputs are
//    splatted once per thread and must survive every chunk);
//  - at the end of the chunk every output register is in its slot, except the direct output,
//    written straight into the output by the last instruction, which is evaluated.
// Returns "" if it holds, else the first break found.
std::string ElementwiseProgram::CheckLayout() const {
  using K = ElementwiseInstr::Kind;
  const int n = num_registers();
  auto at = [&](int r) -> const ElementwiseInstr& { return instrs_[static_cast<size_t>(r)]; };
  auto skipped = [&](int r) { return fused_into_next_[static_cast<size_t>(r)] != 0; };
  std::vector<int> owner(static_cast<size_t>(num_slots_), -1);
  std::vector<int> computed_by(static_cast<size_t>(n), -1);
  std::vector<char> is_leaf_slot(static_cast<size_t>(num_slots_), 0);
  for (int r = 0; r < n; ++r) {
    const int s = slots_[static_cast<size_t>(r)];
    if (s < 0 || s >= num_slots_) return "register " + std::to_string(r) + " has no slot";
    if (at(r).kind == K::kInput || at(r).kind == K::kConst) {
      if (is_leaf_slot[static_cast<size_t>(s)] || owner[static_cast<size_t>(s)] >= 0)
        return "input/constant register " + std::to_string(r) + " shares slot " + std::to_string(s);
      is_leaf_slot[static_cast<size_t>(s)] = 1;
      owner[static_cast<size_t>(s)] = r;  // written before any instruction reads it
    }
  }
  for (int r = 0; r < n; ++r) {
    const int s = slots_[static_cast<size_t>(r)];
    if (at(r).kind != K::kInput && at(r).kind != K::kConst && is_leaf_slot[static_cast<size_t>(s)])
      return "register " + std::to_string(r) + " reuses the slot of an input or constant";
  }
  std::string err;
  // Marks the fused register f as computed by r (once).
  auto fuse = [&](int f, int r) {
    if (f < 0 || f >= r) {
      err = "instruction " + std::to_string(r) + " fuses register " + std::to_string(f);
    } else if (!skipped(f)) {
      err = "register " + std::to_string(f) + " is fused into " + std::to_string(r) +
            " but also evaluated";
    } else if (computed_by[static_cast<size_t>(f)] >= 0) {
      err = "register " + std::to_string(f) + " is fused into both " +
            std::to_string(computed_by[static_cast<size_t>(f)]) + " and " + std::to_string(r);
    } else {
      computed_by[static_cast<size_t>(f)] = r;
    }
  };
  std::vector<int> reads;  // the registers the current pass reads
  auto read = [&](int x, int r) {
    if (!err.empty()) return;
    reads.push_back(x);
    if (x < 0 || x >= r) {
      err = "instruction " + std::to_string(r) + " reads register " + std::to_string(x);
    } else if (skipped(x)) {
      err = "instruction " + std::to_string(r) + " reads register " + std::to_string(x) +
            ", which is fused elsewhere and never written";
    } else if (owner[static_cast<size_t>(slots_[static_cast<size_t>(x)])] != x) {
      err = "instruction " + std::to_string(r) + " reads register " + std::to_string(x) +
            " from slot " + std::to_string(slots_[static_cast<size_t>(x)]) + ", which register " +
            std::to_string(owner[static_cast<size_t>(slots_[static_cast<size_t>(x)])]) +
            " took before";
    }
  };
  // The operands of the unary pass of Unary u (the MulAdd's, when it fuses one).
  auto read_unary = [&](int u, int r) {
    if (unary_muladd_[static_cast<size_t>(u)]) {
      const int add = u - 1;
      const int m = fused_mul_[static_cast<size_t>(add)];
      if (at(u).a != add || m < 0) {
        err = "unary " + std::to_string(u) + " fuses a MulAdd it does not read";
        return;
      }
      fuse(add, r);
      fuse(m, r);
      read(at(m).a, r);
      read(at(m).b, r);
      read(at(add).a == m ? at(add).b : at(add).a, r);
    } else {
      read(at(u).a, r);
    }
  };
  for (int r = 0; r < n && err.empty(); ++r) {
    const ElementwiseInstr& in = at(r);
    if (in.kind == K::kInput || in.kind == K::kConst) continue;
    if (skipped(r)) continue;
    reads.clear();
    if (fused_unary_[static_cast<size_t>(r)] >= 0) {
      const int u = fused_unary_[static_cast<size_t>(r)];
      if (in.kind != K::kBinary || (in.a == u) == (in.b == u) || at(u).kind != K::kUnary) {
        err = "instruction " + std::to_string(r) + " fuses unary " + std::to_string(u) +
              " that it does not multiply";
        break;
      }
      fuse(u, r);
      read_unary(u, r);
      read(in.a == u ? in.b : in.a, r);
    } else if (fused_mul_[static_cast<size_t>(r)] >= 0) {
      const int m = fused_mul_[static_cast<size_t>(r)];
      if (in.kind != K::kBinary || (in.a != m && in.b != m) || at(m).kind != K::kBinary) {
        err = "instruction " + std::to_string(r) + " fuses a Mul " + std::to_string(m) +
              " it does not add";
        break;
      }
      fuse(m, r);
      read(at(m).a, r);
      read(at(m).b, r);
      read(in.a == m ? in.b : in.a, r);
    } else if (in.kind == K::kUnary && unary_muladd_[static_cast<size_t>(r)]) {
      read_unary(r, r);
    } else {
      for (int o : {in.a, in.b, in.c}) {
        if (o >= 0) read(o, r);
      }
    }
    if (!err.empty()) break;
    const bool direct = r == n - 1 && direct_output_ >= 0;
    if (direct) continue;
    int& own = owner[static_cast<size_t>(slots_[static_cast<size_t>(r)])];
    // In place is elementwise only when the element sizes agree (a widening pass over its own
    // operand would overwrite elements it has not read yet).
    for (int x : reads) {
      if (x == own && DTypeSize(at(x).dtype) != DTypeSize(in.dtype)) {
        return "instruction " + std::to_string(r) + " writes in place over register " +
               std::to_string(x) + " of another element size";
      }
    }
    own = r;
  }
  if (!err.empty()) return err;
  for (int r = 0; r < n; ++r) {
    if (skipped(r) && computed_by[static_cast<size_t>(r)] < 0)
      return "register " + std::to_string(r) + " is skipped but no instruction computes it";
  }
  for (size_t j = 0; j < outputs_.size(); ++j) {
    const int o = outputs_[j];
    if (direct_output_ >= 0 && o == n - 1) continue;
    if (skipped(o)) return "output register " + std::to_string(o) + " is fused and never written";
    if (owner[static_cast<size_t>(slots_[static_cast<size_t>(o)])] != o)
      return "output register " + std::to_string(o) + " lost its slot before the copy out";
  }
  if (direct_output_ >= 0) {
    if (n == 0 || skipped(n - 1) || outputs_[static_cast<size_t>(direct_output_)] != n - 1)
      return "the direct output is not the evaluated last instruction";
  }
  return "";
}

}  // namespace kernels
}  // namespace shp
