package shapepoly

/*
#include <stdint.h>
#include <stdlib.h>
#include "shapepoly/shapepoly.h"

// Exported by function_callback.go (cgo writes it without const qualifiers).
extern shp_error_t* shapepolyGoTrace(shp_scope_t* scope, shp_tensor_t** inputs, size_t num_inputs,
                                     shp_tensor_t** outputs, size_t num_outputs, uintptr_t handle);

// The shp_trace_fn of every Go function: user_data carries a cgo.Handle, never a Go pointer.
static shp_error_t* shapepoly_go_trace(shp_scope_t* scope, const shp_tensor_t* const* inputs,
                                       size_t num_inputs, const shp_tensor_t** outputs,
                                       size_t num_outputs, void* user_data) {
  return shapepolyGoTrace(scope, (shp_tensor_t**)inputs, num_inputs, (shp_tensor_t**)outputs,
                          num_outputs, (uintptr_t)user_data);
}

static shp_error_t* shapepoly_function_create(uintptr_t handle, const char* const* input_names,
                                              const shp_dtype_t* dtypes, const size_t* ranks,
                                              size_t num_inputs, const char* const* output_names,
                                              size_t num_outputs,
                                              const shp_function_options_t* options,
                                              shp_function_t** function_out) {
  return shp_function_create(shapepoly_go_trace, (void*)handle, input_names, dtypes, ranks,
                             num_inputs, output_names, num_outputs, options, function_out);
}
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// Compiled functions: a Go func traced again whenever a call's shapes fit no variant traced
// so far, like torch.compile with automatic dynamic shapes (shp_function_t).

// DynamicMode says which axes are symbolic in a new trace (shp_dynamic_mode_t).
type DynamicMode int32

// Dynamic modes.
const (
	// DynamicAuto traces statically first; an axis whose size changes becomes symbolic in the
	// next trace (the default).
	DynamicAuto DynamicMode = C.SHP_DYNAMIC_AUTO
	// DynamicAll makes every axis symbolic from the first trace.
	DynamicAll DynamicMode = C.SHP_DYNAMIC_ALL
	// DynamicNone traces every new shape statically.
	DynamicNone DynamicMode = C.SHP_DYNAMIC_NONE
)

// String returns "auto", "all" or "none".
func (m DynamicMode) String() string {
	switch m {
	case DynamicAuto:
		return "auto"
	case DynamicAll:
		return "all"
	case DynamicNone:
		return "none"
	}
	return "DynamicMode(" + itoa(int64(m)) + ")"
}

// Stance says what a call does when no variant covers its shapes, or whether it traces every
// time (shp_stance_t).
type Stance int32

// Stances.
const (
	// StanceDefault traces again up to the recompile limit, then fails with GuardFailed
	// giving the reasons.
	StanceDefault Stance = C.SHP_STANCE_DEFAULT
	// StanceFailOnRecompile never traces again once a variant exists: GuardFailed naming the
	// failed guards.
	StanceFailOnRecompile Stance = C.SHP_STANCE_FAIL_ON_RECOMPILE
	// StanceDynamicOnLimit traces one fully dynamic variant at the limit instead of failing.
	StanceDynamicOnLimit Stance = C.SHP_STANCE_DYNAMIC_ON_LIMIT
	// StanceForceTrace traces every call and runs that trace once (no cache): the variants are
	// neither used nor changed (to debug a TraceFunc, as PyTorch's force_eager); each such call
	// logs an event naming FORCE_TRACE.
	StanceForceTrace Stance = C.SHP_STANCE_FORCE_TRACE
)

// String returns "default", "fail_on_recompile", "dynamic_on_limit" or "force_trace".
func (s Stance) String() string {
	switch s {
	case StanceDefault:
		return "default"
	case StanceFailOnRecompile:
		return "fail_on_recompile"
	case StanceDynamicOnLimit:
		return "dynamic_on_limit"
	case StanceForceTrace:
		return "force_trace"
	}
	return "Stance(" + itoa(int64(s)) + ")"
}

// FunctionOptions configures NewFunction (shp_function_options_t): DynamicAuto, duck sizing
// on, recompile limit 8, StanceDefault and every hardware thread unless set.
type FunctionOptions struct {
	_ptr *C.shp_function_options_t
}

// NewFunctionOptions creates options with the defaults (shp_function_options_create).
func NewFunctionOptions() (*FunctionOptions, error) {
	if abiError != nil {
		return nil, abiError
	}
	var p *C.shp_function_options_t
	if err := check(C.shp_function_options_create(&p)); err != nil {
		return nil, err
	}
	o := &FunctionOptions{_ptr: p}
	runtime.SetFinalizer(o, (*FunctionOptions).Close)
	liveHandles.Add(1)
	return o, nil
}

// Close releases the options (shp_function_options_destroy). Calling it again does nothing.
func (o *FunctionOptions) Close() {
	if o == nil || o._ptr == nil {
		return
	}
	runtime.SetFinalizer(o, nil)
	liveHandles.Add(-1)
	C.shp_function_options_destroy(o._ptr)
	o._ptr = nil
}

func (o *FunctionOptions) ptr() *C.shp_function_options_t {
	if o._ptr == nil {
		panic(closedMsg)
	}
	return o._ptr
}

// SetDynamic sets which axes are symbolic in a new trace (shp_function_options_set_dynamic).
func (o *FunctionOptions) SetDynamic(mode DynamicMode) error {
	err := check(C.shp_function_options_set_dynamic(o.ptr(), C.shp_dynamic_mode_t(mode)))
	runtime.KeepAlive(o)
	return err
}

// SetDuckSizing turns duck sizing on or off: dynamic axes of equal sizes share a variable,
// under a guard (shp_function_options_set_duck_sizing).
func (o *FunctionOptions) SetDuckSizing(on bool) error {
	err := check(C.shp_function_options_set_duck_sizing(o.ptr(), C.bool(on)))
	runtime.KeepAlive(o)
	return err
}

// SetRecompileLimit sets the most variants the function traces, in [1, 64]
// (shp_function_options_set_recompile_limit).
func (o *FunctionOptions) SetRecompileLimit(limit int32) error {
	err := check(C.shp_function_options_set_recompile_limit(o.ptr(), C.int32_t(limit)))
	runtime.KeepAlive(o)
	return err
}

// SetStance sets the initial stance (shp_function_options_set_stance).
func (o *FunctionOptions) SetStance(stance Stance) error {
	err := check(C.shp_function_options_set_stance(o.ptr(), C.shp_stance_t(stance)))
	runtime.KeepAlive(o)
	return err
}

// SetNumThreads sets the threads per kernel call of the function's runtime
// (shp_function_options_set_num_threads).
func (o *FunctionOptions) SetNumThreads(n int32) error {
	err := check(C.shp_function_options_set_num_threads(o.ptr(), C.int32_t(n)))
	runtime.KeepAlive(o)
	return err
}

// TraceFunc builds a function's outputs from its inputs in scope. The scope belongs to the
// library and is closed when the func returns: keep neither it nor its dims and tensors.
// Every input axis is a variable s0, s1, ... (in input and axis order) with the call's size
// as its hint under GuardsFromHints; Dim.Guard calls become the variant's guards. A returned
// *Error keeps its code; any other error, or a panic, becomes an Internal error.
type TraceFunc func(scope *Scope, inputs []Tensor) ([]Tensor, error)

// FunctionInput declares an input of a Function: its name, dtype and rank.
type FunctionInput struct {
	Name  string
	DType DType
	Rank  int
}

// Function is a compiled function (shp_function_t): a TraceFunc and the variants it traced.
// A call runs the first variant whose guards hold, or traces a new one as the dynamic mode,
// the marks and the stance allow. Used by one goroutine at a time.
//
// The TraceFunc must not re-enter its own Function: a Call from it is refused by the library
// (InvalidArgument, which reaches the outer Call through the trace), and a Close from it takes
// effect when the running Call returns (destroying the function under its own trace would be
// a use after free). Neither blocks.
type Function struct {
	_ptr        *C.shp_function_t
	handle      cgo.Handle  // the *traceState, reached from C through user_data
	state       *traceState // shared with the trampoline (no reference back to the Function)
	outputNames []string
}

// traceState is what the C trampoline reaches through the handle: the TraceFunc, whether it
// is running, and a Close asked for while it was.
type traceState struct {
	trace        TraceFunc
	tracing      atomic.Int32
	closePending atomic.Bool
}

// NewFunction creates a compiled function with named inputs and outputs; options may be nil
// (the defaults) and is not retained (shp_function_create). Nothing is traced before the
// first call.
func NewFunction(trace TraceFunc, inputs []FunctionInput, outputs []string,
	options *FunctionOptions) (*Function, error) {
	if abiError != nil {
		return nil, abiError
	}
	if trace == nil {
		return nil, invalidArgument("NewFunction: nil trace func")
	}
	names := make([]string, len(inputs))
	dtypes := make([]C.shp_dtype_t, len(inputs))
	ranks := make([]C.size_t, len(inputs))
	for i, in := range inputs {
		if in.Rank < 0 {
			return nil, invalidArgument("NewFunction: input '" + in.Name + "' has a negative rank")
		}
		names[i], dtypes[i], ranks[i] = in.Name, C.shp_dtype_t(in.DType), C.size_t(in.Rank)
	}
	ins, freeIns := cStrings(names)
	defer freeIns()
	outs, freeOuts := cStrings(outputs)
	defer freeOuts()
	var op *C.shp_function_options_t
	if options != nil {
		op = options.ptr()
	}
	st := &traceState{trace: trace}
	h := cgo.NewHandle(st)
	var p *C.shp_function_t
	err := check(C.shapepoly_function_create(C.uintptr_t(h), firstOrNil(ins), firstOrNil(dtypes),
		firstOrNil(ranks), C.size_t(len(ins)), firstOrNil(outs), C.size_t(len(outs)), op, &p))
	runtime.KeepAlive(options)
	if err != nil {
		h.Delete()
		return nil, err
	}
	f := &Function{_ptr: p, handle: h, state: st, outputNames: append([]string(nil), outputs...)}
	runtime.SetFinalizer(f, (*Function).Close)
	liveHandles.Add(1)
	return f, nil
}

// Close releases the function, its variants and its log (shp_function_destroy), then the
// TraceFunc's handle. Calling it again does nothing. Called from the function's own
// TraceFunc, it takes effect when the running Call returns.
func (f *Function) Close() {
	if f == nil || f._ptr == nil {
		return
	}
	if f.state != nil && f.state.tracing.Load() > 0 {
		f.state.closePending.Store(true) // the C function is running this very trace
		return
	}
	runtime.SetFinalizer(f, nil)
	liveHandles.Add(-1)
	C.shp_function_destroy(f._ptr)
	f._ptr = nil
	f.handle.Delete()
}

func (f *Function) ptr() *C.shp_function_t {
	if f._ptr == nil {
		panic(closedMsg)
	}
	return f._ptr
}

// OutputNames returns the output names, in order.
func (f *Function) OutputNames() []string { return append([]string(nil), f.outputNames...) }

// MarkDynamic makes axis axis of input input symbolic in every later trace, with sizes in
// [min, max] (math.MaxInt64: unbounded) (shp_function_mark_dynamic).
func (f *Function) MarkDynamic(input string, axis int, min, max int64) error {
	cn := C.CString(input)
	defer C.free(unsafe.Pointer(cn))
	err := check(C.shp_function_mark_dynamic(f.ptr(), cn, C.int64_t(axis), C.int64_t(min),
		C.int64_t(max)))
	runtime.KeepAlive(f)
	return err
}

// MarkStatic keeps axis axis of input input static in every later trace: a new size is a new
// variant (shp_function_mark_static).
func (f *Function) MarkStatic(input string, axis int) error {
	cn := C.CString(input)
	defer C.free(unsafe.Pointer(cn))
	err := check(C.shp_function_mark_static(f.ptr(), cn, C.int64_t(axis)))
	runtime.KeepAlive(f)
	return err
}

// MarkUnbacked is torch._dynamo.mark_unbacked: axis axis of input input is symbolic in every
// later trace, sizes 0 and 1 included, with no hint: a comparison on it that cannot be decided
// is an Inconclusive error instead of a guard on the call's size, and it is never duck-sized
// with another axis (shp_function_mark_unbacked).
func (f *Function) MarkUnbacked(input string, axis int) error {
	cn := C.CString(input)
	defer C.free(unsafe.Pointer(cn))
	err := check(C.shp_function_mark_unbacked(f.ptr(), cn, C.int64_t(axis)))
	runtime.KeepAlive(f)
	return err
}

// MaybeMarkDynamic is torch._dynamo.maybe_mark_dynamic: axis axis of input input is symbolic
// in every later trace, but a TraceFunc that specializes it (a guard pinning its size) is not
// an error, unlike MarkDynamic (shp_function_maybe_mark_dynamic).
func (f *Function) MaybeMarkDynamic(input string, axis int) error {
	cn := C.CString(input)
	defer C.free(unsafe.Pointer(cn))
	err := check(C.shp_function_maybe_mark_dynamic(f.ptr(), cn, C.int64_t(axis)))
	runtime.KeepAlive(f)
	return err
}

// SetStance sets the stance, at any time (shp_function_set_stance).
func (f *Function) SetStance(stance Stance) error {
	err := check(C.shp_function_set_stance(f.ptr(), C.shp_stance_t(stance)))
	runtime.KeepAlive(f)
	return err
}

// Call calls the function with inputs by name and returns the outputs by name
// (shp_function_call). A refused trace is a GuardFailed error with the reasons; an error of
// the TraceFunc keeps its code.
func (f *Function) Call(inputs map[string]*Array) (map[string]*Array, error) {
	var pin runtime.Pinner
	names, ins, release, err := wrapInputs(inputs, &pin)
	if err != nil {
		return nil, err
	}
	defer release()
	outs := make([]*C.shp_array_t, len(f.outputNames)+1)
	err = check(C.shp_function_call(f.ptr(), namesPtr(names), firstOrNil(ins), C.size_t(len(ins)),
		&outs[0], C.size_t(len(f.outputNames))))
	runtime.KeepAlive(f)
	runtime.KeepAlive(inputs)
	if f.state.closePending.Load() && f.state.tracing.Load() == 0 {
		defer f.Close() // asked for by the TraceFunc: the outputs are read first
	}
	if err != nil {
		return nil, err
	}
	result := make(map[string]*Array, len(f.outputNames))
	for i, n := range f.outputNames {
		if err == nil {
			result[n], err = fromC(outs[i])
		}
		C.shp_array_destroy(outs[i])
	}
	if err != nil {
		return nil, err
	}
	return result, nil
}

// EventCount returns the number of events logged (shp_function_event_count).
func (f *Function) EventCount() int {
	n := int(C.shp_function_event_count(f.ptr()))
	runtime.KeepAlive(f)
	return n
}

// EventText returns event i ("" if out of range), e.g. "trace 2 for call 2 (x: (8, 8)):
// variant 1: input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic now)"
// (shp_function_event_text).
func (f *Function) EventText(i int) string {
	if i < 0 {
		return ""
	}
	p := C.shp_function_event_text(f.ptr(), C.size_t(i))
	var s string
	if p != nil {
		s = C.GoString(p)
	}
	runtime.KeepAlive(f)
	return s
}

// Events returns every event logged so far: why each trace happened, why axes stayed
// static, each variant's guards and refused traces.
func (f *Function) Events() []string {
	n := f.EventCount()
	events := make([]string, n)
	for i := range events {
		events[i] = f.EventText(i)
	}
	return events
}

// TraceCount returns the number of traces made, one per variant (shp_function_trace_count).
func (f *Function) TraceCount() uint64 {
	n := uint64(C.shp_function_trace_count(f.ptr()))
	runtime.KeepAlive(f)
	return n
}

// CacheHits returns the number of calls served by an existing variant
// (shp_function_cache_hits).
func (f *Function) CacheHits() uint64 {
	n := uint64(C.shp_function_cache_hits(f.ptr()))
	runtime.KeepAlive(f)
	return n
}

// VariantCount returns the number of variants (shp_function_variant_count).
func (f *Function) VariantCount() int {
	n := int(C.shp_function_variant_count(f.ptr()))
	runtime.KeepAlive(f)
	return n
}

// Export returns the variants traced so far as one multi-variant program with their guards
// and coverage report (shp_function_export); it runs without the TraceFunc, in any language.
// Nothing traced yet is an InvalidArgument error.
func (f *Function) Export() (*Program, error) {
	var p *C.shp_program_t
	err := check(C.shp_function_export(f.ptr(), &p))
	runtime.KeepAlive(f)
	if err != nil {
		return nil, err
	}
	return newProgram(p), nil
}
