// The list of every operation: one row per op, X(Name, FB_NAME, code, "text", ...family data).
//   Name     the C++ name: OpKind::k<Name>, and Def<Name>() (the op's definition, cc/ops/*.cc)
//   FB_NAME  the flatbuffers/program.fbs OpCode (fb::OpCode::FB_NAME == code is checked at
//            compile time in serialize.cc, so the schema and this list cannot drift)
//   code     the serialized value: append only, never renumber
//   "text"   the name in messages and listings
// Elementwise families carry their C enum suffix (SHP_<C_NAME>, tied to the C header by the
// C API) and their operand rule. Adding an op: a row here, its definition in the family's
// file, the schema, the C API, the kernel, the oracle and the bindings (see cc/ops/README.md).
#ifndef SHAPEPOLY_CC_OPS_OP_LIST_H_
#define SHAPEPOLY_CC_OPS_OP_LIST_H_

// Unary: X(Name, FB_NAME, code, "text", C_NAME, operand rule, kernels::UnaryOp)
#define SHP_UNARY_OPS(X)                                             \
  X(Neg, NEG, 1, "neg", NEG, kNumeric, kNeg)                         \
  X(Abs, ABS, 2, "abs", ABS, kNumeric, kAbs)                         \
  X(Exp, EXP, 3, "exp", EXP, kFloat, kExp)                           \
  X(Log, LOG, 4, "log", LOG, kFloat, kLog)                           \
  X(Log1p, LOG1P, 5, "log1p", LOG1P, kFloat, kLog1p)                 \
  X(Expm1, EXPM1, 6, "expm1", EXPM1, kFloat, kExpm1)                 \
  X(Sqrt, SQRT, 7, "sqrt", SQRT, kFloat, kSqrt)                      \
  X(Rsqrt, RSQRT, 8, "rsqrt", RSQRT, kFloat, kRsqrt)                 \
  X(Sin, SIN, 9, "sin", SIN, kFloat, kSin)                           \
  X(Cos, COS, 10, "cos", COS, kFloat, kCos)                          \
  X(Tanh, TANH, 11, "tanh", TANH, kFloat, kTanh)                     \
  X(Logistic, LOGISTIC, 12, "logistic", LOGISTIC, kFloat, kLogistic) \
  X(Floor, FLOOR, 13, "floor", FLOOR, kFloat, kFloor)                \
  X(Ceil, CEIL, 14, "ceil", CEIL, kFloat, kCeil)                     \
  X(Round, ROUND, 15, "round", ROUND, kFloat, kRound)                \
  X(Sign, SIGN, 16, "sign", SIGN, kNumeric, kSign)                   \
  X(Not, NOT, 17, "not", NOT, kLogical, kNot)                        \
  X(Erf, ERF, 60, "erf", ERF, kFloat, kErf)

// Binary with NumPy broadcasting:
// X(Name, FB_NAME, code, "text", C_NAME, operand rule, kernels::BinaryOp)
#define SHP_BINARY_OPS(X)                         \
  X(Add, ADD, 18, "add", ADD, kNumeric, kAdd)     \
  X(Sub, SUB, 19, "sub", SUB, kNumeric, kSub)     \
  X(Mul, MUL, 20, "mul", MUL, kNumeric, kMul)     \
  X(Div, DIV, 21, "div", DIV, kNumeric, kDiv)     \
  X(Pow, POW, 22, "pow", POW, kNumeric, kPow)     \
  X(Max, MAXIMUM, 23, "max", MAX, kNumeric, kMax) \
  X(Min, MINIMUM, 24, "min", MIN, kNumeric, kMin) \
  X(Rem, REM, 25, "rem", REM, kNumeric, kFmod)    \
  X(And, AND, 26, "and", AND, kLogical, kAnd)     \
  X(Or, OR, 27, "or", OR, kLogical, kOr)          \
  X(Xor, XOR, 28, "xor", XOR, kLogical, kXor)

// Comparisons (bool result) with broadcasting:
// X(Name, FB_NAME, code, "text", C_NAME, operand rule, kernels::CompareOp)
#define SHP_COMPARE_OPS(X)           \
  X(Eq, EQ, 29, "eq", EQ, kAny, kEq) \
  X(Ne, NE, 30, "ne", NE, kAny, kNe) \
  X(Lt, LT, 31, "lt", LT, kAny, kLt) \
  X(Le, LE, 32, "le", LE, kAny, kLe) \
  X(Gt, GT, 33, "gt", GT, kAny, kGt) \
  X(Ge, GE, 34, "ge", GE, kAny, kGe)

// Reductions: X(Name, FB_NAME, code, "text", C_NAME, operand rule, kernels::ReduceOp)
#define SHP_REDUCE_OPS(X)                                                   \
  X(ReduceSum, REDUCE_SUM, 43, "reduce_sum", REDUCE_SUM, kNumeric, kSum)    \
  X(ReduceMean, REDUCE_MEAN, 44, "reduce_mean", REDUCE_MEAN, kFloat, kMean) \
  X(ReduceMax, REDUCE_MAX, 45, "reduce_max", REDUCE_MAX, kNumeric, kMax)    \
  X(ReduceMin, REDUCE_MIN, 46, "reduce_min", REDUCE_MIN, kNumeric, kMin)    \
  X(ReduceProd, REDUCE_PROD, 47, "reduce_prod", REDUCE_PROD, kNumeric, kProd)

// Every other op: X(Name, FB_NAME, code, "text")
#define SHP_OTHER_OPS(X)                              \
  X(Constant, CONSTANT, 0, "constant")                \
  X(Select, SELECT, 35, "select")                     \
  X(Convert, CONVERT, 36, "convert")                  \
  X(BroadcastTo, BROADCAST_TO, 37, "broadcast_to")    \
  X(Reshape, RESHAPE, 38, "reshape")                  \
  X(Transpose, TRANSPOSE, 39, "transpose")            \
  X(Concatenate, CONCATENATE, 40, "concatenate")      \
  X(Slice, SLICE, 41, "slice")                        \
  X(Pad, PAD, 42, "pad")                              \
  X(MatMul, MATMUL, 48, "matmul")                     \
  X(DotGeneral, DOT_GENERAL, 49, "dot_general")       \
  X(Iota, IOTA, 50, "iota")                           \
  X(Softmax, SOFTMAX, 51, "softmax")                  \
  X(LayerNorm, LAYER_NORM, 52, "layer_norm")          \
  X(CumSum, CUMSUM, 53, "cumsum")                     \
  X(Take, TAKE, 54, "take")                           \
  X(DimValue, DIM_VALUE, 55, "dim_value")             \
  X(Reverse, REVERSE, 56, "reverse")                  \
  X(ScatterAdd, SCATTER_ADD, 57, "scatter_add")       \
  X(Conv, CONV, 58, "conv")                           \
  X(ReduceWindow, REDUCE_WINDOW, 59, "reduce_window") \
  X(Nonzero, NONZERO, 61, "nonzero")                  \
  X(BooleanMask, BOOLEAN_MASK, 62, "boolean_mask")    \
  X(SizeFromValue, SIZE_FROM_VALUE, 63, "size_from_value")

// Every op, whatever its family: X(Name, FB_NAME, code, "text", ...).
#define SHP_ALL_OPS(X) \
  SHP_UNARY_OPS(X)     \
  SHP_BINARY_OPS(X)    \
  SHP_COMPARE_OPS(X)   \
  SHP_REDUCE_OPS(X)    \
  SHP_OTHER_OPS(X)

#endif  // SHAPEPOLY_CC_OPS_OP_LIST_H_
