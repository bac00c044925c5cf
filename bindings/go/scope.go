package shapepoly

// #include <stdlib.h>
// #include "shapepoly/shapepoly.h"
import "C"

import (
	"runtime"
	"strconv"
	"unsafe"
)

// Scope holds dimension variables, constraints, and every Dim and Tensor built in it
// (shp_scope_t). Used by one goroutine at a time.
type Scope struct {
	_ptr *C.shp_scope_t
	// borrowed: the library's scope of a trace (Function); Close only detaches from it.
	borrowed bool
}

// Range declares the inclusive range [Min, Max] of a dimension variable
// (math.MinInt64 / math.MaxInt64 for unbounded).
type Range struct {
	Name     string
	Min, Max int64
}

func wrapScope(p *C.shp_scope_t) *Scope {
	s := &Scope{_ptr: p}
	runtime.SetFinalizer(s, (*Scope).Close)
	liveHandles.Add(1)
	return s
}

// NewScope creates a scope with constraints such as "n >= 2" or "2*k == m"
// (shp_scope_create). Every variable is >= 1 unless declared otherwise.
func NewScope(constraints ...string) (*Scope, error) {
	return NewScopeWithRanges(constraints)
}

// NewScopeWithRanges creates a scope after declaring the ranges of some variables, so the
// constraints are checked under them (shp_scope_create_with_ranges).
func NewScopeWithRanges(constraints []string, ranges ...Range) (*Scope, error) {
	if abiError != nil {
		return nil, abiError
	}
	cs, freeCs := cStrings(constraints)
	defer freeCs()
	names := make([]string, len(ranges))
	mins := make([]C.int64_t, len(ranges))
	maxs := make([]C.int64_t, len(ranges))
	for i, r := range ranges {
		names[i], mins[i], maxs[i] = r.Name, C.int64_t(r.Min), C.int64_t(r.Max)
	}
	ns, freeNs := cStrings(names)
	defer freeNs()
	var p *C.shp_scope_t
	var err error
	if len(ranges) == 0 {
		err = check(C.shp_scope_create(firstOrNil(cs), C.size_t(len(cs)), &p))
	} else {
		err = check(C.shp_scope_create_with_ranges(firstOrNil(cs), C.size_t(len(cs)),
			firstOrNil(ns), firstOrNil(mins), firstOrNil(maxs), C.size_t(len(ranges)), &p))
	}
	if err != nil {
		return nil, err
	}
	return wrapScope(p), nil
}

// Close destroys the scope and every Dim and Tensor built in it (shp_scope_destroy).
// Calling it again does nothing.
func (s *Scope) Close() {
	if s == nil || s._ptr == nil {
		return
	}
	if s.borrowed {
		s._ptr = nil
		return
	}
	runtime.SetFinalizer(s, nil)
	liveHandles.Add(-1)
	C.shp_scope_destroy(s._ptr)
	s._ptr = nil
}

func (s *Scope) ptr() *C.shp_scope_t {
	if s._ptr == nil {
		panic(closedMsg)
	}
	return s._ptr
}

// Declare declares variable name with the inclusive range [min, max] (shp_scope_declare).
func (s *Scope) Declare(name string, min, max int64) error {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	err := check(C.shp_scope_declare(s.ptr(), cn, C.int64_t(min), C.int64_t(max)))
	runtime.KeepAlive(s)
	return err
}

// Check asserts `a op b` (shp_scope_check): the decision procedure uses it from now on and
// programs built afterwards check it at run time, failing with message ("" for the default).
func (s *Scope) Check(a Dim, op Cmp, b Dim, message string) error {
	var cm *C.char
	if message != "" {
		cm = C.CString(message)
		defer C.free(unsafe.Pointer(cm))
	}
	err := check(C.shp_scope_check(s.ptr(), a.ptr(), C.shp_cmp_t(op), b.ptr(), cm))
	runtime.KeepAlive(s)
	runtime.KeepAlive(a.scope)
	runtime.KeepAlive(b.scope)
	return err
}

// VariableCount returns the number of variables the scope knows.
func (s *Scope) VariableCount() int {
	n := int(C.shp_scope_variable_count(s.ptr()))
	runtime.KeepAlive(s)
	return n
}

// VariableName returns the name of variable i, in order of first mention ("" if out of range).
func (s *Scope) VariableName(i int) string {
	if i < 0 {
		return ""
	}
	n := goStringOrEmpty(C.shp_scope_variable_name(s.ptr(), C.size_t(i)))
	runtime.KeepAlive(s)
	return n
}

// VariableRange returns the declared range of variable i ([1, MaxInt64] unless declared).
func (s *Scope) VariableRange(i int) (min, max int64, err error) {
	if i < 0 {
		return 0, 0, invalidArgument("variable index is negative")
	}
	var lo, hi C.int64_t
	err = check(C.shp_scope_variable_range(s.ptr(), C.size_t(i), &lo, &hi))
	runtime.KeepAlive(s)
	return int64(lo), int64(hi), err
}

// VariableIsUnbacked reports whether variable i is unbacked: data-dependent, made by
// Tensor.Nonzero, Tensor.BooleanMask or Tensor.SizeFromValue (false if out of range).
func (s *Scope) VariableIsUnbacked(i int) bool {
	if i < 0 {
		return false
	}
	b := bool(C.shp_scope_variable_is_unbacked(s.ptr(), C.size_t(i)))
	runtime.KeepAlive(s)
	return b
}

// VariableOrigin returns the op that produces unbacked variable i, e.g. "nonzero of a (n, 4)
// tensor" ("" for other variables or out of range).
func (s *Scope) VariableOrigin(i int) string {
	if i < 0 {
		return ""
	}
	o := goStringOrEmpty(C.shp_scope_variable_origin(s.ptr(), C.size_t(i)))
	runtime.KeepAlive(s)
	return o
}

// Variables returns the names of every variable, in order of first mention.
func (s *Scope) Variables() []string {
	out := make([]string, s.VariableCount())
	for i := range out {
		out[i] = s.VariableName(i)
	}
	return out
}

// ConstraintCount returns the number of facts: constraints, then assertions from Check.
func (s *Scope) ConstraintCount() int {
	n := int(C.shp_scope_constraint_count(s.ptr()))
	runtime.KeepAlive(s)
	return n
}

// ConstraintText returns the text of fact i ("" if out of range).
func (s *Scope) ConstraintText(i int) string {
	if i < 0 {
		return ""
	}
	t := goStringOrEmpty(C.shp_scope_constraint_text(s.ptr(), C.size_t(i)))
	runtime.KeepAlive(s)
	return t
}

// Constraints returns the text of every fact.
func (s *Scope) Constraints() []string {
	out := make([]string, s.ConstraintCount())
	for i := range out {
		out[i] = s.ConstraintText(i)
	}
	return out
}

func goStringOrEmpty(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func (s *Scope) dim(f func(out **C.shp_dim_t) *C.shp_error_t) (Dim, error) {
	var d *C.shp_dim_t
	if err := check(f(&d)); err != nil {
		return Dim{}, err
	}
	return Dim{scope: s, _ptr: d}, nil
}

// Parse parses a dimension expression such as "2*b + 1" or "floordiv(n, 2)" (shp_dim_parse).
func (s *Scope) Parse(text string) (Dim, error) {
	ct := C.CString(text)
	defer C.free(unsafe.Pointer(ct))
	d, err := s.dim(func(out **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_parse(s.ptr(), ct, out) })
	runtime.KeepAlive(s)
	return d, err
}

// Const returns the constant value as a dim of the scope (shp_dim_constant).
func (s *Scope) Const(value int64) (Dim, error) {
	d, err := s.dim(func(out **C.shp_dim_t) *C.shp_error_t {
		return C.shp_dim_constant(s.ptr(), C.int64_t(value), out)
	})
	runtime.KeepAlive(s)
	return d, err
}

// Var returns the variable name, created on first mention (shp_dim_variable).
func (s *Scope) Var(name string) (Dim, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	d, err := s.dim(func(out **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_variable(s.ptr(), cn, out) })
	runtime.KeepAlive(s)
	return d, err
}

// ParseShape parses a shape spec such as "batch, 2*n" (shp_shape_parse). `_` takes one dim
// from like and `...` (last position) the rest of it; like may be nil.
func (s *Scope) ParseShape(spec string, like []int64) ([]Dim, error) {
	cs := C.CString(spec)
	defer C.free(unsafe.Pointer(cs))
	cl := make([]C.int64_t, len(like))
	for i, v := range like {
		cl[i] = C.int64_t(v)
	}
	var likePtr *C.int64_t
	if like != nil {
		likePtr = &append(cl, 0)[0] // non-NULL even for an empty `like`
	}
	var rank C.size_t
	if err := check(C.shp_shape_parse(s.ptr(), cs, likePtr, C.size_t(len(like)), nil, 0, &rank)); err != nil {
		return nil, err
	}
	ds := make([]*C.shp_dim_t, int(rank)+1)
	err := check(C.shp_shape_parse(s.ptr(), cs, likePtr, C.size_t(len(like)), &ds[0], rank, &rank))
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	return s.wrapDims(ds[:rank]), nil
}

func (s *Scope) wrapDims(ds []*C.shp_dim_t) []Dim {
	out := make([]Dim, len(ds))
	for i, d := range ds {
		out[i] = Dim{scope: s, _ptr: d}
	}
	return out
}

// Solve solves every variable of specs from concrete shapes: argument i has spec specs[i]
// and shape shapes[i] (shp_scope_solve).
func (s *Scope) Solve(specs []string, shapes [][]int64) (*Bindings, error) {
	if len(specs) != len(shapes) {
		return nil, invalidArgument("Solve: specs and shapes have different lengths")
	}
	cs, freeCs := cStrings(specs)
	defer freeCs()
	ptrs, ranks, freeShapes := cShapes(shapes)
	defer freeShapes()
	var b *C.shp_bindings_t
	err := check(C.shp_scope_solve(s.ptr(), C.size_t(len(specs)), firstOrNil(cs), ptrs, ranks, &b))
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	return newBindings(b), nil
}

// ---- Dims ----

// Dim is a symbolic dimension expression in normal form (shp_dim_t), owned by its Scope,
// which it keeps alive. Dims are interned: two dims of one scope are the same expression
// exactly when they are == . The zero Dim stands for "none" (NULL), e.g. the inferred
// dimension of Tensor.Reshape or a default bound of Tensor.Slice.
type Dim struct {
	scope *Scope
	_ptr  *C.shp_dim_t
}

func (d Dim) ptr() *C.shp_dim_t {
	if d.scope != nil && d.scope._ptr == nil {
		panic(closedMsg)
	}
	return d._ptr
}

// Scope returns the scope the dim belongs to (nil for the zero Dim).
func (d Dim) Scope() *Scope { return d.scope }

// IsZero reports whether d is the zero Dim ("none").
func (d Dim) IsZero() bool { return d._ptr == nil }

func (d Dim) binary(b Dim, f func(a, b *C.shp_dim_t, out **C.shp_dim_t) *C.shp_error_t) (Dim, error) {
	var r *C.shp_dim_t
	err := check(f(d.ptr(), b.ptr(), &r))
	runtime.KeepAlive(d.scope)
	runtime.KeepAlive(b.scope)
	if err != nil {
		return Dim{}, err
	}
	return Dim{scope: d.scope, _ptr: r}, nil
}

// Add returns d + b (shp_dim_add).
func (d Dim) Add(b Dim) (Dim, error) {
	return d.binary(b, func(x, y *C.shp_dim_t, o **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_add(x, y, o) })
}

// Sub returns d - b (shp_dim_sub).
func (d Dim) Sub(b Dim) (Dim, error) {
	return d.binary(b, func(x, y *C.shp_dim_t, o **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_sub(x, y, o) })
}

// Mul returns d * b (shp_dim_mul).
func (d Dim) Mul(b Dim) (Dim, error) {
	return d.binary(b, func(x, y *C.shp_dim_t, o **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_mul(x, y, o) })
}

// FloorDiv returns floordiv(d, b) (shp_dim_floordiv); b must be provably non-zero.
func (d Dim) FloorDiv(b Dim) (Dim, error) {
	return d.binary(b, func(x, y *C.shp_dim_t, o **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_floordiv(x, y, o) })
}

// Mod returns mod(d, b) with Python semantics (shp_dim_mod).
func (d Dim) Mod(b Dim) (Dim, error) {
	return d.binary(b, func(x, y *C.shp_dim_t, o **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_mod(x, y, o) })
}

// Max returns max(d, b) (shp_dim_max).
func (d Dim) Max(b Dim) (Dim, error) {
	return d.binary(b, func(x, y *C.shp_dim_t, o **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_max(x, y, o) })
}

// Min returns min(d, b) (shp_dim_min).
func (d Dim) Min(b Dim) (Dim, error) {
	return d.binary(b, func(x, y *C.shp_dim_t, o **C.shp_dim_t) *C.shp_error_t { return C.shp_dim_min(x, y, o) })
}

// Neg returns -d (shp_dim_neg).
func (d Dim) Neg() (Dim, error) {
	var r *C.shp_dim_t
	err := check(C.shp_dim_neg(d.ptr(), &r))
	runtime.KeepAlive(d.scope)
	if err != nil {
		return Dim{}, err
	}
	return Dim{scope: d.scope, _ptr: r}, nil
}

// Pow returns d^exponent, exponent >= 0 (shp_dim_pow).
func (d Dim) Pow(exponent int64) (Dim, error) {
	var r *C.shp_dim_t
	err := check(C.shp_dim_pow(d.ptr(), C.int64_t(exponent), &r))
	runtime.KeepAlive(d.scope)
	if err != nil {
		return Dim{}, err
	}
	return Dim{scope: d.scope, _ptr: r}, nil
}

// Text returns the canonical text of d, e.g. "2*b + 1" (shp_dim_to_string); it parses back
// to the same dim.
func (d Dim) Text() (string, error) {
	p := d.ptr()
	s, err := readString(func(buf *C.char, c C.size_t, n *C.size_t) *C.shp_error_t {
		return C.shp_dim_to_string(p, buf, c, n)
	})
	runtime.KeepAlive(d.scope)
	return s, err
}

// String returns the canonical text of d (see Text), or "<invalid dim: message>".
func (d Dim) String() string {
	s, err := d.Text()
	if err != nil {
		return "<invalid dim: " + err.Error() + ">"
	}
	return s
}

// IsConstant returns the value of d and true when d is a constant (shp_dim_is_constant).
func (d Dim) IsConstant() (int64, bool) {
	var v C.int64_t
	ok := bool(C.shp_dim_is_constant(d.ptr(), &v))
	runtime.KeepAlive(d.scope)
	return int64(v), ok
}

// Variables returns the names of the variables occurring in d (also inside floordiv, mod,
// max and min), in order of their first mention in the scope (shp_dim_variables).
func (d Dim) Variables() ([]string, error) {
	p := d.ptr()
	var n C.size_t
	if err := check(C.shp_dim_variables(p, nil, 0, &n)); err != nil {
		return nil, err
	}
	names := make([]*C.char, int(n)+1)
	if err := check(C.shp_dim_variables(p, &names[0], n, &n)); err != nil {
		return nil, err
	}
	out := make([]string, int(n))
	for i := range out {
		out[i] = C.GoString(names[i]) // borrowed from the scope: copy while it is alive
	}
	runtime.KeepAlive(d.scope)
	return out, nil
}

// Bounds returns sound inclusive bounds of d under the scope's facts (shp_dim_bounds);
// math.MinInt64 / math.MaxInt64 mean unbounded.
func (d Dim) Bounds() (lo, hi int64, err error) {
	var l, h C.int64_t
	err = check(C.shp_dim_bounds(d.ptr(), &l, &h))
	runtime.KeepAlive(d.scope)
	return int64(l), int64(h), err
}

// Compare decides `d op b` under the scope's facts (shp_dim_compare): True when it holds for
// every valuation, False for none, Unknown otherwise.
func (d Dim) Compare(op Cmp, b Dim) (Truth, error) {
	var t C.shp_truth_t
	err := check(C.shp_dim_compare(d.ptr(), C.shp_cmp_t(op), b.ptr(), &t))
	runtime.KeepAlive(d.scope)
	runtime.KeepAlive(b.scope)
	if err != nil {
		return Unknown, err
	}
	return Truth(t), nil
}

// Eq is d.Compare(CmpEq, b).
func (d Dim) Eq(b Dim) (Truth, error) { return d.Compare(CmpEq, b) }

// Ne is d.Compare(CmpNe, b).
func (d Dim) Ne(b Dim) (Truth, error) { return d.Compare(CmpNe, b) }

// Lt is d.Compare(CmpLt, b).
func (d Dim) Lt(b Dim) (Truth, error) { return d.Compare(CmpLt, b) }

// Le is d.Compare(CmpLe, b).
func (d Dim) Le(b Dim) (Truth, error) { return d.Compare(CmpLe, b) }

// Gt is d.Compare(CmpGt, b).
func (d Dim) Gt(b Dim) (Truth, error) { return d.Compare(CmpGt, b) }

// Ge is d.Compare(CmpGe, b).
func (d Dim) Ge(b Dim) (Truth, error) { return d.Compare(CmpGe, b) }

// Evaluate evaluates d with the given variable values (shp_dim_evaluate). Constraints are
// not checked here (use Scope.Solve).
func (d Dim) Evaluate(values map[string]int64) (int64, error) {
	names := make([]string, 0, len(values))
	vals := make([]C.int64_t, 0, len(values))
	for k, v := range values {
		names = append(names, k)
		vals = append(vals, C.int64_t(v))
	}
	cn, free := cStrings(names)
	defer free()
	var out C.int64_t
	err := check(C.shp_dim_evaluate(d.ptr(), firstOrNil(cn), firstOrNil(vals), C.size_t(len(names)), &out))
	runtime.KeepAlive(d.scope)
	return int64(out), err
}

// Cmp is a comparison operator (shp_cmp_t).
type Cmp int32

// Comparison operators.
const (
	CmpEq Cmp = C.SHP_CMP_EQ
	CmpNe Cmp = C.SHP_CMP_NE
	CmpLt Cmp = C.SHP_CMP_LT
	CmpLe Cmp = C.SHP_CMP_LE
	CmpGt Cmp = C.SHP_CMP_GT
	CmpGe Cmp = C.SHP_CMP_GE
)

// String returns "==", "!=", "<", "<=", ">" or ">=".
func (c Cmp) String() string {
	switch c {
	case CmpEq:
		return "=="
	case CmpNe:
		return "!="
	case CmpLt:
		return "<"
	case CmpLe:
		return "<="
	case CmpGt:
		return ">"
	case CmpGe:
		return ">="
	}
	return "Cmp(" + itoa(int64(c)) + ")"
}

// Truth is a three-valued truth (shp_truth_t). Unknown means the engine can prove neither
// the comparison nor its negation; it is never turned into False.
type Truth int32

// Truth values.
const (
	False   Truth = C.SHP_FALSE
	True    Truth = C.SHP_TRUE
	Unknown Truth = C.SHP_UNKNOWN
)

// String returns "true", "false" or "unknown".
func (t Truth) String() string {
	switch t {
	case False:
		return "false"
	case True:
		return "true"
	case Unknown:
		return "unknown"
	}
	return "Truth(" + itoa(int64(t)) + ")"
}

// ---- Bindings ----

// Bindings holds the variable values found by Scope.Solve or Program.CheckShapes
// (shp_bindings_t).
type Bindings struct {
	_ptr *C.shp_bindings_t
}

func newBindings(p *C.shp_bindings_t) *Bindings {
	b := &Bindings{_ptr: p}
	runtime.SetFinalizer(b, (*Bindings).Close)
	liveHandles.Add(1)
	return b
}

// Close releases the bindings (shp_bindings_destroy). Calling it again does nothing.
func (b *Bindings) Close() {
	if b == nil || b._ptr == nil {
		return
	}
	runtime.SetFinalizer(b, nil)
	liveHandles.Add(-1)
	C.shp_bindings_destroy(b._ptr)
	b._ptr = nil
}

func (b *Bindings) ptr() *C.shp_bindings_t {
	if b._ptr == nil {
		panic(closedMsg)
	}
	return b._ptr
}

// Count returns the number of variables.
func (b *Bindings) Count() int {
	n := int(C.shp_bindings_count(b.ptr()))
	runtime.KeepAlive(b)
	return n
}

// Name returns the name of binding i ("" if out of range).
func (b *Bindings) Name(i int) string {
	if i < 0 {
		return ""
	}
	n := goStringOrEmpty(C.shp_bindings_name(b.ptr(), C.size_t(i)))
	runtime.KeepAlive(b)
	return n
}

// Value returns the value of binding i (0 if out of range).
func (b *Bindings) Value(i int) int64 {
	if i < 0 {
		return 0
	}
	v := int64(C.shp_bindings_value(b.ptr(), C.size_t(i)))
	runtime.KeepAlive(b)
	return v
}

// Map returns every binding as name -> value.
func (b *Bindings) Map() map[string]int64 {
	m := make(map[string]int64)
	for i, n := 0, b.Count(); i < n; i++ {
		m[b.Name(i)] = b.Value(i)
	}
	return m
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
