package shapepoly

// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"time"
)

// RuntimeOptions are the options of NewRuntime (shp_runtime_options_t): threads per kernel
// call, plan cache capacity, bound allocation and the bound on loop iterations. May be closed
// right after NewRuntime.
type RuntimeOptions struct {
	_ptr *C.shp_runtime_options_t
}

// NewRuntimeOptions returns options with the defaults: every hardware thread, a plan cache
// of 16 (shp_runtime_options_create).
func NewRuntimeOptions() (*RuntimeOptions, error) {
	if abiError != nil {
		return nil, abiError
	}
	var p *C.shp_runtime_options_t
	if err := check(C.shp_runtime_options_create(&p)); err != nil {
		return nil, err
	}
	o := &RuntimeOptions{_ptr: p}
	runtime.SetFinalizer(o, (*RuntimeOptions).Close)
	liveHandles.Add(1)
	return o, nil
}

// Close releases the options (shp_runtime_options_destroy). Calling it again does nothing.
func (o *RuntimeOptions) Close() {
	if o == nil || o._ptr == nil {
		return
	}
	runtime.SetFinalizer(o, nil)
	liveHandles.Add(-1)
	C.shp_runtime_options_destroy(o._ptr)
	o._ptr = nil
}

func (o *RuntimeOptions) ptr() *C.shp_runtime_options_t {
	if o._ptr == nil {
		panic(closedMsg)
	}
	return o._ptr
}

// SetNumThreads sets the threads each kernel call may use, the calling one included; 0 is
// every hardware thread, 1 runs on the calling thread (shp_runtime_options_set_num_threads).
func (o *RuntimeOptions) SetNumThreads(n int32) error {
	err := check(C.shp_runtime_options_set_num_threads(o.ptr(), C.int32_t(n)))
	runtime.KeepAlive(o)
	return err
}

// SetPlanCacheCapacity sets how many plans the runtime caches (LRU); 0 caches none
// (shp_runtime_options_set_plan_cache_capacity).
func (o *RuntimeOptions) SetPlanCacheCapacity(n int) error {
	if n < 0 {
		return invalidArgument("plan cache capacity is negative")
	}
	err := check(C.shp_runtime_options_set_plan_cache_capacity(o.ptr(), C.size_t(n)))
	runtime.KeepAlive(o)
	return err
}

// SetBoundAllocation lets the runtime allocate each data-dependent stage of a program for the
// upper bounds of its data-dependent sizes (at the call's input shapes) when that arena needs
// at most maxBytes, so it never grows whatever counts the data gives; other stages are
// allocated for the actual sizes (the default, 0). Results never depend on it
// (shp_runtime_options_set_bound_allocation).
func (o *RuntimeOptions) SetBoundAllocation(maxBytes uint64) error {
	if max := uint64(^C.size_t(0)); maxBytes > max {
		maxBytes = max
	}
	err := check(C.shp_runtime_options_set_bound_allocation(o.ptr(), C.size_t(maxBytes)))
	runtime.KeepAlive(o)
	return err
}

// SetMaxLoopIterations bounds the iterations of every while_loop and scan per call (max >= 0;
// -1, the default: no bound): a loop that would run more fails with ConstraintViolation (a
// scan before it starts). For programs from files that are not trusted, whose loops could
// otherwise run as long as an int64 counts. Below -1 is InvalidArgument
// (shp_runtime_options_set_max_loop_iterations).
func (o *RuntimeOptions) SetMaxLoopIterations(max int64) error {
	err := check(C.shp_runtime_options_set_max_loop_iterations(o.ptr(), C.int64_t(max)))
	runtime.KeepAlive(o)
	return err
}

// Runtime executes a program on concrete arrays of any shape the program accepts
// (shp_runtime_t). It keeps its program alive (the Program may be closed first). Used by
// one goroutine at a time: create one Runtime per goroutine from a shared Program.
type Runtime struct {
	_ptr        *C.shp_runtime_t
	outputNames []string
	dimInputs   []string // names of the SHP_INPUT_DIM inputs
}

// NewRuntime creates a runtime for program; options may be nil (defaults)
// (shp_runtime_create).
func NewRuntime(program *Program, options *RuntimeOptions) (*Runtime, error) {
	if abiError != nil {
		return nil, abiError
	}
	if program == nil {
		return nil, invalidArgument("NewRuntime: nil program")
	}
	var op *C.shp_runtime_options_t
	if options != nil {
		op = options.ptr()
	}
	var p *C.shp_runtime_t
	err := check(C.shp_runtime_create(program.ptr(), op, &p))
	runtime.KeepAlive(program)
	runtime.KeepAlive(options)
	if err != nil {
		return nil, err
	}
	names := make([]string, program.OutputCount())
	for i := range names {
		names[i] = program.OutputName(i)
	}
	r := &Runtime{_ptr: p, outputNames: names, dimInputs: program.dimInputs()}
	runtime.SetFinalizer(r, (*Runtime).Close)
	liveHandles.Add(1)
	return r, nil
}

// Close releases the runtime (shp_runtime_destroy). Calling it again does nothing.
func (r *Runtime) Close() {
	if r == nil || r._ptr == nil {
		return
	}
	runtime.SetFinalizer(r, nil)
	liveHandles.Add(-1)
	C.shp_runtime_destroy(r._ptr)
	r._ptr = nil
}

func (r *Runtime) ptr() *C.shp_runtime_t {
	if r._ptr == nil {
		panic(closedMsg)
	}
	return r._ptr
}

// OutputNames returns the program's output names, in order.
func (r *Runtime) OutputNames() []string { return append([]string(nil), r.outputNames...) }

// noNames backs namesPtr for calls without inputs.
var noNames = make([]*C.char, 1)

// namesPtr points at the first input name, and never is NULL: NULL names would ask for
// positional binding, which a program with defaults refuses even when every input is left out.
func namesPtr(names []*C.char) **C.char {
	if len(names) == 0 {
		return &noNames[0]
	}
	return &names[0]
}

// wrapInputs pins and wraps the named arrays; release destroys the wrappers and unpins.
func wrapInputs(arrays map[string]*Array, pin *runtime.Pinner) (names []*C.char, cs []*C.shp_array_t,
	release func(), err error) {
	goNames := make([]string, 0, len(arrays))
	for n := range arrays {
		goNames = append(goNames, n)
	}
	names, freeNames := cStrings(goNames)
	cs = make([]*C.shp_array_t, len(goNames))
	release = func() {
		for _, c := range cs {
			C.shp_array_destroy(c)
		}
		freeNames()
		pin.Unpin()
	}
	for i, n := range goNames {
		a := arrays[n]
		if a == nil {
			release()
			return nil, nil, nil, invalidArgument("input '" + n + "' is a nil array")
		}
		if cs[i], err = a.wrap(pin, "input '"+n+"'"); err != nil {
			release()
			return nil, nil, nil, err
		}
	}
	return names, cs, release, nil
}

// Run runs the program with inputs by name (a dimension input is a rank-0 I64 array) and
// returns the outputs by name (shp_runtime_run). Inputs are passed without copying; every
// check (names, dtypes, ranks, dimensions, constraints) happens before anything is computed,
// and after an error the runtime stays usable.
func (r *Runtime) Run(inputs map[string]*Array) (map[string]*Array, error) {
	var pin runtime.Pinner
	names, ins, release, err := wrapInputs(inputs, &pin)
	if err != nil {
		return nil, err
	}
	defer release()
	outs := make([]*C.shp_array_t, len(r.outputNames)+1)
	err = check(C.shp_runtime_run(r.ptr(), namesPtr(names), firstOrNil(ins), C.size_t(len(ins)),
		&outs[0], C.size_t(len(r.outputNames))))
	runtime.KeepAlive(r)
	runtime.KeepAlive(inputs)
	if err != nil {
		return nil, err
	}
	result := make(map[string]*Array, len(r.outputNames))
	for i, n := range r.outputNames {
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

// RunInto runs the program like Run but writes every output into the caller's array of the
// same name, which must have exactly that output's dtype and shape (see DryRun and
// OutputShape) (shp_runtime_run_into). No copies are made.
func (r *Runtime) RunInto(inputs map[string]*Array, outputs map[string]*Array) error {
	var pin runtime.Pinner
	names, ins, release, err := wrapInputs(inputs, &pin)
	if err != nil {
		return err
	}
	defer release()
	outs := make([]*C.shp_array_t, len(r.outputNames)+1)
	defer func() {
		for _, c := range outs {
			C.shp_array_destroy(c)
		}
	}()
	for i, n := range r.outputNames {
		a := outputs[n]
		if a == nil {
			return invalidArgument("RunInto: no array for output '" + n + "'")
		}
		if outs[i], err = a.wrap(&pin, "RunInto: output '"+n+"'"); err != nil {
			return err
		}
	}
	if len(outputs) != len(r.outputNames) {
		for n := range outputs {
			if !contains(r.outputNames, n) {
				return &Error{Code: NotFound, Message: "RunInto: the program has no output '" + n + "'"}
			}
		}
	}
	err = check(C.shp_runtime_run_into(r.ptr(), namesPtr(names), firstOrNil(ins), C.size_t(len(ins)),
		&outs[0], C.size_t(len(r.outputNames))))
	runtime.KeepAlive(r)
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(outputs)
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// DryRun performs every check of Run on input dtypes and shapes alone (name -> shape; a
// dimension input gives its value as a one-element slice), then computes the output shapes
// (read them with OutputShape) (shp_runtime_dry_run). Dtypes are taken as the program's.
func (r *Runtime) DryRun(shapes map[string][]int64) error {
	names, list := namedShapes(shapes)
	cn, free := cStrings(names)
	defer free()
	ptrs, ranks, freeShapes := cShapes(list)
	defer freeShapes()
	zeroDimInputRanks(names, ranks, r.dimInputs)
	err := check(C.shp_runtime_dry_run(r.ptr(), namesPtr(cn), nil, ptrs, ranks, C.size_t(len(names))))
	runtime.KeepAlive(r)
	return err
}

// OutputShape returns the shape of output i from the last successful DryRun, Run or RunInto
// (shp_runtime_output_shape).
func (r *Runtime) OutputShape(i int) ([]int64, error) {
	if i < 0 {
		return nil, invalidArgument("output index is negative")
	}
	c := r.ptr()
	var rank C.size_t
	if err := check(C.shp_runtime_output_shape(c, C.size_t(i), nil, 0, &rank)); err != nil {
		return nil, err
	}
	dims := make([]C.int64_t, int(rank)+1)
	err := check(C.shp_runtime_output_shape(c, C.size_t(i), &dims[0], rank, &rank))
	runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	out := make([]int64, rank)
	for k := range out {
		out[k] = int64(dims[k])
	}
	return out, nil
}

// DimBounds describes one dim of an output after a DryRun, Run or RunInto.
type DimBounds struct {
	// DataDependent: the dim is an unbacked size (Tensor.Nonzero, BooleanMask, SizeFromValue).
	DataDependent bool
	// Min and Max bound it. After a DryRun a data-dependent dim is -1 in OutputShape (no data
	// is computed) and [Min, Max] bounds it at those input shapes (Max math.MaxInt64:
	// unbounded); after a run, and for every other dim, Min == Max == the size.
	Min, Max int64
}

// OutputDimBounds returns whether axis of output i from the last successful DryRun, Run or
// RunInto is data-dependent, and its bounds (shp_runtime_output_dim_bounds).
func (r *Runtime) OutputDimBounds(i, axis int) (DimBounds, error) {
	if i < 0 || axis < 0 {
		return DimBounds{}, invalidArgument("output index or axis is negative")
	}
	var dd C.bool
	var lo, hi C.int64_t
	err := check(C.shp_runtime_output_dim_bounds(r.ptr(), C.size_t(i), C.size_t(axis), &dd, &lo, &hi))
	runtime.KeepAlive(r)
	if err != nil {
		return DimBounds{}, err
	}
	return DimBounds{DataDependent: bool(dd), Min: int64(lo), Max: int64(hi)}, nil
}

// PlansBuilt returns the number of plans built (calls whose shapes were not cached).
func (r *Runtime) PlansBuilt() uint64 {
	n := uint64(C.shp_runtime_plans_built(r.ptr()))
	runtime.KeepAlive(r)
	return n
}

// CacheHits returns the number of calls that found their plan in the cache.
func (r *Runtime) CacheHits() uint64 {
	n := uint64(C.shp_runtime_cache_hits(r.ptr()))
	runtime.KeepAlive(r)
	return n
}

// LastPlanBuildTime returns the wall time of the last plan build (solving, checking,
// planning); 0 before the first.
func (r *Runtime) LastPlanBuildTime() time.Duration {
	d := time.Duration(C.shp_runtime_last_plan_build_ns(r.ptr()))
	runtime.KeepAlive(r)
	return d
}

// NumThreads returns the number of threads each kernel call may use.
func (r *Runtime) NumThreads() int {
	n := int(C.shp_runtime_num_threads(r.ptr()))
	runtime.KeepAlive(r)
	return n
}

// SimdTarget returns the SIMD target this runtime's kernels dispatch to, e.g. "AVX2".
func (r *Runtime) SimdTarget() string {
	s := C.GoString(C.shp_runtime_simd_target(r.ptr()))
	runtime.KeepAlive(r)
	return s
}
