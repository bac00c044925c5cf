package shapepoly

// A file with //export may only declare in its preamble; the C trampoline that calls this
// lives in function.go.

// #include <stdint.h>
// #include <stdlib.h>
// #include "shapepoly/shapepoly.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// cError creates a C error for the library (shp_error_create); the library owns it then.
func cError(code Code, message string) *C.shp_error_t {
	cm := C.CString(message)
	defer C.free(unsafe.Pointer(cm))
	return C.shp_error_create(C.shp_code_t(code), cm)
}

// shapepolyGoTrace runs the TraceFunc behind handle on a scope the library owns. An error
// becomes a C error with its code (Internal for a non-*Error); a panic is recovered here, so
// it never unwinds through the C library.
//
//export shapepolyGoTrace
func shapepolyGoTrace(scope *C.shp_scope_t, inputs **C.shp_tensor_t, numInputs C.size_t,
	outputs **C.shp_tensor_t, numOutputs C.size_t, handle C.uintptr_t) (result *C.shp_error_t) {
	s := &Scope{_ptr: scope, borrowed: true}
	defer func() {
		s.Close() // detach: dims and tensors kept past the trace panic instead of dangling
		if r := recover(); r != nil {
			result = cError(Internal, fmt.Sprintf("the trace func panicked: %v", r))
		}
	}()
	st := cgo.Handle(handle).Value().(*traceState)
	st.tracing.Add(1) // Close from the trace waits for the call to return
	defer st.tracing.Add(-1)
	trace := st.trace
	ins := make([]Tensor, int(numInputs))
	if numInputs > 0 {
		for i, p := range unsafe.Slice(inputs, int(numInputs)) {
			ins[i] = Tensor{scope: s, _ptr: p}
		}
	}
	outs, err := trace(s, ins)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return cError(e.Code, e.Message)
		}
		return cError(Internal, err.Error())
	}
	if len(outs) != int(numOutputs) {
		return cError(InvalidArgument, fmt.Sprintf("the trace func returned %d tensors for %d outputs",
			len(outs), int(numOutputs)))
	}
	if numOutputs > 0 {
		dst := unsafe.Slice(outputs, int(numOutputs))
		for i, t := range outs {
			dst[i] = t.ptr()
		}
	}
	return nil
}
