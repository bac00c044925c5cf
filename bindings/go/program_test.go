package shapepoly

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// smallProgram: y = softmax(max(x @ w + b, 0)) with x (batch, 4), w (4, 3), b (3); plus a
// reshape that records an assertion and a constraint on batch.
func smallProgram(t testing.TB) *Program {
	s, err := NewScopeWithRanges([]string{"batch <= 1000"}, Range{"batch", 1, 4096})
	noErr(t, err)
	defer s.Close()
	x := must(s.Input("x", F32, "batch, 4"))
	w := must(s.Input("w", F32, "4, 3"))
	b := must(s.Input("b", F32, "3"))
	zero := must(s.Constant(must(NewArray([]float32{0}))))
	y := must(must(must(must(x.Matmul(w)).Add(b)).Max(zero)).Softmax(-1))
	two := must(s.Const(2))
	pairs := must(x.Reshape(Dim{}, two)) // (floordiv(4*batch, 2), 2): divisible, no assertion
	p := must(s.CreateProgram([]Tensor{x, w, b}, Output{"probs", y}, Output{"pairs", pairs}))
	t.Cleanup(p.Close)
	return p
}

func smallInputs(batch int) map[string]*Array {
	x := make([]float32, batch*4)
	for i := range x {
		x[i] = float32(i%7) * 0.25
	}
	return map[string]*Array{
		"x": must(NewArray(x, int64(batch), 4)),
		"w": must(NewArray([]float32{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, 4, 3)),
		"b": must(NewArray([]float32{0.1, 0.2, 0.3}, 3)),
	}
}

func TestProgramIntrospection(t *testing.T) {
	p := smallProgram(t)
	ins := must(p.Inputs())
	want := []ValueInfo{{"x", F32, InputData, "(batch, 4)"}, {"w", F32, InputData, "(4, 3)"}, {"b", F32, InputData, "(3,)"}}
	if !reflect.DeepEqual(ins, want) {
		t.Fatalf("%+v", ins)
	}
	outs := must(p.Outputs())
	if len(outs) != 2 || outs[0].Name != "probs" || outs[0].Shape != "(batch, 3)" || outs[1].Name != "pairs" {
		t.Fatalf("%+v", outs)
	}
	if p.InputName(7) != "" || p.InputDType(7) != -1 || p.InputRole(-1) != -1 || p.OutputName(-1) != "" {
		t.Fatal("out of range")
	}
	_, err := p.InputShape(7)
	wantCode(t, err, InvalidArgument)
	_, err = p.OutputShape(-1)
	wantCode(t, err, InvalidArgument)
	if v := p.Variables(); !reflect.DeepEqual(v, []string{"batch"}) {
		t.Fatal(v)
	}
	if c := p.Constraints(); !reflect.DeepEqual(c, []string{"batch <= 1000"}) {
		t.Fatal(c)
	}
	text := must(p.Text())
	for _, part := range []string{"x", "probs", "batch", "matmul", "softmax"} {
		if !strings.Contains(text, part) {
			t.Errorf("listing lacks %q:\n%s", part, text)
		}
	}
	if p.String() != text || InputDim.String() != "dim" || F64.String() != "f64" {
		t.Fatal("String")
	}
	b := must(p.CheckShapes(map[string][]int64{"x": {5, 4}, "w": {4, 3}, "b": {3}}))
	if m := b.Map(); m["batch"] != 5 {
		t.Fatal(m)
	}
	if s := must(p.OutputShapeFor(0, b)); !reflect.DeepEqual(s, []int64{5, 3}) {
		t.Fatal(s)
	}
	if s := must(p.OutputShapeFor(1, b)); !reflect.DeepEqual(s, []int64{10, 2}) {
		t.Fatal(s)
	}
	_, err = p.OutputShapeFor(0, nil)
	wantCode(t, err, InvalidArgument)
	_, err = p.CheckShapes(map[string][]int64{"x": {5, 785}, "w": {4, 3}, "b": {3}})
	wantCode(t, err, ShapeMismatch, "input 'x': axis 1 is 785 but the program requires 4")
	_, err = p.CheckShapes(map[string][]int64{"x": {5, 4}, "w": {4, 3}})
	wantCode(t, err, InvalidArgument, "b")
	_, err = p.CheckShapes(map[string][]int64{"x": {5, 4}, "w": {4, 3}, "b": {3}, "zz": {1}})
	wantCode(t, err, NotFound, "zz")
	_, err = p.CheckShapes(map[string][]int64{"x": {1001, 4}, "w": {4, 3}, "b": {3}})
	wantCode(t, err, ConstraintViolation, "batch <= 1000")
}

func TestAssertions(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n"))
	four := must(s.Const(4))
	y := must(x.Reshape(Dim{}, four)) // divisibility of n by 4 unknown: an assertion
	n := must(s.Var("n"))
	noErr(t, s.Check(n, CmpLe, must(s.Const(64)), "n is at most 64"))
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", y}))
	defer p.Close()
	as := p.Assertions()
	if len(as) != 2 {
		t.Fatalf("%+v", as)
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	_, err := rt.Run(map[string]*Array{"x": must(Zeros(F32, 6))})
	wantCode(t, err, ConstraintViolation)
	_, err = rt.Run(map[string]*Array{"x": must(Zeros(F32, 68))})
	wantCode(t, err, ConstraintViolation, "n is at most 64")
	res := must(rt.Run(map[string]*Array{"x": must(Zeros(F32, 8))}))
	if !reflect.DeepEqual(res["y"].Shape(), []int64{2, 4}) {
		t.Fatal(res["y"].Shape())
	}
}

func TestSerializeRoundTrip(t *testing.T) {
	p := smallProgram(t)
	data := must(p.Serialize())
	if string(data[4:8]) != "SHP1" {
		t.Fatalf("file identifier %q", data[4:8])
	}
	q := must(LoadProgram(data))
	defer q.Close()
	if again := must(q.Serialize()); string(again) != string(data) {
		t.Fatal("serialization is not deterministic")
	}
	path := filepath.Join(t.TempDir(), "small.shpoly")
	noErr(t, p.WriteFile(path))
	r := must(LoadProgramFile(path))
	defer r.Close()
	if r.String() != p.String() {
		t.Fatal("listing differs after a file round trip")
	}
	rt := must(NewRuntime(r, nil))
	defer rt.Close()
	want := must(must(NewRuntime(p, nil)).Run(smallInputs(3)))
	got := must(rt.Run(smallInputs(3)))
	if !reflect.DeepEqual(want["probs"].Float32s(), got["probs"].Float32s()) {
		t.Fatal("loaded program computes something else")
	}
}

func TestLoadOptionsCapTheConstants(t *testing.T) {
	data := must(smallProgram(t).Serialize()) // one constant of 4 bytes
	q := must(LoadProgramWithOptions(data, nil))
	q.Close()
	o := must(NewLoadOptions())
	defer o.Close()
	q = must(LoadProgramWithOptions(data, o)) // the default cap: 1 GiB
	q.Close()
	noErr(t, o.SetMaxBytes(4))
	q = must(LoadProgramWithOptions(data, o))
	if q.InputCount() != 3 {
		t.Fatalf("%d inputs", q.InputCount())
	}
	q.Close()
	noErr(t, o.SetMaxBytes(3))
	_, err := LoadProgramWithOptions(data, o)
	wantCode(t, err, InvalidProgram)
	for _, part := range []string{"max_bytes = 3", "shp_load_options_set_max_bytes"} {
		if !strings.Contains(err.Error(), part) {
			t.Fatalf("%q does not contain %q", err.Error(), part)
		}
	}
	o.Close()
	o.Close() // a second Close does nothing
}

func TestCorruptPrograms(t *testing.T) {
	p := smallProgram(t)
	data := must(p.Serialize())
	_, err := LoadProgram([]byte("not a program at all"))
	wantCode(t, err, InvalidProgram)
	_, err = LoadProgram(nil)
	wantCode(t, err, InvalidProgram)
	_, err = LoadProgram(data[:len(data)/2])
	wantCode(t, err, InvalidProgram)
	bad := append([]byte(nil), data...)
	copy(bad[4:8], "XXXX")
	_, err = LoadProgram(bad)
	wantCode(t, err, InvalidProgram)
	// A corrupt file on disk.
	path := filepath.Join(t.TempDir(), "corrupt.shpoly")
	flipped := append([]byte(nil), data...)
	for i := len(flipped) / 3; i < len(flipped)/3+64; i++ {
		flipped[i] ^= 0xA5
	}
	noErr(t, os.WriteFile(path, flipped, 0o644))
	if q, err := LoadProgramFile(path); err == nil {
		q.Close() // flipped constant bytes may still verify; truncation below never does
	}
	noErr(t, os.WriteFile(path, data[:100], 0o644))
	_, err = LoadProgramFile(path)
	wantCode(t, err, InvalidProgram)
	_, err = LoadProgramFile(filepath.Join(t.TempDir(), "missing.shpoly"))
	wantCode(t, err, NotFound)
	if !strings.Contains(err.Error(), "missing.shpoly': No such file") {
		t.Fatal(err)
	}
}

func TestRunErrors(t *testing.T) {
	p := smallProgram(t)
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	in := smallInputs(2)
	in["w"] = must(Zeros(F32, 5, 3))
	_, err := rt.Run(in)
	wantCode(t, err, ShapeMismatch, "input 'w': axis 0 is 5 but the program requires 4")
	in = smallInputs(2)
	in["x"] = must(Zeros(F32, 2, 5))
	_, err = rt.Run(in)
	e := wantCode(t, err, ShapeMismatch)
	if e.Message != "input 'x': axis 1 is 5 but the program requires 4" &&
		!strings.HasPrefix(e.Message, "input 'x': axis 1 is 5 but the program requires 4") {
		t.Fatal(e.Message)
	}
	in = smallInputs(2)
	in["typo"] = in["x"]
	delete(in, "x")
	_, err = rt.Run(in)
	wantCode(t, err, NotFound, "typo")
	in = smallInputs(2)
	delete(in, "b")
	_, err = rt.Run(in)
	wantCode(t, err, InvalidArgument, "b")
	in = smallInputs(2)
	in["x"] = must(Zeros(I32, 2, 4))
	_, err = rt.Run(in)
	wantCode(t, err, DTypeMismatch, "input 'x' has dtype i32 but the program requires f32")
	in = smallInputs(2)
	in["x"] = nil
	_, err = rt.Run(in)
	wantCode(t, err, InvalidArgument)
	in = smallInputs(1001)
	_, err = rt.Run(in)
	wantCode(t, err, ConstraintViolation)
	// The runtime stays usable after errors.
	res := must(rt.Run(smallInputs(2)))
	if len(res["probs"].Float32s()) != 6 {
		t.Fatal(res["probs"])
	}
	// NewArray validates the element count.
	_, err = NewArray([]float32{1, 2, 3}, 2, 2)
	wantCode(t, err, InvalidArgument)
	_, err = NewArray([]float32{}, -1)
	wantCode(t, err, InvalidArgument)
	_, err = Zeros(DType(99), 1)
	wantCode(t, err, InvalidArgument)
	_, err = NewRuntime(nil, nil)
	wantCode(t, err, InvalidArgument)
	o := must(NewRuntimeOptions())
	defer o.Close()
	wantCode(t, o.SetNumThreads(-1), InvalidArgument)
	wantCode(t, o.SetPlanCacheCapacity(-1), InvalidArgument)
}

func TestRuntimeFeatures(t *testing.T) {
	p := smallProgram(t)
	o := must(NewRuntimeOptions())
	noErr(t, o.SetNumThreads(2))
	noErr(t, o.SetPlanCacheCapacity(1))
	rt := newTwinRuntime(t, p, o)
	o.Close()
	o.Close()
	defer rt.Close()
	if rt.NumThreads() != 2 || rt.SimdTarget() == "" || !reflect.DeepEqual(rt.OutputNames(), []string{"probs", "pairs"}) {
		t.Fatal(rt.NumThreads(), rt.SimdTarget())
	}
	_, err := rt.OutputShape(0)
	wantCode(t, err, InvalidArgument) // no successful call yet
	noErr(t, rt.DryRun(map[string][]int64{"x": {9, 4}, "w": {4, 3}, "b": {3}}))
	if s := must(rt.OutputShape(0)); !reflect.DeepEqual(s, []int64{9, 3}) {
		t.Fatal(s)
	}
	wantCode(t, rt.DryRun(map[string][]int64{"x": {9, 5}, "w": {4, 3}, "b": {3}}), ShapeMismatch,
		"input 'x': axis 1 is 5 but the program requires 4")
	must(rt.Run(smallInputs(9))) // cache hit after the dry run
	must(rt.Run(smallInputs(3)))
	must(rt.Run(smallInputs(9))) // evicted (capacity 1): planned again
	if rt.PlansBuilt() != 3 || rt.CacheHits() != 1 || rt.LastPlanBuildTime() <= 0 {
		t.Fatal(rt.PlansBuilt(), rt.CacheHits(), rt.LastPlanBuildTime())
	}
	// RunInto writes into Go memory.
	want := must(rt.Run(smallInputs(4)))
	outs := map[string]*Array{"probs": must(Zeros(F32, 4, 3)), "pairs": must(Zeros(F32, 8, 2))}
	noErr(t, rt.RunInto(smallInputs(4), outs))
	if !reflect.DeepEqual(outs["probs"].Float32s(), want["probs"].Float32s()) ||
		!reflect.DeepEqual(outs["pairs"].Float32s(), want["pairs"].Float32s()) {
		t.Fatal("RunInto differs from Run")
	}
	outs["probs"] = must(Zeros(F32, 5, 3))
	wantCode(t, rt.RunInto(smallInputs(4), outs), ShapeMismatch)
	outs["probs"] = must(Zeros(F32, 4, 3))
	outs["extra"] = must(Zeros(F32, 1))
	wantCode(t, rt.RunInto(smallInputs(4), outs), NotFound, "extra")
	delete(outs, "pairs")
	wantCode(t, rt.RunInto(smallInputs(4), outs), InvalidArgument, "pairs")
}

// TestRuntimeOutlivesProgram: a runtime keeps its program alive after Program.Close.
func TestRuntimeOutlivesProgram(t *testing.T) {
	p := smallProgram(t)
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	p.Close()
	must(rt.Run(smallInputs(2)))
}

// TestConcurrentRuntimes: one shared program, one runtime per goroutine; half of them run
// the program as traced, half its reloaded copy.
func TestConcurrentRuntimes(t *testing.T) {
	p := smallProgram(t)
	shared := []*Program{p, reload(t, p)}
	want := must(must(NewRuntime(p, nil)).Run(smallInputs(5)))["probs"].Float32s()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		prog := shared[g%2]
		go func() {
			defer wg.Done()
			rt, err := NewRuntime(prog, nil)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer rt.Close()
			for i := 0; i < 50; i++ {
				res, err := rt.Run(smallInputs(5))
				if err != nil {
					errs <- err.Error()
					return
				}
				if !reflect.DeepEqual(res["probs"].Float32s(), want) {
					errs <- "different result"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestClosedObjectsPanic(t *testing.T) {
	expectPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r != closedMsg {
				t.Errorf("%s: recovered %v, want %q", name, r, closedMsg)
			}
		}()
		f()
	}
	s := must(NewScope())
	d := must(s.Var("n"))
	x := must(s.Input("x", F32, "n"))
	s.Close()
	s.Close()
	expectPanic("scope", func() { s.Parse("n") })
	expectPanic("dim", func() { _ = d.String() })
	expectPanic("tensor", func() { x.Exp() })
	p := smallProgram(t)
	rt := must(NewRuntime(p, nil))
	b := must(p.CheckShapes(map[string][]int64{"x": {1, 4}, "w": {4, 3}, "b": {3}}))
	o := must(NewRuntimeOptions())
	p.Close()
	p.Close()
	rt.Close()
	rt.Close()
	b.Close()
	o.Close()
	expectPanic("program", func() { p.Serialize() })
	expectPanic("runtime", func() { rt.Run(nil) })
	expectPanic("bindings", func() { b.Map() })
	expectPanic("options", func() { o.SetNumThreads(1) })
	var nilScope *Scope
	nilScope.Close() // nil receivers are fine
}
