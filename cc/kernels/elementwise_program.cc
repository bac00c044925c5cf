// ElementwiseProgram: the builder of elementwise register programs, its checks, and the
// evaluator decisions it precomputes (slots, Mul+Add fusion, direct output). Plain C++.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cc/kernels/elementwise.h"
#include "cc/kernels/elementwise_scalar.h"

namespace shp {
namespace kernels {

namespace {
[[noreturn]] void Fail(const std::string& msg) {
  throw std::invalid_argument("elementwise: " + msg);
}
const char* UnaryName(UnaryOp op) {
  static const char* const kNames[] = {"neg",   "abs",   "exp",   "log",  "log1p", "expm1",
                                       "sqrt",  "rsqrt", "sin",   "cos",  "tanh",  "logistic",
                                       "floor", "ceil",  "round", "sign", "not",   "erf"};
  const int i = static_cast<int>(op);
  return i >= 0 && i <= static_cast<int>(UnaryOp::kErf) ? kNames[i] : "invalid";
}
const char* BinaryName(BinaryOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "floordiv", "pow", "max",
                                       "min", "rem", "and", "or",  "xor",      "fmod"};
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
  if (o < 0 || o > static_cast<int>(UnaryOp::kErf)) Fail("invalid unary op");
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
  // A float tanh, exp or logistic u evaluates, in its one pass over the chunk, the MulAdd
  // (Add u-1 with its fused Mul u-2) that is its operand and only feeds it, and the Mul u+1
  // that is u's only use: tanh(a*x + b) * c is one pass instead of three, and the memory
  // streams of the MulAdd and the Mul overlap with the arithmetic of the op. Adjacency keeps
  // every operand's slot intact until the fused pass reads it (slots freed earlier are reused
  // only by skipped instructions or by the pass's own result, elementwise in place).
  fused_unary_.assign(static_cast<size_t>(n), -1);
  unary_muladd_.assign(static_cast<size_t>(n), 0);
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
    if (u + 1 < n && single_internal_use(u)) {
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

}  // namespace kernels
}  // namespace shp
