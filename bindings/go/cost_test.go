package shapepoly

import (
	"math"
	"strings"
	"testing"
)

// mlpProgram: softmax(max(x @ w + b, 0), axis 1) with x (batch, 8) and constants w (8, 4),
// b (4) and the scalar 0, traced under the given constraints.
func mlpProgram(t testing.TB, constraints ...string) *Program {
	s := newScope(t, constraints...)
	x := must(s.Input("x", F32, "batch, 8"))
	w := must(s.Constant(must(NewArray(make([]float32, 32), 8, 4))))
	b := must(s.Constant(must(NewArray([]float32{0.1, 0.2, 0.3, 0.4}, 4))))
	zero := must(s.Constant(must(NewArray([]float32{0}))))
	y := must(must(must(must(x.Matmul(w)).Add(b)).Max(zero)).Softmax(1))
	p := must(s.CreateProgram([]Tensor{x}, Output{"y", y}))
	t.Cleanup(p.Close)
	return p
}

func newCostRuntime(t testing.TB, p *Program) *Runtime {
	rt := must(NewRuntime(p, nil))
	t.Cleanup(rt.Close)
	return rt
}

func TestCostFormulasAndBounds(t *testing.T) {
	p := mlpProgram(t, "batch <= 1000")
	// matmul 2*4*8, add 4, max 4, softmax 20 per row; parameters 32+4+1 floats.
	if f := must(p.Cost(CostFLOPs)); f != "92*batch" {
		t.Fatalf("flops %q", f)
	}
	if f := must(p.Cost(CostParameterBytes)); f != "148" {
		t.Fatalf("parameter bytes %q", f)
	}
	for _, k := range []CostKind{CostBytesAccessed, CostPeakBytes} {
		if f := must(p.Cost(k)); !strings.Contains(f, "batch") {
			t.Errorf("%v formula %q does not depend on batch", k, f)
		}
	}
	b := must(p.CostBounds(CostFLOPs))
	if b != (CostBounds{Lo: 92, Hi: 92000, Bounded: true}) {
		t.Fatalf("flops bounds %+v", b)
	}
	if r := must(p.CostUnboundedReason(CostFLOPs)); r != "" {
		t.Fatalf("reason %q for a bounded cost", r)
	}
	if lo, hi := must2(t)(p.VariableBounds(0)); lo != 1 || hi != 1000 {
		t.Fatalf("variable bounds (%d, %d)", lo, hi)
	}
	_, _, err := p.VariableBounds(1)
	wantCode(t, err, InvalidArgument)
	_, _, err = p.VariableBounds(-1)
	wantCode(t, err, InvalidArgument)

	// The runtime evaluates the formula for concrete shapes; the peak bound is attained at
	// the largest batch the constraint allows.
	rt := newCostRuntime(t, p)
	if v := must(rt.Cost(CostFLOPs, map[string][]int64{"x": {10, 8}})); v != 920 {
		t.Fatalf("flops at batch 10: %d", v)
	}
	if v := must(rt.Cost(CostParameterBytes, map[string][]int64{"x": {3, 8}})); v != 148 {
		t.Fatalf("parameter bytes: %d", v)
	}
	peak := must(p.CostBounds(CostPeakBytes))
	top := must(rt.Cost(CostPeakBytes, map[string][]int64{"x": {1000, 8}}))
	t.Logf("peak bytes %q, bounds %+v", must(p.Cost(CostPeakBytes)), peak)
	if !peak.Bounded || peak.Hi != top || peak.Reason != "" || peak.Lo > peak.Hi {
		t.Fatalf("peak bounds %+v, runtime peak at batch 1000: %d", peak, top)
	}
	// The shapes are checked as in a dry run.
	_, err = rt.Cost(CostFLOPs, map[string][]int64{"x": {10, 9}})
	wantCode(t, err, ShapeMismatch, "input 'x': axis 1 is 9 but the program requires 8")
	_, err = rt.Cost(CostFLOPs, map[string][]int64{"x": {1001, 8}})
	wantCode(t, err, ConstraintViolation)

	// A reloaded program has the same costs.
	q := reload(t, p)
	for _, k := range []CostKind{CostFLOPs, CostBytesAccessed, CostPeakBytes, CostParameterBytes} {
		if a, b := must(p.Cost(k)), must(q.Cost(k)); a != b {
			t.Errorf("%v: %q after reload, %q before", k, b, a)
		}
		if a, b := must(p.CostBounds(k)), must(q.CostBounds(k)); a != b {
			t.Errorf("%v: %+v after reload, %+v before", k, b, a)
		}
	}
}

func TestCostUnbounded(t *testing.T) {
	p := mlpProgram(t)
	peak := must(p.CostBounds(CostPeakBytes))
	if peak.Bounded || peak.Hi != math.MaxInt64 ||
		!strings.Contains(peak.Reason, "no upper bound on batch") {
		t.Fatalf("peak bounds %+v", peak)
	}
	if r := must(p.CostUnboundedReason(CostPeakBytes)); r != peak.Reason {
		t.Fatalf("reason %q, bounds reason %q", r, peak.Reason)
	}
	b := must(p.CostBounds(CostParameterBytes))
	if b != (CostBounds{Lo: 148, Hi: 148, Bounded: true}) {
		t.Fatalf("parameter bytes bounds %+v", b)
	}
	if lo, hi := must2(t)(p.VariableBounds(0)); lo != 1 || hi != math.MaxInt64 {
		t.Fatalf("variable bounds (%d, %d)", lo, hi)
	}
}

func TestCostInvalidKind(t *testing.T) {
	p := mlpProgram(t, "batch <= 1000")
	rt := newCostRuntime(t, p)
	for _, k := range []CostKind{-1, 4, 1 << 20} {
		_, err := p.Cost(k)
		wantCode(t, err, InvalidArgument)
		_, err = p.CostBounds(k)
		wantCode(t, err, InvalidArgument)
		_, err = p.CostUnboundedReason(k)
		wantCode(t, err, InvalidArgument)
		_, err = rt.Cost(k, map[string][]int64{"x": {10, 8}})
		wantCode(t, err, InvalidArgument)
	}
	names := map[CostKind]string{CostFLOPs: "flops", CostBytesAccessed: "bytes accessed",
		CostPeakBytes: "peak bytes", CostParameterBytes: "parameter bytes", 9: "CostKind(9)"}
	for k, want := range names {
		if k.String() != want {
			t.Errorf("%d: %q", int32(k), k.String())
		}
	}
}

func TestCostWithDimInput(t *testing.T) {
	s := newScope(t, "m <= 50")
	mIn := must(s.DimInput("m"))
	m := must(s.Var("m"))
	io := must(s.Iota(F32, []Dim{m}, 0))
	p := must(s.CreateProgram([]Tensor{mIn}, Output{"y", must(io.Add(io))}))
	defer p.Close()
	if f := must(p.Cost(CostFLOPs)); f != "m" {
		t.Fatalf("flops %q", f)
	}
	rt := newCostRuntime(t, p)
	if v := must(rt.Cost(CostFLOPs, map[string][]int64{"m": {7}})); v != 7 {
		t.Fatalf("flops at m = 7: %d", v)
	}
}

func TestDOT(t *testing.T) {
	p := mlpProgram(t, "batch <= 1000")
	dot := must(p.DOT())
	for _, part := range []string{"digraph", "f32[batch, 8]", "batch <= 1000"} {
		if !strings.Contains(dot, part) {
			t.Errorf("DOT lacks %q:\n%s", part, dot)
		}
	}
	if again := must(reload(t, p).DOT()); again != dot {
		t.Fatalf("DOT after reload:\n%s\nbefore:\n%s", again, dot)
	}
}
