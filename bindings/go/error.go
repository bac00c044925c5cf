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
//
// An Inconclusive error from a comparison the engine cannot decide also explains itself: up
// to two Witnesses (concrete values of the variables, one making the comparison true and one
// making it false) and Fixes, each verified by the engine before it is listed. A run-time
// ConstraintViolation may list Fixes too. The message shows the same; other errors have none.
type Error struct {
	Code    Code
	Message string
	// Witnesses: 0 to 2 valuations that satisfy every fact of the scope; the one that makes
	// the comparison true, when found, comes first.
	Witnesses []Witness
	// Fixes: one sentence each, e.g. "add the constraint 'n >= 8' when creating the scope".
	Fixes []string
}

// Witness is a valuation of the variables of an undecided comparison (and of every variable
// sharing a fact with them, in the scope's order) under which it is true (Holds) or false.
type Witness struct {
	Holds  bool
	Values []VarValue
}

// VarValue is one variable's value in a Witness.
type VarValue struct {
	Name  string
	Value int64
}

// Value returns the value the witness gives variable name, and whether it gives one.
func (w Witness) Value(name string) (int64, bool) {
	for _, v := range w.Values {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
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
	// The details are borrowed from e: copy them before it is destroyed.
	if n := int(C.shp_error_witness_count(e)); n > 0 {
		err.Witnesses = make([]Witness, n)
		for i := range err.Witnesses {
			ci := C.size_t(i)
			w := Witness{Holds: bool(C.shp_error_witness_holds(e, ci))}
			w.Values = make([]VarValue, int(C.shp_error_witness_variable_count(e, ci)))
			for j := range w.Values {
				cj := C.size_t(j)
				w.Values[j] = VarValue{
					Name:  goStringOrEmpty(C.shp_error_witness_variable_name(e, ci, cj)),
					Value: int64(C.shp_error_witness_variable_value(e, ci, cj)),
				}
			}
			err.Witnesses[i] = w
		}
	}
	if n := int(C.shp_error_fix_count(e)); n > 0 {
		err.Fixes = make([]string, n)
		for i := range err.Fixes {
			err.Fixes[i] = goStringOrEmpty(C.shp_error_fix(e, C.size_t(i)))
		}
	}
	C.shp_error_destroy(e)
	return err
}

func invalidArgument(msg string) error { return &Error{Code: InvalidArgument, Message: msg} }
