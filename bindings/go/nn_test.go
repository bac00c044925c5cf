package shapepoly

import (
	"math"
	"testing"
)

func ones32(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

func iota32(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return v
}

// wantValues checks got against want elementwise (near) and the shape.
func wantValues(t *testing.T, name string, got *Array, shape []int64, want []float64) {
	t.Helper()
	if !slicesEqual(got.Shape(), shape) {
		t.Errorf("%s: shape %v, want %v", name, got.Shape(), shape)
		return
	}
	g := asFloat64(got)
	if len(g) != len(want) {
		t.Errorf("%s: %d values, want %d", name, len(g), len(want))
		return
	}
	for i := range want {
		if !near(g[i], want[i]) {
			t.Errorf("%s[%d] = %v, want %v (all: %v)", name, i, g[i], want[i], g)
			return
		}
	}
}

// TestConvSymbolicBatch: a 3x3 conv with pads 1 and stride 2 over a symbolic batch; all ones
// in, all ones weights: an output element counts the input elements its window covers times
// the 2 channels (the centre window 9 * 2 = 18, a corner one 4 * 2 = 8).
func TestConvSymbolicBatch(t *testing.T) {
	s := newScope(t, "batch >= 1")
	x := must(s.Input("x", F32, "batch, 2, 5, 5"))
	w := must(s.Constant(must(NewArray(ones32(3*2*3*3), 3, 2, 3, 3))))
	y, err := x.Conv(w, Tensor{}, 1, ConvOptions{Strides: []int64{2, 2}, Pads: []int64{1, 1, 1, 1}})
	noErr(t, err)
	if y.String() != "f32(batch, 3, 3, 3)" {
		t.Fatalf("conv shape: %s", y)
	}
	bias := must(s.Constant(must(NewArray([]float32{0.5, -1, 2}, 3))))
	yb := must(x.Conv(w, bias, 1, ConvOptions{Strides: []int64{2, 2}, AutoPad: AutoPadSameUpper}))
	if yb.String() != "f32(batch, 3, 3, 3)" {
		t.Fatalf("conv SAME_UPPER shape: %s", yb)
	}
	p := must(s.CreateProgram([]Tensor{x}, Output{Name: "y", Tensor: y}, Output{Name: "yb", Tensor: yb}))
	defer p.Close()
	if got := must(p.OutputShape(0)); got != "(batch, 3, 3, 3)" {
		t.Fatalf("program output shape %s", got)
	}
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	for _, batch := range []int64{1, 3} {
		res := must(rt.Run(map[string]*Array{"x": must(NewArray(ones32(int(batch)*50), batch, 2, 5, 5))}))
		out := res["y"]
		if !slicesEqual(out.Shape(), []int64{batch, 3, 3, 3}) {
			t.Fatalf("batch %d: shape %v", batch, out.Shape())
		}
		v := out.Float32s()
		last := int(batch)*27 - 27 // the last image, output channel 0
		if v[4] != 18 || v[0] != 8 || v[8] != 8 || v[last+2*9+4] != 18 || v[2] != 8 || v[1] != 12 {
			t.Fatalf("batch %d: conv values %v", batch, v[:9])
		}
		// SAME_UPPER with stride 2 on 5: total pad 2, one each side: the same windows plus bias.
		vb := res["yb"].Float32s()
		if vb[4] != 18.5 || vb[9] != 7 || vb[18+4] != 20 {
			t.Fatalf("batch %d: conv with bias values %v", batch, vb[:27])
		}
	}
}

func TestConvErrors(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 2, 5, 5"))
	w := must(s.Constant(must(NewArray(ones32(3*2*3*3), 3, 2, 3, 3))))
	_, err := x.Conv(w, Tensor{}, 0, ConvOptions{})
	wantCode(t, err, InvalidArgument, "groups")
	_, err = x.Conv(w, Tensor{}, 2, ConvOptions{}) // 2 divides C = 2 but not O = 3
	wantCode(t, err, ShapeMismatch, "groups")
	_, err = x.Conv(w, Tensor{}, 1, ConvOptions{Strides: []int64{2}})
	wantCode(t, err, InvalidArgument, "conv: Strides has 1 entries, want 2")
	_, err = x.Conv(w, Tensor{}, 1, ConvOptions{Pads: []int64{1, 1}})
	wantCode(t, err, InvalidArgument, "conv: Pads has 2 entries, want 4")
	_, err = x.Conv(w, Tensor{}, 1, ConvOptions{OutputPadding: []int64{1, 1}})
	wantCode(t, err, InvalidArgument, "OutputPadding is for ConvTranspose only")
	_, err = must(s.Input("e", F32, "n, 2")).ConvTranspose(w, Tensor{}, 1, ConvOptions{})
	wantCode(t, err, InvalidArgument, "conv_transpose: x has rank 2, want [N, C, *spatial]")
	_, err = x.Conv(Tensor{}, Tensor{}, 1, ConvOptions{})
	wantCode(t, err, InvalidArgument)
	_, err = x.MaxPool([]int64{2, 2}, PoolOptions{CountIncludePad: true})
	wantCode(t, err, InvalidArgument, "CountIncludePad is for AvgPool only")
	_, err = x.AvgPool(nil, PoolOptions{})
	wantCode(t, err, InvalidArgument, "kernelShape is empty")
	_, err = x.ReduceWindow(ReduceSum, []int64{1, 1, 2, 2}, ReduceWindowOptions{Strides: []int64{2}})
	wantCode(t, err, InvalidArgument, "reduce_window: Strides has 1 entries, want 4")
	_, err = must(s.Input("c", F32, "n, 6, 2, 2")).DepthToSpace(2, DepthToSpaceDCR)
	wantCode(t, err, ShapeMismatch)
	// A rejected call leaves the tensors usable.
	if y := must(x.Conv(w, Tensor{}, 1, ConvOptions{})); y.String() != "f32(n, 3, 3, 3)" {
		t.Fatal(y.String())
	}
}

func TestPools(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 1, 4, 4"))
	two := PoolOptions{Strides: []int64{2, 2}}
	mp := must(x.MaxPool([]int64{2, 2}, two))
	ap := must(x.AvgPool([]int64{2, 2}, two))
	padded := PoolOptions{Pads: []int64{1, 1, 1, 1}}
	apExcl := must(x.AvgPool([]int64{3, 3}, padded))
	padded.CountIncludePad = true
	apIncl := must(x.AvgPool([]int64{3, 3}, padded))
	ceil := must(x.MaxPool([]int64{3, 3}, PoolOptions{Strides: []int64{2, 2}, CeilMode: true}))
	gap, gmp := must(x.GlobalAvgPool()), must(x.GlobalMaxPool())
	rw := must(x.ReduceWindow(ReduceMax, []int64{1, 1, 2, 2}, ReduceWindowOptions{Strides: []int64{1, 1, 2, 2}}))
	for _, c := range []struct {
		t     Tensor
		shape string
	}{{mp, "f32(n, 1, 2, 2)"}, {ap, "f32(n, 1, 2, 2)"}, {apExcl, "f32(n, 1, 4, 4)"}, {ceil, "f32(n, 1, 2, 2)"},
		{gap, "f32(n, 1, 1, 1)"}, {rw, "f32(n, 1, 2, 2)"}} {
		if c.t.String() != c.shape {
			t.Errorf("shape %s, want %s", c.t, c.shape)
		}
	}
	p := must(s.CreateProgram([]Tensor{x}, Output{Name: "mp", Tensor: mp}, Output{Name: "ap", Tensor: ap},
		Output{Name: "excl", Tensor: apExcl}, Output{Name: "incl", Tensor: apIncl},
		Output{Name: "ceil", Tensor: ceil}, Output{Name: "gap", Tensor: gap}, Output{Name: "gmp", Tensor: gmp},
		Output{Name: "rw", Tensor: rw}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	res := must(rt.Run(map[string]*Array{"x": must(NewArray(iota32(16), 1, 1, 4, 4))}))
	wantValues(t, "max_pool", res["mp"], []int64{1, 1, 2, 2}, []float64{5, 7, 13, 15})
	wantValues(t, "reduce_window", res["rw"], []int64{1, 1, 2, 2}, []float64{5, 7, 13, 15})
	wantValues(t, "avg_pool", res["ap"], []int64{1, 1, 2, 2}, []float64{2.5, 4.5, 10.5, 12.5})
	// The corner window covers 0, 1, 4, 5 and 5 pad cells.
	if v := res["excl"].Float32s(); v[0] != 2.5 || v[5] != 5 {
		t.Errorf("avg_pool without the pads: %v", v)
	}
	if v := res["incl"].Float32s(); !near(float64(v[0]), 10.0/9) || v[5] != 5 {
		t.Errorf("avg_pool counting the pads: %v", v)
	}
	// Ceil mode: windows start at 0 and 2; the second overhangs the end.
	wantValues(t, "ceil", res["ceil"], []int64{1, 1, 2, 2}, []float64{10, 11, 14, 15})
	wantValues(t, "global_avg_pool", res["gap"], []int64{1, 1, 1, 1}, []float64{7.5})
	wantValues(t, "global_max_pool", res["gmp"], []int64{1, 1, 1, 1}, []float64{15})
}

// TestActivationsAndNormalization checks each elementwise activation, log_softmax, batch
// norm, LRN, pad_mode and conv_transpose against values computed by hand.
func TestActivationsAndNormalization(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F64, "4"))
	xv := []float64{-2, -0.5, 0, 1.5}
	ref := func(f func(v float64) float64) []float64 {
		out := make([]float64, len(xv))
		for i, v := range xv {
			out[i] = f(v)
		}
		return out
	}
	neg := func(v float64, f func(float64) float64) float64 {
		if v >= 0 {
			return v
		}
		return f(v)
	}
	slope := must(s.Constant(must(NewArray([]float64{0.25}, 1))))
	mx, lse := 1.5, 0.0
	for _, v := range xv {
		lse += math.Exp(v - 1.5)
	}
	lse = math.Log(lse)
	type c struct {
		name string
		out  Tensor
		want []float64
	}
	cases := []c{
		{"leaky_relu", must(x.LeakyRelu(0.1)), []float64{-0.2, -0.05, 0, 1.5}},
		{"prelu", must(x.PRelu(slope)), []float64{-0.5, -0.125, 0, 1.5}},
		{"elu", must(x.Elu(2)), ref(func(v float64) float64 {
			return neg(v, func(v float64) float64 { return 2 * math.Expm1(v) })
		})},
		{"selu", must(x.Selu(1.5, 2)), ref(func(v float64) float64 {
			return 2 * neg(v, func(v float64) float64 { return 1.5 * math.Expm1(v) })
		})},
		{"softplus", must(x.Softplus()), ref(func(v float64) float64 { return math.Log1p(math.Exp(v)) })},
		{"softsign", must(x.Softsign()), ref(func(v float64) float64 { return v / (1 + math.Abs(v)) })},
		{"clip", must(x.Clip(-1, 1)), []float64{-1, -0.5, 0, 1}},
		{"clip_low_only", must(x.Clip(-1, math.Inf(1))), []float64{-1, -0.5, 0, 1.5}},
		{"hard_sigmoid", must(x.HardSigmoid(0.2, 0.5)), []float64{0.1, 0.4, 0.5, 0.8}},
		{"log_softmax", must(x.LogSoftmax(-1)), ref(func(v float64) float64 { return v - mx - lse })},
	}
	if cases[0].out.String() != "f64(4,)" {
		t.Fatalf("leaky_relu shape %s", cases[0].out)
	}
	outs := make([]Output, len(cases))
	for i, cs := range cases {
		outs[i] = Output{Name: cs.name, Tensor: cs.out}
	}

	// Batch norm on [N = 2, C = 2]: (x - mean) * scale / sqrt(var + eps) + bias per channel.
	xb := must(s.Input("xb", F64, "n, 2"))
	cst := func(v ...float64) Tensor { return must(s.Constant(must(NewArray(v, int64(len(v)))))) }
	bn := must(xb.BatchNorm(cst(2, 1), cst(0.5, -1), cst(1, 3), cst(3, 0.25), 1))
	// LRN over 3 channels, size 3: s = 1+4, 1+4+9, 4+9.
	xl := must(s.Input("xl", F64, "1, 3, 1, 1"))
	lrn := must(xl.LRN(3, 0.3, 0.75, 2))
	// pad_mode on [1, 2, 3, 4], low 2, high 1.
	xp := must(s.Input("xp", F64, "m"))
	two, one := must(s.Const(2)), must(s.Const(1))
	reflect := must(xp.PadMode([]Dim{two}, []Dim{one}, PadReflect, 0))
	edge := must(xp.PadMode([]Dim{two}, []Dim{one}, PadEdge, 0))
	constant := must(xp.PadMode([]Dim{two}, []Dim{one}, PadConstant, -7))
	if reflect.String() != "f64(m + 3,)" {
		t.Errorf("pad_mode shape %s", reflect)
	}
	// conv_transpose with stride 2 of [1, 2] by the kernel [1, 1]: [1, 1, 2, 2].
	xt := must(s.Input("xt", F64, "1, 1, 2"))
	wt := must(s.Constant(must(NewArray([]float64{1, 1}, 1, 1, 2))))
	ct := must(xt.ConvTranspose(wt, Tensor{}, 1, ConvOptions{Strides: []int64{2}}))
	// reduce_window sum after a pad before the start: [0+1, 2+3].
	rws := must(xp.ReduceWindow(ReduceSum, []int64{2}, ReduceWindowOptions{Strides: []int64{2},
		PadLow: []Dim{one}}))
	outs = append(outs, Output{Name: "bn", Tensor: bn}, Output{Name: "lrn", Tensor: lrn},
		Output{Name: "reflect", Tensor: reflect}, Output{Name: "edge", Tensor: edge},
		Output{Name: "constant", Tensor: constant}, Output{Name: "ct", Tensor: ct},
		Output{Name: "rws", Tensor: rws})
	p := must(s.CreateProgram([]Tensor{x, xb, xl, xp, xt}, outs...))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	res := must(rt.Run(map[string]*Array{
		"x": must(NewArray(xv, 4)), "xb": must(NewArray([]float64{1, 2, 4, 0}, 2, 2)),
		"xl": must(NewArray([]float64{1, 2, 3}, 1, 3, 1, 1)), "xp": must(NewArray([]float64{1, 2, 3, 4}, 4)),
		"xt": must(NewArray([]float64{1, 2}, 1, 1, 2)),
	}))
	for _, cs := range cases {
		wantValues(t, cs.name, res[cs.name], []int64{4}, cs.want)
	}
	a0, a1 := 2/math.Sqrt(4), 1/math.Sqrt(1.25)
	wantValues(t, "batch_norm", res["bn"], []int64{2, 2},
		[]float64{(1-1)*a0 + 0.5, (2-3)*a1 - 1, (4-1)*a0 + 0.5, (0-3)*a1 - 1})
	l := func(v, s float64) float64 { return v * math.Pow(2+0.3/3*s, -0.75) }
	wantValues(t, "lrn", res["lrn"], []int64{1, 3, 1, 1}, []float64{l(1, 5), l(2, 14), l(3, 13)})
	wantValues(t, "reflect", res["reflect"], []int64{7}, []float64{3, 2, 1, 2, 3, 4, 3})
	wantValues(t, "edge", res["edge"], []int64{7}, []float64{1, 1, 1, 2, 3, 4, 4})
	wantValues(t, "constant", res["constant"], []int64{7}, []float64{-7, -7, 1, 2, 3, 4, -7})
	wantValues(t, "conv_transpose", res["ct"], []int64{1, 1, 4}, []float64{1, 1, 2, 2})
	wantValues(t, "reduce_window", res["rws"], []int64{2}, []float64{1, 5})
}

// TestDepthToSpace: the shapes of both ops over a symbolic batch, and space_to_depth undoing
// DCR depth_to_space element for element.
func TestDepthToSpace(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", I32, "n, 8, 3, 4"))
	d := must(x.DepthToSpace(2, DepthToSpaceDCR))
	if d.String() != "i32(n, 2, 6, 8)" {
		t.Fatalf("depth_to_space shape %s", d)
	}
	dc := must(x.DepthToSpace(2, DepthToSpaceCRD))
	back := must(d.SpaceToDepth(2))
	if back.String() != "i32(n, 8, 3, 4)" || dc.String() != "i32(n, 2, 6, 8)" {
		t.Fatalf("space_to_depth shape %s, CRD %s", back, dc)
	}
	p := must(s.CreateProgram([]Tensor{x}, Output{Name: "d", Tensor: d}, Output{Name: "back", Tensor: back}))
	defer p.Close()
	rt := newTwinRuntime(t, p, nil)
	defer rt.Close()
	xv := make([]int32, 2*96)
	for i := range xv {
		xv[i] = int32(i*7 - 50)
	}
	res := must(rt.Run(map[string]*Array{"x": must(NewArray(xv, 2, 8, 3, 4))}))
	if !sameElems(res["back"].Int32s(), xv) {
		t.Fatalf("space_to_depth(depth_to_space(x)) != x")
	}
	// DCR: output (c, h*2 + i, w*2 + j) is input channel (i*2 + j)*2 + c at (h, w).
	if got := res["d"].Int32s()[0*48+1*8+0]; got != xv[((1*2+0)*2+0)*12] {
		t.Fatalf("depth_to_space DCR value %d", got)
	}
}
