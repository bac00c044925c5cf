package shapepoly

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Compiled functions (issue 12): automatic dynamic shapes, stances, a TraceFunc's error
// passed through, a panic turned into an error, and export -> save/load -> run.

// fnInput is the input at rows x cols: 0.01 * (i % 97).
func fnInput(rows, cols int64) *Array {
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(0.01 * float64(i%97))
	}
	return must(NewArray(x, rows, cols))
}

// rowFn is y = softmax(x, axis 1) * 2 when cols > 4 (decided with Dim.Guard), else exp(x).
func rowFn(scope *Scope, x []Tensor) ([]Tensor, error) {
	shape, err := x[0].Shape()
	if err != nil {
		return nil, err
	}
	four, err := scope.Const(4)
	if err != nil {
		return nil, err
	}
	wide, err := shape[1].Guard(CmpGt, four, "wide rows")
	if err != nil {
		return nil, err
	}
	if !wide {
		y, err := x[0].Exp()
		return []Tensor{y}, err
	}
	two, err := scope.Constant(must(NewArray([]float32{2})))
	if err != nil {
		return nil, err
	}
	sm, err := x[0].Softmax(1)
	if err != nil {
		return nil, err
	}
	y, err := sm.Mul(two)
	return []Tensor{y}, err
}

// fnReference is rowFn in float64.
func fnReference(rows, cols int64) []float32 {
	x := fnInput(rows, cols).Float32s()
	y := make([]float32, len(x))
	for r := int64(0); r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		mx, sum := math.Inf(-1), 0.0
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		for _, v := range row {
			sum += math.Exp(float64(v) - mx)
		}
		for k, v := range row {
			if cols > 4 {
				y[r*cols+int64(k)] = float32(2 * math.Exp(float64(v)-mx) / sum)
			} else {
				y[r*cols+int64(k)] = float32(math.Exp(float64(v)))
			}
		}
	}
	return y
}

// newRowFunction creates a function of x: f32[rows, cols] counting its traces in *traces.
func newRowFunction(t *testing.T, options *FunctionOptions, traces *int) *Function {
	t.Helper()
	f, err := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		*traces++
		return rowFn(s, x)
	}, []FunctionInput{{Name: "x", DType: F32, Rank: 2}}, []string{"y"}, options)
	noErr(t, err)
	t.Cleanup(f.Close)
	return f
}

// fnCall calls f at rows x cols and checks y against the reference.
func fnCall(t *testing.T, f *Function, rows, cols int64) ([]float32, error) {
	t.Helper()
	out, err := f.Call(map[string]*Array{"x": fnInput(rows, cols)})
	if err != nil {
		return nil, err
	}
	y := out["y"].Float32s()
	for i, w := range fnReference(rows, cols) {
		if math.Abs(float64(y[i]-w)) > 1e-5*(1+math.Abs(float64(w))) {
			t.Fatalf("%dx%d [%d]: %v vs %v", rows, cols, i, y[i], w)
		}
	}
	return y, nil
}

func hasEvent(f *Function, part string) bool {
	for _, e := range f.Events() {
		if strings.Contains(e, part) {
			return true
		}
	}
	return false
}

func TestFunctionAutomaticDynamic(t *testing.T) {
	traces := 0
	f := newRowFunction(t, nil, &traces)
	must(fnCall(t, f, 4, 8))
	if f.TraceCount() != 1 || f.VariantCount() != 1 {
		t.Fatalf("%d traces, %d variants", f.TraceCount(), f.VariantCount())
	}
	must(fnCall(t, f, 8, 8)) // batch changed: traced again with a symbolic batch
	if f.TraceCount() != 2 {
		t.Fatalf("%d traces", f.TraceCount())
	}
	if !hasEvent(f, "input 'x' axis 0: size 8 failed guard s0 == 4 (marked dynamic now)") ||
		!hasEvent(f, "variant 1: input 'x' axis 1: static (only one size seen)") {
		t.Fatalf("events: %q", f.Events())
	}
	for _, b := range []int64{3, 100, 1, 17} {
		must(fnCall(t, f, b, 8))
	}
	if f.TraceCount() != 2 || f.CacheHits() != 4 || traces != 2 {
		t.Fatalf("%d traces (%d calls of the func), %d cache hits", f.TraceCount(), traces, f.CacheHits())
	}
	if f.EventCount() != len(f.Events()) || f.EventText(f.EventCount()) != "" || f.EventText(-1) != "" {
		t.Fatal("event accessors disagree")
	}
	if got := f.OutputNames(); len(got) != 1 || got[0] != "y" {
		t.Fatalf("outputs %v", got)
	}
}

func TestFunctionFailOnRecompile(t *testing.T) {
	traces := 0
	f := newRowFunction(t, nil, &traces)
	must(fnCall(t, f, 4, 8))
	noErr(t, f.SetStance(StanceFailOnRecompile))
	_, err := fnCall(t, f, 9, 8)
	wantCode(t, err, GuardFailed, "FAIL_ON_RECOMPILE", "guard s0 == 4", "s0 = 9")
	must(fnCall(t, f, 4, 8)) // still usable
	noErr(t, f.SetStance(StanceDefault))
	must(fnCall(t, f, 9, 8))
	if f.TraceCount() != 2 {
		t.Fatalf("%d traces", f.TraceCount())
	}
}

func TestFunctionMarkStaticThenDynamicOnLimit(t *testing.T) {
	o := must(NewFunctionOptions())
	defer o.Close()
	noErr(t, o.SetRecompileLimit(3))
	noErr(t, o.SetStance(StanceDynamicOnLimit))
	noErr(t, o.SetNumThreads(1))
	noErr(t, o.SetDuckSizing(true))
	traces := 0
	f := newRowFunction(t, o, &traces)
	noErr(t, f.MarkStatic("x", 0))
	for _, b := range []int64{2, 3, 4, 5, 6, 50} {
		must(fnCall(t, f, b, 8))
	}
	if f.TraceCount() != 4 || !hasEvent(f, "fully dynamic") {
		t.Fatalf("%d traces; events %q", f.TraceCount(), f.Events())
	}
	// The default stance fails at the limit, giving the reasons.
	d := must(NewFunctionOptions())
	defer d.Close()
	noErr(t, d.SetRecompileLimit(2))
	g := newRowFunction(t, d, &traces)
	noErr(t, g.MarkStatic("x", 0))
	must(fnCall(t, g, 2, 8))
	must(fnCall(t, g, 3, 8))
	_, err := fnCall(t, g, 4, 8)
	wantCode(t, err, GuardFailed, "recompile limit 2")
}

func TestFunctionMarksAndErrors(t *testing.T) {
	o := must(NewFunctionOptions())
	defer o.Close()
	noErr(t, o.SetDynamic(DynamicNone))
	wantCode(t, o.SetRecompileLimit(0), InvalidArgument)
	wantCode(t, o.SetDynamic(DynamicMode(7)), InvalidArgument)
	traces := 0
	f := newRowFunction(t, o, &traces)
	_, err := f.Export()
	wantCode(t, err, InvalidArgument) // nothing traced yet
	wantCode(t, f.MarkDynamic("x", 2, 0, 5), InvalidArgument)
	wantCode(t, f.MarkStatic("q", 0), NotFound)
	noErr(t, f.MarkDynamic("x", 0, 1, math.MaxInt64))
	must(fnCall(t, f, 4, 8))
	must(fnCall(t, f, 8, 8)) // axis 0 marked dynamic: one variant for both
	if f.TraceCount() != 1 {
		t.Fatalf("%d traces", f.TraceCount())
	}
	_, err = f.Call(map[string]*Array{"nope": fnInput(2, 2)})
	wantCode(t, err, NotFound)
	_, err = f.Call(map[string]*Array{"x": must(Zeros(F32, 2, 2, 2))})
	wantCode(t, err, ShapeMismatch)
	_, err = NewFunction(nil, nil, []string{"y"}, nil)
	wantCode(t, err, InvalidArgument)
	if DynamicAll.String() != "all" || StanceFailOnRecompile.String() != "fail_on_recompile" {
		t.Fatal("String")
	}
	f.Close()
	f.Close() // idempotent
}

func TestFunctionTraceErrorPassesThrough(t *testing.T) {
	fail := true
	f, err := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		if fail {
			return nil, &Error{Code: Unsupported, Message: "the model refuses this shape"}
		}
		return rowFn(s, x)
	}, []FunctionInput{{"x", F32, 2}}, []string{"y"}, nil)
	noErr(t, err)
	defer f.Close()
	_, err = fnCall(t, f, 2, 8)
	e := wantCode(t, err, Unsupported)
	if !strings.HasPrefix(e.Message, "the trace function failed: the model refuses this shape") {
		t.Fatal(e.Message)
	}
	fail = false
	must(fnCall(t, f, 2, 8)) // usable after the error

	// A plain Go error is Internal with its text; a wrong op keeps the library's code.
	plain, _ := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		return nil, errors.New("disk on fire")
	}, []FunctionInput{{"x", F32, 2}}, []string{"y"}, nil)
	defer plain.Close()
	_, err = fnCall(t, plain, 2, 3)
	wantCode(t, err, Internal, "disk on fire")
	bad, _ := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		y, err := x[0].Matmul(x[0])
		return []Tensor{y}, err
	}, []FunctionInput{{"x", F32, 2}}, []string{"y"}, nil)
	defer bad.Close()
	_, err = fnCall(t, bad, 2, 3)
	wantCode(t, err, ShapeMismatch)
	two, _ := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		return []Tensor{x[0], x[0]}, nil
	}, []FunctionInput{{"x", F32, 2}}, []string{"y"}, nil)
	defer two.Close()
	_, err = fnCall(t, two, 2, 3)
	wantCode(t, err, InvalidArgument, "returned 2 tensors for 1 outputs")

	// A tensor of another scope is refused by the library; a tensor kept past its trace
	// panics on use (the scope is closed after the trace).
	other := newScope(t)
	z := must(other.Input("z", F32, "3"))
	var kept Tensor
	foreign, _ := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		kept = x[0]
		return []Tensor{z}, nil
	}, []FunctionInput{{"x", F32, 2}}, []string{"y"}, nil)
	defer foreign.Close()
	_, err = fnCall(t, foreign, 2, 3)
	wantCode(t, err, ScopeMismatch, "another scope")
	func() {
		defer func() {
			if r := recover(); r != closedMsg {
				t.Fatalf("recovered %v", r)
			}
		}()
		kept.DType()
	}()
}

func TestFunctionPanicBecomesAnError(t *testing.T) {
	panics := true
	f, err := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		if panics {
			panic("boom")
		}
		return rowFn(s, x)
	}, []FunctionInput{{"x", F32, 2}}, []string{"y"}, nil)
	noErr(t, err)
	defer f.Close()
	_, err = fnCall(t, f, 2, 8)
	wantCode(t, err, Internal, "the trace func panicked: boom")
	panics = false
	must(fnCall(t, f, 2, 8))
	if f.TraceCount() != 1 {
		t.Fatalf("%d traces", f.TraceCount())
	}
}

func TestFunctionExportSaveLoadRun(t *testing.T) {
	o := must(NewFunctionOptions())
	defer o.Close()
	noErr(t, o.SetDynamic(DynamicAll))
	traces := 0
	f := newRowFunction(t, o, &traces)
	shapes := [][2]int64{{2, 3}, {2, 9}, {5, 4}, {5, 5}, {1, 30}}
	seen := make([][]float32, len(shapes))
	for i, s := range shapes {
		seen[i] = must(fnCall(t, f, s[0], s[1]))
	}
	if f.TraceCount() != 2 { // cols <= 4 and cols > 4
		t.Fatalf("%d traces; events %q", f.TraceCount(), f.Events())
	}
	p := must(f.Export())
	if p.VariantCount() != 2 {
		t.Fatalf("%d variants", p.VariantCount())
	}
	path := filepath.Join(t.TempDir(), "function.shpoly")
	noErr(t, p.WriteFile(path))
	p.Close()
	f.Close() // the file runs without the TraceFunc
	loaded := must(LoadProgramFile(path))
	defer loaded.Close()
	rt := must(NewRuntime(loaded, nil))
	defer rt.Close()
	for i, s := range shapes {
		out := must(rt.Run(map[string]*Array{"x": fnInput(s[0], s[1])}))
		if d := arrayDiff(out["y"], must(NewArray(seen[i], s[0], s[1]))); d != "" {
			t.Fatalf("%v: %s", s, d)
		}
	}
	_ = os.Remove(path)
}

// MarkUnbacked (torch._dynamo.mark_unbacked): sizes 0, 1, 3 and 8 served by one trace; two
// unbacked axes of equal sizes get two variables (never duck-sized); a guard on an unbacked
// axis has no hint to decide it on, so the call is Inconclusive.
func TestFunctionMarkUnbackedNoHintNoSpecializationNoDuckSizing(t *testing.T) {
	var seen [][2]string
	f, err := NewFunction(func(s *Scope, in []Tensor) ([]Tensor, error) {
		xs, err := in[0].Shape()
		if err != nil {
			return nil, err
		}
		ys, err := in[1].Shape()
		if err != nil {
			return nil, err
		}
		seen = append(seen, [2]string{xs[0].String(), ys[0].String()})
		sx, err := in[0].Reduce(ReduceSum, nil, false)
		if err != nil {
			return nil, err
		}
		sy, err := in[1].Reduce(ReduceSum, nil, false)
		if err != nil {
			return nil, err
		}
		z, err := sx.Add(sy)
		return []Tensor{z}, err
	}, []FunctionInput{{"x", F32, 1}, {"y", F32, 1}}, []string{"z"}, nil)
	noErr(t, err)
	defer f.Close()
	noErr(t, f.MarkUnbacked("x", 0))
	noErr(t, f.MarkUnbacked("y", 0))
	for _, n := range []int{0, 1, 3, 8} { // sizes 0 and 1 included: one trace, symbolic
		ones := make([]float32, n)
		for i := range ones {
			ones[i] = 1
		}
		a := must(NewArray(ones, int64(n)))
		out, err := f.Call(map[string]*Array{"x": a, "y": a})
		noErr(t, err)
		if got := out["z"].Float32s(); len(got) != 1 || got[0] != float32(2*n) {
			t.Fatalf("n=%d: z = %v", n, got)
		}
	}
	if f.TraceCount() != 1 || len(seen) != 1 {
		t.Fatalf("%d traces; events %q", f.TraceCount(), f.Events())
	}
	if seen[0][0] == seen[0][1] { // equal sizes, two variables: never duck-sized
		t.Fatalf("duck-sized: %q", seen[0])
	}

	g, err := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		shape, err := x[0].Shape()
		if err != nil {
			return nil, err
		}
		two, err := s.Const(2)
		if err != nil {
			return nil, err
		}
		long, err := shape[0].Guard(CmpGe, two, "long") // undecidable, no hint to guard on
		if err != nil {
			return nil, err
		}
		if long {
			c, err := s.Constant(must(NewArray([]float32{2})))
			if err != nil {
				return nil, err
			}
			y, err := x[0].Mul(c)
			return []Tensor{y}, err
		}
		return []Tensor{x[0]}, nil
	}, []FunctionInput{{"x", F32, 1}}, []string{"y"}, nil)
	noErr(t, err)
	defer g.Close()
	noErr(t, g.MarkUnbacked("x", 0))
	_, err = g.Call(map[string]*Array{"x": must(NewArray([]float32{1, 1, 1}, 3))})
	wantCode(t, err, Inconclusive)
	wantCode(t, g.MarkUnbacked("nope", 0), NotFound)
	wantCode(t, g.MarkUnbacked("x", 1), InvalidArgument)
}

// onesF32 is a float32 vector of n ones.
func onesF32(n int) *Array {
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	return must(NewArray(ones, int64(n)))
}

// scaled returns x * c for a float32 scalar constant c.
func scaled(s *Scope, x Tensor, c float32) (Tensor, error) {
	k, err := s.Constant(must(NewArray([]float32{c})))
	if err != nil {
		return Tensor{}, err
	}
	return x.Mul(k)
}

// MaybeMarkDynamic (torch._dynamo.maybe_mark_dynamic): symbolic from the next trace, but a
// TraceFunc that specializes the axis is no error (unlike MarkDynamic).
func TestFunctionMaybeMarkDynamic(t *testing.T) {
	f, err := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		shape, err := x[0].Shape()
		if err != nil {
			return nil, err
		}
		four, err := s.Const(4)
		if err != nil {
			return nil, err
		}
		is4, err := shape[0].Guard(CmpEq, four, "") // specializes the axis: allowed
		if err != nil {
			return nil, err
		}
		if is4 {
			y, err := scaled(s, x[0], 2)
			return []Tensor{y}, err
		}
		return []Tensor{x[0]}, nil
	}, []FunctionInput{{"x", F32, 1}}, []string{"y"}, nil)
	noErr(t, err)
	defer f.Close()
	noErr(t, f.MaybeMarkDynamic("x", 0))
	for _, c := range []struct {
		n    int
		want float32
	}{{4, 2}, {3, 1}} {
		out, err := f.Call(map[string]*Array{"x": onesF32(c.n)})
		noErr(t, err)
		got := out["y"].Float32s()
		if len(got) != c.n {
			t.Fatalf("n=%d: y = %v", c.n, got)
		}
		for _, v := range got {
			if v != c.want {
				t.Fatalf("n=%d: y = %v", c.n, got)
			}
		}
	}

	g, err := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		y, err := scaled(s, x[0], 2)
		return []Tensor{y}, err
	}, []FunctionInput{{"x", F32, 1}}, []string{"y"}, nil)
	noErr(t, err)
	defer g.Close()
	noErr(t, g.MaybeMarkDynamic("x", 0))
	for _, n := range []int{1, 2, 7} {
		_, err := g.Call(map[string]*Array{"x": onesF32(n)})
		noErr(t, err)
	}
	if g.TraceCount() != 1 { // symbolic from the first trace
		t.Fatalf("%d traces; events %q", g.TraceCount(), g.Events())
	}
	wantCode(t, g.MaybeMarkDynamic("nope", 0), NotFound)
}

// StanceForceTrace (PyTorch's force_eager): every call traces; the variants stay as they were.
func TestFunctionForceTraceStance(t *testing.T) {
	traced := 0
	f, err := NewFunction(func(s *Scope, x []Tensor) ([]Tensor, error) {
		traced++
		one, err := s.Constant(must(NewArray([]float32{1})))
		if err != nil {
			return nil, err
		}
		y, err := x[0].Add(one)
		return []Tensor{y}, err
	}, []FunctionInput{{"x", F32, 1}}, []string{"y"}, nil)
	noErr(t, err)
	defer f.Close()
	x := onesF32(2)
	_, err = f.Call(map[string]*Array{"x": x})
	noErr(t, err)
	noErr(t, f.SetStance(StanceForceTrace))
	for i := 0; i < 3; i++ {
		out, err := f.Call(map[string]*Array{"x": x})
		noErr(t, err)
		if got := out["y"].Float32s(); len(got) != 2 || got[0] != 2 || got[1] != 2 {
			t.Fatalf("y = %v", got)
		}
	}
	if traced != 4 || f.VariantCount() != 1 {
		t.Fatalf("%d traces, %d variants", traced, f.VariantCount())
	}
	if !hasEvent(f, "FORCE_TRACE") {
		t.Fatalf("events %q", f.Events())
	}
	if StanceForceTrace.String() != "force_trace" {
		t.Fatal(StanceForceTrace.String())
	}
	noErr(t, f.SetStance(StanceDefault))
	_, err = f.Call(map[string]*Array{"x": x})
	noErr(t, err)
	if traced != 4 { // the cached variant again
		t.Fatalf("%d traces", traced)
	}
}
