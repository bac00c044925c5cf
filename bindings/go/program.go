package shapepoly

// #include <stdlib.h>
// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Program is an immutable program: named inputs and outputs with symbolic shapes, the
// operations between them, constraints and assertions (shp_program_t). Independent of the
// scope it was traced in; safe for concurrent use.
type Program struct {
	_ptr *C.shp_program_t
}

// Output names an output tensor of a program being created.
type Output struct {
	Name   string
	Tensor Tensor
}

// InputRole is the role of a program input (shp_input_role_t).
type InputRole int32

// Input roles.
const (
	InputData      InputRole = C.SHP_INPUT_DATA      // a tensor whose shape determines variables
	InputDim       InputRole = C.SHP_INPUT_DIM       // a scalar I64 giving one dimension variable
	InputParameter InputRole = C.SHP_INPUT_PARAMETER // constant shape, a default (Scope.Parameter)
	InputTangent   InputRole = C.SHP_INPUT_TANGENT   // x.tangent, made by Program.Jvp
	InputCotangent InputRole = C.SHP_INPUT_COTANGENT // y.cotangent, made by Program.Vjp and Grad
)

// String returns "data", "dim", "parameter", "tangent" or "cotangent".
func (r InputRole) String() string {
	switch r {
	case InputData:
		return "data"
	case InputDim:
		return "dim"
	case InputParameter:
		return "parameter"
	case InputTangent:
		return "tangent"
	case InputCotangent:
		return "cotangent"
	}
	return "InputRole(" + itoa(int64(r)) + ")"
}

// ValueInfo describes a program input or output.
type ValueInfo struct {
	Name  string
	DType DType
	Role  InputRole // InputData for outputs (see Program.OutputRole)
	Shape string    // symbolic, e.g. "(batch, 784)"
}

// Assertion is a runtime-checked fact of a program (from Scope.Check or reshape).
type Assertion struct {
	Text, Message string
}

func newProgram(p *C.shp_program_t) *Program {
	prog := &Program{_ptr: p}
	runtime.SetFinalizer(prog, (*Program).Close)
	liveHandles.Add(1)
	return prog
}

// CreateProgram creates a program computing outputs from inputs (tensors made by Input,
// InputDims or DimInput), which keep this order and their names (shp_program_create).
func (s *Scope) CreateProgram(inputs []Tensor, outputs ...Output) (*Program, error) {
	ins := make([]*C.shp_tensor_t, len(inputs))
	for i, t := range inputs {
		ins[i] = t.ptr()
	}
	outs := make([]*C.shp_tensor_t, len(outputs))
	names := make([]string, len(outputs))
	for i, o := range outputs {
		outs[i], names[i] = o.Tensor.ptr(), o.Name
	}
	cn, free := cStrings(names)
	defer free()
	var p *C.shp_program_t
	err := check(C.shp_program_create(s.ptr(), firstOrNil(ins), C.size_t(len(ins)), firstOrNil(outs),
		firstOrNil(cn), C.size_t(len(outs)), &p))
	runtime.KeepAlive(s)
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(outputs)
	if err != nil {
		return nil, err
	}
	return newProgram(p), nil
}

// LoadOptions are the options of LoadProgramWithOptions (shp_load_options_t): the cap on the
// bytes the program's constants may hold once inflated. May be closed right after the load.
type LoadOptions struct {
	_ptr *C.shp_load_options_t
}

// NewLoadOptions returns options with the defaults: the constants may hold 1 GiB in total
// (shp_load_options_create).
func NewLoadOptions() (*LoadOptions, error) {
	if abiError != nil {
		return nil, abiError
	}
	var p *C.shp_load_options_t
	if err := check(C.shp_load_options_create(&p)); err != nil {
		return nil, err
	}
	o := &LoadOptions{_ptr: p}
	runtime.SetFinalizer(o, (*LoadOptions).Close)
	liveHandles.Add(1)
	return o, nil
}

// Close releases the options (shp_load_options_destroy). Calling it again does nothing.
func (o *LoadOptions) Close() {
	if o == nil || o._ptr == nil {
		return
	}
	runtime.SetFinalizer(o, nil)
	liveHandles.Add(-1)
	C.shp_load_options_destroy(o._ptr)
	o._ptr = nil
}

func (o *LoadOptions) ptr() *C.shp_load_options_t {
	if o._ptr == nil {
		panic(closedMsg)
	}
	return o._ptr
}

// SetMaxBytes sets the most bytes the constants may hold once inflated, in total. The loader
// checks the sizes a file declares against it before inflating anything
// (shp_load_options_set_max_bytes).
func (o *LoadOptions) SetMaxBytes(n uint64) error {
	max := ^C.size_t(0)
	if n > uint64(max) {
		n = uint64(max) // the format's own limits are far lower
	}
	err := check(C.shp_load_options_set_max_bytes(o.ptr(), C.size_t(n)))
	runtime.KeepAlive(o)
	return err
}

// LoadProgram loads a serialized program (shp_program_load) with the default options; data
// is copied. Malformed data is an InvalidProgram error, a newer format VersionMismatch.
func LoadProgram(data []byte) (*Program, error) {
	return LoadProgramWithOptions(data, nil)
}

// LoadProgramWithOptions loads a serialized program (shp_program_load_with_options); options
// may be nil (the defaults). Constants above the options' MaxBytes are an InvalidProgram
// error whose message names the cap.
func LoadProgramWithOptions(data []byte, options *LoadOptions) (*Program, error) {
	if abiError != nil {
		return nil, abiError
	}
	var op *C.shp_load_options_t
	if options != nil {
		op = options.ptr()
	}
	var p *C.shp_program_t
	// An empty slice still passes a non-NULL pointer, so the library reports the bad data.
	buf := data
	if len(buf) == 0 {
		buf = []byte{0}
	}
	err := check(C.shp_program_load_with_options(unsafe.Pointer(&buf[0]), C.size_t(len(data)),
		op, &p))
	runtime.KeepAlive(buf)
	runtime.KeepAlive(options)
	if err != nil {
		return nil, err
	}
	return newProgram(p), nil
}

// LoadProgramFile loads a serialized program file (".shpoly") with shp_program_load_file: a
// missing file is NotFound, and every error names the path (and the OS reason).
func LoadProgramFile(path string) (*Program, error) {
	if abiError != nil {
		return nil, abiError
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var p *C.shp_program_t
	if err := check(C.shp_program_load_file(cp, &p)); err != nil {
		return nil, err
	}
	return newProgram(p), nil
}

// Close releases the program (shp_program_destroy); runtimes made from it stay usable.
// Calling it again does nothing.
func (p *Program) Close() {
	if p == nil || p._ptr == nil {
		return
	}
	runtime.SetFinalizer(p, nil)
	liveHandles.Add(-1)
	C.shp_program_destroy(p._ptr)
	p._ptr = nil
}

func (p *Program) ptr() *C.shp_program_t {
	if p._ptr == nil {
		panic(closedMsg)
	}
	return p._ptr
}

// Serialize returns the program in the portable format (shp_program_serialize);
// deterministic.
func (p *Program) Serialize() ([]byte, error) {
	var b *C.shp_buffer_t
	err := check(C.shp_program_serialize(p.ptr(), &b))
	runtime.KeepAlive(p)
	if err != nil {
		return nil, err
	}
	defer C.shp_buffer_destroy(b)
	return C.GoBytes(C.shp_buffer_data(b), C.int(C.shp_buffer_size(b))), nil
}

// WriteFile saves the program to the file path with shp_program_save_file: written next to it
// and renamed, so a failed save leaves an existing file intact; errors name the path.
func (p *Program) WriteFile(path string) error {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	err := check(C.shp_program_save_file(p.ptr(), cp))
	runtime.KeepAlive(p)
	return err
}

// Text returns a readable listing: signature, variables, constraints, assertions and one
// line per operation (shp_program_to_text).
func (p *Program) Text() (string, error) {
	c := p.ptr()
	s, err := readString(func(buf *C.char, n C.size_t, l *C.size_t) *C.shp_error_t {
		return C.shp_program_to_text(c, buf, n, l)
	})
	runtime.KeepAlive(p)
	return s, err
}

// String returns the listing (see Text).
func (p *Program) String() string {
	s, err := p.Text()
	if err != nil {
		return "<program: " + err.Error() + ">"
	}
	return s
}

// InputCount returns the number of inputs.
func (p *Program) InputCount() int {
	n := int(C.shp_program_input_count(p.ptr()))
	runtime.KeepAlive(p)
	return n
}

// InputName returns the name of input i ("" if out of range).
func (p *Program) InputName(i int) string {
	if i < 0 {
		return ""
	}
	s := goStringOrEmpty(C.shp_program_input_name(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return s
}

// InputDType returns the dtype of input i (-1 if out of range).
func (p *Program) InputDType(i int) DType {
	if i < 0 {
		return -1
	}
	d := DType(C.shp_program_input_dtype(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return d
}

// InputRole returns the role of input i (-1 if out of range).
func (p *Program) InputRole(i int) InputRole {
	if i < 0 {
		return -1
	}
	r := InputRole(C.shp_program_input_role(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return r
}

// InputShape returns the symbolic shape of input i, e.g. "(batch, 784)"
// (shp_program_input_shape_string).
func (p *Program) InputShape(i int) (string, error) {
	if i < 0 {
		return "", invalidArgument("input index is negative")
	}
	c := p.ptr()
	s, err := readString(func(buf *C.char, n C.size_t, l *C.size_t) *C.shp_error_t {
		return C.shp_program_input_shape_string(c, C.size_t(i), buf, n, l)
	})
	runtime.KeepAlive(p)
	return s, err
}

// OutputCount returns the number of outputs.
func (p *Program) OutputCount() int {
	n := int(C.shp_program_output_count(p.ptr()))
	runtime.KeepAlive(p)
	return n
}

// OutputName returns the name of output i ("" if out of range).
func (p *Program) OutputName(i int) string {
	if i < 0 {
		return ""
	}
	s := goStringOrEmpty(C.shp_program_output_name(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return s
}

// OutputDType returns the dtype of output i (-1 if out of range).
func (p *Program) OutputDType(i int) DType {
	if i < 0 {
		return -1
	}
	d := DType(C.shp_program_output_dtype(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return d
}

// OutputShape returns the symbolic shape of output i (shp_program_output_shape_string).
func (p *Program) OutputShape(i int) (string, error) {
	if i < 0 {
		return "", invalidArgument("output index is negative")
	}
	c := p.ptr()
	s, err := readString(func(buf *C.char, n C.size_t, l *C.size_t) *C.shp_error_t {
		return C.shp_program_output_shape_string(c, C.size_t(i), buf, n, l)
	})
	runtime.KeepAlive(p)
	return s, err
}

// Inputs describes every input, in order.
func (p *Program) Inputs() ([]ValueInfo, error) {
	out := make([]ValueInfo, p.InputCount())
	for i := range out {
		shape, err := p.InputShape(i)
		if err != nil {
			return nil, err
		}
		out[i] = ValueInfo{Name: p.InputName(i), DType: p.InputDType(i), Role: p.InputRole(i), Shape: shape}
	}
	return out, nil
}

// Outputs describes every output, in order.
func (p *Program) Outputs() ([]ValueInfo, error) {
	out := make([]ValueInfo, p.OutputCount())
	for i := range out {
		shape, err := p.OutputShape(i)
		if err != nil {
			return nil, err
		}
		out[i] = ValueInfo{Name: p.OutputName(i), DType: p.OutputDType(i), Role: InputData, Shape: shape}
	}
	return out, nil
}

// Variables returns the names of the dimension variables the program's shapes use.
func (p *Program) Variables() []string {
	c := p.ptr()
	out := make([]string, int(C.shp_program_variable_count(c)))
	for i := range out {
		out[i] = goStringOrEmpty(C.shp_program_variable_name(c, C.size_t(i)))
	}
	runtime.KeepAlive(p)
	return out
}

// VariableIsUnbacked reports whether variable i (in the order of Variables) is unbacked:
// its value comes from the op that produces it at run time, never from input shapes
// (shp_program_variable_is_unbacked; false if out of range).
func (p *Program) VariableIsUnbacked(i int) bool {
	if i < 0 {
		return false
	}
	b := bool(C.shp_program_variable_is_unbacked(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return b
}

// VariableOrigin returns the op that produces unbacked variable i, e.g. "nonzero of a (n, 4)
// tensor" (shp_program_variable_origin; "" for other variables or out of range).
func (p *Program) VariableOrigin(i int) string {
	if i < 0 {
		return ""
	}
	o := goStringOrEmpty(C.shp_program_variable_origin(p.ptr(), C.size_t(i)))
	runtime.KeepAlive(p)
	return o
}

// Constraints returns the text of every constraint, as written.
func (p *Program) Constraints() []string {
	c := p.ptr()
	out := make([]string, int(C.shp_program_constraint_count(c)))
	for i := range out {
		out[i] = goStringOrEmpty(C.shp_program_constraint_text(c, C.size_t(i)))
	}
	runtime.KeepAlive(p)
	return out
}

// Assertions returns every assertion with its failure message.
func (p *Program) Assertions() []Assertion {
	c := p.ptr()
	out := make([]Assertion, int(C.shp_program_assertion_count(c)))
	for i := range out {
		out[i] = Assertion{
			Text:    goStringOrEmpty(C.shp_program_assertion_text(c, C.size_t(i))),
			Message: goStringOrEmpty(C.shp_program_assertion_message(c, C.size_t(i))),
		}
	}
	runtime.KeepAlive(p)
	return out
}

// namedShapes flattens a name -> shape map for the C API.
func namedShapes(shapes map[string][]int64) (names []string, list [][]int64) {
	for n, s := range shapes {
		names = append(names, n)
		list = append(list, s)
	}
	return names, list
}

// CheckShapes checks concrete input shapes (name -> shape; a dimension input gives its value
// as a one-element slice) without running, and returns the variable values
// (shp_program_check_shapes).
func (p *Program) CheckShapes(shapes map[string][]int64) (*Bindings, error) {
	names, list := namedShapes(shapes)
	cn, free := cStrings(names)
	defer free()
	ptrs, cranks, freeShapes := cShapes(list)
	defer freeShapes()
	zeroDimInputRanks(names, cranks, p.dimInputs())
	var b *C.shp_bindings_t
	err := check(C.shp_program_check_shapes(p.ptr(), firstOrNil(cn), ptrs, cranks, C.size_t(len(names)), &b))
	runtime.KeepAlive(p)
	if err != nil {
		return nil, err
	}
	return newBindings(b), nil
}

// dimInputs returns the names of the dimension inputs (SHP_INPUT_DIM).
func (p *Program) dimInputs() []string {
	var out []string
	for i, n := 0, p.InputCount(); i < n; i++ {
		if p.InputRole(i) == InputDim {
			out = append(out, p.InputName(i))
		}
	}
	return out
}

// zeroDimInputRanks sets rank 0 for dimension inputs, whose one-element "shape" is the value.
func zeroDimInputRanks(names []string, ranks *C.size_t, dimInputs []string) {
	if len(names) == 0 || len(dimInputs) == 0 {
		return
	}
	r := unsafe.Slice(ranks, len(names))
	for i, n := range names {
		if contains(dimInputs, n) {
			r[i] = 0
		}
	}
}

// OutputShapeFor returns the concrete shape of output i for variable values b (from
// CheckShapes on this program) (shp_program_output_shape).
func (p *Program) OutputShapeFor(i int, b *Bindings) ([]int64, error) {
	if i < 0 {
		return nil, invalidArgument("output index is negative")
	}
	var bp *C.shp_bindings_t
	if b != nil {
		bp = b.ptr()
	}
	c := p.ptr()
	var rank C.size_t
	if err := check(C.shp_program_output_shape(c, C.size_t(i), bp, nil, 0, &rank)); err != nil {
		return nil, err
	}
	dims := make([]C.int64_t, int(rank)+1)
	err := check(C.shp_program_output_shape(c, C.size_t(i), bp, &dims[0], rank, &rank))
	runtime.KeepAlive(p)
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	out := make([]int64, rank)
	for k := range out {
		out[k] = int64(dims[k])
	}
	return out, nil
}
