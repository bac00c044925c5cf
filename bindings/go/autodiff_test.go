package shapepoly

import (
	"math"
	"testing"
)

var adW = []float32{0.5, -1.0, 2.0, 0.25}

// adLoss: loss = sum(tanh(x @ w)), x of shape (batch, 2), w a 2x2 parameter.
func adLoss(t *testing.T) *Program {
	s := newScope(t)
	x := must(s.Input("x", F32, "batch, 2"))
	w := must(s.Parameter("w", must(NewArray(adW, 2, 2))))
	l := must(must(must(x.Matmul(w)).Tanh()).Reduce(ReduceSum, nil, false))
	p := must(s.CreateProgram([]Tensor{x, w}, Output{Name: "loss", Tensor: l}))
	t.Cleanup(p.Close)
	return p
}

// adByHand returns loss, dloss/dx and dloss/dw in double: d tanh(h) = 1 - tanh(h)^2.
func adByHand(x, w []float32) (float64, []float64, []float64) {
	l, gx, gw := 0.0, make([]float64, len(x)), make([]float64, 4)
	for r := 0; r < len(x)/2; r++ {
		for c := 0; c < 2; c++ {
			th := math.Tanh(float64(x[r*2])*float64(w[c]) + float64(x[r*2+1])*float64(w[2+c]))
			l += th
			d := 1 - th*th
			for k := 0; k < 2; k++ {
				gw[k*2+c] += float64(x[r*2+k]) * d
				gx[r*2+k] += float64(w[k*2+c]) * d
			}
		}
	}
	return l, gx, gw
}

func adClose(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d]: %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestParameterRolesAndDefault: a parameter's role, shape and default (also after reload),
// output roles, and the errors of Parameter and InputDefault.
func TestParameterRolesAndDefault(t *testing.T) {
	p := adLoss(t)
	ins := must(p.Inputs())
	want := []ValueInfo{{"x", F32, InputData, "(batch, 2)"}, {"w", F32, InputParameter, "(2, 2)"}}
	for i := range want {
		if ins[i] != want[i] {
			t.Fatalf("input %d: %+v, want %+v", i, ins[i], want[i])
		}
	}
	if p.InputHasDefault(0) || !p.InputHasDefault(1) || p.InputHasDefault(7) || p.InputHasDefault(-1) {
		t.Fatal("InputHasDefault")
	}
	for _, q := range []*Program{p, reload(t, p)} {
		w := must(q.InputDefault(1))
		if !slicesEqual(w.Shape(), []int64{2, 2}) || w.DType() != F32 {
			t.Fatalf("default %v", w)
		}
		for i, v := range w.Float32s() {
			if v != adW[i] {
				t.Fatalf("default %v", w.Float32s())
			}
		}
	}
	_, err := p.InputDefault(0)
	wantCode(t, err, InvalidArgument, "'x' has no default")
	_, err = p.InputDefault(-1)
	wantCode(t, err, InvalidArgument)
	if p.OutputRole(0) != OutputPrimal || p.OutputRole(1) != -1 || p.OutputRole(-1) != -1 {
		t.Fatalf("output roles %v %v", p.OutputRole(0), p.OutputRole(1))
	}
	if InputParameter.String() != "parameter" || InputCotangent.String() != "cotangent" ||
		OutputGrad.String() != "grad" || OutputRole(9).String() != "OutputRole(9)" {
		t.Fatal("role names")
	}

	s := newScope(t)
	b := must(s.Parameter("b", must(NewArray([]float64{2.5}))))
	if b.DType() != F64 {
		t.Fatal(b)
	}
	_, err = s.Parameter("w.grad", must(NewArray([]float32{1})))
	wantCode(t, err, InvalidArgument)
	_, err = s.Parameter("v", nil)
	wantCode(t, err, InvalidArgument, "nil array")
}

// TestGradRunsWithAndWithoutTheParameter: grad of the loss, reloaded and run through
// newTwinRuntime with the parameter left out, given by name, and a scaled cotangent.
func TestGradRunsWithAndWithoutTheParameter(t *testing.T) {
	g := must(adLoss(t).Grad("loss", "x", "w"))
	defer g.Close()
	wantIn := []string{"x", "w", "loss.cotangent"}
	for i, n := range wantIn {
		if g.InputName(i) != n {
			t.Fatalf("input %d is %q, want %q", i, g.InputName(i), n)
		}
	}
	if g.InputRole(2) != InputCotangent || !g.InputHasDefault(2) {
		t.Fatal("cotangent role or default")
	}
	if ct := must(g.InputDefault(2)); ct.Float32s()[0] != 1 {
		t.Fatalf("cotangent default %v", ct.Float32s())
	}
	wantOut := []struct {
		name string
		role OutputRole
	}{{"loss", OutputPrimal}, {"x.grad", OutputGrad}, {"w.grad", OutputGrad}}
	for i, o := range wantOut {
		if g.OutputName(i) != o.name || g.OutputRole(i) != o.role {
			t.Fatalf("output %d: %s %v", i, g.OutputName(i), g.OutputRole(i))
		}
	}

	rt := newTwinRuntime(t, g, nil)
	defer rt.Close()
	w2 := make([]float32, 4)
	for i, v := range adW {
		w2[i] = v * -0.5
	}
	for _, rows := range []int{3, 1, 5} {
		xv := make([]float32, rows*2)
		for k := range xv {
			xv[k] = (float32(k) - 2.5) * 0.4
		}
		x := must(NewArray(xv, int64(rows), 2))
		// w left out: its default.
		out := must(rt.Run(map[string]*Array{"x": x}))
		l, gx, gw := adByHand(xv, adW)
		adClose(t, "loss", out["loss"].Float32s(), []float64{l})
		adClose(t, "x.grad", out["x.grad"].Float32s(), gx)
		adClose(t, "w.grad", out["w.grad"].Float32s(), gw)
		// w given by name replaces the default.
		out = must(rt.Run(map[string]*Array{"x": x, "w": must(NewArray(w2, 2, 2))}))
		l, gx, gw = adByHand(xv, w2)
		adClose(t, "loss (w given)", out["loss"].Float32s(), []float64{l})
		adClose(t, "x.grad (w given)", out["x.grad"].Float32s(), gx)
		adClose(t, "w.grad (w given)", out["w.grad"].Float32s(), gw)
		// Naming the cotangent scales the gradient.
		out = must(rt.Run(map[string]*Array{"x": x, "loss.cotangent": must(NewArray([]float32{3}))}))
		_, gx, _ = adByHand(xv, adW)
		for i := range gx {
			gx[i] *= 3
		}
		adClose(t, "x.grad scaled", out["x.grad"].Float32s(), gx)
	}
	x1 := must(NewArray([]float32{1, 2}, 1, 2))
	_, err := rt.Run(map[string]*Array{"x": x1, "w": must(NewArray(adW, 4))})
	wantCode(t, err, ShapeMismatch)
	_, err = rt.Run(nil)
	wantCode(t, err, InvalidArgument, "input 'x' is missing")
	err = rt.DryRun(map[string][]int64{"x": {4, 2}})
	noErr(t, err)
	if s := must(rt.OutputShape(2)); !slicesEqual(s, []int64{2, 2}) {
		t.Fatalf("w.grad shape %v", s)
	}
}

// TestOnlyDefaultedInputsLeftOut: when every input has a default, a run (and a dry run) with
// no inputs binds by name and uses them all.
func TestOnlyDefaultedInputsLeftOut(t *testing.T) {
	s := newScope(t)
	w := must(s.Parameter("w", must(NewArray([]float64{1, -2, 0.5}, 3))))
	l := must(must(w.Mul(w)).Reduce(ReduceSum, nil, false))
	p := must(s.CreateProgram([]Tensor{w}, Output{Name: "l", Tensor: l}))
	defer p.Close()
	g := must(p.Grad("l", "w"))
	defer g.Close()
	rt := newTwinRuntime(t, g, nil)
	defer rt.Close()
	out := must(rt.Run(map[string]*Array{}))
	if v := out["l"].Float64s(); v[0] != 5.25 {
		t.Fatalf("l = %v", v)
	}
	want := []float64{2, -4, 1}
	for i, v := range out["w.grad"].Float64s() {
		if v != want[i] {
			t.Fatalf("w.grad = %v", out["w.grad"].Float64s())
		}
	}
	noErr(t, rt.DryRun(nil))
	outs := map[string]*Array{"l": must(Zeros(F64)), "w.grad": must(Zeros(F64, 3))}
	noErr(t, rt.Runtime.RunInto(nil, outs))
	if outs["w.grad"].Float64s()[1] != -4 {
		t.Fatalf("RunInto w.grad = %v", outs["w.grad"].Float64s())
	}
}

// TestJvpVjpAndComposition: roles and values of jvp and vjp on a loaded program, and a
// Hessian-vector product (jvp of grad) whose derived names repeat their suffix.
func TestJvpVjpAndComposition(t *testing.T) {
	p := reload(t, adLoss(t))
	xv := []float32{1, 2, -1, 0.5, 0, 3}
	tv := []float32{1, 0, -2, 0.5}
	x := must(NewArray(xv, 3, 2))
	_, _, gw := adByHand(xv, adW)

	j := must(p.Jvp("w"))
	defer j.Close()
	if j.InputName(2) != "w.tangent" || j.InputRole(2) != InputTangent || j.InputHasDefault(2) {
		t.Fatalf("tangent input %q %v", j.InputName(2), j.InputRole(2))
	}
	if j.OutputName(1) != "loss.tangent" || j.OutputRole(1) != OutputTangent {
		t.Fatalf("tangent output %q %v", j.OutputName(1), j.OutputRole(1))
	}
	rt := newTwinRuntime(t, j, nil)
	defer rt.Close()
	out := must(rt.Run(map[string]*Array{"x": x, "w.tangent": must(NewArray(tv, 2, 2))}))
	dot := 0.0
	for i := range gw {
		dot += gw[i] * float64(tv[i])
	}
	adClose(t, "loss.tangent", out["loss.tangent"].Float32s(), []float64{dot})
	_, err := rt.Run(map[string]*Array{"x": x})
	wantCode(t, err, InvalidArgument, "'w.tangent' (the tangent of 'w')")

	v := must(p.Vjp([]string{"loss"}, []string{"w"}))
	defer v.Close()
	if v.InputName(2) != "loss.cotangent" || v.InputRole(2) != InputCotangent || v.InputHasDefault(2) {
		t.Fatal("vjp cotangent input (only grad gives it a default)")
	}
	if v.OutputRole(1) != OutputGrad {
		t.Fatal("vjp output role")
	}
	vr := newTwinRuntime(t, v, nil)
	defer vr.Close()
	out = must(vr.Run(map[string]*Array{"x": x, "loss.cotangent": must(NewArray([]float32{2}))}))
	for i := range gw {
		gw[i] *= 2
	}
	adClose(t, "vjp w.grad", out["w.grad"].Float32s(), gw)

	hvp := must(must(p.Grad("loss", "x")).Jvp("x"))
	defer hvp.Close()
	if hvp.InputRole(3) != InputTangent || hvp.OutputName(3) != "x.grad.tangent" ||
		hvp.OutputRole(3) != OutputTangent {
		t.Fatalf("hvp: %s", hvp)
	}
}

// TestTransformationErrors: unknown names (listing the inputs), repeated names, a non-scalar
// grad output, an integer input.
func TestTransformationErrors(t *testing.T) {
	p := adLoss(t)
	_, err := p.Grad("loss", "nope")
	wantCode(t, err, NotFound, "no input 'nope' (the inputs: x, w)")
	_, err = p.Jvp("nope")
	wantCode(t, err, NotFound)
	_, err = p.Vjp([]string{"nope"}, []string{"w"})
	wantCode(t, err, NotFound)
	_, err = p.Grad("nope", "w")
	wantCode(t, err, NotFound)
	_, err = p.Grad("loss", "w", "w")
	wantCode(t, err, InvalidArgument)

	s := newScope(t)
	x := must(s.Input("x", F32, "n"))
	i := must(s.Input("i", I32, "n"))
	q := must(s.CreateProgram([]Tensor{x, i}, Output{Name: "y", Tensor: must(x.Exp())}, Output{Name: "j", Tensor: i}))
	defer q.Close()
	_, err = q.Grad("y", "x")
	wantCode(t, err, ShapeMismatch)
	_, err = q.Jvp("i")
	wantCode(t, err, DTypeMismatch)
}

// TestJvpDefaultTangents: tangents may have defaults (issue 38 item 12). x.tangent defaults to 1
// over x's symbolic shape and w.tangent to 0.5; a run that leaves them out equals a run that
// gives those arrays, after a reload too.
func TestJvpDefaultTangents(t *testing.T) {
	p := adLoss(t)
	j := must(p.JvpWithDefaultTangents([]string{"x", "w"}, []float64{1, 0.5}))
	defer j.Close()
	if !j.InputHasDefault(2) || !j.InputHasDefault(3) {
		t.Fatal("the tangents have defaults")
	}
	if v := must(j.InputDefaultFill(2)); v != 1 {
		t.Fatalf("x.tangent fill %v", v)
	}
	if v := must(j.InputDefaultFill(3)); v != 0.5 {
		t.Fatalf("w.tangent fill %v", v)
	}
	_, err := j.InputDefaultFill(1)
	wantCode(t, err, InvalidArgument, "input 'w' has no fill default")
	_, err = j.InputDefault(2)
	wantCode(t, err, InvalidArgument, "over the symbolic shape (batch, 2)")
	xv := []float32{1, 2, -1, 0.5, 0, 3}
	x := must(NewArray(xv, 3, 2))
	ones := must(NewArray([]float32{1, 1, 1, 1, 1, 1}, 3, 2))
	halves := must(NewArray([]float32{0.5, 0.5, 0.5, 0.5}, 2, 2))
	for _, prog := range []*Program{j, reload(t, j)} {
		rt := newTwinRuntime(t, prog, nil)
		byDefault := must(rt.Run(map[string]*Array{"x": x}))
		given := must(rt.Run(map[string]*Array{"x": x, "x.tangent": ones, "w.tangent": halves}))
		a, b := byDefault["loss.tangent"].Float32s(), given["loss.tangent"].Float32s()
		if len(a) != 1 || a[0] != b[0] || a[0] == 0 {
			t.Fatalf("loss.tangent by default %v, given %v", a, b)
		}
		rt.Close()
	}
	_, err = p.JvpWithDefaultTangents([]string{"x", "w"}, []float64{1})
	wantCode(t, err, InvalidArgument, "one default tangent value per input")
	_, err = p.JvpWithDefaultTangents([]string{"x"}, []float64{math.Inf(1)})
	wantCode(t, err, InvalidArgument, "not a finite f32 value")
}
