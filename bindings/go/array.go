package shapepoly

// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Element is a Go element type of an Array: float32 (F32), float64 (F64), int32 (I32),
// int64 (I64), bool (Bool), Float16 (F16), BFloat16 (BF16), int8 (I8), uint8 (U8), int16
// (I16), uint16 (U16), uint32 (U32) or uint64 (U64). Each type has one dtype: a []uint16 is
// U16, never the bits of a 16-bit float (NewArrayFromBits takes those with their dtype).
type Element interface {
	float32 | float64 | int32 | int64 | bool | Float16 | BFloat16 | int8 | uint8 | int16 |
		uint16 | uint32 | uint64
}

// Array is an n-d array held in Go memory: a dtype, a shape and a row-major Go slice. Run
// passes its data to the library without copying (pinned for the call only, through
// shp_array_wrap); outputs are copied into new Go slices. Make arrays with NewArray or Zeros:
// the zero Array holds no data for its shape ().
type Array struct {
	dtype DType
	shape []int64
	data  any // a slice of the dtype's Element type ([]float32, []Float16, []uint8, ...)
	n     int // number of elements
}

func dtypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return F32
	case float64:
		return F64
	case int32:
		return I32
	case int64:
		return I64
	case bool:
		return Bool
	case Float16:
		return F16
	case BFloat16:
		return BF16
	case int8:
		return I8
	case uint8:
		return U8
	case int16:
		return I16
	case uint16:
		return U16
	case uint32:
		return U32
	case uint64:
		return U64
	}
	panic("shapepoly: an Element type without a dtype") // unreachable: Element lists them all
}

// NewArray returns an array of the given shape that uses data (not a copy) as its
// row-major elements; len(data) must equal the product of shape. No shape means rank 0
// (one element), e.g. NewArray([]int64{7}) for a dimension input.
func NewArray[T Element](data []T, shape ...int64) (*Array, error) {
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != n {
		return nil, sizeError("NewArray", int64(len(data)), shape, n)
	}
	return &Array{dtype: dtypeOf[T](), shape: append([]int64(nil), shape...), data: data, n: int(n)}, nil
}

// NewArrayFromBits returns an F16, BF16 or U16 array (dtype says which: 16 bits alone do not)
// that uses bits (not a copy) as its row-major elements, e.g. binary16 values read from a
// file. Other dtypes are an InvalidArgument error.
func NewArrayFromBits(dtype DType, bits []uint16, shape ...int64) (*Array, error) {
	var data any
	switch dtype {
	case F16:
		data = unsafe.Slice((*Float16)(unsafe.SliceData(bits)), len(bits))
	case BF16:
		data = unsafe.Slice((*BFloat16)(unsafe.SliceData(bits)), len(bits))
	case U16:
		data = bits
	default:
		return nil, invalidArgument("NewArrayFromBits: dtype " + dtype.String() +
			" is not a 16-bit type (f16, bf16 or u16)")
	}
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if int64(len(bits)) != n {
		return nil, sizeError("NewArrayFromBits", int64(len(bits)), shape, n)
	}
	return &Array{dtype: dtype, shape: append([]int64(nil), shape...), data: data, n: int(n)}, nil
}

// Zeros returns a zero-filled array of the given dtype and shape.
func Zeros(dtype DType, shape ...int64) (*Array, error) {
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	var data any
	switch dtype {
	case F32:
		data = make([]float32, n)
	case F64:
		data = make([]float64, n)
	case I32:
		data = make([]int32, n)
	case I64:
		data = make([]int64, n)
	case Bool:
		data = make([]bool, n)
	case F16:
		data = make([]Float16, n)
	case BF16:
		data = make([]BFloat16, n)
	case I8:
		data = make([]int8, n)
	case U8:
		data = make([]uint8, n)
	case I16:
		data = make([]int16, n)
	case U16:
		data = make([]uint16, n)
	case U32:
		data = make([]uint32, n)
	case U64:
		data = make([]uint64, n)
	default:
		return nil, invalidArgument("Zeros: unknown dtype " + dtype.String())
	}
	return &Array{dtype: dtype, shape: append([]int64(nil), shape...), data: data, n: int(n)}, nil
}

func numElements(shape []int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, invalidArgument("array shape " + shapeString(shape) + " has a negative dimension")
		}
		if d != 0 && n > (1<<62)/d {
			return 0, &Error{Code: Overflow, Message: "array shape " + shapeString(shape) + " is too large"}
		}
		n *= d
	}
	return n, nil
}

// sizeError is the error for data that does not fill its shape, counted in elements (never
// bytes): "NewArray: 6 elements given, shape (2, 4) needs 8".
func sizeError(who string, given int64, shape []int64, needed int64) error {
	dims := ""
	for i, d := range shape {
		if i > 0 {
			dims += ", "
		}
		dims += itoa(d)
	}
	if len(shape) == 1 {
		dims += "," // (4,) as the library and the other bindings print a rank-1 shape
	}
	noun := " elements given"
	if given == 1 {
		noun = " element given"
	}
	return invalidArgument(who + ": " + itoa(given) + noun + ", shape (" + dims + ") needs " +
		itoa(needed))
}

func shapeString(shape []int64) string {
	s := "["
	for i, d := range shape {
		if i > 0 {
			s += ", "
		}
		s += itoa(d)
	}
	return s + "]"
}

// DType returns the array's element type.
func (a *Array) DType() DType { return a.dtype }

// Shape returns a copy of the array's shape.
func (a *Array) Shape() []int64 { return append([]int64(nil), a.shape...) }

// Len returns the number of elements.
func (a *Array) Len() int { return a.n }

// Data returns the elements as a slice of the dtype's Element type: []float32, []float64,
// []int32, []int64, []bool, []Float16, []BFloat16, []int8, []uint8, []int16, []uint16,
// []uint32 or []uint64 (shared, not copied).
func (a *Array) Data() any { return a.data }

// Float32s returns the elements of an F32 array (shared, not copied); nil for other dtypes.
func (a *Array) Float32s() []float32 { v, _ := a.data.([]float32); return v }

// Float64s returns the elements of an F64 array; nil for other dtypes.
func (a *Array) Float64s() []float64 { v, _ := a.data.([]float64); return v }

// Int32s returns the elements of an I32 array; nil for other dtypes.
func (a *Array) Int32s() []int32 { v, _ := a.data.([]int32); return v }

// Int64s returns the elements of an I64 array; nil for other dtypes.
func (a *Array) Int64s() []int64 { v, _ := a.data.([]int64); return v }

// Bools returns the elements of a Bool array; nil for other dtypes.
func (a *Array) Bools() []bool { v, _ := a.data.([]bool); return v }

// Float16s returns the elements of an F16 array (their bits; Float16.Float32 converts); nil
// for other dtypes.
func (a *Array) Float16s() []Float16 { v, _ := a.data.([]Float16); return v }

// BFloat16s returns the elements of a BF16 array (their bits; BFloat16.Float32 converts); nil
// for other dtypes.
func (a *Array) BFloat16s() []BFloat16 { v, _ := a.data.([]BFloat16); return v }

// Int8s returns the elements of an I8 array; nil for other dtypes.
func (a *Array) Int8s() []int8 { v, _ := a.data.([]int8); return v }

// Uint8s returns the elements of a U8 array; nil for other dtypes.
func (a *Array) Uint8s() []uint8 { v, _ := a.data.([]uint8); return v }

// Int16s returns the elements of an I16 array; nil for other dtypes.
func (a *Array) Int16s() []int16 { v, _ := a.data.([]int16); return v }

// Uint16s returns the elements of a U16 array; nil for other dtypes (Bits16 gives the bits of
// F16 and BF16 arrays).
func (a *Array) Uint16s() []uint16 { v, _ := a.data.([]uint16); return v }

// Uint32s returns the elements of a U32 array; nil for other dtypes.
func (a *Array) Uint32s() []uint32 { v, _ := a.data.([]uint32); return v }

// Uint64s returns the elements of a U64 array; nil for other dtypes.
func (a *Array) Uint64s() []uint64 { v, _ := a.data.([]uint64); return v }

// Bits16 returns the elements of an F16, BF16 or U16 array as their bits (shared, not
// copied); nil for other dtypes.
func (a *Array) Bits16() []uint16 {
	switch d := a.data.(type) {
	case []Float16:
		return unsafe.Slice((*uint16)(unsafe.SliceData(d)), len(d))
	case []BFloat16:
		return unsafe.Slice((*uint16)(unsafe.SliceData(d)), len(d))
	case []uint16:
		return d
	}
	return nil
}

// String returns "f32[2, 3]".
func (a *Array) String() string { return a.dtype.String() + shapeString(a.shape) }

// checkedPointer is pointer for an array handed to the library: an Array not made by
// NewArray or Zeros (the zero value) has no data for its shape, and the library would count
// the difference in bytes; who names the argument in the error.
func (a *Array) checkedPointer(who string) (unsafe.Pointer, int, error) {
	if a.dtype.Size() == 0 {
		return nil, 0, invalidArgument(who + ": unknown dtype " + a.dtype.String())
	}
	needed, err := numElements(a.shape)
	if err != nil {
		return nil, 0, err
	}
	if given := int64(a.dataLen()); given != needed || int64(a.n) != needed {
		return nil, 0, sizeError(who, given, a.shape, needed)
	}
	p, nbytes := a.pointer()
	return p, nbytes, nil
}

// dataLen is the length of the data slice, 0 when it is missing or not of the dtype's type.
func (a *Array) dataLen() int {
	var n int
	var d DType
	switch v := a.data.(type) {
	case []float32:
		n, d = len(v), F32
	case []float64:
		n, d = len(v), F64
	case []int32:
		n, d = len(v), I32
	case []int64:
		n, d = len(v), I64
	case []bool:
		n, d = len(v), Bool
	case []Float16:
		n, d = len(v), F16
	case []BFloat16:
		n, d = len(v), BF16
	case []int8:
		n, d = len(v), I8
	case []uint8:
		n, d = len(v), U8
	case []int16:
		n, d = len(v), I16
	case []uint16:
		n, d = len(v), U16
	case []uint32:
		n, d = len(v), U32
	case []uint64:
		n, d = len(v), U64
	default:
		return 0
	}
	if d != a.dtype {
		return 0
	}
	return n
}

// pointer returns the address of the first element (nil when empty) and the byte size.
func (a *Array) pointer() (unsafe.Pointer, int) {
	if a.n == 0 {
		return nil, 0
	}
	var p unsafe.Pointer
	switch d := a.data.(type) {
	case []float32:
		p = unsafe.Pointer(&d[0])
	case []float64:
		p = unsafe.Pointer(&d[0])
	case []int32:
		p = unsafe.Pointer(&d[0])
	case []int64:
		p = unsafe.Pointer(&d[0])
	case []bool:
		p = unsafe.Pointer(&d[0])
	case []Float16:
		p = unsafe.Pointer(&d[0])
	case []BFloat16:
		p = unsafe.Pointer(&d[0])
	case []int8:
		p = unsafe.Pointer(&d[0])
	case []uint8:
		p = unsafe.Pointer(&d[0])
	case []int16:
		p = unsafe.Pointer(&d[0])
	case []uint16:
		p = unsafe.Pointer(&d[0])
	case []uint32:
		p = unsafe.Pointer(&d[0])
	case []uint64:
		p = unsafe.Pointer(&d[0])
	}
	return p, a.n * a.dtype.Size()
}

// wrap pins the array's memory (C keeps the pointer in the shp_array_t until destroyed) and
// creates a borrowing C array; the caller destroys it and then unpins.
func (a *Array) wrap(pin *runtime.Pinner, who string) (*C.shp_array_t, error) {
	p, nbytes, err := a.checkedPointer(who)
	if err != nil {
		return nil, err
	}
	if p != nil {
		pin.Pin(p)
	}
	shape := int64s(a.shape)
	var out *C.shp_array_t
	err = check(C.shp_array_wrap(C.shp_dtype_t(a.dtype), firstOrNil(shape), C.size_t(len(shape)), p,
		C.size_t(nbytes), &out))
	return out, err
}

// fromC copies a C array into a new Go array (the C array stays owned by the caller).
func fromC(c *C.shp_array_t) (*Array, error) {
	rank := int(C.shp_array_rank(c))
	shape := make([]int64, rank)
	if rank > 0 {
		src := unsafe.Slice((*int64)(unsafe.Pointer(C.shp_array_shape(c))), rank)
		copy(shape, src)
	}
	a, err := Zeros(DType(C.shp_array_dtype(c)), shape...)
	if err != nil {
		return nil, err
	}
	nbytes := int(C.shp_array_nbytes(c))
	if nbytes != a.n*a.dtype.Size() {
		return nil, &Error{Code: Internal, Message: "array size does not match its shape"}
	}
	if nbytes == 0 {
		return a, nil
	}
	src := unsafe.Slice((*byte)(C.shp_array_data(c)), nbytes)
	if b, ok := a.data.([]bool); ok {
		for i, v := range src {
			b[i] = v != 0
		}
		return a, nil
	}
	dst, _ := a.pointer()
	copy(unsafe.Slice((*byte)(dst), nbytes), src)
	return a, nil
}
