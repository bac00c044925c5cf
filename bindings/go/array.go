package shapepoly

// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Element is a Go element type of an Array: float32 (F32), float64 (F64), int32 (I32),
// int64 (I64) or bool (Bool).
type Element interface {
	float32 | float64 | int32 | int64 | bool
}

// Array is an n-d array held in Go memory: a dtype, a shape and a row-major Go slice. Run
// passes its data to the library without copying (pinned for the call only, through
// shp_array_wrap); outputs are copied into new Go slices. Make arrays with NewArray or Zeros:
// the zero Array holds no data for its shape ().
type Array struct {
	dtype DType
	shape []int64
	data  any // []float32, []float64, []int32, []int64 or []bool
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
	}
	return Bool
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

// Data returns the elements as []float32, []float64, []int32, []int64 or []bool (shared,
// not copied).
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
	switch d := a.data.(type) {
	case []float32:
		if a.dtype == F32 {
			return len(d)
		}
	case []float64:
		if a.dtype == F64 {
			return len(d)
		}
	case []int32:
		if a.dtype == I32 {
			return len(d)
		}
	case []int64:
		if a.dtype == I64 {
			return len(d)
		}
	case []bool:
		if a.dtype == Bool {
			return len(d)
		}
	}
	return 0
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
