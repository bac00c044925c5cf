package shapepoly

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Batching (Program.Vmap, shp_program_vmap): the contract MLP's loss for one example (its
// weights as parameters) batched over x and labels, against the unbatched program run on each
// example; per-example gradients (Vmap of Grad) against Grad per example; Vmap of a Vmap; the
// errors, after which the program stays usable; and the save/load round trip.

// vmBatches are the batch sizes every comparison runs at (0: an empty batch runs).
var vmBatches = []int64{0, 1, 7, 64}

// vmWeights are the contract MLP's weights (tests/cross_language/MLP_CONTRACT.md): name, seed
// of the constant, shape.
var vmWeights = []struct {
	name  string
	seed  int64
	shape []int64
}{
	{"W1", 1, []int64{64, 32}}, {"b1", 2, []int64{32}},
	{"W2", 3, []int64{32, 32}}, {"b2", 4, []int64{32}},
	{"W3", 5, []int64{32, 10}}, {"b3", 6, []int64{10}},
}

var vmGradNames = []string{"loss", "W1.grad", "b1.grad", "W2.grad", "b2.grad", "W3.grad", "b3.grad"}

// vmExampleLoss: the loss of one example: x (64), one-hot labels (10), the six weights as
// parameters; outputs loss (a scalar, the cross-entropy) and probs (10).
func vmExampleLoss(t *testing.T) *Program {
	s := newScope(t)
	x := must(s.Input("x", F32, "64"))
	labels := must(s.Input("labels", F32, "10"))
	inputs := []Tensor{x, labels}
	for _, w := range vmWeights {
		n := int64(1)
		for _, d := range w.shape {
			n *= d
		}
		data := make([]float32, n)
		for k := int64(0); k < n; k++ {
			data[k] = float32(((k*7919+w.seed*104729)%2001)-1000) / float32(10000)
		}
		inputs = append(inputs, must(s.Parameter(w.name, must(NewArray(data, w.shape...)))))
	}
	zero := must(s.Constant(must(NewArray([]float32{0}))))
	h := x
	for k := 0; k < 3; k++ {
		h = must(must(h.Matmul(inputs[2+2*k])).Add(inputs[3+2*k]))
		if k < 2 {
			h = must(h.Max(zero))
		}
	}
	probs := must(h.Softmax(0))
	loss := must(must(must(labels.Mul(must(probs.Log()))).Reduce(ReduceSum, nil, false)).Neg())
	p := must(s.CreateProgram(inputs, Output{"loss", loss}, Output{"probs", probs}))
	t.Cleanup(p.Close)
	return p
}

// vmDataAxes: x and labels batched on axis 0, every other input (the weights, a cotangent)
// shared.
func vmDataAxes(p *Program) []int64 {
	axes := make([]int64, p.InputCount())
	for i := range axes {
		axes[i] = -1
		if n := p.InputName(i); n == "x" || n == "labels" {
			axes[i] = 0
		}
	}
	return axes
}

// vmData returns x (batch*64 values) and one-hot labels (batch*10) of the contract.
func vmData(batch int64) ([]float32, []float32) {
	x := make([]float32, batch*64)
	for k := range x {
		x[k] = float32(((k*31+7)%17)-8) / 8
	}
	labels := make([]float32, batch*10)
	for r := int64(0); r < batch; r++ {
		labels[r*10+(r*3+1)%10] = 1
	}
	return x, labels
}

// vmRunBatch runs a program batched on x and labels (batch axes first, of the given sizes).
func vmRunBatch(t *testing.T, rt interface {
	Run(map[string]*Array) (map[string]*Array, error)
}, sizes ...int64) map[string]*Array {
	t.Helper()
	n := int64(1)
	for _, s := range sizes {
		n *= s
	}
	x, labels := vmData(n)
	out, err := rt.Run(map[string]*Array{
		"x":      must(NewArray(x, append(append([]int64{}, sizes...), 64)...)),
		"labels": must(NewArray(labels, append(append([]int64{}, sizes...), 10)...)),
	})
	noErr(t, err)
	return out
}

// vmRunExample runs the unbatched program on example e of the data of a batch.
func vmRunExample(t *testing.T, rt *Runtime, batch, e int64) map[string]*Array {
	t.Helper()
	x, labels := vmData(batch)
	out, err := rt.Run(map[string]*Array{
		"x":      must(NewArray(x[e*64:(e+1)*64], 64)),
		"labels": must(NewArray(labels[e*10:(e+1)*10], 10)),
	})
	noErr(t, err)
	return out
}

// vmSameElement checks element e of the batched got (batchAxes leading batch axes) against the
// unbatched want.
func vmSameElement(t *testing.T, what string, got *Array, batchAxes int, e int64, want *Array) {
	t.Helper()
	if !slicesEqual(got.Shape()[batchAxes:], want.Shape()) {
		t.Fatalf("%s: batched shape %v, one example %v", what, got.Shape(), want.Shape())
	}
	n := int64(want.Len())
	g, w := got.Float32s()[e*n:(e+1)*n], want.Float32s()
	for k := range w {
		if math.Abs(float64(g[k]-w[k])) > 1e-6*math.Max(1, math.Abs(float64(w[k]))) {
			t.Fatalf("%s: element %d entry %d: batched %v, alone %v", what, e, k, g[k], w[k])
		}
	}
}

// TestVmapOfTheMLPLossMatchesEachExample: x and labels batched, the weights shared, at batch
// 0, 1, 7 and 64 against the unbatched program per example; by name; out_axes.
func TestVmapOfTheMLPLossMatchesEachExample(t *testing.T) {
	p := vmExampleLoss(t)
	v := must(p.Vmap(vmDataAxes(p), nil, ""))
	t.Cleanup(v.Close)
	ins := must(v.Inputs())
	if ins[0] != (ValueInfo{"x", F32, InputData, "(vmap0, 64)"}) ||
		ins[1] != (ValueInfo{"labels", F32, InputData, "(vmap0, 10)"}) ||
		ins[2] != (ValueInfo{"W1", F32, InputParameter, "(64, 32)"}) || !v.InputHasDefault(2) {
		t.Fatalf("inputs %+v", ins)
	}
	if s := must(v.OutputShape(0)); s != "(vmap0,)" {
		t.Fatalf("loss shape %q", s)
	}
	byName := must(p.VmapByName(map[string]int64{"x": 0, "labels": 0}, ""))
	t.Cleanup(byName.Close)
	if string(must(byName.Serialize())) != string(must(v.Serialize())) {
		t.Fatal("VmapByName and Vmap differ")
	}

	rt := newTwinRuntime(t, v, nil)
	defer rt.Close()
	one := must(NewRuntime(p, nil))
	defer one.Close()
	for _, b := range vmBatches {
		got := vmRunBatch(t, rt, b)
		if !slicesEqual(got["loss"].Shape(), []int64{b}) || !slicesEqual(got["probs"].Shape(), []int64{b, 10}) {
			t.Fatalf("batch %d: shapes %v %v", b, got["loss"], got["probs"])
		}
		for e := int64(0); e < b; e++ {
			want := vmRunExample(t, one, b, e)
			vmSameElement(t, "loss", got["loss"], 1, e, want["loss"])
			vmSameElement(t, "probs", got["probs"], 1, e, want["probs"])
		}
	}

	// out_axes: probs' batch axis last, under a given name.
	last := must(p.Vmap(vmDataAxes(p), []int64{0, 1}, "n"))
	t.Cleanup(last.Close)
	if s := must(last.OutputShape(1)); s != "(10, n)" {
		t.Fatalf("probs shape %q", s)
	}
	lrt := newTwinRuntime(t, last, nil)
	defer lrt.Close()
	a, b := vmRunBatch(t, lrt, 7)["probs"].Float32s(), vmRunBatch(t, rt, 7)["probs"].Float32s()
	for e := 0; e < 7; e++ {
		for j := 0; j < 10; j++ {
			if a[j*7+e] != b[e*10+j] {
				t.Fatalf("probs[%d][%d]: %v with the batch last, %v first", e, j, a[j*7+e], b[e*10+j])
			}
		}
	}
}

// TestVmapPerExampleGradients: Vmap of Grad with the weights shared against Grad per example.
func TestVmapPerExampleGradients(t *testing.T) {
	g := must(vmExampleLoss(t).Grad("loss", "W1", "b1", "W2", "b2", "W3", "b3"))
	t.Cleanup(g.Close)
	axes := vmDataAxes(g)
	if g.InputName(8) != "loss.cotangent" || !slicesEqual(axes, []int64{0, 0, -1, -1, -1, -1, -1, -1, -1}) {
		t.Fatalf("grad inputs %v, axes %v", must(g.Inputs()), axes)
	}
	vg := must(g.Vmap(axes, nil, ""))
	t.Cleanup(vg.Close)
	if s := must(vg.OutputShape(1)); vg.OutputName(1) != "W1.grad" || s != "(vmap0, 64, 32)" {
		t.Fatalf("output 1: %s %s", vg.OutputName(1), s)
	}
	rt := newTwinRuntime(t, vg, nil)
	defer rt.Close()
	one := must(NewRuntime(g, nil))
	defer one.Close()
	for _, b := range vmBatches {
		got := vmRunBatch(t, rt, b)
		if !slicesEqual(got["W1.grad"].Shape(), []int64{b, 64, 32}) {
			t.Fatalf("W1.grad %v", got["W1.grad"])
		}
		for e := int64(0); e < b; e++ {
			want := vmRunExample(t, one, b, e)
			for _, name := range vmGradNames {
				vmSameElement(t, name, got[name], 1, e, want[name])
			}
		}
	}
}

// TestVmapOfVmap: each Vmap adds a batch axis; the second variable is vmap1 without a name.
func TestVmapOfVmap(t *testing.T) {
	p := vmExampleLoss(t)
	v1 := must(p.Vmap(vmDataAxes(p), nil, ""))
	t.Cleanup(v1.Close)
	axes := vmDataAxes(v1)
	for i := range axes {
		if axes[i] == 0 {
			axes[i] = 1
		}
	}
	v2 := must(v1.Vmap(axes, []int64{1, 1}, ""))
	t.Cleanup(v2.Close)
	for _, c := range []struct{ got, want string }{
		{must(v2.InputShape(0)), "(vmap0, vmap1, 64)"},
		{must(v2.InputShape(1)), "(vmap0, vmap1, 10)"},
		{must(v2.OutputShape(0)), "(vmap0, vmap1)"},
		{must(v2.OutputShape(1)), "(vmap0, vmap1, 10)"},
	} {
		if c.got != c.want {
			t.Fatalf("shape %q, want %q", c.got, c.want)
		}
	}
	outer := must(v1.Vmap(vmDataAxes(v1), nil, ""))
	t.Cleanup(outer.Close)
	if s := must(outer.InputShape(0)); s != "(vmap1, vmap0, 64)" {
		t.Fatalf("outer x %q", s)
	}
	rt := newTwinRuntime(t, v2, nil)
	defer rt.Close()
	got := vmRunBatch(t, rt, 3, 5)
	one := must(NewRuntime(p, nil))
	defer one.Close()
	for e := int64(0); e < 15; e++ {
		want := vmRunExample(t, one, 15, e)
		vmSameElement(t, "loss", got["loss"], 2, e, want["loss"])
		vmSameElement(t, "probs", got["probs"], 2, e, want["probs"])
	}
}

// TestVmapErrors: every bad argument is an InvalidArgument (NotFound for an unknown name)
// naming the input or output; the programs stay usable.
func TestVmapErrors(t *testing.T) {
	p := vmExampleLoss(t)
	axes := vmDataAxes(p)
	with := func(i int, v int64) []int64 {
		a := append([]int64{}, axes...)
		a[i] = v
		return a
	}
	_, err := p.Vmap([]int64{0, 0}, nil, "")
	wantCode(t, err, InvalidArgument, "2 in_axes for a program with 8 inputs")
	_, err = p.Vmap(nil, nil, "")
	wantCode(t, err, InvalidArgument, "0 in_axes")
	_, err = p.Vmap(axes, []int64{0, 0, 0}, "")
	wantCode(t, err, InvalidArgument, "3 out_axes for a program with 2 outputs")
	_, err = p.Vmap(with(0, 2), nil, "")
	wantCode(t, err, InvalidArgument, "in_axes[0] = 2", "input 'x'", "[0, 1]")
	_, err = p.Vmap(with(0, -2), nil, "")
	wantCode(t, err, InvalidArgument, "input 'x'")
	_, err = p.Vmap(axes, []int64{0, 2}, "")
	wantCode(t, err, InvalidArgument, "out_axes[1] = 2", "output 'probs'")
	_, err = p.Vmap(axes, []int64{-1, 0}, "")
	wantCode(t, err, InvalidArgument, "output 'loss' depends on a batched input")
	_, err = p.Vmap(with(2, 0), nil, "")
	wantCode(t, err, InvalidArgument, "'W1'", "default")
	_, err = p.Vmap([]int64{-1, -1, -1, -1, -1, -1, -1, -1}, nil, "")
	wantCode(t, err, InvalidArgument, "no input is batched")
	v := must(p.Vmap(axes, nil, ""))
	t.Cleanup(v.Close)
	_, err = v.Vmap(vmDataAxes(v), nil, "vmap0")
	wantCode(t, err, InvalidArgument, "'vmap0' is already a dimension variable")
	s := newScope(t)
	x := must(s.Input("x", F32, "batch, 3"))
	q := must(s.CreateProgram([]Tensor{x}, Output{"y", must(x.Neg())}))
	t.Cleanup(q.Close)
	_, err = q.Vmap([]int64{0}, nil, "batch")
	wantCode(t, err, InvalidArgument, "'batch' is already a dimension variable")
	z := must(s.Input("z", F32, "4"))
	nz := must(s.CreateProgram([]Tensor{z}, Output{"idx", must(z.Nonzero())}))
	t.Cleanup(nz.Close)
	_, err = nz.Vmap([]int64{0}, nil, "")
	wantCode(t, err, Unsupported, "nonzero")
	_, err = p.VmapByName(map[string]int64{"x": 0, "nope": 0}, "")
	wantCode(t, err, NotFound, "no input named 'nope'", "'x', 'labels', 'W1'")
	_, err = p.VmapByName(nil, "")
	wantCode(t, err, InvalidArgument, "no input is batched")

	// Still usable: the batched program runs, the program batches again.
	one := must(NewRuntime(p, nil))
	defer one.Close()
	rt := newTwinRuntime(t, v, nil)
	defer rt.Close()
	vmSameElement(t, "loss", vmRunBatch(t, rt, 1)["loss"], 1, 0, vmRunExample(t, one, 1, 0)["loss"])
	w := must(p.Vmap(axes, nil, "batch"))
	t.Cleanup(w.Close)
	if s := must(w.InputShape(0)); s != "(batch, 64)" {
		t.Fatalf("x %q", s)
	}
	qv := must(q.Vmap([]int64{1}, nil, ""))
	t.Cleanup(qv.Close)
	if s := must(qv.InputShape(0)); s != "(batch, vmap0, 3)" {
		t.Fatalf("x %q", s)
	}
}

// TestVmapSaveLoad: a batched gradient program serializes, loads (bytes and file) and runs
// with the same bits; a loaded program batches to the same bytes.
func TestVmapSaveLoad(t *testing.T) {
	g := must(vmExampleLoss(t).Grad("loss", "W1", "b1", "W2", "b2", "W3", "b3"))
	t.Cleanup(g.Close)
	vg := must(g.Vmap(vmDataAxes(g), nil, "examples"))
	t.Cleanup(vg.Close)
	data := must(vg.Serialize())
	loaded := reload(t, vg)
	if s := must(loaded.InputShape(0)); s != "(examples, 64)" {
		t.Fatalf("x %q", s)
	}
	path := filepath.Join(t.TempDir(), "vmap.shpoly")
	noErr(t, vg.WriteFile(path))
	fromFile := must(LoadProgramFile(path))
	t.Cleanup(fromFile.Close)
	if string(must(fromFile.Serialize())) != string(data) {
		t.Fatal("the file holds other bytes")
	}
	_ = os.Remove(path)
	a := newTwinRuntime(t, vg, nil)
	defer a.Close()
	b := must(NewRuntime(fromFile, nil))
	defer b.Close()
	for _, n := range vmBatches {
		got, again := vmRunBatch(t, a, n), vmRunBatch(t, b, n)
		for _, name := range vmGradNames {
			if d := arrayDiff(got[name], again[name]); d != "" {
				t.Fatalf("batch %d, %s: %s", n, name, d)
			}
		}
	}
	v2 := must(reload(t, g).Vmap(vmDataAxes(g), nil, "examples"))
	t.Cleanup(v2.Close)
	if string(must(v2.Serialize())) != string(data) {
		t.Fatal("batching the loaded grad program gives other bytes")
	}
}
