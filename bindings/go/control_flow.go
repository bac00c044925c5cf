package shapepoly

// #include "shapepoly/shapepoly.h"
import "C"

import (
	"fmt"
	"runtime"
	"strconv"
)

// Control flow traced from Go functions, as JAX writes it: Cond, WhileLoop and Scan
// (shapepoly.h, "Control flow"). Each function is traced once, on fresh inputs of its
// operands' types, into a subprogram of the scope (shp_program_create_body). Tensors a
// function uses from the enclosing trace (its closures) become operands of the op
// automatically; the two functions of one op (Cond's branches, WhileLoop's condFn and bodyFn)
// take the union of their captures.

// body is a function traced on fresh inputs: its program, captures and outputs.
type body struct {
	scope    *Scope
	mark     C.size_t
	inputs   []Tensor
	outputs  []Tensor
	program  *Program
	captures []Tensor
}

// bodySpec is one fresh input: named like a tensor, with its dtype and shape less dropAxis
// (-1: none).
type bodySpec struct {
	name     string
	like     Tensor
	dropAxis int
}

func tensorPtrs(ts []Tensor) []*C.shp_tensor_t {
	out := make([]*C.shp_tensor_t, len(ts))
	for i, t := range ts {
		out[i] = t.ptr()
	}
	return out
}

func namedSpecs(prefix string, ts []Tensor) []bodySpec {
	specs := make([]bodySpec, len(ts))
	for i, t := range ts {
		specs[i] = bodySpec{prefix + strconv.Itoa(i), t, -1}
	}
	return specs
}

// traceBody takes the mark, makes the fresh inputs and runs fn on them.
func (s *Scope) traceBody(specs []bodySpec, fn func([]Tensor) ([]Tensor, error)) (*body, error) {
	b := &body{scope: s, mark: C.shp_scope_trace_mark(s.ptr())}
	for _, sp := range specs {
		dims, err := sp.like.Shape()
		if err != nil {
			return nil, err
		}
		if sp.dropAxis >= 0 {
			dims = append(dims[:sp.dropAxis:sp.dropAxis], dims[sp.dropAxis+1:]...)
		}
		in, err := s.InputDims(sp.name, sp.like.DType(), dims...)
		if err != nil {
			return nil, err
		}
		b.inputs = append(b.inputs, in)
	}
	outs, err := fn(b.inputs)
	if err != nil {
		return nil, err
	}
	b.outputs = outs
	b.program, b.captures, err = b.cut(nil)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// cut is shp_program_create_body with given as the first captures.
func (b *body) cut(given []Tensor) (*Program, []Tensor, error) {
	// Tensors older than the mark, the scope's variables, the given ones: always enough.
	capacity := int(b.mark) + int(C.shp_scope_variable_count(b.scope.ptr())) + len(given)
	caps := make([]*C.shp_tensor_t, capacity+1)
	copy(caps, tensorPtrs(given))
	n := C.size_t(len(given))
	ins, outs := tensorPtrs(b.inputs), tensorPtrs(b.outputs)
	var p *C.shp_program_t
	err := check(C.shp_program_create_body(b.scope.ptr(), b.mark, firstOrNil(ins), C.size_t(len(ins)),
		firstOrNil(outs), C.size_t(len(outs)), &caps[0], C.size_t(capacity), &n, &p))
	runtime.KeepAlive(b.scope)
	if err != nil {
		return nil, nil, err
	}
	captures := make([]Tensor, int(n))
	for i := range captures {
		captures[i] = Tensor{scope: b.scope, _ptr: caps[i]}
	}
	return newProgram(p), captures, nil
}

// withCaptures returns the program taking exactly union (a superset of b's captures) as
// captures; the caller closes it.
func (b *body) withCaptures(union []Tensor) (*Program, error) {
	if sameTensors(union, b.captures) {
		p := b.program
		b.program = nil
		return p, nil
	}
	p, _, err := b.cut(union)
	return p, err
}

func (b *body) close() {
	if b != nil {
		b.program.Close()
	}
}

func sameTensors(a, b []Tensor) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i]._ptr != b[i]._ptr {
			return false
		}
	}
	return true
}

func unionTensors(a, b []Tensor) []Tensor {
	out := append([]Tensor(nil), a...)
	for _, t := range b {
		found := false
		for _, u := range out {
			found = found || u._ptr == t._ptr
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}

// results runs a C control-flow op writing count results.
func (s *Scope) results(count int, f func(out **C.shp_tensor_t, n C.size_t) *C.shp_error_t) ([]Tensor, error) {
	out := make([]*C.shp_tensor_t, count+1)
	err := check(f(&out[0], C.size_t(count)))
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	ts := make([]Tensor, count)
	for i := range ts {
		ts[i] = Tensor{scope: s, _ptr: out[i]}
	}
	return ts, nil
}

// Cond is lax.cond / torch.cond (shp_tensor_cond): trueFn(operands) when the Bool scalar pred
// is true, else falseFn(operands); only the taken branch runs. Both branches return the same
// number of tensors with the same dtypes and ranks (a ShapeMismatch or DTypeMismatch error
// naming both otherwise; a different count is InvalidArgument); a dim whose sizes are not
// provably equal becomes a new data-dependent size (u0, ...) set by the branch that runs. Each
// function is traced once, on fresh inputs of the operands' types; an error it returns is
// returned as is.
func (s *Scope) Cond(pred Tensor, trueFn, falseFn func(operands []Tensor) ([]Tensor, error),
	operands ...Tensor) ([]Tensor, error) {
	specs := namedSpecs("operand", operands)
	t, err := s.traceBody(specs, trueFn)
	defer t.close()
	if err != nil {
		return nil, err
	}
	f, err := s.traceBody(specs, falseFn)
	defer f.close()
	if err != nil {
		return nil, err
	}
	if len(t.outputs) != len(f.outputs) {
		return nil, invalidArgument(fmt.Sprintf(
			"Cond: the true branch returns %d tensors but the false branch returns %d",
			len(t.outputs), len(f.outputs)))
	}
	caps := unionTensors(t.captures, f.captures)
	tp, err := t.withCaptures(caps)
	if err != nil {
		return nil, err
	}
	defer tp.Close()
	fp, err := f.withCaptures(caps)
	if err != nil {
		return nil, err
	}
	defer fp.Close()
	ops := tensorPtrs(append(append([]Tensor(nil), operands...), caps...))
	p := pred.ptr()
	return s.results(len(t.outputs), func(out **C.shp_tensor_t, n C.size_t) *C.shp_error_t {
		return C.shp_tensor_cond(s.ptr(), p, tp.ptr(), fp.ptr(), firstOrNil(ops), C.size_t(len(ops)), out, n)
	})
}

// WhileLoop is lax.while_loop (shp_tensor_while_loop): carry = init; while condFn(carry):
// carry = bodyFn(carry); returns the final carry. condFn returns a Bool scalar; bodyFn returns
// the next carry, each value with the dtype and (provably) the shape of its initial value.
// maxTrips >= 0 bounds the iterations (a run that would exceed it fails with
// ConstraintViolation); -1: unbounded.
func (s *Scope) WhileLoop(condFn func(carry []Tensor) (Tensor, error),
	bodyFn func(carry []Tensor) ([]Tensor, error), init []Tensor, maxTrips int64) ([]Tensor, error) {
	specs := namedSpecs("carry", init)
	c, err := s.traceBody(specs, func(carry []Tensor) ([]Tensor, error) {
		p, err := condFn(carry)
		if err != nil {
			return nil, err
		}
		return []Tensor{p}, nil
	})
	defer c.close()
	if err != nil {
		return nil, err
	}
	b, err := s.traceBody(specs, bodyFn)
	defer b.close()
	if err != nil {
		return nil, err
	}
	if len(b.outputs) != len(init) {
		return nil, invalidArgument(fmt.Sprintf(
			"WhileLoop: bodyFn returns %d tensors but the carry has %d", len(b.outputs), len(init)))
	}
	caps := unionTensors(c.captures, b.captures)
	cp, err := c.withCaptures(caps)
	if err != nil {
		return nil, err
	}
	defer cp.Close()
	bp, err := b.withCaptures(caps)
	if err != nil {
		return nil, err
	}
	defer bp.Close()
	ins, consts := tensorPtrs(init), tensorPtrs(caps)
	return s.results(len(init), func(out **C.shp_tensor_t, n C.size_t) *C.shp_error_t {
		return C.shp_tensor_while_loop(s.ptr(), cp.ptr(), bp.ptr(), firstOrNil(ins), C.size_t(len(ins)),
			firstOrNil(consts), C.size_t(len(consts)), C.int64_t(maxTrips), out, n)
	})
}

// Scan is lax.scan (shp_tensor_scan): for each slice x of xs along axis (last to first when
// reverse): carry, y = f(carry, x); returns the final carry and each y stacked along axis.
// Every xs has the same (provably equal) size on axis, the length, which may be symbolic;
// length gives it when xs is empty (the zero Dim otherwise). f returns the carry (the dtypes
// and shapes of init) and any number of ys.
func (s *Scope) Scan(f func(carry, x []Tensor) (newCarry, y []Tensor, err error), init, xs []Tensor,
	length Dim, reverse bool, axis int) (carry, ys []Tensor, err error) {
	if axis < 0 {
		return nil, nil, invalidArgument(fmt.Sprintf("Scan: axis is %d, not >= 0", axis))
	}
	specs := namedSpecs("carry", init)
	for i, x := range xs {
		if r := x.rank(); r <= axis {
			return nil, nil, invalidArgument(fmt.Sprintf("Scan: xs[%d] has rank %d, no axis %d to scan", i, r, axis))
		}
		specs = append(specs, bodySpec{"x" + strconv.Itoa(i), x, axis})
	}
	nc, carryCount := len(init), -1
	b, err := s.traceBody(specs, func(ins []Tensor) ([]Tensor, error) {
		c, y, err := f(ins[:nc:nc], ins[nc:])
		if err != nil {
			return nil, err
		}
		carryCount = len(c)
		return append(append([]Tensor(nil), c...), y...), nil
	})
	defer b.close()
	if err != nil {
		return nil, nil, err
	}
	if carryCount != nc {
		return nil, nil, invalidArgument(fmt.Sprintf(
			"Scan: f returns a carry of %d tensors but init has %d", carryCount, nc))
	}
	ins, xp, consts := tensorPtrs(init), tensorPtrs(xs), tensorPtrs(b.captures)
	var lp *C.shp_dim_t
	if !length.IsZero() {
		lp = length.ptr()
	}
	res, err := s.results(len(b.outputs), func(out **C.shp_tensor_t, n C.size_t) *C.shp_error_t {
		return C.shp_tensor_scan(s.ptr(), b.program.ptr(), firstOrNil(ins), C.size_t(len(ins)),
			firstOrNil(xp), C.size_t(len(xp)), firstOrNil(consts), C.size_t(len(consts)), C.int64_t(axis),
			lp, C.bool(reverse), out, n)
	})
	runtime.KeepAlive(length.scope)
	if err != nil {
		return nil, nil, err
	}
	return res[:nc:nc], res[nc:], nil
}
