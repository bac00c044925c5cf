package shapepoly

// #include "shapepoly/shapepoly.h"
import "C"

// Code is an error code of the C API (shp_code_t). Values are fixed; new codes may appear
// in later library versions, so treat unknown values like Internal.
type Code int32

// Error codes (enum shp_code).
const (
	OK                  Code = C.SHP_OK
	InvalidArgument     Code = C.SHP_INVALID_ARGUMENT
	ParseError          Code = C.SHP_PARSE_ERROR
	Inconclusive        Code = C.SHP_INCONCLUSIVE
	ScopeMismatch       Code = C.SHP_SCOPE_MISMATCH
	Unsatisfiable       Code = C.SHP_UNSATISFIABLE
	ShapeMismatch       Code = C.SHP_SHAPE_MISMATCH
	ConstraintViolation Code = C.SHP_CONSTRAINT_VIOLATION
	Unsolvable          Code = C.SHP_UNSOLVABLE
	DivisionByZero      Code = C.SHP_DIVISION_BY_ZERO
	Overflow            Code = C.SHP_OVERFLOW
	DTypeMismatch       Code = C.SHP_DTYPE_MISMATCH
	NotFound            Code = C.SHP_NOT_FOUND
	InvalidProgram      Code = C.SHP_INVALID_PROGRAM
	VersionMismatch     Code = C.SHP_VERSION_MISMATCH
	Unsupported         Code = C.SHP_UNSUPPORTED
	OutOfMemory         Code = C.SHP_OUT_OF_MEMORY
	Internal            Code = C.SHP_INTERNAL
	GuardFailed         Code = C.SHP_GUARD_FAILED // a guard fails, or no variant applies
)

// String returns the library's fixed text for the code (shp_code_string), e.g.
// "SHP_SHAPE_MISMATCH: shape mismatch".
func (c Code) String() string { return C.GoString(C.shp_code_string(C.shp_code_t(c))) }

// Error is an error reported by libshapepoly: its code and its message, which names the
// offending argument, symbol, input or constraint. Use errors.As to get at it:
//
//	var e *shapepoly.Error
//	if errors.As(err, &e) && e.Code == shapepoly.ShapeMismatch { ... }
type Error struct {
	Code    Code
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Is reports whether target is a *Error with the same code and either no message or the
// same message, so errors.Is(err, &shapepoly.Error{Code: shapepoly.NotFound}) matches any
// NotFound error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// check turns an owned shp_error_t* into a Go error (nil for NULL) and destroys it.
func check(e *C.shp_error_t) error {
	if e == nil {
		return nil
	}
	err := &Error{Code: Code(C.shp_error_code(e)), Message: C.GoString(C.shp_error_message(e))}
	C.shp_error_destroy(e)
	return err
}

func invalidArgument(msg string) error { return &Error{Code: InvalidArgument, Message: msg} }
