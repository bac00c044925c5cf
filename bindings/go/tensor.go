package shapepoly

// #include <stdlib.h>
// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"strconv"
	"strings"
	"unsafe"
)

// DType is an element type (shp_dtype_t).
type DType int32

// Element types. Bool elements are one byte (Go bool). F32, F64, I32, I64 and Bool are the
// compute types; the others are storage types: an operation on them computes in f32 (F16,
// BF16), i32 (I8, U8, I16, U16) or i64 (U32, U64) and rounds (to nearest even) or wraps once
// when it stores its result. F16 and BF16 elements are their 16 bits (Go types Float16 and
// BFloat16).
const (
	F32  DType = C.SHP_F32
	F64  DType = C.SHP_F64
	I32  DType = C.SHP_I32
	I64  DType = C.SHP_I64
	Bool DType = C.SHP_BOOL
	F16  DType = C.SHP_F16
	BF16 DType = C.SHP_BF16
	I8   DType = C.SHP_I8
	U8   DType = C.SHP_U8
	I16  DType = C.SHP_I16
	U16  DType = C.SHP_U16
	U32  DType = C.SHP_U32
	U64  DType = C.SHP_U64
)

// knownDTypes lists every element type this binding knows, in the C enum's order.
var knownDTypes = []DType{F32, F64, I32, I64, Bool, F16, BF16, I8, U8, I16, U16, U32, U64}

// String returns "f32", "f64", "i32", "i64", "bool", "f16", "bf16", "i8", "u8", "i16", "u16",
// "u32" or "u64"; "DType(N)" for an unknown dtype.
func (d DType) String() string {
	switch d {
	case F32:
		return "f32"
	case F64:
		return "f64"
	case I32:
		return "i32"
	case I64:
		return "i64"
	case Bool:
		return "bool"
	case F16:
		return "f16"
	case BF16:
		return "bf16"
	case I8:
		return "i8"
	case U8:
		return "u8"
	case I16:
		return "i16"
	case U16:
		return "u16"
	case U32:
		return "u32"
	case U64:
		return "u64"
	}
	return "DType(" + itoa(int64(d)) + ")"
}

// ParseDType returns the element type of a short name as String writes it ("f32", "bf16",
// "u8", ...; case-insensitive), or an InvalidArgument error.
func ParseDType(name string) (DType, error) {
	for _, d := range knownDTypes {
		if strings.EqualFold(name, d.String()) {
			return d, nil
		}
	}
	return -1, invalidArgument("ParseDType: unknown dtype " + strconv.Quote(name) +
		" (f32, f64, i32, i64, bool, f16, bf16, i8, u8, i16, u16, u32, u64)")
}

// Size returns the size of one element in bytes (0 for an unknown dtype).
func (d DType) Size() int {
	switch d {
	case Bool, I8, U8:
		return 1
	case F16, BF16, I16, U16:
		return 2
	case F32, I32, U32:
		return 4
	case F64, I64, U64:
		return 8
	}
	return 0
}

// UnaryOp is an elementwise unary operation (shp_unary_op_t).
type UnaryOp int32

// Unary operations: Exp..Round, Erf and Tan..Atanh need a floating-point operand; Neg, Abs, Sign a numeric one;
// Not a bool or integer one.
const (
	UnaryNeg      UnaryOp = C.SHP_NEG
	UnaryAbs      UnaryOp = C.SHP_ABS
	UnaryExp      UnaryOp = C.SHP_EXP
	UnaryLog      UnaryOp = C.SHP_LOG
	UnaryLog1p    UnaryOp = C.SHP_LOG1P
	UnaryExpm1    UnaryOp = C.SHP_EXPM1
	UnarySqrt     UnaryOp = C.SHP_SQRT
	UnaryRsqrt    UnaryOp = C.SHP_RSQRT
	UnarySin      UnaryOp = C.SHP_SIN
	UnaryCos      UnaryOp = C.SHP_COS
	UnaryTanh     UnaryOp = C.SHP_TANH
	UnaryLogistic UnaryOp = C.SHP_LOGISTIC
	UnaryFloor    UnaryOp = C.SHP_FLOOR
	UnaryCeil     UnaryOp = C.SHP_CEIL
	UnaryRound    UnaryOp = C.SHP_ROUND
	UnarySign     UnaryOp = C.SHP_SIGN
	UnaryNot      UnaryOp = C.SHP_NOT
	UnaryErf      UnaryOp = C.SHP_ERF
	UnaryTan      UnaryOp = C.SHP_TAN
	UnarySinh     UnaryOp = C.SHP_SINH
	UnaryCosh     UnaryOp = C.SHP_COSH
	UnaryAsin     UnaryOp = C.SHP_ASIN
	UnaryAcos     UnaryOp = C.SHP_ACOS
	UnaryAtan     UnaryOp = C.SHP_ATAN
	UnaryAsinh    UnaryOp = C.SHP_ASINH
	UnaryAcosh    UnaryOp = C.SHP_ACOSH
	UnaryAtanh    UnaryOp = C.SHP_ATANH
)

// BinaryOp is an elementwise binary operation with NumPy broadcasting (shp_binary_op_t).
type BinaryOp int32

// Binary operations: both operands have the same dtype (no implicit promotion).
const (
	BinaryAdd BinaryOp = C.SHP_ADD
	BinarySub BinaryOp = C.SHP_SUB
	BinaryMul BinaryOp = C.SHP_MUL
	BinaryDiv BinaryOp = C.SHP_DIV
	BinaryPow BinaryOp = C.SHP_POW
	BinaryMax BinaryOp = C.SHP_MAX
	BinaryMin BinaryOp = C.SHP_MIN
	BinaryRem BinaryOp = C.SHP_REM
	BinaryAnd BinaryOp = C.SHP_AND
	BinaryOr  BinaryOp = C.SHP_OR
	BinaryXor BinaryOp = C.SHP_XOR
)

// ReduceOp is a reduction (shp_reduce_op_t).
type ReduceOp int32

// Reductions (Mean needs a floating-point operand).
const (
	ReduceSum  ReduceOp = C.SHP_REDUCE_SUM
	ReduceMean ReduceOp = C.SHP_REDUCE_MEAN
	ReduceMax  ReduceOp = C.SHP_REDUCE_MAX
	ReduceMin  ReduceOp = C.SHP_REDUCE_MIN
	ReduceProd ReduceOp = C.SHP_REDUCE_PROD
)

// Tensor is a traced tensor: a dtype and a symbolic shape (shp_tensor_t), owned by its
// Scope, which it keeps alive. Every operation infers the result shape symbolically: a
// provably wrong shape is a ShapeMismatch error, an undecidable one Inconclusive.
type Tensor struct {
	scope *Scope
	_ptr  *C.shp_tensor_t
}

func (t Tensor) ptr() *C.shp_tensor_t {
	if t.scope != nil && t.scope._ptr == nil {
		panic(closedMsg)
	}
	return t._ptr
}

// Scope returns the scope the tensor belongs to (nil for the zero Tensor).
func (t Tensor) Scope() *Scope { return t.scope }

// DType returns the tensor's element type (shp_tensor_dtype).
func (t Tensor) DType() DType {
	d := DType(C.shp_tensor_dtype(t.ptr()))
	runtime.KeepAlive(t.scope)
	return d
}

// Shape returns the tensor's symbolic shape (shp_tensor_shape).
func (t Tensor) Shape() ([]Dim, error) {
	p := t.ptr()
	var rank C.size_t
	if err := check(C.shp_tensor_shape(p, nil, 0, &rank)); err != nil {
		return nil, err
	}
	ds := make([]*C.shp_dim_t, int(rank)+1)
	err := check(C.shp_tensor_shape(p, &ds[0], rank, &rank))
	runtime.KeepAlive(t.scope)
	if err != nil {
		return nil, err
	}
	return t.scope.wrapDims(ds[:rank]), nil
}

// rank returns the tensor's rank (0 for an invalid tensor, whose op then fails in C).
func (t Tensor) rank() int {
	var rank C.size_t
	if check(C.shp_tensor_shape(t.ptr(), nil, 0, &rank)) != nil {
		return 0
	}
	runtime.KeepAlive(t.scope)
	return int(rank)
}

// String returns the dtype and symbolic shape, e.g. "f32(batch, 64)" or "i64(n,)".
func (t Tensor) String() string {
	dims, err := t.Shape()
	if err != nil {
		return "<invalid tensor: " + err.Error() + ">"
	}
	s := t.DType().String() + "("
	for i, d := range dims {
		if i > 0 {
			s += ", "
		}
		s += d.String()
	}
	if len(dims) == 1 {
		s += ","
	}
	return s + ")"
}

// scopeOf returns the first non-nil scope (the result's scope).
func scopeOf(ts ...Tensor) *Scope {
	for _, t := range ts {
		if t.scope != nil {
			return t.scope
		}
	}
	return nil
}

// tensor runs f and wraps its result; keep lists what must stay alive during the call.
func tensor(s *Scope, f func(out **C.shp_tensor_t) *C.shp_error_t, keep ...any) (Tensor, error) {
	var r *C.shp_tensor_t
	err := check(f(&r))
	runtime.KeepAlive(s)
	runtime.KeepAlive(keep)
	if err != nil {
		return Tensor{}, err
	}
	return Tensor{scope: s, _ptr: r}, nil
}

func dimPtrs(ds []Dim) []*C.shp_dim_t {
	out := make([]*C.shp_dim_t, len(ds))
	for i, d := range ds {
		out[i] = d.ptr()
	}
	return out
}

func dimScopes(ds []Dim) []*Scope {
	out := make([]*Scope, len(ds))
	for i, d := range ds {
		out[i] = d.scope
	}
	return out
}

func int64s(v []int64) []C.int64_t {
	out := make([]C.int64_t, len(v))
	for i, x := range v {
		out[i] = C.int64_t(x)
	}
	return out
}

// ---- Inputs and constants (Scope methods) ----

// Input adds a named data input with a shape spec such as "batch, 784" (shp_tensor_input).
func (s *Scope) Input(name string, dtype DType, shapeSpec string) (Tensor, error) {
	cn, cs := C.CString(name), C.CString(shapeSpec)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(cs))
	return tensor(s, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_input(s.ptr(), cn, C.shp_dtype_t(dtype), cs, o)
	})
}

// InputDims adds a named data input whose shape is given as dims of the scope
// (shp_tensor_input_dims).
func (s *Scope) InputDims(name string, dtype DType, dims ...Dim) (Tensor, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	dp := dimPtrs(dims)
	return tensor(s, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_input_dims(s.ptr(), cn, C.shp_dtype_t(dtype), firstOrNil(dp), C.size_t(len(dp)), o)
	}, dimScopes(dims))
}

// DimInput adds a scalar I64 input named varName that gives the value of that dimension
// variable at run time (shp_tensor_dim_input).
func (s *Scope) DimInput(varName string) (Tensor, error) {
	cn := C.CString(varName)
	defer C.free(unsafe.Pointer(cn))
	return tensor(s, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_dim_input(s.ptr(), cn, o)
	})
}

// Constant adds a constant with the array's dtype, concrete shape and data, which are copied
// (shp_tensor_constant).
func (s *Scope) Constant(a *Array) (Tensor, error) {
	if a == nil {
		return Tensor{}, invalidArgument("Constant: nil array")
	}
	data, nbytes, err := a.checkedPointer("Constant")
	if err != nil {
		return Tensor{}, err
	}
	shape := int64s(a.shape)
	return tensor(s, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_constant(s.ptr(), C.shp_dtype_t(a.dtype), firstOrNil(shape), C.size_t(len(shape)),
			data, C.size_t(nbytes), o)
	}, a)
}

// Iota adds a tensor of shape dims whose elements count 0, 1, ... along axis
// (shp_tensor_iota).
func (s *Scope) Iota(dtype DType, dims []Dim, axis int64) (Tensor, error) {
	dp := dimPtrs(dims)
	return tensor(s, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_iota(s.ptr(), C.shp_dtype_t(dtype), firstOrNil(dp), C.size_t(len(dp)), C.int64_t(axis), o)
	}, dimScopes(dims))
}

// DimValue adds the value of dim as a scalar I64 tensor (shp_tensor_dim_value).
func (s *Scope) DimValue(dim Dim) (Tensor, error) {
	return tensor(s, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_dim_value(s.ptr(), dim.ptr(), o)
	}, dim.scope)
}

// ---- Operations (Tensor methods) ----

// Unary returns op(t) elementwise (shp_tensor_unary).
func (t Tensor) Unary(op UnaryOp) (Tensor, error) {
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_unary(C.shp_unary_op_t(op), t.ptr(), o)
	})
}

// Binary returns `t op b` elementwise with broadcasting (shp_tensor_binary).
func (t Tensor) Binary(op BinaryOp, b Tensor) (Tensor, error) {
	return tensor(scopeOf(t, b), func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_binary(C.shp_binary_op_t(op), t.ptr(), b.ptr(), o)
	}, t.scope, b.scope)
}

// Neg is t.Unary(UnaryNeg).
func (t Tensor) Neg() (Tensor, error) { return t.Unary(UnaryNeg) }

// Abs is t.Unary(UnaryAbs).
func (t Tensor) Abs() (Tensor, error) { return t.Unary(UnaryAbs) }

// Exp is t.Unary(UnaryExp).
func (t Tensor) Exp() (Tensor, error) { return t.Unary(UnaryExp) }

// Log is t.Unary(UnaryLog).
func (t Tensor) Log() (Tensor, error) { return t.Unary(UnaryLog) }

// Log1p is t.Unary(UnaryLog1p).
func (t Tensor) Log1p() (Tensor, error) { return t.Unary(UnaryLog1p) }

// Expm1 is t.Unary(UnaryExpm1).
func (t Tensor) Expm1() (Tensor, error) { return t.Unary(UnaryExpm1) }

// Sqrt is t.Unary(UnarySqrt).
func (t Tensor) Sqrt() (Tensor, error) { return t.Unary(UnarySqrt) }

// Rsqrt is t.Unary(UnaryRsqrt).
func (t Tensor) Rsqrt() (Tensor, error) { return t.Unary(UnaryRsqrt) }

// Sin is t.Unary(UnarySin).
func (t Tensor) Sin() (Tensor, error) { return t.Unary(UnarySin) }

// Cos is t.Unary(UnaryCos).
func (t Tensor) Cos() (Tensor, error) { return t.Unary(UnaryCos) }

// Tanh is t.Unary(UnaryTanh).
func (t Tensor) Tanh() (Tensor, error) { return t.Unary(UnaryTanh) }

// Logistic is t.Unary(UnaryLogistic).
func (t Tensor) Logistic() (Tensor, error) { return t.Unary(UnaryLogistic) }

// Floor is t.Unary(UnaryFloor).
func (t Tensor) Floor() (Tensor, error) { return t.Unary(UnaryFloor) }

// Ceil is t.Unary(UnaryCeil).
func (t Tensor) Ceil() (Tensor, error) { return t.Unary(UnaryCeil) }

// Round is t.Unary(UnaryRound).
func (t Tensor) Round() (Tensor, error) { return t.Unary(UnaryRound) }

// Sign is t.Unary(UnarySign).
func (t Tensor) Sign() (Tensor, error) { return t.Unary(UnarySign) }

// Not is t.Unary(UnaryNot).
func (t Tensor) Not() (Tensor, error) { return t.Unary(UnaryNot) }

// Erf is t.Unary(UnaryErf).
func (t Tensor) Erf() (Tensor, error) { return t.Unary(UnaryErf) }

// Tan is t.Unary(UnaryTan).
func (t Tensor) Tan() (Tensor, error) { return t.Unary(UnaryTan) }

// Sinh is t.Unary(UnarySinh).
func (t Tensor) Sinh() (Tensor, error) { return t.Unary(UnarySinh) }

// Cosh is t.Unary(UnaryCosh).
func (t Tensor) Cosh() (Tensor, error) { return t.Unary(UnaryCosh) }

// Asin is t.Unary(UnaryAsin).
func (t Tensor) Asin() (Tensor, error) { return t.Unary(UnaryAsin) }

// Acos is t.Unary(UnaryAcos).
func (t Tensor) Acos() (Tensor, error) { return t.Unary(UnaryAcos) }

// Atan is t.Unary(UnaryAtan).
func (t Tensor) Atan() (Tensor, error) { return t.Unary(UnaryAtan) }

// Asinh is t.Unary(UnaryAsinh).
func (t Tensor) Asinh() (Tensor, error) { return t.Unary(UnaryAsinh) }

// Acosh is t.Unary(UnaryAcosh).
func (t Tensor) Acosh() (Tensor, error) { return t.Unary(UnaryAcosh) }

// Atanh is t.Unary(UnaryAtanh).
func (t Tensor) Atanh() (Tensor, error) { return t.Unary(UnaryAtanh) }

// Add is t.Binary(BinaryAdd, b).
func (t Tensor) Add(b Tensor) (Tensor, error) { return t.Binary(BinaryAdd, b) }

// Sub is t.Binary(BinarySub, b).
func (t Tensor) Sub(b Tensor) (Tensor, error) { return t.Binary(BinarySub, b) }

// Mul is t.Binary(BinaryMul, b).
func (t Tensor) Mul(b Tensor) (Tensor, error) { return t.Binary(BinaryMul, b) }

// Div is t.Binary(BinaryDiv, b).
func (t Tensor) Div(b Tensor) (Tensor, error) { return t.Binary(BinaryDiv, b) }

// Pow is t.Binary(BinaryPow, b).
func (t Tensor) Pow(b Tensor) (Tensor, error) { return t.Binary(BinaryPow, b) }

// Max is t.Binary(BinaryMax, b).
func (t Tensor) Max(b Tensor) (Tensor, error) { return t.Binary(BinaryMax, b) }

// Min is t.Binary(BinaryMin, b).
func (t Tensor) Min(b Tensor) (Tensor, error) { return t.Binary(BinaryMin, b) }

// Rem is t.Binary(BinaryRem, b).
func (t Tensor) Rem(b Tensor) (Tensor, error) { return t.Binary(BinaryRem, b) }

// And is t.Binary(BinaryAnd, b).
func (t Tensor) And(b Tensor) (Tensor, error) { return t.Binary(BinaryAnd, b) }

// Or is t.Binary(BinaryOr, b).
func (t Tensor) Or(b Tensor) (Tensor, error) { return t.Binary(BinaryOr, b) }

// Xor is t.Binary(BinaryXor, b).
func (t Tensor) Xor(b Tensor) (Tensor, error) { return t.Binary(BinaryXor, b) }

// Compare returns `t op b` elementwise with broadcasting, as Bool (shp_tensor_compare).
func (t Tensor) Compare(op Cmp, b Tensor) (Tensor, error) {
	return tensor(scopeOf(t, b), func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_compare(t.ptr(), C.shp_cmp_t(op), b.ptr(), o)
	}, t.scope, b.scope)
}

// Select returns `t ? onTrue : onFalse` elementwise; t is Bool (shp_tensor_select).
func (t Tensor) Select(onTrue, onFalse Tensor) (Tensor, error) {
	return tensor(scopeOf(t, onTrue, onFalse), func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_select(t.ptr(), onTrue.ptr(), onFalse.ptr(), o)
	}, t.scope, onTrue.scope, onFalse.scope)
}

// Convert converts the elements to dtype (shp_tensor_convert).
func (t Tensor) Convert(dtype DType) (Tensor, error) {
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_convert(t.ptr(), C.shp_dtype_t(dtype), o)
	})
}

// BroadcastTo broadcasts t to the shape dims (shp_tensor_broadcast_to).
func (t Tensor) BroadcastTo(dims ...Dim) (Tensor, error) {
	dp := dimPtrs(dims)
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_broadcast_to(t.ptr(), firstOrNil(dp), C.size_t(len(dp)), o)
	}, dimScopes(dims))
}

// Reshape reshapes t to dims, row-major (shp_tensor_reshape). One entry may be the zero
// Dim: that dimension is inferred.
func (t Tensor) Reshape(dims ...Dim) (Tensor, error) {
	dp := dimPtrs(dims)
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_reshape(t.ptr(), firstOrNil(dp), C.size_t(len(dp)), o)
	}, dimScopes(dims))
}

// Transpose permutes the axes: result axis i is axis permutation[i] of t
// (shp_tensor_transpose).
func (t Tensor) Transpose(permutation ...int64) (Tensor, error) {
	perm := int64s(permutation)
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_transpose(t.ptr(), firstOrNil(perm), C.size_t(len(perm)), o)
	})
}

// Concatenate concatenates tensors of one dtype and rank along axis
// (shp_tensor_concatenate).
func Concatenate(axis int64, xs ...Tensor) (Tensor, error) {
	ps := make([]*C.shp_tensor_t, len(xs))
	scopes := make([]*Scope, len(xs))
	for i, x := range xs {
		ps[i], scopes[i] = x.ptr(), x.scope
	}
	return tensor(scopeOf(xs...), func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_concatenate(firstOrNil(ps), C.size_t(len(ps)), C.int64_t(axis), o)
	}, scopes)
}

// Slice returns t[start:limit:strides] on every axis (shp_tensor_slice). start, limit and
// strides are nil (defaults: 0, the dimension, 1) or have one entry per axis of t; a zero
// Dim entry takes the default of its axis.
func (t Tensor) Slice(start, limit []Dim, strides []int64) (Tensor, error) {
	rank := t.rank()
	for _, n := range []int{len(start), len(limit), len(strides)} {
		if n != 0 && n != rank {
			return Tensor{}, invalidArgument("slice: start, limit and strides need one entry per axis (rank " +
				itoa(int64(rank)) + ") or none, got " + itoa(int64(n)))
		}
	}
	var sp, lp **C.shp_dim_t
	if len(start) > 0 {
		sp = &dimPtrs(start)[0]
	}
	if len(limit) > 0 {
		lp = &dimPtrs(limit)[0]
	}
	st := int64s(strides)
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_slice(t.ptr(), sp, lp, firstOrNil(st), C.size_t(rank), o)
	}, dimScopes(start), dimScopes(limit))
}

// Pad pads each axis with low[i] elements before and high[i] after, filled with value
// (shp_tensor_pad).
func (t Tensor) Pad(low, high []Dim, value float64) (Tensor, error) {
	if len(low) != len(high) {
		return Tensor{}, invalidArgument("pad: low and high have different lengths")
	}
	lp, hp := dimPtrs(low), dimPtrs(high)
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_pad(t.ptr(), firstOrNil(lp), firstOrNil(hp), C.size_t(len(lp)), C.double(value), o)
	}, dimScopes(low), dimScopes(high))
}

// Reduce reduces over axes (none: every axis), keeping them as size 1 when keepdims
// (shp_tensor_reduce).
func (t Tensor) Reduce(op ReduceOp, axes []int64, keepdims bool) (Tensor, error) {
	ax := int64s(axes)
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_reduce(C.shp_reduce_op_t(op), t.ptr(), firstOrNil(ax), C.size_t(len(ax)), C.bool(keepdims), o)
	})
}

// DotGeneral is XLA dot_general (shp_tensor_dot_general): result axes are the batch axes,
// then the free axes of t, then those of b.
func (t Tensor) DotGeneral(b Tensor, lhsBatch, rhsBatch, lhsContracting, rhsContracting []int64) (Tensor, error) {
	if len(lhsBatch) != len(rhsBatch) || len(lhsContracting) != len(rhsContracting) {
		return Tensor{}, invalidArgument("dot_general: lhs and rhs need as many batch and as many contracting axes")
	}
	lb, rb, lc, rc := int64s(lhsBatch), int64s(rhsBatch), int64s(lhsContracting), int64s(rhsContracting)
	return tensor(scopeOf(t, b), func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_dot_general(t.ptr(), b.ptr(), firstOrNil(lb), firstOrNil(rb), C.size_t(len(lb)),
			firstOrNil(lc), firstOrNil(rc), C.size_t(len(lc)), o)
	}, t.scope, b.scope)
}

// ---- Data-dependent sizes ----

// Nonzero is np.argwhere(t): the indices of the nonzero elements of t (any dtype and rank;
// floats: -0.0 is zero and NaN is nonzero; Bool: true) as an I64 tensor of shape
// (u, rank(t)), in row-major order (shp_tensor_nonzero). u is a new unbacked (data-dependent)
// variable with 0 <= u <= numel(t), named u0, u1, ...; Shape()[0] returns it. The engine
// answers comparisons over u from these bounds and the facts only: a Dim.Guard it cannot
// decide is an Inconclusive error naming the Scope.Check that settles it.
func (t Tensor) Nonzero() (Tensor, error) {
	return tensor(t.scope, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_nonzero(t.ptr(), o)
	})
}

// BooleanMask is t[mask] along axis (shp_tensor_boolean_mask): the Bool mask (rank k >= 1)
// covers axes axis..axis+k-1 of t, whose shape it must provably equal; the result replaces
// those axes by one axis of length u (a new unbacked variable, 0 <= u <= numel(mask)) holding,
// in row-major order, the slices whose mask entry is true. A negative axis counts from the
// end of t's axes.
func (t Tensor) BooleanMask(mask Tensor, axis int64) (Tensor, error) {
	return tensor(scopeOf(t, mask), func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_boolean_mask(t.ptr(), mask.ptr(), C.int64_t(axis), o)
	}, t.scope, mask.scope)
}

// SizeFromValue uses the scalar I64 tensor t, computed by the program, as a size (like
// PyTorch's .item()): a new unbacked variable named name ("" for the first free of u0, u1,
// ...) with the range [min, max] (0 <= min <= max; math.MaxInt64: unbounded), which the
// engine uses as facts and the runtime checks when the value is computed: a value outside
// fails the run with ConstraintViolation naming the variable, the op and the value
// (shp_tensor_size_from_value).
func (t Tensor) SizeFromValue(name string, min, max int64) (Dim, error) {
	cn, free := optCString(name)
	defer free()
	var d *C.shp_dim_t
	err := check(C.shp_tensor_size_from_value(t.ptr(), cn, C.int64_t(min), C.int64_t(max), &d))
	runtime.KeepAlive(t.scope)
	if err != nil {
		return Dim{}, err
	}
	return Dim{scope: t.scope, _ptr: d}, nil
}

// TopK is ONNX TopK (torch.topk): the values and the I64 indices of the k largest (or
// smallest) elements along axis (negative: from the end), best first; equal values by the
// lower index; NaN is larger than +inf. k is a dim with 0 <= k <= the axis's size, asserted at
// run time when not provable (a data-dependent k must be checked first); sorted false gives
// the sorted order too (shp_tensor_top_k).
func (t Tensor) TopK(k Dim, axis int64, largest, sorted bool) (Tensor, Tensor, error) {
	var v, i *C.shp_tensor_t
	err := check(C.shp_tensor_top_k(t.ptr(), k.ptr(), C.int64_t(axis), C.bool(largest),
		C.bool(sorted), &v, &i))
	runtime.KeepAlive(t.scope)
	runtime.KeepAlive(k.scope)
	if err != nil {
		return Tensor{}, Tensor{}, err
	}
	return Tensor{scope: t.scope, _ptr: v}, Tensor{scope: t.scope, _ptr: i}, nil
}
