// Fused elementwise kernels: a tiny register program evaluated tile by tile, so a chain such as
// tanh(a*x + b) * c is one pass over memory. Plain C++ (no Highway types). The family: the
// program builder (elementwise_program.cc), the plan of one call (elementwise_plan.h/.cc), the
// per-target evaluator (elementwise-inl.h) and array ops (elementwise_ops-inl.h), the dispatch
// (elementwise.cc), and the scalar semantics (elementwise_scalar.h).
#ifndef SHAPEPOLY_CC_KERNELS_ELEMENTWISE_H_
#define SHAPEPOLY_CC_KERNELS_ELEMENTWISE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/kernels/dtype.h"
#include "cc/kernels/parallel.h"

namespace shp {
namespace kernels {

// Unary operations. Result dtype = operand dtype.
//   Floats (f32, f64): all except kNot. exp, log, log1p, expm1, sin, cos, tanh and logistic
//     use SIMD polynomials (Highway's; the kernels' own for f32 tanh and logistic; max error a
//     few ulp, below) inside their documented valid ranges; lanes outside them (NaN, +-inf, log of
//     <= 0 or subnormal, exp overflow/underflow, |x| > 39000 for sin/cos, log1p of x < 0) are
//     recomputed with <cmath>, so special values follow IEEE/libm. kRound rounds half to even
//     (numpy.round). kSign gives -1, +1, or x itself for +-0 and NaN. kRsqrt is 1/sqrt(x) (not an
//     approximation). kLogistic is 1 / (1 + exp(-x)). kErf is the error function: f32 by the
//     kernels' own approximation (within 2 ulp), f64 by <cmath>'s erf per lane. Maximum errors of
//     f32 over all 2^32 inputs (elementwise_tanh_exhaustive_test; reference in double; every target
//     bounded by 2 ulp in elementwise_tanh_test's sample):
//       kTanh      the kernels' own (VTanhF32): 1.42 ulp (AVX2), 1.41 (SSE4, SSSE3, SCALAR);
//       kExp       Highway's Exp: 1.03 ulp (AVX2), 0.99 (SSE4, SSSE3, SCALAR);
//       kLogistic  the kernels' own (VLogisticF32: exp, sum and quotient carried as two
//                  floats): 1.43 ulp (AVX2), 1.47 (SSE4, SSSE3, SCALAR); Highway's Exp then
//                  a division reached 2.48.
//     f64 tanh, exp and logistic use Highway's Exp/Tanh (a few ulp of f64).
//     kSinh, kAsin, kAcos, kAtan, kAsinh, kAcosh, kAtanh: Highway's polynomials inside their
//     valid ranges (sinh of |x| < 2^-12 (f32) or 2^-26 (f64) is x), <cmath> outside them (out
//     of the domain: NaN; atanh(+-1) = +-inf). kCosh:
//     e^|x| / 2 + 1 / (2 e^|x|) (Highway's Exp; no cancellation: both terms are positive).
//     kTan: <cmath>'s tan per lane (no Highway Tan; sin / cos loses accuracy near the poles).
//     Measured errors: elementwise_float_test.cc (TrigUlps; within 3.5 ulp of the exact value).
//   Ints (i32, i64): kNeg and kAbs wrap (abs(INT_MIN) == INT_MIN, like numpy); kSign;
//     kFloor, kCeil, kRound are the identity; kNot is bitwise NOT. Others are invalid.
//   Bool: only kNot (logical not).
enum class UnaryOp : int32_t {
  kNeg,
  kAbs,
  kExp,
  kLog,
  kLog1p,
  kExpm1,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTanh,
  kLogistic,
  kFloor,
  kCeil,
  kRound,
  kSign,
  kNot,
  kErf,  // appended: values are stable
  kTan,
  kSinh,
  kCosh,
  kAsin,
  kAcos,
  kAtan,
  kAsinh,
  kAcosh,
  kAtanh
};

// Binary operations; both operands have the same dtype, which is the result dtype.
//   Floats: kAdd kSub kMul kDiv (IEEE), kPow (std::pow), kMax kMin (NaN if either is NaN, like
//     numpy.maximum/minimum), kRem = numpy.remainder (result has the sign of the divisor;
//     x rem 0 is NaN), kFloorDiv = numpy.floor_divide (numpy's algorithm: the floor of the
//     exact quotient, except that for quotients beyond 2^22 (f32) / 2^51 (f64) it may be one
//     integer off, as numpy is; x // 0 is +-inf or NaN as a/b). kAnd kOr kXor are invalid.
//   Ints: kAdd kSub kMul wrap modulo 2^bits. kDiv truncates toward zero (C, XLA); kFloorDiv
//     rounds toward -inf (numpy //); kRem = numpy.remainder (sign of divisor). Division by zero
//     is defined, never a trap: x / 0 == x // 0 == x rem 0 == 0; INT_MIN / -1 == INT_MIN // -1
//     == INT_MIN (wraps), INT_MIN rem -1 == 0. kPow: repeated squaring, wrapping; a negative
//     exponent gives 1 for base 1, +-1 for base -1, and 0 otherwise (C truncation of 1/a^|b|).
//     kMax kMin; kAnd kOr kXor are bitwise.
//   kFmod (floats and ints) = C remainder, numpy.fmod: a - b * trunc(a / b), with the sign of
//     the dividend. Floats: std::fmod (exact; x fmod 0, inf fmod y and NaN operands give NaN,
//     x fmod +-inf == x, zero results keep the dividend's sign). Ints: x fmod 0 == 0 and
//     INT_MIN fmod -1 == 0 (never a trap).
//   Bool: kAnd kOr kXor (logical), kMax (= or), kMin (= and). Others are invalid.
// Values are stable (appended, never renumbered).
enum class BinaryOp : int32_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kPow,
  kMax,
  kMin,
  kRem,
  kAnd,
  kOr,
  kXor,
  kFmod
};

// Comparisons of two operands of one dtype (any dtype); the result is bool. Floats follow IEEE:
// every comparison with NaN is false except kNe.
enum class CompareOp : int32_t { kEq, kNe, kLt, kLe, kGt, kGe };

// One instruction of an ElementwiseProgram (read-only view; build with the program's methods).
struct ElementwiseInstr {
  enum class Kind : int32_t { kInput, kConst, kUnary, kBinary, kCompare, kSelect, kConvert };
  Kind kind = Kind::kInput;
  DType dtype = DType::kF32;       // dtype of the register this instruction defines
  int32_t op = 0;                  // UnaryOp / BinaryOp / CompareOp value
  int32_t a = -1, b = -1, c = -1;  // operand registers (kSelect: cond, if_true, if_false)
  int32_t input = -1;              // kInput: index into the inputs of EvalElementwise
  double f = 0;                    // kConst: the value for float dtypes
  int64_t i = 0;                   // kConst: the value for int and bool dtypes
};

// The evaluator's contract (EvalTiles in elementwise-inl.h; checked on every program's layout
// by ElementwiseProgram::CheckLayout, see there; the runtime's fused regions by Graph):
//  - What a program holds: inputs, constants and ops of one shape (inputs may broadcast to it
//    through their strides; no op inside changes the index space), in definition order, any
//    number of outputs. The runtime emits a region's ops operands first, depth first.
//  - Chunks: the flat index space is cut into tiles of 1024 elements (the unit of the thread
//    split, so results never depend on the thread count), each evaluated in chunks of 256
//    elements (elementwise_plan.h); each instruction runs over one whole chunk before the next
//    starts; a chunk's length is 256 except at the end of the array (any length >= 1).
//  - Slots: every register has a slot of 256 * 8 bytes of per-thread scratch. Inputs and
//    constants own theirs for the whole call (constants and scalar inputs are splatted once per
//    thread). Other registers share slots by liveness: a slot is released after the last
//    instruction that reads it, never to that same instruction's result; outputs stay live.
//    Contiguous inputs are read in place (no copy); inputs that are also outputs are copied
//    into their slot first (an output may overwrite its input in place).
//  - Fusions (set_fusion(false) turns all off): a float Mul whose only use is the Add right
//    after it is evaluated inside that Add; a float tanh/exp/logistic evaluates the MulAdd
//    right before it that only feeds it, and/or is evaluated inside the Mul right after it
//    when that Mul is its only use and is itself evaluated (not fused into an Add); the last
//    instruction writes straight into its output. A fused instruction is skipped and computed
//    by exactly one evaluated instruction, whose pass reads every operand of what it fuses
//    while each still sits in its slot. A pass may write over a slot it reads only at the same
//    positions and element size (in place; the array ops load each vector before storing it,
//    elementwise_ops-inl.h).
//  - Outputs are copied out after the chunk's last instruction (every input of the chunk has
//    been read by then: in-place outputs are safe), with streaming stores past 32 MiB.
//
// A straight-line program over registers. Register r is defined by instruction r. Builder
// methods validate dtypes and operand indices and throw std::invalid_argument with a specific
// message on misuse (the program is left unchanged then): a program is built once, when a
// computation is planned, so it reports misuse as a builder does, not as a kernel call (see the
// error convention in dtype.h).
//
// Conversions (kConvert, and Constant() of a double into an int/bool register):
//   float -> int truncates toward zero (numpy astype); NaN -> 0; values beyond the int range
//     saturate to INT_MIN / INT_MAX (numpy gives INT_MIN on x86; we define saturation).
//   int -> narrower int wraps modulo 2^32 (numpy astype); int -> float rounds to nearest;
//   f64 -> f32 rounds to nearest (overflow gives +-inf); anything -> bool is (x != 0) (NaN ->
//   true); bool -> anything is 0 or 1.
//
// Thread-safety: a program may be evaluated from many threads at once; building it is not
// thread-safe.
class ElementwiseProgram {
 public:
  // A register reading input number `input_index` (>= 0) of EvalElementwise, of dtype `dtype`.
  int Input(int input_index, DType dtype);
  // A register holding `value` converted to `dtype` (see the conversion rules above).
  int Constant(DType dtype, double value);
  // A register holding `value` converted to `dtype` (exact for ints; int -> float rounds).
  int ConstantInt(DType dtype, int64_t value);
  int Unary(UnaryOp op, int x);
  int Binary(BinaryOp op, int x, int y);
  int Compare(CompareOp op, int x, int y);
  // cond must be bool; if_true and if_false of one dtype, which is the result dtype.
  int Select(int cond, int if_true, int if_false);
  int Convert(int x, DType to);
  // Marks register `reg` as the next output; returns the output index. A register may be
  // output several times.
  int AddOutput(int reg);
  // Whether the evaluator may fuse instructions (Mul+Add, the unary passes, the direct output
  // write; on by default). Off, every instruction is its own pass into its own slot and the
  // outputs are copied out: the reference the differential tests compare the fused evaluator
  // with, bit for bit (the fused passes do the same vector arithmetic), except the sign and
  // payload of a NaN result: when both operands of an add or multiply are NaN, x86 returns one of
  // them, and the compiler may swap the operands of a commutative vector op (IEEE 754 leaves NaN
  // propagation open; numpy makes no promise either).
  void set_fusion(bool on) {
    fusion_ = on;
    layout_stale_ = true;
  }
  bool fusion() const { return fusion_; }

  DType dtype(int reg) const;  // throws std::invalid_argument for a bad register
  int num_registers() const { return static_cast<int>(instrs_.size()); }
  int num_inputs() const { return num_inputs_; }  // 1 + largest input index used (0 if none)
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const std::vector<ElementwiseInstr>& instrs() const { return instrs_; }
  const std::vector<int>& outputs() const { return outputs_; }

  // Scratch layout used by the evaluator: the slot of each register in the per-thread tile
  // buffers, and the number of slots. Computed by AddOutput, and again on first read after
  // later builder calls (so building is linear in the instructions, not quadratic: a fused
  // chain may hold 100k of them). Evaluation recomputes a stale layout once, on the calling
  // thread, before any tile runs (BuildPlan); reading it while another thread builds is a race.
  const std::vector<int>& slots() const { return Layout().slots_; }
  int num_slots() const { return Layout().num_slots_; }
  // Evaluator decisions, computed with the layout: is_output()[r] != 0 if register r is an
  // output; fused_mul()[r] = the Mul register evaluated inside Add r (or -1);
  // fused_into_next()[r] != 0 if instruction r is evaluated by a later one (a Mul by the Add
  // after it, a MulAdd's Add or a unary op by the fused unary pass); fused_unary()[r] = the
  // Unary register evaluated inside Mul r (or -1); unary_muladd()[u] != 0 if Unary u evaluates
  // the MulAdd that feeds it (see FusesUnary in elementwise_program.cc); direct_output() = the
  // output index the last instruction writes straight into (or -1).
  const std::vector<char>& is_output() const { return Layout().is_output_; }
  const std::vector<int>& fused_mul() const { return Layout().fused_mul_; }
  const std::vector<char>& fused_into_next() const { return Layout().fused_into_next_; }
  const std::vector<int>& fused_unary() const { return Layout().fused_unary_; }
  const std::vector<char>& unary_muladd() const { return Layout().unary_muladd_; }
  int direct_output() const { return Layout().direct_output_; }

 private:
  int Push(const ElementwiseInstr& in);
  void CheckReg(int reg) const;
  // The layout for the current instructions and outputs (recomputed if a builder call came
  // after the last computation; not thread-safe then, like building).
  const ElementwiseProgram& Layout() const {
    if (layout_stale_) AssignSlots();
    return *this;
  }
  void AssignSlots() const;
  void DecideFusions(bool fuse) const;
  // The evaluator's contract checked on the layout (see CheckLayout in
  // elementwise_program.cc); empty if it holds, else what breaks it.
  std::string CheckLayout() const;

  std::vector<ElementwiseInstr> instrs_;
  bool fusion_ = true;
  std::vector<int> outputs_;
  int num_inputs_ = 0;
  // The layout (see slots()): derived from instrs_ and outputs_.
  mutable bool layout_stale_ = false;
  mutable std::vector<int> slots_;
  mutable int num_slots_ = 0;
  mutable std::vector<char> is_output_;
  mutable std::vector<int> fused_mul_;
  mutable std::vector<char> fused_into_next_;
  mutable std::vector<int> fused_unary_;
  mutable std::vector<char> unary_muladd_;
  mutable int direct_output_ = -1;
};

// How many programs of this process had a fused layout that broke the evaluator's contract
// (ElementwiseProgram::CheckLayout) and were evaluated unfused instead: a planner bug; the
// fusion tests require 0. (Builds with -DSHP_CONTRACT_ABORT, the sanitizer suite's and the
// fuzzers', abort instead.)
uint64_t ElementwiseContractBreaks();

// An input operand: `data` of the dtype of its Input instruction, and `strides[d]` = elements
// to advance in `data` per step of output dimension d (0 = broadcast along d, negative
// allowed). strides == nullptr means contiguous row-major with exactly the output shape.
struct ElementwiseInput {
  const void* data = nullptr;
  const int64_t* strides = nullptr;
};

// Maximum rank accepted by EvalElementwise.
constexpr int kElementwiseMaxRank = 32;

// Evaluates `program` over every index of the output shape shape[0..rank) (row-major, rank
// 0..kElementwiseMaxRank; any extent may be 0). inputs[k] feeds Input(k, ...) registers
// (num_inputs >= program.num_inputs()); outputs[j] receives output j (num_outputs ==
// program.num_outputs()), contiguous row-major, of that register's dtype.
//
// Method: the output index space is flattened (adjacent dimensions that every operand can
// merge are collapsed) and cut into tiles of 1024 elements, evaluated 256 elements (a chunk)
// at a time; per chunk, inputs that are contiguous are read in place (SIMD loads), scalar (all
// strides 0) inputs and constants are splatted once per thread, other inputs are gathered into
// the chunk (memcpy for unit inner stride, strided copy otherwise), the instructions run over
// the chunk with SIMD (Highway dynamic dispatch), and the outputs are copied out (with
// non-temporal stores when every output is >= 32 MiB). Tiles are split across `pool` (nullptr =
// the calling thread only) in contiguous groups of at least 64 tiles; the tile boundaries do
// not depend on the thread count, so results are identical for any pool.
//
// A float Mul whose only use is the immediately following Add runs fused with it in one pass
// (the same vector Mul and Add as the unfused chain); the last instruction writes straight
// into its output. A float tanh, exp or logistic runs in one pass with the MulAdd just before
// it and/or the Mul just after it when each is the other's only use (tanh(a*x + b) * c: one
// pass, the same vector arithmetic as the separate passes).
//
// Aliasing: an output may share memory with an input only if that input has the output's
// dtype, is contiguous row-major with the output shape (strides nullptr or equal to those) and
// starts at the same address (in-place update). Outputs must not overlap each other. Returns
// false, writing nothing, for bad input/output counts, a rank outside [0,
// kElementwiseMaxRank], a negative extent or null data with a non-empty shape (the error
// convention of dtype.h). Thread-safety: reentrant; concurrent calls need distinct outputs.
bool EvalElementwise(const ElementwiseProgram& program, int rank, const int64_t* shape,
                     const ElementwiseInput* inputs, int num_inputs, void* const* outputs,
                     int num_outputs, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_ELEMENTWISE_H_
