package shapepoly

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// must returns v, panicking on err (Go cannot pass t alongside a multi-value call).
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

// noErr fails the test on err.
func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// wantCode checks that err is a *Error with the code and a message containing every part.
func wantCode(t testing.TB, err error, code Code, parts ...string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *shapepoly.Error with %v, got %v (%T)", code, err, err)
	}
	if e.Code != code {
		t.Fatalf("want code %v, got %v: %s", code, e.Code, e.Message)
	}
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			t.Fatalf("message %q does not contain %q", e.Message, p)
		}
	}
	return e
}

func newScope(t testing.TB, constraints ...string) *Scope {
	t.Helper()
	s, err := NewScope(constraints...)
	noErr(t, err)
	t.Cleanup(s.Close)
	return s
}

// reload serializes p, loads the bytes and checks that the copy serializes to the same bytes
// and lists the same text. Tests run programs through newTwinRuntime, which calls this, so a
// program that saves but does not load fails every test that runs it.
func reload(t testing.TB, p *Program) *Program {
	t.Helper()
	data, err := p.Serialize()
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	q, err := LoadProgram(data)
	if err != nil {
		t.Fatalf("the program serializes but does not load: %v", err)
	}
	t.Cleanup(q.Close)
	if again := must(q.Serialize()); string(again) != string(data) {
		t.Fatal("the loaded program serializes to other bytes")
	}
	if q.String() != p.String() {
		t.Fatalf("listing after reload:\n%s\nbefore:\n%s", q, p)
	}
	return q
}

// twinRuntime runs the reloaded copy of a program (the embedded Runtime, whose results,
// statistics and options the tests see) and, on the same calls, the program as traced (mem).
// Every call must give the same error or bit-identical outputs on both.
type twinRuntime struct {
	*Runtime
	mem *Runtime
	t   testing.TB
}

// newTwinRuntime creates the runtime pair of p with options o (nil: defaults).
func newTwinRuntime(t testing.TB, p *Program, o *RuntimeOptions) *twinRuntime {
	t.Helper()
	loaded, err := NewRuntime(reload(t, p), o)
	noErr(t, err)
	mem, err := NewRuntime(p, o)
	noErr(t, err)
	return &twinRuntime{Runtime: loaded, mem: mem, t: t}
}

// Close closes both runtimes.
func (r *twinRuntime) Close() {
	r.Runtime.Close()
	r.mem.Close()
}

// Run runs both and returns the loaded program's result.
func (r *twinRuntime) Run(inputs map[string]*Array) (map[string]*Array, error) {
	got, err := r.Runtime.Run(inputs)
	want, memErr := r.mem.Run(inputs)
	r.same("Run", err, memErr)
	if err == nil && memErr == nil {
		r.sameOutputs(got, want)
	}
	return got, err
}

// RunInto runs the loaded program into outputs and the traced one into fresh arrays of the
// same dtypes and shapes, then compares.
func (r *twinRuntime) RunInto(inputs map[string]*Array, outputs map[string]*Array) error {
	mine := map[string]*Array{}
	for n, a := range outputs {
		if a == nil {
			mine[n] = nil
			continue
		}
		mine[n] = must(Zeros(a.DType(), a.Shape()...))
	}
	err := r.Runtime.RunInto(inputs, outputs)
	memErr := r.mem.RunInto(inputs, mine)
	r.same("RunInto", err, memErr)
	if err == nil && memErr == nil {
		r.sameOutputs(outputs, mine)
	}
	return err
}

// DryRun dry-runs both; they must agree on the error and the output shapes.
func (r *twinRuntime) DryRun(shapes map[string][]int64) error {
	err := r.Runtime.DryRun(shapes)
	memErr := r.mem.DryRun(shapes)
	r.same("DryRun", err, memErr)
	if err == nil && memErr == nil {
		for i := range r.outputNames {
			a, b := must(r.Runtime.OutputShape(i)), must(r.mem.OutputShape(i))
			if !slicesEqual(a, b) {
				r.t.Errorf("DryRun: output %d has shape %v after reload, %v before", i, a, b)
			}
		}
	}
	return err
}

// same reports a difference between the errors of the two runtimes (t.Errorf: callable from
// any goroutine).
func (r *twinRuntime) same(what string, loaded, mem error) {
	if (loaded == nil) != (mem == nil) {
		r.t.Errorf("%s: the reloaded program gives %v, the traced one %v", what, loaded, mem)
		return
	}
	if loaded == nil {
		return
	}
	var a, b *Error
	if errors.As(loaded, &a) && errors.As(mem, &b) {
		if a.Code != b.Code || a.Message != b.Message {
			r.t.Errorf("%s: the reloaded program fails with %v, the traced one with %v", what, a, b)
		}
	} else if loaded.Error() != mem.Error() {
		r.t.Errorf("%s: the reloaded program fails with %v, the traced one with %v", what, loaded, mem)
	}
}

// sameOutputs compares two output maps: same names, dtypes, shapes and bits.
func (r *twinRuntime) sameOutputs(loaded, mem map[string]*Array) {
	if len(loaded) != len(mem) {
		r.t.Errorf("%d outputs after reload, %d before", len(loaded), len(mem))
	}
	for name, a := range loaded {
		if diff := arrayDiff(a, mem[name]); diff != "" {
			r.t.Errorf("output %q after reload differs from the traced program's: %s", name, diff)
		}
	}
}

// arrayDiff describes how a and b differ ("" if equal: same dtype, shape and bits; NaNs of
// any payload match).
func arrayDiff(a, b *Array) string {
	if a == nil || b == nil {
		if a == b {
			return ""
		}
		return fmt.Sprintf("%v vs %v", a, b)
	}
	if a.DType() != b.DType() || !slicesEqual(a.Shape(), b.Shape()) {
		return fmt.Sprintf("%v vs %v", a, b)
	}
	switch x := a.Data().(type) {
	case []float32:
		y := b.Float32s()
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) && !(math.IsNaN(float64(x[i])) && math.IsNaN(float64(y[i]))) {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	case []float64:
		y := b.Float64s()
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) && !(math.IsNaN(x[i]) && math.IsNaN(y[i])) {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	case []Float16:
		y := b.Float16s()
		for i := range x {
			if x[i] != y[i] && !(x[i].IsNaN() && y[i].IsNaN()) {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	case []BFloat16:
		y := b.BFloat16s()
		for i := range x {
			if x[i] != y[i] && !(x[i].IsNaN() && y[i].IsNaN()) {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	default:
		if !reflect.DeepEqual(a.Data(), b.Data()) {
			return fmt.Sprintf("%v vs %v", a.Data(), b.Data())
		}
	}
	return ""
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
