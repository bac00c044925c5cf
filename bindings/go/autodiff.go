package shapepoly

// #include <stdlib.h>
// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"sort"
	"unsafe"
)

// Parameters, automatic differentiation and batching: Jvp, Vjp, Grad and Vmap are program
// transformations (shp_program_jvp, shp_program_vjp, shp_program_grad, shp_program_vmap) that
// work on traced and loaded programs alike and compose to any order; the results run,
// serialize and load like any program.

// OutputRole is the role of a program output (shp_output_role_t).
type OutputRole int32

// Output roles.
const (
	OutputPrimal  OutputRole = C.SHP_OUTPUT_PRIMAL  // computed by the program as traced
	OutputTangent OutputRole = C.SHP_OUTPUT_TANGENT // y.tangent, made by Program.Jvp
	OutputGrad    OutputRole = C.SHP_OUTPUT_GRAD    // x.grad, made by Program.Vjp and Grad
)

// String returns "primal", "tangent" or "grad".
func (r OutputRole) String() string {
	switch r {
	case OutputPrimal:
		return "primal"
	case OutputTangent:
		return "tangent"
	case OutputGrad:
		return "grad"
	}
	return "OutputRole(" + itoa(int64(r)) + ")"
}

// Parameter adds a named parameter (shp_tensor_parameter): an input of value's concrete shape
// and dtype whose default is value's elements (copied and stored in the program). A run may
// leave it out (the default is used) or give it by name (checked for dtype and shape): new
// weights without re-exporting. Names with '.' are reserved for derived names.
func (s *Scope) Parameter(name string, value *Array) (Tensor, error) {
	if value == nil {
		return Tensor{}, invalidArgument("Parameter: nil array")
	}
	data, nbytes, err := value.checkedPointer("parameter '" + name + "'")
	if err != nil {
		return Tensor{}, err
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	shape := int64s(value.shape)
	return tensor(s, func(o **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_parameter(s.ptr(), cn, C.shp_dtype_t(value.dtype), firstOrNil(shape),
			C.size_t(len(shape)), data, C.size_t(nbytes), o)
	}, value)
}

// OutputRole returns the role of output i (-1 if out of range).
func (p *Program) OutputRole(i int) OutputRole {
	if i < 0 {
		return -1
	}
	r := OutputRole(C.shp_program_output_role(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return r
}

// InputHasDefault reports whether input i has a default value (a parameter, or Grad's
// cotangent), so a run may leave it out; false if out of range.
func (p *Program) InputHasDefault(i int) bool {
	if i < 0 {
		return false
	}
	b := bool(C.shp_program_input_has_default(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return b
}

// InputDefault returns a copy of the default value of input i (shp_program_input_default).
// An input without a default, or i out of range, is an InvalidArgument error.
func (p *Program) InputDefault(i int) (*Array, error) {
	if i < 0 {
		return nil, invalidArgument("input index is negative")
	}
	var a *C.shp_array_t
	err := check(C.shp_program_input_default(p.ptr(), C.size_t(i), &a))
	runtime.KeepAlive(p)
	if err != nil {
		return nil, err
	}
	defer C.shp_array_destroy(a)
	return fromC(a)
}

// InputDefaultFill returns the value of input i's fill default
// (shp_program_input_default_fill), such as a default tangent of JvpWithDefaultTangents: a run
// that leaves the input out uses it in every element. An input without a fill default (none,
// or a default array), or i out of range, is an InvalidArgument error.
func (p *Program) InputDefaultFill(i int) (float64, error) {
	if i < 0 {
		return 0, invalidArgument("input index is negative")
	}
	var v C.double
	err := check(C.shp_program_input_default_fill(p.ptr(), C.size_t(i), &v))
	runtime.KeepAlive(p)
	if err != nil {
		return 0, err
	}
	return float64(v), nil
}

// derived runs a transformation and wraps the program it returns.
func (p *Program) derived(f func(out **C.shp_program_t) *C.shp_error_t) (*Program, error) {
	var q *C.shp_program_t
	err := check(f(&q))
	runtime.KeepAlive(p)
	if err != nil {
		return nil, err
	}
	return newProgram(q), nil
}

// Jvp returns the forward-mode program (shp_program_jvp): the original inputs, then
// "x.tangent" (InputTangent) for each input x in wrt; the original outputs, then "y.tangent"
// (OutputTangent) for every floating-point output y. A name that is no input is a NotFound
// error listing the inputs.
func (p *Program) Jvp(wrt ...string) (*Program, error) {
	w, free := cStrings(wrt)
	defer free()
	return p.derived(func(o **C.shp_program_t) *C.shp_error_t {
		return C.shp_program_jvp(p.ptr(), firstOrNil(w), C.size_t(len(w)), o)
	})
}

// JvpWithDefaultTangents is Jvp whose tangents have defaults
// (shp_program_jvp_with_default_tangents): "x.tangent" of wrt[k] defaults to defaultFill[k] in
// every element of x's shape at each run, so a run may leave it out. defaultFill has one value
// per name of wrt (else InvalidArgument), each finite in its input's dtype.
func (p *Program) JvpWithDefaultTangents(wrt []string, defaultFill []float64) (*Program, error) {
	if len(defaultFill) != len(wrt) {
		return nil, invalidArgument("jvp: one default tangent value per input of wrt")
	}
	w, free := cStrings(wrt)
	defer free()
	fills := make([]C.double, len(defaultFill))
	for k, v := range defaultFill {
		fills[k] = C.double(v)
	}
	var first *C.double
	if len(fills) > 0 {
		first = &fills[0]
	}
	return p.derived(func(o **C.shp_program_t) *C.shp_error_t {
		return C.shp_program_jvp_with_default_tangents(p.ptr(), firstOrNil(w), C.size_t(len(w)), first, o)
	})
}

// Vjp returns the reverse-mode program (shp_program_vjp): the original inputs, then
// "y.cotangent" (InputCotangent) for each output y in of; the original outputs, then
// "x.grad" (OutputGrad) for each input x in wrt.
func (p *Program) Vjp(of, wrt []string) (*Program, error) {
	o, freeOf := cStrings(of)
	defer freeOf()
	w, freeWrt := cStrings(wrt)
	defer freeWrt()
	return p.derived(func(out **C.shp_program_t) *C.shp_error_t {
		return C.shp_program_vjp(p.ptr(), firstOrNil(o), C.size_t(len(o)), firstOrNil(w), C.size_t(len(w)), out)
	})
}

// Grad returns the gradient program of the scalar floating-point output of
// (shp_program_grad): the original inputs, then "of.cotangent" with the default 1 (a run that
// names it scales the gradient); outputs of, then "x.grad" for each input x in wrt.
func (p *Program) Grad(of string, wrt ...string) (*Program, error) {
	co := C.CString(of)
	defer C.free(unsafe.Pointer(co))
	w, free := cStrings(wrt)
	defer free()
	return p.derived(func(out **C.shp_program_t) *C.shp_error_t {
		return C.shp_program_grad(p.ptr(), co, firstOrNil(w), C.size_t(len(w)), out)
	})
}

// Vmap batches the program (shp_program_vmap): the program for one example becomes the
// program for a batch of them, the batch size a new dimension variable ranging over [0, inf)
// (a batch of 0 runs). The result keeps the inputs' names, roles and defaults, the outputs'
// names and roles, the constraints, assertions, guards and variants; it runs, serializes,
// differentiates and batches again like any program (each Vmap adds one axis). Per-example
// gradients are the Vmap of a Grad.
//
// inAxes has one entry per input, in the program's order: the axis of that input's batched
// shape (0 to the input's rank) that is the batch, or -1 for an input that is not batched (the
// same value for every element, such as weights). At least one input must be batched;
// dimension inputs and parameters (a default of a fixed shape) cannot be.
//
// outAxes nil (or empty, as in C) puts every output's batch axis first; else it has one entry
// per output: where its batch axis goes (0 to its rank), or -1 for an output that does not
// depend on a batched input (it keeps its shape).
//
// batchDimName is the new variable's name, not one the program has; "" gives "vmap0" (or
// "vmap1", ... when taken, so a Vmap of a Vmap needs no name).
//
// A wrong count, an axis out of range or not allowed (naming the input or output), no batched
// input, or a taken or invalid name is an InvalidArgument error; an op that cannot be batched
// (nonzero, boolean_mask, size_from_value on a batched operand, conv with batched weights) is
// Unsupported, naming it. p is unchanged either way.
func (p *Program) Vmap(inAxes []int64, outAxes []int64, batchDimName string) (*Program, error) {
	in := int64s(inAxes)
	out := int64s(outAxes)
	var name *C.char
	if batchDimName != "" {
		name = C.CString(batchDimName)
		defer C.free(unsafe.Pointer(name))
	}
	return p.derived(func(o **C.shp_program_t) *C.shp_error_t {
		return C.shp_program_vmap(p.ptr(), firstOrNil(in), C.size_t(len(in)), firstOrNil(out),
			C.size_t(len(out)), name, o)
	})
}

// VmapByName is Vmap with the batched inputs given by name: inAxes maps an input's name to
// its batch axis; every input not in the map is not batched (-1), and every output's batch
// axis goes first. A name that is no input is a NotFound error listing the inputs.
//
//	perExample, err := grad.VmapByName(map[string]int64{"x": 0, "labels": 0}, "")
func (p *Program) VmapByName(inAxes map[string]int64, batchDimName string) (*Program, error) {
	n := p.InputCount()
	axes := make([]int64, n)
	index := make(map[string]int, n)
	for i := 0; i < n; i++ {
		axes[i] = -1
		index[p.InputName(i)] = i
	}
	names := make([]string, 0, len(inAxes))
	for name := range inAxes {
		names = append(names, name)
	}
	sort.Strings(names) // the same error for the same map, whatever the iteration order
	for _, name := range names {
		i, ok := index[name]
		if !ok {
			all := ""
			for k := 0; k < n; k++ {
				if k > 0 {
					all += ", "
				}
				all += "'" + p.InputName(k) + "'"
			}
			if all == "" {
				all = "none"
			}
			return nil, &Error{Code: NotFound,
				Message: "vmap: the program has no input named '" + name + "' (its inputs: " + all + ")"}
		}
		axes[i] = inAxes[name]
	}
	return p.Vmap(axes, nil, batchDimName)
}
