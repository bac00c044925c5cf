#include "cc/trace/ops.h"

namespace shp {
namespace trace {

const char* OpName(OpKind k) {
  switch (k) {
    case OpKind::kConstant: return "constant";
    case OpKind::kNeg: return "neg";
    case OpKind::kAbs: return "abs";
    case OpKind::kExp: return "exp";
    case OpKind::kLog: return "log";
    case OpKind::kLog1p: return "log1p";
    case OpKind::kExpm1: return "expm1";
    case OpKind::kSqrt: return "sqrt";
    case OpKind::kRsqrt: return "rsqrt";
    case OpKind::kSin: return "sin";
    case OpKind::kCos: return "cos";
    case OpKind::kTanh: return "tanh";
    case OpKind::kLogistic: return "logistic";
    case OpKind::kFloor: return "floor";
    case OpKind::kCeil: return "ceil";
    case OpKind::kRound: return "round";
    case OpKind::kSign: return "sign";
    case OpKind::kNot: return "not";
    case OpKind::kAdd: return "add";
    case OpKind::kSub: return "sub";
    case OpKind::kMul: return "mul";
    case OpKind::kDiv: return "div";
    case OpKind::kPow: return "pow";
    case OpKind::kMax: return "max";
    case OpKind::kMin: return "min";
    case OpKind::kRem: return "rem";
    case OpKind::kAnd: return "and";
    case OpKind::kOr: return "or";
    case OpKind::kXor: return "xor";
    case OpKind::kEq: return "eq";
    case OpKind::kNe: return "ne";
    case OpKind::kLt: return "lt";
    case OpKind::kLe: return "le";
    case OpKind::kGt: return "gt";
    case OpKind::kGe: return "ge";
    case OpKind::kSelect: return "select";
    case OpKind::kConvert: return "convert";
    case OpKind::kBroadcastTo: return "broadcast_to";
    case OpKind::kReshape: return "reshape";
    case OpKind::kTranspose: return "transpose";
    case OpKind::kConcatenate: return "concatenate";
    case OpKind::kSlice: return "slice";
    case OpKind::kPad: return "pad";
    case OpKind::kReduceSum: return "reduce_sum";
    case OpKind::kReduceMean: return "reduce_mean";
    case OpKind::kReduceMax: return "reduce_max";
    case OpKind::kReduceMin: return "reduce_min";
    case OpKind::kReduceProd: return "reduce_prod";
    case OpKind::kMatMul: return "matmul";
    case OpKind::kDotGeneral: return "dot_general";
    case OpKind::kIota: return "iota";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kLayerNorm: return "layer_norm";
    case OpKind::kCumSum: return "cumsum";
    case OpKind::kTake: return "take";
    case OpKind::kDimValue: return "dim_value";
  }
  return "?";
}

}  // namespace trace
}  // namespace shp
