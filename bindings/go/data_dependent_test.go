package shapepoly

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

// Data-dependent sizes (issue 13): Nonzero, BooleanMask and SizeFromValue make unbacked
// variables with sound bounds; guards over them teach Scope.Check, which becomes a fact and a
// run-time assertion; the runtime plans the stages once the values are known; a dry run
// reports such dims as -1 with their bounds.

// argWhere is np.argwhere of a row-major f32 array, computed here: NaN != 0 and -0 == 0 in Go
// as in the library.
func argWhere(x []float32, shape []int64) []int64 {
	var out []int64
	for i, v := range x {
		if v == 0 {
			continue
		}
		idx := make([]int64, len(shape))
		rem := int64(i)
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k] = rem % shape[k]
			rem /= shape[k]
		}
		out = append(out, idx...)
	}
	return out
}

// varIndex returns the index of variable name in names (-1 if absent).
func varIndex(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

func TestNonzeroEmptyPartialFull(t *testing.T) {
	s, err := NewScopeWithRanges(nil, Range{Name: "n", Min: 1, Max: 10})
	noErr(t, err)
	defer s.Close()
	x := must(s.Input("x", F32, "n, 4"))
	idx := must(x.Nonzero())
	if idx.String() != "i64(u0, 2)" {
		t.Fatalf("nonzero of (n, 4): %v", idx)
	}
	u := must(idx.Shape())[0]
	if u.String() != "u0" {
		t.Fatalf("the unbacked dim is %q", u)
	}
	if lo, hi := must2(t)(u.Bounds()); lo != 0 || hi != 40 {
		t.Fatalf("bounds of u0 with n in [1, 10]: [%d, %d], want [0, 40]", lo, hi)
	}
	// u0 <= 4*n is a fact; u0 <= 3*n is not.
	if tr := must(u.Le(must(s.Parse("4*n")))); tr != True {
		t.Fatalf("u0 <= 4*n: %v", tr)
	}
	if tr := must(u.Le(must(s.Parse("3*n")))); tr != Unknown {
		t.Fatalf("u0 <= 3*n: %v", tr)
	}
	names := s.Variables()
	ui := varIndex(names, "u0")
	if ui < 0 || !s.VariableIsUnbacked(ui) || !strings.Contains(s.VariableOrigin(ui), "nonzero") {
		t.Fatalf("variables %v: u0 unbacked %v, origin %q", names, ui >= 0 && s.VariableIsUnbacked(ui),
			s.VariableOrigin(ui))
	}
	ni := varIndex(names, "n")
	if s.VariableIsUnbacked(ni) || s.VariableOrigin(ni) != "" {
		t.Fatalf("n is listed as unbacked (origin %q)", s.VariableOrigin(ni))
	}
	if s.VariableIsUnbacked(-1) || s.VariableIsUnbacked(len(names)) || s.VariableOrigin(len(names)) != "" {
		t.Fatal("an out-of-range variable is unbacked")
	}

	p := must(s.CreateProgram([]Tensor{x}, Output{"idx", idx}))
	defer p.Close()
	for _, q := range []*Program{p, reload(t, p)} {
		vs := q.Variables()
		i := varIndex(vs, "u0")
		if i < 0 || !q.VariableIsUnbacked(i) || !strings.Contains(q.VariableOrigin(i), "nonzero") {
			t.Fatalf("program variables %v: u0 not listed as unbacked from nonzero", vs)
		}
		if j := varIndex(vs, "n"); q.VariableIsUnbacked(j) || q.VariableOrigin(j) != "" {
			t.Fatal("program variable n is listed as unbacked")
		}
		if q.VariableIsUnbacked(-1) || q.VariableOrigin(len(vs)) != "" {
			t.Fatal("an out-of-range program variable is unbacked")
		}
		if lo, _ := must2(t)(q.VariableBounds(i)); lo != 0 {
			t.Fatalf("program bounds of u0 start at %d", lo)
		}
	}

	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	rng := rand.New(rand.NewSource(5))
	for _, n := range []int64{1, 3, 10} {
		for _, density := range []float64{0, 0.4, 1} {
			v := make([]float32, n*4)
			for i := range v {
				if rng.Float64() < density {
					v[i] = []float32{1.5, -2, float32(math.NaN()), 1e-30}[i%4]
				} else if i%3 == 0 {
					v[i] = float32(math.Copysign(0, -1)) // -0 is zero
				}
			}
			out := must(rt.Run(map[string]*Array{"x": must(NewArray(v, n, 4))}))["idx"]
			want := argWhere(v, []int64{n, 4})
			if !slicesEqual(out.Shape(), []int64{int64(len(want) / 2), 2}) || !slicesEqual(out.Int64s(), want) {
				t.Fatalf("n=%d density %v: nonzero gives %v %v, want %v", n, density, out.Shape(), out.Int64s(), want)
			}
			switch density {
			case 0:
				if len(want) != 0 {
					t.Fatalf("the empty case has %d nonzeros", len(want)/2)
				}
			case 1:
				if int64(len(want)) != n*4*2 {
					t.Fatalf("the full case has %d nonzeros", len(want)/2)
				}
			}
		}
	}
	// n outside its declared range is refused before anything runs.
	_, err = rt.Run(map[string]*Array{"x": must(NewArray(make([]float32, 44), 11, 4))})
	wantCode(t, err, ConstraintViolation, "n")
}

// The mean of the rows of x whose score exceeds 0.5: sum over the selected rows divided by
// the size of the u axis as a value, over every count of selected rows (0 gives NaN).
func TestBooleanMaskThenAverage(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	score := must(s.Input("score", F32, "n"))
	th := must(s.Constant(must(NewArray([]float32{0.5}))))
	rows := must(x.BooleanMask(must(score.Compare(CmpGt, th)), 0))
	if rows.String() != "f32(u0, 3)" {
		t.Fatalf("x[score > 0.5]: %v", rows)
	}
	sum := must(rows.Reduce(ReduceSum, []int64{0}, false))
	count := must(must(s.DimValue(must(rows.Shape())[0])).Convert(F32))
	mean := must(sum.Div(count))
	p := must(s.CreateProgram([]Tensor{x, score}, Output{"mean", mean}, Output{"rows", rows}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()

	const n = 7
	xs := make([]float32, n*3)
	for i := range xs {
		xs[i] = float32(i)*0.25 - 1
	}
	rng := rand.New(rand.NewSource(9))
	for selected := 0; selected <= n; selected++ {
		order := rng.Perm(n)
		pick := make([]bool, n)
		sc := make([]float32, n)
		for k, i := range order {
			pick[i] = k < selected
			if pick[i] {
				sc[i] = 0.5 + float32(k+1)*0.1
			} else {
				sc[i] = []float32{0.5, 0, -3}[k%3] // 0.5 itself is not selected
			}
		}
		out := must(rt.Run(map[string]*Array{"x": must(NewArray(xs, n, 3)), "score": must(NewArray(sc, n))}))
		if got := out["rows"].Shape(); !slicesEqual(got, []int64{int64(selected), 3}) {
			t.Fatalf("%d selected: rows %v", selected, got)
		}
		var wantRows []float32
		for i := 0; i < n; i++ {
			if pick[i] {
				wantRows = append(wantRows, xs[i*3:i*3+3]...)
			}
		}
		if selected > 0 && !float32sEqual(out["rows"].Float32s(), wantRows) {
			t.Fatalf("%d selected: rows %v, want %v", selected, out["rows"].Float32s(), wantRows)
		}
		got := out["mean"].Float32s()
		if len(got) != 3 {
			t.Fatalf("mean has %d elements", len(got))
		}
		for c := 0; c < 3; c++ {
			var sum float64
			for r := 0; r < selected; r++ {
				sum += float64(wantRows[r*3+c])
			}
			if selected == 0 {
				if !math.IsNaN(float64(got[c])) {
					t.Fatalf("mean over no row is %v, want NaN", got[c])
				}
				continue
			}
			if want := float32(sum) / float32(selected); got[c] != want {
				t.Fatalf("%d selected, column %d: mean %v, want %v", selected, c, got[c], want)
			}
		}
	}
}

func float32sEqual(a, b []float32) bool {
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

func TestBooleanMaskArgumentErrors(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	fmask := must(s.Input("fm", F32, "n"))
	_, err := x.BooleanMask(fmask, 0)
	wantCode(t, err, DTypeMismatch, "bool")
	mask := must(s.Input("m", Bool, "n"))
	_, err = x.BooleanMask(mask, 2)
	wantCode(t, err, InvalidArgument, "axis")
	mask4 := must(s.Input("m4", Bool, "4"))
	_, err = x.BooleanMask(mask4, 1)
	wantCode(t, err, ShapeMismatch, "mask")
	// A negative axis counts from the end.
	if r := must(x.BooleanMask(mask, -2)); r.String() != "f32(u0, 3)" {
		t.Fatal(r)
	}
	other := newScope(t)
	_, err = x.BooleanMask(must(other.Input("m", Bool, "n")), 0)
	wantCode(t, err, ScopeMismatch)
}

func TestSizeFromValue(t *testing.T) {
	s := newScope(t)
	v := must(s.Input("v", I64, ""))
	k := must(v.SizeFromValue("k", 1, 5))
	if k.String() != "k" {
		t.Fatalf("the size is %q", k)
	}
	if lo, hi := must2(t)(k.Bounds()); lo != 1 || hi != 5 {
		t.Fatalf("bounds [%d, %d], want [1, 5]", lo, hi)
	}
	io := must(s.Iota(I64, []Dim{k}, 0))
	p := must(s.CreateProgram([]Tensor{v}, Output{"iota", io}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	for _, val := range []int64{1, 3, 5} {
		out := must(rt.Run(map[string]*Array{"v": must(NewArray([]int64{val}))}))["iota"]
		want := make([]int64, val)
		for i := range want {
			want[i] = int64(i)
		}
		if !slicesEqual(out.Shape(), []int64{val}) || !slicesEqual(out.Int64s(), want) {
			t.Fatalf("v=%d: %v %v", val, out.Shape(), out.Int64s())
		}
	}
	for _, val := range []int64{0, 6} {
		_, err := rt.Run(map[string]*Array{"v": must(NewArray([]int64{val}))})
		wantCode(t, err, ConstraintViolation, "k = "+itoa(val), "size_from_value", "[1, 5]")
	}
	// The runtime stays usable.
	if out := must(rt.Run(map[string]*Array{"v": must(NewArray([]int64{2}))}))["iota"]; !slicesEqual(out.Int64s(), []int64{0, 1}) {
		t.Fatal(out.Int64s())
	}

	// No name: the first free of u0, u1, ...
	if d := must(v.SizeFromValue("", 0, math.MaxInt64)); d.String() != "u0" {
		t.Fatalf("unnamed size %q", d)
	}
	_, err := v.SizeFromValue("k2", -1, 5)
	wantCode(t, err, InvalidArgument, "-1")
	_, err = v.SizeFromValue("k2", 5, 4)
	wantCode(t, err, InvalidArgument)
	_, err = v.SizeFromValue("k", 1, 4)
	wantCode(t, err, InvalidArgument, "'k'")
	f := must(s.Input("f", F32, ""))
	_, err = f.SizeFromValue("k3", 0, 4)
	wantCode(t, err, DTypeMismatch, "i64")
	vec := must(s.Input("vec", I64, "3"))
	_, err = vec.SizeFromValue("k4", 0, 4)
	wantCode(t, err, ShapeMismatch)
}

func TestUnbackedGuardNeedsCheck(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n"))
	idx := must(x.Nonzero())
	u := must(idx.Shape())[0]
	one := must(s.Const(1))
	_, err := u.Guard(CmpGe, one, "need a hit")
	wantCode(t, err, Inconclusive, "u0", "data-dependent", "nonzero", "shp_scope_check")
	// A hint is refused: an unbacked size has no example value.
	wantCode(t, s.SetHint("u0", 3), InvalidArgument, "data-dependent")
	if tr := must(u.Ge(one)); tr != Unknown {
		t.Fatalf("u0 >= 1 before the check: %v", tr)
	}

	noErr(t, s.Check(u, CmpGe, one, "at least one hit"))
	if tr := must(u.Ge(one)); tr != True {
		t.Fatalf("u0 >= 1 after the check: %v", tr)
	}
	if b, err := u.Guard(CmpGt, must(s.Const(0)), ""); err != nil || !b {
		t.Fatalf("u0 > 0 after the check: %v, %v", b, err)
	}
	p := must(s.CreateProgram([]Tensor{x}, Output{"idx", idx}))
	defer p.Close()
	if a := p.Assertions(); len(a) != 1 || a[0].Message != "at least one hit" {
		t.Fatalf("assertions %+v", a)
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	hit := must(NewArray([]float32{0, 2, 0}, 3))
	if out := must(rt.Run(map[string]*Array{"x": hit}))["idx"]; !slicesEqual(out.Int64s(), []int64{1}) {
		t.Fatal(out.Int64s())
	}
	_, err = rt.Run(map[string]*Array{"x": must(NewArray(make([]float32, 3), 3))})
	wantCode(t, err, ConstraintViolation, "at least one hit", "u0 >= 1", "u0 = 0")
	// The runtime stays usable after the failed assertion.
	if out := must(rt.Run(map[string]*Array{"x": hit}))["idx"]; !slicesEqual(out.Shape(), []int64{1, 1}) {
		t.Fatal(out.Shape())
	}
}

func TestDryRunDataDependentDims(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 4"))
	idx := must(x.Nonzero())
	p := must(s.CreateProgram([]Tensor{x}, Output{"idx", idx}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	_, err := rt.OutputDimBounds(0, 0)
	wantCode(t, err, InvalidArgument) // no successful call yet

	noErr(t, rt.DryRun(map[string][]int64{"x": {10, 4}}))
	if shape := must(rt.OutputShape(0)); !slicesEqual(shape, []int64{-1, 2}) {
		t.Fatalf("dry-run shape %v, want [-1 2]", shape)
	}
	for _, r := range []*Runtime{rt.Runtime, rt.mem} {
		if b := must(r.OutputDimBounds(0, 0)); b != (DimBounds{DataDependent: true, Min: 0, Max: 40}) {
			t.Fatalf("axis 0 after the dry run: %+v", b)
		}
		if b := must(r.OutputDimBounds(0, 1)); b != (DimBounds{DataDependent: false, Min: 2, Max: 2}) {
			t.Fatalf("axis 1 after the dry run: %+v", b)
		}
	}
	_, err = rt.OutputDimBounds(0, 2)
	wantCode(t, err, InvalidArgument, "axis 2")
	_, err = rt.OutputDimBounds(1, 0)
	wantCode(t, err, InvalidArgument)
	_, err = rt.OutputDimBounds(0, -1)
	wantCode(t, err, InvalidArgument)
	// The cost depends on the data: refused with the reason.
	_, err = rt.Cost(CostFLOPs, map[string][]int64{"x": {10, 4}})
	wantCode(t, err, Unsupported, "data-dependent")

	// After a run: the computed size.
	v := make([]float32, 40)
	for i := range v {
		if i%5 == 0 {
			v[i] = 1
		}
	}
	out := must(rt.Run(map[string]*Array{"x": must(NewArray(v, 10, 4))}))["idx"]
	if !slicesEqual(out.Shape(), []int64{8, 2}) || !slicesEqual(must(rt.OutputShape(0)), []int64{8, 2}) {
		t.Fatalf("after the run: %v, OutputShape %v", out.Shape(), must(rt.OutputShape(0)))
	}
	if b := must(rt.OutputDimBounds(0, 0)); b != (DimBounds{DataDependent: true, Min: 8, Max: 8}) {
		t.Fatalf("axis 0 after the run: %+v", b)
	}
}

// Bound allocation changes where the arena is sized, never the results.
func TestBoundAllocationGivesTheSameResults(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n"))
	zero := must(s.Constant(must(NewArray([]float32{0}))))
	sel := must(x.BooleanMask(must(x.Compare(CmpNe, zero)), 0))
	sq := must(sel.Mul(sel))
	p := must(s.CreateProgram([]Tensor{x}, Output{"sq", sq}))
	defer p.Close()
	plain := newTwinRuntime(t, p, nil)
	defer plain.Close()
	o := must(NewRuntimeOptions())
	defer o.Close()
	noErr(t, o.SetBoundAllocation(1<<20))
	noErr(t, o.SetBoundAllocation(math.MaxUint64)) // clamped to size_t, accepted
	noErr(t, o.SetBoundAllocation(1<<20))
	bounded := newTwinRuntime(t, p, o)
	defer bounded.Close()
	rng := rand.New(rand.NewSource(11))
	for trial := 0; trial < 20; trial++ {
		n := int64(1 + rng.Intn(300))
		v := make([]float32, n)
		want := []float32{}
		for i := range v {
			if rng.Intn(4) != 0 {
				v[i] = float32(i) - 7
			}
			if v[i] != 0 {
				want = append(want, v[i]*v[i])
			}
		}
		in := map[string]*Array{"x": must(NewArray(v, n))}
		a := must(plain.Run(in))["sq"]
		b := must(bounded.Run(in))["sq"]
		if diff := arrayDiff(a, b); diff != "" {
			t.Fatalf("n=%d: bound allocation changes the result: %s", n, diff)
		}
		if !float32sEqual(a.Float32s(), want) {
			t.Fatalf("n=%d: %v, want %v", n, a.Float32s(), want)
		}
	}
}
