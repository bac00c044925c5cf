package shapepoly

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// pytorchMul traces x: [s0], y: [s1] -> x * y under GuardsFromHints with hints h0 and h1.
func pytorchMul(t *testing.T, h0, h1 int64) (*Program, error) {
	s := newScope(t)
	noErr(t, s.SetGuardPolicy(GuardsFromHints))
	noErr(t, s.SetHint("s0", h0))
	noErr(t, s.SetHint("s1", h1))
	x := must(s.Input("x", F32, "s0"))
	y := must(s.Input("y", F32, "s1"))
	z, err := x.Mul(y)
	if err != nil {
		return nil, err
	}
	p := must(s.CreateProgram([]Tensor{x, y}, Output{"z", z}))
	t.Cleanup(p.Close)
	return p, nil
}

func TestGuardFromHintsPyTorchExample(t *testing.T) {
	p := must(pytorchMul(t, 5, 5))
	g := p.Guards()
	if len(g) != 1 || g[0].Text != "s0 == s1" || !strings.HasPrefix(g[0].Origin, "mul") {
		t.Fatalf("%+v", g)
	}
	if p.VariantCount() != 1 || !reflect.DeepEqual(p.VariantGuards(0), []Guard{{Text: "s0 == s1"}}) ||
		p.VariantGuards(1) != nil || p.VariantGuards(-1) != nil {
		t.Fatalf("%d %+v", p.VariantCount(), p.VariantGuards(0))
	}
	if !strings.Contains(p.String(), "s0 == s1") {
		t.Fatal(p.String())
	}

	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	if rt.LastVariant() != -1 {
		t.Fatal(rt.LastVariant())
	}
	out := must(rt.Run(map[string]*Array{
		"x": must(NewArray([]float32{1, 2, 3, 4, 5}, 5)),
		"y": must(NewArray([]float32{2, 2, 2, 2, 2}, 5)),
	}))
	if !reflect.DeepEqual(out["z"].Float32s(), []float32{2, 4, 6, 8, 10}) || rt.LastVariant() != 0 {
		t.Fatal(out["z"], rt.LastVariant())
	}
	_, err := rt.Run(map[string]*Array{
		"x": must(NewArray(make([]float32, 5), 5)),
		"y": must(NewArray(make([]float32, 6), 6)),
	})
	e := wantCode(t, err, GuardFailed, "s0 == s1")
	if e.Code != 18 || !strings.HasPrefix(GuardFailed.String(), "SHP_GUARD_FAILED") {
		t.Fatal(e.Code, GuardFailed.String())
	}
	_, err = p.CheckShapes(map[string][]int64{"x": {5}, "y": {6}})
	wantCode(t, err, GuardFailed)
	b := must(p.CheckShapes(map[string][]int64{"x": {7}, "y": {7}}))
	defer b.Close()
	if b.Variant() != 0 {
		t.Fatal(b.Variant())
	}

	// Hints 5 and 6: the multiply fails, naming both hint values.
	_, err = pytorchMul(t, 5, 6)
	wantCode(t, err, ShapeMismatch, "s0 = 5", "s1 = 6")

	// The default policy keeps today's behaviour.
	s := newScope(t)
	noErr(t, s.SetHint("s0", 5))
	noErr(t, s.SetHint("s1", 5))
	x := must(s.Input("x", F32, "s0"))
	y := must(s.Input("y", F32, "s1"))
	_, err = x.Mul(y)
	wantCode(t, err, Inconclusive)
	wantCode(t, s.SetGuardPolicy(GuardPolicy(7)), InvalidArgument)
	if GuardsFromHints.String() != "from_hints" || GuardPolicy(7).String() != "GuardPolicy(7)" {
		t.Fatal(GuardsFromHints.String())
	}
}

func TestHints(t *testing.T) {
	s, err := NewScopeWithRanges([]string{"n <= 4*m"}, Range{"n", 0, 100})
	noErr(t, err)
	defer s.Close()
	if _, ok, err := s.Hint("n"); ok || err != nil {
		t.Fatal(ok, err)
	}
	noErr(t, s.SetHint("n", 0))
	if v, ok, err := s.Hint("n"); v != 0 || !ok || err != nil {
		t.Fatal(v, ok, err)
	}
	wantCode(t, s.SetHint("n", 101), ConstraintViolation)
	noErr(t, s.SetHint("m", 2))
	noErr(t, s.SetHint("n", 8))
	wantCode(t, s.SetHint("n", 9), ConstraintViolation)
	if v, _, _ := s.Hint("n"); v != 8 {
		t.Fatal("the previous hint stays", v)
	}
	_, _, err = s.Hint("nope")
	wantCode(t, err, NotFound)
	// A hint is not a fact.
	n := must(s.Parse("n"))
	if must(n.Eq(must(s.Const(8)))) != Unknown {
		t.Fatal("a hint decided a comparison")
	}
}

func TestDimGuard(t *testing.T) {
	s := newScope(t)
	noErr(t, s.SetHint("seq", 2048))
	seq := must(s.Parse("seq"))
	limit := must(s.Const(1024))
	if !must(seq.Guard(CmpGe, must(s.Const(1)), "")) { // decided: records nothing
		t.Fatal("seq >= 1")
	}
	if !must(seq.Guard(CmpGt, limit, "blocked attention")) {
		t.Fatal("the hint is 2048")
	}
	if must(seq.Gt(limit)) != True { // later decisions rely on the guard
		t.Fatal("guard is no fact")
	}
	x := must(s.Input("x", F32, "seq"))
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", must(x.Exp())}))
	defer p.Close()
	want := []Guard{{"seq > 1024", "blocked attention", "shp_dim_guard"}}
	if !reflect.DeepEqual(p.Guards(), want) {
		t.Fatalf("%+v", p.Guards())
	}
	rt := must(NewRuntime(p, nil))
	defer rt.Close()
	_ = must(rt.Run(map[string]*Array{"x": must(NewArray(make([]float32, 1025), 1025))}))
	_, err := rt.Run(map[string]*Array{"x": must(NewArray(make([]float32, 1024), 1024))})
	wantCode(t, err, GuardFailed, "blocked attention")

	// An unhinted variable: inconclusive, nothing recorded.
	m := must(s.Parse("m"))
	_, err = m.Guard(CmpGt, limit, "")
	wantCode(t, err, Inconclusive, "m")
	if must(m.Gt(limit)) != Unknown {
		t.Fatal("recorded")
	}
}

// colsVariant traces x: (rows, cols) under cols <= 16 (y = x + x) or cols > 16 (y = -x).
func colsVariant(t *testing.T, small bool) *Program {
	s := newScope(t)
	cols, sixteen := must(s.Parse("cols")), must(s.Const(16))
	x := must(s.Input("x", F32, "rows, cols"))
	var y Tensor
	if small {
		noErr(t, s.Assume(cols, CmpLe, sixteen, "small rows"))
		y = must(x.Add(x))
	} else {
		noErr(t, s.Assume(cols, CmpGt, sixteen, "large rows"))
		y = must(x.Neg())
	}
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", y}))
	t.Cleanup(p.Close)
	return p
}

func TestTwoVariants(t *testing.T) {
	small, large := colsVariant(t, true), colsVariant(t, false)
	if g := small.Guards(); len(g) != 1 || g[0].Origin != "shp_scope_assume" {
		t.Fatalf("%+v", g)
	}
	p := must(CreateVariants(small, large))
	defer p.Close()
	if p.VariantCount() != 2 || p.VariantsExhaustive() != True || must(p.Counterexample()) != "" {
		t.Fatal(p.VariantCount(), p.VariantsExhaustive())
	}
	if !reflect.DeepEqual(p.VariantGuards(0), []Guard{{Text: "cols <= 16", Message: "small rows"}}) ||
		!reflect.DeepEqual(p.VariantGuards(1), []Guard{{Text: "cols > 16", Message: "large rows"}}) {
		t.Fatalf("%+v %+v", p.VariantGuards(0), p.VariantGuards(1))
	}
	for cols, want := range map[int64]int{16: 0, 17: 1} {
		b := must(p.CheckShapes(map[string][]int64{"x": {2, cols}}))
		if b.Variant() != want || !slicesEqual(must(p.OutputShapeFor(0, b)), []int64{2, cols}) {
			t.Fatal(cols, b.Variant())
		}
		b.Close()
	}
	s := newScope(t)
	sb := must(s.Solve([]string{"n"}, [][]int64{{3}}))
	defer sb.Close()
	if sb.Variant() != -1 {
		t.Fatal(sb.Variant())
	}

	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	for _, c := range []struct {
		cols    int64
		variant int
	}{{16, 0}, {17, 1}, {16, 0}, {1, 0}, {100, 1}} {
		data := make([]float32, 2*c.cols)
		for i := range data {
			data[i] = float32(i)
		}
		out := must(rt.Run(map[string]*Array{"x": must(NewArray(data, 2, c.cols))}))
		if rt.LastVariant() != c.variant {
			t.Fatalf("cols %d ran variant %d", c.cols, rt.LastVariant())
		}
		for i, v := range out["y"].Float32s() {
			want := -data[i]
			if c.variant == 0 {
				want = 2 * data[i]
			}
			if v != want {
				t.Fatalf("cols %d: y[%d] = %v, want %v", c.cols, i, v, want)
			}
		}
	}
	// cols 16 and 1 built plans of variant 0, 17 and 100 of variant 1; the second 16 hit.
	if rt.VariantPlansBuilt(0) != 2 || rt.VariantPlansBuilt(1) != 2 || rt.VariantCacheHits(0) != 1 ||
		rt.VariantCacheHits(1) != 0 || rt.VariantPlansBuilt(2) != 0 || rt.VariantCacheHits(-1) != 0 ||
		rt.PlansBuilt() != 4 {
		t.Fatal(rt.VariantPlansBuilt(0), rt.VariantPlansBuilt(1), rt.VariantCacheHits(0))
	}

	// Saved and loaded: still two variants with their guards.
	path := filepath.Join(t.TempDir(), "variants.shpoly")
	noErr(t, p.WriteFile(path))
	q := must(LoadProgramFile(path))
	defer q.Close()
	if q.VariantCount() != 2 || q.VariantsExhaustive() != True ||
		!reflect.DeepEqual(q.VariantGuards(1), p.VariantGuards(1)) {
		t.Fatal(q.VariantCount())
	}
	_ = os.Remove(path)

	// A multi-variant argument contributes its variants; mismatched signatures are refused.
	pp := must(CreateVariants(p, small))
	defer pp.Close()
	if pp.VariantCount() != 3 {
		t.Fatal(pp.VariantCount())
	}
	x := must(s.Input("x", F32, "rows"))
	other := must(s.CreateProgram([]Tensor{x}, Output{"y", x}))
	defer other.Close()
	_, err := CreateVariants(small, other)
	wantCode(t, err, InvalidArgument)
	_, err = CreateVariants()
	wantCode(t, err, InvalidArgument)
	_, err = CreateVariants(small, nil)
	wantCode(t, err, InvalidArgument)
}

func TestVariantsWithAGap(t *testing.T) {
	trace := func(op Cmp, bound int64) *Program {
		s := newScope(t)
		noErr(t, s.Assume(must(s.Parse("cols")), op, must(s.Const(bound)), ""))
		x := must(s.Input("x", F32, "cols"))
		p := must(s.CreateProgram([]Tensor{x}, Output{"y", must(x.Exp())}))
		t.Cleanup(p.Close)
		return p
	}
	p := must(CreateVariants(trace(CmpLe, 16), trace(CmpGe, 20)))
	defer p.Close()
	if p.VariantsExhaustive() != False {
		t.Fatal(p.VariantsExhaustive())
	}
	cex := must(p.Counterexample())
	rest, ok := strings.CutPrefix(cex, "cols = ")
	if !ok {
		t.Fatal(cex)
	}
	digits := rest[:strings.IndexFunc(rest+" ", func(r rune) bool { return r < '0' || r > '9' })]
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 16 || n >= 20 {
		t.Fatalf("%q is no uncovered value", cex)
	}
	if reload(t, p).VariantsExhaustive() != False {
		t.Fatal("after reload")
	}

	rt := must(NewRuntime(p, nil))
	defer rt.Close()
	_, err = rt.Run(map[string]*Array{"x": must(NewArray(make([]float32, 18), 18))})
	wantCode(t, err, GuardFailed, "cols")
	if rt.LastVariant() != -1 {
		t.Fatal(rt.LastVariant())
	}
	_ = must(rt.Run(map[string]*Array{"x": must(NewArray(make([]float32, 20), 20))}))
	if rt.LastVariant() != 1 {
		t.Fatal(rt.LastVariant())
	}
}

func TestAssumeContradictingConstraints(t *testing.T) {
	s := newScope(t, "n >= 10")
	n := must(s.Parse("n"))
	wantCode(t, s.Assume(n, CmpLt, must(s.Const(5)), "tiny"), Unsatisfiable)
	noErr(t, s.Assume(n, CmpGe, must(s.Const(3)), "")) // implied: nothing recorded
	x := must(s.Input("x", F32, "n"))
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", x}))
	defer p.Close()
	if len(p.Guards()) != 0 {
		t.Fatalf("%+v", p.Guards())
	}
}

func TestHintOfOneDoesNotSpecialize(t *testing.T) {
	s := newScope(t)
	noErr(t, s.SetGuardPolicy(GuardsFromHints))
	noErr(t, s.SetHint("batch", 1))
	x := must(s.Input("x", F32, "batch, 4"))
	w := must(s.Input("w", F32, "4, 3"))
	p := must(s.CreateProgram([]Tensor{x, w}, Output{"y", must(x.Matmul(w))}))
	defer p.Close()
	if len(p.Guards()) != 0 || p.VariantsExhaustive() != True {
		t.Fatalf("%+v", p.Guards())
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	ws := must(NewArray([]float32{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}, 4, 3))
	for _, batch := range []int64{1, 1000} {
		xs := make([]float32, 4*batch)
		for i := range xs {
			xs[i] = 1
		}
		out := must(rt.Run(map[string]*Array{"x": must(NewArray(xs, batch, 4)), "w": ws}))
		if !slicesEqual(out["y"].Shape(), []int64{batch, 3}) ||
			!reflect.DeepEqual(out["y"].Float32s()[:3], []float32{4, 8, 12}) {
			t.Fatal(batch, out["y"])
		}
	}
}
