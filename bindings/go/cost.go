package shapepoly

// #include "shapepoly/shapepoly.h"
import "C"

import (
	"math"
	"runtime"
)

// CostKind is what a cost measures (shp_cost_kind_t). Values are fixed; a value outside the
// constants below is an InvalidArgument error of every call that takes one.
type CostKind int32

// Cost kinds; the C header and docs/ops.md give each operation's rule.
const (
	// CostFLOPs counts floating-point operations, a multiply-add as 2.
	CostFLOPs CostKind = C.SHP_COST_FLOPS
	// CostBytesAccessed counts, per operation as traced, the bytes of its operands read plus
	// those of its result written (constants excluded).
	CostBytesAccessed CostKind = C.SHP_COST_BYTES_ACCESSED
	// CostPeakBytes is the outputs' bytes plus the runtime's arena for intermediates: a bound
	// on the memory a run uses.
	CostPeakBytes CostKind = C.SHP_COST_PEAK_BYTES
	// CostParameterBytes is the bytes of the parameter inputs and the constants (the weights).
	CostParameterBytes CostKind = C.SHP_COST_PARAMETER_BYTES
)

// String returns "flops", "bytes accessed", "peak bytes" or "parameter bytes" (the names of
// `shapepoly inspect --cost`).
func (k CostKind) String() string {
	switch k {
	case CostFLOPs:
		return "flops"
	case CostBytesAccessed:
		return "bytes accessed"
	case CostPeakBytes:
		return "peak bytes"
	case CostParameterBytes:
		return "parameter bytes"
	}
	return "CostKind(" + itoa(int64(k)) + ")"
}

// CostBounds are sound bounds of a cost formula under the program's declared ranges and
// constraints: every shape the program accepts costs within [Lo, Hi].
type CostBounds struct {
	Lo int64
	// Hi is the guaranteed worst case when Bounded; math.MaxInt64 otherwise.
	Hi int64
	// Bounded is false when no finite worst case follows from the ranges and constraints.
	Bounded bool
	// Reason says why the worst case is unbounded, naming the variables (e.g. "no upper bound
	// on batch; ..."); "" when Bounded.
	Reason string
}

// Cost returns what the program costs for every shape at once: a dim expression over its
// variables, e.g. "92*batch" (shp_program_cost). A multi-variant program gives variant 0's
// formula. CostPeakBytes of a program the runtime cannot plan is an Unsupported error.
func (p *Program) Cost(kind CostKind) (string, error) {
	c := p.ptr()
	s, err := readString(func(buf *C.char, n C.size_t, l *C.size_t) *C.shp_error_t {
		return C.shp_program_cost(c, C.shp_cost_kind_t(kind), buf, n, l)
	})
	runtime.KeepAlive(p)
	return s, err
}

// CostBounds returns sound bounds of the Cost formula (shp_program_cost_bounds); when the
// worst case is unbounded, Hi is math.MaxInt64 and Reason comes from CostUnboundedReason.
func (p *Program) CostBounds(kind CostKind) (CostBounds, error) {
	var lo, hi C.int64_t
	err := check(C.shp_program_cost_bounds(p.ptr(), C.shp_cost_kind_t(kind), &lo, &hi))
	runtime.KeepAlive(p)
	if err != nil {
		return CostBounds{}, err
	}
	b := CostBounds{Lo: int64(lo), Hi: int64(hi), Bounded: int64(hi) != math.MaxInt64}
	if !b.Bounded {
		if b.Reason, err = p.CostUnboundedReason(kind); err != nil {
			return CostBounds{}, err
		}
	}
	return b, nil
}

// CostUnboundedReason says why the worst case of kind is unbounded, e.g. "no upper bound on
// batch; declare a range ... or add a constraint such as batch <= 4096 when tracing"; "" when
// CostBounds is bounded (shp_program_cost_unbounded_reason).
func (p *Program) CostUnboundedReason(kind CostKind) (string, error) {
	c := p.ptr()
	s, err := readString(func(buf *C.char, n C.size_t, l *C.size_t) *C.shp_error_t {
		return C.shp_program_cost_unbounded_reason(c, C.shp_cost_kind_t(kind), buf, n, l)
	})
	runtime.KeepAlive(p)
	return s, err
}

// VariableBounds returns sound bounds of variable i (in the order of Variables) under the
// program's declared ranges and constraints, of variant 0 for a multi-variant program;
// math.MinInt64 / math.MaxInt64 mean unbounded (shp_program_variable_bounds).
func (p *Program) VariableBounds(i int) (lo, hi int64, err error) {
	if i < 0 {
		return 0, 0, invalidArgument("variable index is negative")
	}
	var l, h C.int64_t
	err = check(C.shp_program_variable_bounds(p.ptr(), C.size_t(i), &l, &h))
	runtime.KeepAlive(p)
	if err != nil {
		return 0, 0, err
	}
	return int64(l), int64(h), nil
}

// DOT returns the program as a Graphviz DOT graph: one node per operation, edges labelled
// with dtypes and symbolic shapes, one cluster per variant and a legend with the variables,
// constraints, assertions and guards (shp_program_to_dot). Render it with `dot -Tsvg`.
func (p *Program) DOT() (string, error) {
	c := p.ptr()
	s, err := readString(func(buf *C.char, n C.size_t, l *C.size_t) *C.shp_error_t {
		return C.shp_program_to_dot(c, buf, n, l)
	})
	runtime.KeepAlive(p)
	return s, err
}

// Cost evaluates the cost kind for concrete input shapes without running (shp_runtime_cost):
// the shapes are given and checked as for DryRun (name -> shape; a dimension input gives its
// value as a one-element slice; dtypes are the program's), then the formula of the variant
// that would run is evaluated. Plans and caches like DryRun. A value beyond int64 is an
// Overflow error.
func (r *Runtime) Cost(kind CostKind, shapes map[string][]int64) (int64, error) {
	names, list := namedShapes(shapes)
	cn, free := cStrings(names)
	defer free()
	ptrs, ranks, freeShapes := cShapes(list)
	defer freeShapes()
	zeroDimInputRanks(names, ranks, r.dimInputs)
	var v C.int64_t
	err := check(C.shp_runtime_cost(r.ptr(), C.shp_cost_kind_t(kind), namesPtr(cn), nil, ptrs,
		ranks, C.size_t(len(names)), &v))
	runtime.KeepAlive(r)
	if err != nil {
		return 0, err
	}
	return int64(v), nil
}
